//! Flow table and per-direction measurements.
//!
//! A *connection* is keyed by protocol and the unordered pair of (address, port) endpoints; a
//! TCP SYN (without ACK) whose sequence number differs from the one that opened the current
//! connection starts a new connection on the same key (reused ports, as tshark's
//! `tcp.stream`). A *flow* is one direction of a connection; flows are numbered from 0 in the
//! order their first packet appears.
//!
//! Per flow: packets, payload bytes (tshark's `tcp.len` / `udp.length − 8` summed, so
//! retransmissions count), new bytes (advance of the highest sequence number: the goodput),
//! the tshark analysis flags (see [`crate::tshark`]), fixed bins from the capture's first
//! packet, RTT samples, and for UDP iperf3 sequence-number loss and RFC 3550 jitter.
//!
//! | parameter | default | unit | source |
//! |---|---|---|---|
//! | `bin_ns` | 100 ms | ns | studies 000/001 used 0.1 s bins |
//! | `MAX_INFLIGHT_TRACKED` | 65536 | segments | memory bound per flow for data→ACK RTT |
//! | `MAX_TSVAL_TRACKED` | 65536 | values | memory bound per flow for TSval→TSecr RTT |
//! | `RTT_HIST_SUB_BUCKETS` | 64 | per octave | p95 relative error ≤ 1/64 |
//!
//! RTT samples:
//! * data→ACK: the newest segment a cumulative ACK covers completely, Karn's rule (no sample if
//!   that segment was retransmitted). At a sender-side capture this is the path RTT; at a
//!   receiver-side capture it is only the receiver's ACK delay.
//! * TSval→TSecr (RFC 7323 §3): the first packet of the other direction echoing a TSval, timed
//!   from the first packet that carried it. It measures capture point → peer → capture point,
//!   so it works anywhere on the path: the path RTT is the sum of both directions' values.
//!
//! Deviations and not implemented: (1) no SACK scoreboard (tshark has none either);
//! (2) UDP loss only for payloads that look like iperf3's (32- or 64-bit packet counter after
//! an 8-byte timestamp, starting near 1); (3) p95 RTT comes from a log-linear histogram
//! (≤ 1.6 % relative error) so memory stays bounded; mean and min are exact.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::capture::{Frame, Warning};
use crate::decode::{decode, tcpflag, Decoded, IpPacket, TcpSeg, UdpDgram, L4};
use crate::tshark::{self, aflag, gt_seq, le_seq, lt_seq, Segment, SeqConv};

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const MAX_INFLIGHT_TRACKED: usize = 65_536;
pub const MAX_TSVAL_TRACKED: usize = 65_536;
const RTT_HIST_SUB_BITS: u32 = 6;
pub const RTT_HIST_SUB_BUCKETS: usize = 1 << RTT_HIST_SUB_BITS;
const RTT_HIST_BUCKETS: usize = 48 * RTT_HIST_SUB_BUCKETS;
/// iperf3 UDP datagrams start at packet count 1; allow a few lost before the capture began.
const IPERF_FIRST_COUNT_MAX: u64 = 64;
/// RFC 3550 §6.4.1 / A.8: jitter gain 1/16.
const JITTER_GAIN: f64 = 1.0 / 16.0;

/// Analysis options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Bin width for the per-flow series, ns.
    pub bin_ns: i64,
    /// Keep the per-packet table (memory grows with the capture).
    pub keep_packets: bool,
    /// Keep every RTT sample (memory grows with the capture).
    pub keep_rtt_samples: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bin_ns: 100_000_000,
            keep_packets: false,
            keep_rtt_samples: false,
        }
    }
}

/// Counters over the whole capture.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub frames: u64,
    pub tcp_packets: u64,
    pub udp_packets: u64,
    pub other_ip_packets: u64,
    pub non_ip_frames: u64,
    pub fragments: u64,
    pub malformed_frames: u64,
    pub unsupported_link_frames: u64,
    pub truncated_transport: u64,
    /// Packets whose timestamp lies more than `MAX_BIN_SPAN` bins from the rest of their flow.
    pub unbinned_packets: u64,
}

/// Streaming RTT statistics: exact count/sum/min/max, histogram for percentiles.
#[derive(Clone, Debug, Default)]
pub struct RttStats {
    pub count: u64,
    pub sum_ns: i128,
    pub min_ns: i64,
    pub max_ns: i64,
    hist: Option<Box<[u32]>>,
}

fn hist_bucket(us: u64) -> usize {
    if us < RTT_HIST_SUB_BUCKETS as u64 {
        return us as usize;
    }
    let e = 63 - us.leading_zeros();
    let sub = (us >> (e - RTT_HIST_SUB_BITS)) as usize & (RTT_HIST_SUB_BUCKETS - 1);
    (((e - RTT_HIST_SUB_BITS + 1) as usize) * RTT_HIST_SUB_BUCKETS + sub).min(RTT_HIST_BUCKETS - 1)
}

fn hist_value_us(b: usize) -> f64 {
    if b < RTT_HIST_SUB_BUCKETS {
        return b as f64 + 0.5;
    }
    let e = (b / RTT_HIST_SUB_BUCKETS) as u32 + RTT_HIST_SUB_BITS - 1;
    let sub = (b % RTT_HIST_SUB_BUCKETS) as f64;
    let lo = (1u64 << e) as f64 * (1.0 + sub / RTT_HIST_SUB_BUCKETS as f64);
    let width = (1u64 << e) as f64 / RTT_HIST_SUB_BUCKETS as f64;
    lo + width / 2.0
}

impl RttStats {
    pub fn add(&mut self, rtt_ns: i64) {
        let rtt_ns = rtt_ns.max(0);
        if self.count == 0 || rtt_ns < self.min_ns {
            self.min_ns = rtt_ns;
        }
        if rtt_ns > self.max_ns {
            self.max_ns = rtt_ns;
        }
        self.count += 1;
        self.sum_ns += rtt_ns as i128;
        let h = self
            .hist
            .get_or_insert_with(|| vec![0u32; RTT_HIST_BUCKETS].into_boxed_slice());
        let b = hist_bucket(rtt_ns as u64 / 1000);
        h[b] = h[b].saturating_add(1);
    }
    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64 / 1e6)
    }
    pub fn min_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.min_ns as f64 / 1e6)
    }
    /// Percentile `q` in (0, 1], nearest-rank, from the histogram (clamped to [min, max]).
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        let h = self.hist.as_ref()?;
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (b, &n) in h.iter().enumerate() {
            seen += n as u64;
            if seen >= rank {
                let v_ns = hist_value_us(b) * 1000.0;
                return Some(v_ns.clamp(self.min_ns as f64, self.max_ns as f64) / 1e6);
            }
        }
        None
    }
}

/// Per-flow bins, starting at bin `first` (bins counted from the capture's first packet).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bins {
    pub first: u64,
    pub payload_bytes: Vec<u64>,
    pub new_bytes: Vec<u64>,
    pub packets: Vec<u32>,
    pub retransmits: Vec<u32>,
}

/// Most bins one flow may span (29 h at 100 ms); a timestamp further away (a corrupt record)
/// leaves that packet out of the bins rather than allocating gigabytes.
pub const MAX_BIN_SPAN: u64 = 1 << 20;

impl Bins {
    fn slot(&mut self, idx: u64) -> Option<usize> {
        if self.payload_bytes.is_empty() {
            self.first = idx;
        }
        let last = self.first + self.payload_bytes.len().max(1) as u64 - 1;
        if idx > self.first + MAX_BIN_SPAN || idx + MAX_BIN_SPAN < last {
            return None;
        }
        if idx < self.first {
            // Time went backwards in the capture: grow at the front.
            let n = (self.first - idx) as usize;
            for v in [&mut self.payload_bytes, &mut self.new_bytes] {
                v.splice(0..0, std::iter::repeat_n(0, n));
            }
            for v in [&mut self.packets, &mut self.retransmits] {
                v.splice(0..0, std::iter::repeat_n(0, n));
            }
            self.first = idx;
        }
        let i = (idx - self.first) as usize;
        if i >= self.payload_bytes.len() {
            self.payload_bytes.resize(i + 1, 0);
            self.new_bytes.resize(i + 1, 0);
            self.packets.resize(i + 1, 0);
            self.retransmits.resize(i + 1, 0);
        }
        Some(i)
    }
}

/// A mean by compensated (Kahan) summation, in the order values arrive (the per-bin RTT of
/// `satcc analyze`: thousands of samples in a bin lose no precision to their order).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KahanMean {
    sum: f64,
    compensation: f64,
    n: u32,
}

impl KahanMean {
    pub fn add(&mut self, x: f64) {
        let y = x - self.compensation;
        let t = self.sum + y;
        self.compensation = t - self.sum - y;
        if self.compensation.is_nan() {
            self.compensation = 0.0; // an infinite value: keep the infinity, not NaN
        }
        self.sum = t;
        self.n += 1;
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / f64::from(self.n))
    }
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    start: u32,
    end: u32,
    ts: i64,
    retx: bool,
}

/// iperf3 UDP payload tracking (iperf_udp.c: `iperf_udp_recv` loss and jitter rules).
#[derive(Clone, Debug, Default)]
pub struct IperfUdp {
    pub counter64: bool,
    pub first_count: u64,
    pub max_count: u64,
    pub received: u64,
    pub lost: i64,
    pub out_of_order: u64,
    pub jitter_s: f64,
    prev_transit_s: Option<f64>,
}

/// State and counters for one direction of a connection.
#[derive(Clone, Debug, Default)]
pub struct DirState {
    pub flow_id: Option<u32>,
    pub packets: u64,
    pub payload_bytes: u64,
    pub data_packets: u64,
    pub first_ts: i64,
    pub last_ts: i64,
    pub last_new_data_ts: Option<i64>,
    /// Count of packets carrying each `aflag` bit.
    pub flag_counts: [u64; 15],
    /// Data packets flagged retransmission, fast or spurious (tshark's filter).
    pub retransmitted_data_packets: u64,
    pub hi_seq: Option<u32>,
    pub new_bytes: u64,
    pub syn: u32,
    pub fin: u32,
    pub rst: u32,
    pub bins: Bins,
    /// RTT samples of this direction's data (both estimators), ms, by bin since the capture's
    /// first packet (floor division, as the per-sample table's `t_ns // bin_ns`).
    pub rtt_by_bin: FxHashMap<i64, KahanMean>,
    inflight: VecDeque<InFlight>,
    ts_sent: VecDeque<(u32, i64)>,
    last_tsval: Option<u32>,
    pub rtt_seq: RttStats,
    pub rtt_ts: RttStats,
    pub iperf: Option<IperfUdp>,
    iperf_rejected: bool,
}

/// One connection (TCP) or 5-tuple (UDP).
#[derive(Clone, Debug)]
pub struct Conn {
    pub proto: u8,
    /// Endpoints; direction 0 is the sender of the first packet seen.
    pub ep: [(u128, u16); 2],
    pub v6: bool,
    /// Per-protocol index in order of appearance (tshark's `tcp.stream` / `udp.stream`).
    pub index: u32,
    pub start_ts: i64,
    pub seq: Option<Box<SeqConv>>,
    pub dirs: [DirState; 2],
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    a: u128,
    b: u128,
    pa: u16,
    pb: u16,
    proto: u8,
}

impl Key {
    fn new(src: u128, sport: u16, dst: u128, dport: u16, proto: u8) -> Key {
        if (src, sport) <= (dst, dport) {
            Key {
                a: src,
                b: dst,
                pa: sport,
                pb: dport,
                proto,
            }
        } else {
            Key {
                a: dst,
                b: src,
                pa: dport,
                pb: sport,
                proto,
            }
        }
    }
}

/// Columnar per-packet table (TCP and UDP packets only), when `keep_packets`.
#[derive(Clone, Debug, Default)]
pub struct PacketTable {
    pub frame: Vec<u64>,
    /// ns since the capture's first packet.
    pub t_ns: Vec<i64>,
    pub flow_id: Vec<u32>,
    /// Per-protocol connection index, as the flows' `conn` (tshark's `tcp.stream` / `udp.stream`).
    pub conn: Vec<u32>,
    pub proto: Vec<u8>,
    pub dir: Vec<u8>,
    /// TCP: `tcp.len`; UDP: payload bytes.
    pub len: Vec<u32>,
    /// TCP: relative sequence number (tshark's); UDP: iperf3 packet count or 0.
    pub seq_rel: Vec<u32>,
    pub ack_rel: Vec<u32>,
    pub tcp_flags: Vec<u16>,
    pub analysis: Vec<u16>,
    pub window: Vec<u16>,
    pub tsval: Vec<u32>,
    pub tsecr: Vec<u32>,
    /// TCP: `tcp.analysis.bytes_in_flight` (NaN where tshark shows none); UDP: NaN.
    pub bytes_in_flight: Vec<f64>,
}

/// RTT samples, when `keep_rtt_samples`.
#[derive(Clone, Debug, Default)]
pub struct RttTable {
    pub flow_id: Vec<u32>,
    pub t_ns: Vec<i64>,
    pub rtt_ns: Vec<i64>,
    /// 0 = data→ACK, 1 = TSval→TSecr.
    pub kind: Vec<u8>,
}

/// The streaming analyzer: feed frames, then `finish`.
pub struct Analyzer {
    pub opts: Options,
    pub first_ts: Option<i64>,
    pub last_ts: i64,
    pub conns: Vec<Conn>,
    map: FxHashMap<Key, u32>,
    /// The connection the last packet belonged to (most packets' neighbours are of the same
    /// connection: looked up without hashing).
    last_conn: Option<(Key, u32)>,
    /// (connection, direction) of each flow id.
    pub flows: Vec<(u32, u8)>,
    counts: [u32; 2],
    pub stats: Stats,
    pub packets: Option<PacketTable>,
    pub rtt: Option<RttTable>,
    pub warnings: Vec<Warning>,
    warned_link: bool,
    warned_malformed: bool,
}

impl Analyzer {
    pub fn new(opts: Options) -> Analyzer {
        let packets = opts.keep_packets.then(PacketTable::default);
        let rtt = opts.keep_rtt_samples.then(RttTable::default);
        Analyzer {
            opts,
            first_ts: None,
            last_ts: 0,
            conns: Vec::new(),
            map: FxHashMap::default(),
            last_conn: None,
            flows: Vec::new(),
            counts: [0, 0],
            stats: Stats::default(),
            packets,
            rtt,
            warnings: Vec::new(),
            warned_link: false,
            warned_malformed: false,
        }
    }

    fn bin_of(&self, ts: i64) -> u64 {
        let first = self.first_ts.unwrap_or(ts);
        ((ts - first).max(0) / self.opts.bin_ns.max(1)) as u64
    }

    /// Process one captured frame.
    pub fn push(&mut self, f: &Frame<'_>) {
        self.stats.frames += 1;
        if self.first_ts.is_none() {
            self.first_ts = Some(f.ts_ns);
        }
        self.last_ts = self.last_ts.max(f.ts_ns);
        match decode(f.linktype, f.data, f.orig_len) {
            Decoded::Ip(ip) => match ip.l4 {
                L4::Tcp(t) => {
                    self.stats.tcp_packets += 1;
                    self.on_tcp(f, &ip, &t);
                }
                L4::Udp(u) => {
                    self.stats.udp_packets += 1;
                    self.on_udp(f, &ip, &u);
                }
                L4::Other(_) => self.stats.other_ip_packets += 1,
                L4::Fragment => self.stats.fragments += 1,
                L4::Truncated(_) => self.stats.truncated_transport += 1,
            },
            Decoded::NonIp => self.stats.non_ip_frames += 1,
            Decoded::UnsupportedLink(lt) => {
                self.stats.unsupported_link_frames += 1;
                if !self.warned_link {
                    self.warned_link = true;
                    self.warnings.push(Warning {
                        record: f.number,
                        offset: f.offset,
                        message: format!(
                            "frame {}: unsupported link type {lt}; such frames are skipped",
                            f.number
                        ),
                    });
                }
            }
            Decoded::Malformed => {
                self.stats.malformed_frames += 1;
                if !self.warned_malformed {
                    self.warned_malformed = true;
                    self.warnings.push(Warning {
                        record: f.number,
                        offset: f.offset,
                        message: format!(
                            "frame {}: malformed link/IP header; such frames are skipped",
                            f.number
                        ),
                    });
                }
            }
        }
    }

    fn new_conn(&mut self, key: Key, src: (u128, u16), dst: (u128, u16), v6: bool, ts: i64) -> u32 {
        let proto = key.proto;
        let slot = usize::from(proto == PROTO_UDP);
        let index = self.counts[slot];
        self.counts[slot] += 1;
        let id = self.conns.len() as u32;
        self.conns.push(Conn {
            proto,
            ep: [src, dst],
            v6,
            index,
            start_ts: ts,
            seq: (proto == PROTO_TCP).then(|| Box::new(SeqConv::default())),
            dirs: [DirState::default(), DirState::default()],
        });
        self.map.insert(key, id);
        self.last_conn = Some((key, id));
        id
    }

    fn flow_id(&mut self, ci: u32, d: usize, ts: i64) -> u32 {
        let dir = &mut self.conns[ci as usize].dirs[d];
        match dir.flow_id {
            Some(id) => id,
            None => {
                let id = self.flows.len() as u32;
                dir.flow_id = Some(id);
                dir.first_ts = ts;
                self.flows.push((ci, d as u8));
                id
            }
        }
    }

    /// The connection `key` names, if seen before.
    fn conn_of(&mut self, key: &Key) -> Option<u32> {
        if let Some((k, ci)) = self.last_conn {
            if k == *key {
                return Some(ci);
            }
        }
        let ci = *self.map.get(key)?;
        self.last_conn = Some((*key, ci));
        Some(ci)
    }

    fn on_tcp(&mut self, f: &Frame<'_>, ip: &IpPacket, t: &TcpSeg) {
        let now = f.ts_ns;
        let key = Key::new(ip.src, t.sport, ip.dst, t.dport, PROTO_TCP);
        let src = (ip.src, t.sport);
        let mut pre = 0u16;
        let ci = match self.conn_of(&key) {
            Some(ci) => {
                let c = &self.conns[ci as usize];
                let d = usize::from(c.ep[0] != src);
                let base = c.seq.as_ref().and_then(|s| s.dirs[d].base_seq);
                // packet-tcp.c: a SYN whose seq differs from the conversation's base_seq
                // starts a new conversation ("TCP Port numbers reused").
                if t.flags & (tcpflag::SYN | tcpflag::ACK) == tcpflag::SYN
                    && base.is_some_and(|b| b != t.seq)
                {
                    pre = aflag::REUSED_PORTS;
                    self.new_conn(key, src, (ip.dst, t.dport), ip.v6, now)
                } else {
                    if t.flags & (tcpflag::SYN | tcpflag::ACK) == (tcpflag::SYN | tcpflag::ACK)
                        && base.is_some_and(|b| b != t.seq)
                    {
                        pre = aflag::REUSED_PORTS;
                    }
                    ci
                }
            }
            None => self.new_conn(key, src, (ip.dst, t.dport), ip.v6, now),
        };
        let d = usize::from(self.conns[ci as usize].ep[0] != src);
        let fid = self.flow_id(ci, d, now);
        let bin = self.bin_of(now);
        let conn = &mut self.conns[ci as usize];
        let seqc = conn
            .seq
            .as_mut()
            .expect("tcp connection has sequence state");
        seqc.dirs[d].unacked = conn.dirs[d].inflight.len();
        let seg = Segment {
            now,
            seq: t.seq,
            ack: t.ack,
            seglen: t.seglen,
            flags: t.flags,
            window: t.window,
            sack: t.sack,
            sack_blocks: t.sack_blocks,
            wscale: t.wscale,
        };
        let af = seqc.analyze(d, seg, pre);
        let bif = seqc.bytes_in_flight;
        seqc.after_segment(now, t.flags);
        let base_fwd = seqc.dirs[d].base_seq.unwrap_or(0);
        let base_rev = seqc.dirs[1 - d].base_seq.unwrap_or(0);

        let [d0, d1] = &mut conn.dirs;
        let (me, peer) = if d == 0 { (d0, d1) } else { (d1, d0) };
        me.packets += 1;
        me.last_ts = now;
        me.payload_bytes += t.seglen as u64;
        if af != 0 {
            for (i, c) in me.flag_counts.iter_mut().enumerate() {
                *c += ((af >> i) & 1) as u64;
            }
        }
        let retx = af & tshark::RETRANSMITTED_ANY != 0;
        if t.flags & tcpflag::SYN != 0 {
            me.syn += 1;
            if me.hi_seq.is_none() {
                me.hi_seq = Some(t.seq.wrapping_add(1));
            }
        }
        if t.flags & tcpflag::FIN != 0 {
            me.fin += 1;
        }
        if t.flags & tcpflag::RST != 0 {
            me.rst += 1;
        }
        let slot = me.bins.slot(bin);
        if let Some(i) = slot {
            me.bins.packets[i] += 1;
            me.bins.payload_bytes[i] += t.seglen as u64;
            if retx {
                me.bins.retransmits[i] += 1;
            }
        } else {
            self.stats.unbinned_packets += 1;
        }
        if t.seglen > 0 {
            me.data_packets += 1;
            if retx {
                me.retransmitted_data_packets += 1;
            }
            let end = t.seq.wrapping_add(t.seglen);
            let hi = *me.hi_seq.get_or_insert(t.seq);
            if gt_seq(end, hi) {
                let new = end.wrapping_sub(hi) as u64;
                me.new_bytes += new;
                if let Some(i) = slot {
                    me.bins.new_bytes[i] += new;
                }
                me.hi_seq = Some(end);
                me.last_new_data_ts = Some(now);
                if lt_seq(t.seq, hi) {
                    mark_retransmitted(&mut me.inflight, t.seq, end);
                }
                if me.inflight.len() >= MAX_INFLIGHT_TRACKED {
                    me.inflight.pop_front();
                }
                me.inflight.push_back(InFlight {
                    start: t.seq.max_seq(hi),
                    end,
                    ts: now,
                    retx: false,
                });
            } else {
                mark_retransmitted(&mut me.inflight, t.seq, end);
            }
        }
        // data→ACK sample for the peer's data (Karn: skip retransmitted segments).
        let mut samples: [Option<(u32, i64, u8)>; 2] = [None, None];
        if t.flags & tcpflag::ACK != 0 {
            let mut last = None;
            while let Some(front) = peer.inflight.front() {
                if le_seq(front.end, t.ack) {
                    last = peer.inflight.pop_front();
                } else {
                    break;
                }
            }
            if let (Some(seg), Some(pid)) = (last, peer.flow_id) {
                if !seg.retx {
                    let rtt = now - seg.ts;
                    peer.rtt_seq.add(rtt);
                    samples[0] = Some((pid, rtt, 0));
                }
            }
        }
        if let Some((tsval, tsecr)) = t.ts {
            if me.last_tsval != Some(tsval) {
                if me.ts_sent.len() >= MAX_TSVAL_TRACKED {
                    me.ts_sent.pop_front();
                }
                me.ts_sent.push_back((tsval, now));
                me.last_tsval = Some(tsval);
            }
            if t.flags & tcpflag::ACK != 0 && tsecr != 0 {
                while let Some(&(v, _)) = peer.ts_sent.front() {
                    if lt_seq(v, tsecr) {
                        peer.ts_sent.pop_front();
                    } else {
                        break;
                    }
                }
                if let Some(&(v, sent)) = peer.ts_sent.front() {
                    if v == tsecr {
                        peer.ts_sent.pop_front();
                        let rtt = now - sent;
                        peer.rtt_ts.add(rtt);
                        if let Some(pid) = peer.flow_id {
                            samples[1] = Some((pid, rtt, 1));
                        }
                    }
                }
            }
        }
        let first = self.first_ts.unwrap_or(now);
        let bin = (now - first).div_euclid(self.opts.bin_ns.max(1));
        for &(pid, rtt, _) in samples.iter().flatten() {
            let (pc, pd) = self.flows[pid as usize];
            let dir = &mut self.conns[pc as usize].dirs[pd as usize];
            dir.rtt_by_bin.entry(bin).or_default().add(rtt as f64 / 1e6);
        }
        if let Some(rt) = self.rtt.as_mut() {
            for (pid, rtt, kind) in samples.into_iter().flatten() {
                rt.flow_id.push(pid);
                rt.t_ns.push(now - first);
                rt.rtt_ns.push(rtt);
                rt.kind.push(kind);
            }
        }
        if let Some(p) = self.packets.as_mut() {
            p.frame.push(f.number);
            p.t_ns.push(now - first);
            p.flow_id.push(fid);
            p.conn.push(self.conns[ci as usize].index);
            p.proto.push(PROTO_TCP);
            p.dir.push(d as u8);
            p.len.push(t.seglen);
            p.seq_rel.push(t.seq.wrapping_sub(base_fwd));
            p.ack_rel.push(if t.flags & tcpflag::ACK != 0 {
                t.ack.wrapping_sub(base_rev)
            } else {
                0
            });
            p.tcp_flags.push(t.flags);
            p.analysis.push(af);
            p.window.push(t.window);
            let (v, e) = t.ts.unwrap_or((0, 0));
            p.tsval.push(v);
            p.tsecr.push(e);
            p.bytes_in_flight.push(bif.map_or(f64::NAN, f64::from));
        }
    }

    fn on_udp(&mut self, f: &Frame<'_>, ip: &IpPacket, u: &UdpDgram) {
        let now = f.ts_ns;
        let key = Key::new(ip.src, u.sport, ip.dst, u.dport, PROTO_UDP);
        let src = (ip.src, u.sport);
        let ci = match self.conn_of(&key) {
            Some(ci) => ci,
            None => self.new_conn(key, src, (ip.dst, u.dport), ip.v6, now),
        };
        let d = usize::from(self.conns[ci as usize].ep[0] != src);
        let fid = self.flow_id(ci, d, now);
        let bin = self.bin_of(now);
        let me = &mut self.conns[ci as usize].dirs[d];
        me.packets += 1;
        me.last_ts = now;
        me.payload_bytes += u.len as u64;
        if u.len > 0 {
            me.data_packets += 1;
            me.new_bytes += u.len as u64;
            me.last_new_data_ts = Some(now);
        }
        if let Some(i) = me.bins.slot(bin) {
            me.bins.packets[i] += 1;
            me.bins.payload_bytes[i] += u.len as u64;
            me.bins.new_bytes[i] += u.len as u64;
        } else {
            self.stats.unbinned_packets += 1;
        }
        let count = iperf_track(me, u, now);
        let first = self.first_ts.unwrap_or(now);
        if let Some(p) = self.packets.as_mut() {
            p.frame.push(f.number);
            p.t_ns.push(now - first);
            p.flow_id.push(fid);
            p.conn.push(self.conns[ci as usize].index);
            p.proto.push(PROTO_UDP);
            p.dir.push(d as u8);
            p.len.push(u.len);
            p.seq_rel.push(count.unwrap_or(0) as u32);
            p.ack_rel.push(0);
            p.tcp_flags.push(0);
            p.analysis.push(0);
            p.window.push(0);
            p.tsval.push(0);
            p.tsecr.push(0);
            p.bytes_in_flight.push(f64::NAN);
        }
    }
}

trait MaxSeq {
    fn max_seq(self, other: u32) -> u32;
}
impl MaxSeq for u32 {
    fn max_seq(self, other: u32) -> u32 {
        if gt_seq(self, other) {
            self
        } else {
            other
        }
    }
}

fn mark_retransmitted(q: &mut VecDeque<InFlight>, seq: u32, end: u32) {
    for e in q.iter_mut() {
        if !lt_seq(e.start, end) {
            break;
        }
        if gt_seq(e.end, seq) {
            e.retx = true;
        }
    }
}

/// Parse iperf3's UDP header (iperf_udp.c `iperf_udp_send`: sec, usec, then a 32- or 64-bit
/// big-endian packet count) and apply its receiver rules. Returns the packet count if tracked.
fn iperf_track(me: &mut DirState, u: &UdpDgram, now: i64) -> Option<u64> {
    if me.iperf_rejected || u.head_len < 12 {
        return None;
    }
    let h = &u.head;
    let sec = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let usec = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
    let c32 = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as u64;
    let c64 = (u.head_len >= 16)
        .then(|| u64::from_be_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]));
    if me.iperf.is_none() {
        let counter64 = c32 == 0 && c64.is_some_and(|c| (1..=IPERF_FIRST_COUNT_MAX).contains(&c));
        let ok32 = (1..=IPERF_FIRST_COUNT_MAX).contains(&c32);
        if usec >= 1_000_000 || !(ok32 || counter64) {
            me.iperf_rejected = true;
            return None;
        }
        let first = if counter64 { c64.unwrap_or(0) } else { c32 };
        me.iperf = Some(IperfUdp {
            counter64,
            first_count: first,
            max_count: first - 1,
            ..Default::default()
        });
    }
    let st = me.iperf.as_mut()?;
    let pcount = if st.counter64 { c64? } else { c32 };
    st.received += 1;
    // iperf_udp.c: a count beyond the next expected one means the ones between were lost;
    // a smaller one is out of order (and one fewer lost).
    if pcount > st.max_count {
        if pcount > st.max_count + 1 {
            st.lost += (pcount - 1 - st.max_count) as i64;
        }
        st.max_count = pcount;
    } else {
        st.out_of_order += 1;
        if st.lost > 0 {
            st.lost -= 1;
        }
    }
    // RFC 3550 A.8: J += (|D| − J)/16 with D the change in transit time.
    // Transit in integer ns first: epoch seconds as f64 would cost sub-µs precision.
    let sent_ns = sec as i64 * 1_000_000_000 + usec as i64 * 1000;
    let transit = (now - sent_ns) as f64 * 1e-9;
    if let Some(prev) = st.prev_transit_s {
        let dd = (transit - prev).abs();
        st.jitter_s += (dd - st.jitter_s) * JITTER_GAIN;
    }
    st.prev_transit_s = Some(transit);
    Some(pcount)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kahan_mean_keeps_what_plain_summation_loses_and_is_none_when_empty() {
        assert_eq!(KahanMean::default().mean(), None);
        // 1e16 then ten 1.0s: plain f64 summation drops every 1.0, the compensated sum keeps them
        let mut m = KahanMean::default();
        m.add(1e16);
        for _ in 0..10 {
            m.add(1.0);
        }
        let plain = (0..10).fold(1e16_f64, |s, _| s + 1.0);
        assert_eq!(plain, 1e16);
        assert_eq!(m.mean(), Some((1e16 + 10.0) / 11.0));
        // an infinite sample gives an infinite mean, not NaN
        let mut inf = KahanMean::default();
        inf.add(f64::INFINITY);
        inf.add(2.0);
        assert_eq!(inf.mean(), Some(f64::INFINITY));
    }

    #[test]
    fn histogram_percentile_is_within_its_resolution() {
        let mut r = RttStats::default();
        for i in 1..=1000 {
            r.add(i * 1_000_000); // 1..1000 ms
        }
        let p95 = r.quantile_ms(0.95).unwrap();
        assert!((p95 - 950.0).abs() / 950.0 < 1.0 / 64.0, "{p95}");
        assert_eq!(r.min_ms(), Some(1.0));
        assert!((r.mean_ms().unwrap() - 500.5).abs() < 1e-9);
    }

    #[test]
    fn histogram_buckets_are_monotonic() {
        let mut prev = 0;
        for us in [0u64, 1, 63, 64, 65, 127, 128, 1000, 1 << 20, 1 << 40] {
            let b = hist_bucket(us);
            assert!(b >= prev);
            prev = b;
            let v = hist_value_us(b);
            assert!(
                us < 64 || (v - us as f64).abs() / us as f64 <= 1.0 / 32.0,
                "{us} {v}"
            );
        }
    }

    #[test]
    fn bins_grow_backwards_when_time_goes_backwards() {
        let mut b = Bins::default();
        let i = b.slot(5).unwrap();
        b.payload_bytes[i] += 10;
        let j = b.slot(3).unwrap();
        b.payload_bytes[j] += 1;
        assert_eq!(b.first, 3);
        assert_eq!(b.payload_bytes, vec![1, 0, 10]);
    }

    #[test]
    fn a_wild_timestamp_is_not_binned() {
        let mut b = Bins::default();
        assert!(b.slot(10).is_some());
        assert!(b.slot(10 + MAX_BIN_SPAN + 1).is_none());
        assert_eq!(b.payload_bytes.len(), 1);
    }
}
