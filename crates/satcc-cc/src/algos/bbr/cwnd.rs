//! cwnd: target from the model, quantization budget, ACK-aggregation allowance, packet
//! conservation in recovery (`bbr_set_cwnd`, `bbr_set_cwnd_to_recover_or_restore`,
//! `bbr_bdp`, `bbr_inflight`, `bbr_quantization_budget`, `bbr_tso_segs_goal`,
//! `bbr_packets_in_net_at_edt`, `bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`).
//!
//! cwnd = cwnd_gain × bw × min_rtt (rounded up) + max recent extra-acked + 3 TSO bursts,
//! rounded up to even (+2 in the 5/4 phase). Below the target cwnd slow-starts toward it;
//! above it, once the pipe was full, it snaps down. On entering recovery the first round
//! follows packet conservation (send what was delivered); leaving recovery restores the
//! cwnd saved by `ssthresh`.

use satcc_core::SimTime;

use super::rate::{self, BBR_SCALE, BBR_UNIT, BW_UNIT};
use super::{Bbr, Mode, TsoGoal, CWND_MIN_TARGET, TCP_INIT_CWND};
use crate::{AckSample, CaState, TcpState};

/// `bbr_min_tso_rate`: below 1.2 Mbit/s (in bytes/s) the TSO goal may be 1 segment.
const MIN_TSO_RATE_BYTES_PER_SEC: u64 = 1_200_000 >> 3;
/// `bbr_min_tso_segs`: 1 segment per GSO packet below 1.2 Mbit/s, else 2 (also the
/// sender's floor, `CongestionControl::min_tso_segs`).
pub(crate) fn min_tso_segs(tcp: &TcpState) -> u32 {
    if tcp.pacing_rate_bps < MIN_TSO_RATE_BYTES_PER_SEC {
        1
    } else {
        2
    }
}

/// `sk_pacing_shift` default: a TSO burst holds ~1 ms (2^-10 s) of the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER` (deviation 2: MAX_TCP_HEADER = 320).
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// `bbr_tso_segs_goal` upper bound (`0x7F`).
const TSO_SEGS_MAX: u32 = 0x7F;
/// `bbr_extra_acked_gain`: gain on the aggregation allowance (1.0).
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts`: each half of the extra-acked window, rounds.
pub(crate) const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh`: restart an aggregation epoch after 2^20 packets.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`: the allowance is at most 100 ms worth of bw.
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `ack_epoch_acked` is a 20-bit field.
const ACK_EPOCH_ACKED_MAX: u32 = 0xF_FFFF;
/// `extra_acked_win_rtts` is a 5-bit field.
const EXTRA_ACKED_WIN_RTTS_MAX: u32 = 0x1F;
/// `extra_acked[]` entries are u16 (deviation 3: saturated, not truncated).
const EXTRA_ACKED_MAX: u32 = u16::MAX as u32;

/// ACK-aggregation estimator: how many packets arrive beyond bw × time in an epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AckAggregation {
    /// `ack_epoch_mstamp`, `ack_epoch_acked`.
    epoch_start: SimTime,
    epoch_acked: u32,
    /// `extra_acked[2]`: max excess per half-window; `extra_acked_win_idx`, `_win_rtts`.
    pub(crate) extra_acked: [u32; 2],
    win_idx: usize,
    win_rtts: u32,
}

impl AckAggregation {
    pub(crate) fn new(now: SimTime) -> Self {
        AckAggregation {
            epoch_start: now,
            epoch_acked: 0,
            extra_acked: [0; 2],
            win_idx: 0,
            win_rtts: 0,
        }
    }

    /// Idle restart: a new epoch from now (`bbr_cwnd_event`).
    pub(crate) fn restart_epoch(&mut self, now: SimTime) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }

    /// `bbr_extra_acked`: max over the two half-windows (5–10 rounds).
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_ack_aggregation_cwnd`'s allowance: extra_acked × gain, at most 100 ms of `bw`.
    pub(crate) fn allowance(&self, bw: u32) -> u32 {
        let max_aggr =
            (u64::from(bw) * EXTRA_ACKED_MAX_US / BW_UNIT).min(u64::from(u32::MAX)) as u32;
        let aggr =
            ((u64::from(EXTRA_ACKED_GAIN) * u64::from(self.extra_acked())) >> BBR_SCALE) as u32;
        aggr.min(max_aggr)
    }

    /// `bbr_update_ack_aggregation`: packets acked beyond `bw` × epoch length, kept as the
    /// max per half-window of `win_thresh` rounds (BBRv1: 5; BBRv3: 1 until the pipe is full).
    pub(crate) fn update(
        &mut self,
        tcp: &TcpState,
        rs: &AckSample,
        bw: u32,
        round_start: bool,
        win_thresh: u32,
    ) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval_us == 0 {
            return;
        }
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(EXTRA_ACKED_WIN_RTTS_MAX);
            if self.win_rtts >= win_thresh {
                self.win_rtts = 0;
                self.win_idx = 1 - self.win_idx;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        // Packets expected over the epoch at the estimated bw.
        let epoch_us = tcp
            .delivered_mstamp
            .saturating_since(self.epoch_start)
            .as_micros();
        let mut expected = rate::packets_in(bw, epoch_us).min(u64::from(u32::MAX)) as u32;
        // A slow ACK rate, or a very old epoch, starts a new epoch.
        if self.epoch_acked <= expected
            || self.epoch_acked.saturating_add(rs.acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.epoch_acked = 0;
            self.epoch_start = tcp.delivered_mstamp;
            expected = 0;
        }
        self.epoch_acked = self
            .epoch_acked
            .saturating_add(rs.acked_sacked)
            .min(ACK_EPOCH_ACKED_MAX);
        let extra = (self.epoch_acked - expected)
            .min(tcp.cwnd)
            .min(EXTRA_ACKED_MAX);
        if extra > self.extra_acked[self.win_idx] {
            self.extra_acked[self.win_idx] = extra;
        }
    }
}

impl Bbr {
    /// `bbr_bdp`: ceil(bw × min_rtt × gain); IW before any RTT sample.
    pub(super) fn bdp(&self, bw: u32, gain: u32) -> u32 {
        match self.min_rtt.us {
            None => TCP_INIT_CWND,
            Some(rtt) => rate::bdp(bw, rtt, gain),
        }
    }

    /// `bbr_tso_segs_goal` (see the header for "kernel" vs "one").
    pub(super) fn tso_segs_goal(&self, tcp: &TcpState) -> u32 {
        match self.cfg.tso {
            TsoGoal::One => 1,
            TsoGoal::Kernel => {
                let bytes = (tcp.pacing_rate_bps >> PACING_SHIFT).min(TSO_MAX_BYTES);
                let segs = ((bytes / u64::from(tcp.mss.max(1))) as u32).max(min_tso_segs(tcp));
                segs.min(TSO_SEGS_MAX)
            }
        }
    }

    /// `bbr_quantization_budget`: room for full-sized bursts at both ends.
    pub(super) fn quantization_budget(&self, tcp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal(tcp)); // qdisc, TSO engine, GRO/delayed ACK
        cwnd = cwnd.saturating_add(1) & !1; // even: fewer delayed ACKs
        if let Mode::ProbeBw { cycle_idx: 0, .. } = self.mode {
            cwnd = cwnd.saturating_add(2); // let the 5/4 phase exceed BDP even when it is small
        }
        cwnd
    }

    /// `bbr_inflight`: BDP × gain plus the quantization budget.
    pub(super) fn inflight(&self, tcp: &TcpState, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tcp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: inflight expected when the next paced segment leaves.
    pub(super) fn packets_in_net_at_edt(
        &self,
        now: SimTime,
        tcp: &TcpState,
        inflight_now: u32,
    ) -> u32 {
        let interval_us = tcp.wstamp.max(now).saturating_since(now).as_micros();
        let interval_delivered = rate::packets_in(self.bw(), interval_us);
        let mut inflight_at_edt = u64::from(inflight_now);
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += u64::from(self.tso_segs_goal(tcp)); // the EDT segment itself
        }
        inflight_at_edt
            .saturating_sub(interval_delivered)
            .min(u64::from(u32::MAX)) as u32
    }

    /// `bbr_update_ack_aggregation`.
    pub(super) fn update_ack_aggregation(&mut self, tcp: &TcpState, rs: &AckSample) {
        let (bw, round_start) = (self.bw(), self.round.start);
        self.agg
            .update(tcp, rs, bw, round_start, EXTRA_ACKED_WIN_RTTS);
    }

    /// `bbr_ack_aggregation_cwnd`: extra cwnd for aggregation, once the pipe was full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw.reached {
            return 0;
        }
        self.agg.allowance(self.bw())
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) while conserving packets.
    fn recover_or_restore(&mut self, tcp: &TcpState, rs: &AckSample, acked: u32) -> (bool, u32) {
        let prev = self.recovery.prev_ca_state;
        let state = tcp.ca_state;
        let mut cwnd = tcp.cwnd;
        // An ACK for P packets releases at most 2P: first deduct the losses…
        if rs.losses > 0 {
            cwnd = (i64::from(cwnd) - i64::from(rs.losses)).max(1) as u32;
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation, and a round starts now.
            self.recovery.packet_conservation = true;
            self.round.next_delivered = tcp.delivered;
            cwnd = tcp.in_flight().saturating_add(acked); // cut unused cwnd
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery: restore the cwnd saved when it began.
            cwnd = cwnd.max(self.recovery.prior_cwnd);
            self.recovery.packet_conservation = false;
        }
        self.recovery.prev_ca_state = state;
        if self.recovery.packet_conservation {
            return (true, cwnd.max(tcp.in_flight().saturating_add(acked)));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: …then slow-start toward the target, or snap down to it.
    pub(super) fn set_cwnd(
        &mut self,
        _now: SimTime,
        tcp: &mut TcpState,
        rs: &AckSample,
        acked: u32,
        bw: u32,
        gain: u32,
    ) {
        let mut cwnd = tcp.cwnd;
        if acked > 0 {
            let (conserving, c) = self.recover_or_restore(tcp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(tcp, target);
                if self.full_bw.reached {
                    cwnd = cwnd.saturating_add(acked).min(target); // only cut once the pipe was full
                } else if cwnd < target || tcp.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tcp.cwnd = cwnd.min(tcp.cwnd_clamp); // global cap
        if matches!(self.mode, Mode::ProbeRtt { .. }) {
            tcp.cwnd = tcp.cwnd.min(CWND_MIN_TARGET); // drain the queue, refresh min_rtt
        }
    }
}
