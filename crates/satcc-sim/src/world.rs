//! The discrete-event loop: one heap of `(time, sequence)`-ordered events, the network,
//! and every flow's two ends. Events at the same instant run in the order they were
//! scheduled, so a run is a pure function of its configuration and seed. A link direction's
//! wire is FIFO, so only its head packet's arrival is in the heap: the heap holds
//! O(directions + flows) events, whatever the bandwidth-delay product.
//!
//! One event per packet per hop (its arrival at the next node). A direction's serialiser has
//! no event of its own while packets are on its wire: it is brought up to date (every
//! transmission due by now finished, in order, the next one started at the instant the last
//! ended) whenever the direction is used — before a packet is offered to it, before its head
//! packet's arrival is handled, before a statistics sample. Only when its wire is empty while
//! a packet is in service does it need a wake-up event at that packet's end, so the packet's
//! arrival can be scheduled. A transmission that ends at the very instant a packet is offered
//! is still in service for it (`Due::Before`): a packet that arrives as the serialiser frees
//! finds the queue as it was, as it did when each transmission's end was an event scheduled
//! after the arrival's.
//!
//! Tunnels: a flow with `encap_bytes` adds them to every packet it sends (both ends); a packet
//! that then exceeds the flow's path MTU leaves its source as IP fragments (RFC 791: the first
//! ones carry ⌊(MTU − 20) / 8⌋·8 bytes of payload, each fragment has its own 20-byte header),
//! which cross the links independently. The far end takes the packet only when every fragment
//! has arrived; losing any loses the packet. Incomplete packets are forgotten after 30 s
//! (Linux `net.ipv4.ipfrag_time`). The TCP/UDP ends never see the fragments.
//!
//! Metrics cache (study 003; Linux `tcp_metrics.c` with `tcp_no_metrics_save = 0` and
//! `tcp_no_ssthresh_metrics_save = 0`): one ssthresh per (source node, destination node).
//! A `metrics_save` flow's limited transfer "closes" when its last byte is acknowledged and
//! then updates the entry (`Sender::ssthresh_to_cache`, `tcp_update_metrics`); a
//! `metrics_save` flow starting later reads it when it connects and applies it when
//! established (`tcp_init_metrics`). Only ssthresh is cached.
//! Deviations from Linux's cache:
//! 1. The entry is read when the SYN is sent, not when the SYN-ACK arrives: a flow closing
//!    during another's handshake is not seen by it.
//! 2. Bulk flows never close (the run ends first), so they never write; nor do flows whose
//!    transfer is never fully acknowledged. Linux also writes on close after a
//!    reset-free teardown of any connection; satcc's flows have no teardown.
//! 3. RTT, RTT variance, cwnd and reordering are not cached (Linux seeds the first RTO
//!    from the cached RTT; satcc's first RTO is always 1 s).
//!
//! Application traffic (`FlowConfig::app`): a bulk flow has all its data from the start. An
//! on/off flow starts "on" (writing whatever the connection takes, as bulk) and an `App`
//! event at each switch stops the writes (`Sender::app_stop`) or resumes them
//! (`Sender::app_unlimited`); a request flow's `App` events each write `bytes`
//! (`Sender::app_write`). Writes after idle go through `tcp_slow_start_after_idle_check`
//! when the flow's `slow_start_after_idle` is on. Bulk flows schedule no `App` event, so
//! their runs are unchanged.

use std::collections::HashMap;

use satcc_core::record::{CcSeries, FlowSeries, FlowSummary, LinkSeries, LinkSeriesRow};
use satcc_core::routing::Routing;
use satcc_core::{SimDuration, SimTime};

use crate::config::{AppConfig, ConfigError, Proto, SimConfig};
use crate::events::{self, EventQueue};
use crate::net::Network;
use crate::packet::{Frag, Hop, Kind, Packet, PacketStore, IP_HEADER};
use crate::tcp::receiver::{EcnEcho, RcvBuf, Receiver};
use crate::tcp::sender::Sender;
use crate::tcp::{Out, TimerKind};
use crate::trace::{SeqAckRecorder, SeqAckSpec, SeqAckTrace};
use crate::udp::{UdpFlow, UdpSummary};

/// Linux `net.ipv4.ipfrag_time`: how long an incomplete packet's fragments are kept.
const REASSEMBLY_TIMEOUT: SimDuration = SimDuration::from_secs(30);
/// IPv4 fragment offsets count 8-byte units (RFC 791).
const FRAGMENT_UNIT: u32 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// A link direction with nothing on its wire finishes serialising its packet.
    TxDone(u32),
    /// The packet at the head of a link direction's wire arrives at the far node.
    Arrive(u32),
    FlowStart(u32),
    SenderTimer(u32, TimerKind),
    ReceiverTimer(u32),
    /// A UDP flow's next datagram is due.
    UdpSend(u32),
    /// A TCP flow's application writes or switches on/off (`AppRun`).
    App(u32),
    /// End of a statistics bin.
    Sample,
}

/// Which transmissions `World::serve` finishes.
#[derive(Clone, Copy)]
enum Due {
    /// Those that ended before now: a packet offered, a sample taken or a packet arriving at
    /// the instant a transmission ends sees it still in service (as when the end of every
    /// transmission was an event of its own, scheduled after the arrival's).
    Before,
    /// Also those ending now (the direction's wake-up event).
    AtOrBefore,
}

struct Flow {
    src: u32,
    dst: u32,
    sender: Sender,
    receiver: Receiver,
    /// A UDP flow's ends (its TCP ends above then stay idle).
    udp: Option<UdpFlow>,
    encap_bytes: u32,
    mtu: u32,
    /// Reads and writes the metrics cache (module doc).
    metrics_save: bool,
    /// The close-time update of the metrics cache has been done.
    metrics_written: bool,
    /// The application of a flow that is not bulk (boxed: bulk flows, the hot path, keep
    /// their `Flow` small).
    app: Option<Box<AppRun>>,
}

/// A non-bulk application and how many of its events have run.
struct AppRun {
    cfg: AppConfig,
    step: usize,
}

impl AppRun {
    /// The first event's offset from the flow's start.
    fn first(&self) -> Option<SimDuration> {
        match &self.cfg {
            AppConfig::Bulk => None,
            AppConfig::OnOff { on, .. } => Some(*on),
            AppConfig::Periodic { .. } => Some(SimDuration::ZERO),
            AppConfig::At { at, .. } => at.first().copied(),
        }
    }

    /// Run event `step` at `now` on `sender`; the time of the next one.
    fn fire(&mut self, now: SimTime, sender: &mut Sender, out: &mut Out) -> Option<SimTime> {
        let step = self.step;
        self.step += 1;
        match &self.cfg {
            AppConfig::Bulk => None,
            AppConfig::OnOff { on, off } => {
                if step.is_multiple_of(2) {
                    sender.app_stop();
                    Some(now + *off)
                } else {
                    sender.app_unlimited(now, out);
                    Some(now + *on)
                }
            }
            AppConfig::Periodic { bytes, every } => {
                sender.app_write(now, *bytes, out);
                Some(now + *every)
            }
            AppConfig::At { bytes, at } => {
                sender.app_write(now, *bytes, out);
                at.get(step + 1).map(|&d| sender.start + d)
            }
        }
    }
}

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct SimOutput {
    pub flows: Vec<FlowSummary>,
    pub flow_series: FlowSeries,
    pub link_series: LinkSeries,
    pub events: u64,
    /// Most events pending at once: bounded by the number of link directions, flows and
    /// timers, not by the packets in flight (a FIFO wire keeps one event for its head).
    pub peak_pending_events: usize,
    pub packets: u64,
    /// Per flow (by id): what iperf3 -u reports, for UDP flows.
    pub udp: Vec<Option<UdpSummary>>,
    /// Packets that left their source as IP fragments (tunnel encapsulation over the MTU).
    pub fragmented_packets: u64,
    /// The sequence/ACK trace `World::trace_seqack` asked for.
    pub seqack: Option<SeqAckTrace>,
    /// The congestion-control state series `World::record_cc_state` asked for.
    pub cc_series: Option<CcSeries>,
}

/// Largest tunnel overhead a flow may add per packet (an IPv4 datagram's size; real tunnels
/// add tens of bytes). Keeps `wire_bytes + encap` far from u32 overflow.
pub const MAX_ENCAP_BYTES: u32 = 65_535;

pub struct World {
    now: SimTime,
    end: SimTime,
    bin: SimDuration,
    heap: EventQueue<Ev>,
    seq: u64,
    net: Network,
    flows: Vec<Flow>,
    events: u64,
    /// Most events ever pending at once.
    peak_pending: usize,
    packets: u64,
    series: FlowSeries,
    links: LinkSeries,
    /// Time covered by the bin being collected.
    bin_start: SimTime,
    /// Fragments seen so far per fragmented packet: (count, first arrival).
    reassembly: HashMap<u64, (u16, SimTime)>,
    next_frag_id: u64,
    fragmented: u64,
    /// The metrics cache: ssthresh (packets) per (source node, destination node).
    metrics: HashMap<(u32, u32), u32>,
    seqack: Option<SeqAckRecorder>,
    cc_series: Option<CcSeries>,
    /// Every packet between its source and its destination; links carry handles.
    store: PacketStore,
}

impl World {
    pub fn new(cfg: &SimConfig) -> Result<World, ConfigError> {
        World::build(cfg, None)
    }

    /// A world that walks `routing`, the routes of the resolved scenario `cfg` came from
    /// (`SimConfig::from_resolved`): the resolver's tables, not a second computation.
    pub fn with_routing(cfg: &SimConfig, routing: Routing) -> Result<World, ConfigError> {
        World::build(cfg, Some(routing))
    }

    fn build(cfg: &SimConfig, routing: Option<Routing>) -> Result<World, ConfigError> {
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
                            if *bytes == 0 =>
                        {
                            return Err(bad("writes must be > 0 bytes".into()));
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
            reassembly: HashMap::new(),
            next_frag_id: 0,
            fragmented: 0,
            metrics: HashMap::new(),
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

    /// Reserve the time series for the whole run (one row per flow and link direction per
    /// bin), so that a run too long for memory fails here with an error instead of aborting
    /// the process (or deadlocking its panic handler) hours into the run. `run` works without
    /// it (the series then grow as they fill).
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

    pub fn reserve_series(&mut self) -> Result<(), ConfigError> {
        let bins = self
            .end
            .as_nanos()
            .div_ceil(self.bin.as_nanos())
            .saturating_add(1); // + the closing bin
        let dirs = self.net.dirs.len();
        let flow_rows = bins
            .checked_mul(self.flows.len() as u64)
            .and_then(|n| usize::try_from(n).ok());
        let link_rows = bins
            .checked_mul(dirs as u64)
            .and_then(|n| usize::try_from(n).ok());
        let reserved = match (flow_rows, link_rows) {
            (Some(f), Some(l)) => satcc_core::mem::fallible(|| {
                self.series
                    .try_reserve(f)
                    .and_then(|_| self.links.try_reserve(l))
                    .is_ok()
            }),
            _ => false,
        };
        if !reserved {
            let need = (bins as f64)
                * ((self.flows.len() * FlowSeries::ROW_BYTES + dirs * LinkSeries::ROW_BYTES)
                    as f64);
            return Err(ConfigError {
                key: "scenario.bin".into(),
                message: format!(
                    "out of memory: {bins} bins of time series need {:.2} GB, more than this process may allocate; use longer bins or a shorter duration",
                    need / 1e9
                ),
            });
        }
        Ok(())
    }

    fn schedule(&mut self, at: SimTime, ev: Ev) {
        debug_assert!(at >= self.now, "scheduling in the past");
        self.seq += 1;
        self.heap.push(events::key(at, self.seq), ev);
        self.peak_pending = self.peak_pending.max(self.heap.len());
    }

    /// Run to the end, calling `progress(fraction)` now and then; it returns false to stop.
    pub fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> SimOutput {
        let total = self.end.as_nanos().max(1) as f64;
        // What an endpoint produces while it handles an event (emptied by `emit`).
        let mut out = Out::default();
        while let Some((key, ev)) = self.heap.peek() {
            let at = events::key_time(key);
            if at > self.end {
                break;
            }
            // A wire's next arrival takes its head's place in the heap (one sift, not two).
            match ev {
                Ev::Arrive(d) => {
                    // (the head is taken off the wire in `dispatch`)
                    let dir = &mut self.net.dirs[d as usize];
                    match dir.core.on_wire(1) {
                        Some((at, next)) => {
                            self.heap
                                .replace_top(events::key(at, next.seq), Ev::Arrive(d));
                        }
                        None => {
                            dir.arrival_scheduled = false;
                            self.heap.pop();
                        }
                    }
                }
                _ => {
                    self.heap.pop();
                }
            }
            assert!(at >= self.now, "time went backwards");
            self.now = at;
            self.events += 1;
            if self.events & 0xFFFF == 0 && !progress(self.now.as_nanos() as f64 / total) {
                break;
            }
            self.dispatch(ev, &mut out);
        }
        progress(1.0);
        self.finish()
    }

    fn dispatch(&mut self, ev: Ev, out: &mut Out) {
        let now = self.now;
        match ev {
            Ev::TxDone(d) => {
                self.net.dirs[d as usize].wake_at = None;
                self.serve(d, Due::AtOrBefore);
                self.wake(d);
            }
            Ev::Arrive(d) => {
                // (`run` has already put the wire's next arrival in the heap)
                self.serve(d, Due::Before);
                let hop = self.net.dirs[d as usize].arrive();
                self.wake(d);
                let node = self.net.dirs[d as usize].to_node;
                self.at_node(node, hop, out);
            }
            Ev::FlowStart(f) | Ev::UdpSend(f) if self.flows[f as usize].udp.is_some() => {
                let (pkt, next) = self.flows[f as usize]
                    .udp
                    .as_mut()
                    .expect("a UDP flow")
                    .send(now);
                let node = self.flows[f as usize].src;
                self.send(f, node, &pkt);
                if let Some(at) = next {
                    self.schedule(at, Ev::UdpSend(f));
                }
            }
            Ev::UdpSend(_) => unreachable!("UdpSend for a TCP flow"),
            Ev::FlowStart(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.metrics_save {
                    // tcp_init_metrics (module doc, deviation 1)
                    flow.sender
                        .set_cached_ssthresh(self.metrics.get(&(flow.src, flow.dst)).copied());
                }
                self.flows[f as usize].sender.connect(now, out);
                self.emit(f, true, out);
            }
            Ev::SenderTimer(f, kind) => {
                self.flows[f as usize].sender.on_timer(now, kind, out);
                self.emit(f, true, out);
            }
            Ev::ReceiverTimer(f) => {
                self.flows[f as usize].receiver.on_timer_event(now, out);
                self.emit(f, false, out);
            }
            Ev::App(f) => self.app_event(f, out),
            Ev::Sample => {
                for d in 0..self.net.dirs.len() as u32 {
                    self.serve(d, Due::Before);
                    self.wake(d);
                }
                self.sample();
                let at = now + self.bin;
                if at <= self.end {
                    self.schedule(at, Ev::Sample);
                }
            }
        }
    }

    /// A flow's application writes or switches (rare: kept out of the event loop's body).
    #[cold]
    #[inline(never)]
    fn app_event(&mut self, f: u32, out: &mut Out) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let app = flow
            .app
            .as_mut()
            .expect("App events come from an application");
        let next = app.fire(now, &mut flow.sender, out);
        self.emit(f, true, out);
        if let Some(at) = next.filter(|&at| at <= self.end) {
            self.schedule(at, Ev::App(f));
        }
    }

    /// A packet reached `node`: hand it to its endpoint or forward it.
    fn at_node(&mut self, node: u32, hop: Hop, out: &mut Out) {
        if hop.dst_node == node {
            if let Some(frag) = self.store.peek(hop).frag {
                if !self.reassemble(frag) {
                    self.store.drop(hop);
                    return;
                }
            }
            // read in place; the slot is freed before anything is sent
            let pkt = self.store.deliver(hop);
            let f = pkt.flow;
            // Only UDP flows send datagrams (their TCP ends stay idle): asked of the packet at
            // hand, not of the flow's far-away `udp` field.
            if pkt.kind == Kind::Datagram {
                let u = self.flows[f as usize]
                    .udp
                    .as_mut()
                    .expect("a datagram belongs to a UDP flow");
                u.on_packet(self.now, pkt);
                self.store.drop(hop);
                return;
            }
            let flow = &mut self.flows[f as usize];
            let from_sender_side = if pkt.kind.forward() {
                flow.receiver.on_packet(self.now, pkt, out);
                false
            } else {
                if let Some(r) = self.seqack.as_mut() {
                    r.received(self.now, pkt);
                }
                flow.sender.on_packet(self.now, pkt, out);
                if flow.metrics_save && !flow.metrics_written && flow.sender.acked_all_at.is_some()
                {
                    // the transfer is complete: tcp_update_metrics at close (module doc)
                    flow.metrics_written = true;
                    let key = (flow.src, flow.dst);
                    match flow
                        .sender
                        .ssthresh_to_cache(self.metrics.get(&key).copied())
                    {
                        Some(v) => self.metrics.insert(key, v),
                        None => self.metrics.remove(&key),
                    };
                }
                true
            };
            self.store.drop(hop);
            self.emit(f, from_sender_side, out);
        } else {
            self.forward(node, hop);
        }
    }

    #[inline(always)]
    fn forward(&mut self, node: u32, hop: Hop) {
        let Some(d) = self.net.next_hop(node, hop.dst_node) else {
            self.store.drop(hop);
            return;
        };
        self.packets += 1;
        self.serve(d, Due::Before);
        self.net.dirs[d as usize].enqueue(hop, self.now, &mut self.store);
        self.wake(d);
    }

    /// Bring direction `d`'s serialiser up to `now`: every transmission `due` finishes, in
    /// order; each surviving packet goes onto the wire with the next event key, and only the
    /// wire's head is in the heap.
    // Inlined into its callers (an arrival, an offer, a wake-up, a sample): 2-5 % less CPU on
    // bench_sim's cases than the call LLVM chose (2026-11-26).
    #[inline(always)]
    fn serve(&mut self, d: u32, due: Due) {
        let now = self.now;
        let dir = &mut self.net.dirs[d as usize];
        let is_due = |t: SimTime| match due {
            Due::Before => t < now,
            Due::AtOrBefore => t <= now,
        };
        while let Some(done) = dir.core.service_done().filter(|&t| is_due(t)) {
            // A surviving packet's arrival event takes the next sequence number.
            if let Some(at) = dir.finish(done, self.seq + 1, &mut self.store) {
                self.seq += 1;
                if !dir.arrival_scheduled {
                    dir.arrival_scheduled = true;
                    self.heap.push(events::key(at, self.seq), Ev::Arrive(d));
                    self.peak_pending = self.peak_pending.max(self.heap.len());
                }
            }
        }
    }

    /// Direction `d` needs an event at the end of its transmission when nothing on its wire
    /// will bring it up to date before then.
    fn wake(&mut self, d: u32) {
        let dir = &mut self.net.dirs[d as usize];
        if dir.arrival_scheduled || dir.wake_at.is_some() {
            return;
        }
        if let Some(done) = dir.core.service_done() {
            dir.wake_at = Some(done);
            self.schedule(done, Ev::TxDone(d));
        }
    }

    /// A fragment arrived at its destination: whether its packet is now complete.
    fn reassemble(&mut self, frag: Frag) -> bool {
        let e = self.reassembly.entry(frag.id).or_insert((0, self.now));
        e.0 += 1;
        if e.0 == frag.count {
            self.reassembly.remove(&frag.id);
            return true;
        }
        false
    }

    /// An endpoint of flow `f` at `node` sends `pkt`: through the flow's tunnel, fragmented
    /// if it no longer fits the path MTU (RFC 791 §2.3, "Fragmentation and Reassembly").
    fn send(&mut self, f: u32, node: u32, pkt: &Packet) {
        let (encap, mtu) = (
            self.flows[f as usize].encap_bytes,
            self.flows[f as usize].mtu,
        );
        let wire_bytes = pkt.wire_bytes + encap;
        if wire_bytes <= mtu {
            let hop = self.store.put(pkt, encap);
            self.forward(node, hop);
            return;
        }
        let per = (mtu - IP_HEADER) / FRAGMENT_UNIT * FRAGMENT_UNIT; // payload per fragment
        let payload = wire_bytes - IP_HEADER;
        let count = payload.div_ceil(per);
        let id = self.next_frag_id;
        self.next_frag_id += 1;
        self.fragmented += 1;
        for k in 0..count {
            let mut frag = *pkt;
            frag.wire_bytes = IP_HEADER + per.min(payload - k * per);
            frag.frag = Some(Frag {
                id,
                count: count.min(u16::MAX as u32) as u16,
            });
            let hop = self.store.put(&frag, 0);
            self.forward(node, hop);
        }
    }

    /// Send what an endpoint produced and queue its timers.
    fn emit(&mut self, f: u32, sender_side: bool, out: &mut Out) {
        let node = if sender_side {
            self.flows[f as usize].src
        } else {
            self.flows[f as usize].dst
        };
        for pkt in &out.pkts {
            if sender_side {
                if let Some(r) = self.seqack.as_mut() {
                    r.sent(self.now, pkt);
                }
            }
            self.send(f, node, pkt);
        }
        for i in 0..out.timers.len() {
            let (kind, at) = out.timers[i];
            let ev = if kind == TimerKind::DelAck {
                Ev::ReceiverTimer(f)
            } else {
                Ev::SenderTimer(f, kind)
            };
            self.schedule(at.max(self.now), ev);
        }
        out.clear();
    }

    fn sample(&mut self) {
        let t_s = self.bin_start.as_secs_f64();
        for (i, f) in self.flows.iter_mut().enumerate() {
            if let Some(u) = f.udp.as_mut() {
                // UDP: delivered payload; the TCP columns stay 0.
                let s = &mut self.series;
                s.flow_id.push(i as u32);
                s.t_s.push(t_s);
                let got = std::mem::take(&mut u.delivered_in_bin);
                s.delivered_bytes.push(got);
                s.received_bytes.push(got);
                s.cwnd_pkts.push(0);
                s.ssthresh_pkts.push(0);
                s.srtt_ms.push(0.0);
                s.inflight_pkts.push(0);
                s.pacing_rate_bps.push(0.0);
                s.retransmits.push(0);
                continue;
            }
            let s = &f.sender;
            self.series.flow_id.push(i as u32);
            self.series.t_s.push(t_s);
            self.series
                .delivered_bytes
                .push(f.receiver.delivered_in_bin);
            f.receiver.delivered_in_bin = 0;
            self.series
                .received_bytes
                .push(std::mem::take(&mut f.receiver.received_in_bin));
            self.series.cwnd_pkts.push(s.tcp.cwnd);
            self.series
                .ssthresh_pkts
                .push(s.tcp.ssthresh.min(i32::MAX as u32));
            self.series.srtt_ms.push(s.srtt_us() as f64 / 1000.0);
            self.series.inflight_pkts.push(s.tcp.in_flight());
            self.series
                .pacing_rate_bps
                .push(s.tcp.pacing_rate_bps as f64 * 8.0);
            self.series.retransmits.push(s.stats.retrans_in_bin);
            f.sender.stats.retrans_in_bin = 0;
            if let Some(cc) = self.cc_series.as_mut() {
                for (name, value) in f.sender.cc_state() {
                    cc.flow_id.push(i as u32);
                    cc.t_s.push(t_s);
                    cc.name.push(name);
                    cc.value.push(value);
                }
            }
        }
        for d in self.net.dirs.iter_mut() {
            let c = d.core.take_counters();
            let (queue_pkts, queue_bytes) = d.core.queue_len();
            // Time-weighted over the bin, from the link's model.
            let m = d.core.model_mut().mean_over(self.bin_start, self.now);
            self.links.push(LinkSeriesRow {
                link_id: d.link,
                dir: d.dir,
                t_s,
                queue_pkts,
                queue_bytes,
                drops_queue: c.drops_queue,
                drops_random: c.drops_random,
                ecn_marks: c.ecn_marks,
                tx_bytes: c.tx_bytes,
                capacity_bps: m.rate_bps.round() as u64,
                delay_ms: m.delay.as_nanos() as f64 / 1e6,
            });
        }
        self.bin_start = self.now;
        let now = self.now;
        self.reassembly
            .retain(|_, &mut (_, first)| now.saturating_since(first) < REASSEMBLY_TIMEOUT);
    }

    fn finish(self) -> SimOutput {
        let end = self.end;
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if let Some(u) = &f.udp {
                    let done = u.completed_at;
                    let active = u
                        .active_end(end)
                        .max(u.start)
                        .saturating_since(u.start)
                        .as_secs_f64();
                    return FlowSummary {
                        id: i as u32,
                        delivered_bytes: u.received_bytes,
                        goodput_bps: if active > 0.0 {
                            u.received_bytes as f64 * 8.0 / active
                        } else {
                            0.0
                        },
                        sent_packets: u.sent_packets,
                        fct_s: done.map(|t| t.saturating_since(u.start).as_secs_f64()),
                        ..FlowSummary::default()
                    };
                }
                let s = &f.sender;
                let r = &f.receiver;
                let done = r.completed_at;
                let active_end = done.unwrap_or(end).max(s.start);
                let active = active_end.saturating_since(s.start).as_secs_f64();
                FlowSummary {
                    id: i as u32,
                    delivered_bytes: r.delivered_bytes,
                    goodput_bps: if active > 0.0 {
                        r.delivered_bytes as f64 * 8.0 / active
                    } else {
                        0.0
                    },
                    sent_packets: s.stats.sent_packets,
                    retransmitted_packets: s.stats.retransmitted_packets,
                    rtt_mean_ms: s.stats.rtt.mean_ms(),
                    rtt_p95_ms: s.stats.rtt.quantile_ms(0.95),
                    rtt_min_ms: s.stats.rtt.min_ms(),
                    fct_s: done.map(|t| t.saturating_since(s.start).as_secs_f64()),
                    rto_count: s.stats.rto_count,
                    recovery_count: s.stats.recovery_count,
                }
            })
            .collect();
        let udp = self
            .flows
            .iter()
            .map(|f| f.udp.as_ref().map(UdpFlow::summary))
            .collect();
        SimOutput {
            flows,
            flow_series: self.series,
            link_series: self.links,
            events: self.events,
            peak_pending_events: self.peak_pending,
            packets: self.packets,
            udp,
            fragmented_packets: self.fragmented,
            seqack: self.seqack.map(SeqAckRecorder::finish),
            cc_series: self.cc_series,
        }
    }
}

/// Run a configuration to the end.
pub fn run(
    cfg: &SimConfig,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<SimOutput, ConfigError> {
    let mut world = World::new(cfg)?;
    world.reserve_series()?;
    Ok(world.run(progress))
}
