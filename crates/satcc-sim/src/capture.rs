//! Packet captures of a run, as the emulator's tcpdump takes them: pcapng files of headers
//! (snap length 128), the simulated instants in ns, one interface per link a point sees.
//!
//! ```text
//!  node ──enter(d)──► [direction d: queue → serialiser → loss → wire] ──exit(d)──► far node
//!        (before the queue: what tcpdump on the                (what arrives: what tcpdump
//!         sending host's interface sees, drops included)         on the far host sees)
//! ```
//! The world calls [`Tap::packet`] at those two places (`world/mod.rs`: a packet offered to a
//! direction, a packet arriving from it); a [`Capture`] writes it into the file of every
//! point that sees it. The world is generic over its tap, and [`NoTap`]'s `ON` is `false`,
//! so a run without captures compiles to the loop it had before (no test, no call).
//!
//! Capture points ([`Capture::new`]):
//! - `NODE` (a node's name): every packet the node sends or receives on any of its links,
//!   one interface per link, as the emulator's capture of a receiving node
//!   (`capture-<node index>-<name>.pcapng`; the emulator's is `.pcap`, of `tcpdump -i`);
//! - `FROM:TO` (two adjacent nodes' names): the packets that come out of the link direction
//!   from FROM to TO, at TO (`capture-l<link><ab|ba>-<FROM>-<TO>.pcapng`).
//!
//! What the headers carry, as the emulator's hosts would put them on the wire
//! (python/satcc/emu/topology.py and traffic.py): link j's ends are 10.64.j.1 (its `a`) and
//! 10.64.j.2 (`b`) (the emulator draws the second octet per run, 64-127); a flow's source is
//! its sender's address on the first link of its route, its destination the receiver's
//! address on the receiver's first link; ports 40000 + flow id (sender) and 5201 + flow id
//! (receiver, iperf3's). Sequence numbers start at an ISN drawn from the seed and the flow;
//! SYN and SYN-ACK carry MSS (mss + 12 with timestamps, the MTU's), SACK-permitted,
//! timestamps, window scale in Linux's order; data and ACKs carry the timestamps and SACK
//! blocks the simulator's ends exchanged, and the ACKs' window field is the receiver's window
//! shifted by its scale. Deviations:
//! 1. The sender's own receive window is not simulated: its SYN offers 64240 bytes and scale
//!    7 (Linux's defaults), its data segments 501 (64128 bytes).
//! 2. IP identification 0 with DF set, TTL 64 at every hop (no decrement).
//! 3. A packet that crosses a link as IP fragments (a tunnel's encapsulation over the MTU) is
//!    written once, unfragmented and without the encapsulation, when its first fragment passes.
//! 4. A SYN is written with the options Linux sends (20 bytes); the simulator counts 40.
//! 5. Payload bytes are zeros (iperf3's UDP header excepted); checksums are exact for them.

use std::io::{self, Write};

use satcc_core::scenario::Resolved;
use satcc_core::{Rng, SimTime};
use satcc_pcap::write::{
    self as pcapng, Datagram, Ends, Flags, PcapngWriter, Segment, TcpOptionElement,
};

use crate::packet::{Ecn, Frag, Kind, Packet};

/// A packet as a link direction sees it: the packet as sent, the IP fragment of it this is
/// (if one) and whether a queue marked it Congestion Experienced.
#[derive(Clone, Copy)]
pub struct Seen<'a> {
    pub pkt: &'a Packet,
    pub frag: Option<Frag>,
    pub ce: bool,
}

/// A hook on the packets a link direction takes in and lets out.
pub trait Tap {
    /// Whether the world calls [`Tap::packet`] at all (a constant: `false` compiles it out).
    const ON: bool;
    /// Packet `seen` enters link direction `d` (`exit == false`: offered to its queue by the
    /// near node) or leaves it (`exit == true`: arrives at the far node, `ce` if a queue
    /// marked it) at `at`; `rcv_wscale` is the window scale of the flow's receiver.
    fn packet(&mut self, d: u32, exit: bool, at: SimTime, seen: Seen, rcv_wscale: u32);
}

/// No captures: the world's default.
pub struct NoTap;

impl Tap for NoTap {
    const ON: bool = false;
    #[inline(always)]
    fn packet(&mut self, _: u32, _: bool, _: SimTime, _: Seen, _: u32) {}
}

/// A borrowed tap (the world's `T` = `&mut Capture`, so the caller finishes the captures).
impl<X: Tap> Tap for &mut X {
    const ON: bool = X::ON;
    #[inline(always)]
    fn packet(&mut self, d: u32, exit: bool, at: SimTime, seen: Seen, rcv_wscale: u32) {
        (**self).packet(d, exit, at, seen, rcv_wscale)
    }
}

/// The address plan's second octet (the emulator draws one in 64..128 per run).
const NET_OCTET: u8 = 64;
/// iperf3's ports (python/satcc/emu/traffic.py).
const SERVER_PORT_BASE: u16 = 5201;
const CLIENT_PORT_BASE: u16 = 40000;
/// Deviation 1: the sender's receive window (Linux's default first window and scale).
const SENDER_SYN_WINDOW: u16 = 64240;
const SENDER_WSCALE: u8 = 7;
/// Timestamps option bytes beyond the MSS option's MTU-based value (`mss` excludes them).
const TS_OPTION_BYTES: u32 = 12;
/// Rng labels of the initial sequence numbers (sender, receiver) per flow.
const ISN_RNG_BASE: u64 = 0x1551_0000;

/// One capture point's file: where its packets go.
struct File<W: Write> {
    writer: PcapngWriter<W>,
    name: String,
    /// Per interface of this file: the id of the last fragmented packet written (deviation 3).
    last_frag: Vec<Option<u64>>,
}

/// Where a direction's packets are written: (file, interface) pairs.
type Targets = Vec<(u32, u32)>;

/// What a flow's headers carry.
struct FlowWire {
    udp: bool,
    /// sender → receiver ends per link direction are derived per hop; addresses are fixed.
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    sport: u16,
    dport: u16,
    isn_snd: u32,
    isn_rcv: u32,
    mss_option: u16,
    sack: bool,
    timestamps: bool,
    window_scaling: bool,
}

/// The packet captures of one run: one pcapng file per capture point, written as the run
/// goes (memory: a frame, the writers' buffers). The first write error stops every capture;
/// [`Capture::finish`] reports it.
pub struct Capture<W: Write> {
    files: Vec<File<W>>,
    enter: Vec<Targets>,
    exit: Vec<Targets>,
    flows: Vec<FlowWire>,
    error: Option<io::Error>,
}

/// A capture point as given (the scenario's `capture` key and `satcc sim --capture`), read by
/// satcc-core, whose resolver checks the scenario's own points.
pub use satcc_core::scenario::CapturePoint as Point;

/// Read a capture point (`NODE` or `FROM:TO`) against the scenario's nodes and links.
pub fn parse_point(r: &Resolved, text: &str) -> Result<Point, String> {
    satcc_core::scenario::capture_point(&r.scenario, text)
}

/// The file a point is written to (its name as the emulator's, `capture-…`; module doc).
pub fn file_name(r: &Resolved, p: Point) -> String {
    let s = &r.scenario;
    match p {
        Point::Node(n) => format!("capture-{n}-{}.pcapng", safe(&s.nodes[n])),
        Point::Direction(d) => {
            let l = &s.links[d / 2];
            let (from, to, dir) = if d % 2 == 0 {
                (l.a, l.b, "ab")
            } else {
                (l.b, l.a, "ba")
            };
            format!(
                "capture-l{}{dir}-{}-{}.pcapng",
                d / 2,
                safe(&s.nodes[from]),
                safe(&s.nodes[to])
            )
        }
    }
}

/// A node's name as a file-name part: what the emulator keeps of it (runner.py `_safe`).
fn safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect()
}

fn link_ip(link: usize, a_end: bool) -> [u8; 4] {
    [10, NET_OCTET, link as u8, if a_end { 1 } else { 2 }]
}

fn link_mac(link: usize, a_end: bool) -> [u8; 6] {
    let l = (link as u16).to_be_bytes();
    [0x02, 0x5a, 0, l[0], l[1], if a_end { 1 } else { 2 }]
}

impl<W: Write> Capture<W> {
    /// Captures at `points` (each [`parse_point`]'s), each file opened by `open(file name)`
    /// (the caller decides where; give a buffered writer). A point given twice is one file.
    pub fn new(
        r: &Resolved,
        points: &[Point],
        mut open: impl FnMut(&str) -> io::Result<W>,
    ) -> Result<Capture<W>, String> {
        let s = &r.scenario;
        let dirs = 2 * s.links.len();
        let mut cap = Capture {
            files: Vec::new(),
            enter: vec![Vec::new(); dirs],
            exit: vec![Vec::new(); dirs],
            flows: Vec::with_capacity(s.flows.len()),
            error: None,
        };
        let mut seen = Vec::new();
        for &p in points {
            if seen.contains(&p) {
                continue;
            }
            seen.push(p);
            let name = file_name(r, p);
            let io_err = |e: io::Error| format!("capture: {name}: {e}");
            let out = open(&name).map_err(io_err)?;
            let mut writer =
                PcapngWriter::new(out, concat!("satcc sim ", env!("CARGO_PKG_VERSION")))
                    .map_err(io_err)?;
            let fid = cap.files.len() as u32;
            let mut ifaces = 0;
            let mut iface = |w: &mut PcapngWriter<W>, link: usize, at: &str| {
                let l = &s.links[link];
                let desc = format!(
                    "link {link} {}-{} at {at} (simulated)",
                    s.nodes[l.a], s.nodes[l.b]
                );
                ifaces += 1;
                w.interface(&format!("satcc-l{link}"), &desc)
            };
            match p {
                Point::Node(n) => {
                    for (j, l) in s.links.iter().enumerate() {
                        if l.a != n && l.b != n {
                            continue;
                        }
                        let id = iface(&mut writer, j, &s.nodes[n]).map_err(io_err)?;
                        let (out_d, in_d) = if l.a == n {
                            (2 * j, 2 * j + 1)
                        } else {
                            (2 * j + 1, 2 * j)
                        };
                        cap.enter[out_d].push((fid, id));
                        if l.a != l.b {
                            cap.exit[in_d].push((fid, id));
                        }
                    }
                }
                Point::Direction(d) => {
                    let l = &s.links[d / 2];
                    let to = if d % 2 == 0 { l.b } else { l.a };
                    let id = iface(&mut writer, d / 2, &s.nodes[to]).map_err(io_err)?;
                    cap.exit[d].push((fid, id));
                }
            }
            cap.files.push(File {
                writer,
                name,
                last_frag: vec![None; ifaces],
            });
        }
        for f in &s.flows {
            let first_link = |node: usize| {
                s.links
                    .iter()
                    .position(|l| l.a == node || l.b == node)
                    .map_or([0; 4], |j| link_ip(j, s.links[j].a == node))
            };
            let src_ip = match r.routing.next_hop(f.src, f.dst) {
                Some(k) => link_ip(k as usize / 2, k % 2 == 0),
                None => first_link(f.src),
            };
            let mut isn = Rng::derive(s.seed, ISN_RNG_BASE + f.id as u64);
            cap.flows.push(FlowWire {
                udp: f.is_udp(),
                src_ip,
                dst_ip: first_link(f.dst),
                sport: CLIENT_PORT_BASE.wrapping_add(f.id as u16),
                dport: SERVER_PORT_BASE.wrapping_add(f.id as u16),
                isn_snd: isn.next_u64() as u32,
                isn_rcv: isn.next_u64() as u32,
                mss_option: (f.mss + if f.timestamps { TS_OPTION_BYTES } else { 0 })
                    .min(u16::MAX as u32) as u16,
                sack: f.sack,
                timestamps: f.timestamps,
                window_scaling: f.window_scaling,
            });
        }
        Ok(cap)
    }

    /// Flush every file; the first error of the run or of the flush, naming its file.
    pub fn finish(self) -> Result<Vec<W>, String> {
        let mut outs = Vec::with_capacity(self.files.len());
        let mut first = self.error.map(|e| format!("capture: {e}"));
        for f in self.files {
            match f.writer.finish() {
                Ok(w) => outs.push(w),
                Err(e) => {
                    first.get_or_insert(format!("capture: {}: {e}", f.name));
                }
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(outs),
        }
    }

    /// Write `pkt` into every file that sees it entering (`exit == false`) or leaving
    /// direction `d`.
    fn write(&mut self, exit: bool, d: u32, at: SimTime, seen: Seen, ws: u32) {
        let Seen { pkt, frag, ce } = seen;
        let link = d as usize / 2;
        let ab = d.is_multiple_of(2); // the frame goes from the link's `a` end to its `b` end
        let (wire_src, wire_dst) = (link_mac(link, ab), link_mac(link, !ab));
        let fw = &self.flows[pkt.flow as usize];
        let (src_ip, dst_ip, sport, dport) = if pkt.kind.forward() {
            (fw.src_ip, fw.dst_ip, fw.sport, fw.dport)
        } else {
            (fw.dst_ip, fw.src_ip, fw.dport, fw.sport)
        };
        let ends = Ends {
            src_mac: wire_src,
            dst_mac: wire_dst,
            src_ip,
            dst_ip,
        };
        let frame = if fw.udp {
            // iperf3's UDP header (iperf_udp.c): send time s and µs, then the packet count
            // from 1, big-endian
            let sent = pkt.tsval;
            let mut head = [0u8; 12];
            head[..4].copy_from_slice(&((sent / 1_000_000_000) as u32).to_be_bytes());
            head[4..8].copy_from_slice(&((sent % 1_000_000_000 / 1000) as u32).to_be_bytes());
            head[8..].copy_from_slice(&((pkt.seq + 1) as u32).to_be_bytes());
            pcapng::udp_frame(
                &ends,
                &Datagram {
                    sport,
                    dport,
                    payload_len: pkt.len,
                    payload_head: &head,
                },
            )
        } else {
            let mut opts: [TcpOptionElement; 8] = std::array::from_fn(|_| TcpOptionElement::Noop);
            let (seg, n) = segment(fw, pkt, ce, ws, &mut opts);
            let seg = Segment {
                sport,
                dport,
                options: &opts[..n],
                ..seg
            };
            pcapng::tcp_frame(&ends, &seg)
        };
        let targets = if exit { &self.exit } else { &self.enter };
        for k in 0..targets[d as usize].len() {
            let targets = if exit { &self.exit } else { &self.enter };
            let (file, iface) = targets[d as usize][k];
            let f = &mut self.files[file as usize];
            if let Some(frag) = frag {
                let last = &mut f.last_frag[iface as usize];
                if *last == Some(frag.id) {
                    continue; // deviation 3: once per packet
                }
                *last = Some(frag.id);
            }
            if let Err(e) = f
                .writer
                .packet(iface, at.as_nanos(), frame.bytes(), frame.orig_len)
            {
                self.error = Some(io::Error::new(e.kind(), format!("{}: {e}", f.name)));
                self.files.clear(); // nothing more is written
                self.enter.iter_mut().for_each(Vec::clear);
                self.exit.iter_mut().for_each(Vec::clear);
                return;
            }
        }
    }
}

/// A TCP packet's header fields (ports left to the caller) and its options in `opts`, in
/// `tcp_options_write`'s order; the number of options used.
fn segment(
    fw: &FlowWire,
    pkt: &Packet,
    ce: bool,
    rcv_wscale: u32,
    opts: &mut [TcpOptionElement; 8],
) -> (Segment<'static>, usize) {
    use TcpOptionElement::*;
    let snd = fw.isn_snd.wrapping_add(1);
    let rcv = fw.isn_rcv.wrapping_add(1);
    let ts = |v: u64, e: u64| Timestamp(v as u32, e as u32);
    let mut n = 0;
    let mut push = |o: TcpOptionElement| {
        opts[n] = o;
        n += 1;
    };
    let mut flags = Flags {
        ack: true,
        ece: pkt.ece,
        cwr: pkt.cwr,
        ..Flags::default()
    };
    let (seq, ack, window) = match pkt.kind {
        Kind::Syn | Kind::SynAck => {
            let syn = pkt.kind == Kind::Syn;
            flags.syn = true;
            flags.ack = !syn;
            // tcp_options_write: MSS, SACK-permitted (with timestamps: before them, else
            // after two NOPs), timestamps, NOP + window scale
            push(MaximumSegmentSize(fw.mss_option));
            if fw.timestamps {
                if fw.sack {
                    push(SelectiveAcknowledgementPermitted);
                } else {
                    push(Noop);
                    push(Noop);
                }
                push(ts(pkt.tsval, pkt.tsecr));
            } else if fw.sack {
                push(Noop);
                push(Noop);
                push(SelectiveAcknowledgementPermitted);
            }
            if fw.window_scaling {
                push(Noop);
                push(WindowScale(if syn {
                    SENDER_WSCALE
                } else {
                    rcv_wscale as u8
                }));
            }
            if syn {
                (fw.isn_snd, 0, SENDER_SYN_WINDOW)
            } else {
                (fw.isn_rcv, snd, pkt.rwnd.min(u16::MAX as u64) as u16)
            }
        }
        Kind::Data => {
            if fw.timestamps {
                push(Noop);
                push(Noop);
                push(ts(pkt.tsval, pkt.tsecr));
            }
            let window = if fw.window_scaling {
                SENDER_SYN_WINDOW >> SENDER_WSCALE
            } else {
                SENDER_SYN_WINDOW
            };
            flags.psh = pkt.psh;
            (snd.wrapping_add(pkt.seq as u32), rcv, window)
        }
        Kind::Ack | Kind::Datagram => {
            if fw.timestamps {
                push(Noop);
                push(Noop);
                push(ts(pkt.tsval, pkt.tsecr));
            }
            let blocks = pkt.sack_blocks();
            if !blocks.is_empty() {
                let edge =
                    |&(a, b): &(u64, u64)| (snd.wrapping_add(a as u32), snd.wrapping_add(b as u32));
                let mut rest = [None; 3];
                for (r, b) in rest.iter_mut().zip(&blocks[1..]) {
                    *r = Some(edge(b));
                }
                push(Noop);
                push(Noop);
                push(SelectiveAcknowledgement(edge(&blocks[0]), rest));
            }
            let window = (pkt.rwnd >> rcv_wscale).min(u16::MAX as u64) as u16;
            (rcv, snd.wrapping_add(pkt.ack as u32), window)
        }
    };
    let ecn = match (pkt.ecn, ce) {
        (_, true) | (Ecn::Ce, _) => pcapng::Ecn::Ce,
        (Ecn::Ect, false) => pcapng::Ecn::Ect0,
        (Ecn::NotEct, false) => pcapng::Ecn::NotEct,
    };
    let seg = Segment {
        sport: 0,
        dport: 0,
        seq,
        ack,
        flags,
        window,
        options: &[],
        payload_len: if pkt.kind == Kind::Data { pkt.len } else { 0 },
        ecn,
    };
    (seg, n)
}

impl<W: Write> Tap for Capture<W> {
    const ON: bool = true;
    fn packet(&mut self, d: u32, exit: bool, at: SimTime, seen: Seen, rcv_wscale: u32) {
        let targets = if exit { &self.exit } else { &self.enter };
        if !targets[d as usize].is_empty() {
            self.write(exit, d, at, seen, rcv_wscale);
        }
    }
}
