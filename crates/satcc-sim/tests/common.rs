//! Shared builders for the simulator's scenario-level tests: scenarios built in code
//! (`satcc_core::scenario`'s constructors, the scenario's own defaults) and run as every
//! scenario runs, through the resolver.
#![allow(dead_code)]

use satcc_cc::params::ParamValue;
use satcc_core::dirspec::{Direction, QueueSpec};
pub use satcc_core::scenario::Flow;
use satcc_core::scenario::{Link, Resolved, Scenario};
use satcc_core::SimDuration;
use satcc_sim::SimOutput;

pub fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// sender —(fast access)— router —(bottleneck)— receiver, both ways symmetric but for the
/// loss (a→b only).
pub fn dumbbell(
    rate_bps: u64,
    one_way_ms: u64,
    loss: f64,
    queue: QueueSpec,
    secs: u64,
    flows: Vec<Flow>,
) -> Scenario {
    let access = Direction::new(10_000_000_000, 100_000, 0.0, QueueSpec::Packets(100_000));
    let one_way = ms(one_way_ms).as_nanos();
    let fwd = Direction::new(rate_bps, one_way, loss, queue);
    let rev = Direction::new(rate_bps, one_way, 0.0, queue);
    let links = vec![
        Link::symmetric(0, 1, access),
        Link {
            a: 1,
            b: 2,
            ab: fwd,
            ba: rev,
        },
    ];
    let duration = SimDuration::from_secs(secs).as_nanos();
    Scenario::new("test", &["s", "r", "d"], links, flows, duration)
}

/// One entry of a flow's `cc` table, as the scenario writes it.
pub fn set_param(f: &mut Flow, key: &str, v: &ParamValue) {
    let json = match v {
        ParamValue::Num(x) => serde_json::Value::from(*x),
        ParamValue::Bool(b) => serde_json::Value::from(*b),
        ParamValue::Str(s) => serde_json::Value::from(s.as_str()),
        ParamValue::Points(p) => p.iter().map(|&(x, y)| serde_json::json!([x, y])).collect(),
    };
    f.set_cc(key, json);
}

/// The scenario resolved (the resolver's `key: message` if it refuses it).
pub fn resolved(s: &Scenario) -> Resolved {
    s.resolve().unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(s: &Scenario) -> SimOutput {
    satcc_sim::run(&resolved(s), &mut |_| true).expect("valid scenario")
}
