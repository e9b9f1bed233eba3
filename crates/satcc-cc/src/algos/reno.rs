//! Reno — Linux `tcp_reno_cong_avoid` / `tcp_reno_ssthresh` (net/ipv4/tcp_cong.c).
//!
//! Model: slow start doubles cwnd per RTT (one packet per acked packet, Linux's
//! `tcp_slow_start` with appropriate byte counting in packets) until ssthresh; congestion
//! avoidance adds one packet per cwnd acked packets (`tcp_cong_avoid_ai`); a loss halves.
//! RFC 5681 §3.1; Linux `tcp_cong.c`.
//!
//! | parameter | default | unit | source |
//! |-----------|---------|------|--------|
//! | (none)    |         |      |        |
//!
//! Deviations from Linux: none known.
//! Not implemented: nothing (Reno has no state of its own).

use satcc_core::SimTime;

use crate::info::AlgoInfo;
use crate::{AckSample, CongestionControl, ParamError, Params, TcpState};

pub static INFO: AlgoInfo = AlgoInfo {
    name: "reno",
    summary: "Linux Reno: slow start, +1 packet per RTT, halve on loss",
    source: "RFC 5681 §3.1; Linux net/ipv4/tcp_cong.c (tcp_reno_cong_avoid, tcp_reno_ssthresh)",
    params: &[],
    deviations: &[],
    needs_ecn: false,
    build,
};

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check_known(&[])?;
    Ok(Box::new(Reno))
}

/// Linux Reno has no per-connection state.
#[derive(Clone, Debug, Default)]
pub struct Reno;

/// `tcp_reno_ssthresh`: half the window, at least 2 (RFC 5681 eq. 4 in packets).
pub fn reno_ssthresh(tcp: &TcpState) -> u32 {
    (tcp.cwnd >> 1).max(2)
}

/// `tcp_reno_cong_avoid`, shared by algorithms that fall back to Reno growth.
pub fn reno_cong_avoid(tcp: &mut TcpState, acked: u32) {
    if !tcp.is_cwnd_limited() {
        return;
    }
    let mut acked = acked;
    if tcp.in_slow_start() {
        acked = tcp.slow_start(acked);
        if acked == 0 {
            return;
        }
    }
    let w = tcp.cwnd;
    tcp.cong_avoid_ai(w, acked);
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    /// Neither `in_ack_event` nor `pkts_acked`.
    fn has_ack_hooks(&self) -> bool {
        false
    }
    /// No `min_tso_segs`.
    fn has_min_tso_segs(&self) -> bool {
        false
    }
    /// `tcp_reno_cong_avoid` itself.
    fn reno_cong_avoid(&self) -> bool {
        true
    }
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        reno_ssthresh(tcp)
    }
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        reno_cong_avoid(tcp, ack.acked_sacked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(cwnd: u32, ssthresh: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.ssthresh = ssthresh;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        t
    }

    #[test]
    fn slow_start_adds_one_packet_per_acked_packet_up_to_ssthresh() {
        let mut t = limited(10, 14);
        let ack = AckSample {
            acked_sacked: 6,
            ..Default::default()
        };
        Reno.on_cong_avoid(SimTime::ZERO, &mut t, &ack);
        // 4 packets reach ssthresh; the other 2 go into the AI counter.
        assert_eq!(t.cwnd, 14);
        assert_eq!(t.cwnd_cnt, 2);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_window() {
        let mut t = limited(20, 10);
        for _ in 0..19 {
            Reno.on_cong_avoid(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
        }
        assert_eq!(t.cwnd, 20);
        Reno.on_cong_avoid(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                acked_sacked: 1,
                ..Default::default()
            },
        );
        assert_eq!(t.cwnd, 21);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut t = limited(20, 10);
        t.is_cwnd_limited = false;
        Reno.on_cong_avoid(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                acked_sacked: 40,
                ..Default::default()
            },
        );
        assert_eq!(t.cwnd, 20);
    }

    #[test]
    fn loss_halves_the_window_but_not_below_two() {
        assert_eq!(Reno.ssthresh(SimTime::ZERO, &limited(30, 10)), 15);
        assert_eq!(Reno.ssthresh(SimTime::ZERO, &limited(3, 10)), 2);
    }
}
