//! ACK generation: quick-ACK mode, the ACK decision (`__tcp_ack_snd_check`), compressed SACK,
//! the delayed ACK and its timer (`tcp_send_delayed_ack`, `tcp_delack_timer_handler`), the
//! ACK after a read (`tcp_cleanup_rbuf`), and building the ACK: window, SACK and DSACK blocks,
//! TSecr, ECN echo (`tcp_send_ack`, `tcp_event_ack_sent`). See `mod.rs`'s header.

use super::*;

impl Receiver {
    /// `tcp_incr_quickack`: allow up to `max` immediate ACKs (half a window's worth).
    pub(super) fn tcp_incr_quickack(&mut self, max: u32) {
        let mut quickacks = (self.rcv_wnd / (2 * self.rcv_mss.max(1))) as u32;
        if quickacks == 0 {
            quickacks = 2;
        }
        self.quick = self.quick.max(quickacks.min(max));
    }

    /// `tcp_enter_quickack_mode`.
    pub(super) fn tcp_enter_quickack_mode(&mut self, max: u32) {
        self.tcp_incr_quickack(max);
        self.ato = ATO_MIN;
    }

    /// `tcp_in_quickack_mode` (a `delayed_ack = false` flow is Linux's `quickack` route).
    pub(super) fn tcp_in_quickack_mode(&self) -> bool {
        !self.delayed_ack || self.quick > 0
    }

    // -- ACK decisions -----------------------------------------------------------------------

    /// `__tcp_ack_snd_check`.
    pub(super) fn tcp_ack_snd_check(
        &mut self,
        now: SimTime,
        ack_now: bool,
        ofo_possible: bool,
        out: &mut Out,
    ) {
        if !self.ack_scheduled {
            return;
        }
        let mut window = None;
        let full_frame = self.rcv_nxt - self.rcv_wup > self.rcv_mss && {
            // Unread data is still queued here (rcv_nxt ≠ copied_seq), so the right edge
            // must advance for an ACK now; else the read's tcp_cleanup_rbuf sends it.
            let win = self.raw_select_window();
            window = Some(win);
            win >= self.rcv_wnd
        };
        if full_frame || self.tcp_in_quickack_mode() || ack_now {
            self.send_ack_with_window(now, out, window);
        } else if !ofo_possible {
            self.tcp_send_delayed_ack(now, out);
        } else {
            self.tcp_compress_sack(now, out);
        }
    }

    /// `__tcp_ack_snd_check`'s compressed SACK: with data out of order, the first three
    /// duplicate ACKs for one `rcv_nxt` go at once, later ones are held for min(1 ms, RTT/20)
    /// and sent as one (at most 44 held).
    pub(super) fn tcp_compress_sack(&mut self, now: SimTime, out: &mut Out) {
        if !self.sack || self.compressed_ack >= COMP_SACK_NR {
            self.send_ack(now, out);
            return;
        }
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            self.send_ack(now, out);
            return;
        }
        self.compressed_ack += 1;
        if self.comp_timer.is_armed() {
            return;
        }
        // 5 % of the RTT (the smaller of the receiver's and the handshake's), at most 1 ms.
        let mut rtt_us = self.rcv_rtt_est.rtt_us >> 3;
        if let Some(srtt) = self.srtt {
            rtt_us = rtt_us.min(srtt.as_micros());
        }
        let delay = COMP_SACK_DELAY.min(SimDuration::from_micros(rtt_us).div_u64(20));
        if let Some(at) = self.comp_timer.set(now + delay) {
            out.timers.push((TimerKind::DelAck, at));
        }
    }

    /// `tcp_sack_compress_send_ack`: send the held ACK now.
    pub(super) fn tcp_sack_compress_send_ack(&mut self, now: SimTime, out: &mut Out) {
        if self.compressed_ack > 0 {
            self.send_ack(now, out);
        }
    }

    /// `tcp_send_delayed_ack`: arm the delayed-ACK timer for `ato`, clamped by the RTT and
    /// `tcp_delack_max`; an earlier deadline already set stands.
    pub(super) fn tcp_send_delayed_ack(&mut self, now: SimTime, out: &mut Out) {
        let mut ato = self.ato;
        if ato > ATO_MIN {
            let mut max_ato = ATO_MAX_BULK;
            if let Some(srtt) = self.srtt {
                max_ato = max_ato.min(srtt.max(ATO_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(DELACK_MAX.min(RTO_MIN - SimDuration::from_millis(1))); // tcp_delack_max
        let mut timeout = now + ato;
        if let Some(pending) = self.delack.deadline() {
            if pending <= now + ato.div_u64(4) {
                self.send_ack(now, out); // the timer is about to fire anyway
                return;
            }
            timeout = timeout.min(pending);
        }
        if let Some(at) = self.delack.set(timeout) {
            out.timers.push((TimerKind::DelAck, at));
        }
    }

    /// `tcp_cleanup_rbuf` after the application read `copied` bytes.
    pub(super) fn tcp_cleanup_rbuf(&mut self, now: SimTime, copied: u64, out: &mut Out) {
        // More than one segment unacknowledged, or the read emptied the receive queue (no
        // data out of order is held) after a full segment with PSH (`ICSK_ACK_PUSHED`; the
        // receiver is never in ping-pong mode: it sends no data).
        let mut time_to_ack = self.ack_scheduled
            && (self.rcv_nxt - self.rcv_wup > self.rcv_mss
                || (copied > 0 && self.ack_pushed && self.ofo.is_empty()));
        let mut window = None;
        if copied > 0 && !time_to_ack {
            let rcv_window_now = self.tcp_receive_window();
            if 2 * rcv_window_now <= self.window_clamp {
                let new_window = self.raw_select_window();
                window = Some(new_window);
                // The read freed lots of space: announce a window at least twice as large.
                time_to_ack = new_window > 0 && new_window >= 2 * rcv_window_now;
            }
        }
        if time_to_ack {
            self.send_ack_with_window(now, out, window);
        }
    }

    pub(super) fn ts_now(&self, now: SimTime) -> u64 {
        // The receiver's own TSval clock (ms, as Linux's TCP_TS_HZ), read by TCP-LP.
        now.as_nanos() / 1_000_000 + 1
    }

    /// `tcp_replace_ts_recent` for a segment without data (a SYN-ACK, a pure ACK, a FIN):
    /// its TSval is echoed from now on when it is at or before the last ACK point (the
    /// drill endpoint's; a scenario's receiver gets data only).
    pub fn replace_ts_recent(&mut self, seq: u64, tsval: u64) {
        if self.timestamps && seq <= self.rcv_wup {
            self.ts_recent = tsval;
        }
    }

    /// Build and send an ACK for everything received so far (`tcp_send_ack`, then
    /// `tcp_event_ack_sent`: one quick ACK used, the delayed-ACK timer cleared).
    #[inline(never)]
    pub fn send_ack(&mut self, now: SimTime, out: &mut Out) {
        self.send_ack_with_window(now, out, None);
    }

    /// `send_ack` when the caller may hold `__tcp_select_window`'s result. Linux computes it
    /// twice for such an ACK: in `__tcp_ack_snd_check` (or `tcp_cleanup_rbuf`) and again in
    /// `tcp_select_window` as the ACK is built. Nothing it reads (the buffer, the unread and
    /// out-of-order data, `rcv_ssthresh`, `window_clamp`, `rcv_wnd`, `rcv_mss`) changes in
    /// between, and its one side effect (`quick = 0`) is idempotent, so the second computation
    /// would return `window`: it is reused (`Some`) instead of recomputed (`None`).
    #[inline(always)]
    pub(super) fn send_ack_with_window(
        &mut self,
        now: SimTime,
        out: &mut Out,
        window: Option<u64>,
    ) {
        debug_assert!(window.is_none_or(|w| {
            let quick = self.quick;
            let again = self.raw_select_window();
            self.quick = quick;
            again == w
        }));
        #[cfg(test)]
        let window = window.filter(|_| self.reuse_window);
        let rwnd = self.tcp_select_window(window);
        let (tsval, tsecr, ts_option) = if self.timestamps {
            (self.ts_now(now), self.ts_recent, packet::TS_OPTION)
        } else {
            (0, 0, 0)
        };
        // Built where it is queued (not on the stack and then copied), each field written
        // once; SACK blocks, when there are any, go in after.
        let base = Packet::new(self.flow, Kind::Ack, self.peer);
        out.pkts.push(Packet {
            ack: self.rcv_nxt,
            rwnd,
            tsval,
            tsecr,
            wire_bytes: base.wire_bytes + ts_option,
            ece: self.ece,
            ..base
        });
        if self.sack && (self.dsack.is_some() || !self.sack_list.is_empty()) {
            let p = out.pkts.last_mut().expect("the ACK just queued");
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
            p.wire_bytes += packet::SACK_OPTION_BASE + packet::SACK_BLOCK * n as u32;
        }
        // tcp_dec_quickack_mode: an ACK of scheduled data uses one quick ACK.
        if self.quick > 0 && self.ack_scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = ATO_MIN;
            }
        }
        self.ack_scheduled = false;
        self.ack_pushed = false;
        self.delack.clear();
        self.compressed_ack = 0;
        self.comp_timer.clear();
        self.acks_sent += 1;
    }

    /// An event queued for the receiver's timers fired: the delayed-ACK timer or the
    /// compressed-SACK timer (`tcp_compressed_ack_kick`), each re-queued if moved later.
    pub fn on_timer_event(&mut self, now: SimTime, out: &mut Out) {
        match self.delack.on_event(now) {
            Fire::Now => self.on_timer(now, out),
            Fire::Later(at) => out.timers.push((TimerKind::DelAck, at)),
            Fire::Stale => {}
        }
        match self.comp_timer.on_event(now) {
            Fire::Now => self.tcp_sack_compress_send_ack(now, out),
            Fire::Later(at) => out.timers.push((TimerKind::DelAck, at)),
            Fire::Stale => {}
        }
    }

    /// `tcp_delack_timer_handler`: the delayed ACK is due; a missed delayed ACK doubles ato.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Out) {
        if self.compressed_ack > 0 {
            self.tcp_sack_compress_send_ack(now, out);
            return;
        }
        if self.ack_scheduled {
            self.ato = self.ato.mul_u64(2).min(self.rto).min(DELACK_MAX);
            self.send_ack(now, out);
        }
    }
}
