//! A socket-like TCP endpoint in virtual time, for `satcc drill --engine sim`: the
//! simulator's own sender and receiver (the code scenarios run) behind the calls a
//! packetdrill script makes — listen, accept, connect, write, read, close/shutdown,
//! `TCP_MAXSEG`, `TCP_INFO` — and segments on the wire in and out with live sequence numbers,
//! flags and TCP options.
//!
//! ```text
//!  Listen ── SYN in / SYN-ACK out ──► SynRcvd ── ACK of the SYN-ACK ──► Established
//!  Closed ── connect: SYN out ──► SynSent ── SYN-ACK in / ACK out ──► Established
//!  Established ── close/shutdown(WR): FIN out ──► FinWait1 ── its ACK ──► FinWait2 ── FIN in ──► TimeWait
//!  Established ── FIN in ──► CloseWait ── close: FIN out ──► LastAck ── its ACK ──► Closed
//!  FinWait1 ── FIN in ──► Closing ── ACK of our FIN ──► TimeWait
//!  any ── RST in at rcv_nxt / close with unread data (RST out) / SYN timeout ──► Closed
//! ```
//!
//! The passive open negotiates as Linux's `tcp_openreq_init` / `tcp_synack_options`: MSS
//! (ours 1460 or `TCP_MAXSEG`'s, the segment size `min(peer's, ours)` less 12 with
//! timestamps), SACK-permitted, timestamps (TSval the endpoint's millisecond clock) and window
//! scaling each only when both sides offer it; ECN when the SYN carries ECE+CWR and `tcp_ecn`
//! is 1 or 2. The SYN-ACK's option layout is Linux's (`tcp_options_write`). Our ISN is 0.
//! The SYN-ACK is retransmitted after 1, 2, 4 ... s (`tcp_synack_retries` 5), the SYN after
//! 1 s five times, then 2, 4 s (`tcp_syn_linear_timeouts` 4, `tcp_syn_retries` 6).
//!
//! Closing: the FIN joins the last data segment when that is still unsent (`tcp_send_fin`),
//! else goes alone; a FIN alone in flight is retransmitted after the RTO twice (the tail loss
//! probe, then the RTO), then with the RTO doubled (measured on this kernel). `close` with
//! received data never read aborts with `R.` (`tcp_close`, RFC 2525 §2.17); a segment for a
//! closed socket, or an ACK for a listener, is answered by a RST (`tcp_v4_send_reset`); a RST
//! at `rcv_nxt` resets the connection (the next call fails with ECONNRESET, EPIPE in
//! CLOSE-WAIT, ECONNREFUSED in SYN-SENT), elsewhere in the window it gets a challenge ACK
//! (RFC 5961 §3.2), as an ACK above `snd_nxt` does (6.18 `tcp_ack`; the segment is dropped,
//! at most one challenge ACK per 500 ms). New data after `close` in FIN-WAIT-1/2 aborts.
//! After `shutdown(SHUT_RD)` data is still acknowledged and a read returns it (0 when none).
//!
//! A data segment is an ACK too: the receiver builds the ACK it would send (window, SACK and
//! DSACK blocks, ECE) and the data segment carries its fields, which ends a pending delayed
//! ACK as `tcp_event_ack_sent` does.
//!
//! `TCP_INFO` adds `tcpi_last_data_sent/recv`, `tcpi_last_ack_recv` (ms since `lsndtime`,
//! `lrcvtime`, `rcv_tstamp`) and the chronographs (`tcp_chrono_start/stop`): `tcpi_busy_time`
//! while data or the FIN is queued or unacknowledged, `tcpi_rwnd_limited` while unsent data
//! waits for the peer's window only (cwnd has room).
//!
//! Time is virtual: `advance` fires the sender's, receiver's and the endpoint's own timers
//! (RTO, TLP, RACK, pacing, delayed ACK; SYN, SYN-ACK, lone FIN) in time order; every
//! segment out carries the virtual time it was sent. Nothing reads a clock.
//!
//! Writes of any size are cut as Linux cuts them (the sender's `app_send`: segments of up
//! to the MSS from `snd_nxt`, a short one only last; Nagle with Minshall's check,
//! `TCP_NODELAY`, `TCP_CORK` and `MSG_MORE` as `tcp_nagle_test`); a write without `MSG_MORE`
//! marks PSH on the segment holding its last byte (`tcp_mark_push`).
//!
//! Deviations from Linux (each shown by the scripts named in docs/drill.md):
//! 1. None now (segments are cut from `snd_nxt`, as above; satcc's nagle-* scripts and
//!    upstream nagle/https_client and nagle/sockopt_cork_nodelay check it); the number is
//!    kept so that the others stay put.
//! 2. The FIN is not in the sender's sequence space: while data is unacknowledged, the
//!    sender's tail loss probe resends the last data segment where Linux resends the FIN
//!    (upstream shutdown-rdwr-write-queue-close), and the FIN's own retransmissions do not
//!    count in `tcpi_retrans`, `tcpi_total_retrans` or `tcpi_backoff`.
//! 3. After a retransmitted SYN or SYN-ACK the handshake's RTT sample is still taken, from
//!    the last transmission, and cwnd starts at the initial window; this kernel, after two
//!    (no timestamps), has no RTT sample (Karn), `tcpi_rto` 3 s (`TCP_TIMEOUT_FALLBACK`),
//!    cwnd 1 and `tcpi_total_retrans` 2. The connection gives up one backed-off timeout
//!    after the last SYN retransmission.
//! 4. No SO_LINGER, no TIME-WAIT timer (TIME_WAIT lasts), no FIN-WAIT-2 timeout, no RST for
//!    the embryonic connection when its listener closes.
//! 5. PSH beyond `tcp_mark_push`: the kernel here hands a PSH-marked buffer to the device in
//!    pieces of two segments (`tcp_tso_autosize`'s minimum, `tcp_min_tso_segs`) counted from
//!    the first segment sent together, and the last segment of each piece carries PSH too
//!    (measured with `satcc drill --engine kernel`: a 2002-, 4000- and 11500-byte write with
//!    TCP_NODELAY, cwnd- and window-limited bursts). The endpoint marks every second new
//!    segment of a burst so; at pacing rates where `tcp_tso_autosize` makes larger pieces
//!    (above about two segments per millisecond) the kernel's marks are sparser.
//! 6. No autocorking (`tcp_should_autocork`: packets leave the host at once here); the FIN
//!    rides on the last data segment only when that segment is still unsent at close. (The
//!    zero-window probe timer is the sender's, `tcp_probe_timer`: upstream
//!    nagle/sendmsg_msg_more and slow-start-after-win-update check it; its data carries PSH.)

mod close;
mod handshake;
mod info;
mod wire;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use satcc_core::{SimDuration, SimTime};

use super::receiver::Receiver;
use super::sender::{Sender, MIN_TSO_SEGS, TSO_WIN_DIVISOR};
use super::{Out, TimerKind};
use crate::packet::{Ecn, Kind, Packet, MAX_SACK_BLOCKS};
pub use info::EndpointInfo;
use info::CHRONO_UNSPEC;
use satcc_core::scenario::Flow;
use wire::ts_of;
pub use wire::{WireEcn, WireOpt, WireSeg};

/// TCP header flag bits, as on the wire.
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// Our MSS option: Ethernet's 1500 less 40 bytes of IP and TCP headers.
pub const ADVMSS: u32 = 1460;
/// `TCPOLEN_TSTAMP_ALIGNED`: the timestamps option with its two NOPs.
const TS_ALIGNED: u32 = 12;
/// Our initial sequence number.
const ISS: u32 = 0;
/// `TCP_TIMEOUT_INIT`: the first SYN / SYN-ACK retransmission timeout (RFC 6298 §2.1).
const TIMEOUT_INIT: SimDuration = SimDuration::from_secs(1);
/// `TCP_RTO_MAX`: the largest backed-off retransmission timeout.
const RTO_MAX: SimDuration = SimDuration::from_secs(120);
/// `net.ipv4.tcp_syn_retries` default: SYN retransmissions before `connect` fails.
const SYN_RETRIES: u32 = 6;
/// `net.ipv4.tcp_synack_retries` default: SYN-ACK retransmissions before the request goes.
const SYNACK_RETRIES: u32 = 5;
/// `net.ipv4.tcp_syn_linear_timeouts` default (Linux 6.5+): the first four SYN
/// retransmissions keep a 1 s timeout, later ones double it (measured on this kernel: SYNs
/// at 0, 1, 2 s).
const SYN_LINEAR_TIMEOUTS: u32 = 4;
/// `net.ipv4.tcp_invalid_ratelimit` default (HZ/2): at most one challenge ACK per socket per
/// 500 ms (`__tcp_oow_rate_limited`).
const INVALID_RATELIMIT: SimDuration = SimDuration::from_millis(500);
/// `TCP_MIN_MSS` and `MAX_TCP_WINDOW`: the range `setsockopt(TCP_MAXSEG)` accepts.
use satcc_core::scenario::{MAX_USER_MSS, MIN_MSS as MIN_USER_MSS};
/// Timer codes of the endpoint's own timers (beside the sender's and receiver's).
const T_FIN: u8 = 5;
const T_SYN: u8 = 6;

/// A socket error (`sk_err`), reported once by the next call that checks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SockErr {
    ConnReset,
    ConnRefused,
    Pipe,
    TimedOut,
}

impl SockErr {
    pub fn name(self) -> &'static str {
        match self {
            SockErr::ConnReset => "ECONNRESET",
            SockErr::ConnRefused => "ECONNREFUSED",
            SockErr::Pipe => "EPIPE",
            SockErr::TimedOut => "ETIMEDOUT",
        }
    }
}

/// `TCP_*` socket states, numbered as `tcpi_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Established = 1,
    SynSent = 2,
    SynRcvd = 3,
    FinWait1 = 4,
    FinWait2 = 5,
    TimeWait = 6,
    Closed = 7,
    CloseWait = 8,
    LastAck = 9,
    Listen = 10,
    Closing = 11,
}

/// A passive-open TCP endpoint over the simulator's sender and receiver.
pub struct Endpoint {
    cfg: Flow,
    /// `net.ipv4.tcp_ecn`: 1 and 2 accept an ECN-setup SYN.
    ecn_sysctl: u8,
    /// `net.ipv4.tcp_slow_start_after_idle`.
    slow_start_after_idle: bool,
    /// `net.ipv4.tcp_min_tso_segs` and `net.ipv4.tcp_tso_win_divisor`.
    tso_sysctls: (u32, u32),
    pub state: State,
    now: SimTime,
    irs: u32,
    snd_wscale: u32,
    ecn_ok: bool,
    synack_at: SimTime,
    /// `ts_recent`: the peer's newest TSval, echoed in our TSecr.
    ts_recent: u32,
    sender: Option<Sender>,
    receiver: Option<Receiver>,
    written: u64,
    /// Where writes without `MSG_MORE` ended (`tcp_mark_push`), above snd_una: the data
    /// segment holding one carries PSH.
    push_marks: VecDeque<u64>,
    /// `TCP_CORK` set before the connection was established.
    cork: bool,
    /// `tc qdisc ... pfifo limit 0` in the script: every segment is dropped before the wire.
    local_drop: bool,
    read: u64,
    fin_queued: bool,
    fin_sent: bool,
    fin_rcvd: bool,
    /// The FIN went out on the last data segment (`tcp_send_fin` on an unsent tail).
    fin_on_data: bool,
    /// Retransmissions of a FIN left alone in flight, and the armed timer's sequence number.
    fin_retx: u32,
    fin_timer: Option<u64>,
    /// The SYN or SYN-ACK: its retransmissions, the armed timer, the peer's SYN to answer.
    syn_retx: u32,
    syn_timer: Option<u64>,
    syn_seg: Option<WireSeg>,
    /// `close()` was called; `RCV_SHUTDOWN` (close or `shutdown(SHUT_RD)`).
    app_closed: bool,
    rcv_shut: bool,
    /// `sk_err`.
    err: Option<SockErr>,
    /// `TCP_MAXSEG` set by the application (`rx_opt.user_mss`).
    user_mss: Option<u32>,
    /// `tp->last_oow_ack_time`: the last challenge ACK.
    last_oow_ack: Option<SimTime>,
    /// `lsndtime`, `icsk_ack.lrcvtime`, `rcv_tstamp`.
    last_data_sent: SimTime,
    last_data_recv: SimTime,
    last_ack_recv: SimTime,
    /// `chrono_type`, `chrono_start`, `chrono_stat` (ms; busy, rwnd-limited).
    chrono_type: u8,
    chrono_start_ms: u64,
    chrono_stat_ms: [u64; 2],
    out: VecDeque<WireSeg>,
    /// The packets being flushed come from the zero-window probe timer (PSH on its data),
    /// and where the data such probes sent ends (stream offsets, for drill's GSO view).
    probe_push: bool,
    probe_push_ends: Vec<u64>,
    timers: BinaryHeap<Reverse<(SimTime, u64, u8)>>,
    timer_seq: u64,
    scratch: Out,
}

fn timer_code(k: TimerKind) -> u8 {
    match k {
        TimerKind::Rto => 0,
        TimerKind::Reo => 1,
        TimerKind::Tlp => 2,
        TimerKind::Pace => 3,
        TimerKind::DelAck => 4,
    }
}

fn timer_kind(c: u8) -> TimerKind {
    match c {
        0 => TimerKind::Rto,
        1 => TimerKind::Reo,
        2 => TimerKind::Tlp,
        3 => TimerKind::Pace,
        _ => TimerKind::DelAck,
    }
}

impl Endpoint {
    /// A closed socket with the flow settings `cfg` (its `mss` is ignored: ours is
    /// [`ADVMSS`]) and `tcp_ecn` = `ecn_sysctl`.
    pub fn new(cfg: Flow, ecn_sysctl: u8) -> Self {
        Endpoint {
            cfg,
            ecn_sysctl,
            slow_start_after_idle: false,
            tso_sysctls: (MIN_TSO_SEGS, TSO_WIN_DIVISOR),
            state: State::Closed,
            now: SimTime::ZERO,
            irs: 0,
            snd_wscale: 0,
            ecn_ok: false,
            synack_at: SimTime::ZERO,
            ts_recent: 0,
            sender: None,
            receiver: None,
            written: 0,
            push_marks: VecDeque::new(),
            cork: false,
            local_drop: false,
            read: 0,
            fin_queued: false,
            fin_sent: false,
            fin_rcvd: false,
            fin_on_data: false,
            fin_retx: 0,
            fin_timer: None,
            syn_retx: 0,
            syn_timer: None,
            syn_seg: None,
            app_closed: false,
            rcv_shut: false,
            err: None,
            user_mss: None,
            last_oow_ack: None,
            last_data_sent: SimTime::ZERO,
            last_data_recv: SimTime::ZERO,
            last_ack_recv: SimTime::ZERO,
            chrono_type: CHRONO_UNSPEC,
            chrono_start_ms: 0,
            chrono_stat_ms: [0; 2],
            out: VecDeque::new(),
            probe_push: false,
            probe_push_ends: Vec::new(),
            timers: BinaryHeap::new(),
            timer_seq: 0,
            scratch: Out::default(),
        }
    }

    /// `tcp_slow_start_after_idle` for the connection (set before it is established).
    pub fn set_slow_start_after_idle(&mut self, on: bool) {
        self.slow_start_after_idle = on;
    }

    /// `tcp_min_tso_segs` and `tcp_tso_win_divisor` for the connection (set before it is
    /// established; `Sender::set_tso_sysctls`).
    pub fn set_tso_sysctls(&mut self, min_tso_segs: u32, tso_win_divisor: u32) {
        self.tso_sysctls = (min_tso_segs, tso_win_divisor);
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The congestion control a connection accepted later will use (`TCP_CONGESTION` on
    /// the listener); an unknown name is refused. After the handshake: refused too.
    pub fn set_cca(&mut self, name: &str) -> Result<(), String> {
        if self.sender.is_some() {
            return Err("TCP_CONGESTION after the handshake is not supported".into());
        }
        satcc_cc::lookup(name, &self.params()?).map_err(|e| e.to_string())?;
        self.cfg.cca = name.to_string();
        Ok(())
    }

    pub fn cca(&self) -> &str {
        &self.cfg.cca
    }

    /// The algorithm's parameters (the flow's `cc` table).
    fn params(&self) -> Result<satcc_cc::Params, String> {
        match &self.cfg.cc {
            Some(t) => satcc_cc::Params::from_json(t),
            None => Ok(satcc_cc::Params::new()),
        }
    }

    pub fn listen(&mut self) {
        self.state = State::Listen;
    }

    pub fn established(&self) -> bool {
        self.sender.is_some()
    }

    /// Whether the sending side is shut (`shutdown(SHUT_WR)`, `close`, or the connection
    /// reset: `tcp_done` shuts both ways): a write then fails with EPIPE.
    pub fn write_shut(&self) -> bool {
        self.fin_queued || (self.state == State::Closed && self.sender.is_some())
    }

    /// The pending socket error (`sock_error`: reported once, then cleared).
    pub fn take_error(&mut self) -> Option<SockErr> {
        self.err.take()
    }

    /// Whether a blocking `read` returns now: data is queued, the peer's FIN arrived, the
    /// receiving side is shut (`RCV_SHUTDOWN`: a read returns what is queued, else 0), or
    /// the connection is closed (an error or 0).
    pub fn read_ready(&self) -> bool {
        self.readable() > 0
            || self.fin_rcvd
            || self.rcv_shut
            || self.err.is_some()
            || self.state == State::Closed
    }

    /// `getsockopt(TCP_MAXSEG)` (`do_tcp_getsockopt`): the send MSS (`mss_cache`) once
    /// connected; before, `TCP_MAXSEG`'s value if set, else `TCP_MSS_DEFAULT`.
    pub fn maxseg(&self) -> u32 {
        match (&self.sender, self.user_mss) {
            (Some(_), _) if self.state != State::Listen => self.cfg.mss,
            (_, Some(m)) if matches!(self.state, State::Closed | State::Listen) => m,
            _ => crate::tcp::MSS_DEFAULT,
        }
    }

    /// `setsockopt(TCP_MAXSEG)`: the MSS the connection advertises and sends at most
    /// (`rx_opt.user_mss`; 0 clears it). `Err` is EINVAL.
    pub fn set_maxseg(&mut self, mss: u32) -> Result<(), String> {
        if mss != 0 && !(MIN_USER_MSS..=MAX_USER_MSS).contains(&mss) {
            return Err(format!(
                "TCP_MAXSEG {mss}: expected 0 or {MIN_USER_MSS}..={MAX_USER_MSS}"
            ));
        }
        self.user_mss = (mss != 0).then_some(mss);
        Ok(())
    }

    /// Our MSS option (`tcp_advertise_mss`, `tcp_mss_clamp`): the route's 1460, or less
    /// when `TCP_MAXSEG` says so.
    fn advmss(&self) -> u32 {
        self.user_mss.map_or(ADVMSS, |m| m.min(ADVMSS))
    }

    /// Bytes the application could read now.
    pub fn readable(&self) -> u64 {
        self.receiver
            .as_ref()
            .map_or(0, |r| r.delivered_bytes - self.read)
    }

    /// Whether the peer's FIN arrived (a read then returns 0 at the end of the data).
    pub fn fin_received(&self) -> bool {
        self.fin_rcvd
    }

    /// `read`: take up to `n` bytes; how many.
    pub fn read(&mut self, n: u64) -> u64 {
        let k = self.readable().min(n);
        self.read += k;
        k
    }

    /// `write`: queue `n` bytes.
    pub fn write(&mut self, n: u64) -> Result<u64, String> {
        self.send(n, false)
    }

    /// `send` with `MSG_MORE` when `more`: queue `n` bytes; a short last segment waits for
    /// more (`tcp_push` with `TCP_NAGLE_CORK`), and the write sets no PSH.
    pub fn send(&mut self, n: u64, more: bool) -> Result<u64, String> {
        let Some(s) = self.sender.as_mut() else {
            return Err("write() before the connection is established".into());
        };
        if self.fin_queued {
            return Err("write() after shutdown(SHUT_WR)".into());
        }
        let mut o = std::mem::take(&mut self.scratch);
        self.written += n;
        if n > 0 && !more {
            self.push_marks.push_back(self.written);
        }
        s.app_send(self.now, n, more, &mut o);
        self.scratch = o;
        self.flush();
        Ok(n)
    }

    /// `setsockopt(TCP_NODELAY)`: on, what is queued goes out now (Nagle off); before the
    /// handshake it is kept for the connection.
    pub fn set_nodelay(&mut self, on: bool) {
        match self.sender.as_mut() {
            Some(s) => {
                let mut o = std::mem::take(&mut self.scratch);
                s.set_nodelay(self.now, on, &mut o);
                self.scratch = o;
                self.flush();
            }
            None => self.cfg.nodelay = on,
        }
    }

    /// `setsockopt(TCP_CORK)`: on, short segments wait; off, what is queued goes out.
    pub fn set_cork(&mut self, on: bool) {
        match self.sender.as_mut() {
            Some(s) => {
                let mut o = std::mem::take(&mut self.scratch);
                s.set_cork(self.now, on, &mut o);
                self.scratch = o;
                self.flush();
            }
            None => self.cork = on,
        }
    }

    /// The host's qdisc drops every packet (`tc qdisc replace dev tun0 root pfifo limit 0`),
    /// or no longer: the sender's transmissions fail (`Sender::set_local_drop`) and nothing
    /// this endpoint sends reaches the wire.
    pub fn set_local_drop(&mut self, on: bool) {
        self.local_drop = on;
        if let Some(s) = self.sender.as_mut() {
            s.set_local_drop(on);
        }
    }

    /// A new connection's sender: the socket options set before it existed.
    fn start_sender(&mut self, mut s: Sender) {
        s.set_local_drop(self.local_drop);
        if self.cork {
            let mut o = Out::default();
            s.set_cork(self.now, true, &mut o);
        }
        self.sender = Some(s);
    }

    /// Where the data segments a zero-window probe sent end (`tcp_write_wakeup` marks them
    /// PSH), as offsets in the stream.
    pub fn probe_push_ends(&self) -> &[u64] {
        &self.probe_push_ends
    }

    /// Let virtual time pass to `t`, firing every timer due by then.
    pub fn advance(&mut self, t: SimTime) {
        while self.fire_next(t) {}
        self.now = self.now.max(t);
    }

    /// The next segment the endpoint sends by `deadline` (firing timers up to it), or `None`
    /// (time is then at `deadline`).
    pub fn next_outbound(&mut self, deadline: SimTime) -> Option<WireSeg> {
        loop {
            if let Some(s) = self.out.pop_front() {
                return Some(s);
            }
            if !self.fire_next(deadline) {
                self.now = self.now.max(deadline);
                return None;
            }
        }
    }

    /// Fire the earliest timer due at or before `limit`; whether one was due.
    fn fire_next(&mut self, limit: SimTime) -> bool {
        let Some(&Reverse((at, _, code))) = self.timers.peek() else {
            return false;
        };
        if at > limit {
            return false;
        }
        let Reverse((_, seq, _)) = self.timers.pop().expect("peeked");
        self.now = self.now.max(at);
        let now = self.now;
        match code {
            T_FIN => {
                if self.fin_timer == Some(seq) {
                    self.fin_timer = None;
                    self.retransmit_fin();
                }
                return true;
            }
            T_SYN => {
                if self.syn_timer == Some(seq) {
                    self.syn_timer = None;
                    self.retransmit_syn();
                }
                return true;
            }
            _ if self.state == State::Closed => return true, // tcp_done stopped them
            _ => {}
        }
        let mut o = std::mem::take(&mut self.scratch);
        let mut probe = false;
        match timer_kind(code) {
            TimerKind::DelAck => {
                if let Some(r) = self.receiver.as_mut() {
                    r.on_timer_event(now, &mut o);
                }
            }
            k => {
                if let Some(s) = self.sender.as_mut() {
                    s.on_timer(now, k, &mut o);
                    probe = s.probe_fired();
                }
            }
        }
        self.scratch = o;
        self.probe_push = probe;
        self.flush();
        self.probe_push = false;
        true
    }

    /// A segment from the peer arrives now.
    pub fn inject(&mut self, seg: &WireSeg) -> Result<(), String> {
        let rst = seg.flags & RST != 0;
        let (syn, ack) = (seg.flags & SYN != 0, seg.flags & ACK != 0);
        let synack_acked = seg.ack == ISS.wrapping_add(1);
        match self.state {
            // No socket takes it (never opened, or gone after `tcp_done`): `tcp_v4_send_reset`.
            State::Closed => self.reset_reply(seg),
            // `tcp_rcv_state_process` in LISTEN: an ACK is answered by a RST.
            State::Listen if rst => {}
            State::Listen if ack => self.reset_reply(seg),
            State::Listen if syn => self.on_syn(seg)?,
            State::Listen => {}
            // `tcp_check_req`: a RST drops the request; a SYN again is answered again; an
            // ACK of something else than our SYN-ACK is answered by a RST.
            State::SynRcvd if rst => self.drop_request(),
            State::SynRcvd if syn && !ack => {
                self.resend_synack();
            }
            State::SynRcvd if ack && !synack_acked => self.reset_reply(seg),
            State::SynRcvd if ack => {
                self.syn_timer = None;
                self.on_established(seg)?;
                self.on_segment(seg);
            }
            State::SynRcvd => {}
            // `tcp_rcv_synsent_state_process`: an ACK of anything but our SYN is reset; a RST
            // with the right ACK refuses the connection; a RST without ACK is dropped.
            State::SynSent if ack && !synack_acked => {
                if !rst {
                    self.reset_reply(seg);
                }
            }
            State::SynSent if rst && ack => {
                self.err = Some(SockErr::ConnRefused);
                self.tcp_done();
            }
            State::SynSent if syn && ack => {
                self.syn_timer = None;
                self.on_synack(seg)?;
            }
            State::SynSent => {}
            _ if rst => self.on_rst(seg),
            _ => self.on_segment(seg),
        }
        Ok(())
    }

    fn arm(&mut self, code: u8, at: SimTime) -> u64 {
        self.timer_seq += 1;
        self.timers.push(Reverse((at, self.timer_seq, code)));
        self.timer_seq
    }

    /// `tcp_rcv_established`: the ACK part to the sender, the data to the receiver, then a FIN.
    fn on_segment(&mut self, seg: &WireSeg) {
        let now = self.now;
        let ts = ts_of(seg);
        let base = ISS.wrapping_add(1);
        if seg.flags & ACK != 0 {
            // `tcp_ack`: an ACK of data never sent (RFC 9293 §3.10.7.4) drops the whole
            // segment, data and FIN too, and is answered by a challenge ACK.
            let snd_nxt = self.sender.as_ref().map_or(0, |s| s.info().snd_nxt);
            let off = seg.ack.wrapping_sub(base) as i32 as i64;
            if off > (snd_nxt + self.fin_sent as u64) as i64 {
                self.challenge_ack();
                return;
            }
            self.last_ack_recv = now;
        }
        if let Some((v, _)) = ts {
            self.ts_recent = v; // tcp_replace_ts_recent (PAWS aside)
        }
        if seg.len > 0 {
            self.last_data_recv = now; // icsk_ack.lrcvtime
        }
        let mut o = std::mem::take(&mut self.scratch);
        if seg.flags & ACK != 0 {
            let mut ack = seg.ack.wrapping_sub(base) as u64;
            if self.fin_sent && ack == self.written + 1 {
                self.on_fin_acked();
                ack = self.written;
            }
            if let Some(s) = self.sender.as_mut() {
                let mut p = Packet::new(0, Kind::Ack, 1);
                p.ack = ack;
                p.rwnd = (seg.win as u64) << self.snd_wscale;
                p.ece = seg.flags & ECE != 0;
                if let Some((v, e)) = ts {
                    p.tsval = v as u64;
                    p.tsecr = e as u64;
                }
                for o in &seg.opts {
                    if let WireOpt::Sack(blocks) = o {
                        for &(a, b) in blocks.iter().take(MAX_SACK_BLOCKS) {
                            let i = p.nsack as usize;
                            p.sack[i] = (a.wrapping_sub(base) as u64, b.wrapping_sub(base) as u64);
                            p.nsack += 1;
                        }
                    }
                }
                if ack <= s.info().snd_nxt {
                    s.on_packet(now, &p, &mut o);
                }
            }
        }
        let rbase = self.irs.wrapping_add(1);
        let seq = seg.seq.wrapping_sub(rbase) as u64;
        let rcv_nxt = self.receiver.as_ref().map_or(0, |r| r.rcv_nxt);
        if self.rcv_shut
            && matches!(self.state, State::FinWait1 | State::FinWait2)
            && seg.len > 0
            && seq + seg.len as u64 > rcv_nxt
        {
            // `tcp_rcv_state_process`: new data after the receiving side was shut, in
            // FIN-WAIT-1/2, aborts the connection (RFC 1122 §4.2.2.13): `tcp_reset`, and
            // the segment is answered by a RST.
            self.scratch = o;
            self.flush();
            self.err = Some(SockErr::ConnReset);
            self.tcp_done();
            self.reset_reply(seg);
            return;
        }
        if let (0, Some((v, _)), Some(r)) = (seg.len, ts, self.receiver.as_mut()) {
            r.replace_ts_recent(seq, v as u64);
        }
        if seg.len > 0 {
            if let Some(r) = self.receiver.as_mut() {
                let mut p = Packet::new(0, Kind::Data, 0);
                p.seq = seq;
                p.len = seg.len;
                p.ecn = match seg.ecn {
                    WireEcn::NotEct => Ecn::NotEct,
                    WireEcn::Ect0 | WireEcn::Ect1 => Ecn::Ect,
                    WireEcn::Ce => Ecn::Ce,
                };
                p.cwr = seg.flags & CWR != 0;
                if let Some((v, e)) = ts {
                    p.tsval = v as u64;
                    p.tsecr = e as u64;
                }
                r.on_packet(now, &p, &mut o);
            }
        }
        if seg.flags & FIN != 0 && !self.fin_rcvd {
            if let Some(r) = self.receiver.as_mut() {
                // tcp_fin: in order only (an out-of-order FIN is not queued here).
                if seq + seg.len as u64 == r.rcv_nxt {
                    self.fin_rcvd = true;
                    self.state = match self.state {
                        State::Established | State::SynRcvd => State::CloseWait,
                        State::FinWait1 => State::Closing,
                        State::FinWait2 => State::TimeWait,
                        s => s,
                    };
                    r.send_ack(now, &mut o);
                }
            }
        }
        self.scratch = o;
        self.flush();
    }
}

#[cfg(test)]
mod tests;
