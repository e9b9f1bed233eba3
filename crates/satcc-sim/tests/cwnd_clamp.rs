//! A flow's `cwnd_clamp` caps the sender's window (Linux's `snd_cwnd_clamp`) even under an
//! algorithm that sets its own clamp at init (Hybla: 65535), with the receive window far above.

mod common;

use common::{dumbbell, run, Flow};
use satcc_sim::{QueueSpec, SimOutput};

const CLAMP: u32 = 40;

fn hybla(clamp: Option<u32>) -> SimOutput {
    let mut f = Flow::bulk(0, 0, 2, "hybla");
    f.rwnd_bytes = 8 << 20;
    f.rcvbuf_autotune = false;
    f.cwnd_clamp = clamp;
    // 50 Mbit/s, 300 ms RTT: a BDP of ~1300 packets, far above the clamp; no loss
    run(&dumbbell(
        50_000_000,
        150,
        0.0,
        QueueSpec::Packets(2000),
        10,
        vec![f],
    ))
}

fn max_cwnd(o: &SimOutput) -> u32 {
    o.flow_series.cwnd_pkts.iter().copied().max().unwrap_or(0)
}

#[test]
fn hybla_stops_at_the_flows_cwnd_clamp_and_grows_past_it_without() {
    let capped = hybla(Some(CLAMP));
    assert_eq!(
        max_cwnd(&capped),
        CLAMP,
        "cwnd reaches the clamp, never above"
    );
    assert!(
        max_cwnd(&hybla(None)) > 10 * CLAMP,
        "without it Hybla's slow start runs on"
    );
}
