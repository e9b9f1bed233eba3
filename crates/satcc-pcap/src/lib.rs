//! satcc-pcap — fast capture analysis for field measurements.
//!
//! Reads pcap and pcapng (via `pcap-parser`), decodes Ethernet/VLAN, Linux SLL/SLL2 and raw IP
//! (via `etherparse`), and computes per flow direction: packets, payload bytes, goodput, fixed
//! time bins from the capture's first packet, tshark-compatible retransmission classification
//! ([`tshark`]), RTT samples, and for iperf3 UDP loss and jitter ([`flow`]). One pass, one
//! core, memory bounded by the number of flows and the capture's duration (not its size),
//! unless the per-packet or per-sample tables are asked for.
//!
//! Map:
//! * [`capture`] — streaming record reader; truncation/corruption become warnings.
//! * [`decode`] — frame → addresses, ports, TCP/UDP fields, IP-length-based segment length.
//! * [`tshark`] — Wireshark's `tcp.analysis.*` rules, reimplemented (rule list in its header).
//! * [`flow`] — connection table, SYN-based port-reuse split, per-direction counters, bins, RTT.
//! * [`analyze_path`] / [`analyze_reader`] / [`analyze_bytes`] → [`Analysis`] with [`FlowReport`]s.
//!
//! Pitfalls: timestamps are integer ns; bins are counted from the *capture's* first packet
//! (any protocol), like tshark's `frame.time_relative`; relative sequence numbers follow
//! tshark (ISN of a seen SYN, else first seq − 1).

pub mod capture;
pub mod decode;
pub mod flow;
pub mod tshark;
pub mod write;

use std::io::Read;
use std::path::Path;

pub use capture::{CaptureError, Format, Warning};
pub use flow::{Bins, KahanMean, Options, PacketTable, RttTable, Stats};

use flow::{Analyzer, PROTO_TCP};

/// iperf3 UDP sequence analysis of one flow direction.
#[derive(Clone, Debug, PartialEq)]
pub struct IperfUdpReport {
    pub packets: u64,
    pub lost: u64,
    /// Packets the sender numbered from the first to the last seen.
    pub expected: u64,
    pub out_of_order: u64,
    pub jitter_ms: f64,
    pub counter64: bool,
}

satcc_core::record! {
    /// The columns of the result's `flows` table a capture measures for one flow direction,
    /// named and typed as satcc-core's columns.rs declares them (the compiler checks it); the
    /// bindings hand them to Python under those names (`cells()`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct FlowColumns in FLOWS (Derived, Engine) row {
        /// `delivered_bytes` over the time from the connection's first packet to the last
        /// packet that carried new data.
        pub goodput_bps: f64,
        /// New bytes: advance of the highest sequence number (TCP), payload (UDP).
        pub delivered_bytes: u64,
        /// Packets with payload (TCP) or datagrams with payload (UDP).
        pub sent_packets: u64,
        /// Data packets tshark's `tcp.analysis.retransmission` matches (incl. fast and
        /// spurious).
        pub retransmitted_packets: u64,
        /// `retransmitted_packets / sent_packets` (study 001's metric; 0 when none was sent).
        pub retransmission_rate: f64,
        pub rtt_mean_ms: Option<f64>,
        pub rtt_p95_ms: Option<f64>,
        pub rtt_min_ms: Option<f64>,
        /// Connection start to the last new data, when this direction sent a FIN.
        pub fct_s: Option<f64>,
    }
}

satcc_core::record! {
    /// The columns of the analyzer's `analyze_flows` table a capture measures for one flow
    /// direction, named and typed as satcc-core's columns.rs declares them (the compiler checks
    /// it; `Engine` writes none of that table's columns, so every field is optional); the
    /// bindings hand them to Python under those names (`cells()`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CaptureColumns in ANALYZE_FLOWS (Engine, Analyzer) row {
        pub src: String,
        pub dst: String,
        pub sport: u16,
        pub dport: u16,
        /// Connection index per protocol (tshark's `tcp.stream` / `udp.stream`).
        pub conn: u32,
        pub packets: u64,
        pub payload_bytes: u64,
        /// "data-ack", "tsval" or "none": which estimator `rtt_*` come from.
        pub rtt_source: &'static str,
        /// iperf3 UDP datagrams ([`IperfUdpReport`]): lost, lost over expected (none when
        /// nothing was expected), the receiver's jitter.
        pub udp_lost: Option<u64>,
        pub udp_loss_rate: Option<f64>,
        pub udp_jitter_ms: Option<f64>,
    }
}

/// Summary of one flow direction.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowReport {
    pub id: u32,
    pub proto: &'static str,
    /// 0 = sent by the endpoint that sent the connection's first packet.
    pub dir: u8,
    pub ip_version: u8,
    /// First and last packet of this direction, s from the capture's first packet.
    pub start_s: f64,
    pub end_s: f64,
    /// What the direction measured of the result's `flows` columns.
    pub columns: FlowColumns,
    /// What it measured of the analyzer's `analyze_flows` columns: its ends, connection,
    /// packets and bytes, RTT source and iperf3 UDP figures.
    pub capture: CaptureColumns,
    /// Packets carrying each analysis flag, all packets (incl. SYN/FIN), in `tshark::aflag::NAMES` order.
    pub flag_counts: [u64; 15],
    pub rtt_samples: u64,
    pub ts_rtt_mean_ms: Option<f64>,
    pub ts_rtt_samples: u64,
    pub syn: u32,
    pub fin: u32,
    pub rst: u32,
    pub iperf_udp: Option<IperfUdpReport>,
    pub bins: Bins,
    /// Mean RTT (ms) of this direction's samples in each of `bins` (None: no sample).
    pub bin_rtt_mean_ms: Vec<Option<f64>>,
}

/// Everything one capture file produced.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub format: Option<Format>,
    pub bin_ns: i64,
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: Option<i64>,
    pub bytes_read: u64,
    pub stats: Stats,
    pub flows: Vec<FlowReport>,
    pub warnings: Vec<Warning>,
    pub packets: Option<PacketTable>,
    pub rtt_samples: Option<RttTable>,
}

const NS: f64 = 1e9;

fn report(a: &Analyzer) -> Vec<FlowReport> {
    let first = a.first_ts.unwrap_or(0);
    let rel = |t: i64| (t - first) as f64 / NS;
    a.flows
        .iter()
        .enumerate()
        .map(|(id, &(ci, d))| {
            let c = &a.conns[ci as usize];
            let s = &c.dirs[d as usize];
            let (src, sport) = c.ep[d as usize];
            let (dst, dport) = c.ep[1 - d as usize];
            let tcp = c.proto == PROTO_TCP;
            let start = if tcp { c.start_ts } else { s.first_ts };
            let goodput_bps = match s.last_new_data_ts {
                Some(t) if t > start => s.new_bytes as f64 * 8.0 / ((t - start) as f64 / NS),
                _ => 0.0,
            };
            let (rtt, rtt_source) = if s.rtt_seq.count > 0 {
                (&s.rtt_seq, "data-ack")
            } else if s.rtt_ts.count > 0 {
                (&s.rtt_ts, "tsval")
            } else {
                (&s.rtt_seq, "none")
            };
            let sent = s.data_packets;
            let retx = s.retransmitted_data_packets;
            let iperf_udp = s.iperf.as_ref().map(|u| IperfUdpReport {
                packets: u.received,
                lost: u.lost.max(0) as u64,
                expected: u.max_count + 1 - u.first_count,
                out_of_order: u.out_of_order,
                jitter_ms: u.jitter_s * 1e3,
                counter64: u.counter64,
            });
            FlowReport {
                id: id as u32,
                proto: if tcp { "tcp" } else { "udp" },
                dir: d,
                ip_version: if c.v6 { 6 } else { 4 },
                start_s: rel(s.first_ts),
                end_s: rel(s.last_ts),
                capture: CaptureColumns {
                    src: decode::addr_to_string(src, c.v6),
                    dst: decode::addr_to_string(dst, c.v6),
                    sport,
                    dport,
                    conn: c.index,
                    packets: s.packets,
                    payload_bytes: s.payload_bytes,
                    rtt_source,
                    udp_lost: iperf_udp.as_ref().map(|u| u.lost),
                    udp_loss_rate: iperf_udp
                        .as_ref()
                        .filter(|u| u.expected > 0)
                        .map(|u| u.lost as f64 / u.expected as f64),
                    udp_jitter_ms: iperf_udp.as_ref().map(|u| u.jitter_ms),
                },
                columns: FlowColumns {
                    goodput_bps,
                    delivered_bytes: s.new_bytes,
                    sent_packets: sent,
                    retransmitted_packets: retx,
                    retransmission_rate: if sent > 0 {
                        retx as f64 / sent as f64
                    } else {
                        0.0
                    },
                    rtt_mean_ms: rtt.mean_ms(),
                    rtt_p95_ms: rtt.quantile_ms(0.95),
                    rtt_min_ms: rtt.min_ms(),
                    fct_s: (tcp && s.fin > 0)
                        .then(|| s.last_new_data_ts.map(|t| (t - c.start_ts) as f64 / NS))
                        .flatten(),
                },
                flag_counts: s.flag_counts,
                rtt_samples: rtt.count,
                ts_rtt_mean_ms: s.rtt_ts.mean_ms(),
                ts_rtt_samples: s.rtt_ts.count,
                syn: s.syn,
                fin: s.fin,
                rst: s.rst,
                iperf_udp,
                bins: s.bins.clone(),
                bin_rtt_mean_ms: (0..s.bins.payload_bytes.len() as u64)
                    .map(|i| {
                        let bin = (s.bins.first + i) as i64;
                        s.rtt_by_bin.get(&bin).and_then(KahanMean::mean)
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Analyse a capture from any reader. `progress` gets the bytes consumed so far.
pub fn analyze_reader<R: Read + Send>(
    reader: R,
    opts: &Options,
    mut progress: impl FnMut(u64),
) -> Result<Analysis, CaptureError> {
    let mut an = Analyzer::new(opts.clone());
    let mut warnings = Vec::new();
    let summary = capture::read_frames(reader, &mut warnings, |f| an.push(f), &mut progress)?;
    warnings.append(&mut an.warnings);
    warnings.sort_by_key(|w| w.offset);
    Ok(Analysis {
        format: summary.format,
        bin_ns: opts.bin_ns,
        first_ts_ns: an.first_ts,
        last_ts_ns: an.first_ts.map(|_| an.last_ts),
        bytes_read: summary.bytes,
        flows: report(&an),
        stats: an.stats.clone(),
        warnings,
        packets: an.packets.take(),
        rtt_samples: an.rtt.take(),
    })
}

/// Analyse a capture file.
pub fn analyze_path(
    path: &Path,
    opts: &Options,
    progress: impl FnMut(u64),
) -> Result<Analysis, CaptureError> {
    let f = std::fs::File::open(path)
        .map_err(|e| CaptureError::Io(format!("{}: {e}", path.display())))?;
    analyze_reader(f, opts, progress)
}

/// Analyse a capture held in memory (tests, fuzzing).
pub fn analyze_bytes(bytes: &[u8], opts: &Options) -> Result<Analysis, CaptureError> {
    analyze_reader(bytes, opts, |_| {})
}
