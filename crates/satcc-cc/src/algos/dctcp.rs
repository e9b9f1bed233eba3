//! DCTCP — Linux `net/ipv4/tcp_dctcp.c` (sender) and `tcp_dctcp.h` (receiver echo).
//!
//! Model: switches mark CE above a queue threshold K; the DCTCP receiver echoes ECE on every
//! ACK exactly while the data it acknowledges was CE-marked; the sender keeps α, a moving
//! average of the fraction F of delivered packets that were marked, updated once per window
//! (α ← (1 − g)·α + g·F, g = 1/16), and on the first ECE of a window reduces cwnd to
//! cwnd·(1 − α/2) (via the sender's CWR state). Growth is Reno's. A loss halves cwnd;
//! without ECN on the connection DCTCP is plain Reno.
//!
//! Source: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1 (eqs. 1–2);
//! RFC 8257 §3.2–3.4; Linux `tcp_dctcp.c` (`dctcp_update_alpha`, `dctcp_ssthresh`,
//! `dctcp_state`, `dctcp_cwnd_event`, `dctcp_cwnd_undo`) and `tcp_dctcp.h`
//! (`dctcp_ece_ack_update`).
//!
//! Parameters: `PARAMS` below, one declaration each (`satcc cc show NAME`,
//! docs/cc-parameters.md).
//!
//! α is kept as Linux keeps it: an integer in 0..=1024 (`DCTCP_MAX_ALPHA`); the reduction
//! is `cwnd − (cwnd·α >> 11)` = cwnd·(1 − α̂/2) with α̂ = α/1024.
//!
//! What the sender must provide (see also the crate README):
//! - `tcp.ecn_ok` set before `on_init` when ECN was negotiated (else DCTCP runs as Reno, as
//!   Linux's `dctcp_reno` fallback does).
//! - Per ACK, before `on_ack_event`: `snd_una` advanced, `delivered` counting newly acked +
//!   sacked segments, and `delivered_ce` increased by the same count when the ACK carries
//!   ECE (`tcp_count_delivered`). This is Linux's order since `tcp_in_ack_event` moved after
//!   `tcp_clean_rtx_queue`.
//! - An ECE ACK in Open/Disorder enters CWR: `ssthresh()` (this file's α rule), PRR, and
//!   `on_state(Cwr)`; CWR ends when snd_una passes the recovery point (one reduction per
//!   window).
//! - On fast recovery: `ssthresh()` first, then `on_state(Recovery)` (which overrides
//!   ssthresh with cwnd/2). On RTO: `ssthresh()`, then `on_event(Loss)`, then cwnd reset.
//!
//! Deviations from Linux:
//! 1. `delivered_ce << (10 − g)` is computed in 64 bits; Linux's u32 overflows above 4 M
//!    CE-marked packets per window with g = 1/16.
//! 2. The receiver half (`dctcp_ece_ack_update`: immediate ACK on a CE change, ECE = CE
//!    state of the last data segment) belongs to the receiver, not to a sender-side
//!    algorithm object: [`DctcpEcho`] implements it for the simulator's receiver, and the
//!    sender-side `on_event(EcnIsCe/EcnNoCe)` only records the state for traces.
//!
//! Not implemented: PLB (Protective Load Balancing, `tcp_plb_*`: flow-label rehash, off by
//! default in Linux and meaningless on a single path); `get_info`.

use satcc_core::SimTime;

use super::reno::{reno_cong_avoid, reno_ssthresh};
use crate::info::AlgoInfo;
use crate::params::declare_params;
use crate::{
    AckEventFlags, AckSample, CaEvent, CaState, CongestionControl, ParamError, Params, TcpState,
};

declare_params! {
    SHIFT_G = ParamSpec::int("shift_g", 4, 0, 10).unit("log2").kernel("dctcp_shift_g")
        .bpf("DCTCP_SHIFT_G").doc("EWMA gain g = 1/2^shift_g");
    ALPHA_ON_INIT = ParamSpec::int("alpha_on_init", 1024, 0, 1024).unit("1/1024")
        .kernel("dctcp_alpha_on_init").bpf("DCTCP_ALPHA_ON_INIT")
        .doc("initial alpha (1024 = 1.0)");
}

pub static INFO: AlgoInfo = AlgoInfo {
    name: "dctcp",
    summary: "DCTCP: ECN-fraction estimate alpha, cwnd*(1-alpha/2) per marked window; needs ecn = true",
    source: "Alizadeh et al., SIGCOMM 2010, §3.1; RFC 8257; Linux net/ipv4/tcp_dctcp.c, tcp_dctcp.h",
    params: PARAMS,
    deviations: &[
        "delivered_ce << (10 - g) in 64 bits",
        "receiver echo state machine is provided as DctcpEcho for the receiver, not run by the sender",
        "PLB (flow-label rehash) not implemented",
    ],
    needs_ecn: true,
    build,
};

/// `DCTCP_MAX_ALPHA`: α = 1.0 in the kernel's 1/1024 fixed point.
pub const MAX_ALPHA: u32 = 1024;
/// `dctcp_shift_g` default: g = 1/16.
pub const SHIFT_G: u32 = param::SHIFT_G.default_u32();
/// `dctcp_shift_g` upper bound (`param_set_uint_minmax(…, 0, 10)`).
const SHIFT_G_MAX: u32 = 10;
/// log2 of `MAX_ALPHA`.
const ALPHA_SHIFT: u32 = 10;
/// `dctcp_ssthresh`: cwnd·α >> 11 = cwnd·α̂/2.
const HALF_ALPHA_SHIFT: u32 = ALPHA_SHIFT + 1;
/// Minimum window after a reduction.
const MIN_CWND: u32 = 2;

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    params.check(PARAMS)?;
    let shift_g = param::SHIFT_G.u32(params)?;
    let alpha_on_init = param::ALPHA_ON_INIT.u32(params)?;
    Ok(Box::new(Dctcp::new(shift_g, alpha_on_init)))
}

/// `min_not_zero(a, b)`: the smaller of the non-zero arguments (0 if both are 0).
fn min_not_zero(a: u32, b: u32) -> u32 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

/// DCTCP's per-connection state (`struct dctcp`).
#[derive(Clone, Debug)]
pub struct Dctcp {
    shift_g: u32,
    alpha_on_init: u32,
    /// False when ECN was not negotiated: Linux swaps in `dctcp_reno`.
    ecn: bool,
    /// `dctcp_alpha`, 0..=1024.
    alpha: u32,
    /// `old_delivered`, `old_delivered_ce`: counters at the start of the window.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// `next_seq`: the window ends when snd_una reaches this (bytes).
    next_seq: u64,
    /// `ce_state` (receiver side; recorded for traces).
    ce_state: bool,
    /// `loss_cwnd`: cwnd at the last reduction, for undo.
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(shift_g: u32, alpha_on_init: u32) -> Self {
        Dctcp {
            shift_g: shift_g.min(SHIFT_G_MAX),
            alpha_on_init: alpha_on_init.min(MAX_ALPHA),
            ecn: true,
            alpha: alpha_on_init.min(MAX_ALPHA),
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            ce_state: false,
            loss_cwnd: 0,
        }
    }

    /// α as a fraction in [0, 1].
    pub fn alpha(&self) -> f64 {
        f64::from(self.alpha) / f64::from(MAX_ALPHA)
    }

    /// `dctcp_reset`: start a new observation window at snd_nxt.
    fn reset(&mut self, tcp: &TcpState) {
        self.next_seq = tcp.snd_nxt;
        self.old_delivered = tcp.delivered;
        self.old_delivered_ce = tcp.delivered_ce;
    }

    /// `dctcp_update_alpha`: once per window, α ← (1 − g)·α + g·F (RFC 8257 §3.3).
    fn update_alpha(&mut self, tcp: &TcpState) {
        if tcp.snd_una < self.next_seq {
            return;
        }
        let delivered = tcp.delivered - self.old_delivered;
        let delivered_ce = tcp.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // (1 − g)·α, rounding the decrement so that small α decays to 0.
        alpha -= min_not_zero(alpha, alpha >> self.shift_g);
        if delivered_ce > 0 {
            // g·F in 1/1024: (ce << 10 >> shift_g) / delivered.
            let gf = (delivered_ce << (ALPHA_SHIFT - self.shift_g)) / delivered.max(1);
            alpha = (u64::from(alpha) + gf).min(u64::from(MAX_ALPHA)) as u32;
        }
        self.alpha = alpha;
        self.reset(tcp);
    }

    /// `dctcp_react_to_loss`: a loss halves, as Reno.
    fn react_to_loss(&mut self, tcp: &mut TcpState) {
        self.loss_cwnd = tcp.cwnd;
        tcp.ssthresh = (tcp.cwnd >> 1).max(MIN_CWND);
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// `dctcp_init`.
    fn on_init(&mut self, _now: SimTime, tcp: &mut TcpState) {
        self.ecn = tcp.ecn_ok;
        if !self.ecn {
            return;
        }
        self.alpha = self.alpha_on_init;
        self.loss_cwnd = 0;
        self.ce_state = false;
        self.reset(tcp);
    }

    /// `dctcp_ssthresh` (CWR on ECE, and the first step of loss recovery):
    /// cwnd·(1 − α/2), RFC 8257 §3.4.
    fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        if !self.ecn {
            return reno_ssthresh(tcp);
        }
        self.loss_cwnd = tcp.cwnd;
        let cut = (u64::from(tcp.cwnd) * u64::from(self.alpha)) >> HALF_ALPHA_SHIFT;
        (tcp.cwnd - cut as u32).max(MIN_CWND)
    }

    fn on_cong_avoid(&mut self, _now: SimTime, tcp: &mut TcpState, ack: &AckSample) {
        reno_cong_avoid(tcp, ack.acked_sacked);
    }
    /// `tcp_reno_cong_avoid` itself.
    fn reno_cong_avoid(&self) -> bool {
        true
    }

    /// `in_ack_event` = `dctcp_update_alpha`.
    fn on_ack_event(&mut self, _now: SimTime, tcp: &mut TcpState, _flags: AckEventFlags) {
        if self.ecn {
            self.update_alpha(tcp);
        }
    }

    /// `dctcp_state`: entering Recovery halves (a loss is not an ECN mark).
    fn on_state(&mut self, _now: SimTime, tcp: &mut TcpState, new: CaState) {
        if self.ecn && new == CaState::Recovery && new != tcp.ca_state {
            self.react_to_loss(tcp);
        }
    }

    /// `dctcp_cwnd_event`: RTO halves; CE events track the receiver-side CE state.
    fn on_event(&mut self, _now: SimTime, tcp: &mut TcpState, ev: CaEvent) {
        if !self.ecn {
            return;
        }
        match ev {
            CaEvent::EcnIsCe => self.ce_state = true,
            CaEvent::EcnNoCe => self.ce_state = false,
            CaEvent::Loss => self.react_to_loss(tcp),
            _ => {}
        }
    }

    /// `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        if !self.ecn {
            return tcp.cwnd.max(tcp.prior_cwnd);
        }
        tcp.cwnd.max(self.loss_cwnd)
    }

    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha", self.alpha()),
            ("ecn", f64::from(u8::from(self.ecn))),
            ("ce_state", f64::from(u8::from(self.ce_state))),
        ]
    }
}

/// What the receiver must do for one arriving data segment (`dctcp_ece_ack_update`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EchoAction {
    /// A delayed ACK was pending and the CE state changed: send it now, covering the data
    /// received before this segment, with ECE = the *previous* CE state.
    pub flush_pending_with_ece: Option<bool>,
    /// Acknowledge this segment immediately (the CE state changed).
    pub ack_now: bool,
    /// The ECE flag for ACKs from now on (= CE of this segment) until the state changes.
    pub ece: bool,
}

/// The DCTCP receiver's CE state machine (Linux `tcp_dctcp.h`, RFC 8257 §3.2): ECE on an
/// ACK says whether the segments it acknowledges were CE-marked; a change of CE state
/// forces an immediate ACK so that delayed ACKs never mix marked and unmarked data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DctcpEcho {
    /// `ce_state`: whether the last data segment was CE-marked.
    pub ce_state: bool,
}

impl DctcpEcho {
    /// A data segment arrived with (`ce`) or without a CE mark; `delayed_ack_pending` says
    /// whether the receiver holds an unsent delayed ACK.
    pub fn on_data(&mut self, ce: bool, delayed_ack_pending: bool) -> EchoAction {
        let changed = ce != self.ce_state;
        let flush = (changed && delayed_ack_pending).then_some(self.ce_state);
        self.ce_state = ce;
        EchoAction {
            flush_pending_with_ece: flush,
            ack_now: changed,
            ece: ce,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u32 = 1448;

    fn dctcp(tcp: &mut TcpState) -> Dctcp {
        let mut d = Dctcp::new(SHIFT_G, MAX_ALPHA);
        tcp.ecn_ok = true;
        d.on_init(SimTime::ZERO, tcp);
        d
    }

    fn state(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(MSS, cwnd);
        t.ssthresh = 2;
        t.is_cwnd_limited = true;
        t.max_packets_out = cwnd;
        t
    }

    /// A window of `w` segments of which `marked` came back with ECE, ending with the ACK
    /// that reaches next_seq (delivered/delivered_ce/snd_una updated, then in_ack_event).
    fn window(d: &mut Dctcp, t: &mut TcpState, w: u64, marked: u64) {
        t.snd_nxt = t.snd_una + w * u64::from(MSS);
        t.delivered += w;
        t.delivered_ce += marked;
        t.snd_una = t.snd_nxt;
        d.on_ack_event(
            SimTime::ZERO,
            t,
            AckEventFlags {
                ece: marked > 0,
                ..Default::default()
            },
        );
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        for f in [0.0, 0.1, 0.25, 0.5, 0.75, 1.0] {
            let mut t = state(100);
            let mut d = dctcp(&mut t);
            let w = 1000u64;
            let marked = (f * w as f64).round() as u64;
            for _ in 0..400 {
                window(&mut d, &mut t, w, marked);
            }
            // Fixed point of α ← α − ⌊α/16⌋ + ⌊64·F⌋ (in 1/1024): α/16 truncated, so
            // α settles in [1024·F, 1024·F + 16) (less at the α = 1 cap).
            let lo = (f * 1024.0 - 1.0).max(0.0);
            let hi = (f * 1024.0 + 16.0).min(1024.0);
            let a = f64::from(d.alpha);
            assert!(a >= lo && a <= hi, "F = {f}: alpha = {a}/1024");
        }
    }

    #[test]
    fn alpha_follows_the_ewma_closed_form_with_gain_one_sixteenth() {
        // From α₀ = 1 with constant F: α_n ≈ F + (1 − F)·(15/16)^n.
        let f = 0.25;
        let mut t = state(100);
        let mut d = dctcp(&mut t);
        for n in 1..=40 {
            window(&mut d, &mut t, 1000, 250);
            let want = f + (1.0 - f) * (15.0f64 / 16.0).powi(n);
            // Integer truncation of α/16 keeps α at most ~16/1024 above the real EWMA.
            assert!(
                (d.alpha() - want).abs() < 0.02,
                "n = {n}: {} vs {want}",
                d.alpha()
            );
        }
    }

    #[test]
    fn alpha_is_updated_once_per_window_only() {
        let mut t = state(100);
        let mut d = dctcp(&mut t);
        t.snd_nxt = 100 * u64::from(MSS);
        d.on_ack_event(SimTime::ZERO, &mut t, AckEventFlags::default()); // snd_una 0 ≥ next_seq 0
        let a0 = d.alpha;
        // Mid-window ACKs carrying marks do not touch α.
        for _ in 0..99 {
            t.snd_una += u64::from(MSS);
            t.delivered += 1;
            t.delivered_ce += 1;
            d.on_ack_event(SimTime::ZERO, &mut t, AckEventFlags::default());
            assert_eq!(d.alpha, a0);
        }
        t.snd_una += u64::from(MSS);
        t.delivered += 1;
        d.on_ack_event(SimTime::ZERO, &mut t, AckEventFlags::default());
        assert_ne!(d.alpha, a0);
    }

    #[test]
    fn a_marked_window_reduces_cwnd_by_alpha_over_two() {
        let mut t = state(200);
        let mut d = dctcp(&mut t);
        for (alpha, want) in [
            (1024u32, 100u32),
            (512, 150),
            (256, 175),
            (64, 194),
            (0, 200),
        ] {
            d.alpha = alpha;
            // cwnd − ⌊cwnd·α/2048⌋ = cwnd·(1 − α̂/2).
            assert_eq!(d.ssthresh(SimTime::ZERO, &t), want, "alpha {alpha}");
            assert_eq!(d.loss_cwnd, 200);
        }
        let t2 = state(3);
        d.alpha = 1024;
        assert_eq!(d.ssthresh(SimTime::ZERO, &t2), 2);
    }

    #[test]
    fn entering_recovery_halves_whatever_alpha_is() {
        let mut t = state(200);
        let mut d = dctcp(&mut t);
        d.alpha = 100;
        t.ssthresh = d.ssthresh(SimTime::ZERO, &t); // sender: ssthresh() first …
        d.on_state(SimTime::ZERO, &mut t, CaState::Recovery); // … then set_state
        assert_eq!(t.ssthresh, 100);
        // Already in Recovery (e.g. CWR → Recovery bookkeeping repeats): no second cut.
        t.ca_state = CaState::Recovery;
        t.cwnd = 100;
        d.on_state(SimTime::ZERO, &mut t, CaState::Recovery);
        assert_eq!(t.ssthresh, 100);
        assert_eq!(d.undo_cwnd(SimTime::ZERO, &t), 200);
    }

    #[test]
    fn rto_halves_through_the_loss_event() {
        let mut t = state(80);
        let mut d = dctcp(&mut t);
        d.alpha = 0;
        t.ssthresh = d.ssthresh(SimTime::ZERO, &t);
        assert_eq!(t.ssthresh, 80);
        d.on_event(SimTime::ZERO, &mut t, CaEvent::Loss);
        assert_eq!(t.ssthresh, 40);
    }

    #[test]
    fn without_ecn_dctcp_is_reno() {
        let mut t = state(200);
        let mut d = Dctcp::new(SHIFT_G, MAX_ALPHA);
        t.ecn_ok = false;
        d.on_init(SimTime::ZERO, &mut t);
        d.alpha = 0;
        assert_eq!(d.ssthresh(SimTime::ZERO, &t), 100);
        window(&mut d, &mut t, 100, 100);
        assert_eq!(d.alpha, 0, "no alpha updates without ECN");
    }

    #[test]
    fn growth_is_reno() {
        let mut t = state(20);
        let mut d = dctcp(&mut t);
        for _ in 0..20 {
            d.on_cong_avoid(
                SimTime::ZERO,
                &mut t,
                &AckSample {
                    acked_sacked: 1,
                    ..Default::default()
                },
            );
        }
        assert_eq!(t.cwnd, 21);
    }

    #[test]
    fn receiver_echo_acks_at_once_on_a_ce_change_and_flushes_the_held_ack_first() {
        let mut e = DctcpEcho::default();
        assert_eq!(
            e.on_data(false, false),
            EchoAction {
                flush_pending_with_ece: None,
                ack_now: false,
                ece: false
            }
        );
        // CE appears while a delayed ACK is held: that ACK goes out with ECE = 0 first.
        assert_eq!(
            e.on_data(true, true),
            EchoAction {
                flush_pending_with_ece: Some(false),
                ack_now: true,
                ece: true
            }
        );
        assert_eq!(
            e.on_data(true, true),
            EchoAction {
                flush_pending_with_ece: None,
                ack_now: false,
                ece: true
            }
        );
        assert_eq!(
            e.on_data(false, false),
            EchoAction {
                flush_pending_with_ece: None,
                ack_now: true,
                ece: false
            }
        );
    }

    /// A round-based DCTCP over a marking bottleneck: a round with window W queues
    /// W − BDP packets; if that exceeds K every packet of the round is CE-marked and
    /// echoed. The sender follows Linux: per ACK, counters → in_ack_event → (ECE in Open:
    /// ssthresh + CWR, cwnd reduced to ssthresh within the round) → cong_avoid in Open;
    /// CWR ends when snd_una passes the round in which it began.
    #[test]
    fn with_a_marking_threshold_the_queue_stays_near_k_at_full_utilisation() {
        let (bdp, k) = (100u32, 20u32);
        let mut t = state(10);
        t.ssthresh = crate::INFINITE_SSTHRESH;
        let mut d = dctcp(&mut t);
        let mut high_seq = 0u64;
        let mut queues = Vec::new();
        for round in 0..3000 {
            let w = t.cwnd;
            let queue = w.saturating_sub(bdp);
            let marked = queue > k;
            t.snd_nxt = t.snd_una + u64::from(w) * u64::from(MSS);
            for _ in 0..w {
                t.snd_una += u64::from(MSS);
                t.delivered += 1;
                if marked {
                    t.delivered_ce += 1;
                }
                d.on_ack_event(
                    SimTime::ZERO,
                    &mut t,
                    AckEventFlags {
                        ece: marked,
                        ..Default::default()
                    },
                );
                if t.ca_state == CaState::Cwr && t.snd_una > high_seq {
                    t.cwnd = t.ssthresh;
                    d.on_event(SimTime::ZERO, &mut t, CaEvent::CompleteCwr);
                    d.on_state(SimTime::ZERO, &mut t, CaState::Open);
                    t.ca_state = CaState::Open;
                }
                if marked && t.ca_state == CaState::Open {
                    t.prior_cwnd = t.cwnd;
                    t.ssthresh = d.ssthresh(SimTime::ZERO, &t);
                    d.on_state(SimTime::ZERO, &mut t, CaState::Cwr);
                    t.ca_state = CaState::Cwr;
                    high_seq = t.snd_nxt;
                    t.cwnd = t.ssthresh; // PRR's end point, reached within the round
                } else if t.ca_state == CaState::Open {
                    t.max_packets_out = t.cwnd;
                    d.on_cong_avoid(
                        SimTime::ZERO,
                        &mut t,
                        &AckSample {
                            acked_sacked: 1,
                            ..Default::default()
                        },
                    );
                }
            }
            if round >= 2000 {
                queues.push(queue);
            }
        }
        let min_w = queues.iter().min().unwrap();
        let max_w = queues.iter().max().unwrap();
        let mean = queues.iter().map(|&q| f64::from(q)).sum::<f64>() / queues.len() as f64;
        // The window never falls below the BDP (full utilisation) and peaks just past K.
        assert!(*min_w > 0, "queue empties: utilisation lost");
        assert!(*max_w <= k + 1, "max queue {max_w}");
        assert!(mean > f64::from(k) / 2.0, "mean queue {mean}");
        // α settles near the fraction of marked rounds' traffic, small but not zero.
        assert!(d.alpha() > 0.0 && d.alpha() < 0.5, "alpha {}", d.alpha());
    }
}
