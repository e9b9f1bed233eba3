//! NewReno as ns-3 models it — ns-3 `src/internet/model/tcp-congestion-ops.cc` (`TcpNewReno`).
//!
//! Model: "packet counting" growth without appropriate byte counting. Slow start adds one
//! segment per ACK whatever the ACK covers; congestion avoidance adds MSS²/cwnd bytes per ACK
//! (at least one byte), i.e. about one segment per window of ACKs; a loss sets ssthresh to
//! half the bytes in flight. This is the growth law of ns-3's default TCP, kept beside Linux
//! `reno` (which counts acknowledged segments) so that ns-3 results can be reproduced and the
//! two compared: with delayed ACKs NewReno grows half as fast as Linux Reno.
//!
//! Source: RFC 5681 §3.1 (eqs. 2–4, without the RFC 3465 byte counting) and RFC 6582; ns-3
//! `TcpNewReno::SlowStart`, `CongestionAvoidance`, `IncreaseWindow`, `GetSsThresh`.
//!
//! | parameter | default | unit | source |
//! |-----------|---------|------|--------|
//! | (none)    |         |      |        |
//!
//! ns-3 keeps cwnd in bytes; satcc's cwnd is in segments, so this file keeps ns-3's byte
//! window internally (`cwnd_bytes`) and publishes `cwnd = cwnd_bytes / mss`. Whenever the
//! sender changes cwnd itself (recovery, RTO, undo), the byte window restarts from it.
//!
//! Deviations from ns-3:
//! 1. ssthresh is whole segments: ns-3's max(2·MSS, bytes_in_flight/2) may hold half a
//!    segment.
//! 2. On an RTO, ns-3 takes the bytes in flight *before* marking everything lost. The
//!    sender calls `ssthresh()` after marking (as Linux does), so the `Loss` event
//!    recomputes it from packets_out − sacked_out + retrans_out, which also counts segments
//!    marked lost earlier in a recovery episode.
//! 3. The recovery procedure itself (ns-3's classic cwnd = ssthresh + 3 with dupack
//!    inflation, or PRR) is the sender's, not part of this algorithm.
//!
//! Not implemented: nothing of `TcpNewReno`. Like ns-3's TcpNewReno, growth does not check
//! whether the flow is cwnd-limited (Linux `reno` does).

use satcc_core::SimTime;

use crate::info::AlgoInfo;
use crate::{AckSample, CaEvent, CongestionControl, ParamError, Params, TcpState};

pub static INFO: AlgoInfo = AlgoInfo {
    name: "newreno",
    summary: "ns-3 TcpNewReno: +1 segment per ACK in slow start, +MSS^2/cwnd bytes per ACK after (no byte counting)",
    source: "RFC 5681 §3.1 without RFC 3465 ABC, RFC 6582; ns-3 src/internet/model/tcp-congestion-ops.cc (TcpNewReno)",
    params: &[],
    deviations: &[
        "ssthresh in whole segments (ns-3 may keep half a segment)",
        "RTO ssthresh from packets_out - sacked_out + retrans_out (ns-3: bytes in flight before marking lost)",
        "no cwnd-limited check, as ns-3's TcpNewReno",
    ],
    needs_ecn: false,
    build,
};

/// `GetSsThresh`: never below two segments.
const MIN_SSTHRESH: u32 = 2;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check_known(&[])?;
    Ok(Box::new(NewReno::default()))
}

/// ns-3's byte-counted window mirrored over satcc's segment window.
#[derive(Clone, Debug, Default)]
pub struct NewReno {
    /// ns-3 `m_cWnd`, bytes.
    cwnd_bytes: u64,
    /// The `tcp.cwnd` this file last published; a different value means the sender set it.
    published: u32,
}

impl NewReno {
    /// Adopt the sender's cwnd if it changed since we last wrote it.
    fn sync(&mut self, tcp: &TcpState) {
        if tcp.cwnd != self.published || self.cwnd_bytes == 0 {
            self.cwnd_bytes = u64::from(tcp.cwnd) * u64::from(tcp.mss);
            self.published = tcp.cwnd;
        }
    }

    fn publish(&mut self, tcp: &mut TcpState) {
        let segs = (self.cwnd_bytes / u64::from(tcp.mss.max(1))).min(u64::from(tcp.cwnd_clamp));
        tcp.cwnd = segs as u32;
        self.published = tcp.cwnd;
    }

    /// `GetSsThresh(bytesInFlight)` = max(2·MSS, bytesInFlight/2), in segments.
    fn ssthresh_for(in_flight_segs: u32, mss: u32) -> u32 {
        let bytes = u64::from(in_flight_segs) * u64::from(mss) / 2;
        ((bytes / u64::from(mss.max(1))) as u32).max(MIN_SSTHRESH)
    }

    /// cwnd in bytes as ns-3 holds it.
    pub fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    /// Neither `in_ack_event` nor `pkts_acked`.
    fn has_ack_hooks(&self) -> bool {
        false
    }

    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.cwnd_bytes = 0;
        self.sync(tcp);
    }

    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        Self::ssthresh_for(tcp.in_flight(), tcp.mss)
    }

    /// RTO: ns-3 uses the bytes in flight before the timeout marked them lost (dev. 2).
    fn on_event(&mut self, _now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        if ev == CaEvent::Loss {
            let before = (tcp.packets_out + tcp.retrans_out).saturating_sub(tcp.sacked_out);
            tcp.ssthresh = Self::ssthresh_for(before, tcp.mss);
        }
    }

    /// `TcpNewReno::IncreaseWindow`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        let mut segments_acked = ack.acked_sacked;
        if segments_acked == 0 {
            return;
        }
        self.sync(tcp);
        let mss = u64::from(tcp.mss);
        let ssthresh_bytes = u64::from(tcp.ssthresh) * mss;
        if self.cwnd_bytes < ssthresh_bytes {
            // SlowStart: one segment per ACK, whatever it acknowledged (no ABC).
            self.cwnd_bytes += mss;
            segments_acked -= 1;
        }
        if self.cwnd_bytes >= ssthresh_bytes && segments_acked > 0 {
            // CongestionAvoidance: MSS²/cwnd bytes per ACK, at least one byte.
            let adder = (mss * mss / self.cwnd_bytes.max(1)).max(1);
            self.cwnd_bytes += adder;
        }
        self.publish(tcp);
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![("cwnd_bytes", self.cwnd_bytes as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::reno::Reno;
    const MSS: u32 = 1448;
    use crate::INFINITE_SSTHRESH;

    fn conn(cwnd: u32, ssthresh: u32) -> (NewReno, TcpState) {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = ssthresh;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        let mut n = NewReno::default();
        n.on_init(SimTime::ZERO, &mut t);
        (n, t)
    }

    fn ack(n: &mut NewReno, t: &mut TcpState, segs: u32) {
        n.on_cong_avoid(
            SimTime::ZERO,
            t,
            &AckSample {
                acked_sacked: segs,
                pkts_acked: segs,
                ..Default::default()
            },
        );
    }

    #[test]
    fn slow_start_adds_one_segment_per_ack_whatever_it_covers() {
        let (mut n, mut t) = conn(10, INFINITE_SSTHRESH);
        for _ in 0..5 {
            ack(&mut n, &mut t, 2); // delayed ACKs
        }
        assert_eq!(t.cwnd, 15);
        // Linux Reno counts segments: the same ACKs give +10.
        let mut l = TcpState::new(MSS, 10);
        l.max_packets_out = 10;
        for _ in 0..5 {
            Reno.on_cong_avoid(
                SimTime::ZERO,
                &mut l,
                &AckSample {
                    acked_sacked: 2,
                    ..Default::default()
                },
            );
            l.max_packets_out = l.cwnd;
        }
        assert_eq!(l.cwnd, 20);
    }

    #[test]
    fn avoidance_adds_mss_squared_over_cwnd_bytes_per_ack() {
        let (mut n, mut t) = conn(100, 50);
        let mut want = 100 * u64::from(MSS);
        for _ in 0..250 {
            ack(&mut n, &mut t, 1);
            want += (u64::from(MSS) * u64::from(MSS) / want).max(1);
            assert_eq!(n.cwnd_bytes(), want);
        }
        // ≈ one segment per window of ACKs: 250 ACKs from 100 segments ≈ +2.4.
        assert_eq!(t.cwnd, (want / u64::from(MSS)) as u32);
        assert!((t.cwnd as i64 - 102).abs() <= 1, "cwnd {}", t.cwnd);
    }

    #[test]
    fn an_ack_crossing_ssthresh_does_one_slow_start_step_and_one_avoidance_step() {
        let (mut n, mut t) = conn(9, 10);
        ack(&mut n, &mut t, 3);
        let mss = u64::from(MSS);
        assert_eq!(n.cwnd_bytes(), 10 * mss + mss * mss / (10 * mss));
    }

    #[test]
    fn the_sender_setting_cwnd_restarts_the_byte_window() {
        let (mut n, mut t) = conn(100, 50);
        for _ in 0..60 {
            ack(&mut n, &mut t, 1);
        }
        t.cwnd = 40; // end of recovery: cwnd = ssthresh
        t.ssthresh = 40;
        ack(&mut n, &mut t, 1);
        assert_eq!(n.cwnd_bytes(), 40 * u64::from(MSS) + u64::from(MSS) / 40);
    }

    #[test]
    fn loss_sets_ssthresh_to_half_the_segments_in_flight_not_half_cwnd() {
        let (mut n, mut t) = conn(100, 50);
        t.packets_out = 60;
        t.lost_out = 1;
        assert_eq!(n.ssthresh(SimTime::ZERO, &t), 29);
        t.packets_out = 3;
        assert_eq!(n.ssthresh(SimTime::ZERO, &t), 2);
    }

    #[test]
    fn rto_uses_the_flight_before_everything_was_marked_lost() {
        let (mut n, mut t) = conn(100, 50);
        t.packets_out = 80;
        t.lost_out = 80; // the RTO marked all lost
        t.ssthresh = n.ssthresh(SimTime::ZERO, &t);
        assert_eq!(t.ssthresh, 2);
        n.on_event(SimTime::ZERO, &mut t, CaEvent::Loss);
        assert_eq!(t.ssthresh, 40);
    }

    #[test]
    fn a_window_of_acks_in_avoidance_adds_about_one_segment_per_rtt() {
        let (mut n, mut t) = conn(50, 2);
        for _ in 0..20 {
            let w = t.cwnd;
            for _ in 0..w {
                ack(&mut n, &mut t, 1);
            }
        }
        // 20 RTTs: +20 segments, minus the fraction lost to integer division.
        assert!((69..=70).contains(&t.cwnd), "cwnd {}", t.cwnd);
    }
}
