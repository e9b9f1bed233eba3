//! The discrete-event loop: `(time, sequence)`-ordered events in two heaps (the wires' head
//! arrivals, and every other event), the network, and every flow's two ends. Events run in
//! key order across both heaps; events at the same instant run in the order they were
//! scheduled, so a run is a pure function of its configuration and seed. A link direction's
//! wire is FIFO, so only its head packet's arrival is in a heap: the heaps hold
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
//! The rest by concern: `build` (a resolved scenario into a world), `frag` (tunnels and IP
//! fragmentation), `metrics` (the per-destination metrics cache), `app` (application
//! traffic), `series` (per-bin sampling and the run's summaries).

mod app;
mod build;
mod frag;
mod metrics;
mod series;

use satcc_core::record::{CcSeries, FlowSeries, FlowSummary, LinkSeries};
use satcc_core::scenario::Resolved;
use satcc_core::{SimDuration, SimTime};

use crate::capture::{NoTap, Seen, Tap};
use crate::error::ConfigError;
use crate::events::{self, EventQueue, HeldQueue};
use crate::net::{LinkDir, Network};
use crate::packet::{Hop, Kind, PacketStore};
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::Sender;
use crate::tcp::{Out, TimerKind};
use crate::trace::{SeqAckRecorder, SeqAckTrace};
use crate::udp::{UdpFlow, UdpSummary};

use self::app::AppRun;
use self::frag::Reassembly;
use self::metrics::MetricsCache;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// A link direction with nothing on its wire finishes serialising its packet.
    TxDone(u32),
    FlowStart(u32),
    SenderTimer(u32, TimerKind),
    ReceiverTimer(u32),
    /// A UDP flow's next datagram is due.
    UdpSend(u32),
    /// A TCP flow's application writes or switches on/off (`AppRun`).
    App(u32),
    /// End of a statistics bin.
    Sample,
    /// The run's end (`World::end_key`): in the heap from the start, above every event the run
    /// takes, never dispatched (so an arrival earlier than the heap's first event is within the
    /// run without a test of its own).
    End,
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
    /// The sequence/ACK trace the scenario's `seqack` asked for.
    pub seqack: Option<SeqAckTrace>,
    /// The congestion-control state series the scenario's `cc_state` (or
    /// `World::record_cc_state`) asked for.
    pub cc_series: Option<CcSeries>,
}

pub use satcc_core::scenario::MAX_ENCAP_BYTES;

/// The world of a run; `T` sees the packets the links take in and let out (`capture`: the
/// default [`NoTap`] compiles to nothing).
pub struct World<T: Tap = NoTap> {
    now: SimTime,
    end: SimTime,
    bin: SimDuration,
    /// Every event but a wire's head arrival.
    heap: EventQueue<Ev>,
    /// `heap`'s first key (`top_key`), kept as it changes (a push, a pop: a few events in a
    /// thousand) rather than read from the heap for every event.
    heap_top: u128,
    /// The head arrivals of the wires, by direction (apart from the other events: one per busy
    /// wire, so the arrivals' heap an arrival updates is small), the earliest held apart:
    /// a wire's next arrival that is still the earliest event takes its place without a sift.
    arrivals: HeldQueue<u32>,
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
    /// IP fragments in reassembly (`frag`).
    frags: Reassembly,
    metrics: MetricsCache,
    seqack: Option<SeqAckRecorder>,
    cc_series: Option<CcSeries>,
    /// Every packet between its source and its destination; links carry handles.
    store: PacketStore,
    /// Sees the packets entering and leaving link directions (`capture`).
    tap: T,
}

impl World {
    /// The world of a resolved scenario (`satcc_core::scenario::resolve`, the one checker),
    /// walking the resolver's routes; with the sequence/ACK trace and the congestion-control
    /// series the scenario asks for. What can still fail is building: an algorithm from its
    /// parameters, a link's model.
    pub fn new(r: &Resolved) -> Result<World, ConfigError> {
        World::build(r, NoTap)
    }
}

impl<T: Tap> World<T> {
    /// [`World::new`] with `tap` shown every packet entering and leaving a link direction
    /// (a `&mut capture::Capture`: the captures stay the caller's to finish).
    pub fn with_tap(r: &Resolved, tap: T) -> Result<World<T>, ConfigError> {
        World::build(r, tap)
    }

    /// Show the tap packet `hop` entering (`exit == false`) or leaving direction `d` now.
    #[inline(never)]
    fn tap_packet(&mut self, d: u32, exit: bool, hop: Hop) {
        let pkt = self.store.peek(hop);
        let ws = self.flows[pkt.flow as usize].receiver.rcv_wscale();
        let seen = Seen {
            pkt,
            frag: self.store.frag(hop),
            ce: hop.is_ce(),
        };
        self.tap.packet(d, exit, self.now, seen, ws);
    }

    /// The key of the run's end (`Ev::End`): above every key at or before `end` (an event's
    /// sequence number is below `u64::MAX`), below an empty heap's `u128::MAX`.
    fn end_key(&self) -> u128 {
        events::key(self.end, u64::MAX).min(u128::MAX - 1)
    }

    fn schedule(&mut self, at: SimTime, ev: Ev) {
        debug_assert!(at >= self.now, "scheduling in the past");
        self.seq += 1;
        let key = events::key(at, self.seq);
        self.heap.push(key, ev);
        self.heap_top = self.heap_top.min(key);
        debug_assert_eq!(self.heap_top, self.heap.top_key());
        // (the run's end is not counted)
        self.peak_pending = self
            .peak_pending
            .max(self.heap.len() - 1 + self.arrivals.len());
    }

    /// Run to the end, calling `progress(fraction)` now and then; it returns false to stop.
    // Not inlined into its caller: its own callees (the endpoints' `on_packet`) are inlined
    // into it instead (bench_sim, cachegrind: 3.2 M fewer instructions in 391 M).
    #[inline(never)]
    pub fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> SimOutput {
        let total = self.end.as_nanos().max(1) as f64;
        // What an endpoint produces while it handles an event (emptied by `emit`).
        let mut out = Out::default();
        // Events run in key order, the earlier of the two heaps' first (keys are unique). The
        // other heap holds the run's end (`Ev::End`, key `last`) until the run stops, so an
        // arrival before its first event is within the run.
        let last = self.end_key();
        loop {
            // (an empty arrivals' heap reads as `u128::MAX`, above the run's end)
            let (arrival, d) = self.arrivals.first();
            let other = self.heap_top;
            if other < arrival {
                if other >= last {
                    break;
                }
                let at = events::key_time(other);
                debug_assert!(at >= self.now, "time went backwards");
                self.events += 1;
                let (_, ev) = self.heap.pop().expect("the earliest event");
                self.heap_top = self.heap.top_key();
                self.now = at;
                if self.events & 0xFFFF == 0 && !progress(at.as_nanos() as f64 / total) {
                    break;
                }
                self.dispatch(ev, &mut out);
                continue;
            }
            debug_assert!(arrival < last);
            let at = events::key_time(arrival);
            debug_assert!(at >= self.now, "time went backwards");
            self.events += 1;
            let stop = self.events & 0xFFFF == 0;
            // The arrival handled here, on the direction held from the heap's update on.
            debug_assert!((d as usize) < self.net.dirs.len());
            // SAFETY: an arrival's direction was pushed by `serve_dir` with the direction it
            // held (`dirs[d]`), and no direction is removed after the network is built. (Read
            // once an arrival, unchecked: bench_sim `--direct` ~2.3 M instructions fewer in 60 s.)
            let dir = unsafe { self.net.dirs.get_unchecked_mut(d as usize) };
            match dir.core.on_wire(1) {
                // A wire's next arrival takes its head's place (one sift, not two).
                Some((next_at, next)) => {
                    self.arrivals.replace_top(events::key(next_at, next.seq), d);
                }
                None => {
                    dir.arrival_scheduled = false;
                    self.arrivals.pop();
                }
            }
            self.now = at;
            if stop && !progress(at.as_nanos() as f64 / total) {
                break;
            }
            let q = Queue {
                arrivals: &mut self.arrivals,
                others: &self.heap,
                seq: &mut self.seq,
                peak: &mut self.peak_pending,
            };
            serve_dir(dir, d, Due::Before, at, q, &mut self.store);
            let hop = dir.arrive();
            let node = dir.to_node;
            let waits = dir.waits();
            if T::ON {
                self.tap_packet(d, true, hop);
            }
            if !waits {
                self.wake(d);
            }
            self.at_node(node, hop, &mut out);
        }
        progress(1.0);
        self.finish()
    }

    /// Every event but an arrival (timers, wake-ups, samples, starts: a few in a thousand
    /// events), out of line so the arrival's path in `run` keeps its registers.
    #[inline(never)]
    fn dispatch(&mut self, ev: Ev, out: &mut Out) {
        let now = self.now;
        match ev {
            Ev::TxDone(d) => {
                self.net.dirs[d as usize].wake_at = None;
                self.serve(d, Due::AtOrBefore);
                self.wake(d);
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
                self.metrics.on_connect(&mut self.flows[f as usize]);
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
            Ev::End => unreachable!("the run's end is not dispatched"),
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

    /// A packet reached `node`: hand it to its endpoint or forward it.
    fn at_node(&mut self, node: u32, hop: Hop, out: &mut Out) {
        if hop.dst_node == node {
            if let Some(frag) = self.store.frag(hop) {
                if !self.reassemble(frag) {
                    self.store.drop(hop);
                    return;
                }
            }
            // read in place; the slot is freed before anything is sent
            // SAFETY: every hop on the network's links was made by the world's one store.
            let pkt = unsafe { self.store.deliver(hop) };
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
            let ends = (flow.src, flow.dst, flow.encap_bytes, flow.mtu);
            let from_sender_side = if pkt.kind.forward() {
                flow.receiver.on_packet(self.now, pkt, out);
                false
            } else {
                if let Some(r) = self.seqack.as_mut() {
                    r.received(self.now, pkt);
                }
                flow.sender.on_packet(self.now, pkt, out);
                self.metrics.on_ack(flow);
                true
            };
            self.store.drop(hop);
            let (src, dst, encap, mtu) = ends;
            let node = if from_sender_side { src } else { dst };
            self.emit_from(f, node, encap, mtu, from_sender_side, out);
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
        if T::ON {
            self.tap_packet(d, false, hop);
        }
        let now = self.now;
        let (dir, q, store) = self.dir_parts(d);
        serve_dir(dir, d, Due::Before, now, q, store);
        dir.enqueue(hop, now, store);
        if !dir.waits() {
            self.wake(d);
        }
    }

    /// Bring direction `d`'s serialiser up to `now`: every transmission `due` finishes, in
    /// order; each surviving packet goes onto the wire with the next event key, and only the
    /// wire's head is in the heap.
    // Inlined into its callers (an arrival, an offer, a wake-up, a sample): 2-5 % less CPU on
    // bench_sim's cases than the call LLVM chose.
    #[inline(always)]
    fn serve(&mut self, d: u32, due: Due) {
        let now = self.now;
        let (dir, q, store) = self.dir_parts(d);
        serve_dir(dir, d, due, now, q, store);
    }

    /// Direction `d`, the event queue and the packet store, borrowed apart (`serve_dir`).
    #[inline(always)]
    fn dir_parts(&mut self, d: u32) -> (&mut LinkDir, Queue<'_>, &mut PacketStore) {
        let q = Queue {
            arrivals: &mut self.arrivals,
            others: &self.heap,
            seq: &mut self.seq,
            peak: &mut self.peak_pending,
        };
        (&mut self.net.dirs[d as usize], q, &mut self.store)
    }

    /// Direction `d` needs an event at the end of its transmission when nothing on its wire
    /// will bring it up to date before then.
    fn wake(&mut self, d: u32) {
        let dir = &mut self.net.dirs[d as usize];
        if dir.waits() {
            return;
        }
        if let Some(done) = dir.core.service_done() {
            dir.wake_at = Some(done);
            self.schedule(done, Ev::TxDone(d));
        }
    }

    /// Send what an endpoint produced and queue its timers (out of line: timers and
    /// application events; a packet's arrival inlines `emit_from`).
    #[inline(never)]
    fn emit(&mut self, f: u32, sender_side: bool, out: &mut Out) {
        let flow = &self.flows[f as usize];
        let node = if sender_side { flow.src } else { flow.dst };
        let (encap, mtu) = (flow.encap_bytes, flow.mtu);
        self.emit_from(f, node, encap, mtu, sender_side, out);
    }

    /// [`emit`](Self::emit) given the flow's `node` on this side, its encapsulation and MTU,
    /// inlined into the one caller that runs once per packet, a packet's arrival, which has
    /// read them from the flow already.
    #[inline(always)]
    fn emit_from(
        &mut self,
        f: u32,
        node: u32,
        encap: u32,
        mtu: u32,
        sender_side: bool,
        out: &mut Out,
    ) {
        // (the trace records the packets before they leave: sending does not read it)
        if sender_side {
            if let Some(r) = self.seqack.as_mut() {
                for pkt in &out.pkts {
                    r.sent(self.now, pkt);
                }
            }
        }
        for pkt in &out.pkts {
            self.send_via(node, pkt, encap, mtu);
        }
        for &(kind, at) in &out.timers {
            let ev = if kind == TimerKind::DelAck {
                Ev::ReceiverTimer(f)
            } else {
                Ev::SenderTimer(f, kind)
            };
            self.schedule(at.max(self.now), ev);
        }
        out.clear();
    }
}

/// The event queue's parts a direction's serialiser schedules its arrivals in (borrowed
/// apart from the network, so a caller keeps the direction it holds).
struct Queue<'a> {
    arrivals: &'a mut HeldQueue<u32>,
    /// The other events (for the peak: the run's end not counted).
    others: &'a EventQueue<Ev>,
    seq: &'a mut u64,
    peak: &'a mut usize,
}

/// [`World::serve`] on direction `d` held as `dir`.
#[inline(always)]
fn serve_dir(dir: &mut LinkDir, d: u32, due: Due, now: SimTime, q: Queue, store: &mut PacketStore) {
    // (`service_end` is `SimTime::MAX` for no end, which no `now` is above; a wake-up takes
    // the `Option`, exact even at the end of time)
    let next_due = |dir: &LinkDir| match due {
        Due::Before => Some(dir.core.service_end()).filter(|&t| t < now),
        Due::AtOrBefore => dir.core.service_done().filter(|&t| t <= now),
    };
    while let Some(done) = next_due(dir) {
        // A surviving packet's arrival event takes the next sequence number.
        if let Some(at) = dir.finish(done, *q.seq + 1, store) {
            *q.seq += 1;
            if !dir.arrival_scheduled {
                dir.arrival_scheduled = true;
                q.arrivals.push(events::key(at, *q.seq), d);
                *q.peak = (*q.peak).max(q.arrivals.len() + q.others.len() - 1);
            }
        }
    }
}

/// Run a resolved scenario to the end.
pub fn run(r: &Resolved, progress: &mut dyn FnMut(f64) -> bool) -> Result<SimOutput, ConfigError> {
    let mut world = World::new(r)?;
    world.reserve_series()?;
    Ok(world.run(progress))
}
