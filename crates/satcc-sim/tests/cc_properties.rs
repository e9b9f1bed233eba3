//! Property tests of every registered congestion control (`satcc_cc::registry::all()`, so an
//! algorithm added later is covered without touching this file) on the simulator's own
//! sender, driven by a scripted peer (support/scripted_peer.rs): proptest generates the
//! connection (MSS, initial window, handshake RTT, ECN) and a script of arrivals, drops,
//! reorderings, CE marks, duplicate ACKs and idle periods; every algorithm plays the same
//! script, and a failure is shrunk to a shortest script that still fails (the message names
//! the algorithm and the step).
//!
//! Checked after every ACK and every timer: cwnd ≥ 1, ssthresh ≥ 2, the scoreboard's
//! counters consistent (sacked + lost ≤ packets out, retransmissions ≤ packets out, snd_una ≤
//! snd_nxt), the algorithm's debug values not infinite, no panic or arithmetic overflow (run
//! with `--profile checked` for overflow checks), the same script giving the same run (Vegas
//! may hold ssthresh 1, as Linux's does: `SSTHRESH_MAY_BE_1`). Per
//! algorithm: the loss-based ones never shrink cwnd before the first loss signal
//! (retransmission, ECE, leaving Open), grow it on every ACK of new data in slow start (when
//! cwnd-limited, below Hybla's clamp) and on a lossless path, and set ssthresh by their own multiplicative
//! decrease (Reno ½, CUBIC 717/1024, BIC 819/1024 above its low window, Scalable ⅞, NV 819/1024) when a
//! loss or an RTO ends an Open or Disorder period.
//!
//! 32 scripts per property from a fixed seed; `PROPTEST_CASES=N` and `PROPTEST_RNG_SEED=S` run
//! others.

#[path = "support/scripted_peer.rs"]
mod scripted_peer;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use satcc_cc::params::ParamValue;
use satcc_cc::{registry, Params};
use satcc_core::SimDuration;
use scripted_peer::{Ev, Peer, Step};

/// Algorithms whose cwnd only falls on a loss, an RTO or an ECN echo (no delay signal).
const LOSS_BASED: &[&str] = &[
    "reno",
    "newreno",
    "hybla",
    "highspeed",
    "scalable",
    "bic",
    "cubic",
    "htcp",
    "westwood",
    "illinois",
    "veno",
    "dctcp",
];

/// Linux's Vegas sets ssthresh = min(ssthresh, cwnd) after cutting cwnd by one, before
/// raising cwnd to its floor of 2 (`tcp_vegas_ssthresh`): at cwnd 2, ssthresh becomes 1.
const SSTHRESH_MAY_BE_1: &[&str] = &["vegas"];

/// The largest cwnd growth may stop at without a limit being hit: Hybla's clamp.
const CLAMP: u32 = satcc_cc::algos::hybla::HYBLA_CWND_CLAMP;

/// The ssthresh an Open connection's first loss sets, from the cwnd before it, for the
/// algorithms whose decrease is a fixed function of cwnd (their `ssthresh` op).
fn decrease(name: &str, cwnd: u32) -> Option<u32> {
    let reno = (cwnd >> 1).max(2);
    Some(match name {
        "reno" | "hybla" | "vegas" => reno,
        "cubic" => ((u64::from(cwnd) * 717 / 1024) as u32).max(2),
        "bic" if cwnd <= 14 => reno,
        "bic" => ((u64::from(cwnd) * 819 / 1024) as u32).max(2),
        "scalable" => (cwnd - (cwnd >> 3)).max(2),
        "nv" => (((u64::from(cwnd) * 819) >> 10) as u32).max(2),
        _ => return None,
    })
}

/// A connection and its script.
#[derive(Clone, Debug)]
struct Case {
    mss: u32,
    iw: u32,
    rtt_us: u32,
    ecn: bool,
    seed: u64,
    script: Vec<Ev>,
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        6 => (1u8..=16, prop_oneof![0u32..=20_000, 0u32..=2_000_000]).prop_map(|(n, gap_us)| Ev::Deliver { n, gap_us }),
        1 => (1u8..=4).prop_map(|n| Ev::Drop { n }),
        1 => Just(Ev::Swap),
        1 => Just(Ev::Ce),
        1 => Just(Ev::DupAck),
        1 => prop_oneof![0u32..=5_000, 0u32..=3_000_000, any::<u32>()].prop_map(|us| Ev::Idle { us }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec![536u32, 1448, 8948]),
        1u32..=40,
        200u32..=700_000,
        any::<bool>(),
        0u64..1 << 40,
        prop::collection::vec(event(), 1..250),
    )
        .prop_map(|(mss, iw, rtt_us, ecn, seed, script)| Case {
            mss,
            iw,
            rtt_us,
            ecn,
            seed,
            script,
        })
}

/// A lossless script: in-order arrivals only, a few ms apart (no timer can fire first).
fn lossless_case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec![536u32, 1448, 8948]),
        1u32..=40,
        200u32..=700_000,
        prop::collection::vec(
            (1u8..=16, 0u32..=1_000).prop_map(|(n, gap_us)| Ev::Deliver { n, gap_us }),
            1..200,
        ),
    )
        .prop_map(|(mss, iw, rtt_us, script)| Case {
            mss,
            iw,
            rtt_us,
            ecn: false,
            seed: 1,
            script,
        })
}

/// `info`'s parameters for a case: the seed when the algorithm takes one, else defaults.
fn params(info: &registry::AlgoInfo, seed: u64) -> Params {
    let mut p = Params::new();
    if info.params.iter().any(|q| q.name == "seed") {
        p.insert("seed", ParamValue::Num(seed as f64));
    }
    p
}

/// The algorithm's debug values after each event of a script.
type Debug = Vec<Vec<(&'static str, f64)>>;

fn play(info: &registry::AlgoInfo, c: &Case) -> (Vec<Step>, Debug) {
    let rtt = SimDuration::from_micros(u64::from(c.rtt_us));
    let mut peer = Peer::connect(info.name, &params(info, c.seed), c.mss, c.iw, rtt, c.ecn);
    let mut debug = Vec::new();
    for &ev in &c.script {
        peer.play(ev);
        debug.push(peer.s.cc_state());
    }
    (peer.trace, debug)
}

fn check_invariants(name: &str, trace: &[Step], debug: &Debug) -> Result<(), String> {
    for (k, s) in trace.iter().enumerate() {
        let bad = |what: &str| Err(format!("{name} step {k}: {what}: {s:?}"));
        if s.cwnd < 1 {
            return bad("cwnd below 1");
        }
        if s.ssthresh < 2 && !(SSTHRESH_MAY_BE_1.contains(&name) && s.ssthresh == 1) {
            return bad("ssthresh below 2");
        }
        if u64::from(s.sacked_out) + u64::from(s.lost_out) > u64::from(s.packets_out) {
            return bad("sacked + lost above packets out");
        }
        if s.retrans_out > s.packets_out {
            return bad("retransmissions above packets out");
        }
        if s.snd_una > s.snd_nxt {
            return bad("snd_una beyond snd_nxt");
        }
    }
    for (k, values) in debug.iter().enumerate() {
        if let Some((key, v)) = values.iter().find(|(_, v)| v.is_infinite()) {
            return Err(format!("{name} event {k}: debug value {key} = {v}"));
        }
    }
    Ok(())
}

/// Open or Disorder → Recovery or Loss: ssthresh is the algorithm's decrease of the cwnd
/// before the ACK or timer that entered it.
fn check_decrease(name: &str, trace: &[Step]) -> Result<(), String> {
    for (k, w) in trace.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        let entered = matches!(a.ca_state, 0 | 1) && matches!(b.ca_state, 3 | 4);
        if let (true, Some(want)) = (entered, decrease(name, a.cwnd)) {
            if b.ssthresh != want {
                return Err(format!(
                    "{name} step {}: ssthresh {} after a loss at cwnd {}, expected {want}",
                    k + 1,
                    b.ssthresh,
                    a.cwnd
                ));
            }
        }
    }
    Ok(())
}

/// Until the first loss signal (a retransmission, which includes a TLP probe whose ACK may
/// later reveal a loss, an ECE, or leaving Open): cwnd never falls, and in slow start every
/// ACK of new data raises it.
fn check_growth(name: &str, trace: &[Step]) -> Result<(), String> {
    for (k, w) in trace.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        if b.ca_state != 0 || b.total_retrans > 0 || b.ece {
            break;
        }
        if b.cwnd < a.cwnd {
            return Err(format!(
                "{name} step {}: cwnd {} -> {} before any loss signal",
                k + 1,
                a.cwnd,
                b.cwnd
            ));
        }
        // Linux grows in slow start only when cwnd-limited (`tcp_is_cwnd_limited`: cwnd <
        // 2 · max_packets_out, and max_packets_out ≥ packets_out), and never past the clamp.
        let acked_new = !b.timer && b.snd_una > a.snd_una;
        let limited = a.cwnd < 2 * a.packets_out && a.cwnd < CLAMP;
        if acked_new && limited && a.cwnd < b.ssthresh && b.cwnd <= a.cwnd {
            return Err(format!(
                "{name} step {}: slow start (ssthresh {}) did not grow cwnd {} on an ACK of new data",
                k + 1,
                b.ssthresh,
                a.cwnd
            ));
        }
    }
    Ok(())
}

/// 32 scripts from a fixed seed (CI sees the same ones every run); `PROPTEST_CASES` and
/// `PROPTEST_RNG_SEED` explore more.
fn config() -> ProptestConfig {
    let set = |var: &str| std::env::var_os(var).is_some();
    let d = ProptestConfig::default();
    ProptestConfig {
        cases: if set("PROPTEST_CASES") { d.cases } else { 32 },
        rng_seed: if set("PROPTEST_RNG_SEED") {
            d.rng_seed
        } else {
            RngSeed::Fixed(0x5a7cc)
        },
        failure_persistence: None,
        ..d
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_algorithm_keeps_the_senders_invariants_on_any_script(c in case()) {
        for info in registry::all() {
            let (trace, debug) = play(info, &c);
            check_invariants(info.name, &trace, &debug).map_err(TestCaseError::fail)?;
            check_decrease(info.name, &trace).map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn loss_based_algorithms_only_grow_until_a_loss_signal(c in case()) {
        for name in LOSS_BASED {
            let info = registry::info(name).expect("registered");
            let (trace, _) = play(info, &c);
            check_growth(name, &trace).map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn loss_based_algorithms_grow_on_a_lossless_path(c in lossless_case()) {
        for name in LOSS_BASED {
            let info = registry::info(name).expect("registered");
            let (trace, _) = play(info, &c);
            check_growth(name, &trace).map_err(TestCaseError::fail)?;
            let (first, last) = (trace[0], trace[trace.len() - 1]);
            prop_assert!(last.total_retrans == 0, "{name}: a retransmission on a lossless path");
            if last.delivered > first.delivered {
                prop_assert!(last.cwnd > first.cwnd, "{name}: cwnd {} -> {}", first.cwnd, last.cwnd);
            }
        }
    }

    #[test]
    fn the_same_script_gives_the_same_run(c in case()) {
        for info in registry::all() {
            // Debug output, NaN included (an unset estimate), compared as text.
            let (a, b) = (play(info, &c), play(info, &c));
            prop_assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", info.name);
        }
    }
}

#[test]
fn every_algorithm_documents_its_parameters_and_rejects_unknown_ones() {
    for info in registry::all() {
        let bad = Params::new().with("no_such_parameter", ParamValue::Num(1.0));
        assert!(
            (info.build)(&bad).is_err(),
            "{} accepted an unknown parameter",
            info.name
        );
        for p in info.params {
            assert!(
                !p.doc.is_empty() && !p.unit.is_empty(),
                "{}.{}",
                info.name,
                p.name
            );
        }
        let cc = (info.build)(&Params::new()).unwrap();
        assert_eq!(cc.name(), info.name, "registry name and name() differ");
    }
}

/// The decrease check is not vacuous: one lost segment in a steady stream takes every
/// algorithm it covers into Recovery.
#[test]
fn a_lost_segment_exercises_the_decrease_check_of_every_algorithm_it_covers() {
    let deliver = Ev::Deliver { n: 8, gap_us: 500 };
    let mut script = vec![deliver; 30];
    script.push(Ev::Drop { n: 1 });
    script.extend([deliver; 10]);
    let c = Case {
        mss: 1448,
        iw: 10,
        rtt_us: 50_000,
        ecn: false,
        seed: 1,
        script,
    };
    for info in registry::all() {
        if decrease(info.name, 10).is_none() {
            continue;
        }
        let (trace, _) = play(info, &c);
        let losses = trace
            .windows(2)
            .filter(|w| matches!(w[0].ca_state, 0 | 1) && matches!(w[1].ca_state, 3 | 4))
            .count();
        assert!(
            losses > 0,
            "{}: no Open -> Recovery/Loss transition",
            info.name
        );
        check_decrease(info.name, &trace).unwrap();
    }
}
