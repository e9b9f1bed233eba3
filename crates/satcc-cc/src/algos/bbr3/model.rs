//! The loss- and ECN-aware model: congestion signals per round, ECN α, the upper bounds
//! (`bw_hi`, `inflight_hi`) and lower bounds (`bw_lo`, `inflight_lo`), and the rebuilt
//! `tx_in_flight` / `lost` of a rate sample (`bbr_update_congestion_signals`,
//! `bbr_adapt_lower_bounds`, `bbr_adapt_upper_bounds`, `bbr_is_inflight_too_high`,
//! `bbr_handle_inflight_too_high`, `bbr_update_ecn_alpha`, Google v3 `tcp_bbr.c`).

use std::collections::VecDeque;

use super::super::bbr::rate::{BBR_SCALE, BBR_UNIT};
use super::{AckPhase, Bbr3, Ctx, Mode, Phase, CWND_MIN_TARGET};
use crate::{AckSample, TcpState};

/// `bbr_ecn_alpha_gain`: EWMA gain of the CE ratio, 1/16.
pub(super) const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// `bbr_ecn_alpha_init`: 1.0, to respond fast if the path is congested at start.
pub(super) const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// `bbr_ecn_factor`: inflight_lo × (1 − α/3) per ECN round.
pub(super) const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// Records of the per-ACK transmit history kept at most (one flight at ≤ 64 k ACKs).
const TX_HISTORY_MAX: usize = 1 << 16;

/// `bw_hi[2]`, `bw_lo`, `inflight_hi`, `inflight_lo` and their undo copies. None = unset
/// (`~0U` in Linux: no bound).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Bounds {
    /// Max bw of the previous and the current probe cycle (`bbr_take_max_bw_sample`).
    pub(super) bw_hi: [u32; 2],
    pub(super) bw_lo: Option<u32>,
    pub(super) inflight_hi: Option<u32>,
    pub(super) inflight_lo: Option<u32>,
    /// `undo_bw_lo`, `undo_inflight_lo`, `undo_inflight_hi`; None until the first loss
    /// (Linux's zeros, which leave the bounds unchanged on undo).
    undo: Option<[Option<u32>; 3]>,
}

/// max() where None is +∞ (Linux's `~0U`).
fn max_inf(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    Some(a?.max(b?))
}

/// min() where None is +∞.
pub(super) fn min_inf(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) | (None, x) => x,
    }
}

/// `x · f >> BBR_SCALE` in 64 bits.
fn scale(x: u32, f: u32) -> u32 {
    ((u64::from(x) * u64::from(f)) >> BBR_SCALE) as u32
}

impl Bounds {
    pub(super) fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `bbr_bw`: min(max_bw, bw_lo).
    pub(super) fn bw(&self) -> u32 {
        self.bw_lo.map_or(self.max_bw(), |lo| lo.min(self.max_bw()))
    }

    /// `bbr_advance_max_bw_filter`: keep the max of the last 1–2 cycles.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return; // no samples in this window: remember the old one
        }
        self.bw_hi = [self.bw_hi[1], 0];
    }

    /// `bbr_reset_lower_bounds`.
    pub(super) fn reset_lower(&mut self) {
        self.bw_lo = None;
        self.inflight_lo = None;
    }

    /// `bbr_ssthresh`'s undo copy.
    pub(super) fn save_undo(&mut self) {
        self.undo = Some([self.bw_lo, self.inflight_lo, self.inflight_hi]);
    }

    /// `bbr_undo_cwnd`: back to at least the bounds before the loss episode.
    pub(super) fn undo(&mut self) {
        let Some(u) = self.undo else { return };
        self.bw_lo = max_inf(self.bw_lo, u[0]);
        self.inflight_lo = max_inf(self.inflight_lo, u[1]);
        self.inflight_hi = max_inf(self.inflight_hi, u[2]);
    }
}

/// Per-round and per-cycle congestion signals and the latest delivery (`loss_in_round`,
/// `ecn_in_round`, `loss_in_cycle`, `ecn_in_cycle`, `bw_latest`, `inflight_latest`,
/// `loss_round_delivered`, `loss_round_start`, `loss_events_in_round`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Signals {
    pub(super) loss_in_round: bool,
    pub(super) ecn_in_round: bool,
    pub(super) loss_in_cycle: bool,
    pub(super) ecn_in_cycle: bool,
    pub(super) bw_latest: u32,
    pub(super) inflight_latest: u32,
    pub(super) loss_round_delivered: u64,
    pub(super) loss_round_start: bool,
    /// Loss-marking ACKs in this round (4-bit saturating).
    pub(super) loss_events_in_round: u32,
}

/// ECN state (`ecn_eligible`, `ecn_alpha`, `alpha_last_delivered{,_ce}`, `startup_ecn_rounds`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ecn {
    pub(super) eligible: bool,
    pub(super) alpha: u32,
    last_delivered: u64,
    last_delivered_ce: u64,
    pub(super) startup_rounds: u32,
}

/// One record of the transmit history: `tp->delivered` and `tp->lost` after an ACK, and the
/// inflight the flight sent after that ACK reached (the next ACK's `prior_in_flight`).
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    delivered: u64,
    lost: u64,
    in_flight: u32,
}

/// Rebuilds `rs->tx_in_flight` and `rs->lost` (deviation 1 of the header): segments sent
/// after the ACK that left `tp->delivered = D` carry `tx.delivered = D`, so a rate sample's
/// `prior_delivered` names the record of the flight its segment was sent in.
#[derive(Clone, Debug, Default)]
pub struct TxHistory {
    records: VecDeque<TxRecord>,
}

impl TxHistory {
    pub(super) fn new(tcp: &TcpState) -> Self {
        let mut records = VecDeque::new();
        records.push_back(TxRecord {
            delivered: tcp.delivered,
            lost: tcp.lost,
            in_flight: 0,
        });
        TxHistory { records }
    }

    /// Account one ACK; returns (tx_in_flight, lost) of its rate sample (0, 0 without one).
    pub(super) fn on_ack(&mut self, tcp: &TcpState, rs: &AckSample) -> (u32, u32) {
        // The flight sent since the previous ACK peaked at this ACK's prior_in_flight.
        if let Some(last) = self.records.back_mut() {
            last.in_flight = last.in_flight.max(rs.prior_in_flight);
        }
        let mut out = (0, 0);
        if rs.delivered.is_some() {
            let i = self
                .records
                .partition_point(|r| r.delivered <= rs.prior_delivered);
            if i > 0 {
                let r = self.records[i - 1];
                let in_flight = if r.in_flight > 0 {
                    r.in_flight
                } else {
                    rs.prior_in_flight
                };
                out = (
                    in_flight,
                    tcp.lost.saturating_sub(r.lost).min(u64::from(u32::MAX)) as u32,
                );
                self.records.drain(..i - 1); // later samples are never older
            } else {
                out = (rs.prior_in_flight, rs.losses);
            }
        }
        match self.records.back_mut() {
            Some(last) if last.delivered >= tcp.delivered => last.lost = tcp.lost,
            _ => self.records.push_back(TxRecord {
                delivered: tcp.delivered,
                lost: tcp.lost,
                in_flight: 0,
            }),
        }
        if self.records.len() > TX_HISTORY_MAX {
            self.records.pop_front();
        }
        out
    }
}

impl Bbr3 {
    /// `bbr_note_loss`: this round is a loss round; it ends one flight after the first loss.
    pub(super) fn note_loss(&mut self, tcp: &TcpState) {
        if !self.signals.loss_in_round {
            self.signals.loss_round_delivered = tcp.delivered;
        }
        self.signals.loss_in_round = true;
        self.signals.loss_in_cycle = true;
    }

    /// `bbr_update_ecn_alpha`, once per round: α ← (1 − g)·α + g·CE ratio, g = 1/16.
    pub(super) fn update_ecn_alpha(&mut self, tcp: &TcpState) -> Option<u32> {
        let max_rtt = self.cfg.ecn_max_rtt_us;
        if !self.ecn.eligible && tcp.ecn_ok && (max_rtt == 0 || self.min_rtt.us_or_max() <= max_rtt)
        {
            self.ecn.eligible = true;
        }
        if !self.ecn.eligible {
            return None; // no PLB (deviation 5): alpha only for ECN-eligible flows
        }
        let delivered = tcp.delivered.saturating_sub(self.ecn.last_delivered);
        let delivered_ce = tcp.delivered_ce.saturating_sub(self.ecn.last_delivered_ce);
        if delivered == 0 {
            return None;
        }
        let ce_ratio = ((u128::from(delivered_ce) << BBR_SCALE) / u128::from(delivered))
            .min(u128::from(BBR_UNIT)) as u32;
        let alpha =
            scale(self.ecn.alpha, BBR_UNIT - ECN_ALPHA_GAIN) + scale(ce_ratio, ECN_ALPHA_GAIN);
        self.ecn.alpha = alpha.min(BBR_UNIT);
        self.ecn.last_delivered = tcp.delivered;
        self.ecn.last_delivered_ce = tcp.delivered_ce;
        self.check_ecn_too_high_in_startup(tcp, ce_ratio);
        Some(ce_ratio)
    }

    /// `bbr_update_latest_delivery_signals`: max rate and volume delivered this round.
    pub(super) fn update_latest_delivery_signals(
        &mut self,
        tcp: &TcpState,
        rs: &AckSample,
        ctx: &Ctx,
    ) {
        let s = &mut self.signals;
        s.loss_round_start = false;
        if rs.interval_us == 0 || rs.acked_sacked == 0 {
            return; // not a valid observation
        }
        s.bw_latest = s.bw_latest.max(ctx.sample_bw);
        s.inflight_latest = s.inflight_latest.max(delivered_u32(rs));
        if rs.prior_delivered >= s.loss_round_delivered {
            s.loss_round_delivered = tcp.delivered;
            s.loss_round_start = true;
        }
    }

    /// `bbr_advance_latest_delivery_signals`: restart the per-round maxima.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &AckSample, ctx: &Ctx) {
        if self.signals.loss_round_start {
            self.signals.bw_latest = ctx.sample_bw;
            self.signals.inflight_latest = delivered_u32(rs);
        }
    }

    /// `bbr_update_congestion_signals`: feed bw_hi; once per loss round adapt the lower bounds.
    pub(super) fn update_congestion_signals(&mut self, tcp: &TcpState, rs: &AckSample, ctx: &Ctx) {
        if rs.interval_us == 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || ctx.sample_bw >= self.max_bw() {
            self.model.bw_hi[1] = self.model.bw_hi[1].max(ctx.sample_bw); // bbr_take_max_bw_sample
        }
        self.signals.loss_in_round |= rs.losses > 0;
        if !self.signals.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(tcp);
        self.signals.loss_in_round = false;
        self.signals.ecn_in_round = false;
    }

    /// `bbr_is_probing_bandwidth`: STARTUP, REFILL, UP.
    pub(super) fn is_probing_bandwidth(&self) -> bool {
        matches!(
            self.mode,
            Mode::Startup
                | Mode::ProbeBw {
                    phase: Phase::Refill { .. } | Phase::Up { .. },
                    ..
                }
        )
    }

    /// `bbr_init_lower_bounds`.
    fn init_lower_bounds(&mut self, tcp: &TcpState, init_bw: bool) {
        if init_bw && self.model.bw_lo.is_none() {
            self.model.bw_lo = Some(self.max_bw());
        }
        if self.model.inflight_lo.is_none() {
            self.model.inflight_lo = Some(tcp.cwnd);
        }
    }

    /// `bbr_adapt_lower_bounds`: outside probing, cut bw_lo/inflight_lo by β per lossy
    /// round (not below this round's delivery) and inflight_lo by 1 − α/3 per ECN round.
    fn adapt_lower_bounds(&mut self, tcp: &TcpState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = None;
        if self.signals.ecn_in_round {
            self.init_lower_bounds(tcp, false);
            let ecn_cut = BBR_UNIT - scale(self.ecn.alpha, ECN_FACTOR); // bbr_ecn_cut
            ecn_inflight_lo = self.model.inflight_lo.map(|lo| scale(lo, ecn_cut));
        }
        if self.signals.loss_in_round {
            self.init_lower_bounds(tcp, true);
            let loss_cut = BBR_UNIT - self.cfg.beta_cut; // bbr_loss_lower_bounds
            let s = self.signals;
            self.model.bw_lo = self
                .model
                .bw_lo
                .map(|lo| s.bw_latest.max(scale(lo, loss_cut)));
            self.model.inflight_lo = self
                .model
                .inflight_lo
                .map(|lo| s.inflight_latest.max(scale(lo, loss_cut)));
        }
        self.model.inflight_lo = min_inf(self.model.inflight_lo, ecn_inflight_lo);
        self.model.bw_lo = self.model.bw_lo.map(|b| b.max(1));
    }

    /// `bbr_is_inflight_too_high`: loss > loss_thresh of the flight, or CE > ecn_thresh.
    pub(super) fn is_inflight_too_high(&self, rs: &AckSample, ctx: &Ctx) -> bool {
        if ctx.lost > 0
            && ctx.tx_in_flight > 0
            && ctx.lost > scale(ctx.tx_in_flight, self.cfg.loss_thresh)
        {
            return true;
        }
        let delivered = delivered_u32(rs);
        rs.delivered_ce > 0
            && delivered > 0
            && self.ecn.eligible
            && self.cfg.ecn_thresh > 0
            && rs.delivered_ce > u64::from(scale(delivered, self.cfg.ecn_thresh))
    }

    /// `bbr_target_inflight`: min(BDP + budget, cwnd).
    pub(super) fn target_inflight(&self, tcp: &TcpState) -> u32 {
        self.inflight(tcp, self.bw(), BBR_UNIT).min(tcp.cwnd)
    }

    /// `bbr_inflight_with_headroom`: inflight_hi less 15 %, at least the cwnd floor.
    pub(super) fn inflight_with_headroom(&self) -> Option<u32> {
        let hi = self.model.inflight_hi?;
        let headroom = scale(hi, self.cfg.headroom).max(1);
        Some((i64::from(hi) - i64::from(headroom)).max(i64::from(CWND_MIN_TARGET)) as u32)
    }

    /// `bbr_handle_inflight_too_high`: once per probe, cut inflight_hi to the inflight at
    /// which loss/ECN went too high (at least β × target), and stop probing.
    pub(super) fn handle_inflight_too_high(
        &mut self,
        now: satcc_core::SimTime,
        tcp: &TcpState,
        rs: &AckSample,
        ctx: &Ctx,
    ) {
        self.probe.prev_too_high = true;
        self.probe.samples = false; // only react once per probe
        if !rs.is_app_limited {
            let floor = scale(self.target_inflight(tcp), BBR_UNIT - self.cfg.beta_cut);
            self.model.inflight_hi = Some(ctx.tx_in_flight.max(floor));
        }
        if matches!(
            self.mode,
            Mode::ProbeBw {
                phase: Phase::Up { .. },
                ..
            }
        ) {
            self.start_bw_probe_down(now, tcp);
        }
    }

    /// `bbr_adapt_upper_bounds`: track probe feedback; cut inflight_hi on "too high",
    /// raise it when a larger flight proved safe. True if it decided a phase change.
    pub(super) fn adapt_upper_bounds(
        &mut self,
        now: satcc_core::SimTime,
        tcp: &TcpState,
        rs: &AckSample,
        ctx: &Ctx,
    ) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round.start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round.start {
            // End of the samples from the probe: forget the older cycle's bw now.
            self.probe.samples = false;
            self.ack_phase = AckPhase::Init;
            let in_probe_bw = matches!(self.mode, Mode::ProbeBw { .. });
            if in_probe_bw && !rs.is_app_limited {
                self.model.advance_max_bw_filter();
            }
            // A probe that stopped at the old inflight_hi without loss: probe again.
            if in_probe_bw && self.probe.stopped_risky && !self.probe.prev_too_high {
                self.start_bw_probe_refill(tcp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs, ctx) {
            if self.probe.samples {
                self.handle_inflight_too_high(now, tcp, rs, ctx);
            }
            return false;
        }
        let Some(hi) = self.model.inflight_hi else {
            return false;
        };
        if ctx.tx_in_flight > hi {
            self.model.inflight_hi = Some(ctx.tx_in_flight); // a higher level proved safe
        }
        if matches!(
            self.mode,
            Mode::ProbeBw {
                phase: Phase::Up { .. },
                ..
            }
        ) {
            self.probe_inflight_hi_upward(tcp, rs);
        }
        false
    }
}

/// `rs->delivered` as the kernel's 32-bit count (0 without a sample).
fn delivered_u32(rs: &AckSample) -> u32 {
    rs.delivered.unwrap_or(0).min(u64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(prior_delivered: u64, prior_in_flight: u32) -> AckSample {
        AckSample {
            delivered: Some(1),
            interval_us: 1,
            prior_delivered,
            prior_in_flight,
            ..Default::default()
        }
    }

    #[test]
    fn tx_in_flight_is_the_inflight_reached_by_the_flight_the_sample_was_sent_in() {
        let mut tcp = TcpState::new(1448, 10);
        let mut h = TxHistory::new(&tcp);
        // ACK 1: delivered 0 → 10; then the sender fills to 40 in flight.
        tcp.delivered = 10;
        h.on_ack(&tcp, &ack(0, 10));
        // ACK 2 (prior_in_flight 40) samples a segment sent after ACK 1; 3 marked lost since.
        tcp.delivered = 20;
        tcp.lost = 3;
        assert_eq!(h.on_ack(&tcp, &ack(10, 40)), (40, 3));
    }

    #[test]
    fn infinite_bounds_compare_as_infinity() {
        assert_eq!(min_inf(None, Some(5)), Some(5));
        assert_eq!(min_inf(None, None), None);
        assert_eq!(max_inf(None, Some(5)), None);
        assert_eq!(max_inf(Some(3), Some(5)), Some(5));
    }
}
