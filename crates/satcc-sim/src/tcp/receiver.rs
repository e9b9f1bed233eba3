//! The receiving end of a flow, as Linux's receive path behaves towards the sender:
//! in-order delivery with an out-of-order queue, SACK blocks (RFC 2018) most recent first,
//! DSACK for duplicates (RFC 2883), delayed ACKs (Linux `__tcp_ack_snd_check`: ACK once
//! more than one full segment is unacknowledged, else after the 40 ms delayed-ACK timer;
//! quick-ACK mode for the first 16 segments; immediate ACK for out-of-order data and for
//! data that fills a hole), timestamp echo (RFC 7323 §4.3 via `tcp_replace_ts_recent`)
//! and ECN echo: classic RFC 3168 (ECE until CWR) or DCTCP's exact echo (RFC 8257 §3.2).
//!
//! Deviations from Linux: the advertised window is the configured cap from the start (no
//! receive-buffer autotuning, `tcp_rcv_space_adjust`); the delayed-ACK timeout is a fixed
//! 40 ms (Linux adapts `ato` between 40 ms and 200 ms).

use std::collections::BTreeMap;

use satcc_core::{SimDuration, SimTime};

use super::timer::Timer;
use super::{Out, TimerKind};
use crate::packet::{self, Ecn, Kind, Packet};

/// Linux `TCP_DELACK_MIN` / `TCP_ATO_MIN`: 40 ms.
pub const DELACK: SimDuration = SimDuration::from_millis(40);
/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// Largest window without window scaling.
pub const MAX_UNSCALED_WINDOW: u64 = 65_535;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnEcho {
    /// RFC 3168: set ECE on every ACK from a CE mark until a CWR arrives.
    Classic,
    /// RFC 8257 §3.2: ECE reflects exactly whether the acknowledged data was CE-marked.
    Dctcp,
}

pub struct Receiver {
    pub flow: u32,
    /// Node of the sender (where ACKs go).
    peer: u32,
    mss: u64,
    timestamps: bool,
    sack: bool,
    delayed_ack: bool,
    window: u64,
    ecn: Option<EcnEcho>,
    pub established: bool,
    pub rcv_nxt: u64,
    /// `tp->rcv_wup`: rcv_nxt when the last ACK was sent.
    rcv_wup: u64,
    /// Out-of-order data above rcv_nxt: disjoint byte ranges.
    ofo: BTreeMap<u64, u64>,
    /// SACK blocks, most recently changed first.
    sack_list: Vec<(u64, u64)>,
    dsack: Option<(u64, u64)>,
    ts_recent: u64,
    quickack: u32,
    pub delack: Timer,
    /// Classic ECN: echo ECE until CWR. DCTCP: CE state of the last data segment.
    ece: bool,
    /// Bytes delivered in order to the application.
    pub delivered_bytes: u64,
    pub delivered_in_bin: u64,
    /// Payload bytes of every data segment that arrived in the bin, in order or not,
    /// duplicates included (what the link carried to the receiver).
    pub received_in_bin: u64,
    /// When the receiver first held `size` bytes.
    pub completed_at: Option<SimTime>,
    size: Option<u64>,
}

impl Receiver {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        peer: u32,
        mss: u32,
        timestamps: bool,
        sack: bool,
        delayed_ack: bool,
        window: u64,
        ecn: Option<EcnEcho>,
        size: Option<u64>,
    ) -> Self {
        Receiver {
            flow,
            peer,
            mss: mss as u64,
            timestamps,
            sack,
            delayed_ack,
            window,
            ecn,
            established: false,
            rcv_nxt: 0,
            rcv_wup: 0,
            ofo: BTreeMap::new(),
            sack_list: Vec::new(),
            dsack: None,
            ts_recent: 0,
            quickack: MAX_QUICKACKS,
            delack: Timer::default(),
            ece: false,
            delivered_bytes: 0,
            delivered_in_bin: 0,
            received_in_bin: 0,
            completed_at: None,
            size,
        }
    }

    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        match pkt.kind {
            Kind::Syn => self.on_syn(pkt, out),
            Kind::Data => self.on_data(now, pkt, out),
            _ => {}
        }
    }

    fn on_syn(&mut self, pkt: &Packet, out: &mut Out) {
        // Answer every SYN (a retransmitted SYN means our SYN-ACK was lost).
        let mut p = Packet::new(self.flow, Kind::SynAck, self.peer);
        p.wire_bytes = packet::IP_HEADER + packet::TCP_HEADER + if self.timestamps { packet::SYN_OPTIONS } else { 12 };
        p.tsecr = pkt.tsval;
        p.rwnd = self.window.min(MAX_UNSCALED_WINDOW); // SYN windows are never scaled (RFC 7323 §2.2)
        p.ece = pkt.ece && self.ecn.is_some(); // ECN-setup SYN-ACK
        out.pkts.push(p);
    }

    fn on_data(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        self.established = true;
        self.received_in_bin += pkt.len as u64;
        let (seq, end) = (pkt.seq, pkt.seq + pkt.len as u64);
        // RFC 7323 §4.3 as Linux: remember TSval of a segment at or before the last ACK point.
        if self.timestamps && seq <= self.rcv_wup {
            self.ts_recent = pkt.tsval;
        }
        let mut ack_now = !self.delayed_ack || self.quickack > 0;
        if let Some(mode) = self.ecn {
            let ce = pkt.ecn == Ecn::Ce;
            match mode {
                EcnEcho::Classic => {
                    if pkt.cwr {
                        self.ece = false; // tcp_ecn_accept_cwr
                    }
                    if ce {
                        self.ece = true; // TCP_ECN_DEMAND_CWR
                        ack_now = true; // tcp_ecn_check_ce → quick ACK
                    }
                }
                EcnEcho::Dctcp => {
                    if ce != self.ece {
                        // dctcp_ece_ack_update: flush a delayed ACK with the old CE state.
                        if self.delack.is_armed() {
                            self.send_ack(now, out);
                        }
                        self.ece = ce;
                        ack_now = true;
                    }
                }
            }
        }
        if end <= self.rcv_nxt {
            // Entirely old: a spurious retransmission. DSACK it at once (RFC 2883 §4.1).
            if self.sack {
                self.dsack = Some((seq, end));
            }
            self.send_ack(now, out);
            return;
        }
        if seq <= self.rcv_nxt {
            let had_holes = !self.ofo.is_empty();
            self.advance(now, end);
            if had_holes {
                ack_now = true; // filled (part of) a hole: RFC 5681 §4.2
            }
            if !self.ofo.is_empty() || (self.rcv_nxt - self.rcv_wup) > self.mss {
                ack_now = true;
            }
        } else {
            self.insert_ofo(seq, end);
            ack_now = true; // out of order: immediate duplicate ACK with SACK
        }
        if ack_now {
            self.send_ack(now, out);
        } else if !self.delack.is_armed() {
            if let Some(at) = self.delack.set(now + DELACK) {
                out.timers.push((TimerKind::DelAck, at));
            }
        }
    }

    fn advance(&mut self, now: SimTime, end: u64) {
        let before = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.max(end);
        while let Some((&s, &e)) = self.ofo.iter().next() {
            if s > self.rcv_nxt {
                break;
            }
            self.ofo.remove(&s);
            self.rcv_nxt = self.rcv_nxt.max(e);
        }
        let rcv_nxt = self.rcv_nxt;
        self.sack_list.retain(|&(_, e)| e > rcv_nxt);
        let n = self.rcv_nxt - before;
        self.delivered_bytes += n;
        self.delivered_in_bin += n;
        if self.completed_at.is_none() && self.size.is_some_and(|s| self.delivered_bytes >= s) {
            self.completed_at = Some(now);
        }
    }

    fn insert_ofo(&mut self, seq: u64, end: u64) {
        let (mut lo, mut hi) = (seq, end);
        let mut dup = false;
        // Merge with overlapping or adjacent ranges.
        let overlapping: Vec<(u64, u64)> = self
            .ofo
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= seq)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in overlapping {
            if s <= seq && e >= end {
                dup = true;
            }
            lo = lo.min(s);
            hi = hi.max(e);
            self.ofo.remove(&s);
        }
        self.ofo.insert(lo, hi);
        if dup && self.sack {
            self.dsack = Some((seq, end));
        }
        // The block containing this segment moves to the front (RFC 2018 §4).
        self.sack_list.retain(|&(s, e)| e < lo || s > hi);
        self.sack_list.insert(0, (lo, hi));
        self.sack_list.truncate(packet::MAX_SACK_BLOCKS);
    }

    /// Build and send an ACK for everything received so far.
    pub fn send_ack(&mut self, now: SimTime, out: &mut Out) {
        let mut p = Packet::new(self.flow, Kind::Ack, self.peer);
        p.ack = self.rcv_nxt;
        p.rwnd = self.window;
        let mut opt = 0;
        if self.timestamps {
            // The receiver's own TSval clock (ms, as Linux's TCP_TS_HZ), read by TCP-LP.
            p.tsval = now.as_nanos() / 1_000_000 + 1;
            p.tsecr = self.ts_recent;
            opt += packet::TS_OPTION;
        }
        if self.sack {
            let max_blocks = if self.timestamps { 3 } else { 4 };
            let mut n = 0;
            if let Some(d) = self.dsack.take() {
                p.sack[n] = d;
                n += 1;
            }
            for &b in &self.sack_list {
                if n == max_blocks {
                    break;
                }
                p.sack[n] = b;
                n += 1;
            }
            p.nsack = n as u8;
            if n > 0 {
                opt += packet::SACK_OPTION_BASE + packet::SACK_BLOCK * n as u32;
            }
        }
        p.wire_bytes += opt;
        p.ece = self.ece;
        self.rcv_wup = self.rcv_nxt;
        self.quickack = self.quickack.saturating_sub(1);
        self.delack.clear();
        out.pkts.push(p);
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Out) {
        if self.rcv_nxt > self.rcv_wup || !self.ofo.is_empty() {
            self.send_ack(now, out);
        }
    }
}
