//! Scalable TCP — Linux `net/ipv4/tcp_scalable.c`.
//!
//! Model: multiplicative increase, multiplicative decrease: in congestion avoidance cwnd
//! grows by one packet per min(cwnd, 100) acknowledged packets (≈ +1 % per RTT for large
//! windows, Reno below 100 packets) and a loss removes 1/8 of the window.
//!
//! Source: T. Kelly, "Scalable TCP: improving performance in highspeed wide area networks",
//! ACM CCR 33(2), 2003, §2 (a = 0.01, b = 0.125); Linux `tcp_scalable.c`
//! (`tcp_scalable_cong_avoid`, `tcp_scalable_ssthresh`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Both are compile-time `#define`s in Linux; satcc exposes them.
//!
//! Deviations from Linux: none known.
//! Not implemented: nothing.

use satcc_core::SimTime;

use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    AI_CNT = ParamSpec::int("ai_cnt", 100, 1, 1_000_000).unit("packets")
        .kernel("TCP_SCALABLE_AI_CNT").doc("one packet per min(cwnd, ai_cnt) acked");
    MD_SHIFT = ParamSpec::int("md_shift", 3, 1, 31).unit("log2").kernel("TCP_SCALABLE_MD_SCALE")
        .doc("a loss removes cwnd >> md_shift");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "scalable",
    summary: "Scalable TCP: +1 packet per min(cwnd,100) acked, -1/8 on loss",
    source: "Kelly, ACM CCR 33(2) 2003, §2; Linux net/ipv4/tcp_scalable.c",
    params: PARAMS,
    deviations: &[],
    needs_ecn: false,
    build,
};

/// `TCP_SCALABLE_AI_CNT`: a = 1/100 per ACK.
pub const AI_CNT: u32 = param::AI_CNT.default_u32();
/// `TCP_SCALABLE_MD_SCALE`: b = 1/8.
pub const MD_SHIFT: u32 = param::MD_SHIFT.default_u32();

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let ai_cnt = param::AI_CNT.u32(params)?;
    let md_shift = param::MD_SHIFT.u32(params)?;
    Ok(Box::new(Scalable { ai_cnt, md_shift }))
}

/// Scalable TCP has no per-connection state beyond its two constants.
#[derive(Clone, Debug)]
pub struct Scalable {
    ai_cnt: u32,
    md_shift: u32,
}

impl Default for Scalable {
    fn default() -> Self {
        Scalable {
            ai_cnt: AI_CNT,
            md_shift: MD_SHIFT,
        }
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    /// Neither `in_ack_event` nor `pkts_acked`.
    fn has_ack_hooks(&self) -> bool {
        false
    }

    /// `tcp_scalable_ssthresh`: cwnd − cwnd/8.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        (tcp.cwnd - (tcp.cwnd >> self.md_shift)).max(2)
    }

    /// `tcp_scalable_cong_avoid`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
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
        let w = tcp.cwnd.min(self.ai_cnt);
        tcp.cong_avoid_ai(w, acked);
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

    fn acks(s: &mut Scalable, t: &mut TcpState, n: u32) {
        for _ in 0..n {
            t.max_packets_out = t.cwnd;
            s.on_cong_avoid(
                SimTime::ZERO,
                t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
        }
    }

    #[test]
    fn large_windows_grow_one_percent_per_rtt() {
        let mut s = Scalable::default();
        let mut t = state(5000);
        acks(&mut s, &mut t, 5000);
        assert_eq!(t.cwnd, 5050);
    }

    #[test]
    fn small_windows_grow_like_reno() {
        let mut s = Scalable::default();
        let mut t = state(40);
        acks(&mut s, &mut t, 40);
        assert_eq!(t.cwnd, 41);
    }

    #[test]
    fn loss_removes_an_eighth() {
        let mut s = Scalable::default();
        assert_eq!(s.ssthresh(SimTime::ZERO, &state(800)), 700);
        assert_eq!(s.ssthresh(SimTime::ZERO, &state(2)), 2);
    }

    #[test]
    fn parameters_change_the_rates() {
        use crate::params::ParamValue;
        let p = Params::new()
            .with("ai_cnt", ParamValue::Num(50.0))
            .with("md_shift", ParamValue::Num(1.0));
        let mut s = build(&p).unwrap();
        assert_eq!(s.ssthresh(SimTime::ZERO, &state(800)), 400);
        let mut t = state(5000);
        for _ in 0..5000 {
            t.max_packets_out = t.cwnd;
            s.on_cong_avoid(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
        }
        assert_eq!(t.cwnd, 5100);
    }
}
