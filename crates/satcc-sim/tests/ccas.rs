//! Scenario-level checks of the congestion controls, the behaviours each one exists for:
//! Hybla against Reno on a lossy GEO path, Vegas against CUBIC on a deep buffer, DCTCP's
//! queue around its marking threshold K, and CUBIC's RTT unfairness (study 004) with and
//! without the `k_mode = "cbrt_rtt"` correction.
//!
//! Every expectation below is derived from a model or from the algorithm's own constants
//! (named at the assertion), never from a measured run; the figures these tests print
//! (`--nocapture`) are in `crates/satcc-cc/ALGORITHMS.md`, "Scenario-level checks".
//!
//! Determinism: runs with random loss take fixed seeds. Runs without random loss have no
//! randomness at all, so the seed changes nothing; there the CUBIC fairness check instead
//! averages over fixed sub-packet offsets of the long path's delay (see
//! `PHASE_FRACTIONS`), which a real testbed randomises through timing jitter.

mod common;

use common::*;
use satcc_cc::params::ParamValue;
use satcc_core::dirspec::Direction;
use satcc_core::record::LinkSeries;
use satcc_core::scenario::file::Pkts;
use satcc_core::scenario::switches::Key;
use satcc_core::scenario::{Link, Scenario};
use satcc_sim::{QueueSpec, SimOutput};

/// Bytes of a full data packet on the wire (1448 B payload + 52 B IP/TCP/timestamps).
const PACKET_BYTES: f64 = 1500.0;
/// Payload share of a full data packet.
const PAYLOAD_SHARE: f64 = 1448.0 / PACKET_BYTES;
/// One-way delay of the `dumbbell` access link (common.rs), ms.
const ACCESS_ONE_WAY_MS: f64 = 0.1;

// ---------------------------------------------------------------------------------------
// Series helpers
// ---------------------------------------------------------------------------------------

/// Goodput of `flow` over the bins starting in [from_s, to_s), bit/s.
fn goodput_between(o: &SimOutput, bin_s: f64, flow: u32, from_s: f64, to_s: f64) -> f64 {
    let s = &o.flow_series;
    let (mut bytes, mut bins) = (0u64, 0u64);
    for i in 0..s.t_s.len() {
        if s.flow_id[i] == flow && s.t_s[i] >= from_s - 1e-9 && s.t_s[i] < to_s - 1e-9 {
            bytes += s.delivered_bytes[i];
            bins += 1;
        }
    }
    bytes as f64 * 8.0 / (bins as f64 * bin_s)
}

/// Rows of the link series for one link direction from `from_s` on.
fn link_rows(l: &LinkSeries, link: u32, dir: &str, from_s: f64) -> Vec<usize> {
    (0..l.t_s.len())
        .filter(|&i| l.link_id[i] == link && l.dir[i] == dir && l.t_s[i] >= from_s - 1e-9)
        .collect()
}

/// Queue occupancy (packets, sampled at each bin's end) of a link direction from `from_s`.
fn queue_pkts(o: &SimOutput, link: u32, from_s: f64) -> Vec<f64> {
    let l = &o.link_series;
    link_rows(l, link, "ab", from_s)
        .into_iter()
        .map(|i| l.queue_pkts[i] as f64)
        .collect()
}

fn link_total(o: &SimOutput, link: u32, col: impl Fn(&LinkSeries, usize) -> u64) -> u64 {
    let l = &o.link_series;
    link_rows(l, link, "ab", 0.0)
        .into_iter()
        .map(|i| col(l, i))
        .sum()
}

/// srtt of `flow` (ms, sampled at each bin's end) from `from_s` on.
fn srtt_ms(o: &SimOutput, flow: u32, from_s: f64) -> Vec<f64> {
    let s = &o.flow_series;
    (0..s.t_s.len())
        .filter(|&i| s.flow_id[i] == flow && s.t_s[i] >= from_s - 1e-9)
        .map(|i| s.srtt_ms[i])
        .collect()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// The `p` quantile (nearest rank).
fn quantile(x: &[f64], p: f64) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Jain's fairness index (study 004's metric): (Σx)² / (n·Σx²).
fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// A 32 MiB receive buffer (Linux 6.16+'s tcp_rmem[2], not the scenario's 6 MiB): study
/// 004's long path on GbE has a 16 MB BDP.
fn gbe_window(mut f: Flow) -> Flow {
    f.rwnd_bytes = 32 << 20;
    f
}

fn with_params(mut f: Flow, params: &[(&str, ParamValue)]) -> Flow {
    for (k, v) in params {
        set_param(&mut f, k, v);
    }
    f
}

// ---------------------------------------------------------------------------------------
// 1. Hybla vs Reno on a lossy GEO path
// ---------------------------------------------------------------------------------------

#[test]
fn hybla_gets_at_least_twice_renos_goodput_on_a_lossy_550_ms_path() {
    // 10 Mbit/s, 550 ms RTT, 1e-4 random loss, 1000-packet buffer (study 002's GEO case).
    // Models (satcc model … --rtt 550ms --loss 1e-4 --wmax 550 --packet 1000B): Hybla 7.72,
    // PFTK (Reno) 1.78 Mbit/s, i.e. 4.3×. With this run's 1448 B segments Reno's prediction
    // is Mathis' 2.58 Mbit/s, and Hybla's W_m = BDP + buffer (1458 pkt) puts its model at
    // 27 Mbit/s, so the link (9.65 Mbit/s of payload) caps it: 3.7×. We require 2×, half the
    // models' factor: Reno's goodput rests on ~20 loss events per 600 s run (±20 % per seed),
    // and Linux Hybla grows per ACK (half the paper's per-segment rate with delayed ACKs),
    // which the models do not include.
    const RATE_BPS: u64 = 10_000_000;
    const ONE_WAY_MS: u64 = 275;
    const LOSS: f64 = 1e-4;
    const SECS: u64 = 600;
    const REQUIRED_FACTOR: f64 = 2.0;
    let capacity = RATE_BPS as f64 * PAYLOAD_SHARE;
    let rtt_s = 2.0 * (ONE_WAY_MS as f64 + ACCESS_ONE_WAY_MS) / 1000.0;
    // Mathis et al. 1997: B = MSS/RTT · √(3/2) / √p (Linux Reno counts acked segments, so
    // delayed ACKs do not slow its growth and C = √(3/2) applies).
    let mathis = 1448.0 * 8.0 / rtt_s * 1.5f64.sqrt() / LOSS.sqrt();
    let mut reno_all = Vec::new();
    for seed in 1..=3u64 {
        let goodput = |cca: &str| {
            let mut cfg = dumbbell(
                RATE_BPS,
                ONE_WAY_MS,
                LOSS,
                QueueSpec::Packets(1000),
                SECS,
                vec![Flow::bulk(0, 0, 2, cca)],
            );
            cfg.seed = seed;
            let o = run(&cfg);
            let f = &o.flows[0];
            eprintln!(
                "seed {seed} {cca}: goodput {:.2} Mbit/s, {} retransmitted of {} sent, {} recoveries, {} RTOs",
                f.goodput_bps / 1e6,
                f.retransmitted_packets,
                f.sent_packets,
                f.recovery_count,
                f.rto_count
            );
            f.goodput_bps
        };
        let hybla = goodput("hybla");
        let reno = goodput("reno");
        reno_all.push(reno);
        assert!(
            hybla >= REQUIRED_FACTOR * reno,
            "seed {seed}: Hybla {:.2} Mbit/s is not {REQUIRED_FACTOR}× Reno's {:.2}",
            hybla / 1e6,
            reno / 1e6
        );
        // Hybla's model window (W_m) exceeds the BDP: it should run the link nearly full.
        assert!(
            hybla >= 0.9 * capacity,
            "seed {seed}: Hybla {:.2} of {:.2} Mbit/s",
            hybla / 1e6,
            capacity / 1e6
        );
    }
    // The comparison means something only if Reno is the Reno the models describe. One
    // seed's Reno rests on ~20 loss events (±1/√20 ≈ 22 %), the mean of three on ±13 %;
    // we allow 0.7–1.4 × Mathis.
    let ratio = mean(&reno_all) / mathis;
    eprintln!(
        "Reno mean {:.2} Mbit/s, Mathis {:.2} Mbit/s (ratio {ratio:.2})",
        mean(&reno_all) / 1e6,
        mathis / 1e6
    );
    assert!(
        (0.7..1.4).contains(&ratio),
        "Reno {:.2} vs Mathis {:.2} Mbit/s",
        mean(&reno_all) / 1e6,
        mathis / 1e6
    );
}

// ---------------------------------------------------------------------------------------
// 2. Vegas vs CUBIC on a deep buffer
// ---------------------------------------------------------------------------------------

/// The 100 Mbit/s, 20 ms path of checks 2 and 3, with 10 ms bins for the queue series.
const FAST_RATE_BPS: u64 = 100_000_000;
const FAST_ONE_WAY_MS: u64 = 10;
const FINE_BIN_S: f64 = 0.01;

/// Base RTT of that path: propagation both ways plus one data packet's serialisation.
fn fast_base_rtt_ms() -> f64 {
    2.0 * (FAST_ONE_WAY_MS as f64 + ACCESS_ONE_WAY_MS)
        + PACKET_BYTES * 8.0 / FAST_RATE_BPS as f64 * 1000.0
}

fn fast_bdp_pkts() -> f64 {
    FAST_RATE_BPS as f64 / 8.0 * fast_base_rtt_ms() / 1000.0 / PACKET_BYTES
}

fn fast_path(queue: QueueSpec, secs: u64, flows: Vec<Flow>) -> Scenario {
    let mut cfg = dumbbell(FAST_RATE_BPS, FAST_ONE_WAY_MS, 0.0, queue, secs, flows);
    cfg.bin_ns = 10_000_000;
    cfg
}

#[test]
fn vegas_keeps_a_few_packets_queued_while_cubic_fills_a_ten_bdp_buffer() {
    // Buffer 10 BDP ("10 BDP" resolves to 10 × rate × 20.2 ms ≈ 1683 packets).
    const SECS: u64 = 90;
    // Vegas leaves slow start late (Linux's exit test uses the minimum RTT of a round whose
    // first packets saw an empty queue: here at cwnd ≈ 4 BDP) and then drains the excess
    // one packet per RTT (tcp_vegas_cong_avoid: cwnd−− while diff > beta): ~450 RTTs of
    // 20–75 ms ≈ 22 s. Steady state is judged after 30 s.
    const STEADY_FROM_S: f64 = 30.0;
    // Vegas' target: alpha..beta = 2..4 packets of its own queued (tcp_vegas.c defaults);
    // we allow 10 (the brief's "a few"), i.e. 1.2 ms of queueing on top of the base RTT.
    const VEGAS_MAX_QUEUE: f64 = 10.0;
    // The queue's peak also holds one GSO packet arriving whole (the deferring sender, the
    // default: `tcp_tso_autosize`'s 1 ms of a pacing rate of ~1.2 x 100 Mbit/s, 10 segments
    // of 1448 B, leave back to back); its peak was 12 (2026-11-30), 10 without the deferral.
    const GSO_BURST: f64 = 10.0;
    let pkt_ms = PACKET_BYTES * 8.0 / FAST_RATE_BPS as f64 * 1000.0;
    let base = fast_base_rtt_ms();
    let limit =
        (10.0 * FAST_RATE_BPS as f64 / 8.0 * 2.0 * (FAST_ONE_WAY_MS as f64 + ACCESS_ONE_WAY_MS)
            / 1000.0
            / PACKET_BYTES)
            .floor();

    let measure = |cca: &str| {
        let o = run(&fast_path(
            QueueSpec::Bdp(10.0),
            SECS,
            vec![Flow::bulk(0, 0, 2, cca)],
        ));
        let q = queue_pkts(&o, 1, STEADY_FROM_S);
        let s = srtt_ms(&o, 0, STEADY_FROM_S);
        let drops = link_total(&o, 1, |l, i| l.drops_queue[i]);
        eprintln!(
            "{cca}: queue mean {:.1} p5 {:.0} p95 {:.0} max {:.0} of {limit} pkt; srtt mean {:.2} p95 {:.2} ms (base {base:.2}); goodput {:.2} Mbit/s; {drops} drops",
            mean(&q),
            quantile(&q, 0.05),
            quantile(&q, 0.95),
            quantile(&q, 1.0),
            mean(&s),
            quantile(&s, 0.95),
            goodput_between(&o, FINE_BIN_S, 0, STEADY_FROM_S, SECS as f64) / 1e6
        );
        (q, s, drops, o)
    };

    let (q, s, drops, o) = measure("vegas");
    let max_q = quantile(&q, 1.0);
    assert!(
        max_q <= VEGAS_MAX_QUEUE + GSO_BURST,
        "Vegas queue reached {max_q} packets after {STEADY_FROM_S} s"
    );
    assert!(
        mean(&q) <= VEGAS_MAX_QUEUE,
        "Vegas queue {:.1} packets on average after {STEADY_FROM_S} s",
        mean(&q)
    );
    let srtt_bound = base + VEGAS_MAX_QUEUE * pkt_ms;
    assert!(
        mean(&s) <= srtt_bound,
        "Vegas srtt {:.2} ms > {srtt_bound:.2} ms",
        mean(&s)
    );
    assert!(
        quantile(&s, 0.95) <= srtt_bound,
        "Vegas srtt p95 {:.2} ms > {srtt_bound:.2} ms",
        quantile(&s, 0.95)
    );
    assert_eq!(
        drops, 0,
        "a 10 BDP buffer holds Vegas' slow-start overshoot"
    );
    // A few packets queued is enough to keep the link busy.
    let got = goodput_between(&o, FINE_BIN_S, 0, STEADY_FROM_S, SECS as f64);
    assert!(
        got >= 0.95 * FAST_RATE_BPS as f64 * PAYLOAD_SHARE,
        "Vegas goodput {:.2} Mbit/s",
        got / 1e6
    );

    let (q, s, drops, _) = measure("cubic");
    // After each loss CUBIC keeps cwnd ≥ β·W_max = 0.7·(BDP + limit) (tcp_cubic.c beta 717),
    // so the queue never falls below 0.7·(BDP + limit) − BDP ≈ 0.67·limit here. We require
    // half the limit on average, a tail at 90 % of it, and srtt ≥ 5× base (the floor alone
    // gives ≈ 7.7×).
    assert!(drops > 0, "CUBIC must run the buffer into tail drop");
    assert!(
        mean(&q) >= 0.5 * limit,
        "CUBIC queue mean {:.0} of {limit}",
        mean(&q)
    );
    assert!(
        quantile(&q, 0.95) >= 0.9 * limit,
        "CUBIC queue p95 {:.0} of {limit}",
        quantile(&q, 0.95)
    );
    assert!(
        mean(&s) >= 5.0 * base,
        "CUBIC srtt {:.1} ms vs base {base:.2} ms",
        mean(&s)
    );
}

// ---------------------------------------------------------------------------------------
// 3. DCTCP around K
// ---------------------------------------------------------------------------------------

/// DCTCP's marking threshold (packets) and the path's buffer.
const DCTCP_K: u64 = 20;
const DCTCP_FLOWS: u32 = 2;
const DCTCP_BUFFER_PKTS: u64 = 1000;
const DCTCP_SECS: u64 = 60;
/// Slow start and the first α convergence are over well within this.
const DCTCP_STEADY_FROM_S: f64 = 5.0;

fn dctcp_path(cca: &str, marking: bool) -> Scenario {
    let flows = (0..DCTCP_FLOWS)
        .map(|i| {
            let mut f = Flow::bulk(i, 0, 2, cca);
            f.ecn = true;
            f
        })
        .collect();
    let mut cfg = fast_path(QueueSpec::Packets(DCTCP_BUFFER_PKTS), DCTCP_SECS, flows);
    if marking {
        cfg.links[1].ab.ecn_threshold = Key::new(Some(Pkts(DCTCP_K)));
    }
    cfg
}

struct QueueStats {
    mean: f64,
    p5: f64,
    p95: f64,
    max: f64,
    goodput_bps: f64,
    drops: u64,
    marks: u64,
    sent: u64,
}

fn queue_stats(label: &str, o: &SimOutput) -> QueueStats {
    let q = queue_pkts(o, 1, DCTCP_STEADY_FROM_S);
    let goodput_bps = (0..DCTCP_FLOWS)
        .map(|f| goodput_between(o, FINE_BIN_S, f, DCTCP_STEADY_FROM_S, DCTCP_SECS as f64))
        .sum();
    let st = QueueStats {
        mean: mean(&q),
        p5: quantile(&q, 0.05),
        p95: quantile(&q, 0.95),
        max: quantile(&q, 1.0),
        goodput_bps,
        drops: link_total(o, 1, |l, i| l.drops_queue[i]),
        marks: link_total(o, 1, |l, i| l.ecn_marks[i]),
        sent: o.flows.iter().map(|f| f.sent_packets).sum(),
    };
    eprintln!(
        "{label}: queue mean {:.1} p5 {:.0} p95 {:.0} max {:.0} pkt; goodput {:.2} Mbit/s; {} drops, {} CE marks, {} sent",
        st.mean,
        st.p5,
        st.p95,
        st.max,
        st.goodput_bps / 1e6,
        st.drops,
        st.marks,
        st.sent
    );
    st
}

#[test]
fn dctcp_holds_the_queue_near_k_at_full_utilisation_without_drops() {
    // Alizadeh et al., SIGCOMM 2010, §3.3 (the analysis RFC 8257 builds on): with N
    // synchronised flows the queue saw-tooths between Q_max = K + N and Q_max − A, with
    // A = ½·√(2N(C·RTT + K)) (C·RTT in packets). Here C·RTT ≈ 169 and N = 2: Q in [8.3, 22],
    // time average ≈ 15, 95th percentile near Q_max = 22; both inside [K/2, 2K] = [10, 40],
    // the band we require for them. Q_min > 0 means the link never idles (K = 20 is just
    // under the paper's C·RTT/7 ≈ 24 guideline, but the analysis still gives a positive
    // minimum; Linux's dctcp.rst suggests K = 20 packets at 1 Gbit/s), so goodput must reach
    // 95 % of the payload capacity; ECN replaces drops, so drops must stay below 1 in 10⁴.
    let k = DCTCP_K as f64;
    let o = run(&dctcp_path("dctcp", true));
    let st = queue_stats("dctcp, K = 20", &o);
    assert!(
        (k / 2.0..=2.0 * k).contains(&st.mean),
        "time-average queue {:.1} outside [K/2, 2K]",
        st.mean
    );
    assert!(
        (k / 2.0..=2.0 * k).contains(&st.p95),
        "queue p95 {} outside [K/2, 2K]",
        st.p95
    );
    let capacity = FAST_RATE_BPS as f64 * PAYLOAD_SHARE;
    assert!(
        st.goodput_bps >= 0.95 * capacity,
        "goodput {:.2} of {:.2} Mbit/s",
        st.goodput_bps / 1e6,
        capacity / 1e6
    );
    assert!(st.marks > 0, "the queue must mark CE above K");
    assert!(
        (st.drops as f64) <= 1e-4 * st.sent as f64,
        "{} drops of {} packets",
        st.drops,
        st.sent
    );
}

#[test]
fn dctcp_negotiates_ecn_when_the_flow_does_not_ask_for_it() {
    // Linux negotiates ECN for an algorithm flagged TCP_CONG_NEEDS_ECN whatever the sysctl
    // says (`tcp_ca_needs_ecn`): DCTCP with `ecn = false` is marked, not dropped.
    let mut cfg = dctcp_path("dctcp", true);
    for f in &mut cfg.flows {
        f.ecn = false;
    }
    let st = queue_stats("dctcp, ecn = false", &run(&cfg));
    assert!(st.marks > 0, "no CE marks: ECN was not negotiated");
    assert_eq!(
        st.drops, 0,
        "DCTCP with ECN keeps the 1000-packet buffer from overflowing"
    );
}

#[test]
fn dctcp_without_ecn_marking_fills_the_buffer_like_reno() {
    // No CE marks: DCTCP grows as Reno and halves on loss (dctcp_react_to_loss), so both
    // fill the drop-tail buffer. After a synchronised halving the aggregate window is
    // (BDP + buffer)/2, leaving (buffer − BDP)/2 queued: the floor we require on average.
    let limit = DCTCP_BUFFER_PKTS as f64;
    let floor = (limit - fast_bdp_pkts()) / 2.0;
    let dctcp = queue_stats("dctcp, no marking", &run(&dctcp_path("dctcp", false)));
    let reno = queue_stats("reno", &run(&dctcp_path("reno", false)));
    for (name, st) in [("dctcp", &dctcp), ("reno", &reno)] {
        assert!(st.drops > 0, "{name}: the buffer must overflow");
        assert_eq!(st.marks, 0, "{name}: nothing marks CE");
        assert!(
            st.mean >= floor,
            "{name}: queue mean {:.0} below Reno's floor {floor:.0}",
            st.mean
        );
        assert!(
            st.p95 >= 0.9 * limit,
            "{name}: queue p95 {} of {limit}",
            st.p95
        );
    }
    // "Like Reno": the same queue and goodput, up to 10 % of the buffer and 2 % of the rate.
    assert!(
        (dctcp.mean - reno.mean).abs() <= 0.1 * limit,
        "queue mean dctcp {:.0} vs reno {:.0}",
        dctcp.mean,
        reno.mean
    );
    assert!((dctcp.goodput_bps - reno.goodput_bps).abs() <= 0.02 * reno.goodput_bps);
    // And unlike DCTCP with marking, whose queue stays near K = 20.
    assert!(dctcp.mean > 4.0 * DCTCP_K as f64);
}

// ---------------------------------------------------------------------------------------
// 4. CUBIC RTT fairness (study 004)
// ---------------------------------------------------------------------------------------

/// The two RTTs of study 004's largest gap (PC1 2 ms, PC2 128 ms).
const SHORT_RTT_MS: f64 = 2.0;
const LONG_RTT_MS: f64 = 128.0;
/// Access links faster than the bottleneck: packets reach the shared queue in bursts, as
/// they do behind dummynet, which releases each delay line once per kernel tick (HZ = 1000
/// on FreeBSD 8: ~83 packets per flow and ms at 1 Gbit/s), and from TSO senders. With
/// access links exactly as fast as the bottleneck the simulator's arrivals are perfectly
/// paced and the winner is decided by sub-packet timing (see
/// `equal_rate_access_links_phase_lock_cubic_fairness`).
const ACCESS_BPS: u64 = 10_000_000_000;
/// Offsets of the long path's one-way delay, as fractions of one bottleneck packet time.
/// Without random loss the simulator has no randomness (the seed changes nothing), and a
/// tail-drop queue shared by deterministic senders locks into phase (Floyd & Jacobson
/// 1991, the paper's ref. [16]): which flow's packet finds the freed slot depends on the
/// arrival phase. A testbed randomises the phase through jitter; we average over a fixed
/// set of phases instead.
const PHASE_FRACTIONS: [f64; 5] = [0.0, 0.142, 0.342, 0.608, 0.842];
/// Goodput is measured after both flows' slow starts.
const FAIRNESS_FROM_S: f64 = 10.0;

/// Two senders with their own access delays share one bottleneck (node 2 → 3, zero delay).
fn two_rtt_dumbbell(
    rate_bps: u64,
    access_bps: u64,
    rtt_ms: [f64; 2],
    queue: QueueSpec,
    secs: u64,
    flows: Vec<Flow>,
) -> Scenario {
    let access = |one_way_ns: f64| {
        Direction::new(
            access_bps,
            one_way_ns.round() as u64,
            0.0,
            QueueSpec::Packets(100_000),
        )
    };
    let half_ns = |rtt: f64| rtt * 1e6 / 2.0;
    let bottleneck = Direction::new(rate_bps, 0, 0.0, queue);
    let links = vec![
        Link::symmetric(0, 2, access(half_ns(rtt_ms[0]))),
        Link::symmetric(1, 2, access(half_ns(rtt_ms[1]))),
        Link::symmetric(2, 3, bottleneck),
    ];
    let duration = secs * 1_000_000_000;
    let nodes = ["pc1", "pc2", "dummynet", "pc3"];
    Scenario::new("cubic-rtt-fairness", &nodes, links, flows, duration)
}

/// One CUBIC configuration on both flows.
#[derive(Clone)]
struct KMode {
    label: String,
    params: Vec<(&'static str, ParamValue)>,
}

impl KMode {
    fn stock() -> Self {
        KMode {
            label: "stock".into(),
            params: vec![],
        }
    }
    fn cbrt_rtt() -> Self {
        KMode {
            label: "cbrt_rtt".into(),
            params: vec![("k_mode", ParamValue::Str("cbrt_rtt".into()))],
        }
    }
    fn scaled(a: f64) -> Self {
        KMode {
            label: format!("scaled a={a}"),
            params: vec![
                ("k_mode", ParamValue::Str("scaled".into())),
                ("a", ParamValue::Num(a)),
            ],
        }
    }
}

/// Mean goodput (bit/s) of the short- and the long-RTT flow over the phases.
struct Fairness {
    short_bps: f64,
    long_bps: f64,
    per_phase: Vec<(f64, f64)>,
}

impl Fairness {
    fn jain(&self) -> f64 {
        jain(&[self.short_bps, self.long_bps])
    }
    fn long_share(&self) -> f64 {
        self.long_bps / (self.short_bps + self.long_bps)
    }
}

fn cubic_pair(
    rate_bps: u64,
    access_bps: u64,
    queue: QueueSpec,
    secs: u64,
    mode: &KMode,
    phases: &[f64],
) -> Fairness {
    let pkt_ns = PACKET_BYTES * 8.0 / rate_bps as f64 * 1e9;
    let one_phase = |frac: f64| {
        // The long path's RTT grows by `frac` packet times (half on each direction).
        let long_rtt = LONG_RTT_MS + frac * pkt_ns / 1e6;
        let flows = vec![
            gbe_window(with_params(Flow::bulk(0, 0, 3, "cubic"), &mode.params)),
            gbe_window(with_params(Flow::bulk(1, 1, 3, "cubic"), &mode.params)),
        ];
        let o = run(&two_rtt_dumbbell(
            rate_bps,
            access_bps,
            [SHORT_RTT_MS, long_rtt],
            queue,
            secs,
            flows,
        ));
        let g = |f| goodput_between(&o, 0.1, f, FAIRNESS_FROM_S, secs as f64);
        (g(0), g(1))
    };
    // The phases are independent runs: one thread each, so the seconds-long runs at 1 Gbit/s
    // use both of CI's cores (cargo test runs the test binaries one after the other); each run
    // is deterministic, so the result is the same as one after the other.
    let one_phase = &one_phase;
    let per_phase: Vec<(f64, f64)> = std::thread::scope(|s| {
        let handles: Vec<_> = phases
            .iter()
            .map(|&frac| s.spawn(move || one_phase(frac)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let n = per_phase.len() as f64;
    Fairness {
        short_bps: per_phase.iter().map(|p| p.0).sum::<f64>() / n,
        long_bps: per_phase.iter().map(|p| p.1).sum::<f64>() / n,
        per_phase,
    }
}

fn describe(label: &str, f: &Fairness) -> String {
    let phases: Vec<String> = f
        .per_phase
        .iter()
        .map(|(s, l)| format!("{:.0}/{:.0}", s / 1e6, l / 1e6))
        .collect();
    format!(
        "{label}: 2 ms {:.1}, 128 ms {:.1} Mbit/s, Jain {:.3}, long share {:.2} (per phase {})",
        f.short_bps / 1e6,
        f.long_bps / 1e6,
        f.jain(),
        f.long_share(),
        phases.join(" ")
    )
}

#[test]
fn stock_cubic_favours_the_short_rtt_flow_and_cbrt_rtt_k_raises_the_long_flows_share() {
    // Study 004, 1 vs 1, 2 ms vs 128 ms RTT on the paper's GbE, for 60 s. The paper gives no
    // queue size; we use 1 BDP of the long path (satcc's "1 BDP": rate × largest base RTT
    // ≈ 10 667 packets), the size at which the outcome no longer depends on the phase or
    // the run length. ALGORITHMS.md reports the other sizes: at dummynet's default 50 slots
    // the long flow starves under every k_mode; scaled down to 100 Mbit/s stock CUBIC
    // converges to near fairness within minutes (CUBIC's C is in packets/s³, so its dynamics
    // do not scale with the rate), which is why this check runs at the paper's rate.
    const RATE_BPS: u64 = 1_000_000_000;
    const SECS: u64 = 60;
    // Two phases are enough at this buffer (three gave the same split to 2 %).
    const PHASES: [f64; 2] = [PHASE_FRACTIONS[0], PHASE_FRACTIONS[2]];
    // Jain's index below which the split counts as unfair (0.9: one flow of two gets twice the
    // other's share).
    const UNFAIR_JAIN: f64 = 0.9;
    // The long flow's share must grow by more than the scatter of a two-phase mean (single
    // phases differ by up to ~0.1 in share under cbrt_rtt, i.e. ±0.05 around their mean).
    const MIN_SHARE_GAIN: f64 = 0.05;
    let queue = QueueSpec::Bdp(1.0);
    let stock = cubic_pair(RATE_BPS, ACCESS_BPS, queue, SECS, &KMode::stock(), &PHASES);
    eprintln!("{}", describe("stock", &stock));
    let cbrt = cubic_pair(
        RATE_BPS,
        ACCESS_BPS,
        queue,
        SECS,
        &KMode::cbrt_rtt(),
        &PHASES,
    );
    eprintln!("{}", describe("cbrt_rtt", &cbrt));

    let capacity = RATE_BPS as f64 * PAYLOAD_SHARE;
    for (name, f) in [("stock", &stock), ("cbrt_rtt", &cbrt)] {
        let total = f.short_bps + f.long_bps;
        assert!(
            total >= 0.9 * capacity,
            "{name}: the two flows use {:.1} of {:.1} Mbit/s",
            total / 1e6,
            capacity / 1e6
        );
    }
    assert!(
        stock.jain() < UNFAIR_JAIN,
        "stock CUBIC: Jain {:.3}",
        stock.jain()
    );
    assert!(
        stock.short_bps > stock.long_bps,
        "stock CUBIC: the short-RTT flow must win (study 004 Fig. 5)"
    );
    assert!(
        cbrt.long_share() >= stock.long_share() + MIN_SHARE_GAIN,
        "cbrt_rtt: long-RTT share {:.3} vs stock {:.3}",
        cbrt.long_share(),
        stock.long_share()
    );
    assert!(
        cbrt.jain() > stock.jain(),
        "cbrt_rtt: Jain {:.3} vs stock {:.3}",
        cbrt.jain(),
        stock.jain()
    );
}

#[test]
#[ignore = "sweep behind ALGORITHMS.md's CUBIC fairness table, ~5 min; run with --ignored --nocapture"]
fn cubic_rtt_fairness_sweep_over_buffers_rates_and_k_modes() {
    let modes = [
        KMode::stock(),
        KMode::cbrt_rtt(),
        KMode::scaled(0.5),
        KMode::scaled(1.0),
        KMode::scaled(2.0),
    ];
    // 100 Mbit/s with all five phases for 120 s; 1 Gbit/s (the paper's) with three for 60 s.
    for (rate_bps, secs, phases) in [
        (100_000_000u64, 120u64, &PHASE_FRACTIONS[..]),
        (1_000_000_000, 60, &[0.0, 0.342, 0.608][..]),
    ] {
        let capacity = rate_bps as f64 * PAYLOAD_SHARE;
        for queue in [
            QueueSpec::Packets(50),
            QueueSpec::Packets(100),
            QueueSpec::Packets(1000),
            QueueSpec::Packets(2000),
            QueueSpec::Bdp(1.0),
        ] {
            let mut results: Vec<(String, Fairness)> = Vec::new();
            for mode in &modes {
                let f = cubic_pair(rate_bps, ACCESS_BPS, queue, secs, mode, phases);
                eprintln!(
                    "{} Mbit/s, queue {queue:?}: {}",
                    rate_bps / 1_000_000,
                    describe(&mode.label, &f)
                );
                // Whatever the split, tail-drop CUBIC keeps the bottleneck busy.
                assert!(
                    f.short_bps + f.long_bps >= 0.9 * capacity,
                    "{queue:?} {}: link under-used",
                    mode.label
                );
                results.push((mode.label.clone(), f));
            }
            // Eq. 7 with a = 1 is eq. 6: identical runs.
            let cbrt = &results[1].1;
            let scaled1 = &results[3].1;
            assert_eq!(
                cbrt.per_phase, scaled1.per_phase,
                "scaled a=1 must equal cbrt_rtt"
            );
        }
    }
}

#[test]
#[ignore = "diagnostic of a simulator limitation (no timing jitter), ~20 s; run with --ignored --nocapture"]
fn equal_rate_access_links_phase_lock_cubic_fairness() {
    // GbE senders into a GbE bottleneck, as scenarios/cubic-rtt-fairness.toml builds it:
    // every packet reaches the queue exactly one bottleneck packet time after the previous
    // one of its flow, and with a full queue exactly one slot frees per packet time. Which
    // flow takes the slot is fixed by the arrival phases — and for 2 ms and 128 ms both
    // one-way delays are ≡ 4 µs mod 12 µs, so exact ties are broken by event order (the
    // arrival scheduled first, i.e. the longer path's, wins). Shifting the long path by a
    // few µs moves the whole outcome from one flow to the other.
    // Offsets of the long path's RTT.
    let offsets_us = [0.0, 1.0, 3.0, 6.0, 9.0];
    let pkt_us = PACKET_BYTES * 8.0 / 1e9 * 1e6;
    let phases: Vec<f64> = offsets_us.iter().map(|us| us / pkt_us).collect();
    let f = cubic_pair(
        1_000_000_000,
        1_000_000_000,
        QueueSpec::Packets(1000),
        60,
        &KMode::stock(),
        &phases,
    );
    eprintln!(
        "{}",
        describe("GbE access, 1000 pkt, stock, RTT + 0/1/3/6/9 µs", &f)
    );
    let shares: Vec<f64> = f.per_phase.iter().map(|(s, l)| l / (s + l)).collect();
    let spread = quantile(&shares, 1.0) - quantile(&shares, 0.0);
    assert!(
        spread > 0.5,
        "long-flow shares {shares:?}: the phase no longer decides the winner (jitter added?)"
    );
}

#[test]
#[ignore = "diagnostic: where the CUBIC split settles in 600 s runs, ~2 min; run with --ignored --nocapture"]
fn cubic_rtt_fairness_over_ten_minutes() {
    // Goodput per minute of the 2 ms / 128 ms pair, 1 BDP buffer, phase 0: shows how much of
    // a 60 s split is start-up transient, at the paper's rate and scaled down.
    const SECS: u64 = 600;
    const WINDOW_S: f64 = 60.0;
    for rate_bps in [100_000_000u64, 1_000_000_000] {
        for mode in [KMode::stock(), KMode::cbrt_rtt()] {
            let flows = vec![
                gbe_window(with_params(Flow::bulk(0, 0, 3, "cubic"), &mode.params)),
                gbe_window(with_params(Flow::bulk(1, 1, 3, "cubic"), &mode.params)),
            ];
            let o = run(&two_rtt_dumbbell(
                rate_bps,
                ACCESS_BPS,
                [SHORT_RTT_MS, LONG_RTT_MS],
                QueueSpec::Bdp(1.0),
                SECS,
                flows,
            ));
            let mut minutes = Vec::new();
            let mut t = 0.0;
            while t < SECS as f64 - 1e-9 {
                let g = [
                    goodput_between(&o, 0.1, 0, t, t + WINDOW_S),
                    goodput_between(&o, 0.1, 1, t, t + WINDOW_S),
                ];
                assert!(
                    g[0] + g[1] >= 0.9 * rate_bps as f64 * PAYLOAD_SHARE,
                    "{} at {t} s: link under-used",
                    mode.label
                );
                minutes.push(format!(
                    "{:.0}/{:.0} ({:.2})",
                    g[0] / 1e6,
                    g[1] / 1e6,
                    jain(&g)
                ));
                t += WINDOW_S;
            }
            eprintln!(
                "{} Mbit/s {}: per minute 2 ms/128 ms Mbit/s (Jain): {}",
                rate_bps / 1_000_000,
                mode.label,
                minutes.join(" ")
            );
        }
    }
}
