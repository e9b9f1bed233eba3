//! Segments out: what the sender and receiver queued, as wire segments with live sequence
//! numbers, flags and options (`tcp_transmit_skb`, `tcp_options_write`).

use std::cmp::Reverse;

use satcc_core::SimTime;

use super::{timer_code, Endpoint, State, ACK, CWR, ECE, FIN, ISS, PSH, SYN, T_FIN};
use crate::packet::{Ecn, Kind, Packet};
use crate::tcp::sender::Sender;
use crate::tcp::Out;

/// A TCP option as written on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireOpt {
    Nop,
    Eol,
    Mss(u32),
    Wscale(u32),
    SackOk,
    /// TSval, TSecr.
    Ts(u32, u32),
    /// SACK blocks (live sequence numbers).
    Sack(Vec<(u32, u32)>),
}

/// IP ECN codepoint of a segment on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireEcn {
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

/// A segment on the wire (live 32-bit sequence numbers, the window field unscaled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireSeg {
    pub t: SimTime,
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
    pub win: u32,
    pub len: u32,
    pub opts: Vec<WireOpt>,
    pub ecn: WireEcn,
}

impl Endpoint {
    /// Turn what the sender and receiver queued into wire segments at `now`; queue their
    /// timers; send a pending FIN once all data is out.
    pub(super) fn flush(&mut self) {
        let now = self.now;
        let pkts = std::mem::take(&mut self.scratch.pkts);
        // New data segments sent together, counted in pairs (see `wire`'s PSH).
        let mut burst = 0u32;
        for p in &pkts {
            let mut ack = None;
            if p.kind == Kind::Data && p.len > 0 {
                self.last_data_sent = now; // tcp_event_data_sent: lsndtime
                if self.fin_queued && !self.fin_sent && p.seq + p.len as u64 == self.written {
                    // tcp_send_fin: the FIN joins the unsent last segment.
                    self.fin_sent = true;
                    self.fin_on_data = true;
                    self.state = match self.state {
                        State::CloseWait => State::LastAck,
                        _ => State::FinWait1,
                    };
                }
                // A data segment is an ACK too: its window is selected, it carries the
                // receiver's SACK blocks (tcp_established_options), and sending it ends a
                // pending delayed ACK (tcp_event_ack_sent). The receiver builds that ACK;
                // its fields go on the data segment and the ACK itself is dropped.
                if let Some(r) = self.receiver.as_mut() {
                    let mut o = Out::default();
                    r.send_ack(now, &mut o);
                    ack = o.pkts.pop();
                }
            }
            let pair_end = p.kind == Kind::Data && p.len > 0 && !p.retrans && {
                burst += 1;
                burst.is_multiple_of(2)
            };
            if self.probe_push && p.kind == Kind::Data && p.len > 0 {
                self.probe_push_ends.push(p.seq + p.len as u64);
            }
            let seg = self.wire(now, p, ack.as_ref(), pair_end);
            if !self.local_drop {
                self.out.push_back(seg);
            }
        }
        self.scratch.pkts = pkts;
        self.scratch.pkts.clear();
        for &(kind, at) in &self.scratch.timers {
            self.timer_seq += 1;
            self.timers
                .push(Reverse((at, self.timer_seq, timer_code(kind))));
        }
        self.scratch.timers.clear();
        if let Some(s) = self.sender.as_ref() {
            let una = s.info().snd_una;
            while self.push_marks.front().is_some_and(|&m| m <= una) {
                self.push_marks.pop_front();
            }
        }
        let info = self.sender.as_ref().map(Sender::info);
        if self.fin_queued
            && !self.fin_sent
            && self.state != State::Closed
            && info.is_some_and(|i| i.snd_nxt >= self.written)
        {
            self.fin_sent = true;
            self.state = match self.state {
                State::CloseWait => State::LastAck,
                _ => State::FinWait1,
            };
            let seg = self.fin_segment();
            if !self.local_drop {
                self.out.push_back(seg);
            }
        }
        // The FIN left alone in flight (all data acknowledged) is retransmitted on its
        // own timer; the sender's timers cover it while data is outstanding.
        if self.fin_in_flight()
            && self.fin_timer.is_none()
            && info.is_some_and(|i| i.snd_una >= self.written)
        {
            let at = now + self.fin_timeout();
            self.fin_timer = Some(self.arm(T_FIN, at));
        }
        self.chrono_update(info);
    }

    pub(super) fn ack_field(&self) -> u32 {
        let rcv_nxt = self.receiver.as_ref().map_or(0, |r| r.rcv_nxt);
        self.irs
            .wrapping_add(1)
            .wrapping_add(rcv_nxt as u32)
            .wrapping_add(self.fin_rcvd as u32)
    }

    pub(super) fn win_field(&self) -> u32 {
        let r = self.receiver.as_ref();
        let wnd = r.map_or(0, |r| r.rcv_wnd());
        let ws = r.map_or(0, |r| r.rcv_wscale());
        (wnd >> ws).min(65_535) as u32
    }

    pub(super) fn ts_opts(&self, now: SimTime, p: Option<&Packet>) -> Vec<WireOpt> {
        if !self.cfg.timestamps {
            return Vec::new();
        }
        let (val, ecr) = match p {
            Some(p) => (p.tsval, p.tsecr),
            None => (self.ts_clock(now) as u64, self.ts_recent as u64),
        };
        vec![
            WireOpt::Nop,
            WireOpt::Nop,
            WireOpt::Ts(val as u32, ecr as u32),
        ]
    }

    /// A packet of the sender or receiver as a wire segment; `ack` is the ACK the receiver
    /// built for a data segment to carry; `pair_end`: a new data segment sent second of a
    /// pair in a burst (PSH below).
    pub(super) fn wire(
        &self,
        now: SimTime,
        p: &Packet,
        ack: Option<&Packet>,
        pair_end: bool,
    ) -> WireSeg {
        let snd_base = ISS.wrapping_add(1);
        let rcv_base = self.irs.wrapping_add(1);
        match p.kind {
            Kind::SynAck => {
                let c = &self.cfg;
                let ws = self.receiver.as_ref().map_or(0, |r| r.rcv_wscale());
                let mut opts = vec![WireOpt::Mss(self.advmss())];
                opts.extend(self.syn_options(
                    c.timestamps,
                    c.sack,
                    c.window_scaling,
                    ws,
                    (p.tsval as u32, p.tsecr as u32),
                ));
                WireSeg {
                    t: now,
                    flags: SYN | ACK | if p.ece { ECE } else { 0 },
                    seq: ISS,
                    ack: rcv_base,
                    win: p.rwnd.min(65_535) as u32,
                    len: 0,
                    opts,
                    ecn: WireEcn::NotEct,
                }
            }
            Kind::Data => {
                let end = p.seq + p.len as u64;
                let mut flags = ACK;
                // tcp_mark_push: the buffer holding a write's last byte carries PSH. That buffer
                // leaves in device-segmented pieces of two segments (`tcp_tso_autosize`'s
                // minimum at drill rates) counted from the first segment sent together, and
                // the kernel here puts PSH on the last segment of each piece too (measured:
                // deviation 5).
                let k = self.push_marks.partition_point(|&m| m <= p.seq);
                // `tcp_write_wakeup` marks the new data a zero-window probe sends PSH.
                if (self.probe_push && p.len > 0)
                    || self
                        .push_marks
                        .get(k)
                        .is_some_and(|&m| m <= end || pair_end)
                {
                    flags |= PSH;
                }
                if self.fin_on_data && end == self.written {
                    flags |= FIN; // tcp_send_fin: the FIN rides on the last segment
                }
                if p.cwr {
                    flags |= CWR;
                }
                let mut opts = self.ts_opts(now, Some(p));
                let mut win = self.win_field();
                if let Some(a) = ack {
                    let ws = self.receiver.as_ref().map_or(0, |r| r.rcv_wscale());
                    win = (a.rwnd >> ws).min(65_535) as u32;
                    if a.ece {
                        flags |= ECE;
                    }
                    self.push_sack_opt(&mut opts, a);
                }
                WireSeg {
                    t: now,
                    flags,
                    seq: snd_base.wrapping_add(p.seq as u32),
                    ack: self.ack_field(),
                    win,
                    len: p.len,
                    opts,
                    ecn: if p.ecn == Ecn::NotEct {
                        WireEcn::NotEct
                    } else {
                        WireEcn::Ect0
                    },
                }
            }
            _ => {
                // A pure ACK from the receiver.
                let snd_nxt = self.sender.as_ref().map_or(0, |s| s.info().snd_nxt);
                let ws = self.receiver.as_ref().map_or(0, |r| r.rcv_wscale());
                let mut opts = self.ts_opts(now, Some(p));
                self.push_sack_opt(&mut opts, p);
                WireSeg {
                    t: now,
                    flags: ACK | if p.ece { ECE } else { 0 },
                    seq: snd_base
                        .wrapping_add(snd_nxt as u32)
                        .wrapping_add(self.fin_sent as u32),
                    ack: self.ack_field(),
                    win: (p.rwnd >> ws).min(65_535) as u32,
                    len: 0,
                    opts,
                    ecn: WireEcn::NotEct,
                }
            }
        }
    }

    /// The SACK option (`tcp_options_write`: NOP, NOP, SACK) of an ACK's blocks, if any.
    pub(super) fn push_sack_opt(&self, opts: &mut Vec<WireOpt>, p: &Packet) {
        if p.nsack == 0 {
            return;
        }
        let rcv_base = self.irs.wrapping_add(1);
        let blocks = p
            .sack_blocks()
            .iter()
            .map(|&(a, b)| {
                (
                    rcv_base.wrapping_add(a as u32),
                    rcv_base.wrapping_add(b as u32),
                )
            })
            .collect();
        opts.extend([WireOpt::Nop, WireOpt::Nop, WireOpt::Sack(blocks)]);
    }
}

/// The timestamps option of a segment: (TSval, TSecr).
pub(super) fn ts_of(seg: &WireSeg) -> Option<(u32, u32)> {
    seg.opts.iter().find_map(|o| match o {
        WireOpt::Ts(v, e) => Some((*v, *e)),
        _ => None,
    })
}
