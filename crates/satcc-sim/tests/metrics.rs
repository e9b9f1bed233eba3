//! The metrics cache (study 003, Linux `tcp_no_metrics_save = 0`): a limited transfer stores
//! its ssthresh when fully acknowledged, and a later flow between the same nodes starts with it.

mod common;

use common::{dumbbell, run, Flow};
use satcc_sim::{QueueSpec, SimOutput};

const RATE_BPS: u64 = 10_000_000;
const ONE_WAY_MS: u64 = 20;
/// Well under the 34-packet BDP: the first transfer's slow start overflows it.
const SHALLOW_QUEUE: QueueSpec = QueueSpec::Packets(15);
const SIZE: u64 = 2_000_000;
const SECOND_START_S: u64 = 5;
/// What the series reports for TCP_INFINITE_SSTHRESH.
const INFINITE_IN_SERIES: u32 = i32::MAX as u32;

fn transfer(id: u32, start_s: u64, size: Option<u64>, metrics_save: bool) -> Flow {
    let mut f = Flow::bulk(id, 0, 2, "cubic");
    f.start_ns = start_s * 1_000_000_000;
    f.size_bytes = size;
    f.metrics_save = metrics_save;
    f
}

fn two_transfers(first_size: Option<u64>, save_first: bool, save_second: bool) -> SimOutput {
    let flows = vec![
        transfer(0, 0, first_size, save_first),
        transfer(1, SECOND_START_S, Some(SIZE), save_second),
    ];
    run(&dumbbell(
        RATE_BPS,
        ONE_WAY_MS,
        0.0,
        SHALLOW_QUEUE,
        8,
        flows,
    ))
}

/// (t_s, cwnd, ssthresh) of one flow, in time order.
fn series(out: &SimOutput, flow: u32) -> Vec<(f64, u32, u32)> {
    let s = &out.flow_series;
    (0..s.t_s.len())
        .filter(|&i| s.flow_id[i] == flow)
        .map(|i| (s.t_s[i], s.cwnd_pkts[i], s.ssthresh_pkts[i]))
        .collect()
}

/// The second flow's ssthresh in the first bin after it starts (the handshake is done by then).
fn second_initial_ssthresh(out: &SimOutput) -> u32 {
    series(out, 1)
        .into_iter()
        .find(|&(t, _, _)| t >= SECOND_START_S as f64)
        .expect("a bin after the start")
        .2
}

/// The first flow's state once it has completed: nothing changes it after the last ACK.
fn first_state_at_close(out: &SimOutput) -> (u32, u32) {
    let fct = out.flows[0].fct_s.expect("the first transfer completes");
    assert!(
        fct < SECOND_START_S as f64 - 1.0,
        "the first transfer must end before the second starts ({fct} s)"
    );
    let (_, cwnd, ssthresh) = *series(out, 0)
        .iter()
        .rev()
        .find(|&&(t, _, _)| t < SECOND_START_S as f64)
        .unwrap();
    (cwnd, ssthresh)
}

#[test]
fn a_second_transfer_starts_with_the_first_ones_cached_ssthresh() {
    let out = two_transfers(Some(SIZE), true, true);
    let (cwnd, ssthresh) = first_state_at_close(&out);
    assert!(
        ssthresh < INFINITE_IN_SERIES,
        "the first transfer must have left slow start"
    );
    assert!(
        cwnd >= ssthresh,
        "the first transfer ends in congestion avoidance ({cwnd} < {ssthresh})"
    );
    // tcp_update_metrics in congestion avoidance: max(cwnd / 2, ssthresh)
    let cached = (cwnd / 2).max(ssthresh);
    assert_eq!(second_initial_ssthresh(&out), cached);
}

#[test]
fn the_second_transfer_leaves_slow_start_at_the_cached_ssthresh() {
    let with = two_transfers(Some(SIZE), true, true);
    let without = two_transfers(Some(SIZE), false, false);
    let cached = second_initial_ssthresh(&with);
    // Before its first loss the cached flow's cwnd grows past ssthresh only linearly; the
    // uncached one slow-starts to the queue's limit. Compare the peak cwnd of the first
    // 300 ms (7 RTTs: 10 packets doubling would pass any cached value).
    let early = |out: &SimOutput| {
        series(out, 1)
            .into_iter()
            .filter(|&(t, _, _)| (SECOND_START_S as f64..SECOND_START_S as f64 + 0.3).contains(&t))
            .map(|(_, c, _)| c)
            .max()
            .unwrap()
    };
    let peak_with = early(&with);
    // Slow start would double cwnd each 40 ms RTT; congestion avoidance adds a few packets.
    assert!(
        peak_with < cached + cached / 2,
        "cached: cwnd {peak_with} ran past ssthresh {cached} in slow start"
    );
    eprintln!(
        "cached ssthresh {cached}; peak cwnd in 300 ms: {peak_with} cached, {} uncached",
        early(&without)
    );
    assert!(
        early(&without) > peak_with,
        "uncached {} vs cached {peak_with}",
        early(&without)
    );
}

#[test]
fn without_metrics_save_the_second_transfer_starts_with_infinite_ssthresh() {
    for (a, b) in [(false, false), (true, false), (false, true)] {
        let out = two_transfers(Some(SIZE), a, b);
        assert_eq!(
            second_initial_ssthresh(&out),
            INFINITE_IN_SERIES,
            "metrics_save {a}, {b}"
        );
    }
}

#[test]
fn bulk_flows_never_write_the_cache() {
    let out = two_transfers(None, true, true);
    assert!(
        series(&out, 0)
            .iter()
            .any(|&(_, _, s)| s < INFINITE_IN_SERIES),
        "the bulk flow must leave slow start"
    );
    assert_eq!(second_initial_ssthresh(&out), INFINITE_IN_SERIES);
}

#[test]
fn the_cache_is_per_destination() {
    // The second transfer goes to the router instead of the receiver: whether the first one
    // saved its metrics must not change it at all.
    let second_to_router = |save_first: bool| {
        let mut second = transfer(1, SECOND_START_S, Some(SIZE), true);
        second.dst = 1;
        let out = run(&dumbbell(
            RATE_BPS,
            ONE_WAY_MS,
            0.0,
            SHALLOW_QUEUE,
            8,
            vec![transfer(0, 0, Some(SIZE), save_first), second],
        ));
        series(&out, 1)
    };
    assert_eq!(second_to_router(true), second_to_router(false));
    // ... while to the receiver it does (the test above), so this is not vacuous.
    assert_ne!(
        series(&two_transfers(Some(SIZE), true, true), 1),
        series(&two_transfers(Some(SIZE), false, true), 1)
    );
}
