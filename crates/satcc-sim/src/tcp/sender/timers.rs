//! Timers, as Linux's `tcp_timer.c` does them: the retransmission timeout (`tcp_retransmit_timer`,
//! RFC 6298 with Linux's backoff), the tail loss probe (`tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, RFC 8985 §7), the RACK reordering timer (`tcp_rack_reo_timeout`), and
//! entering Loss on an RTO (`tcp_enter_loss`, `tcp_timeout_mark_lost` in tcp_input.c).

use super::*;

impl Sender {
    pub(super) fn rto_backed_off(&self) -> SimDuration {
        self.rtt
            .rto()
            .mul_u64(1u64 << self.backoff.min(16))
            .min(RTO_MAX)
    }

    /// `icsk_rto`: the RTO as backed off by timeouts; zero-window probes back off their own
    /// interval (`icsk_backoff`) and leave it as the RTT estimate makes it.
    pub(super) fn icsk_rto(&self) -> SimDuration {
        if self.probing {
            self.rtt.rto()
        } else {
            self.rto_backed_off()
        }
    }

    /// `tcp_rearm_rto`.
    pub(super) fn rearm_rto(&mut self, now: SimTime, out: &mut Out) {
        if self.tcp.packets_out == 0 {
            self.rto_timer.clear(); // a zero-window probe's too (one slot)
            self.probe_pending = false;
            return;
        }
        let at = now + self.rto_backed_off();
        self.arm(TimerKind::Rto, at, out);
    }

    /// `tcp_schedule_loss_probe`: arm the PTO (RFC 8985 §7.2) instead of the RTO when allowed.
    #[inline(always)]
    pub(super) fn schedule_loss_probe(&mut self, now: SimTime, out: &mut Out) -> bool {
        if !self.sack
            || self.tcp.packets_out == 0
            || !matches!(self.tcp.ca_state, CaState::Open | CaState::Cwr)
            || self.tlp_high_seq != 0
        {
            return false;
        }
        let at = now + self.probe_timeout();
        self.arm(TimerKind::Tlp, at, out);
        self.rto_timer.clear();
        self.tlp_armed = Some((self.pto_inputs(now), at));
        true
    }

    /// The PTO: 2·srtt, plus the delayed-ACK allowance with one segment out (else
    /// TCP_TIMEOUT_MIN), at most the backed-off RTO; 1 s before an RTT sample. Inlined into
    /// `schedule_loss_probe`, which runs once an ACK that advances snd_una.
    #[inline(always)]
    fn probe_timeout(&self) -> SimDuration {
        let srtt = self.rtt.srtt_us();
        let pto = if srtt > 0 {
            let base = SimDuration::from_micros(2 * srtt);
            if self.tcp.packets_out == 1 {
                base + TLP_ONE_PACKET_SLACK
            } else {
                base + TIMEOUT_MIN
            }
        } else {
            RTO_INIT
        };
        pto.min(self.rto_backed_off())
    }

    /// What `probe_timeout` (and the deadline) depends on at `now`.
    fn pto_inputs(&self, now: SimTime) -> PtoInputs {
        PtoInputs {
            now,
            rtt: self.rtt.state(),
            backoff: self.backoff,
            one_packet: self.tcp.packets_out == 1,
        }
    }

    /// `tcp_schedule_loss_probe` at the end of `tcp_write_xmit`. Skipped when it would leave
    /// the timers as they are: the PTO it last armed is still armed with the RTO off (as it
    /// left them), and every input of the deadline is unchanged (typically the same ACK's
    /// `tcp_set_xmit_timer` armed it a moment ago). Then, if the call would arm at all, it
    /// would arm that same deadline (no earlier event to queue) and clear the cleared RTO;
    /// if it would not (not Open/CWR, a probe out), it would do nothing.
    pub(super) fn schedule_loss_probe_after_send(&mut self, now: SimTime, out: &mut Out) {
        if self.reuse_pto() {
            if let Some((inputs, at)) = self.tlp_armed {
                if self.tlp_timer.deadline() == Some(at)
                    && !self.rto_timer.is_armed()
                    && inputs == self.pto_inputs(now)
                {
                    debug_assert_eq!(now + self.probe_timeout(), at, "stale PTO");
                    return;
                }
            }
        }
        self.schedule_loss_probe_again(now, out);
    }

    /// `schedule_loss_probe` when the armed PTO cannot be kept (not inlined into
    /// `write_xmit`: most calls keep it).
    #[inline(never)]
    fn schedule_loss_probe_again(&mut self, now: SimTime, out: &mut Out) {
        self.schedule_loss_probe(now, out);
    }

    /// `tcp_set_xmit_timer`.
    #[inline(always)]
    pub(super) fn set_xmit_timer(&mut self, now: SimTime, out: &mut Out) {
        if !self.schedule_loss_probe(now, out) {
            self.tlp_timer.clear();
            self.rearm_rto(now, out);
        }
    }

    // ---------------------------------------------------------------- timers

    /// A sender timer's event (rare beside ACKs: not inlined into the event loop).
    #[inline(never)]
    pub fn on_timer(&mut self, now: SimTime, kind: TimerKind, out: &mut Out) {
        let t = match kind {
            TimerKind::Rto => &mut self.rto_timer,
            TimerKind::Reo => &mut self.reo_timer,
            TimerKind::Tlp => &mut self.tlp_timer,
            TimerKind::Pace => &mut self.pace_timer,
            TimerKind::DelAck => return,
        };
        match t.on_event(now) {
            Fire::Stale => return,
            Fire::Later(at) => {
                out.timers.push((kind, at));
                return;
            }
            Fire::Now => {}
        }
        self.tcp.now = now;
        self.probe_fired = false;
        match kind {
            TimerKind::Rto if self.probe_pending => {
                self.probe_pending = false;
                self.probe_fired = true;
                self.on_probe_timer(now, out);
            }
            TimerKind::Rto => self.on_rto(now, out),
            TimerKind::Reo => self.on_reo_timeout(now, out),
            TimerKind::Tlp => self.on_loss_probe(now, out),
            TimerKind::Pace => {
                self.xmit_retransmit_queue(now, out);
                self.write_xmit(now, out);
            }
            TimerKind::DelAck => {}
        }
    }

    /// `tcp_retransmit_timer` → `tcp_enter_loss`.
    pub(super) fn on_rto(&mut self, now: SimTime, out: &mut Out) {
        match self.conn {
            Conn::SynSent { retries, .. } => {
                if retries >= SYN_RETRIES {
                    self.conn = Conn::Closed;
                    return;
                }
                self.conn = Conn::SynSent {
                    retries: retries + 1,
                    sent_at: now,
                };
                self.send_syn(now, out);
                let at = now + RTO_INIT.mul_u64(1 << (retries + 1));
                self.arm(TimerKind::Rto, at, out);
                return;
            }
            Conn::Established => {}
            _ => return,
        }
        if self.tcp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        self.tlp_high_seq = 0;
        self.enter_loss(now);
        self.retransmits += 1; // tcp_update_rto_stats
                               // Retransmit the head (`tcp_retransmit_skb(sk, tcp_rtx_queue_head(sk), 1)`).
        let head = self.sb.head;
        if !self.sb.get(head).sacked {
            self.retransmit(now, head, out);
        }
        self.backoff += 1;
        let at = now + self.rto_backed_off();
        self.arm(TimerKind::Rto, at, out);
    }

    /// `tcp_enter_loss`.
    pub(super) fn enter_loss(&mut self, now: SimTime) {
        let new_recovery = self.tcp.ca_state < CaState::Recovery;
        self.timeout_mark_lost(now);
        // Reduce ssthresh if it has not yet been made inside this window.
        let t = &self.tcp;
        if t.ca_state <= CaState::Disorder
            || t.snd_una >= self.high_seq
            || (t.ca_state == CaState::Loss && self.retransmits == 0)
        {
            self.undo.prior_ssthresh = self.current_ssthresh();
            self.tcp.prior_cwnd = self.tcp.cwnd;
            let ss = self.cc.ssthresh(now, &self.tcp);
            self.tcp.ssthresh = ss;
            self.cc.on_event(now, &mut self.tcp, CaEvent::Loss);
            self.init_undo();
        }
        self.tcp.cwnd = self.tcp.in_flight() + 1;
        self.tcp.cwnd_cnt = 0;
        self.tcp.cwnd_stamp = now;
        self.reset_reordering_on_timeout(REORDERING);
        self.set_state(now, CaState::Loss);
        self.high_seq = self.tcp.snd_nxt;
        self.reo_timer.clear();
        self.tlp_timer.clear();
        if self.tcp.ecn_ok {
            self.cwr_pending = true;
        }
        // F-RTO (RFC 5682 §3.1 step 1): unless a recovery is underway, or on repeated
        // timeouts of the same snd_una (§3.2).
        self.undo.frto = FRTO && (new_recovery || self.retransmits > 0);
    }

    /// `tcp_timeout_mark_lost`: every un-SACKed segment is lost, except (with RACK) those sent
    /// within the last RACK RTT, which may still be on their way.
    pub(super) fn timeout_mark_lost(&mut self, now: SimTime) {
        if !self.sack {
            self.tcp.sacked_out = 0; // tcp_reset_reno_sack
        }
        let head = self.sb.head;
        for idx in head..self.sb.tail() {
            let s = self.sb.get(idx);
            let elapsed_us = now.saturating_since(s.xmit).as_micros();
            if idx != head && !s.sacked && self.sack && self.rack.rtt_us > elapsed_us {
                continue; // don't mark recently sent ones lost yet
            }
            self.mark_lost(idx);
        }
        self.sb.retransmit_hint = head;
    }

    /// `tcp_send_loss_probe`.
    pub(super) fn on_loss_probe(&mut self, now: SimTime, out: &mut Out) {
        if self.tcp.packets_out == 0 || self.tlp_high_seq != 0 {
            self.rearm_rto(now, out);
            return;
        }
        let can_send_new = !self.all_sent()
            && self.tcp.snd_nxt + self.next_len() as u64 <= self.tcp.snd_una + self.snd_wnd;
        if can_send_new {
            self.send_new(now, out); // a probe may exceed cwnd (`push_one == 2`)
            self.tlp_retrans = false;
        } else {
            let last = self.sb.tail() - 1;
            if self.sb.get(last).sacked {
                self.rearm_rto(now, out);
                return;
            }
            // tcp_send_loss_probe calls __tcp_retransmit_skb: the probe is not counted in
            // retrans_out (an RTO after it finds nothing in flight: cwnd 1).
            self.retransmit_skb(now, last, false, out);
            self.tlp_retrans = true;
        }
        self.tlp_high_seq = self.tcp.snd_nxt;
        self.tlp_timer.clear();
        self.rearm_rto(now, out);
    }

    /// `tcp_probe0_base` shifted by the backoff, at most `TCP_RTO_MAX` (`tcp_probe0_when`).
    fn probe0_when(&self) -> SimDuration {
        self.rtt
            .rto()
            .max(PROBE0_MIN)
            .mul_u64(1u64 << self.backoff.min(16))
            .min(RTO_MAX)
    }

    /// `tcp_check_probe_timer`: unsent data and nothing in flight, no timer pending: arm the
    /// zero-window probe at `tcp_probe0_base`.
    pub(super) fn check_probe_timer(&mut self, now: SimTime, out: &mut Out) {
        if self.tcp.packets_out > 0
            || self.rto_timer.is_armed()
            || self.tlp_timer.is_armed()
            || self.reo_timer.is_armed()
        {
            return;
        }
        let at = now + self.rtt.rto().max(PROBE0_MIN);
        self.arm_probe0(at, out);
    }

    /// The zero-window probe at `at`, in the RTO's slot.
    fn arm_probe0(&mut self, at: SimTime, out: &mut Out) {
        self.probe_pending = true;
        self.arm(TimerKind::Rto, at, out);
    }

    /// The RTO's slot freed of a pending zero-window probe (new data sent, or the window
    /// reopened).
    pub(super) fn clear_probe0(&mut self) {
        if self.probe_pending {
            self.probe_pending = false;
            self.rto_timer.clear();
        }
    }

    /// Whether the last timer event sent a zero-window probe.
    pub fn probe_fired(&self) -> bool {
        self.probe_fired
    }

    /// `tcp_ack_probe`, for an ACK that found nothing in flight: if the unsent head now fits
    /// the peer's window the probing ends (the send that follows takes it), else the probe
    /// is re-armed at the backed-off interval.
    pub(super) fn ack_probe(&mut self, now: SimTime, out: &mut Out) {
        if !self.is_established() || self.all_sent() {
            return;
        }
        if self.tcp.snd_nxt + self.next_len() as u64 <= self.tcp.snd_una + self.snd_wnd {
            self.backoff = 0;
            self.probes_out = 0;
            self.probing = false;
            self.clear_probe0();
        } else {
            let at = now + self.probe0_when();
            self.arm_probe0(at, out);
        }
    }

    /// `tcp_probe_timer` → `tcp_send_probe0` → `tcp_write_wakeup`: with room in the peer's
    /// window, the unsent head (at most what the window takes) goes as new data; with none,
    /// a zero-window probe: an ACK with the sequence number `snd_una − 1` and no data
    /// (`tcp_xmit_probe_skb`), answered by the peer's ACK with its window. Then, while
    /// nothing is in flight, the next probe after the interval doubled (`icsk_backoff`).
    /// Linux aborts after `tcp_retries2` probes without an answer; this sender keeps
    /// probing at `TCP_RTO_MAX`.
    fn on_probe_timer(&mut self, now: SimTime, out: &mut Out) {
        if self.tcp.packets_out > 0 || self.all_sent() || !self.is_established() {
            self.probes_out = 0;
            return;
        }
        let wnd_end = self.tcp.snd_una + self.snd_wnd;
        if self.tcp.snd_nxt < wnd_end {
            let len = self.next_len().min((wnd_end - self.tcp.snd_nxt) as u32);
            let (in_flight, pacing) = (self.tcp.in_flight(), self.pacing_enabled());
            self.send_new_with(in_flight, len, pacing, true, now, out);
        } else {
            let blank = Packet::new(self.flow, Kind::Data, self.peer);
            out.pkts.push(Packet {
                seq: self.tcp.snd_una.wrapping_sub(1),
                len: 0,
                wire_bytes: blank.wire_bytes
                    + if self.timestamps {
                        packet::TS_OPTION
                    } else {
                        0
                    },
                tsval: self.ts_now(now),
                tsecr: if self.timestamps { self.ts_recent } else { 0 },
                ..blank
            });
        }
        if self.tcp.packets_out > 0 {
            self.probes_out = 0;
            self.backoff = 0;
            self.probing = false;
            return;
        }
        self.probes_out += 1;
        self.probing = true;
        if self.backoff < RETRIES2 {
            self.backoff += 1;
        }
        let at = now + self.probe0_when();
        self.arm_probe0(at, out);
    }

    /// `tcp_rack_reo_timeout`.
    pub(super) fn on_reo_timeout(&mut self, now: SimTime, out: &mut Out) {
        let prior = self.tcp.in_flight();
        self.rack_detect_loss(now, out);
        if prior != self.tcp.in_flight() {
            if self.tcp.ca_state != CaState::Recovery {
                self.enter_recovery(now, false);
                if !self.has_cong_control() {
                    self.cwnd_reduction(1, 0, false);
                }
            }
            self.xmit_retransmit_queue(now, out);
        }
        if !self.rto_timer.is_armed() {
            self.rearm_rto(now, out);
        }
    }

    // ---------------------------------------------------------------- receiving
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;

    #[test]
    fn repeated_rto_doubles_the_timeout_and_keeps_ssthresh() {
        let (mut s, mut out, _) = established();
        let mut fired = Vec::new();
        let mut ssthresh = Vec::new();
        // No ACK ever arrives: fire the queued timer events in time order, as the event
        // loop would (stale ones included: the timers must ignore them).
        let mut pending: Vec<(TimerKind, SimTime)> = out.timers.clone();
        for _ in 0..200 {
            pending.sort_by_key(|&(_, at)| std::cmp::Reverse(at));
            let Some((kind, at)) = pending.pop() else {
                break;
            };
            out.clear();
            s.on_timer(at, kind, &mut out);
            pending.extend(out.timers.iter().copied());
            if kind == TimerKind::Rto && out.pkts.iter().any(|p| p.retrans) {
                fired.push(at);
                ssthresh.push(s.tcp.ssthresh);
            }
            if fired.len() == 5 {
                break;
            }
        }
        assert_eq!(fired.len(), 5, "RTOs fired: {fired:?}");
        let gaps: Vec<u64> = fired
            .windows(2)
            .map(|w| (w[1] - w[0]).as_millis())
            .collect();
        for w in gaps.windows(2) {
            assert_eq!(w[1], 2 * w[0], "backoff must double: {gaps:?}");
        }
        // The first RTO halves; later ones in the same episode keep ssthresh (RFC 5681 eq. 4).
        assert_eq!(ssthresh[0], 5);
        assert!(ssthresh.iter().all(|&x| x == 5), "{ssthresh:?}");
        assert_eq!(s.tcp.cwnd, 1);
        assert_eq!(s.stats.rto_count, 5);
    }

    #[test]
    fn the_backed_off_rto_never_exceeds_tcp_rto_max() {
        // `inet_csk_rto_backoff`: min(rto << backoff, TCP_RTO_MAX = 120 s)
        let (mut s, _, _) = established();
        for backoff in [0u32, 3, 9, 15, 30] {
            s.backoff = backoff;
            let rto = s.rto_backed_off();
            assert!(rto <= RTO_MAX, "backoff {backoff}: {rto:?}");
        }
        s.backoff = 30;
        assert_eq!(s.rto_backed_off(), RTO_MAX);
    }

    /// A sender skipping unchanged PTO re-arms and one re-arming after every send, fed the
    /// same ACKs (at ms, with the given receive window) and then their timers until none is
    /// left: both must send and arm alike. Returns the first's RTO count.
    fn compare_pto_reuse(rwnd: u64, acks: &[(u64, Packet)]) -> u64 {
        let (mut a, oa, _) = established_with(rwnd);
        let (mut b, ob, _) = established_with(rwnd);
        b.reuse_pto = false;
        let (mut pa, mut pb) = (oa.timers.clone(), ob.timers.clone());
        for (i, (t, p)) in acks.iter().enumerate() {
            let mut p = *p;
            p.rwnd = rwnd;
            let (o1, o2) = (deliver(&mut a, ms(*t), &p), deliver(&mut b, ms(*t), &p));
            assert_eq!(o1.pkts, o2.pkts, "sent after ACK {i}");
            assert_eq!(o1.timers, o2.timers, "timers after ACK {i}");
            assert_eq!(a.tlp_timer.deadline(), b.tlp_timer.deadline(), "PTO {i}");
            assert_eq!(a.rto_timer.deadline(), b.rto_timer.deadline(), "RTO {i}");
            pa.extend(o1.timers.iter().copied());
            pb.extend(o2.timers.iter().copied());
        }
        // Then no more ACKs: the events queued so far fire (probe, RTOs backing off) alike.
        for _ in 0..40 {
            if pa.is_empty() {
                break;
            }
            pa.sort_by_key(|&(_, at)| std::cmp::Reverse(at));
            pb.sort_by_key(|&(_, at)| std::cmp::Reverse(at));
            let ((ka, ta), (kb, tb)) = (pa.pop().unwrap(), pb.pop().unwrap());
            assert_eq!((ka, ta), (kb, tb));
            let (mut o1, mut o2) = (Out::default(), Out::default());
            a.on_timer(ta, ka, &mut o1);
            b.on_timer(tb, kb, &mut o2);
            assert_eq!(o1.pkts, o2.pkts);
            assert_eq!(o1.timers, o2.timers);
            pa.extend(o1.timers.iter().copied());
            pb.extend(o2.timers.iter().copied());
        }
        assert_eq!(a.stats.rto_count, b.stats.rto_count);
        a.stats.rto_count
    }

    #[test]
    fn skipping_an_unchanged_pto_rearm_leaves_the_sender_as_rearming_leaves_it() {
        // `schedule_loss_probe_after_send` against calling `tcp_schedule_loss_probe` after
        // every send: in-order ACKs (the ACK's own re-arm then the send's), two ACKs at one
        // instant, SACKed duplicates (Disorder, Recovery), a retransmission, an RTT sample
        // from SACKs only, then an RTO with backoff and a tail loss probe.
        let mut acks: Vec<(u64, Packet)> = Vec::new();
        for k in 1..=8 {
            acks.push((150 + 2 * k, ack(2 * k * MSS, &[])));
        }
        acks.push((166, ack(17 * MSS, &[])));
        acks.push((170, ack(18 * MSS, &[(19, 21)])));
        acks.push((170, ack(18 * MSS, &[(19, 23)])));
        acks.push((172, ack(18 * MSS, &[(19, 25)])));
        acks.push((180, ack(25 * MSS, &[])));
        for k in 26..=40 {
            acks.push((180 + k, ack(k * MSS, &[])));
        }
        assert!(compare_pto_reuse(1 << 20, &acks) > 0);
        // A two-segment receive window: each ACK of one segment re-arms with one segment out
        // (PTO + 200 ms), then the send makes it two (PTO + 2 ms): the deadline changes.
        let acks: Vec<(u64, Packet)> = (1..=6).map(|k| (150 + 5 * k, ack(k * MSS, &[]))).collect();
        compare_pto_reuse(2 * MSS, &acks);
    }

    #[test]
    fn the_tail_loss_probe_is_armed_two_srtt_after_the_last_send() {
        // `tcp_schedule_loss_probe` (RFC 8985 §7.2): PTO = 2·SRTT, plus TCP_TIMEOUT_MIN (2 ms)
        // with more than one segment out; srtt is 100 ms after the handshake.
        let (_, out, t) = established();
        let tlp: Vec<SimTime> = out
            .timers
            .iter()
            .filter(|(k, _)| *k == TimerKind::Tlp)
            .map(|&(_, at)| at)
            .collect();
        assert_eq!(tlp.last().copied(), Some(t + SimDuration::from_millis(202)));
    }

    /// The zero-window probe's deadline (the RTO's slot), if armed.
    fn probe0_at(s: &Sender) -> Option<SimTime> {
        s.rto_timer.deadline().filter(|_| s.probe_pending)
    }

    /// An ACK of everything below `ack` (bytes) advertising `rwnd` bytes.
    fn window_ack(ack: u64, rwnd: u64) -> Packet {
        let mut p = Packet::new(0, Kind::Ack, 0);
        p.ack = ack;
        p.rwnd = rwnd;
        p
    }

    #[test]
    fn a_closed_window_is_probed_at_the_rto_doubling_until_it_reopens() {
        // `tcp_check_probe_timer`, `tcp_probe_timer` → `tcp_xmit_probe_skb`, `tcp_ack_probe`
        // (upstream slow-start-after-win-update).
        let mut s = app_established(true);
        s.set_slow_start_after_idle(true);
        write(&mut s, ms(100), 20 * MSS);
        deliver(&mut s, ms(200), &window_ack(10 * MSS, 1 << 20));
        deliver(&mut s, ms(300), &window_ack(20 * MSS, 0));
        let cwnd = s.tcp.cwnd;
        assert_eq!(cwnd, 20);
        let mut out = Out::default();
        s.app_write(ms(300), 10 * MSS, &mut out);
        assert!(ranges(&out).is_empty(), "the window is closed");
        let rto = s.rtt.rto().max(SimDuration::from_millis(200));
        let mut at = probe0_at(&s).expect("the probe timer is armed");
        assert_eq!(at, ms(300) + rto);
        for k in 1..=3u64 {
            let mut o = Out::default();
            s.on_timer(at, TimerKind::Rto, &mut o);
            assert!(s.probe_fired());
            let probe: Vec<(u64, u32)> = o.pkts.iter().map(|p| (p.seq, p.len)).collect();
            assert_eq!(
                probe,
                vec![(20 * MSS - 1, 0)],
                "probe {k}: snd_una - 1, no data"
            );
            let next = probe0_at(&s).expect("the next probe");
            assert_eq!(
                next - at,
                rto.mul_u64(1 << k),
                "probe {k}: the interval doubles"
            );
            assert_eq!((s.backoff, s.tcp.cwnd), (k as u32, cwnd));
            at = next;
        }
        // The window reopens long after the last data: the probing ends, cwnd restarts
        // (`tcp_ack_update_window` → `tcp_cwnd_restart`, with the RTO the probes did not
        // back off), and the data goes.
        let out = deliver(&mut s, ms(3_000), &window_ack(20 * MSS, 1 << 20));
        assert_eq!(s.tcp.cwnd, 10);
        assert_eq!(ranges(&out).first(), Some(&(20 * MSS, MSS as u32)));
        assert_eq!(ranges(&out).len(), 10);
        assert_eq!(s.backoff, 0);
    }

    #[test]
    fn a_window_smaller_than_a_segment_is_probed_with_the_head_that_fits() {
        // `tcp_write_wakeup`: the window reopens by less than a segment, so the probe timer
        // stays armed (`tcp_ack_probe`) and, when it fires, sends the unsent head cut to the
        // window (`tcp_fragment`); the rest follows once the window opens. (Found by the
        // cargo-fuzz target `config`: the send path had assumed whole segments.)
        let mut s = app_established(true);
        write(&mut s, ms(100), 20 * MSS);
        deliver(&mut s, ms(200), &window_ack(10 * MSS, 1 << 20));
        deliver(&mut s, ms(300), &window_ack(20 * MSS, 0));
        let mut out = Out::default();
        s.app_write(ms(300), 10 * MSS, &mut out);
        assert!(ranges(&out).is_empty(), "the window is closed");
        let half = MSS / 2;
        let out = deliver(&mut s, ms(400), &window_ack(20 * MSS, half));
        assert!(
            ranges(&out).is_empty(),
            "less than a segment: nothing sent on the ACK"
        );
        let at = probe0_at(&s).expect("the probe timer stays armed");
        let mut o = Out::default();
        s.on_timer(at, TimerKind::Rto, &mut o);
        assert_eq!(ranges(&o), vec![(20 * MSS, half as u32)]);
        let out = deliver(
            &mut s,
            at + SimDuration::from_millis(50),
            &window_ack(20 * MSS + half, 1 << 20),
        );
        assert_eq!(ranges(&out).first(), Some(&(20 * MSS + half, MSS as u32)));
    }

    #[test]
    fn data_held_by_msg_more_with_nothing_in_flight_leaves_on_the_probe_timer() {
        // upstream nagle/sendmsg_msg_more: 40 bytes with MSG_MORE, TCP_NODELAY on; the
        // window is open, so `tcp_write_wakeup` sends them after `tcp_probe0_base`.
        let mut s = app_established(true);
        let mut out = Out::default();
        s.app_send(ms(100), 40, true, &mut out);
        assert!(ranges(&out).is_empty());
        let at = probe0_at(&s).expect("the probe timer is armed");
        assert_eq!(at, ms(100) + s.rtt.rto().max(SimDuration::from_millis(200)));
        let mut o = Out::default();
        s.on_timer(at, TimerKind::Rto, &mut o);
        assert!(s.probe_fired());
        assert_eq!(ranges(&o), vec![(0, 40)]);
        assert!(!s.probe_pending, "data in flight: no more probes");
        assert_eq!(s.backoff, 0);
    }

    #[test]
    fn a_loss_probe_sends_one_new_segment_beyond_a_full_cwnd() {
        // RFC 8985 §7.3 / `tcp_send_loss_probe`: with unsent data and room in the receive
        // window the probe is one new segment, sent although cwnd is full.
        let (mut s, out, _) = established();
        let &(kind, at) = out
            .timers
            .iter()
            .find(|(k, _)| *k == TimerKind::Tlp)
            .unwrap();
        let mut probe = Out::default();
        s.on_timer(at, kind, &mut probe);
        assert_eq!(sent(&probe), vec![(10, false)]);
    }
}
