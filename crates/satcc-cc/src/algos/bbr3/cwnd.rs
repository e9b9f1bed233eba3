//! cwnd: BDP, quantization budget (v3 `bbr_tso_segs_goal`), ACK-aggregation allowance,
//! `bbr_set_cwnd` and the caps of the inflight model (`bbr_bound_cwnd_for_inflight_model`).
//!
//! cwnd target = gain × bw × min_rtt + max recent extra-acked + max(·, 3 TSO bursts, 4)
//! (+2 in UP). Below the target cwnd grows by the packets acked; above it, once STARTUP has
//! ended, it snaps down. v3 has no packet conservation in recovery. Then cwnd is capped by
//! inflight_hi (DOWN, REFILL, UP), inflight_hi − headroom (CRUISE, PROBE_RTT) and
//! inflight_lo (always), never below 4; in PROBE_RTT by max(4, ½ BDP).

use satcc_core::SimTime;

pub(super) use super::super::bbr::cwnd::AckAggregation;
use super::super::bbr::cwnd::EXTRA_ACKED_WIN_RTTS;
use super::super::bbr::rate::{self, BBR_UNIT};
use super::super::bbr::TsoGoal;
use super::model::min_inf;
use super::{Bbr3, Mode, Phase, CWND_MIN_TARGET};
use crate::{AckSample, TcpState};

/// `sk_pacing_shift` default: a TSO burst holds ~1 ms (2^-10 s) of the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE`.
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// `MAX_TCP_HEADER` on x86-64 (as BBRv1 here).
const MAX_TCP_HEADER: u64 = 320;
/// `bbr_tso_rtt_shift`: the min-RTT burst allowance halves every 2^9 µs of min RTT.
const TSO_RTT_SHIFT: u32 = 9;
/// `sysctl_tcp_min_tso_segs` default.
const MIN_TSO_SEGS: u32 = 2;
impl Bbr3 {
    /// `bbr_bdp`: ceil(bw × min_rtt × gain); `init_cwnd` before any RTT sample.
    pub(super) fn bdp(&self, bw: u32, gain: u32) -> u32 {
        match self.min_rtt.us {
            None => self.init_cwnd,
            Some(rtt) => rate::bdp(bw, rtt, gain),
        }
    }

    /// `bbr_tso_segs_goal` (v3): pacing-rate burst plus a min-RTT allowance of 64 KB
    /// halved per 512 µs, capped at a GSO frame, at least `tcp_min_tso_segs`.
    pub(super) fn tso_segs_goal(&self, tcp: &TcpState) -> u32 {
        match self.cfg.tso {
            TsoGoal::One => 1,
            TsoGoal::Kernel => {
                let mut bytes = tcp.pacing_rate_bps >> PACING_SHIFT;
                if let Some(rtt) = self.min_rtt.us {
                    let r = rtt >> TSO_RTT_SHIFT;
                    if r < u32::BITS {
                        bytes = bytes.saturating_add(GSO_LEGACY_MAX_SIZE >> r);
                    }
                }
                bytes = bytes.min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
                ((bytes / u64::from(tcp.mss.max(1))) as u32).max(MIN_TSO_SEGS)
            }
        }
    }

    /// `bbr_quantization_budget` (v3: max with 3 bursts and the floor, no rounding to even).
    pub(super) fn quantization_budget(&self, tcp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(tcp)).max(CWND_MIN_TARGET);
        if let Mode::ProbeBw {
            phase: Phase::Up { .. },
            ..
        } = self.mode
        {
            cwnd = cwnd.saturating_add(2); // get above BDP even when it is small
        }
        cwnd
    }

    /// `bbr_inflight`: BDP × gain with the quantization budget.
    pub(super) fn inflight(&self, tcp: &TcpState, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tcp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`.
    pub(super) fn packets_in_net_at_edt(
        &self,
        now: SimTime,
        tcp: &TcpState,
        inflight_now: u32,
    ) -> u32 {
        let interval_us = tcp.wstamp.max(now).saturating_since(now).as_micros();
        let delivered = rate::packets_in(self.bw(), interval_us);
        let mut at_edt = u64::from(inflight_now);
        if self.pacing_gain > BBR_UNIT {
            at_edt += u64::from(self.tso_segs_goal(tcp)); // the EDT segment itself
        }
        at_edt.saturating_sub(delivered).min(u64::from(u32::MAX)) as u32
    }

    /// `bbr_update_ack_aggregation` (v3: a 1-round window until the pipe is full).
    pub(super) fn update_ack_aggregation(&mut self, tcp: &TcpState, rs: &AckSample) {
        let win_thresh = if self.full_bw.reached {
            EXTRA_ACKED_WIN_RTTS
        } else {
            1
        };
        let (bw, round_start) = (self.bw(), self.round.start);
        self.agg.update(tcp, rs, bw, round_start, win_thresh);
    }

    /// `bbr_ack_aggregation_cwnd` (v3: also during STARTUP).
    fn ack_aggregation_cwnd(&self) -> u32 {
        self.agg.allowance(self.bw())
    }

    /// `bbr_set_cwnd`: grow toward the target, or snap down to it once STARTUP has ended.
    pub(super) fn set_cwnd(&mut self, tcp: &mut TcpState, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tcp.cwnd;
        if acked > 0 {
            let target = self
                .bdp(bw, gain)
                .saturating_add(self.ack_aggregation_cwnd());
            let target = self.quantization_budget(tcp, target);
            if self.full_bw.reached {
                cwnd = cwnd.saturating_add(acked).min(target); // only cut once the pipe was full
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        tcp.cwnd = cwnd.min(tcp.cwnd_clamp); // global cap
        if matches!(self.mode, Mode::ProbeRtt { .. }) {
            tcp.cwnd = tcp.cwnd.min(self.probe_rtt_cwnd()); // drain the queue, refresh min_rtt
        }
    }

    /// `bbr_bound_cwnd_for_inflight_model`.
    pub(super) fn bound_cwnd_for_inflight_model(&self, tcp: &mut TcpState) {
        let cap = match self.mode {
            Mode::ProbeBw {
                phase: Phase::Cruise,
                ..
            }
            | Mode::ProbeRtt { .. } => self.inflight_with_headroom(),
            Mode::ProbeBw { .. } => self.model.inflight_hi, // probe to see if more fits
            _ => None,
        };
        let cap = min_inf(cap, self.model.inflight_lo)
            .unwrap_or(u32::MAX)
            .max(CWND_MIN_TARGET);
        tcp.cwnd = tcp.cwnd.min(cap);
    }
}
