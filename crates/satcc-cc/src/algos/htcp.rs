//! H-TCP — Linux `net/ipv4/tcp_htcp.c`.
//!
//! Model: the additive increase grows with the time Δ since the last congestion event:
//! α(Δ) = 1 for Δ ≤ 1 s, then 1 + 10(Δ − 1) + ((Δ − 1)/2)², scaled by the RTT (so flows
//! with different RTTs gain alike) and by 2(1 − β) (so the average rate is kept across
//! backoffs). The backoff β = RTTmin/RTTmax (between 0.5 and 0.8) empties the queue the
//! flow built; when the measured throughput changes by more than 20 % between congestion
//! events, β falls back to 0.5 for fast convergence.
//!
//! Source: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and long-distance networks",
//! PFLDnet 2004, §3–4; Linux `tcp_htcp.c` (`htcp_alpha_update`, `htcp_beta_update`,
//! `measure_achieved_throughput`, `htcp_cong_avoid`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Deviations from Linux:
//! 1. Times (Δ, RTTmin, RTTmax, throughput intervals) are in jiffies of a `HZ = 1000`
//!    kernel, so the integer rounding is that of `CONFIG_HZ=1000`.
//!
//! Not implemented: nothing of `tcp_htcp.c`.

use satcc_core::SimTime;

use super::kparams::{CLOCK, HZ};
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    USE_RTT_SCALING = ParamSpec::flag("use_rtt_scaling", true).unit("bool")
        .kernel("use_rtt_scaling").doc("scale alpha by RTT");
    USE_BANDWIDTH_SWITCH = ParamSpec::flag("use_bandwidth_switch", true).unit("bool")
        .kernel("use_bandwidth_switch").doc("beta = 0.5 when throughput changed >20%");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "htcp",
    summary: "H-TCP: increase grows with time since the last backoff; beta = RTTmin/RTTmax",
    source: "Leith & Shorten, PFLDnet 2004, §3-4; Linux net/ipv4/tcp_htcp.c",
    params: PARAMS,
    deviations: &["times counted in HZ=1000 jiffies"],
    needs_ecn: false,
    build,
};

/// `ALPHA_BASE`: 1.0 in 1/128.
const ALPHA_BASE: u32 = 1 << 7;
/// `BETA_MIN`: 0.5 in 1/128.
const BETA_MIN: u32 = 1 << 6;
/// `BETA_MAX`: 0.8 in 1/128.
const BETA_MAX: u32 = 102;
/// Fixed-point shift of alpha and beta.
const SHIFT: u32 = 7;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let rtt_scaling = param::USE_RTT_SCALING.bool(params)?;
    let bw_switch = param::USE_BANDWIDTH_SWITCH.bool(params)?;
    Ok(Box::new(Htcp::new(rtt_scaling, bw_switch)))
}

/// H-TCP's per-connection state (`struct htcp`); times in jiffies.
#[derive(Clone, Debug)]
pub struct Htcp {
    use_rtt_scaling: bool,
    use_bandwidth_switch: bool,
    /// `alpha`, `beta`: 1/128 fixed point.
    alpha: u32,
    beta: u32,
    /// `modeswitch`: delay the RTT-based beta until one congestion event was seen.
    modeswitch: bool,
    /// `pkts_acked` of the last ACK.
    pkts_acked: u32,
    /// `packetcount`: packets acked since `lasttime`.
    packetcount: u32,
    /// `minRTT`, `maxRTT`: jiffies, 0 = unknown.
    min_rtt: u64,
    max_rtt: u64,
    /// `last_cong`: end of the last congestion event (jiffies).
    last_cong: u64,
    /// Undo copies (`undo_last_cong` = None: nothing to undo).
    undo_last_cong: Option<u64>,
    undo_max_rtt: u64,
    undo_old_max_b: u32,
    /// Throughput estimates, packets per second: `minB`, `maxB`, `old_maxB`, `Bi`.
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    /// `lasttime`: start of the throughput interval (jiffies).
    lasttime: u64,
}

impl Htcp {
    pub fn new(use_rtt_scaling: bool, use_bandwidth_switch: bool) -> Self {
        Htcp {
            use_rtt_scaling,
            use_bandwidth_switch,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: None,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    /// α as a real number.
    pub fn alpha(&self) -> f64 {
        f64::from(self.alpha) / f64::from(ALPHA_BASE)
    }

    /// β as a real number.
    pub fn beta(&self) -> f64 {
        f64::from(self.beta) / f64::from(ALPHA_BASE)
    }

    /// `htcp_cong_time`: jiffies since the last congestion event.
    fn cong_time(&self, now: SimTime) -> u64 {
        CLOCK.jiffies(now).saturating_sub(self.last_cong)
    }

    /// `htcp_reset`: a congestion event starts now; keep undo copies.
    fn reset(&mut self, now: SimTime) {
        self.undo_last_cong = Some(self.last_cong);
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = CLOCK.jiffies(now);
    }

    /// `measure_rtt`: min and (bounded-growth) max RTT, in jiffies.
    fn measure_rtt(&mut self, rtt: u64, state: CaState) {
        if self.min_rtt > rtt || self.min_rtt == 0 {
            self.min_rtt = rtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            // Ignore jumps of more than 20 ms (spikes, route changes).
            if self.max_rtt < rtt && rtt <= self.max_rtt + CLOCK.msecs_to_jiffies(20) {
                self.max_rtt = rtt;
            }
        }
    }

    /// `htcp_beta_update`: adaptive backoff, §4.
    fn beta_update(&mut self) {
        if self.use_bandwidth_switch {
            let max_b = self.max_b;
            let old_max_b = self.old_max_b;
            self.old_max_b = self.max_b;
            // between(5·maxB, 4·old, 6·old): throughput within ±20 % of the last event's.
            let (x, lo, hi) = (
                5u32.wrapping_mul(max_b),
                4u32.wrapping_mul(old_max_b),
                6u32.wrapping_mul(old_max_b),
            );
            if hi.wrapping_sub(lo) < x.wrapping_sub(lo) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt > CLOCK.msecs_to_jiffies(10) && self.max_rtt > 0 {
            self.beta = (((self.min_rtt << SHIFT) / self.max_rtt) as u32).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// `htcp_alpha_update`: α(Δ), RTT scaling, and 2(1 − β).
    fn alpha_update(&mut self, now: SimTime) {
        let mut factor: u64 = 1;
        let mut diff = self.cong_time(now);
        if diff > HZ {
            // α(Δ) = 1 + 10(Δ − 1) + ((Δ − 1)/2)², Δ in seconds (eq. 3).
            diff -= HZ;
            factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / HZ)) / HZ;
        }
        if self.use_rtt_scaling && self.min_rtt > 0 {
            // scale = 1/(10·RTT) (RTT in s) ·8, clamped to [0.5, 10]·8.
            let scale = ((HZ << 3) / (10 * self.min_rtt)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        let alpha = 2 * factor * u64::from((1 << SHIFT) - self.beta);
        self.alpha = if alpha == 0 {
            ALPHA_BASE
        } else {
            alpha.min(u64::from(u32::MAX)) as u32
        };
    }

    /// `htcp_param_update`: on a congestion event.
    fn param_update(&mut self, now: SimTime) {
        self.beta_update();
        self.alpha_update(now);
        // Slowly fading memory of maxRTT (routing changes).
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            self.max_rtt = self.min_rtt + ((self.max_rtt - self.min_rtt) * 95) / 100;
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// `htcp_init`.
    fn on_init(&mut self, now: SimTime, _tcp: &mut TcpState) {
        *self = Htcp::new(self.use_rtt_scaling, self.use_bandwidth_switch);
        self.last_cong = CLOCK.jiffies(now);
    }

    /// `htcp_recalc_ssthresh`.
    fn ssthresh(&mut self, now: SimTime, tcp: &TcpState) -> u32 {
        self.param_update(now);
        (((u64::from(tcp.cwnd) * u64::from(self.beta)) >> SHIFT) as u32).max(2)
    }

    /// `htcp_cong_avoid`: cwnd += α/cwnd per ACK.
    fn on_cong_avoid(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if !tcp.is_cwnd_limited() {
            return;
        }
        if tcp.in_slow_start() {
            tcp.slow_start(ack.acked_sacked);
            return;
        }
        if (u64::from(tcp.cwnd_cnt) * u64::from(self.alpha)) >> SHIFT >= u64::from(tcp.cwnd) {
            if tcp.cwnd < tcp.cwnd_clamp {
                tcp.cwnd += 1;
            }
            tcp.cwnd_cnt = 0;
            self.alpha_update(now);
        } else {
            tcp.cwnd_cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }

    /// `htcp_state`.
    fn on_state(&mut self, now: SimTime, _tcp: &mut TcpState, new: CaState) {
        match new {
            CaState::Open => {
                if self.undo_last_cong.take().is_some() {
                    self.last_cong = CLOCK.jiffies(now);
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    /// `htcp_cwnd_undo`.
    fn undo_cwnd(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        if let Some(last) = self.undo_last_cong.take() {
            self.last_cong = last;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
        }
        tcp.cwnd.max(tcp.prior_cwnd)
    }

    /// `measure_achieved_throughput`.
    fn on_pkts_acked(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        let j = CLOCK.jiffies(now);
        if tcp.ca_state == CaState::Open {
            self.pkts_acked = ack.pkts_acked;
        }
        if let Some(rtt) = ack.rtt_us.filter(|&r| r > 0) {
            self.measure_rtt(CLOCK.usecs_to_jiffies(rtt), tcp.ca_state);
        }
        if !self.use_bandwidth_switch {
            return;
        }
        if !matches!(tcp.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = j;
            return;
        }
        self.packetcount += ack.pkts_acked;
        let step = match self.alpha >> SHIFT {
            0 => 1,
            a => a,
        };
        let elapsed = j.saturating_sub(self.lasttime);
        if self.packetcount >= tcp.cwnd.wrapping_sub(step)
            && elapsed >= self.min_rtt
            && self.min_rtt > 0
        {
            // Throughput over the last ≥ 1 RTT, packets per second.
            let cur_bi = (u64::from(self.packetcount) * HZ / elapsed.max(1)) as u32;
            if self.cong_time(now) / self.min_rtt <= 3 {
                // Just after a backoff.
                (self.min_b, self.max_b, self.bi) = (cur_bi, cur_bi, cur_bi);
            } else {
                self.bi = ((3 * u64::from(self.bi) + u64::from(cur_bi)) / 4) as u32;
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.packetcount = 0;
            self.lasttime = j;
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha", self.alpha()),
            ("beta", self.beta()),
            ("min_rtt_ms", self.min_rtt as f64),
            ("max_rtt_ms", self.max_rtt as f64),
            ("max_b_pps", f64::from(self.max_b)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u32 = 1448;
    use satcc_core::SimDuration;

    fn state(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = 2;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        t
    }

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    #[test]
    fn alpha_follows_the_time_since_the_last_backoff() {
        // Without RTT scaling and with beta = 0.5: α = 2·0.5·α(Δ) = α(Δ).
        let mut h = Htcp::new(false, false);
        h.on_init(SimTime::ZERO, &mut state(10));
        for (delta_s, want) in [
            (0.5f64, 1.0f64),
            (1.0, 1.0),
            (2.0, 11.25),
            (5.0, 45.0),
            (11.0, 126.0),
        ] {
            h.alpha_update(at((delta_s * 1000.0) as u64));
            // α(Δ) = 1 + 10(Δ−1) + ((Δ−1)/2)², truncated to an integer factor.
            let d = (delta_s - 1.0).max(0.0);
            let exact = if delta_s <= 1.0 {
                1.0
            } else {
                1.0 + 10.0 * d + (d / 2.0).powi(2)
            };
            assert_eq!(h.alpha(), exact.floor(), "Δ = {delta_s}");
            assert!((h.alpha() - want).abs() <= 1.0);
        }
    }

    #[test]
    fn rtt_scaling_gives_equal_gains_per_second() {
        // α scales with RTT/100 ms, clamped to [0.5, 10]: per second, flows gain alike.
        let mut h = Htcp::new(true, false);
        h.on_init(SimTime::ZERO, &mut state(10));
        h.min_rtt = 200; // 200 ms: scale = 8000/2000 = 4 → factor·2
        h.alpha_update(at(5000));
        assert_eq!(h.alpha(), 90.0);
        h.min_rtt = 50; // 50 ms: scale = 16 → factor/2
        h.alpha_update(at(5000));
        assert_eq!(h.alpha(), 22.0);
    }

    #[test]
    fn beta_is_min_over_max_rtt_within_half_and_point_eight() {
        let mut h = Htcp::new(false, false);
        h.on_init(SimTime::ZERO, &mut state(10));
        h.min_rtt = 100;
        h.max_rtt = 150;
        h.beta_update(); // first event arms modeswitch
        assert_eq!(h.beta, BETA_MIN);
        h.beta_update();
        assert_eq!(h.beta, (100 << 7) / 150);
        h.max_rtt = 300;
        h.beta_update();
        assert_eq!(h.beta, BETA_MIN);
        h.max_rtt = 101;
        h.beta_update();
        assert_eq!(h.beta, BETA_MAX);
    }

    #[test]
    fn a_throughput_change_of_more_than_a_fifth_resets_beta_to_half() {
        let mut h = Htcp::new(false, true);
        h.on_init(SimTime::ZERO, &mut state(10));
        h.min_rtt = 100;
        h.max_rtt = 120;
        h.modeswitch = true;
        h.old_max_b = 1000;
        h.max_b = 1100; // +10 %: adaptive beta
        h.beta_update();
        assert_eq!(h.beta, ((100 << 7) / 120).min(BETA_MAX));
        h.max_b = 1500; // +36 % relative to 1100
        h.beta_update();
        assert_eq!(h.beta, BETA_MIN);
        assert!(!h.modeswitch);
    }

    #[test]
    fn avoidance_adds_alpha_packets_per_rtt() {
        let mut h = Htcp::new(false, false);
        let mut t = state(1000);
        h.on_init(SimTime::ZERO, &mut t);
        h.alpha = 10 << SHIFT;
        h.last_cong = 0;
        let now = at(500); // Δ < 1 s keeps α from being recomputed upwards
        h.alpha_update(now);
        h.alpha = 10 << SHIFT;
        let mut grown = 0;
        for _ in 0..1000 {
            let before = t.cwnd;
            h.on_cong_avoid(
                now,
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    pkts_acked: 1,
                    ..Default::default()
                },
            );
            if t.cwnd > before {
                grown += 1;
                h.alpha = 10 << SHIFT; // hold α fixed for the closed form
            }
        }
        // One packet per cwnd/α ACKs (+1 ACK for the increment itself).
        assert!((9..=10).contains(&grown), "+{grown}");
    }

    #[test]
    fn loss_backs_off_by_beta_and_restarts_the_clock() {
        let mut h = Htcp::new(false, false);
        let mut t = state(1000);
        h.on_init(SimTime::ZERO, &mut t);
        assert_eq!(h.ssthresh(at(3000), &t), 500);
        h.on_state(at(3000), &mut t, CaState::Recovery);
        assert_eq!(h.cong_time(at(3500)), 500);
        // Undo restores the previous epoch.
        h.undo_cwnd(at(3500), &t);
        assert_eq!(h.cong_time(at(3500)), 3500);
    }

    #[test]
    fn max_rtt_ignores_jumps_above_20_ms() {
        let mut h = Htcp::new(false, false);
        h.measure_rtt(100, CaState::Open);
        h.measure_rtt(115, CaState::Open);
        assert_eq!(h.max_rtt, 115);
        h.measure_rtt(200, CaState::Open);
        assert_eq!(h.max_rtt, 115);
        h.measure_rtt(130, CaState::Open);
        assert_eq!(h.max_rtt, 130);
    }
}
