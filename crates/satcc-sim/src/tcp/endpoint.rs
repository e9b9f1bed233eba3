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
//! Deviations from Linux (each shown by the scripts named in docs/drill.md; upstream
//! nagle/sendmsg_msg_more for 6):
//! 1. (Fixed 2026-11-27: segments were cut at multiples of the MSS from the start of the
//!    stream, so a write after a partly filled segment was refused; satcc's nagle-* scripts
//!    and upstream nagle/https_client and nagle/sockopt_cork_nodelay now pass.)
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
//! 6. No zero-window probe timer (`tcp_check_probe_timer`): data held by `TCP_CORK` or
//!    `MSG_MORE` with nothing in flight waits for the next push (Linux sends it when the
//!    timer fires, 200 ms on); no autocorking (`tcp_should_autocork`: packets leave the
//!    host at once here); the FIN rides on the last data segment only when that segment
//!    is still unsent at close.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use satcc_core::{SimDuration, SimTime};

use super::receiver::{EcnEcho, RcvBuf, Receiver};
use super::sender::{Sender, SenderInfo};
use super::{Out, TimerKind};
use crate::packet::{Ecn, Kind, Packet, MAX_SACK_BLOCKS};
use satcc_core::scenario::Flow;

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
/// Linux `TCP_MSS_DEFAULT`: the peer's MSS when its SYN has no MSS option (RFC 9293 §3.7.1).
const MSS_DEFAULT: u32 = 536;
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
const MIN_USER_MSS: u32 = 88;
const MAX_USER_MSS: u32 = 32_767;
/// Timer codes of the endpoint's own timers (beside the sender's and receiver's).
const T_FIN: u8 = 5;
const T_SYN: u8 = 6;
/// `enum tcp_chrono`: what a connection is doing (`tcp_chrono_start/stop`), in priority order.
const CHRONO_UNSPEC: u8 = 0;
const CHRONO_BUSY: u8 = 1;
const CHRONO_RWND_LIMITED: u8 = 2;

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

/// A TCP option as written on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireOpt {
    Nop,
    Eol,
    Mss(u32),
    Wscale(u32),
    SackOk,
    /// TSval, TSecr.
    Ts(u32, u32),
    /// SACK blocks (live sequence numbers).
    Sack(Vec<(u32, u32)>),
}

/// IP ECN codepoint of a segment on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireEcn {
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

/// A segment on the wire (live 32-bit sequence numbers, the window field unscaled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireSeg {
    pub t: SimTime,
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
    pub win: u32,
    pub len: u32,
    pub opts: Vec<WireOpt>,
    pub ecn: WireEcn,
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

/// What the endpoint's `TCP_INFO` reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointInfo {
    pub state: u8,
    /// `TCPI_OPT_*`: timestamps 1, SACK 2, window scaling 4, ECN 8.
    pub options: u8,
    pub snd_wscale: u32,
    pub rcv_wscale: u32,
    pub ato_us: u64,
    pub rcv_mss: u64,
    pub advmss: u32,
    pub rcv_ssthresh: u64,
    pub rcv_wnd: u64,
    pub bytes_received: u64,
    pub notsent_bytes: u64,
    /// `tcpi_last_data_sent`, `tcpi_last_data_recv`, `tcpi_last_ack_recv`: ms since.
    pub last_data_sent_ms: u64,
    pub last_data_recv_ms: u64,
    pub last_ack_recv_ms: u64,
    /// `tcpi_busy_time`, `tcpi_rwnd_limited` (µs; `tcp_get_info_chrono_stats`).
    pub busy_time_us: u64,
    pub rwnd_limited_us: u64,
    /// The sender's part; `None` before the connection is established.
    pub sender: Option<SenderInfo>,
}

/// A passive-open TCP endpoint over the simulator's sender and receiver.
pub struct Endpoint {
    cfg: Flow,
    /// `net.ipv4.tcp_ecn`: 1 and 2 accept an ECN-setup SYN.
    ecn_sysctl: u8,
    /// `net.ipv4.tcp_slow_start_after_idle`.
    slow_start_after_idle: bool,
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
            timers: BinaryHeap::new(),
            timer_seq: 0,
            scratch: Out::default(),
        }
    }

    /// `tcp_slow_start_after_idle` for the connection (set before it is established).
    pub fn set_slow_start_after_idle(&mut self, on: bool) {
        self.slow_start_after_idle = on;
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
            _ => MSS_DEFAULT,
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

    /// A new connection's sender: the socket options set before it existed.
    fn start_sender(&mut self, mut s: Sender) {
        if self.cork {
            let mut o = Out::default();
            s.set_cork(self.now, true, &mut o);
        }
        self.sender = Some(s);
    }

    /// `shutdown(SHUT_WR)`: send a FIN after the data (`tcp_shutdown`, `tcp_send_fin`); in
    /// SYN-SENT the connection just closes (`tcp_close_state`).
    pub fn close_write(&mut self) {
        if self.fin_queued {
            return;
        }
        match self.state {
            State::Established | State::CloseWait | State::SynRcvd => {
                self.fin_queued = true;
                if let Some(s) = self.sender.as_mut() {
                    let mut o = std::mem::take(&mut self.scratch);
                    s.queue_fin(self.now, &mut o);
                    self.scratch = o;
                }
                self.flush();
            }
            State::Listen | State::SynSent => self.tcp_done(),
            _ => {}
        }
    }

    /// `shutdown(SHUT_RD)`: `RCV_SHUTDOWN`. Data still arrives and is acknowledged, and a
    /// read returns what is queued (0 when nothing is).
    pub fn shutdown_read(&mut self) {
        self.rcv_shut = true;
    }

    /// `close()` (`tcp_close`): with received data the application never read, the
    /// connection is aborted with a RST (RFC 2525 §2.17, `tcp_send_active_reset`); else a
    /// FIN follows the data, as `shutdown(SHUT_WR)`. The socket is then the kernel's: once
    /// it reaches CLOSED, a segment for it is answered by a RST (`tcp_v4_send_reset`).
    pub fn close(&mut self) {
        self.app_closed = true;
        self.rcv_shut = true;
        let established = matches!(
            self.state,
            State::Established | State::CloseWait | State::FinWait1 | State::FinWait2
        );
        if established && self.readable() > 0 {
            self.send_active_reset();
            self.tcp_done();
            return;
        }
        self.close_write();
    }

    /// `tcp_done`: CLOSED, every timer of the connection stopped.
    fn tcp_done(&mut self) {
        self.state = State::Closed;
        self.fin_timer = None;
        self.syn_timer = None;
    }

    // -- time

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
        match timer_kind(code) {
            TimerKind::DelAck => {
                if let Some(r) = self.receiver.as_mut() {
                    r.on_timer_event(now, &mut o);
                }
            }
            k => {
                if let Some(s) = self.sender.as_mut() {
                    s.on_timer(now, k, &mut o);
                }
            }
        }
        self.scratch = o;
        self.flush();
        true
    }

    // -- segments in

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

    /// A RST on a synchronized connection (`tcp_validate_incoming`, RFC 5961 §3.2): exactly
    /// at `rcv_nxt` it resets the connection (`tcp_reset`: the error ECONNRESET, EPIPE in
    /// CLOSE-WAIT, and CLOSED); elsewhere in the window it gets a challenge ACK; outside it
    /// is dropped.
    fn on_rst(&mut self, seg: &WireSeg) {
        let rcv_nxt = self.ack_field();
        let off = seg.seq.wrapping_sub(rcv_nxt) as i32;
        if off == 0 {
            self.err = Some(match self.state {
                State::CloseWait => SockErr::Pipe,
                _ => SockErr::ConnReset,
            });
            self.tcp_done();
        } else if off > 0 && (off as u64) < self.receiver.as_ref().map_or(0, |r| r.rcv_wnd()) {
            self.challenge_ack();
        }
    }

    /// `tcp_send_challenge_ack`: an ACK of what we have, at most one per 500 ms
    /// (`tcp_invalid_ratelimit`; the per-netns limit is unlimited by default).
    fn challenge_ack(&mut self) {
        let now = self.now;
        if self
            .last_oow_ack
            .is_some_and(|t| now.saturating_since(t) < INVALID_RATELIMIT)
        {
            return;
        }
        self.last_oow_ack = Some(now);
        let mut o = std::mem::take(&mut self.scratch);
        if let Some(r) = self.receiver.as_mut() {
            r.send_ack(now, &mut o);
        }
        self.scratch = o;
        self.flush();
    }

    /// `tcp_v4_send_reset`: the answer to a segment no socket takes. With an ACK the RST
    /// takes its sequence number from it; without, it acknowledges the segment (RFC 9293
    /// §3.10.7.1). No options, window 0.
    fn reset_reply(&mut self, seg: &WireSeg) {
        if seg.flags & RST != 0 {
            return;
        }
        let (flags, seq, ack) = if seg.flags & ACK != 0 {
            (RST, seg.ack, 0)
        } else {
            let len = seg.len + u32::from(seg.flags & SYN != 0) + u32::from(seg.flags & FIN != 0);
            (RST | ACK, 0, seg.seq.wrapping_add(len))
        };
        self.out.push_back(WireSeg {
            t: self.now,
            flags,
            seq,
            ack,
            win: 0,
            len: 0,
            opts: Vec::new(),
            ecn: WireEcn::NotEct,
        });
    }

    /// `tcp_send_active_reset`: abort the connection (`R.` at `snd_nxt`, acknowledging
    /// what arrived, with timestamps when in use).
    fn send_active_reset(&mut self) {
        let snd_nxt = self.sender.as_ref().map_or(0, |s| s.info().snd_nxt);
        let seg = WireSeg {
            t: self.now,
            flags: RST | ACK,
            seq: ISS
                .wrapping_add(1)
                .wrapping_add(snd_nxt as u32)
                .wrapping_add(self.fin_sent as u32),
            ack: self.ack_field(),
            win: self.win_field(),
            len: 0,
            opts: self.ts_opts(self.now, None),
            ecn: WireEcn::NotEct,
        };
        self.out.push_back(seg);
    }

    /// The request (SYN-RECEIVED) is dropped: the listener waits for another SYN.
    fn drop_request(&mut self) {
        self.receiver = None;
        self.syn_timer = None;
        self.syn_retx = 0;
        self.state = State::Listen;
    }

    /// Answer the peer's SYN again with our SYN-ACK (a retransmitted SYN, or our timer).
    fn resend_synack(&mut self) {
        let Some(seg) = self.syn_seg.clone() else {
            return;
        };
        let mut o = std::mem::take(&mut self.scratch);
        let p = self.syn_packet(&seg);
        if let Some(r) = self.receiver.as_mut() {
            r.on_packet(self.now, &p, &mut o);
        }
        self.synack_at = self.now;
        self.scratch = o;
        self.flush();
    }

    fn arm(&mut self, code: u8, at: SimTime) -> u64 {
        self.timer_seq += 1;
        self.timers.push(Reverse((at, self.timer_seq, code)));
        self.timer_seq
    }

    /// The next SYN / SYN-ACK timeout: `TCP_TIMEOUT_INIT`, doubled per retransmission
    /// already made (`tcp_retransmit_timer`, `reqsk_timer_handler`) — for a SYN only after
    /// the first `tcp_syn_linear_timeouts` — at most `TCP_RTO_MAX`.
    fn syn_timeout(&self) -> SimDuration {
        let doublings = match self.state {
            State::SynSent => self.syn_retx.saturating_sub(SYN_LINEAR_TIMEOUTS),
            _ => self.syn_retx,
        };
        TIMEOUT_INIT.mul_u64(1 << doublings.min(16)).min(RTO_MAX)
    }

    /// The SYN or SYN-ACK timer fired (`tcp_retransmit_timer` on a SYN-SENT socket,
    /// `inet_rtx_syn_ack` via `reqsk_timer_handler`): send it again, or give up after
    /// `tcp_syn_retries` / `tcp_synack_retries`.
    fn retransmit_syn(&mut self) {
        match self.state {
            State::SynSent => {
                if self.syn_retx >= SYN_RETRIES {
                    self.err = Some(SockErr::TimedOut);
                    self.tcp_done();
                    return;
                }
                self.syn_retx += 1;
                if let Some(mut syn) = self.syn_seg.clone() {
                    syn.t = self.now;
                    let tsval = self.ts_clock(self.now);
                    for o in &mut syn.opts {
                        if let WireOpt::Ts(v, _) = o {
                            *v = tsval;
                        }
                    }
                    self.out.push_back(syn);
                }
                self.synack_at = self.now;
            }
            State::SynRcvd => {
                if self.syn_retx >= SYNACK_RETRIES {
                    self.drop_request();
                    return;
                }
                self.syn_retx += 1;
                self.resend_synack();
            }
            _ => return,
        }
        let at = self.now + self.syn_timeout();
        self.syn_timer = Some(self.arm(T_SYN, at));
    }

    /// The FIN alone in flight and unacknowledged: its next retransmission. The first is
    /// the tail loss probe, which with one packet out comes at the RTO's time
    /// (`tcp_schedule_loss_probe` bounded by `tcp_rto_delta_us`), then the RTO itself, then
    /// the RTO backed off (`tcp_retransmit_timer`).
    fn fin_timeout(&self) -> SimDuration {
        let rto_us = self.sender.as_ref().map_or(1_000_000, |s| s.info().rto_us);
        let shift = self.fin_retx.saturating_sub(1).min(16);
        SimDuration::from_micros(rto_us)
            .mul_u64(1 << shift)
            .min(RTO_MAX)
    }

    fn fin_in_flight(&self) -> bool {
        self.fin_sent
            && matches!(
                self.state,
                State::FinWait1 | State::Closing | State::LastAck
            )
    }

    fn fin_segment(&self) -> WireSeg {
        WireSeg {
            t: self.now,
            flags: FIN | ACK,
            seq: ISS.wrapping_add(1).wrapping_add(self.written as u32),
            ack: self.ack_field(),
            win: self.win_field(),
            len: 0,
            opts: self.ts_opts(self.now, None),
            ecn: WireEcn::NotEct,
        }
    }

    fn retransmit_fin(&mut self) {
        if !self.fin_in_flight() {
            return;
        }
        self.fin_retx += 1;
        let seg = self.fin_segment();
        self.out.push_back(seg);
        let at = self.now + self.fin_timeout();
        self.fin_timer = Some(self.arm(T_FIN, at));
    }

    fn syn_packet(&self, seg: &WireSeg) -> Packet {
        let mut p = Packet::new(0, Kind::Syn, 0);
        p.tsval = ts_of(seg).map_or(0, |(v, _)| v as u64);
        p.ece = self.ecn_ok;
        p.cwr = self.ecn_ok;
        p
    }

    /// Read the peer's SYN or SYN-ACK options and settle what both sides use
    /// (`tcp_parse_options`, `tcp_openreq_init`), as Linux does; the peer's ISN.
    fn negotiate(&mut self, seg: &WireSeg) {
        let mut peer_mss = MSS_DEFAULT;
        let (mut peer_sack, mut peer_ws) = (false, None);
        for o in &seg.opts {
            match o {
                WireOpt::Mss(m) => peer_mss = *m,
                WireOpt::SackOk => peer_sack = true,
                WireOpt::Wscale(w) => peer_ws = Some(*w),
                _ => {}
            }
        }
        let peer_ts = ts_of(seg).is_some();
        self.irs = seg.seq;
        let c = &mut self.cfg;
        c.sack &= peer_sack;
        c.timestamps &= peer_ts;
        c.window_scaling &= peer_ws.is_some();
        // RFC 7323 §2.3: a shift above 14 is taken as 14.
        self.snd_wscale = if c.window_scaling {
            peer_ws.unwrap_or(0).min(14)
        } else {
            0
        };
        // tcp_mtu_to_mss: min(the route's, the peer's, TCP_MAXSEG's) less the timestamps
        // option (`mss_clamp` takes `user_mss`).
        let ts_len = self.ts_len();
        self.cfg.mss = self.advmss().min(peer_mss).saturating_sub(ts_len).max(1);
    }

    fn ts_len(&self) -> u32 {
        if self.cfg.timestamps {
            TS_ALIGNED
        } else {
            0
        }
    }

    /// The receiving half with the current settings, its window initialised as for a SYN
    /// (`tcp_openreq_init_rwin`, `tcp_select_initial_window`); the SYN-ACK it would answer.
    fn make_receiver(&mut self, syn: &Packet) -> (Receiver, Packet) {
        let c = &self.cfg;
        let rcvbuf = RcvBuf {
            max_bytes: c.rwnd_bytes.max(self.advmss() as u64),
            autotune: c.rcvbuf_autotune,
            window_scaling: c.window_scaling,
        };
        let mut r = Receiver::new(
            0,
            1,
            self.advmss() - self.ts_len(),
            c.timestamps,
            c.sack,
            c.delayed_ack,
            rcvbuf,
            self.ecn_ok.then_some(EcnEcho::Classic),
            None,
        );
        let mut o = Out::default();
        r.on_packet(self.now, syn, &mut o);
        let synack = o.pkts.pop().expect("a receiver answers a SYN");
        (r, synack)
    }

    /// `tcp_conn_request`: negotiate, and answer with the SYN-ACK.
    fn on_syn(&mut self, seg: &WireSeg) -> Result<(), String> {
        self.negotiate(seg);
        self.ts_recent = ts_of(seg).map_or(0, |t| t.0);
        // tcp_ecn_create_request: an ECN-setup SYN (ECE and CWR) when tcp_ecn allows it.
        self.ecn_ok = seg.flags & (ECE | CWR) == (ECE | CWR) && matches!(self.ecn_sysctl, 1 | 2);
        self.cfg.ecn = self.ecn_ok;
        let p = self.syn_packet(seg);
        let (r, synack) = self.make_receiver(&p);
        self.receiver = Some(r);
        self.scratch.pkts.push(synack);
        self.synack_at = self.now;
        self.state = State::SynRcvd;
        self.syn_seg = Some(seg.clone());
        self.syn_retx = 0;
        let at = self.now + self.syn_timeout();
        self.syn_timer = Some(self.arm(T_SYN, at));
        self.flush();
        Ok(())
    }

    /// `connect`: send the SYN (`tcp_connect`, options as `tcp_syn_options`); ECN asked for
    /// with `tcp_ecn` = 1.
    pub fn connect(&mut self) {
        let mut syn = Packet::new(0, Kind::Syn, 0);
        syn.tsval = self.ts_clock(self.now) as u64;
        let (r, synack) = self.make_receiver(&syn);
        let c = &self.cfg;
        let ws = r.rcv_wscale();
        let mut opts = vec![WireOpt::Mss(self.advmss())];
        opts.extend(self.syn_options(
            c.timestamps,
            c.sack,
            c.window_scaling,
            ws,
            (syn.tsval as u32, 0),
        ));
        let ecn = if self.ecn_sysctl == 1 { ECE | CWR } else { 0 };
        let syn_seg = WireSeg {
            t: self.now,
            flags: SYN | ecn,
            seq: ISS,
            ack: 0,
            win: synack.rwnd.min(65_535) as u32,
            len: 0,
            opts,
            ecn: WireEcn::NotEct,
        };
        self.out.push_back(syn_seg.clone());
        self.syn_seg = Some(syn_seg);
        self.receiver = Some(r);
        self.synack_at = self.now; // the SYN's time: the handshake's RTT sample starts here
        self.state = State::SynSent;
        self.syn_retx = 0;
        let at = self.now + self.syn_timeout();
        self.syn_timer = Some(self.arm(T_SYN, at));
    }

    /// The SYN-ACK arrived (`tcp_rcv_synsent_state_process`): established; ACK it.
    fn on_synack(&mut self, seg: &WireSeg) -> Result<(), String> {
        self.negotiate(seg);
        self.ts_recent = ts_of(seg).map_or(0, |t| t.0);
        // tcp_ecn_rcv_synack: ECN agreed when we asked and the SYN-ACK has ECE without CWR.
        self.ecn_ok = self.ecn_sysctl == 1 && seg.flags & (ECE | CWR) == ECE;
        self.cfg.ecn = self.ecn_ok;
        let syn = Packet::new(0, Kind::Syn, 0);
        let (mut r, _) = self.make_receiver(&syn);
        r.replace_ts_recent(0, self.ts_recent as u64);
        self.receiver = Some(r);
        // The SYN-ACK's window is never scaled (RFC 7323 §2.2).
        let cc = satcc_cc::lookup(&self.cfg.cca, &self.params()?).map_err(|e| e.to_string())?;
        let mut s = Sender::new(&self.cfg, 1, cc);
        s.accept(self.now, self.synack_at, seg.win as u64, self.ecn_ok);
        s.set_slow_start_after_idle(self.slow_start_after_idle);
        self.start_sender(s);
        self.state = State::Established;
        self.on_connected();
        let mut o = std::mem::take(&mut self.scratch);
        if let Some(r) = self.receiver.as_mut() {
            r.send_ack(self.now, &mut o);
        }
        self.scratch = o;
        self.flush();
        Ok(())
    }

    /// Options of a SYN or SYN-ACK after the MSS, in `tcp_options_write`'s order.
    fn syn_options(
        &self,
        ts: bool,
        sack: bool,
        ws: bool,
        wscale: u32,
        tsv: (u32, u32),
    ) -> Vec<WireOpt> {
        let mut opts = Vec::new();
        if ts {
            if sack {
                opts.push(WireOpt::SackOk);
            } else {
                opts.extend([WireOpt::Nop, WireOpt::Nop]);
            }
            opts.push(WireOpt::Ts(tsv.0, tsv.1));
        } else if sack {
            opts.extend([WireOpt::Nop, WireOpt::Nop, WireOpt::SackOk]);
        }
        if ws {
            opts.extend([WireOpt::Nop, WireOpt::Wscale(wscale)]);
        }
        opts
    }

    /// The TSval clock: milliseconds, +1 so it is never 0 (as the sender's `ts_now`).
    fn ts_clock(&self, now: SimTime) -> u32 {
        (now.as_nanos() / 1_000_000 + 1) as u32
    }

    fn on_established(&mut self, seg: &WireSeg) -> Result<(), String> {
        let cc = satcc_cc::lookup(&self.cfg.cca, &self.params()?).map_err(|e| e.to_string())?;
        let mut s = Sender::new(&self.cfg, 1, cc);
        let rwnd = (seg.win as u64) << self.snd_wscale;
        s.accept(self.now, self.synack_at, rwnd, self.ecn_ok);
        s.set_slow_start_after_idle(self.slow_start_after_idle);
        self.start_sender(s);
        self.state = State::Established;
        self.on_connected();
        Ok(())
    }

    /// Both opens: `lsndtime`, `lrcvtime` and `rcv_tstamp` start at the handshake's end
    /// (`tcp_finish_connect`, `tcp_rcv_state_process` in SYN-RECEIVED).
    fn on_connected(&mut self) {
        self.last_data_sent = self.now;
        self.last_data_recv = self.now;
        self.last_ack_recv = self.now;
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

    fn on_fin_acked(&mut self) {
        self.fin_timer = None;
        self.state = match self.state {
            State::FinWait1 => State::FinWait2,
            State::Closing => State::TimeWait,
            State::LastAck => State::Closed,
            s => s,
        };
    }

    // -- segments out

    /// Turn what the sender and receiver queued into wire segments at `now`; queue their
    /// timers; send a pending FIN once all data is out.
    fn flush(&mut self) {
        let now = self.now;
        let pkts = std::mem::take(&mut self.scratch.pkts);
        // New data segments sent together, counted in pairs (see `wire`'s PSH).
        let mut burst = 0u32;
        for p in &pkts {
            let mut ack = None;
            if p.kind == Kind::Data {
                self.last_data_sent = now; // tcp_event_data_sent: lsndtime
                if self.fin_queued && !self.fin_sent && p.seq + p.len as u64 == self.written {
                    // tcp_send_fin: the FIN joins the unsent last segment.
                    self.fin_sent = true;
                    self.fin_on_data = true;
                    self.state = match self.state {
                        State::CloseWait => State::LastAck,
                        _ => State::FinWait1,
                    };
                }
                // A data segment is an ACK too: its window is selected, it carries the
                // receiver's SACK blocks (tcp_established_options), and sending it ends a
                // pending delayed ACK (tcp_event_ack_sent). The receiver builds that ACK;
                // its fields go on the data segment and the ACK itself is dropped.
                if let Some(r) = self.receiver.as_mut() {
                    let mut o = Out::default();
                    r.send_ack(now, &mut o);
                    ack = o.pkts.pop();
                }
            }
            let pair_end = p.kind == Kind::Data && !p.retrans && {
                burst += 1;
                burst.is_multiple_of(2)
            };
            let seg = self.wire(now, p, ack.as_ref(), pair_end);
            self.out.push_back(seg);
        }
        self.scratch.pkts = pkts;
        self.scratch.pkts.clear();
        for &(kind, at) in &self.scratch.timers {
            self.timer_seq += 1;
            self.timers
                .push(Reverse((at, self.timer_seq, timer_code(kind))));
        }
        self.scratch.timers.clear();
        if let Some(s) = self.sender.as_ref() {
            let una = s.info().snd_una;
            while self.push_marks.front().is_some_and(|&m| m <= una) {
                self.push_marks.pop_front();
            }
        }
        let info = self.sender.as_ref().map(Sender::info);
        if self.fin_queued
            && !self.fin_sent
            && self.state != State::Closed
            && info.is_some_and(|i| i.snd_nxt >= self.written)
        {
            self.fin_sent = true;
            self.state = match self.state {
                State::CloseWait => State::LastAck,
                _ => State::FinWait1,
            };
            let seg = self.fin_segment();
            self.out.push_back(seg);
        }
        // The FIN left alone in flight (all data acknowledged) is retransmitted on its
        // own timer; the sender's timers cover it while data is outstanding.
        if self.fin_in_flight()
            && self.fin_timer.is_none()
            && info.is_some_and(|i| i.snd_una >= self.written)
        {
            let at = now + self.fin_timeout();
            self.fin_timer = Some(self.arm(T_FIN, at));
        }
        self.chrono_update(info);
    }

    /// `tcp_chrono_start/stop`: busy while data or a FIN is queued or unacknowledged
    /// (`tcp_add_write_queue_tail` starts it, the ACK emptying both queues stops it);
    /// receive-window limited while unsent data waits only for the peer's window
    /// (`tcp_write_xmit`'s `is_rwnd_limited`: cwnd has room, the next segment does not fit).
    fn chrono_update(&mut self, info: Option<SenderInfo>) {
        let Some(i) = info else {
            return;
        };
        let queues_empty = i.snd_una >= self.written && !self.fin_in_flight();
        let new = if self.state == State::Closed || queues_empty {
            CHRONO_UNSPEC
        } else {
            let in_flight =
                i.packets_out + i.retrans_out - (i.sacked_out + i.lost_out).min(i.packets_out);
            let unsent = self.written.saturating_sub(i.snd_nxt);
            let next = unsent.min(i.mss as u64);
            if unsent > 0 && in_flight < i.cwnd && i.snd_nxt + next > i.snd_una + i.snd_wnd {
                CHRONO_RWND_LIMITED
            } else {
                CHRONO_BUSY
            }
        };
        if new != self.chrono_type {
            let now_ms = jiffies(self.now);
            if self.chrono_type != CHRONO_UNSPEC {
                self.chrono_stat_ms[self.chrono_type as usize - 1] += now_ms - self.chrono_start_ms;
            }
            self.chrono_start_ms = now_ms;
            self.chrono_type = new;
        }
    }

    /// `tcp_get_info_chrono_stats`: (busy incl. the limited times, rwnd-limited), µs.
    fn chrono_stats_us(&self) -> (u64, u64) {
        let mut stat = self.chrono_stat_ms;
        if self.chrono_type != CHRONO_UNSPEC {
            stat[self.chrono_type as usize - 1] += jiffies(self.now) - self.chrono_start_ms;
        }
        ((stat[0] + stat[1]) * 1000, stat[1] * 1000)
    }

    fn ack_field(&self) -> u32 {
        let rcv_nxt = self.receiver.as_ref().map_or(0, |r| r.rcv_nxt);
        self.irs
            .wrapping_add(1)
            .wrapping_add(rcv_nxt as u32)
            .wrapping_add(self.fin_rcvd as u32)
    }

    fn win_field(&self) -> u32 {
        let r = self.receiver.as_ref();
        let wnd = r.map_or(0, |r| r.rcv_wnd());
        let ws = r.map_or(0, |r| r.rcv_wscale());
        (wnd >> ws).min(65_535) as u32
    }

    fn ts_opts(&self, now: SimTime, p: Option<&Packet>) -> Vec<WireOpt> {
        if !self.cfg.timestamps {
            return Vec::new();
        }
        let (val, ecr) = match p {
            Some(p) => (p.tsval, p.tsecr),
            None => (self.ts_clock(now) as u64, self.ts_recent as u64),
        };
        vec![
            WireOpt::Nop,
            WireOpt::Nop,
            WireOpt::Ts(val as u32, ecr as u32),
        ]
    }

    /// A packet of the sender or receiver as a wire segment; `ack` is the ACK the receiver
    /// built for a data segment to carry; `pair_end`: a new data segment sent second of a
    /// pair in a burst (PSH below).
    fn wire(&self, now: SimTime, p: &Packet, ack: Option<&Packet>, pair_end: bool) -> WireSeg {
        let snd_base = ISS.wrapping_add(1);
        let rcv_base = self.irs.wrapping_add(1);
        match p.kind {
            Kind::SynAck => {
                let c = &self.cfg;
                let ws = self.receiver.as_ref().map_or(0, |r| r.rcv_wscale());
                let mut opts = vec![WireOpt::Mss(self.advmss())];
                opts.extend(self.syn_options(
                    c.timestamps,
                    c.sack,
                    c.window_scaling,
                    ws,
                    (p.tsval as u32, p.tsecr as u32),
                ));
                WireSeg {
                    t: now,
                    flags: SYN | ACK | if p.ece { ECE } else { 0 },
                    seq: ISS,
                    ack: rcv_base,
                    win: p.rwnd.min(65_535) as u32,
                    len: 0,
                    opts,
                    ecn: WireEcn::NotEct,
                }
            }
            Kind::Data => {
                let end = p.seq + p.len as u64;
                let mut flags = ACK;
                // tcp_mark_push: the buffer holding a write's last byte carries PSH. That buffer
                // leaves in device-segmented pieces of two segments (`tcp_tso_autosize`'s
                // minimum at drill rates) counted from the first segment sent together, and
                // the kernel here puts PSH on the last segment of each piece too (measured:
                // deviation 5).
                let k = self.push_marks.partition_point(|&m| m <= p.seq);
                if self
                    .push_marks
                    .get(k)
                    .is_some_and(|&m| m <= end || pair_end)
                {
                    flags |= PSH;
                }
                if self.fin_on_data && end == self.written {
                    flags |= FIN; // tcp_send_fin: the FIN rides on the last segment
                }
                if p.cwr {
                    flags |= CWR;
                }
                let mut opts = self.ts_opts(now, Some(p));
                let mut win = self.win_field();
                if let Some(a) = ack {
                    let ws = self.receiver.as_ref().map_or(0, |r| r.rcv_wscale());
                    win = (a.rwnd >> ws).min(65_535) as u32;
                    if a.ece {
                        flags |= ECE;
                    }
                    self.push_sack_opt(&mut opts, a);
                }
                WireSeg {
                    t: now,
                    flags,
                    seq: snd_base.wrapping_add(p.seq as u32),
                    ack: self.ack_field(),
                    win,
                    len: p.len,
                    opts,
                    ecn: if p.ecn == Ecn::NotEct {
                        WireEcn::NotEct
                    } else {
                        WireEcn::Ect0
                    },
                }
            }
            _ => {
                // A pure ACK from the receiver.
                let snd_nxt = self.sender.as_ref().map_or(0, |s| s.info().snd_nxt);
                let ws = self.receiver.as_ref().map_or(0, |r| r.rcv_wscale());
                let mut opts = self.ts_opts(now, Some(p));
                self.push_sack_opt(&mut opts, p);
                WireSeg {
                    t: now,
                    flags: ACK | if p.ece { ECE } else { 0 },
                    seq: snd_base
                        .wrapping_add(snd_nxt as u32)
                        .wrapping_add(self.fin_sent as u32),
                    ack: self.ack_field(),
                    win: (p.rwnd >> ws).min(65_535) as u32,
                    len: 0,
                    opts,
                    ecn: WireEcn::NotEct,
                }
            }
        }
    }

    /// The SACK option (`tcp_options_write`: NOP, NOP, SACK) of an ACK's blocks, if any.
    fn push_sack_opt(&self, opts: &mut Vec<WireOpt>, p: &Packet) {
        if p.nsack == 0 {
            return;
        }
        let rcv_base = self.irs.wrapping_add(1);
        let blocks = p
            .sack_blocks()
            .iter()
            .map(|&(a, b)| {
                (
                    rcv_base.wrapping_add(a as u32),
                    rcv_base.wrapping_add(b as u32),
                )
            })
            .collect();
        opts.extend([WireOpt::Nop, WireOpt::Nop, WireOpt::Sack(blocks)]);
    }

    // -- tcp_info

    pub fn info(&self) -> EndpointInfo {
        let c = &self.cfg;
        let r = self.receiver.as_ref();
        let established = self.sender.is_some();
        let mut options = 0;
        if established {
            options |= u8::from(c.timestamps)
                | (u8::from(c.sack) << 1)
                | (u8::from(c.window_scaling) << 2)
                | (u8::from(self.ecn_ok) << 3);
        }
        EndpointInfo {
            state: self.state as u8,
            options,
            snd_wscale: self.snd_wscale,
            rcv_wscale: r.map_or(0, |r| r.rcv_wscale()),
            ato_us: r.map_or(0, |r| r.ato().as_micros()),
            rcv_mss: r.map_or(0, |r| r.rcv_mss()),
            advmss: self.advmss() - if c.timestamps { TS_ALIGNED } else { 0 },
            rcv_ssthresh: r.map_or(0, |r| r.rcv_ssthresh()),
            rcv_wnd: r.map_or(0, |r| r.rcv_wnd()),
            bytes_received: r.map_or(0, |r| r.rcv_nxt),
            notsent_bytes: self
                .sender
                .as_ref()
                .map_or(0, |s| self.written.saturating_sub(s.info().snd_nxt)),
            last_data_sent_ms: ms_since(self.now, self.last_data_sent),
            last_data_recv_ms: ms_since(self.now, self.last_data_recv),
            last_ack_recv_ms: ms_since(self.now, self.last_ack_recv),
            busy_time_us: self.chrono_stats_us().0,
            rwnd_limited_us: self.chrono_stats_us().1,
            sender: self.sender.as_ref().map(Sender::info),
        }
    }
}

/// `jiffies_to_msecs(now - then)`.
fn ms_since(now: SimTime, then: SimTime) -> u64 {
    jiffies(now).saturating_sub(jiffies(then))
}

/// `tcp_jiffies32` at HZ = 1000 (receiver.rs deviation 2): milliseconds.
fn jiffies(t: SimTime) -> u64 {
    t.as_nanos() / 1_000_000
}

/// The timestamps option of a segment: (TSval, TSecr).
fn ts_of(seg: &WireSeg) -> Option<(u32, u32)> {
    seg.opts.iter().find_map(|o| match o {
        WireOpt::Ts(v, e) => Some((*v, *e)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::SimDuration;

    fn at_ms(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    fn seg(flags: u8, seq: u32, ack: u32, win: u32, len: u32, opts: Vec<WireOpt>) -> WireSeg {
        WireSeg {
            t: SimTime::ZERO,
            flags,
            seq,
            ack,
            win,
            len,
            opts,
            ecn: WireEcn::NotEct,
        }
    }

    /// A listener that got a SYN at 100 ms and the handshake's ACK at 200 ms.
    fn accepted() -> Endpoint {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        cfg.rwnd_bytes = 15_728_640;
        let mut e = Endpoint::new(cfg, 2);
        e.listen();
        e.advance(at_ms(100));
        let syn = vec![
            WireOpt::Mss(1000),
            WireOpt::SackOk,
            WireOpt::Nop,
            WireOpt::Wscale(7),
        ];
        e.inject(&seg(SYN, 1000, 0, 65535, 0, syn)).unwrap();
        e.advance(at_ms(200));
        e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
        e
    }

    #[test]
    fn a_syn_gets_a_syn_ack_with_linux_option_layout() {
        let mut e = accepted();
        let sa = e.next_outbound(at_ms(200)).expect("the SYN-ACK");
        assert_eq!(sa.flags, SYN | ACK);
        assert_eq!(sa.t, at_ms(100));
        assert_eq!(sa.ack, 1001);
        assert_eq!(
            sa.opts,
            vec![
                WireOpt::Mss(1460),
                WireOpt::Nop,
                WireOpt::Nop,
                WireOpt::SackOk,
                WireOpt::Nop,
                WireOpt::Wscale(8)
            ]
        );
        assert_eq!(e.state, State::Established);
        let i = e.info().sender.unwrap();
        assert_eq!(
            (i.mss, i.cwnd, i.srtt_us, i.rto_us),
            (1000, 10, 100_000, 300_000)
        );
    }

    #[test]
    fn a_write_goes_out_as_the_initial_window_then_a_fin() {
        let mut e = accepted();
        e.next_outbound(at_ms(200));
        assert_eq!(e.write(15_000).unwrap(), 15_000);
        e.close_write();
        let segs: Vec<_> = std::iter::from_fn(|| e.out.pop_front()).collect();
        assert_eq!(segs.len(), 10, "cwnd 10, no FIN before the data is out");
        assert_eq!((segs[0].seq, segs[0].len), (1, 1000));
        e.advance(at_ms(300));
        e.inject(&seg(ACK, 1001, 10_001, 2000, 0, vec![])).unwrap();
        let segs: Vec<_> = std::iter::from_fn(|| e.out.pop_front()).collect();
        assert_eq!(
            segs.len(),
            5,
            "the FIN rides on the last data segment (tcp_send_fin)"
        );
        assert_eq!(segs[4].flags, FIN | PSH | ACK);
        assert_eq!((segs[4].seq, segs[4].len), (14_001, 1000));
        assert_eq!(e.state, State::FinWait1);
        e.inject(&seg(ACK, 1001, 15_002, 2000, 0, vec![])).unwrap();
        assert_eq!(e.state, State::FinWait2);
    }

    #[test]
    fn an_unacked_segment_is_probed_then_retransmitted_by_the_rto() {
        let mut e = accepted();
        e.next_outbound(at_ms(200));
        e.write(1000).unwrap();
        let first = e.next_outbound(at_ms(200)).unwrap();
        assert_eq!(first.t, at_ms(200));
        let probe = e.next_outbound(at_ms(2000)).unwrap();
        assert_eq!((probe.seq, probe.t), (1, at_ms(500)));
        let rto = e.next_outbound(at_ms(2000)).unwrap();
        assert_eq!((rto.seq, rto.t), (1, at_ms(800)));
        assert_eq!(e.info().sender.unwrap().ca_state, 4);
    }

    fn drain(e: &mut Endpoint) -> Vec<WireSeg> {
        std::iter::from_fn(|| e.out.pop_front()).collect()
    }

    /// An endpoint after `connect` at 0 (timestamps off) and the peer's SYN-ACK at 10 ms.
    fn connected(win: u32) -> Endpoint {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg, 0);
        e.connect();
        e.advance(at_ms(10));
        let opts = vec![
            WireOpt::Mss(1000),
            WireOpt::Nop,
            WireOpt::Nop,
            WireOpt::SackOk,
        ];
        e.inject(&seg(SYN | ACK, 5000, 1, win, 0, opts)).unwrap();
        drain(&mut e);
        e
    }

    #[test]
    fn close_with_unread_data_aborts_with_a_rst_and_later_segments_are_reset() {
        // ts_recent/reset_tsval: tcp_close with data the application never read.
        let mut e = accepted();
        drain(&mut e);
        e.inject(&seg(ACK, 1001, 1, 2000, 1000, vec![])).unwrap();
        e.advance(at_ms(1200));
        drain(&mut e);
        e.close();
        let rst = drain(&mut e);
        assert_eq!(rst.len(), 1);
        assert_eq!((rst[0].flags, rst[0].seq, rst[0].ack), (RST | ACK, 1, 2001));
        assert_eq!(e.state, State::Closed);
        e.inject(&seg(ACK, 2001, 1, 2000, 0, vec![])).unwrap();
        let r = drain(&mut e);
        assert_eq!(
            (r[0].flags, r[0].seq),
            (RST, 1),
            "no socket: seq from the ACK"
        );
    }

    #[test]
    fn close_after_reading_everything_sends_a_fin_not_a_rst() {
        let mut e = accepted();
        drain(&mut e);
        e.inject(&seg(ACK, 1001, 1, 2000, 1000, vec![])).unwrap();
        assert_eq!(e.read(5000), 1000);
        drain(&mut e);
        e.close();
        let f = drain(&mut e);
        assert_eq!((f[0].flags, f[0].seq), (FIN | ACK, 1));
    }

    #[test]
    fn close_in_syn_sent_sends_nothing_and_the_syn_ack_is_reset() {
        // close/close-on-syn-sent.
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg, 0);
        e.connect();
        assert_eq!(drain(&mut e)[0].flags, SYN);
        e.close();
        assert!(drain(&mut e).is_empty());
        e.advance(at_ms(100));
        e.inject(&seg(SYN | ACK, 0, 1, 32000, 0, vec![WireOpt::Mss(1460)]))
            .unwrap();
        let r = drain(&mut e);
        assert_eq!((r.len(), r[0].flags, r[0].seq), (1, RST, 1));
        assert!(
            e.next_outbound(at_ms(10_000)).is_none(),
            "no SYN retransmission"
        );
    }

    #[test]
    fn after_last_ack_the_socket_is_gone_and_an_ack_gets_a_rst() {
        // close/close-remote-fin-then-close.
        let mut e = accepted();
        drain(&mut e);
        e.inject(&seg(FIN | ACK, 1001, 1, 2000, 0, vec![])).unwrap();
        assert_eq!(e.state, State::CloseWait);
        assert_eq!(drain(&mut e)[0].ack, 1002);
        e.close();
        assert_eq!(drain(&mut e)[0].flags, FIN | ACK);
        e.inject(&seg(ACK, 1002, 2, 2000, 0, vec![])).unwrap();
        assert_eq!(e.state, State::Closed);
        e.inject(&seg(ACK, 1002, 2, 2000, 0, vec![])).unwrap();
        let r = drain(&mut e);
        assert_eq!((r[0].flags, r[0].seq, r[0].opts.len()), (RST, 2, 0));
    }

    #[test]
    fn a_rst_at_rcv_nxt_resets_and_is_reported_once() {
        let mut e = accepted();
        drain(&mut e);
        e.inject(&seg(RST | ACK, 1001, 1, 0, 0, vec![])).unwrap();
        assert_eq!(e.state, State::Closed);
        assert!(e.write_shut() && e.read_ready());
        assert_eq!(e.take_error(), Some(SockErr::ConnReset));
        assert_eq!(e.take_error(), None);
    }

    #[test]
    fn a_rst_in_the_window_but_not_at_rcv_nxt_gets_a_challenge_ack() {
        // RFC 5961 §3.2.
        let mut e = accepted();
        drain(&mut e);
        e.inject(&seg(RST, 1500, 0, 0, 0, vec![])).unwrap();
        assert_eq!(e.state, State::Established);
        let a = drain(&mut e);
        assert_eq!((a.len(), a[0].flags, a[0].ack), (1, ACK, 1001));
    }

    #[test]
    fn a_rst_in_syn_sent_refuses_the_connection() {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg, 0);
        e.connect();
        e.inject(&seg(RST | ACK, 0, 1, 0, 0, vec![])).unwrap();
        assert_eq!(e.state, State::Closed);
        assert_eq!(e.take_error(), Some(SockErr::ConnRefused));
    }

    #[test]
    fn an_ack_on_a_listener_is_reset() {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg, 0);
        e.listen();
        e.inject(&seg(ACK, 7, 4242, 100, 0, vec![])).unwrap();
        let r = drain(&mut e);
        assert_eq!((r[0].flags, r[0].seq), (RST, 4242));
        e.inject(&seg(FIN, 7, 0, 100, 10, vec![])).unwrap();
        assert!(drain(&mut e).is_empty(), "no ACK, no SYN: dropped");
    }

    #[test]
    fn an_ack_of_unsent_data_is_dropped_with_a_rate_limited_challenge_ack() {
        // ts_recent/invalid_ack; this kernel (6.18) answers it, at most once per 500 ms.
        let mut e = accepted();
        drain(&mut e);
        e.inject(&seg(FIN | ACK, 1001, 9999, 2000, 0, vec![]))
            .unwrap();
        let a = drain(&mut e);
        assert_eq!((a.len(), a[0].flags, a[0].ack), (1, ACK, 1001));
        assert_eq!(e.state, State::Established, "the FIN went with the segment");
        e.advance(at_ms(300));
        e.inject(&seg(ACK, 1001, 9999, 2000, 1000, vec![])).unwrap();
        assert!(drain(&mut e).is_empty(), "rate limited");
        assert_eq!(e.readable(), 0, "the data went with the segment");
        e.advance(at_ms(800));
        e.inject(&seg(ACK, 1001, 9999, 2000, 1000, vec![])).unwrap();
        assert_eq!(drain(&mut e).len(), 1);
    }

    #[test]
    fn a_lone_fin_is_probed_at_the_rto_then_retransmitted_with_backoff() {
        // Measured on this kernel (a FIN alone, srtt 100 ms): +300, +300, +600, +1200 ms.
        let mut e = accepted();
        drain(&mut e);
        e.advance(at_ms(300));
        e.close();
        let f = drain(&mut e);
        assert_eq!((f[0].flags, f[0].t), (FIN | ACK, at_ms(300)));
        let times: Vec<_> = (0..4)
            .map(|_| e.next_outbound(at_ms(10_000)).unwrap())
            .map(|s| {
                assert_eq!((s.flags, s.seq), (FIN | ACK, 1));
                s.t
            })
            .collect();
        assert_eq!(
            times,
            vec![at_ms(600), at_ms(900), at_ms(1500), at_ms(2700)]
        );
        e.inject(&seg(ACK, 1001, 2, 2000, 0, vec![])).unwrap();
        assert_eq!(e.state, State::FinWait2);
        assert!(e.next_outbound(at_ms(20_000)).is_none());
    }

    #[test]
    fn the_syn_is_retransmitted_every_second_five_times_then_backed_off() {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg, 0);
        e.connect();
        drain(&mut e);
        let times: Vec<_> = std::iter::from_fn(|| e.next_outbound(at_ms(100_000)))
            .map(|s| {
                assert_eq!(s.flags, SYN);
                s.t.as_nanos() / 1_000_000
            })
            .collect();
        assert_eq!(times, vec![1000, 2000, 3000, 4000, 5000, 7000]);
        assert_eq!(e.state, State::Closed, "tcp_syn_retries 6");
        assert_eq!(e.take_error(), Some(SockErr::TimedOut));
    }

    #[test]
    fn the_syn_ack_is_retransmitted_with_exponential_backoff() {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg, 0);
        e.listen();
        e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1000)]))
            .unwrap();
        drain(&mut e);
        let a = e.next_outbound(at_ms(100_000)).unwrap();
        let b = e.next_outbound(at_ms(100_000)).unwrap();
        assert_eq!((a.flags, a.t, b.t), (SYN | ACK, at_ms(1000), at_ms(3000)));
        e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
        assert_eq!(e.state, State::Established);
        assert!(e.next_outbound(at_ms(100_000)).is_none());
    }

    #[test]
    fn tcp_maxseg_before_and_after_the_handshake() {
        // mss/mss-getsockopt-tcp_maxseg-server and mss-setsockopt-tcp_maxseg-server.
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg.clone(), 0);
        e.listen();
        assert_eq!(e.maxseg(), 536, "TCP_MSS_DEFAULT before a connection");
        e.set_maxseg(1100).unwrap();
        assert_eq!(e.maxseg(), 1100);
        assert!(e.set_maxseg(40).is_err());
        e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1300)]))
            .unwrap();
        assert_eq!(drain(&mut e)[0].opts[0], WireOpt::Mss(1100));
        e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
        assert_eq!((e.maxseg(), e.info().advmss), (1100, 1100));
        let mut e = Endpoint::new(cfg, 0);
        e.listen();
        e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1100)]))
            .unwrap();
        e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
        assert_eq!(e.maxseg(), 1100, "the peer's MSS");
    }

    #[test]
    fn busy_and_rwnd_limited_time_follow_the_peers_window() {
        // tcp_info/tcp-info-rwnd-limited's sequence: a zero window at connect.
        let mut e = connected(0);
        e.write(1000).unwrap();
        assert!(drain(&mut e).is_empty(), "zero window");
        e.advance(at_ms(110));
        assert_eq!(e.info().rwnd_limited_us, 100_000);
        e.advance(at_ms(210));
        e.inject(&seg(ACK, 5001, 1, 2000, 0, vec![])).unwrap();
        assert_eq!(drain(&mut e)[0].len, 1000);
        assert_eq!(e.info().rwnd_limited_us, 200_000);
        e.advance(at_ms(240));
        e.inject(&seg(ACK, 5001, 1001, 10, 0, vec![])).unwrap();
        e.write(1000).unwrap();
        e.advance(at_ms(340));
        e.inject(&seg(ACK, 5001, 1001, 2000, 0, vec![])).unwrap();
        let i = e.info();
        assert_eq!((i.rwnd_limited_us, i.busy_time_us), (300_000, 330_000));
        e.advance(at_ms(360));
        e.inject(&seg(ACK, 5001, 2001, 2000, 0, vec![])).unwrap();
        assert_eq!(e.info().busy_time_us, 350_000);
        e.advance(at_ms(1360));
        assert_eq!(e.info().busy_time_us, 350_000, "idle is not busy");
    }

    #[test]
    fn last_data_and_ack_times_in_ms() {
        // tcp_info/tcp-info-last_data_recv.
        let mut e = connected(10_000);
        e.advance(at_ms(1010));
        assert_eq!(e.info().last_data_recv_ms, 1000);
        e.inject(&seg(ACK, 5001, 1, 300, 1000, vec![])).unwrap();
        let i = e.info();
        assert_eq!(
            (i.last_data_recv_ms, i.last_ack_recv_ms, i.last_data_sent_ms),
            (0, 0, 1000)
        );
    }

    #[test]
    fn a_data_segment_carries_sack_blocks_and_ends_a_pending_delayed_ack() {
        let mut e = connected(10_000);
        // In order (a delayed ACK pending once the quick ACKs are used), then a hole.
        for k in 0..20u32 {
            e.inject(&seg(ACK, 5001 + k * 1000, 1, 10_000, 1000, vec![]))
                .unwrap();
        }
        e.inject(&seg(ACK, 5001 + 21_000, 1, 10_000, 1000, vec![]))
            .unwrap();
        drain(&mut e);
        e.write(1000).unwrap();
        let d = drain(&mut e);
        assert_eq!((d.len(), d[0].len, d[0].ack), (1, 1000, 25_001));
        assert!(d[0].opts.contains(&WireOpt::Sack(vec![(26_001, 27_001)])));
        assert!(
            e.next_outbound(at_ms(5000)).is_none_or(|s| s.len > 0),
            "no delayed ACK after the data segment"
        );
    }

    /// (seq, len, PSH) of the data segments queued on the wire, taken.
    fn data_out(e: &mut Endpoint) -> Vec<(u32, u32, bool)> {
        std::iter::from_fn(|| e.out.pop_front())
            .filter(|s| s.len > 0)
            .map(|s| (s.seq, s.len, s.flags & PSH != 0))
            .collect()
    }

    #[test]
    fn small_writes_wait_for_nagle_and_leave_together_with_psh() {
        let mut e = accepted();
        e.next_outbound(at_ms(200));
        e.write(100).unwrap();
        assert_eq!(data_out(&mut e), vec![(1, 100, true)]);
        e.write(100).unwrap();
        e.write(100).unwrap();
        assert_eq!(data_out(&mut e), vec![]);
        assert_eq!(e.info().notsent_bytes, 200);
        e.advance(at_ms(300));
        e.inject(&seg(ACK, 1001, 101, 2000, 0, vec![])).unwrap();
        assert_eq!(data_out(&mut e), vec![(101, 200, true)]);
    }

    #[test]
    fn msg_more_sets_no_psh_and_tcp_nodelay_before_the_handshake_holds() {
        let mut cfg = Flow::bulk(0, 0, 1, "reno");
        cfg.timestamps = false;
        let mut e = Endpoint::new(cfg, 2);
        e.set_nodelay(true);
        e.listen();
        e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1000)]))
            .unwrap();
        e.advance(at_ms(100));
        e.inject(&seg(ACK, 1001, 1, 65535, 0, vec![])).unwrap();
        e.next_outbound(at_ms(100));
        e.write(100).unwrap();
        e.write(100).unwrap();
        assert_eq!(data_out(&mut e), vec![(1, 100, true), (101, 100, true)]);
        e.send(40, true).unwrap();
        assert_eq!(data_out(&mut e), vec![]);
        e.set_cork(true);
        e.set_nodelay(true);
        assert_eq!(data_out(&mut e), vec![(201, 40, false)]);
    }

    #[test]
    fn close_sends_what_nagle_held_with_the_fin_on_it() {
        // tcp_send_fin: the held tail is unsent, so the FIN joins it (one `FP.` segment).
        let mut e = accepted();
        e.next_outbound(at_ms(200));
        e.write(100).unwrap();
        e.write(100).unwrap();
        data_out(&mut e);
        e.close_write();
        let segs: Vec<_> = std::iter::from_fn(|| e.out.pop_front()).collect();
        assert_eq!(segs.len(), 1);
        assert_eq!((segs[0].seq, segs[0].len), (101, 100));
        assert_eq!(segs[0].flags, FIN | PSH | ACK);
    }

    #[test]
    fn a_write_sent_in_one_burst_has_psh_on_every_second_segment_and_its_last() {
        // Deviation 5, as the kernel here marks a 4000-byte write with TCP_NODELAY.
        let mut e = accepted();
        e.next_outbound(at_ms(200));
        e.set_nodelay(true);
        e.write(4500).unwrap();
        let psh: Vec<bool> = data_out(&mut e).iter().map(|s| s.2).collect();
        assert_eq!(psh, vec![false, true, false, true, true]);
    }
}
