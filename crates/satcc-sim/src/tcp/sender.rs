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
//! Spurious reductions are undone as Linux does (DSACK, Eifel timestamps, F-RTO; see
//! `undo.rs`), and reordering is detected from SACKs and timestamps (`tp->reordering`,
//! `reord_seen`), growing RACK's window in min_rtt/4 steps after DSACKs.
//!
//! Deviations from Linux (numbered, see README "The simulator"):
//! 1. No SACK reneging (the simulator's receiver never reneges) and no reordering detection
//!    without SACK (`tcp_check_reno_reordering`).
//! 2. A tail loss probe that retransmits marks its segment as a retransmission in flight
//!    (Linux's `__tcp_retransmit_skb` leaves SACKED_RETRANS unset for the probe).
//! 3. The RACK and TLP timers are separate from the RTO timer (Linux shares one slot).
//! 4. No TSO/GSO: every segment is its own packet (as with TSO/GSO off, study 001).
//! 5. No slow-start-after-idle restart and no cwnd moderation after application-limited
//!    periods (`tcp_cwnd_application_limited`).
//! 6. ACKs are never lost to receiver-side buffer limits. The receiver (autotuning, window,
//!    delayed ACKs) is `receiver.rs`, with its own deviations.

use satcc_cc::{
    AckEventFlags, AckSample, CaEvent, CaState, CongestionControl, TcpState, INFINITE_SSTHRESH,
};
use satcc_core::{SimDuration, SimTime};

use super::rtt::{RttEstimator, RTO_INIT, RTO_MAX};
use super::scoreboard::{Scoreboard, Seg};
use super::stats::RttHistogram;
use super::timer::{Fire, Timer};
use super::{Out, TimerKind};
use crate::config::{FlowConfig, PacingMode};
use crate::packet::{self, Ecn, Kind, Packet};

mod undo;

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
/// SYN retransmissions before giving up (`sysctl_tcp_syn_retries`).
const SYN_RETRIES: u32 = 6;

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
    pacing_mode: PacingMode,
    /// Cap on bytes sent and not yet acknowledged (the send buffer), if any.
    sndbuf: Option<u64>,
    conn: Conn,
    pub tcp: TcpState,
    pub cc: Box<dyn CongestionControl>,
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
    /// ACKs seen, for the debug-build counter check.
    #[cfg(debug_assertions)]
    verify_tick: u32,
    /// ssthresh from the metrics cache, applied when the connection is established
    /// (`tcp_init_metrics`); set by the world before `connect`.
    cached_ssthresh: Option<u32>,
}

impl Sender {
    pub fn new(cfg: &FlowConfig, peer: u32, cc: Box<dyn CongestionControl>) -> Self {
        let start = SimTime::ZERO + cfg.start;
        let mut tcp = TcpState::new(cfg.mss, cfg.initial_cwnd);
        tcp.now = start;
        // With pacing forced on (as under fq), the socket counts as paced for every
        // algorithm (`sk_pacing_status != SK_PACING_NONE`), e.g. for HyStart's ACK-train test.
        tcp.pacing_needed = cfg.pacing == PacingMode::On;
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
            conn: Conn::Idle,
            tcp,
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
            rtt: RttEstimator::new(cfg.min_rto),
            backoff: 0,
            retransmits: 0,
            rto_timer: Timer::default(),
            reo_timer: Timer::default(),
            tlp_timer: Timer::default(),
            pace_timer: Timer::default(),
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
            #[cfg(debug_assertions)]
            verify_tick: 0,
        }
    }

    /// Hand the sender the metrics cache's ssthresh for its destination (world.rs); it is
    /// applied when the handshake completes, as `tcp_init_metrics` does.
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
        self.tcp.now = now;
        self.cc.on_init(now, &mut self.tcp);
        self.write_xmit(now, out);
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

    fn set_state(&mut self, now: SimTime, s: CaState) {
        if self.tcp.ca_state != s {
            self.cc.on_state(now, &mut self.tcp, s);
            self.tcp.ca_state = s;
        }
    }

    // ---------------------------------------------------------------- sending

    fn pacing_enabled(&self) -> bool {
        match self.pacing_mode {
            PacingMode::On => true,
            PacingMode::Off => false,
            PacingMode::Auto => self.tcp.pacing_needed,
        }
    }

    /// `tcp_pacing_check`: true if pacing forbids sending now (and arms the pacing timer).
    fn paced_out(&mut self, now: SimTime, out: &mut Out) -> bool {
        if self.pacing_enabled() && self.tcp.wstamp > now {
            let at = self.tcp.wstamp;
            self.arm(TimerKind::Pace, at, out);
            return true;
        }
        false
    }

    /// `tcp_update_skb_after_send`: advance the pacing clock by this packet's airtime.
    fn pace_after_send(&mut self, now: SimTime, wire_bytes: u32) {
        if !self.pacing_enabled() || self.tcp.pacing_rate_bps == 0 {
            return;
        }
        let rate = self
            .tcp
            .pacing_rate_bps
            .min(self.tcp.max_pacing_rate_bps)
            .max(1);
        let len_ns = wire_bytes as u128 * 1_000_000_000 / rate as u128;
        self.tcp.wstamp = self.tcp.wstamp.max(now) + SimDuration::from_nanos(len_ns as u64);
    }

    /// `tcp_rate_skb_sent`.
    fn rate_on_send(&mut self, now: SimTime) -> (SimTime, SimTime, u64, u64, bool) {
        if self.tcp.packets_out == 0 {
            self.first_tx_mstamp = now;
            self.tcp.delivered_mstamp = now;
        }
        (
            self.first_tx_mstamp,
            self.tcp.delivered_mstamp,
            self.tcp.delivered,
            self.tcp.delivered_ce,
            self.tcp.app_limited != 0,
        )
    }

    fn build_data(&mut self, now: SimTime, idx: u64, retrans: bool) -> Packet {
        let seq = idx * self.mss as u64;
        let end = match self.size {
            Some(s) => (seq + self.mss as u64).min(s),
            None => seq + self.mss as u64,
        };
        let mut p = Packet::new(self.flow, Kind::Data, self.peer);
        p.seq = seq;
        p.len = (end - seq) as u32;
        p.wire_bytes += p.len
            + if self.timestamps {
                packet::TS_OPTION
            } else {
                0
            };
        p.tsval = self.ts_now(now);
        p.tsecr = if self.timestamps { self.ts_recent } else { 0 };
        p.retrans = retrans;
        if self.tcp.ecn_ok {
            p.ecn = Ecn::Ect; // RFC 3168 §6.1.5: retransmissions may be ECT in Linux too
            if self.cwr_pending && !retrans {
                p.cwr = true;
                self.cwr_pending = false;
            }
        }
        p
    }

    /// Send one new segment (`tcp_transmit_skb` + `tcp_event_new_data_sent`).
    fn send_new(&mut self, now: SimTime, out: &mut Out) {
        if self.tcp.in_flight() == 0 {
            self.cc.on_event(now, &mut self.tcp, CaEvent::TxStart);
        }
        let (first_tx, dmst, deliv, deliv_ce, app) = self.rate_on_send(now);
        let idx = self.sb.push(Seg {
            xmit: now,
            first_tx,
            delivered_mstamp: Some(dmst),
            delivered: deliv,
            delivered_ce: deliv_ce,
            app_limited: app,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
        });
        let p = self.build_data(now, idx, false);
        self.tcp.snd_nxt += p.len as u64;
        self.tcp.packets_out += 1;
        self.tcp.lsndtime = now;
        self.stats.sent_packets += 1;
        if !self.rto_timer.is_armed() && !self.tlp_timer.is_armed() {
            let at = now + self.rto_backed_off();
            self.arm(TimerKind::Rto, at, out);
        }
        self.pace_after_send(now, p.wire_bytes);
        out.pkts.push(p);
    }

    /// Retransmit segment `idx` (`tcp_retransmit_skb`): also the episode's undo bookkeeping.
    fn retransmit(&mut self, now: SimTime, idx: u64, out: &mut Out) {
        self.retransmit_skb(now, idx, out);
        // Save the stamp of the first retransmission; one more retransmission to undo.
        if self.undo.retrans_stamp.is_none() {
            self.undo.retrans_stamp = Some(self.ts_now(now));
        }
        self.undo.retrans = Some(self.undo.retrans.unwrap_or(0) + 1);
    }

    /// `__tcp_retransmit_skb`: put segment `idx` on the wire again.
    fn retransmit_skb(&mut self, now: SimTime, idx: u64, out: &mut Out) {
        let (first_tx, dmst, deliv, deliv_ce, app) = self.rate_on_send(now);
        let s = self.sb.get_mut(idx);
        s.xmit = now;
        s.first_tx = first_tx;
        s.delivered_mstamp = Some(dmst);
        s.delivered = deliv;
        s.delivered_ce = deliv_ce;
        s.app_limited = app;
        if !s.retrans {
            s.retrans = true;
            self.tcp.retrans_out += 1;
        }
        s.ever_retrans = true;
        self.sb.retransmitted(idx, now);
        let p = self.build_data(now, idx, true);
        self.tcp.lsndtime = now;
        self.stats.sent_packets += 1;
        self.stats.retransmitted_packets += 1;
        self.stats.retrans_in_bin += 1;
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        self.pace_after_send(now, p.wire_bytes);
        out.pkts.push(p);
    }

    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tcp.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_xmit_retransmit_queue`: retransmit lost segments in order while cwnd allows.
    /// Every segment below the hint is known not to await retransmission, so each ACK
    /// scans only from the first candidate (and stops once all lost ones are resent).
    fn xmit_retransmit_queue(&mut self, now: SimTime, out: &mut Out) {
        let mut idx = self.sb.retransmit_hint.max(self.sb.head);
        let tail = self.sb.tail();
        while idx < tail {
            if self.tcp.retrans_out >= self.tcp.lost_out || self.tcp.in_flight() >= self.tcp.cwnd {
                break;
            }
            let s = self.sb.get(idx);
            if s.lost && !s.retrans && !s.sacked {
                if self.paced_out(now, out) {
                    break;
                }
                self.retransmit(now, idx, out);
            }
            idx += 1;
            self.sb.retransmit_hint = idx;
        }
    }

    /// `tcp_write_xmit`: send new data while cwnd, the receive window and pacing allow.
    fn write_xmit(&mut self, now: SimTime, out: &mut Out) {
        if !self.is_established() {
            return;
        }
        let mut sent = 0;
        let mut cwnd_limited = false;
        loop {
            if self.all_sent() {
                self.rate_check_app_limited();
                break;
            }
            if self.tcp.in_flight() >= self.tcp.cwnd {
                cwnd_limited = true;
                break;
            }
            let end = self.tcp.snd_nxt + self.mss as u64;
            if end > self.tcp.snd_una + self.snd_wnd {
                break; // receive-window limited
            }
            if self
                .sndbuf
                .is_some_and(|b| end > self.tcp.snd_una.saturating_add(b))
            {
                break; // send-buffer limited (`sk_stream_memory_free`)
            }
            if self.paced_out(now, out) {
                break;
            }
            self.send_new(now, out);
            sent += 1;
        }
        if sent > 0 && self.in_cwnd_reduction() {
            self.prr_out += sent;
        }
        if sent > 0 || cwnd_limited {
            self.cwnd_validate(now, cwnd_limited);
        }
        if sent > 0 {
            self.schedule_loss_probe(now, out);
        }
    }

    /// `tcp_rate_check_app_limited`.
    fn rate_check_app_limited(&mut self) {
        if self.tcp.in_flight() < self.tcp.cwnd && self.tcp.lost_out <= self.tcp.retrans_out {
            self.tcp.app_limited = (self.tcp.delivered + self.tcp.in_flight() as u64).max(1);
        }
    }

    /// `tcp_cwnd_validate`: remember whether the last window was fully used.
    fn cwnd_validate(&mut self, now: SimTime, is_cwnd_limited: bool) {
        let t = &mut self.tcp;
        if t.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!t.is_cwnd_limited && t.packets_out > t.max_packets_out)
        {
            t.is_cwnd_limited = is_cwnd_limited;
            t.max_packets_out = t.packets_out;
            self.cwnd_usage_seq = t.snd_nxt;
        }
        if t.is_cwnd_limited() {
            t.cwnd_stamp = now;
        }
    }

    fn rto_backed_off(&self) -> SimDuration {
        self.rtt
            .rto()
            .mul_u64(1u64 << self.backoff.min(16))
            .min(RTO_MAX)
    }

    /// `tcp_rearm_rto`.
    fn rearm_rto(&mut self, now: SimTime, out: &mut Out) {
        if self.tcp.packets_out == 0 {
            self.rto_timer.clear();
            return;
        }
        let at = now + self.rto_backed_off();
        self.arm(TimerKind::Rto, at, out);
    }

    /// `tcp_schedule_loss_probe`: arm the PTO (RFC 8985 §7.2) instead of the RTO when allowed.
    fn schedule_loss_probe(&mut self, now: SimTime, out: &mut Out) -> bool {
        if !self.sack
            || self.tcp.packets_out == 0
            || !matches!(self.tcp.ca_state, CaState::Open | CaState::Cwr)
            || self.tlp_high_seq != 0
        {
            return false;
        }
        let srtt = self.rtt.srtt_us();
        let mut pto = if srtt > 0 {
            let base = SimDuration::from_micros(2 * srtt);
            if self.tcp.packets_out == 1 {
                base + TLP_ONE_PACKET_SLACK
            } else {
                base + TIMEOUT_MIN
            }
        } else {
            RTO_INIT
        };
        pto = pto.min(self.rto_backed_off());
        self.arm(TimerKind::Tlp, now + pto, out);
        self.rto_timer.clear();
        true
    }

    /// `tcp_set_xmit_timer`.
    fn set_xmit_timer(&mut self, now: SimTime, out: &mut Out) {
        if !self.schedule_loss_probe(now, out) {
            self.tlp_timer.clear();
            self.rearm_rto(now, out);
        }
    }

    // ---------------------------------------------------------------- timers

    pub fn on_timer(&mut self, now: SimTime, kind: TimerKind, out: &mut Out) {
        let t = match kind {
            TimerKind::Rto => &mut self.rto_timer,
            TimerKind::Reo => &mut self.reo_timer,
            TimerKind::Tlp => &mut self.tlp_timer,
            TimerKind::Pace => &mut self.pace_timer,
            TimerKind::DelAck => return,
        };
        match t.on_event(now) {
            Fire::Stale => return,
            Fire::Later(at) => {
                out.timers.push((kind, at));
                return;
            }
            Fire::Now => {}
        }
        self.tcp.now = now;
        match kind {
            TimerKind::Rto => self.on_rto(now, out),
            TimerKind::Reo => self.on_reo_timeout(now, out),
            TimerKind::Tlp => self.on_loss_probe(now, out),
            TimerKind::Pace => {
                self.xmit_retransmit_queue(now, out);
                self.write_xmit(now, out);
            }
            TimerKind::DelAck => {}
        }
    }

    /// `tcp_retransmit_timer` → `tcp_enter_loss`.
    fn on_rto(&mut self, now: SimTime, out: &mut Out) {
        match self.conn {
            Conn::SynSent { retries, .. } => {
                if retries >= SYN_RETRIES {
                    self.conn = Conn::Closed;
                    return;
                }
                self.conn = Conn::SynSent {
                    retries: retries + 1,
                    sent_at: now,
                };
                self.send_syn(now, out);
                let at = now + RTO_INIT.mul_u64(1 << (retries + 1));
                self.arm(TimerKind::Rto, at, out);
                return;
            }
            Conn::Established => {}
            _ => return,
        }
        if self.tcp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        self.tlp_high_seq = 0;
        self.enter_loss(now);
        self.retransmits += 1; // tcp_update_rto_stats
                               // Retransmit the head (`tcp_retransmit_skb(sk, tcp_rtx_queue_head(sk), 1)`).
        let head = self.sb.head;
        if !self.sb.get(head).sacked {
            self.retransmit(now, head, out);
        }
        self.backoff += 1;
        let at = now + self.rto_backed_off();
        self.arm(TimerKind::Rto, at, out);
    }

    /// `tcp_enter_loss`.
    fn enter_loss(&mut self, now: SimTime) {
        let new_recovery = self.tcp.ca_state < CaState::Recovery;
        self.timeout_mark_lost(now);
        // Reduce ssthresh if it has not yet been made inside this window.
        let t = &self.tcp;
        if t.ca_state <= CaState::Disorder
            || t.snd_una >= self.high_seq
            || (t.ca_state == CaState::Loss && self.retransmits == 0)
        {
            self.undo.prior_ssthresh = self.current_ssthresh();
            self.tcp.prior_cwnd = self.tcp.cwnd;
            let ss = self.cc.ssthresh(now, &self.tcp);
            self.tcp.ssthresh = ss;
            self.cc.on_event(now, &mut self.tcp, CaEvent::Loss);
            self.init_undo();
        }
        self.tcp.cwnd = self.tcp.in_flight() + 1;
        self.tcp.cwnd_cnt = 0;
        self.tcp.cwnd_stamp = now;
        self.reset_reordering_on_timeout(REORDERING);
        self.set_state(now, CaState::Loss);
        self.high_seq = self.tcp.snd_nxt;
        self.reo_timer.clear();
        self.tlp_timer.clear();
        if self.tcp.ecn_ok {
            self.cwr_pending = true;
        }
        // F-RTO (RFC 5682 §3.1 step 1): unless a recovery is underway, or on repeated
        // timeouts of the same snd_una (§3.2).
        self.undo.frto = FRTO && (new_recovery || self.retransmits > 0);
    }

    /// `tcp_timeout_mark_lost`: every un-SACKed segment is lost, except (with RACK) those sent
    /// within the last RACK RTT, which may still be on their way.
    fn timeout_mark_lost(&mut self, now: SimTime) {
        if !self.sack {
            self.tcp.sacked_out = 0; // tcp_reset_reno_sack
        }
        let head = self.sb.head;
        for idx in head..self.sb.tail() {
            let s = self.sb.get(idx);
            let elapsed_us = now.saturating_since(s.xmit).as_micros();
            if idx != head && !s.sacked && self.sack && self.rack.rtt_us > elapsed_us {
                continue; // don't mark recently sent ones lost yet
            }
            self.mark_lost(idx);
        }
        self.sb.retransmit_hint = head;
    }

    /// `tcp_send_loss_probe`.
    fn on_loss_probe(&mut self, now: SimTime, out: &mut Out) {
        if self.tcp.packets_out == 0 || self.tlp_high_seq != 0 {
            self.rearm_rto(now, out);
            return;
        }
        let can_send_new = !self.all_sent()
            && self.tcp.snd_nxt + self.mss as u64 <= self.tcp.snd_una + self.snd_wnd;
        if can_send_new {
            self.send_new(now, out); // a probe may exceed cwnd (`push_one == 2`)
            self.tlp_retrans = false;
        } else {
            let last = self.sb.tail() - 1;
            if self.sb.get(last).sacked {
                self.rearm_rto(now, out);
                return;
            }
            self.retransmit_skb(now, last, out);
            self.tlp_retrans = true;
        }
        self.tlp_high_seq = self.tcp.snd_nxt;
        self.tlp_timer.clear();
        self.rearm_rto(now, out);
    }

    /// `tcp_rack_reo_timeout`.
    fn on_reo_timeout(&mut self, now: SimTime, out: &mut Out) {
        let prior = self.tcp.in_flight();
        self.rack_detect_loss(now, out);
        if prior != self.tcp.in_flight() {
            if self.tcp.ca_state != CaState::Recovery {
                self.enter_recovery(now, false);
                if !self.cc.has_cong_control() {
                    self.cwnd_reduction(1, 0, false);
                }
            }
            self.xmit_retransmit_queue(now, out);
        }
        if !self.rto_timer.is_armed() {
            self.rearm_rto(now, out);
        }
    }

    // ---------------------------------------------------------------- receiving

    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        // tcp_replace_ts_recent: every pure ACK sits at rcv_wup; PAWS keeps the newest TSval.
        self.ts_recent = self.ts_recent.max(pkt.tsval);
        match pkt.kind {
            Kind::SynAck => self.on_synack(now, pkt, out),
            Kind::Ack if self.is_established() => self.on_ack(now, pkt, out),
            _ => {}
        }
    }

    /// `tcp_ack`.
    fn on_ack(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        self.tcp.now = now;
        let ack = pkt.ack;
        if ack > self.tcp.snd_nxt || ack < self.tcp.snd_una {
            return; // ahead of what was sent, or older than snd_una
        }
        let prior_snd_una = self.tcp.snd_una;
        let prior_in_flight = self.tcp.in_flight();
        let prior_delivered = self.tcp.delivered;
        let prior_lost = self.tcp.lost;
        let mut flag = Flags {
            win_update: pkt.rwnd != self.snd_wnd,
            ..Flags::default()
        };
        self.snd_wnd = pkt.rwnd;
        self.max_window = self.max_window.max(pkt.rwnd);
        flag.ece = self.tcp.ecn_ok && pkt.ece;
        // `rx_opt.rcv_tsecr` for undo (Eifel); the sender's TSval clock is ts_now's.
        self.rcv_tsecr = (self.timestamps && pkt.tsecr > 0).then_some(pkt.tsecr);
        if ack > prior_snd_una {
            self.retransmits = 0; // icsk_retransmits
        }
        let prior_fack = self.highest_sack_seq();
        // `state->reord`: lowest sequence found delivered out of order on this ACK.
        let mut reord = self.tcp.snd_nxt;
        // `tp->rx_opt.rcv_tsval/rcv_tsecr` are not passed on yet: TCP-LP's remote-clock
        // estimator collapses the flow when fed them (0.3 of 48 Mbit/s alone on a link), so
        // LP runs on its documented RTT fallback until that is fixed.

        // Rate sample being built (`struct rate_sample`).
        let mut rs = RateSample::default();
        let mut first_sackt: Option<SimTime> = None;
        let mut last_sackt: Option<SimTime> = None;

        // --- SACK (tcp_sacktag_write_queue)
        if self.sack && pkt.nsack > 0 {
            let blocks = pkt.sack_blocks();
            // RFC 2883: a first block below the cumulative ACK, or inside the second, is a DSACK.
            let dsack = self.check_dsack(blocks, ack, prior_snd_una, &mut flag);
            let mss = self.mss as u64;
            for (bi, &(s, e)) in blocks.iter().enumerate() {
                if bi == 0 && dsack {
                    // DSACKed segments still queued (`tcp_sacktag_one` with dup_sack): below
                    // the new snd_una only within the episode (`tcp_is_sackblock_valid`).
                    let valid = s >= ack || self.undo.marker.is_some_and(|m| e > m);
                    if valid && e > prior_snd_una {
                        if let Some(r) = self.dsack_tag(s.max(prior_snd_una) / mss, e.div_ceil(mss))
                        {
                            reord = reord.min(r);
                        }
                    }
                }
                if e <= ack || s >= self.tcp.snd_nxt {
                    continue;
                }
                let a = s.max(ack) / mss;
                let b = e.div_ceil(mss);
                let tcp = &mut self.tcp;
                let rack = &mut self.rack;
                let first_tx_mstamp = &mut self.first_tx_mstamp;
                let min_rtt = self.rtt.min_rtt_us();
                let high_seq = self.high_seq;
                let snd_nxt = tcp.snd_nxt;
                self.sb.sack(a, b, |idx, seg| {
                    flag.data_sacked = true;
                    if seg.retrans {
                        seg.retrans = false;
                        tcp.retrans_out -= 1;
                    } else if !seg.ever_retrans {
                        // A never-retransmitted segment in a hole below the highest SACK: reordering.
                        if idx * mss < prior_fack {
                            reord = reord.min(idx * mss);
                        }
                        if ((idx + 1) * mss).min(snd_nxt) <= high_seq {
                            flag.orig_sack_acked = true;
                        }
                        first_sackt.get_or_insert(seg.xmit);
                        last_sackt = Some(seg.xmit);
                    }
                    if seg.lost {
                        seg.lost = false;
                        tcp.lost_out -= 1;
                    }
                    seg.sacked = true;
                    tcp.sacked_out += 1;
                    tcp.delivered += 1;
                    if flag.ece {
                        tcp.delivered_ce += 1;
                    }
                    rate_skb_delivered(&mut rs, first_tx_mstamp, idx, seg, true);
                    rack_advance(rack, idx, seg, now, min_rtt);
                });
            }
            if self.tcp.ca_state != CaState::Loss || self.undo.marker.is_some() {
                self.check_sack_reordering(reord, false);
            }
        }

        // --- cumulative ACK (tcp_clean_rtx_queue)
        let mut pkts_acked = 0u32;
        let mut first_ackt: Option<SimTime> = None;
        let mut last_ackt: Option<SimTime> = None;
        if ack > prior_snd_una {
            flag.data_acked = true;
            let mss = self.mss as u64;
            let new_head = if self.size.is_some_and(|s| ack >= s) {
                self.sb.tail()
            } else {
                ack / mss
            };
            let tcp = &mut self.tcp;
            let rack = &mut self.rack;
            let first_tx_mstamp = &mut self.first_tx_mstamp;
            let min_rtt = self.rtt.min_rtt_us();
            let sack = self.sack;
            let high_seq = self.high_seq;
            let snd_nxt = tcp.snd_nxt;
            let spurious_before = self.rcv_tsecr;
            // `reord` of tcp_clean_rtx_queue: lowest acked never-retransmitted un-SACKed seq.
            let mut acked_reord = snd_nxt;
            self.sb.pop_acked(new_head, |idx, mut seg| {
                pkts_acked += 1;
                if seg.ever_retrans {
                    if seg.retrans {
                        tcp.retrans_out -= 1;
                    }
                    flag.retrans_data_acked = true;
                } else if !seg.sacked {
                    last_ackt = Some(seg.xmit);
                    first_ackt.get_or_insert(seg.xmit);
                    acked_reord = acked_reord.min(idx * mss);
                    if ((idx + 1) * mss).min(snd_nxt) <= high_seq {
                        flag.orig_sack_acked = true;
                    }
                }
                if seg.sacked {
                    tcp.sacked_out -= 1;
                } else {
                    if sack {
                        tcp.delivered += 1;
                        if flag.ece {
                            tcp.delivered_ce += 1;
                        }
                    }
                    rate_skb_delivered(&mut rs, first_tx_mstamp, idx, &mut seg, false);
                    // `tcp_skb_spurious_retrans`: an ACK echoing a TSval from before the
                    // last retransmission was for an earlier copy; it does not advance RACK.
                    let ts_xmit = seg.xmit.as_nanos() / 1_000_000 + 1;
                    let spurious =
                        seg.ever_retrans && spurious_before.is_some_and(|ecr| ecr < ts_xmit);
                    if !spurious {
                        rack_advance(rack, idx, &seg, now, min_rtt);
                    }
                }
                if seg.lost {
                    tcp.lost_out -= 1;
                }
                tcp.packets_out -= 1;
            });
            self.tcp.snd_una = ack;
            if !self.sack {
                self.remove_reno_sacks(pkts_acked, flag.ece);
                // Without SACK bits a retransmitted segment cannot prove the progress original.
                if flag.retrans_data_acked {
                    flag.orig_sack_acked = false;
                }
            } else if acked_reord < prior_fack {
                // A never-retransmitted hole got filled: reordering.
                self.check_sack_reordering(acked_reord, false);
            }
            if self.size.is_some_and(|s| ack >= s) && self.acked_all_at.is_none() {
                self.acked_all_at = Some(now);
            }
        }

        // --- RTT (tcp_ack_update_rtt)
        let mut seq_rtt = first_ackt.map(|t| now.saturating_since(t).as_micros());
        let mut ca_rtt = last_ackt.map(|t| now.saturating_since(t).as_micros());
        if seq_rtt.is_none() {
            if let (Some(f), Some(l)) = (first_sackt, last_sackt) {
                seq_rtt = Some(now.saturating_since(f).as_micros());
                ca_rtt = Some(now.saturating_since(l).as_micros());
            }
        }
        if seq_rtt.is_none() && self.timestamps && pkt.tsecr > 0 && flag.data_acked {
            let us = self.ts_now(now).saturating_sub(pkt.tsecr) * 1000;
            seq_rtt = Some(us);
            ca_rtt = Some(us);
        }
        rs.rtt_us = ca_rtt;
        if let Some(m) = seq_rtt {
            self.rtt.update_min_rtt(now, ca_rtt.unwrap_or(m));
            self.rtt.sample(m, self.tcp.snd_una, self.tcp.snd_nxt);
            self.stats.rtt.record(m);
            self.backoff = 0;
            self.sync_rtt();
        }

        // --- in_ack_event and pkts_acked
        self.cc.on_ack_event(
            now,
            &mut self.tcp,
            AckEventFlags {
                slow_path: !flag.data_acked || flag.data_sacked,
                window_update: flag.win_update,
                ece: flag.ece,
            },
        );
        let mut sample = AckSample {
            ack_seq: ack,
            pkts_acked,
            rtt_us: ca_rtt,
            prior_in_flight,
            ece: flag.ece,
            ..AckSample::default()
        };
        if pkts_acked > 0 || flag.data_sacked {
            self.cc.on_pkts_acked(now, &mut self.tcp, &sample);
        }

        // --- RACK's reordering window (tcp_rack_update_reo_wnd)
        self.rack_update_reo_wnd(rs.prior_delivered);

        // --- TLP episode (tcp_process_tlp_ack)
        if self.tlp_high_seq != 0 && ack >= self.tlp_high_seq {
            if !self.tlp_retrans || flag.dsack_tlp {
                self.tlp_high_seq = 0;
            } else if ack > self.tlp_high_seq {
                // The probe repaired a real loss: reduce cwnd once (CWR).
                self.init_cwnd_reduction(now);
                self.set_state(now, CaState::Cwr);
                self.end_cwnd_reduction(now);
                self.try_keep_open(now);
            } else if !(flag.data_acked || flag.win_update || flag.data_sacked) {
                self.tlp_high_seq = 0;
            }
        }

        // --- loss state machine
        if flag.data_acked {
            self.set_xmit_timer(now, out);
        }
        let not_dup = flag.data_acked || flag.win_update;
        let dubious = !not_dup
            || flag.data_sacked
            || flag.ece
            || flag.dsack
            || self.tcp.ca_state != CaState::Open;
        let mut rexmit = Rexmit::None;
        if dubious {
            let num_dupack = u32::from(!flag.data_acked && !not_dup && !flag.dsack);
            self.fastretrans_alert(now, prior_snd_una, num_dupack, &mut flag, &mut rexmit, out);
        }

        // --- rate sample (tcp_rate_gen) and cwnd (tcp_cong_control)
        let delivered = (self.tcp.delivered - prior_delivered) as u32;
        let lost = (self.tcp.lost - prior_lost) as u32;
        self.rate_gen(now, delivered, lost, &mut rs);
        sample.acked_sacked = delivered;
        sample.losses = lost;
        sample.delivered = rs.delivered;
        sample.delivered_ce = rs.delivered_ce;
        sample.interval_us = rs.interval_us.unwrap_or(0);
        sample.prior_delivered = rs.prior_delivered;
        sample.is_app_limited = rs.is_app_limited;
        sample.is_retrans = rs.is_retrans;
        self.cong_control(now, &sample, &flag);

        // --- transmit (tcp_xmit_recovery, tcp_data_snd_check)
        self.xmit_recovery(now, rexmit, out);
        self.write_xmit(now, out);
        #[cfg(debug_assertions)]
        {
            // Every ACK while the window is small; every 64th on large ones (O(window) each).
            self.verify_tick = self.verify_tick.wrapping_add(1);
            if self.sb.segs.len() <= 256 || self.verify_tick.is_multiple_of(64) {
                self.verify_left_out();
            }
        }
        if self.tcp.packets_out == 0 {
            self.rto_timer.clear();
            self.tlp_timer.clear();
            if self.all_sent() {
                self.conn = Conn::Closed;
            }
        }
    }

    /// `tcp_verify_left_out` and more (debug builds): the counters agree with the scoreboard.
    #[cfg(debug_assertions)]
    fn verify_left_out(&self) {
        let segs = &self.sb.segs;
        let t = &self.tcp;
        assert_eq!(t.packets_out as usize, segs.len(), "packets_out");
        assert_eq!(
            t.lost_out as usize,
            segs.iter().filter(|s| s.lost).count(),
            "lost_out"
        );
        assert_eq!(
            t.retrans_out as usize,
            segs.iter().filter(|s| s.retrans).count(),
            "retrans_out"
        );
        if self.sack {
            assert_eq!(
                t.sacked_out as usize,
                segs.iter().filter(|s| s.sacked).count(),
                "sacked_out"
            );
        }
        assert!(
            t.sacked_out + t.lost_out <= t.packets_out,
            "left_out > packets_out"
        );
    }

    /// `tcp_xmit_recovery`: after cwnd was updated, F-RTO's new data or retransmissions.
    fn xmit_recovery(&mut self, now: SimTime, rexmit: Rexmit, out: &mut Out) {
        match rexmit {
            Rexmit::None => return,
            Rexmit::New => {
                self.write_xmit(now, out);
                if self.tcp.snd_nxt > self.high_seq {
                    return;
                }
                self.undo.frto = false;
            }
            Rexmit::Lost => {}
        }
        self.xmit_retransmit_queue(now, out);
    }

    /// `tcp_may_raise_cwnd`: grow only on in-order delivery (RFC 5681), or on any delivery
    /// once reordering beyond the dupthresh was seen.
    fn may_raise_cwnd(&self, flag: &Flags) -> bool {
        if self.reordering > REORDERING {
            return flag.data_acked || flag.data_sacked;
        }
        flag.data_acked
    }

    /// `tcp_cong_control`.
    fn cong_control(&mut self, now: SimTime, sample: &AckSample, flag: &Flags) {
        if self.cc.has_cong_control() {
            self.cc.on_cong_control(now, &mut self.tcp, sample);
            return;
        }
        if self.in_cwnd_reduction() {
            let snd_una_advanced = flag.data_acked;
            self.cwnd_reduction(sample.acked_sacked, sample.losses, snd_una_advanced);
        } else if self.may_raise_cwnd(flag) {
            self.cc.on_cong_avoid(now, &mut self.tcp, sample);
            self.tcp.cwnd_stamp = now;
        }
        self.update_pacing_rate();
    }

    /// `tcp_update_pacing_rate`: 200 % of cwnd/srtt in slow start, 120 % after.
    fn update_pacing_rate(&mut self) {
        let t = &mut self.tcp;
        let ratio = if t.cwnd < t.ssthresh / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let srtt = self.rtt.srtt_us();
        if srtt == 0 {
            return;
        }
        let bytes =
            t.mss as u128 * t.cwnd.max(t.packets_out) as u128 * ratio as u128 * 1_000_000 / 100;
        t.pacing_rate_bps = ((bytes / srtt as u128) as u64).min(t.max_pacing_rate_bps);
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, snd_una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tcp.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.tcp.in_flight() as i64;
        let delta = self.tcp.ssthresh as i64 - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64 = if delta < 0 {
            // PRR proper: send in proportion to what was delivered (RFC 6937 §3).
            let dividend = self.tcp.ssthresh as u64 * self.prr_delivered as u64
                + self.tcp.prior_cwnd as u64
                - 1;
            (dividend / self.tcp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            // PRR-SSRB: slow start back up to ssthresh.
            let mut s =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if snd_una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tcp.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self, now: SimTime) {
        self.high_seq = self.tcp.snd_nxt;
        self.tlp_high_seq = 0;
        self.tcp.cwnd_cnt = 0;
        self.tcp.prior_cwnd = self.tcp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        let ss = self.cc.ssthresh(now, &self.tcp);
        self.tcp.ssthresh = ss;
        if self.tcp.ecn_ok {
            self.cwr_pending = true;
        }
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self, now: SimTime) {
        if self.cc.has_cong_control() {
            return;
        }
        // Reset cwnd to ssthresh in CWR or Recovery (unless it's undone).
        if self.tcp.ssthresh < INFINITE_SSTHRESH
            && (self.tcp.ca_state == CaState::Cwr || self.undo.marker.is_some())
        {
            self.tcp.cwnd = self.tcp.ssthresh;
            self.tcp.cwnd_stamp = now;
        }
        self.cc.on_event(now, &mut self.tcp, CaEvent::CompleteCwr);
    }

    /// `tcp_enter_cwr` (ECN echo): congestion is proven, so no undo.
    fn enter_cwr(&mut self, now: SimTime) {
        self.undo.prior_ssthresh = 0;
        if self.tcp.ca_state < CaState::Cwr {
            self.undo.marker = None;
            self.init_cwnd_reduction(now);
            self.set_state(now, CaState::Cwr);
        }
    }

    /// `tcp_enter_recovery`.
    fn enter_recovery(&mut self, now: SimTime, ece_ack: bool) {
        self.retrans_stamp_cleanup();
        self.stats.recovery_count += 1;
        self.undo.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.undo.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction(now);
        }
        self.set_state(now, CaState::Recovery);
    }

    /// `tcp_try_keep_open`.
    fn try_keep_open(&mut self, now: SimTime) {
        let t = &self.tcp;
        let s = if t.sacked_out + t.lost_out > 0 || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.tcp.ca_state != s {
            self.set_state(now, s);
            self.high_seq = self.tcp.snd_nxt;
        }
    }

    /// `tcp_try_to_open`.
    fn try_to_open(&mut self, now: SimTime, flag: &Flags) {
        self.retrans_stamp_cleanup();
        if flag.ece {
            self.enter_cwr(now);
        }
        if self.tcp.ca_state != CaState::Cwr {
            self.try_keep_open(now);
        }
    }

    /// `tcp_time_to_recover` with RACK on: a loss is proven.
    fn time_to_recover(&self) -> bool {
        if self.tcp.lost_out > 0 {
            return true;
        }
        // Without SACK: the classic dupthresh (`tcp_dupack_heuristics`).
        !self.sack && self.tcp.sacked_out + 1 > self.reordering
    }

    /// `tcp_fastretrans_alert`.
    fn fastretrans_alert(
        &mut self,
        now: SimTime,
        prior_snd_una: u64,
        num_dupack: u32,
        flag: &mut Flags,
        rexmit: &mut Rexmit,
        out: &mut Out,
    ) {
        let snd_una_advanced = self.tcp.snd_una > prior_snd_una;
        if self.tcp.packets_out == 0 && self.tcp.sacked_out > 0 {
            self.tcp.sacked_out = 0;
        }
        // A. ECE: the reduction is required, an undo may not restore cwnd.
        if flag.ece {
            self.undo.prior_ssthresh = 0;
        }
        // D. Exit a state when high_seq is acknowledged.
        if self.tcp.ca_state == CaState::Open {
            self.undo.retrans_stamp = None;
        } else if self.tcp.snd_una >= self.high_seq {
            match self.tcp.ca_state {
                // CWR holds until something above high_seq is acknowledged (the CWR flag arrived).
                CaState::Cwr if self.tcp.snd_una != self.high_seq => {
                    self.end_cwnd_reduction(now);
                    self.set_state(now, CaState::Open);
                }
                CaState::Recovery => {
                    if !self.sack {
                        self.tcp.sacked_out = 0;
                    }
                    // NewReno holds Recovery until something above high_seq is acked.
                    if self.try_undo_recovery(now) {
                        return;
                    }
                    self.end_cwnd_reduction(now);
                }
                _ => {}
            }
        }
        // E. Process the state.
        match self.tcp.ca_state {
            CaState::Recovery => {
                if !snd_una_advanced {
                    if !self.sack {
                        self.add_reno_sack(num_dupack, flag.ece);
                    }
                } else if self.try_undo_partial(now, prior_snd_una) {
                    return;
                }
                if self.try_undo_dsack(now) {
                    self.try_keep_open(now);
                }
                self.identify_packet_loss(now, snd_una_advanced, flag, out);
                if self.tcp.ca_state != CaState::Recovery {
                    // Undo reverted the recovery; a loss still in evidence starts a new one.
                    if !self.time_to_recover() {
                        return;
                    }
                    self.enter_recovery(now, flag.ece);
                }
            }
            CaState::Loss => {
                self.process_loss(now, flag, num_dupack, rexmit);
                self.identify_packet_loss(now, snd_una_advanced, flag, out);
                // Change state if cwnd is undone or retransmits are lost.
                if !(self.tcp.ca_state == CaState::Open || flag.lost_retrans) {
                    return;
                }
                if !self.open_state_alert(now, snd_una_advanced, num_dupack, flag, out) {
                    return;
                }
            }
            _ => {
                if !self.open_state_alert(now, snd_una_advanced, num_dupack, flag, out) {
                    return;
                }
            }
        }
        *rexmit = Rexmit::Lost;
    }

    /// The default branch of `tcp_fastretrans_alert` (Open, Disorder, CWR): late DSACK undo,
    /// loss detection, and Recovery when a loss is proven. Returns true if Recovery began.
    fn open_state_alert(
        &mut self,
        now: SimTime,
        snd_una_advanced: bool,
        num_dupack: u32,
        flag: &mut Flags,
        out: &mut Out,
    ) -> bool {
        if !self.sack {
            if snd_una_advanced {
                self.tcp.sacked_out = 0;
            }
            self.add_reno_sack(num_dupack, flag.ece);
        }
        if self.tcp.ca_state <= CaState::Disorder {
            self.try_undo_dsack(now);
        }
        self.identify_packet_loss(now, snd_una_advanced, flag, out);
        if !self.time_to_recover() {
            self.try_to_open(now, flag);
            return false;
        }
        self.enter_recovery(now, flag.ece);
        true
    }

    /// `tcp_identify_packet_loss`.
    fn identify_packet_loss(
        &mut self,
        now: SimTime,
        snd_una_advanced: bool,
        flag: &mut Flags,
        out: &mut Out,
    ) {
        if self.sb.is_empty() {
            return;
        }
        if !self.sack {
            self.newreno_mark_lost(snd_una_advanced);
            return;
        }
        if self.rack.advanced {
            self.rack.advanced = false;
            let prior_retrans = self.tcp.retrans_out;
            self.rack_detect_loss(now, out);
            if self.tcp.retrans_out < prior_retrans {
                flag.lost_retrans = true;
            }
        }
    }

    /// `tcp_rack_detect_loss`: a segment is lost if one sent after it was delivered and
    /// it is older than the latest RTT plus the reordering window (RFC 8985 §6.2).
    fn rack_detect_loss(&mut self, now: SimTime, out: &mut Out) {
        let Some(rack_xmit) = self.rack.xmit else {
            return;
        };
        let reo_wnd = self.rack_reo_wnd();
        let mut timeout: Option<u64> = None;
        while let Some(&(idx, xmit)) = self.sb.tsorted.front() {
            // Stale entries: acknowledged, SACKed, sent again later, or already lost and
            // awaiting retransmission (it re-enters the list when retransmitted).
            let stale = idx < self.sb.head || {
                let s = self.sb.get(idx);
                s.sacked || s.xmit != xmit || (s.lost && !s.retrans)
            };
            if stale {
                self.sb.tsorted.pop_front();
                continue;
            }
            // Stop at the first segment not sent before the RACK reference.
            if !(xmit < rack_xmit || (xmit == rack_xmit && idx < self.rack.end_idx)) {
                break;
            }
            let elapsed = now.saturating_since(xmit).as_micros();
            let deadline = self.rack.rtt_us + reo_wnd;
            if elapsed >= deadline {
                self.mark_lost(idx);
                self.sb.tsorted.pop_front();
            } else {
                // The newest segment sent before the reference waits longest: Linux arms
                // the timer for that one; equivalently for the reference's send time.
                let wait = (self.rack.rtt_us + reo_wnd)
                    .saturating_sub(now.saturating_since(rack_xmit).as_micros());
                timeout = Some(wait.max(1));
                break;
            }
        }
        if let Some(us) = timeout {
            let at = now + SimDuration::from_micros(us) + TIMEOUT_MIN;
            self.arm(TimerKind::Reo, at, out);
        }
    }

    /// `tcp_mark_skb_lost`.
    fn mark_lost(&mut self, idx: u64) {
        let s = self.sb.get_mut(idx);
        if s.sacked {
            return;
        }
        if s.lost {
            if s.retrans {
                s.retrans = false; // a retransmission lost again
                self.tcp.retrans_out -= 1;
                self.tcp.lost += 1;
            }
        } else {
            s.lost = true;
            self.tcp.lost_out += 1;
            self.tcp.lost += 1;
        }
        if idx < self.sb.retransmit_hint {
            self.sb.retransmit_hint = idx;
        }
    }

    /// `tcp_newreno_mark_lost`: without SACK, the head is lost after dupthresh dupacks or
    /// on a partial ACK in Recovery (RFC 6582).
    fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
        let st = self.tcp.ca_state;
        if (st < CaState::Recovery && self.tcp.sacked_out >= self.reordering)
            || (st == CaState::Recovery && snd_una_advanced)
        {
            let head = self.sb.head;
            if !self.sb.get(head).lost {
                self.mark_lost(head);
            }
        }
    }

    /// `tcp_add_reno_sack`: without SACK, each dupack means one segment left the network.
    fn add_reno_sack(&mut self, num_dupack: u32, ece: bool) {
        if num_dupack == 0 {
            return;
        }
        let prior = self.tcp.sacked_out;
        self.tcp.sacked_out += num_dupack;
        // tcp_limit_reno_sacked
        let holes = self.tcp.lost_out.max(1).min(self.tcp.packets_out);
        if self.tcp.sacked_out + holes > self.tcp.packets_out {
            self.tcp.sacked_out = self.tcp.packets_out - holes;
        }
        let d = self.tcp.sacked_out.saturating_sub(prior) as u64;
        self.tcp.delivered += d;
        if ece {
            self.tcp.delivered_ce += d;
        }
    }

    /// `tcp_remove_reno_sacks`: a cumulative ACK eats the emulated SACKs.
    fn remove_reno_sacks(&mut self, acked: u32, ece: bool) {
        if acked == 0 {
            return;
        }
        let d = (acked.saturating_sub(self.tcp.sacked_out)).max(1) as u64;
        self.tcp.delivered += d;
        if ece {
            self.tcp.delivered_ce += d;
        }
        if acked > self.tcp.sacked_out {
            self.tcp.sacked_out = 0;
        } else {
            self.tcp.sacked_out -= acked - 1;
        }
    }

    /// `tcp_rate_gen`: turn the sample built during this ACK into a delivery rate.
    fn rate_gen(&mut self, now: SimTime, delivered: u32, lost: u32, rs: &mut RateSample) {
        let t = &mut self.tcp;
        if t.app_limited != 0 && t.delivered > t.app_limited {
            t.app_limited = 0;
        }
        if delivered > 0 {
            t.delivered_mstamp = now;
        }
        let _ = lost;
        let Some(prior_mstamp) = rs.prior_mstamp else {
            rs.delivered = None;
            rs.interval_us = None;
            return;
        };
        let d = t.delivered - rs.prior_delivered;
        rs.delivered = Some(d);
        rs.delivered_ce = t.delivered_ce - rs.prior_delivered_ce;
        let snd_us = rs.interval_us.unwrap_or(0);
        let ack_us = now.saturating_since(prior_mstamp).as_micros();
        let interval = snd_us.max(ack_us);
        // Intervals shorter than min_rtt are implausible (ACK compression); drop them.
        if interval < self.rtt.min_rtt_us() {
            rs.interval_us = None;
            return;
        }
        rs.interval_us = Some(interval);
    }
}

/// Linux `struct rate_sample` while it is being built.
#[derive(Clone, Copy, Debug, Default)]
struct RateSample {
    prior_mstamp: Option<SimTime>,
    prior_delivered: u64,
    prior_delivered_ce: u64,
    delivered: Option<u64>,
    delivered_ce: u64,
    /// Send interval while building; final interval after `rate_gen`.
    interval_us: Option<u64>,
    rtt_us: Option<u64>,
    is_app_limited: bool,
    is_retrans: bool,
    /// Transmission time and index of the most recently sent segment sampled.
    last_xmit: Option<(SimTime, u64)>,
}

/// `tcp_rate_skb_delivered`: sample from the most recently sent segment this ACK delivered.
fn rate_skb_delivered(
    rs: &mut RateSample,
    first_tx_mstamp: &mut SimTime,
    idx: u64,
    seg: &mut Seg,
    sacked: bool,
) {
    let Some(dmst) = seg.delivered_mstamp else {
        return;
    };
    let newer = match rs.last_xmit {
        None => true,
        Some((t, i)) => seg.xmit > t || (seg.xmit == t && idx > i),
    };
    if rs.prior_mstamp.is_none() || newer {
        rs.prior_delivered = seg.delivered;
        rs.prior_delivered_ce = seg.delivered_ce;
        rs.prior_mstamp = Some(dmst);
        rs.is_app_limited = seg.app_limited;
        rs.is_retrans = seg.ever_retrans;
        rs.last_xmit = Some((seg.xmit, idx));
        // Send interval: from the first transmission of the window to this one.
        rs.interval_us = Some(seg.xmit.saturating_since(seg.first_tx).as_micros());
        *first_tx_mstamp = seg.xmit;
    }
    if sacked {
        seg.delivered_mstamp = None;
    }
}

/// `tcp_rack_advance`: remember the most recently sent delivered segment.
fn rack_advance(rack: &mut Rack, idx: u64, seg: &Seg, now: SimTime, min_rtt_us: u64) {
    let rtt_us = now.saturating_since(seg.xmit).as_micros();
    // A retransmitted segment acked faster than min_rtt was probably the original's ACK.
    if seg.ever_retrans && rtt_us < min_rtt_us {
        return;
    }
    rack.advanced = true;
    rack.rtt_us = rtt_us;
    let newer = match rack.xmit {
        None => true,
        Some(t) => seg.xmit > t || (seg.xmit == t && idx + 1 > rack.end_idx),
    };
    if newer {
        rack.xmit = Some(seg.xmit);
        rack.end_idx = idx + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn established() -> (Sender, Out, SimTime) {
        let cfg = FlowConfig::bulk(0, 0, 1, "reno");
        let cc = satcc_cc::lookup("reno", &cfg.params).unwrap();
        let mut s = Sender::new(&cfg, 1, cc);
        let mut out = Out::default();
        s.connect(SimTime::ZERO, &mut out);
        let mut synack = Packet::new(0, Kind::SynAck, 0);
        synack.rwnd = 1 << 20;
        let t = SimTime::ZERO + SimDuration::from_millis(100);
        out.clear();
        s.on_packet(t, &synack, &mut out);
        (s, out, t)
    }

    #[test]
    fn handshake_sends_the_initial_window_and_samples_the_rtt() {
        let (s, out, _) = established();
        assert_eq!(out.pkts.iter().filter(|p| p.kind == Kind::Data).count(), 10);
        assert_eq!(s.srtt_us(), 100_000);
    }

    #[test]
    fn repeated_rto_doubles_the_timeout_and_keeps_ssthresh() {
        let (mut s, mut out, _) = established();
        let mut fired = Vec::new();
        let mut ssthresh = Vec::new();
        // No ACK ever arrives: fire the queued timer events in time order, as the event
        // loop would (stale ones included: the timers must ignore them).
        let mut pending: Vec<(TimerKind, SimTime)> = out.timers.clone();
        for _ in 0..200 {
            pending.sort_by_key(|&(_, at)| std::cmp::Reverse(at));
            let Some((kind, at)) = pending.pop() else {
                break;
            };
            out.clear();
            s.on_timer(at, kind, &mut out);
            pending.extend(out.timers.iter().copied());
            if kind == TimerKind::Rto && out.pkts.iter().any(|p| p.retrans) {
                fired.push(at);
                ssthresh.push(s.tcp.ssthresh);
            }
            if fired.len() == 5 {
                break;
            }
        }
        assert_eq!(fired.len(), 5, "RTOs fired: {fired:?}");
        let gaps: Vec<u64> = fired
            .windows(2)
            .map(|w| (w[1] - w[0]).as_millis())
            .collect();
        for w in gaps.windows(2) {
            assert_eq!(w[1], 2 * w[0], "backoff must double: {gaps:?}");
        }
        // The first RTO halves; later ones in the same episode keep ssthresh (RFC 5681 eq. 4).
        assert_eq!(ssthresh[0], 5);
        assert!(ssthresh.iter().all(|&x| x == 5), "{ssthresh:?}");
        assert_eq!(s.tcp.cwnd, 1);
        assert_eq!(s.stats.rto_count, 5);
    }
}
