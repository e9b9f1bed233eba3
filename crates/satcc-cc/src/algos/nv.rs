//! TCP-NV ("New Vegas") — Linux `net/ipv4/tcp_nv.c`.
//!
//! Model: a Vegas successor for data centres. On every ACK it measures the delivery rate
//! (bytes in flight when the acked segment was sent / smoothed RTT) and keeps the largest
//! rate of the RTT. Once per RTT, with enough samples, it computes the window that rate
//! needs at the minimum RTT ("cwnd by slope") plus `pad` packets of allowed queue: above
//! that, it stops growth, sets ssthresh there and cuts cwnd by 30 % of the excess; below
//! it by `pad_buffer`, it allows growth again (Reno-like, or faster/slower by the growth
//! factor). The minimum RTT is refreshed every `reset_period`. A loss cuts cwnd to 80 %.
//!
//! ```text
//!   cwnd > max_win (and enough samples)        cwnd ≤ max_win − pad_buffer
//!  ┌────────────────────┐ ────────────────────► ┌──────────────────────┐
//!  │ growth allowed     │   ssthresh = max_win   │ growth stopped       │
//!  │ (Reno · 2^factor)  │   cwnd −= 30 % excess  │ (cwnd held)          │
//!  └────────────────────┘ ◄──────────────────── └──────────────────────┘
//!   loss/CWR/RTO: growth stopped until Open again; RTO also lowers the growth factor
//! ```
//!
//! Source: L. Brakmo, "TCP-NV: An Update to TCP-Vegas", 2016 (Netdev 1.2 talk and the
//! `tcp_nv.c` header); Linux `tcp_nv.c` (`tcpnv_acked`, `tcpnv_cong_avoid`,
//! `tcpnv_recalc_ssthresh`, `tcpnv_state`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! The other constants of `tcp_nv.c` (pad buffer 2, 30 % decrease, ssthresh factor 8/8,
//! RTT averaging 1/2, loss decrease 819/1024, growth-rate steps 8/0, evaluation minima
//! 60/20/30 calls, stop after 10 RTTs, decide after 2 RTTs) are `static int`s without a
//! module parameter and are kept fixed.
//!
//! Deviations from Linux:
//! 1. The min-RTT reset period is exactly `reset_period`; Linux draws it uniformly from
//!    [3/4, 5/4)·period with `get_random_bytes` (no RNG reaches an algorithm here; the
//!    mean is kept).
//!
//! Known behaviour (kernel logic, kept): the minimum RTT is refreshed every
//! `reset_period` from the samples of the last period. On a path where the flow's own
//! standing queue never drains, the refresh takes that queue in, max_win rises by about
//! `pad`, and the queue ratchets up by `pad` packets per refresh.
//!
//! Not implemented: `nv_catchup` (declared and cleared in Linux but never set); `get_info`.

use satcc_core::{SimDuration, SimTime};

use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{
    AckSample, CaState, CongestionControl, ParamError, Params, TcpState, INFINITE_SSTHRESH,
};

declare_params! {
    PAD = ParamSpec::int("pad", 10, 0, 1 << 20).unit("packets").kernel("nv_pad")
        .doc("packets allowed queued in the network");
    RESET_PERIOD = ParamSpec::int("reset_period", 5, 1, 1 << 20).unit("s")
        .kernel("nv_reset_period").doc("how often the min RTT is refreshed");
    MIN_CWND = ParamSpec::int("min_cwnd", 2, 1, 1 << 20).unit("packets").kernel("nv_min_cwnd")
        .doc("NV does not cut below this without losses");
    BASE_RTT = ParamSpec::int("base_rtt", 0, 0, u32::MAX as u64).unit("us")
        .kernel("BPF_SOCK_OPS_BASE_RTT")
        .doc("known base RTT bounding the min RTT (0 = none)");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "nv",
    summary: "TCP-NV: keeps cwnd at rate x min RTT + pad packets; cuts 30% of the excess",
    source: "Brakmo, TCP-NV (Netdev 1.2, 2016); Linux net/ipv4/tcp_nv.c",
    params: PARAMS,
    deviations: &["min-RTT reset period fixed at its mean (Linux: random in [3/4, 5/4) of it)"],
    needs_ecn: false,
    build,
};

/// `nv_pad_buffer`: do not grow cwnd if this close to max_win.
const PAD_BUFFER: u32 = 2;
/// `nv_cong_dec_mult`: decrease by 30 % of the excess (·128).
const CONG_DEC_MULT: u32 = 30 * 128 / 100;
/// `nv_ssthresh_factor`: ssthresh = factor·max_win/8.
const SSTHRESH_FACTOR: u32 = 8;
/// `nv_rtt_factor`: RTT average = (factor·new + (256 − factor)·old)/256.
const RTT_FACTOR: u64 = 128;
/// `nv_loss_dec_factor`: on loss, cwnd·819/1024 (80 %).
const LOSS_DEC_FACTOR: u32 = 819;
/// `nv_cwnd_growth_rate_neg`, `nv_cwnd_growth_rate_pos`.
const GROWTH_RATE_NEG: u32 = 8;
const GROWTH_RATE_POS: u32 = 0;
/// `nv_dec_eval_min_calls`, `nv_inc_eval_min_calls`, `nv_ssthresh_eval_min_calls`.
const DEC_EVAL_MIN_CALLS: u32 = 60;
const INC_EVAL_MIN_CALLS: u32 = 20;
const SSTHRESH_EVAL_MIN_CALLS: u32 = 30;
/// `nv_stop_rtt_cnt`, `nv_rtt_min_cnt`.
const STOP_RTT_CNT: u32 = 10;
const RTT_MIN_CNT: u32 = 2;
/// `NV_INIT_RTT`.
const INIT_RTT: u64 = u32::MAX as u64;
/// `NV_MIN_CWND`, `NV_MIN_CWND_GROW`, `NV_TSO_CWND_BOUND`.
const NV_MIN_CWND: u32 = 4;
const NV_MIN_CWND_GROW: u32 = 2;
const NV_TSO_CWND_BOUND: u32 = 80;
/// The rate unit: 100 bit/s from bytes and µs (8 · 10⁶ / 100).
const RATE_SCALE: u64 = 80_000;
/// First min-RTT switch two seconds after init.
const FIRST_RESET: SimDuration = SimDuration::from_secs(2);

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let cfg = NvConfig {
        pad: param::PAD.u32(params)?,
        reset_period_s: param::RESET_PERIOD.u32(params)?,
        min_cwnd: param::MIN_CWND.u32(params)?,
        base_rtt_us: param::BASE_RTT.u32(params)?,
    };
    Ok(Box::new(Nv::new(cfg)))
}

/// NV's module parameters.
#[derive(Clone, Copy, Debug)]
pub struct NvConfig {
    pub pad: u32,
    pub reset_period_s: u32,
    pub min_cwnd: u32,
    pub base_rtt_us: u32,
}

/// NV's per-connection state (`struct tcpnv`), RTTs in µs, rates in 100 bit/s.
#[derive(Clone, Debug)]
pub struct Nv {
    cfg: NvConfig,
    min_rtt_reset_at: SimTime,
    cwnd_growth_factor: i32,
    allow_cwnd_growth: bool,
    reset: bool,
    eval_call_cnt: u32,
    /// Per-connection `nv_min_cwnd` (grows to handle ACK coalescing).
    nv_min_cwnd: u32,
    rtt_cnt: u32,
    last_rtt: u64,
    min_rtt: u64,
    min_rtt_new: u64,
    base_rtt: u64,
    lower_bound_rtt: u64,
    rtt_max_rate: u64,
    rtt_start_seq: u64,
    last_snd_una: u64,
    no_cong_cnt: u32,
    /// `nv_cwnd_growth_rate_neg` / `_pos` (constants, held here).
    growth_rate_neg: u32,
    growth_rate_pos: u32,
}

impl Nv {
    pub fn new(cfg: NvConfig) -> Self {
        let base = u64::from(cfg.base_rtt_us);
        Nv {
            cfg,
            min_rtt_reset_at: SimTime::ZERO + FIRST_RESET,
            cwnd_growth_factor: 0,
            allow_cwnd_growth: true,
            reset: false,
            eval_call_cnt: 0,
            nv_min_cwnd: NV_MIN_CWND,
            rtt_cnt: 0,
            last_rtt: 0,
            min_rtt: INIT_RTT,
            min_rtt_new: INIT_RTT,
            base_rtt: base,
            // 80 % of the base RTT.
            lower_bound_rtt: (base * 205) >> 8,
            rtt_max_rate: 0,
            rtt_start_seq: 0,
            last_snd_una: 0,
            no_cong_cnt: 0,
            growth_rate_neg: GROWTH_RATE_NEG,
            growth_rate_pos: GROWTH_RATE_POS,
        }
    }

    /// `tcpnv_reset`.
    fn nv_reset(&mut self, tcp: &TcpState) {
        self.reset = false;
        self.no_cong_cnt = 0;
        self.rtt_cnt = 0;
        self.last_rtt = 0;
        self.rtt_max_rate = 0;
        self.rtt_start_seq = tcp.snd_una;
        self.eval_call_cnt = 0;
        self.last_snd_una = tcp.snd_una;
    }

    /// `nv_get_bounded_rtt`.
    fn bounded_rtt(&self, v: u64) -> u64 {
        if self.lower_bound_rtt > 0 && v < self.lower_bound_rtt {
            self.lower_bound_rtt
        } else if self.base_rtt > 0 && v > self.base_rtt {
            self.base_rtt
        } else {
            v
        }
    }

    /// The once-per-RTT decision of `tcpnv_acked`.
    fn decide(&mut self, tcp: &mut TcpState, bytes_acked: u64) {
        self.rtt_start_seq = tcp.snd_nxt;
        self.rtt_cnt = (self.rtt_cnt + 1).min(255);
        let mss = u64::from(tcp.mss);
        // Called only once in an RTT: the window is probably too small to measure
        // (coalescing), so raise the per-connection minimum window and wait.
        if self.eval_call_cnt == 1
            && bytes_acked >= u64::from(self.nv_min_cwnd - 1) * mss
            && self.nv_min_cwnd < NV_TSO_CWND_BOUND + 1
        {
            self.nv_min_cwnd = (self.nv_min_cwnd + NV_MIN_CWND_GROW).min(NV_TSO_CWND_BOUND + 1);
            self.rtt_start_seq = tcp.snd_nxt + u64::from(self.nv_min_cwnd) * mss;
            self.eval_call_cnt = 0;
            self.allow_cwnd_growth = true;
            return;
        }
        // Ideal window for the current rate: rate · min RTT.
        let cwnd_by_slope = (self.rtt_max_rate * self.min_rtt) / (RATE_SCALE * mss);
        let max_win = (cwnd_by_slope + u64::from(self.cfg.pad)).min(u64::from(u32::MAX)) as u32;
        if tcp.cwnd > max_win {
            // Congestion; decide only with enough RTTs and samples.
            if self.rtt_cnt < RTT_MIN_CNT {
                return;
            } else if tcp.ssthresh == INFINITE_SSTHRESH {
                if self.eval_call_cnt < SSTHRESH_EVAL_MIN_CALLS {
                    return;
                }
            } else if self.eval_call_cnt < DEC_EVAL_MIN_CALLS {
                if self.allow_cwnd_growth && self.rtt_cnt > STOP_RTT_CNT {
                    self.allow_cwnd_growth = false;
                }
                return;
            }
            self.allow_cwnd_growth = false;
            tcp.ssthresh = (SSTHRESH_FACTOR * max_win) >> 3;
            if tcp.cwnd - max_win > 2 {
                // Exponential decrease: 30 % of the excess.
                let dec = (((tcp.cwnd - max_win) * CONG_DEC_MULT) >> 7).max(2);
                tcp.cwnd -= dec;
            } else {
                tcp.cwnd = max_win;
            }
            if self.cwnd_growth_factor > 0 {
                self.cwnd_growth_factor = 0;
            }
            self.no_cong_cnt = 0;
        } else if tcp.cwnd <= max_win.saturating_sub(PAD_BUFFER) {
            // No congestion: grow if allowed.
            if self.eval_call_cnt < INC_EVAL_MIN_CALLS {
                return;
            }
            self.allow_cwnd_growth = true;
            self.no_cong_cnt += 1;
            // Speed growth up one step after enough uncongested decisions.
            let rate = if self.cwnd_growth_factor < 0 {
                self.growth_rate_neg
            } else {
                self.growth_rate_pos
            };
            if rate > 0 && self.no_cong_cnt > rate {
                self.cwnd_growth_factor += 1;
                self.no_cong_cnt = 0;
            }
        } else {
            // In between: hold.
            return;
        }
        self.eval_call_cnt = 0;
        self.rtt_cnt = 0;
        self.rtt_max_rate = 0;
        if tcp.cwnd < self.cfg.min_cwnd {
            tcp.cwnd = self.cfg.min_cwnd;
        }
    }
}

impl CongestionControl for Nv {
    fn name(&self) -> &'static str {
        "nv"
    }

    /// `tcpnv_init`.
    fn on_init(&mut self, now: SimTime, tcp: &mut TcpState) {
        *self = Nv::new(self.cfg);
        self.nv_reset(tcp);
        self.min_rtt_reset_at = now + FIRST_RESET;
    }

    /// `tcpnv_recalc_ssthresh`: 80 %.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        (((u64::from(tcp.cwnd) * u64::from(LOSS_DEC_FACTOR)) >> 10) as u32).max(2)
    }

    /// `tcpnv_cong_avoid`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if !tcp.is_cwnd_limited() || !self.allow_cwnd_growth {
            return;
        }
        let mut acked = ack.acked_sacked;
        if tcp.in_slow_start() {
            acked = tcp.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let cnt = if self.cwnd_growth_factor < 0 {
            tcp.cwnd
                .checked_shl((-self.cwnd_growth_factor) as u32)
                .unwrap_or(u32::MAX)
        } else {
            (tcp.cwnd >> self.cwnd_growth_factor).max(4)
        };
        tcp.cong_avoid_ai(cnt, acked);
    }

    /// `tcpnv_state`.
    fn on_state(&mut self, _now: SimTime, tcp: &mut TcpState, new: CaState) {
        match new {
            CaState::Open if self.reset => self.nv_reset(tcp),
            CaState::Loss | CaState::Cwr | CaState::Recovery => {
                self.reset = true;
                self.allow_cwnd_growth = false;
                if new == CaState::Loss {
                    // Back to Reno's rate, then slower.
                    if self.cwnd_growth_factor > 0 {
                        self.cwnd_growth_factor = 0;
                    }
                    if self.growth_rate_neg > 0 && self.cwnd_growth_factor > -8 {
                        self.cwnd_growth_factor -= 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// `tcpnv_acked`: rate and RTT bookkeeping, and the per-RTT decision.
    fn on_pkts_acked(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        let Some(rtt_us) = ack.rtt_us else { return };
        if !matches!(tcp.ca_state, CaState::Open | CaState::Disorder) {
            return;
        }
        let bytes_acked = tcp.snd_una - self.last_snd_una;
        self.last_snd_una = tcp.snd_una;
        // `ack_sample.in_flight`: bytes delivered since the sampled segment was sent.
        let in_flight = u64::from(tcp.mss) * tcp.delivered.saturating_sub(ack.prior_delivered);
        if in_flight == 0 {
            return;
        }
        // Moving average of the RTT (1/2 old, 1/2 new).
        let avg = if self.last_rtt > 0 {
            (rtt_us * RTT_FACTOR + self.last_rtt * (256 - RTT_FACTOR)) >> 8
        } else {
            self.min_rtt = rtt_us << 1;
            rtt_us
        };
        self.last_rtt = avg;
        // Rate in 100 bit/s.
        let rate = (in_flight * RATE_SCALE) / avg.max(1);
        self.rtt_max_rate = self.rtt_max_rate.max(rate);
        self.eval_call_cnt = (self.eval_call_cnt + 1).min(255);
        let avg = self.bounded_rtt(avg);
        self.min_rtt = self.min_rtt.min(avg);
        self.min_rtt_new = self.min_rtt_new.min(avg);
        if now >= self.min_rtt_reset_at {
            // Warm reset of the min RTT every reset_period (dev. 1: no random jitter).
            self.min_rtt = self.min_rtt_new;
            self.min_rtt_new = INIT_RTT;
            self.min_rtt_reset_at =
                now + SimDuration::from_secs(u64::from(self.cfg.reset_period_s));
            self.nv_min_cwnd = (self.nv_min_cwnd / 2).max(NV_MIN_CWND);
        }
        if self.rtt_start_seq < tcp.snd_una {
            self.decide(tcp, bytes_acked);
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        let min = if self.min_rtt == INIT_RTT {
            f64::NAN
        } else {
            self.min_rtt as f64
        };
        vec![
            ("min_rtt_us", min),
            ("rtt_max_rate_100bps", self.rtt_max_rate as f64),
            (
                "growth_allowed",
                f64::from(u8::from(self.allow_cwnd_growth)),
            ),
            ("growth_factor", f64::from(self.cwnd_growth_factor)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MSS of the tests' connections (bytes).
    const MSS: u32 = 1448;

    fn nv() -> Nv {
        Nv::new(NvConfig {
            pad: 10,
            reset_period_s: 5,
            min_cwnd: 2,
            base_rtt_us: 0,
        })
    }

    fn state(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = 50;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        t
    }

    #[test]
    fn above_rate_times_min_rtt_plus_pad_cwnd_loses_30_percent_of_the_excess() {
        let mut n = nv();
        let mut t = state(200);
        n.on_init(SimTime::ZERO, &mut t);
        // 100 packets per 100 ms measured at a 100 ms min RTT: slope window 100.
        n.min_rtt = 100_000;
        n.rtt_max_rate = 100 * u64::from(MSS) * RATE_SCALE / 100_000;
        n.rtt_cnt = RTT_MIN_CNT;
        n.eval_call_cnt = DEC_EVAL_MIN_CALLS;
        t.snd_una = u64::from(MSS);
        n.decide(&mut t, 0);
        // max_win = 100 + 10; cwnd 200 − ⌊90 · 38/128⌋ = 174; ssthresh = max_win.
        assert_eq!(t.cwnd, 200 - ((90 * CONG_DEC_MULT) >> 7));
        assert_eq!(t.ssthresh, 110);
        assert!(!n.allow_cwnd_growth);
    }

    #[test]
    fn below_the_pad_buffer_growth_resumes() {
        let mut n = nv();
        let mut t = state(100);
        n.on_init(SimTime::ZERO, &mut t);
        n.allow_cwnd_growth = false;
        n.min_rtt = 100_000;
        n.rtt_max_rate = 100 * u64::from(MSS) * RATE_SCALE / 100_000;
        n.eval_call_cnt = INC_EVAL_MIN_CALLS;
        n.decide(&mut t, 0);
        assert!(n.allow_cwnd_growth);
        assert_eq!(t.cwnd, 100);
    }

    #[test]
    fn the_rtt_is_averaged_half_and_half() {
        let mut n = nv();
        let mut t = state(10);
        n.on_init(SimTime::ZERO, &mut t);
        t.delivered = 10;
        for (r, want) in [
            (100_000u64, 100_000u64),
            (200_000, 150_000),
            (100_000, 125_000),
        ] {
            n.on_pkts_acked(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    rtt_us: Some(r),
                    ..Default::default()
                },
            );
            assert_eq!(n.last_rtt, want);
        }
    }

    #[test]
    fn loss_cuts_to_80_percent_and_an_rto_slows_later_growth() {
        let mut n = nv();
        let mut t = state(100);
        n.on_init(SimTime::ZERO, &mut t);
        assert_eq!(n.ssthresh(SimTime::ZERO, &t), 79);
        n.on_state(SimTime::ZERO, &mut t, CaState::Loss);
        assert_eq!(n.cwnd_growth_factor, -1);
        // Growth factor −1: one packet per 2·cwnd acked.
        n.on_state(SimTime::ZERO, &mut t, CaState::Open);
        n.allow_cwnd_growth = true;
        for _ in 0..200 {
            n.on_cong_avoid(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
        }
        assert_eq!(t.cwnd, 101);
    }
}
