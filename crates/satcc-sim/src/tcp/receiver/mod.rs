//! The receiving end of a flow, as Linux 6.18's receive path behaves towards the sender
//! (net/ipv4/tcp_input.c, tcp_output.c, tcp.c, tcp_timer.c, include/net/tcp.h):
//! in-order delivery with an out-of-order queue, SACK blocks (RFC 2018) most recent first,
//! DSACK for duplicates (RFC 2883), timestamp echo (RFC 7323 §4.3 via `tcp_replace_ts_recent`),
//! ECN echo (classic RFC 3168, or DCTCP's exact echo, RFC 8257 §3.2), and:
//!
//! - **Receive buffer and window.** The buffer starts at `tcp_rmem[1]` (131,072 B, or `rwnd`
//!   when smaller); the window offered is a share of it, `tcp_win_from_space`: buffer ×
//!   `scaling_ratio`/256, the ratio being payload/`truesize` of the received packets
//!   (`tcp_measure_rcv_mss`). The SYN-ACK offers the listener's window and the window scale
//!   for `tcp_rmem[2]` (`tcp_openreq_init_rwin`, `tcp_select_initial_window`); the connection
//!   starts with one segment reserved (`tcp_init_buffer_space`). `rcv_ssthresh` opens the
//!   window by two segments per received segment up to the clamp (`tcp_grow_window`); the
//!   window offered is min(free space, `rcv_ssthresh`), rounded up to the window scale, and
//!   never shrinks (`__tcp_select_window`, `tcp_select_window`).
//! - **Autotuning (DRS).** Once per receiver-measured RTT (`rcv_rtt_est`: TCP timestamps,
//!   or the time to receive one window), the bytes the application read in that RTT set the
//!   buffer: twice them plus twice the growth over the previous RTT, plus the out-of-order
//!   span, up to `tcp_rmem[2]` = `rwnd` (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`; 6.18
//!   includes "tcp: fix too slow tcp_rcvbuf_grow() action"). `rcvbuf_autotune = false` is
//!   `tcp_moderate_rcvbuf = 0` with a fixed buffer sized to offer a window of `rwnd`.
//! - **Delayed ACKs.** An ACK goes out at once when more than one full segment is unacked
//!   and the window does not shrink, in quick-ACK mode (the first 16 segments; every segment
//!   while `rcv_ssthresh` grows; 16 more after a duplicate or a gap longer than the RTO), for
//!   data that fills the last hole, and for out-of-order data up to three duplicate ACKs per
//!   `rcv_nxt`, later ones held for min(1 ms, RTT/20) (compressed SACK, `__tcp_ack_snd_check`), and
//!   when the application's read leaves more than a segment unacked or doubles the window
//!   (`tcp_cleanup_rbuf`). Otherwise the delayed-ACK timer runs for `ato`, which adapts to
//!   the inter-arrival time between 40 and 200 ms (`tcp_event_data_recv`), is clamped by the
//!   RTT (`tcp_send_delayed_ack`) and doubles when the timer fires (`tcp_delack_timer_handler`).
//!
//! The application reads every in-order byte as soon as it arrives (a bulk reader such as
//! iperf3): right after the ACK decision for the segment, as a woken reader does.
//!
//! Deviations from Linux:
//! 1. `truesize` is a model: one linear buffer per packet, the smallest power of two holding
//!    the frame, headroom and `skb_shared_info`, plus the `sk_buff` (`rx_truesize`, measured
//!    against the kernel through satcc-linkd: see README "The simulator"). Out-of-order
//!    packets are not coalesced (`tcp_try_coalesce`), so they cost one `truesize` each.
//! 2. Jiffies are milliseconds (HZ = 1000); the emulator's kernel runs HZ = 250, whose 4 ms
//!    ticks round the delayed-ACK timer and `ato`.
//! 3. The compressed-SACK timer's 100 µs slack (`tcp_comp_sack_slack_ns`) is not modelled:
//!    it fires exactly at min(1 ms, RTT/20).
//! 4. `ICSK_ACK_PUSHED` only for a full segment with PSH (a short segment's, and
//!    `ICSK_ACK_PUSHED2`, are not modelled), no memory pressure, no receive-queue pruning or
//!    collapsing, no `SO_RCVLOWAT`; the receiver's RTO comes from the handshake RTT only.

use std::collections::BTreeMap;

use satcc_core::{Hz, SimDuration, SimTime};

use super::timer::{Fire, Timer};
use super::{Out, TimerKind};
use crate::packet::{self, Ecn, Kind, Packet};

/// Linux `TCP_ATO_MIN` = `TCP_DELACK_MIN`: 40 ms (HZ/25).
pub const ATO_MIN: SimDuration = SimDuration::from_millis(40);
/// Linux `TCP_DELACK_MAX`: 200 ms (HZ/5).
pub const DELACK_MAX: SimDuration = SimDuration::from_millis(200);
/// `tcp_send_delayed_ack`: the largest ato outside interactive mode, HZ/2.
const ATO_MAX_BULK: SimDuration = SimDuration::from_millis(500);
/// Linux `TCP_RTO_MIN`: `tcp_delack_max` keeps the delayed ACK below it (rto_min − 1 jiffy).
const RTO_MIN: SimDuration = SimDuration::from_millis(200);
/// Linux `TCP_RTO_MAX`: bound of the receiver's RTO (`tcp_bound_rto`).
const RTO_MAX: SimDuration = SimDuration::from_secs(120);
/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// `net.ipv4.tcp_comp_sack_delay_ns` and `tcp_comp_sack_nr` defaults: out-of-order ACKs are
/// held at most 1 ms (or 5 % of the RTT), at most 44 of them.
const COMP_SACK_DELAY: SimDuration = SimDuration::from_millis(1);
const COMP_SACK_NR: u32 = 44;
/// Linux `TCP_FASTRETRANS_THRESH`: duplicate ACKs always sent at once before compressing.
const FASTRETRANS_THRESH: u32 = 3;
/// `TCP_SACK_BLOCKS_EXPECTED`: a change beyond the first two SACK blocks flushes a held ACK.
const SACK_BLOCKS_EXPECTED: usize = 2;
/// Largest window without window scaling.
pub const MAX_UNSCALED_WINDOW: u64 = 65_535;
/// Linux `TCP_MAX_WSCALE` (RFC 7323 §2.3).
const MAX_WSCALE: u32 = 14;
/// `net.ipv4.tcp_rmem[1]` default: the receive buffer a connection starts with.
pub const RMEM_DEFAULT: u64 = 131_072;
/// `net.core.rmem_max` default (`SK_RMEM_MAX`): `tcp_select_initial_window` scales for it too.
const SYSCTL_RMEM_MAX: u64 = 212_992;
/// Linux `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is in 1/256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// Linux `TCP_DEFAULT_SCALING_RATIO`: 50 % until a data segment has been measured.
const DEFAULT_SCALING_RATIO: u64 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// Linux `TCP_INIT_CWND`: `tcp_init_buffer_space` starts DRS at ten segments.
const INIT_CWND: u64 = 10;
/// Linux `TCP_MSS_DEFAULT` and `TCP_MIN_MSS`: bounds of the initial `rcv_mss` guess.
const MSS_DEFAULT: u64 = super::MSS_DEFAULT as u64;
const MIN_MSS: u64 = satcc_core::scenario::MIN_MSS as u64;
/// `tcp_event_data_recv`: segments shorter than this do not grow the window.
const GROW_MIN_LEN: u64 = 128;
/// Bytes in front of the payload in a received frame: Ethernet 14 + IP 20 + TCP 20.
const FRAME_HEADERS: u64 = 14 + packet::IP_HEADER as u64 + packet::TCP_HEADER as u64;
/// Headroom a receive buffer reserves (`NET_SKB_PAD`, 64 on x86-64).
const SKB_PAD: u64 = 64;
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` and `sizeof(struct sk_buff)` on x86-64.
const SKB_SHINFO: u64 = 320;
const SKB_STRUCT: u64 = 256;

/// Memory a received packet with `payload` bytes is charged (`skb->truesize`): a linear
/// buffer, the smallest power of two holding headroom, frame and `skb_shared_info`, plus the
/// `sk_buff` (deviation 1). 2,304 B for a full 1,448-byte segment: `scaling_ratio` 160.
pub fn rx_truesize(payload: u64, timestamps: bool) -> u64 {
    let ts = if timestamps {
        packet::TS_OPTION as u64
    } else {
        0
    };
    let buffer = (SKB_PAD + FRAME_HEADERS + ts + payload + SKB_SHINFO).next_power_of_two();
    buffer - SKB_SHINFO + SKB_STRUCT + SKB_SHINFO
}

/// Linux's `scaling_ratio` once full segments of `mss` bytes have been measured.
pub fn full_segment_scaling_ratio(mss: u64, timestamps: bool) -> u64 {
    ((mss << RMEM_TO_WIN_SCALE) / rx_truesize(mss, timestamps)).clamp(1, 255)
}

/// The buffer whose share is a window of `window` bytes (`rcvbuf_autotune = false`).
pub fn fixed_rcvbuf_bytes(window: u64, mss: u64, timestamps: bool) -> u64 {
    (window << RMEM_TO_WIN_SCALE).div_ceil(full_segment_scaling_ratio(mss, timestamps))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnEcho {
    /// RFC 3168: set ECE on every ACK from a CE mark until a CWR arrives.
    Classic,
    /// RFC 8257 §3.2: ECE reflects exactly whether the acknowledged data was CE-marked.
    Dctcp,
}

/// The receive buffer a flow's receiver may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvBuf {
    /// `net.ipv4.tcp_rmem[2]`: the most autotuning grows the buffer to (scenario `rwnd`).
    /// Without autotuning: the fixed window (the buffer is sized to offer it).
    pub max_bytes: u64,
    /// `net.ipv4.tcp_moderate_rcvbuf`: DRS grows the buffer.
    pub autotune: bool,
    /// RFC 7323 window scaling; without it the window stays below 64 KiB.
    pub window_scaling: bool,
}

/// Window sizes that change only with `window_clamp`, `sk_rcvbuf` or `scaling_ratio`, kept
/// rather than recomputed for every segment (`Receiver::set_space_limits`, called wherever
/// one of them changes; debug builds check them at every read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SpaceLimits {
    /// `tcp_full_space`: `__tcp_select_window`'s `allowed_space`.
    full_space: i64,
    /// min(`window_clamp`, `tcp_full_space`): `__tcp_select_window`'s `full_space`.
    clamped_full_space: i64,
    /// `tcp_space` with one packet held (`rmem_alloc` = one truesize): when a segment has
    /// just arrived in order with nothing out of order, the usual case.
    one_held_space: i64,
    /// The most `tcp_grow_window` can open `rcv_ssthresh` to while a packet is held:
    /// min(`window_clamp`, `one_held_space`). In-order data arrives with at least itself
    /// unread, so `tcp_space` is at most `one_held_space`; with `rcv_ssthresh` at or above
    /// this there is no room, and `tcp_space` is not computed (the usual case once the
    /// buffer stops growing).
    grow_limit: i64,
}

/// `tp->rcvq_space`: what DRS measured at the start of the current RTT.
#[derive(Clone, Copy, Debug)]
struct RcvqSpace {
    /// Bytes read in the last measured RTT (the window base).
    space: u64,
    seq: u64,
    time: SimTime,
}

/// `tp->rcv_rtt_est`: the receiver's RTT estimate.
#[derive(Clone, Copy, Debug, Default)]
struct RcvRttEst {
    /// Eight times the RTT in µs; 0 = no sample yet.
    rtt_us: u64,
    /// Window-based measurement (`tcp_rcv_rtt_measure`): ends when rcv_nxt reaches `seq`.
    seq: u64,
    time: Option<SimTime>,
    /// `tp->rcv_rtt_last_tsecr`: one timestamp sample per echoed TSval.
    last_tsecr: u64,
}

pub struct Receiver {
    pub flow: u32,
    /// Node of the sender (where ACKs go).
    peer: u32,
    timestamps: bool,
    sack: bool,
    delayed_ack: bool,
    ecn: Option<EcnEcho>,
    pub established: bool,
    pub rcv_nxt: u64,
    /// `tp->rcv_wup`: rcv_nxt when the last window was announced.
    rcv_wup: u64,
    /// `tp->copied_seq`: what the application has read.
    copied_seq: u64,
    /// Out-of-order data above rcv_nxt: disjoint byte ranges.
    ofo: BTreeMap<u64, u64>,
    /// Packets held out of order (each charged one truesize, deviation 1).
    ofo_pkts: u64,
    /// Bytes held out of order: the sum of `ofo`'s ranges, kept as ranges are queued, merged
    /// and delivered (`insert_ofo`, `advance`) rather than summed for every in-order segment
    /// that arrives while a hole is open.
    ofo_bytes: u64,
    /// SACK blocks, most recently changed first.
    sack_list: Vec<(u64, u64)>,
    dsack: Option<(u64, u64)>,
    ts_recent: u64,

    // Receive buffer and window (struct tcp_sock).
    rcvbuf: RcvBuf,
    /// `sk->sk_rcvbuf`, bytes of memory.
    sk_rcvbuf: u64,
    /// `tp->scaling_ratio`: window bytes per 256 bytes of buffer.
    scaling_ratio: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// What `window_clamp`, `sk_rcvbuf` and `scaling_ratio` allow, kept as they change.
    limits: SpaceLimits,
    /// Window announced at `rcv_wup` (unscaled bytes).
    rcv_wnd: u64,
    rcv_wscale: u32,
    /// Our MSS (the sender's payload per segment).
    advmss: u64,
    /// `rx_truesize(advmss, timestamps)`: what each unread or out-of-order packet is charged
    /// (`rmem_alloc`). Both inputs are fixed at construction, so it is computed once there.
    advmss_truesize: u64,
    /// `icsk_ack.rcv_mss`: the peer's segment size as guessed from what arrives.
    rcv_mss: u64,
    last_seg_size: u64,
    rcvq_space: RcvqSpace,
    rcv_rtt_est: RcvRttEst,

    // Delayed ACK (icsk->icsk_ack).
    /// `ICSK_ACK_SCHED`: data arrived that has not been acknowledged.
    ack_scheduled: bool,
    /// `ICSK_ACK_PUSHED` for a full segment: one of at least the MSS arrived in order with
    /// PSH, so a read that empties the receive queue acknowledges it (`tcp_cleanup_rbuf`).
    ack_pushed: bool,
    /// `icsk_ack.quick`: ACKs still to send at once.
    quick: u32,
    /// `icsk_ack.ato`; zero until the first data segment.
    ato: SimDuration,
    /// `icsk_ack.lrcvtime` in jiffies (ms, deviation 2).
    lrcvtime_ms: u64,
    pub delack: Timer,
    /// Compressed SACK (`tp->compressed_ack`, its hrtimer, `dup_ack_counter`).
    compressed_ack: u32,
    compressed_ack_rcv_nxt: u64,
    dup_ack_counter: u32,
    comp_timer: Timer,
    /// The receiver's own smoothed RTT and RTO, from the handshake (`tcp_synack_rtt_meas`).
    srtt: Option<SimDuration>,
    rto: SimDuration,
    synack_sent_at: Option<SimTime>,

    /// Classic ECN: echo ECE until CWR. DCTCP: CE state of the last data segment.
    ece: bool,
    /// Bytes delivered in order to the application.
    pub delivered_bytes: u64,
    pub delivered_in_bin: u64,
    /// ACKs sent (SYN-ACKs not counted).
    pub acks_sent: u64,
    /// Payload bytes of every data segment that arrived in the bin, in order or not,
    /// duplicates included (what the link carried to the receiver).
    pub received_in_bin: u64,
    /// When the receiver first held `size` bytes.
    pub completed_at: Option<SimTime>,
    /// `delivered_bytes` that completes the flow: its size, `u64::MAX` for a flow without
    /// one or once `completed_at` is set (one comparison per segment instead of two options).
    complete_bytes: u64,
    /// Whether an ACK sent right after `__tcp_select_window` was computed reuses its result
    /// (`send_ack_with_window`): always, but the unit tests compare it with recomputing.
    #[cfg(test)]
    reuse_window: bool,
    /// `use_limits` (tests only).
    #[cfg(test)]
    use_space_limits: bool,
}

impl Receiver {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        peer: u32,
        mss: u32,
        timestamps: bool,
        sack: bool,
        delayed_ack: bool,
        rcvbuf: RcvBuf,
        ecn: Option<EcnEcho>,
        size: Option<u64>,
    ) -> Self {
        // tcp_init_sock: sk_rcvbuf = tcp_rmem[1], min(default, rwnd) as the emulator sets it.
        // Without autotuning tcp_rmem[1] = tcp_rmem[2] = the buffer that offers rwnd.
        let mut rcvbuf = rcvbuf;
        if !rcvbuf.autotune {
            rcvbuf.max_bytes = fixed_rcvbuf_bytes(rcvbuf.max_bytes, mss as u64, timestamps);
        }
        let sk_rcvbuf = if rcvbuf.autotune {
            RMEM_DEFAULT.min(rcvbuf.max_bytes)
        } else {
            rcvbuf.max_bytes
        };
        let mut r = Receiver {
            flow,
            peer,
            timestamps,
            sack,
            delayed_ack,
            ecn,
            established: false,
            rcv_nxt: 0,
            rcv_wup: 0,
            copied_seq: 0,
            ofo: BTreeMap::new(),
            ofo_pkts: 0,
            ofo_bytes: 0,
            sack_list: Vec::new(),
            dsack: None,
            ts_recent: 0,
            rcvbuf,
            sk_rcvbuf,
            scaling_ratio: DEFAULT_SCALING_RATIO,
            window_clamp: 0,
            rcv_ssthresh: 0,
            limits: SpaceLimits::default(),
            rcv_wnd: 0,
            rcv_wscale: 0,
            advmss: mss as u64,
            advmss_truesize: rx_truesize(mss as u64, timestamps),
            rcv_mss: MSS_DEFAULT,
            last_seg_size: 0,
            rcvq_space: RcvqSpace {
                space: 0,
                seq: 0,
                time: SimTime::ZERO,
            },
            rcv_rtt_est: RcvRttEst::default(),
            ack_scheduled: false,
            ack_pushed: false,
            quick: 0,
            ato: SimDuration::ZERO,
            lrcvtime_ms: 0,
            delack: Timer::default(),
            compressed_ack: 0,
            compressed_ack_rcv_nxt: 0,
            dup_ack_counter: 0,
            comp_timer: Timer::default(),
            srtt: None,
            rto: SimDuration::from_secs(1),
            synack_sent_at: None,
            ece: false,
            delivered_bytes: 0,
            delivered_in_bin: 0,
            acks_sent: 0,
            received_in_bin: 0,
            completed_at: None,
            complete_bytes: size.unwrap_or(u64::MAX),
            #[cfg(test)]
            reuse_window: true,
            #[cfg(test)]
            use_space_limits: true,
        };
        r.set_space_limits();
        r
    }

    /// The window the last ACK offered, unscaled bytes (for tests and diagnostics).
    pub fn rcv_wnd(&self) -> u64 {
        self.rcv_wnd
    }

    /// `sk->sk_rcvbuf`: the receive buffer, bytes of memory.
    pub fn rcvbuf_bytes(&self) -> u64 {
        self.sk_rcvbuf
    }

    /// The window scale this end announced (`rx_opt.rcv_wscale`).
    pub fn rcv_wscale(&self) -> u32 {
        self.rcv_wscale
    }

    /// `icsk_ack.rcv_mss`: the peer's segment size as guessed from what arrived.
    pub fn rcv_mss(&self) -> u64 {
        self.rcv_mss
    }

    /// `tp->rcv_ssthresh`.
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// The delayed-ACK timeout (`icsk_ack.ato`).
    pub fn ato(&self) -> SimDuration {
        self.ato
    }

    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        match pkt.kind {
            Kind::Syn => self.on_syn(now, pkt, out),
            Kind::Data => self.on_data(now, pkt, out),
            _ => {}
        }
    }

    // -- data ---------------------------------------------------------------------------------

    fn on_data(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        if !self.established {
            self.established = true;
            self.tcp_init_buffer_space(now);
        }
        self.received_in_bin += pkt.len as u64;
        let (seq, end) = (pkt.seq, pkt.seq + pkt.len as u64);
        // RFC 7323 §4.3 as Linux: remember TSval of a segment at or before the last ACK point.
        if self.timestamps && seq <= self.rcv_wup {
            self.ts_recent = pkt.tsval;
        }
        if self.timestamps {
            self.tcp_rcv_rtt_measure_ts(now, pkt);
        }
        // ICSK_ACK_NOW: a protocol event that wants one ACK at once.
        let mut ack_now = false;
        if let Some(mode) = self.ecn {
            let ce = pkt.ecn == Ecn::Ce;
            match mode {
                EcnEcho::Classic => {
                    if pkt.cwr {
                        self.ece = false; // tcp_ecn_accept_cwr
                    }
                    if ce {
                        self.ece = true; // TCP_ECN_DEMAND_CWR
                        ack_now = true; // tcp_ecn_check_ce → quick ACK
                    }
                }
                EcnEcho::Dctcp => {
                    if ce != self.ece {
                        // dctcp_ece_ack_update: flush a delayed ACK with the old CE state.
                        if self.delack.is_armed() {
                            self.send_ack(now, out);
                        }
                        self.ece = ce;
                        ack_now = true;
                    }
                }
            }
        }
        if end <= self.rcv_nxt {
            // tcp_data_queue, a retransmission of old data: DSACK it (RFC 2883 §4.1) and
            // enter quick-ACK mode (out_of_window).
            if self.sack {
                self.dsack = Some((seq, end));
            }
            self.tcp_enter_quickack_mode(MAX_QUICKACKS);
            self.ack_scheduled = true;
            self.send_ack(now, out);
            return;
        }
        let ofo_possible = if seq <= self.rcv_nxt {
            let had_holes = !self.ofo.is_empty();
            self.advance(now, end);
            self.tcp_event_data_recv(now, pkt.len as u64, pkt.psh);
            // (without holes before, none now: the map is not read again)
            let holes = had_holes && !self.ofo.is_empty();
            if had_holes && !holes {
                ack_now = true; // RFC 5681 §4.2: the gap is filled
            }
            holes
        } else {
            // tcp_data_queue_ofo: queue it, provision the buffer for the out-of-order span.
            self.insert_ofo(now, seq, end, out);
            self.ack_scheduled = true;
            self.tcp_rcvbuf_grow(self.rcvq_space.space);
            true
        };
        self.tcp_ack_snd_check(now, ack_now, ofo_possible, out);
        // The application reads what arrived in order (tcp_recvmsg).
        if self.rcv_nxt > self.copied_seq {
            let copied = self.rcv_nxt - self.copied_seq;
            self.copied_seq = self.rcv_nxt;
            self.tcp_rcv_space_adjust(now);
            self.tcp_cleanup_rbuf(now, copied, out);
        }
    }

    /// `tcp_event_data_recv`: in-order data arrived (`psh`: with the PSH flag).
    fn tcp_event_data_recv(&mut self, now: SimTime, len: u64, psh: bool) {
        self.ack_scheduled = true; // inet_csk_schedule_ack
        self.tcp_measure_rcv_mss(len, psh);
        self.tcp_rcv_rtt_measure(now);
        let now_ms = Hz::KERNEL.jiffies(now); // HZ = 1000 (deviation 2)
        if self.ato.is_zero() {
            // The first data segment: start the delayed-ACK engine in quick-ACK mode.
            self.tcp_incr_quickack(MAX_QUICKACKS);
            self.ato = ATO_MIN;
        } else {
            let m_ms = now_ms - self.lrcvtime_ms;
            let m = SimDuration::from_millis(m_ms);
            // (m ≤ ATO_MIN/2 compared in whole ms, as m is: the usual case needs no product)
            if m_ms <= ATO_MIN.as_millis() / 2 {
                self.ato = self.ato.div_u64(2) + ATO_MIN.div_u64(2); // the fastest case
            } else if m < self.ato {
                self.ato = (self.ato.div_u64(2) + m).min(self.rto).min(DELACK_MAX);
            } else if m > self.rto {
                self.tcp_incr_quickack(MAX_QUICKACKS); // the sender failed to restart its window
            }
        }
        self.lrcvtime_ms = now_ms;
        if len >= GROW_MIN_LEN {
            self.tcp_grow_window(len);
        }
    }

    /// `tcp_measure_rcv_mss`: learn the peer's segment size, and the payload/truesize ratio
    /// from the first full segment (which moves the window clamp to the measured share). A
    /// segment of at least the MSS with PSH likely ends a write or a GSO packet: its ACK
    /// should not wait for a second segment (`ICSK_ACK_PUSHED`, since Linux 6.6).
    fn tcp_measure_rcv_mss(&mut self, len: u64, psh: bool) {
        let lss = self.last_seg_size;
        self.last_seg_size = 0;
        if len >= self.rcv_mss {
            if len != self.rcv_mss {
                let old = self.scaling_ratio;
                self.scaling_ratio = full_segment_scaling_ratio(len, self.timestamps);
                if old != self.scaling_ratio {
                    self.window_clamp = self.tcp_full_space().max(0) as u64;
                    self.set_space_limits();
                    self.rcvq_space.space = self.rcvq_space.space.min(self.window_clamp);
                }
            }
            self.rcv_mss = len.min(self.advmss);
            self.ack_pushed |= psh;
        } else {
            // A short segment: take it as the MSS when two in a row have this size.
            let header = packet::TCP_HEADER as u64
                + if self.timestamps {
                    packet::TS_OPTION as u64
                } else {
                    0
                };
            if len + header >= MSS_DEFAULT + packet::TCP_HEADER as u64 {
                self.last_seg_size = len;
                if len == lss {
                    self.rcv_mss = len;
                }
            }
        }
    }
}

/// `__tcp_win_from_space` (include/net/tcp.h): `space * scaling_ratio / 256`. Linux multiplies
/// a 32-bit `space` in 64 bits, so the product cannot overflow there; a scenario's buffer here
/// is 64-bit, so the product is taken in 128 bits and saturates (a regression: the config
/// fuzzer overflowed the 64-bit product with a huge `rwnd`).
pub fn win_from_space(space: i64, scaling_ratio: u64) -> i64 {
    // Every realistic buffer: the product fits in 64 bits, and an arithmetic shift of it is
    // the 128-bit shift below (both round towards −∞).
    if let Some(product) = i64::try_from(scaling_ratio)
        .ok()
        .and_then(|r| space.checked_mul(r))
    {
        return product >> RMEM_TO_WIN_SCALE;
    }
    let scaled = (i128::from(space) * i128::from(scaling_ratio)) >> RMEM_TO_WIN_SCALE;
    scaled.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

mod ack;
mod ofo;
mod window;

#[cfg(test)]
mod tests;
