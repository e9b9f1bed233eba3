//! The receive window: buffer and window arithmetic (`tcp_win_from_space`, `tcp_space`),
//! the listener's and the connection's initial window (`tcp_openreq_init_rwin`,
//! `tcp_init_buffer_space`), `rcv_ssthresh` growth (`tcp_grow_window`), the receiver's RTT and
//! autotuning (`tcp_rcv_rtt_*`, `tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`) and window
//! selection with scaling (`__tcp_select_window`, `tcp_select_window`). See `mod.rs`'s header.

use super::*;

impl Receiver {
    // -- window arithmetic (include/net/tcp.h) ---------------------------------------------

    /// `__tcp_win_from_space`: the window a buffer of `space` bytes of memory can offer.
    pub(super) fn win_from_space(&self, space: i64) -> i64 {
        win_from_space(space, self.scaling_ratio)
    }

    /// `__tcp_space_from_win`: the memory a window of `win` bytes needs.
    pub(super) fn space_from_win(&self, win: u64) -> u64 {
        (win << RMEM_TO_WIN_SCALE) / self.scaling_ratio
    }

    /// `sk_rmem_alloc`: memory held by unread in-order data and the out-of-order queue.
    pub(super) fn rmem_alloc(&self) -> u64 {
        let truesize = self.advmss_truesize;
        let unread = self.rcv_nxt - self.copied_seq;
        // Mostly nothing or the one segment being handled: no division for those.
        let unread_pkts = if unread <= self.advmss {
            u64::from(unread > 0)
        } else {
            unread.div_ceil(self.advmss.max(1))
        };
        (unread_pkts + self.ofo_pkts) * truesize
    }

    /// `tcp_space`: the window the free part of the buffer can offer (may be negative).
    pub(super) fn tcp_space(&self) -> i64 {
        let unread = self.rcv_nxt - self.copied_seq;
        let computed = || self.win_from_space(self.sk_rcvbuf as i64 - self.rmem_alloc() as i64);
        if self.ofo_pkts == 0 && unread > 0 && unread <= self.advmss && self.use_limits() {
            let space = self.limits().one_held_space;
            debug_assert_eq!(space, computed());
            return space;
        }
        computed()
    }

    /// `tcp_full_space`.
    pub(super) fn tcp_full_space(&self) -> i64 {
        self.win_from_space(self.sk_rcvbuf as i64)
    }

    /// `limits` from its inputs: called wherever `window_clamp`, `sk_rcvbuf` or
    /// `scaling_ratio` changes.
    pub(super) fn set_space_limits(&mut self) {
        self.limits = self.space_limits_now();
    }

    pub(super) fn space_limits_now(&self) -> SpaceLimits {
        let full_space = self.tcp_full_space();
        let one_held_space =
            self.win_from_space(self.sk_rcvbuf as i64 - self.advmss_truesize as i64);
        SpaceLimits {
            full_space,
            clamped_full_space: (self.window_clamp as i64).min(full_space),
            one_held_space,
            grow_limit: (self.window_clamp as i64).min(one_held_space),
        }
    }

    /// `limits`, checked against recomputing them in debug builds.
    pub(super) fn limits(&self) -> SpaceLimits {
        debug_assert_eq!(self.limits, self.space_limits_now());
        self.limits
    }

    /// Whether `limits` is used: always, but the unit tests compare with computing each
    /// value where it is needed, as Linux does.
    pub(super) fn use_limits(&self) -> bool {
        #[cfg(test)]
        {
            self.use_space_limits
        }
        #[cfg(not(test))]
        {
            true
        }
    }

    /// `tcp_receive_window`: what is left of the window last announced.
    pub(super) fn tcp_receive_window(&self) -> u64 {
        (self.rcv_wup + self.rcv_wnd).saturating_sub(self.rcv_nxt)
    }

    // -- connection setup ---------------------------------------------------------------------

    pub(super) fn on_syn(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        if !self.established {
            self.tcp_openreq_init_rwin();
        }
        // Answer every SYN (a retransmitted SYN means our SYN-ACK was lost).
        let mut p = Packet::new(self.flow, Kind::SynAck, self.peer);
        p.wire_bytes = packet::IP_HEADER
            + packet::TCP_HEADER
            + if self.timestamps {
                packet::SYN_OPTIONS
            } else {
                12
            };
        p.tsecr = pkt.tsval;
        p.tsval = self.ts_now(now);
        p.rwnd = self.rcv_wnd.min(MAX_UNSCALED_WINDOW); // SYN windows are never scaled (RFC 7323 §2.2)
        p.ece = pkt.ece && self.ecn.is_some(); // ECN-setup SYN-ACK
        self.synack_sent_at = Some(now);
        out.pkts.push(p);
    }

    /// `tcp_openreq_init_rwin` + `tcp_select_initial_window`: the listener's window (its
    /// buffer at the default 50 % ratio, in whole segments) and the window scale that covers
    /// `tcp_rmem[2]`; the connection's `rcv_ssthresh` starts at that window.
    pub(super) fn tcp_openreq_init_rwin(&mut self) {
        let clamp_max = MAX_UNSCALED_WINDOW << MAX_WSCALE;
        let mut space = (self.tcp_full_space().max(0) as u64).min(clamp_max);
        if space > self.advmss {
            space -= space % self.advmss; // quantize to whole segments
        }
        self.rcv_wnd = space;
        self.rcv_wscale = 0;
        if self.rcvbuf.window_scaling {
            let basis = space
                .max(self.rcvbuf.max_bytes)
                .max(SYSCTL_RMEM_MAX)
                .min(clamp_max);
            self.rcv_wscale = (basis.ilog2() as i64 - 15).clamp(0, MAX_WSCALE as i64) as u32;
        }
        self.window_clamp = (MAX_UNSCALED_WINDOW << self.rcv_wscale).min(clamp_max);
        if !self.rcvbuf.window_scaling {
            self.window_clamp = self.window_clamp.min(MAX_UNSCALED_WINDOW); // tcp_create_openreq_child
        }
        self.set_space_limits();
        self.rcv_ssthresh = self.rcv_wnd;
    }

    /// The handshake completes with the first data segment: `tcp_synack_rtt_meas` and
    /// `tcp_init_buffer_space` (one segment of the buffer reserved), `tcp_initialize_rcv_mss`.
    #[cold]
    #[inline(never)]
    pub(super) fn tcp_init_buffer_space(&mut self, now: SimTime) {
        if let Some(sent) = self.synack_sent_at {
            // tcp_rtt_estimator's first sample: srtt = m, rttvar = max(m/2·4, rto_min).
            let m = now.saturating_since(sent).max(SimDuration::from_micros(1));
            self.srtt = Some(m);
            self.rto = (m + m.mul_u64(2).max(RTO_MIN)).min(RTO_MAX);
        }
        self.rcvq_space.time = now;
        self.rcvq_space.seq = self.copied_seq;
        let maxwin = self.tcp_full_space().max(0) as u64;
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin; // tcp_app_win = 31 reserves nothing more
        }
        if self.window_clamp > 2 * self.advmss && self.window_clamp + self.advmss > maxwin {
            self.window_clamp = (2 * self.advmss).max(maxwin.saturating_sub(self.advmss));
        }
        self.set_space_limits();
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.rcvq_space.space = self
            .rcv_ssthresh
            .min(self.rcv_wnd)
            .min(INIT_CWND * self.advmss);
        // tcp_initialize_rcv_mss
        let hint = self.advmss.min(self.rcv_wnd / 2).min(MSS_DEFAULT);
        self.rcv_mss = hint.max(MIN_MSS);
    }

    /// `tcp_grow_window`: open `rcv_ssthresh` by two segments while the buffer has room; a
    /// growing window is ACKed at once (`icsk_ack.quick |= 1`).
    pub(super) fn tcp_grow_window(&mut self, len: u64) {
        debug_assert!(
            self.rcv_nxt > self.copied_seq,
            "the segment itself is unread"
        );
        if self.use_limits() && self.rcv_ssthresh as i64 >= self.limits().grow_limit {
            debug_assert!(
                (self.window_clamp as i64).min(self.tcp_space()) <= self.rcv_ssthresh as i64
            );
            return;
        }
        let room = (self.window_clamp as i64).min(self.tcp_space()) - self.rcv_ssthresh as i64;
        if room <= 0 {
            return;
        }
        let truesize = rx_truesize(len, self.timestamps) as i64;
        // Check #2: will a packet with this overhead fit the buffer?
        let incr = if self.win_from_space(truesize) <= len as i64 {
            2 * self.advmss as i64
        } else {
            self.tcp_grow_window_slow(len as i64, truesize)
        };
        if incr > 0 {
            let incr = incr.max(2 * len as i64);
            self.rcv_ssthresh += room.min(incr) as u64;
            self.quick |= 1;
        }
    }

    /// `__tcp_grow_window`: a packet with a poor payload/truesize ratio grows the window
    /// only while `rcv_ssthresh` is small against `tcp_rmem[2]`.
    pub(super) fn tcp_grow_window_slow(&self, len: i64, truesize: i64) -> i64 {
        let mut truesize = self.win_from_space(truesize) >> 1;
        let mut window = self.win_from_space(self.rcvbuf.max_bytes as i64) >> 1;
        while self.rcv_ssthresh as i64 <= window {
            if truesize <= len {
                return 2 * self.rcv_mss as i64;
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    // -- the receiver's RTT (DRS) ---------------------------------------------------------------

    /// `tcp_rcv_rtt_update`: keep the minimum sample; timestamp samples above it are
    /// smoothed in (1/8) only while the receive queue is empty.
    pub(super) fn tcp_rcv_rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let old = self.rcv_rtt_est.rtt_us;
        let m = sample_us << 3;
        if old == 0 || m < old {
            self.rcv_rtt_est.rtt_us = m;
        } else if !win_dep && self.rcv_nxt == self.copied_seq {
            self.rcv_rtt_est.rtt_us = old - (old >> 3) + sample_us;
        }
    }

    /// `tcp_rcv_rtt_measure`: the time to receive one window is an RTT (or more).
    pub(super) fn tcp_rcv_rtt_measure(&mut self, now: SimTime) {
        if let Some(t) = self.rcv_rtt_est.time {
            if self.rcv_nxt < self.rcv_rtt_est.seq {
                return;
            }
            let delta_us = now.saturating_since(t).as_micros().max(1);
            self.tcp_rcv_rtt_update(delta_us, true);
        }
        self.rcv_rtt_est.seq = self.rcv_nxt + self.rcv_wnd;
        self.rcv_rtt_est.time = Some(now);
    }

    /// `tcp_rcv_rtt_measure_ts`: a full segment echoing a new TSval of ours gives an RTT in
    /// whole milliseconds (zero-ms samples are dropped).
    pub(super) fn tcp_rcv_rtt_measure_ts(&mut self, now: SimTime, pkt: &Packet) {
        if pkt.tsecr == 0 || pkt.tsecr == self.rcv_rtt_est.last_tsecr {
            return;
        }
        self.rcv_rtt_est.last_tsecr = pkt.tsecr;
        if pkt.len as u64 >= self.rcv_mss {
            let delta_ms = self.ts_now(now).saturating_sub(pkt.tsecr);
            if delta_ms > 0 {
                self.tcp_rcv_rtt_update(delta_ms * 1000, false);
            }
        }
    }

    /// `tcp_rcv_space_adjust`: once per receiver RTT, the bytes read in it become the new
    /// window base if they grew.
    pub(super) fn tcp_rcv_space_adjust(&mut self, now: SimTime) {
        if self.rcv_rtt_est.rtt_us == 0 {
            return;
        }
        // Linux compares whole microseconds: elapsed_ns / 1000 < rtt_us ⇔ elapsed_ns <
        // rtt_us · 1000, compared in nanoseconds without the division.
        let elapsed = now.saturating_since(self.rcvq_space.time);
        let rtt = SimDuration::from_micros(self.rcv_rtt_est.rtt_us >> 3);
        debug_assert_eq!(elapsed < rtt, elapsed.as_micros() < rtt.as_micros());
        if elapsed < rtt {
            return;
        }
        let inq = self.rcv_nxt - self.copied_seq;
        let copied = (self.copied_seq - self.rcvq_space.seq).saturating_sub(inq);
        if copied > self.rcvq_space.space {
            self.tcp_rcvbuf_grow(copied);
        }
        self.rcvq_space.seq = self.copied_seq;
        self.rcvq_space.time = now;
    }

    /// `tcp_rcvbuf_grow` (6.18): room for twice what was read in the last RTT ("DRS is
    /// always one RTT late"), plus twice its growth (slow start), plus the out-of-order span;
    /// the window clamp follows the buffer.
    pub(super) fn tcp_rcvbuf_grow(&mut self, newval: u64) {
        let oldval = self.rcvq_space.space;
        self.rcvq_space.space = newval;
        if !self.rcvbuf.autotune {
            return;
        }
        let mut rcvwin = newval << 1;
        // Slow start: allow the sender to double its rate (oldval is never 0 once established).
        let grow = (rcvwin * newval.saturating_sub(oldval))
            .checked_div(oldval)
            .unwrap_or(0);
        rcvwin += grow << 1;
        if let Some((_, &e)) = self.ofo.last_key_value() {
            rcvwin += e - self.rcv_nxt;
        }
        let rcvbuf = self.space_from_win(rcvwin).min(self.rcvbuf.max_bytes);
        if rcvbuf > self.sk_rcvbuf {
            self.sk_rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf as i64).max(0) as u64;
            self.set_space_limits();
        }
    }

    // -- window selection (tcp_output.c) --------------------------------------------------------

    /// `__tcp_select_window`: the free space, capped by `rcv_ssthresh`, rounded up to the
    /// window scale (or to whole segments without scaling).
    pub(super) fn raw_select_window(&mut self) -> u64 {
        let mut mss = self.rcv_mss as i64;
        let mut free_space = self.tcp_space();
        let (allowed_space, full_space) = if self.use_limits() {
            let limits = self.limits();
            (limits.full_space, limits.clamped_full_space)
        } else {
            let allowed_space = self.tcp_full_space();
            (allowed_space, (self.window_clamp as i64).min(allowed_space))
        };
        if mss > full_space {
            mss = full_space;
            if mss <= 0 {
                return 0;
            }
        }
        let unit = 1i64 << self.rcv_wscale;
        if free_space < full_space >> 1 {
            self.quick = 0;
            free_space = (free_space >> self.rcv_wscale) << self.rcv_wscale; // floor to the unit
            if free_space < allowed_space >> 4 || free_space < mss {
                return 0;
            }
        }
        free_space = free_space.min(self.rcv_ssthresh as i64);
        if self.rcv_wscale > 0 {
            // Up to the unit; free_space ≥ 0 here (≥ mss or ≥ full_space / 2 above).
            debug_assert!(free_space >= 0);
            return (((free_space + unit - 1) >> self.rcv_wscale) << self.rcv_wscale) as u64;
        }
        let mut window = self.rcv_wnd as i64;
        if window <= free_space - mss || window > free_space {
            window = free_space / mss * mss;
        } else if mss == full_space && free_space > window + (full_space >> 1) {
            window = free_space;
        }
        window.max(0) as u64
    }

    /// `tcp_select_window`: the window to announce now (bytes, a multiple of the scale); the
    /// right edge never moves left. `raw` is `__tcp_select_window`'s result when the caller
    /// has just computed it with nothing changed since (see `send_ack_with_window`).
    pub(super) fn tcp_select_window(&mut self, raw: Option<u64>) -> u64 {
        let cur_win = self.tcp_receive_window();
        let mut new_win = match raw {
            Some(win) => win,
            None => self.raw_select_window(),
        };
        let unit = 1u64 << self.rcv_wscale;
        if new_win < cur_win {
            new_win = cur_win.div_ceil(unit) * unit; // never shrink the offered window
        }
        self.rcv_wnd = new_win;
        self.rcv_wup = self.rcv_nxt;
        let new_win = new_win.min(MAX_UNSCALED_WINDOW << self.rcv_wscale);
        (new_win >> self.rcv_wscale) << self.rcv_wscale
    }
}
