//! Hybla — Linux `net/ipv4/tcp_hybla.c`.
//!
//! Model: remove the RTT bias of Reno by making a flow with round-trip time RTT grow as fast
//! as a reference flow with RTT0. With ρ = max(RTT / RTT0, 1), each ACK adds 2^ρ − 1 packets
//! in slow start and ρ² / cwnd packets in congestion avoidance; loss halves the window as
//! Reno does. Linux takes RTT from the smoothed RTT, re-evaluated only when srtt reaches a
//! new minimum, and keeps the sub-packet part of each increment in 1/128 packet units.
//!
//! Source: C. Caini, R. Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
//! networks", Int. J. Satell. Commun. Netw. 22(5), 2004, §3 (eqs. 5–6); Linux
//! `tcp_hybla.c` (`hybla_recalc_param`, `hybla_cong_avoid`, `hybla_init`, `hybla_fraction`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! Fixed-point layout, as in the kernel: `rho_3ls` = ρ·8 (3 fractional bits), `rho2_7ls` =
//! ρ²·128 (7 fractional bits), `cwnd_cents` = fractional packets ·128.
//!
//! Deviations from Linux:
//! 1. If `on_init` runs before any RTT sample (srtt = 0), Linux would record a minimum srtt
//!    of 0 and never recompute ρ (ρ stays 1 for the whole connection — the failure mode of
//!    ns-3's TcpHybla). Here the minimum is left unset and cwnd is left at its initial
//!    value, so the first real srtt sets ρ. With srtt known at init (as Linux has it after
//!    the handshake) behaviour is identical.
//! 2. srtt arrives unshifted (µs), so ρ·8 is computed as `srtt_us·8 / rtt0_us` instead of
//!    Linux's `srtt_us(<<3) / rtt0_us`: the kernel's 3 fractional bits of srtt are lost,
//!    a difference below 1 µs of RTT.
//! 3. ρ²·128 is computed in 64 bits; Linux's u32 wraps for srtt above ~145 s with
//!    rtt0 = 25 ms.
//! 4. `rtt0` may be fractional (it is converted to whole µs); Linux takes whole ms.
//!
//! Not implemented: nothing of `tcp_hybla.c`. Note that, as in Linux, the increments are per
//! ACK, not per acknowledged segment: with delayed ACKs Hybla grows half as fast as the
//! paper's per-segment model.

use satcc_core::SimTime;

use super::reno::{reno_cong_avoid, reno_ssthresh};
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{AckSample, CaState, CongestionControl, ParamError, Params, TcpState};

declare_params! {
    RTT0 = ParamSpec::number("rtt0", 25.0, 0.001, 100_000.0).unit("ms").kernel("rtt0")
        .bpf("HYBLA_RTT0_US").scale(1000.0, 1)
        .doc("reference RTT; rho = max(srtt/rtt0, 1); kept in whole µs (ns-3 uses 50 ms)");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "hybla",
    summary:
        "Hybla: Reno scaled by rho = RTT/RTT0 (slow start 2^rho-1, avoidance rho^2/cwnd per ACK)",
    source:
        "Caini & Firrincieli, Int. J. Satell. Commun. Netw. 2004, §3; Linux net/ipv4/tcp_hybla.c",
    params: PARAMS,
    deviations: &[
        "init before any RTT sample leaves the minimum unset (Linux would pin rho = 1 forever)",
        "rho*8 from unshifted srtt: sub-microsecond rounding differs",
        "rho^2*128 in 64 bits (Linux's u32 wraps above ~145 s srtt)",
        "rtt0 may be fractional (whole µs)",
    ],
    needs_ecn: false,
    build,
};

/// `rtt0` default: 25 ms (`tcp_hybla.c`: "default= 1/40 sec = 25 ms").
pub const RTT0_MS_DEFAULT: f64 = param::RTT0.default_f64();
/// One packet in the 1/128-packet fixed point of `snd_cwnd_cents` and the increments.
const ONE: u32 = 1 << 7;
/// `hybla_fraction`: floor(128 · 2^(k/8)) for k = 0..7, the fractional part of 2^ρ.
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// `hybla_cong_avoid`: the slow-start exponent is capped at 16 (`1 << min(rho, 16U)`).
const MAX_SS_SHIFT: u32 = 16;
/// `hybla_init`: `tp->snd_cwnd_clamp = 65535`.
pub const HYBLA_CWND_CLAMP: u32 = 65535;
/// ρ·8 is never below 8 (ρ ≥ 1): `max_t(u32, …, 8U)`.
const RHO_3LS_MIN: u64 = 8;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let rtt0_ms = param::RTT0.num(params)?;
    Ok(Box::new(Hybla::new(rtt0_ms)))
}

/// Hybla's per-connection state (`struct hybla`).
#[derive(Clone, Debug)]
pub struct Hybla {
    /// Reference RTT, µs.
    rtt0_us: u64,
    /// `hybla_en`: Hybla growth only in the Open state; Reno otherwise.
    enabled: bool,
    /// `snd_cwnd_cents`: accumulated fractional increments, 1/128 packet.
    cwnd_cents: u32,
    /// `rho`: integer part of ρ.
    rho: u32,
    /// `rho_3ls`: ρ · 8.
    rho_3ls: u32,
    /// `rho2_7ls`: ρ² · 128.
    rho2_7ls: u64,
    /// `minrtt_us`: smallest srtt seen (µs); None before the first srtt.
    min_srtt_us: Option<u64>,
}

impl Hybla {
    pub fn new(rtt0_ms: f64) -> Self {
        Hybla {
            rtt0_us: param::RTT0.quantise(rtt0_ms),
            enabled: true,
            cwnd_cents: 0,
            rho: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            min_srtt_us: None,
        }
    }

    /// Current ρ as a real number (ρ·8 / 8).
    pub fn rho(&self) -> f64 {
        f64::from(self.rho_3ls) / 8.0
    }

    /// `hybla_recalc_param`: ρ·8 = max(8·srtt / rtt0, 8); ρ² in 1/128 units.
    fn recalc(&mut self, srtt_us: u64) {
        let rho_3ls = ((srtt_us << 3) / self.rtt0_us)
            .max(RHO_3LS_MIN)
            .min(u64::from(u32::MAX));
        self.rho_3ls = rho_3ls as u32;
        self.rho = self.rho_3ls >> 3;
        // (ρ·8)² · 2 = ρ² · 128.
        self.rho2_7ls = (rho_3ls * rho_3ls) << 1;
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    /// Neither `in_ack_event` nor `pkts_acked`.
    fn has_ack_hooks(&self) -> bool {
        false
    }

    /// `hybla_init`: ρ from the handshake srtt, cwnd = ρ, clamp 65535.
    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.cwnd_cents = 0;
        self.enabled = true;
        tcp.cwnd_clamp = HYBLA_CWND_CLAMP;
        if tcp.srtt_us == 0 {
            // Deviation 1: wait for the first srtt instead of pinning ρ = 1.
            self.min_srtt_us = None;
            return;
        }
        self.recalc(tcp.srtt_us);
        self.min_srtt_us = Some(tcp.srtt_us);
        tcp.cwnd = self.rho.max(1);
    }

    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        reno_ssthresh(tcp)
    }

    /// `hybla_state`.
    fn on_state(&mut self, _now: SimTime, _tcp: &mut TcpState, new: CaState) {
        self.enabled = new == CaState::Open;
    }

    /// `hybla_cong_avoid`.
    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        // Recalculate ρ only when srtt reaches a new minimum.
        if tcp.srtt_us > 0 && self.min_srtt_us.is_none_or(|m| tcp.srtt_us < m) {
            self.recalc(tcp.srtt_us);
            self.min_srtt_us = Some(tcp.srtt_us);
        }
        if !tcp.is_cwnd_limited() {
            return;
        }
        if !self.enabled {
            reno_cong_avoid(tcp, ack.acked_sacked);
            return;
        }
        if self.rho == 0 {
            // No srtt yet (deviation 1): ρ = 1.
            self.recalc(tcp.srtt_us);
        }
        let rho_fractions = (self.rho_3ls - (self.rho << 3)) as usize;
        let slow_start = tcp.in_slow_start();
        let increment: u64 = if slow_start {
            // Eq. 5: INC = 2^ρ − 1 = 2^int · 2^frac − 1, in 1/128 packets.
            (1u64 << self.rho.min(MAX_SS_SHIFT)) * u64::from(FRACTIONS[rho_fractions])
                - u64::from(ONE)
        } else {
            // Eq. 6: INC = ρ² / cwnd, in 1/128 packets.
            let inc = self.rho2_7ls / u64::from(tcp.cwnd.max(1));
            if inc < u64::from(ONE) {
                tcp.cwnd_cnt += 1;
            }
            inc
        };
        let odd = (increment % u64::from(ONE)) as u32;
        let whole = (increment >> 7).min(u64::from(u32::MAX)) as u32;
        tcp.cwnd = tcp.cwnd.saturating_add(whole);
        self.cwnd_cents += odd;
        // Fractions reaching a whole packet raise cwnd by one.
        while self.cwnd_cents >= ONE {
            tcp.cwnd = tcp.cwnd.saturating_add(1);
            self.cwnd_cents -= ONE;
            tcp.cwnd_cnt = 0;
        }
        // ρ²/cwnd < 1/128: count ACKs and add one packet per cwnd ACKs (Reno's rate).
        if increment == 0 && odd == 0 && tcp.cwnd_cnt >= tcp.cwnd {
            tcp.cwnd += 1;
            tcp.cwnd_cnt = 0;
        }
        if slow_start {
            tcp.cwnd = tcp.cwnd.min(tcp.ssthresh);
        }
        tcp.cwnd = tcp.cwnd.min(tcp.cwnd_clamp);
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("rho", self.rho()),
            ("cwnd_cents", f64::from(self.cwnd_cents) / f64::from(ONE)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::INFINITE_SSTHRESH;

    const RTT0_US: u64 = 25_000;

    /// A connection after `on_init` with srtt = `srtt_us`, cwnd-limited, large clamp.
    fn conn(srtt_us: u64, cwnd: u32, ssthresh: u32) -> (Hybla, TcpState) {
        let mut h = Hybla::new(RTT0_MS_DEFAULT);
        let mut t = TcpState::new(1448, 10);
        t.srtt_us = srtt_us;
        h.on_init(SimTime::ZERO, &mut t);
        t.cwnd = cwnd;
        t.ssthresh = ssthresh;
        t.cwnd_clamp = u32::MAX / 2;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        (h, t)
    }

    fn ack(h: &mut Hybla, t: &mut TcpState) {
        t.max_packets_out = t.cwnd;
        h.on_cong_avoid(
            SimTime::ZERO,
            t,
            &AckSample {
                acked_sacked: 1,
                ..Default::default()
            },
        );
    }

    /// cwnd in 1/128 packets, including Hybla's fractional accumulator.
    fn fine(h: &Hybla, t: &TcpState) -> u64 {
        u64::from(t.cwnd) * 128 + u64::from(h.cwnd_cents)
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_per_ack_for_rho_1_to_30() {
        for rho in 1..=30u64 {
            let (mut h, mut t) = conn(rho * RTT0_US, 2, INFINITE_SSTHRESH);
            assert_eq!(h.rho(), rho as f64);
            ack(&mut h, &mut t);
            // Closed form 2^ρ − 1; Linux caps the exponent at 16.
            let expected = (1u64 << rho.min(16)) - 1;
            assert_eq!(u64::from(t.cwnd) - 2, expected, "rho = {rho}");
            assert_eq!(h.cwnd_cents, 0, "rho = {rho}");
        }
    }

    #[test]
    fn slow_start_with_fractional_rho_matches_two_to_the_rho_within_the_table_precision() {
        // ρ = k/8 from 1 to 16: the 1/8 table is floor(128·2^(k/8)), so the per-ACK
        // increment is 2^ρ − 1 within 2^floor(ρ)/128 packets.
        for rho_3ls in 8..=(16 * 8) {
            let srtt = rho_3ls * RTT0_US / 8;
            let (mut h, mut t) = conn(srtt, 2, INFINITE_SSTHRESH);
            let before = fine(&h, &t);
            ack(&mut h, &mut t);
            let got = (fine(&h, &t) - before) as f64 / 128.0;
            let rho = rho_3ls as f64 / 8.0;
            let want = 2f64.powf(rho) - 1.0;
            let tol = 2f64.powf(rho.floor()) / 128.0;
            assert!(
                (got - want).abs() <= tol,
                "rho = {rho}: got {got}, want {want}"
            );
        }
    }

    #[test]
    fn slow_start_does_not_overshoot_ssthresh() {
        let (mut h, mut t) = conn(10 * RTT0_US, 20, 100);
        ack(&mut h, &mut t); // +1023 would overshoot
        assert_eq!(t.cwnd, 100);
    }

    #[test]
    fn avoidance_adds_rho_squared_over_cwnd_per_ack_within_one_128th() {
        for rho in 1..=30u64 {
            for w in [10u32, 100, 1000, 5000] {
                let (mut h, mut t) = conn(rho * RTT0_US, w, 2);
                let before = fine(&h, &t);
                ack(&mut h, &mut t);
                let got = (fine(&h, &t) - before) as f64 / 128.0;
                let want = (rho * rho) as f64 / f64::from(w);
                // A sub-1/128 increment is instead counted in cwnd_cnt (tested below).
                if want >= 1.0 / 128.0 {
                    assert!(
                        (got - want).abs() <= 1.0 / 128.0,
                        "rho {rho} w {w}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn one_rtt_of_avoidance_follows_the_continuous_rho_squared_law() {
        // dW/dn = ρ²/W over N acks  =>  W_N = sqrt(W0² + 2ρ²N).
        for (rho, w0) in [(2u64, 200u32), (4, 1000), (10, 3000), (22, 5000)] {
            let (mut h, mut t) = conn(rho * RTT0_US, w0, 2);
            let n = u64::from(w0);
            for _ in 0..n {
                ack(&mut h, &mut t);
            }
            let want = ((f64::from(w0)).powi(2) + 2.0 * (rho * rho) as f64 * n as f64).sqrt();
            let got = fine(&h, &t) as f64 / 128.0;
            // Each ACK's increment is truncated to 1/128: at most n/128 packets lost.
            assert!(
                got <= want + 1.0 && got >= want - n as f64 / 128.0 - 1.0,
                "rho {rho}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn tiny_avoidance_increments_still_grow_one_packet_per_window_of_acks() {
        // ρ = 1, cwnd 200: 128/200 rounds to 0 per ACK; Linux's snd_cwnd_cnt fallback adds 1
        // packet after cwnd ACKs (a regression without it: cwnd would freeze).
        let (mut h, mut t) = conn(RTT0_US, 200, 2);
        for _ in 0..199 {
            ack(&mut h, &mut t);
        }
        assert_eq!(t.cwnd, 200);
        ack(&mut h, &mut t);
        assert_eq!(t.cwnd, 201);
    }

    #[test]
    fn init_sets_cwnd_to_rho_and_the_kernel_clamp() {
        let mut h = Hybla::new(RTT0_MS_DEFAULT);
        let mut t = TcpState::new(1448, 10);
        t.srtt_us = 550_000;
        h.on_init(SimTime::ZERO, &mut t);
        assert_eq!(h.rho(), 22.0);
        assert_eq!(t.cwnd, 22);
        assert_eq!(t.cwnd_clamp, HYBLA_CWND_CLAMP);
    }

    #[test]
    fn rtt0_parameter_scales_rho() {
        let p = Params::new().with("rtt0", crate::params::ParamValue::Num(50.0));
        assert!(build(&p).is_ok());
        let mut h = Hybla::new(50.0);
        let mut t = TcpState::new(1448, 10);
        t.srtt_us = 550_000;
        h.on_init(SimTime::ZERO, &mut t);
        assert_eq!(h.rho(), 11.0);
        let bad = Params::new().with("rho", crate::params::ParamValue::Num(2.0));
        assert!(build(&bad).is_err());
    }

    #[test]
    fn rho_follows_the_minimum_srtt_only() {
        let (mut h, mut t) = conn(10 * RTT0_US, 100, 2);
        t.srtt_us = 20 * RTT0_US; // queueing: srtt grows, ρ must not
        ack(&mut h, &mut t);
        assert_eq!(h.rho(), 10.0);
        t.srtt_us = 4 * RTT0_US; // a new minimum lowers ρ
        ack(&mut h, &mut t);
        assert_eq!(h.rho(), 4.0);
    }

    #[test]
    fn init_without_an_rtt_sample_waits_for_the_first_srtt() {
        let mut h = Hybla::new(RTT0_MS_DEFAULT);
        let mut t = TcpState::new(1448, 10);
        h.on_init(SimTime::ZERO, &mut t);
        assert_eq!(t.cwnd, 10);
        t.srtt_us = 8 * RTT0_US;
        t.is_cwnd_limited = true;
        t.max_packets_out = 10;
        ack(&mut h, &mut t);
        assert_eq!(h.rho(), 8.0);
        assert_eq!(t.cwnd, 10 + 255);
    }

    #[test]
    fn outside_the_open_state_growth_is_reno() {
        let (mut h, mut t) = conn(10 * RTT0_US, 20, 10);
        h.on_state(SimTime::ZERO, &mut t, CaState::Disorder);
        for _ in 0..20 {
            ack(&mut h, &mut t);
        }
        assert_eq!(t.cwnd, 21);
        h.on_state(SimTime::ZERO, &mut t, CaState::Open);
        ack(&mut h, &mut t);
        assert!(fine(&h, &t) > 21 * 128 + 500);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let (mut h, mut t) = conn(10 * RTT0_US, 20, INFINITE_SSTHRESH);
        t.is_cwnd_limited = false;
        t.max_packets_out = 5;
        h.on_cong_avoid(
            SimTime::ZERO,
            &mut t,
            &AckSample {
                acked_sacked: 1,
                ..Default::default()
            },
        );
        assert_eq!(t.cwnd, 20);
    }

    #[test]
    fn loss_halves_the_window() {
        let (mut h, t) = conn(10 * RTT0_US, 300, 2);
        assert_eq!(h.ssthresh(SimTime::ZERO, &t), 150);
    }
}
