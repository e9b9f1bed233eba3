//! The one registry of algorithms by name.
//!
//! The registry name is the scenario's `cca` value, the CLI word, and (prefixed `satcc_`)
//! the `.name` of the BPF twin. `satcc cc list` / `satcc cc show NAME` print [`AlgoInfo`].

pub use crate::info::AlgoInfo;
use crate::{algos, CongestionControl, ParamError, Params};

/// Every algorithm, in the order `satcc cc list` prints them.
pub fn all() -> &'static [&'static AlgoInfo] {
    algos::ALL
}

pub fn names() -> Vec<&'static str> {
    all().iter().map(|a| a.name).collect()
}

pub fn info(name: &str) -> Option<&'static AlgoInfo> {
    all().iter().copied().find(|a| a.name == name)
}

/// Build the algorithm `name` with `params`.
pub fn lookup(name: &str, params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    match info(name) {
        Some(a) => (a.build)(params),
        None => Err(ParamError {
            key: "cca".into(),
            expected: format!("one of {:?}", names()),
            found: format!("{name:?}"),
        }),
    }
}

/// docs/cc-parameters.md: every algorithm's parameters as declared (a test in
/// tests/params_doc.rs fails when the file and the declarations differ).
pub fn params_markdown() -> String {
    let cell = |s: &str| {
        if s.is_empty() {
            "—".to_string()
        } else {
            s.replace('|', "\\|")
        }
    };
    let mut out = String::from(
        "# Congestion-control parameters\n\n\
         Generated from the declarations in `crates/satcc-cc/src/algos/` (`ParamSpec`); do not\n\
         edit by hand: `SATCC_BLESS=1 cargo test -p satcc-cc --test params_doc` rewrites it, and\n\
         the same test fails when it and the declarations differ. Set a parameter per flow in\n\
         `[flow.cc]` (docs/scenario.md); `satcc cc show NAME` prints the same table.\n\
         *kernel*: the Linux module parameter or `#define` it stands for; *BPF*: the define of\n\
         the BPF twin (docs/emulator.md), which takes `max(min, round(value × scale))` when a\n\
         scale is given.\n",
    );
    for a in all() {
        out.push_str(&format!("\n## `{}`\n\n", a.name));
        if a.params.is_empty() {
            out.push_str("No parameters.\n");
            continue;
        }
        out.push_str("| parameter | default | unit | values | kernel | BPF | scale | meaning |\n");
        out.push_str("|---|---|---|---|---|---|---|---|\n");
        for p in a.params {
            let scale = p
                .scale
                .map(|s| format!("× {} (≥ {})", s.factor, s.min))
                .unwrap_or_default();
            let row = [
                format!("`{}`", p.name),
                p.default_text(),
                p.unit.to_string(),
                p.range_text(),
                p.kernel.to_string(),
                p.bpf.to_string(),
                scale,
                p.doc.to_string(),
            ];
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dctcp_needs_ecn_as_in_linux() {
        // In Linux, TCP_CONG_NEEDS_ECN is set by tcp_dctcp.c alone among the algorithms
        // satcc has.
        let needing: Vec<&str> = all()
            .iter()
            .filter(|a| a.needs_ecn)
            .map(|a| a.name)
            .collect();
        assert_eq!(needing, ["dctcp"]);
    }
}
