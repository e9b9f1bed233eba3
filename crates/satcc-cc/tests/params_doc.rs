//! The parameter declarations (`ParamSpec`, one per parameter in each algorithm's file) and
//! what is derived from them: docs/cc-parameters.md, the checks of `[flow.cc]`, the kernel
//! integers of the BPF twins.

use satcc_cc::params::{Kind, ParamValue};
use satcc_cc::{registry, Params};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cc-parameters.md");

#[test]
fn the_docs_table_is_the_declarations() {
    let want = registry::params_markdown();
    if std::env::var_os("SATCC_BLESS").is_some() {
        std::fs::write(DOC, &want).expect("write docs/cc-parameters.md");
    }
    let have = std::fs::read_to_string(DOC).unwrap_or_default();
    assert!(
        have == want,
        "docs/cc-parameters.md differs from the declarations in crates/satcc-cc/src/algos/; \
         regenerate it: SATCC_BLESS=1 cargo test -p satcc-cc --test params_doc"
    );
}

fn one(key: &str, v: ParamValue) -> Params {
    Params::new().with(key, v)
}

#[test]
fn every_declared_default_is_accepted_when_written_out() {
    for info in registry::all() {
        for p in info.params {
            let v = match p.kind {
                Kind::Num { default, .. } => ParamValue::Num(default),
                Kind::Int { default, .. } => ParamValue::Num(default as f64),
                Kind::Bool { default } => ParamValue::Bool(default),
                Kind::Choice { default, .. } => ParamValue::Str(default.into()),
                Kind::Points => continue,
            };
            let r = (info.build)(&one(p.name, v));
            assert!(
                r.is_ok(),
                "{}.{}: default refused: {:?}",
                info.name,
                p.name,
                r.err()
            );
        }
    }
}

#[test]
fn values_outside_a_declaration_are_refused_naming_the_key() {
    for info in registry::all() {
        for p in info.params {
            let bad: Vec<ParamValue> = match p.kind {
                Kind::Num { lo, hi, .. } => vec![
                    ParamValue::Num(lo - (lo.abs() + 1.0) * 1e-3),
                    ParamValue::Num(hi + (hi.abs() + 1.0) * 1e-3),
                    ParamValue::Num(f64::NAN),
                    ParamValue::Bool(true),
                ],
                Kind::Int { default, lo, hi } => {
                    let mut v = vec![
                        ParamValue::Num(default as f64 + 0.5),
                        ParamValue::Str("1".into()),
                    ];
                    if lo > 0 {
                        v.push(ParamValue::Num(lo as f64 - 1.0));
                    }
                    v.push(ParamValue::Num(hi as f64 + 1.0));
                    v
                }
                Kind::Bool { .. } => vec![ParamValue::Num(1.0), ParamValue::Str("true".into())],
                Kind::Choice { .. } => {
                    vec![ParamValue::Str("no_such_word".into()), ParamValue::Num(0.0)]
                }
                Kind::Points => vec![ParamValue::Num(1.0)],
            };
            for v in bad {
                let e = (info.build)(&one(p.name, v.clone()))
                    .err()
                    .unwrap_or_else(|| panic!("{}.{} accepted {v:?}", info.name, p.name));
                assert_eq!(e.key, p.name, "{}: {e}", info.name);
                assert!(e
                    .to_string()
                    .starts_with(&format!("cc.{}: expected ", p.name)));
            }
        }
    }
}

#[test]
fn kernel_values_follow_the_declared_scale() {
    let cubic = registry::info("cubic").unwrap();
    let spec = |name: &str| cubic.params.iter().find(|p| p.name == name).unwrap();
    let none = Params::new();
    // tcp_cubic.c's module defaults: beta = 717, bic_scale = 41.
    assert_eq!(spec("beta").kernel_value(&none).unwrap(), Some(717));
    assert_eq!(spec("c").kernel_value(&none).unwrap(), Some(41));
    // bic_scale never reaches 0 (C = 0.005 rounds to 1).
    let tiny = one("c", ParamValue::Num(0.005));
    assert_eq!(spec("c").kernel_value(&tiny).unwrap(), Some(1));
    let delay = one("hystart_detect", ParamValue::Str("delay".into()));
    assert_eq!(
        spec("hystart_detect").kernel_value(&delay).unwrap(),
        Some(2)
    );
    assert_eq!(spec("k_table").kernel_value(&none).unwrap(), None);
    let hybla = registry::info("hybla").unwrap();
    let rtt0 = one("rtt0", ParamValue::Num(12.3456));
    assert_eq!(
        hybla.params[0].kernel_value(&rtt0).unwrap(),
        Some(12_346),
        "whole µs"
    );
}
