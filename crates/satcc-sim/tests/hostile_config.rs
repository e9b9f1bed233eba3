//! The simulator never panics on a config, however hostile: every config built
//! from random bytes is either refused by `World::new` with an error or runs to its end. The
//! stable stand-in for the cargo-fuzz target `fuzz/fuzz_targets/config.rs`; the Rust side
//! takes its scenario as a Python dict (crates/satcc-py), so this is the loader it has.

#[path = "support/config_from_bytes.rs"]
mod config_from_bytes;

use satcc_core::SimDuration;
use satcc_sim::world::World;

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
        let result = std::panic::catch_unwind(|| match World::new(&cfg) {
            Err(_) => false,
            Ok(mut w) => {
                if w.reserve_series().is_err() {
                    return false;
                }
                let out = w.run(&mut |_| true);
                assert_eq!(out.flows.len(), cfg.flows.len());
                true
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
    cfg.duration = SimDuration::from_nanos(u64::MAX / 2);
    cfg.bin = SimDuration::from_nanos(1);
    let mut w = World::new(&cfg).expect("an empty world is valid");
    assert!(
        w.reserve_series().is_ok(),
        "no flow, no link: nothing to reserve"
    );
    cfg.nodes = vec!["a".into(), "b".into()];
    cfg.links.push(satcc_sim::LinkConfig {
        a: 0,
        b: 1,
        ab: dir(),
        ba: dir(),
    });
    let mut w = World::new(&cfg).expect("valid");
    let err = w
        .reserve_series()
        .expect_err("2^63 bins cannot be reserved");
    assert!(err.to_string().contains("out of memory"), "{err}");
}

fn dir() -> satcc_sim::DirConfig {
    satcc_sim::DirConfig {
        rate_bps: 1_000_000,
        delay: SimDuration::from_nanos(1_000_000),
        loss: 0.0,
        queue: satcc_sim::QueueSpec::Packets(100),
        ecn_threshold_pkts: None,
        drop_packets: vec![],
        jitter: SimDuration::ZERO,
        tick: None,
        model: None,
    }
}

#[test]
fn a_flow_whose_id_is_not_its_index_is_refused_not_a_panic() {
    // regression: the fuzz target's crash input (flow id 4294967041 in a 1-flow config); the
    // event loop indexed flows by the packets' flow id and went out of bounds
    let cfg =
        config_from_bytes::config(include_bytes!("data/fuzz-config-flow-id-not-its-index.bin"));
    let outcome =
        std::panic::catch_unwind(|| World::new(&cfg).map(|w| w.run(&mut |_| true).flows.len()));
    assert!(outcome.is_ok(), "the simulator panicked");
    let mut cfg = (0..)
        .map(|seed| config_from_bytes::config(&bytes(seed, 64)))
        .find(|c| !c.flows.is_empty())
        .unwrap();
    cfg.flows[0].id = 7;
    assert!(World::new(&cfg)
        .err()
        .is_some_and(|e| e.key == "flow[0].id" || e.key.starts_with("flow[0]")));
}
