//! Vegas — Linux `net/ipv4/tcp_vegas.c`.
//!
//! Model: once per RTT, compare the window with the window the path would need without
//! queueing: diff = cwnd · (RTT − baseRTT) / baseRTT estimates the packets this flow keeps
//! queued. In avoidance, cwnd grows by one packet per RTT while diff < alpha, shrinks by one
//! while diff > beta, and holds in between. Slow start doubles per RTT (as Reno) until
//! diff > gamma, then sets cwnd to the actual rate × baseRTT + 1. RTT is the minimum sample
//! of the last RTT (filters delayed ACKs), baseRTT the minimum ever. Losses halve (Reno).
//!
//! ```text
//!             set_state(Open)                        diff > gamma
//!  ┌────────┐ ───────────────► ┌──────────────────┐ ────────────► ┌────────────────────┐
//!  │ Reno   │                  │ Vegas slow start │               │ Vegas avoidance    │
//!  │ (off)  │ ◄─────────────── │ +1 per acked pkt │               │ ±1 per RTT by diff │
//!  └────────┘  set_state(≠Open)└──────────────────┘               └────────────────────┘
//!   (also: a round with ≤ 2 RTT samples uses Reno growth; TX_START/CWND_RESTART reset
//!    baseRTT and the round)
//! ```
//!
//! Source: L. S. Brakmo, L. L. Peterson, "TCP Vegas: end to end congestion avoidance on a
//! global internet", IEEE JSAC 13(8), 1995, §3.2; Linux `tcp_vegas.c`
//! (`tcp_vegas_cong_avoid`, `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Deviations from Linux:
//! 1. `cwnd · (rtt − baseRTT)` is computed in 64 bits; Linux's u32 product wraps when it
//!    exceeds 2³² packet·µs (e.g. cwnd 10 000 with 430 ms of queueing delay).
//! 2. The per-RTT and base RTT minima are `Option`s instead of the kernel's 0x7fffffff
//!    sentinel; the arithmetic is the same (samples are `rtt_us + 1`, never 0).
//!
//! Not implemented: `get_info` (inet_diag export; [`CongestionControl::debug_state`] shows
//! the same numbers).

use satcc_core::SimTime;

use super::reno::{reno_cong_avoid, reno_ssthresh};
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    ALPHA = ParamSpec::int("alpha", 2, 0, 1_000_000).unit("packets").kernel("alpha")
        .bpf("VEGAS_ALPHA").doc("grow while fewer than alpha packets are queued (≤ beta)");
    BETA = ParamSpec::int("beta", 4, 0, 1_000_000).unit("packets").kernel("beta")
        .bpf("VEGAS_BETA").doc("shrink while more than beta packets are queued");
    GAMMA = ParamSpec::int("gamma", 1, 0, 1_000_000).unit("packets").kernel("gamma")
        .bpf("VEGAS_GAMMA").doc("leave slow start when more than gamma are queued");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "vegas",
    summary: "Vegas: delay-based, keeps alpha..beta packets queued (one cwnd step per RTT)",
    source: "Brakmo & Peterson, IEEE JSAC 13(8) 1995, §3.2; Linux net/ipv4/tcp_vegas.c",
    params: PARAMS,
    deviations: &["cwnd*(rtt-baseRTT) in 64 bits (Linux's u32 wraps above 2^32 packet-µs)"],
    needs_ecn: false,
    build,
};

/// `alpha`: lower bound of packets in the network (`tcp_vegas.c`).
pub const ALPHA: u32 = param::ALPHA.default_u32();
/// `beta`: upper bound of packets in the network.
pub const BETA: u32 = param::BETA.default_u32();
/// `gamma`: slow-start limit ("limit on increase").
pub const GAMMA: u32 = param::GAMMA.default_u32();
/// Vegas decides on a round only with more than this many RTT samples in it (delayed ACKs).
pub(crate) const MIN_RTT_SAMPLES: u32 = 2;
/// Vegas never lets cwnd fall below 2 packets.
const MIN_CWND: u32 = 2;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let alpha = param::ALPHA.u32(params)?;
    let beta = param::BETA.u32(params)?;
    let gamma = param::GAMMA.u32(params)?;
    if alpha > beta {
        return Err(ParamError {
            key: "alpha".into(),
            expected: format!("≤ beta ({beta})"),
            found: format!("{alpha}"),
        });
    }
    Ok(Box::new(Vegas::new(alpha, beta, gamma)))
}

/// `tcp_current_ssthresh`: in a cwnd reduction the current ssthresh, otherwise at least
/// three quarters of cwnd.
pub(crate) fn current_ssthresh(tcp: &TcpState) -> u32 {
    if matches!(tcp.ca_state, CaState::Cwr | CaState::Recovery) {
        tcp.ssthresh
    } else {
        tcp.ssthresh.max((tcp.cwnd >> 1) + (tcp.cwnd >> 2))
    }
}

/// Linux `struct vegas` and the hooks YeAH shares with Vegas (`tcp_vegas_init`,
/// `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`).
#[derive(Clone, Debug, Default)]
pub(crate) struct VegasCore {
    /// `beg_snd_nxt`: right edge of the window at the start of this round (bytes).
    pub beg_snd_nxt: u64,
    /// `doing_vegas_now`.
    pub enabled: bool,
    /// `cntRTT`: RTT samples in this round.
    pub cnt_rtt: u32,
    /// `minRTT`: smallest RTT sample of this round, µs (+1).
    pub min_rtt_us: Option<u64>,
    /// `baseRTT`: smallest RTT sample ever, µs (+1).
    pub base_rtt_us: Option<u64>,
}

impl VegasCore {
    /// `tcp_vegas_init`.
    pub fn init(&mut self, tcp: &TcpState) {
        self.base_rtt_us = None;
        self.enable(tcp);
    }

    /// `vegas_enable`: start a fresh round at the current snd_nxt.
    pub fn enable(&mut self, tcp: &TcpState) {
        self.enabled = true;
        self.beg_snd_nxt = tcp.snd_nxt;
        self.new_round();
    }

    /// Wipe the slate for the next RTT.
    pub fn new_round(&mut self) {
        self.cnt_rtt = 0;
        self.min_rtt_us = None;
    }

    /// `tcp_vegas_pkts_acked`: min-filter this round's samples and all samples.
    pub fn pkts_acked(&mut self, ack: &AckSample) {
        let Some(rtt) = ack.rtt_us else { return };
        // "Never allow zero rtt or baseRTT".
        let vrtt = rtt + 1;
        self.base_rtt_us = Some(self.base_rtt_us.map_or(vrtt, |b| b.min(vrtt)));
        self.min_rtt_us = Some(self.min_rtt_us.map_or(vrtt, |m| m.min(vrtt)));
        self.cnt_rtt += 1;
    }

    /// `tcp_vegas_state`.
    pub fn state(&mut self, tcp: &TcpState, new: CaState) {
        if new == CaState::Open {
            self.enable(tcp);
        } else {
            self.enabled = false;
        }
    }

    /// `tcp_vegas_cwnd_event`: restart from idle forgets everything, baseRTT included.
    pub fn cwnd_event(&mut self, tcp: &TcpState, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tcp);
        }
    }

    /// This round's (minRTT, baseRTT) when it has enough samples for a decision.
    pub fn round_rtts(&self) -> Option<(u64, u64)> {
        if self.cnt_rtt <= MIN_RTT_SAMPLES {
            return None;
        }
        Some((self.min_rtt_us?, self.base_rtt_us?))
    }

    pub fn debug(&self) -> Vec<(&'static str, f64)> {
        let us = |x: Option<u64>| x.map_or(f64::NAN, |v| v as f64);
        vec![
            ("vegas_enabled", f64::from(u8::from(self.enabled))),
            ("cnt_rtt", f64::from(self.cnt_rtt)),
            ("min_rtt_us", us(self.min_rtt_us)),
            ("base_rtt_us", us(self.base_rtt_us)),
        ]
    }
}

/// Vegas with its three thresholds.
#[derive(Clone, Debug)]
pub struct Vegas {
    alpha: u32,
    beta: u32,
    gamma: u32,
    core: VegasCore,
    /// The last round's diff (packets queued), for traces.
    last_diff: Option<u64>,
}

impl Vegas {
    pub fn new(alpha: u32, beta: u32, gamma: u32) -> Self {
        Vegas {
            alpha,
            beta,
            gamma,
            core: VegasCore::default(),
            last_diff: None,
        }
    }

    /// The once-per-RTT decision (`tcp_vegas_cong_avoid`, "enough RTT samples" branch).
    fn adjust(&mut self, tcp: &mut TcpState, acked: u32, rtt: u64, base: u64) {
        let cwnd = u64::from(tcp.cwnd);
        // Expected window at the actual rate: cwnd · baseRTT / RTT.
        let target_cwnd = cwnd * base / rtt;
        // "Diff" of the Arizona papers: cwnd − target, in packets, as cwnd·(RTT−base)/base.
        let diff = cwnd * (rtt - base) / base;
        self.last_diff = Some(diff);
        if diff > u64::from(self.gamma) && tcp.in_slow_start() {
            // Going too fast: match the actual rate exactly (+1 for truncation), leave SS.
            tcp.cwnd = tcp.cwnd.min(target_cwnd as u32 + 1);
            tcp.ssthresh = tcp.ssthresh.min(tcp.cwnd);
        } else if tcp.in_slow_start() {
            tcp.slow_start(acked);
        } else if diff > u64::from(self.beta) {
            tcp.cwnd = tcp.cwnd.saturating_sub(1);
            tcp.ssthresh = tcp.ssthresh.min(tcp.cwnd);
        } else if diff < u64::from(self.alpha) {
            tcp.cwnd += 1;
        }
        tcp.cwnd = tcp.cwnd.clamp(MIN_CWND, tcp.cwnd_clamp.max(MIN_CWND));
        tcp.ssthresh = current_ssthresh(tcp);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.core.init(tcp);
    }

    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        reno_ssthresh(tcp)
    }

    fn on_pkts_acked(&mut self, _now: SimTime, _tcp: &mut TcpState, ack: &AckSample) {
        self.core.pkts_acked(ack);
    }

    fn on_state(&mut self, _now: SimTime, tcp: &mut TcpState, new: CaState) {
        self.core.state(tcp, new);
    }

    fn on_event(&mut self, _now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        self.core.cwnd_event(tcp, ev);
    }

    /// `tcp_vegas_cong_avoid`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        let acked = ack.acked_sacked;
        if !self.core.enabled {
            reno_cong_avoid(tcp, acked);
            return;
        }
        if ack.ack_seq > self.core.beg_snd_nxt {
            // A round ended: the once-per-RTT adjustment.
            self.core.beg_snd_nxt = tcp.snd_nxt;
            match self.core.round_rtts() {
                // Too few samples (probably all delayed ACKs): behave as Reno.
                None => reno_cong_avoid(tcp, acked),
                Some((rtt, base)) => self.adjust(tcp, acked, rtt, base),
            }
            self.core.new_round();
        } else if tcp.in_slow_start() {
            tcp.slow_start(acked);
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        let mut v = self.core.debug();
        v.push(("diff", self.last_diff.map_or(f64::NAN, |d| d as f64)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u32 = 1448;
    use crate::INFINITE_SSTHRESH;

    fn vegas() -> Vegas {
        Vegas::new(ALPHA, BETA, GAMMA)
    }

    fn state(cwnd: u32, ssthresh: u32) -> TcpState {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = ssthresh;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        t
    }

    /// One ACK of one segment with an RTT sample: pkts_acked, then cong_avoid (Linux order).
    fn ack(v: &mut Vegas, t: &mut TcpState, rtt_us: Option<u64>) {
        t.snd_una += u64::from(MSS);
        let a = AckSample {
            ack_seq: t.snd_una,
            pkts_acked: 1,
            acked_sacked: 1,
            rtt_us,
            ..Default::default()
        };
        v.on_pkts_acked(SimTime::ZERO, t, &a);
        v.on_cong_avoid(SimTime::ZERO, t, &a);
    }

    /// One round on a fixed path: the window in flight is sent at the start of the round
    /// (snd_nxt moves past it), then every segment is acked with the round's RTT,
    /// base_rtt + queue / rate where queue = max(0, window − BDP).
    fn round(v: &mut Vegas, t: &mut TcpState, base_us: u64, bdp: u32) -> u32 {
        let n = t.cwnd;
        t.snd_nxt = t.snd_una + u64::from(n) * u64::from(MSS);
        let queue = n.saturating_sub(bdp);
        let rtt = base_us + u64::from(queue) * base_us / u64::from(bdp);
        for _ in 0..n {
            ack(v, t, Some(rtt));
        }
        queue
    }

    #[test]
    fn rtt_samples_are_min_filtered_per_round_and_forever() {
        let mut v = vegas();
        let mut t = state(10, INFINITE_SSTHRESH);
        v.on_init(SimTime::ZERO, &mut t);
        for r in [50_000, 40_000, 45_000] {
            v.on_pkts_acked(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    rtt_us: Some(r),
                    ..Default::default()
                },
            );
        }
        v.on_pkts_acked(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                rtt_us: None,
                ..Default::default()
            },
        );
        assert_eq!(v.core.cnt_rtt, 3);
        assert_eq!(v.core.min_rtt_us, Some(40_001));
        assert_eq!(v.core.base_rtt_us, Some(40_001));
        v.core.new_round();
        v.on_pkts_acked(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                rtt_us: Some(60_000),
                ..Default::default()
            },
        );
        assert_eq!(v.core.min_rtt_us, Some(60_001));
        assert_eq!(v.core.base_rtt_us, Some(40_001));
    }

    #[test]
    fn avoidance_steps_cwnd_by_one_per_round_according_to_diff() {
        // base 100 ms; round RTT r gives diff = cwnd·(r − base)/base.
        for (rtt_us, want) in [(100_000u64, 101u32), (103_000, 100), (106_000, 99)] {
            let mut v = vegas();
            let mut t = state(100, 50);
            v.on_init(SimTime::ZERO, &mut t);
            // Round 0 establishes baseRTT = 100 ms (diff 0 → +1): start from its end.
            v.core.base_rtt_us = Some(100_001);
            t.snd_nxt = 100 * u64::from(MSS);
            for _ in 0..100 {
                ack(&mut v, &mut t, Some(rtt_us));
            }
            // The first ACK past beg_snd_nxt (=0) adjusted on 0 samples (Reno); the next
            // round decides on this round's 100 samples.
            let before = t.cwnd;
            t.snd_nxt = t.snd_una + 100 * u64::from(MSS);
            ack(&mut v, &mut t, Some(rtt_us));
            let diff = 100 * (rtt_us + 1 - 100_001) / 100_001;
            assert_eq!(v.last_diff, Some(diff));
            assert_eq!(t.cwnd, before + want - 100, "rtt {rtt_us}: diff {diff}");
        }
    }

    #[test]
    fn too_few_rtt_samples_in_a_round_fall_back_to_reno() {
        let mut v = vegas();
        let mut t = state(20, 10);
        v.on_init(SimTime::ZERO, &mut t);
        t.snd_nxt = 40 * u64::from(MSS);
        // Only two samples in the round (delayed ACKs), both with huge queueing delay.
        ack(&mut v, &mut t, Some(10_000));
        ack(&mut v, &mut t, Some(90_000));
        for _ in 0..37 {
            ack(&mut v, &mut t, None);
        }
        v.core.cnt_rtt = 2;
        // The boundary ACK acks 20 packets at once: Reno adds one packet.
        t.snd_una = 40 * u64::from(MSS);
        let a = AckSample {
            ack_seq: t.snd_una + 1,
            acked_sacked: 20,
            ..Default::default()
        };
        v.on_cong_avoid(SimTime::ZERO, &mut t, &a);
        assert_eq!(t.cwnd, 21);
    }

    #[test]
    fn slow_start_ends_at_the_actual_rate_when_diff_exceeds_gamma() {
        let mut v = vegas();
        let mut t = state(64, INFINITE_SSTHRESH);
        v.on_init(SimTime::ZERO, &mut t);
        v.core.base_rtt_us = Some(100_001);
        for _ in 0..3 {
            v.on_pkts_acked(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    rtt_us: Some(200_000),
                    ..Default::default()
                },
            );
        }
        t.snd_nxt = 64 * u64::from(MSS);
        ack(&mut v, &mut t, Some(200_000));
        // cwnd = target + 1 = 64 · baseRTT / RTT + 1.
        let want = (64 * 100_001 / 200_001 + 1) as u32;
        assert_eq!(t.cwnd, want);
        assert_eq!(t.ssthresh, want);
        assert!(!t.in_slow_start());
    }

    #[test]
    fn on_a_fixed_path_cwnd_settles_with_alpha_to_beta_packets_queued() {
        let bdp = 100;
        let base = 100_000;
        // From slow start; from below in avoidance; and from above once baseRTT is known
        // (a flow that starts above the BDP never sees baseRTT and keeps a standing queue,
        // Vegas's known persistent-congestion weakness).
        for (cwnd0, ssthresh0, jump_to) in [
            (10u32, INFINITE_SSTHRESH, None),
            (50, 2, None),
            (50, 2, Some(180)),
        ] {
            let mut v = vegas();
            let mut t = state(cwnd0, ssthresh0);
            v.on_init(SimTime::ZERO, &mut t);
            let mut queues = Vec::new();
            for i in 0..300 {
                if i == 5 {
                    if let Some(w) = jump_to {
                        t.cwnd = w;
                    }
                }
                queues.push(round(&mut v, &mut t, base, bdp));
            }
            let tail = &queues[250..];
            let diff = v.last_diff.unwrap();
            assert!(
                (u64::from(ALPHA)..=u64::from(BETA)).contains(&diff),
                "diff {diff}"
            );
            assert!(
                tail.iter().all(|q| (ALPHA..=BETA + 1).contains(q)),
                "queues {tail:?}"
            );
            assert!(
                tail.windows(2).all(|w| w[0] == w[1]),
                "not settled: {tail:?}"
            );
        }
    }

    #[test]
    fn leaving_the_open_state_switches_to_reno_and_returning_starts_a_fresh_round() {
        let mut v = vegas();
        let mut t = state(20, 10);
        v.on_init(SimTime::ZERO, &mut t);
        v.on_state(SimTime::ZERO, &mut t, CaState::Recovery);
        for _ in 0..20 {
            ack(&mut v, &mut t, Some(100_000));
        }
        assert_eq!(t.cwnd, 21, "Reno: +1 after a window of ACKs");
        t.snd_nxt = 12345;
        v.on_state(SimTime::ZERO, &mut t, CaState::Open);
        assert!(v.core.enabled);
        assert_eq!(v.core.beg_snd_nxt, 12345);
        assert_eq!(v.core.cnt_rtt, 0);
        assert_eq!(
            v.core.base_rtt_us,
            Some(100_001),
            "baseRTT survives recovery"
        );
    }

    #[test]
    fn restart_after_idle_forgets_the_base_rtt() {
        let mut v = vegas();
        let mut t = state(20, 10);
        v.on_init(SimTime::ZERO, &mut t);
        ack(&mut v, &mut t, Some(100_000));
        v.on_event(SimTime::ZERO, &mut t, CaEvent::TxStart);
        assert_eq!(v.core.base_rtt_us, None);
    }

    #[test]
    fn parameters_default_to_the_kernel_and_alpha_above_beta_is_rejected() {
        use crate::params::ParamValue;
        assert!(build(&Params::new()).is_ok());
        let p = Params::new().with("alpha", ParamValue::Num(5.0));
        assert!(build(&p).is_err());
        let p = Params::new()
            .with("alpha", ParamValue::Num(5.0))
            .with("beta", ParamValue::Num(8.0));
        assert!(build(&p).is_ok());
    }

    #[test]
    fn loss_halves_the_window() {
        assert_eq!(vegas().ssthresh(SimTime::ZERO, &state(40, 10)), 20);
    }
}
