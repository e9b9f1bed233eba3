//! A scenario built in code (tests, benchmarks, the fuzzer, the drill endpoint): the
//! scenario's defaults, written once on the Rust side, and constructors that fill them. What
//! is built goes through [`super::resolve`] like a scenario read from TOML, so the resolver is
//! the one checker whatever the source.
//!
//! The defaults are declared here once; the TOML schema (`python/satcc/scenario/schema.py`)
//! reads them through the bindings (`_native.scenario_defaults()`) to fill a scenario file's
//! missing keys: `rwnd` 6 MiB (`net.ipv4.tcp_rmem[2]`), MSS 1448, IW 10, min RTO 200 ms,
//! 100 ms bins, seed 1, 1000-packet queues.

use serde_json::{Map, Value};

use super::{Flow, Link, Pacing, Resolved, Scenario, DEFAULT_MTU};
use crate::dirspec::{Direction, QueueSpec};

/// Payload bytes per segment: 1500 B MTU - 20 IP - 20 TCP - 12 timestamp option.
pub const DEFAULT_MSS: u32 = 1448;
/// The receive buffer's ceiling, `net.ipv4.tcp_rmem[2]` = 6291456.
pub const DEFAULT_RWND_BYTES: u64 = 6 << 20;
/// RFC 6928; Linux `TCP_INIT_CWND`.
pub const DEFAULT_INITIAL_CWND: u32 = 10;
/// Linux `TCP_RTO_MIN` (HZ / 5).
pub const DEFAULT_MIN_RTO_NS: u64 = 200_000_000;
/// DESIGN.md: time series in 0.1 s bins.
pub const DEFAULT_BIN_NS: u64 = 100_000_000;
pub const DEFAULT_SEED: u64 = 1;
/// Linux's default `txqueuelen` of an Ethernet device.
pub const DEFAULT_QUEUE: QueueSpec = QueueSpec::Packets(1000);

impl Flow {
    /// A bulk TCP flow from node `src` to node `dst` with the scenario's defaults (CUBIC's
    /// neighbours: SACK, timestamps, window scaling, autotuning, delayed ACKs, pacing as Linux
    /// without fq), starting at 0.
    pub fn bulk(id: u32, src: usize, dst: usize, cca: &str) -> Flow {
        flow_switches!(switch_fields!(defaults Flow {
            id,
            src,
            dst,
            cca: cca.to_string(),
            cc: None,
            start_ns: 0,
            size_bytes: None,
            mss: DEFAULT_MSS,
            rwnd_bytes: DEFAULT_RWND_BYTES,
            initial_cwnd: DEFAULT_INITIAL_CWND,
            pacing: Pacing::Auto,
            sndbuf_bytes: None,
            proto: None,
            udp_rate_bps: None,
            udp_payload_bytes: None,
            encap_bytes: 0,
            mtu: DEFAULT_MTU,
            app: None,
            cwnd_clamp: None,
        }))
    }

    /// Set one entry of the flow's `cc` table (the algorithm's registry checks it when the
    /// flow's algorithm is built).
    pub fn set_cc(&mut self, key: &str, value: impl Into<Value>) {
        self.cc
            .get_or_insert_with(Map::new)
            .insert(key.to_string(), value.into());
    }
}

impl Direction {
    /// A constant direction: `rate_bps`, one-way `delay_ns`, random `loss`, a drop-tail
    /// `queue`; no ECN marking, jitter, scripted drops, tick service or model.
    pub fn new(rate_bps: u64, delay_ns: u64, loss: f64, queue: QueueSpec) -> Direction {
        link_keys!(link_fields!(defaults Direction {
            rate_bps,
            delay_ns,
            loss,
            queue,
            drop_packets: None,
            tick_ns: None,
            model: None,
        }))
    }
}

impl Link {
    /// A link between nodes `a` and `b`, the same both ways.
    pub fn symmetric(a: usize, b: usize, d: Direction) -> Link {
        Link {
            a,
            b,
            ab: d.clone(),
            ba: d,
        }
    }
}

impl Scenario {
    /// A scenario of `nodes`, `links` and `flows` running `duration_ns`, with the default
    /// seed and bins, no host noise and no traces.
    pub fn new(
        name: &str,
        nodes: &[&str],
        links: Vec<Link>,
        flows: Vec<Flow>,
        duration_ns: u64,
    ) -> Scenario {
        scenario_switches!(switch_fields!(defaults Scenario {
            name: name.to_string(),
            seed: DEFAULT_SEED,
            duration_ns,
            bin_ns: DEFAULT_BIN_NS,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            links,
            flows,
            host_noise_quantiles_ns: None,
            seqack: None,
            capture: Vec::new(),
        }))
    }

    /// [`super::resolve`] on a copy: the checks and routes every engine runs on.
    pub fn resolve(&self) -> Result<Resolved, String> {
        super::resolve(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_scenario_resolves_and_reads_back_from_its_wire_form() {
        let d = Direction::new(10_000_000, 5_000_000, 0.0, QueueSpec::Bdp(1.0));
        let mut f = Flow::bulk(0, 0, 1, "cubic");
        f.set_cc("beta", 0.7);
        let s = Scenario::new("t", &["a", "b"], vec![Link::symmetric(0, 1, d)], vec![f], 1);
        let r = s.resolve().unwrap();
        // 1 BDP: 10 Mbit/s x 10 ms
        assert_eq!(r.queue(0), crate::dirspec::QueueSpec::Bytes(12_500));
        let wire = serde_json::to_value(&r).unwrap();
        assert_eq!(wire["flows"][0]["rwnd_bytes"], 6_291_456);
        assert_eq!(wire["flows"][0]["cc"]["beta"], 0.7);
        assert_eq!(Resolved::from_json(&wire).unwrap(), r);
    }
}
