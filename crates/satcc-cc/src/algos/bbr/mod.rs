//! BBR (v1) — Linux `net/ipv4/tcp_bbr.c`.
//!
//! Model: on every ACK, update a model of the path — bottleneck bandwidth = windowed max of
//! delivery-rate samples over 10 packet-timed rounds, min RTT = windowed min over 10 s —
//! then pace at pacing_gain × bw (1 % below) and cap inflight at cwnd_gain × bw × min_rtt
//! plus a quantization budget and an ACK-aggregation allowance. Losses do not steer the
//! model, except through packet conservation in the first round of recovery and the
//! long-term ("policer") bandwidth estimate.
//!
//! ```text
//!              |
//!              V
//!     +---> STARTUP  ----+      STARTUP: pacing and cwnd gain 2/ln2 until bw grows < 25 %
//!     |        |         |               for 3 rounds (full pipe)
//!     |        V         |      DRAIN:   pacing gain ln2/2 until inflight ≤ BDP
//!     |      DRAIN   ----+      PROBE_BW: 8-phase gain cycle 5/4, 3/4, 1 ×6, cwnd gain 2,
//!     |        |         |               random start phase (never 3/4)
//!     |        V         |      PROBE_RTT: after 10 s without a new min RTT: cwnd 4 for
//!     +---> PROBE_BW ----+               max(200 ms, 1 round), then PROBE_BW (or STARTUP
//!     |      ^    |      |               if the pipe was never filled)
//!     |      +----+      |
//!     +---- PROBE_RTT <--+
//! ```
//!
//! Sources: Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00;
//! Linux `tcp_bbr.c` (file layout: `startup.rs` full-pipe detection and DRAIN, `probe_bw.rs`
//! gain cycling, `probe_rtt.rs` min-RTT filter and PROBE_RTT, `lt_bw.rs` policer detection,
//! `cwnd.rs` cwnd, recovery and ACK aggregation, `rate.rs` fixed point, `filter.rs` minmax).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Kernel constants (all `static const` in `tcp_bbr.c`, not parameters): high gain
//! 2885/1000 + 1/256 (739/256), drain gain 1000/2885 (88/256), cwnd gain 2, gain cycle
//! [5/4, 3/4, 1, 1, 1, 1, 1, 1], cycle randomisation over 7 phases, bw window 10 rounds,
//! min-RTT window 10 s, PROBE_RTT 200 ms, cwnd floor 4, full-bw threshold 5/4 over 3 rounds,
//! long-term sampling: ≥ 4 rounds per interval (reset beyond 16), loss ratio ≥ 50/256,
//! consistent bw within 1/8 or 4 kbit/s, policed bw used for 48 rounds; ACK aggregation:
//! gain 1, 5-round window halves, 100 ms cap, epoch reset at 2^20 packets.
//!
//! TSO: the simulator's sender builds paced GSO packets as Linux (`tcp_tso_autosize`, with
//! this algorithm's `min_tso_segs`). With `tso_segs_goal = "kernel"` (default) BBR
//! budgets 3 × `bbr_tso_segs_goal` packets of cwnd as Linux does (min(pacing_rate >> 10,
//! 65 536 − 1 − 320 bytes) / mss, at least 1 below 1.2 Mbit/s and 2 above, at most 127):
//! the cwnd then equals the real kernel's at the same rate, which is what the emulator
//! compares against. With "one" the goal is 1 segment at every rate (cwnd = BDP·gain + 3,
//! rounded up to even), the budget of a stack that truly sends one segment at a time.
//!
//! Deviations from Linux:
//! 1. Time is an integer-ns clock; jiffies (min-RTT stamp, PROBE_RTT end) are derived at
//!    `hz`, µs stamps by truncation.
//! 2. `MAX_TCP_HEADER` is taken as 320 bytes (x86-64: L1_CACHE_ALIGN(128 + MAX_HEADER));
//!    `sk_pacing_shift` as 10 (the default); `GSO_LEGACY_MAX_SIZE` 65 536.
//! 3. Arithmetic that the kernel does in u32/u64 is done in 128 bits and saturated where
//!    the kernel would wrap or truncate (rates above ~3 Tbit/s, `extra_acked` above 65 535
//!    packets): identical results in every realistic range.
//! 4. The PROBE_BW start phase uses satcc's seeded xoshiro stream in place of
//!    `prandom_u32`, mapped to [0, 7) as `prandom_u32_max` maps a u32.
//! 5. Delivered counters are u64 without wrap (`before()`/`after()` become comparisons).
//!
//! Not implemented: BBRv2/v3 (`tcp_bbr2.c`, not in mainline), `get_info`/`sndbuf_expand`
//! (no socket layer). `min_tso_segs` is the op (the sender's GSO packets) and feeds the goal.

pub(crate) mod cwnd;
pub mod filter;
mod lt_bw;
mod probe_bw;
mod probe_rtt;
pub mod rate;
mod startup;

use satcc_core::{Hz, Rng, SimTime};

use self::filter::MaxFilter;
use self::rate::{bw_to_pacing_rate, BBR_UNIT, BW_UNIT};
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{
    AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState, INFINITE_SSTHRESH,
};

declare_params! {
    SEED = ParamSpec::int("seed", 0, 0, (1 << 53) - 1)
        .doc("seed of the PROBE_BW random start phase; the sender passes the flow's seed");
    HZ = ParamSpec::number("hz", 1000.0, 1.0, 1_000_000.0).unit("1/s").kernel("CONFIG_HZ")
        .doc("kernel jiffies rate of the min-RTT and PROBE_RTT stamps (rounded)");
    TSO_SEGS_GOAL = ParamSpec::choice("tso_segs_goal", "kernel", &[("kernel", 0), ("one", 1)])
        .doc("kernel: cwnd budgets 3 TSO bursts sized from the pacing rate as Linux; one: 1 segment");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "bbr",
    summary: "Linux BBR v1: model-based pacing at max-filtered delivery rate, cwnd 2 BDP, PROBE_BW gain cycle, PROBE_RTT",
    source: "Cardwell et al., ACM Queue 14(5) 2016; Linux net/ipv4/tcp_bbr.c, lib/win_minmax.c",
    params: PARAMS,
    deviations: &[
        "jiffies derived from the ns clock at `hz`",
        "MAX_TCP_HEADER = 320 B, sk_pacing_shift = 10, GSO_LEGACY_MAX_SIZE = 65536",
        "128-bit arithmetic, saturating where Linux would wrap (beyond ~3 Tbit/s)",
        "PROBE_BW start phase from satcc's seeded RNG instead of prandom_u32",
        "delivered counters are u64 without wrap",
    ],
    needs_ecn: false,
    build,
};

/// `bbr_high_gain = BBR_UNIT·2885/1000 + 1`: 2/ln2, the smallest gain that doubles the
/// sending rate each round (STARTUP pacing and cwnd gain, DRAIN cwnd gain).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain = BBR_UNIT·1000/2885`: drains STARTUP's queue in about one round.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: PROBE_BW cwnd = 2 BDP, tolerating delayed and stretched ACKs.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `CYCLE_LEN`: phases of the PROBE_BW gain cycle.
pub const CYCLE_LEN: usize = 8;
/// `bbr_pacing_gain`: probe (5/4), drain (3/4), then cruise at 1 for six phases.
pub const PACING_GAIN: [u32; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand`: the start phase is drawn from the last 7 (never the 3/4 phase).
const CYCLE_RAND: u64 = 7;
/// `bbr_bw_rtts = CYCLE_LEN + 2`: bandwidth filter window, rounds.
const BW_RTTS: u32 = CYCLE_LEN as u32 + 2;
/// `bbr_cwnd_min_target`: cwnd floor and the PROBE_RTT cwnd (two ACK-every-other pairs).
pub const CWND_MIN_TARGET: u32 = 4;
/// `TCP_INIT_CWND`: cwnd cap before any RTT sample, and STARTUP's "delivered < IW" clause.
const TCP_INIT_CWND: u32 = 10;
/// `USEC_PER_MSEC`: nominal RTT before the first sample (`bbr_init_pacing_rate_from_rtt`).
const NOMINAL_RTT_US: u64 = 1_000;
/// Default jiffies rate (`CONFIG_HZ=1000`).
pub const HZ_DEFAULT: u64 = param::HZ.default_f64() as u64;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Bbr::new(BbrConfig::from_params(params)?)))
}

/// How the TSO burst goal of the quantization budget is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TsoGoal {
    /// `bbr_tso_segs_goal` from the pacing rate, as Linux.
    Kernel,
    /// One segment at every rate.
    One,
}

/// BBR's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BbrConfig {
    pub seed: u64,
    pub hz: Hz,
    pub tso: TsoGoal,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            seed: 0,
            hz: Hz::new(HZ_DEFAULT),
            tso: TsoGoal::Kernel,
        }
    }
}

impl BbrConfig {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        p.check(PARAMS)?;
        let tso = match param::TSO_SEGS_GOAL.word(p)?.0 {
            "one" => TsoGoal::One,
            _ => TsoGoal::Kernel,
        };
        Ok(BbrConfig {
            seed: param::SEED.u64(p)?,
            hz: Hz::new(param::HZ.quantise(param::HZ.num(p)?)),
            tso,
        })
    }
}

/// BBR's state machine (`bbr->mode`), each state with its own data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up at high gain until the pipe is full.
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Steady state: cycle the pacing gain.
    ProbeBw {
        /// `cycle_idx`: index into [`PACING_GAIN`].
        cycle_idx: usize,
        /// `cycle_mstamp`: when this phase started (`delivered_mstamp`).
        cycle_mstamp: SimTime,
    },
    /// Cut inflight to 4 packets to measure the propagation RTT.
    ProbeRtt {
        /// Set once inflight reached 4: when PROBE_RTT may end (jiffies,
        /// `probe_rtt_done_stamp`) and whether a round has passed since (`probe_rtt_round_done`).
        done: Option<ProbeRttDone>,
    },
}

/// The exit condition of PROBE_RTT, armed once inflight is at the floor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeRttDone {
    pub stamp_jiffies: u64,
    pub round_done: bool,
}

impl Mode {
    /// A small integer for traces: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT (Linux's order).
    pub fn code(&self) -> u8 {
        match self {
            Mode::Startup => 0,
            Mode::Drain => 1,
            Mode::ProbeBw { .. } => 2,
            Mode::ProbeRtt { .. } => 3,
        }
    }
}

/// Packet-timed round counting (`rtt_cnt`, `next_rtt_delivered`, `round_start`).
#[derive(Clone, Copy, Debug, Default)]
struct Round {
    count: u32,
    next_delivered: u64,
    start: bool,
}

/// The windowed min RTT (`min_rtt_us`, `min_rtt_stamp`).
#[derive(Clone, Copy, Debug)]
struct MinRtt {
    us: Option<u32>,
    stamp_jiffies: u64,
}

/// Full-pipe detection in STARTUP (`full_bw`, `full_bw_cnt`, `full_bw_reached`).
#[derive(Clone, Copy, Debug, Default)]
struct FullBw {
    bw: u32,
    count: u32,
    reached: bool,
}

/// Loss-recovery bookkeeping (`prev_ca_state`, `packet_conservation`, `prior_cwnd`).
#[derive(Clone, Copy, Debug)]
struct Recovery {
    prev_ca_state: CaState,
    packet_conservation: bool,
    prior_cwnd: u32,
}

/// One connection's BBR state (`struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    rng: Rng,
    mode: Mode,
    pacing_gain: u32,
    cwnd_gain: u32,
    bw: MaxFilter,
    round: Round,
    min_rtt: MinRtt,
    full_bw: FullBw,
    recovery: Recovery,
    lt: lt_bw::LtBw,
    agg: cwnd::AckAggregation,
    idle_restart: bool,
    has_seen_rtt: bool,
}

impl Bbr {
    pub fn new(cfg: BbrConfig) -> Self {
        Bbr {
            cfg,
            rng: Rng::new(cfg.seed),
            mode: Mode::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            bw: MaxFilter::default(),
            round: Round::default(),
            min_rtt: MinRtt {
                us: None,
                stamp_jiffies: 0,
            },
            full_bw: FullBw::default(),
            recovery: Recovery {
                prev_ca_state: CaState::Open,
                packet_conservation: false,
                prior_cwnd: 0,
            },
            lt: lt_bw::LtBw::Idle,
            agg: cwnd::AckAggregation::new(SimTime::ZERO),
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

    /// Min RTT estimate, µs.
    pub fn min_rtt_us(&self) -> Option<u32> {
        self.min_rtt.us
    }

    /// Whether the long-term (policed) bandwidth is in use.
    pub fn lt_use_bw(&self) -> bool {
        matches!(self.lt, lt_bw::LtBw::Policed { .. })
    }

    /// `bbr_max_bw`: windowed max delivery rate (pkts/µs << 24).
    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// `bbr_bw`: the bandwidth the model uses (long-term when policed).
    pub fn bw(&self) -> u32 {
        match self.lt {
            lt_bw::LtBw::Policed { bw, .. } => bw,
            _ => self.max_bw(),
        }
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / srtt (1 ms before a sample).
    fn init_pacing_rate_from_rtt(&mut self, tcp: &mut TcpState) {
        let rtt_us = if tcp.srtt_us > 0 {
            self.has_seen_rtt = true;
            tcp.srtt_us
        } else {
            NOMINAL_RTT_US
        };
        let bw = u64::from(tcp.cwnd) * BW_UNIT / rtt_us;
        tcp.pacing_rate_bps = bw_to_pacing_rate(tcp, bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never slow down before the pipe is full.
    fn set_pacing_rate(&mut self, tcp: &mut TcpState, bw: u32, gain: u32) {
        let rate = bw_to_pacing_rate(tcp, u64::from(bw), gain);
        if !self.has_seen_rtt && tcp.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(tcp);
        }
        if self.full_bw.reached || rate > tcp.pacing_rate_bps {
            tcp.pacing_rate_bps = rate;
        }
    }

    /// `bbr_save_cwnd`: remember the last good cwnd before recovery or PROBE_RTT cut it.
    fn save_cwnd(&mut self, tcp: &TcpState) {
        let r = &mut self.recovery;
        if r.prev_ca_state < CaState::Recovery && !matches!(self.mode, Mode::ProbeRtt { .. }) {
            r.prior_cwnd = tcp.cwnd;
        } else {
            r.prior_cwnd = r.prior_cwnd.max(tcp.cwnd);
        }
    }

    /// `bbr_reset_mode`: back to STARTUP if the pipe was never filled, else PROBE_BW.
    fn reset_mode(&mut self, tcp: &TcpState) {
        if self.full_bw.reached {
            self.reset_probe_bw_mode(tcp);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_bw`: count rounds, sample long-term bw, feed the max filter.
    fn update_bw(&mut self, tcp: &TcpState, rs: &AckSample) {
        self.round.start = false;
        let Some(delivered) = rs.delivered else {
            return;
        };
        if rs.interval_us == 0 {
            return; // not a valid observation
        }
        // A round ends when a segment sent after the previous round's end is delivered.
        if rs.prior_delivered >= self.round.next_delivered {
            self.round.next_delivered = tcp.delivered;
            self.round.count = self.round.count.wrapping_add(1);
            self.round.start = true;
            self.recovery.packet_conservation = false;
        }
        self.lt_bw_sampling(tcp, rs);
        let bw = rate::bw_sample(delivered, rs.interval_us);
        // App-limited samples count only if they raise the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.round.count, bw);
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw { cycle_idx, .. } => (
                if self.lt_use_bw() {
                    BBR_UNIT
                } else {
                    PACING_GAIN[cycle_idx]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt { .. } => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, now: SimTime, tcp: &mut TcpState, rs: &AckSample) {
        self.update_bw(tcp, rs);
        self.update_ack_aggregation(tcp, rs);
        self.update_cycle_phase(now, tcp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(now, tcp);
        self.update_min_rtt(now, tcp, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// Neither `in_ack_event` nor `pkts_acked`.
    fn has_ack_hooks(&self) -> bool {
        false
    }

    /// `bbr_init`.
    fn on_init(&mut self, now: SimTime, tcp: &mut TcpState) {
        *self = Bbr::new(self.cfg);
        tcp.ssthresh = INFINITE_SSTHRESH;
        self.min_rtt = MinRtt {
            us: tcp
                .min_rtt()
                .map(|d| d.as_micros().min(u64::from(u32::MAX)) as u32),
            stamp_jiffies: self.cfg.hz.jiffies(now),
        };
        self.bw.reset(0, 0);
        self.init_pacing_rate_from_rtt(tcp);
        self.reset_lt_bw_sampling();
        self.agg = cwnd::AckAggregation::new(now);
        tcp.pacing_needed = true; // SK_PACING_NEEDED
    }

    /// `bbr_ssthresh`: save cwnd for after recovery; ssthresh itself is not BBR's signal.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        self.save_cwnd(tcp);
        tcp.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn on_cong_control(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        self.update_model(now, tcp, ack);
        let bw = self.bw();
        self.set_pacing_rate(tcp, bw, self.pacing_gain);
        self.set_cwnd(now, tcp, ack, ack.acked_sacked, bw, self.cwnd_gain);
    }

    /// `bbr_set_state`: an RTO ends a round and counts as a lossy one for LT sampling.
    fn on_state(&mut self, _now: SimTime, tcp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.recovery.prev_ca_state = CaState::Loss;
            self.full_bw.bw = 0;
            self.round.start = true;
            let rs = AckSample {
                losses: 1,
                ..Default::default()
            };
            self.lt_bw_sampling(tcp, &rs);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle while app-limited.
    fn min_tso_segs(&self, tcp: &TcpState) -> Option<u32> {
        Some(cwnd::min_tso_segs(tcp))
    }

    fn on_event(&mut self, now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        if ev != CaEvent::TxStart || tcp.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.agg.restart_epoch(now);
        // Pace at the estimate, not above it, while the app has nothing more to send.
        match self.mode {
            Mode::ProbeBw { .. } => self.set_pacing_rate(tcp, self.bw(), BBR_UNIT),
            Mode::ProbeRtt { .. } => self.check_probe_rtt_done(now, tcp),
            _ => {}
        }
    }

    /// `bbr_undo_cwnd`: a spurious loss; restart full-pipe and policer detection.
    fn undo_cwnd(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        self.full_bw.bw = 0;
        self.full_bw.count = 0;
        self.reset_lt_bw_sampling();
        tcp.cwnd
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        let cycle = match self.mode {
            Mode::ProbeBw { cycle_idx, .. } => cycle_idx as f64,
            _ => f64::NAN,
        };
        vec![
            ("mode", f64::from(self.mode.code())),
            (
                "pacing_gain",
                f64::from(self.pacing_gain) / f64::from(BBR_UNIT),
            ),
            ("cwnd_gain", f64::from(self.cwnd_gain) / f64::from(BBR_UNIT)),
            ("bw_pps", rate::bw_pps(self.bw())),
            ("max_bw_pps", rate::bw_pps(self.max_bw())),
            (
                "min_rtt_ms",
                self.min_rtt.us.map_or(f64::NAN, |u| f64::from(u) / 1000.0),
            ),
            ("full_bw_reached", f64::from(u8::from(self.full_bw.reached))),
            ("lt_use_bw", f64::from(u8::from(self.lt_use_bw()))),
            ("cycle_idx", cycle),
            ("round", f64::from(self.round.count)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use satcc_core::SimDuration;

    use super::*;
    use crate::params::ParamValue;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn bw_of_pps(pps: f64) -> u32 {
        (pps * BW_UNIT as f64 / 1e6) as u32
    }

    /// A scripted connection: one ACK per packet-timed round, delivering `bw × rtt`
    /// packets with a rate sample spanning the round.
    struct Script {
        bbr: Bbr,
        tcp: TcpState,
        now: SimTime,
    }

    impl Script {
        fn new(cfg: BbrConfig) -> Self {
            let mut tcp = TcpState::new(1448, 10);
            tcp.srtt_us = 100_000;
            tcp.min_rtt_us = 100_000;
            let mut bbr = Bbr::new(cfg);
            bbr.on_init(SimTime::ZERO, &mut tcp);
            Script {
                bbr,
                tcp,
                now: SimTime::ZERO,
            }
        }

        /// One round at `pps` over `rtt`, with `in_flight` packets outstanding afterwards.
        fn round(&mut self, pps: f64, rtt: SimDuration, in_flight: u32) -> AckSample {
            let prior = self.tcp.delivered;
            let n = (pps * rtt.as_secs_f64()).round() as u64;
            self.now += rtt;
            self.tcp.now = self.now;
            self.tcp.delivered += n;
            self.tcp.delivered_mstamp = self.now;
            let prior_in_flight = self.tcp.in_flight();
            self.tcp.packets_out = in_flight;
            let ack = AckSample {
                acked_sacked: n as u32,
                pkts_acked: n as u32,
                rtt_us: Some(rtt.as_micros()),
                prior_in_flight,
                delivered: Some(n),
                interval_us: rtt.as_micros(),
                prior_delivered: prior,
                ..Default::default()
            };
            self.bbr.on_cong_control(self.now, &mut self.tcp, &ack);
            ack
        }
    }

    #[test]
    fn gains_are_the_kernel_fixed_point_values() {
        assert_eq!(HIGH_GAIN, 739); // 2/ln2 = 2.885…
        assert_eq!(DRAIN_GAIN, 88); // ln2/2
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    }

    #[test]
    fn init_requests_pacing_at_high_gain_times_iw_over_srtt() {
        let s = Script::new(BbrConfig::default());
        assert!(s.tcp.pacing_needed);
        assert_eq!(s.bbr.mode(), Mode::Startup);
        let want = 2.885 * 10.0 * 1448.0 / 0.1 * 0.99;
        let got = s.tcp.pacing_rate_bps as f64;
        assert!((got - want).abs() / want < 0.002, "{got} vs {want}");
    }

    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth_then_drains_to_probe_bw() {
        let mut s = Script::new(BbrConfig {
            tso: TsoGoal::One,
            ..BbrConfig::default()
        });
        let rtt = ms(100);
        for pps in [100.0, 200.0, 400.0, 800.0, 1600.0] {
            s.round(pps, rtt, 1000);
            assert_eq!(s.bbr.mode(), Mode::Startup);
        }
        // Plateau: 1.24× growth is not "significant"; the third such round fills the pipe.
        s.round(1600.0 * 1.24, rtt, 1000);
        s.round(1600.0 * 1.24, rtt, 1000);
        assert_eq!(s.bbr.mode(), Mode::Startup);
        assert!(!s.bbr.full_bw_reached());
        s.round(1600.0 * 1.24, rtt, 1000);
        assert!(s.bbr.full_bw_reached());
        // 1000 packets in flight is far above one BDP: DRAIN, with ssthresh = one BDP of
        // inflight: max bw 198 packets per 100 ms → BDP 198, + 3 one-segment bursts, even.
        assert_eq!(s.bbr.mode(), Mode::Drain);
        assert_eq!(s.bbr.pacing_gain(), DRAIN_GAIN);
        assert_eq!(s.tcp.ssthresh, (198u32 + 3).next_multiple_of(2));
        s.round(1600.0, rtt, 600);
        assert_eq!(s.bbr.mode(), Mode::Drain);
        // Inflight down to one BDP: PROBE_BW, never in the 3/4 phase first.
        s.round(1600.0, rtt, 100);
        match s.bbr.mode() {
            Mode::ProbeBw { cycle_idx, .. } => assert_ne!(cycle_idx, 1),
            m => panic!("expected PROBE_BW, got {m:?}"),
        }
        assert_eq!(s.bbr.cwnd_gain(), CWND_GAIN);
    }

    #[test]
    fn growth_of_more_than_25_percent_per_round_keeps_startup_going() {
        let mut s = Script::new(BbrConfig::default());
        let mut pps = 100.0;
        for _ in 0..12 {
            s.round(pps, ms(100), 1000);
            pps *= 1.26;
        }
        assert_eq!(s.bbr.mode(), Mode::Startup);
    }

    #[test]
    fn probe_bw_start_phase_is_random_over_all_phases_but_the_drain_phase() {
        let tcp = TcpState::new(1448, 10);
        let mut seen = [0u32; CYCLE_LEN];
        let mut bbr = Bbr::new(BbrConfig {
            seed: 7,
            ..BbrConfig::default()
        });
        for _ in 0..7000 {
            bbr.reset_probe_bw_mode(&tcp);
            let Mode::ProbeBw { cycle_idx, .. } = bbr.mode() else {
                unreachable!()
            };
            seen[cycle_idx] += 1;
        }
        assert_eq!(seen[1], 0);
        for (i, &n) in seen.iter().enumerate().filter(|(i, _)| *i != 1) {
            assert!(
                (800..1200).contains(&n),
                "phase {i} drawn {n} times of 7000"
            );
        }
    }

    #[test]
    fn cwnd_is_gain_times_bdp_plus_the_quantization_budget() {
        for (tso, cycle_idx) in [(TsoGoal::One, 3), (TsoGoal::One, 0), (TsoGoal::Kernel, 3)] {
            let mut s = Script::new(BbrConfig {
                tso,
                ..BbrConfig::default()
            });
            s.bbr.full_bw.reached = true;
            s.bbr.mode = Mode::ProbeBw {
                cycle_idx,
                cycle_mstamp: s.now,
            };
            s.bbr.update_gains();
            s.bbr.bw.reset(0, bw_of_pps(1000.0));
            s.bbr.min_rtt = MinRtt {
                us: Some(50_000),
                stamp_jiffies: 0,
            };
            s.tcp.cwnd = 1000;
            s.tcp.pacing_rate_bps = 1_433_520; // 1000 pps × 1448 B × 0.99
                                               // An ACK without a rate sample: the model stays as set.
            let ack = AckSample {
                acked_sacked: 1,
                pkts_acked: 1,
                ..Default::default()
            };
            s.bbr.on_cong_control(s.now, &mut s.tcp, &ack);
            // Independent arithmetic: 2 × 1000 pkt/s × 50 ms = 100; 3 TSO bursts; even; +2 in 5/4.
            let goal = match tso {
                TsoGoal::One => 1,
                TsoGoal::Kernel => ((s.tcp.pacing_rate_bps >> 10) / 1448).max(2) as u32,
            };
            let mut want = (100 + 3 * goal).next_multiple_of(2);
            if cycle_idx == 0 {
                want += 2;
            }
            assert_eq!(s.tcp.cwnd, want, "{tso:?}, phase {cycle_idx}");
        }
    }

    #[test]
    fn ack_aggregation_adds_the_recent_excess_to_the_target() {
        let mut s = Script::new(BbrConfig {
            tso: TsoGoal::One,
            ..BbrConfig::default()
        });
        s.bbr.full_bw.reached = true;
        s.bbr.mode = Mode::ProbeBw {
            cycle_idx: 3,
            cycle_mstamp: s.now,
        };
        s.bbr.update_gains();
        s.bbr.bw.reset(0, bw_of_pps(1000.0));
        s.bbr.min_rtt = MinRtt {
            us: Some(50_000),
            stamp_jiffies: 0,
        };
        s.bbr.agg.extra_acked = [10, 4];
        s.tcp.cwnd = 1000;
        let ack = AckSample {
            acked_sacked: 1,
            pkts_acked: 1,
            ..Default::default()
        };
        s.bbr.on_cong_control(s.now, &mut s.tcp, &ack);
        assert_eq!(s.tcp.cwnd, (100 + 10 + 3u32).next_multiple_of(2));
    }

    #[test]
    fn lt_sampling_needs_two_consistent_lossy_intervals() {
        // Each 100 ms round delivers 40 packets (400 pkt/s) and loses `lost_per_round`.
        let run = |lost_per_round: u64| {
            let mut s = Script::new(BbrConfig::default());
            s.bbr.full_bw.reached = true;
            s.bbr.reset_probe_bw_mode(&s.tcp);
            for round in 0..12 {
                s.tcp.lost += lost_per_round;
                let prior = s.tcp.delivered;
                s.now += ms(100);
                s.tcp.now = s.now;
                s.tcp.delivered += 40;
                s.tcp.delivered_mstamp = s.now;
                let ack = AckSample {
                    acked_sacked: 40,
                    rtt_us: Some(100_000),
                    delivered: Some(40),
                    interval_us: 100_000,
                    prior_delivered: prior,
                    losses: lost_per_round as u32,
                    ..Default::default()
                };
                s.bbr.on_cong_control(s.now, &mut s.tcp, &ack);
                if s.bbr.lt_use_bw() {
                    return (Some(round), s);
                }
            }
            (None, s)
        };
        // 10 lost per 40 delivered (25 % ≥ 50/256): the first loss starts sampling and its
        // round is the interval's first; intervals are rounds 0–3 and 4–7.
        let (engaged, s) = run(10);
        assert_eq!(engaged, Some(7));
        assert!((rate::bw_pps(s.bbr.bw()) - 400.0).abs() < 1.0);
        assert_eq!(s.bbr.pacing_gain(), BBR_UNIT);
        // 2 per 40 (5 %) is not a policer.
        assert_eq!(run(2).0, None);
    }

    #[test]
    fn entering_recovery_conserves_packets_and_leaving_restores_the_saved_cwnd() {
        let mut s = Script::new(BbrConfig {
            tso: TsoGoal::One,
            ..BbrConfig::default()
        });
        s.bbr.full_bw.reached = true;
        s.bbr.mode = Mode::ProbeBw {
            cycle_idx: 3,
            cycle_mstamp: s.now,
        };
        s.bbr.bw.reset(0, bw_of_pps(1000.0));
        s.bbr.min_rtt = MinRtt {
            us: Some(100_000),
            stamp_jiffies: 0,
        };
        s.tcp.cwnd = 200;
        s.tcp.packets_out = 150;
        // Loss detected: the sender asks for ssthresh (BBR saves cwnd), then enters Recovery.
        let ss = s.bbr.ssthresh(s.now, &s.tcp);
        assert_eq!(ss, s.tcp.ssthresh, "BBR leaves ssthresh alone");
        s.bbr.on_state(s.now, &mut s.tcp, CaState::Recovery);
        s.tcp.ca_state = CaState::Recovery;
        s.tcp.lost_out = 5;
        s.tcp.lost += 5;
        let ack = AckSample {
            acked_sacked: 2,
            pkts_acked: 2,
            losses: 5,
            ..Default::default()
        };
        s.bbr.on_cong_control(s.now, &mut s.tcp, &ack);
        assert_eq!(
            s.tcp.cwnd,
            s.tcp.in_flight() + 2,
            "packet conservation: inflight + acked"
        );
        let conserving = s.tcp.cwnd;
        // Still the first round: cwnd follows inflight + acked, never below.
        s.tcp.packets_out -= 3;
        s.bbr.on_cong_control(
            s.now,
            &mut s.tcp,
            &AckSample {
                acked_sacked: 3,
                pkts_acked: 3,
                ..Default::default()
            },
        );
        assert_eq!(s.tcp.cwnd, conserving.max(s.tcp.in_flight() + 3));
        // Recovery ends: the cwnd saved at its start (200) comes back.
        s.tcp.ca_state = CaState::Open;
        s.tcp.lost_out = 0;
        s.bbr.on_cong_control(
            s.now,
            &mut s.tcp,
            &AckSample {
                acked_sacked: 1,
                pkts_acked: 1,
                ..Default::default()
            },
        );
        assert_eq!(
            s.tcp.cwnd,
            200.min(s.bbr.inflight(&s.tcp, s.bbr.bw(), CWND_GAIN))
                .max(s.tcp.cwnd)
        );
        assert!(s.tcp.cwnd >= 200 - 1, "restored: {}", s.tcp.cwnd);
    }

    #[test]
    fn undo_restarts_full_pipe_and_policer_detection() {
        let mut s = Script::new(BbrConfig::default());
        s.bbr.full_bw = FullBw {
            bw: 1000,
            count: 2,
            reached: false,
        };
        s.bbr.lt = lt_bw::LtBw::Policed { bw: 5, rounds: 3 };
        let cwnd = s.bbr.undo_cwnd(s.now, &s.tcp);
        assert_eq!(cwnd, s.tcp.cwnd);
        assert_eq!((s.bbr.full_bw.bw, s.bbr.full_bw.count), (0, 0));
        assert!(!s.bbr.lt_use_bw());
    }

    #[test]
    fn idle_restart_in_probe_bw_paces_at_the_estimate() {
        let mut s = Script::new(BbrConfig::default());
        s.bbr.full_bw.reached = true;
        s.bbr.mode = Mode::ProbeBw {
            cycle_idx: 0,
            cycle_mstamp: s.now,
        };
        s.bbr.bw.reset(0, bw_of_pps(1000.0));
        s.tcp.app_limited = 5;
        s.bbr.on_event(s.now, &mut s.tcp, CaEvent::TxStart);
        assert_eq!(
            s.tcp.pacing_rate_bps,
            rate::bw_to_pacing_rate(&s.tcp, u64::from(bw_of_pps(1000.0)), BBR_UNIT)
        );
        assert!(s.bbr.idle_restart);
    }

    #[test]
    fn parameters_are_checked() {
        assert!(BbrConfig::from_params(&Params::new().with("seed", ParamValue::Num(1.5))).is_err());
        assert!(BbrConfig::from_params(&Params::new().with("sed", ParamValue::Num(1.0))).is_err());
        let c = BbrConfig::from_params(
            &Params::new().with("tso_segs_goal", ParamValue::Str("one".into())),
        )
        .unwrap();
        assert_eq!(c.tso, TsoGoal::One);
    }
}
