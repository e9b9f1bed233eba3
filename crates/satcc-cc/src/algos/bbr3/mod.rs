//! BBRv3 — IETF draft-ietf-ccwg-bbr and Google's published v3 code (github.com/google/bbr,
//! branch v3, `net/ipv4/tcp_bbr.c`, `BBR_VERSION 3`).
//!
//! Model: as BBRv1, pace at gain × bw and cap inflight at gain × bw × min_rtt, but the model
//! also has loss- and ECN-driven bounds. Upper bounds (`bw_hi`, `inflight_hi`) are what
//! probing found to be safe: `bw_hi` is the max delivery rate of the last 2 probe cycles,
//! `inflight_hi` is cut to the inflight at which loss exceeded 2 % (or CE marks 50 %) of a
//! flight, and grown slowly (doubling slope per round) in PROBE_UP. Lower bounds (`bw_lo`,
//! `inflight_lo`) are short-term: when not probing, each round with loss multiplies them by
//! β = 0.7 (not below what the last round delivered), each round with ECN marks by
//! 1 − α/3. Probing for bandwidth happens on a randomized wall-clock schedule (2–3 s) or,
//! for Reno coexistence, after min(63, BDP) rounds — whichever comes first.
//!
//! ```text
//!              |
//!              V
//!     +---> STARTUP  ----+   STARTUP: pacing gain 2.77 (4 ln 2), cwnd gain 2; exits on a bw
//!     |        |         |            plateau (3 rounds < 25 % growth), on loss > 2 % with ≥ 6
//!     |        V         |            loss events in a recovery round, or 2 rounds CE ≥ 50 %
//!     |      DRAIN   ----+   DRAIN:   pacing gain 1/2.885 until inflight ≤ BDP
//!     |        |         |   PROBE_BW: DOWN (0.91) → CRUISE (1.0, cwnd ≤ inflight_hi − 15 %)
//!     |        V         |            → REFILL (1.0, one round) → UP (1.25, cwnd gain 2.25)
//!     +---> PROBE_BW ----+            → DOWN …; UP ends on a plateau, on reaching the last
//!     |      ^    |      |            inflight_hi, or on loss/ECN "too high"
//!     |      +----+      |   PROBE_RTT: when no lower RTT for 5 s: cwnd ½ BDP for
//!     +---- PROBE_RTT <--+            max(200 ms, 1 round), then PROBE_BW (CRUISE) or STARTUP
//! ```
//!
//! Files: `model.rs` congestion signals, ECN α, upper/lower bounds, the reconstructed
//! `tx_in_flight`/`lost` of a rate sample; `startup.rs` full-pipe detection, the loss/ECN
//! exits, DRAIN; `probe_bw.rs` the DOWN/CRUISE/REFILL/UP machine; `probe_rtt.rs` min-RTT
//! filters and PROBE_RTT; `cwnd.rs` BDP, TSO budget, ACK aggregation, cwnd and its bounds.
//! Fixed-point units and helpers come from BBRv1 (`super::bbr::rate`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Fractions are converted to the kernel's 1/256 fixed point by truncation, so the defaults
//! are exactly the kernel's (β cut 76/256, loss 5/256, ECN 128/256, headroom 38/256).
//!
//! **ECN and long paths**: as in Google's code, the ECN response (α, inflight_lo cuts, the
//! STARTUP ECN exit, "too high" on CE) runs only when the flow negotiated ECN (`tcp.ecn_ok`)
//! *and* its min RTT is at most `ecn_max_rtt` (5 ms). On satellite paths (RTT ≥ 25 ms) BBRv3
//! therefore ignores CE marks by default; set `ecn_max_rtt = 0` to enable ECN at any RTT.
//!
//! Kernel constants (not parameters): STARTUP pacing gain 277/100 + 1/256, STARTUP cwnd gain
//! 2, DRAIN gain 1000/2885, cwnd gain 2 (+1/4 in UP), PROBE_BW pacing gains UP 5/4, DOWN
//! 91/100, CRUISE and REFILL 1; full-bw threshold 5/4 over 3 rounds; STARTUP loss exit
//! after ≥ 6 loss events in a round; STARTUP ECN exit after 2 rounds; ECN α gain 1/16,
//! α₀ = 1, ECN factor 1/3, ECN re-probe gain 1/2; probe waits 2 s + U[0, 1 s) and
//! min(63, BDP) − U{0, 1} rounds; PROBE_RTT every 5 s, cwnd ½ BDP, 200 ms; min-RTT window
//! 10 s; cwnd floor 4; ACK aggregation: gain 1, window 5 rounds (1 in STARTUP), 100 ms cap.
//!
//! Reference: Google's v3 code, read in full; every constant and step here follows it. The
//! draft (versions −00…−06 exist) describes the same algorithm but was not checked line by
//! line: where the two differ, this file follows the code.
//!
//! Deviations from Google's v3 code:
//! 1. `rate_sample.tx_in_flight` and `.lost` (v3 additions to `tcp_skb_cb`) are not in
//!    satcc's `AckSample`. bbr3 rebuilds them: at each ACK it records (delivered, lost) and
//!    takes the next ACK's `prior_in_flight` as the inflight of the flight sent in between;
//!    a sample is matched by its `prior_delivered`. Exact when sends happen between ACKs
//!    (as in satcc's senders); segments sent by a timer between ACKs share one record.
//! 2. `skb_marked_lost` (per-lost-segment hook) does not exist: losses are noted when the
//!    ACK carrying them arrives (`losses`), and the per-segment refinement of inflight_hi
//!    (`bbr_inflight_hi_from_lost_skb`) is not done; the per-ACK check in
//!    `bbr_adapt_upper_bounds` (rate sample's lost / tx_in_flight) is.
//! 3. `tcp.ecn_ok` stands for `TCP_ECN_OK && TCP_ECN_LOW` (satcc has no per-route
//!    "shallow-threshold ECN" flag). The receiver-side CE-state tracking of
//!    `CA_EVENT_ECN_IS_CE` (`dctcp_ece_ack_update`) is the receiver's business in satcc.
//! 4. No fast path (`bbr_run_fast_path`): the model is updated on every ACK. Linux skips some
//!    updates on app-limited ACKs without loss/ECN whose bw sample is below the max.
//! 5. No PLB (flow-label rehash), no TLP-recovery event (`CA_EVENT_TLP_RECOVERY`), no
//!    `fast_ack_mode`: satcc's senders have neither.
//! 6. Time is an integer-ns clock; jiffies at `hz`; 128-bit arithmetic, saturating where the
//!    kernel would wrap; delivered counters are u64; the PROBE_BW randomness comes from
//!    satcc's seeded xoshiro stream mapped as `get_random_u32_below` maps a u32.
//! 7. `undo_cwnd` returns the saved cwnd as Linux, but never 0 (a cwnd floor of 1 if no
//!    cwnd was ever saved, which Linux's call order makes impossible).
//!
//! Not implemented: `get_info`, `sndbuf_expand`, `tso_segs` as an op (it only feeds the
//! quantization budget here), PLB, ECN-reprobe for flows without ECN (not in v3 either).

mod cwnd;
mod model;
mod probe_bw;
mod probe_rtt;
mod startup;

use satcc_core::{Hz, Rng, SimTime};

use super::bbr::rate::{self, BBR_UNIT, BW_UNIT};
use super::bbr::{TsoGoal, HZ_DEFAULT};
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{
    AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState, INFINITE_SSTHRESH,
};

pub use self::model::TxHistory;

declare_params! {
    SEED = ParamSpec::int("seed", 0, 0, (1 << 53) - 1)
        .doc("seed of the randomized PROBE_BW probe waits; the sender passes the flow's seed");
    HZ = ParamSpec::number("hz", 1000.0, 1.0, 1_000_000.0).unit("1/s").kernel("CONFIG_HZ")
        .doc("kernel jiffies rate of the min-RTT and PROBE_RTT stamps (rounded)");
    TSO_SEGS_GOAL = ParamSpec::choice("tso_segs_goal", "kernel", &[("kernel", 0), ("one", 1)])
        .doc("kernel: cwnd budgets 3 TSO bursts sized as v3 does (pacing rate + min-RTT allowance); one: 1 segment");
    BETA = ParamSpec::number("beta", 0.7, 0.0, 1.0).kernel("bbr_beta")
        .doc("multiplicative decrease of bw_lo/inflight_lo per lossy round (kernel bbr_beta = 0.3 cut)");
    LOSS_THRESH = ParamSpec::number("loss_thresh", 0.02, 0.0, 0.99).kernel("bbr_loss_thresh")
        .doc("loss rate of a flight that means inflight is too high");
    ECN_THRESH = ParamSpec::number("ecn_thresh", 0.5, 0.0, 1.0).kernel("bbr_ecn_thresh")
        .doc("CE fraction of a sample that means inflight is too high");
    HEADROOM = ParamSpec::number("headroom", 0.15, 0.0, 1.0).kernel("bbr_inflight_headroom")
        .doc("fraction of inflight_hi left free in CRUISE and PROBE_RTT");
    ECN_MAX_RTT = ParamSpec::number("ecn_max_rtt", 5.0, 0.0, 1e6).unit("ms")
        .kernel("bbr_ecn_max_rtt_us").scale(1000.0, 0)
        .doc("ECN is used only if min RTT <= this (whole µs); 0 = at any RTT");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "bbr3",
    summary: "BBRv3 (draft-ietf-ccwg-bbr, Google v3): BBR with loss/ECN bounds inflight_hi/lo, bw_hi/lo, DOWN/CRUISE/REFILL/UP probing, PROBE_RTT at ½ BDP every 5 s",
    source: "draft-ietf-ccwg-bbr; Google github.com/google/bbr branch v3 net/ipv4/tcp_bbr.c",
    params: PARAMS,
    deviations: &[
        "rate_sample.tx_in_flight/lost rebuilt from per-ACK (delivered, lost) records and the next ACK's prior_in_flight",
        "no skb_marked_lost hook: losses noted per ACK; no per-lost-segment inflight_hi refinement (bbr_inflight_hi_from_lost_skb)",
        "tcp.ecn_ok stands for ECN_OK && ECN_LOW; ECN used only if min RTT <= ecn_max_rtt (5 ms default, as Google's code)",
        "no app-limited fast path: model updated on every ACK",
        "no PLB, no TLP-recovery event, no fast_ack_mode",
        "jiffies derived from the ns clock at `hz`; 128-bit saturating arithmetic; u64 delivered counters; seeded RNG for probe waits",
        "undo_cwnd never returns 0",
    ],
    needs_ecn: false,
    build,
};

/// `bbr_startup_pacing_gain = BBR_UNIT·277/100 + 1`: 4 ln 2 ≈ 2.77, a rate that doubles
/// each round while sending what a slow-starting Reno would.
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// `bbr_startup_cwnd_gain`: 2.
pub const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_drain_gain = BBR_UNIT·1000/2885`: drains STARTUP's queue in about a round.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: 2, tolerating delayed and stretched ACKs.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_bw_probe_cwnd_gain = 1` (in units of BBR_UNIT/4): UP adds 0.25 to the cwnd gain.
pub const PROBE_UP_CWND_GAIN_EXTRA: u32 = BBR_UNIT / 4;
/// `bbr_pacing_gain[BBR_BW_PROBE_UP]`: probe for more bandwidth.
pub const PACING_GAIN_UP: u32 = BBR_UNIT * 5 / 4;
/// `bbr_pacing_gain[BBR_BW_PROBE_DOWN]`: drain the queue / yield bandwidth.
pub const PACING_GAIN_DOWN: u32 = BBR_UNIT * 91 / 100;
/// `bbr_pacing_gain[CRUISE]`, `[REFILL]`: pace at the estimate.
pub const PACING_GAIN_CRUISE: u32 = BBR_UNIT;
pub const PACING_GAIN_REFILL: u32 = BBR_UNIT;
/// `bbr_cwnd_min_target`: cwnd floor (two ACK-every-other pairs).
pub const CWND_MIN_TARGET: u32 = 4;
/// `USEC_PER_MSEC`: nominal RTT before the first sample (`bbr_init_pacing_rate_from_rtt`).
const NOMINAL_RTT_US: u64 = 1_000;
/// `bbr->init_cwnd` is a 7-bit field.
const INIT_CWND_MAX: u32 = 0x7F;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Bbr3::new(Bbr3Config::from_params(params)?)))
}

/// A fraction in the kernel's 1/256 fixed point, truncated as `BBR_UNIT * a / b` is.
fn fixed(x: f64) -> u32 {
    (x * f64::from(BBR_UNIT) + 1e-9).floor() as u32
}

/// BBRv3's parameters (gains in 1/256).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bbr3Config {
    pub seed: u64,
    pub hz: Hz,
    pub tso: TsoGoal,
    /// `bbr_beta`: the cut (1 − β), 1/256.
    pub beta_cut: u32,
    /// `bbr_loss_thresh`, 1/256.
    pub loss_thresh: u32,
    /// `bbr_ecn_thresh`, 1/256.
    pub ecn_thresh: u32,
    /// `bbr_inflight_headroom`, 1/256.
    pub headroom: u32,
    /// `bbr_ecn_max_rtt_us`; 0 = ECN at any RTT.
    pub ecn_max_rtt_us: u32,
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Bbr3Config {
            seed: 0,
            hz: Hz::new(HZ_DEFAULT),
            tso: TsoGoal::Kernel,
            beta_cut: BBR_UNIT * 30 / 100,
            loss_thresh: BBR_UNIT * 2 / 100,
            ecn_thresh: BBR_UNIT / 2,
            headroom: BBR_UNIT * 15 / 100,
            ecn_max_rtt_us: 5_000,
        }
    }
}

impl Bbr3Config {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        p.check(PARAMS)?;
        let tso = match param::TSO_SEGS_GOAL.word(p)?.0 {
            "one" => TsoGoal::One,
            _ => TsoGoal::Kernel,
        };
        let d = Bbr3Config::default();
        Ok(Bbr3Config {
            seed: param::SEED.u64(p)?,
            hz: Hz::new(param::HZ.quantise(param::HZ.num(p)?)),
            tso,
            beta_cut: if p.contains("beta") {
                fixed(1.0 - param::BETA.num(p)?)
            } else {
                d.beta_cut
            },
            // loss_thresh < 1: the lost-prefix formula divides by (1 − loss_thresh).
            loss_thresh: fixed(param::LOSS_THRESH.num(p)?),
            ecn_thresh: fixed(param::ECN_THRESH.num(p)?),
            headroom: fixed(param::HEADROOM.num(p)?),
            ecn_max_rtt_us: param::ECN_MAX_RTT.quantise(param::ECN_MAX_RTT.num(p)?) as u32,
        })
    }
}

/// The four PROBE_BW phases (`enum bbr_pacing_gain_phase`), each with its own data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Drain the probe's queue, pacing at 0.91 × bw, until inflight ≤ min(BDP, headroom).
    Down,
    /// Pace at bw with headroom below inflight_hi until it is time to probe.
    Cruise,
    /// One round at bw with the lower bounds lifted, to fill the pipe before probing.
    Refill {
        /// `bw_probe_up_rounds` the UP phase will start from (0, or more for ECN re-probe).
        up_rounds: u32,
    },
    /// Probe at 1.25 × bw, growing inflight_hi with a slope that doubles every round.
    Up {
        /// `bw_probe_up_rounds`: rounds of slope doubling so far (≤ 30).
        up_rounds: u32,
        /// `bw_probe_up_cnt`: packets (S)ACKed per +1 of inflight_hi.
        up_cnt: u32,
        /// `bw_probe_up_acks`: packets (S)ACKed since the last increment.
        up_acks: u32,
    },
}

impl Phase {
    /// Linux's `cycle_idx` numbering: UP 0, DOWN 1, CRUISE 2, REFILL 3.
    pub fn code(&self) -> u8 {
        match self {
            Phase::Up { .. } => 0,
            Phase::Down => 1,
            Phase::Cruise => 2,
            Phase::Refill { .. } => 3,
        }
    }
}

/// BBRv3's state machine (`bbr->mode`), each state with its own data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw {
        phase: Phase,
        /// `cycle_mstamp`: start of the probe wait (DOWN) or of UP.
        cycle_start: SimTime,
        /// `probe_wait_us`: wall-clock wait from `cycle_start` until the next probe.
        probe_wait_us: u64,
    },
    ProbeRtt {
        /// Armed once inflight is at the PROBE_RTT cwnd (`probe_rtt_done_stamp`,
        /// `probe_rtt_round_done`).
        done: Option<ProbeRttDone>,
    },
}

/// The exit condition of PROBE_RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeRttDone {
    pub stamp_jiffies: u64,
    pub round_done: bool,
}

impl Mode {
    /// 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT (Linux's order).
    pub fn code(&self) -> u8 {
        match self {
            Mode::Startup => 0,
            Mode::Drain => 1,
            Mode::ProbeBw { .. } => 2,
            Mode::ProbeRtt { .. } => 3,
        }
    }

    /// The PROBE_BW phase, if in PROBE_BW.
    pub fn phase(&self) -> Option<Phase> {
        match self {
            Mode::ProbeBw { phase, .. } => Some(*phase),
            _ => None,
        }
    }
}

/// How the incoming ACKs relate to bandwidth probing (`enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Not probing; not getting probe feedback.
    Init,
    /// Sending at the estimate to fill the pipe.
    Refilling,
    /// Inflight rising to probe bw.
    ProbeStarting,
    /// Getting feedback from bw probing.
    ProbeFeedback,
    /// Stopped probing; still getting its feedback.
    ProbeStopping,
}

/// Packet-timed rounds (`next_rtt_delivered`, `round_start`) and their count.
#[derive(Clone, Copy, Debug, Default)]
struct Round {
    count: u64,
    next_delivered: u64,
    start: bool,
}

/// A windowed min RTT and its stamp (µs, jiffies); `us` None = no sample (`~0U`).
#[derive(Clone, Copy, Debug)]
struct MinRtt {
    us: Option<u32>,
    stamp_jiffies: u64,
}

impl MinRtt {
    fn us_or_max(&self) -> u32 {
        self.us.unwrap_or(u32::MAX)
    }
}

/// Full-pipe / plateau detection (`full_bw`, `full_bw_cnt`, `full_bw_now`, `full_bw_reached`).
#[derive(Clone, Copy, Debug, Default)]
struct FullBw {
    bw: u32,
    count: u32,
    /// Plateau seen recently (reset at each UP).
    now: bool,
    /// STARTUP has ended (by plateau, loss or ECN) — never reset.
    reached: bool,
}

/// Memory of the last bandwidth probe (`bw_probe_samples`, `prev_probe_too_high`,
/// `stopped_risky_probe`).
#[derive(Clone, Copy, Debug, Default)]
struct ProbeMemory {
    /// The rate samples now reflect bandwidth probing (react to "too high" once per probe).
    samples: bool,
    prev_too_high: bool,
    stopped_risky: bool,
}

/// One connection's BBRv3 state (`struct bbr`, v3).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    cfg: Bbr3Config,
    rng: Rng,
    mode: Mode,
    ack_phase: AckPhase,
    pacing_gain: u32,
    cwnd_gain: u32,
    round: Round,
    /// `rounds_since_probe` (8-bit, saturating).
    rounds_since_probe: u32,
    min_rtt: MinRtt,
    /// `probe_rtt_min_us`/`_stamp`: min RTT of the 5 s PROBE_RTT window.
    probe_rtt_min: MinRtt,
    full_bw: FullBw,
    probe: ProbeMemory,
    model: model::Bounds,
    signals: model::Signals,
    ecn: model::Ecn,
    tx: TxHistory,
    agg: cwnd::AckAggregation,
    /// `prev_ca_state`, `prior_cwnd`.
    prev_ca_state: CaState,
    prior_cwnd: u32,
    /// `init_cwnd`: cwnd at init (≤ 127).
    init_cwnd: u32,
    idle_restart: bool,
    has_seen_rtt: bool,
}

/// What one ACK's processing carries between steps (`struct bbr_context` plus the
/// reconstructed `rate_sample` fields).
#[derive(Clone, Copy, Debug, Default)]
struct Ctx {
    /// `ctx->sample_bw`: this ACK's delivery rate, rounded up.
    sample_bw: u32,
    /// `rs->tx_in_flight`: inflight when the sampled segment was sent (deviation 1).
    tx_in_flight: u32,
    /// `rs->lost`: segments marked lost since the sampled segment was sent (deviation 1).
    lost: u32,
}

impl Bbr3 {
    pub fn new(cfg: Bbr3Config) -> Self {
        Bbr3 {
            cfg,
            rng: Rng::new(cfg.seed),
            mode: Mode::Startup,
            ack_phase: AckPhase::Init,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            round: Round::default(),
            rounds_since_probe: 0,
            min_rtt: MinRtt {
                us: None,
                stamp_jiffies: 0,
            },
            probe_rtt_min: MinRtt {
                us: None,
                stamp_jiffies: 0,
            },
            full_bw: FullBw::default(),
            probe: ProbeMemory::default(),
            model: model::Bounds::default(),
            signals: model::Signals::default(),
            ecn: model::Ecn::default(),
            tx: TxHistory::default(),
            agg: cwnd::AckAggregation::new(SimTime::ZERO),
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            init_cwnd: 10,
            idle_restart: false,
            has_seen_rtt: false,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw.reached
    }

    /// Upper bound on inflight (`inflight_hi`), None before any loss/ECN limit.
    pub fn inflight_hi(&self) -> Option<u32> {
        self.model.inflight_hi
    }

    /// Lower (short-term) bound on inflight (`inflight_lo`), None when unset.
    pub fn inflight_lo(&self) -> Option<u32> {
        self.model.inflight_lo
    }

    /// `bw_lo`, None when unset.
    pub fn bw_lo(&self) -> Option<u32> {
        self.model.bw_lo
    }

    /// ECN α, 1/256.
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn.alpha
    }

    pub fn min_rtt_us(&self) -> Option<u32> {
        self.min_rtt.us
    }

    /// `bbr_max_bw`: max of the two probe-cycle bw_hi slots.
    pub fn max_bw(&self) -> u32 {
        self.model.max_bw()
    }

    /// `bbr_bw`: min(bw_hi, bw_lo).
    pub fn bw(&self) -> u32 {
        self.model.bw()
    }

    /// `get_random_u32_below(n)`: a u32 mapped to [0, n) by multiply-shift.
    fn random_below(&mut self, n: u64) -> u64 {
        ((self.rng.next_u64() >> 32) * n) >> 32
    }

    /// `bbr_bw_to_pacing_rate` (v3: at least 1 byte/s).
    fn pacing_rate_for(tcp: &TcpState, bw: u32, gain: u32) -> u64 {
        rate::rate_bytes_per_sec(tcp.mss, u64::from(bw), gain)
            .max(1)
            .min(tcp.max_pacing_rate_bps)
    }

    /// `bbr_init_pacing_rate_from_rtt`: startup gain × cwnd / srtt (1 ms before a sample).
    fn init_pacing_rate_from_rtt(&mut self, tcp: &mut TcpState) {
        let rtt_us = if tcp.srtt_us > 0 {
            self.has_seen_rtt = true;
            tcp.srtt_us.max(1)
        } else {
            NOMINAL_RTT_US
        };
        let bw = (u64::from(tcp.cwnd) * BW_UNIT / rtt_us).min(u64::from(u32::MAX)) as u32;
        tcp.pacing_rate_bps = Self::pacing_rate_for(tcp, bw, STARTUP_PACING_GAIN);
    }

    /// `bbr_set_pacing_rate`: never slow down before the pipe is full.
    fn set_pacing_rate(&mut self, tcp: &mut TcpState, bw: u32, gain: u32) {
        let rate = Self::pacing_rate_for(tcp, bw, gain);
        if !self.has_seen_rtt && tcp.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(tcp);
        }
        if self.full_bw.reached || rate > tcp.pacing_rate_bps {
            tcp.pacing_rate_bps = rate;
        }
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, tcp: &TcpState) {
        if self.prev_ca_state < CaState::Recovery && !matches!(self.mode, Mode::ProbeRtt { .. }) {
            self.prior_cwnd = tcp.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tcp.cwnd);
        }
    }

    /// `bbr_update_round_start`.
    fn update_round_start(&mut self, tcp: &TcpState, rs: &AckSample) {
        self.round.start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.round.next_delivered {
            self.round.next_delivered = tcp.delivered;
            self.round.count += 1;
            self.round.start = true;
        }
    }

    /// `bbr_calculate_bw_sample`: delivered / interval, rounded up (v3).
    fn bw_sample(rs: &AckSample) -> u32 {
        match rs.delivered {
            Some(d) if rs.interval_us > 0 => {
                let bw = (u128::from(d) * u128::from(BW_UNIT)).div_ceil(u128::from(rs.interval_us));
                bw.min(u128::from(u32::MAX)) as u32
            }
            _ => 0,
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw { phase, .. } => match phase {
                Phase::Up { .. } => (PACING_GAIN_UP, CWND_GAIN + PROBE_UP_CWND_GAIN_EXTRA),
                Phase::Down => (PACING_GAIN_DOWN, CWND_GAIN),
                Phase::Cruise => (PACING_GAIN_CRUISE, CWND_GAIN),
                Phase::Refill { .. } => (PACING_GAIN_REFILL, CWND_GAIN),
            },
            Mode::ProbeRtt { .. } => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, now: SimTime, tcp: &mut TcpState, rs: &AckSample, ctx: &Ctx) {
        self.update_congestion_signals(tcp, rs, ctx);
        self.update_ack_aggregation(tcp, rs);
        self.check_loss_too_high_in_startup(tcp, rs, ctx);
        self.check_full_bw_reached(rs, ctx);
        self.check_drain(now, tcp);
        self.update_cycle_phase(now, tcp, rs, ctx);
        self.update_min_rtt(now, tcp, rs);
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    /// Neither `in_ack_event` nor `pkts_acked`.
    fn has_ack_hooks(&self) -> bool {
        false
    }

    /// `bbr_init`.
    fn on_init(&mut self, now: SimTime, tcp: &mut TcpState) {
        *self = Bbr3::new(self.cfg);
        self.init_cwnd = tcp.cwnd.min(INIT_CWND_MAX);
        self.prior_cwnd = tcp.prior_cwnd;
        tcp.ssthresh = INFINITE_SSTHRESH;
        self.round.next_delivered = tcp.delivered;
        let rtt = tcp
            .min_rtt()
            .map(|d| d.as_micros().min(u64::from(u32::MAX)) as u32);
        let now_j = self.cfg.hz.jiffies(now);
        self.probe_rtt_min = MinRtt {
            us: rtt,
            stamp_jiffies: now_j,
        };
        self.min_rtt = MinRtt {
            us: rtt,
            stamp_jiffies: now_j,
        };
        self.init_pacing_rate_from_rtt(tcp);
        self.agg = cwnd::AckAggregation::new(now);
        // Start sampling loss/ECN rounds after the first full flight is ACKed.
        self.signals.loss_round_delivered = tcp.delivered + 1;
        self.ecn.alpha = model::ECN_ALPHA_INIT;
        self.tx = TxHistory::new(tcp);
        tcp.pacing_needed = true; // SK_PACING_NEEDED
    }

    /// `bbr_ssthresh`: save cwnd and the loss-adapted bounds for undo.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        self.save_cwnd(tcp);
        self.model.save_undo();
        tcp.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn on_cong_control(&mut self, now: SimTime, tcp: &mut TcpState, rs: &AckSample) {
        // bbr_skb_marked_lost runs before bbr_main in Linux (deviation 2).
        if rs.losses > 0 {
            self.note_loss(tcp);
        }
        let (tx_in_flight, lost) = self.tx.on_ack(tcp, rs);
        let mut ctx = Ctx {
            sample_bw: 0,
            tx_in_flight,
            lost,
        };

        self.update_round_start(tcp, rs);
        if self.round.start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha(tcp);
        }
        self.signals.ecn_in_round |= self.ecn.eligible && rs.ece;
        ctx.sample_bw = Self::bw_sample(rs);
        self.update_latest_delivery_signals(tcp, rs, &ctx);

        self.update_model(now, tcp, rs, &ctx);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(tcp, bw, self.pacing_gain);
        self.set_cwnd(tcp, rs.acked_sacked, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(tcp);

        self.advance_latest_delivery_signals(rs, &ctx);
        self.prev_ca_state = tcp.ca_state;
        self.signals.loss_in_cycle |= ctx.lost > 0;
        self.signals.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// `bbr_set_state`.
    fn on_state(&mut self, _now: SimTime, tcp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.model.inflight_lo.is_none() {
                // bbr_adapt_lower_bounds() needs the cwnd from before the RTO.
                self.model.inflight_lo = Some(tcp.cwnd.max(self.prior_cwnd));
            }
        } else if self.prev_ca_state == CaState::Loss {
            // bbr_exit_loss_recovery
            tcp.cwnd = tcp.cwnd.max(self.prior_cwnd).min(tcp.cwnd_clamp);
        }
    }

    /// `bbr_cwnd_event`: restart from idle while app-limited.
    fn on_event(&mut self, now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        if ev != CaEvent::TxStart || tcp.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.agg.restart_epoch(now);
        match self.mode {
            Mode::ProbeBw { .. } => self.set_pacing_rate(tcp, self.bw(), BBR_UNIT),
            Mode::ProbeRtt { .. } => self.check_probe_rtt_done(now, tcp),
            _ => {}
        }
    }

    /// `bbr_undo_cwnd`: a spurious loss; restore the bounds saved by `ssthresh`.
    fn undo_cwnd(&mut self, _now: SimTime, _tcp: &TcpState) -> u32 {
        self.reset_full_bw();
        self.signals.loss_in_round = false;
        self.model.undo();
        self.prior_cwnd.max(1) // deviation 7
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        let opt = |v: Option<u32>| v.map_or(f64::NAN, f64::from);
        vec![
            ("mode", f64::from(self.mode.code())),
            (
                "phase",
                self.mode.phase().map_or(f64::NAN, |p| f64::from(p.code())),
            ),
            (
                "pacing_gain",
                f64::from(self.pacing_gain) / f64::from(BBR_UNIT),
            ),
            ("cwnd_gain", f64::from(self.cwnd_gain) / f64::from(BBR_UNIT)),
            ("bw_pps", rate::bw_pps(self.bw())),
            ("max_bw_pps", rate::bw_pps(self.max_bw())),
            ("bw_lo_pps", self.model.bw_lo.map_or(f64::NAN, rate::bw_pps)),
            ("inflight_hi", opt(self.model.inflight_hi)),
            ("inflight_lo", opt(self.model.inflight_lo)),
            (
                "min_rtt_ms",
                self.min_rtt.us.map_or(f64::NAN, |u| f64::from(u) / 1000.0),
            ),
            ("full_bw_reached", f64::from(u8::from(self.full_bw.reached))),
            ("ecn_alpha", f64::from(self.ecn.alpha) / f64::from(BBR_UNIT)),
            ("round", self.round.count as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use satcc_core::SimDuration;

    use super::*;
    use crate::algos::bbr::{Bbr, BbrConfig};
    use crate::params::ParamValue;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn bw_of_pps(pps: f64) -> u32 {
        (pps * BW_UNIT as f64 / 1e6) as u32
    }

    fn get(st: &[(&'static str, f64)], k: &str) -> f64 {
        st.iter().find(|(n, _)| *n == k).map(|(_, v)| *v).unwrap()
    }

    /// A scripted connection: ACKs arrive every `rtt / acks_per_round`, each delivering its
    /// share of `pps × rtt` with a rate sample spanning one RTT (the steady-state shape).
    struct Script<C: CongestionControl> {
        cc: C,
        tcp: TcpState,
        now: SimTime,
        /// `debug_state` after every ACK.
        trace: Vec<Vec<(&'static str, f64)>>,
    }

    impl<C: CongestionControl> Script<C> {
        fn new(mut cc: C) -> Self {
            let mut tcp = TcpState::new(1448, 10);
            tcp.srtt_us = 100_000;
            tcp.min_rtt_us = 100_000;
            cc.on_init(SimTime::ZERO, &mut tcp);
            Script {
                cc,
                tcp,
                now: SimTime::ZERO,
                trace: Vec::new(),
            }
        }

        /// One round of `acks` ACKs at `pps` over `rtt`; `in_flight` outstanding before each
        /// ACK, `lost` segments marked lost on each of the first `lossy_acks` ACKs, and a CE
        /// fraction `ce` of what each ACK delivers (ECE set if any).
        #[allow(clippy::too_many_arguments)]
        fn round(
            &mut self,
            pps: f64,
            rtt: SimDuration,
            acks: u32,
            in_flight: u32,
            lossy_acks: u32,
            lost: u32,
            ce: f64,
        ) {
            let per_round = (pps * rtt.as_secs_f64()).round() as u64;
            let per_ack = (per_round / u64::from(acks)).max(1);
            for i in 0..acks {
                self.now += SimDuration::from_nanos(rtt.as_nanos() / u64::from(acks));
                self.tcp.now = self.now;
                self.tcp.packets_out = in_flight;
                let prior_in_flight = self.tcp.in_flight();
                self.tcp.delivered += per_ack;
                let ce_pkts = (per_ack as f64 * ce).round() as u64;
                self.tcp.delivered_ce += ce_pkts;
                self.tcp.delivered_mstamp = self.now;
                let losses = if i < lossy_acks { lost } else { 0 };
                self.tcp.lost += u64::from(losses);
                let ack = AckSample {
                    acked_sacked: per_ack as u32,
                    pkts_acked: per_ack as u32,
                    rtt_us: Some(rtt.as_micros()),
                    prior_in_flight,
                    delivered: Some(per_round),
                    delivered_ce: (per_round as f64 * ce).round() as u64,
                    interval_us: rtt.as_micros(),
                    prior_delivered: self.tcp.delivered.saturating_sub(per_round),
                    losses,
                    ece: ce_pkts > 0,
                    ..Default::default()
                };
                self.cc.on_cong_control(self.now, &mut self.tcp, &ack);
                self.trace.push(self.cc.debug_state());
            }
        }
    }

    impl Script<Bbr3> {
        /// One of `acks` ACKs of a round (see [`Script::round`]), without losses.
        fn round_part(&mut self, pps: f64, rtt: SimDuration, acks: u32, in_flight: u32, ce: f64) {
            let per_round = (pps * rtt.as_secs_f64()).round() as u64;
            let per_ack = (per_round / u64::from(acks)).max(1);
            self.now += SimDuration::from_nanos(rtt.as_nanos() / u64::from(acks));
            self.tcp.now = self.now;
            self.tcp.packets_out = in_flight;
            let prior_in_flight = self.tcp.in_flight();
            self.tcp.delivered += per_ack;
            let ce_pkts = (per_ack as f64 * ce).round() as u64;
            self.tcp.delivered_ce += ce_pkts;
            self.tcp.delivered_mstamp = self.now;
            let ack = AckSample {
                acked_sacked: per_ack as u32,
                pkts_acked: per_ack as u32,
                rtt_us: Some(rtt.as_micros()),
                prior_in_flight,
                delivered: Some(per_round),
                delivered_ce: (per_round as f64 * ce).round() as u64,
                interval_us: rtt.as_micros(),
                prior_delivered: self.tcp.delivered.saturating_sub(per_round),
                ece: ce_pkts > 0,
                ..Default::default()
            };
            self.cc.on_cong_control(self.now, &mut self.tcp, &ack);
        }
    }

    fn mode_of(cc: &dyn CongestionControl) -> u8 {
        get(&cc.debug_state(), "mode") as u8
    }

    #[test]
    fn gains_are_the_v3_fixed_point_values() {
        assert_eq!(STARTUP_PACING_GAIN, 710); // 256·277/100 + 1: 2.77 = 4 ln 2
        assert_eq!(STARTUP_CWND_GAIN, 512);
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(
            (
                PACING_GAIN_UP,
                PACING_GAIN_DOWN,
                PACING_GAIN_CRUISE,
                PACING_GAIN_REFILL
            ),
            (320, 232, 256, 256)
        );
        assert_eq!(CWND_GAIN + PROBE_UP_CWND_GAIN_EXTRA, 576); // 2.25 in UP
        let c = Bbr3Config::default();
        assert_eq!(
            (c.beta_cut, c.loss_thresh, c.ecn_thresh, c.headroom),
            (76, 5, 128, 38)
        );
        assert_eq!(Bbr3Config::from_params(&Params::new()).unwrap(), c);
    }

    #[test]
    fn startup_ends_on_a_bw_plateau_then_drains_to_probe_bw_down() {
        let mut s = Script::new(Bbr3::new(Bbr3Config {
            tso: TsoGoal::One,
            ..Bbr3Config::default()
        }));
        for pps in [100.0, 200.0, 400.0, 800.0, 1600.0] {
            s.round(pps, ms(100), 4, 1000, 0, 0, 0.0);
            assert_eq!(s.cc.mode(), Mode::Startup);
        }
        // 1.24× is not significant growth: three such rounds fill the pipe.
        for _ in 0..3 {
            s.round(1600.0 * 1.24, ms(100), 4, 1000, 0, 0, 0.0);
        }
        assert!(s.cc.full_bw_reached());
        assert_eq!(
            s.cc.inflight_hi(),
            None,
            "a plateau exit sets no inflight_hi"
        );
        assert_eq!(s.cc.mode(), Mode::Drain);
        assert_eq!(s.cc.pacing_gain(), DRAIN_GAIN);
        // Still above one BDP (198 + budget): DRAIN goes on.
        s.round(1600.0, ms(100), 4, 600, 0, 0, 0.0);
        assert_eq!(s.cc.mode(), Mode::Drain);
        // At one BDP: PROBE_BW starts in DOWN, whose exit test (inflight ≤ BDP and ≤
        // inflight_hi − headroom) already holds on the same ACK: CRUISE at gain 1.
        s.round(1600.0, ms(100), 1, 100, 0, 0, 0.0);
        assert_eq!(s.cc.mode().phase(), Some(Phase::Cruise));
        assert_eq!(s.cc.pacing_gain(), PACING_GAIN_CRUISE);
        let Mode::ProbeBw {
            cycle_start,
            probe_wait_us,
            ..
        } = s.cc.mode()
        else {
            unreachable!()
        };
        assert_eq!(
            cycle_start, s.now,
            "the probe wait starts at PROBE_BW entry"
        );
        assert!((2_000_000..3_000_000).contains(&probe_wait_us));
    }

    #[test]
    fn startup_exits_on_loss_above_2_percent_of_a_flight_where_bbr_v1_keeps_going() {
        // Bandwidth still growing 30 % per round (no plateau), but in recovery 10 of the 20
        // ACKs of each 1000-packet flight mark losses: 1 % < 2 % keeps STARTUP, 3 % ends it.
        let run = |lost_per_ack: u32| {
            let mut v3 = Script::new(Bbr3::new(Bbr3Config::default()));
            let mut v1 = Script::new(Bbr::new(BbrConfig::default()));
            let mut pps = 1000.0;
            for r in 0..6 {
                let lossy = if r >= 3 { 10 } else { 0 };
                for s in [&mut v3.tcp, &mut v1.tcp] {
                    s.ca_state = if r >= 3 {
                        CaState::Recovery
                    } else {
                        CaState::Open
                    };
                }
                v3.round(pps, ms(100), 20, 1000, lossy, lost_per_ack, 0.0);
                v1.round(pps, ms(100), 20, 1000, lossy, lost_per_ack, 0.0);
                pps *= 1.3;
            }
            (v3, mode_of(&v1.cc))
        };
        let (v3, v1_mode) = run(1);
        assert_eq!(v3.cc.mode(), Mode::Startup, "1 % loss is below loss_thresh");
        assert_eq!(v1_mode, 0);
        let (v3, v1_mode) = run(3);
        assert!(v3.cc.full_bw_reached());
        assert_eq!(v3.cc.mode(), Mode::Drain);
        assert_eq!(v1_mode, 0, "BBRv1 ignores loss in STARTUP");
        // At the exit, inflight_hi = max(BDP + budget, most delivered in a round): the
        // path's BDP (max bw × 100 ms), far below the 1000-packet flight that lost 3 %.
        let at_exit = v3
            .trace
            .iter()
            .find(|st| get(st, "full_bw_reached") > 0.0)
            .unwrap();
        let hi = get(at_exit, "inflight_hi");
        let bdp = get(at_exit, "max_bw_pps") * 0.1;
        assert!((hi - bdp).abs() <= 2.0, "inflight_hi {hi}, BDP {bdp}");
        assert!(hi < 500.0);
    }

    /// A connection in PROBE_BW at 1000 pkt/s, 100 ms (BDP 100), cwnd 300.
    fn in_probe_bw(cfg: Bbr3Config, phase: Phase) -> Script<Bbr3> {
        let mut s = Script::new(Bbr3::new(cfg));
        s.cc.full_bw.reached = true;
        s.cc.model.bw_hi = [bw_of_pps(1000.0), 0];
        s.cc.min_rtt = MinRtt {
            us: Some(100_000),
            stamp_jiffies: 0,
        };
        s.cc.probe_rtt_min = s.cc.min_rtt;
        s.cc.mode = Mode::ProbeBw {
            phase,
            cycle_start: s.now,
            probe_wait_us: 2_500_000,
        };
        s.cc.update_gains();
        s.tcp.cwnd = 300;
        s.tcp.is_cwnd_limited = true;
        s
    }

    #[test]
    fn a_lossy_probe_sets_inflight_hi_to_the_inflight_at_loss_and_cwnd_respects_it() {
        let cfg = Bbr3Config {
            tso: TsoGoal::One,
            ..Bbr3Config::default()
        };
        let mut s = in_probe_bw(
            cfg,
            Phase::Up {
                up_rounds: 0,
                up_cnt: 1,
                up_acks: 0,
            },
        );
        s.cc.probe.samples = true;
        // A clean round at 150 in flight, then 10 lost per 150-packet flight (6.7 % > 2 %).
        s.round(1000.0, ms(100), 10, 150, 0, 0, 0.0);
        assert_eq!(s.cc.inflight_hi(), None);
        s.round(1000.0, ms(100), 10, 150, 1, 10, 0.0);
        assert_eq!(
            s.cc.inflight_hi(),
            Some(150),
            "inflight_hi = the flight that saw the loss"
        );
        assert_eq!(s.cc.mode().phase(), Some(Phase::Down), "too high: UP ends");
        assert!(s.tcp.cwnd <= 150);
        // Loss-free rounds at a smaller flight: DOWN, then CRUISE 15 % below inflight_hi.
        for _ in 0..5 {
            s.round(1000.0, ms(100), 10, 90, 0, 0, 0.0);
            assert!(s.tcp.cwnd <= 150, "cwnd {}", s.tcp.cwnd);
        }
        assert_eq!(s.cc.mode().phase(), Some(Phase::Cruise));
        assert!(
            s.tcp.cwnd <= 150 - 150 * 38 / 256,
            "cruise headroom: cwnd {}",
            s.tcp.cwnd
        );
        assert_eq!(s.cc.inflight_hi(), Some(150));
    }

    #[test]
    fn probe_waits_are_seeded_random_between_2_and_3_s() {
        let draws = |seed: u64| {
            let mut s = in_probe_bw(
                Bbr3Config {
                    seed,
                    ..Bbr3Config::default()
                },
                Phase::Cruise,
            );
            (0..200)
                .map(|_| {
                    s.cc.start_bw_probe_down(s.now, &s.tcp);
                    let Mode::ProbeBw { probe_wait_us, .. } = s.cc.mode() else {
                        unreachable!()
                    };
                    (probe_wait_us, s.cc.rounds_since_probe)
                })
                .collect::<Vec<_>>()
        };
        let a = draws(1);
        assert_eq!(a, draws(1));
        assert_ne!(a, draws(2));
        assert!(a
            .iter()
            .all(|&(w, r)| (2_000_000..3_000_000).contains(&w) && r < 2));
        let mean = a.iter().map(|&(w, _)| w as f64).sum::<f64>() / a.len() as f64;
        assert!((2.4e6..2.6e6).contains(&mean), "mean wait {mean} µs");
    }

    /// A cwnd-limited flow on a 1000 pkt/s, 100 ms path whose every ACK carries a CE
    /// fraction `ce`; returns the lowest (inflight_lo, inflight_hi) seen and the final cwnd.
    fn ecn_run(cfg: Bbr3Config, ecn_ok: bool, ce: f64) -> (Option<u32>, Option<u32>, u32) {
        let mut s = in_probe_bw(cfg, Phase::Cruise);
        s.tcp.ecn_ok = ecn_ok;
        // An ECE puts a Linux sender in CWR (tcp_try_to_open → tcp_enter_cwr); with marks on
        // every ACK it stays there (so no "ECN cleared" re-probe fires).
        if ecn_ok && ce > 0.0 {
            s.tcp.ca_state = CaState::Cwr;
        }
        s.tcp.cwnd = 200;
        let (mut lo, mut hi) = (None, None);
        for _ in 0..400 {
            // One ACK at a time (10 per round), to see the bounds between phase changes.
            let in_flight = s.tcp.cwnd;
            s.round_part(1000.0, ms(100), 10, in_flight, ce);
            lo = model::min_inf(lo, s.cc.inflight_lo());
            hi = model::min_inf(hi, s.cc.inflight_hi());
        }
        (lo, hi, s.tcp.cwnd)
    }

    #[test]
    fn a_constant_60_percent_ce_fraction_cuts_inflight_lo_and_hi_only_for_ecn_flows() {
        let any_rtt = Bbr3Config {
            ecn_max_rtt_us: 0,
            ..Bbr3Config::default()
        };
        let (lo, hi, cwnd) = ecn_run(any_rtt, true, 0.6);
        let (lo, hi) = (lo.expect("inflight_lo cut"), hi.expect("inflight_hi cut"));
        // Marks above ecn_thresh during UP set inflight_hi to the probe's flight (≤ the
        // cwnd cap 2.25 BDP + budget); between probes each marked round cuts inflight_lo
        // from cwnd by 1 − α/3 (α starts at 1: a third).
        assert!(hi <= 230, "inflight_hi {hi}");
        assert!(lo <= 2 * 230 / 3, "inflight_lo {lo}");
        assert!(cwnd <= hi, "cwnd {cwnd} above inflight_hi {hi}");
        // α converges toward the 60 % marked fraction.
        let mut s = in_probe_bw(any_rtt, Phase::Cruise);
        s.tcp.ecn_ok = true;
        s.tcp.ca_state = CaState::Cwr;
        for _ in 0..800 {
            let f = s.tcp.cwnd;
            s.round_part(1000.0, ms(100), 10, f, 0.6);
        }
        let alpha = f64::from(s.cc.ecn_alpha()) / 256.0;
        assert!((0.55..0.65).contains(&alpha), "alpha {alpha}");
        // Without ECN negotiated, or above the 5 ms ECN RTT limit (default), marks are ignored.
        assert_eq!(ecn_run(any_rtt, false, 0.6).0, None);
        assert_eq!(ecn_run(any_rtt, false, 0.6).1, None);
        assert_eq!(ecn_run(Bbr3Config::default(), true, 0.6).0, None);
        // 40 % marks are below ecn_thresh: inflight_hi stays unset.
        assert_eq!(ecn_run(any_rtt, true, 0.4).1, None);
    }

    #[test]
    fn undo_restores_the_bounds_saved_at_the_loss() {
        let mut s = in_probe_bw(Bbr3Config::default(), Phase::Cruise);
        s.cc.model.inflight_hi = Some(120);
        s.cc.model.inflight_lo = Some(110);
        s.cc.ssthresh(s.now, &s.tcp);
        s.cc.model.inflight_hi = Some(80);
        s.cc.model.inflight_lo = Some(70);
        let cwnd = s.cc.undo_cwnd(s.now, &s.tcp);
        assert_eq!(cwnd, 300, "the cwnd saved by ssthresh");
        assert_eq!(
            (s.cc.inflight_hi(), s.cc.inflight_lo()),
            (Some(120), Some(110))
        );
    }

    #[test]
    fn parameters_are_checked_and_converted_as_the_kernel_truncates() {
        assert!(
            Bbr3Config::from_params(&Params::new().with("seed", ParamValue::Num(1.5))).is_err()
        );
        assert!(
            Bbr3Config::from_params(&Params::new().with("betta", ParamValue::Num(0.7))).is_err()
        );
        assert!(
            Bbr3Config::from_params(&Params::new().with("loss_thresh", ParamValue::Num(1.0)))
                .is_err()
        );
        let c = Bbr3Config::from_params(
            &Params::new()
                .with("beta", ParamValue::Num(0.5))
                .with("ecn_max_rtt", ParamValue::Num(0.0)),
        )
        .unwrap();
        assert_eq!((c.beta_cut, c.ecn_max_rtt_us), (128, 0));
    }
}
