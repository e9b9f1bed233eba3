//! Path-level checks of single algorithms on the simulator's own sender (a one-flow
//! dumbbell, tests/common.rs), moved here from satcc-cc's unit tests, which ran them on the
//! test kit's fake sender. Each bound is the one those tests had, derived from the path.

mod common;
#[path = "support/scripted_peer.rs"]
mod scripted_peer;

use common::*;
use satcc_cc::params::ParamValue;
use satcc_cc::INFINITE_SSTHRESH;
use satcc_core::SimDuration;
use satcc_sim::QueueSpec;
use scripted_peer::{Ev, Peer};

/// Bottleneck rate carrying `pps` full 1448-byte segments a second (1500 bytes on the wire:
/// 1448 + 20 IP + 32 TCP with timestamps).
fn rate_bps(pps: u64) -> u64 {
    pps * 1500 * 8
}

fn flow(cca: &str, params: &[(&str, ParamValue)]) -> Flow {
    let mut f = Flow::bulk(0, 0, 2, cca);
    for (k, v) in params {
        set_param(&mut f, k, v);
    }
    f
}

/// (ssthresh of the first bin that has one: the cwnd HyStart left slow start at, queue drops).
fn hystart_run(params: &[(&str, ParamValue)]) -> (Option<u32>, u64) {
    // 1000 packets/s, 100 ms RTT: a BDP of 100 packets, a 2000-packet buffer.
    let cfg = dumbbell(
        rate_bps(1000),
        50,
        0.0,
        QueueSpec::Packets(2000),
        5,
        vec![flow("cubic", params)],
    );
    let o = run(&cfg);
    let exit = o
        .flow_series
        .ssthresh_pkts
        .iter()
        .copied()
        .find(|&s| s < INFINITE_SSTHRESH);
    (exit, o.link_series.drops_queue.iter().sum())
}

#[test]
fn cubic_hystart_exits_slow_start_before_any_loss_on_a_deep_buffer() {
    let (exit, drops) = hystart_run(&[("hystart_detect", ParamValue::Str("delay".into()))]);
    let exit = exit.expect("HyStart exited slow start");
    // BDP is 100 packets; the delay signal fires ~12.5 ms of queue past it (bins of 100 ms
    // sample ssthresh after the exit, which HyStart sets to the cwnd it left at).
    assert!((80..=250).contains(&exit), "exit cwnd {exit}");
    assert_eq!(drops, 0);
    let (_, drops) = hystart_run(&[("hystart", ParamValue::Bool(false))]);
    assert!(
        drops > 0,
        "without HyStart slow start runs into the 2000-packet buffer"
    );
}

#[test]
fn bbr3_finds_the_rate_of_a_fixed_bottleneck_and_keeps_the_queue_small() {
    // 1000 packets/s, 50 ms base RTT, a 1000-packet buffer (10 BDPs).
    let cfg = dumbbell(
        rate_bps(1000),
        25,
        0.0,
        QueueSpec::Packets(1000),
        12,
        vec![flow("bbr3", &[])],
    );
    let o = run(&cfg);
    let s = &o.flow_series;
    let bins: Vec<usize> = (0..s.t_s.len()).filter(|&k| s.t_s[k] >= 4.0).collect();
    let delivered: u64 = bins.iter().map(|&k| s.delivered_bytes[k]).sum();
    let pps = delivered as f64 / 1448.0 / (bins.len() as f64 * 0.1);
    assert!(pps > 900.0, "goodput {pps} pkt/s of 1000");
    let last = *bins.last().expect("bins after 4 s");
    assert!(
        s.srtt_ms[last] < 80.0,
        "srtt {} ms on a 50 ms path",
        s.srtt_ms[last]
    );
}

/// The bottleneck's forward queue (link 1, "ab") sampled at the end of each bin from `from_s`.
fn bottleneck_queue(o: &satcc_sim::SimOutput, from_s: f64) -> Vec<f64> {
    let l = &o.link_series;
    (0..l.t_s.len())
        .filter(|&k| l.link_id[k] == 1 && l.dir[k] == "ab" && l.t_s[k] >= from_s)
        .map(|k| l.queue_pkts[k] as f64)
        .collect()
}

/// Segments a second delivered to flow 0 in bins from `from_s` on.
fn goodput_pps(o: &satcc_sim::SimOutput, from_s: f64) -> f64 {
    let s = &o.flow_series;
    let bins: Vec<usize> = (0..s.t_s.len()).filter(|&k| s.t_s[k] >= from_s).collect();
    let bytes: u64 = bins.iter().map(|&k| s.delivered_bytes[k]).sum();
    bytes as f64 / 1448.0 / (bins.len() as f64 * 0.1)
}

#[test]
fn vegas_queues_a_few_packets_without_loss_on_a_deep_buffer() {
    // 1000 pkt/s, 100 ms: BDP 100 packets; a buffer far larger than alpha..beta. Slow start
    // overshoots (its exit uses the previous round's minimum RTT) and avoidance drains one
    // packet per RTT: steady state after ~60 s.
    let cfg = dumbbell(
        rate_bps(1000),
        50,
        0.0,
        QueueSpec::Packets(500),
        110,
        vec![flow("vegas", &[])],
    );
    let o = run(&cfg);
    let drops: u64 = o.link_series.drops_queue.iter().sum();
    assert_eq!(drops, 0);
    let rate = goodput_pps(&o, 90.0);
    assert!(rate > 990.0, "delivery rate {rate}");
    let q = bottleneck_queue(&o, 90.0);
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    let max = q.iter().copied().fold(0.0, f64::max);
    let (alpha, beta) = (2.0, 4.0); // tcp_vegas.c's defaults
    assert!(mean >= alpha - 1.0 && mean <= beta + 2.0, "queue {mean}");
    assert!(max < 20.0, "max queue {max}");
}

#[test]
fn yeah_with_a_large_bdp_stays_fast_and_keeps_the_queue_near_alpha() {
    // BDP 1000 packets: the delay threshold baseRTT/phy is 125 packets of queue, above
    // alpha (80), so decongestion (not the delay test) governs. A 32 MiB receive buffer
    // (Linux 6.16+'s tcp_rmem[2]; the scenario's 6 MiB opens ~2,700 segments, within reach
    // of this path's BDP plus buffer).
    let mut f = flow("yeah", &[]);
    f.rwnd_bytes = 32 << 20;
    let mut cfg = dumbbell(
        rate_bps(10_000),
        50,
        0.0,
        QueueSpec::Packets(3000),
        60,
        vec![f],
    );
    cfg.cc_state = true;
    let o = run(&cfg);
    let rate = goodput_pps(&o, 20.0);
    assert!(rate > 9900.0, "rate {rate}");
    let l = &o.link_series;
    let late_drops: u64 = (0..l.t_s.len())
        .filter(|&k| l.t_s[k] >= 20.0)
        .map(|k| l.drops_queue[k])
        .sum();
    assert_eq!(late_drops, 0, "no loss in steady state");
    let max = bottleneck_queue(&o, 20.0).into_iter().fold(0.0, f64::max);
    assert!(max < 2.0 * 80.0, "max queue {max}");
    // The mode once per bin (one RTT): fast (Scalable) in more than 80 % of them.
    let cc = o.cc_series.as_ref().expect("cc state recorded");
    let modes: Vec<f64> = (0..cc.t_s.len())
        .filter(|&k| cc.t_s[k] >= 20.0 && cc.name[k] == "doing_reno_now")
        .map(|k| cc.value[k])
        .collect();
    let fast = modes.iter().filter(|&&v| v == 0.0).count();
    assert!(
        fast * 10 > modes.len() * 8,
        "fast in {fast} of {} rounds",
        modes.len()
    );
}

#[test]
fn cubic_hystart_ack_train_exits_when_a_closely_spaced_train_outlasts_half_the_min_rtt() {
    // 64 segments sent at once on a 40 ms path; the first ACK starts the round, then 40 ACKs
    // `spacing_ms` apart: a train of ACKs at most 2 ms apart lasting delay_min / 2 = 20 ms
    // ends slow start (tcp_cubic.c `hystart_update`, HYSTART_ACK_TRAIN).
    let train = |spacing_ms: u32| {
        let p = satcc_cc::Params::new().with("hystart_detect", ParamValue::Str("ack_train".into()));
        let mut peer = Peer::connect("cubic", &p, 1448, 64, SimDuration::from_millis(40), false);
        peer.play(Ev::Deliver {
            n: 1,
            gap_us: 40_000,
        });
        for _ in 0..40 {
            peer.play(Ev::Deliver {
                n: 1,
                gap_us: spacing_ms * 1000,
            });
        }
        peer.trace.last().expect("steps").ssthresh
    };
    assert!(
        train(1) < INFINITE_SSTHRESH,
        "1 ms spacing: a train longer than 20 ms"
    );
    assert_eq!(train(3), INFINITE_SSTHRESH, "3 ms spacing breaks the train");
}
