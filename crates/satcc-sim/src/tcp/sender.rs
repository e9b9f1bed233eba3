//! The sending end of a flow, following Linux's TCP sender.
//!
//! Per ACK (`tcp_ack`): window update → SACK tagging (`tcp_sacktag_write_queue`) →
//! cumulative ACK (`tcp_clean_rtx_queue`, RTT samples by Karn's rule, `pkts_acked`) →
//! `in_ack_event` → TLP episode check → for "dubious" ACKs the loss state machine
//! (`tcp_fastretrans_alert`: RACK loss detection, Recovery/CWR/Loss entry and exit) →
//! delivery-rate sample (`tcp_rate_gen`) → cwnd update (`tcp_cong_control`: the
//! algorithm's `cong_control`, or PRR while reducing, or `cong_avoid`) → retransmissions
//! (`tcp_xmit_retransmit_queue`) → new data (`tcp_write_xmit`).
//!
//! ```text
//!            3 SACKed / RACK marks loss          snd_una ≥ high_seq
//!   Open ──► Disorder ──────────────────► Recovery ─────────────────► Open (cwnd = ssthresh)
//!    │  ▲        ECE                              │ RTO
//!    │  └── CWR ◄──────                           ▼
//!    └─────────────────── RTO ──────────────────► Loss ── snd_una ≥ high_seq ──► Open
//! ```
//!
//! Loss detection is Linux's default since 4.18: RACK (RFC 8985) with the dupthresh-3
//! rule folded into its reordering window, and the tail loss probe; without SACK, NewReno
//! (RFC 6582) with Linux's emulated SACK counting. Recovery uses PRR (RFC 6937) as
//! `tcp_cwnd_reduction`. RTO per RFC 6298 with Linux's 200 ms floor and backoff.
//!
//! Application writes (`app_send`) queue bytes that leave in segments of up to the MSS from
//! `snd_nxt`, a short one only last; `write_xmit` holds a short last segment as
//! `tcp_nagle_test` does (TCP_CORK or `MSG_MORE`; with Nagle on, while an earlier short
//! segment is unacknowledged: `tcp_minshall_check`), and TCP_NODELAY / uncorking push it.
//!
//! With unsent data and nothing in flight (a closed receive window, TCP_CORK or `MSG_MORE`)
//! the zero-window probe timer runs (`tcp_check_probe_timer`, `tcp_probe_timer`): it sends
//! what the window takes, or an ACK at `snd_una − 1` (`tcp_xmit_probe_skb`), backing off
//! from max(RTO, 200 ms); a window that reopens ends it (`tcp_ack_probe`) and, with slow
//! start after idle, restarts an idle cwnd (`tcp_ack_update_window`). Unlike Linux it never
//! gives up after `tcp_retries2` probes.
//!
//! Spurious reductions are undone as Linux does (DSACK, Eifel timestamps, F-RTO; see
//! `sender/undo.rs`), and reordering is detected from SACKs and timestamps (`tp->reordering`,
//! `reord_seen`), growing RACK's window in min_rtt/4 steps after DSACKs.
//!
//! Deviations from Linux (numbered, see README "The simulator"):
//! 1. No SACK reneging (the simulator's receiver never reneges) and no reordering detection
//!    without SACK (`tcp_check_reno_reordering`).
//! 2. None now (a tail loss probe's retransmission is not counted in `retrans_out`, as
//!    Linux's `__tcp_retransmit_skb`); the number is kept so that the others stay put.
//! 3. The RACK and TLP timers are separate from the RTO timer (Linux shares one slot); where
//!    Linux's re-arming of the slot cancels a pending probe (the head resent in
//!    `tcp_xmit_retransmit_queue`) the probe is cleared.
//! 4. GSO as Linux's TCP always uses it (`tcp_tso_autosize`): a GSO packet's segments leave
//!    back to back, a paced flow's paced as one; `tcp_tso_should_defer` (with
//!    `tcp_grow_skb`) for unpaced flows only (Linux defers a paced flow's small room too);
//!    the write queue's buffers are cut every `tcp_xmit_size_goal` bytes from where the last
//!    one ended (the size goal of the moment, not of the write), and no buffer carries
//!    `MSG_EOR`; with `tso_defer` the last segment of a GSO packet of two or more segments
//!    carries PSH (`__tcp_transmit_skb`), no other segment does (no `tcp_mark_push`); every
//!    packet on the wire is MSS-sized (as the emulator's veths with offloads off, study 001).
//! 5. Slow start after idle (`tcp_cwnd_restart`) is checked on application writes
//!    (`app_write`, `app_unlimited`: the drill endpoint and scenario flows with an `app`),
//!    off until `set_slow_start_after_idle`; no cwnd moderation after application-limited
//!    periods (`tcp_cwnd_application_limited`).
//! 6. ACKs are never lost to receiver-side buffer limits. The receiver (autotuning, window,
//!    delayed ACKs) is `receiver/`, with its own deviations.
//! 7. None now (the RACK reordering timer waits as `tcp_rack_detect_loss`: the largest
//!    remaining wait over the segments sent before the reference, that of the newest still
//!    waiting; the drill suite's `rack-reo-timer-*` scripts check it on the kernel).
//! 8. `TCP_TIMEOUT_MIN` (the slack on RACK and TLP timers) is 2 ms, Linux's 2 jiffies at
//!    HZ=1000; a HZ=250 kernel has 8 ms (the drill suite's RACK scripts accept both).
//! 9. None now (an ACK that also acknowledges retransmitted data gives no RTT sample, as
//!    `tcp_clean_rtx_queue` with `FLAG_RETRANS_DATA_ACKED`; the drill suite's
//!    `pacing-rate-after-recovery-*` scripts check it on the kernel).

use satcc_cc::{
    AckEventFlags, AckSample, CaEvent, CaState, CongestionControl, TcpState, INFINITE_SSTHRESH,
};
use satcc_core::{SimDuration, SimTime};

use super::rtt::{RttEstimator, RTO_INIT, RTO_MAX};
use super::scoreboard::{Scoreboard, Seg};
use super::stats::RttHistogram;
use super::timer::{Fire, Timer};
use super::{Out, TimerKind};
use crate::packet::{self, Ecn, Kind, Packet};
use satcc_core::scenario::{Flow, Pacing};

mod input;
mod output;
mod rate;
mod recovery;
mod timers;
mod undo;

use rate::RateSample;
use undo::Undo;
pub use undo::UndoStats;

/// Linux `sysctl_tcp_reordering`: the initial dupthresh (`tp->reordering` grows from it).
const REORDERING: u32 = 3;
/// Linux `sysctl_tcp_frto` = 2 (default): F-RTO on.
const FRTO: bool = true;
/// Linux `TCP_TIMEOUT_MIN`: 2 ms slack added to RACK and TLP timers.
const TIMEOUT_MIN: SimDuration = SimDuration::from_millis(2);
/// Linux `TCP_RTO_MIN`: added to the PTO when one packet is outstanding (delayed ACK).
const TLP_ONE_PACKET_SLACK: SimDuration = SimDuration::from_millis(200);
/// `sysctl_tcp_pacing_ss_ratio` / `sysctl_tcp_pacing_ca_ratio`, percent.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;
/// A percentage of a per-µs figure as a per-second one: 1,000,000 µs/s ÷ 100 %.
const PERCENT_OF_US_PER_S: u64 = 1_000_000 / 100;
/// Data segments sent before pacing starts (`tcp_update_skb_after_send`: "Original sch_fq
/// does not pace first 10 MSS").
const UNPACED_SEGS: u64 = 10;
/// `sk_pacing_shift` default: a GSO packet holds about 2^-10 s of the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `sysctl_tcp_tso_rtt_log` default: the min-RTT allowance halves per 2^9 µs.
const TSO_RTT_LOG: u32 = 9;
/// `sk_gso_max_size`: `GSO_LEGACY_MAX_SIZE` (65,536, a veth's) − `MAX_TCP_HEADER` (320) − 1.
const GSO_MAX_BYTES: u64 = 65_536 - 320 - 1;
/// `BITS_PER_TYPE(sk->sk_gso_max_size)`: shifts of the allowance beyond this give nothing.
const GSO_SIZE_BITS: u64 = 32;
/// `tcp_tso_should_defer`: defer only if the last transmission was this recent, and only
/// while the next ACK is due within this (or half the srtt).
const TSO_DEFER_RECENT: SimDuration = SimDuration::from_millis(1);
/// `tcp_max_tso_deferred_mss`: with `tcp_tso_win_divisor` 0, a room of more than this many
/// segments is sent.
const TSO_MAX_DEFERRED_SEGS: u64 = 3;
/// `sysctl_tcp_tso_win_divisor` default: send once a third of the window is free.
pub const TSO_WIN_DIVISOR: u32 = 3;
/// `TCP_MSS_DEFAULT`: `tcp_bound_to_half_wnd` halves only windows larger than this.
const TCP_MSS_DEFAULT: u32 = 536;
/// `sysctl_tcp_min_tso_segs` default.
pub const MIN_TSO_SEGS: u32 = 2;
/// `TCP_RTO_MIN`: the zero-window probe's interval is at least this (`tcp_probe0_base`).
const PROBE0_MIN: SimDuration = SimDuration::from_millis(200);
/// `sysctl_tcp_retries2`: the probe interval's backoff stops growing here.
const RETRIES2: u32 = 15;
/// SYN retransmissions before giving up (`sysctl_tcp_syn_retries`).
const SYN_RETRIES: u32 = 6;
/// `tp->nonagle` bits (include/net/tcp.h): TCP_NODELAY set, TCP_CORK set, and push what is
/// queued regardless of Nagle (set with TCP_NODELAY, cleared when a write starts a new buffer).
const NAGLE_OFF: u8 = 1;
const NAGLE_CORK: u8 = 2;
const NAGLE_PUSH: u8 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conn {
    Idle,
    SynSent {
        retries: u32,
        sent_at: SimTime,
    },
    Established,
    /// All data acknowledged (limited transfers) or the handshake failed.
    Closed,
}

/// RACK state (`tp->rack`).
#[derive(Clone, Copy, Debug, Default)]
struct Rack {
    /// Transmission time and end of the most recently sent delivered segment.
    xmit: Option<SimTime>,
    end_idx: u64,
    rtt_us: u64,
    advanced: bool,
    /// Reordering window in min_rtt/4 steps (1 at start), grown after DSACKs.
    reo_wnd_steps: u8,
    /// Recoveries the grown window persists for.
    reo_wnd_persist: u8,
    /// A DSACK arrived after reordering was seen: grow the window.
    dsack_seen: bool,
    /// `tp->delivered` when the window was last grown.
    last_delivered: u64,
}

/// What to (re)transmit after an ACK (`REXMIT_*` of tcp_input.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rexmit {
    None,
    /// Retransmit segments marked lost.
    Lost,
    /// F-RTO: send new data first.
    New,
}

/// What one ACK did (`FLAG_*` of tcp_input.c that matter here).
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    data_acked: bool,
    win_update: bool,
    data_sacked: bool,
    ece: bool,
    dsack: bool,
    /// `FLAG_DSACK_TLP`: the DSACK is for the tail loss probe.
    dsack_tlp: bool,
    /// `FLAG_ORIG_SACK_ACKED`: never-retransmitted data below high_seq was (s)acked.
    orig_sack_acked: bool,
    retrans_data_acked: bool,
    lost_retrans: bool,
}

/// The sender's part of `struct tcp_info` (`Sender::info`), in the kernel's units.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderInfo {
    /// `TCP_CA_*`: Open 0, Disorder 1, CWR 2, Recovery 3, Loss 4.
    pub ca_state: u8,
    pub retransmits: u32,
    pub backoff: u32,
    /// `tcpi_probes`: zero-window probes unanswered (`icsk_probes_out`).
    pub probes: u32,
    pub rto_us: u64,
    pub mss: u32,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    pub total_retrans: u64,
    pub srtt_us: u64,
    /// `tcpi_rttvar`: `mdev_us >> 2`.
    pub rttvar_us: u64,
    pub min_rtt_us: u64,
    pub snd_wnd: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub reordering: u32,
    pub reord_seen: u32,
    pub dsack_dups: u64,
    pub delivered: u64,
    pub delivered_ce: u64,
    pub pacing_rate_bps: u64,
    pub sent_packets: u64,
    pub ecn_ok: bool,
}

/// Result counters of one flow.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub sent_packets: u64,
    pub retransmitted_packets: u64,
    pub retrans_in_bin: u64,
    pub rto_count: u64,
    pub recovery_count: u64,
    /// Spurious reductions undone, by kind.
    pub undo: UndoStats,
    pub rtt: RttHistogram,
}

pub struct Sender {
    pub flow: u32,
    peer: u32,
    pub start: SimTime,
    size: Option<u64>,
    mss: u32,
    sack: bool,
    timestamps: bool,
    ecn_wanted: bool,
    pacing_mode: Pacing,
    /// Cap on bytes sent and not yet acknowledged (the send buffer), if any.
    sndbuf: Option<u64>,
    /// The flow's `cwnd_clamp`, packets (applied after the algorithm's init).
    cwnd_cap: Option<u32>,
    conn: Conn,
    pub tcp: TcpState,
    cc: Box<dyn CongestionControl>,
    /// `cc.has_cong_control()`, fixed for an algorithm (as the kernel's `cong_control` op
    /// is), read once instead of through the trait object on every ACK.
    has_cong_control: bool,
    /// `cc.has_cong_control()`'s companion for the per-ACK hooks: `cc.has_ack_hooks()`, read
    /// once (Linux tests the `in_ack_event` and `pkts_acked` ops for NULL on every ACK).
    has_ack_hooks: bool,
    /// `cc.has_min_tso_segs()`, read once: without it `tso_segs` does not call
    /// `cc.min_tso_segs` (as `tcp_tso_segs` tests the op for NULL).
    has_min_tso_segs: bool,
    /// `cc.reno_cong_avoid()`, read once: the algorithm's `cong_avoid` is Linux's
    /// `tcp_reno_cong_avoid`, called directly (inlined) rather than through the trait object.
    reno_cong_avoid: bool,
    sb: Scoreboard,
    /// Peer's advertised window, bytes.
    snd_wnd: u64,
    /// `tp->rx_opt.ts_recent`: the newest TSval of the receiver, echoed in data (its DRS RTT).
    ts_recent: u64,
    high_seq: u64,
    prr_delivered: u32,
    prr_out: u32,
    /// Undo state of the current or last reduction.
    undo: Undo,
    /// `tp->reordering`: the reordering degree seen, packets (3 until reordering is seen).
    reordering: u32,
    /// `tp->reord_seen`: reordering events seen.
    reord_seen: u32,
    /// `tp->dsack_dups`: segments reported by DSACKs.
    dsack_dups: u64,
    /// `tp->max_window`: largest window the peer advertised, bytes.
    max_window: u64,
    /// TSecr of the ACK being processed (`rx_opt.rcv_tsecr` when `saw_tstamp` and nonzero).
    rcv_tsecr: Option<u64>,
    rtt: RttEstimator,
    backoff: u32,
    /// `icsk_retransmits`: RTOs since snd_una last advanced.
    retransmits: u32,
    rto_timer: Timer,
    reo_timer: Timer,
    tlp_timer: Timer,
    pace_timer: Timer,
    /// The RTO timer's deadline is the zero-window probe's (`ICSK_TIME_PROBE0`: Linux keeps
    /// both in one slot), and `icsk_probes_out`: probes unanswered (the interval backs off
    /// with `backoff`, as Linux's shares `icsk_backoff`); whether the last timer event was
    /// a probe (the drill endpoint marks the data it sends PSH).
    probe_pending: bool,
    /// The sending host's qdisc drops every packet (the drill's `tc qdisc ... pfifo limit
    /// 0`): `tcp_transmit_skb` fails, so `tcp_write_xmit` sends nothing and a retransmission
    /// from `tcp_xmit_retransmit_queue` fails uncounted (`__tcp_retransmit_skb`'s error:
    /// no `TCPCB_SACKED_RETRANS`, no `retrans_out`). Scenarios never set it.
    local_drop: bool,
    probes_out: u32,
    probe_fired: bool,
    /// `backoff` is the zero-window probes' (not timeouts'): the RTO is not backed off.
    probing: bool,
    /// `tp->tlp_high_seq` (0 = no probe outstanding) and whether it was a retransmission.
    tlp_high_seq: u64,
    tlp_retrans: bool,
    rack: Rack,
    /// Rate sampling (`tcp_rate.c`); `tp->delivered_mstamp` lives in `tcp`.
    first_tx_mstamp: SimTime,
    /// `tp->cwnd_usage_seq`.
    cwnd_usage_seq: u64,
    /// CWR to be sent on the next data segment (`TCP_ECN_QUEUE_CWR`).
    cwr_pending: bool,
    pub stats: SenderStats,
    /// When the last byte was cumulatively acknowledged.
    pub acked_all_at: Option<SimTime>,
    /// ssthresh from the metrics cache, applied when the connection is established
    /// (`tcp_init_metrics`); set by the world before `connect`.
    cached_ssthresh: Option<u32>,
    /// Whether a cumulative ACK of segments each sent once may take `on_ack`'s batched path
    /// (always, but the unit tests compare it with the per-segment one; see `fast_ack()`).
    #[cfg(test)]
    fast_ack: bool,
    /// The inputs of the last PTO `schedule_loss_probe` armed, and the deadline it armed.
    tlp_armed: Option<(PtoInputs, SimTime)>,
    /// Whether `write_xmit` may skip a `schedule_loss_probe` that would re-arm exactly what is
    /// armed (always, but the unit tests compare it with calling it every time; see
    /// `reuse_pto()`).
    #[cfg(test)]
    reuse_pto: bool,
    /// `net.ipv4.tcp_slow_start_after_idle`: a write after an idle period longer than the
    /// RTO restarts cwnd (`app_write`). Off for scenario flows (their data is all there).
    slow_start_after_idle: bool,
    /// The initial window, `tcp_init_cwnd` (the restart window after idle).
    init_cwnd: u32,
    /// `net.ipv4.tcp_min_tso_segs`: the fewest segments of a GSO packet (`tcp_tso_segs`).
    min_tso_segs: u32,
    /// `net.ipv4.tcp_tso_win_divisor`: `tcp_tso_should_defer` sends a room of this
    /// fraction of the window (0: of more than 3 segments).
    tso_win_divisor: u32,
    /// End of the write queue's head buffer as `tcp_sendmsg` cut it (`head_buffer`).
    wq_end: u64,
    /// The flow's `tso_defer`: `tcp_tso_should_defer` for an unpaced flow.
    tso_defer: bool,
    /// `tp->nonagle` (`NAGLE_*` bits).
    nonagle: u8,
    /// The `nonagle` that `write_xmit`'s Nagle test uses: `nonagle`, except while a write
    /// with `MSG_MORE` pushes (`tcp_push` passes `TCP_NAGLE_CORK` then).
    xmit_nonagle: u8,
    /// A FIN waits behind the unsent data: the last segment goes out whatever Nagle says
    /// (`tcp_nagle_test` passes a buffer carrying the FIN).
    fin_queued: bool,
}

/// Everything the PTO deadline `tcp_schedule_loss_probe` computes depends on: the time, the
/// RTT estimator's srtt and rttvar (so the RTO), the RTO backoff, and whether exactly one
/// segment is out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PtoInputs {
    now: SimTime,
    rtt: (u64, u64),
    backoff: u32,
    one_packet: bool,
}

impl Sender {
    /// The sending half of flow `cfg` (a resolved scenario's flow) towards node `peer`.
    pub fn new(cfg: &Flow, peer: u32, cc: Box<dyn CongestionControl>) -> Self {
        let start = SimTime::from_nanos(cfg.start_ns);
        let mut tcp = TcpState::new(cfg.mss, cfg.initial_cwnd);
        tcp.now = start;
        // With pacing forced on (as under fq), the socket counts as paced for every
        // algorithm (`sk_pacing_status != SK_PACING_NONE`), e.g. for HyStart's ACK-train test.
        tcp.pacing_needed = cfg.pacing == Pacing::On;
        Sender {
            flow: cfg.id,
            peer,
            start,
            size: cfg.size_bytes,
            mss: cfg.mss,
            sack: cfg.sack,
            timestamps: cfg.timestamps,
            ecn_wanted: cfg.ecn,
            pacing_mode: cfg.pacing,
            sndbuf: cfg.sndbuf_bytes,
            cwnd_cap: cfg.cwnd_clamp,
            conn: Conn::Idle,
            tcp,
            has_cong_control: cc.has_cong_control(),
            has_ack_hooks: cc.has_ack_hooks(),
            has_min_tso_segs: cc.has_min_tso_segs(),
            reno_cong_avoid: cc.reno_cong_avoid(),
            cc,
            sb: Scoreboard::new(cfg.mss),
            snd_wnd: 65_535, // replaced by the SYN-ACK's window
            ts_recent: 0,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            undo: Undo::default(),
            reordering: REORDERING,
            reord_seen: 0,
            dsack_dups: 0,
            max_window: 0,
            rcv_tsecr: None,
            rtt: RttEstimator::new(SimDuration::from_nanos(cfg.min_rto.get().0)),
            backoff: 0,
            retransmits: 0,
            rto_timer: Timer::default(),
            reo_timer: Timer::default(),
            tlp_timer: Timer::default(),
            pace_timer: Timer::default(),
            probe_pending: false,
            local_drop: false,
            probes_out: 0,
            probe_fired: false,
            probing: false,
            tlp_high_seq: 0,
            tlp_retrans: false,
            rack: Rack {
                reo_wnd_steps: 1,
                ..Rack::default()
            },
            first_tx_mstamp: SimTime::ZERO,
            cwnd_usage_seq: 0,
            cwr_pending: false,
            stats: SenderStats::default(),
            acked_all_at: None,
            cached_ssthresh: None,
            #[cfg(test)]
            fast_ack: true,
            tlp_armed: None,
            #[cfg(test)]
            reuse_pto: true,
            slow_start_after_idle: false,
            init_cwnd: cfg.initial_cwnd,
            min_tso_segs: MIN_TSO_SEGS,
            tso_win_divisor: TSO_WIN_DIVISOR,
            wq_end: 0,
            tso_defer: cfg.tso_defer,
            nonagle: if cfg.nodelay { NAGLE_OFF } else { 0 },
            xmit_nonagle: if cfg.nodelay { NAGLE_OFF } else { 0 },
            fin_queued: false,
        }
    }

    /// Hand the sender the metrics cache's ssthresh for its destination
    /// (`world/metrics.rs`); it is applied when the handshake completes, as
    /// `tcp_init_metrics` does.
    pub fn set_cached_ssthresh(&mut self, ssthresh: Option<u32>) {
        self.cached_ssthresh = ssthresh;
    }

    /// The ssthresh the metrics cache holds after this connection closes, given what it held
    /// before (`cached`), following `tcp_update_metrics` (tcp_metrics.c) for the ssthresh slot:
    /// - a session whose RTO backed off or that never measured an RTT leaves it unchanged;
    /// - still in initial slow start (ssthresh infinite): raise an existing entry to cwnd/2;
    /// - congestion avoidance (cwnd >= ssthresh) in the Open state: max(cwnd/2, ssthresh);
    /// - otherwise (slow start after a loss, or in Recovery/Loss/CWR/Disorder): raise an
    ///   existing entry to ssthresh, never create one.
    pub fn ssthresh_to_cache(&self, cached: Option<u32>) -> Option<u32> {
        let t = &self.tcp;
        if self.backoff > 0 || self.rtt.srtt_us() == 0 {
            return cached; // tcp_update_metrics: "This session failed to estimate rtt"
        }
        if t.ssthresh >= INFINITE_SSTHRESH {
            // tcp_in_initial_slowstart
            cached.map(|v| v.max(t.cwnd >> 1))
        } else if t.cwnd >= t.ssthresh && t.ca_state == CaState::Open {
            // !tcp_in_slow_start && TCP_CA_Open: "cwnd is reliable"
            Some((t.cwnd >> 1).max(t.ssthresh))
        } else {
            cached.map(|v| v.max(t.ssthresh))
        }
    }

    pub fn srtt_us(&self) -> u64 {
        self.rtt.srtt_us()
    }

    /// The congestion control's own state (`CongestionControl::debug_state`), for the
    /// `cc_state` series.
    pub fn cc_state(&self) -> Vec<(&'static str, f64)> {
        self.cc.debug_state()
    }

    pub fn is_established(&self) -> bool {
        matches!(self.conn, Conn::Established)
    }

    // ---------------------------------------------------------------- connection

    /// Open the connection: send the SYN.
    pub fn connect(&mut self, now: SimTime, out: &mut Out) {
        self.conn = Conn::SynSent {
            retries: 0,
            sent_at: now,
        };
        self.send_syn(now, out);
        self.arm(TimerKind::Rto, now + RTO_INIT, out);
    }

    fn send_syn(&mut self, now: SimTime, out: &mut Out) {
        let mut p = Packet::new(self.flow, Kind::Syn, self.peer);
        p.wire_bytes = packet::IP_HEADER
            + packet::TCP_HEADER
            + if self.timestamps {
                packet::SYN_OPTIONS * 2
            } else {
                12
            };
        p.tsval = self.ts_now(now);
        p.ece = self.ecn_wanted; // ECN-setup SYN (ECE + CWR)
        p.cwr = self.ecn_wanted;
        out.pkts.push(p);
    }

    #[cold]
    fn on_synack(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        let Conn::SynSent { retries, sent_at } = self.conn else {
            return;
        };
        self.conn = Conn::Established;
        self.rto_timer.clear();
        // Karn: the handshake RTT counts only if the SYN was not retransmitted; else TSecr.
        let sample = if retries == 0 {
            Some(now.saturating_since(sent_at).as_micros())
        } else if self.timestamps && pkt.tsecr > 0 {
            Some(self.ts_now(now).saturating_sub(pkt.tsecr) * 1000)
        } else {
            None
        };
        if let Some(us) = sample {
            self.rtt.sample(us, 0, 0);
            self.rtt.update_min_rtt(now, us);
            self.sync_rtt();
        }
        self.snd_wnd = pkt.rwnd;
        self.tcp.ecn_ok = self.ecn_wanted && pkt.ece;
        // tcp_init_transfer: cwnd 1 after a lost handshake packet (RFC 6298 §5.7 as Linux).
        if retries > 1 {
            self.tcp.cwnd = 1;
        }
        // tcp_init_metrics (before tcp_init_congestion_control): the cached ssthresh, clamped
        // to snd_cwnd_clamp; no entry keeps TCP_INFINITE_SSTHRESH.
        if let Some(v) = self.cached_ssthresh.filter(|&v| v > 0) {
            self.tcp.ssthresh = v.min(self.tcp.cwnd_clamp);
        }
        self.tcp.cwnd_stamp = now;
        // tcp_finish_connect: "Prevent spurious tcp_cwnd_restart() on first data packet".
        self.tcp.lsndtime = now;
        self.tcp.now = now;
        self.init_cc(now);
        self.write_xmit(now, out);
    }

    /// Passive open (`tcp_rcv_state_process`, SYN_RECV → ESTABLISHED): the ACK of the
    /// SYN-ACK sent at `synack_at` arrived at `now`. Its time is the first RTT sample
    /// (`tcp_synack_rtt_meas`), `rwnd` (bytes, scaled) the peer's window, `ecn_ok` whether the
    /// SYN asked for ECN and the SYN-ACK agreed. The send queue starts empty: data comes from
    /// `app_write`.
    pub fn accept(&mut self, now: SimTime, synack_at: SimTime, rwnd: u64, ecn_ok: bool) {
        self.conn = Conn::Established;
        self.size = Some(0);
        let us = now.saturating_since(synack_at).as_micros();
        self.rtt.sample(us, 0, 0);
        self.rtt.update_min_rtt(now, us);
        self.sync_rtt();
        self.snd_wnd = rwnd;
        self.max_window = rwnd;
        self.tcp.ecn_ok = ecn_ok;
        self.tcp.cwnd_stamp = now;
        self.tcp.lsndtime = now;
        self.tcp.now = now;
        self.init_cc(now);
    }

    /// `tcp_init_congestion_control`, then the flow's `cwnd_clamp` (the study's sender-side
    /// cap, e.g. study 002's W_m): applied after the algorithm's init so that an algorithm
    /// setting its own clamp (Hybla: 65535) cannot raise it; the lower of the two holds.
    fn init_cc(&mut self, now: SimTime) {
        self.cc.on_init(now, &mut self.tcp);
        if let Some(cap) = self.cwnd_cap {
            self.tcp.cwnd_clamp = self.tcp.cwnd_clamp.min(cap);
            self.tcp.cwnd = self.tcp.cwnd.min(self.tcp.cwnd_clamp);
        }
    }

    /// The application wrote `bytes` more (`tcp_sendmsg` → `tcp_push` → `tcp_write_xmit`):
    /// they join the send queue and go out as cwnd, the receive window, pacing and Nagle
    /// allow. The unsent bytes are cut into MSS-sized segments from `snd_nxt` (Linux fills
    /// the last unsent buffer before starting another), so a short one is only ever the last.
    pub fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Out) {
        self.app_send(now, bytes, false, out);
    }

    /// `app_write` with `MSG_MORE` when `more`: this push holds a short last segment as
    /// TCP_CORK does (`tcp_push` with `TCP_NAGLE_CORK`).
    pub fn app_send(&mut self, now: SimTime, bytes: u64, more: bool, out: &mut Out) {
        let queued = self.size.unwrap_or(self.tcp.snd_nxt);
        if bytes > 0 && (queued - self.tcp.snd_nxt).is_multiple_of(self.mss as u64) {
            // `tcp_skb_entail` of a new buffer: TCP_NAGLE_PUSH is spent.
            self.nonagle &= !NAGLE_PUSH;
        }
        self.slow_start_after_idle_check(now);
        self.size = Some(queued + bytes);
        if self.conn == Conn::Closed {
            self.conn = Conn::Established; // all earlier data was acknowledged
        }
        self.tcp.now = now;
        self.xmit_nonagle = if more { NAGLE_CORK } else { self.nonagle };
        self.write_xmit(now, out);
        self.xmit_nonagle = self.nonagle;
    }

    /// `setsockopt(TCP_NODELAY)` (`__tcp_sock_set_nodelay`): on, Nagle is off and what is
    /// queued is pushed now; off, Nagle applies again.
    pub fn set_nodelay(&mut self, now: SimTime, on: bool, out: &mut Out) {
        if on {
            self.nonagle |= NAGLE_OFF | NAGLE_PUSH;
        } else {
            self.nonagle &= !NAGLE_OFF;
        }
        self.xmit_nonagle = self.nonagle;
        if on {
            self.push_pending(now, out);
        }
    }

    /// The host's qdisc drops every packet from now on (`on`), or no longer.
    pub fn set_local_drop(&mut self, on: bool) {
        self.local_drop = on;
    }

    /// `setsockopt(TCP_CORK)` (`__tcp_sock_set_cork`): on, a short last segment waits; off,
    /// what is queued is pushed (with TCP_NODELAY set, whatever Nagle says).
    pub fn set_cork(&mut self, now: SimTime, on: bool, out: &mut Out) {
        if on {
            self.nonagle |= NAGLE_CORK;
        } else {
            self.nonagle &= !NAGLE_CORK;
            if self.nonagle & NAGLE_OFF != 0 {
                self.nonagle |= NAGLE_PUSH;
            }
        }
        self.xmit_nonagle = self.nonagle;
        if !on {
            self.push_pending(now, out);
        }
    }

    /// A FIN is queued behind the data (`close`/`shutdown`): the data goes out as the window
    /// allows, the short last segment too (the FIN's buffer passes the Nagle test).
    pub fn queue_fin(&mut self, now: SimTime, out: &mut Out) {
        self.fin_queued = true;
        self.push_pending(now, out);
    }

    /// `tcp_push_pending_frames`: send what the windows and Nagle allow now.
    fn push_pending(&mut self, now: SimTime, out: &mut Out) {
        if self.is_established() && !self.all_sent() {
            self.tcp.now = now;
            self.write_xmit(now, out);
        }
    }

    /// `tcp_nagle_test` for the next segment, `len` bytes, the last queued: whether it waits.
    /// A short segment waits under TCP_CORK, or with Nagle on while an earlier short segment
    /// is unacknowledged (`tcp_nagle_check`, `tcp_minshall_check`); TCP_NAGLE_PUSH and a
    /// queued FIN let it go.
    #[cold]
    #[inline(never)]
    fn nagle_holds(&self, len: u32) -> bool {
        let nonagle = self.xmit_nonagle;
        if len >= self.mss || nonagle & NAGLE_PUSH != 0 || self.fin_queued {
            return false;
        }
        let t = &self.tcp;
        // `tcp_minshall_check`: `snd_sml`, the end of the last short segment sent, is
        // unacknowledged.
        let minshall = self
            .sb
            .last_short_end()
            .is_some_and(|sml| sml > t.snd_una && sml <= t.snd_nxt);
        nonagle & NAGLE_CORK != 0 || (nonagle == 0 && t.packets_out > 0 && minshall)
    }

    /// Length of the next new segment: an MSS, or what is left to send if less.
    #[inline(always)]
    fn next_len(&self) -> u32 {
        match self.size {
            Some(s) => (s - self.tcp.snd_nxt).min(self.mss as u64) as u32,
            None => self.mss,
        }
    }

    /// The application stops writing (an on/off source going off): what has been sent is all
    /// there is until the next write, so the connection goes idle once it is acknowledged.
    /// Sending stops at the last segment sent (nothing unsent was queued: an "on" source
    /// writes only what the connection takes).
    pub fn app_stop(&mut self) {
        self.size = Some(self.tcp.snd_nxt);
    }

    /// The application writes without limit from `now` (an on/off source going on), as a
    /// bulk flow: `tcp_slow_start_after_idle_check`, then new data as cwnd allows.
    pub fn app_unlimited(&mut self, now: SimTime, out: &mut Out) {
        self.slow_start_after_idle_check(now);
        self.size = None;
        if self.conn == Conn::Closed {
            self.conn = Conn::Established; // all earlier data was acknowledged
        }
        self.tcp.now = now;
        self.write_xmit(now, out);
    }

    /// The host's `tcp_min_tso_segs` (at least 1) and `tcp_tso_win_divisor` (Linux's defaults
    /// 2 and 3 until set; satcc's drill sets what a script's shell lines set).
    pub fn set_tso_sysctls(&mut self, min_tso_segs: u32, tso_win_divisor: u32) {
        self.min_tso_segs = min_tso_segs.max(1);
        self.tso_win_divisor = tso_win_divisor;
    }

    /// Turn `tcp_slow_start_after_idle` on or off (Linux's default is on; satcc's drill
    /// suite and scenarios run with it off).
    pub fn set_slow_start_after_idle(&mut self, on: bool) {
        self.slow_start_after_idle = on;
    }

    /// `tcp_slow_start_after_idle_check` (called as a write queues data, `tcp_skb_entail`):
    /// nothing in flight, no `cong_control` algorithm, and idle for longer than the RTO since
    /// the last data was sent: `tcp_cwnd_restart`.
    fn slow_start_after_idle_check(&mut self, now: SimTime) {
        if !self.slow_start_after_idle || self.tcp.packets_out > 0 || self.has_cong_control() {
            return;
        }
        let delta = now.saturating_since(self.tcp.lsndtime);
        let rto = self.icsk_rto();
        if delta > rto {
            self.cwnd_restart(now, delta, rto);
        }
    }

    /// `tcp_cwnd_restart`: ssthresh keeps 3/4 of cwnd, and cwnd halves once per RTO of
    /// idleness beyond the first, down to min(initial window, cwnd).
    fn cwnd_restart(&mut self, now: SimTime, delta: SimDuration, rto: SimDuration) {
        self.cc.on_event(now, &mut self.tcp, CaEvent::CwndRestart);
        self.tcp.ssthresh = self.current_ssthresh();
        let mut cwnd = self.tcp.cwnd;
        let restart = self.init_cwnd.min(cwnd);
        let mut left = delta.as_nanos() as i128;
        let rto_ns = rto.as_nanos() as i128;
        loop {
            left -= rto_ns;
            if left <= 0 || cwnd <= restart {
                break;
            }
            cwnd >>= 1;
        }
        self.tcp.cwnd = cwnd.max(restart);
        self.tcp.cwnd_stamp = now;
    }

    /// What `getsockopt(TCP_INFO)` reports of the sender (`tcp_get_info`).
    pub fn info(&self) -> SenderInfo {
        let t = &self.tcp;
        SenderInfo {
            ca_state: match t.ca_state {
                CaState::Open => 0,
                CaState::Disorder => 1,
                CaState::Cwr => 2,
                CaState::Recovery => 3,
                CaState::Loss => 4,
            },
            retransmits: self.retransmits,
            backoff: self.backoff,
            probes: self.probes_out,
            rto_us: self.icsk_rto().as_micros(),
            mss: self.mss,
            cwnd: t.cwnd,
            ssthresh: t.ssthresh,
            packets_out: t.packets_out,
            sacked_out: t.sacked_out,
            lost_out: t.lost_out,
            retrans_out: t.retrans_out,
            total_retrans: self.stats.retransmitted_packets,
            srtt_us: self.rtt.srtt_us(),
            rttvar_us: self.rtt.mdev_us(),
            min_rtt_us: self.rtt.min_rtt_us(),
            snd_wnd: self.snd_wnd,
            snd_una: t.snd_una,
            snd_nxt: t.snd_nxt,
            reordering: self.reordering,
            reord_seen: self.reord_seen,
            dsack_dups: self.dsack_dups,
            delivered: t.delivered,
            delivered_ce: t.delivered_ce,
            pacing_rate_bps: t.pacing_rate_bps,
            sent_packets: self.stats.sent_packets,
            ecn_ok: t.ecn_ok,
        }
    }

    /// Whether every byte of a limited transfer has been sent.
    fn all_sent(&self) -> bool {
        self.size.is_some_and(|s| self.tcp.snd_nxt >= s)
    }

    fn ts_now(&self, now: SimTime) -> u64 {
        // Linux's TSval clock ticks in milliseconds (TCP_TS_HZ = 1000); +1 keeps it nonzero.
        if self.timestamps {
            now.as_nanos() / 1_000_000 + 1
        } else {
            0
        }
    }

    fn sync_rtt(&mut self) {
        self.tcp.srtt_us = self.rtt.srtt_us();
        self.tcp.min_rtt_us = self.rtt.min_rtt_us();
    }

    // Inlined (the kind is a constant at every call site, so one timer's test is left): the
    // tail loss probe is armed on every ACK that advances snd_una.
    #[inline(always)]
    fn arm(&mut self, kind: TimerKind, at: SimTime, out: &mut Out) {
        let t = match kind {
            TimerKind::Rto => &mut self.rto_timer,
            TimerKind::Reo => &mut self.reo_timer,
            TimerKind::Tlp => &mut self.tlp_timer,
            TimerKind::Pace => &mut self.pace_timer,
            TimerKind::DelAck => unreachable!("delayed ACK is the receiver's"),
        };
        if let Some(at) = t.set(at) {
            out.timers.push((kind, at));
        }
    }

    /// Whether the algorithm implements `cong_control` (BBR): the value read at construction.
    #[inline(always)]
    fn has_cong_control(&self) -> bool {
        debug_assert_eq!(self.has_cong_control, self.cc.has_cong_control());
        self.has_cong_control
    }

    fn set_state(&mut self, now: SimTime, s: CaState) {
        if self.tcp.ca_state != s {
            self.cc.on_state(now, &mut self.tcp, s);
            self.tcp.ca_state = s;
        }
    }

    // ---------------------------------------------------------------- sending
}

/// The test-only switches: compiled in only for the unit tests, constant `true` otherwise.
impl Sender {
    #[cfg(not(test))]
    #[inline(always)]
    fn fast_ack(&self) -> bool {
        true
    }

    #[cfg(test)]
    fn fast_ack(&self) -> bool {
        self.fast_ack
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn reuse_pto(&self) -> bool {
        true
    }

    #[cfg(test)]
    fn reuse_pto(&self) -> bool {
        self.reuse_pto
    }
}

/// A sender driven by hand in the unit tests of every part (send, ACK, SACK, fire timers).
#[cfg(test)]
pub(super) mod testkit {
    pub use super::*;

    pub const MSS: u64 = 1448;

    /// A Reno sender (SACK and timestamps on, initial window 10) whose handshake completed at
    /// 100 ms (so srtt = 100 ms); `out` holds what it sent then: the initial window.
    pub fn established() -> (Sender, Out, SimTime) {
        established_with(1 << 20)
    }

    /// The same with the receiver advertising `rwnd` bytes.
    pub fn established_with(rwnd: u64) -> (Sender, Out, SimTime) {
        let (s, out) = handshake(&Flow::bulk(0, 0, 1, "reno"), rwnd);
        (s, out, ms(100))
    }

    /// A Reno sender of `cfg` whose handshake completed at 100 ms, the receiver advertising
    /// `rwnd` bytes; `out` holds what it sent then.
    pub fn handshake(cfg: &Flow, rwnd: u64) -> (Sender, Out) {
        let cc = satcc_cc::lookup("reno", &satcc_cc::Params::new()).unwrap();
        let mut s = Sender::new(cfg, 1, cc);
        let mut out = Out::default();
        s.connect(SimTime::ZERO, &mut out);
        let mut synack = Packet::new(0, Kind::SynAck, 0);
        synack.rwnd = rwnd;
        out.clear();
        s.on_packet(ms(100), &synack, &mut out);
        (s, out)
    }

    /// A Reno sender as `established`, with nothing to send until the application writes
    /// (`app_write`), TCP_NODELAY as `nodelay`.
    pub fn app_established(nodelay: bool) -> Sender {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.size_bytes = Some(0);
        cfg.nodelay = nodelay;
        handshake(&cfg, 1 << 20).0
    }

    /// Data segments in `out` as (sequence number, length).
    pub fn ranges(out: &Out) -> Vec<(u64, u32)> {
        out.pkts
            .iter()
            .filter(|p| p.kind == Kind::Data)
            .map(|p| (p.seq, p.len))
            .collect()
    }

    /// `app_write` at `at`: what went out.
    pub fn write(s: &mut Sender, at: SimTime, bytes: u64) -> Vec<(u64, u32)> {
        let mut out = Out::default();
        s.app_write(at, bytes, &mut out);
        ranges(&out)
    }

    pub fn ms(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(n)
    }

    /// An ACK of bytes below `ack` with SACK blocks given in segments [from, to), without a
    /// timestamp echo (RTT samples then come from the segments, Karn's rule).
    pub fn ack(ack: u64, sacked_segments: &[(u64, u64)]) -> Packet {
        let mut p = Packet::new(0, Kind::Ack, 0);
        p.ack = ack;
        p.rwnd = 1 << 20;
        for (i, &(a, b)) in sacked_segments.iter().enumerate() {
            p.sack[i] = (a * MSS, b * MSS);
        }
        p.nsack = sacked_segments.len() as u8;
        p
    }

    /// Data segments in `out`: (first segment index, retransmission).
    pub fn sent(out: &Out) -> Vec<(u64, bool)> {
        out.pkts
            .iter()
            .filter(|p| p.kind == Kind::Data)
            .map(|p| (p.seq / MSS, p.retrans))
            .collect()
    }

    /// Fire the timers `out` armed, in time order as the event loop would (stale ones
    /// included), with no ACK arriving, until one sends a retransmission: its time and output.
    pub fn run_timers_until_retransmission(s: &mut Sender, out: &Out) -> (SimTime, Out) {
        let mut pending = out.timers.clone();
        for _ in 0..100 {
            pending.sort_by_key(|&(_, at)| std::cmp::Reverse(at));
            let (kind, at) = pending.pop().expect("a timer is pending");
            let mut o = Out::default();
            s.on_timer(at, kind, &mut o);
            if o.pkts.iter().any(|p| p.retrans) {
                return (at, o);
            }
            pending.extend(o.timers.iter().copied());
        }
        panic!("no retransmission after 100 timer events");
    }

    /// Deliver `pkt` at `at`, returning what the sender sent in response.
    pub fn deliver(s: &mut Sender, at: SimTime, pkt: &Packet) -> Out {
        let mut out = Out::default();
        s.on_packet(at, pkt, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;

    #[test]
    fn handshake_sends_the_initial_window_and_samples_the_rtt() {
        let (s, out, _) = established();
        assert_eq!(out.pkts.iter().filter(|p| p.kind == Kind::Data).count(), 10);
        assert_eq!(s.srtt_us(), 100_000);
    }

    /// An on/off source: 30 segments, then silence until all is acknowledged and 5 s pass,
    /// then writes again: what goes out, and cwnd, with and without slow start after idle.
    fn on_off_restart(slow_start_after_idle: bool) -> (u32, usize) {
        let (mut s, _, _) = established();
        s.set_slow_start_after_idle(slow_start_after_idle);
        deliver(&mut s, ms(200), &ack(10 * MSS, &[])); // slow start: 20 more go out
        s.app_stop();
        let quiet = deliver(&mut s, ms(300), &ack(30 * MSS, &[]));
        assert!(sent(&quiet).is_empty(), "nothing is written while off");
        assert_eq!(s.tcp.packets_out, 0);
        let before = s.tcp.cwnd;
        assert!(before >= 20, "cwnd grew in slow start: {before}");
        let mut out = Out::default();
        s.app_unlimited(ms(5_300), &mut out);
        assert_eq!(
            sent(&out).first(),
            Some(&(30, false)),
            "resumes where it stopped"
        );
        (s.tcp.cwnd, sent(&out).len())
    }

    /// Counts its `in_ack_event` and `pkts_acked` calls; Reno's ssthresh otherwise.
    struct CountingHooks {
        declared: bool,
        calls: std::sync::Arc<std::sync::atomic::AtomicU32>,
    }

    impl CongestionControl for CountingHooks {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn ssthresh(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
            (tcp.cwnd / 2).max(2)
        }
        fn has_ack_hooks(&self) -> bool {
            self.declared
        }
        fn on_ack_event(&mut self, _now: SimTime, _tcp: &mut TcpState, _f: AckEventFlags) {
            self.calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        fn on_pkts_acked(&mut self, _now: SimTime, _tcp: &mut TcpState, _ack: &AckSample) {
            self.calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Hook calls over the handshake and one cumulative ACK, the algorithm declaring
    /// `has_ack_hooks` as `declared`.
    fn ack_hook_calls(declared: bool) -> u32 {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let cc = Box::new(CountingHooks {
            declared,
            calls: calls.clone(),
        });
        let mut s = Sender::new(&Flow::bulk(0, 0, 1, "reno"), 1, cc);
        let mut out = Out::default();
        s.connect(SimTime::ZERO, &mut out);
        let mut synack = Packet::new(0, Kind::SynAck, 0);
        synack.rwnd = 1 << 20;
        s.on_packet(ms(100), &synack, &mut out);
        deliver(&mut s, ms(150), &ack(2 * MSS, &[]));
        calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    #[test]
    fn the_per_ack_hooks_are_called_only_for_an_algorithm_that_has_them() {
        // Linux's `tcp_in_ack_event` and `tcp_clean_rtx_queue` skip NULL `in_ack_event` and
        // `pkts_acked` ops; the sender skips both hooks for an algorithm declaring neither.
        assert_eq!(ack_hook_calls(true), 2);
        assert_eq!(ack_hook_calls(false), 0);
    }

    #[test]
    fn writes_after_idle_restart_cwnd_at_the_initial_window() {
        assert_eq!(on_off_restart(true), (10, 10));
    }

    #[test]
    fn without_slow_start_after_idle_the_window_survives_idleness() {
        let (cwnd, sent) = on_off_restart(false);
        assert!(
            cwnd >= 20 && sent == cwnd as usize,
            "cwnd {cwnd}, sent {sent}"
        );
    }
}
