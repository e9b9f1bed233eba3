//! Loss recovery, as Linux's `tcp_input.c` and `tcp_recovery.c` do it: the state machine
//! `tcp_fastretrans_alert` (Open, Disorder, CWR, Recovery, Loss), RACK loss detection
//! (`tcp_rack_detect_loss`, RFC 8985), NewReno without SACK (`tcp_newreno_mark_lost`, RFC 6582,
//! with Linux's emulated SACK counting), and Proportional Rate Reduction (`tcp_cwnd_reduction`,
//! RFC 6937) while cwnd is being reduced.

use super::*;

impl Sender {
    pub(super) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tcp.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_xmit_recovery`: after cwnd was updated, F-RTO's new data or retransmissions.
    pub(super) fn xmit_recovery(&mut self, now: SimTime, rexmit: Rexmit, out: &mut Out) {
        match rexmit {
            Rexmit::None => return,
            Rexmit::New => {
                self.write_xmit(now, out);
                if self.tcp.snd_nxt > self.high_seq {
                    return;
                }
                self.undo.frto = false;
            }
            Rexmit::Lost => {}
        }
        self.xmit_retransmit_queue(now, out);
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937). Not inlined: only ACKs
    /// in CWR or Recovery call it.
    #[inline(never)]
    pub(super) fn cwnd_reduction(
        &mut self,
        newly_acked_sacked: u32,
        newly_lost: u32,
        snd_una_advanced: bool,
    ) {
        if newly_acked_sacked == 0 || self.tcp.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.tcp.in_flight() as i64;
        let delta = self.tcp.ssthresh as i64 - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64 = if delta < 0 {
            // PRR proper: send in proportion to what was delivered (RFC 6937 §3).
            let dividend = self.tcp.ssthresh as u64 * self.prr_delivered as u64
                + self.tcp.prior_cwnd as u64
                - 1;
            (dividend / self.tcp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            // PRR-SSRB: slow start back up to ssthresh.
            let mut s =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if snd_una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tcp.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// `tcp_init_cwnd_reduction`.
    pub(super) fn init_cwnd_reduction(&mut self, now: SimTime) {
        self.high_seq = self.tcp.snd_nxt;
        self.tlp_high_seq = 0;
        self.tcp.cwnd_cnt = 0;
        self.tcp.prior_cwnd = self.tcp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        let ss = self.cc.ssthresh(now, &self.tcp);
        self.tcp.ssthresh = ss;
        if self.tcp.ecn_ok {
            self.cwr_pending = true;
        }
    }

    /// `tcp_end_cwnd_reduction`.
    pub(super) fn end_cwnd_reduction(&mut self, now: SimTime) {
        if self.has_cong_control() {
            return;
        }
        // Reset cwnd to ssthresh in CWR or Recovery (unless it's undone).
        if self.tcp.ssthresh < INFINITE_SSTHRESH
            && (self.tcp.ca_state == CaState::Cwr || self.undo.marker.is_some())
        {
            self.tcp.cwnd = self.tcp.ssthresh;
            self.tcp.cwnd_stamp = now;
        }
        self.cc.on_event(now, &mut self.tcp, CaEvent::CompleteCwr);
    }

    /// `tcp_enter_cwr` (ECN echo): congestion is proven, so no undo.
    pub(super) fn enter_cwr(&mut self, now: SimTime) {
        self.undo.prior_ssthresh = 0;
        if self.tcp.ca_state < CaState::Cwr {
            self.undo.marker = None;
            self.init_cwnd_reduction(now);
            self.set_state(now, CaState::Cwr);
        }
    }

    /// `tcp_enter_recovery`.
    pub(super) fn enter_recovery(&mut self, now: SimTime, ece_ack: bool) {
        self.retrans_stamp_cleanup();
        self.stats.recovery_count += 1;
        self.undo.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.undo.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction(now);
        }
        self.set_state(now, CaState::Recovery);
    }

    /// `tcp_try_keep_open`.
    pub(super) fn try_keep_open(&mut self, now: SimTime) {
        let t = &self.tcp;
        let s = if t.sacked_out + t.lost_out > 0 || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.tcp.ca_state != s {
            self.set_state(now, s);
            self.high_seq = self.tcp.snd_nxt;
        }
    }

    /// `tcp_try_to_open`.
    pub(super) fn try_to_open(&mut self, now: SimTime, flag: &Flags) {
        self.retrans_stamp_cleanup();
        if flag.ece {
            self.enter_cwr(now);
        }
        if self.tcp.ca_state != CaState::Cwr {
            self.try_keep_open(now);
        }
    }

    /// `tcp_time_to_recover` with RACK on: a loss is proven.
    pub(super) fn time_to_recover(&self) -> bool {
        if self.tcp.lost_out > 0 {
            return true;
        }
        // Without SACK: the classic dupthresh (`tcp_dupack_heuristics`).
        !self.sack && self.tcp.sacked_out + 1 > self.reordering
    }

    /// `tcp_fastretrans_alert`. Not inlined: only "dubious" ACKs call it.
    #[inline(never)]
    pub(super) fn fastretrans_alert(
        &mut self,
        now: SimTime,
        prior_snd_una: u64,
        num_dupack: u32,
        flag: &mut Flags,
        rexmit: &mut Rexmit,
        out: &mut Out,
    ) {
        let snd_una_advanced = self.tcp.snd_una > prior_snd_una;
        if self.tcp.packets_out == 0 && self.tcp.sacked_out > 0 {
            self.tcp.sacked_out = 0;
        }
        // A. ECE: the reduction is required, an undo may not restore cwnd.
        if flag.ece {
            self.undo.prior_ssthresh = 0;
        }
        // D. Exit a state when high_seq is acknowledged.
        if self.tcp.ca_state == CaState::Open {
            self.undo.retrans_stamp = None;
        } else if self.tcp.snd_una >= self.high_seq {
            match self.tcp.ca_state {
                // CWR holds until something above high_seq is acknowledged (the CWR flag arrived).
                CaState::Cwr if self.tcp.snd_una != self.high_seq => {
                    self.end_cwnd_reduction(now);
                    self.set_state(now, CaState::Open);
                }
                CaState::Recovery => {
                    if !self.sack {
                        self.tcp.sacked_out = 0;
                    }
                    // NewReno holds Recovery until something above high_seq is acked.
                    if self.try_undo_recovery(now) {
                        return;
                    }
                    self.end_cwnd_reduction(now);
                }
                _ => {}
            }
        }
        // E. Process the state.
        match self.tcp.ca_state {
            CaState::Recovery => {
                if !snd_una_advanced {
                    if !self.sack {
                        self.add_reno_sack(num_dupack, flag.ece);
                    }
                } else if self.try_undo_partial(now, prior_snd_una) {
                    return;
                }
                if self.try_undo_dsack(now) {
                    self.try_keep_open(now);
                }
                self.identify_packet_loss(now, snd_una_advanced, flag, out);
                if self.tcp.ca_state != CaState::Recovery {
                    // Undo reverted the recovery; a loss still in evidence starts a new one.
                    if !self.time_to_recover() {
                        return;
                    }
                    self.enter_recovery(now, flag.ece);
                }
            }
            CaState::Loss => {
                self.process_loss(now, flag, num_dupack, rexmit);
                self.identify_packet_loss(now, snd_una_advanced, flag, out);
                // Change state if cwnd is undone or retransmits are lost.
                if !(self.tcp.ca_state == CaState::Open || flag.lost_retrans) {
                    return;
                }
                if !self.open_state_alert(now, snd_una_advanced, num_dupack, flag, out) {
                    return;
                }
            }
            _ => {
                if !self.open_state_alert(now, snd_una_advanced, num_dupack, flag, out) {
                    return;
                }
            }
        }
        *rexmit = Rexmit::Lost;
    }

    /// The default branch of `tcp_fastretrans_alert` (Open, Disorder, CWR): late DSACK undo,
    /// loss detection, and Recovery when a loss is proven. Returns true if Recovery began.
    pub(super) fn open_state_alert(
        &mut self,
        now: SimTime,
        snd_una_advanced: bool,
        num_dupack: u32,
        flag: &mut Flags,
        out: &mut Out,
    ) -> bool {
        if !self.sack {
            if snd_una_advanced {
                self.tcp.sacked_out = 0;
            }
            self.add_reno_sack(num_dupack, flag.ece);
        }
        if self.tcp.ca_state <= CaState::Disorder {
            self.try_undo_dsack(now);
        }
        self.identify_packet_loss(now, snd_una_advanced, flag, out);
        if !self.time_to_recover() {
            self.try_to_open(now, flag);
            return false;
        }
        self.enter_recovery(now, flag.ece);
        true
    }

    /// `tcp_identify_packet_loss`.
    pub(super) fn identify_packet_loss(
        &mut self,
        now: SimTime,
        snd_una_advanced: bool,
        flag: &mut Flags,
        out: &mut Out,
    ) {
        if self.sb.is_empty() {
            return;
        }
        if !self.sack {
            self.newreno_mark_lost(snd_una_advanced);
            return;
        }
        if self.rack.advanced {
            self.rack.advanced = false;
            let prior_retrans = self.tcp.retrans_out;
            self.rack_detect_loss(now, out);
            if self.tcp.retrans_out < prior_retrans {
                flag.lost_retrans = true;
            }
        }
    }

    /// `tcp_rack_detect_loss`: a segment is lost if one sent after it was delivered and
    /// it is older than the latest RTT plus the reordering window (RFC 8985 §6.2).
    pub(super) fn rack_detect_loss(&mut self, now: SimTime, out: &mut Out) {
        let Some(rack_xmit) = self.rack.xmit else {
            return;
        };
        let reo_wnd = self.rack_reo_wnd();
        let mut timeout: Option<u64> = None;
        while let Some((idx, xmit)) = self.sb.tsorted_front() {
            // Stale entries: acknowledged, SACKed, sent again later, or already lost and
            // awaiting retransmission (it re-enters the list when retransmitted).
            let stale = idx < self.sb.head || {
                let s = self.sb.get(idx);
                s.sacked || s.xmit != xmit || (s.lost && !s.retrans)
            };
            if stale {
                self.sb.tsorted_pop();
                continue;
            }
            // Stop at the first segment not sent before the RACK reference.
            if !(xmit < rack_xmit || (xmit == rack_xmit && idx < self.rack.end_idx)) {
                break;
            }
            let elapsed = now.saturating_since(xmit).as_micros();
            let deadline = self.rack.rtt_us + reo_wnd;
            if elapsed >= deadline {
                self.mark_lost(idx);
                self.sb.tsorted_pop();
            } else {
                // Linux arms the timer for the largest remaining wait over the segments
                // sent before the reference (`*reo_timeout = max(...)`): that of the newest
                // of them still waiting, which may have been sent well before the reference.
                let newest = self.rack_newest_waiting(rack_xmit);
                let wait = (self.rack.rtt_us + reo_wnd)
                    .saturating_sub(now.saturating_since(newest).as_micros());
                timeout = Some(wait.max(1));
                break;
            }
        }
        if let Some(us) = timeout {
            let at = now + SimDuration::from_micros(us) + TIMEOUT_MIN;
            self.arm(TimerKind::Reo, at, out);
        }
    }

    /// The send time of the newest segment sent before the RACK reference that is still
    /// waiting (neither acknowledged, SACKed, sent again, nor lost awaiting retransmission).
    /// Called once the front of the transmission-order list is such a segment, so one
    /// exists.
    fn rack_newest_waiting(&self, rack_xmit: SimTime) -> SimTime {
        let mut newest = SimTime::ZERO;
        for (idx, xmit) in self.sb.tsorted_iter() {
            if !(xmit < rack_xmit || (xmit == rack_xmit && idx < self.rack.end_idx)) {
                break;
            }
            if idx < self.sb.head {
                continue;
            }
            let s = self.sb.get(idx);
            if s.sacked || s.xmit != xmit || (s.lost && !s.retrans) {
                continue;
            }
            newest = xmit;
        }
        newest
    }

    /// `tcp_mark_skb_lost`.
    pub(super) fn mark_lost(&mut self, idx: u64) {
        let s = self.sb.get_mut(idx);
        if s.sacked {
            return;
        }
        if s.lost {
            if s.retrans {
                s.retrans = false; // a retransmission lost again
                self.tcp.retrans_out -= 1;
                self.tcp.lost += 1;
            }
        } else {
            s.lost = true;
            self.tcp.lost_out += 1;
            self.tcp.lost += 1;
        }
        if idx < self.sb.retransmit_hint {
            self.sb.retransmit_hint = idx;
        }
    }

    /// `tcp_newreno_mark_lost`: without SACK, the head is lost after dupthresh dupacks or
    /// on a partial ACK in Recovery (RFC 6582).
    pub(super) fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
        let st = self.tcp.ca_state;
        if (st < CaState::Recovery && self.tcp.sacked_out >= self.reordering)
            || (st == CaState::Recovery && snd_una_advanced)
        {
            let head = self.sb.head;
            if !self.sb.get(head).lost {
                self.mark_lost(head);
            }
        }
    }

    /// `tcp_add_reno_sack`: without SACK, each dupack means one segment left the network.
    pub(super) fn add_reno_sack(&mut self, num_dupack: u32, ece: bool) {
        if num_dupack == 0 {
            return;
        }
        let prior = self.tcp.sacked_out;
        self.tcp.sacked_out += num_dupack;
        // tcp_limit_reno_sacked
        let holes = self.tcp.lost_out.max(1).min(self.tcp.packets_out);
        if self.tcp.sacked_out + holes > self.tcp.packets_out {
            self.tcp.sacked_out = self.tcp.packets_out - holes;
        }
        let d = self.tcp.sacked_out.saturating_sub(prior) as u64;
        self.tcp.delivered += d;
        if ece {
            self.tcp.delivered_ce += d;
        }
    }

    /// `tcp_remove_reno_sacks`: a cumulative ACK eats the emulated SACKs.
    pub(super) fn remove_reno_sacks(&mut self, acked: u32, ece: bool) {
        if acked == 0 {
            return;
        }
        let d = (acked.saturating_sub(self.tcp.sacked_out)).max(1) as u64;
        self.tcp.delivered += d;
        if ece {
            self.tcp.delivered_ce += d;
        }
        if acked > self.tcp.sacked_out {
            self.tcp.sacked_out = 0;
        } else {
            self.tcp.sacked_out -= acked - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn three_sacked_segments_above_a_hole_start_recovery_and_retransmit_it() {
        // dupthresh (RFC 6675, folded into RACK's reordering window): segments 1-3 SACKed
        // above segment 0 → Recovery, segment 0 lost and retransmitted, Reno halves ssthresh.
        let (mut s, _, _) = established();
        let out = deliver(&mut s, ms(150), &ack(0, &[(1, 4)]));
        assert_eq!(s.tcp.ca_state, CaState::Recovery);
        assert_eq!(s.tcp.lost_out, 1);
        assert_eq!(s.tcp.ssthresh, 5);
        assert_eq!(sent(&out).first(), Some(&(0, true)));
    }

    #[test]
    fn prr_sends_in_proportion_to_what_was_delivered() {
        // RFC 6937: sndcnt = ceil(prr_delivered · ssthresh / RecoverFS) - prr_out, with
        // RecoverFS = 10 segments, ssthresh = 5, while pipe stays above ssthresh.
        // ACK 1 SACKs 1-3: ceil(3·5/10) - 0 = 2 (the retransmission and one new segment);
        // ACK 2 SACKs 4: ceil(4·5/10) - 2 = 0; ACK 3 SACKs 5: ceil(5·5/10) - 2 = 1.
        let (mut s, _, _) = established();
        let counts: Vec<usize> = [(1, 4), (1, 5), (1, 6)]
            .iter()
            .enumerate()
            .map(|(i, &blk)| sent(&deliver(&mut s, ms(150 + i as u64), &ack(0, &[blk]))).len())
            .collect();
        assert_eq!(counts, vec![2, 0, 1]);
    }

    #[test]
    fn one_sacked_segment_waits_for_racks_reordering_window_before_marking_the_hole_lost() {
        // RFC 8985 §6.2: a segment is lost when a later-sent one was delivered and
        // now ≥ its send time + RTT + reo_wnd; one SACK (below dupthresh) arms the RACK
        // timer instead of retransmitting at once.
        let (mut s, _, _) = established();
        let out = deliver(&mut s, ms(150), &ack(0, &[(1, 2)]));
        assert!(sent(&out).iter().all(|&(_, retx)| !retx));
        let &(_, at) = out
            .timers
            .iter()
            .find(|(k, _)| *k == TimerKind::Reo)
            .unwrap();
        assert!(at > ms(150));
        let mut o = Out::default();
        s.on_timer(at, TimerKind::Reo, &mut o);
        assert_eq!(sent(&o).first(), Some(&(0, true)));
        assert_eq!(s.tcp.lost_out, 1);
    }
}
