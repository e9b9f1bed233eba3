//! Westwood+ — Linux `net/ipv4/tcp_westwood.c`.
//!
//! Model: Reno growth; the sender estimates the bandwidth it gets from the rate of
//! acknowledged bytes, sampled once per RTT (at least 50 ms) and low-pass filtered twice
//! (7/8 old + 1/8 new), and after a loss sets ssthresh (and, at the end of recovery, cwnd)
//! to BWE · RTTmin instead of halving — so random losses on wireless or satellite links do
//! not empty the pipe.
//!
//! Source: S. Mascolo, C. Casetti, M. Gerla, M. Sanadidi, R. Wang, "TCP Westwood: bandwidth
//! estimation for enhanced transport over wireless links", ACM MobiCom 2001, §2–3; L. Grieco,
//! S. Mascolo, "Performance evaluation and comparison of Westwood+, New Reno and Vegas TCP
//! congestion control", ACM CCR 34(2), 2004 (the per-RTT sampling of Westwood+); Linux
//! `tcp_westwood.c` (`westwood_update_window`, `westwood_filter`, `westwood_acked_count`,
//! `tcp_westwood_event`).
//!
//! | parameter | default | unit | source |
//! |-----------|---------|------|--------|
//! | (none)    |         |      |        |
//!
//! What the sender must provide: `on_ack_event` on every ACK with `flags.slow_path` set
//! when the ACK is not a plain in-order cumulative ACK (it carries SACK blocks or does not
//! advance snd_una — Linux's `CA_ACK_SLOWPATH`), after `snd_una` was updated;
//! `on_event(CompleteCwr)` when recovery ends (after cwnd = ssthresh); `on_event(Loss)` on
//! RTO (after `ssthresh()`).
//!
//! Deviations from Linux:
//! 1. Times (the RTT window, RTTmin, the bandwidth in bytes per jiffy) are in jiffies of a
//!    `HZ = 1000` kernel.
//!
//! Not implemented: `get_info`.

use satcc_core::SimTime;

use super::kparams::{CLOCK, HZ};
use super::reno::{reno_cong_avoid, reno_ssthresh};
use crate::info::AlgoInfo;
use crate::{AckEventFlags, AckSample, CaEvent, CongestionControl, ParamError, Params, TcpState};

pub static INFO: AlgoInfo = AlgoInfo {
    name: "westwood",
    summary: "Westwood+: Reno growth; after loss ssthresh = bandwidth estimate x RTTmin",
    source: "Mascolo et al., ACM MobiCom 2001; Grieco & Mascolo, ACM CCR 34(2) 2004; Linux net/ipv4/tcp_westwood.c",
    params: &[],
    deviations: &["times and bandwidth in HZ=1000 jiffies"],
    needs_ecn: false,
    build,
};

/// `TCP_WESTWOOD_RTT_MIN`: the bandwidth sampling window is at least 50 ms.
const RTT_MIN_JIFFIES: u64 = HZ / 20;
/// `TCP_WESTWOOD_INIT_RTT`: RTT before the first sample ("maybe too conservative").
const INIT_RTT_JIFFIES: u64 = 20 * HZ;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check_known(&[])?;
    Ok(Box::new(Westwood::default()))
}

/// Westwood+'s per-connection state (`struct westwood`).
#[derive(Clone, Debug)]
pub struct Westwood {
    /// `bw_ns_est`: first filter stage, bytes per jiffy.
    bw_ns_est: u64,
    /// `bw_est`: the bandwidth estimate, bytes per jiffy.
    bw_est: u64,
    /// `rtt_win_sx`: start of the current sampling window (jiffies).
    rtt_win_sx: u64,
    /// `bk`: bytes acknowledged in the current window.
    bk: u64,
    /// `snd_una` at the last ACK.
    snd_una: u64,
    /// `cumul_ack`, `accounted`: dupack/delayed-ACK bookkeeping (bytes).
    cumul_ack: u64,
    accounted: u64,
    /// `rtt`, `rtt_min`: jiffies.
    rtt: u64,
    rtt_min: u64,
    first_ack: bool,
    reset_rtt_min: bool,
}

impl Default for Westwood {
    fn default() -> Self {
        Westwood {
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: INIT_RTT_JIFFIES,
            rtt_min: INIT_RTT_JIFFIES,
            first_ack: true,
            reset_rtt_min: true,
        }
    }
}

/// `westwood_do_filter`: 7/8 old + 1/8 new.
fn filter(a: u64, b: u64) -> u64 {
    (7 * a + b) >> 3
}

impl Westwood {
    /// Bandwidth estimate, bytes per second.
    pub fn bw_bytes_per_sec(&self) -> u64 {
        self.bw_est * HZ
    }

    /// `westwood_filter`.
    fn filter_sample(&mut self, delta: u64) {
        let sample = self.bk / delta.max(1);
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            // Empty filter: take the first sample as it is.
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = filter(self.bw_ns_est, sample);
            self.bw_est = filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// `westwood_update_window`: close the sampling window after max(RTT, 50 ms).
    fn update_window(&mut self, tcp: &TcpState, now: SimTime) {
        let j = CLOCK.jiffies(now);
        let delta = j.saturating_sub(self.rtt_win_sx);
        if self.first_ack {
            self.snd_una = tcp.snd_una;
            self.first_ack = false;
        }
        if self.rtt > 0 && delta > self.rtt.max(RTT_MIN_JIFFIES) {
            self.filter_sample(delta);
            self.bk = 0;
            self.rtt_win_sx = j;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// `westwood_acked_count`: bytes this ACK stands for, spreading dupacks over the
    /// cumulative ACK that follows them.
    fn acked_count(&mut self, tcp: &TcpState) -> u64 {
        let mss = u64::from(tcp.mss);
        self.cumul_ack = tcp.snd_una - self.snd_una;
        if self.cumul_ack == 0 {
            // A dupack: one segment left the network.
            self.accounted += mss;
            self.cumul_ack = mss;
        }
        if self.cumul_ack > mss {
            // Partial or delayed ACK: subtract what the dupacks already counted.
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = tcp.snd_una;
        self.cumul_ack
    }

    /// `tcp_westwood_bw_rttmin`: BWE·RTTmin in packets, at least 2.
    fn bw_rttmin(&self, tcp: &TcpState) -> u32 {
        ((self.bw_est * self.rtt_min) / u64::from(tcp.mss.max(1))).clamp(2, u64::from(u32::MAX))
            as u32
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    /// `tcp_westwood_init`.
    fn on_init(&mut self, now: SimTime, tcp: &mut TcpState) {
        *self = Westwood::default();
        self.rtt_win_sx = CLOCK.jiffies(now);
        self.snd_una = tcp.snd_una;
    }

    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        reno_ssthresh(tcp)
    }

    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        reno_cong_avoid(tcp, ack.acked_sacked);
    }
    /// `tcp_reno_cong_avoid` itself.
    fn reno_cong_avoid(&self) -> bool {
        true
    }

    /// `tcp_westwood_pkts_acked`: the latest RTT sample.
    fn on_pkts_acked(&mut self, _now: SimTime, _tcp: &mut TcpState, ack: &AckSample) {
        if let Some(r) = ack.rtt_us.filter(|&r| r > 0) {
            self.rtt = CLOCK.usecs_to_jiffies(r);
        }
    }

    /// `tcp_westwood_ack`: count acknowledged bytes into the current window.
    fn on_ack_event(&mut self, now: SimTime, tcp: &mut TcpState, flags: AckEventFlags) {
        self.update_window(tcp, now);
        if flags.slow_path {
            self.bk += self.acked_count(tcp);
        } else {
            // westwood_fast_bw: an in-order cumulative ACK.
            self.bk += tcp.snd_una - self.snd_una;
            self.snd_una = tcp.snd_una;
        }
        self.update_rtt_min();
    }

    /// `tcp_westwood_event`.
    fn on_event(&mut self, _now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        match ev {
            CaEvent::CompleteCwr => {
                tcp.ssthresh = self.bw_rttmin(tcp);
                tcp.cwnd = tcp.ssthresh;
            }
            CaEvent::Loss => {
                tcp.ssthresh = self.bw_rttmin(tcp);
                // Take RTTmin afresh from the next ACK.
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("bw_bytes_per_s", self.bw_bytes_per_sec() as f64),
            ("rtt_min_ms", self.rtt_min as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u32 = 1448;
    use satcc_core::SimDuration;

    fn state() -> TcpState {
        let mut t = TcpState::new(MSS, 10);
        t.ssthresh = 2;
        t
    }

    /// ACK one segment every `gap_us` for `secs`, each with RTT `rtt_us` (fast path).
    fn stream(
        w: &mut Westwood,
        t: &mut TcpState,
        now: &mut SimTime,
        gap_us: u64,
        rtt_us: u64,
        secs: u64,
    ) {
        let n = secs * 1_000_000 / gap_us;
        for _ in 0..n {
            *now += SimDuration::from_micros(gap_us);
            t.snd_una += u64::from(MSS);
            let a = AckSample {
                rtt_us: Some(rtt_us),
                pkts_acked: 1,
                acked_sacked: 1,
                ..Default::default()
            };
            w.on_pkts_acked(*now, t, &a);
            w.on_ack_event(*now, t, AckEventFlags::default());
        }
    }

    #[test]
    fn the_estimate_converges_to_the_ack_rate() {
        // 1000 segments/s of 1448 B = 1.448 MB/s.
        let mut w = Westwood::default();
        let mut t = state();
        let mut now = SimTime::ZERO;
        w.on_init(now, &mut t);
        stream(&mut w, &mut t, &mut now, 1000, 100_000, 20);
        let bw = w.bw_bytes_per_sec() as f64;
        assert!((bw / 1_448_000.0 - 1.0).abs() < 0.02, "bw {bw}");
        assert_eq!(w.rtt_min, 100);
    }

    #[test]
    fn after_recovery_cwnd_is_bandwidth_times_min_rtt() {
        let mut w = Westwood::default();
        let mut t = state();
        let mut now = SimTime::ZERO;
        w.on_init(now, &mut t);
        // BDP = 1000 pkt/s · 100 ms = 100 packets.
        stream(&mut w, &mut t, &mut now, 1000, 100_000, 20);
        t.cwnd = 140;
        t.ssthresh = w.ssthresh(now, &t);
        assert_eq!(t.ssthresh, 70, "Reno halving first");
        t.cwnd = t.ssthresh;
        w.on_event(now, &mut t, CaEvent::CompleteCwr);
        assert!((98..=101).contains(&t.cwnd), "cwnd {}", t.cwnd);
        assert_eq!(t.ssthresh, t.cwnd);
    }

    #[test]
    fn rto_sets_ssthresh_to_the_pipe_and_forgets_the_min_rtt() {
        let mut w = Westwood::default();
        let mut t = state();
        let mut now = SimTime::ZERO;
        w.on_init(now, &mut t);
        stream(&mut w, &mut t, &mut now, 500, 40_000, 10);
        w.on_event(now, &mut t, CaEvent::Loss);
        // 2000 pkt/s · 40 ms = 80 packets.
        assert!((78..=81).contains(&t.ssthresh), "ssthresh {}", t.ssthresh);
        stream(&mut w, &mut t, &mut now, 500, 60_000, 1);
        assert_eq!(w.rtt_min, 60);
    }

    #[test]
    fn dupacks_count_a_segment_each_and_the_next_cumulative_ack_is_reduced() {
        let mut w = Westwood::default();
        let mut t = state();
        w.on_init(SimTime::ZERO, &mut t);
        w.first_ack = false;
        let slow = AckEventFlags {
            slow_path: true,
            ..Default::default()
        };
        for _ in 0..3 {
            w.on_ack_event(SimTime::ZERO, &mut t, slow);
        }
        assert_eq!(w.bk, 3 * u64::from(MSS));
        // The ACK covering 4 segments after the 3 dupacks adds only 1 more.
        t.snd_una += 4 * u64::from(MSS);
        w.on_ack_event(SimTime::ZERO, &mut t, slow);
        assert_eq!(w.bk, 4 * u64::from(MSS));
    }
}
