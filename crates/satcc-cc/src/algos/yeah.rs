//! YeAH — Linux `net/ipv4/tcp_yeah.c` ("Yet Another Highspeed TCP").
//!
//! Model: two modes chosen once per RTT from Vegas's queue estimate Q = cwnd·(RTT −
//! baseRTT)/RTT. While Q ≤ alpha and the queueing delay is under baseRTT/phy, the flow is
//! in *fast* mode and grows like Scalable TCP (one packet per min(cwnd, 100) acked packets);
//! otherwise it is in *slow* mode and grows like Reno, and when Q > alpha it removes the
//! excess queue at once ("precautionary decongestion": cwnd −= min(Q/gamma, cwnd/2), not
//! below `reno_count`, the estimated Reno share). On loss, a flow that has not been in slow
//! mode for rho RTTs removes only its own queue (between cwnd/8 and cwnd/2); one competing
//! with Reno flows for rho RTTs halves.
//!
//! ```text
//!               Q > alpha or queueing delay > baseRTT/phy   (decongest if Q > alpha)
//!  ┌──────────────────────┐ ───────────────────────────────► ┌─────────────────────────┐
//!  │ fast: Scalable growth│                                   │ slow: Reno growth       │
//!  │ doing_reno_now = 0   │ ◄─────────────────────────────── │ doing_reno_now += 1/RTT │
//!  └──────────────────────┘  Q ≤ alpha and delay ≤ base/phy   └─────────────────────────┘
//!  loss: cwnd − clamp(lastQ, cwnd/8, cwnd/2) if doing_reno_now < rho, else cwnd/2
//!  (slow start as Reno in either mode; Vegas's RTT bookkeeping runs throughout)
//! ```
//!
//! Source: A. Baiocchi, A. P. Castellani, F. Vacirca, "YeAH-TCP: Yet Another Highspeed TCP",
//! PFLDnet 2007, §3; Linux `tcp_yeah.c` (`tcp_yeah_cong_avoid`, `tcp_yeah_ssthresh`) with
//! Vegas's RTT bookkeeping (`tcp_vegas.c`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! The kernel's values are compile-time `#define`s, not module parameters; satcc exposes
//! them so studies can vary them.
//!
//! Deviations from Linux: none in the arithmetic (the queue estimate is a 64-bit product
//! truncated to 32 bits, as in Linux). Vegas's minima are `Option`s instead of the
//! kernel's 0x7fffffff sentinels, with the same results.
//!
//! Known behaviour (kernel logic, kept): `reno_count` grows by one per slow-mode RTT, as
//! fast as Reno growth, and decongestion never goes below it. When the delay threshold
//! (BDP/phy packets of queue) is below alpha, a lone flow sits in slow mode without
//! decongesting, `reno_count` catches up with cwnd and the flow fills the buffer like Reno
//! until losses halve `reno_count`.
//!
//! Not implemented: `get_info`.

use satcc_core::SimTime;

use super::vegas::VegasCore;
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    ALPHA = ParamSpec::int("alpha", 80, 0, 1_000_000).unit("packets").kernel("TCP_YEAH_ALPHA")
        .bpf("YEAH_ALPHA").doc("queue above which YeAH is in slow mode and decongests");
    GAMMA = ParamSpec::int("gamma", 1, 1, 1_000_000).unit("1").kernel("TCP_YEAH_GAMMA")
        .bpf("YEAH_GAMMA").doc("decongestion removes queue/gamma");
    DELTA = ParamSpec::int("delta", 3, 0, 31).unit("log2").kernel("TCP_YEAH_DELTA")
        .bpf("YEAH_DELTA").doc("loss removes at least cwnd >> delta");
    EPSILON = ParamSpec::int("epsilon", 1, 0, 31).unit("log2").kernel("TCP_YEAH_EPSILON")
        .bpf("YEAH_EPSILON").doc("decongestion removes at most cwnd >> epsilon");
    PHY = ParamSpec::int("phy", 8, 1, 1_000_000).unit("1").kernel("TCP_YEAH_PHY")
        .bpf("YEAH_PHY").doc("slow mode when queueing delay > baseRTT/phy");
    RHO = ParamSpec::int("rho", 16, 0, 1_000_000).unit("RTTs").kernel("TCP_YEAH_RHO")
        .bpf("YEAH_RHO").doc("slow-mode RTTs after which a loss halves cwnd");
    ZETA = ParamSpec::int("zeta", 50, 0, 1_000_000).unit("RTTs").kernel("TCP_YEAH_ZETA")
        .bpf("YEAH_ZETA").doc("fast-mode RTTs after which reno_count resets");
    SCALABLE_AI_CNT = ParamSpec::int("scalable_ai_cnt", 100, 1, 1_000_000).unit("packets")
        .kernel("TCP_SCALABLE_AI_CNT").bpf("YEAH_SCALABLE_AI_CNT")
        .doc("fast mode adds 1 per min(cwnd, this) acked");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "yeah",
    summary: "YeAH: Scalable growth while the queue is small, Reno plus decongestion when not",
    source: "Baiocchi, Castellani, Vacirca, PFLDnet 2007, §3; Linux net/ipv4/tcp_yeah.c",
    params: PARAMS,
    deviations: &[],
    needs_ecn: false,
    build,
};

/// `TCP_YEAH_ALPHA`: packets queued at the bottleneck that trigger slow mode.
pub const ALPHA: u32 = param::ALPHA.default_u32();
/// `TCP_YEAH_GAMMA`: fraction of the queue removed per RTT.
pub const GAMMA: u32 = param::GAMMA.default_u32();
/// `TCP_YEAH_DELTA`: log2 of the minimum fraction of cwnd removed on loss.
pub const DELTA: u32 = param::DELTA.default_u32();
/// `TCP_YEAH_EPSILON`: log2 of the maximum fraction removed by decongestion.
pub const EPSILON: u32 = param::EPSILON.default_u32();
/// `TCP_YEAH_PHY`: maximum queueing delay as a fraction (1/phy) of baseRTT in fast mode.
pub const PHY: u32 = param::PHY.default_u32();
/// `TCP_YEAH_RHO`: consecutive slow RTTs after which loss means competition with Reno.
pub const RHO: u32 = param::RHO.default_u32();
/// `TCP_YEAH_ZETA`: fast RTTs after which `reno_count` resets.
pub const ZETA: u32 = param::ZETA.default_u32();
/// `TCP_SCALABLE_AI_CNT`.
pub const SCALABLE_AI_CNT: u32 = param::SCALABLE_AI_CNT.default_u32();
/// `tcp_yeah_init`: cwnd clamp so that cwnd·128 fits in 32 bits.
const CWND_CLAMP_MAX: u32 = u32::MAX / 128;
/// `doing_reno_now` saturates at 0xffffff.
const DOING_RENO_MAX: u32 = 0xff_ffff;
/// Floor of `reno_count` and of the loss window.
const MIN_WIN: u32 = 2;

/// YeAH's constants (all `#define`s in the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct YeahConfig {
    pub alpha: u32,
    pub gamma: u32,
    pub delta: u32,
    pub epsilon: u32,
    pub phy: u32,
    pub rho: u32,
    pub zeta: u32,
    pub scalable_ai_cnt: u32,
}

impl Default for YeahConfig {
    fn default() -> Self {
        YeahConfig {
            alpha: ALPHA,
            gamma: GAMMA,
            delta: DELTA,
            epsilon: EPSILON,
            phy: PHY,
            rho: RHO,
            zeta: ZETA,
            scalable_ai_cnt: SCALABLE_AI_CNT,
        }
    }
}

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let cfg = YeahConfig {
        alpha: param::ALPHA.u32(params)?,
        gamma: param::GAMMA.u32(params)?,
        delta: param::DELTA.u32(params)?,
        epsilon: param::EPSILON.u32(params)?,
        phy: param::PHY.u32(params)?,
        rho: param::RHO.u32(params)?,
        zeta: param::ZETA.u32(params)?,
        scalable_ai_cnt: param::SCALABLE_AI_CNT.u32(params)?,
    };
    Ok(Box::new(Yeah::new(cfg)))
}

/// YeAH's per-connection state (`struct yeah`).
#[derive(Clone, Debug)]
pub struct Yeah {
    cfg: YeahConfig,
    vegas: VegasCore,
    /// `lastQ`: queue estimate of the last decided RTT, packets.
    last_q: u32,
    /// `doing_reno_now`: consecutive RTTs in slow (Reno) mode; 0 = fast mode.
    doing_reno_now: u32,
    /// `reno_count`: estimate of the window a competing Reno flow would have.
    reno_count: u32,
    /// `fast_count`: RTTs in fast mode since the last loss or reset.
    fast_count: u32,
}

impl Yeah {
    pub fn new(cfg: YeahConfig) -> Self {
        Yeah {
            cfg,
            vegas: VegasCore::default(),
            last_q: 0,
            doing_reno_now: 0,
            reno_count: MIN_WIN,
            fast_count: 0,
        }
    }

    /// The once-per-RTT mode decision and decongestion (`tcp_yeah_cong_avoid`, `do_vegas`).
    fn per_rtt(&mut self, tcp: &mut TcpState, rtt: u64, base: u64) {
        let c = self.cfg;
        // Excess packets above the bandwidth-delay product: cwnd·(RTT − base)/RTT.
        let queue = (u64::from(tcp.cwnd) * (rtt - base) / rtt) as u32;
        if queue > c.alpha || rtt - base > base / u64::from(c.phy) {
            if queue > c.alpha && tcp.cwnd > self.reno_count {
                // Precautionary decongestion: drain the queue, keep at least reno_count.
                let reduction = (queue / c.gamma).min(tcp.cwnd >> c.epsilon);
                tcp.cwnd = (tcp.cwnd - reduction).max(self.reno_count);
                tcp.ssthresh = tcp.cwnd;
            }
            if self.reno_count <= MIN_WIN {
                self.reno_count = (tcp.cwnd >> 1).max(MIN_WIN);
            } else {
                self.reno_count += 1;
            }
            self.doing_reno_now = (self.doing_reno_now + 1).min(DOING_RENO_MAX);
        } else {
            self.fast_count += 1;
            if self.fast_count > c.zeta {
                self.reno_count = MIN_WIN;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    /// `tcp_yeah_init`.
    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.vegas.init(tcp);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = MIN_WIN;
        tcp.cwnd_clamp = tcp.cwnd_clamp.min(CWND_CLAMP_MAX);
    }

    /// `tcp_yeah_ssthresh`.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        let half = (tcp.cwnd >> 1).max(MIN_WIN);
        let reduction = if self.doing_reno_now < self.cfg.rho {
            // Not competing with Reno: remove our own queue, between cwnd/8 and cwnd/2.
            self.last_q.min(half).max(tcp.cwnd >> self.cfg.delta)
        } else {
            half
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(MIN_WIN);
        (i64::from(tcp.cwnd) - i64::from(reduction)).max(i64::from(MIN_WIN)) as u32
    }

    fn on_pkts_acked(&mut self, _now: SimTime, _tcp: &mut TcpState, ack: &AckSample) {
        self.vegas.pkts_acked(ack);
    }

    fn on_state(&mut self, _now: SimTime, tcp: &mut TcpState, new: CaState) {
        self.vegas.state(tcp, new);
    }

    fn on_event(&mut self, _now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        self.vegas.cwnd_event(tcp, ev);
    }

    /// `tcp_yeah_cong_avoid`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if !tcp.is_cwnd_limited() {
            return;
        }
        let mut acked = ack.acked_sacked;
        if tcp.in_slow_start() {
            acked = tcp.slow_start(acked);
        }
        if acked > 0 {
            if self.doing_reno_now == 0 {
                // Fast mode: Scalable TCP, 1 packet per min(cwnd, 100) acked.
                let w = tcp.cwnd.min(self.cfg.scalable_ai_cnt);
                tcp.cong_avoid_ai(w, acked);
            } else {
                // Slow mode: Reno.
                let w = tcp.cwnd;
                tcp.cong_avoid_ai(w, acked);
            }
        }
        // do_vegas: once per RTT.
        if ack.ack_seq > self.vegas.beg_snd_nxt {
            if let Some((rtt, base)) = self.vegas.round_rtts() {
                self.per_rtt(tcp, rtt, base);
            }
            self.vegas.beg_snd_nxt = tcp.snd_nxt;
            self.vegas.new_round();
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        let mut v = self.vegas.debug();
        v.extend([
            ("last_q", f64::from(self.last_q)),
            ("doing_reno_now", f64::from(self.doing_reno_now)),
            ("reno_count", f64::from(self.reno_count)),
            ("fast_count", f64::from(self.fast_count)),
        ]);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u32 = 1448;

    fn yeah() -> Yeah {
        Yeah::new(YeahConfig::default())
    }

    fn state(cwnd: u32, ssthresh: u32) -> TcpState {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = ssthresh;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        t
    }

    /// One ACK of one segment with an RTT sample (pkts_acked, then cong_avoid).
    fn ack(y: &mut Yeah, t: &mut TcpState, rtt_us: u64) {
        t.snd_una += u64::from(MSS);
        t.max_packets_out = t.cwnd;
        let a = AckSample {
            ack_seq: t.snd_una,
            pkts_acked: 1,
            acked_sacked: 1,
            rtt_us: Some(rtt_us),
            ..Default::default()
        };
        y.on_pkts_acked(SimTime::ZERO, t, &a);
        y.on_cong_avoid(SimTime::ZERO, t, &a);
    }

    /// `n` ACKs inside the current round (no round boundary).
    fn fill(y: &mut Yeah, t: &mut TcpState, n: u32, rtt_us: u64) {
        y.vegas.beg_snd_nxt = u64::MAX;
        for _ in 0..n {
            ack(y, t, rtt_us);
        }
    }

    /// The ACK that ends the round (passes beg_snd_nxt): the per-RTT decision runs.
    fn end_round(y: &mut Yeah, t: &mut TcpState, rtt_us: u64) {
        y.vegas.beg_snd_nxt = t.snd_una;
        t.snd_nxt = t.snd_una + u64::from(t.cwnd) * u64::from(MSS);
        ack(y, t, rtt_us);
    }

    /// Put the flow in avoidance with baseRTT = `base_us` and a fresh round.
    fn warmed(cwnd: u32, base_us: u64) -> (Yeah, TcpState) {
        let mut y = yeah();
        let mut t = state(cwnd, 2);
        y.on_init(SimTime::ZERO, &mut t);
        fill(&mut y, &mut t, 3, base_us);
        end_round(&mut y, &mut t, base_us);
        y.fast_count = 0;
        t.cwnd = cwnd;
        t.cwnd_cnt = 0;
        (y, t)
    }

    #[test]
    fn fast_mode_grows_like_scalable_one_packet_per_hundred_acks() {
        let (mut y, mut t) = warmed(1000, 100_000);
        fill(&mut y, &mut t, 1000, 100_000);
        assert_eq!(t.cwnd, 1010);
    }

    #[test]
    fn small_windows_in_fast_mode_grow_like_reno() {
        let (mut y, mut t) = warmed(50, 100_000);
        fill(&mut y, &mut t, 50, 100_000);
        assert_eq!(t.cwnd, 51);
    }

    #[test]
    fn a_queue_above_alpha_decongests_and_switches_to_reno_growth() {
        let (mut y, mut t) = warmed(1000, 100_000);
        // A round with RTT 125 ms: Q = 1000 · 25000/125001 = 199 > 80.
        fill(&mut y, &mut t, 1000, 125_000);
        let cwnd = t.cwnd;
        end_round(&mut y, &mut t, 125_000);
        let q = (u64::from(cwnd) * 25_000 / 125_001) as u32;
        assert_eq!(y.last_q, q);
        assert_eq!(t.cwnd, cwnd - q.min(cwnd / 2));
        assert_eq!(t.ssthresh, t.cwnd);
        assert_eq!(y.doing_reno_now, 1);
        assert_eq!(y.reno_count, t.cwnd / 2);
        // Slow mode: one packet per cwnd ACKs.
        let w = t.cwnd;
        t.cwnd_cnt = 0;
        fill(&mut y, &mut t, w, 100_000);
        assert_eq!(t.cwnd, w + 1);
    }

    #[test]
    fn decongestion_never_goes_below_the_reno_share() {
        let (mut y, mut t) = warmed(1000, 100_000);
        y.reno_count = 950;
        y.vegas.new_round();
        fill(&mut y, &mut t, 10, 125_000);
        t.cwnd = 1000;
        end_round(&mut y, &mut t, 125_000);
        assert_eq!(t.cwnd, 950);
        assert_eq!(y.reno_count, 951);
    }

    #[test]
    fn queueing_delay_above_an_eighth_of_base_rtt_means_slow_mode_without_decongestion() {
        // cwnd 100, RTT 150 ms on base 100 ms: Q = 33 ≤ 80 but delay 50 ms > 12.5 ms.
        let (mut y, mut t) = warmed(100, 100_000);
        fill(&mut y, &mut t, 100, 150_000);
        let cwnd = t.cwnd;
        end_round(&mut y, &mut t, 150_000);
        assert_eq!(t.cwnd, cwnd, "no decongestion below alpha");
        assert_eq!(y.doing_reno_now, 1);
        // And back to fast mode when the delay falls.
        fill(&mut y, &mut t, 100, 101_000);
        end_round(&mut y, &mut t, 101_000);
        assert_eq!(y.doing_reno_now, 0);
        assert_eq!(y.fast_count, 1);
    }

    #[test]
    fn loss_in_fast_mode_removes_the_last_queue_between_an_eighth_and_a_half() {
        let mut y = yeah();
        let t = state(800, 2);
        for (last_q, want) in [(30u32, 800 - 100), (300, 800 - 300), (700, 800 - 400)] {
            y.last_q = last_q;
            y.doing_reno_now = 0;
            assert_eq!(y.ssthresh(SimTime::ZERO, &t), want, "lastQ {last_q}");
        }
    }

    #[test]
    fn loss_after_rho_slow_rounds_halves_and_halves_reno_count() {
        let mut y = yeah();
        y.doing_reno_now = RHO;
        y.last_q = 10;
        y.reno_count = 300;
        y.fast_count = 7;
        assert_eq!(y.ssthresh(SimTime::ZERO, &state(800, 2)), 400);
        assert_eq!(y.reno_count, 150);
        assert_eq!(y.fast_count, 0);
    }

    #[test]
    fn many_fast_rounds_reset_the_reno_share() {
        let (mut y, mut t) = warmed(100, 100_000);
        y.reno_count = 40;
        for _ in 0..=ZETA {
            fill(&mut y, &mut t, 10, 100_000);
            end_round(&mut y, &mut t, 100_000);
        }
        assert_eq!(y.reno_count, 2);
    }
}
