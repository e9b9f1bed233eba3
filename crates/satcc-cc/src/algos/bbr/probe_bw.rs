//! PROBE_BW: the pacing-gain cycle (`bbr_update_cycle_phase`, `bbr_is_next_cycle_phase`,
//! `bbr_advance_cycle_phase`, `bbr_reset_probe_bw_mode`).
//!
//! Eight phases of about one min RTT each: 5/4 (probe for more bandwidth), 3/4 (drain what
//! the probe queued), six at 1. The probe phase lasts until inflight reaches 5/4 BDP or a
//! loss; the drain phase ends early once inflight is down to one BDP.

use satcc_core::SimTime;

use super::rate::BBR_UNIT;
use super::{Bbr, Mode, CYCLE_LEN, CYCLE_RAND};
use crate::{AckSample, TcpState};

impl Bbr {
    /// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase other than 3/4.
    pub(super) fn reset_probe_bw_mode(&mut self, tcp: &TcpState) {
        // prandom_u32_max(7): a u32 mapped to [0, 7) by multiply-shift.
        let r = ((self.rng.next_u64() >> 32) * CYCLE_RAND) >> 32;
        let idx = CYCLE_LEN - 1 - r as usize;
        self.mode = Mode::ProbeBw {
            cycle_idx: idx,
            cycle_mstamp: tcp.delivered_mstamp,
        };
        self.advance_cycle_phase(tcp);
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tcp: &TcpState) {
        if let Mode::ProbeBw {
            cycle_idx,
            cycle_mstamp,
        } = &mut self.mode
        {
            *cycle_idx = (*cycle_idx + 1) % CYCLE_LEN;
            *cycle_mstamp = tcp.delivered_mstamp;
        }
    }

    /// `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(&mut self, now: SimTime, tcp: &TcpState, rs: &AckSample) {
        if matches!(self.mode, Mode::ProbeBw { .. }) && self.is_next_cycle_phase(now, tcp, rs) {
            self.advance_cycle_phase(tcp);
        }
    }

    /// `bbr_is_next_cycle_phase`: is it time (and/or inflight) to end this phase?
    fn is_next_cycle_phase(&self, now: SimTime, tcp: &TcpState, rs: &AckSample) -> bool {
        let Mode::ProbeBw { cycle_mstamp, .. } = self.mode else {
            return false;
        };
        let elapsed_us = tcp
            .delivered_mstamp
            .saturating_since(cycle_mstamp)
            .as_micros();
        let is_full_length = elapsed_us > u64::from(self.min_rtt.us.unwrap_or(u32::MAX));
        if self.pacing_gain == BBR_UNIT {
            return is_full_length; // cruising: wall-clock only
        }
        let inflight = self.packets_in_net_at_edt(now, tcp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probing: reach pacing_gain × BDP, unless losses say it will not fit.
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tcp, bw, self.pacing_gain));
        }
        // Draining: stop early once the extra queue is gone.
        is_full_length || inflight <= self.inflight(tcp, bw, BBR_UNIT)
    }
}
