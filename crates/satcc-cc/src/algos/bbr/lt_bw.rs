//! Long-term ("LT") bandwidth sampling: token-bucket policer detection
//! (`bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`, `bbr_reset_lt_bw_sampling*`).
//!
//! After the first loss, BBR measures delivery rate over intervals of 4–16 rounds that end
//! on a loss. Two consecutive intervals with a loss ratio ≥ 20 % and a rate within 1/8 (or
//! 4 kbit/s) of each other mean a policer: BBR then paces at their average, gain 1, for 48
//! rounds of PROBE_BW before probing again (Flach et al., "An Internet-Wide Analysis of
//! Traffic Policing", SIGCOMM 2016).

use super::rate::{rate_bytes_per_sec, BBR_SCALE, BBR_UNIT, BW_UNIT};
use super::{Bbr, Mode};
use crate::{AckSample, TcpState};

/// `bbr_lt_intvl_min_rtts`: rounds in a sampling interval, at least (at most 4×).
const LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh`: lost/delivered ≥ 50/256 ≈ 20 % makes an interval "lossy".
const LT_LOSS_THRESH: u64 = 50;
/// `bbr_lt_bw_ratio`: two intervals within 1/8 of each other are "consistent".
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// `bbr_lt_bw_diff`: … or within 4 kbit/s (in bytes/s).
const LT_BW_DIFF_BYTES_PER_SEC: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`: rounds to use the policed rate before re-probing.
const LT_BW_MAX_RTTS: u32 = 48;
/// `USEC_PER_MSEC`: interval stamps are in ms.
const USEC_PER_MSEC: u64 = 1000;

/// Start of the current sampling interval (`lt_last_stamp` in ms, `lt_last_delivered`,
/// `lt_last_lost`) and its rounds (`lt_rtt_cnt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Interval {
    stamp_ms: u64,
    delivered: u64,
    lost: u64,
    rounds: u32,
}

/// The long-term estimator's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LtBw {
    /// Waiting for the first loss (`!lt_is_sampling`).
    Idle,
    /// Sampling; `prev_bw` is the last completed interval's rate (`lt_bw`, 0 = none).
    Sampling { interval: Interval, prev_bw: u32 },
    /// Policer detected: use `bw` (`lt_use_bw`), for `rounds` so far (`lt_rtt_cnt`).
    Policed { bw: u32, rounds: u32 },
}

impl Bbr {
    fn new_interval(tcp: &TcpState) -> Interval {
        Interval {
            stamp_ms: tcp.delivered_mstamp.as_micros() / USEC_PER_MSEC,
            delivered: tcp.delivered,
            lost: tcp.lost,
            rounds: 0,
        }
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self) {
        self.lt = LtBw::Idle;
    }

    /// `bbr_lt_bw_sampling`, called once per valid rate sample (and on RTO).
    pub(super) fn lt_bw_sampling(&mut self, tcp: &TcpState, rs: &AckSample) {
        if let LtBw::Policed { rounds, .. } = &mut self.lt {
            if matches!(self.mode, Mode::ProbeBw { .. }) && self.round.start {
                *rounds += 1;
                if *rounds >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(); // stop using lt_bw
                    self.reset_probe_bw_mode(tcp); // restart gain cycling
                }
            }
            return;
        }
        // Start at the first loss: the policer's tokens are exhausted by then, so the
        // bursts before do not inflate the estimate.
        if self.lt == LtBw::Idle {
            if rs.losses == 0 {
                return;
            }
            self.lt = LtBw::Sampling {
                interval: Self::new_interval(tcp),
                prev_bw: 0,
            };
        }
        // Running out of data underestimates: start over.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        let LtBw::Sampling { interval, prev_bw } = &mut self.lt else {
            return;
        };
        if self.round.start {
            interval.rounds += 1;
        }
        if interval.rounds < LT_INTVL_MIN_RTTS {
            return; // the interval needs to be longer
        }
        if interval.rounds > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(); // too long
            return;
        }
        // End the interval on a loss (tokens exhausted), not before.
        if rs.losses == 0 {
            return;
        }
        let lost = tcp.lost - interval.lost;
        let delivered = tcp.delivered - interval.delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return; // not lossy enough (yet)
        }
        let now_ms = tcp.delivered_mstamp.as_micros() / USEC_PER_MSEC;
        let t_ms = now_ms as i64 - interval.stamp_ms as i64;
        if t_ms < 1 {
            return; // shorter than 1 ms: wait
        }
        if t_ms as u64 >= u64::from(u32::MAX) / USEC_PER_MSEC {
            self.reset_lt_bw_sampling(); // too long to multiply
            return;
        }
        let bw = u128::from(delivered) * u128::from(BW_UNIT)
            / (t_ms as u128 * u128::from(USEC_PER_MSEC));
        let (bw, prev) = (bw.min(u128::from(u32::MAX)) as u32, *prev_bw);
        self.lt_bw_interval_done(tcp, bw, prev);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, tcp: &TcpState, bw: u32, prev_bw: u32) {
        if prev_bw > 0 {
            let diff = bw.abs_diff(prev_bw);
            let close_ratio =
                u64::from(diff) * u64::from(BBR_UNIT) <= LT_BW_RATIO * u64::from(prev_bw);
            let close_abs =
                rate_bytes_per_sec(tcp.mss, u64::from(diff), BBR_UNIT) <= LT_BW_DIFF_BYTES_PER_SEC;
            if close_ratio || close_abs {
                let avg = ((u64::from(bw) + u64::from(prev_bw)) >> 1) as u32; // average of 2 intervals
                self.lt = LtBw::Policed { bw: avg, rounds: 0 };
                self.pacing_gain = BBR_UNIT; // try to avoid drops
                return;
            }
        }
        self.lt = LtBw::Sampling {
            interval: Self::new_interval(tcp),
            prev_bw: bw,
        };
    }
}
