//! Link, IP and transport decoding of one captured frame into the few fields the flow analysis
//! needs. Link types via `pcap-parser`'s `data` helpers, headers via `etherparse`'s lax slicer
//! (which accepts frames cut short by the snap length).
//!
//! Link types: Ethernet (with 802.1Q / QinQ VLAN tags), Linux cooked SLL and SLL2, raw IP
//! (101, 228, 229), BSD loopback (NULL) and NFLOG. IPv4 and IPv6 (with extension headers).
//!
//! The TCP segment length is taken from the IP header's length fields, not from the captured
//! bytes, so a capture with `-s 128` gives the same lengths as the full packets (tshark does
//! the same: `tcp.len` = IP payload length − TCP header length).
//!
//! Deviations from tshark: (1) IP fragments are counted but not reassembled (tshark reassembles
//! IPv4 fragments by default; TCP is almost never fragmented, UDP over a VPN may be);
//! (2) headers inside ICMP errors are not decoded (tshark decodes them but, like here, never
//! feeds them to the TCP sequence analysis); (3) an IPv4 total length of 0 (TSO capture) or an
//! IPv6 jumbogram falls back to the frame's original length.

use etherparse::{
    ip_number, EtherType, LaxNetSlice, LaxSlicedPacket, TcpOptionElement, TcpOptionsIterator,
    TransportSlice,
};
use pcap_parser::data::{get_packetdata, PacketData};
use pcap_parser::Linktype;

/// TCP flag bits as in the header's 9 low bits of offset 12..14 (RFC 793, RFC 3168).
pub mod tcpflag {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
}

/// Decoded TCP header fields.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpSeg {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u16,
    /// Raw (unscaled) window field.
    pub window: u16,
    /// Payload bytes per the IP length fields (tshark's `tcp.len`).
    pub seglen: u32,
    /// RFC 7323 timestamps (TSval, TSecr).
    pub ts: Option<(u32, u32)>,
    pub wscale: Option<u8>,
    /// SACK blocks (left, right edge), up to four; `sack_blocks` of them are set.
    pub sack: [(u32, u32); 4],
    pub sack_blocks: u8,
}

/// Decoded UDP header fields and the first bytes of payload (for iperf3's sequence numbers).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UdpDgram {
    pub sport: u16,
    pub dport: u16,
    /// Payload bytes per the UDP length field.
    pub len: u32,
    /// First captured payload bytes (up to 16).
    pub head: [u8; 16],
    pub head_len: u8,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum L4 {
    Tcp(TcpSeg),
    Udp(UdpDgram),
    /// Another IP protocol (ICMP, GRE, ESP ...), by number.
    Other(u8),
    /// Non-first IP fragment or a fragmented payload.
    Fragment,
    /// The TCP/UDP header was cut short or invalid.
    Truncated(u8),
}

/// Addresses are stored as 128-bit numbers; IPv4 as the IPv4-mapped IPv6 address.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IpPacket {
    pub src: u128,
    pub dst: u128,
    pub v6: bool,
    pub l4: L4,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decoded {
    Ip(IpPacket),
    /// ARP, LLDP, anything that is not IP.
    NonIp,
    /// The link type is not one we can read.
    UnsupportedLink(i32),
    /// The frame is too short or its IP header is invalid.
    Malformed,
}

const V4_MAPPED: u128 = 0xffff_0000_0000;

fn v4(a: [u8; 4]) -> u128 {
    V4_MAPPED | u32::from_be_bytes(a) as u128
}

/// Turn a stored address back into text.
pub fn addr_to_string(a: u128, v6: bool) -> String {
    if v6 {
        std::net::Ipv6Addr::from(a).to_string()
    } else {
        std::net::Ipv4Addr::from(a as u32).to_string()
    }
}

/// Decode one frame. `orig_len` is the on-the-wire length (used only when IP lengths are 0).
pub fn decode(linktype: Linktype, data: &[u8], orig_len: u32) -> Decoded {
    if let Some(d) = decode_ethernet_ipv4_tcp(linktype, data) {
        debug_assert_eq!(d, decode_lax(linktype, data, orig_len), "fast path differs");
        return d;
    }
    decode_lax(linktype, data, orig_len)
}

/// The frames of a bulk TCP capture, read straight from their bytes: untagged Ethernet II,
/// IPv4 (options allowed) neither fragmented nor shorter than its header by its own length
/// field, TCP with its whole header captured. `None` for anything else, which etherparse's
/// lax slicer reads (`decode_lax`); for these frames both give the same result (checked in
/// debug builds on every frame, so by the fuzz target and the tests, and by
/// `the_direct_read_equals_the_lax_slicer_on_mutated_frames`).
fn decode_ethernet_ipv4_tcp(linktype: Linktype, data: &[u8]) -> Option<Decoded> {
    const ETH: usize = 14;
    if linktype != Linktype::ETHERNET || data.len() < ETH + 20 || data[12..14] != [0x08, 0x00] {
        return None;
    }
    let ip = &data[ETH..];
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let fragment = u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff != 0; // MF or an offset
    if ip[0] >> 4 != 4 || ihl < 20 || ip.len() < ihl || total < ihl || fragment {
        return None;
    }
    if ip[9] != ip_number::TCP.0 {
        return None;
    }
    let tcp = &ip[ihl..total.min(ip.len())];
    let hdr_len = usize::from(*tcp.get(12)? >> 4) * 4;
    if tcp.len() < 20 || hdr_len < 20 || tcp.len() < hdr_len {
        return None;
    }
    let addr = |at: usize| v4([ip[at], ip[at + 1], ip[at + 2], ip[at + 3]]);
    Some(Decoded::Ip(IpPacket {
        src: addr(12),
        dst: addr(16),
        v6: false,
        l4: L4::Tcp(tcp_segment(
            &tcp[..hdr_len],
            total.saturating_sub(ihl + hdr_len) as u32,
        )),
    }))
}

/// A TCP header's fields (`header`: its bytes, options included) for a segment of `seglen`
/// payload bytes; options through etherparse's iterator.
fn tcp_segment(header: &[u8], seglen: u32) -> TcpSeg {
    let mut ts = None;
    let mut wscale = None;
    let mut sack = [(0u32, 0u32); 4];
    let mut sack_blocks = 0u8;
    for opt in TcpOptionsIterator::from_slice(&header[20..]).flatten() {
        match opt {
            TcpOptionElement::Timestamp(a, b) => ts = Some((a, b)),
            TcpOptionElement::WindowScale(w) => wscale = Some(w),
            TcpOptionElement::SelectiveAcknowledgement(first, rest) => {
                for block in std::iter::once(Some(first)).chain(rest).flatten() {
                    if (sack_blocks as usize) < sack.len() {
                        sack[sack_blocks as usize] = block;
                        sack_blocks += 1;
                    }
                }
            }
            _ => {}
        }
    }
    let be16 = |at: usize| u16::from_be_bytes([header[at], header[at + 1]]);
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    TcpSeg {
        sport: be16(0),
        dport: be16(2),
        seq: be32(4),
        ack: be32(8),
        flags: be16(12) & 0x01ff,
        window: be16(14),
        seglen,
        ts,
        wscale,
        sack,
        sack_blocks,
    }
}

/// Any frame, through pcap-parser's link types and etherparse's lax slicer.
fn decode_lax(linktype: Linktype, data: &[u8], orig_len: u32) -> Decoded {
    // (the sliced packet, ~330 bytes, is read where it was built: moving it out of its
    // Result cost a copy per packet)
    match get_packetdata(data, linktype, data.len()) {
        Some(PacketData::L2(eth)) => match &LaxSlicedPacket::from_ethernet(eth) {
            Ok(p) => decode_sliced(p, data, orig_len),
            Err(_) => Decoded::Malformed,
        },
        Some(PacketData::L3(ethertype, payload)) => decode_sliced(
            &LaxSlicedPacket::from_ether_type(EtherType(ethertype), payload),
            data,
            orig_len,
        ),
        Some(PacketData::L4(_, _)) => Decoded::NonIp,
        Some(PacketData::Unsupported(_)) => Decoded::UnsupportedLink(linktype.0),
        None => Decoded::Malformed,
    }
}

fn decode_sliced(sliced: &LaxSlicedPacket<'_>, data: &[u8], orig_len: u32) -> Decoded {
    let frame_start = data.as_ptr() as usize;
    let (src, dst, v6, ip_start, ip_reported_end, ip_payload) = match &sliced.net {
        Some(LaxNetSlice::Ipv4(ip)) => {
            let h = ip.header();
            let start = h.slice().as_ptr() as usize;
            let total = h.total_len() as usize;
            let end = if total == 0 {
                frame_start + orig_len as usize
            } else {
                start + total
            };
            (
                v4(h.source()),
                v4(h.destination()),
                false,
                start,
                end,
                ip.payload(),
            )
        }
        Some(LaxNetSlice::Ipv6(ip)) => {
            let h = ip.header();
            let start = h.slice().as_ptr() as usize;
            let plen = h.payload_length() as usize;
            let end = if plen == 0 {
                frame_start + orig_len as usize
            } else {
                start + 40 + plen
            };
            (
                u128::from_be_bytes(h.source()),
                u128::from_be_bytes(h.destination()),
                true,
                start,
                end,
                ip.payload(),
            )
        }
        Some(_) => return Decoded::NonIp,
        None => {
            return if sliced.stop_err.is_some() && sliced.link.is_some() && is_ip_link(sliced) {
                Decoded::Malformed
            } else {
                Decoded::NonIp
            }
        }
    };
    let _ = ip_start;
    let proto = ip_payload.ip_number.0;
    if ip_payload.fragmented {
        return Decoded::Ip(IpPacket {
            src,
            dst,
            v6,
            l4: L4::Fragment,
        });
    }
    let l4 = match &sliced.transport {
        Some(TransportSlice::Tcp(tcp)) => {
            let header = tcp.header_slice();
            let tcp_start = tcp.slice().as_ptr() as usize;
            let seglen = ip_reported_end.saturating_sub(tcp_start + header.len()) as u32;
            L4::Tcp(tcp_segment(header, seglen))
        }
        Some(TransportSlice::Udp(udp)) => {
            let payload = udp.payload();
            let declared = udp.length() as u32;
            let len = if declared >= 8 {
                declared - 8
            } else {
                (ip_reported_end.saturating_sub(udp.slice().as_ptr() as usize + 8)) as u32
            };
            let mut head = [0u8; 16];
            let n = payload.len().min(16);
            head[..n].copy_from_slice(&payload[..n]);
            L4::Udp(UdpDgram {
                sport: udp.source_port(),
                dport: udp.destination_port(),
                len,
                head,
                head_len: n as u8,
            })
        }
        Some(_) => L4::Other(proto),
        None => {
            if proto == ip_number::TCP.0 || proto == ip_number::UDP.0 {
                L4::Truncated(proto)
            } else {
                L4::Other(proto)
            }
        }
    };
    Decoded::Ip(IpPacket { src, dst, v6, l4 })
}

fn is_ip_link(p: &LaxSlicedPacket<'_>) -> bool {
    use etherparse::LinkSlice;
    let et = match &p.link {
        Some(LinkSlice::Ethernet2(e)) => e.ether_type(),
        Some(LinkSlice::EtherPayload(e)) => e.ether_type,
        _ => return false,
    };
    et == EtherType::IPV4 || et == EtherType::IPV6 || et == EtherType::VLAN_TAGGED_FRAME
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::PacketBuilder;

    fn tcp_frame(payload_len: usize) -> Vec<u8> {
        let b = PacketBuilder::ethernet2([1; 6], [2; 6])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(40000, 5201, 1000, 65535)
            .ack(77)
            .options(&[TcpOptionElement::Timestamp(5, 6)])
            .unwrap();
        let payload = vec![0xabu8; payload_len];
        let mut v = Vec::new();
        b.write(&mut v, &payload).unwrap();
        v
    }

    #[test]
    fn the_direct_read_equals_the_lax_slicer_on_mutated_frames() {
        // valid frames (IPv4 options, TCP options, payloads, padding), then their header bytes
        // mutated and the frame cut at every length: wherever the direct read answers, it
        // answers as etherparse does, and it answers for the common frames
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut direct = 0;
        for case in 0..30_000 {
            let mut f = tcp_frame((next() % 1500) as usize);
            if case % 3 == 0 {
                let n = (next() % 4) as usize;
                for _ in 0..n {
                    let at = (next() % 80) as usize % f.len();
                    f[at] = next() as u8;
                }
            }
            if case % 5 == 0 {
                f.extend(std::iter::repeat_n(0, (next() % 20) as usize)); // Ethernet padding
            }
            let cut = if case % 2 == 0 {
                f.len()
            } else {
                (next() as usize) % (f.len() + 1)
            };
            let data = &f[..cut];
            let orig = f.len() as u32;
            if let Some(d) = decode_ethernet_ipv4_tcp(Linktype::ETHERNET, data) {
                direct += 1;
                assert_eq!(d, decode_lax(Linktype::ETHERNET, data, orig), "case {case}");
            }
        }
        assert!(direct > 10_000, "the direct read answered {direct} times");
    }

    #[test]
    fn snaplen_cut_segment_keeps_its_ip_length() {
        let full = tcp_frame(1448);
        let orig = full.len() as u32;
        let cut = &full[..128];
        let d = decode(Linktype::ETHERNET, cut, orig);
        match d {
            Decoded::Ip(IpPacket {
                l4: L4::Tcp(t),
                v6: false,
                ..
            }) => {
                assert_eq!(t.seglen, 1448);
                assert_eq!(t.seq, 1000);
                assert_eq!(t.ack, 77);
                assert_eq!(t.flags, tcpflag::ACK);
                assert_eq!(t.ts, Some((5, 6)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        let mut f = tcp_frame(0);
        f.extend_from_slice(&[0u8; 6]);
        match decode(Linktype::ETHERNET, &f, f.len() as u32) {
            Decoded::Ip(IpPacket { l4: L4::Tcp(t), .. }) => assert_eq!(t.seglen, 0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_link_type_is_reported() {
        assert_eq!(
            decode(Linktype(147), &[0u8; 40], 40),
            Decoded::UnsupportedLink(147)
        );
    }

    #[test]
    fn ipv4_addresses_round_trip_as_text() {
        assert_eq!(addr_to_string(v4([192, 0, 2, 7]), false), "192.0.2.7");
        assert_eq!(addr_to_string(1, true), "::1");
    }
}
