//! HighSpeed TCP — Linux `net/ipv4/tcp_highspeed.c`.
//!
//! Model: Reno below 38 packets; above, the per-RTT increase a(w) grows and the decrease
//! factor b(w) shrinks with the window, from RFC 3649's response function, so that a flow
//! can hold 83 000 packets at a loss rate of 10⁻⁷. Linux uses RFC 3649 Appendix B's table:
//! row i covers windows up to `cwnd_i`, adds i + 1 packets per RTT and removes
//! `md_i`/256 of the window on loss.
//!
//! Source: S. Floyd, RFC 3649 §5 and Appendix B; Linux `tcp_highspeed.c`
//! (`hstcp_cong_avoid`, `hstcp_ssthresh`, `hstcp_aimd_vals`).
//!
//! | parameter | default | unit | source |
//! |-----------|---------|------|--------|
//! | (none)    |         |      | the AIMD table is fixed (RFC 3649 Appendix B) |
//!
//! Deviations from Linux: none known. As in Linux, avoidance adds a(w) to the counter once
//! per ACK, not per acknowledged packet (with delayed ACKs the increase per RTT halves).
//! Not implemented: nothing.

use satcc_core::SimTime;

use crate::info::AlgoInfo;
use crate::{AckSample, CongestionControl, ParamError, Params, TcpState};

pub static INFO: AlgoInfo = AlgoInfo {
    name: "highspeed",
    summary: "HighSpeed TCP (RFC 3649): a(w)/cwnd per ACK and a b(w) decrease from the RFC's table",
    source: "RFC 3649 §5 and Appendix B; Linux net/ipv4/tcp_highspeed.c",
    params: &[],
    deviations: &[],
    needs_ecn: false,
    build,
};

/// `hstcp_aimd_vals`: (upper cwnd of the row, decrease ·256). RFC 3649 Appendix B.
const AIMD: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];
/// `hstcp_init`: cwnd clamp so that cwnd·md fits in 32 bits.
const CWND_CLAMP_MAX: u32 = u32::MAX / 128;
/// Decrease factors are in 1/256.
const MD_SHIFT: u32 = 8;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check_known(&[])?;
    Ok(Box::new(HighSpeed::default()))
}

/// HighSpeed TCP's state: the current row of the AIMD table (`struct hstcp`).
#[derive(Clone, Debug, Default)]
pub struct HighSpeed {
    ai: usize,
}

impl HighSpeed {
    /// Move `ai` so that AIMD[ai−1].cwnd < cwnd ≤ AIMD[ai].cwnd (or the last row).
    fn update_row(&mut self, cwnd: u32) {
        if cwnd > AIMD[self.ai].0 {
            while cwnd > AIMD[self.ai].0 && self.ai < AIMD.len() - 1 {
                self.ai += 1;
            }
        } else {
            while self.ai > 0 && cwnd <= AIMD[self.ai - 1].0 {
                self.ai -= 1;
            }
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    /// Neither `in_ack_event` nor `pkts_acked`.
    fn has_ack_hooks(&self) -> bool {
        false
    }

    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.ai = 0;
        tcp.cwnd_clamp = tcp.cwnd_clamp.min(CWND_CLAMP_MAX);
    }

    /// `hstcp_ssthresh`: cwnd·(1 − b(w)).
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        let cut = (u64::from(tcp.cwnd) * u64::from(AIMD[self.ai].1)) >> MD_SHIFT;
        (tcp.cwnd - cut as u32).max(2)
    }

    /// `hstcp_cong_avoid`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if !tcp.is_cwnd_limited() {
            return;
        }
        if tcp.in_slow_start() {
            tcp.slow_start(ack.acked_sacked);
            return;
        }
        self.update_row(tcp.cwnd);
        // cwnd += a(w)/cwnd per ACK, a(w) = ai + 1.
        if tcp.cwnd < tcp.cwnd_clamp {
            tcp.cwnd_cnt += self.ai as u32 + 1;
            if tcp.cwnd_cnt >= tcp.cwnd {
                tcp.cwnd_cnt -= tcp.cwnd;
                tcp.cwnd += 1;
            }
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("a", self.ai as f64 + 1.0),
            ("b", f64::from(AIMD[self.ai].1) / 256.0),
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
        t
    }

    /// RFC 3649 §5: b(w) and a(w) between Low_Window 38 and High_Window 83000 (p = 1e-7).
    fn rfc_b(w: f64) -> f64 {
        (0.1 - 0.5) * (w.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln()) + 0.5
    }
    fn rfc_a(w: f64) -> f64 {
        let p = 0.078 / w.powf(1.2);
        w * w * 2.0 * rfc_b(w) * p / (2.0 - rfc_b(w))
    }

    #[test]
    fn the_table_matches_the_rfc_response_function() {
        for (i, &(w, md)) in AIMD.iter().enumerate() {
            let w = f64::from(w);
            assert!((f64::from(md) / 256.0 - rfc_b(w)).abs() < 0.005, "b({w})");
            assert!((rfc_a(w) - (i as f64 + 1.0)).abs() < 0.06, "a({w})");
        }
    }

    #[test]
    fn one_rtt_of_acks_adds_a_of_w_packets() {
        for (w, want_a) in [
            (30u32, 1u32),
            (100, 2),
            (1000, 8),
            (10_000, 30),
            (100_000, 72),
        ] {
            let mut h = HighSpeed::default();
            let mut t = state(w);
            h.on_init(SimTime::ZERO, &mut t);
            for _ in 0..w {
                t.max_packets_out = t.cwnd;
                h.on_cong_avoid(
                    SimTime::ZERO,
                    &mut t,
                    &AckSample {
                        acked_sacked: 1,
                        ..Default::default()
                    },
                );
            }
            // a(w)/cwnd per ACK over ~cwnd ACKs (cwnd grows meanwhile: within one packet).
            assert!(
                t.cwnd - w >= want_a - 1 && t.cwnd - w <= want_a,
                "w {w}: +{}",
                t.cwnd - w
            );
        }
    }

    #[test]
    fn loss_removes_b_of_w() {
        for (w, md) in [(30u32, 128u32), (1000, 83), (50_000, 32), (1_000_000, 24)] {
            let mut h = HighSpeed::default();
            h.update_row(w);
            let want = w - ((u64::from(w) * u64::from(md)) >> 8) as u32;
            assert_eq!(h.ssthresh(SimTime::ZERO, &state(w)), want, "w {w}");
        }
    }

    #[test]
    fn the_row_follows_cwnd_down_after_a_loss() {
        let mut h = HighSpeed::default();
        h.update_row(5000);
        assert_eq!(AIMD[h.ai].0, 5036);
        h.update_row(100);
        assert_eq!(AIMD[h.ai].0, 118);
    }
}
