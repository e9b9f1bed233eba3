//! The simulator never panics on a scenario, however hostile: every scenario built from
//! random bytes is either refused by the resolver (`satcc_core::scenario::resolve`, the one
//! checker) or `World::new` with an error naming its key, or runs to its end. The stable
//! stand-in for the cargo-fuzz target `fuzz/fuzz_targets/config.rs`; the Rust side takes its
//! scenario as a Python dict (crates/satcc-py), resolved, so this is the path it has.

#[path = "support/config_from_bytes.rs"]
mod config_from_bytes;

use satcc_core::dirspec::{Direction, QueueSpec};
use satcc_core::scenario::Link;
use satcc_sim::world::World;

/// An error in satcc-core's form: `key: message`, the key a path like `flow[0].mss`.
fn names_a_key(e: &str) -> bool {
    e.split_once(": ")
        .is_some_and(|(key, message)| !key.is_empty() && !key.contains(' ') && !message.is_empty())
}

/// splitmix64: a fixed, seeded stream of bytes (no wall clock, same cases every run).
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .flat_map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)).to_le_bytes()
        })
        .collect()
}

#[test]
fn random_configs_are_refused_with_an_error_or_run_to_the_end() {
    let (mut refused, mut ran) = (0, 0);
    for seed in 0..3000u64 {
        let cfg = config_from_bytes::config(&bytes(seed, 64));
        let result = std::panic::catch_unwind(|| {
            let r = match cfg.resolve() {
                Err(e) => {
                    assert!(names_a_key(&e), "seed {seed}: {e}");
                    return false;
                }
                Ok(r) => r,
            };
            match World::new(&r) {
                Err(e) => {
                    assert!(!e.key.is_empty(), "seed {seed}: {e}");
                    false
                }
                Ok(mut w) => {
                    if w.reserve_series().is_err() {
                        return false;
                    }
                    let out = w.run(&mut |_| true);
                    assert_eq!(out.flows.len(), cfg.flows.len());
                    true
                }
            }
        });
        match result {
            Ok(true) => ran += 1,
            Ok(false) => refused += 1,
            Err(_) => panic!("seed {seed} panicked on config {cfg:?}"),
        }
    }
    // Both outcomes happen: the generator reaches the simulator, not only its checks.
    assert!(ran > 100 && refused > 100, "ran {ran}, refused {refused}");
}

#[test]
fn series_too_large_for_memory_are_an_error_not_an_abort() {
    let mut cfg = config_from_bytes::config(&bytes(7, 64));
    cfg.links.clear();
    cfg.flows.clear();
    cfg.nodes = vec!["a".into()];
    cfg.duration_ns = u64::MAX / 2;
    cfg.bin_ns = 1;
    let mut w = World::new(&cfg.resolve().unwrap()).expect("an empty world is valid");
    assert!(
        w.reserve_series().is_ok(),
        "no flow, no link: nothing to reserve"
    );
    cfg.nodes = vec!["a".into(), "b".into()];
    let d = Direction::new(1_000_000, 1_000_000, 0.0, QueueSpec::Packets(100));
    cfg.links.push(Link::symmetric(0, 1, d));
    let mut w = World::new(&cfg.resolve().unwrap()).expect("valid");
    let err = w
        .reserve_series()
        .expect_err("2^63 bins cannot be reserved");
    assert!(err.to_string().contains("out of memory"), "{err}");
}

#[test]
fn a_flow_whose_id_is_not_its_index_is_refused_not_a_panic() {
    // regression: the fuzz target's crash input (flow id 4294967041 in a 1-flow config); the
    // event loop indexed flows by the packets' flow id and went out of bounds
    let cfg =
        config_from_bytes::config(include_bytes!("data/fuzz-config-flow-id-not-its-index.bin"));
    let outcome = std::panic::catch_unwind(|| {
        cfg.resolve()
            .map(|r| World::new(&r).map(|w| w.run(&mut |_| true).flows.len()))
    });
    assert!(outcome.is_ok(), "the simulator panicked");
    let mut cfg = (0..)
        .map(|seed| config_from_bytes::config(&bytes(seed, 64)))
        .find(|c| c.flows.len() == 1 && c.resolve().is_ok())
        .unwrap();
    cfg.flows[0].id = 7;
    assert_eq!(
        cfg.resolve().unwrap_err(),
        "flow[0].id: must be 0 (flows are numbered in order)"
    );
}

#[test]
fn hand_built_bad_scenarios_are_refused_by_the_resolver_naming_the_key() {
    // What `SimConfig::check` refused in hand-built configs, now the resolver's refusals (its
    // own tests cover the scenario file's form; these are the simulator's former cases).
    use satcc_core::scenario::{Flow, Scenario};
    let good = || {
        let d = Direction::new(10_000_000, 5_000_000, 0.0, QueueSpec::Packets(100));
        Scenario::new(
            "bad",
            &["a", "b"],
            vec![Link::symmetric(0, 1, d)],
            vec![Flow::bulk(0, 0, 1, "reno")],
            1_000_000_000,
        )
    };
    assert!(good().resolve().is_ok());
    type Edit = fn(&mut satcc_core::scenario::Scenario);
    let cases: [(Edit, &str); 10] = [
        (
            |s| s.bin_ns = 0,
            "config.bin_ns: expected a positive bin width",
        ),
        (|s| s.links[0].b = 5, "link[0]: node index out of range"),
        (
            |s| s.links[0].ba.rate_bps = 0,
            "link[0].ba.rate_bps: expected a rate > 0",
        ),
        (
            |s| s.links[0].ab.loss = f64::NAN,
            "link[0].ab.loss: expected a probability in [0, 1]",
        ),
        (
            |s| s.links[0].ab.tick_ns = Some(0),
            "link[0].ab.tick_ns: expected a tick period > 0 ns",
        ),
        (
            |s| s.flows[0].dst = 0,
            "flow[0].to: a flow needs two different nodes",
        ),
        (|s| s.flows[0].src = 9, "flow[0]: node index out of range"),
        (
            |s| s.flows[0].mss = 0,
            "flow[0].mss: expected an integer in 88..65495 bytes, found 0",
        ),
        (
            |s| {
                s.flows[0].app = Some(satcc_core::scenario::App::Requests {
                    bytes: 10,
                    every_ns: Some(0),
                    at_ns: vec![],
                })
            },
            "flow[0].app.every_ns: expected > 0",
        ),
        (
            |s| {
                s.nodes.push("c".into());
                s.flows[0].dst = 2;
            },
            "flow[0].to: no route between a and c",
        ),
    ];
    for (edit, want) in cases {
        let mut s = good();
        edit(&mut s);
        assert_eq!(s.resolve().unwrap_err(), want);
    }
    // what only building can refuse: an algorithm's parameters
    let mut s = good();
    s.flows[0].set_cc("beta", 7.0);
    let e = World::new(&s.resolve().unwrap()).err().expect("refused");
    assert_eq!(e.key, "flow[0].cc");
    assert!(e.message.contains("beta"), "{e}");
}
