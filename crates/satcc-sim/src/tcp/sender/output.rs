//! Sending, as Linux's `tcp_output.c` does it: `tcp_write_xmit` (new data within cwnd, the
//! receive window and the send buffer), `tcp_xmit_retransmit_queue` and `__tcp_retransmit_skb`,
//! pacing (`tcp_pacing_check`, the next-send time after each packet), `tcp_cwnd_validate`.

use super::*;

impl Sender {
    pub(super) fn pacing_enabled(&self) -> bool {
        match self.pacing_mode {
            PacingMode::On => true,
            PacingMode::Off => false,
            PacingMode::Auto => self.tcp.pacing_needed,
        }
    }

    /// `tcp_pacing_check`: true if pacing forbids sending now (and arms the pacing timer).
    pub(super) fn paced_out(&mut self, now: SimTime, out: &mut Out) -> bool {
        self.paced_out_with(self.pacing_enabled(), now, out)
    }

    /// `paced_out` given `pacing_enabled()`, which a caller sending several segments reads
    /// once (it changes only with the algorithm's `pacing_needed`, set in a hook).
    #[inline(always)]
    fn paced_out_with(&mut self, pacing: bool, now: SimTime, out: &mut Out) -> bool {
        debug_assert_eq!(pacing, self.pacing_enabled(), "stale pacing_enabled");
        if pacing && self.tcp.wstamp > now {
            let at = self.tcp.wstamp;
            self.arm(TimerKind::Pace, at, out);
            return true;
        }
        false
    }

    /// `tcp_update_skb_after_send`: advance the pacing clock by this packet's airtime.
    pub(super) fn pace_after_send(&mut self, now: SimTime, wire_bytes: u32) {
        self.pace_after_send_with(self.pacing_enabled(), now, wire_bytes);
    }

    /// `pace_after_send` given `pacing_enabled()` (as `paced_out_with`).
    #[inline(always)]
    fn pace_after_send_with(&mut self, pacing: bool, now: SimTime, wire_bytes: u32) {
        debug_assert_eq!(pacing, self.pacing_enabled(), "stale pacing_enabled");
        if !pacing || self.tcp.pacing_rate_bps == 0 {
            return;
        }
        let rate = self
            .tcp
            .pacing_rate_bps
            .min(self.tcp.max_pacing_rate_bps)
            .max(1);
        // u32 bytes · 1e9 fits in 64 bits
        let len_ns = wire_bytes as u64 * 1_000_000_000 / rate;
        self.tcp.wstamp = self.tcp.wstamp.max(now) + SimDuration::from_nanos(len_ns);
    }

    /// Queue the segment of `len` bytes from `seq` in `out` (built where it is queued, not on
    /// the stack and then copied); the packet. Inlined into its two callers (one per segment
    /// sent).
    #[inline(always)]
    pub(super) fn queue_data<'o>(
        &mut self,
        now: SimTime,
        seq: u64,
        len: u32,
        retrans: bool,
        out: &'o mut Out,
    ) -> &'o Packet {
        let blank = Packet::new(self.flow, Kind::Data, self.peer);
        // RFC 3168 §6.1.5: retransmissions may be ECT in Linux too.
        let (ecn, cwr) = if self.tcp.ecn_ok {
            let cwr = self.cwr_pending && !retrans;
            if cwr {
                self.cwr_pending = false;
            }
            (Ecn::Ect, cwr)
        } else {
            (blank.ecn, blank.cwr)
        };
        // Every field written once (not `Packet::new`'s defaults, then the segment's).
        out.pkts.push(Packet {
            seq,
            len,
            wire_bytes: blank.wire_bytes
                + len
                + if self.timestamps {
                    packet::TS_OPTION
                } else {
                    0
                },
            tsval: self.ts_now(now),
            tsecr: if self.timestamps { self.ts_recent } else { 0 },
            retrans,
            ecn,
            cwr,
            ..blank
        });
        out.pkts.last().expect("the segment just queued")
    }

    /// Send one new segment (`tcp_transmit_skb` + `tcp_event_new_data_sent`).
    pub(super) fn send_new(&mut self, now: SimTime, out: &mut Out) {
        let in_flight = self.tcp.in_flight();
        self.send_new_with(in_flight, self.pacing_enabled(), now, out);
    }

    /// `send_new` given `in_flight()` and `pacing_enabled()` as they are now; returns the
    /// latter after the segment (the TX_START hook may have changed it).
    #[inline(always)]
    fn send_new_with(&mut self, in_flight: u32, pacing: bool, now: SimTime, out: &mut Out) -> bool {
        debug_assert_eq!(in_flight, self.tcp.in_flight(), "stale in_flight");
        let mut pacing = pacing;
        if in_flight == 0 {
            self.cc.on_event(now, &mut self.tcp, CaEvent::TxStart);
            pacing = self.pacing_enabled();
        }
        let (first_tx, dmst, deliv, deliv_ce, app) = self.rate_on_send(now);
        let seq = self.tcp.snd_nxt;
        let len = self.next_len();
        self.sb.push(
            Seg {
                xmit: now,
                first_tx,
                delivered_mstamp: Some(dmst),
                delivered: deliv,
                delivered_ce: deliv_ce,
                app_limited: app,
                sacked: false,
                lost: false,
                retrans: false,
                ever_retrans: false,
            },
            len,
        );
        let wire_bytes = self.queue_data(now, seq, len, false, out).wire_bytes;
        self.tcp.snd_nxt += len as u64;
        if len < self.mss {
            self.snd_sml = self.tcp.snd_nxt; // tcp_minshall_update
        }
        self.tcp.packets_out += 1;
        self.tcp.lsndtime = now;
        self.stats.sent_packets += 1;
        if !self.rto_timer.is_armed() && !self.tlp_timer.is_armed() {
            let at = now + self.rto_backed_off();
            self.arm(TimerKind::Rto, at, out);
        }
        self.pace_after_send_with(pacing, now, wire_bytes);
        pacing
    }

    /// Retransmit segment `idx` (`tcp_retransmit_skb`): also the episode's undo bookkeeping.
    pub(super) fn retransmit(&mut self, now: SimTime, idx: u64, out: &mut Out) {
        self.retransmit_skb(now, idx, true, out);
        // Save the stamp of the first retransmission; one more retransmission to undo.
        if self.undo.retrans_stamp.is_none() {
            self.undo.retrans_stamp = Some(self.ts_now(now));
        }
        self.undo.retrans = Some(self.undo.retrans.unwrap_or(0) + 1);
    }

    /// `__tcp_retransmit_skb`: put segment `idx` on the wire again. `in_flight`: count it as
    /// a retransmission in flight (`TCPCB_SACKED_RETRANS`, `retrans_out`), which
    /// `tcp_retransmit_skb` does and the tail loss probe's direct call does not.
    pub(super) fn retransmit_skb(
        &mut self,
        now: SimTime,
        idx: u64,
        in_flight: bool,
        out: &mut Out,
    ) {
        let (first_tx, dmst, deliv, deliv_ce, app) = self.rate_on_send(now);
        // In transmission order before the segment's time changes (the scoreboard may read it).
        self.sb.retransmitted(idx, now);
        let s = self.sb.get_mut(idx);
        s.xmit = now;
        s.first_tx = first_tx;
        s.delivered_mstamp = Some(dmst);
        s.delivered = deliv;
        s.delivered_ce = deliv_ce;
        s.app_limited = app;
        if in_flight && !s.retrans {
            s.retrans = true;
            self.tcp.retrans_out += 1;
        }
        s.ever_retrans = true;
        let seq = self.sb.start(idx);
        let len = (self.sb.end(idx) - seq) as u32;
        let wire_bytes = self.queue_data(now, seq, len, true, out).wire_bytes;
        self.tcp.lsndtime = now;
        self.stats.sent_packets += 1;
        self.stats.retransmitted_packets += 1;
        self.stats.retrans_in_bin += 1;
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        self.pace_after_send(now, wire_bytes);
    }

    /// `tcp_xmit_retransmit_queue`: retransmit lost segments in order while cwnd allows.
    /// Every segment below the hint is known not to await retransmission, so each ACK
    /// scans only from the first candidate (and stops once all lost ones are resent).
    pub(super) fn xmit_retransmit_queue(&mut self, now: SimTime, out: &mut Out) {
        let mut idx = self.sb.retransmit_hint.max(self.sb.head);
        let tail = self.sb.tail();
        while idx < tail {
            if self.tcp.retrans_out >= self.tcp.lost_out || self.tcp.in_flight() >= self.tcp.cwnd {
                break;
            }
            let s = self.sb.get(idx);
            if s.lost && !s.retrans && !s.sacked {
                if self.paced_out(now, out) {
                    break;
                }
                self.retransmit(now, idx, out);
            }
            idx += 1;
            self.sb.retransmit_hint = idx;
        }
    }

    /// `tcp_write_xmit`: send new data while cwnd, the receive window and pacing allow.
    pub(super) fn write_xmit(&mut self, now: SimTime, out: &mut Out) {
        if !self.is_established() {
            return;
        }
        let mut sent = 0;
        let mut cwnd_limited = false;
        let mut pacing = self.pacing_enabled();
        // Each new segment adds one to packets_out and nothing else to in_flight(), which is
        // packets_out + retrans_out − (sacked_out + lost_out) (never saturated: left_out ≤
        // packets_out, checked after every ACK in debug builds): counted up, not recomputed.
        let mut in_flight = self.tcp.in_flight();
        loop {
            if self.all_sent() {
                self.rate_check_app_limited();
                break;
            }
            debug_assert_eq!(in_flight, self.tcp.in_flight(), "in_flight counted up");
            if in_flight >= self.tcp.cwnd {
                cwnd_limited = true;
                break;
            }
            let len = self.next_len();
            let end = self.tcp.snd_nxt + len as u64;
            if end > self.tcp.snd_una + self.snd_wnd {
                break; // receive-window limited (`tcp_snd_wnd_test`)
            }
            if self
                .sndbuf
                .is_some_and(|b| end > self.tcp.snd_una.saturating_add(b))
            {
                break; // send-buffer limited (`sk_stream_memory_free`)
            }
            if len < self.mss && self.nagle_holds(len) {
                break;
            }
            if self.paced_out_with(pacing, now, out) {
                break;
            }
            pacing = self.send_new_with(in_flight, pacing, now, out);
            in_flight += 1;
            sent += 1;
        }
        if sent > 0 && self.in_cwnd_reduction() {
            self.prr_out += sent;
        }
        if sent > 0 || cwnd_limited {
            self.cwnd_validate(now, cwnd_limited);
        }
        if sent > 0 {
            self.schedule_loss_probe_after_send(now, out);
        }
    }

    /// `tcp_cwnd_validate`: remember whether the last window was fully used.
    pub(super) fn cwnd_validate(&mut self, now: SimTime, is_cwnd_limited: bool) {
        let t = &mut self.tcp;
        if t.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!t.is_cwnd_limited && t.packets_out > t.max_packets_out)
        {
            t.is_cwnd_limited = is_cwnd_limited;
            t.max_packets_out = t.packets_out;
            self.cwnd_usage_seq = t.snd_nxt;
        }
        if t.is_cwnd_limited() {
            t.cwnd_stamp = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn new_data_stops_at_the_receive_window() {
        // `tcp_snd_wnd_test`: cwnd allows 10 segments, the receiver 4
        let (_, out, _) = established_with(4 * MSS);
        assert_eq!(
            sent(&out),
            vec![(0, false), (1, false), (2, false), (3, false)]
        );
    }

    #[test]
    fn each_acked_segment_in_slow_start_lets_two_more_go() {
        // Reno slow start (RFC 5681 §3.1): cwnd + 1 per ACKed segment, so an ACK of two
        // segments releases four (two to refill, two for the larger cwnd).
        let (mut s, _, _) = established();
        let out = deliver(&mut s, ms(150), &ack(2 * MSS, &[]));
        assert_eq!(
            sent(&out),
            vec![(10, false), (11, false), (12, false), (13, false)]
        );
        assert_eq!(s.tcp.cwnd, 12);
    }
}
