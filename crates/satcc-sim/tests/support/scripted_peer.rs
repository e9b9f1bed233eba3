//! The simulator's own sender (`tcp::sender::Sender`, the code scenarios run) with a scripted
//! network and receiver in place of the world: the script says which of the segments in flight
//! arrive, in which order, which are dropped or CE-marked, and how much time passes; the peer
//! answers each arrival with one ACK (cumulative ACK, SACK blocks with the arriving segment's
//! block first and a D-SACK for a duplicate, the segment's TSval echoed, ECE for a CE mark) and
//! fires the sender's timers (RTO, TLP, RACK, pacing) in time order when time passes. The
//! sender is driven only through its public API, as `tcp::endpoint` drives it for the drill.
//!
//! After the handshake and after every packet the sender handles and every timer it fires, one
//! [`Step`] of its state is recorded, so properties can look at each transition (a loss entering Recovery, an ACK in
//! slow start) one ACK at a time.

// Shared by several test binaries, each using part of it.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use satcc_cc::Params;
use satcc_core::direction::{self, Direction, LinkPacket};
use satcc_core::dirspec::{self, QueueSpec};
use satcc_core::link::{ConstantLink, LinkState};
use satcc_core::models::lfn::{Lfn, LfnSpec, Police};
use satcc_core::models::{LinkBehaviour, Seeds};
use satcc_core::scenario::Flow;
use satcc_core::{SimDuration, SimTime};
use satcc_sim::packet::{Ecn, Kind, Packet};
use satcc_sim::tcp::sender::Sender;
use satcc_sim::tcp::{Out, TimerKind};

/// Bytes the receiver advertises (already scaled): bounds the work of a run (Hybla's slow
/// start adds up to 65535 packets per ACK).
const RWND: u64 = 4 << 20;
/// SACK blocks an ACK carries with timestamps on (40 option bytes).
const SACK_BLOCKS: usize = 3;

/// One thing the script does.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    /// The oldest `n` segments in the network arrive in order, `gap_us` apart.
    Deliver { n: u8, gap_us: u32 },
    /// The oldest `n` segments in the network are dropped.
    Drop { n: u8 },
    /// The second-oldest segment overtakes the oldest (reordering).
    Swap,
    /// The oldest segment arrives CE-marked.
    Ce,
    /// The last ACK is sent again (a duplicate).
    DupAck,
    /// `us` pass with nothing arriving: due timers fire.
    Idle { us: u32 },
}

/// The sender's state after one packet or timer it handled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// A timer fired (else an ACK arrived).
    pub timer: bool,
    /// The ACK carried ECE.
    pub ece: bool,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// `TCP_CA_*`: Open 0, Disorder 1, CWR 2, Recovery 3, Loss 4.
    pub ca_state: u8,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    pub total_retrans: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub delivered: u64,
    pub pacing_rate_bps: u64,
}

/// A connection of one algorithm and its scripted peer.
pub struct Peer {
    pub s: Sender,
    pub now: SimTime,
    timers: Vec<(TimerKind, SimTime)>,
    /// Segments in the network, oldest first.
    pipe: VecDeque<Packet>,
    rcv_nxt: u64,
    /// Out-of-order data held by the receiver: disjoint [start, end), sorted.
    ooo: Vec<(u64, u64)>,
    last_ack: Option<Packet>,
    ecn: bool,
    pub trace: Vec<Step>,
}

impl Peer {
    /// A bulk flow of `cca` with `params` (MSS `mss`, initial window `iw`), its handshake
    /// answered after `rtt`; `ecn` negotiates ECN.
    pub fn connect(
        cca: &str,
        params: &Params,
        mss: u32,
        iw: u32,
        rtt: SimDuration,
        ecn: bool,
    ) -> Peer {
        // the sender's settings (its algorithm, built from `params`, is handed over)
        let mut cfg = Flow::bulk(0, 0, 1, cca);
        cfg.mss = mss;
        cfg.initial_cwnd = iw;
        cfg.ecn = ecn;
        let cc = satcc_cc::lookup(cca, params).expect("the algorithm builds");
        let mut s = Sender::new(&cfg, 1, cc);
        let mut out = Out::default();
        s.connect(SimTime::ZERO, &mut out);
        let syn = out
            .pkts
            .iter()
            .find(|p| p.kind == Kind::Syn)
            .copied()
            .expect("connect sends a SYN");
        let mut synack = Packet::new(0, Kind::SynAck, 0);
        synack.rwnd = RWND;
        synack.tsval = 1;
        synack.tsecr = syn.tsval;
        synack.ece = ecn;
        let mut peer = Peer {
            s,
            now: SimTime::ZERO + rtt,
            timers: Vec::new(),
            pipe: VecDeque::new(),
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_ack: None,
            ecn,
            trace: Vec::new(),
        };
        out.clear();
        peer.s.on_packet(peer.now, &synack, &mut out);
        peer.take(out);
        peer.record(false, false);
        peer
    }

    fn take(&mut self, out: Out) {
        for p in out.pkts {
            if p.kind == Kind::Data && p.len > 0 {
                self.pipe.push_back(p);
            }
        }
        self.timers.extend(out.timers);
    }

    fn record(&mut self, timer: bool, ece: bool) {
        let i = self.s.info();
        self.trace.push(Step {
            timer,
            ece,
            cwnd: i.cwnd,
            ssthresh: i.ssthresh,
            ca_state: i.ca_state,
            packets_out: i.packets_out,
            sacked_out: i.sacked_out,
            lost_out: i.lost_out,
            retrans_out: i.retrans_out,
            total_retrans: i.total_retrans,
            snd_una: i.snd_una,
            snd_nxt: i.snd_nxt,
            delivered: i.delivered,
            pacing_rate_bps: i.pacing_rate_bps,
        });
    }

    /// Fire every timer due by `until` in time order (stale ones included, as the event loop
    /// does: the sender ignores them), then move the clock to `until`.
    fn advance_to(&mut self, until: SimTime) {
        while let Some(k) = (0..self.timers.len())
            .filter(|&k| self.timers[k].1 <= until)
            .min_by_key(|&k| self.timers[k].1)
        {
            let (kind, at) = self.timers.swap_remove(k);
            self.now = self.now.max(at);
            let mut out = Out::default();
            self.s.on_timer(self.now, kind, &mut out);
            self.take(out);
            self.record(true, false);
        }
        self.now = self.now.max(until);
    }

    /// The receiver takes `seg` and answers with one ACK.
    fn arrive(&mut self, seg: Packet, ce: bool) {
        let ack = self.receive(seg, ce);
        self.deliver_ack(ack);
    }

    /// The receiver takes `seg`: the ACK it answers with.
    fn receive(&mut self, seg: Packet, ce: bool) -> Packet {
        let (start, end) = (seg.seq, seg.seq + u64::from(seg.len));
        let mut dsack = None;
        if end <= self.rcv_nxt || self.ooo.iter().any(|&(a, b)| a <= start && end <= b) {
            dsack = Some((start, end));
        } else if start <= self.rcv_nxt {
            self.rcv_nxt = end;
            while let Some(&(a, b)) = self.ooo.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.remove(0);
            }
        } else {
            self.ooo.push((start, end));
            self.ooo.sort_unstable();
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ooo.len());
            for &(a, b) in &self.ooo {
                match merged.last_mut() {
                    Some(last) if a <= last.1 => last.1 = last.1.max(b),
                    _ => merged.push((a, b)),
                }
            }
            self.ooo = merged;
        }
        let mut ack = Packet::new(0, Kind::Ack, 0);
        ack.ack = self.rcv_nxt;
        ack.rwnd = RWND;
        ack.tsval = 1 + self.now.as_nanos() / 1_000_000;
        ack.tsecr = seg.tsval;
        ack.ece = ce && self.ecn;
        // RFC 2018: the block holding the arriving segment first (a D-SACK instead for a
        // duplicate, RFC 2883), then the others.
        let mut blocks: Vec<(u64, u64)> = dsack.into_iter().collect();
        if let Some(&own) = self.ooo.iter().find(|&&(a, b)| a <= start && end <= b) {
            blocks.push(own);
        }
        for &b in self.ooo.iter().rev() {
            if !blocks.contains(&b) {
                blocks.push(b);
            }
        }
        blocks.truncate(SACK_BLOCKS);
        for (k, &b) in blocks.iter().enumerate() {
            ack.sack[k] = b;
        }
        ack.nsack = blocks.len() as u8;
        ack
    }

    fn deliver_ack(&mut self, ack: Packet) {
        let mut out = Out::default();
        self.s.on_packet(self.now, &ack, &mut out);
        self.last_ack = Some(ack);
        self.take(out);
        self.record(false, ack.ece);
    }

    /// Play one event of the script.
    pub fn play(&mut self, ev: Ev) {
        match ev {
            Ev::Deliver { n, gap_us } => {
                for _ in 0..n {
                    self.advance_to(self.now + SimDuration::from_micros(u64::from(gap_us)));
                    let Some(seg) = self.pipe.pop_front() else {
                        break;
                    };
                    let ce = seg.ecn == Ecn::Ce;
                    self.arrive(seg, ce);
                }
            }
            Ev::Drop { n } => {
                for _ in 0..n {
                    self.pipe.pop_front();
                }
            }
            Ev::Swap => {
                if self.pipe.len() >= 2 {
                    self.pipe.swap(0, 1);
                }
            }
            Ev::Ce => {
                if let Some(seg) = self.pipe.pop_front() {
                    self.arrive(seg, true);
                }
            }
            Ev::DupAck => {
                if let Some(ack) = self.last_ack {
                    self.deliver_ack(ack);
                }
            }
            Ev::Idle { us } => {
                self.advance_to(self.now + SimDuration::from_micros(u64::from(us)));
            }
        }
    }
}

/// The one bottleneck of a [`PathPeer`].
#[derive(Clone, Copy, Debug)]
pub struct Bottleneck {
    /// Serialisation rate of the data direction, bit/s.
    pub rate_bps: u64,
    /// Base RTT: propagation there (half) and back (the rest); ACKs queue nowhere.
    pub rtt: SimDuration,
    /// Drop-tail queue, packets waiting (the one in service not counted).
    pub queue_pkts: u64,
    /// A token-bucket policer on the bottleneck's output (satcc-core's LFN model, study 003's
    /// hop): (rate bit/s, burst bytes); a segment the tokens do not cover is dropped.
    pub police: Option<(u64, u64)>,
}

/// A segment on the path and when the sender sent it.
struct OnPath {
    pkt: Packet,
    sent: SimTime,
}

impl LinkPacket for OnPath {
    fn size_bytes(&self) -> u64 {
        u64::from(self.pkt.wire_bytes)
    }
    fn mark_ce(&mut self) -> bool {
        let ect = self.pkt.ecn == Ecn::Ect;
        if ect {
            self.pkt.ecn = Ecn::Ce;
        }
        ect
    }
}

/// Timer kinds by index, for the timer heap.
const TIMER_KINDS: [TimerKind; 5] = [
    TimerKind::Rto,
    TimerKind::Reo,
    TimerKind::Tlp,
    TimerKind::Pace,
    TimerKind::DelAck,
];

/// The simulator's sender ([`Peer`]'s) on a path with one bottleneck: its segments go through
/// satcc-core's link direction (`Direction`: drop-tail queue, serialiser, optional policer,
/// propagation; the code the simulator's links and satcc-linkd run), the peer's receiver
/// answers each arriving segment with one ACK, and the ACK reaches the sender after the
/// return propagation. Events run in time order; the caller sees the sender after each ACK.
/// Unlike the world (tests/common.rs `dumbbell`), the path can change mid-run (a longer
/// return route, a return-path outage) and every ACK can be observed. The handshake takes
/// exactly one base RTT (a SYN is not serialised), so the sender's first RTT sample is a
/// little below every data segment's.
pub struct PathPeer {
    pub peer: Peer,
    link: Direction<OnPath>,
    /// ACKs on their way back: arrival, the ACK, when the segment it answers was sent.
    acks: VecDeque<(SimTime, Packet, SimTime)>,
    /// Timers pending: (when, order set, kind index); stale ones fire and are ignored.
    timers: BinaryHeap<Reverse<(SimTime, u64, usize)>>,
    timer_seq: u64,
    /// Return propagation of every later ACK: set it to change the route (the ACKs stay in
    /// order: one never overtakes an earlier one).
    pub back: SimDuration,
    /// While set, every ACK the receiver sends is lost (an outage of the return path only).
    pub acks_lost: bool,
    /// Time from sending the segment the last ACK answered to that ACK's arrival: the
    /// sender's RTT sample for a segment sent once.
    pub last_rtt: Option<SimDuration>,
}

impl PathPeer {
    /// A bulk flow of `cca` (MSS `mss`, initial window `iw`) on `path`, after a handshake of
    /// one base RTT (the sender's first RTT sample).
    pub fn connect(cca: &str, params: &Params, mss: u32, iw: u32, path: Bottleneck) -> PathPeer {
        let peer = Peer::connect(cca, params, mss, iw, path.rtt, false);
        let there = path.rtt.div_u64(2);
        let state = LinkState {
            rate_bps: path.rate_bps,
            delay: there,
            loss: 0.0,
        };
        let model: Box<dyn LinkBehaviour> = match path.police {
            None => Box::new(ConstantLink(state)),
            Some((rate, burst)) => Box::new(
                Lfn::new(
                    LfnSpec {
                        rate_bps: state.rate_bps,
                        delay: state.delay,
                        loss: state.loss,
                        police: Some(Police {
                            rate_bps: (rate, rate),
                            burst_bytes: burst,
                            redraw: SimDuration::from_secs(1),
                        }),
                    },
                    Seeds {
                        seed: 1,
                        link: 0,
                        dir: 0,
                    },
                )
                .expect("a valid policer"),
            ),
        };
        let cfg = dirspec::Direction::new(
            state.rate_bps,
            state.delay.as_nanos(),
            0.0,
            QueueSpec::Packets(path.queue_pkts),
        );
        let mut p = PathPeer {
            peer,
            link: Direction::new(model, cfg, state, direction::stream(1, 0)),
            acks: VecDeque::new(),
            timers: BinaryHeap::new(),
            timer_seq: 0,
            back: path.rtt - there,
            acks_lost: false,
            last_rtt: None,
        };
        p.collect();
        p
    }

    /// Counters of the bottleneck (queue drops, policer drops as `drops_random`).
    pub fn link_counters(&self) -> direction::Counters {
        self.link.counters()
    }

    /// Segments waiting in the bottleneck's queue.
    pub fn queue_pkts(&self) -> u64 {
        self.link.queue_len().0
    }

    /// Take what the sender just emitted: segments into the bottleneck, timers into the heap.
    fn collect(&mut self) {
        let now = self.peer.now;
        for pkt in std::mem::take(&mut self.peer.pipe) {
            self.link.offer(OnPath { pkt, sent: now }, now, drop);
        }
        for (kind, at) in std::mem::take(&mut self.peer.timers) {
            let k = TIMER_KINDS.iter().position(|&t| t == kind).expect("a kind");
            self.timer_seq += 1;
            self.timers.push(Reverse((at, self.timer_seq, k)));
        }
        // Only the newest step is kept (runs here are long).
        if self.peer.trace.len() > 1 {
            self.peer.trace.drain(..self.peer.trace.len() - 1);
        }
    }

    /// Handle the next event due by `end`: a transmission ending, a segment reaching the
    /// receiver, an ACK reaching the sender, a timer. Returns what happened, or `None` (the
    /// clock then moves to `end`).
    pub fn step(&mut self, end: SimTime) -> Option<Happened> {
        let service = self.link.service_done();
        let arrival = self.link.next_arrival();
        let ack = self.acks.front().map(|a| a.0);
        let timer = self.timers.peek().map(|t| t.0 .0);
        let Some(t) = [service, arrival, ack, timer]
            .into_iter()
            .flatten()
            .min()
            .filter(|&t| t <= end)
        else {
            self.peer.now = self.peer.now.max(end);
            return None;
        };
        self.peer.now = self.peer.now.max(t);
        let now = self.peer.now;
        if service == Some(t) {
            self.link.finish(t, |_| SimDuration::ZERO);
            Some(Happened::Link)
        } else if arrival == Some(t) {
            let seg = self.link.arrive();
            let ce = seg.pkt.ecn == Ecn::Ce;
            let ack = self.peer.receive(seg.pkt, ce);
            if self.acks_lost {
                return Some(Happened::Link);
            }
            let mut at = now + self.back;
            if let Some(&(last, ..)) = self.acks.back() {
                at = at.max(last);
            }
            self.acks.push_back((at, ack, seg.sent));
            Some(Happened::Link)
        } else if ack == Some(t) {
            let (_, ack, sent) = self.acks.pop_front().expect("an ACK due");
            self.last_rtt = Some(now.saturating_since(sent));
            self.peer.deliver_ack(ack);
            self.collect();
            Some(Happened::Ack)
        } else {
            let Reverse((_, _, k)) = self.timers.pop().expect("a timer due");
            let mut out = Out::default();
            self.peer.s.on_timer(now, TIMER_KINDS[k], &mut out);
            self.peer.take(out);
            self.peer.record(true, false);
            self.collect();
            Some(Happened::Timer)
        }
    }

    /// Run until `end`, calling `observe` after every ACK the sender handles.
    pub fn run_until(&mut self, end: SimTime, mut observe: impl FnMut(&PathPeer)) {
        while let Some(h) = self.step(end) {
            if h == Happened::Ack {
                observe(self);
            }
        }
    }
}

/// What one [`PathPeer::step`] handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Happened {
    /// The bottleneck moved a segment (serialised it, or it reached the receiver).
    Link,
    /// An ACK reached the sender.
    Ack,
    /// One of the sender's timers fired.
    Timer,
}
