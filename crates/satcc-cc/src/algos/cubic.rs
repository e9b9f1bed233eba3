//! CUBIC — Linux `net/ipv4/tcp_cubic.c` (v2.3, with HyStart), plus the RTT-fair K modes of
//! study 004.
//!
//! Model: after a loss at window W_max, cwnd follows W(t) = C·(t − K)³ + W_max (eq. 1 of
//! study 004; RFC 9438 eq. 1) with K = ∛(W_max·(1 − β)/C) (eq. 2), t counted from the first
//! ACK after the reduction plus one min RTT. Below W_max the curve is concave, above it
//! convex. A Reno emulation (the "TCP-friendly region", RFC 9438 §4.3) keeps CUBIC at least
//! as fast as Reno with α = 3(1 − β)/(1 + β); fast convergence lowers W_max when a flow
//! loses below its previous W_max (eq. 4). Slow start exits early on HyStart's ACK-train or
//! delay-increase signal (Ha & Rhee 2008, "Taming the Elephants").
//!
//! Sources: Ha, Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant", ACM SIGOPS OSR
//! 42(5), 2008; RFC 9438; Linux `tcp_cubic.c` (`bictcp_update`, `cubic_root`,
//! `cubictcp_recalc_ssthresh`, `hystart_update`, `cubictcp_acked`, `cubictcp_cwnd_event`);
//! Kozu, Akiyama, Yamaguchi, "Improving RTT Fairness on CUBIC TCP of Multiple Connections"
//! (study 004, eqs. 5–7) for `k_mode`.
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! K modes (study 004). Every mode scales the kernel's integer K by a factor f ≥ 0 before
//! the epoch uses it: "stock" f = 1; "table" f = x(RTT), linear between the `k_table`
//! points and clamped to the end values outside them; "cbrt_rtt" f = 1/∛(RTT/rtt_unit);
//! "scaled" f = a/∛(RTT/rtt_unit). The TCP-friendly region, fast convergence and HyStart do
//! not depend on K and work unchanged in every mode.
//! - RTT is CUBIC's own minimum RTT (`delay_min`, µs), the same value `bictcp_update` adds
//!   to t. It is the propagation delay the paper's argument needs (W_max ∝ BDP ∝ RTT makes
//!   eq. 6's K equal for all flows); srtt would include the shared queue, which at a
//!   synchronised tail-drop loss adds the same delay to every flow and compresses the RTT
//!   ratio the correction is meant to act on. Before any sample f = 1.
//! - `rtt_unit` = 100 ms: RTT/rtt_unit = 1, i.e. K unchanged, for a 100 ms flow. Linux's
//!   own constants are calibrated at that RTT ("Precompute … based on SRTT of 100ms":
//!   `cube_factor` and `cube_rtt_scale` take C = bic_scale·10/1024, i.e. c = 0.04 per
//!   100 ms RTT), so 100 ms is the RTT at which CUBIC is already "as designed"; the paper
//!   leaves the unit open. Flows shorter than 100 ms get a larger K (slower recovery),
//!   longer ones a smaller K.
//! - `a` = 1.0: eq. 7 with a = 1 is eq. 6, so "scaled" without `a` is the studied fix and
//!   `a` is purely the paper's extra lever (it gives no value; sweep it).
//!
//! Deviations from Linux:
//! 1. Time is an integer-ns clock; jiffies are derived from it at `hz` (Linux: `CONFIG_HZ`,
//!    often 250 or 1000), µs stamps by truncation.
//! 2. `sk_gso_max_size` in HyStart's ACK-train cushion (`hystart_ack_delay`) is taken as
//!    65 536 bytes (`GSO_LEGACY_MAX_SIZE`, the Ethernet/veth default); satcc models no GSO.
//!    The cushion is min(1 ms, 4·65 536 B / pacing rate), i.e. 1 ms below ~2 Gbit/s.
//! 3. HyStart's "is the socket paced" test (`sk_pacing_status == SK_PACING_NONE`) reads
//!    `TcpState::pacing_needed`: a sender that paces CUBIC (fq) must set it.
//! 4. Overflow guards: the cubic term C·|t − K|³ is computed in 128 bits and saturated
//!    (Linux wraps past |t − K| ≈ 347 s); a target below zero (possible only when a
//!    `k_mode` factor > 1 makes C·K³ exceed W_max) is clamped to 0; the Reno-emulation
//!    loop is replaced by the equivalent division and skipped when its step is 0 (Linux
//!    would spin forever with a tiny `beta` at cwnd 1).
//! 5. `cube_factor · ΔW` is computed in 128 bits and saturated to u64 (Linux wraps only for
//!    c < 0.4 and ΔW above ~10⁸ packets).
//!
//! HyStart's rounds follow `hystart_update` as Linux orders them since the 2024 patch that
//! carries "Fixes: 4e1fddc98d25" (backported to the stable kernels; this host's 6.18 has it):
//! the round resets from the first ACK on and the `hystart_low_window` test comes after the
//! reset, so a round begun at cwnd 10 ends when its flight is acknowledged (older kernels test
//! the low window first; docs/drill.md, "HyStart's round order", has the evidence from both
//! engines).
//!
//! Not implemented: `initial_ssthresh` (kernel default 0 = unused); the kernel's BPF/kfunc
//! plumbing. The ECN (`CaEvent::EcnIsCe`) path is the sender's (`tcp_enter_cwr` calls
//! `ssthresh`), as in Linux.

use satcc_core::{Hz, SimTime};

use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::params::ParamValue;
use crate::{AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    BETA = ParamSpec::number("beta", 0.7, 0.01, 0.99).kernel("beta").bpf("CUBIC_BETA")
        .scale(1024.0, 0)
        .doc("window kept on loss; the kernel keeps round(beta*1024)/1024 (Linux 717/1024)");
    C = ParamSpec::number("c", 0.4, 0.005, 1000.0).unit("1/s^3").kernel("bic_scale")
        .bpf("CUBIC_BIC_SCALE").scale(102.4, 1)
        .doc("cubic scaling C; the kernel keeps bic_scale = round(c*102.4) (Linux 41 -> C = 0.4004)");
    FAST_CONVERGENCE = ParamSpec::flag("fast_convergence", true).kernel("fast_convergence")
        .bpf("CUBIC_FAST_CONVERGENCE")
        .doc("lower W_max to cwnd*(1+beta)/2 when a loss comes below the previous W_max");
    TCP_FRIENDLINESS = ParamSpec::flag("tcp_friendliness", true).kernel("tcp_friendliness")
        .bpf("CUBIC_TCP_FRIENDLINESS")
        .doc("Reno emulation: grow at least as fast as Reno with alpha = 3(1-beta)/(1+beta)");
    HYSTART = ParamSpec::flag("hystart", true).kernel("hystart").bpf("CUBIC_HYSTART")
        .doc("hybrid slow start (leave slow start on ACK-train or delay increase)");
    HYSTART_DETECT = ParamSpec::choice("hystart_detect", "both",
            &[("both", 3), ("ack_train", 1), ("delay", 2)])
        .kernel("hystart_detect").bpf("CUBIC_HYSTART_DETECT")
        .doc("HyStart signals (kernel bits: ack_train 1, delay 2, both 3)");
    HYSTART_LOW_WINDOW = ParamSpec::int("hystart_low_window", 16, 0, 1_000_000_000)
        .unit("packets").kernel("hystart_low_window").bpf("CUBIC_HYSTART_LOW_WINDOW")
        .doc("HyStart acts only from this cwnd up");
    HZ = ParamSpec::number("hz", 1000.0, 1.0, 1_000_000.0).unit("1/s").kernel("CONFIG_HZ")
        .bpf("CUBIC_HZ")
        .doc("kernel jiffies rate: resolution of the epoch clock (rounded; BPF default: the host's)");
    K_MODE = ParamSpec::choice("k_mode", "stock",
            &[("stock", 0), ("table", 1), ("cbrt_rtt", 2), ("scaled", 2)])
        .bpf("CUBIC_K_MODE")
        .doc("study 004: stock (eq. 2), table (eq. 5), cbrt_rtt (eq. 6), scaled (eq. 7)");
    K_TABLE = ParamSpec::pairs("k_table").unit("[ms, -]")
        .doc("eq. 5 x(RTT) as [[rtt_ms, factor], ...], linear, clamped at the ends; k_mode = table only");
    RTT_UNIT = ParamSpec::number("rtt_unit", 100.0, 1e-3, 1e6).unit("ms")
        .doc("eqs. 6-7: K / cbrt(min_rtt / rtt_unit); K unchanged at min_rtt = rtt_unit (Linux's 100 ms calibration)");
    A = ParamSpec::number("a", 1.0, 0.0, 1e3)
        .doc("eq. 7 factor: K * a / cbrt(min_rtt / rtt_unit); k_mode = scaled only");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "cubic",
    summary: "Linux CUBIC: cubic window growth around W_max, beta 0.7, Reno-friendly region, HyStart; study-004 K modes",
    source: "Ha, Rhee & Xu, ACM SIGOPS OSR 2008; RFC 9438; Linux net/ipv4/tcp_cubic.c; study 004 eqs. 5-7 (k_mode)",
    params: PARAMS,
    deviations: &[
        "jiffies derived from the ns clock at `hz`",
        "HyStart ACK-train cushion uses sk_gso_max_size = 65536 B",
        "HyStart's paced-socket test reads TcpState::pacing_needed",
        "cubic term and cube_factor*dW saturate instead of wrapping; target clamped at 0; Reno-emulation loop as a division",
    ],
    needs_ecn: false,
    build,
};

/// `BICTCP_BETA_SCALE`: beta and the fast-convergence factor are in 1/1024.
const BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: t and K are in 1/2^10 s.
const BICTCP_HZ: u32 = 10;
/// Default `beta`: 717/1024 ≈ 0.7 (`tcp_cubic.c`: multiplicative decrease).
pub const BETA_DEFAULT: f64 = param::BETA.default_f64();
/// Default C: `bic_scale = 41` → C = 41·10/1024 ≈ 0.4 (RFC 9438 §5.1).
pub const C_DEFAULT: f64 = param::C.default_f64();
/// `HYSTART_ACK_TRAIN`, `HYSTART_DELAY`: the `hystart_detect` bits.
const HYSTART_ACK_TRAIN: u32 = 1;
const HYSTART_DELAY: u32 = 2;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN`/`_MAX`: the delay threshold delay_min/8 is clamped to [4, 16] ms.
const HYSTART_DELAY_MIN_US: u32 = 4_000;
const HYSTART_DELAY_MAX_US: u32 = 16_000;
/// `hystart_ack_delta_us`: ACKs closer than this belong to one train.
const HYSTART_ACK_DELTA_US: u64 = 2_000;
/// `hystart_low_window` default.
pub const HYSTART_LOW_WINDOW_DEFAULT: u32 = param::HYSTART_LOW_WINDOW.default_u32();
/// `GSO_LEGACY_MAX_SIZE` standing for `sk_gso_max_size` (deviation 2).
const GSO_MAX_SIZE_BYTES: u64 = 65_536;
/// `hystart_ack_delay`: the cushion is capped at 1 ms (`USEC_PER_MSEC`).
const HYSTART_ACK_DELAY_CAP_US: u64 = 1_000;
/// `bictcp_update`: before the first loss, cnt is at most 20 (cwnd +5 % per RTT).
const CNT_BEFORE_FIRST_LOSS: u32 = 20;
/// `bictcp_update`: cnt ≥ 2, i.e. at most +1 packet per 2 acked (×1.5 per RTT).
const CNT_MIN: u32 = 2;
/// Default jiffies rate (`CONFIG_HZ=1000`).
pub const HZ_DEFAULT: u64 = param::HZ.default_f64() as u64;
/// Default `rtt_unit` of eqs. 6–7 (see the header).
pub const RTT_UNIT_MS_DEFAULT: f64 = param::RTT_UNIT.default_f64();

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Cubic::new(CubicConfig::from_params(params)?)))
}

/// Which HyStart signals are armed (`hystart_detect` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HystartDetect {
    pub ack_train: bool,
    pub delay: bool,
}

/// How K is derived from the kernel's K (study 004).
#[derive(Clone, Debug, PartialEq)]
pub enum KMode {
    /// Eq. 2, as Linux computes it.
    Stock,
    /// Eq. 5: K·x(RTT), x interpolated in `(rtt_ms, factor)` points sorted by RTT.
    Table(Vec<(f64, f64)>),
    /// Eq. 7 (eq. 6 when `a` = 1): K·a/∛(RTT/rtt_unit).
    CbrtRtt { a: f64, rtt_unit_us: f64 },
}

impl KMode {
    /// The factor applied to K for a flow whose min RTT is `rtt_us` (None: no sample yet).
    pub fn factor(&self, rtt_us: Option<u32>) -> f64 {
        let Some(rtt_us) = rtt_us else { return 1.0 };
        let rtt_us = f64::from(rtt_us);
        match self {
            KMode::Stock => 1.0,
            KMode::Table(points) => interpolate(points, rtt_us / 1000.0),
            KMode::CbrtRtt { a, rtt_unit_us } => a / (rtt_us / rtt_unit_us).cbrt(), // eqs. 6–7
        }
    }
}

/// Linear interpolation in sorted points, clamped to the end values (eq. 5's x(RTT)).
fn interpolate(points: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (points[0], points[points.len() - 1]);
    if x <= first.0 {
        return first.1;
    }
    if x >= last.0 {
        return last.1;
    }
    let i = points.partition_point(|p| p.0 <= x);
    let (p0, p1) = (points[i - 1], points[i]);
    p0.1 + (p1.1 - p0.1) * (x - p0.0) / (p1.0 - p0.0)
}

/// CUBIC's parameters, with the kernel's precomputed scale factors (`cubictcp_register`).
#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    /// β·1024.
    pub beta: u32,
    /// C·102.4 (`bic_scale`).
    pub bic_scale: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: HystartDetect,
    pub hystart_low_window: u32,
    pub hz: Hz,
    pub k_mode: KMode,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig::from_params(&Params::new()).expect("defaults are valid")
    }
}

impl CubicConfig {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        p.check(PARAMS)?;
        let (_, detect_bits) = param::HYSTART_DETECT.word(p)?;
        let detect = HystartDetect {
            ack_train: detect_bits & HYSTART_ACK_TRAIN != 0,
            delay: detect_bits & HYSTART_DELAY != 0,
        };
        let rtt_unit_ms = param::RTT_UNIT.num(p)?;
        let a = param::A.num(p)?;
        let table = param::K_TABLE.points(p)?;
        let k_mode = match param::K_MODE.word(p)?.0 {
            "table" => KMode::Table(check_table(table)?),
            "cbrt_rtt" => KMode::CbrtRtt {
                a: 1.0,
                rtt_unit_us: rtt_unit_ms * 1000.0,
            },
            "scaled" => KMode::CbrtRtt {
                a,
                rtt_unit_us: rtt_unit_ms * 1000.0,
            },
            _ => KMode::Stock,
        };
        Ok(CubicConfig {
            beta: param::BETA.quantise(param::BETA.num(p)?) as u32,
            bic_scale: param::C.quantise(param::C.num(p)?) as u32,
            fast_convergence: param::FAST_CONVERGENCE.bool(p)?,
            tcp_friendliness: param::TCP_FRIENDLINESS.bool(p)?,
            hystart: param::HYSTART.bool(p)?,
            hystart_detect: detect,
            hystart_low_window: param::HYSTART_LOW_WINDOW.u32(p)?,
            hz: Hz::new(param::HZ.quantise(param::HZ.num(p)?)),
            k_mode,
        })
    }

    /// `beta_scale = 8·(1024 + β)/3/(1024 − β)`: Reno-emulation step (RFC 9438 α_cubic, ×8).
    fn beta_scale(&self) -> u32 {
        8 * (BETA_SCALE + self.beta) / 3 / (BETA_SCALE - self.beta)
    }

    /// `cube_rtt_scale = bic_scale·10`: C in 1/1024 s⁻³ (relative to the 100 ms RTT).
    fn cube_rtt_scale(&self) -> u64 {
        u64::from(self.bic_scale) * 10
    }

    /// `cube_factor = 2^(10+3·BICTCP_HZ) / (bic_scale·10)`: ΔW·cube_factor = (K·1024)³.
    fn cube_factor(&self) -> u64 {
        (1u64 << (10 + 3 * BICTCP_HZ)) / (u64::from(self.bic_scale) * 10)
    }

    /// Effective C (1/s³) after quantisation: bic_scale·10/1024.
    pub fn c_effective(&self) -> f64 {
        self.cube_rtt_scale() as f64 / 1024.0
    }
}

fn check_table(table: Option<Vec<(f64, f64)>>) -> Result<Vec<(f64, f64)>, ParamError> {
    let bad = |found: String| {
        ParamError {
        key: "k_table".into(),
        expected: "[[rtt_ms, factor], ...] with rtt_ms increasing and factors >= 0 (required by k_mode = \"table\")".into(),
        found,
    }
    };
    let t = table.ok_or_else(|| bad("nothing".into()))?;
    let finite = t
        .iter()
        .all(|&(x, y)| x.is_finite() && y.is_finite() && y >= 0.0);
    let increasing = t.windows(2).all(|w| w[0].0 < w[1].0);
    if t.is_empty() || !finite || !increasing {
        return Err(bad(format!("{:?}", ParamValue::Points(t))));
    }
    Ok(t)
}

/// `cubic_root`: Linux's table lookup plus one Newton-Raphson step (average error ≈ 0.2 %).
/// The 64 seeds are the kernel's hand-tuned `v[x] ≈ ∛(x·2^18) − 1` (tcp_cubic.c, W. Tarreau).
pub fn cubic_root(a: u64) -> u32 {
    const SEED: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let bits = 64 - a.leading_zeros(); // fls64
    if bits < 7 {
        return (u32::from(SEED[a as usize]) + 35) >> 6;
    }
    let b = ((bits * 84) >> 8) - 1; // ≈ bits/3 − 1
    let x = u64::from(((u32::from(SEED[(a >> (b * 3)) as usize]) + 10) << b) >> 6);
    let x = 2 * x + a / (x * (x - 1)); // x_{k+1} = (2x + a/x²)/3, with x(x−1) for rounding
    ((x * 341) >> 10) as u32 // ÷3 as ×341/1024
}

/// The current cubic epoch (from the first ACK after a reduction to the next reduction).
#[derive(Clone, Debug, PartialEq)]
struct Epoch {
    /// `epoch_start`, jiffies.
    start: u64,
    /// `bic_K`, 1/1024 s (after the `k_mode` factor).
    k: u32,
    /// `bic_origin_point`: W_max of this epoch, or cwnd when above W_max.
    origin: u32,
    /// `ack_cnt`: packets acked since the Reno estimate last grew.
    ack_cnt: u32,
    /// `tcp_cwnd`: the Reno-emulation window (RFC 9438 W_est).
    tcp_cwnd: u32,
}

/// One HyStart round (`round_start` … `curr_rtt`).
#[derive(Clone, Debug, PartialEq)]
struct Round {
    /// µs stamps of the round start and of the last ACK of the current train.
    start_us: u64,
    last_ack_us: u64,
    /// `end_seq`: the round ends when snd_una passes this (bytes).
    end_seq: u64,
    /// Min RTT of this round's first samples, µs.
    curr_rtt: u32,
    sample_cnt: u8,
}

/// HyStart's progress in the current slow start.
#[derive(Clone, Debug, PartialEq)]
enum Hystart {
    Searching(Round),
    /// The exit point was found (`found = 1`); slow start has ended.
    Found,
}

/// Per-connection CUBIC state (`struct bictcp`).
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// `cnt`: acked packets per +1 packet of cwnd.
    cnt: u32,
    /// `last_max_cwnd`: W_max (0 before the first loss).
    last_max_cwnd: u32,
    /// `last_cwnd`, `last_time` (jiffies): throttle of the curve evaluation.
    last: Option<(u32, u64)>,
    /// `delay_min`, µs.
    delay_min: Option<u32>,
    epoch: Option<Epoch>,
    hystart: Hystart,
    /// The cubic curve's target at the last evaluation, packets.
    target: u32,
    /// Whether the Reno estimate W_est is above the cubic target W_cubic(t): RFC 9438 §4.3's
    /// Reno-friendly region (always false with `tcp_friendliness` off).
    reno_governs: bool,
    /// Packets acked in congestion avoidance under the cubic curve and under the Reno
    /// emulation, since the flow began (kept across resets: an observation, not state).
    acked_by_region: [u64; 2],
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        let round = Round {
            start_us: 0,
            last_ack_us: 0,
            end_seq: 0,
            curr_rtt: u32::MAX,
            sample_cnt: 0,
        };
        Cubic {
            cfg,
            cnt: 0,
            last_max_cwnd: 0,
            last: None,
            delay_min: None,
            epoch: None,
            hystart: Hystart::Searching(round),
            target: 0,
            reno_governs: false,
            acked_by_region: [0; 2],
        }
    }

    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }

    /// K of the current epoch in seconds (None between a reduction and the next ACK).
    pub fn k_seconds(&self) -> Option<f64> {
        self.epoch
            .as_ref()
            .map(|e| f64::from(e.k) / f64::from(1u32 << BICTCP_HZ))
    }

    /// W_max (`last_max_cwnd`), packets.
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        let cfg = self.cfg.clone();
        let counted = self.acked_by_region;
        *self = Cubic::new(cfg);
        self.acked_by_region = counted;
    }

    /// `bictcp_hystart_reset`: a new round starts now and ends at snd_nxt.
    fn hystart_reset(&mut self, now: SimTime, tcp: &TcpState) {
        let now_us = now.as_micros();
        self.hystart = Hystart::Searching(Round {
            start_us: now_us,
            last_ack_us: now_us,
            end_seq: tcp.snd_nxt,
            curr_rtt: u32::MAX,
            sample_cnt: 0,
        });
    }

    /// K for a window ΔW = W_max − cwnd below W_max, with the `k_mode` factor.
    fn k_for(&self, dw: u32) -> u32 {
        let x =
            (u128::from(self.cfg.cube_factor()) * u128::from(dw)).min(u128::from(u64::MAX)) as u64;
        let k = cubic_root(x); // eq. 2: K = ∛(ΔW/C), in 1/1024 s
        match self.cfg.k_mode {
            KMode::Stock => k,
            _ => (f64::from(k) * self.cfg.k_mode.factor(self.delay_min))
                .round()
                .min(f64::from(u32::MAX)) as u32,
        }
    }

    /// `bictcp_update`: recompute `cnt` for cwnd after `acked` more packets.
    fn update(&mut self, now: SimTime, cwnd: u32, acked: u32) {
        let hz = self.cfg.hz;
        let now_j = hz.jiffies(now);
        if let Some(e) = self.epoch.as_mut() {
            e.ack_cnt = e.ack_cnt.saturating_add(acked);
        }
        if let Some((last_cwnd, last_time)) = self.last {
            if last_cwnd == cwnd && now_j.saturating_sub(last_time) <= hz.get() / 32 {
                return;
            }
        }
        // The curve is evaluated at most once per jiffy; a reduction (epoch = None) forces it.
        let same_jiffy = self.epoch.is_some() && self.last.map(|l| l.1) == Some(now_j);
        if !same_jiffy {
            self.last = Some((cwnd, now_j));
            if self.epoch.is_none() {
                let (k, origin) = if self.last_max_cwnd <= cwnd {
                    (0, cwnd)
                } else {
                    (self.k_for(self.last_max_cwnd - cwnd), self.last_max_cwnd)
                };
                self.epoch = Some(Epoch {
                    start: now_j,
                    k,
                    origin,
                    ack_cnt: acked,
                    tcp_cwnd: cwnd,
                });
            }
            let e = self.epoch.as_ref().expect("epoch just set");
            // t = now − epoch_start + delay_min, in 1/1024 s: the target is one RTT ahead.
            let t_j = now_j - e.start + hz.usecs_to_jiffies(u64::from(self.delay_min.unwrap_or(0)));
            let t = (t_j << BICTCP_HZ) / hz.get();
            let k = u64::from(e.k);
            let offs = u128::from(t.abs_diff(k));
            // Eq. 1: C·(t − K)³, C = cube_rtt_scale/1024, (t−K) in 1/1024 s.
            let delta = (u128::from(self.cfg.cube_rtt_scale()) * offs * offs * offs)
                >> (10 + 3 * BICTCP_HZ);
            let delta = delta.min(u128::from(u32::MAX)) as u32;
            let target = if t < k {
                e.origin.saturating_sub(delta)
            } else {
                e.origin.saturating_add(delta)
            };
            self.target = target;
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                cwnd.saturating_mul(100)
            };
            if self.last_max_cwnd == 0 && self.cnt > CNT_BEFORE_FIRST_LOSS {
                self.cnt = CNT_BEFORE_FIRST_LOSS;
            }
        }
        if self.cfg.tcp_friendliness {
            // RFC 9438 §4.3: W_est grows 1 per cwnd·8/beta_scale acked (α = 3(1−β)/(1+β)).
            let step = (u64::from(cwnd) * u64::from(self.cfg.beta_scale())) >> 3;
            let e = self
                .epoch
                .as_mut()
                .expect("an epoch exists past the curve update");
            if step > 0 && u64::from(e.ack_cnt) > step {
                let n = (u64::from(e.ack_cnt) - 1) / step; // `while (ack_cnt > delta)` in one step
                e.ack_cnt -= (n * step) as u32;
                e.tcp_cwnd = e.tcp_cwnd.saturating_add(n.min(u64::from(u32::MAX)) as u32);
            }
            self.reno_governs = e.tcp_cwnd > self.target;
            if e.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (e.tcp_cwnd - cwnd); // Reno is ahead: grow at least as fast
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        self.cnt = self.cnt.max(CNT_MIN);
    }

    /// `hystart_ack_delay`: TSO/GRO cushion, min(1 ms, 4·gso_max_size/pacing rate).
    fn hystart_ack_delay(tcp: &TcpState) -> u64 {
        if tcp.pacing_rate_bps == 0 {
            return 0;
        }
        HYSTART_ACK_DELAY_CAP_US.min(GSO_MAX_SIZE_BYTES * 4 * 1_000_000 / tcp.pacing_rate_bps)
    }

    /// `hystart_update` with this ACK's RTT sample `delay` (µs).
    fn hystart_update(&mut self, now: SimTime, tcp: &mut TcpState, delay: u32) {
        let Hystart::Searching(round) = &self.hystart else {
            return;
        };
        if tcp.snd_una > round.end_seq {
            self.hystart_reset(now, tcp);
        }
        // HyStart triggers when cwnd is larger than some threshold (rounds still start
        // below it: a round begun at cwnd 10 ends when its flight is acknowledged).
        if tcp.cwnd < self.cfg.hystart_low_window {
            return;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        let detect = self.cfg.hystart_detect;
        let Hystart::Searching(round) = &mut self.hystart else {
            return;
        };
        let mut found = false;
        if detect.ack_train {
            let now_us = now.as_micros();
            if now_us.saturating_sub(round.last_ack_us) <= HYSTART_ACK_DELTA_US {
                round.last_ack_us = now_us;
                let mut threshold = u64::from(delay_min) + Self::hystart_ack_delay(tcp);
                // Unpaced: the train ends past delay_min/2; pacing may stretch it to RTT.
                if !tcp.pacing_needed {
                    threshold >>= 1;
                }
                found |= now_us.saturating_sub(round.start_us) > threshold;
            }
        }
        if detect.delay {
            round.curr_rtt = round.curr_rtt.min(delay);
            if round.sample_cnt < HYSTART_MIN_SAMPLES {
                round.sample_cnt += 1;
            } else {
                let thresh = (delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                found |= round.curr_rtt > delay_min.saturating_add(thresh);
            }
        }
        if found {
            self.hystart = Hystart::Found;
            tcp.ssthresh = tcp.cwnd; // leave slow start here
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// No `min_tso_segs`.
    fn has_min_tso_segs(&self) -> bool {
        false
    }

    /// `cubictcp_init`.
    fn on_init(&mut self, now: SimTime, tcp: &mut TcpState) {
        self.reset();
        if self.cfg.hystart {
            self.hystart_reset(now, tcp);
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, set W_max (eq. 4 fast convergence),
    /// keep β of the window.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        self.epoch = None;
        let cwnd = u64::from(tcp.cwnd);
        let beta = u64::from(self.cfg.beta);
        let scale = u64::from(BETA_SCALE);
        self.last_max_cwnd = if tcp.cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            (cwnd * (scale + beta) / (2 * scale)) as u32 // eq. 4: W_max = cwnd·(1 + β)/2
        } else {
            tcp.cwnd
        };
        ((cwnd * beta / scale) as u32).max(2) // RFC 9438 eq. 4: ssthresh = β·cwnd
    }

    /// `cubictcp_cong_avoid`.
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
        self.update(now, tcp.cwnd, acked);
        self.acked_by_region[usize::from(self.reno_governs)] += u64::from(acked);
        tcp.cong_avoid_ai(self.cnt, acked);
    }

    /// `cubictcp_state`: an RTO forgets everything, HyStart included.
    fn on_state(&mut self, now: SimTime, tcp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.reset();
            self.hystart_reset(now, tcp);
        }
    }

    /// `cubictcp_cwnd_event`: after an idle period, shift the epoch by its length so the
    /// curve resumes where it stopped.
    fn on_event(&mut self, now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        let hz = self.cfg.hz;
        let now_j = hz.jiffies(now);
        let idle = now_j.saturating_sub(hz.jiffies(tcp.lsndtime));
        if let Some(e) = self.epoch.as_mut() {
            if idle > 0 {
                e.start = (e.start + idle).min(now_j);
            }
        }
    }

    /// `cubictcp_acked`: track delay_min and run HyStart.
    fn on_pkts_acked(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        let Some(rtt_us) = ack.rtt_us else { return };
        // Discard delay samples right after a reduction (the first second of an epoch).
        if let Some(e) = &self.epoch {
            if self.cfg.hz.jiffies(now).saturating_sub(e.start) < self.cfg.hz.get() {
                return;
            }
        }
        let delay = rtt_us.clamp(1, u64::from(u32::MAX)) as u32;
        // First sample, or the link delay decreased.
        if !matches!(self.delay_min, Some(d) if d <= delay) {
            self.delay_min = Some(delay);
        }
        // The round is tracked from the first ACK on; the low-window test is inside
        // hystart_update, after the round reset, as Linux orders them.
        if self.cfg.hystart && self.hystart != Hystart::Found && tcp.in_slow_start() {
            self.hystart_update(now, tcp, delay);
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![
            ("w_max", f64::from(self.last_max_cwnd)),
            ("cnt", f64::from(self.cnt)),
            ("acked_cubic", self.acked_by_region[0] as f64),
            ("acked_reno", self.acked_by_region[1] as f64),
            (
                "delay_min_ms",
                self.delay_min.map_or(f64::NAN, |d| f64::from(d) / 1000.0),
            ),
            (
                "hystart_found",
                if self.hystart == Hystart::Found {
                    1.0
                } else {
                    0.0
                },
            ),
        ];
        if let Some(e) = &self.epoch {
            v.push(("k_s", f64::from(e.k) / f64::from(1u32 << BICTCP_HZ)));
            v.push(("origin", f64::from(e.origin)));
            v.push(("reno_cwnd", f64::from(e.tcp_cwnd)));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use satcc_core::SimDuration;

    use crate::INFINITE_SSTHRESH;

    use super::*;

    fn cubic(p: Params) -> Cubic {
        Cubic::new(CubicConfig::from_params(&p).unwrap())
    }

    fn num(x: f64) -> ParamValue {
        ParamValue::Num(x)
    }

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn at_ms(x: u64) -> SimTime {
        SimTime::from_nanos(x * 1_000_000)
    }

    /// A connection in congestion avoidance at `cwnd`, cwnd-limited, with delay_min known.
    fn in_avoidance(cc: &mut Cubic, cwnd: u32, rtt: SimDuration) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.ssthresh = cwnd;
        t.is_cwnd_limited = true;
        cc.on_init(SimTime::ZERO, &mut t);
        let ack = AckSample {
            rtt_us: Some(rtt.as_micros()),
            ..Default::default()
        };
        cc.on_pkts_acked(SimTime::ZERO, &mut t, &ack);
        t
    }

    /// Feed ACKs at one per (rtt/cwnd), i.e. cwnd acks per RTT, for `dur`; return the time.
    fn run_acks(
        cc: &mut Cubic,
        t: &mut TcpState,
        from: SimTime,
        dur: SimDuration,
        rtt: SimDuration,
    ) -> SimTime {
        let mut now = from;
        let end = from + dur;
        let ack = AckSample {
            acked_sacked: 1,
            pkts_acked: 1,
            rtt_us: Some(rtt.as_micros()),
            ..Default::default()
        };
        while now < end {
            cc.on_pkts_acked(now, t, &ack);
            cc.on_cong_avoid(now, t, &ack);
            now += rtt.div_u64(u64::from(t.cwnd));
        }
        now
    }

    #[test]
    fn defaults_quantise_to_the_kernel_constants() {
        let cfg = CubicConfig::default();
        assert_eq!(cfg.beta, 717);
        assert_eq!(cfg.bic_scale, 41);
        assert_eq!(cfg.beta_scale(), 15);
        assert_eq!(cfg.cube_rtt_scale(), 410);
        assert_eq!(cfg.cube_factor(), (1u64 << 40) / 410);
        assert!(cfg.hystart && cfg.fast_convergence && cfg.tcp_friendliness);
        assert_eq!(cfg.k_mode, KMode::Stock);
    }

    #[test]
    fn unknown_or_ill_typed_parameters_are_rejected() {
        assert!(CubicConfig::from_params(&Params::new().with("betta", num(0.7))).is_err());
        assert!(CubicConfig::from_params(
            &Params::new().with("hystart_detect", ParamValue::Str("rtt".into()))
        )
        .is_err());
        let e = CubicConfig::from_params(
            &Params::new().with("k_mode", ParamValue::Str("table".into())),
        )
        .unwrap_err();
        assert_eq!(e.key, "k_table");
        let unsorted = ParamValue::Points(vec![(50.0, 1.0), (10.0, 2.0)]);
        let p = Params::new()
            .with("k_mode", ParamValue::Str("table".into()))
            .with("k_table", unsorted);
        assert!(CubicConfig::from_params(&p).is_err());
    }

    #[test]
    fn loss_keeps_717_of_1024_of_cwnd_and_sets_w_max_to_cwnd() {
        let mut cc = cubic(Params::new());
        let mut t = in_avoidance(&mut cc, 1000, ms(100));
        assert_eq!(cc.ssthresh(SimTime::ZERO, &t), 1000 * 717 / 1024);
        assert_eq!(cc.w_max(), 1000);
        // A second loss below W_max: fast convergence releases bandwidth (eq. 4).
        t.cwnd = 900;
        assert_eq!(cc.ssthresh(SimTime::ZERO, &t), 900 * 717 / 1024);
        assert_eq!(cc.w_max(), 900 * (1024 + 717) / 2048);
        t.cwnd = 2;
        assert_eq!(cc.ssthresh(SimTime::ZERO, &t), 2, "never below 2");
    }

    #[test]
    fn without_fast_convergence_w_max_is_the_loss_window() {
        let mut cc = cubic(Params::new().with("fast_convergence", ParamValue::Bool(false)));
        let mut t = in_avoidance(&mut cc, 1000, ms(100));
        cc.ssthresh(SimTime::ZERO, &t);
        t.cwnd = 900;
        cc.ssthresh(SimTime::ZERO, &t);
        assert_eq!(cc.w_max(), 900);
    }

    #[test]
    fn kernel_cube_root_is_within_0_2_percent_for_every_argument_cubic_can_pass() {
        // bictcp_update passes cube_factor·ΔW with ΔW ≥ 1 packet; the kernel quotes an
        // average error of ≈0.195 %. Sweep 1000 points per power of two up to 2^63.
        let lowest = CubicConfig::default().cube_factor();
        let mut worst: f64 = 0.0;
        for shift in 31..63 {
            for m in 0..1000u64 {
                let a = (1u64 << shift) + m * ((1u64 << shift) / 1000);
                if a < lowest {
                    continue;
                }
                let exact = (a as f64).cbrt();
                worst = worst.max((f64::from(cubic_root(a)) - exact).abs() / exact);
            }
        }
        assert!(worst < 0.002, "worst relative error {worst}");
        // Small arguments (never used by CUBIC) are still within one of the exact root.
        for a in 0..(1u64 << 16) {
            assert!(
                (f64::from(cubic_root(a)) - (a as f64).cbrt()).abs() < 1.0,
                "a = {a}"
            );
        }
    }

    #[test]
    fn k_matches_the_cube_root_of_w_max_times_one_minus_beta_over_c() {
        for w_max in [100u32, 1000, 10_000, 100_000] {
            let mut cc = cubic(Params::new());
            let mut t = in_avoidance(&mut cc, w_max, ms(100));
            t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
            t.ssthresh = t.cwnd;
            cc.on_cong_avoid(
                at_ms(1),
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
            let k = cc.k_seconds().unwrap();
            // The kernel path: K = cubic_root(cube_factor·ΔW) / 1024 s.
            let dw = w_max - w_max * 717 / 1024;
            let kernel = f64::from(cubic_root(cc.cfg.cube_factor() * u64::from(dw))) / 1024.0;
            assert_eq!(k, kernel);
            // Eq. 2 with the effective C = 0.4004.
            let exact = (f64::from(dw) / cc.cfg.c_effective()).cbrt();
            assert!(
                (k - exact).abs() / exact < 0.005,
                "W_max {w_max}: K {k} vs {exact}"
            );
        }
    }

    #[test]
    fn cwnd_follows_the_cubic_curve_after_a_loss() {
        let rtt = ms(100);
        let w_max = 1000u32;
        let mut cc = cubic(Params::new());
        let mut t = in_avoidance(&mut cc, w_max, rtt);
        t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
        t.ssthresh = t.cwnd;
        let c = cc.cfg.c_effective();
        let mut now = at_ms(10);
        let epoch_start = now;
        let mut k = None;
        for _ in 0..40 {
            now = run_acks(&mut cc, &mut t, now, ms(500), rtt);
            let k = *k.get_or_insert_with(|| cc.k_seconds().unwrap());
            let ts = (now.saturating_since(epoch_start)).as_secs_f64();
            let w = c * (ts - k).powi(3) + f64::from(w_max); // eq. 1
                                                             // cwnd trails the curve by at most the growth of one RTT (cnt is set for t + RTT).
            let slope = 3.0 * c * (ts - k).powi(2);
            let tol = slope * rtt.as_secs_f64() + 0.02 * w;
            assert!(
                (f64::from(t.cwnd) - w).abs() <= tol,
                "t {ts:.1} s: cwnd {} vs W(t) {w:.0} (tol {tol:.1})",
                t.cwnd
            );
        }
        assert!(
            t.cwnd > w_max + 300,
            "convex region reached: cwnd {}",
            t.cwnd
        );
    }

    fn state(cc: &Cubic, name: &str) -> f64 {
        cc.debug_state()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("{name} in debug_state"))
    }

    #[test]
    fn the_region_counts_say_which_rule_grew_the_window() {
        // RTT 2 ms, W_max 20: Reno's estimate runs ahead of the cubic curve for the whole
        // 500 ms (previous test), so nearly every acked packet counts as Reno's; with the
        // emulation off, none does. At RTT 200 ms and W_max 2000 the curve leads (Reno's
        // estimate, starting at the reduced cwnd, is ahead only in the epoch's first RTTs).
        let run = |friendly: bool, w_max: u32, rtt: SimDuration, span: SimDuration| {
            let mut cc = cubic(Params::new().with("tcp_friendliness", ParamValue::Bool(friendly)));
            let mut t = in_avoidance(&mut cc, w_max, rtt);
            t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
            t.ssthresh = t.cwnd;
            run_acks(&mut cc, &mut t, at_ms(1), span, rtt);
            (state(&cc, "acked_cubic"), state(&cc, "acked_reno"))
        };
        let (cubic_n, reno_n) = run(true, 20, ms(2), ms(500));
        assert!(
            reno_n > 0.9 * (cubic_n + reno_n),
            "{cubic_n} cubic, {reno_n} reno"
        );
        let (cubic_n, reno_n) = run(false, 20, ms(2), ms(500));
        assert!(
            reno_n == 0.0 && cubic_n > 0.0,
            "{cubic_n} cubic, {reno_n} reno"
        );
        let (cubic_n, reno_n) = run(true, 2000, ms(200), ms(5000));
        assert!(
            cubic_n > 0.8 * (cubic_n + reno_n),
            "{cubic_n} cubic, {reno_n} reno"
        );
    }

    #[test]
    fn reno_emulation_takes_over_at_small_rtt_and_window() {
        // RTT 2 ms, W_max 20: K ≈ 2.5 s, during which Reno (α ≈ 0.53/RTT) gains ~650 packets.
        let rtt = ms(2);
        let run = |friendly: bool| {
            let mut cc = cubic(Params::new().with("tcp_friendliness", ParamValue::Bool(friendly)));
            let mut t = in_avoidance(&mut cc, 20, rtt);
            t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
            t.ssthresh = t.cwnd;
            run_acks(&mut cc, &mut t, at_ms(1), ms(500), rtt);
            (t.cwnd, cc)
        };
        let (friendly, cc) = run(true);
        let (pure, _) = run(false);
        let c = cc.cfg.c_effective();
        let k = cc.k_seconds().unwrap();
        let cubic_w = c * (0.5 - k).powi(3) + 20.0;
        assert!(
            f64::from(pure) < cubic_w + 5.0,
            "pure cubic {pure} vs W(t) {cubic_w:.1}"
        );
        // RFC 9438 eq. 4 / study 004 eq. 3: W_est = β·W_max + 3(1−β)/(1+β)·t/RTT.
        let beta = 717.0 / 1024.0;
        let w_est = 14.0 + 3.0 * (1.0 - beta) / (1.0 + beta) * 0.5 / rtt.as_secs_f64();
        assert!(f64::from(friendly) > cubic_w + 50.0);
        assert!(
            (f64::from(friendly) - w_est).abs() / w_est < 0.15,
            "friendly cwnd {friendly} vs W_est {w_est:.0}"
        );
    }

    #[test]
    fn reno_emulation_works_in_every_k_mode() {
        let rtt = ms(2);
        let table = ParamValue::Points(vec![(1.0, 0.5), (100.0, 2.0)]);
        for mode in ["stock", "table", "cbrt_rtt", "scaled"] {
            let p = Params::new()
                .with("k_mode", ParamValue::Str(mode.into()))
                .with("k_table", table.clone())
                .with("a", num(3.0));
            let mut cc = cubic(p);
            let mut t = in_avoidance(&mut cc, 20, rtt);
            t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
            t.ssthresh = t.cwnd;
            run_acks(&mut cc, &mut t, at_ms(1), ms(500), rtt);
            assert!(t.cwnd > 100, "{mode}: cwnd {}", t.cwnd);
        }
    }

    #[test]
    fn each_k_mode_scales_the_kernel_k_as_its_equation_says() {
        let k_of = |p: Params, rtt_ms: u64| {
            let mut cc = cubic(p);
            let mut t = in_avoidance(&mut cc, 5000, ms(rtt_ms));
            t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
            t.ssthresh = t.cwnd;
            cc.on_cong_avoid(
                at_ms(1),
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
            cc.k_seconds().unwrap()
        };
        let mode = |m: &str| Params::new().with("k_mode", ParamValue::Str(m.into()));
        let stock = k_of(mode("stock"), 20);
        let unit = 1.0 / 1024.0;
        // Eq. 6 leaves K unchanged at RTT = rtt_unit and halves it at 8·rtt_unit.
        assert!((k_of(mode("cbrt_rtt"), 100) - stock).abs() <= unit);
        assert!((k_of(mode("cbrt_rtt"), 800) - stock / 2.0).abs() <= unit);
        let at_20 = k_of(mode("cbrt_rtt"), 20);
        assert!(
            (at_20 - stock / 0.2f64.cbrt()).abs() <= unit,
            "{at_20} vs {}",
            stock / 0.2f64.cbrt()
        );
        // rtt_unit moves the neutral point.
        assert!((k_of(mode("cbrt_rtt").with("rtt_unit", num(20.0)), 20) - stock).abs() <= unit);
        // Eq. 7: a multiplies eq. 6.
        let scaled = k_of(mode("scaled").with("a", num(1.5)), 800);
        assert!((scaled - 1.5 * stock / 2.0).abs() <= unit);
        assert!(
            (k_of(mode("scaled"), 800) - stock / 2.0).abs() <= unit,
            "a defaults to 1"
        );
        // Eq. 5: interpolated table, clamped at the ends.
        let table = ParamValue::Points(vec![(10.0, 1.0), (50.0, 0.5), (200.0, 0.25)]);
        let tab = |rtt| k_of(mode("table").with("k_table", table.clone()), rtt);
        assert!((tab(30) - 0.75 * stock).abs() <= unit);
        assert!((tab(5) - stock).abs() <= unit);
        assert!((tab(400) - 0.25 * stock).abs() <= unit);
    }

    #[test]
    fn rto_forgets_w_max_and_delay_min() {
        let mut cc = cubic(Params::new());
        let mut t = in_avoidance(&mut cc, 100, ms(50));
        cc.ssthresh(SimTime::ZERO, &t);
        assert_eq!(cc.w_max(), 100);
        cc.on_state(SimTime::ZERO, &mut t, CaState::Loss);
        assert_eq!(cc.w_max(), 0);
        assert_eq!(cc.delay_min, None);
    }

    #[test]
    fn idle_time_shifts_the_epoch_so_the_curve_does_not_jump() {
        let rtt = ms(100);
        let mut cc = cubic(Params::new());
        let mut t = in_avoidance(&mut cc, 1000, rtt);
        t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
        t.ssthresh = t.cwnd;
        let now = run_acks(&mut cc, &mut t, at_ms(1), ms(2000), rtt);
        let start = cc.epoch.as_ref().unwrap().start;
        // 5 s of silence, then the first transmission.
        t.lsndtime = now;
        let resume = now + SimDuration::from_secs(5);
        cc.on_event(resume, &mut t, CaEvent::TxStart);
        let shifted = cc.epoch.as_ref().unwrap().start;
        assert_eq!(
            shifted - start,
            Hz::KERNEL.jiffies(resume) - Hz::KERNEL.jiffies(now)
        );
        // Without TX_START the same silence would have moved t past K.
        let mut idle_cc = cc.clone();
        idle_cc.epoch.as_mut().unwrap().start = start;
        let before = t.cwnd;
        let mut t2 = t.clone();
        run_acks(&mut cc, &mut t, resume, ms(100), rtt);
        run_acks(&mut idle_cc, &mut t2, resume, ms(100), rtt);
        assert!(
            t.cwnd - before < t2.cwnd - before,
            "shifted {} vs unshifted {}",
            t.cwnd,
            t2.cwnd
        );
    }

    /// Slow start from cwnd 10, one ACK per segment, each ACK answered by what cwnd allows:
    /// the first flight's RTT is 20 ms, every later one 30 ms (the delay threshold is
    /// clamp(20 ms / 8, 4, 16) = 4 ms). Returns ssthresh once HyStart has left slow start.
    fn hystart_exit_with_a_queue_from_the_second_flight(p: Params) -> u32 {
        let mss = 1448u64;
        let mut cc = cubic(p);
        let mut t = TcpState::new(1448, 10);
        t.is_cwnd_limited = true;
        cc.on_init(SimTime::ZERO, &mut t);
        t.snd_nxt = 10 * mss;
        for seg in 1..=200u64 {
            let now = SimTime::from_nanos(seg * 100_000);
            t.snd_una = seg * mss;
            let rtt = if seg <= 10 { ms(20) } else { ms(30) };
            let ack = AckSample {
                acked_sacked: 1,
                pkts_acked: 1,
                rtt_us: Some(rtt.as_micros()),
                ..Default::default()
            };
            cc.on_pkts_acked(now, &mut t, &ack);
            cc.on_cong_avoid(now, &mut t, &ack);
            if !t.in_slow_start() {
                return t.ssthresh;
            }
            t.snd_nxt = t.snd_una + u64::from(t.cwnd) * mss;
        }
        INFINITE_SSTHRESH
    }

    #[test]
    fn hystart_rounds_start_at_the_first_ack_below_the_low_window() {
        // Linux `hystart_update`: the round begun at the first ACK (cwnd 10) ends when the
        // first flight is acknowledged; the next starts at cwnd 20 with the second flight's
        // ACKs, all 30 ms, and its 9th sample leaves slow start at cwnd 20 + 8. A round begun
        // only at cwnd 16 would mix 20 ms samples of the first flight into the second's and
        // find the rise one round later, at 40 (drill: hystart-delay-20ms-exits, kernel 28).
        let delay = Params::new().with("hystart_detect", ParamValue::Str("delay".into()));
        assert_eq!(hystart_exit_with_a_queue_from_the_second_flight(delay), 28);
        let both = Params::new();
        assert_eq!(hystart_exit_with_a_queue_from_the_second_flight(both), 28);
    }

    #[test]
    fn undo_restores_the_window_before_the_reduction() {
        let mut cc = cubic(Params::new());
        let mut t = in_avoidance(&mut cc, 100, ms(50));
        t.prior_cwnd = 100;
        t.cwnd = cc.ssthresh(SimTime::ZERO, &t);
        assert_eq!(cc.undo_cwnd(SimTime::ZERO, &t), 100);
    }
}
