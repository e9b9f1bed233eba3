//! Test kit: a scripted fake sender, left for twelve unit tests of cubic (2), nv (2), bbr (5)
//! and bbr3 (3) that script losses and RTOs or change the path mid-run (the property tests
//! of every algorithm and the other path-level tests run on the simulator's own sender:
//! crates/satcc-sim/tests/cc_properties.rs, cc_paths.rs).
//!
//! [`Driver`] plays the part of Linux's `tcp_output.c`/`tcp_input.c`/`tcp_rate.c` around one
//! algorithm: it keeps a [`TcpState`] and a scoreboard of outstanding segments, and calls
//! the hooks in the kernel's order. It is also a worked reference for the simulator's
//! sender: what it maintains, and when, is what the algorithms expect.
//!
//! | operation | Linux path it mirrors |
//! |-----------|------------------------|
//! | [`Driver::send`], [`Driver::send_window`] | `tcp_event_data_sent` (TX_START, `lsndtime`), `tcp_rate_skb_sent`, `tcp_cwnd_validate`, PRR's `prr_out` |
//! | [`Driver::ack`], [`Driver::ack_ids`] | `tcp_ack`: `in_ack_event` → SACK/cum-ACK scoreboard + `tcp_rate_skb_delivered` → `pkts_acked` → loss marking / recovery entry and exit → `tcp_rate_gen` → `cong_control`, or PRR (`tcp_cwnd_reduction`) / `cong_avoid` → `tcp_update_pacing_rate` |
//! | [`Driver::lose`] | marking segments lost (RACK/dupthresh) and `tcp_enter_recovery` (`tcp_init_cwnd_reduction`: prior_cwnd, ssthresh, PRR) |
//! | [`Driver::rto`] | `tcp_enter_loss`: mark all lost, ssthresh, CA_EVENT_LOSS, cwnd = in_flight + 1, state Loss |
//! | [`Driver::undo`] | `tcp_undo_cwnd_reduction`: cwnd = `undo_cwnd`, ssthresh = prior_ssthresh, state Open |
//! | [`Driver::mark_app_limited`] | `tcp_rate_check_app_limited` |
//!
//! [`PathSim`] runs a driver over a single bottleneck (FIFO at a fixed packet rate, a
//! drop-tail buffer, a fixed propagation RTT, optionally a token-bucket policer), one ACK
//! per delivered segment, RACK-like loss detection (3 later deliveries) and an RTO timer.
//! Simplifications (test kit, not the simulator): segments are counted, not sized; no
//! delayed ACKs; no reordering; `tcp_min_rtt` is an all-time minimum.

use std::collections::VecDeque;

use satcc_core::{SimDuration, SimTime};

use crate::{
    AckEventFlags, AckSample, CaEvent, CaState, CongestionControl, TcpState, INFINITE_SSTHRESH,
};

/// Default MSS of the kit's connections (bytes).
pub const MSS: u32 = 1448;
/// Linux `TCP_INIT_CWND`.
pub const IW: u32 = 10;
/// Linux `TCP_RTO_MIN` (200 ms).
const RTO_MIN: SimDuration = SimDuration::from_millis(200);
/// Segments delivered after a dropped one before it is marked lost (RFC 6675 DupThresh).
const DUPTHRESH: u32 = 3;

/// One outstanding segment and its `tcp_skb_cb` rate-sampling snapshot.
#[derive(Clone, Debug)]
struct Seg {
    id: u64,
    sent_at: SimTime,
    /// `tx.delivered`, `tx.delivered_ce`, `tx.delivered_mstamp` (None once sacked, as the
    /// kernel zeroes it), `tx.first_tx_mstamp`, `tx.is_app_limited`.
    tx_delivered: u64,
    tx_delivered_ce: u64,
    tx_delivered_mstamp: Option<SimTime>,
    tx_first_tx_mstamp: SimTime,
    tx_app_limited: bool,
    sacked: bool,
    lost: bool,
    /// Retransmitted and that retransmission is still in flight (`TCPCB_SACKED_RETRANS`).
    retrans: bool,
    /// Ever retransmitted (`TCPCB_EVER_RETRANS`): no RTT sample (Karn).
    ever_retrans: bool,
}

/// `struct rate_sample` while an ACK is being processed.
#[derive(Default)]
struct RateAcc {
    prior_delivered: u64,
    prior_delivered_ce: u64,
    prior_mstamp: Option<SimTime>,
    /// Send time of the most recently sent delivered segment (tie-break of `tcp_skb_sent_after`).
    last_sent: Option<(SimTime, u64)>,
    send_interval_us: u64,
    is_app_limited: bool,
    is_retrans: bool,
}

/// A fake TCP sender driving one algorithm.
pub struct Driver {
    pub tcp: TcpState,
    pub cc: Box<dyn CongestionControl>,
    pub now: SimTime,
    segs: VecDeque<Seg>,
    next_id: u64,
    /// `tp->first_tx_mstamp`.
    first_tx_mstamp: SimTime,
    /// `tp->high_seq`: recovery point (bytes).
    high_seq: u64,
    prr_delivered: u32,
    prr_out: u32,
    /// `tp->prior_ssthresh` for undo.
    prior_ssthresh: u32,
    /// `tp->cwnd_usage_seq`.
    cwnd_usage_seq: u64,
    rttvar_us: u64,
    /// Segments marked lost by [`Driver::lose`] since the last ACK (`rate_sample.losses`).
    pending_losses: u32,
    /// `icsk_retransmits`: RTOs in the current Loss episode.
    rto_backoff: u32,
    /// Every AckSample handed to the algorithm, for tests that inspect them.
    pub acks: u64,
}

impl Driver {
    /// A connection with the kit's MSS and IW10, no RTT known at `init` (as after a SYN
    /// whose RTT was not measured).
    pub fn new(cc: Box<dyn CongestionControl>) -> Self {
        Driver::with(cc, MSS, IW, None)
    }

    /// A connection with `mss`, `iw`, and optionally the SYN/SYN-ACK RTT already measured
    /// when `init` runs (Linux takes that sample before `tcp_init_congestion_control`).
    pub fn with(
        cc: Box<dyn CongestionControl>,
        mss: u32,
        iw: u32,
        syn_rtt: Option<SimDuration>,
    ) -> Self {
        let mut tcp = TcpState::new(mss, iw);
        let mut rttvar_us = 0;
        if let Some(r) = syn_rtt {
            let us = r.as_micros().max(1);
            tcp.srtt_us = us;
            tcp.min_rtt_us = us;
            rttvar_us = us / 2;
        }
        let mut d = Driver {
            tcp,
            cc,
            now: SimTime::ZERO,
            segs: VecDeque::new(),
            next_id: 0,
            first_tx_mstamp: SimTime::ZERO,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            prior_ssthresh: 0,
            cwnd_usage_seq: 0,
            rttvar_us,
            pending_losses: 0,
            rto_backoff: 0,
            acks: 0,
        };
        d.cc.on_init(d.now, &mut d.tcp);
        d
    }

    // ----- time -----------------------------------------------------------------------

    /// Let `d` pass with nothing happening.
    pub fn advance(&mut self, d: SimDuration) {
        self.set_time(self.now + d);
    }

    /// Move the clock to `t` (never backwards).
    pub fn set_time(&mut self, t: SimTime) {
        self.now = self.now.max(t);
        self.tcp.now = self.now;
    }

    // ----- sending --------------------------------------------------------------------

    /// Send `n` segments now, regardless of cwnd (retransmissions of lost segments first).
    pub fn send(&mut self, n: u32) -> Vec<u64> {
        let ids: Vec<u64> = (0..n).map(|_| self.send_one()).collect();
        let limited = self.tcp.in_flight() >= self.tcp.cwnd;
        self.cwnd_validate(limited);
        ids
    }

    /// Send while cwnd allows (`tcp_write_xmit` without pacing); the flow is cwnd-limited.
    pub fn send_window(&mut self) -> Vec<u64> {
        let mut ids = Vec::new();
        while self.tcp.in_flight() < self.tcp.cwnd {
            ids.push(self.send_one());
        }
        self.cwnd_validate(true);
        ids
    }

    /// Transmit one segment: a lost one if any, else new data.
    pub fn send_one(&mut self) -> u64 {
        let now = self.now;
        // tcp_event_data_sent: TX_START when nothing is in flight, then lsndtime.
        if self.tcp.in_flight() == 0 {
            self.cc.on_event(now, &mut self.tcp, CaEvent::TxStart);
        }
        // tcp_rate_skb_sent: a new flight starts its clocks at this send.
        if self.tcp.packets_out == 0 {
            self.first_tx_mstamp = now;
            self.tcp.delivered_mstamp = now;
        }
        let snap = |t: &TcpState, first: SimTime| {
            (
                t.delivered,
                t.delivered_ce,
                t.delivered_mstamp,
                first,
                t.app_limited != 0,
            )
        };
        let (dl, dce, dm, first, al) = snap(&self.tcp, self.first_tx_mstamp);
        // Retransmissions first (segments marked lost and not yet resent).
        let retx = if self.tcp.lost_out > self.tcp.retrans_out {
            self.segs
                .iter_mut()
                .find(|s| s.lost && !s.retrans && !s.sacked)
        } else {
            None
        };
        let id = if let Some(seg) = retx {
            seg.retrans = true;
            seg.ever_retrans = true;
            seg.sent_at = now;
            (
                seg.tx_delivered,
                seg.tx_delivered_ce,
                seg.tx_delivered_mstamp,
            ) = (dl, dce, Some(dm));
            (seg.tx_first_tx_mstamp, seg.tx_app_limited) = (first, al);
            self.tcp.retrans_out += 1;
            seg.id
        } else {
            let id = self.next_id;
            self.next_id += 1;
            self.segs.push_back(Seg {
                id,
                sent_at: now,
                tx_delivered: dl,
                tx_delivered_ce: dce,
                tx_delivered_mstamp: Some(dm),
                tx_first_tx_mstamp: first,
                tx_app_limited: al,
                sacked: false,
                lost: false,
                retrans: false,
                ever_retrans: false,
            });
            self.tcp.packets_out += 1;
            self.tcp.snd_nxt += u64::from(self.tcp.mss);
            id
        };
        self.tcp.lsndtime = now;
        if matches!(self.tcp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        id
    }

    /// `tcp_cwnd_validate`: remember whether the last window was cwnd-limited.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let t = &mut self.tcp;
        if t.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!t.is_cwnd_limited && t.packets_out > t.max_packets_out)
        {
            t.is_cwnd_limited = is_cwnd_limited;
            t.max_packets_out = t.packets_out;
            self.cwnd_usage_seq = t.snd_nxt;
        }
    }

    /// `tcp_rate_check_app_limited`: the application has nothing more to send.
    pub fn mark_app_limited(&mut self) {
        self.tcp.app_limited = (self.tcp.delivered + u64::from(self.tcp.in_flight())).max(1);
    }

    // ----- receiving ACKs -------------------------------------------------------------

    /// Ids of outstanding segments an ACK could deliver, oldest first.
    pub fn deliverable(&self) -> Vec<u64> {
        self.segs
            .iter()
            .filter(|s| !s.sacked && (!s.lost || s.retrans))
            .map(|s| s.id)
            .collect()
    }

    /// Ids of outstanding (not yet cumulatively acked) segments, oldest first.
    pub fn outstanding(&self) -> Vec<u64> {
        self.segs.iter().map(|s| s.id).collect()
    }

    /// When segment `id`'s latest transmission left.
    pub fn sent_at(&self, id: u64) -> Option<SimTime> {
        self.index(id).map(|i| self.segs[i].sent_at)
    }

    /// Position of outstanding segment `id` (ids are consecutive from the oldest).
    fn index(&self, id: u64) -> Option<usize> {
        let first = self.segs.front()?.id;
        let i = usize::try_from(id.checked_sub(first)?).ok()?;
        (i < self.segs.len()).then_some(i)
    }

    /// One ACK delivering the `k` oldest deliverable segments, arriving `rtt` after the
    /// newest of them was sent (the clock moves there unless it is already later).
    pub fn ack(&mut self, k: usize, rtt: SimDuration) -> AckSample {
        let ids: Vec<u64> = self.deliverable().into_iter().take(k).collect();
        if let Some(t) = ids.iter().filter_map(|&id| self.sent_at(id)).max() {
            self.set_time(t + rtt);
        }
        self.ack_ids(&ids, &[])
    }

    /// One ACK (cumulative + SACK) delivering `delivered`, with `lost` newly marked lost
    /// by it (RACK/dupthresh), processed in `tcp_ack`'s order. Unknown ids are ignored.
    pub fn ack_ids(&mut self, delivered: &[u64], lost: &[u64]) -> AckSample {
        let now = self.now;
        self.tcp.now = now;
        let prior_in_flight = self.tcp.in_flight();
        let prior_snd_una = self.tcp.snd_una;
        self.cc
            .on_ack_event(now, &mut self.tcp, AckEventFlags::default());

        // SACK / cumulative scoreboard and tcp_rate_skb_delivered.
        let mut rs = RateAcc::default();
        let mut newly: u32 = 0;
        let mut rtt_from: Option<SimTime> = None;
        for &id in delivered {
            let Some(i) = self.index(id) else { continue };
            let seg = &mut self.segs[i];
            if seg.sacked {
                continue;
            }
            if seg.lost {
                self.tcp.lost_out -= 1;
            }
            if seg.retrans {
                self.tcp.retrans_out -= 1;
            }
            seg.lost = false;
            seg.retrans = false;
            seg.sacked = true;
            self.tcp.sacked_out += 1;
            newly += 1;
            if !seg.ever_retrans {
                rtt_from = Some(rtt_from.map_or(seg.sent_at, |t: SimTime| t.max(seg.sent_at)));
            }
            rate_skb_delivered(&mut rs, seg, &mut self.first_tx_mstamp);
            seg.tx_delivered_mstamp = None;
        }
        self.tcp.delivered += u64::from(newly);
        let mut pkts_acked = 0;
        while self.segs.front().is_some_and(|s| s.sacked) {
            self.segs.pop_front();
            self.tcp.sacked_out -= 1;
            self.tcp.packets_out -= 1;
            self.tcp.snd_una += u64::from(self.tcp.mss);
            pkts_acked += 1;
        }

        // Loss marking carried by this ACK.
        let mut newly_lost = std::mem::take(&mut self.pending_losses);
        for &id in lost {
            newly_lost += self.mark_lost(id);
        }

        // RTT sample (tcp_ack_update_rtt, RFC 6298 estimator).
        let rtt_us = rtt_from.map(|t| now.saturating_since(t).as_micros().max(1));
        if let Some(r) = rtt_us {
            self.rtt_estimator(r);
        }

        // tcp_rate_gen.
        if self.tcp.app_limited != 0 && self.tcp.delivered > self.tcp.app_limited {
            self.tcp.app_limited = 0;
        }
        if newly > 0 {
            self.tcp.delivered_mstamp = now;
        }
        let (delivered_rs, interval_us) = match rs.prior_mstamp {
            None => (None, 0),
            Some(pm) => {
                let d = self.tcp.delivered - rs.prior_delivered;
                let ack_us = now.saturating_since(pm).as_micros();
                let iv = rs.send_interval_us.max(ack_us);
                let min_rtt = self.tcp.min_rtt_us;
                (Some(d), if iv < min_rtt { 0 } else { iv })
            }
        };
        let ack = AckSample {
            ack_seq: self.tcp.snd_una,
            pkts_acked,
            acked_sacked: newly,
            rtt_us,
            prior_in_flight,
            delivered: delivered_rs,
            delivered_ce: self.tcp.delivered_ce - rs.prior_delivered_ce,
            interval_us,
            prior_delivered: rs.prior_delivered,
            losses: newly_lost,
            is_app_limited: rs.is_app_limited,
            is_retrans: rs.is_retrans,
            is_ack_delayed: false,
            ece: false,
        };
        self.acks += 1;

        // tcp_clean_rtx_queue → pkts_acked.
        self.cc.on_pkts_acked(now, &mut self.tcp, &ack);

        // tcp_fastretrans_alert: leave Recovery/Loss at the recovery point, or enter
        // Recovery on new losses.
        let snd_una_advanced = self.tcp.snd_una > prior_snd_una;
        match self.tcp.ca_state {
            CaState::Recovery | CaState::Cwr if self.tcp.snd_una >= self.high_seq => {
                self.end_cwnd_reduction();
                self.set_state(CaState::Open);
            }
            CaState::Loss if self.tcp.snd_una >= self.high_seq => {
                self.rto_backoff = 0;
                self.set_state(CaState::Open);
            }
            _ => {}
        }
        if newly_lost > 0 && self.tcp.ca_state < CaState::Recovery {
            self.enter_recovery();
        }

        // tcp_cong_control.
        if self.cc.has_cong_control() {
            self.cc.on_cong_control(now, &mut self.tcp, &ack);
        } else {
            if matches!(self.tcp.ca_state, CaState::Recovery | CaState::Cwr) {
                self.cwnd_reduction(newly, newly_lost, snd_una_advanced);
            } else if pkts_acked > 0 {
                self.cc.on_cong_avoid(now, &mut self.tcp, &ack);
            }
            self.update_pacing_rate();
        }
        ack
    }

    /// Mark one outstanding, not sacked segment lost; returns 1 if it was newly marked.
    fn mark_lost(&mut self, id: u64) -> u32 {
        let Some(i) = self.index(id) else { return 0 };
        let seg = &mut self.segs[i];
        if seg.sacked {
            return 0;
        }
        if seg.retrans {
            seg.retrans = false;
            self.tcp.retrans_out -= 1;
        }
        if seg.lost {
            return 0;
        }
        seg.lost = true;
        self.tcp.lost_out += 1;
        self.tcp.lost += 1;
        1
    }

    /// RFC 6298 §2 (Linux `tcp_rtt_estimator` without its mdev_max refinements).
    fn rtt_estimator(&mut self, r: u64) {
        let t = &mut self.tcp;
        if t.srtt_us == 0 {
            t.srtt_us = r;
            self.rttvar_us = r / 2;
        } else {
            self.rttvar_us = (3 * self.rttvar_us + t.srtt_us.abs_diff(r)) / 4;
            t.srtt_us = (7 * t.srtt_us + r) / 8;
        }
        t.min_rtt_us = t.min_rtt_us.min(r);
    }

    /// The retransmission timeout: srtt + 4·rttvar, at least 200 ms, doubled per backoff.
    pub fn rto_interval(&self) -> SimDuration {
        let base = if self.tcp.srtt_us == 0 {
            SimDuration::from_secs(1)
        } else {
            SimDuration::from_micros(self.tcp.srtt_us + 4 * self.rttvar_us).max(RTO_MIN)
        };
        base.mul_u64(1 << self.rto_backoff.min(6))
    }

    // ----- loss, recovery, RTO, undo ----------------------------------------------------

    /// Mark the `n` oldest outstanding, unsacked, not-yet-lost segments lost (reported in
    /// the next ACK's `losses`) and enter Recovery as `tcp_enter_recovery` does.
    pub fn lose(&mut self, n: u32) -> Vec<u64> {
        let ids: Vec<u64> = self
            .segs
            .iter()
            .filter(|s| !s.sacked && (!s.lost || s.retrans))
            .take(n as usize)
            .map(|s| s.id)
            .collect();
        for &id in &ids {
            self.pending_losses += self.mark_lost(id);
        }
        if !ids.is_empty() && self.tcp.ca_state < CaState::Recovery {
            self.enter_recovery();
        }
        ids
    }

    /// `tcp_current_ssthresh`.
    fn current_ssthresh(&self) -> u32 {
        if matches!(self.tcp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tcp.ssthresh
        } else {
            self.tcp
                .ssthresh
                .max((self.tcp.cwnd >> 1) + (self.tcp.cwnd >> 2))
        }
    }

    /// `tcp_enter_recovery` → `tcp_init_cwnd_reduction` → `tcp_set_ca_state(Recovery)`.
    fn enter_recovery(&mut self) {
        if !matches!(self.tcp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prior_ssthresh = self.current_ssthresh();
            self.high_seq = self.tcp.snd_nxt;
            self.tcp.cwnd_cnt = 0;
            self.tcp.prior_cwnd = self.tcp.cwnd;
            self.prr_delivered = 0;
            self.prr_out = 0;
            self.tcp.ssthresh = self.cc.ssthresh(self.now, &self.tcp);
        }
        self.set_state(CaState::Recovery);
    }

    /// `tcp_cwnd_reduction` (PRR, RFC 6937).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, snd_una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tcp.prior_cwnd == 0 {
            return;
        }
        let t = &mut self.tcp;
        self.prr_delivered += newly_acked_sacked;
        let in_flight = i64::from(t.in_flight());
        let delta = i64::from(t.ssthresh) - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend =
                u64::from(t.ssthresh) * u64::from(self.prr_delivered) + u64::from(t.prior_cwnd) - 1;
            (dividend / u64::from(t.prior_cwnd)) as i64 - i64::from(self.prr_out)
        } else {
            let mut s = (i64::from(self.prr_delivered) - i64::from(self.prr_out))
                .max(i64::from(newly_acked_sacked));
            if snd_una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        t.cwnd = (in_flight + sndcnt).clamp(1, i64::from(u32::MAX)) as u32;
    }

    /// `tcp_end_cwnd_reduction` (skipped for `cong_control` algorithms, as in Linux).
    fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.tcp.ssthresh < INFINITE_SSTHRESH {
            self.tcp.cwnd = self.tcp.ssthresh;
            self.tcp.cwnd_stamp = self.now;
        }
        self.cc
            .on_event(self.now, &mut self.tcp, CaEvent::CompleteCwr);
    }

    /// `tcp_set_ca_state`: the algorithm hears of the change before it happens.
    pub fn set_state(&mut self, new: CaState) {
        self.cc.on_state(self.now, &mut self.tcp, new);
        self.tcp.ca_state = new;
    }

    /// The retransmission timer fired: `tcp_enter_loss`.
    pub fn rto(&mut self) {
        let ids: Vec<u64> = self
            .segs
            .iter()
            .filter(|s| !s.sacked)
            .map(|s| s.id)
            .collect();
        for id in ids {
            self.mark_lost(id);
        }
        let st = self.tcp.ca_state;
        if st <= CaState::Disorder
            || self.high_seq <= self.tcp.snd_una
            || (st == CaState::Loss && self.rto_backoff == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.tcp.prior_cwnd = self.tcp.cwnd;
            self.tcp.ssthresh = self.cc.ssthresh(self.now, &self.tcp);
            self.cc.on_event(self.now, &mut self.tcp, CaEvent::Loss);
        }
        self.tcp.cwnd = self.tcp.in_flight() + 1;
        self.tcp.cwnd_cnt = 0;
        self.tcp.cwnd_stamp = self.now;
        self.set_state(CaState::Loss);
        self.high_seq = self.tcp.snd_nxt;
        self.rto_backoff += 1;
    }

    /// The last reduction proved spurious: `tcp_undo_cwnd_reduction` and back to Open.
    pub fn undo(&mut self) {
        if self.tcp.ca_state == CaState::Open || self.prior_ssthresh == 0 {
            return;
        }
        self.tcp.cwnd = self.cc.undo_cwnd(self.now, &self.tcp);
        if self.prior_ssthresh > self.tcp.ssthresh {
            self.tcp.ssthresh = self.prior_ssthresh;
        }
        self.prior_ssthresh = 0;
        self.rto_backoff = 0;
        self.set_state(CaState::Open);
    }

    /// `tcp_update_pacing_rate` (what Linux computes for every non-`cong_control` flow and
    /// HyStart's ACK-train cushion reads): 200 % of cwnd/srtt in slow start, 120 % after.
    fn update_pacing_rate(&mut self) {
        let t = &mut self.tcp;
        let ratio: u128 = if t.cwnd < t.ssthresh / 2 { 200 } else { 120 };
        let mut rate = u128::from(t.mss) * 10_000 * ratio * u128::from(t.cwnd.max(t.packets_out));
        if t.srtt_us > 0 {
            rate /= u128::from(t.srtt_us);
        }
        t.pacing_rate_bps = rate.min(u128::from(t.max_pacing_rate_bps)) as u64;
    }

    /// Check the scoreboard counters against the segments; an error names the first
    /// mismatch (the "bytes in flight = sum of unacked" invariant).
    pub fn check_scoreboard(&self) -> Result<(), String> {
        let t = &self.tcp;
        let count = |f: fn(&Seg) -> bool| self.segs.iter().filter(|s| f(s)).count() as u32;
        let checks = [
            ("packets_out", t.packets_out, self.segs.len() as u32),
            ("sacked_out", t.sacked_out, count(|s| s.sacked)),
            ("lost_out", t.lost_out, count(|s| s.lost)),
            ("retrans_out", t.retrans_out, count(|s| s.retrans)),
            (
                "in_flight",
                t.in_flight(),
                count(|s| !s.sacked && (!s.lost || s.retrans)),
            ),
        ];
        for (name, have, want) in checks {
            if have != want {
                return Err(format!("{name} = {have}, scoreboard says {want}"));
            }
        }
        let unacked = self.segs.len() as u64 * u64::from(t.mss);
        if t.snd_nxt - t.snd_una != unacked {
            return Err(format!(
                "snd_nxt − snd_una = {}, unacked bytes = {unacked}",
                t.snd_nxt - t.snd_una
            ));
        }
        Ok(())
    }
}

/// `tcp_rate_skb_delivered`: the newest-sent delivered segment defines the sample.
fn rate_skb_delivered(rs: &mut RateAcc, seg: &Seg, first_tx_mstamp: &mut SimTime) {
    let Some(dm) = seg.tx_delivered_mstamp else {
        return;
    };
    let key = (seg.sent_at, seg.id);
    let newer = match rs.last_sent {
        None => true,
        Some(last) => key > last,
    };
    if rs.prior_mstamp.is_none() || newer {
        rs.prior_delivered = seg.tx_delivered;
        rs.prior_delivered_ce = seg.tx_delivered_ce;
        rs.prior_mstamp = Some(dm);
        rs.is_app_limited = seg.tx_app_limited;
        rs.is_retrans = seg.ever_retrans;
        rs.last_sent = Some(key);
        *first_tx_mstamp = seg.sent_at;
        rs.send_interval_us = seg
            .sent_at
            .saturating_since(seg.tx_first_tx_mstamp)
            .as_micros();
    }
}

// ----- a single-bottleneck path -------------------------------------------------------

/// A token-bucket policer in front of the bottleneck (drops what exceeds the tokens).
#[derive(Clone, Copy, Debug)]
pub struct Policer {
    pub rate_pps: f64,
    pub burst_pkts: f64,
}

/// The path [`PathSim`] models.
#[derive(Clone, Copy, Debug)]
pub struct Path {
    /// Bottleneck service rate, packets per second.
    pub rate_pps: f64,
    /// Two-way propagation delay (RTT without queueing).
    pub base_rtt: SimDuration,
    /// Drop-tail buffer at the bottleneck, packets (waiting, not counting the one in service).
    pub buffer_pkts: usize,
    pub policer: Option<Policer>,
    /// Whether the sender paces at `tcp.pacing_rate_bps` (always when the algorithm sets
    /// `pacing_needed`).
    pub pace: bool,
}

#[derive(Clone, Copy, Debug)]
struct InNet {
    ack_at: SimTime,
    id: u64,
    tx: u64,
}

#[derive(Clone, Copy, Debug)]
struct Dropped {
    id: u64,
    tx: u64,
    later_delivered: u32,
}

/// Runs a [`Driver`] over a [`Path`] with an unlimited application.
pub struct PathSim {
    pub path: Path,
    net: VecDeque<InNet>,
    departures: VecDeque<SimTime>,
    last_departure: SimTime,
    tokens: f64,
    tokens_at: SimTime,
    dropped: Vec<Dropped>,
    tx_counter: u64,
    next_send: SimTime,
    last_progress: SimTime,
    /// Packets dropped by the buffer and by the policer.
    pub drops: u64,
    pub policed: u64,
}

impl PathSim {
    pub fn new(path: Path) -> Self {
        PathSim {
            path,
            net: VecDeque::new(),
            departures: VecDeque::new(),
            last_departure: SimTime::ZERO,
            tokens: path.policer.map_or(0.0, |p| p.burst_pkts),
            tokens_at: SimTime::ZERO,
            dropped: Vec::new(),
            tx_counter: 0,
            next_send: SimTime::ZERO,
            last_progress: SimTime::ZERO,
            drops: 0,
            policed: 0,
        }
    }

    /// Run until `end`, calling `observe` after every ACK.
    pub fn run_until(
        &mut self,
        d: &mut Driver,
        end: SimTime,
        mut observe: impl FnMut(&Driver, &AckSample),
    ) {
        loop {
            let ack_t = self.net.front().map(|p| p.ack_at);
            let pacing = self.path.pace || d.tcp.pacing_needed;
            let send_t = (d.tcp.in_flight() < d.tcp.cwnd).then(|| {
                if pacing {
                    self.next_send.max(d.now)
                } else {
                    d.now
                }
            });
            let rto_t = (d.tcp.packets_out > 0)
                .then(|| self.last_progress.max(d.tcp.lsndtime) + d.rto_interval());
            let t = [ack_t, send_t, rto_t].into_iter().flatten().min();
            let Some(t) = t.filter(|&t| t < end) else {
                d.set_time(end);
                return;
            };
            d.set_time(t);
            if ack_t == Some(t) {
                let p = self.net.pop_front().expect("front exists");
                let ack = self.deliver(d, p);
                observe(d, &ack);
            } else if send_t == Some(t) {
                self.transmit(d);
                if pacing && d.tcp.pacing_rate_bps > 0 {
                    let gap = SimDuration::transmission(
                        u64::from(d.tcp.mss),
                        d.tcp.pacing_rate_bps.saturating_mul(8),
                    );
                    self.next_send = d.now + gap;
                    d.tcp.wstamp = self.next_send;
                }
            } else {
                d.rto();
                self.dropped.clear();
                self.last_progress = d.now;
            }
        }
    }

    fn transmit(&mut self, d: &mut Driver) {
        let id = d.send_one();
        let limited = d.tcp.in_flight() >= d.tcp.cwnd;
        d.cwnd_validate(limited);
        let now = d.now;
        let tx = self.tx_counter;
        self.tx_counter += 1;
        if let Some(p) = self.path.policer {
            let dt = now.saturating_since(self.tokens_at).as_secs_f64();
            self.tokens = (self.tokens + dt * p.rate_pps).min(p.burst_pkts);
            self.tokens_at = now;
            if self.tokens < 1.0 {
                self.policed += 1;
                self.dropped.push(Dropped {
                    id,
                    tx,
                    later_delivered: 0,
                });
                return;
            }
            self.tokens -= 1.0;
        }
        while self.departures.front().is_some_and(|&t| t <= now) {
            self.departures.pop_front();
        }
        // The one in service plus `buffer_pkts` waiting.
        if self.departures.len() > self.path.buffer_pkts {
            self.drops += 1;
            self.dropped.push(Dropped {
                id,
                tx,
                later_delivered: 0,
            });
            return;
        }
        let service = SimDuration::from_secs_f64(1.0 / self.path.rate_pps);
        let depart = self.last_departure.max(now) + service;
        self.last_departure = depart;
        self.departures.push_back(depart);
        self.net.push_back(InNet {
            ack_at: depart + self.path.base_rtt,
            id,
            tx,
        });
    }

    fn deliver(&mut self, d: &mut Driver, p: InNet) -> AckSample {
        let mut lost = Vec::new();
        self.dropped.retain_mut(|x| {
            if x.tx < p.tx {
                x.later_delivered += 1;
            }
            if x.later_delivered >= DUPTHRESH {
                lost.push(x.id);
                false
            } else {
                true
            }
        });
        let before = d.tcp.delivered;
        let ack = d.ack_ids(&[p.id], &lost);
        if d.tcp.delivered > before {
            self.last_progress = d.now;
        }
        ack
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::reno::Reno;

    #[test]
    fn acking_a_window_in_order_advances_snd_una_and_keeps_the_scoreboard_consistent() {
        let mut d = Driver::new(Box::new(Reno));
        d.send_window();
        assert_eq!(d.tcp.packets_out, IW);
        let ack = d.ack(4, SimDuration::from_millis(50));
        assert_eq!(ack.pkts_acked, 4);
        assert_eq!(ack.acked_sacked, 4);
        assert_eq!(d.tcp.snd_una, 4 * u64::from(MSS));
        assert_eq!(ack.rtt_us, Some(50_000));
        d.check_scoreboard().unwrap();
    }

    #[test]
    fn rate_sample_covers_the_segments_delivered_since_the_sampled_one_was_sent() {
        let mut d = Driver::new(Box::new(Reno));
        d.send(10);
        d.ack(10, SimDuration::from_millis(100)); // t = 100 ms, delivered = 10
        d.send(10); // sent at 100 ms, tx.delivered = 10
        d.advance(SimDuration::from_millis(100));
        let ack = d.ack(10, SimDuration::from_millis(100)); // t = 200 ms
        assert_eq!(ack.delivered, Some(10));
        assert_eq!(ack.interval_us, 100_000);
        assert_eq!(ack.prior_delivered, 10);
    }

    #[test]
    fn sacked_segments_above_a_hole_do_not_advance_snd_una() {
        let mut d = Driver::new(Box::new(Reno));
        d.send(5);
        d.set_time(SimTime::from_nanos(10_000_000));
        let ack = d.ack_ids(&[1, 2, 3], &[0]);
        assert_eq!(ack.pkts_acked, 0);
        assert_eq!(ack.acked_sacked, 3);
        assert_eq!(ack.losses, 1);
        assert_eq!(d.tcp.sacked_out, 3);
        assert_eq!(d.tcp.ca_state, CaState::Recovery);
        d.check_scoreboard().unwrap();
        // The retransmission fills the hole; one ACK then covers 0..=3.
        d.send(1);
        let ack = d.ack_ids(&[0], &[]);
        assert_eq!(ack.pkts_acked, 4);
        d.check_scoreboard().unwrap();
    }

    #[test]
    fn recovery_ends_with_cwnd_at_ssthresh_for_a_window_based_algorithm() {
        let mut d = Driver::new(Box::new(Reno));
        d.tcp.cwnd = 20;
        d.send_window();
        d.lose(1);
        assert_eq!(d.tcp.ssthresh, 10);
        let mut min_cwnd = u32::MAX;
        while d.tcp.ca_state == CaState::Recovery {
            d.send_window();
            d.ack(1, SimDuration::from_millis(10));
            min_cwnd = min_cwnd.min(d.tcp.cwnd);
        }
        // PRR brought cwnd down gradually; the end of recovery sets it to ssthresh.
        assert!(min_cwnd < 20);
        assert_eq!(d.tcp.cwnd, 10);
    }

    #[test]
    fn rto_marks_everything_lost_and_sets_cwnd_to_one() {
        let mut d = Driver::new(Box::new(Reno));
        d.send_window();
        d.rto();
        assert_eq!(d.tcp.cwnd, 1);
        assert_eq!(d.tcp.in_flight(), 0);
        assert_eq!(d.tcp.ca_state, CaState::Loss);
        assert_eq!(d.tcp.ssthresh, 5);
        d.check_scoreboard().unwrap();
    }

    #[test]
    fn a_bottleneck_path_delivers_at_its_rate() {
        let path = Path {
            rate_pps: 1000.0,
            base_rtt: SimDuration::from_millis(20),
            buffer_pkts: 1000,
            policer: None,
            pace: false,
        };
        let mut d = Driver::new(Box::new(Reno));
        let mut sim = PathSim::new(path);
        sim.run_until(&mut d, SimTime::from_nanos(2_000_000_000), |_, _| {});
        let from = d.tcp.delivered;
        sim.run_until(&mut d, SimTime::from_nanos(4_000_000_000), |_, _| {});
        let rate = (d.tcp.delivered - from) as f64 / 2.0;
        assert!((rate - 1000.0).abs() < 20.0, "delivery rate {rate}");
        d.check_scoreboard().unwrap();
    }
}
