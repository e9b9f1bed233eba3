//! PROBE_BW: DOWN → CRUISE → REFILL → UP → DOWN … (`bbr_update_cycle_phase`,
//! `bbr_start_bw_probe_{down,cruise,refill,up}`, `bbr_check_time_to_probe_bw`,
//! `bbr_check_time_to_cruise`, `bbr_pick_probe_wait`, `bbr_raise_inflight_hi_slope`,
//! `bbr_probe_inflight_hi_upward`).
//!
//! DOWN paces at 0.91 × bw until inflight ≤ min(BDP, inflight_hi − headroom), then CRUISE
//! holds there. A probe starts after a random 2–3 s wall-clock wait (from DOWN's start) or,
//! for Reno coexistence, after min(63, BDP) − U{0,1} rounds: REFILL sends at bw with the
//! lower bounds lifted for one round, then UP paces at 1.25 × bw and raises inflight_hi by
//! 1, 2, 4 … packets per round while no loss/ECN says "too high".

use satcc_core::SimTime;

use super::super::bbr::rate::BBR_UNIT;
use super::{AckPhase, Bbr3, Ctx, Mode, Phase};
use crate::{AckSample, CaState, TcpState};

/// `bbr_bw_probe_max_rounds`: Reno-coexistence bound on rounds between probes.
const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// `bbr_bw_probe_rand_rounds`: random rounds subtracted (drawn below 2).
const BW_PROBE_RAND_ROUNDS: u64 = 2;
/// `bbr_bw_probe_base_us`: wall-clock wait between probes, at least 2 s.
pub(super) const BW_PROBE_BASE_US: u64 = 2_000_000;
/// `bbr_bw_probe_rand_us`: plus U[0, 1 s).
pub(super) const BW_PROBE_RAND_US: u64 = 1_000_000;
/// `bbr_ecn_reprobe_gain`: after ECN-only congestion clears, re-probe with ½ inflight_hi.
const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// `bw_probe_up_rounds` is capped at 30 (a 5-bit field; 2^30 growth).
const UP_ROUNDS_MAX: u32 = 30;

impl Bbr3 {
    /// `bbr_start_bw_probe_down` (entering PROBE_BW if not there): reset the congestion
    /// signals, pick the random wait and start its clock.
    pub(super) fn start_bw_probe_down(&mut self, now: SimTime, tcp: &TcpState) {
        self.reset_congestion_signals();
        // bbr_pick_probe_wait: random round bound and wall-clock wait.
        self.rounds_since_probe = self.random_below(BW_PROBE_RAND_ROUNDS) as u32;
        let probe_wait_us = BW_PROBE_BASE_US + self.random_below(BW_PROBE_RAND_US);
        self.ack_phase = AckPhase::ProbeStopping;
        self.round.next_delivered = tcp.delivered;
        self.mode = Mode::ProbeBw {
            phase: Phase::Down,
            cycle_start: now,
            probe_wait_us,
        };
    }

    /// `bbr_start_bw_probe_cruise`: inflight_lo no higher than inflight_hi.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if let Some(lo) = self.model.inflight_lo {
            self.model.inflight_lo = Some(self.model.inflight_hi.map_or(lo, |hi| lo.min(hi)));
        }
        self.set_phase(Phase::Cruise);
    }

    /// `bbr_start_bw_probe_refill`: lift the lower bounds, send at bw for a round.
    pub(super) fn start_bw_probe_refill(&mut self, tcp: &TcpState, up_rounds: u32) {
        self.model.reset_lower();
        self.probe.stopped_risky = false;
        self.ack_phase = AckPhase::Refilling;
        self.round.next_delivered = tcp.delivered;
        self.set_phase(Phase::Refill { up_rounds });
    }

    /// `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, now: SimTime, tcp: &TcpState, ctx: &Ctx, up_rounds: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.round.next_delivered = tcp.delivered;
        self.reset_full_bw();
        self.full_bw.bw = ctx.sample_bw;
        if let Mode::ProbeBw {
            phase, cycle_start, ..
        } = &mut self.mode
        {
            *cycle_start = now;
            *phase = Phase::Up {
                up_rounds,
                up_cnt: u32::MAX,
                up_acks: 0,
            };
        }
        self.raise_inflight_hi_slope(tcp);
    }

    fn set_phase(&mut self, p: Phase) {
        if let Mode::ProbeBw { phase, .. } = &mut self.mode {
            *phase = p;
        }
    }

    /// `bbr_raise_inflight_hi_slope`: each UP round doubles the growth of inflight_hi.
    fn raise_inflight_hi_slope(&mut self, tcp: &TcpState) {
        if let Mode::ProbeBw {
            phase: Phase::Up {
                up_rounds, up_cnt, ..
            },
            ..
        } = &mut self.mode
        {
            let growth_this_round = 1u32 << *up_rounds;
            *up_rounds = (*up_rounds + 1).min(UP_ROUNDS_MAX);
            *up_cnt = (tcp.cwnd / growth_this_round).max(1); // packets per +1 of inflight_hi
        }
    }

    /// `bbr_probe_inflight_hi_upward`: +1 inflight_hi per `up_cnt` packets acked while
    /// cwnd-limited at inflight_hi.
    pub(super) fn probe_inflight_hi_upward(&mut self, tcp: &TcpState, rs: &AckSample) {
        let Some(hi) = self.model.inflight_hi else {
            return;
        };
        if !tcp.is_cwnd_limited || tcp.cwnd < hi {
            return; // not fully using inflight_hi, so don't grow it
        }
        if let Mode::ProbeBw {
            phase: Phase::Up {
                up_cnt, up_acks, ..
            },
            ..
        } = &mut self.mode
        {
            *up_acks = up_acks.saturating_add(rs.acked_sacked);
            if *up_acks >= *up_cnt {
                let delta = *up_acks / *up_cnt;
                *up_acks -= delta * *up_cnt;
                self.model.inflight_hi = Some(hi.saturating_add(delta));
            }
        }
        if self.round.start {
            self.raise_inflight_hi_slope(tcp);
        }
    }

    /// `bbr_is_reno_coexistence_probe_time`: a Reno flow at our BDP would probe by now.
    fn is_reno_coexistence_probe_time(&self, tcp: &TcpState) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(tcp));
        self.rounds_since_probe >= rounds
    }

    /// `bbr_check_time_to_probe_bw`: ECN re-probe, wall-clock wait, or Reno rounds.
    fn check_time_to_probe_bw(&mut self, now: SimTime, tcp: &TcpState) -> bool {
        if self.ecn.eligible
            && self.signals.ecn_in_cycle
            && !self.signals.loss_in_cycle
            && tcp.ca_state == CaState::Open
        {
            // ECN marks but no loss, and they ceased: re-probe soon, UP starting from a
            // slope of ~inflight_hi × ½ per round (n = log2 of that).
            let hi = u64::from(self.model.inflight_hi.unwrap_or(u32::MAX));
            let vol = (hi * u64::from(ECN_REPROBE_GAIN)) >> super::super::bbr::rate::BBR_SCALE;
            let n = if vol == 0 {
                0
            } else {
                vol.ilog2().min(UP_ROUNDS_MAX)
            };
            self.start_bw_probe_refill(tcp, n);
            return true;
        }
        let Mode::ProbeBw {
            cycle_start,
            probe_wait_us,
            ..
        } = self.mode
        else {
            return false;
        };
        let elapsed = now.as_micros() > cycle_start.as_micros() + probe_wait_us; // bbr_has_elapsed_in_phase
        if elapsed || self.is_reno_coexistence_probe_time(tcp) {
            self.start_bw_probe_refill(tcp, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise`: inflight ≤ headroom bound and ≤ BDP.
    fn check_time_to_cruise(&self, tcp: &TcpState, inflight: u32, bw: u32) -> bool {
        if self.inflight_with_headroom().is_some_and(|h| inflight > h) {
            return false;
        }
        inflight <= self.inflight(tcp, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(
        &mut self,
        now: SimTime,
        tcp: &TcpState,
        rs: &AckSample,
        ctx: &Ctx,
    ) {
        if !self.full_bw.reached {
            return;
        }
        // In DRAIN, PROBE_BW or PROBE_RTT: adjust the upper bounds.
        if self.adapt_upper_bounds(now, tcp, rs, ctx) {
            return;
        }
        let Mode::ProbeBw { phase, .. } = self.mode else {
            return;
        };
        let inflight = self.packets_in_net_at_edt(now, tcp, rs.prior_in_flight);
        let bw = self.max_bw();
        match phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(now, tcp);
            }
            Phase::Refill { up_rounds } => {
                // After a round of REFILL the samples reflect it: start probing up.
                if self.round.start {
                    self.probe.samples = true;
                    self.start_bw_probe_up(now, tcp, ctx, up_rounds);
                }
            }
            Phase::Up { .. } => {
                let mut done = false;
                let hi = self.model.inflight_hi.unwrap_or(u32::MAX);
                if self.probe.prev_too_high && inflight >= hi {
                    // (1) Back at the inflight that was too high last time: stop early.
                    self.probe.stopped_risky = true;
                    done = true;
                } else if tcp.is_cwnd_limited && tcp.cwnd >= hi {
                    // inflight_hi is limiting bw growth: not a plateau.
                    self.reset_full_bw();
                    self.full_bw.bw = ctx.sample_bw;
                } else if self.full_bw.now {
                    done = true; // (2) plateau in bw: the pipe looks full
                }
                if done {
                    self.probe.prev_too_high = false;
                    self.start_bw_probe_down(now, tcp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(now, tcp) {
                    return;
                }
                if self.check_time_to_cruise(tcp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }
}
