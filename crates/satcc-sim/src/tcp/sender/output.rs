//! Sending, as Linux's `tcp_output.c` does it: `tcp_write_xmit` (new data within cwnd, the
//! receive window and the send buffer), `tcp_xmit_retransmit_queue` and `__tcp_retransmit_skb`,
//! pacing (`tcp_pacing_check`, the next-send time after each packet), `tcp_cwnd_validate`.

use super::*;

/// `first_packet`'s answer.
enum FirstPacket {
    /// Not at the first packet's start, or not there with the deferral to decide.
    Undecided,
    /// `tso_should_defer` holds the room (`Some(cwnd_limited)`).
    Deferred(bool),
    /// Send a first packet of this many segments.
    Send(u32),
}

impl Sender {
    pub(super) fn pacing_enabled(&self) -> bool {
        match self.pacing_mode {
            Pacing::On => true,
            Pacing::Off => false,
            Pacing::Auto => self.tcp.pacing_needed,
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

    /// `tcp_update_skb_after_send` for one packet sent alone (a retransmission, a probe).
    pub(super) fn pace_after_send(&mut self, now: SimTime, payload: u32) {
        self.pace_after_skb(self.pacing_enabled(), now, payload as u64);
    }

    /// `__tcp_transmit_skb`'s departure time (`tcp_wstamp_ns` = max(it, now)) and
    /// `tcp_update_skb_after_send`: advance the pacing clock by the airtime of the GSO packet
    /// (skb) just sent, `payload` bytes (Linux divides the headerless skb's length, not the
    /// wire's, by the pacing rate). Not before 10 data segments have left (sch_fq's habit,
    /// kept by internal pacing); the time the clock had fallen behind `now` (`credit`) takes
    /// up to half the airtime off ("OS jitter").
    #[inline(always)]
    fn pace_after_skb(&mut self, pacing: bool, now: SimTime, payload: u64) {
        debug_assert_eq!(pacing, self.pacing_enabled(), "stale pacing_enabled");
        let prior = self.tcp.wstamp;
        let start = prior.max(now);
        self.tcp.wstamp = start;
        if !pacing || self.tcp.pacing_rate_bps == 0 || self.stats.sent_packets < UNPACED_SEGS {
            return;
        }
        let rate = self
            .tcp
            .pacing_rate_bps
            .min(self.tcp.max_pacing_rate_bps)
            .max(1);
        // at most 64 KiB · 1e9: fits in 64 bits
        let len_ns = payload * 1_000_000_000 / rate;
        let credit = start.as_nanos() - prior.as_nanos();
        self.tcp.wstamp = start + SimDuration::from_nanos(len_ns - credit.min(len_ns / 2));
    }

    /// `tcp_tso_segs` (`tcp_tso_autosize`): the segments of one GSO packet at the pacing
    /// rate: about 1 ms of it (`sk_pacing_shift` 10), plus 64 KB halved per 512 µs of min RTT
    /// (`tcp_tso_rtt_log` 9; nothing from 16 ms up), at most a GSO frame, at least the
    /// algorithm's `min_tso_segs` (else `tcp_min_tso_segs`, 2 unless set).
    #[inline(always)]
    pub(super) fn tso_segs(&self) -> u32 {
        let t = &self.tcp;
        let mut bytes = t.pacing_rate_bps.min(t.max_pacing_rate_bps) >> PACING_SHIFT;
        let r = t.min_rtt_us >> TSO_RTT_LOG;
        if r < GSO_SIZE_BITS {
            bytes += GSO_MAX_BYTES >> r;
        }
        let segs = bytes.min(GSO_MAX_BYTES) / u64::from(self.mss.max(1));
        let min = if self.has_min_tso_segs {
            self.cc.min_tso_segs(t).unwrap_or(self.min_tso_segs)
        } else {
            debug_assert_eq!(self.cc.min_tso_segs(t), None, "has_min_tso_segs");
            self.min_tso_segs
        };
        (segs as u32).max(min)
    }

    /// `tcp_xmit_size_goal`: the bytes `tcp_sendmsg` puts in one send-queue buffer, 64 KB
    /// (`sk_gso_max_size`) bounded to half the largest window the peer advertised
    /// (`tcp_bound_to_half_wnd`), in whole segments, at least one.
    fn size_goal(&self) -> u64 {
        let mss = u64::from(self.mss.max(1));
        let half_wnd = if self.max_window > u64::from(TCP_MSS_DEFAULT) {
            self.max_window >> 1
        } else {
            self.max_window
        };
        let goal = if half_wnd > 0 && GSO_MAX_BYTES > half_wnd {
            half_wnd
        } else {
            GSO_MAX_BYTES
        };
        (goal / mss).max(1) * mss
    }

    /// The write queue's head buffer (`tcp_send_head`) from `snd_nxt`: its end, and whether
    /// it is the last (`tcp_write_queue_tail`). Buffers are cut every `size_goal` bytes
    /// (`wq_end` is the head's end; a head sent up to it gives way to the next); the last
    /// ends where the written data does. See deviation 4.
    #[inline(always)]
    fn head_buffer(&mut self) -> (u64, bool) {
        let nxt = self.tcp.snd_nxt;
        if self.wq_end <= nxt {
            let goal = self.size_goal();
            self.wq_end += ((nxt - self.wq_end) / goal + 1) * goal;
        }
        match self.size {
            Some(s) if self.wq_end >= s => (s, true),
            _ => (self.wq_end, false),
        }
    }

    /// After a send: a last buffer sent in part (or whole) leaves a buffer that later writes
    /// fill to `size_goal` from `snd_nxt` (`tso_fragment` splits the rest off as a buffer of
    /// its own; `tcp_sendmsg` appends to the last one while it is short of the goal).
    fn head_buffer_sent(&mut self) {
        if self.size.is_some_and(|s| self.wq_end >= s) {
            self.wq_end = self.tcp.snd_nxt + self.size_goal();
        }
    }

    /// `tcp_tso_should_defer` for an unpaced flow's next GSO packet of up to `quota` segments
    /// (`tcp_cwnd_test`'s quota, at most `tcp_tso_segs`), with `in_flight` below cwnd:
    /// `Some(cwnd_limited)` to hold the room for a larger packet (until an ACK comes),
    /// `None` to send now. The head buffer is first grown to `quota` segments from the next
    /// (`tcp_grow_skb`); a head of one segment is Nagle's (`tcp_nagle_test`), never
    /// deferred. Linux sends now in Recovery or Loss, when its last transmission is over
    /// 1 ms old, when the room (the smaller of the cwnd's and the receive window's) takes a
    /// whole GSO packet (`tcp_tso_segs`), when the head buffer is not the last and the room
    /// takes it, when the room is a `tcp_tso_win_divisor`th of the window (more than 3
    /// segments with the divisor 0), or when the ACK of the oldest unacknowledged segment is
    /// due in more than min(1 ms, srtt/2). Otherwise it defers: cwnd-limited when the cwnd's
    /// room is the smaller, else receive-window-limited, or application-limited (the room
    /// takes all that is written) unless a FIN is queued behind it. `tso_segs`: what
    /// `tso_segs()` is now (the caller sized `quota` by it).
    #[inline(always)]
    pub(super) fn tso_should_defer(
        &mut self,
        now: SimTime,
        in_flight: u32,
        quota: u32,
        tso_segs: u32,
    ) -> Option<bool> {
        debug_assert_eq!(tso_segs, self.tso_segs(), "stale tso_segs");
        let mss = u64::from(self.mss.max(1));
        let (mut end, mut last) = self.head_buffer();
        let nxt = self.tcp.snd_nxt;
        let want = nxt + u64::from(quota) * mss;
        if !last && end < want {
            // `tcp_grow_skb`: take what is missing from the next buffer
            let goal = self.size_goal();
            let (next_end, next_last) = match self.size {
                Some(s) if end + goal >= s => (s, true),
                _ => (end + goal, false),
            };
            if want >= next_end {
                (end, last) = (next_end, next_last);
            } else {
                end = want;
            }
        }
        let skb_len = end - nxt;
        let t = &self.tcp;
        if skb_len <= mss
            || t.ca_state >= CaState::Recovery
            || now.saturating_since(t.lsndtime) > TSO_DEFER_RECENT
        {
            return None;
        }
        let send_win = (t.snd_una + self.snd_wnd).saturating_sub(nxt);
        let cong_win = u64::from(t.cwnd.saturating_sub(in_flight)) * mss;
        let limit = send_win.min(cong_win);
        if limit >= u64::from(tso_segs) * mss || (!last && limit >= skb_len) {
            return None;
        }
        if self.tso_win_divisor > 0 {
            let chunk = self.snd_wnd.min(u64::from(t.cwnd) * mss) / u64::from(self.tso_win_divisor);
            if limit >= chunk {
                return None;
            }
        } else if limit > TSO_MAX_DEFERRED_SEGS * mss {
            return None;
        }
        let head_xmit = self.sb.head_seg()?.xmit;
        let srtt = SimDuration::from_micros(self.rtt.srtt_us());
        let threshold = TSO_DEFER_RECENT.min(SimDuration::from_nanos(srtt.as_nanos() / 2));
        if head_xmit + srtt > now + threshold {
            return None; // the next ACK is likely to come too late
        }
        if cong_win < send_win {
            if cong_win <= skb_len {
                return Some(true);
            }
        } else if send_win <= skb_len {
            return Some(false);
        }
        // application-limited: a buffer with the FIN gets no more data
        if last && self.fin_queued {
            return None;
        }
        Some(false)
    }

    /// A GSO packet of `segs` segments, the last packets in `out`, has been sent: with the
    /// flow's `tso_defer` (the GSO model, deviation 4) one of two or more segments carries
    /// PSH on its last segment, as `__tcp_transmit_skb` forces it on every packet of
    /// `tcp_skb_pcount` > 1 (to flush the receiver's GRO; a one-segment packet keeps the
    /// flags of its buffer, which a bulk sender's buffers do not give it), so that the
    /// receiver's `ICSK_ACK_PUSHED` acknowledges the packet's end when it is read.
    #[inline(always)]
    fn gso_packet_sent(&mut self, segs: u32, out: &mut Out) {
        if self.tso_defer && segs > 1 {
            if let Some(p) = out.pkts.last_mut() {
                p.psh = true;
            }
        }
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

    /// Send one new segment as a packet of its own (`tcp_transmit_skb` +
    /// `tcp_event_new_data_sent`), paced.
    pub(super) fn send_new(&mut self, now: SimTime, out: &mut Out) {
        let in_flight = self.tcp.in_flight();
        let len = self.next_len();
        let pacing = self.send_new_with(in_flight, len, self.pacing_enabled(), true, now, out);
        self.pace_after_skb(pacing, now, len as u64);
    }

    /// `send_new` given `in_flight()`, the segment's length and `pacing_enabled()` as they
    /// are now, without pacing (the caller paces the GSO packet it is part of); returns
    /// `pacing_enabled()` after the segment (the TX_START hook may have changed it). `first`:
    /// the first segment of this send, which sets the timers (`new_data_timers`).
    #[inline(always)]
    pub(super) fn send_new_with(
        &mut self,
        in_flight: u32,
        len: u32,
        pacing: bool,
        first: bool,
        now: SimTime,
        out: &mut Out,
    ) -> bool {
        debug_assert_eq!(in_flight, self.tcp.in_flight(), "stale in_flight");
        let mut pacing = pacing;
        if in_flight == 0 {
            self.cc.on_event(now, &mut self.tcp, CaEvent::TxStart);
            pacing = self.pacing_enabled();
        }
        let (first_tx, dmst, deliv, deliv_ce, app) = self.rate_on_send(now);
        // A whole segment, or its head when the peer's window takes less (the zero-window
        // probe timer's `tcp_write_wakeup` fragments the unsent head to the window).
        debug_assert!(len > 0 && len <= self.next_len(), "segment of {len} bytes");
        let seq = self.tcp.snd_nxt;
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
        self.queue_data(now, seq, len, false, out);
        // (`tcp_minshall_update`: the scoreboard keeps where the last short segment ends.)
        self.tcp.snd_nxt += len as u64;
        self.tcp.packets_out += 1;
        self.tcp.lsndtime = now;
        self.stats.sent_packets += 1;
        if first {
            self.new_data_timers(now, out);
        }
        pacing
    }

    /// The timers after new data is sent (`tcp_event_new_data_sent`): the RTO takes the
    /// zero-window probe's slot (Linux has one for both) and is armed unless it or the tail
    /// loss probe is. After it nothing is left for the next segment of the same send to do
    /// (no probe pending, one of the two armed), so `write_xmit` runs it for its first.
    #[inline(always)]
    fn new_data_timers(&mut self, now: SimTime, out: &mut Out) {
        self.clear_probe0();
        if !self.rto_timer.is_armed() && !self.tlp_timer.is_armed() {
            let at = now + self.rto_backed_off();
            self.arm(TimerKind::Rto, at, out);
        }
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
        self.queue_data(now, seq, len, true, out);
        self.tcp.lsndtime = now;
        self.stats.sent_packets += 1;
        self.stats.retransmitted_packets += 1;
        self.stats.retrans_in_bin += 1;
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        self.pace_after_send(now, len);
    }

    /// `tcp_xmit_retransmit_queue`: retransmit lost segments in order while cwnd allows.
    /// Every segment below the hint is known not to await retransmission, so each ACK
    /// scans only from the first candidate (and stops once all lost ones are resent).
    pub(super) fn xmit_retransmit_queue(&mut self, now: SimTime, out: &mut Out) {
        if self.local_drop {
            return; // the first retransmission fails at the qdisc: the walk stops there
        }
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
                if idx == self.sb.head {
                    // The head resent: the RTO is re-armed (unless the RACK timer is
                    // pending) in the one slot Linux keeps for the RTO, RACK's timer and the
                    // tail loss probe, so a pending probe goes either way.
                    self.tlp_timer.clear();
                    if !self.reo_timer.is_armed() {
                        let at = now + self.rto_backed_off();
                        self.arm(TimerKind::Rto, at, out);
                    }
                }
            }
            idx += 1;
            self.sb.retransmit_hint = idx;
        }
    }

    /// `tcp_write_xmit`: send new data while cwnd, the receive window and pacing allow. A
    /// paced flow sends GSO packets as Linux builds them: `min(tcp_tso_segs, cwnd quota)`
    /// segments back to back (`tcp_mss_split_point`; the quota is `tcp_cwnd_test`'s, at most
    /// half the cwnd), each packet checked against and then charged to the pacing clock
    /// whole; on the wire (here) they are MSS-sized packets. An unpaced flow's GSO packets
    /// are sized alike and leave back to back, and before each `tcp_tso_should_defer` may
    /// hold the room for a larger one (`tso_should_defer`).
    ///
    /// A deferring flow's first packet is decided apart (`write_xmit_deferring`): most ACKs
    /// end there, in a deferral, without the sending loop's set-up.
    #[inline(never)]
    pub(super) fn write_xmit(&mut self, now: SimTime, out: &mut Out) {
        if self.tso_defer {
            self.write_xmit_deferring(now, out);
        } else {
            self.write_xmit_loop::<false>(now, 0, out);
        }
    }

    /// `write_xmit` for a flow with `tso_defer`: the first packet's decision
    /// (`first_packet`), then the loop unless it deferred.
    #[inline(never)]
    fn write_xmit_deferring(&mut self, now: SimTime, out: &mut Out) {
        match self.first_packet(now) {
            FirstPacket::Deferred(cwnd_limited) => {
                // what the loop does after deferring its first packet, nothing sent
                if cwnd_limited {
                    self.cwnd_validate(now, true);
                }
                if self.tcp.packets_out == 0 && !self.all_sent() {
                    self.check_probe_timer(now, out);
                }
            }
            FirstPacket::Send(segs) => self.write_xmit_loop::<true>(now, segs, out),
            FirstPacket::Undecided => self.write_xmit_loop::<false>(now, 0, out),
        }
    }

    /// For an unpaced deferring flow, what `write_xmit_loop` decides at its first packet's
    /// start when it gets there: `Undecided` when it would stop before (nothing to send, the
    /// cwnd, the receive window, the send buffer, Nagle) or is not there yet (not
    /// established, a local drop, pacing); else `tso_should_defer`'s answer, or the packet's
    /// size. The same reads in the same order, nothing written but the head buffer's end
    /// (which `tso_should_defer` advances once either way).
    #[inline(always)]
    fn first_packet(&mut self, now: SimTime) -> FirstPacket {
        if !self.is_established() || self.local_drop || self.pacing_enabled() || self.all_sent() {
            return FirstPacket::Undecided;
        }
        let in_flight = self.tcp.in_flight();
        if in_flight >= self.tcp.cwnd {
            return FirstPacket::Undecided;
        }
        let len = self.next_len();
        let end = self.tcp.snd_nxt + len as u64;
        if end > self.tcp.snd_una + self.snd_wnd
            || self
                .sndbuf
                .is_some_and(|b| end > self.tcp.snd_una.saturating_add(b))
            || (len < self.mss && self.nagle_holds(len))
        {
            return FirstPacket::Undecided;
        }
        let quota = (self.tcp.cwnd >> 1).max(1).min(self.tcp.cwnd - in_flight);
        let tso_segs = self.tso_segs();
        let segs = tso_segs.min(quota);
        match self.tso_should_defer(now, in_flight, segs, tso_segs) {
            Some(cwnd_limited) => FirstPacket::Deferred(cwnd_limited),
            None => FirstPacket::Send(segs),
        }
    }

    /// `write_xmit` after `first_packet`: with `DECIDED`, the first packet has `first_segs`
    /// segments (a copy of the loop each way: the other does not test it).
    #[inline(never)]
    fn write_xmit_loop<const DECIDED: bool>(
        &mut self,
        now: SimTime,
        first_segs: u32,
        out: &mut Out,
    ) {
        if !self.is_established() || self.local_drop {
            return;
        }
        debug_assert!(!DECIDED || self.tso_defer && !self.pacing_enabled());
        let mut sent = 0;
        let mut cwnd_limited = false;
        let mut pacing = self.pacing_enabled();
        // segments left in the current GSO packet, its payload so far, and the segments sent
        // before it (its segments are `sent - skb_first`: no count kept per segment)
        let mut skb_left = 0u32;
        let mut skb_bytes = 0u64;
        let mut skb_first = 0u32;
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
            if skb_left == 0 {
                if skb_bytes > 0 {
                    self.pace_after_skb(pacing, now, skb_bytes);
                    self.gso_packet_sent(sent - skb_first, out);
                    skb_bytes = 0;
                }
                skb_first = sent;
                if self.paced_out_with(pacing, now, out) {
                    break;
                }
                skb_left = if DECIDED && sent == 0 {
                    first_segs // (decided by `first_packet`)
                } else if pacing || self.tso_defer || in_flight == 0 {
                    let quota = (self.tcp.cwnd >> 1).max(1).min(self.tcp.cwnd - in_flight);
                    // (computed once: `tso_should_defer` compares the room with it too)
                    let tso_segs = self.tso_segs();
                    let segs = tso_segs.min(quota);
                    if !pacing && self.tso_defer {
                        if let Some(limited) = self.tso_should_defer(now, in_flight, segs, tso_segs)
                        {
                            cwnd_limited |= limited;
                            break;
                        }
                    }
                    segs
                } else {
                    // Unpaced, no deferral, and pacing cannot start within this send (only
                    // `TxStart`, with nothing in flight, turns it on): a packet's end would
                    // change nothing (`pace_after_skb` and `paced_out_with` do nothing
                    // unpaced), so the rest of the send is one packet, its size not computed.
                    u32::MAX
                };
            }
            pacing = self.send_new_with(in_flight, len, pacing, sent == 0, now, out);
            skb_left -= 1;
            skb_bytes += len as u64;
            in_flight += 1;
            sent += 1;
        }
        if skb_bytes > 0 {
            self.pace_after_skb(pacing, now, skb_bytes);
            self.gso_packet_sent(sent - skb_first, out);
        }
        if sent > 0 && !pacing && self.tso_defer {
            self.head_buffer_sent();
        }
        if sent > 0 && self.in_cwnd_reduction() {
            self.prr_out += sent;
        }
        if sent > 0 || cwnd_limited {
            self.cwnd_validate(now, cwnd_limited);
        }
        if sent > 0 {
            self.schedule_loss_probe_after_send(now, out);
        } else if self.tcp.packets_out == 0 && !self.all_sent() {
            // `__tcp_push_pending_frames`: `tcp_write_xmit` left data unsent with nothing
            // in flight (a closed window, the cork).
            self.check_probe_timer(now, out);
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
    fn resending_the_head_in_recovery_takes_the_tail_loss_probes_slot() {
        // `tcp_xmit_retransmit_queue` re-arms the RTO after resending the head, in the one
        // timer slot Linux keeps for it and the probe (upstream prr-ss-10pkt-lost-1: the
        // probe armed after the initial window must not fire in Recovery). Recovery here
        // starts on SACKs alone, so no cumulative ACK re-arms the timers first.
        let (mut s, out, _) = established();
        assert!(out.timers.iter().any(|(k, _)| *k == TimerKind::Tlp));
        let o = deliver(&mut s, ms(150), &ack(0, &[(1, 4)]));
        assert_eq!(sent(&o).first(), Some(&(0, true)));
        assert_eq!(s.tcp.ca_state, CaState::Recovery);
        assert!(!s.tlp_timer.is_armed(), "the probe is gone");
        assert!(s.rto_timer.is_armed() || s.reo_timer.is_armed());
    }

    fn us(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(n)
    }

    /// A bulk Reno sender whose SYN-ACK came back at 1 ms, and what it sent then (its
    /// initial window); the flow's `tso_defer` as given.
    fn initial_window(tso_defer: bool) -> (Sender, Out) {
        let cc = satcc_cc::lookup("reno", &satcc_cc::Params::new()).unwrap();
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.tso_defer = tso_defer;
        let mut s = Sender::new(&cfg, 1, cc);
        let mut out = Out::default();
        s.connect(SimTime::ZERO, &mut out);
        let mut synack = Packet::new(0, Kind::SynAck, 0);
        synack.rwnd = 1 << 20;
        out.clear();
        s.on_packet(us(1_000), &synack, &mut out);
        (s, out)
    }

    /// A bulk Reno sender in congestion avoidance (cwnd 10, ssthresh 10) whose SYN-ACK came
    /// back in 1 ms, so a GSO packet holds over 20 segments (`tcp_tso_autosize`'s min-RTT
    /// allowance) and the first send-queue buffer 45 (64 KB). Its initial window left at
    /// 1 ms; at 2 ms an ACK of the first two segments came (srtt 1 ms): 8 in flight, a room
    /// of two segments, what that ACK sent; the flow's `tso_defer` as given.
    fn two_segments_of_room(tso_defer: bool) -> (Sender, Out) {
        let (mut s, out) = initial_window(tso_defer);
        assert_eq!(sent(&out).len(), 10);
        s.tcp.ssthresh = 10; // congestion avoidance from here
        let out = deliver(&mut s, us(2_000), &ack(2 * MSS, &[]));
        assert_eq!(s.tcp.cwnd, 10);
        assert!(s.tso_segs() > 20, "{}", s.tso_segs());
        (s, out)
    }

    /// `tcp_tso_should_defer` through `tcp_write_xmit`: an ACK freeing two segments 1 ms
    /// after the initial window, less than a GSO packet and than a third of the window, with
    /// the next ACK due (the oldest segment left 1 ms ago, srtt 1 ms) and the last send 1 ms
    /// old, sends nothing and the flow stays cwnd-limited; the next ACK frees four, a third
    /// of the window, and all four leave as one GSO packet.
    #[test]
    fn an_unpaced_sender_holds_a_small_room_for_a_larger_burst() {
        let (_, sent_now) = two_segments_of_room(false);
        assert_eq!(
            sent(&sent_now),
            vec![(10, false), (11, false)],
            "tso_defer off"
        );
        let (mut s, held) = two_segments_of_room(true);
        assert_eq!(sent(&held), vec![], "a two-segment room is held");
        assert!(
            s.tcp.is_cwnd_limited,
            "held for the cwnd: still cwnd-limited"
        );
        let burst = deliver(&mut s, us(2_100), &ack(4 * MSS, &[]));
        assert_eq!(
            sent(&burst),
            vec![(10, false), (11, false), (12, false), (13, false)]
        );
    }

    /// The segments that carry PSH, by index.
    fn pushed(out: &Out) -> Vec<u64> {
        out.pkts
            .iter()
            .filter(|p| p.kind == Kind::Data && p.psh)
            .map(|p| p.seq / MSS)
            .collect()
    }

    /// `__tcp_transmit_skb` forces PSH on every GSO packet of two or more segments: with the
    /// GSO model on, the last segment of each carries it (the four of the burst above leave
    /// as one packet: PSH on the fourth), and a packet of one segment does not; without the
    /// model the sender marks nothing (as before it).
    #[test]
    fn the_last_segment_of_a_gso_packet_carries_psh() {
        let (mut s, _) = two_segments_of_room(true);
        let burst = deliver(&mut s, us(2_100), &ack(4 * MSS, &[]));
        assert_eq!(pushed(&burst), vec![13]);
        // the initial window: GSO packets of tcp_tso_segs (over 20) but at most half the
        // cwnd (`tcp_cwnd_test`'s quota): 5 + 5
        let (mut s, out) = initial_window(true);
        assert_eq!(pushed(&out), vec![4, 9]);
        // congestion avoidance, an ACK of one segment: one segment of room, a packet of one
        // segment (never deferred): no PSH
        s.tcp.ssthresh = 10;
        let one = deliver(&mut s, us(3_000), &ack(MSS, &[]));
        assert_eq!(sent(&one).len(), 1);
        assert_eq!(pushed(&one), Vec::<u64>::new());
        let (mut s, _) = two_segments_of_room(false);
        let burst = deliver(&mut s, us(2_100), &ack(4 * MSS, &[]));
        assert_eq!(sent(&burst).len(), 2);
        assert_eq!(pushed(&burst), Vec::<u64>::new(), "tso_defer off");
    }

    /// Each condition of `tcp_tso_should_defer` on its own, from the held state above
    /// (`Some(true)`: held, cwnd-limited): every change sends now (`None`) or names another
    /// limit.
    #[test]
    fn each_condition_of_the_deferral_decides_alone() {
        let at = us(2_000);
        let defer = |s: &mut Sender, now: SimTime, room: u32| {
            let in_flight = s.tcp.cwnd - room;
            let quota = s.tso_segs().min(room).min(s.tcp.cwnd >> 1);
            s.tso_should_defer(now, in_flight, quota, s.tso_segs())
        };
        let (mut s, _) = two_segments_of_room(true);
        assert_eq!(defer(&mut s, at, 2), Some(true));
        // Recovery or Loss: never
        s.tcp.ca_state = CaState::Recovery;
        assert_eq!(defer(&mut s, at, 2), None);
        s.tcp.ca_state = CaState::Cwr; // CWR (an ECN echo) does not stop it
        assert_eq!(defer(&mut s, at, 2), Some(true));
        s.tcp.ca_state = CaState::Open;
        // the last transmission over 1 ms old (at 1 ms)
        assert_eq!(defer(&mut s, us(2_001), 2), None);
        // a third of the window (10 segments: 3.3) is free
        assert_eq!(defer(&mut s, at, 3), Some(true));
        assert_eq!(defer(&mut s, at, 4), None);
        // ... or a fifth, with tcp_tso_win_divisor 5; with 0, more than 3 segments
        s.set_tso_sysctls(2, 5);
        assert_eq!(defer(&mut s, at, 2), None);
        s.set_tso_sysctls(2, 0);
        assert_eq!(defer(&mut s, at, 3), Some(true));
        assert_eq!(defer(&mut s, at, 4), None);
        s.set_tso_sysctls(2, 3);
        // a whole GSO packet fits: no min-RTT allowance, no pacing rate, so tcp_min_tso_segs
        // (2, or 1 as drill's defaults.sh sets it) is the packet
        let (rate, min_rtt) = (s.tcp.pacing_rate_bps, s.tcp.min_rtt_us);
        (s.tcp.pacing_rate_bps, s.tcp.min_rtt_us) = (0, 100_000);
        assert_eq!(s.tso_segs(), 2);
        assert_eq!(defer(&mut s, at, 1), Some(true));
        assert_eq!(defer(&mut s, at, 2), None);
        s.set_tso_sysctls(1, 3);
        assert_eq!(defer(&mut s, at, 1), None);
        s.set_tso_sysctls(2, 3);
        (s.tcp.pacing_rate_bps, s.tcp.min_rtt_us) = (rate, min_rtt);
        // the oldest unacknowledged segment left 0.1 ms ago: its ACK is due in 0.9 ms, more
        // than min(1 ms, srtt/2)
        let head = s.sb.head;
        s.sb.get_mut(head).xmit = us(1_900);
        assert_eq!(defer(&mut s, at, 2), None);
        s.sb.get_mut(head).xmit = us(1_000);
        // the head buffer (not the last) is no larger than the room: it goes, grown to the
        // room from the next buffer; one segment is larger than a one-segment head
        s.wq_end = s.tcp.snd_nxt + 2 * MSS;
        assert_eq!(defer(&mut s, at, 2), None);
        s.wq_end = s.tcp.snd_nxt + MSS;
        assert_eq!(defer(&mut s, at, 2), None);
        s.wq_end = s.tcp.snd_nxt + 3 * MSS;
        assert_eq!(defer(&mut s, at, 2), Some(true));
        // the receive window is the smaller room: held for it (not cwnd-limited)
        s.snd_wnd = s.tcp.snd_nxt - s.tcp.snd_una + MSS;
        assert_eq!(defer(&mut s, at, 2), Some(false));
        s.snd_wnd = 1 << 20;
        // application-limited: the room takes all that is written (1.5 segments), held
        // unless a FIN follows; a single segment is Nagle's to hold, never deferred
        s.size = Some(s.tcp.snd_nxt + 3 * MSS / 2);
        assert_eq!(defer(&mut s, at, 2), Some(false));
        s.fin_queued = true;
        assert_eq!(defer(&mut s, at, 2), None);
        s.fin_queued = false;
        s.size = Some(s.tcp.snd_nxt + MSS);
        assert_eq!(defer(&mut s, at, 2), None);
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

    /// An ACK of everything below `ack` (bytes), no SACK.
    fn ack_bytes(ack: u64) -> Packet {
        let mut p = Packet::new(0, Kind::Ack, 0);
        p.ack = ack;
        p.rwnd = 1 << 20;
        p
    }

    /// A Reno sender paced at 200 % of cwnd/srtt (`pacing = "on"`), its initial window
    /// (unpaced: the first 10 segments) sent at 100 ms, acknowledged at 200 ms: what that
    /// ACK sends and the pacing timer it arms.
    fn paced_after_the_initial_window() -> (Sender, Out) {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.pacing = Pacing::On;
        let (mut s, out) = handshake(&cfg, 1 << 20);
        assert_eq!(sent(&out).len(), 10, "the initial window leaves unpaced");
        let out = deliver(&mut s, ms(200), &ack(10 * MSS, &[]));
        (s, out)
    }

    fn pace_timer(out: &Out) -> Option<SimTime> {
        out.timers
            .iter()
            .filter(|(k, _)| *k == TimerKind::Pace)
            .map(|&(_, at)| at)
            .next_back()
    }

    #[test]
    fn a_paced_flow_sends_gso_packets_of_tso_segs_charged_by_their_payload() {
        // cwnd 20, srtt 100 ms: 2 · 20 · 1448 B / 0.1 s = 579,200 B/s; 1 ms of it is 565 B,
        // below one segment, so a GSO packet is tcp_min_tso_segs = 2 segments. The first
        // packet's airtime (5 ms of payload) is halved by the 100 ms the clock fell behind
        // while idle; the next ones are charged in full: 2 · 1448 B / 579,200 B/s = 5 ms.
        let (mut s, out) = paced_after_the_initial_window();
        assert_eq!(s.tcp.pacing_rate_bps, 579_200);
        assert_eq!(sent(&out), vec![(10, false), (11, false)]);
        let at = pace_timer(&out).expect("the pacing timer is armed");
        assert_eq!(at, ms(200) + SimDuration::from_micros(2_500));
        let mut next = Out::default();
        s.on_timer(at, TimerKind::Pace, &mut next);
        assert_eq!(sent(&next), vec![(12, false), (13, false)]);
        assert_eq!(pace_timer(&next), Some(at + SimDuration::from_millis(5)));
    }

    #[test]
    fn a_gso_packet_grows_with_the_pacing_rate_and_the_min_rtt_allowance() {
        // tcp_tso_autosize: 1 ms of the pacing rate, plus 64 KB >> (min_rtt_us >> 9) below
        // 16 ms of min RTT, at most sk_gso_max_size (65,215 B), in whole segments.
        let (mut s, _) = paced_after_the_initial_window();
        assert_eq!(s.tso_segs(), 2); // 579,200 B/s: 565 B per ms, the floor
        s.tcp.pacing_rate_bps = 10_000_000; // 9,765 B per 1/1024 s: 6 segments
        assert_eq!(s.tso_segs(), 6);
        s.tcp.min_rtt_us = 2_000; // 2000 >> 9 = 3: + 65,536 >> 3 = 8,192 B
        assert_eq!(s.tso_segs(), (9_765 + 8_192) / 1448);
        s.tcp.pacing_rate_bps = 1_000_000_000;
        assert_eq!(s.tso_segs(), 65_215 / 1448);
    }

    #[test]
    fn nagle_holds_a_second_small_segment_until_the_first_is_acked() {
        // tcp_nagle_check with tcp_minshall_check: the first small write goes at once, the
        // next waits while it is unacknowledged, and leaves on its ACK.
        let mut s = app_established(false);
        assert_eq!(write(&mut s, ms(100), 100), vec![(0, 100)]);
        assert_eq!(write(&mut s, ms(110), 100), vec![]);
        let out = deliver(&mut s, ms(200), &ack_bytes(100));
        assert_eq!(ranges(&out), vec![(100, 100)]);
    }

    #[test]
    fn writes_held_by_nagle_coalesce_and_full_segments_are_never_held() {
        let mut s = app_established(false);
        write(&mut s, ms(100), 100);
        for _ in 0..3 {
            assert_eq!(write(&mut s, ms(110), 100), vec![]);
        }
        // 300 held + 2000: one full segment goes, the short rest (852) waits.
        assert_eq!(write(&mut s, ms(120), 2000), vec![(100, 1448)]);
        let out = deliver(&mut s, ms(200), &ack_bytes(100));
        assert_eq!(ranges(&out), vec![(1548, 852)]);
        assert_eq!(s.tcp.snd_nxt, 2400);
    }

    #[test]
    fn with_tcp_nodelay_every_write_goes_at_once() {
        let mut s = app_established(true);
        assert_eq!(write(&mut s, ms(100), 100), vec![(0, 100)]);
        assert_eq!(write(&mut s, ms(100), 100), vec![(100, 100)]);
        assert_eq!(write(&mut s, ms(100), 1500), vec![(200, 1448), (1648, 52)]);
    }

    #[test]
    fn tcp_cork_holds_short_segments_until_uncorked_even_with_nothing_in_flight() {
        let mut s = app_established(true);
        let mut out = Out::default();
        s.set_cork(ms(100), true, &mut out);
        assert_eq!(write(&mut s, ms(100), 40), vec![]);
        assert_eq!(write(&mut s, ms(150), 40), vec![]);
        // Full segments are not corked.
        assert_eq!(write(&mut s, ms(160), 1448), vec![(0, 1448)]);
        let mut out = Out::default();
        s.set_cork(ms(170), false, &mut out);
        assert_eq!(ranges(&out), vec![(1448, 80)]);
    }

    #[test]
    fn msg_more_holds_a_short_segment_and_tcp_nodelay_pushes_it() {
        // sockopt_cork_nodelay.pkt's last step: MSG_MORE overrides TCP_NODELAY for the push
        // of that write; setting TCP_NODELAY again pushes what is queued.
        let mut s = app_established(true);
        let mut out = Out::default();
        s.app_send(ms(100), 40, true, &mut out);
        s.app_send(ms(150), 40, true, &mut out);
        assert_eq!(ranges(&out), vec![]);
        s.set_nodelay(ms(160), true, &mut out);
        assert_eq!(ranges(&out), vec![(0, 80)]);
    }

    #[test]
    fn short_segments_keep_their_bounds_through_sack_and_retransmission() {
        // Segments [0,100) [100,1548) [1548,1598) [1598,3046): the tail loss probe resends
        // the last one as it was cut, and a SACK of [1548,3046) marks exactly two segments.
        let mut s = app_established(true);
        let mut all = Out::default();
        for n in [100, 1448, 50, 1448] {
            s.app_write(ms(100), n, &mut all);
        }
        assert_eq!(
            ranges(&all),
            vec![(0, 100), (100, 1448), (1548, 50), (1598, 1448)]
        );
        s.on_packet(ms(200), &ack_bytes(100), &mut all);
        let (_, probe) = run_timers_until_retransmission(&mut s, &all);
        assert_eq!(ranges(&probe), vec![(1598, 1448)]);
        let mut sack = ack_bytes(100);
        sack.sack[0] = (1548, 3046);
        sack.nsack = 1;
        deliver(&mut s, ms(600), &sack);
        assert_eq!((s.tcp.packets_out, s.tcp.sacked_out), (3, 2));
        let out = deliver(&mut s, ms(700), &ack_bytes(3046));
        assert!(ranges(&out).is_empty());
        assert_eq!((s.tcp.packets_out, s.tcp.snd_una), (0, 3046));
    }
}
