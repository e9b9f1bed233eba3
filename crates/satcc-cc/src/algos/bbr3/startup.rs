//! STARTUP and DRAIN: full-pipe detection by bandwidth plateau
//! (`bbr_check_full_bw_reached`), the v3 exits on loss (`bbr_check_loss_too_high_in_startup`)
//! and on ECN (`bbr_check_ecn_too_high_in_startup`), both ending in
//! `bbr_handle_queue_too_high_in_startup`, and DRAIN (`bbr_check_drain`).

use satcc_core::SimTime;

use super::super::bbr::rate::{BBR_SCALE, BBR_UNIT};
use super::{Bbr3, Ctx, Mode};
use crate::{AckSample, CaState, TcpState};

/// `bbr_full_bw_thresh`: growth of 5/4 or more means more bandwidth may be available.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`: rounds without such growth before the pipe is deemed full.
const FULL_BW_CNT: u32 = 3;
/// `bbr_full_loss_cnt`: loss-marking events in a recovery round needed to exit STARTUP.
pub(super) const FULL_LOSS_CNT: u32 = 6;
/// `loss_events_in_round` is a 4-bit saturating counter.
const LOSS_EVENTS_MAX: u32 = 0xF;
/// `bbr_full_ecn_cnt`: consecutive rounds with CE ratio ≥ ecn_thresh that end STARTUP.
pub(super) const FULL_ECN_CNT: u32 = 2;
/// `startup_ecn_rounds` is a 2-bit field.
const STARTUP_ECN_ROUNDS_MAX: u32 = 3;

impl Bbr3 {
    /// `bbr_reset_full_bw`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw.bw = 0;
        self.full_bw.count = 0;
        self.full_bw.now = false;
    }

    /// `bbr_check_full_bw_reached` (v3: compares this ACK's sample, counts once per round;
    /// also used in PROBE_UP to detect a plateau).
    pub(super) fn check_full_bw_reached(&mut self, rs: &AckSample, ctx: &Ctx) {
        if self.full_bw.now || rs.is_app_limited {
            return;
        }
        let thresh = (u64::from(self.full_bw.bw) * u64::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if u64::from(ctx.sample_bw) >= thresh {
            self.reset_full_bw();
            self.full_bw.bw = ctx.sample_bw;
            return;
        }
        if !self.round.start {
            return;
        }
        self.full_bw.count += 1;
        self.full_bw.now = self.full_bw.count >= FULL_BW_CNT;
        self.full_bw.reached |= self.full_bw.now;
    }

    /// `bbr_handle_queue_too_high_in_startup`: end STARTUP; inflight_hi = what fit.
    fn handle_queue_too_high_in_startup(&mut self, tcp: &TcpState) {
        self.full_bw.reached = true;
        let bdp = self.inflight(tcp, self.max_bw(), BBR_UNIT);
        self.model.inflight_hi = Some(bdp.max(self.signals.inflight_latest));
    }

    /// `bbr_check_loss_too_high_in_startup`: at the end of a recovery round with ≥ 6 loss
    /// events and a flight loss rate above `loss_thresh` (2 %), the pipe is full.
    pub(super) fn check_loss_too_high_in_startup(
        &mut self,
        tcp: &TcpState,
        rs: &AckSample,
        ctx: &Ctx,
    ) {
        if self.full_bw.reached {
            return;
        }
        let s = &mut self.signals;
        if rs.losses > 0 && s.loss_events_in_round < LOSS_EVENTS_MAX {
            s.loss_events_in_round += 1;
        }
        if s.loss_round_start
            && tcp.ca_state == CaState::Recovery
            && s.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs, ctx)
        {
            self.handle_queue_too_high_in_startup(tcp);
            return;
        }
        if self.signals.loss_round_start {
            self.signals.loss_events_in_round = 0;
        }
    }

    /// `bbr_check_ecn_too_high_in_startup`: 2 consecutive rounds with CE ≥ ecn_thresh.
    pub(super) fn check_ecn_too_high_in_startup(&mut self, tcp: &TcpState, ce_ratio: u32) {
        if self.full_bw.reached || !self.ecn.eligible || self.cfg.ecn_thresh == 0 {
            return;
        }
        if ce_ratio >= self.cfg.ecn_thresh {
            self.ecn.startup_rounds = (self.ecn.startup_rounds + 1).min(STARTUP_ECN_ROUNDS_MAX);
        } else {
            self.ecn.startup_rounds = 0;
        }
        if self.ecn.startup_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(tcp);
        }
    }

    /// `bbr_check_drain`: STARTUP → DRAIN once full (ssthresh = BDP, for monitoring only),
    /// DRAIN → PROBE_BW (DOWN) once the packets in the network are down to one BDP.
    pub(super) fn check_drain(&mut self, now: SimTime, tcp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full_bw.reached {
            self.mode = Mode::Drain;
            tcp.ssthresh = self.inflight(tcp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(now, tcp, tcp.in_flight())
                <= self.inflight(tcp, self.max_bw(), BBR_UNIT)
        {
            self.start_bw_probe_down(now, tcp); // enters PROBE_BW
        }
    }

    /// `bbr_reset_congestion_signals`: before a phase that adapts the lower bounds.
    pub(super) fn reset_congestion_signals(&mut self) {
        let s = &mut self.signals;
        s.loss_in_round = false;
        s.ecn_in_round = false;
        s.loss_in_cycle = false;
        s.ecn_in_cycle = false;
        s.bw_latest = 0;
        s.inflight_latest = 0;
    }
}
