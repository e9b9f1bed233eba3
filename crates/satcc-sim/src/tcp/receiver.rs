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
//! 4. No PSH flag (`ICSK_ACK_PUSHED`), no memory pressure, no receive-queue pruning or
//!    collapsing, no `SO_RCVLOWAT`; the receiver's RTO comes from the handshake RTT only.

use std::collections::BTreeMap;

use satcc_core::{SimDuration, SimTime};

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
const MSS_DEFAULT: u64 = 536;
const MIN_MSS: u64 = 88;
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

    // -- window arithmetic (include/net/tcp.h) ---------------------------------------------

    /// `__tcp_win_from_space`: the window a buffer of `space` bytes of memory can offer.
    fn win_from_space(&self, space: i64) -> i64 {
        win_from_space(space, self.scaling_ratio)
    }

    /// `__tcp_space_from_win`: the memory a window of `win` bytes needs.
    fn space_from_win(&self, win: u64) -> u64 {
        (win << RMEM_TO_WIN_SCALE) / self.scaling_ratio
    }

    /// `sk_rmem_alloc`: memory held by unread in-order data and the out-of-order queue.
    fn rmem_alloc(&self) -> u64 {
        let truesize = self.advmss_truesize;
        let unread = self.rcv_nxt - self.copied_seq;
        // Mostly nothing or the one segment being handled: no division for those.
        let unread_pkts = if unread <= self.advmss {
            u64::from(unread > 0)
        } else {
            unread.div_ceil(self.advmss.max(1))
        };
        (unread_pkts + self.ofo_pkts) * truesize
    }

    /// `tcp_space`: the window the free part of the buffer can offer (may be negative).
    fn tcp_space(&self) -> i64 {
        let unread = self.rcv_nxt - self.copied_seq;
        let computed = || self.win_from_space(self.sk_rcvbuf as i64 - self.rmem_alloc() as i64);
        if self.ofo_pkts == 0 && unread > 0 && unread <= self.advmss && self.use_limits() {
            let space = self.limits().one_held_space;
            debug_assert_eq!(space, computed());
            return space;
        }
        computed()
    }

    /// `tcp_full_space`.
    fn tcp_full_space(&self) -> i64 {
        self.win_from_space(self.sk_rcvbuf as i64)
    }

    /// `limits` from its inputs: called wherever `window_clamp`, `sk_rcvbuf` or
    /// `scaling_ratio` changes.
    fn set_space_limits(&mut self) {
        self.limits = self.space_limits_now();
    }

    fn space_limits_now(&self) -> SpaceLimits {
        let full_space = self.tcp_full_space();
        let one_held_space =
            self.win_from_space(self.sk_rcvbuf as i64 - self.advmss_truesize as i64);
        SpaceLimits {
            full_space,
            clamped_full_space: (self.window_clamp as i64).min(full_space),
            one_held_space,
            grow_limit: (self.window_clamp as i64).min(one_held_space),
        }
    }

    /// `limits`, checked against recomputing them in debug builds.
    fn limits(&self) -> SpaceLimits {
        debug_assert_eq!(self.limits, self.space_limits_now());
        self.limits
    }

    /// Whether `limits` is used: always, but the unit tests compare with computing each
    /// value where it is needed, as Linux does.
    fn use_limits(&self) -> bool {
        #[cfg(test)]
        {
            self.use_space_limits
        }
        #[cfg(not(test))]
        {
            true
        }
    }

    /// `tcp_receive_window`: what is left of the window last announced.
    fn tcp_receive_window(&self) -> u64 {
        (self.rcv_wup + self.rcv_wnd).saturating_sub(self.rcv_nxt)
    }

    // -- connection setup ---------------------------------------------------------------------

    fn on_syn(&mut self, now: SimTime, pkt: &Packet, out: &mut Out) {
        if !self.established {
            self.tcp_openreq_init_rwin();
        }
        // Answer every SYN (a retransmitted SYN means our SYN-ACK was lost).
        let mut p = Packet::new(self.flow, Kind::SynAck, self.peer);
        p.wire_bytes = packet::IP_HEADER
            + packet::TCP_HEADER
            + if self.timestamps {
                packet::SYN_OPTIONS
            } else {
                12
            };
        p.tsecr = pkt.tsval;
        p.tsval = self.ts_now(now);
        p.rwnd = self.rcv_wnd.min(MAX_UNSCALED_WINDOW); // SYN windows are never scaled (RFC 7323 §2.2)
        p.ece = pkt.ece && self.ecn.is_some(); // ECN-setup SYN-ACK
        self.synack_sent_at = Some(now);
        out.pkts.push(p);
    }

    /// `tcp_openreq_init_rwin` + `tcp_select_initial_window`: the listener's window (its
    /// buffer at the default 50 % ratio, in whole segments) and the window scale that covers
    /// `tcp_rmem[2]`; the connection's `rcv_ssthresh` starts at that window.
    fn tcp_openreq_init_rwin(&mut self) {
        let clamp_max = MAX_UNSCALED_WINDOW << MAX_WSCALE;
        let mut space = (self.tcp_full_space().max(0) as u64).min(clamp_max);
        if space > self.advmss {
            space -= space % self.advmss; // quantize to whole segments
        }
        self.rcv_wnd = space;
        self.rcv_wscale = 0;
        if self.rcvbuf.window_scaling {
            let basis = space
                .max(self.rcvbuf.max_bytes)
                .max(SYSCTL_RMEM_MAX)
                .min(clamp_max);
            self.rcv_wscale = (basis.ilog2() as i64 - 15).clamp(0, MAX_WSCALE as i64) as u32;
        }
        self.window_clamp = (MAX_UNSCALED_WINDOW << self.rcv_wscale).min(clamp_max);
        if !self.rcvbuf.window_scaling {
            self.window_clamp = self.window_clamp.min(MAX_UNSCALED_WINDOW); // tcp_create_openreq_child
        }
        self.set_space_limits();
        self.rcv_ssthresh = self.rcv_wnd;
    }

    /// The handshake completes with the first data segment: `tcp_synack_rtt_meas` and
    /// `tcp_init_buffer_space` (one segment of the buffer reserved), `tcp_initialize_rcv_mss`.
    fn tcp_init_buffer_space(&mut self, now: SimTime) {
        if let Some(sent) = self.synack_sent_at {
            // tcp_rtt_estimator's first sample: srtt = m, rttvar = max(m/2·4, rto_min).
            let m = now.saturating_since(sent).max(SimDuration::from_micros(1));
            self.srtt = Some(m);
            self.rto = (m + m.mul_u64(2).max(RTO_MIN)).min(RTO_MAX);
        }
        self.rcvq_space.time = now;
        self.rcvq_space.seq = self.copied_seq;
        let maxwin = self.tcp_full_space().max(0) as u64;
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin; // tcp_app_win = 31 reserves nothing more
        }
        if self.window_clamp > 2 * self.advmss && self.window_clamp + self.advmss > maxwin {
            self.window_clamp = (2 * self.advmss).max(maxwin.saturating_sub(self.advmss));
        }
        self.set_space_limits();
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.rcvq_space.space = self
            .rcv_ssthresh
            .min(self.rcv_wnd)
            .min(INIT_CWND * self.advmss);
        // tcp_initialize_rcv_mss
        let hint = self.advmss.min(self.rcv_wnd / 2).min(MSS_DEFAULT);
        self.rcv_mss = hint.max(MIN_MSS);
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
            self.tcp_event_data_recv(now, pkt.len as u64);
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

    fn advance(&mut self, now: SimTime, end: u64) {
        let before = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.max(end);
        if self.ofo.is_empty() {
            // Nothing held out of order, so no SACK blocks either (the last delivery from the
            // queue dropped them all): only rcv_nxt moves.
            debug_assert!(self.ofo_pkts == 0 && self.ofo_bytes == 0 && self.sack_list.is_empty());
        } else {
            self.deliver_ofo();
        }
        let n = self.rcv_nxt - before;
        self.delivered_bytes += n;
        self.delivered_in_bin += n;
        if self.delivered_bytes >= self.complete_bytes {
            debug_assert!(self.completed_at.is_none());
            self.completed_at = Some(now);
            self.complete_bytes = u64::MAX;
        }
    }

    /// `tcp_ofo_queue`: what the new `rcv_nxt` reaches in the out-of-order queue is delivered;
    /// the SACK blocks below it are dropped.
    fn deliver_ofo(&mut self) {
        // (`iter().next()`, not `first_key_value()`: it reads the length first, where the
        // latter walks down to a leaf of an emptied map)
        while let Some((&s, &e)) = self.ofo.iter().next() {
            if s > self.rcv_nxt {
                break;
            }
            self.ofo.pop_first();
            self.ofo_bytes -= e - s;
            self.rcv_nxt = self.rcv_nxt.max(e);
        }
        debug_assert_eq!(
            self.ofo_bytes,
            self.ofo.iter().map(|(s, e)| e - s).sum::<u64>(),
            "ofo_bytes"
        );
        if self.ofo.is_empty() {
            self.ofo_pkts = 0;
        } else {
            let held = self.ofo_bytes;
            self.ofo_pkts = self.ofo_pkts.min(held.div_ceil(self.advmss.max(1)));
        }
        let rcv_nxt = self.rcv_nxt;
        self.sack_list.retain(|&(_, e)| e > rcv_nxt);
    }

    /// `tcp_event_data_recv`: in-order data arrived.
    fn tcp_event_data_recv(&mut self, now: SimTime, len: u64) {
        self.ack_scheduled = true; // inet_csk_schedule_ack
        self.tcp_measure_rcv_mss(len);
        self.tcp_rcv_rtt_measure(now);
        let now_ms = jiffies(now);
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
    /// from the first full segment (which moves the window clamp to the measured share).
    fn tcp_measure_rcv_mss(&mut self, len: u64) {
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

    /// `tcp_incr_quickack`: allow up to `max` immediate ACKs (half a window's worth).
    fn tcp_incr_quickack(&mut self, max: u32) {
        let mut quickacks = (self.rcv_wnd / (2 * self.rcv_mss.max(1))) as u32;
        if quickacks == 0 {
            quickacks = 2;
        }
        self.quick = self.quick.max(quickacks.min(max));
    }

    /// `tcp_enter_quickack_mode`.
    fn tcp_enter_quickack_mode(&mut self, max: u32) {
        self.tcp_incr_quickack(max);
        self.ato = ATO_MIN;
    }

    /// `tcp_in_quickack_mode` (a `delayed_ack = false` flow is Linux's `quickack` route).
    fn tcp_in_quickack_mode(&self) -> bool {
        !self.delayed_ack || self.quick > 0
    }

    /// `tcp_grow_window`: open `rcv_ssthresh` by two segments while the buffer has room; a
    /// growing window is ACKed at once (`icsk_ack.quick |= 1`).
    fn tcp_grow_window(&mut self, len: u64) {
        debug_assert!(
            self.rcv_nxt > self.copied_seq,
            "the segment itself is unread"
        );
        if self.use_limits() && self.rcv_ssthresh as i64 >= self.limits().grow_limit {
            debug_assert!(
                (self.window_clamp as i64).min(self.tcp_space()) <= self.rcv_ssthresh as i64
            );
            return;
        }
        let room = (self.window_clamp as i64).min(self.tcp_space()) - self.rcv_ssthresh as i64;
        if room <= 0 {
            return;
        }
        let truesize = rx_truesize(len, self.timestamps) as i64;
        // Check #2: will a packet with this overhead fit the buffer?
        let incr = if self.win_from_space(truesize) <= len as i64 {
            2 * self.advmss as i64
        } else {
            self.tcp_grow_window_slow(len as i64, truesize)
        };
        if incr > 0 {
            let incr = incr.max(2 * len as i64);
            self.rcv_ssthresh += room.min(incr) as u64;
            self.quick |= 1;
        }
    }

    /// `__tcp_grow_window`: a packet with a poor payload/truesize ratio grows the window
    /// only while `rcv_ssthresh` is small against `tcp_rmem[2]`.
    fn tcp_grow_window_slow(&self, len: i64, truesize: i64) -> i64 {
        let mut truesize = self.win_from_space(truesize) >> 1;
        let mut window = self.win_from_space(self.rcvbuf.max_bytes as i64) >> 1;
        while self.rcv_ssthresh as i64 <= window {
            if truesize <= len {
                return 2 * self.rcv_mss as i64;
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    // -- the receiver's RTT (DRS) ---------------------------------------------------------------

    /// `tcp_rcv_rtt_update`: keep the minimum sample; timestamp samples above it are
    /// smoothed in (1/8) only while the receive queue is empty.
    fn tcp_rcv_rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let old = self.rcv_rtt_est.rtt_us;
        let m = sample_us << 3;
        if old == 0 || m < old {
            self.rcv_rtt_est.rtt_us = m;
        } else if !win_dep && self.rcv_nxt == self.copied_seq {
            self.rcv_rtt_est.rtt_us = old - (old >> 3) + sample_us;
        }
    }

    /// `tcp_rcv_rtt_measure`: the time to receive one window is an RTT (or more).
    fn tcp_rcv_rtt_measure(&mut self, now: SimTime) {
        if let Some(t) = self.rcv_rtt_est.time {
            if self.rcv_nxt < self.rcv_rtt_est.seq {
                return;
            }
            let delta_us = now.saturating_since(t).as_micros().max(1);
            self.tcp_rcv_rtt_update(delta_us, true);
        }
        self.rcv_rtt_est.seq = self.rcv_nxt + self.rcv_wnd;
        self.rcv_rtt_est.time = Some(now);
    }

    /// `tcp_rcv_rtt_measure_ts`: a full segment echoing a new TSval of ours gives an RTT in
    /// whole milliseconds (zero-ms samples are dropped).
    fn tcp_rcv_rtt_measure_ts(&mut self, now: SimTime, pkt: &Packet) {
        if pkt.tsecr == 0 || pkt.tsecr == self.rcv_rtt_est.last_tsecr {
            return;
        }
        self.rcv_rtt_est.last_tsecr = pkt.tsecr;
        if pkt.len as u64 >= self.rcv_mss {
            let delta_ms = self.ts_now(now).saturating_sub(pkt.tsecr);
            if delta_ms > 0 {
                self.tcp_rcv_rtt_update(delta_ms * 1000, false);
            }
        }
    }

    /// `tcp_rcv_space_adjust`: once per receiver RTT, the bytes read in it become the new
    /// window base if they grew.
    fn tcp_rcv_space_adjust(&mut self, now: SimTime) {
        if self.rcv_rtt_est.rtt_us == 0 {
            return;
        }
        // Linux compares whole microseconds: elapsed_ns / 1000 < rtt_us ⇔ elapsed_ns <
        // rtt_us · 1000, compared in nanoseconds without the division.
        let elapsed = now.saturating_since(self.rcvq_space.time);
        let rtt = SimDuration::from_micros(self.rcv_rtt_est.rtt_us >> 3);
        debug_assert_eq!(elapsed < rtt, elapsed.as_micros() < rtt.as_micros());
        if elapsed < rtt {
            return;
        }
        let inq = self.rcv_nxt - self.copied_seq;
        let copied = (self.copied_seq - self.rcvq_space.seq).saturating_sub(inq);
        if copied > self.rcvq_space.space {
            self.tcp_rcvbuf_grow(copied);
        }
        self.rcvq_space.seq = self.copied_seq;
        self.rcvq_space.time = now;
    }

    /// `tcp_rcvbuf_grow` (6.18): room for twice what was read in the last RTT ("DRS is
    /// always one RTT late"), plus twice its growth (slow start), plus the out-of-order span;
    /// the window clamp follows the buffer.
    fn tcp_rcvbuf_grow(&mut self, newval: u64) {
        let oldval = self.rcvq_space.space;
        self.rcvq_space.space = newval;
        if !self.rcvbuf.autotune {
            return;
        }
        let mut rcvwin = newval << 1;
        // Slow start: allow the sender to double its rate (oldval is never 0 once established).
        let grow = (rcvwin * newval.saturating_sub(oldval))
            .checked_div(oldval)
            .unwrap_or(0);
        rcvwin += grow << 1;
        if let Some((_, &e)) = self.ofo.last_key_value() {
            rcvwin += e - self.rcv_nxt;
        }
        let rcvbuf = self.space_from_win(rcvwin).min(self.rcvbuf.max_bytes);
        if rcvbuf > self.sk_rcvbuf {
            self.sk_rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf as i64).max(0) as u64;
            self.set_space_limits();
        }
    }

    // -- window selection (tcp_output.c) --------------------------------------------------------

    /// `__tcp_select_window`: the free space, capped by `rcv_ssthresh`, rounded up to the
    /// window scale (or to whole segments without scaling).
    fn raw_select_window(&mut self) -> u64 {
        let mut mss = self.rcv_mss as i64;
        let mut free_space = self.tcp_space();
        let (allowed_space, full_space) = if self.use_limits() {
            let limits = self.limits();
            (limits.full_space, limits.clamped_full_space)
        } else {
            let allowed_space = self.tcp_full_space();
            (allowed_space, (self.window_clamp as i64).min(allowed_space))
        };
        if mss > full_space {
            mss = full_space;
            if mss <= 0 {
                return 0;
            }
        }
        let unit = 1i64 << self.rcv_wscale;
        if free_space < full_space >> 1 {
            self.quick = 0;
            free_space = (free_space >> self.rcv_wscale) << self.rcv_wscale; // floor to the unit
            if free_space < allowed_space >> 4 || free_space < mss {
                return 0;
            }
        }
        free_space = free_space.min(self.rcv_ssthresh as i64);
        if self.rcv_wscale > 0 {
            // Up to the unit; free_space ≥ 0 here (≥ mss or ≥ full_space / 2 above).
            debug_assert!(free_space >= 0);
            return (((free_space + unit - 1) >> self.rcv_wscale) << self.rcv_wscale) as u64;
        }
        let mut window = self.rcv_wnd as i64;
        if window <= free_space - mss || window > free_space {
            window = free_space / mss * mss;
        } else if mss == full_space && free_space > window + (full_space >> 1) {
            window = free_space;
        }
        window.max(0) as u64
    }

    /// `tcp_select_window`: the window to announce now (bytes, a multiple of the scale); the
    /// right edge never moves left. `raw` is `__tcp_select_window`'s result when the caller
    /// has just computed it with nothing changed since (see `send_ack_with_window`).
    fn tcp_select_window(&mut self, raw: Option<u64>) -> u64 {
        let cur_win = self.tcp_receive_window();
        let mut new_win = match raw {
            Some(win) => win,
            None => self.raw_select_window(),
        };
        let unit = 1u64 << self.rcv_wscale;
        if new_win < cur_win {
            new_win = cur_win.div_ceil(unit) * unit; // never shrink the offered window
        }
        self.rcv_wnd = new_win;
        self.rcv_wup = self.rcv_nxt;
        let new_win = new_win.min(MAX_UNSCALED_WINDOW << self.rcv_wscale);
        (new_win >> self.rcv_wscale) << self.rcv_wscale
    }

    // -- ACK decisions -----------------------------------------------------------------------

    /// `__tcp_ack_snd_check`.
    fn tcp_ack_snd_check(
        &mut self,
        now: SimTime,
        ack_now: bool,
        ofo_possible: bool,
        out: &mut Out,
    ) {
        if !self.ack_scheduled {
            return;
        }
        let mut window = None;
        let full_frame = self.rcv_nxt - self.rcv_wup > self.rcv_mss && {
            // Unread data is still queued here (rcv_nxt ≠ copied_seq), so the right edge
            // must advance for an ACK now; else the read's tcp_cleanup_rbuf sends it.
            let win = self.raw_select_window();
            window = Some(win);
            win >= self.rcv_wnd
        };
        if full_frame || self.tcp_in_quickack_mode() || ack_now {
            self.send_ack_with_window(now, out, window);
        } else if !ofo_possible {
            self.tcp_send_delayed_ack(now, out);
        } else {
            self.tcp_compress_sack(now, out);
        }
    }

    /// `__tcp_ack_snd_check`'s compressed SACK: with data out of order, the first three
    /// duplicate ACKs for one `rcv_nxt` go at once, later ones are held for min(1 ms, RTT/20)
    /// and sent as one (at most 44 held).
    fn tcp_compress_sack(&mut self, now: SimTime, out: &mut Out) {
        if !self.sack || self.compressed_ack >= COMP_SACK_NR {
            self.send_ack(now, out);
            return;
        }
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            self.send_ack(now, out);
            return;
        }
        self.compressed_ack += 1;
        if self.comp_timer.is_armed() {
            return;
        }
        // 5 % of the RTT (the smaller of the receiver's and the handshake's), at most 1 ms.
        let mut rtt_us = self.rcv_rtt_est.rtt_us >> 3;
        if let Some(srtt) = self.srtt {
            rtt_us = rtt_us.min(srtt.as_micros());
        }
        let delay = COMP_SACK_DELAY.min(SimDuration::from_micros(rtt_us).div_u64(20));
        if let Some(at) = self.comp_timer.set(now + delay) {
            out.timers.push((TimerKind::DelAck, at));
        }
    }

    /// `tcp_sack_compress_send_ack`: send the held ACK now.
    fn tcp_sack_compress_send_ack(&mut self, now: SimTime, out: &mut Out) {
        if self.compressed_ack > 0 {
            self.send_ack(now, out);
        }
    }

    /// `tcp_send_delayed_ack`: arm the delayed-ACK timer for `ato`, clamped by the RTT and
    /// `tcp_delack_max`; an earlier deadline already set stands.
    fn tcp_send_delayed_ack(&mut self, now: SimTime, out: &mut Out) {
        let mut ato = self.ato;
        if ato > ATO_MIN {
            let mut max_ato = ATO_MAX_BULK;
            if let Some(srtt) = self.srtt {
                max_ato = max_ato.min(srtt.max(ATO_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(DELACK_MAX.min(RTO_MIN - SimDuration::from_millis(1))); // tcp_delack_max
        let mut timeout = now + ato;
        if let Some(pending) = self.delack.deadline() {
            if pending <= now + ato.div_u64(4) {
                self.send_ack(now, out); // the timer is about to fire anyway
                return;
            }
            timeout = timeout.min(pending);
        }
        if let Some(at) = self.delack.set(timeout) {
            out.timers.push((TimerKind::DelAck, at));
        }
    }

    /// `tcp_cleanup_rbuf` after the application read `copied` bytes.
    fn tcp_cleanup_rbuf(&mut self, now: SimTime, copied: u64, out: &mut Out) {
        let mut time_to_ack = self.ack_scheduled && self.rcv_nxt - self.rcv_wup > self.rcv_mss;
        let mut window = None;
        if copied > 0 && !time_to_ack {
            let rcv_window_now = self.tcp_receive_window();
            if 2 * rcv_window_now <= self.window_clamp {
                let new_window = self.raw_select_window();
                window = Some(new_window);
                // The read freed lots of space: announce a window at least twice as large.
                time_to_ack = new_window > 0 && new_window >= 2 * rcv_window_now;
            }
        }
        if time_to_ack {
            self.send_ack_with_window(now, out, window);
        }
    }

    fn insert_ofo(&mut self, now: SimTime, seq: u64, end: u64, out: &mut Out) {
        // tcp_sack_new_ofo_skb: a segment that extends or opens a block beyond the first two
        // flushes a held ACK first, so the older blocks are reported.
        let block = self
            .sack_list
            .iter()
            .position(|&(s, e)| seq <= e && end >= s);
        if block.unwrap_or(self.sack_list.len()) >= SACK_BLOCKS_EXPECTED {
            self.tcp_sack_compress_send_ack(now, out);
        }
        let (mut lo, mut hi) = (seq, end);
        let mut dup = false;
        // Merge with overlapping or adjacent ranges. The ranges are disjoint and non-adjacent,
        // so their ends descend with their starts: those to merge are the highest ones starting
        // at or below `end`, down to the first that ends below `seq`.
        match self.ofo.range_mut(..=end).next_back() {
            Some((&s, e)) if s <= seq && *e >= seq => {
                // Within or extending the range starting at or below it (the usual case: the
                // next segment past the highest block): no other range can touch it.
                dup = *e >= end;
                lo = s;
                hi = (*e).max(end);
                self.ofo_bytes += hi - *e;
                *e = hi;
            }
            _ => {
                while let Some((&s, &e)) = self.ofo.range(..=end).next_back() {
                    if e < seq {
                        break;
                    }
                    if s <= seq && e >= end {
                        dup = true;
                    }
                    lo = lo.min(s);
                    hi = hi.max(e);
                    self.ofo.remove(&s);
                    self.ofo_bytes -= e - s;
                }
                self.ofo.insert(lo, hi);
                self.ofo_bytes += hi - lo;
            }
        }
        if !dup {
            self.ofo_pkts += 1;
        }
        if dup && self.sack {
            self.dsack = Some((seq, end));
        }
        // The block containing this segment moves to the front (RFC 2018 §4).
        self.sack_list.retain(|&(s, e)| e < lo || s > hi);
        self.sack_list.insert(0, (lo, hi));
        self.sack_list.truncate(packet::MAX_SACK_BLOCKS);
    }

    fn ts_now(&self, now: SimTime) -> u64 {
        // The receiver's own TSval clock (ms, as Linux's TCP_TS_HZ), read by TCP-LP.
        now.as_nanos() / 1_000_000 + 1
    }

    /// `tcp_replace_ts_recent` for a segment without data (a SYN-ACK, a pure ACK, a FIN):
    /// its TSval is echoed from now on when it is at or before the last ACK point (the
    /// drill endpoint's; a scenario's receiver gets data only).
    pub fn replace_ts_recent(&mut self, seq: u64, tsval: u64) {
        if self.timestamps && seq <= self.rcv_wup {
            self.ts_recent = tsval;
        }
    }

    /// Build and send an ACK for everything received so far (`tcp_send_ack`, then
    /// `tcp_event_ack_sent`: one quick ACK used, the delayed-ACK timer cleared).
    #[inline(never)]
    pub fn send_ack(&mut self, now: SimTime, out: &mut Out) {
        self.send_ack_with_window(now, out, None);
    }

    /// `send_ack` when the caller may hold `__tcp_select_window`'s result. Linux computes it
    /// twice for such an ACK: in `__tcp_ack_snd_check` (or `tcp_cleanup_rbuf`) and again in
    /// `tcp_select_window` as the ACK is built. Nothing it reads (the buffer, the unread and
    /// out-of-order data, `rcv_ssthresh`, `window_clamp`, `rcv_wnd`, `rcv_mss`) changes in
    /// between, and its one side effect (`quick = 0`) is idempotent, so the second computation
    /// would return `window`: it is reused (`Some`) instead of recomputed (`None`).
    #[inline(always)]
    fn send_ack_with_window(&mut self, now: SimTime, out: &mut Out, window: Option<u64>) {
        debug_assert!(window.is_none_or(|w| {
            let quick = self.quick;
            let again = self.raw_select_window();
            self.quick = quick;
            again == w
        }));
        #[cfg(test)]
        let window = window.filter(|_| self.reuse_window);
        let rwnd = self.tcp_select_window(window);
        let (tsval, tsecr, ts_option) = if self.timestamps {
            (self.ts_now(now), self.ts_recent, packet::TS_OPTION)
        } else {
            (0, 0, 0)
        };
        // Built where it is queued (not on the stack and then copied), each field written
        // once; SACK blocks, when there are any, go in after.
        let base = Packet::new(self.flow, Kind::Ack, self.peer);
        out.pkts.push(Packet {
            ack: self.rcv_nxt,
            rwnd,
            tsval,
            tsecr,
            wire_bytes: base.wire_bytes + ts_option,
            ece: self.ece,
            ..base
        });
        if self.sack && (self.dsack.is_some() || !self.sack_list.is_empty()) {
            let p = out.pkts.last_mut().expect("the ACK just queued");
            let max_blocks = if self.timestamps { 3 } else { 4 };
            let mut n = 0;
            if let Some(d) = self.dsack.take() {
                p.sack[n] = d;
                n += 1;
            }
            for &b in &self.sack_list {
                if n == max_blocks {
                    break;
                }
                p.sack[n] = b;
                n += 1;
            }
            p.nsack = n as u8;
            p.wire_bytes += packet::SACK_OPTION_BASE + packet::SACK_BLOCK * n as u32;
        }
        // tcp_dec_quickack_mode: an ACK of scheduled data uses one quick ACK.
        if self.quick > 0 && self.ack_scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = ATO_MIN;
            }
        }
        self.ack_scheduled = false;
        self.delack.clear();
        self.compressed_ack = 0;
        self.comp_timer.clear();
        self.acks_sent += 1;
    }

    /// An event queued for the receiver's timers fired: the delayed-ACK timer or the
    /// compressed-SACK timer (`tcp_compressed_ack_kick`), each re-queued if moved later.
    pub fn on_timer_event(&mut self, now: SimTime, out: &mut Out) {
        match self.delack.on_event(now) {
            Fire::Now => self.on_timer(now, out),
            Fire::Later(at) => out.timers.push((TimerKind::DelAck, at)),
            Fire::Stale => {}
        }
        match self.comp_timer.on_event(now) {
            Fire::Now => self.tcp_sack_compress_send_ack(now, out),
            Fire::Later(at) => out.timers.push((TimerKind::DelAck, at)),
            Fire::Stale => {}
        }
    }

    /// `tcp_delack_timer_handler`: the delayed ACK is due; a missed delayed ACK doubles ato.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Out) {
        if self.compressed_ack > 0 {
            self.tcp_sack_compress_send_ack(now, out);
            return;
        }
        if self.ack_scheduled {
            self.ato = self.ato.mul_u64(2).min(self.rto).min(DELACK_MAX);
            self.send_ack(now, out);
        }
    }
}

/// Linux's `jiffies` at HZ = 1000 (deviation 2).
fn jiffies(now: SimTime) -> u64 {
    now.as_nanos() / 1_000_000
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

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    const RTT_MS: u64 = 600;

    fn at_ms(ms: u64) -> SimTime {
        SimTime::from_nanos(ms * 1_000_000)
    }

    fn receiver(rwnd: u64, autotune: bool) -> Receiver {
        let rcvbuf = RcvBuf {
            max_bytes: rwnd,
            autotune,
            window_scaling: true,
        };
        Receiver::new(0, 1, MSS as u32, true, true, true, rcvbuf, None, None)
    }

    /// The SYN at t = 0; returns the SYN-ACK.
    fn handshake(r: &mut Receiver) -> Packet {
        let mut out = Out::default();
        let mut syn = Packet::new(0, Kind::Syn, 0);
        syn.tsval = 1;
        r.on_packet(SimTime::ZERO, &syn, &mut out);
        out.pkts[0]
    }

    /// Segment `idx` arrives at `now`, echoing `tsecr`; returns the ACKs sent.
    fn segment(r: &mut Receiver, now: SimTime, idx: u64, tsecr: u64) -> Vec<Packet> {
        let mut out = Out::default();
        let mut p = Packet::new(0, Kind::Data, 1);
        p.seq = idx * MSS;
        p.len = MSS as u32;
        p.tsval = now.as_nanos() / 1_000_000 + 1;
        p.tsecr = tsecr;
        r.on_packet(now, &p, &mut out);
        out.pkts
    }

    /// A sender in slow start over a 600 ms path: flight k has `flights[k]` segments arriving
    /// back to back (1 ms apart) one RTT after the previous flight, each echoing the newest
    /// TSval it could have seen. Returns the last ACK of every flight.
    fn slow_start(r: &mut Receiver, flights: &[u64]) -> Vec<Packet> {
        let synack = handshake(r);
        let (mut idx, mut tsecr, mut last) = (0, synack.tsval, Vec::new());
        for (k, &n) in flights.iter().enumerate() {
            let start = RTT_MS * (k as u64 + 1);
            let mut newest = tsecr;
            let mut ack = None;
            for i in 0..n {
                for a in segment(r, at_ms(start + i), idx, tsecr) {
                    newest = newest.max(a.tsval);
                    ack = Some(a);
                }
                idx += 1;
            }
            last.push(ack.expect("every flight is acknowledged"));
            tsecr = newest;
        }
        last
    }

    #[test]
    fn syn_ack_offers_the_listeners_window_in_whole_segments_and_scales_for_tcp_rmem_max() {
        // tcp_rmem[1] = 131072 at the default ratio of 50 % = 65536 B = 45 segments of 1448 B;
        // the scale covers tcp_rmem[2]: 6 MiB → 7, 32 MiB → 10 (what `ss` shows on 6.18).
        let mut r = receiver(6 << 20, true);
        assert_eq!(handshake(&mut r).rwnd, 65_160);
        assert_eq!(r.rcv_wscale, 7);
        let mut r = receiver(32 << 20, true);
        handshake(&mut r);
        assert_eq!(r.rcv_wscale, 10);
    }

    #[test]
    fn first_segment_reserves_one_segment_and_opens_the_window_by_two() {
        // Linux 6.18 (`ss` on the emulator's receiver): rcv_space 14480, rcv_ssthresh 64088
        // before data; the first full segment sets scaling_ratio = 1448·256/2304 = 160.
        let mut r = receiver(6 << 20, true);
        let synack = handshake(&mut r);
        let acks = segment(&mut r, at_ms(RTT_MS), 0, synack.tsval);
        assert_eq!(r.rcvq_space.space, 14_480);
        assert_eq!(r.scaling_ratio, 160);
        assert_eq!(r.window_clamp, 131_072 * 160 / 256);
        assert_eq!(r.rcv_ssthresh, 64_088 + 2 * 1448);
        assert_eq!(acks.len(), 1, "the first segment is acknowledged at once");
        assert_eq!(acks[0].rwnd, (64_088 + 2 * 1448u64).div_ceil(128) * 128);
        assert_eq!(
            r.rcv_rtt_est.rtt_us >> 3,
            RTT_MS * 1000,
            "the receiver's RTT from the echoed TSval"
        );
    }

    #[test]
    fn window_grows_to_twice_the_bytes_copied_per_rtt() {
        // DRS is one RTT late and allows the sender to double: at the end of each flight the
        // window announced is at least twice that flight, until tcp_rmem[2] caps the buffer.
        let flights = [10, 20, 40, 80, 160, 320];
        let mut r = receiver(6 << 20, true);
        let last = slow_start(&mut r, &flights);
        for k in 2..flights.len() {
            let flight_bytes = flights[k] * MSS;
            assert!(
                last[k].rwnd >= 2 * flight_bytes,
                "flight {k}: window {} < 2 × {flight_bytes}",
                last[k].rwnd
            );
        }
        assert!(r.rcvbuf_bytes() > RMEM_DEFAULT && r.rcvbuf_bytes() <= 6 << 20);
        let mut capped = receiver(1 << 20, true);
        slow_start(&mut capped, &flights);
        assert_eq!(
            capped.rcvbuf_bytes(),
            1 << 20,
            "tcp_rmem[2] = rwnd caps the buffer"
        );
        assert!(capped.rcv_wnd() <= (1 << 20) * 160 / 256 + 128);
    }

    #[test]
    fn rcvbuf_grow_reproduces_a_linux_6_18_trace() {
        // `tcp:tcp_rcvbuf_grow` trace in "tcp: fix too slow tcp_rcvbuf_grow() action" (6.18-rc4):
        // scaling_ratio 219; space 49152 → copied 86016 gives rcvbuf 502741, and then
        // space 86016 → copied 139264 gives rcvbuf 728690, window_clamp 623371.
        let mut r = receiver(67_000_000, true);
        r.scaling_ratio = 219;
        r.sk_rcvbuf = 160_875;
        r.rcvq_space.space = 49_152;
        r.tcp_rcvbuf_grow(86_016);
        assert_eq!((r.sk_rcvbuf, r.window_clamp), (502_741, 430_079));
        r.tcp_rcvbuf_grow(139_264);
        assert_eq!((r.sk_rcvbuf, r.window_clamp), (728_690, 623_371));
        assert_eq!(r.rcvq_space.space, 139_264);
    }

    #[test]
    fn without_autotuning_the_window_is_rwnd_and_the_buffer_never_grows() {
        let rwnd = 1_000_000;
        let mut r = receiver(rwnd, false);
        let last = slow_start(&mut r, &[10, 20, 40, 80, 160, 320]);
        let buffer = r.rcvbuf_bytes();
        assert_eq!(buffer, fixed_rcvbuf_bytes(rwnd, MSS, true));
        assert_eq!(r.window_clamp, rwnd, "the buffer is sized to offer rwnd");
        let win = last.last().unwrap().rwnd;
        assert!(
            win <= rwnd + 128 && win + 2 * MSS >= rwnd,
            "window {win} vs rwnd {rwnd}"
        );
    }

    #[test]
    fn ack_every_second_segment_once_quickacks_and_window_growth_are_over() {
        let mut r = receiver(6 << 20, true);
        let synack = handshake(&mut r);
        let mut acks = Vec::new();
        // 40 segments: within the 80 kB the receiver offers, as a sender must stay.
        for i in 0..40 {
            acks.push(
                segment(
                    &mut r,
                    at_ms(RTT_MS) + SimDuration::from_micros(600 * i),
                    i,
                    synack.tsval,
                )
                .len(),
            );
        }
        // 16 quick ACKs, kept at 16 while rcv_ssthresh grows (`quick |= 1` on the six
        // segments that open the window), then one per two segments.
        assert!(acks[..22].iter().all(|&n| n == 1), "{acks:?}");
        assert_eq!(acks[24..].iter().sum::<usize>(), 8, "{acks:?}");
    }

    /// A receiver past its quick ACKs (the first flight is over), `ato` at its start value,
    /// its buffer at the ceiling (a growing window would ACK every segment and reset ato).
    fn settled() -> (Receiver, u64) {
        let mut r = receiver(RMEM_DEFAULT, true);
        let synack = handshake(&mut r);
        for i in 0..40 {
            segment(
                &mut r,
                at_ms(RTT_MS) + SimDuration::from_micros(100 * i),
                i,
                synack.tsval,
            );
        }
        assert_eq!(r.quick, 0);
        assert_eq!(r.ato(), ATO_MIN);
        (r, 40)
    }

    #[test]
    fn a_lone_segment_waits_for_the_delayed_ack_timer_and_a_missed_timer_doubles_ato() {
        let (mut r, idx) = settled();
        let now = at_ms(2 * RTT_MS);
        assert!(segment(&mut r, now, idx, 1).is_empty());
        // A gap longer than ato (and shorter than the RTO) leaves ato as it was.
        assert_eq!(r.delack.deadline(), Some(now + ATO_MIN));
        let mut out = Out::default();
        r.on_timer(now + ATO_MIN, &mut out);
        assert_eq!(out.pkts.len(), 1);
        assert_eq!(
            r.ato(),
            ATO_MIN.mul_u64(2),
            "tcp_delack_timer_handler inflates ato"
        );
    }

    #[test]
    fn ato_grows_after_spaced_segments_and_falls_back_for_back_to_back_ones() {
        let (mut r, mut idx) = settled();
        let mut now = at_ms(2 * RTT_MS);
        // Segments 30 ms apart (between ATO_MIN/2 and ato): ato → ato/2 + 30 ms, towards 60 ms.
        for _ in 0..8 {
            segment(&mut r, now, idx, 1);
            idx += 1;
            now += SimDuration::from_millis(30);
        }
        assert!(
            r.ato() > SimDuration::from_millis(55) && r.ato() <= SimDuration::from_millis(60),
            "{:?}",
            r.ato()
        );
        // Back to back: ato → ato/2 + 20 ms, back to 40 ms.
        for _ in 0..8 {
            segment(&mut r, now, idx, 1);
            idx += 1;
            now += SimDuration::from_millis(1);
        }
        assert!(r.ato() <= SimDuration::from_millis(41), "{:?}", r.ato());
    }

    #[test]
    fn the_delayed_ack_timeout_is_clamped_by_the_rtt() {
        // 30 ms RTT: ato may grow to 60 ms, but tcp_send_delayed_ack waits at most one srtt.
        let mut r = receiver(6 << 20, true);
        let synack = handshake(&mut r);
        let rtt = SimDuration::from_millis(30);
        for i in 0..40 {
            segment(
                &mut r,
                SimTime::ZERO + rtt + SimDuration::from_micros(100 * i),
                i,
                synack.tsval,
            );
        }
        let mut now = SimTime::ZERO + rtt.mul_u64(2);
        for i in 40..50 {
            segment(&mut r, now, i, 1);
            now += SimDuration::from_millis(25);
        }
        assert!(r.ato() > rtt);
        let lone = now + SimDuration::from_millis(300);
        assert!(segment(&mut r, lone, 50, 1).is_empty() || r.delack.deadline().is_none());
        if let Some(d) = r.delack.deadline() {
            assert!(d <= lone + rtt, "deadline {:?} after one RTT", d);
        }
    }

    #[test]
    fn out_of_order_acks_after_the_third_are_compressed_for_a_millisecond() {
        // Compressed SACK: segment 40 is lost; 41.. arrive 100 µs apart. Three duplicate ACKs
        // go at once, the rest wait min(1 ms, RTT/20) and leave as one ACK per timer.
        let (mut r, idx) = settled();
        let start = at_ms(2 * RTT_MS);
        let mut sent = Vec::new();
        for i in 1..=10u64 {
            sent.push(
                segment(
                    &mut r,
                    start + SimDuration::from_micros(100 * i),
                    idx + i,
                    1,
                )
                .len(),
            );
        }
        assert_eq!(sent[..3], [1, 1, 1], "{sent:?}");
        assert!(sent[3..10].iter().all(|&n| n == 0), "{sent:?}");
        assert_eq!(
            r.comp_timer.deadline(),
            Some(start + SimDuration::from_micros(400) + COMP_SACK_DELAY)
        );
        let mut out = Out::default();
        r.on_timer_event(start + SimDuration::from_micros(1400), &mut out);
        assert_eq!(out.pkts.len(), 1, "one ACK for the held ones");
        assert_eq!(
            out.pkts[0].sack_blocks()[0],
            ((idx + 1) * MSS, (idx + 11) * MSS)
        );
    }

    #[test]
    fn rx_truesize_of_a_full_segment_is_2304_bytes() {
        // 64 headroom + 66 B of headers + 1448 payload + 320 shared info → 2048 B, + 256 sk_buff.
        assert_eq!(rx_truesize(1448, true), 2304);
        assert_eq!(full_segment_scaling_ratio(1448, true), 160);
    }

    #[test]
    fn a_huge_buffer_saturates_the_window_instead_of_overflowing() {
        assert_eq!(win_from_space(1 << 20, 128), 1 << 19); // half, as Linux's default ratio
        assert_eq!(win_from_space(-(1 << 20), 128), -(1 << 19)); // negative space stays signed
                                                                 // the product overflows 64 bits but the window fits: exact, as the 128-bit maths gives
        assert_eq!(win_from_space(i64::MAX, 255), 9_187_343_239_835_811_839);
        assert_eq!(win_from_space(i64::MAX, 256 * 4), i64::MAX); // saturated, not wrapped
        assert_eq!(win_from_space(i64::MIN, 256 * 4), i64::MIN);
    }

    #[test]
    fn the_64_bit_window_from_space_is_the_128_bit_one() {
        // `win_from_space` multiplies in 64 bits when the product fits: the same window as
        // the 128-bit product, rounding of negative space included.
        let reference = |space: i64, ratio: u64| -> i64 {
            let scaled = (i128::from(space) * i128::from(ratio)) >> RMEM_TO_WIN_SCALE;
            scaled.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
        };
        let edge = i64::MAX / 255;
        let spaces = [
            0,
            1,
            -1,
            -255,
            2303,
            -2304,
            131_072,
            -131_073,
            6 << 20,
            edge,
            edge + 1,
            -edge,
            -edge - 1,
            i64::MAX,
            i64::MIN,
        ];
        for space in spaces {
            for ratio in [1, 127, 128, 160, 255, 256, 1024, u64::MAX] {
                assert_eq!(
                    win_from_space(space, ratio),
                    reference(space, ratio),
                    "space {space}, ratio {ratio}"
                );
            }
        }
    }

    #[test]
    fn the_out_of_order_queue_holds_the_union_of_what_arrived_and_counts_its_bytes() {
        // `insert_ofo` merges in place or by removal, `advance` delivers from the front, and
        // `ofo_bytes` follows: against the union of every byte range received, with
        // overlapping, adjacent, duplicate and hole-filling segments.
        let mut r = receiver(6 << 20, true);
        let synack = handshake(&mut r);
        let mut received: Vec<(u64, u64)> = Vec::new();
        let mut rng = satcc_core::Rng::new(12_345);
        for k in 0..3000u64 {
            let x = rng.next_u64();
            // Mostly just past what arrived so far; sometimes back into a hole, or overlapping.
            let top = received.last().map_or(0, |&(_, e)| e);
            let seq = match (x >> 33) % 8 {
                0 => top.saturating_sub((x >> 40) % (8 * MSS)),
                1 => top + MSS,
                2 => r.rcv_nxt,
                _ => top,
            };
            let len = [MSS, MSS, MSS, 500, 2 * MSS][((x >> 20) % 5) as usize];
            let mut out = Out::default();
            let mut p = Packet::new(0, Kind::Data, 1);
            p.seq = seq;
            p.len = len as u32;
            p.tsval = k + 2;
            p.tsecr = synack.tsval;
            r.on_packet(at_ms(RTT_MS + k), &p, &mut out);
            // The reference: the union of all ranges received, merged when they touch.
            received.push((seq, seq + len));
            received.sort_unstable();
            let mut union: Vec<(u64, u64)> = Vec::new();
            for &(s, e) in &received {
                match union.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => union.push((s, e)),
                }
            }
            received = union.clone();
            let in_order = union
                .first()
                .filter(|&&(s, _)| s == 0)
                .map_or(0, |&(_, e)| e);
            assert_eq!(r.rcv_nxt, in_order, "rcv_nxt after segment {k}");
            let ofo: Vec<(u64, u64)> = union.into_iter().filter(|&(s, _)| s > in_order).collect();
            assert_eq!(r.ofo.iter().map(|(&s, &e)| (s, e)).collect::<Vec<_>>(), ofo);
            assert_eq!(r.ofo_bytes, ofo.iter().map(|(s, e)| e - s).sum::<u64>());
        }
        assert!(r.rcv_nxt > 100 * MSS);
    }

    /// Drives a receiver with every shortcut (`fast`) and one with `uncache` applied to it
    /// (`slow`) through the same arrivals on a scaled, a fixed and an unscaled window, and
    /// checks that they send the same ACKs and keep the same window state after every
    /// segment: (a) back to back, two losses retransmitted later and a reordering; (b) slow
    /// start over a 600 ms path (flights doubling, one RTT apart, echoing the newest TSval),
    /// so that DRS grows the buffer, with a loss in the fifth flight filled at its end.
    fn assert_same_as_uncached(uncache: fn(&mut Receiver)) {
        for (rwnd, autotune, window_scaling) in [
            (6 << 20, true, true),
            (256 << 10, false, true),
            (60_000, true, false),
        ] {
            let make = |shortcuts: bool| {
                let rcvbuf = RcvBuf {
                    max_bytes: rwnd,
                    autotune,
                    window_scaling,
                };
                let mut r = Receiver::new(0, 1, MSS as u32, true, true, true, rcvbuf, None, None);
                if !shortcuts {
                    uncache(&mut r);
                }
                r
            };
            // (arrival ms, segment index, TSecr: None = the newest TSval ACKed so far)
            let mut back_to_back: Vec<(u64, u64, Option<u64>)> = Vec::new();
            let mut order: Vec<u64> = (0..300).collect();
            order.retain(|&i| i != 120 && i != 200); // two losses, retransmitted later
            order.insert(150, 120);
            order.push(200);
            order.extend(300..400);
            // 330 overtakes 328 and 329: in-order data arrives with one packet out of order
            order.retain(|&i| i != 330);
            let at = order.iter().position(|&i| i == 328).expect("328 is sent");
            order.insert(at, 330);
            for (k, &idx) in order.iter().enumerate() {
                back_to_back.push((RTT_MS + k as u64 / 4, idx, Some(1)));
            }
            let mut flights = Vec::new();
            let mut idx = 0;
            for (k, n) in [10u64, 20, 40, 80, 160, 320, 480].into_iter().enumerate() {
                let start = RTT_MS * (k as u64 + 1);
                let lost = if k == 4 { Some(idx + 7) } else { None };
                for i in 0..n {
                    if Some(idx) != lost {
                        flights.push((start + i / 2, idx, None));
                    }
                    idx += 1;
                }
                if let Some(l) = lost {
                    flights.push((start + n / 2, l, None));
                }
            }
            for arrivals in [back_to_back, flights] {
                let (mut fast, mut slow) = (make(true), make(false));
                let (sf, ss) = (handshake(&mut fast), handshake(&mut slow));
                assert_eq!(sf, ss);
                let mut newest = sf.tsval;
                for &(ms, idx, tsecr) in &arrivals {
                    let now = at_ms(ms);
                    let tsecr = tsecr.unwrap_or(newest);
                    let (af, asl) = (
                        segment(&mut fast, now, idx, tsecr),
                        segment(&mut slow, now, idx, tsecr),
                    );
                    assert_eq!(af, asl, "ACKs after segment {idx} (rwnd {rwnd})");
                    newest = af.iter().map(|a| a.tsval).fold(newest, u64::max);
                    assert_eq!(
                        (fast.rcv_wnd, fast.rcv_wup, fast.quick, fast.ato),
                        (slow.rcv_wnd, slow.rcv_wup, slow.quick, slow.ato),
                        "window state after segment {idx} (rwnd {rwnd})"
                    );
                    assert_eq!(
                        (fast.rcv_ssthresh, fast.sk_rcvbuf, fast.window_clamp),
                        (slow.rcv_ssthresh, slow.sk_rcvbuf, slow.window_clamp),
                        "buffer state after segment {idx} (rwnd {rwnd})"
                    );
                }
                assert_eq!(fast.acks_sent, slow.acks_sent);
                assert!(fast.acks_sent > 100);
            }
        }
    }

    #[test]
    fn an_ack_reusing_the_window_just_selected_offers_what_recomputing_it_offers() {
        // `send_ack_with_window` reuses `__tcp_select_window` from `__tcp_ack_snd_check` and
        // `tcp_cleanup_rbuf`.
        assert_same_as_uncached(|r| r.reuse_window = false);
    }

    #[test]
    fn the_kept_space_limits_are_the_ones_recomputed_from_the_buffer() {
        // `tcp_grow_window` returns at `grow_limit` without computing `tcp_space`,
        // `__tcp_select_window` reads `tcp_full_space` and its clamp from `limits`, and
        // `tcp_space` with one packet held is read from there too.
        assert_same_as_uncached(|r| r.use_space_limits = false);
    }
}
