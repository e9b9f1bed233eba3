//! Illinois — Linux `net/ipv4/tcp_illinois.c`.
//!
//! Model: loss-based AIMD whose parameters follow the queueing delay. Once per RTT the
//! average queueing delay d_a (mean RTT − base RTT) is compared with the largest seen,
//! d_m: near zero delay the increase α is 10 packets per RTT, rising delay lowers it along
//! a convex curve towards 0.3 (α = k₁/(k₂ + d_a)); the decrease β grows linearly from 1/8
//! (d_a ≤ d_m/10) to 1/2 (d_a ≥ 0.8·d_m). Below 15 packets it is Reno (α = 1, β = 1/2).
//! After a low-delay stretch, α returns to its maximum only after θ = 5 RTTs.
//!
//! Source: S. Liu, T. Başar, R. Srikant, "TCP-Illinois: a loss- and delay-based congestion
//! control algorithm for high-speed networks", Perform. Eval. 65(6–7), 2008, §3 (eqs. 1–4);
//! Linux `tcp_illinois.c` (`alpha`, `beta`, `update_params`, `tcp_illinois_cong_avoid`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! α is kept in 1/128 (`ALPHA_SHIFT` 7) and β in 1/64 (`BETA_SHIFT` 6), as in Linux.
//!
//! Deviations from Linux: none known.
//! Not implemented: `get_info`. (Linux's "TODO: age max_rtt?" is not done there either.)

use satcc_core::SimTime;

use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    WIN_THRESH = ParamSpec::int("win_thresh", 15, 0, 1 << 30).unit("packets")
        .kernel("win_thresh").doc("Reno (alpha 1, beta 1/2) below this window");
    THETA = ParamSpec::int("theta", 5, 0, 255).unit("RTTs").kernel("theta")
        .doc("low-delay RTTs before alpha returns to its maximum");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "illinois",
    summary: "Illinois: AIMD with alpha 10..0.3 and beta 1/8..1/2 set by queueing delay",
    source: "Liu, Basar, Srikant, Perform. Eval. 65(6-7) 2008, §3; Linux net/ipv4/tcp_illinois.c",
    params: PARAMS,
    deviations: &[],
    needs_ecn: false,
    build,
};

const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// `ALPHA_MIN`: ≈ 0.3.
const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// `ALPHA_MAX`: 10.0.
const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// `ALPHA_BASE`: 1.0 (Reno).
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// `RTT_MAX`: samples are capped so that α arithmetic cannot wrap (≈ 3.3 s).
const RTT_MAX_US: u64 = (u32::MAX / ALPHA_MAX) as u64;
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// `BETA_MIN`: 1/8.
const BETA_MIN: u32 = BETA_SCALE / 8;
/// `BETA_MAX`: 1/2.
const BETA_MAX: u32 = BETA_SCALE / 2;
/// `BETA_BASE`: Reno's 1/2.
const BETA_BASE: u32 = BETA_MAX;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let win_thresh = param::WIN_THRESH.u32(params)?;
    let theta = param::THETA.u32(params)?;
    Ok(Box::new(Illinois::new(win_thresh, theta)))
}

/// Illinois's per-connection state (`struct illinois`), RTTs in µs.
#[derive(Clone, Debug)]
pub struct Illinois {
    win_thresh: u32,
    theta: u32,
    sum_rtt: u64,
    cnt_rtt: u32,
    base_rtt: Option<u64>,
    max_rtt: u64,
    /// `end_seq`: right edge of the current RTT (bytes).
    end_seq: u64,
    alpha: u32,
    beta: u32,
    /// `acked`: packets acked by the current ACK.
    acked: u32,
    rtt_above: bool,
    rtt_low: u32,
}

impl Illinois {
    pub fn new(win_thresh: u32, theta: u32) -> Self {
        Illinois {
            win_thresh,
            theta,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: None,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    /// `rtt_reset`.
    fn rtt_reset(&mut self, tcp: &TcpState) {
        self.end_seq = tcp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// `alpha`: eq. 2, from average delay `da` and maximum delay `dm` (µs).
    fn alpha_for(&mut self, da: u64, dm: u64) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait theta good RTTs before going back to alpha max.
            self.rtt_low += 1;
            if self.rtt_low < self.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // α = k1/(k2 + da) with k1, k2 such that α(d1) = αmax and α(dm) = αmin.
        let dm = dm - d1;
        let da = da - d1;
        let den = dm + (da * u64::from(ALPHA_MAX - ALPHA_MIN)) / u64::from(ALPHA_MIN);
        ((dm * u64::from(ALPHA_MAX)) / den.max(1)) as u32
    }

    /// `beta`: eq. 3.
    fn beta_for(da: u64, dm: u64) -> u32 {
        let d2 = dm / 10;
        if da <= d2 {
            return BETA_MIN;
        }
        let d3 = (8 * dm) / 10;
        if da >= d3 || d3 <= d2 {
            return BETA_MAX;
        }
        ((u64::from(BETA_MIN) * d3 + u64::from(BETA_MAX - BETA_MIN) * da
            - u64::from(BETA_MAX) * d2)
            / (d3 - d2)) as u32
    }

    /// `update_params`: once per RTT.
    fn update_params(&mut self, tcp: &TcpState) {
        if tcp.cwnd < self.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let base = self.base_rtt.unwrap_or(0);
            let dm = self.max_rtt - base;
            let da = self.sum_rtt / u64::from(self.cnt_rtt) - base;
            self.alpha = self.alpha_for(da, dm);
            self.beta = Self::beta_for(da, dm);
        }
        self.rtt_reset(tcp);
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        *self = Illinois::new(self.win_thresh, self.theta);
        self.rtt_reset(tcp);
    }

    /// `tcp_illinois_ssthresh`: cwnd·(1 − β).
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        let cut = (u64::from(tcp.cwnd) * u64::from(self.beta)) >> BETA_SHIFT;
        (tcp.cwnd - cut as u32).max(2)
    }

    /// `tcp_illinois_acked`.
    fn on_pkts_acked(&mut self, _now: SimTime, _tcp: &mut TcpState, ack: &AckSample) {
        self.acked = ack.pkts_acked;
        let Some(rtt) = ack.rtt_us else { return };
        let rtt = rtt.min(RTT_MAX_US);
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt += rtt;
    }

    /// `tcp_illinois_state`: an RTO returns to Reno's parameters.
    fn on_state(&mut self, _now: SimTime, tcp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tcp);
        }
    }

    /// `tcp_illinois_cong_avoid`: cwnd += α/cwnd per ACK.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if ack.ack_seq > self.end_seq {
            self.update_params(tcp);
        }
        if !tcp.is_cwnd_limited() {
            return;
        }
        if tcp.in_slow_start() {
            tcp.slow_start(ack.acked_sacked);
            return;
        }
        tcp.cwnd_cnt += self.acked;
        self.acked = 1;
        let delta = (u64::from(tcp.cwnd_cnt) * u64::from(self.alpha)) >> ALPHA_SHIFT;
        if delta >= u64::from(tcp.cwnd) {
            let grow = (delta / u64::from(tcp.cwnd)) as u32;
            tcp.cwnd = tcp.cwnd.saturating_add(grow).min(tcp.cwnd_clamp);
            tcp.cwnd_cnt = 0;
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha", f64::from(self.alpha) / f64::from(ALPHA_SCALE)),
            ("beta", f64::from(self.beta) / f64::from(BETA_SCALE)),
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
        t.max_packets_out = cwnd;
        t
    }

    #[test]
    fn alpha_is_max_at_no_delay_and_falls_to_min_at_max_delay() {
        let mut i = Illinois::new(15, 5);
        assert_eq!(i.alpha_for(0, 10_000), ALPHA_MAX);
        assert_eq!(i.alpha_for(10_000, 10_000), ALPHA_MIN);
        // In between, eq. 2: α = k1/(k2 + da) with α(d1) = 10 and α(dm) = 0.3 (±1/128).
        let (dm, d1) = (10_000f64, 100f64);
        let (amax, amin) = (10.0, 38.0 / 128.0);
        let k1 = (dm - d1) * amin * amax / (amax - amin);
        let k2 = (dm - d1) * amin / (amax - amin) - d1;
        for da in [500u64, 2000, 5000, 8000] {
            let want = k1 / (k2 + da as f64);
            let got = f64::from(i.alpha_for(da, 10_000)) / 128.0;
            assert!(
                (got - want).abs() <= 1.0 / 128.0,
                "da {da}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn after_high_delay_alpha_waits_theta_low_delay_rtts() {
        let mut i = Illinois::new(15, 5);
        i.alpha = i.alpha_for(5000, 10_000);
        let held = i.alpha;
        for _ in 0..4 {
            assert_eq!(i.alpha_for(0, 10_000), held);
        }
        assert_eq!(i.alpha_for(0, 10_000), ALPHA_MAX);
    }

    #[test]
    fn beta_rises_linearly_from_an_eighth_to_a_half() {
        assert_eq!(Illinois::beta_for(500, 10_000), BETA_MIN);
        assert_eq!(Illinois::beta_for(9000, 10_000), BETA_MAX);
        // Linear between d2 = dm/10 and d3 = 0.8 dm.
        let mid = Illinois::beta_for(4500, 10_000);
        let want = 8.0 + (32.0 - 8.0) * (4500.0 - 1000.0) / (8000.0 - 1000.0);
        assert!((f64::from(mid) - want).abs() <= 1.0, "{mid} vs {want}");
    }

    #[test]
    fn avoidance_adds_alpha_packets_per_rtt() {
        let mut i = Illinois::new(15, 5);
        let mut t = state(1000);
        i.on_init(SimTime::ZERO, &mut t);
        i.end_seq = u64::MAX;
        i.alpha = ALPHA_MAX;
        for _ in 0..1000 {
            t.max_packets_out = t.cwnd;
            i.on_cong_avoid(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
        }
        assert!((9..=10).contains(&(t.cwnd - 1000)), "+{}", t.cwnd - 1000);
    }

    #[test]
    fn per_rtt_update_reads_the_delay_of_the_last_rtt() {
        let mut i = Illinois::new(15, 5);
        let mut t = state(100);
        i.on_init(SimTime::ZERO, &mut t);
        for r in [100_000u64, 150_000] {
            i.on_pkts_acked(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    rtt_us: Some(r),
                    pkts_acked: 1,
                    ..Default::default()
                },
            );
        }
        // Average delay 25 ms of a maximum 50 ms.
        t.snd_nxt = 10 * u64::from(MSS);
        i.on_cong_avoid(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                ack_seq: 1,
                acked_sacked: 1,
                ..Default::default()
            },
        );
        let mut j = Illinois::new(15, 5);
        assert_eq!(i.alpha, j.alpha_for(25_000, 50_000));
        assert_eq!(i.beta, Illinois::beta_for(25_000, 50_000));
        assert_eq!(i.end_seq, t.snd_nxt);
        assert_eq!(i.cnt_rtt, 0);
    }

    #[test]
    fn small_windows_and_rto_use_reno_parameters() {
        let mut i = Illinois::new(15, 5);
        let mut t = state(10);
        i.on_init(SimTime::ZERO, &mut t);
        i.on_cong_avoid(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                ack_seq: 1,
                acked_sacked: 1,
                ..Default::default()
            },
        );
        assert_eq!((i.alpha, i.beta), (ALPHA_BASE, BETA_BASE));
        i.beta = BETA_MIN;
        i.on_state(SimTime::ZERO, &mut t, CaState::Loss);
        assert_eq!(i.ssthresh(SimTime::ZERO, &state(100)), 50);
    }

    #[test]
    fn low_delay_loss_removes_an_eighth() {
        let mut i = Illinois::new(15, 5);
        i.beta = BETA_MIN;
        assert_eq!(i.ssthresh(SimTime::ZERO, &state(800)), 700);
    }
}
