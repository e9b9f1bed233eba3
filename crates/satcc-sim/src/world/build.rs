//! A resolved scenario into a world: the flows' two ends, their algorithms and applications,
//! the network, the first events. What the event loop needs beyond the scenario's own words
//! is derived here, once: each flow's parsed algorithm parameters, times as `SimDuration`s,
//! the links' models and the hosts' turnarounds.

use satcc_core::record::{CcSeries, FlowSeries, LinkSeries};
use satcc_core::scenario::{App, Resolved};
use satcc_core::{SimDuration, SimTime};

use super::app::AppRun;
use super::frag::Reassembly;
use super::metrics::MetricsCache;
use super::{Ev, Flow, World};
use crate::capture::Tap;
use crate::error::ConfigError;
use crate::events::{EventQueue, HeldQueue};
use crate::net::Network;
use crate::packet::PacketStore;
use crate::tcp::receiver::{EcnEcho, RcvBuf, Receiver};
use crate::tcp::sender::Sender;
use crate::trace::SeqAckRecorder;
use crate::udp::UdpFlow;

impl<T: Tap> World<T> {
    /// The world of a resolved scenario (the resolver checked it; nothing is checked again),
    /// walking the resolver's routes. What can still fail is building: an algorithm from
    /// its parameters, a link's model.
    pub(super) fn build(r: &Resolved, tap: T) -> Result<World<T>, ConfigError> {
        let s = &r.scenario;
        debug_assert!(s.bin_ns > 0, "resolved: bins of a positive width");
        let host_noise = match &s.host_noise_quantiles_ns {
            Some(h) => Some(h.build()?),
            None => None,
        };
        let net = Network::build(r, host_noise.as_ref(), r.routing.clone())?;
        let mut flows = Vec::with_capacity(s.flows.len());
        for (i, f) in s.flows.iter().enumerate() {
            // Packets carry the flow id and the loop indexes flows by it.
            debug_assert_eq!(f.id as usize, i, "resolved: flows numbered in order");
            let key = |k: &str| format!("flow[{i}].{k}");
            let cc_err = |message: String| ConfigError {
                key: key("cc"),
                message,
            };
            let mut params = match &f.cc {
                Some(t) => satcc_cc::Params::from_json(t).map_err(cc_err)?,
                None => satcc_cc::Params::new(),
            };
            // Algorithms with randomness (BBR's gain-cycle phase) draw from the scenario's
            // seed and the flow's id unless the scenario pins `cc.seed`.
            let info = satcc_cc::registry::info(&f.cca);
            let takes_seed = info.is_some_and(|a| a.params.iter().any(|p| p.name == "seed"));
            let needs_ecn = info.is_some_and(|a| a.needs_ecn);
            if takes_seed && !params.contains("seed") {
                let seed =
                    satcc_core::Rng::derive(s.seed, 0xCC_0000 + f.id as u64).next_u64() >> 11;
                params.insert("seed", satcc_cc::params::ParamValue::Num(seed as f64));
            }
            let cc = satcc_cc::lookup(&f.cca, &params).map_err(|e| cc_err(e.to_string()))?;
            // `rwnd` is the receiver's tcp_rmem[2] (the autotuning ceiling), at least one segment.
            let rcvbuf = RcvBuf {
                max_bytes: f.rwnd_bytes.max(f.mss as u64),
                autotune: f.rcvbuf_autotune,
                window_scaling: f.window_scaling,
            };
            let udp = f.is_udp();
            let app = match &f.app {
                None | Some(App::Bulk) => None,
                Some(_) if udp => None,
                Some(app) => Some(Box::new(AppRun {
                    app: app.clone(),
                    step: 0,
                })),
            };
            // The sender's view of the flow: an algorithm that needs ECN gets it (Linux
            // negotiates it whenever `tcp_ca_needs_ecn`, whatever `ecn` says); a request
            // flow's sender starts with nothing to send (the receiver still counts towards no
            // size: the flow never completes).
            let mut sf = f.clone();
            sf.ecn |= needs_ecn;
            if matches!(f.app, Some(App::Requests { .. })) && app.is_some() {
                sf.size_bytes = Some(0);
            }
            let mut sender = Sender::new(&sf, f.dst as u32, cc);
            if app.is_some() {
                sender.set_slow_start_after_idle(f.slow_start_after_idle);
            }
            // The receiving end runs the same algorithm; one that needs ECN is told of every
            // CE mark (`__tcp_ecn_check_ce`) and echoes them itself, as DCTCP does.
            let ecn = sf.ecn.then_some(if needs_ecn {
                EcnEcho::Dctcp
            } else {
                EcnEcho::Classic
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
                udp: match (udp, f.udp_rate_bps, f.udp_payload_bytes) {
                    (true, Some(rate_bps), Some(payload_bytes)) => Some(UdpFlow::new(
                        f.id,
                        f.dst as u32,
                        rate_bps,
                        payload_bytes,
                        SimTime::from_nanos(f.start_ns),
                        f.size_bytes,
                    )),
                    (true, ..) => {
                        return Err(ConfigError {
                            key: format!("flow[{i}]"),
                            message: "a UDP flow needs udp_rate_bps and udp_payload_bytes".into(),
                        })
                    }
                    (false, ..) => None,
                },
                encap_bytes: f.encap_bytes,
                mtu: f.mtu,
                metrics_save: f.metrics_save && !udp,
                metrics_written: false,
                app,
            });
        }
        let mut w = World {
            now: SimTime::ZERO,
            end: SimTime::from_nanos(s.duration_ns),
            bin: SimDuration::from_nanos(s.bin_ns),
            heap: EventQueue::default(),
            heap_top: u128::MAX,
            arrivals: HeldQueue::default(),
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
            tap,
        };
        // (not `schedule`d: it takes no sequence number and is not counted as pending)
        w.heap.push(w.end_key(), Ev::End);
        w.heap_top = w.end_key();
        for i in 0..w.flows.len() {
            let at = w.flows[i].sender.start;
            w.schedule(at, Ev::FlowStart(i as u32));
        }
        w.schedule(SimTime::ZERO + w.bin, Ev::Sample);
        for i in 0..w.flows.len() {
            let first = w.flows[i].app.as_ref().and_then(|a| a.first());
            if let Some(at) = first.map(|d| w.flows[i].sender.start + d) {
                w.schedule(at, Ev::App(i as u32));
            }
        }
        if let Some(spec) = s.seqack {
            w.seqack = Some(SeqAckRecorder::new(spec));
        }
        if s.cc_state {
            w.record_cc_state();
        }
        Ok(w)
    }

    /// Record every TCP flow's congestion-control state at the end of each bin.
    pub fn record_cc_state(&mut self) {
        self.cc_series = Some(CcSeries::default());
    }
}
