//! Application traffic (the scenario's `flow.app`, world/app.rs): on/off sources and request writes run
//! through the sender's application writes; bulk flows are untouched.

mod common;

use common::{dumbbell, run, Flow};
use satcc_core::scenario::App;
use satcc_sim::{QueueSpec, SimOutput};

/// `x` ms in ns.
fn ms(x: u64) -> u64 {
    x * 1_000_000
}

const RATE_BPS: u64 = 20_000_000;
const ONE_WAY_MS: u64 = 25;
/// One BDP: what is queued when the source goes off drains within an RTT or two.
const QUEUE: QueueSpec = QueueSpec::Bdp(1.0);
const MSS: u64 = 1448;

fn one_flow(app: App, secs: u64) -> SimOutput {
    let mut f = Flow::bulk(0, 0, 2, "reno");
    f.app = Some(app);
    run(&dumbbell(RATE_BPS, ONE_WAY_MS, 0.0, QUEUE, secs, vec![f]))
}

/// Bytes delivered in the bins starting in [from_s, to_s).
fn delivered(out: &SimOutput, from_s: f64, to_s: f64) -> u64 {
    let s = &out.flow_series;
    (0..s.t_s.len())
        .filter(|&i| s.t_s[i] >= from_s - 1e-9 && s.t_s[i] < to_s - 1e-9)
        .map(|i| s.delivered_bytes[i])
        .sum()
}

#[test]
fn an_on_off_source_is_silent_while_off() {
    let out = one_flow(
        App::Onoff {
            on_ns: ms(500),
            off_ns: ms(1000),
        },
        3,
    );
    assert!(delivered(&out, 0.0, 0.5) > 0);
    assert_eq!(delivered(&out, 0.8, 1.5), 0, "off from 0.5 s to 1.5 s");
    assert!(delivered(&out, 1.5, 2.0) > 0, "on again at 1.5 s");
    assert_eq!(delivered(&out, 2.3, 3.0), 0, "off again at 2 s");
}

#[test]
fn requests_deliver_exactly_the_bytes_written() {
    let bytes = 50 * MSS;
    let out = one_flow(
        App::Requests {
            bytes,
            every_ns: None,
            at_ns: vec![ms(0), ms(700), ms(1400)],
        },
        3,
    );
    assert_eq!(out.flows[0].delivered_bytes, 3 * bytes);
    assert_eq!(delivered(&out, 0.0, 0.7), bytes);
    let periodic = one_flow(
        App::Requests {
            bytes,
            every_ns: Some(ms(1000)),
            at_ns: vec![],
        },
        3,
    );
    assert_eq!(
        periodic.flows[0].delivered_bytes,
        3 * bytes,
        "writes at 0, 1, 2 s"
    );
}

#[test]
fn writes_of_any_size_are_delivered_and_empty_ones_refused() {
    // 1000 B every 100 ms: short segments, each sent alone (Nagle holds a write only while
    // an earlier short segment is unacknowledged; the RTT is 50 ms).
    let out = one_flow(
        App::Requests {
            bytes: 1000,
            every_ns: Some(ms(100)),
            at_ns: vec![],
        },
        1,
    );
    assert_eq!(out.flows[0].delivered_bytes, 10 * 1000);
    let mut f = Flow::bulk(0, 0, 2, "reno");
    f.app = Some(App::Requests {
        bytes: 0,
        every_ns: Some(ms(100)),
        at_ns: vec![],
    });
    let cfg = dumbbell(RATE_BPS, ONE_WAY_MS, 0.0, QUEUE, 1, vec![f]);
    assert_eq!(
        cfg.resolve().unwrap_err(),
        "flow[0].app.bytes: expected > 0"
    );
}

#[test]
fn nagle_coalesces_writes_that_tcp_nodelay_sends_apart() {
    // 100 B every 5 ms over a 50 ms RTT for 1 s (200 writes): with Nagle about one short
    // segment per RTT, with TCP_NODELAY one per write while cwnd allows.
    let run_with = |nodelay: bool| {
        let mut f = Flow::bulk(0, 0, 2, "reno");
        f.nodelay = nodelay;
        f.app = Some(App::Requests {
            bytes: 100,
            every_ns: Some(ms(5)),
            at_ns: vec![],
        });
        run(&dumbbell(RATE_BPS, ONE_WAY_MS, 0.0, QUEUE, 1, vec![f]))
    };
    let (nagle, nodelay) = (run_with(false), run_with(true));
    // What Nagle holds at the end of the run is not delivered yet: at most about an RTT's
    // writes (10 of 200) fewer.
    let (a, b) = (
        nagle.flows[0].delivered_bytes,
        nodelay.flows[0].delivered_bytes,
    );
    assert!(a <= b && a + 1_100 >= b, "{a} {b}");
    assert!(
        nagle.flows[0].sent_packets <= 22,
        "{}",
        nagle.flows[0].sent_packets
    );
    assert!(
        nodelay.flows[0].sent_packets >= 150,
        "{}",
        nodelay.flows[0].sent_packets
    );
}
