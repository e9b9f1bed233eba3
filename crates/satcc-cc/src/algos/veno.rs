//! Veno — Linux `net/ipv4/tcp_veno.c`.
//!
//! Model: Reno with a Vegas-style estimate N = cwnd·(RTT − baseRTT)/RTT of this flow's
//! packets queued at the bottleneck, used to tell congestive from random losses. While
//! N < β (3 packets) the path is "non-congestive": growth is Reno's and a loss cuts cwnd by
//! only 1/5 (it is probably a random, e.g. wireless, loss); otherwise growth slows to one
//! packet every other RTT and a loss halves.
//!
//! Source: C. P. Fu, S. C. Liew, "TCP Veno: TCP enhancement for transmission over wireless
//! access networks", IEEE JSAC 21(2), 2003, §II; Linux `tcp_veno.c` (`tcp_veno_cong_avoid`,
//! `tcp_veno_ssthresh`, `tcp_veno_pkts_acked`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! As in Linux, the "RTT" is the minimum sample since the previous ACK — Linux resets it
//! after every `cong_avoid` call, so an ACK without an RTT sample sees the 0x7fffffff
//! sentinel and counts as congestive; this is reproduced.
//!
//! Deviations from Linux: none known.
//! Not implemented: nothing.

use satcc_core::SimTime;

use super::reno::reno_cong_avoid;
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    BETA = ParamSpec::int("beta", 3, 0, 1 << 20).unit("packets").kernel("beta")
        .doc("backlog above which the path is congestive (a constant in tcp_veno.c; exposed)");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "veno",
    summary: "Veno: Reno with a Vegas backlog estimate; random losses cut 1/5, congestive 1/2",
    source: "Fu & Liew, IEEE JSAC 21(2) 2003, §II; Linux net/ipv4/tcp_veno.c",
    params: PARAMS,
    deviations: &[],
    needs_ecn: false,
    build,
};

/// `V_PARAM_SHIFT`: the backlog is kept in 1/2 packets.
const V_PARAM_SHIFT: u32 = 1;
/// `beta` default: 3 packets.
pub const BETA: u32 = param::BETA.default_u32();
/// Linux's "no sample" value of `minrtt`/`basertt`, used in the arithmetic as Linux does.
const NO_RTT: u64 = 0x7fff_ffff;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let beta = param::BETA.u32(params)?;
    Ok(Box::new(Veno::new(beta)))
}

/// Veno's per-connection state (`struct veno`).
#[derive(Clone, Debug)]
pub struct Veno {
    /// `beta` in 1/2 packets.
    beta: u32,
    enabled: bool,
    /// `cntrtt`: RTT samples since init (Linux never resets it between RTTs).
    cnt_rtt: u32,
    /// `minrtt`: min sample since the last `cong_avoid` (µs + 1).
    min_rtt: u64,
    /// `basertt`: min sample ever (µs + 1).
    base_rtt: u64,
    /// `inc`: in the congestive state, grow on every other window.
    inc: bool,
    /// `diff`: backlog estimate in 1/2 packets.
    diff: u64,
}

impl Veno {
    pub fn new(beta: u32) -> Self {
        Veno {
            beta: beta << V_PARAM_SHIFT,
            enabled: true,
            cnt_rtt: 0,
            min_rtt: NO_RTT,
            base_rtt: NO_RTT,
            inc: true,
            diff: 0,
        }
    }

    /// `tcp_veno_init`.
    fn init(&mut self) {
        self.base_rtt = NO_RTT;
        self.inc = true;
        self.enable();
    }

    /// `veno_enable`.
    fn enable(&mut self) {
        self.enabled = true;
        self.min_rtt = NO_RTT;
    }

    fn congestive(&self) -> bool {
        self.diff >= u64::from(self.beta)
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn on_init(&mut self, _now: SimTime, _tcp: &mut TcpState) {
        self.init();
    }

    /// `tcp_veno_ssthresh`: 4/5 of cwnd for a random loss, 1/2 for a congestive one.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        if self.congestive() {
            (tcp.cwnd >> 1).max(2)
        } else {
            ((u64::from(tcp.cwnd) * 4 / 5) as u32).max(2)
        }
    }

    /// `tcp_veno_pkts_acked`.
    fn on_pkts_acked(&mut self, _now: SimTime, _tcp: &mut TcpState, ack: &AckSample) {
        let Some(rtt) = ack.rtt_us else { return };
        let vrtt = rtt + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// `tcp_veno_state`.
    fn on_state(&mut self, _now: SimTime, _tcp: &mut TcpState, new: CaState) {
        if new == CaState::Open {
            self.enable();
        } else {
            self.enabled = false;
        }
    }

    /// `tcp_veno_cwnd_event`: restart from idle.
    fn on_event(&mut self, _now: SimTime, _tcp: &mut TcpState, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init();
        }
    }

    /// `tcp_veno_cong_avoid`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if !self.enabled {
            reno_cong_avoid(tcp, ack.acked_sacked);
            return;
        }
        if !tcp.is_cwnd_limited() {
            return;
        }
        if self.cnt_rtt <= 2 {
            reno_cong_avoid(tcp, ack.acked_sacked);
        } else {
            // Backlog N = cwnd − cwnd·baseRTT/RTT, in 1/2 packets.
            let cwnd = u64::from(tcp.cwnd);
            let target = ((cwnd * self.base_rtt) << V_PARAM_SHIFT) / self.min_rtt.max(1);
            self.diff = (cwnd << V_PARAM_SHIFT).saturating_sub(target);
            let mut acked = ack.acked_sacked;
            let mut grow = true;
            if tcp.in_slow_start() {
                acked = tcp.slow_start(acked);
                grow = acked > 0;
            }
            if grow {
                if !self.congestive() {
                    // Non-congestive: Reno, one packet per RTT.
                    let w = tcp.cwnd;
                    tcp.cong_avoid_ai(w, acked);
                } else if tcp.cwnd_cnt >= tcp.cwnd {
                    // Congestive: one packet every other RTT.
                    if self.inc && tcp.cwnd < tcp.cwnd_clamp {
                        tcp.cwnd += 1;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    tcp.cwnd_cnt = 0;
                } else {
                    tcp.cwnd_cnt += acked;
                }
            }
            tcp.cwnd = tcp.cwnd.clamp(2, tcp.cwnd_clamp.max(2));
        }
        self.min_rtt = NO_RTT;
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("backlog", self.diff as f64 / 2.0),
            ("congestive", f64::from(u8::from(self.congestive()))),
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

    /// An ACK with RTT sample `rtt_us` (pkts_acked, then cong_avoid).
    fn ack(v: &mut Veno, t: &mut TcpState, rtt_us: u64) {
        let a = AckSample {
            rtt_us: Some(rtt_us),
            acked_sacked: 1,
            pkts_acked: 1,
            ..Default::default()
        };
        v.on_pkts_acked(SimTime::ZERO, t, &a);
        t.max_packets_out = t.cwnd;
        v.on_cong_avoid(SimTime::ZERO, t, &a);
    }

    fn warmed(cwnd: u32) -> (Veno, TcpState) {
        let mut v = Veno::new(BETA);
        let mut t = state(cwnd);
        v.on_init(SimTime::ZERO, &mut t);
        for _ in 0..3 {
            ack(&mut v, &mut t, 100_000);
        }
        t.cwnd = cwnd;
        t.cwnd_cnt = 0;
        (v, t)
    }

    #[test]
    fn the_backlog_estimate_is_cwnd_times_queueing_over_rtt() {
        let (mut v, mut t) = warmed(100);
        ack(&mut v, &mut t, 110_000);
        // N = 100·(110001 − 100001)/110001 = 9.09 packets → 18 half-packets.
        let want = (200 - (100 * 100_001 * 2) / 110_001) as u64;
        assert_eq!(v.diff, want);
        assert!(v.congestive());
    }

    #[test]
    fn a_random_loss_cuts_a_fifth_and_a_congestive_one_half() {
        let (mut v, mut t) = warmed(100);
        ack(&mut v, &mut t, 100_500); // N ≈ 0.5 packet
        assert!(!v.congestive());
        assert_eq!(v.ssthresh(SimTime::ZERO, &state(100)), 80);
        ack(&mut v, &mut t, 120_000);
        assert!(v.congestive());
        assert_eq!(v.ssthresh(SimTime::ZERO, &state(100)), 50);
    }

    #[test]
    fn congestive_growth_is_one_packet_every_other_rtt() {
        let (mut v, mut t) = warmed(50);
        let start = t.cwnd;
        for _ in 0..4 * 52 {
            ack(&mut v, &mut t, 150_000);
        }
        // Four RTTs of ACKs: +2 (Reno would give +4).
        assert_eq!(t.cwnd - start, 2);
        let (mut v, mut t) = warmed(50);
        for _ in 0..4 * 52 {
            ack(&mut v, &mut t, 100_000);
        }
        assert_eq!(t.cwnd - start, 4);
    }

    #[test]
    fn an_ack_without_an_rtt_sample_counts_as_congestive_as_in_linux() {
        let (mut v, mut t) = warmed(100);
        t.max_packets_out = t.cwnd;
        v.on_cong_avoid(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                acked_sacked: 1,
                ..Default::default()
            },
        );
        assert!(v.congestive());
    }

    #[test]
    fn outside_open_it_is_reno() {
        let (mut v, mut t) = warmed(20);
        v.on_state(SimTime::ZERO, &mut t, CaState::Disorder);
        for _ in 0..20 {
            ack(&mut v, &mut t, 200_000);
        }
        assert_eq!(t.cwnd, 21);
    }
}
