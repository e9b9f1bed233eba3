//! Path-level checks of single algorithms on the simulator's own sender (a one-flow
//! dumbbell, tests/common.rs), moved here from satcc-cc's unit tests, which ran them on the
//! test kit's fake sender. Each bound is the one those tests had, derived from the path.

mod common;

use common::*;
use satcc_cc::params::ParamValue;
use satcc_cc::INFINITE_SSTHRESH;
use satcc_sim::{FlowConfig, QueueConfig};

/// Bottleneck rate carrying `pps` full 1448-byte segments a second (1500 bytes on the wire:
/// 1448 + 20 IP + 32 TCP with timestamps).
fn rate_bps(pps: u64) -> u64 {
    pps * 1500 * 8
}

fn flow(cca: &str, params: &[(&str, ParamValue)]) -> FlowConfig {
    let mut f = FlowConfig::bulk(0, 0, 2, cca);
    for (k, v) in params {
        f.params.insert(k, v.clone());
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
        QueueConfig::Packets(2000),
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
        QueueConfig::Packets(1000),
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
