//! Shared builders for the simulator's scenario-level tests.
#![allow(dead_code)]

use satcc_core::SimDuration;
use satcc_sim::{DirConfig, FlowConfig, LinkConfig, QueueSpec, SimConfig, SimOutput};

pub fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// sender —(fast access)— router —(bottleneck)— receiver, both ways symmetric.
pub fn dumbbell(
    rate_bps: u64,
    one_way_ms: u64,
    loss: f64,
    queue: QueueSpec,
    secs: u64,
    flows: Vec<FlowConfig>,
) -> SimConfig {
    let access = DirConfig::new(
        10_000_000_000,
        SimDuration::from_micros(100),
        0.0,
        QueueSpec::Packets(100_000),
    );
    let mut fwd = DirConfig::new(rate_bps, ms(one_way_ms), loss, queue);
    fwd.loss = loss;
    let rev = DirConfig::new(rate_bps, ms(one_way_ms), 0.0, queue);
    SimConfig {
        name: "test".into(),
        seed: 1,
        duration: SimDuration::from_secs(secs),
        bin: ms(100),
        nodes: vec!["s".into(), "r".into(), "d".into()],
        links: vec![
            LinkConfig {
                a: 0,
                b: 1,
                ab: access.clone(),
                ba: access,
            },
            LinkConfig {
                a: 1,
                b: 2,
                ab: fwd,
                ba: rev,
            },
        ],
        flows,
        host_noise: None,
    }
}

pub fn run(cfg: &SimConfig) -> SimOutput {
    satcc_sim::run(cfg, &mut |_| true).expect("valid config")
}
