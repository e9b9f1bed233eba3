//! CDG (CAIA Delay-Gradient) — Linux `net/ipv4/tcp_cdg.c`.
//!
//! Model: once per RTT, the gradient of the RTT's minimum and maximum (against the
//! previous RTT, summed over a moving window of `window` RTTs) signals a growing queue.
//! With a positive gradient g (µs), CDG backs off with probability 1 − e^(−g·factor/10⁶)
//! (`backoff_factor` = 1000/(G·window) of the paper), multiplying cwnd by `backoff_beta`
//! (0.7071) through a CWR reduction. Growth is Reno's. Heuristics: ineffectual backoffs
//! (the gradient does not turn negative after `use_ineff` backoffs: competing with
//! loss-based flows) stop further backoffs; a "shadow window" remembers the window a Reno
//! flow would have had, so a loss after delay backoffs does not halve a window that was
//! already reduced; optional loss tolerance (`use_tolerance`) ignores losses when the
//! gradients say the queue was not full. Slow start uses CDG's own HyStart variant.
//!
//! ```text
//!  UNKNOWN ──(grad, use_tolerance)──► FULL / NONFULL      (loss: NONFULL keeps cwnd)
//!     ▲                                    │
//!     │ CWR complete                       │ positive gradient, random draw
//!     └──────────────── BACKOFF ◄──────────┘ cwnd ·= backoff_beta
//! ```
//!
//! Source: D. A. Hayes, G. Armitage, "Revisiting TCP congestion control using delay
//! gradients", IFIP Networking 2011, §3 (eqs. 1–6); Linux `tcp_cdg.c` (`tcp_cdg_grad`,
//! `tcp_cdg_backoff`, `tcp_cdg_cong_avoid`, `tcp_cdg_acked`, `tcp_cdg_ssthresh`,
//! `tcp_cdg_hystart_update`, `nexp_u32`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Deviations from Linux:
//! 1. The backoff draws come from a deterministic xoshiro256** stream seeded by `seed`
//!    (the scenario should pass its own seed); Linux uses the kernel RNG.
//! 2. A backoff reduces cwnd to ssthresh at once and holds growth until snd_una passes
//!    the snd_nxt of the backoff, then applies the `COMPLETE_CWR` bookkeeping itself.
//!    Linux calls `tcp_enter_cwr`, and PRR lowers cwnd over that round trip; the CC
//!    interface gives an algorithm no way to start the sender's CWR, and the sender's
//!    `ca_state` stays Open. The window reached is the same; the path to it is a step.
//! 3. CDG's HyStart (run at any window, unlike CUBIC's) sets ssthresh = cwnd; with cwnd = 1
//!    after an RTO Linux would set ssthresh = 1. Here ssthresh is at least 2 segments
//!    (RFC 5681 §3.1).
//!
//! Not implemented: nothing else of `tcp_cdg.c`.

use satcc_core::{Rng, SimTime};

use super::reno::reno_cong_avoid;
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    WINDOW = ParamSpec::int("window", 8, 1, 256).unit("RTTs").kernel("window")
        .doc("gradient moving window (power of two, at most 256)");
    BACKOFF_BETA = ParamSpec::int("backoff_beta", 724, 0, 1024).unit("1/1024")
        .kernel("backoff_beta").doc("backoff multiplier (0.7071)");
    BACKOFF_FACTOR = ParamSpec::int("backoff_factor", 42, 0, u32::MAX as u64).unit("1e6/us")
        .kernel("backoff_factor").doc("backoff probability scale: 1 - exp(-grad*factor/1e6)");
    HYSTART_DETECT = ParamSpec::int("hystart_detect", 3, 0, 3).unit("bits")
        .kernel("hystart_detect").doc("HyStart: 1 ACK train, 2 delay, 3 both, 0 off");
    USE_INEFF = ParamSpec::int("use_ineff", 5, 0, u16::MAX as u64).unit("backoffs")
        .kernel("use_ineff").doc("stop backing off after this many ineffectual backoffs (0 = off)");
    USE_SHADOW = ParamSpec::flag("use_shadow", true).unit("bool").kernel("use_shadow")
        .doc("shadow window: losses after delay backoffs do not halve twice");
    USE_TOLERANCE = ParamSpec::flag("use_tolerance", false).unit("bool")
        .kernel("use_tolerance").doc("ignore losses when the queue was not full");
    SEED = ParamSpec::int("seed", 1, 0, 9_000_000_000_000_000)
        .doc("seed of the backoff random draws (deterministic; pass the scenario seed)");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "cdg",
    summary: "CDG: probabilistic backoff on positive RTT gradients; shadow window and ineffectual-backoff heuristics",
    source: "Hayes & Armitage, IFIP Networking 2011, §3; Linux net/ipv4/tcp_cdg.c",
    params: PARAMS,
    deviations: &[
        "backoff draws from a seeded deterministic stream (Linux: kernel RNG)",
        "a backoff sets cwnd to ssthresh at once instead of the sender's CWR/PRR; growth held for that round",
        "HyStart's ssthresh = cwnd is at least 2 (Linux: 1 possible after an RTO)",
    ],
    needs_ecn: false,
    build,
};

const HYSTART_ACK_TRAIN: u32 = 1;
const HYSTART_DELAY: u32 = 2;
/// Gradients at or below −32 µs show that a backoff was effectual.
const EFFECTUAL_GRAD: i32 = -32;
/// HyStart's ACK train: ACKs closer than 3 ms belong to one train.
const ACK_TRAIN_GAP_US: u32 = 3000;
/// HyStart: minimum one-way delay and delay threshold floor, µs.
const HYSTART_MIN_US: u32 = 125;
/// HyStart delay: samples per round before deciding.
const HYSTART_SAMPLES: u32 = 8;
/// HyStart exits set ssthresh = cwnd, but never below RFC 5681's two segments (dev. 3).
const MIN_SSTHRESH: u32 = 2;
/// Delayed-ACK filter saturates at this count.
const DELACK_MAX: u32 = 5;

/// CDG's module parameters.
#[derive(Clone, Copy, Debug)]
pub struct CdgConfig {
    pub window: u32,
    pub backoff_beta: u32,
    pub backoff_factor: u32,
    pub hystart_detect: u32,
    pub use_ineff: u32,
    pub use_shadow: bool,
    pub use_tolerance: bool,
    pub seed: u64,
}

impl Default for CdgConfig {
    fn default() -> Self {
        CdgConfig::from_params(&Params::new()).expect("the declared defaults are valid")
    }
}

impl CdgConfig {
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.check(PARAMS)?;
        let window = param::WINDOW.u32(params)?;
        if !window.is_power_of_two() {
            return Err(ParamError {
                key: "window".into(),
                expected: "a power of two".into(),
                found: format!("{window}"),
            });
        }
        Ok(CdgConfig {
            window,
            backoff_beta: param::BACKOFF_BETA.u32(params)?,
            backoff_factor: param::BACKOFF_FACTOR.u32(params)?,
            hystart_detect: param::HYSTART_DETECT.u32(params)?,
            use_ineff: param::USE_INEFF.u32(params)?,
            use_shadow: param::USE_SHADOW.bool(params)?,
            use_tolerance: param::USE_TOLERANCE.bool(params)?,
            seed: param::SEED.u64(params)?,
        })
    }
}

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Cdg::new(CdgConfig::from_params(params)?)))
}

/// `nexp_u32`: e^(−ux·10⁻⁶) · U32_MAX, as the kernel approximates it.
pub fn nexp_u32(ux: u32) -> u32 {
    // exp(−x)·65536 − 1 for x = 0, 0.000256·2^k.
    const V: [u32; 17] = [
        65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422, 61378, 57484, 50423, 38795,
        22965, 8047, 987, 14,
    ];
    let mut msb = ux >> 8;
    if msb > u32::from(u16::MAX) {
        return 0;
    }
    // The low eight bits linearly, then e^(x + y + …) = e^x · e^y · … over the set bits.
    let mut res: u32 = u32::MAX - (ux & 0xff) * (u32::MAX / 1_000_000);
    let mut i = 1;
    while msb != 0 {
        let y = if msb & 1 != 0 { V[i] } else { V[0] } + 1;
        res = ((u64::from(res) * u64::from(y)) >> 16) as u32;
        i += 1;
        msb >>= 1;
    }
    res
}

/// `struct cdg_minmax`: this RTT's minimum and maximum RTT sample, µs (0 = none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinMax {
    min: i32,
    max: i32,
}

impl MinMax {
    fn is_empty(&self) -> bool {
        self.min == 0 && self.max == 0
    }
}

/// `enum cdg_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Unknown,
    NonFull,
    Full,
    Backoff,
}

/// `DIV_ROUND_CLOSEST` for signed integers.
fn div_round_closest(x: i32, d: i32) -> i32 {
    if x >= 0 {
        (x + d / 2) / d
    } else {
        (x - d / 2) / d
    }
}

/// CDG's per-connection state (`struct cdg`).
#[derive(Clone, Debug)]
pub struct Cdg {
    cfg: CdgConfig,
    rng: Rng,
    rtt: MinMax,
    rtt_prev: MinMax,
    /// Gradient ring (`window` entries; empty when window = 1).
    gradients: Vec<MinMax>,
    gsum: MinMax,
    gfilled: bool,
    tail: usize,
    state: State,
    delack: u32,
    /// `rtt_seq`: the RTT ends when an ACK passes this (bytes).
    rtt_seq: u64,
    shadow_wnd: u32,
    backoff_cnt: u32,
    sample_cnt: u32,
    delay_min: i32,
    /// HyStart ACK-train clock, µs (u32 as the kernel's `tcp_mstamp`, 0 = unset).
    last_ack: u32,
    round_start: u32,
    /// Dev. 2: growth held until snd_una passes this (the emulated CWR).
    cwr_until: Option<u64>,
}

impl Cdg {
    pub fn new(cfg: CdgConfig) -> Self {
        let window = if cfg.window > 1 {
            cfg.window as usize
        } else {
            0
        };
        Cdg {
            cfg,
            rng: Rng::new(cfg.seed),
            rtt: MinMax::default(),
            rtt_prev: MinMax::default(),
            gradients: vec![MinMax::default(); window],
            gsum: MinMax::default(),
            gfilled: false,
            tail: 0,
            state: State::Unknown,
            delack: 0,
            rtt_seq: 0,
            shadow_wnd: 0,
            backoff_cnt: 0,
            sample_cnt: 0,
            delay_min: 0,
            last_ack: 0,
            round_start: 0,
            cwr_until: None,
        }
    }

    /// Clear all per-connection state (keeping the configuration and the RNG stream).
    fn clear(&mut self) {
        let rng = self.rng.clone();
        *self = Cdg::new(self.cfg);
        self.rng = rng;
    }

    /// `tcp_cdg_hystart_update`.
    fn hystart_update(&mut self, tcp: &mut TcpState, now: SimTime) {
        self.delay_min = match (self.delay_min, self.rtt.min) {
            (0, x) | (x, 0) => x,
            (a, b) => a.min(b),
        };
        if self.delay_min == 0 {
            return;
        }
        if self.cfg.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now_us = now.as_micros() as u32;
            if self.last_ack == 0 || !tcp.is_cwnd_limited() {
                self.last_ack = now_us;
                self.round_start = now_us;
            } else if (now_us.wrapping_sub(self.last_ack.wrapping_add(ACK_TRAIN_GAP_US)) as i32) < 0
            {
                let base_owd = (self.delay_min as u32 / 2).max(HYSTART_MIN_US);
                self.last_ack = now_us;
                if (now_us.wrapping_sub(self.round_start.wrapping_add(base_owd)) as i32) > 0 {
                    tcp.ssthresh = tcp.cwnd.max(MIN_SSTHRESH);
                    return;
                }
            }
        }
        if self.cfg.hystart_detect & HYSTART_DELAY != 0 {
            if self.sample_cnt < HYSTART_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let dm = self.delay_min as u32;
                let thresh = (dm + dm / 8).max(HYSTART_MIN_US) as i32;
                if self.rtt.min > thresh {
                    tcp.ssthresh = tcp.cwnd.max(MIN_SSTHRESH);
                }
            }
        }
    }

    /// `tcp_cdg_grad`: the (window-summed) gradient of the RTT min or max, µs.
    fn grad(&mut self) -> i32 {
        let mut gmin = self.rtt.min.wrapping_sub(self.rtt_prev.min);
        let mut gmax = self.rtt.max.wrapping_sub(self.rtt_prev.max);
        let window = self.cfg.window as i32;
        if !self.gradients.is_empty() {
            let old = self.gradients[self.tail];
            self.gsum.min = self.gsum.min.wrapping_add(gmin.wrapping_sub(old.min));
            self.gsum.max = self.gsum.max.wrapping_add(gmax.wrapping_sub(old.max));
            self.gradients[self.tail] = MinMax {
                min: gmin,
                max: gmax,
            };
            self.tail = (self.tail + 1) & (self.gradients.len() - 1);
            gmin = self.gsum.min;
            gmax = self.gsum.max;
        }
        // Sums, not averages: the paper's (rtt_latest − rtt_oldest)/window without /window.
        let mut grad = if gmin > 0 { gmin } else { gmax };
        // Extrapolate while the window is filling.
        if !self.gfilled {
            if self.gradients.is_empty() && window > 1 {
                grad = grad.wrapping_mul(window);
            } else if self.tail == 0 {
                self.gfilled = true;
            } else {
                grad = grad.wrapping_mul(window) / self.tail as i32;
            }
        }
        if gmin <= EFFECTUAL_GRAD || gmax <= EFFECTUAL_GRAD {
            self.backoff_cnt = 0;
        }
        if self.cfg.use_tolerance {
            // Small variations count as zero.
            let gmin = div_round_closest(gmin, 64);
            let gmax = div_round_closest(gmax, 64);
            if gmin > 0 && gmax <= 0 {
                self.state = State::Full;
            } else if (gmin > 0 && gmax > 0) || gmax < 0 {
                self.state = State::NonFull;
            }
        }
        grad
    }

    /// `tcp_cdg_backoff`: back off with probability 1 − e^(−grad·factor/10⁶).
    fn backoff(&mut self, tcp: &mut TcpState, grad: u32) -> bool {
        let draw = (self.rng.next_u64() >> 32) as u32;
        if draw <= nexp_u32(grad.wrapping_mul(self.cfg.backoff_factor)) {
            return false;
        }
        if self.cfg.use_ineff > 0 {
            self.backoff_cnt += 1;
            if self.backoff_cnt > self.cfg.use_ineff {
                return false;
            }
        }
        self.shadow_wnd = self.shadow_wnd.max(tcp.cwnd);
        self.state = State::Backoff;
        // tcp_enter_cwr, emulated (dev. 2): ssthresh from this algorithm, cwnd to it.
        tcp.prior_cwnd = tcp.cwnd;
        tcp.cwnd_cnt = 0;
        tcp.ssthresh = self.ssthresh_now(tcp);
        tcp.cwnd = tcp.ssthresh;
        self.cwr_until = Some(tcp.snd_nxt);
        true
    }

    /// `CA_EVENT_COMPLETE_CWR` bookkeeping.
    fn complete_cwr(&mut self, tcp: &TcpState) {
        self.state = State::Unknown;
        self.rtt_seq = tcp.snd_nxt;
        self.rtt_prev = self.rtt;
        self.rtt = MinMax::default();
    }

    /// `tcp_cdg_ssthresh`.
    fn ssthresh_now(&mut self, tcp: &TcpState) -> u32 {
        let cwnd = tcp.cwnd;
        if self.state == State::Backoff {
            return (((u64::from(cwnd) * u64::from(self.cfg.backoff_beta.min(1024))) >> 10) as u32)
                .max(2);
        }
        if self.state == State::NonFull && self.cfg.use_tolerance {
            return cwnd;
        }
        self.shadow_wnd = (self.shadow_wnd >> 1).min(cwnd);
        if self.cfg.use_shadow {
            self.shadow_wnd.max(cwnd >> 1).max(2)
        } else {
            (cwnd >> 1).max(2)
        }
    }
}

impl CongestionControl for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    /// `tcp_cdg_init`.
    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.clear();
        self.rtt_seq = tcp.snd_nxt;
        self.shadow_wnd = tcp.cwnd;
    }

    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        self.ssthresh_now(tcp)
    }

    /// A loss ends the emulated CWR (the sender's Recovery/Loss takes over).
    fn on_state(&mut self, _now: SimTime, _tcp: &mut TcpState, new: CaState) {
        if matches!(new, CaState::Recovery | CaState::Loss | CaState::Cwr) {
            self.cwr_until = None;
        }
    }

    /// `tcp_cdg_cwnd_event`.
    fn on_event(&mut self, _now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        match ev {
            CaEvent::CwndRestart => {
                self.clear();
                self.rtt_seq = tcp.snd_nxt;
                self.shadow_wnd = tcp.cwnd;
            }
            CaEvent::CompleteCwr => self.complete_cwr(tcp),
            _ => {}
        }
    }

    /// `tcp_cdg_acked`: RTT min/max of this RTT, with Hayes's delayed-ACK filter.
    fn on_pkts_acked(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        let Some(rtt) = ack.rtt_us.filter(|&r| r > 0) else {
            return;
        };
        let rtt = rtt.min(i32::MAX as u64) as i32;
        if tcp.sacked_out == 0 {
            if ack.pkts_acked == 1 && self.delack > 0 {
                // A delayed ACK counts only if provably below an existing minimum.
                self.rtt.min = self.rtt.min.min(rtt);
                self.delack -= 1;
                return;
            } else if ack.pkts_acked > 1 && self.delack < DELACK_MAX {
                self.delack += 1;
            }
        }
        self.rtt.min = if self.rtt.min == 0 {
            rtt
        } else {
            self.rtt.min.min(rtt)
        };
        self.rtt.max = self.rtt.max.max(rtt);
    }

    /// `tcp_cdg_cong_avoid`.
    fn on_cong_avoid(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if let Some(h) = self.cwr_until {
            if tcp.snd_una <= h {
                return; // in (emulated) CWR Linux does not call cong_avoid
            }
            self.cwr_until = None;
            self.complete_cwr(tcp);
        }
        if tcp.in_slow_start() && self.cfg.hystart_detect != 0 {
            self.hystart_update(tcp, now);
        }
        if ack.ack_seq > self.rtt_seq && !self.rtt.is_empty() {
            let grad = if self.rtt_prev.is_empty() {
                0
            } else {
                self.grad()
            };
            self.rtt_seq = tcp.snd_nxt;
            self.rtt_prev = self.rtt;
            self.rtt = MinMax::default();
            self.last_ack = 0;
            self.sample_cnt = 0;
            if grad > 0 && self.backoff(tcp, grad as u32) {
                return;
            }
        }
        if !tcp.is_cwnd_limited() {
            self.shadow_wnd = self.shadow_wnd.min(tcp.cwnd);
            return;
        }
        let prior = tcp.cwnd;
        reno_cong_avoid(tcp, ack.acked_sacked);
        let incr = tcp.cwnd.saturating_sub(prior);
        self.shadow_wnd = self.shadow_wnd.saturating_add(incr);
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        let state = match self.state {
            State::Unknown => 0.0,
            State::NonFull => 1.0,
            State::Full => 2.0,
            State::Backoff => 3.0,
        };
        vec![
            ("state", state),
            ("shadow_wnd", f64::from(self.shadow_wnd)),
            ("backoff_cnt", f64::from(self.backoff_cnt)),
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

    /// One RTT of `n` one-segment ACKs whose RTT samples go from `lo` to `hi` µs.
    fn round(c: &mut Cdg, t: &mut TcpState, n: u32, lo: u64, hi: u64) {
        t.snd_nxt = t.snd_una + u64::from(n) * u64::from(MSS);
        for i in 0..n {
            t.snd_una += u64::from(MSS);
            let r = lo + (hi - lo) * u64::from(i) / u64::from(n.max(2) - 1);
            let a = AckSample {
                ack_seq: t.snd_una,
                rtt_us: Some(r),
                pkts_acked: 1,
                acked_sacked: 1,
                ..Default::default()
            };
            c.on_pkts_acked(SimTime::ZERO, t, &a);
            t.max_packets_out = t.cwnd;
            c.on_cong_avoid(SimTime::ZERO, t, &a);
        }
    }

    #[test]
    fn nexp_matches_the_exponential() {
        for ux in [
            0u32, 1, 100, 255, 256, 1000, 42_000, 100_000, 1_000_000, 5_000_000, 16_000_000,
        ] {
            let want = (-(f64::from(ux)) * 1e-6).exp() * f64::from(u32::MAX);
            let got = f64::from(nexp_u32(ux));
            assert!(
                (got - want).abs() <= 1e-4 * f64::from(u32::MAX),
                "ux {ux}: {got} vs {want}"
            );
        }
        assert_eq!(nexp_u32(1 << 24), 0);
    }

    #[test]
    fn backoff_probability_is_one_minus_exp_of_gradient_times_factor() {
        let mut c = Cdg::new(CdgConfig {
            use_ineff: 0,
            ..Default::default()
        });
        let mut t = state(100);
        let trials = 20_000;
        let grad = 2000u32; // µs summed over the window
        let mut hits = 0;
        for _ in 0..trials {
            t.cwnd = 100;
            c.state = State::Unknown;
            if c.backoff(&mut t, grad) {
                hits += 1;
            }
        }
        let p = f64::from(hits) / f64::from(trials);
        let want = 1.0 - (-(f64::from(grad) * 42.0) * 1e-6).exp();
        assert!((p - want).abs() < 0.01, "p {p} vs {want}");
    }

    #[test]
    fn a_backoff_multiplies_cwnd_by_beta_and_holds_growth_for_the_round() {
        let mut c = Cdg::new(CdgConfig {
            backoff_factor: 1_000_000,
            ..Default::default()
        });
        let mut t = state(100);
        c.on_init(SimTime::ZERO, &mut t);
        round(&mut c, &mut t, 100, 100_000, 100_000);
        round(&mut c, &mut t, 100, 100_000, 100_000);
        let w = t.cwnd;
        round(&mut c, &mut t, w, 100_000, 100_000);
        // The RTT jumps: the first ACK of the round closes the previous one with a positive
        // gradient and (with this factor, almost surely) backs off.
        let before = t.cwnd;
        t.snd_nxt = t.snd_una + u64::from(before) * u64::from(MSS);
        let end = t.snd_nxt;
        let mut first = true;
        while t.snd_una < end {
            t.snd_una += u64::from(MSS);
            let a = AckSample {
                ack_seq: t.snd_una,
                rtt_us: Some(130_000),
                pkts_acked: 1,
                acked_sacked: 1,
                ..Default::default()
            };
            c.on_pkts_acked(SimTime::ZERO, &mut t, &a);
            t.max_packets_out = t.cwnd;
            c.on_cong_avoid(SimTime::ZERO, &mut t, &a);
            if first {
                assert_eq!(c.state, State::Backoff);
                assert_eq!(t.ssthresh, ((u64::from(before) * 724) >> 10) as u32);
                first = false;
            }
            assert_eq!(t.cwnd, t.ssthresh, "no growth inside the backoff round");
        }
        // The first ACK past the backoff's snd_nxt completes the CWR and growth resumes.
        round(&mut c, &mut t, 1, 130_000, 130_000);
        assert_eq!(c.state, State::Unknown);
    }

    #[test]
    fn falling_rtts_produce_no_backoff_and_reset_the_ineffectual_count() {
        let mut c = Cdg::new(CdgConfig {
            backoff_factor: 1_000_000,
            ..Default::default()
        });
        let mut t = state(50);
        c.on_init(SimTime::ZERO, &mut t);
        c.backoff_cnt = 3;
        round(&mut c, &mut t, 50, 200_000, 200_000);
        for k in 0..5 {
            let r = 190_000 - 10_000 * k;
            let w = t.cwnd;
            round(&mut c, &mut t, w, r, r);
        }
        assert_eq!(c.backoff_cnt, 0);
        assert_ne!(c.state, State::Backoff);
        assert!(t.cwnd > 50);
    }

    #[test]
    fn ineffectual_backoffs_stop_after_use_ineff() {
        let mut c = Cdg::new(CdgConfig {
            backoff_factor: 1_000_000,
            ..Default::default()
        });
        let mut t = state(100);
        let mut n = 0;
        for _ in 0..20 {
            t.cwnd = 100;
            if c.backoff(&mut t, 5000) {
                n += 1;
            }
        }
        assert_eq!(n, 5);
    }

    #[test]
    fn a_loss_after_delay_backoffs_keeps_the_shadow_window() {
        let mut c = Cdg::new(CdgConfig::default());
        let mut t = state(70);
        c.on_init(SimTime::ZERO, &mut t);
        c.shadow_wnd = 200; // the Reno-equivalent window before the delay backoffs
                            // max(shadow/2, cwnd/2) = max(min(100, 70), 35) = 70.
        assert_eq!(c.ssthresh(SimTime::ZERO, &t), 70);
        let mut c = Cdg::new(CdgConfig {
            use_shadow: false,
            ..Default::default()
        });
        c.shadow_wnd = 200;
        assert_eq!(c.ssthresh(SimTime::ZERO, &t), 35);
    }

    #[test]
    fn loss_tolerance_keeps_cwnd_when_the_queue_was_not_full() {
        let mut c = Cdg::new(CdgConfig {
            use_tolerance: true,
            ..Default::default()
        });
        c.state = State::NonFull;
        assert_eq!(c.ssthresh(SimTime::ZERO, &state(80)), 80);
    }

    #[test]
    fn hystart_delay_ends_slow_start_when_the_rtt_rises_an_eighth() {
        let mut c = Cdg::new(CdgConfig {
            hystart_detect: HYSTART_DELAY,
            ..Default::default()
        });
        let mut t = state(10);
        t.ssthresh = crate::INFINITE_SSTHRESH;
        c.on_init(SimTime::ZERO, &mut t);
        c.delay_min = 100_000;
        c.rtt.min = 110_000;
        for _ in 0..=HYSTART_SAMPLES {
            c.hystart_update(&mut t, SimTime::ZERO + SimDuration::from_millis(1));
        }
        assert_eq!(t.ssthresh, crate::INFINITE_SSTHRESH, "12.5 % not exceeded");
        c.rtt.min = 113_000;
        c.hystart_update(&mut t, SimTime::ZERO + SimDuration::from_millis(1));
        assert_eq!(t.ssthresh, t.cwnd);
    }

    #[test]
    fn the_window_gradient_is_extrapolated_until_filled() {
        let mut c = Cdg::new(CdgConfig::default());
        c.rtt_prev = MinMax { min: 100, max: 200 };
        c.rtt = MinMax { min: 110, max: 200 };
        // One of eight slots: +10 µs extrapolated to the window, ·8/1.
        assert_eq!(c.grad(), 80);
    }
}
