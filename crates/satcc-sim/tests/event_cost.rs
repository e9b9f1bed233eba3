//! What keeps the simulator fast, checked by counting rather than timing: events per data
//! segment on the reference case (1 Reno flow, 100 Mbit/s, 50 ms, 1-BDP drop-tail) and the
//! number of pending events on a long, fat path, which must not grow with the packets in flight.

mod common;

use common::{dumbbell, run, Flow};
use satcc_core::scenario::Scenario;
use satcc_sim::QueueSpec;

fn data_segments(out: &satcc_sim::SimOutput) -> u64 {
    out.flows.iter().map(|f| f.sent_packets).sum()
}

/// bench/sim's reference case (`bench_sim --cca reno --rate-bps 100000000 --group 50:1
/// --queue-bytes 625000`): a 10 Gbit/s access link carrying all but 0.5 ms of the 25 ms
/// one-way delay, the bottleneck 0.5 ms.
fn reference_case(secs: u64) -> Scenario {
    let mut cfg = dumbbell(
        100_000_000,
        0,
        0.0,
        QueueSpec::Bytes(625_000),
        secs,
        vec![Flow::bulk(0, 0, 2, "reno")],
    );
    for (link, us) in cfg.links.iter_mut().zip([24_500, 500]) {
        link.ab.delay_ns = us * 1000;
        link.ba.delay_ns = us * 1000;
    }
    cfg
}

#[test]
fn the_reference_case_costs_three_events_per_data_segment() {
    // One arrival per hop for each data segment and each ACK (two hops, one ACK per two
    // segments) = 3.0, htsim's count; a serialiser has no events while its wire carries
    // packets; timers and samples add ~0.01. Before: 6.07 (an event at every end of
    // transmission too). Measured on the sender without the deferral, whose ACKs are one per
    // two segments: the deferring sender (the default) marks each GSO packet's last segment
    // PSH and the receiver acknowledges it when read, ~0.55 ACK a segment: 3.09 (2026-11-30).
    let mut cfg = reference_case(10);
    cfg.flows[0].tso_defer = false;
    let out = run(&cfg);
    let per_segment = out.events as f64 / data_segments(&out) as f64;
    assert!(
        per_segment <= 3.05,
        "{per_segment:.3} events per data segment"
    );
    let out = run(&reference_case(10));
    let per_segment = out.events as f64 / data_segments(&out) as f64;
    assert!(
        per_segment <= 3.12,
        "{per_segment:.3} events per data segment, deferring sender"
    );
}

#[test]
fn a_wire_that_empties_between_packets_adds_one_wake_up_per_packet() {
    // The access link's 100 µs is shorter than the 120 µs between segments at 100 Mbit/s:
    // its wire empties after every packet, so each needs a wake-up at the end of its
    // transmission (one event more per data segment and per ACK on that hop). The sender
    // without the deferral, whose segments leave one per ACK-clocked slot: the deferring
    // sender's GSO packets leave back to back at the access rate and keep the wire busy
    // (3.77 events a segment, 2026-11-30).
    let mut cfg = dumbbell(
        100_000_000,
        25,
        0.0,
        QueueSpec::Bytes(625_000),
        10,
        vec![Flow::bulk(0, 0, 2, "reno")],
    );
    cfg.flows[0].tso_defer = false;
    let out = run(&cfg);
    let per_segment = out.events as f64 / data_segments(&out) as f64;
    assert!(
        (4.0..=4.6).contains(&per_segment),
        "{per_segment:.3} events per data segment"
    );
}

#[test]
fn pending_events_do_not_grow_with_the_bandwidth_delay_product() {
    // 1 Gbit/s over a 600 ms GEO round trip: ~50,000 packets in flight at full rate. A FIFO
    // wire keeps one event for its head, so the heap holds per-direction, per-flow and timer
    // events only.
    for (rate_bps, one_way_ms) in [(20_000_000, 10), (1_000_000_000, 300)] {
        let mut f = Flow::bulk(0, 0, 2, "cubic");
        // a 32 MiB receive buffer (Linux 6.16+'s tcp_rmem[2], not the scenario's 6 MiB):
        // ~22,000 packets in flight at 1 Gbit/s
        f.rwnd_bytes = 32 << 20;
        let cfg = dumbbell(rate_bps, one_way_ms, 0.0, QueueSpec::Bdp(1.0), 20, vec![f]);
        let out = run(&cfg);
        // thousands of packets in flight on average at 1 Gbit/s (goodput x RTT / 1500 B)
        let in_flight = out.flows[0].goodput_bps * 2.0 * one_way_ms as f64 / 1e3 / 8.0 / 1500.0;
        assert!(
            in_flight > 1000.0 * (rate_bps / 1_000_000_000) as f64,
            "{in_flight:.0} in flight"
        );
        assert!(
            out.peak_pending_events <= 16,
            "{} events pending at once at {rate_bps} bit/s, {one_way_ms} ms one way",
            out.peak_pending_events
        );
    }
}
