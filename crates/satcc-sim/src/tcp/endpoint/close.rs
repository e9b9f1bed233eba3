//! Closing and resets: FIN, `close`/`shutdown`, the lone FIN's retransmissions, RST in and
//! out, challenge ACKs (`tcp_close`, `tcp_send_fin`, `tcp_reset`, `tcp_v4_send_reset`).

use satcc_core::SimDuration;

use super::{
    Endpoint, SockErr, State, WireEcn, WireSeg, ACK, FIN, INVALID_RATELIMIT, ISS, RST, RTO_MAX,
    SYN, T_FIN,
};

impl Endpoint {
    /// `shutdown(SHUT_WR)`: send a FIN after the data (`tcp_shutdown`, `tcp_send_fin`); in
    /// SYN-SENT the connection just closes (`tcp_close_state`).
    pub fn close_write(&mut self) {
        if self.fin_queued {
            return;
        }
        match self.state {
            State::Established | State::CloseWait | State::SynRcvd => {
                self.fin_queued = true;
                if let Some(s) = self.sender.as_mut() {
                    let mut o = std::mem::take(&mut self.scratch);
                    s.queue_fin(self.now, &mut o);
                    self.scratch = o;
                }
                self.flush();
            }
            State::Listen | State::SynSent => self.tcp_done(),
            _ => {}
        }
    }

    /// `shutdown(SHUT_RD)`: `RCV_SHUTDOWN`. Data still arrives and is acknowledged, and a
    /// read returns what is queued (0 when nothing is).
    pub fn shutdown_read(&mut self) {
        self.rcv_shut = true;
    }

    /// `close()` (`tcp_close`): with received data the application never read, the
    /// connection is aborted with a RST (RFC 2525 §2.17, `tcp_send_active_reset`); else a
    /// FIN follows the data, as `shutdown(SHUT_WR)`. The socket is then the kernel's: once
    /// it reaches CLOSED, a segment for it is answered by a RST (`tcp_v4_send_reset`).
    pub fn close(&mut self) {
        self.app_closed = true;
        self.rcv_shut = true;
        let established = matches!(
            self.state,
            State::Established | State::CloseWait | State::FinWait1 | State::FinWait2
        );
        if established && self.readable() > 0 {
            self.send_active_reset();
            self.tcp_done();
            return;
        }
        self.close_write();
    }

    /// `tcp_done`: CLOSED, every timer of the connection stopped.
    pub(super) fn tcp_done(&mut self) {
        self.state = State::Closed;
        self.fin_timer = None;
        self.syn_timer = None;
    }

    /// A RST on a synchronized connection (`tcp_validate_incoming`, RFC 5961 §3.2): exactly
    /// at `rcv_nxt` it resets the connection (`tcp_reset`: the error ECONNRESET, EPIPE in
    /// CLOSE-WAIT, and CLOSED); elsewhere in the window it gets a challenge ACK; outside it
    /// is dropped.
    pub(super) fn on_rst(&mut self, seg: &WireSeg) {
        let rcv_nxt = self.ack_field();
        let off = seg.seq.wrapping_sub(rcv_nxt) as i32;
        if off == 0 {
            self.err = Some(match self.state {
                State::CloseWait => SockErr::Pipe,
                _ => SockErr::ConnReset,
            });
            self.tcp_done();
        } else if off > 0 && (off as u64) < self.receiver.as_ref().map_or(0, |r| r.rcv_wnd()) {
            self.challenge_ack();
        }
    }

    /// `tcp_send_challenge_ack`: an ACK of what we have, at most one per 500 ms
    /// (`tcp_invalid_ratelimit`; the per-netns limit is unlimited by default).
    pub(super) fn challenge_ack(&mut self) {
        let now = self.now;
        if self
            .last_oow_ack
            .is_some_and(|t| now.saturating_since(t) < INVALID_RATELIMIT)
        {
            return;
        }
        self.last_oow_ack = Some(now);
        let mut o = std::mem::take(&mut self.scratch);
        if let Some(r) = self.receiver.as_mut() {
            r.send_ack(now, &mut o);
        }
        self.scratch = o;
        self.flush();
    }

    /// `tcp_v4_send_reset`: the answer to a segment no socket takes. With an ACK the RST
    /// takes its sequence number from it; without, it acknowledges the segment (RFC 9293
    /// §3.10.7.1). No options, window 0.
    pub(super) fn reset_reply(&mut self, seg: &WireSeg) {
        if seg.flags & RST != 0 {
            return;
        }
        let (flags, seq, ack) = if seg.flags & ACK != 0 {
            (RST, seg.ack, 0)
        } else {
            let len = seg.len + u32::from(seg.flags & SYN != 0) + u32::from(seg.flags & FIN != 0);
            (RST | ACK, 0, seg.seq.wrapping_add(len))
        };
        self.out.push_back(WireSeg {
            t: self.now,
            flags,
            seq,
            ack,
            win: 0,
            len: 0,
            opts: Vec::new(),
            ecn: WireEcn::NotEct,
        });
    }

    /// `tcp_send_active_reset`: abort the connection (`R.` at `snd_nxt`, acknowledging
    /// what arrived, with timestamps when in use).
    pub(super) fn send_active_reset(&mut self) {
        let snd_nxt = self.sender.as_ref().map_or(0, |s| s.info().snd_nxt);
        let seg = WireSeg {
            t: self.now,
            flags: RST | ACK,
            seq: ISS
                .wrapping_add(1)
                .wrapping_add(snd_nxt as u32)
                .wrapping_add(self.fin_sent as u32),
            ack: self.ack_field(),
            win: self.win_field(),
            len: 0,
            opts: self.ts_opts(self.now, None),
            ecn: WireEcn::NotEct,
        };
        self.out.push_back(seg);
    }

    /// The FIN alone in flight and unacknowledged: its next retransmission. The first is
    /// the tail loss probe, which with one packet out comes at the RTO's time
    /// (`tcp_schedule_loss_probe` bounded by `tcp_rto_delta_us`), then the RTO itself, then
    /// the RTO backed off (`tcp_retransmit_timer`).
    pub(super) fn fin_timeout(&self) -> SimDuration {
        let rto_us = self.sender.as_ref().map_or(1_000_000, |s| s.info().rto_us);
        let shift = self.fin_retx.saturating_sub(1).min(16);
        SimDuration::from_micros(rto_us)
            .mul_u64(1 << shift)
            .min(RTO_MAX)
    }

    pub(super) fn fin_in_flight(&self) -> bool {
        self.fin_sent
            && matches!(
                self.state,
                State::FinWait1 | State::Closing | State::LastAck
            )
    }

    pub(super) fn fin_segment(&self) -> WireSeg {
        WireSeg {
            t: self.now,
            flags: FIN | ACK,
            seq: ISS.wrapping_add(1).wrapping_add(self.written as u32),
            ack: self.ack_field(),
            win: self.win_field(),
            len: 0,
            opts: self.ts_opts(self.now, None),
            ecn: WireEcn::NotEct,
        }
    }

    pub(super) fn retransmit_fin(&mut self) {
        if !self.fin_in_flight() {
            return;
        }
        self.fin_retx += 1;
        let seg = self.fin_segment();
        self.out.push_back(seg);
        let at = self.now + self.fin_timeout();
        self.fin_timer = Some(self.arm(T_FIN, at));
    }

    pub(super) fn on_fin_acked(&mut self) {
        self.fin_timer = None;
        self.state = match self.state {
            State::FinWait1 => State::FinWait2,
            State::Closing => State::TimeWait,
            State::LastAck => State::Closed,
            s => s,
        };
    }
}
