//! A configuration into a world: the flows' two ends, their algorithms and applications,
//! the network, the first events.

use satcc_core::record::{CcSeries, FlowSeries, LinkSeries};
use satcc_core::routing::Routing;
use satcc_core::SimTime;

use super::app::AppRun;
use super::frag::Reassembly;
use super::metrics::MetricsCache;
use super::{Ev, Flow, World};
use crate::config::{AppConfig, ConfigError, Proto, SimConfig};
use crate::events::EventQueue;
use crate::net::Network;
use crate::packet::PacketStore;
use crate::tcp::receiver::{EcnEcho, RcvBuf, Receiver};
use crate::tcp::sender::Sender;
use crate::trace::{SeqAckRecorder, SeqAckSpec};
use crate::udp::UdpFlow;

impl World {
    /// The world of a checked configuration (`SimConfig::check`, or the resolver's checks
    /// for one from a resolved scenario) and its routes. What can still fail is building: an
    /// algorithm from its parameters, a link's model.
    pub(super) fn build(cfg: &SimConfig, routing: Routing) -> Result<World, ConfigError> {
        debug_assert!(!cfg.bin.is_zero(), "checked: bins of a positive width");
        let net = Network::build(cfg, routing)?;
        let mut flows = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            // Packets carry the flow id and the loop indexes flows by it.
            debug_assert_eq!(f.id as usize, i, "checked: flows numbered in order");
            let key = |k: &str| format!("flow[{i}].{k}");
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
                (app, Proto::Tcp) => Some(Box::new(AppRun {
                    cfg: app.clone(),
                    step: 0,
                })),
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
                    } => Some(UdpFlow::new(
                        f.id,
                        f.dst as u32,
                        rate_bps,
                        payload_bytes,
                        SimTime::ZERO + f.start,
                        f.size_bytes,
                    )),
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
