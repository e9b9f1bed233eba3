//! satcc-cc: the congestion-control interface and one file per algorithm.
//!
//! The interface mirrors Linux's `struct tcp_congestion_ops` (include/net/tcp.h) so that
//! an algorithm reads like its kernel original:
//!
//! | Linux op          | here                               | called by the sender when …                         |
//! |-------------------|------------------------------------|-----------------------------------------------------|
//! | `init`            | [`CongestionControl::on_init`]     | the connection is established                        |
//! | `ssthresh`        | [`CongestionControl::ssthresh`]    | entering CWR/Recovery/Loss (the new ssthresh)        |
//! | `cong_avoid`      | [`CongestionControl::on_cong_avoid`] | an ACK may raise cwnd (not in cwnd reduction)      |
//! | `cong_control`    | [`CongestionControl::on_cong_control`] | every ACK, instead of cong_avoid/PRR (BBR)     |
//! | `set_state`       | [`CongestionControl::on_state`]    | `ca_state` changes                                   |
//! | `cwnd_event`      | [`CongestionControl::on_event`]    | TX start, idle restart, CWR complete, loss, ECN      |
//! | `in_ack_event`    | [`CongestionControl::on_ack_event`] | an ACK arrives, before cwnd is updated              |
//! | `pkts_acked`      | [`CongestionControl::on_pkts_acked`] | an ACK newly acks data (with an RTT sample)        |
//! | `undo_cwnd`       | [`CongestionControl::undo_cwnd`]   | a reduction is undone (spurious loss)                |
//!
//! Every hook takes `now` and the sender's [`TcpState`] (the fields of `struct tcp_sock`
//! the kernel's algorithms read and write); per-ACK hooks also take one [`AckSample`]
//! (Linux's `ack_sample` and `rate_sample` in one struct). Adding a field to either
//! struct touches no algorithm.
//!
//! Algorithms live in `algos/`, are looked up by their registry name ([`registry`]), and
//! take their parameters from a [`Params`] map (the scenario's `[flow.cc]` table).

use satcc_core::{SimDuration, SimTime};

pub mod algos;
pub mod info;
pub mod params;
pub mod registry;

pub use info::AlgoInfo;
pub use params::{ParamError, ParamSpec, Params};
pub use registry::{lookup, names};

/// Linux `TCP_INFINITE_SSTHRESH`: ssthresh before the first loss.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux `tcp_ca_state` (include/uapi/linux/tcp.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaState {
    Open,
    /// Some dupacks/SACKs seen; not yet in recovery.
    Disorder,
    /// Congestion window reduced by an ECN echo or local congestion.
    Cwr,
    /// Fast recovery after a loss detected by SACK/dupacks/RACK.
    Recovery,
    /// RTO expired: everything outstanding is deemed lost.
    Loss,
}

/// Linux `tcp_ca_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing was in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of a CWR or Recovery episode.
    CompleteCwr,
    /// RTO fired (`tcp_enter_loss`).
    Loss,
    /// ECN: an ACK for a segment that was not CE-marked.
    EcnNoCe,
    /// ECN: an ACK for a CE-marked segment.
    EcnIsCe,
}

/// Flags of Linux `tcp_ca_ack_event_flags`, passed to `in_ack_event`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckEventFlags {
    /// The ACK carried no data and was not a window update ("slow path").
    pub slow_path: bool,
    /// The ACK updated the send window.
    pub window_update: bool,
    /// The ACK carried ECE.
    pub ece: bool,
}

/// The sender state a congestion control reads and writes (the relevant part of Linux's
/// `struct tcp_sock` and `struct sock`). Windows are in packets (segments), as in Linux.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpState {
    /// `tp->snd_cwnd`, packets.
    pub cwnd: u32,
    /// `tp->snd_ssthresh`, packets.
    pub ssthresh: u32,
    /// `tp->snd_cwnd_cnt`: fractional window growth counter used by `tcp_cong_avoid_ai`.
    pub cwnd_cnt: u32,
    /// `tp->snd_cwnd_clamp`: upper bound on cwnd.
    pub cwnd_clamp: u32,
    /// `tp->prior_cwnd`: cwnd before the last reduction (for undo).
    pub prior_cwnd: u32,
    /// `tp->mss_cache`, bytes of payload per segment.
    pub mss: u32,
    /// Smoothed RTT (`tp->srtt_us >> 3`), microseconds; 0 before the first sample.
    pub srtt_us: u64,
    /// Windowed minimum RTT (`tcp_min_rtt`), microseconds; `u64::MAX` before a sample.
    pub min_rtt_us: u64,
    /// `tp->packets_out`: segments sent and not cumulatively acknowledged.
    pub packets_out: u32,
    /// `tp->sacked_out`, `tp->lost_out`, `tp->retrans_out`.
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// `tp->delivered`: segments delivered (acked or sacked) so far.
    pub delivered: u64,
    /// `tp->delivered_ce`: of those, delivered with CE marks echoed.
    pub delivered_ce: u64,
    /// `tp->lost`: segments marked lost so far.
    pub lost: u64,
    /// `tp->snd_una`, `tp->snd_nxt`: sequence numbers in bytes (no wrap in satcc).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// `tp->app_limited`: nonzero while the flow is application-limited (delivered mark).
    pub app_limited: u64,
    /// `tp->is_cwnd_limited`: the last window was fully used.
    pub is_cwnd_limited: bool,
    /// `tp->max_packets_out` over the last window (for `tcp_is_cwnd_limited`).
    pub max_packets_out: u32,
    /// `icsk_ca_state`.
    pub ca_state: CaState,
    /// `sk->sk_pacing_rate`, bytes per second (Linux's unit).
    pub pacing_rate_bps: u64,
    /// `sk->sk_max_pacing_rate`, bytes per second.
    pub max_pacing_rate_bps: u64,
    /// Set by an algorithm that needs pacing (Linux `SK_PACING_NEEDED`, set by BBR).
    pub pacing_needed: bool,
    /// ECN negotiated on this connection.
    pub ecn_ok: bool,
    /// `tp->snd_cwnd_stamp`: last time cwnd changed or was validated.
    pub cwnd_stamp: SimTime,
    /// `tp->tcp_mstamp` equivalent, for algorithms that keep their own clocks.
    pub now: SimTime,
    /// `tp->lsndtime`: when the last data segment was sent. The sender updates it after
    /// every data transmission, *after* firing [`CaEvent::TxStart`] for that segment, so
    /// that CUBIC's TX_START handler sees the length of the idle period (`now − lsndtime`).
    pub lsndtime: SimTime,
    /// `tp->delivered_mstamp`: when `delivered` last grew. Set to the ACK's arrival time by
    /// every ACK that delivers (acks or sacks) data (`tcp_rate_gen`), and to the send time
    /// when a segment is sent with nothing outstanding (`tcp_rate_skb_sent`). Read by BBR
    /// (gain-cycle phase length, long-term bandwidth interval, ACK-aggregation epoch).
    pub delivered_mstamp: SimTime,
    /// `tp->tcp_wstamp_ns`: earliest departure time the pacer has scheduled for the next
    /// data segment (EDT). BBR estimates the packets still "in the network" at that time
    /// (`bbr_packets_in_net_at_edt`); a sender that does not pace, or whose next segment
    /// may leave right away, leaves it ≤ `now`.
    pub wstamp: SimTime,
    /// `tp->rx_opt.rcv_tsval`: the TSval (RFC 7323) of the last ACK that carried a
    /// timestamp option — the receiver's timestamp clock, any origin and tick. The sender
    /// sets it, with `rcv_tsecr`, from every ACK before calling the per-ACK hooks. Both stay
    /// 0 when timestamps are not in use. Read by LP (one-way-delay estimate).
    pub rcv_tsval: u32,
    /// `tp->rx_opt.rcv_tsecr`: the TSecr of that ACK, i.e. the sender's own TSval echoed;
    /// the sender's TSval clock is Linux's `tcp_time_stamp`: milliseconds (`TCP_TS_HZ` =
    /// 1000), `(now in ms) as u32`, wrapping.
    pub rcv_tsecr: u32,
}

impl TcpState {
    /// A fresh connection with Linux's defaults: IW10, infinite ssthresh.
    pub fn new(mss: u32, initial_cwnd: u32) -> Self {
        TcpState {
            cwnd: initial_cwnd,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            prior_cwnd: 0,
            mss,
            srtt_us: 0,
            min_rtt_us: u64::MAX,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            snd_una: 0,
            snd_nxt: 0,
            app_limited: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            ca_state: CaState::Open,
            pacing_rate_bps: 0,
            max_pacing_rate_bps: u64::MAX,
            pacing_needed: false,
            ecn_ok: false,
            cwnd_stamp: SimTime::ZERO,
            now: SimTime::ZERO,
            lsndtime: SimTime::ZERO,
            delivered_mstamp: SimTime::ZERO,
            wstamp: SimTime::ZERO,
            rcv_tsval: 0,
            rcv_tsecr: 0,
        }
    }

    /// `tcp_packets_in_flight`: packets_out − left_out + retrans_out (RFC 6675 "pipe").
    pub fn in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_is_cwnd_limited` (Linux ≥ 6.2): limited if the last window was fully used; in
    /// slow start also while cwnd is below twice the most packets recently in flight.
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        self.in_slow_start() && self.cwnd < 2 * self.max_packets_out
    }

    /// `tcp_slow_start`: grow by `acked` up to ssthresh; return the ACKs left over.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.cwnd + acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd).min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// `tcp_cong_avoid_ai`: additive increase of 1 packet per `w` acked packets.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        // If credits accumulated at a higher w, apply them gently now.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }

    /// Minimum RTT as a duration, if one was measured.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        (self.min_rtt_us != u64::MAX).then(|| SimDuration::from_micros(self.min_rtt_us))
    }
}

/// What one incoming ACK tells the congestion control: Linux's `ack_sample` (for
/// `pkts_acked`) and `rate_sample` (for `cong_control`) in one struct.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckSample {
    /// Cumulative ACK number carried by this ACK (bytes).
    pub ack_seq: u64,
    /// Segments newly cumulatively acknowledged (`ack_sample.pkts_acked`).
    pub pkts_acked: u32,
    /// Segments newly acked or sacked (`acked_sacked`, the `acked` of `cong_avoid`).
    pub acked_sacked: u32,
    /// RTT of the last newly (S)ACKed, never-retransmitted segment, µs (`rtt_us`, −1 → None).
    pub rtt_us: Option<u64>,
    /// Packets in flight before this ACK was processed (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// `rate_sample.delivered`: segments delivered over `interval_us`; None if no sample.
    pub delivered: Option<u64>,
    /// `rate_sample.delivered_ce`.
    pub delivered_ce: u64,
    /// `rate_sample.interval_us`: max(send interval, ACK interval), µs. Zero where Linux
    /// has −1: no valid sample, or an interval shorter than the min RTT (`tcp_rate_gen`);
    /// `delivered` stays `Some` in the latter case, as in Linux.
    pub interval_us: u64,
    /// `rate_sample.prior_delivered`: `tp->delivered` when the sampled segment was sent.
    pub prior_delivered: u64,
    /// `rate_sample.losses`: segments newly marked lost on this ACK.
    pub losses: u32,
    /// `rate_sample.is_app_limited`.
    pub is_app_limited: bool,
    /// `rate_sample.is_retrans`: the sample came from a retransmitted segment.
    pub is_retrans: bool,
    /// `rate_sample.is_ack_delayed`.
    pub is_ack_delayed: bool,
    /// The ACK echoed congestion (ECE).
    pub ece: bool,
}

/// One congestion control algorithm, following Linux's `tcp_congestion_ops` semantics.
///
/// Hooks have empty defaults except [`ssthresh`](Self::ssthresh); algorithms that replace
/// Linux's cwnd logic wholesale (BBR) return `true` from
/// [`has_cong_control`](Self::has_cong_control) and implement `on_cong_control`.
pub trait CongestionControl: Send {
    /// Registry name (the scenario key, the CLI word, the BPF program's `.name`).
    fn name(&self) -> &'static str;

    /// `init`: the connection is established.
    fn on_init(&mut self, _now: SimTime, _tcp: &mut TcpState) {}

    /// `ssthresh`: the new slow-start threshold on entering CWR, Recovery or Loss.
    fn ssthresh(&mut self, now: SimTime, tcp: &TcpState) -> u32;

    /// `cong_avoid`: raise cwnd for `ack.acked_sacked` newly delivered segments.
    /// Called only when cwnd may rise (Open/Disorder state, not in a cwnd reduction).
    fn on_cong_avoid(&mut self, _now: SimTime, _tcp: &mut TcpState, _ack: &AckSample) {}

    /// Whether this algorithm implements `cong_control` (then neither `on_cong_avoid` nor
    /// the sender's PRR runs; the algorithm sets cwnd and pacing itself).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `cong_control`: called on every ACK with the rate sample.
    fn on_cong_control(&mut self, _now: SimTime, _tcp: &mut TcpState, _ack: &AckSample) {}

    /// `set_state`: `tcp.ca_state` is about to become `new`.
    fn on_state(&mut self, _now: SimTime, _tcp: &mut TcpState, _new: CaState) {}

    /// `min_tso_segs`: the fewest segments per GSO packet (`tcp_tso_segs`); `None` for the
    /// sysctl's (`tcp_min_tso_segs`, 2).
    fn min_tso_segs(&self, _tcp: &TcpState) -> Option<u32> {
        None
    }

    /// Whether [`min_tso_segs`](Self::min_tso_segs) may return `Some`: `false` is Linux's NULL
    /// `min_tso_segs` op, whose call `tcp_tso_segs` skips (the sender reads it once, at
    /// construction, and then never calls `min_tso_segs`). An algorithm that implements the
    /// op must return `true`, the default.
    fn has_min_tso_segs(&self) -> bool {
        true
    }

    /// `cwnd_event`.
    fn on_event(&mut self, _now: SimTime, _tcp: &mut TcpState, _ev: CaEvent) {}

    /// Whether [`on_ack_event`](Self::on_ack_event) or [`on_pkts_acked`](Self::on_pkts_acked)
    /// does anything: `false` is Linux's NULL `in_ack_event` and `pkts_acked` ops, whose calls
    /// `tcp_in_ack_event` and `tcp_clean_rtx_queue` skip (the sender reads it once, at
    /// construction). An algorithm that implements either hook must return `true`, the default.
    fn has_ack_hooks(&self) -> bool {
        true
    }

    /// Whether [`on_cong_avoid`](Self::on_cong_avoid) is exactly
    /// [`algos::reno::reno_cong_avoid`]`(tcp, ack.acked_sacked)`, as Linux's `cong_avoid` op is
    /// `tcp_reno_cong_avoid` itself for Reno, DCTCP and Westwood: the sender (which reads it
    /// once, at construction) then calls that function directly instead of through the
    /// trait object. An algorithm with any other `on_cong_avoid` must return `false`, the
    /// default.
    fn reno_cong_avoid(&self) -> bool {
        false
    }

    /// `in_ack_event`.
    fn on_ack_event(&mut self, _now: SimTime, _tcp: &mut TcpState, _flags: AckEventFlags) {}

    /// `pkts_acked`: data was newly acknowledged; `ack.rtt_us` is this ACK's RTT sample.
    fn on_pkts_acked(&mut self, _now: SimTime, _tcp: &mut TcpState, _ack: &AckSample) {}

    /// `undo_cwnd`: the cwnd to restore when a reduction proves spurious (the sender's
    /// `tcp_undo_cwnd_reduction`: DSACK, Eifel or F-RTO undo; ssthresh is restored by the
    /// sender). Linux's default (`tcp_reno_undo_cwnd`, also CUBIC's since 4.13): max(cwnd,
    /// prior_cwnd). Own versions, as in Linux: `htcp`, `dctcp`, `bbr`, `bbr3`.
    fn undo_cwnd(&mut self, _now: SimTime, tcp: &TcpState) -> u32 {
        tcp.cwnd.max(tcp.prior_cwnd)
    }

    /// A snapshot of internal state for traces and debugging (e.g. BBR's mode, CUBIC's K).
    fn debug_state(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}
