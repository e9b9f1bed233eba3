//! One property harness for every algorithm in the registry (`satcc_cc::registry::all()`),
//! so an algorithm added later is covered without touching this file.
//!
//! Each algorithm runs through many deterministic pseudo-random event sequences on the
//! shared test kit's fake sender (send, ACK with SACK holes, loss, RTO, undo, idle,
//! app-limited periods) and through random single-bottleneck paths. After every event:
//! cwnd ≥ 1 and ≤ the clamp, ssthresh ≥ 2, the pacing rate within `max_pacing_rate`,
//! debug values not infinite, and the sender's scoreboard consistent (bytes in flight =
//! sum of unacked). Panics (including arithmetic overflow: run without `--release` too, as
//! `cargo test -p satcc-cc --test properties`, to have overflow checks on) are reported
//! with the algorithm and seed. Finally, the same seed must give the same run.

use std::panic::{catch_unwind, AssertUnwindSafe};

use satcc_core::{Rng, SimDuration, SimTime};

// The test kit is written against the crate root (`crate::TcpState`, …); re-export the
// library here so the same file compiles inside this test crate.
pub use satcc_cc::*;

#[allow(dead_code)]
#[path = "../src/testkit.rs"]
mod testkit;

use testkit::{Driver, Path, PathSim, Policer};

/// Scripted sequences per algorithm and events per sequence.
const SEQUENCES: u64 = 150;
const EVENTS: usize = 400;
/// Random paths per algorithm and simulated seconds per path.
const PATHS: u64 = 12;
const PATH_SECS: u64 = 6;

/// Parameters for `info`: the flow's seed when the algorithm takes one, else defaults.
fn params_for(info: &registry::AlgoInfo, seed: u64) -> Params {
    let mut p = Params::new();
    if info.params.iter().any(|q| q.name == "seed") {
        p.insert("seed", params::ParamValue::Num((seed % (1 << 40)) as f64));
    }
    p
}

/// Cheap invariants, checked after every event.
fn check_fast(d: &Driver, what: &str) {
    let t = &d.tcp;
    assert!(t.cwnd >= 1, "{what}: cwnd {}", t.cwnd);
    assert!(
        t.cwnd <= t.cwnd_clamp,
        "{what}: cwnd {} above clamp",
        t.cwnd
    );
    assert!(t.ssthresh >= 2, "{what}: ssthresh {}", t.ssthresh);
    assert!(
        t.pacing_rate_bps <= t.max_pacing_rate_bps,
        "{what}: pacing rate {}",
        t.pacing_rate_bps
    );
}

/// All invariants, including the O(outstanding) scoreboard recount.
fn check(d: &Driver, what: &str) {
    check_fast(d, what);
    for (k, v) in d.cc.debug_state() {
        assert!(!v.is_infinite(), "{what}: debug value {k} = {v}");
    }
    if let Err(e) = d.check_scoreboard() {
        panic!("{what}: scoreboard: {e}");
    }
}

/// One scripted random sequence; returns a trace of (time, cwnd, ssthresh, pacing).
fn scripted(info: &registry::AlgoInfo, seed: u64) -> Vec<(SimTime, u32, u32, u64)> {
    let mut rng = Rng::derive(seed, 0x5eed);
    let cc = (info.build)(&params_for(info, seed)).expect("defaults build");
    let syn = rng
        .chance(0.7)
        .then(|| SimDuration::from_micros(1 + (rng.next_u64() % 700_000)));
    let mss = [536u32, 1448, 8948][(rng.next_u64() % 3) as usize];
    let iw = 1 + (rng.next_u64() % 40) as u32;
    let mut d = Driver::with(cc, mss, iw, syn);
    let base_rtt_us = 500 + rng.next_u64() % 600_000;
    let mut trace = Vec::with_capacity(EVENTS);
    check(&d, "init");
    for step in 0..EVENTS {
        let what = format!("{} seed {seed} step {step}", info.name);
        let roll = rng.next_f64();
        let deliverable = d.deliverable();
        match roll {
            r if r < 0.30 => {
                if rng.chance(0.1) {
                    d.mark_app_limited();
                    let n = (rng.next_u64() % 4) as u32;
                    d.send(n);
                } else {
                    // Fill the window, at most 500 segments at a time.
                    let room = d.tcp.cwnd.saturating_sub(d.tcp.in_flight());
                    d.send(room.min(500));
                }
            }
            r if r < 0.62 && !deliverable.is_empty() => {
                let k = 1 + (rng.next_u64() % deliverable.len() as u64) as usize;
                let jitter = rng.next_u64() % (base_rtt_us / 2 + 1);
                d.ack(
                    k.min(1 + (rng.next_u64() % 8) as usize),
                    SimDuration::from_micros(base_rtt_us + jitter),
                );
            }
            r if r < 0.75 && !deliverable.is_empty() => {
                // An ACK with SACK holes: some segments delivered, some of the rest lost.
                d.advance(SimDuration::from_micros(rng.next_u64() % base_rtt_us + 1));
                let (mut got, mut lost) = (Vec::new(), Vec::new());
                for id in deliverable {
                    if rng.chance(0.6) {
                        got.push(id);
                    } else if rng.chance(0.3) {
                        lost.push(id);
                    }
                }
                d.ack_ids(&got, &lost);
            }
            r if r < 0.80 => {
                d.lose(1 + (rng.next_u64() % 3) as u32);
            }
            r if r < 0.83 => d.rto(),
            r if r < 0.86 => d.undo(),
            r if r < 0.90 => d.advance(SimDuration::from_micros(rng.next_u64() % 20_000_000)),
            _ => d.advance(SimDuration::from_micros(rng.next_u64() % 5_000)),
        }
        check(&d, &what);
        trace.push((d.now, d.tcp.cwnd, d.tcp.ssthresh, d.tcp.pacing_rate_bps));
    }
    trace
}

/// One random path; returns the delivered count.
fn on_path(info: &registry::AlgoInfo, seed: u64) -> u64 {
    let mut rng = Rng::derive(seed, 0x9a7);
    let rate_pps = rng.uniform(50.0, 8_000.0);
    let path = Path {
        rate_pps,
        base_rtt: SimDuration::from_micros(200 + rng.next_u64() % 700_000),
        buffer_pkts: (rng.next_u64() % 500) as usize,
        policer: rng.chance(0.2).then(|| Policer {
            rate_pps: rate_pps * rng.uniform(0.1, 0.9),
            burst_pkts: rng.uniform(1.0, 100.0),
        }),
        pace: rng.chance(0.3),
    };
    let cc = (info.build)(&params_for(info, seed)).expect("defaults build");
    let mut d = Driver::with(cc, 1448, 10, rng.chance(0.5).then_some(path.base_rtt));
    let mut sim = PathSim::new(path);
    let what = format!("{} path seed {seed} {path:?}", info.name);
    let mut n = 0u64;
    sim.run_until(
        &mut d,
        SimTime::from_nanos(PATH_SECS * 1_000_000_000),
        |d, _| {
            n += 1;
            if n & 63 == 0 {
                check(d, &what);
            } else {
                check_fast(d, &what);
            }
        },
    );
    check(&d, &what);
    d.tcp.delivered
}

fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            panic!("{what}: {}", msg.unwrap_or_default());
        }
    }
}

#[test]
fn every_algorithm_keeps_its_invariants_on_random_event_sequences() {
    assert!(!registry::all().is_empty());
    for info in registry::all() {
        for seed in 0..SEQUENCES {
            guarded(&format!("{} seed {seed}", info.name), || {
                scripted(info, seed)
            });
        }
    }
}

#[test]
fn every_algorithm_keeps_its_invariants_and_moves_data_on_random_paths() {
    for info in registry::all() {
        for seed in 0..PATHS {
            let delivered = guarded(&format!("{} path seed {seed}", info.name), || {
                on_path(info, seed)
            });
            assert!(
                delivered > 0,
                "{} path seed {seed}: nothing delivered",
                info.name
            );
        }
    }
}

#[test]
fn every_algorithm_is_deterministic_for_a_seed() {
    for info in registry::all() {
        for seed in [3u64, 99] {
            assert_eq!(
                scripted(info, seed),
                scripted(info, seed),
                "{} seed {seed}",
                info.name
            );
            assert_eq!(
                on_path(info, seed),
                on_path(info, seed),
                "{} path seed {seed}",
                info.name
            );
        }
    }
}

#[test]
fn every_algorithm_documents_its_parameters_and_rejects_unknown_ones() {
    for info in registry::all() {
        let bad = Params::new().with("no_such_parameter", params::ParamValue::Num(1.0));
        assert!(
            (info.build)(&bad).is_err(),
            "{} accepted an unknown parameter",
            info.name
        );
        for p in info.params {
            assert!(
                !p.doc.is_empty() && !p.unit.is_empty(),
                "{}.{} lacks doc or unit",
                info.name,
                p.name
            );
        }
        let cc = (info.build)(&Params::new()).unwrap();
        assert_eq!(cc.name(), info.name, "registry name and name() differ");
    }
}
