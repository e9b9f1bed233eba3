//! TCP-LP (Low Priority) — Linux `net/ipv4/tcp_lp.c`.
//!
//! Model: a scavenger that uses only spare capacity. It tracks the one-way delay (OWD) from
//! TCP timestamps — the receiver's TSval against the echoed TSecr, correcting for the
//! receiver's clock rate — keeping its minimum, maximum and a smoothed value (7/8 old).
//! When the smoothed OWD rises above min + 15 % of (max − min), it takes that as early
//! congestion: halve cwnd, and if this happens again within an "inference time" (3 × the
//! time since the echoed timestamp, ≈ 3 RTT) of the previous cut, drop cwnd to 1. No growth
//! within the inference time after a cut; otherwise Reno.
//!
//! ```text
//!                 sOWD > threshold                     sOWD > threshold again
//!  ┌────────────┐ ────────────────► ┌──────────────────┐ ──────────────────► cwnd = 1
//!  │ Reno growth│   cwnd /= 2       │ inference window │   (restarts the window)
//!  └────────────┘ ◄──────────────── │ no growth, 3·RTT │
//!                  window expires   └──────────────────┘
//! ```
//!
//! Source: A. Kuzmanovic, E. W. Knightly, "TCP-LP: a distributed algorithm for low priority
//! data transfer", IEEE INFOCOM 2003, §3–4; Linux `tcp_lp.c` (`tcp_lp_remote_hz_estimator`,
//! `tcp_lp_owd_calculator`, `tcp_lp_rtt_sample`, `tcp_lp_pkts_acked`).
//!
//! | parameter | default | unit | source |
//! |-----------|---------|------|--------|
//! | (none)    |         |      | constants of `tcp_lp.c` (15 % threshold, 3× inference) |
//!
//! What the sender must provide: `tcp.rcv_tsval` / `tcp.rcv_tsecr` from every ACK's
//! timestamp option before `on_pkts_acked` (Linux `tp->rx_opt`), with the sender's TSval
//! clock in milliseconds.
//!
//! Deviations from Linux:
//! 1. Without timestamps (`rcv_tsval` = `rcv_tsecr` = 0) Linux's LP never validates its
//!    OWD and is plain Reno. satcc then derives the pair from the ACK's RTT sample (TSval =
//!    now, TSecr = now − RTT, both in ms), so the delay signal is the RTT; with the
//!    simulator's timestamps the kernel's path is used unchanged.
//!
//! The kernel's 32-bit wrapping arithmetic is reproduced on purpose: the min/max OWD start
//! at 0xffffffff/0 and the threshold test relies on their wrap-around before samples exist,
//! and the remote-HZ estimate is an integer (a remote clock estimated above 1000 Hz makes
//! `1000 / remote_hz` zero, as in Linux).
//!
//! Not implemented: nothing of `tcp_lp.c`.

use satcc_core::SimTime;

use super::reno::{reno_cong_avoid, reno_ssthresh};
use crate::info::AlgoInfo;
use crate::{AckSample, CongestionControl, ParamError, Params, TcpState};

pub static INFO: AlgoInfo = AlgoInfo {
    name: "lp",
    summary: "TCP-LP: low-priority scavenger, backs off on one-way-delay rise (halve, then 1)",
    source: "Kuzmanovic & Knightly, IEEE INFOCOM 2003, §3-4; Linux net/ipv4/tcp_lp.c",
    params: &[],
    deviations: &[
        "without TCP timestamps the RTT sample stands in for the one-way delay (Linux: plain Reno)",
    ],
    needs_ecn: false,
    build,
};

/// `TCP_TS_HZ`: the sender's timestamp clock (ms).
const TS_HZ: u32 = 1000;
/// `LP_RESOL`: OWD resolution (= `TCP_TS_HZ`).
const LP_RESOL: u32 = TS_HZ;
/// Threshold: min + 15 % of (max − min) (`tcp_lp_pkts_acked`).
const THRESHOLD_PERCENT: u32 = 15;
/// Inference time: 3 × (now − TSecr).
const INFERENCE_MULT: u32 = 3;

const LP_VALID_RHZ: u32 = 1 << 0;
const LP_VALID_OWD: u32 = 1 << 1;
const LP_WITHIN_THR: u32 = 1 << 3;
const LP_WITHIN_INF: u32 = 1 << 4;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check_known(&[])?;
    Ok(Box::new(Lp::default()))
}

/// LP's per-connection state (`struct lp`), kept in the kernel's 32-bit units.
#[derive(Clone, Debug)]
pub struct Lp {
    flag: u32,
    /// `sowd`: smoothed OWD · 8.
    sowd: u32,
    owd_min: u32,
    owd_max: u32,
    owd_max_rsv: u32,
    remote_hz: u32,
    remote_ref_time: u32,
    local_ref_time: u32,
    /// `last_drop`: ms timestamp of the last cut (0 = none).
    last_drop: u32,
    inference: u32,
    /// Timestamps synthesised from RTT samples when the connection has none (dev. 1).
    synth: (u32, u32),
}

impl Default for Lp {
    fn default() -> Self {
        Lp {
            flag: 0,
            sowd: 0,
            owd_min: u32::MAX,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
            synth: (0, 0),
        }
    }
}

/// `tcp_time_stamp`: milliseconds, wrapping.
fn ts_now(now: SimTime) -> u32 {
    (now.as_nanos() / 1_000_000) as u32
}

impl Lp {
    /// (TSval, TSecr) of the last ACK: the connection's, or synthesised from RTT (dev. 1).
    fn timestamps(&mut self, tcp: &TcpState, ack: &AckSample, now: SimTime) -> (u32, u32) {
        if tcp.rcv_tsval != 0 || tcp.rcv_tsecr != 0 {
            return (tcp.rcv_tsval, tcp.rcv_tsecr);
        }
        if let Some(rtt) = ack.rtt_us {
            let n = ts_now(now);
            self.synth = (n, n.wrapping_sub((rtt / 1000) as u32));
        }
        self.synth
    }

    /// `tcp_lp_remote_hz_estimator`: 63/64 old + 1/64 new, in Hz.
    fn remote_hz_estimator(&mut self, tsval: u32, tsecr: u32) -> u32 {
        let mut rhz: i64 = i64::from(self.remote_hz) << 6;
        if self.remote_ref_time != 0
            && self.local_ref_time != 0
            && tsval != self.remote_ref_time
            && tsecr != self.local_ref_time
        {
            // Unsigned 32-bit arithmetic, as in the kernel.
            let dv = tsval.wrapping_sub(self.remote_ref_time);
            let de = tsecr.wrapping_sub(self.local_ref_time);
            let m = i64::from(TS_HZ.wrapping_mul(dv) / de);
            if rhz > 0 {
                rhz += m - (rhz >> 6);
            } else {
                rhz = m << 6;
            }
        }
        if (rhz >> 6) > 0 {
            self.flag |= LP_VALID_RHZ;
        } else {
            self.flag &= !LP_VALID_RHZ;
        }
        self.remote_ref_time = tsval;
        self.local_ref_time = tsecr;
        (rhz >> 6) as u32
    }

    /// `tcp_lp_owd_calculator`: relative OWD in ms.
    fn owd_calculator(&mut self, tsval: u32, tsecr: u32) -> i64 {
        self.remote_hz = self.remote_hz_estimator(tsval, tsecr);
        let mut owd: i64 = 0;
        if self.flag & LP_VALID_RHZ != 0 {
            let remote = tsval.wrapping_mul(LP_RESOL / self.remote_hz);
            let local = tsecr.wrapping_mul(LP_RESOL / TS_HZ);
            owd = i64::from(remote.wrapping_sub(local));
        }
        if owd > 0 {
            self.flag |= LP_VALID_OWD;
        } else {
            self.flag &= !LP_VALID_OWD;
        }
        owd
    }

    /// `tcp_lp_rtt_sample`: min/max OWD and the smoothed OWD.
    fn rtt_sample(&mut self, tsval: u32, tsecr: u32) {
        let mut mowd = self.owd_calculator(tsval, tsecr);
        if self.flag & LP_VALID_RHZ == 0 || self.flag & LP_VALID_OWD == 0 {
            return;
        }
        if mowd < i64::from(self.owd_min) {
            self.owd_min = mowd as u32;
        }
        // Forget the largest maximum: keep the one below it.
        if mowd > i64::from(self.owd_max) {
            if mowd > i64::from(self.owd_max_rsv) {
                self.owd_max = if self.owd_max_rsv == 0 {
                    mowd as u32
                } else {
                    self.owd_max_rsv
                };
                self.owd_max_rsv = mowd as u32;
            } else {
                self.owd_max = mowd as u32;
            }
        }
        if self.sowd != 0 {
            mowd -= i64::from(self.sowd >> 3);
            self.sowd = (i64::from(self.sowd) + mowd) as u32;
        } else {
            self.sowd = (mowd << 3) as u32;
        }
    }
}

impl CongestionControl for Lp {
    fn name(&self) -> &'static str {
        "lp"
    }

    fn on_init(&mut self, _now: SimTime, _tcp: &mut TcpState) {
        *self = Lp::default();
    }

    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        reno_ssthresh(tcp)
    }

    /// `tcp_lp_cong_avoid`: Reno, except within the inference time after a cut.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        if self.flag & LP_WITHIN_INF == 0 {
            reno_cong_avoid(tcp, ack.acked_sacked);
        }
    }

    /// `tcp_lp_pkts_acked`: early congestion detection and the cuts.
    fn on_pkts_acked(&mut self, now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        let now_ts = ts_now(now);
        let (tsval, tsecr) = self.timestamps(tcp, ack, now);
        if ack.rtt_us.is_some_and(|r| r > 0) {
            self.rtt_sample(tsval, tsecr);
        }
        // Inference time: 3 × the age of the echoed timestamp.
        let delta = now_ts.wrapping_sub(tsecr);
        if (delta as i32) > 0 {
            self.inference = INFERENCE_MULT.wrapping_mul(delta);
        }
        if self.last_drop != 0 && now_ts.wrapping_sub(self.last_drop) < self.inference {
            self.flag |= LP_WITHIN_INF;
        } else {
            self.flag &= !LP_WITHIN_INF;
        }
        // Within threshold: sOWD < min + 15 % (max − min), in wrapping u32 as Linux.
        let span = self.owd_max.wrapping_sub(self.owd_min);
        let threshold = self
            .owd_min
            .wrapping_add(THRESHOLD_PERCENT.wrapping_mul(span) / 100);
        if (self.sowd >> 3) < threshold {
            self.flag |= LP_WITHIN_THR;
            return;
        }
        self.flag &= !LP_WITHIN_THR;
        // Re-centre min/max around the current sOWD (Linux's "FIXME" heuristic).
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        tcp.cwnd = if self.flag & LP_WITHIN_INF != 0 {
            1
        } else {
            (tcp.cwnd >> 1).max(1)
        };
        self.last_drop = now_ts;
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("sowd_ms", f64::from(self.sowd) / 8.0),
            ("owd_min_ms", f64::from(self.owd_min)),
            ("owd_max_ms", f64::from(self.owd_max)),
            ("remote_hz", f64::from(self.remote_hz)),
            (
                "within_inference",
                f64::from(u8::from(self.flag & LP_WITHIN_INF != 0)),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u32 = 1448;
    use satcc_core::SimDuration;

    fn state(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = 2;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        t
    }

    /// One ACK at `now_ms` for a segment sent at `sent_ms`, whose one-way (forward) delay
    /// was `owd_ms`; the receiver's clock runs at `remote_hz` from `origin` ticks.
    fn ack_from(
        lp: &mut Lp,
        t: &mut TcpState,
        sent_ms: u64,
        owd_ms: u64,
        now_ms: u64,
        remote_hz: u64,
        origin: u64,
    ) {
        t.rcv_tsecr = sent_ms as u32;
        t.rcv_tsval = (origin + (sent_ms + owd_ms) * remote_hz / 1000) as u32;
        let now = SimTime::ZERO + SimDuration::from_millis(now_ms);
        let a = AckSample {
            rtt_us: Some((now_ms - sent_ms) * 1000),
            pkts_acked: 1,
            acked_sacked: 1,
            ..Default::default()
        };
        lp.on_pkts_acked(now, t, &a);
        t.max_packets_out = t.cwnd;
        lp.on_cong_avoid(now, t, &a);
    }

    /// As `ack_from` with the receiver's 1000 Hz clock synchronised to the sender's.
    fn ack(lp: &mut Lp, t: &mut TcpState, sent_ms: u64, owd_ms: u64, now_ms: u64) {
        ack_from(lp, t, sent_ms, owd_ms, now_ms, 1000, 0);
    }

    #[test]
    fn the_remote_clock_rate_is_estimated() {
        // ACKs 20 ms apart: whole ticks of every clock below. (Linux keeps only the integer
        // estimate between ACKs, so with fractional tick deltas the EWMA is biased low.)
        for hz in [1000u64, 500, 250, 100] {
            let mut lp = Lp::default();
            let mut t = state(10);
            for i in 1..400u64 {
                ack_from(&mut lp, &mut t, 20 * i, 50, 20 * i + 100, hz, 1_000_000);
            }
            assert_eq!(u64::from(lp.remote_hz), hz);
        }
    }

    #[test]
    fn a_stable_delay_stays_within_threshold_and_grows_like_reno() {
        let mut lp = Lp::default();
        let mut t = state(20);
        for i in 1..=200u64 {
            ack(&mut lp, &mut t, 10 * i, 50, 10 * i + 100);
        }
        assert_ne!(lp.flag & LP_WITHIN_THR, 0);
        assert!(t.cwnd > 20, "cwnd {}", t.cwnd);
    }

    #[test]
    fn a_delay_rise_halves_then_a_second_within_inference_drops_to_one() {
        let mut lp = Lp::default();
        let mut t = state(100);
        let mut ms = 0;
        // ACKs every 20 ms. A steady start (Linux takes its first remote-HZ estimate from
        // a single pair of ACKs), then a queue that fills and drains between 50 and 100 ms,
        // 1 ms per ACK: gentle enough for the integer remote-HZ estimate to stay within
        // (500, 1000] Hz, where 1000/remote_hz = 1 as Linux's OWD formula needs.
        for i in 1..=320u64 {
            let phase = i.saturating_sub(20) % 100;
            let owd = 50 + if phase < 50 { phase } else { 100 - phase };
            ms = 20 * i;
            ack(&mut lp, &mut t, ms, owd, ms + 2 * owd);
        }
        t.cwnd = 100;
        lp.flag &= !LP_WITHIN_INF;
        lp.last_drop = 0;
        // A new queue builds: the smoothed OWD passes min + 15 % of the range.
        let mut cuts = Vec::new();
        for k in 1..=100u64 {
            let sent = ms + 20 * k;
            let owd = 50 + k;
            let before = t.cwnd;
            ack(&mut lp, &mut t, sent, owd, sent + 2 * owd);
            if t.cwnd < before {
                cuts.push((k, before, t.cwnd));
            }
        }
        assert!(!cuts.is_empty(), "no reaction to the delay rise");
        let (_, before, after) = cuts[0];
        assert_eq!(after, before / 2, "first cut halves: {cuts:?}");
        assert!(
            cuts.iter().skip(1).any(|&(_, _, c)| c == 1),
            "a second cut inside inference goes to 1: {cuts:?}"
        );
    }

    #[test]
    fn no_growth_within_the_inference_time() {
        let mut lp = Lp::default();
        let mut t = state(40);
        lp.flag |= LP_WITHIN_INF;
        t.max_packets_out = 40;
        for _ in 0..40 {
            lp.on_cong_avoid(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
        }
        assert_eq!(t.cwnd, 40);
    }

    #[test]
    fn without_timestamps_the_rtt_stands_in_for_the_one_way_delay() {
        let mut lp = Lp::default();
        let mut t = state(50);
        for i in 1..=100u64 {
            let now = SimTime::ZERO + SimDuration::from_millis(10 * i + 100);
            let a = AckSample {
                rtt_us: Some(100_000),
                pkts_acked: 1,
                acked_sacked: 1,
                ..Default::default()
            };
            lp.on_pkts_acked(now, &mut t, &a);
        }
        assert_eq!(lp.remote_hz, 1000);
        assert_eq!(lp.sowd >> 3, 100);
    }
}
