//! A streaming pcapng writer for synthetic packets (the simulator's captures): headers as
//! tcpdump `-s 128` keeps them, nanosecond timestamps, one Interface Description Block per
//! capture point.
//!
//! The blocks are `pcap-parser`'s own structures serialised by its `serialize` feature (the
//! same crate [`crate::capture`] reads them with), the Ethernet, IPv4, TCP and UDP headers
//! `etherparse`'s (the crate [`crate::decode`] reads them with). Nothing here knows a layout.
//!
//! Choices, each one what a reader expects of a real capture:
//! - **Time resolution** 1 ns (`if_tsresol` = 9): the simulator's clock is integer ns, and
//!   back-to-back packets at 1 Gbit/s are 12 µs apart but those at 10 Gbit/s 1.2 µs, which
//!   µs timestamps would merge or round out of order between interfaces of one file.
//! - **Link type** Ethernet (1), as tcpdump records on the emulator's veth interfaces, so a
//!   simulated and an emulated capture decode alike; addresses are locally administered
//!   (`02:…`) and name the link and its end.
//! - **Payload** is not simulated: bytes past the headers are zero (iperf3's UDP header
//!   excepted: [`Datagram::payload_head`]), and the TCP/UDP checksums are exact for that
//!   zero-filled payload, so Wireshark's optional checksum validation passes.
//! - **Snap length** [`SNAPLEN`]: a frame keeps its first 128 bytes; `origlen` is its full length.

use std::borrow::Cow;
use std::io::{self, Write};

use etherparse::checksum::Sum16BitWords;
use etherparse::{
    EtherType, Ethernet2Header, IpDscp, IpEcn, IpFragOffset, IpNumber, Ipv4Header, TcpHeader,
    UdpHeader,
};
use pcap_parser::pcapng::{
    EnhancedPacketBlock, InterfaceDescriptionBlock, OptionCode, PcapNGOption, SectionHeaderBlock,
};
use pcap_parser::{Linktype, ToVec};

pub use etherparse::TcpOptionElement;

/// Bytes of a frame kept, as tcpdump's `-s 128` (the emulator's captures): Ethernet, IPv4 and
/// a TCP header with 40 bytes of options fit.
pub const SNAPLEN: u32 = 128;
/// `if_tsresol` = 9: timestamps in nanoseconds (pcapng §4.2, a power of ten).
const TSRESOL_NS: u8 = 9;
const ETH_HEADER: usize = 14;
const MAX_FRAME: usize = SNAPLEN as usize;
/// TTL a packet leaves its host with (Linux `ip_default_ttl`).
const TTL: u8 = 64;

/// pcapng options are raw bytes; a string option is its UTF-8.
fn text_option(code: OptionCode, s: &str) -> PcapNGOption<'static> {
    PcapNGOption {
        code,
        len: s.len().min(u16::MAX as usize) as u16,
        value: Cow::Owned(s.as_bytes()[..s.len().min(u16::MAX as usize)].to_vec()),
    }
}

/// A block that cannot be serialised (cookie-factory's `GenError`) as an I/O error.
fn block_error(e: impl std::fmt::Debug) -> io::Error {
    io::Error::other(format!("pcapng block: {e:?}"))
}

/// A pcapng file being written: a Section Header Block, then Interface Description Blocks
/// and Enhanced Packet Blocks as they come, through `out` (give it a `BufWriter`: each block
/// is one `write_all`). Memory is one frame buffer, whatever the number of packets.
pub struct PcapngWriter<W: Write> {
    out: W,
    interfaces: u32,
}

impl<W: Write> PcapngWriter<W> {
    /// Start a file: its Section Header Block, `application` in `shb_userappl`.
    pub fn new(mut out: W, application: &str) -> io::Result<Self> {
        let mut shb = SectionHeaderBlock {
            block_type: 0,
            block_len1: 0,
            bom: 0,
            major_version: 1,
            minor_version: 0,
            section_len: -1, // unknown: written in one pass
            options: vec![text_option(OptionCode::ShbUserAppl, application)],
            block_len2: 0,
        };
        out.write_all(&shb.to_vec().map_err(block_error)?)?;
        Ok(PcapngWriter { out, interfaces: 0 })
    }

    /// Declare an Ethernet interface (`if_name`, `if_description`, ns timestamps, snap length
    /// [`SNAPLEN`]); its id for [`PcapngWriter::packet`].
    pub fn interface(&mut self, name: &str, description: &str) -> io::Result<u32> {
        let mut idb = InterfaceDescriptionBlock {
            block_type: 0,
            block_len1: 0,
            linktype: Linktype::ETHERNET,
            reserved: 0,
            snaplen: SNAPLEN,
            options: vec![
                text_option(OptionCode::IfName, name),
                text_option(OptionCode::IfDescription, description),
            ],
            block_len2: 0,
            if_tsresol: TSRESOL_NS,
            if_tsoffset: 0,
        };
        self.out.write_all(&idb.to_vec().map_err(block_error)?)?;
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }

    /// One frame seen on interface `if_id` at `t_ns`: its first bytes `frame` (at most
    /// [`SNAPLEN`]) of `orig_len`.
    pub fn packet(&mut self, if_id: u32, t_ns: u64, frame: &[u8], orig_len: u32) -> io::Result<()> {
        debug_assert!(if_id < self.interfaces, "packet on an undeclared interface");
        let mut epb = EnhancedPacketBlock {
            block_type: 0,
            block_len1: 0,
            if_id,
            ts_high: (t_ns >> 32) as u32,
            ts_low: t_ns as u32,
            caplen: frame.len() as u32,
            origlen: orig_len,
            data: frame,
            options: Vec::new(),
            block_len2: 0,
        };
        self.out.write_all(&epb.to_vec().map_err(block_error)?)
    }

    /// Flush and hand back the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The two ends of a frame on a link: MAC and IPv4 addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
}

/// IP ECN codepoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ecn {
    NotEct,
    Ect0,
    Ce,
}

impl Ecn {
    fn field(self) -> IpEcn {
        match self {
            Ecn::NotEct => IpEcn::NotEct,
            Ecn::Ect0 => IpEcn::Ect0,
            Ecn::Ce => IpEcn::CongestionExperienced,
        }
    }
}

/// TCP flags of a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub syn: bool,
    pub ack: bool,
    pub psh: bool,
    pub ece: bool,
    pub cwr: bool,
}

/// A TCP segment's headers (live 32-bit numbers, the window field as sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: Flags,
    pub window: u16,
    pub options: &'a [TcpOptionElement],
    pub payload_len: u32,
    pub ecn: Ecn,
}

/// A UDP datagram's header and the first bytes of its payload (iperf3's sequence header);
/// the rest of the payload is zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    pub sport: u16,
    pub dport: u16,
    pub payload_len: u32,
    pub payload_head: &'a [u8],
}

/// A frame cut at [`SNAPLEN`]: the bytes kept and the frame's full length.
pub struct Frame {
    buf: [u8; MAX_FRAME],
    len: usize,
    pub orig_len: u32,
}

impl Frame {
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Ethernet + IPv4 + `transport` header, then `payload_head` and zeros to the snap length.
fn frame(
    ends: &Ends,
    proto: IpNumber,
    ecn: Ecn,
    transport: &[u8],
    payload_len: u32,
    payload_head: &[u8],
) -> Frame {
    let ip_payload = transport.len() as u32 + payload_len;
    let mut ip = Ipv4Header::new(
        ip_payload.min(u16::MAX as u32 - 20) as u16,
        TTL,
        proto,
        ends.src_ip,
        ends.dst_ip,
    )
    .expect("an IPv4 payload under 65515 bytes");
    ip.dont_fragment = true;
    ip.fragment_offset = IpFragOffset::ZERO;
    ip.dscp = IpDscp::ZERO;
    ip.ecn = ecn.field();
    ip.header_checksum = ip.calc_header_checksum();
    let eth = Ethernet2Header {
        source: ends.src_mac,
        destination: ends.dst_mac,
        ether_type: EtherType::IPV4,
    };
    let mut f = Frame {
        buf: [0; MAX_FRAME],
        len: 0,
        orig_len: (ETH_HEADER + 20) as u32 + ip_payload,
    };
    let mut at = 0;
    for part in [
        &eth.to_bytes()[..],
        &ip.to_bytes()[..],
        transport,
        payload_head,
    ] {
        let n = part.len().min(MAX_FRAME - at);
        f.buf[at..at + n].copy_from_slice(&part[..n]);
        at += n;
    }
    f.len = (f.orig_len as usize).min(MAX_FRAME); // zeros after the head
    f
}

/// The one's-complement checksum of a transport header over the IPv4 pseudo-header, the
/// header (checksum field zero) and a payload that is `head` then zeros (zeros add nothing;
/// the length in the pseudo-header counts them).
fn checksum(ends: &Ends, proto: IpNumber, header: &[u8], payload_len: u32, head: &[u8]) -> u16 {
    let len = (header.len() as u32 + payload_len).min(u16::MAX as u32) as u16;
    Sum16BitWords::new()
        .add_4bytes(ends.src_ip)
        .add_4bytes(ends.dst_ip)
        .add_2bytes([0, proto.0])
        .add_2bytes(len.to_be_bytes())
        .add_slice(header)
        .add_slice(head)
        .ones_complement()
        .to_be()
}

/// The frame of a TCP segment.
pub fn tcp_frame(ends: &Ends, s: &Segment) -> Frame {
    let mut h = TcpHeader::new(s.sport, s.dport, s.seq, s.window);
    h.acknowledgment_number = s.ack;
    h.syn = s.flags.syn;
    h.ack = s.flags.ack;
    h.psh = s.flags.psh;
    h.ece = s.flags.ece;
    h.cwr = s.flags.cwr;
    h.set_options(s.options)
        .expect("TCP options within 40 bytes");
    let bytes = h.to_bytes();
    h.checksum = checksum(ends, IpNumber::TCP, &bytes, s.payload_len, &[]);
    frame(
        ends,
        IpNumber::TCP,
        s.ecn,
        &h.to_bytes(),
        s.payload_len,
        &[],
    )
}

/// The frame of a UDP datagram.
pub fn udp_frame(ends: &Ends, d: &Datagram) -> Frame {
    let head = &d.payload_head[..d.payload_head.len().min(d.payload_len as usize)];
    let mut h = UdpHeader {
        source_port: d.sport,
        destination_port: d.dport,
        length: (8 + d.payload_len).min(u16::MAX as u32) as u16,
        checksum: 0,
    };
    let sum = checksum(ends, IpNumber::UDP, &h.to_bytes(), d.payload_len, head);
    h.checksum = if sum == 0 { 0xffff } else { sum }; // RFC 768: 0 means "no checksum"
    frame(
        ends,
        IpNumber::UDP,
        Ecn::NotEct,
        &h.to_bytes(),
        d.payload_len,
        head,
    )
}
