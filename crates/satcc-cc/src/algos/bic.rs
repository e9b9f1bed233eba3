//! BIC — Linux `net/ipv4/tcp_bic.c` (Binary Increase Congestion control).
//!
//! Model: after a loss, search for the window where the loss happened (W_max) by binary
//! search: each RTT move halfway (1/B with B = 4) towards W_max, at most `max_increment`
//! packets per RTT and at least a "smooth" step near W_max; past W_max, probe away slowly
//! then faster ("max probing"). Loss multiplies cwnd by beta = 819/1024 (0.8); with fast
//! convergence a flow whose W_max is falling sets W_max below its current window. Below
//! `low_window` packets BIC is Reno. The per-RTT targets are turned into "one packet per
//! cnt acked packets", corrected for the delayed-ACK ratio.
//!
//! Source: L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control for Fast, Long
//! Distance Networks", IEEE INFOCOM 2004, §3; Linux `tcp_bic.c` (`bictcp_update`,
//! `bictcp_cong_avoid`, `bictcp_recalc_ssthresh`, `bictcp_acked`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Deviations from Linux:
//! 1. The 1/32 s rate limit of `bictcp_update` is counted in jiffies of a `HZ = 1000`
//!    kernel (the kernel's HZ is a build option).
//!
//! Not implemented: nothing of `tcp_bic.c`.

use satcc_core::SimTime;

use super::kparams::{CLOCK, HZ};
use super::reno::reno_ssthresh;
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    FAST_CONVERGENCE = ParamSpec::flag("fast_convergence", true).unit("bool")
        .kernel("fast_convergence").doc("lower W_max when it falls between losses");
    MAX_INCREMENT = ParamSpec::int("max_increment", 16, 1, 1_000_000).unit("packets")
        .kernel("max_increment").doc("largest increase per RTT in binary search");
    LOW_WINDOW = ParamSpec::int("low_window", 14, 0, 1_000_000).unit("packets")
        .kernel("low_window").doc("Reno behaviour at or below this window");
    BETA = ParamSpec::int("beta", 819, 1, 1024).unit("1/1024").kernel("beta")
        .doc("multiplicative decrease factor (819/1024 = 0.8)");
    INITIAL_SSTHRESH = ParamSpec::int("initial_ssthresh", 0, 0, 1 << 30).unit("packets")
        .kernel("initial_ssthresh").doc("ssthresh at start (0 = infinite)");
    SMOOTH_PART = ParamSpec::int("smooth_part", 20, 1, 1_000_000).unit("RTTs")
        .kernel("smooth_part").doc("RTTs to go from W_max - B to W_max");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "bic",
    summary: "BIC: binary search towards the last loss window, beta 0.8",
    source: "Xu, Harfoush, Rhee, IEEE INFOCOM 2004, §3; Linux net/ipv4/tcp_bic.c",
    params: PARAMS,
    deviations: &["1/32 s update limit counted in HZ=1000 jiffies"],
    needs_ecn: false,
    build,
};

/// `BICTCP_BETA_SCALE`.
const BETA_SCALE: u32 = 1024;
/// `BICTCP_B`: binary search goes to (max + min)/B per RTT.
const B: u32 = 4;
/// `ACK_RATIO_SHIFT`: `delayed_ack` holds packets/ACK · 16.
const ACK_RATIO_SHIFT: u32 = 4;
/// "if in slow start or link utilization is very low": at most +5 % per RTT.
const LOW_UTIL_CNT: u32 = 20;

/// BIC's module parameters.
#[derive(Clone, Copy, Debug)]
pub struct BicConfig {
    pub fast_convergence: bool,
    pub max_increment: u32,
    pub low_window: u32,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub smooth_part: u32,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig::from_params(&Params::new()).expect("the declared defaults are valid")
    }
}

impl BicConfig {
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.check(PARAMS)?;
        Ok(BicConfig {
            fast_convergence: param::FAST_CONVERGENCE.bool(params)?,
            max_increment: param::MAX_INCREMENT.u32(params)?,
            low_window: param::LOW_WINDOW.u32(params)?,
            beta: param::BETA.u32(params)?,
            initial_ssthresh: param::INITIAL_SSTHRESH.u32(params)?,
            smooth_part: param::SMOOTH_PART.u32(params)?,
        })
    }
}

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Bic::new(BicConfig::from_params(params)?)))
}

/// BIC's per-connection state (`struct bictcp`).
#[derive(Clone, Debug)]
pub struct Bic {
    cfg: BicConfig,
    /// `cnt`: increase cwnd by 1 after this many ACKed packets.
    cnt: u32,
    /// `last_max_cwnd`: W_max.
    last_max_cwnd: u32,
    /// `last_cwnd`, `last_time`: cwnd and jiffies at the last `update`.
    last_cwnd: u32,
    last_time: Option<u64>,
    /// `epoch_start` (jiffies); None outside an epoch.
    epoch_start: Option<u64>,
    /// `delayed_ack`: packets per ACK · 16.
    delayed_ack: u32,
}

impl Bic {
    pub fn new(cfg: BicConfig) -> Self {
        let mut b = Bic {
            cfg,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            epoch_start: None,
            delayed_ack: 0,
        };
        b.reset();
        b
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = None;
        self.epoch_start = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// `bictcp_update`: the ACK count per one-packet increase.
    fn update(&mut self, cwnd: u32, now: SimTime) {
        let j = CLOCK.jiffies(now);
        // Recompute at most every 1/32 s while cwnd is unchanged.
        if self.last_cwnd == cwnd
            && self
                .last_time
                .is_some_and(|t| j.saturating_sub(t) <= HZ / 32)
        {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = Some(j);
        if self.epoch_start.is_none() {
            self.epoch_start = Some(j);
        }
        let c = self.cfg;
        // Start off normal (Reno).
        if cwnd <= c.low_window {
            self.cnt = cwnd;
            return;
        }
        if cwnd < self.last_max_cwnd {
            // Binary increase (§3.1): distance to the midpoint per RTT.
            let dist = (self.last_max_cwnd - cwnd) / B;
            self.cnt = if dist > c.max_increment {
                cwnd / c.max_increment // linear increase, Smax per RTT
            } else if dist <= 1 {
                cwnd.wrapping_mul(c.smooth_part) / B // close to W_max: Smin-like smooth step
            } else {
                cwnd / dist
            };
        } else {
            // Max probing past W_max: slow start-like, then linear.
            self.cnt = if cwnd < self.last_max_cwnd.wrapping_add(B) {
                cwnd.wrapping_mul(c.smooth_part) / B
            } else if cwnd
                < self
                    .last_max_cwnd
                    .wrapping_add(c.max_increment.wrapping_mul(B - 1))
            {
                cwnd.wrapping_mul(B - 1) / (cwnd - self.last_max_cwnd).max(1)
            } else {
                cwnd / c.max_increment
            };
        }
        // In slow start or at very low utilisation: at least +5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > LOW_UTIL_CNT {
            self.cnt = LOW_UTIL_CNT;
        }
        // Per-ACK count corrected for the delayed-ACK ratio.
        self.cnt = ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1);
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    /// `bictcp_init`.
    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.reset();
        if self.cfg.initial_ssthresh > 0 {
            tcp.ssthresh = self.cfg.initial_ssthresh;
        }
    }

    /// `bictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        self.epoch_start = None;
        let cwnd = tcp.cwnd;
        // W_max and fast convergence: a falling W_max is set to (1 + beta)/2 of cwnd.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            ((u64::from(cwnd) * u64::from(BETA_SCALE + self.cfg.beta)) / u64::from(2 * BETA_SCALE))
                as u32
        } else {
            cwnd
        };
        if cwnd <= self.cfg.low_window {
            reno_ssthresh(tcp)
        } else {
            (((u64::from(cwnd) * u64::from(self.cfg.beta)) / u64::from(BETA_SCALE)) as u32).max(2)
        }
    }

    /// `bictcp_cong_avoid`.
    fn on_cong_avoid(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if !tcp.is_cwnd_limited() {
            return;
        }
        let mut acked = ack.acked_sacked;
        if tcp.in_slow_start() {
            acked = tcp.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tcp.cwnd, now);
        let cnt = self.cnt;
        tcp.cong_avoid_ai(cnt, acked);
    }

    /// `bictcp_state`: an RTO forgets everything.
    fn on_state(&mut self, _now: SimTime, _tcp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.reset();
        }
    }

    /// `bictcp_acked`: delayed-ACK ratio, ratio = (15·ratio + sample)/16.
    fn on_pkts_acked(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if tcp.ca_state == CaState::Open {
            self.delayed_ack =
                self.delayed_ack - (self.delayed_ack >> ACK_RATIO_SHIFT) + ack.pkts_acked;
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("cnt", f64::from(self.cnt)),
            ("w_max", f64::from(self.last_max_cwnd)),
            ("acks_per_pkt", f64::from(self.delayed_ack) / 16.0),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u32 = 1448;

    fn state(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = 2;
        t.is_cwnd_limited = true;
        t
    }

    /// One RTT: cwnd ACKs of one packet each, 10 ms apart in time overall.
    fn rtt(b: &mut Bic, t: &mut TcpState, now: &mut SimTime) {
        let n = t.cwnd;
        for _ in 0..n {
            t.max_packets_out = t.cwnd;
            let a = AckSample {
                acked_sacked: 1,
                pkts_acked: 1,
                ..Default::default()
            };
            b.on_pkts_acked(*now, t, &a);
            b.on_cong_avoid(*now, t, &a);
        }
        *now += satcc_core::SimDuration::from_millis(100);
    }

    #[test]
    fn far_below_w_max_the_increase_is_max_increment_per_rtt() {
        let mut b = Bic::new(BicConfig::default());
        let mut t = state(500);
        b.last_max_cwnd = 1000;
        b.delayed_ack = 1 << ACK_RATIO_SHIFT; // one packet per ACK
        let mut now = SimTime::ZERO;
        rtt(&mut b, &mut t, &mut now);
        // dist = 125 > 16: cnt = cwnd/16, i.e. +16 per RTT (±1 while cwnd moves).
        assert!((15..=16).contains(&(t.cwnd - 500)), "+{}", t.cwnd - 500);
    }

    #[test]
    fn the_binary_search_closes_a_quarter_of_the_gap_to_w_max_per_rtt_step() {
        // Near W_max (dist ≤ max_increment) each step targets dist = (W_max − w)/B.
        let mut b = Bic::new(BicConfig::default());
        let mut t = state(960);
        b.last_max_cwnd = 1000;
        b.delayed_ack = 1 << ACK_RATIO_SHIFT;
        let mut now = SimTime::ZERO;
        let mut gaps = vec![1000 - t.cwnd];
        for _ in 0..4 {
            rtt(&mut b, &mut t, &mut now);
            gaps.push(1000u32.saturating_sub(t.cwnd));
        }
        // Per ACK the window gains (gap/B)/cwnd, recomputed as cwnd moves: over one RTT
        // (cwnd ACKs) the gap shrinks by e^(−1/B). Integer truncation of gap/B can only
        // slow it (by less than one packet per RTT).
        for w in gaps.windows(2) {
            let want = f64::from(w[0]) * (-1.0 / f64::from(B)).exp();
            let got = f64::from(w[1]);
            assert!(got >= want - 0.5 && got <= want + 1.5, "gaps {gaps:?}");
        }
    }

    #[test]
    fn loss_multiplies_by_beta_and_fast_convergence_lowers_w_max() {
        let mut b = Bic::new(BicConfig::default());
        let t = state(1000);
        assert_eq!(b.ssthresh(SimTime::ZERO, &t), 1000 * 819 / 1024);
        assert_eq!(b.last_max_cwnd, 1000);
        // A second loss below the previous W_max: W_max = cwnd·(1 + beta)/2.
        let t = state(900);
        b.ssthresh(SimTime::ZERO, &t);
        assert_eq!(b.last_max_cwnd, 900 * (1024 + 819) / 2048);
        // Small windows halve.
        assert_eq!(b.ssthresh(SimTime::ZERO, &state(10)), 5);
    }

    #[test]
    fn delayed_acks_are_compensated() {
        let mut b = Bic::new(BicConfig::default());
        let mut t = state(500);
        t.ca_state = CaState::Open;
        for _ in 0..200 {
            b.on_pkts_acked(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    pkts_acked: 2,
                    ..Default::default()
                },
            );
        }
        // The EWMA settles at 2 packets per ACK (·16), within its integer truncation.
        assert!((31..=32).contains(&b.delayed_ack), "{}", b.delayed_ack);
        b.last_max_cwnd = 1000;
        b.update(500, SimTime::ZERO);
        assert_eq!(b.cnt, ((500 / 16) << 4) / b.delayed_ack);
    }

    #[test]
    fn small_windows_grow_like_reno() {
        let mut b = Bic::new(BicConfig::default());
        b.delayed_ack = 1 << ACK_RATIO_SHIFT;
        let mut t = state(10);
        let mut now = SimTime::ZERO;
        rtt(&mut b, &mut t, &mut now);
        assert_eq!(t.cwnd, 11);
    }

    #[test]
    fn rto_resets_w_max() {
        let mut b = Bic::new(BicConfig::default());
        let mut t = state(1000);
        b.ssthresh(SimTime::ZERO, &t);
        b.on_state(SimTime::ZERO, &mut t, CaState::Loss);
        assert_eq!(b.last_max_cwnd, 0);
    }
}
