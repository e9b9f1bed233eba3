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

use std::collections::VecDeque;

use satcc_cc::Params;
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
        self.deliver_ack(ack);
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
