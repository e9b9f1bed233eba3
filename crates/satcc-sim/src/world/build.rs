//! A configuration into a world: the flows' two ends, their algorithms and applications,
//! the network, the first events.

use satcc_core::record::{CcSeries, FlowSeries, LinkSeries};
use satcc_core::routing::Routing;
use satcc_core::SimTime;

use super::app::AppRun;
use super::frag::{Reassembly, FRAGMENT_UNIT};
use super::metrics::MetricsCache;
use super::{Ev, Flow, World, MAX_ENCAP_BYTES};
use crate::config::{AppConfig, ConfigError, Proto, SimConfig};
use crate::events::EventQueue;
use crate::net::Network;
use crate::packet::{PacketStore, IP_HEADER};
use crate::tcp::receiver::{EcnEcho, RcvBuf, Receiver};
use crate::tcp::sender::Sender;
use crate::trace::{SeqAckRecorder, SeqAckSpec};
use crate::udp::UdpFlow;

impl World {
    pub(super) fn build(cfg: &SimConfig, routing: Option<Routing>) -> Result<World, ConfigError> {
        if cfg.bin.is_zero() {
            return Err(ConfigError {
                key: "scenario.bin".into(),
                message: "must be > 0".into(),
            });
        }
        // Network::build resolves BDP queues along the flows' routes: their nodes must exist.
        for (i, f) in cfg.flows.iter().enumerate() {
            if f.src >= cfg.nodes.len() || f.dst >= cfg.nodes.len() {
                return Err(ConfigError {
                    key: format!("flow[{i}].from"),
                    message: "node index out of range".into(),
                });
            }
            // Packets carry the flow id and the loop indexes flows by it (found by the fuzzer).
            if f.id as usize != i {
                return Err(ConfigError {
                    key: format!("flow[{i}].id"),
                    message: format!("must be {i} (flows are numbered in order)"),
                });
            }
        }
        let net = Network::build(cfg, routing)?;
        let mut flows = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let key = |k: &str| format!("flow[{i}].{k}");
            if f.src >= cfg.nodes.len() || f.dst >= cfg.nodes.len() {
                return Err(ConfigError {
                    key: key("from"),
                    message: "node index out of range".into(),
                });
            }
            if f.src == f.dst {
                return Err(ConfigError {
                    key: key("to"),
                    message: "a flow needs two different nodes".into(),
                });
            }
            if !net.connected(f.src, f.dst) || !net.connected(f.dst, f.src) {
                return Err(ConfigError {
                    key: key("to"),
                    message: format!(
                        "no route between {} and {}",
                        cfg.nodes[f.src], cfg.nodes[f.dst]
                    ),
                });
            }
            if f.mtu < IP_HEADER + 2 * FRAGMENT_UNIT {
                return Err(ConfigError {
                    key: key("mtu"),
                    message: "must be at least 36 bytes".into(),
                });
            }
            if f.encap_bytes > MAX_ENCAP_BYTES {
                return Err(ConfigError {
                    key: key("encap"),
                    message: format!("must be at most {MAX_ENCAP_BYTES} bytes"),
                });
            }
            if f.mss == 0 || f.mss > 65_000 {
                return Err(ConfigError {
                    key: key("mss"),
                    message: "must be in 1..65000 bytes".into(),
                });
            }
            // Algorithms with randomness (BBR's gain-cycle phase) draw from the scenario's
            // seed and the flow's id unless the scenario pins `cc.seed`.
            let mut params = f.params.clone();
            let takes_seed = satcc_cc::registry::info(&f.cca)
                .is_some_and(|a| a.params.iter().any(|p| p.name == "seed"));
            if takes_seed && !params.contains("seed") {
                let seed =
                    satcc_core::Rng::derive(cfg.seed, 0xCC_0000 + f.id as u64).next_u64() >> 11;
                params.insert("seed", satcc_cc::params::ParamValue::Num(seed as f64));
            }
            let cc = satcc_cc::lookup(&f.cca, &params).map_err(|e| ConfigError {
                key: key("cc"),
                message: e.to_string(),
            })?;
            // `rwnd` is the receiver's tcp_rmem[2] (the autotuning ceiling), at least one segment.
            let rcvbuf = RcvBuf {
                max_bytes: f.rwnd_bytes.max(f.mss as u64),
                autotune: f.rcvbuf_autotune,
                window_scaling: f.window_scaling,
            };
            // DCTCP requires ECN: Linux negotiates it whenever the algorithm needs it
            // (`tcp_ca_needs_ecn`), whatever `ecn` says.
            let mut f = f.clone();
            if f.cca == "dctcp" {
                f.ecn = true;
            }
            let f = &f;
            let app = match (&f.app, f.proto) {
                (AppConfig::Bulk, _) | (_, Proto::Udp { .. }) => None,
                (app, Proto::Tcp) => {
                    let bad = |message: String| ConfigError {
                        key: key("app"),
                        message,
                    };
                    match app {
                        AppConfig::OnOff { on, off } if on.is_zero() || off.is_zero() => {
                            return Err(bad("on and off must be > 0".into()));
                        }
                        AppConfig::Periodic { every, .. } if every.is_zero() => {
                            return Err(bad("every must be > 0".into()));
                        }
                        AppConfig::Periodic { bytes, .. } | AppConfig::At { bytes, .. }
                            if *bytes == 0 || bytes % f.mss as u64 != 0 =>
                        {
                            return Err(bad(format!(
                                "writes must be a positive multiple of the mss ({} B)",
                                f.mss
                            )));
                        }
                        AppConfig::At { at, .. } if at.windows(2).any(|w| w[0] > w[1]) => {
                            return Err(bad("write times must be ascending".into()));
                        }
                        _ => {}
                    }
                    Some(Box::new(AppRun {
                        cfg: app.clone(),
                        step: 0,
                    }))
                }
            };
            // A request flow's sender starts with nothing to send (the receiver still counts
            // towards no size: the flow never completes).
            let sender_cfg;
            let scfg = match &f.app {
                AppConfig::Periodic { .. } | AppConfig::At { .. } if app.is_some() => {
                    sender_cfg = crate::config::FlowConfig {
                        size_bytes: Some(0),
                        ..f.clone()
                    };
                    &sender_cfg
                }
                _ => f,
            };
            let mut sender = Sender::new(scfg, f.dst as u32, cc);
            if app.is_some() {
                sender.set_slow_start_after_idle(f.slow_start_after_idle);
            }
            let ecn = f.ecn.then(|| {
                if f.cca == "dctcp" {
                    EcnEcho::Dctcp
                } else {
                    EcnEcho::Classic
                }
            });
            flows.push(Flow {
                src: f.src as u32,
                dst: f.dst as u32,
                sender,
                receiver: Receiver::new(
                    f.id,
                    f.src as u32,
                    f.mss,
                    f.timestamps,
                    f.sack,
                    f.delayed_ack,
                    rcvbuf,
                    ecn,
                    f.size_bytes,
                ),
                udp: match f.proto {
                    Proto::Tcp => None,
                    Proto::Udp {
                        rate_bps,
                        payload_bytes,
                    } => {
                        if rate_bps == 0 || payload_bytes == 0 || payload_bytes > 65_507 {
                            return Err(ConfigError {
                                key: key("rate"),
                                message: "a UDP flow needs rate > 0 and 1..65507 payload bytes"
                                    .into(),
                            });
                        }
                        Some(UdpFlow::new(
                            f.id,
                            f.dst as u32,
                            rate_bps,
                            payload_bytes,
                            SimTime::ZERO + f.start,
                            f.size_bytes,
                        ))
                    }
                },
                encap_bytes: f.encap_bytes,
                mtu: f.mtu,
                metrics_save: f.metrics_save && f.proto == Proto::Tcp,
                metrics_written: false,
                app,
            });
        }
        let mut w = World {
            now: SimTime::ZERO,
            end: SimTime::ZERO + cfg.duration,
            bin: cfg.bin,
            heap: EventQueue::default(),
            seq: 0,
            net,
            flows,
            events: 0,
            peak_pending: 0,
            packets: 0,
            series: FlowSeries::default(),
            links: LinkSeries::default(),
            bin_start: SimTime::ZERO,
            frags: Reassembly::default(),
            metrics: MetricsCache::default(),
            seqack: None,
            cc_series: None,
            store: PacketStore::default(),
        };
        for i in 0..w.flows.len() {
            let at = w.flows[i].sender.start;
            w.schedule(at, Ev::FlowStart(i as u32));
        }
        w.schedule(SimTime::ZERO + cfg.bin, Ev::Sample);
        for i in 0..w.flows.len() {
            let first = w.flows[i].app.as_ref().and_then(|a| a.first());
            if let Some(at) = first.map(|d| w.flows[i].sender.start + d) {
                w.schedule(at, Ev::App(i as u32));
            }
        }
        Ok(w)
    }

    /// Record every TCP flow's congestion-control state at the end of each bin.
    pub fn record_cc_state(&mut self) {
        self.cc_series = Some(CcSeries::default());
    }

    /// Record flow `spec.flow`'s sequence/ACK trace at its sender (crate::trace); an error
    /// names what is wrong with the spec.
    pub fn trace_seqack(&mut self, spec: SeqAckSpec) -> Result<(), ConfigError> {
        let Some(f) = self.flows.get(spec.flow as usize) else {
            return Err(ConfigError {
                key: "seqack.flow".into(),
                message: format!(
                    "expected a flow id below {}, found {}",
                    self.flows.len(),
                    spec.flow
                ),
            });
        };
        if f.udp.is_some() {
            return Err(ConfigError {
                key: "seqack.flow".into(),
                message: format!("expected a TCP flow, flow {} is UDP", spec.flow),
            });
        }
        self.seqack = Some(SeqAckRecorder::new(spec));
        Ok(())
    }
}
