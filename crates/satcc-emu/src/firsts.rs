//! When each TCP connection's first SYN and first data segment reached the emulator.
//!
//! The kernel's senders are asked to connect at `t0 + start`, but a process wakes a little late
//! and the SYN leaves when the kernel sends it: what matters for comparing with the simulator
//! (whose SYN leaves exactly at `start`) is when the packets were on the wire. satcc-linkd sees
//! every frame with the kernel's receive stamp, so it records, per connection (IPv4 addresses and
//! TCP ports as sent), the earliest arrival of a SYN without ACK and of a segment carrying
//! payload, over all links (a flow's first link is the one next to its sender).

use std::collections::HashMap;

use satcc_core::SimTime;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_AT: usize = 12;
const IP_AT: usize = 14;
const IPPROTO_TCP: u8 = 6;
const TCP_SYN: u8 = 0x02;
const TCP_ACK: u8 = 0x10;

/// A connection as its first packet names it: source address, destination address, source
/// port, destination port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conn {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
}

/// What a frame is, for this purpose: a SYN (without ACK) or a segment with payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Syn,
    Data,
}

/// Classify an Ethernet frame: `None` unless it is an unfragmented IPv4 TCP SYN or data segment.
pub fn classify(frame: &[u8]) -> Option<(Conn, Kind)> {
    let ip = frame.get(IP_AT..)?;
    if u16::from_be_bytes([*frame.get(ETHERTYPE_AT)?, *frame.get(ETHERTYPE_AT + 1)?])
        != ETHERTYPE_IPV4
        || ip.len() < 20
        || ip[0] >> 4 != 4
        || ip[9] != IPPROTO_TCP
    {
        return None;
    }
    // a later fragment carries no TCP header
    if u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let tcp = ip.get(ihl..total.min(ip.len()))?;
    if tcp.len() < 20 {
        return None;
    }
    let doff = usize::from(tcp[12] >> 4) * 4;
    let flags = tcp[13];
    let conn = Conn {
        src: [ip[12], ip[13], ip[14], ip[15]],
        dst: [ip[16], ip[17], ip[18], ip[19]],
        sport: u16::from_be_bytes([tcp[0], tcp[1]]),
        dport: u16::from_be_bytes([tcp[2], tcp[3]]),
    };
    if flags & (TCP_SYN | TCP_ACK) == TCP_SYN {
        Some((conn, Kind::Syn))
    } else if total > ihl + doff {
        Some((conn, Kind::Data))
    } else {
        None
    }
}

/// Earliest SYN and data arrivals per connection.
#[derive(Default, Debug)]
pub struct Firsts {
    seen: HashMap<Conn, (Option<SimTime>, Option<SimTime>)>,
}

impl Firsts {
    /// Note a frame that arrived at `t`.
    pub fn observe(&mut self, frame: &[u8], t: SimTime) {
        let Some((conn, kind)) = classify(frame) else {
            return;
        };
        let e = self.seen.entry(conn).or_default();
        let slot = match kind {
            Kind::Syn => &mut e.0,
            Kind::Data => &mut e.1,
        };
        if slot.is_none_or(|s| t < s) {
            *slot = Some(t);
        }
    }

    /// One JSON object per connection, times in ns from `origin` (negative: before it), sorted
    /// by connection so the report is stable.
    pub fn to_json(&self, origin: Option<SimTime>) -> serde_json::Value {
        let rel = |t: Option<SimTime>| -> Option<i64> {
            let (t, o) = (t?, origin?);
            Some(if t >= o {
                t.saturating_since(o).as_nanos() as i64
            } else {
                -(o.saturating_since(t).as_nanos() as i64)
            })
        };
        let mut conns: Vec<_> = self.seen.iter().collect();
        conns.sort_by_key(|(c, _)| (c.src, c.dst, c.sport, c.dport));
        serde_json::Value::Array(
            conns
                .into_iter()
                .map(|(c, (syn, data))| {
                    serde_json::json!({
                        "src": std::net::Ipv4Addr::from(c.src).to_string(),
                        "dst": std::net::Ipv4Addr::from(c.dst).to_string(),
                        "sport": c.sport,
                        "dport": c.dport,
                        "syn_ns": rel(*syn),
                        "data_ns": rel(*data),
                    })
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet + IPv4 + TCP frame with `payload` bytes after a 32-byte TCP header.
    fn frame(flags: u8, payload: usize, frag_offset: u16) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 32 + payload];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut f[14..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((20 + 32 + payload) as u16).to_be_bytes());
        ip[6..8].copy_from_slice(&frag_offset.to_be_bytes());
        ip[9] = IPPROTO_TCP;
        ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
        ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let tcp = &mut ip[20..];
        tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&5201u16.to_be_bytes());
        tcp[12] = 8 << 4;
        tcp[13] = flags;
        f
    }

    #[test]
    fn classifies_syn_data_and_pure_acks() {
        assert_eq!(classify(&frame(TCP_SYN, 0, 0)).unwrap().1, Kind::Syn);
        assert_eq!(classify(&frame(TCP_SYN | TCP_ACK, 0, 0)), None);
        assert_eq!(classify(&frame(TCP_ACK, 0, 0)), None);
        let (c, k) = classify(&frame(TCP_ACK | 0x08, 1448, 0)).unwrap();
        assert_eq!(k, Kind::Data);
        assert_eq!(
            (c.sport, c.dport, c.src, c.dst),
            (40000, 5201, [10, 0, 0, 1], [10, 0, 0, 2])
        );
        assert_eq!(classify(&frame(TCP_ACK, 100, 5)), None); // a later fragment
        let mut udp = frame(0, 10, 0);
        udp[14 + 9] = 17;
        assert_eq!(classify(&udp), None);
        assert_eq!(classify(&frame(TCP_SYN, 0, 0)[..40]), None); // truncated
    }

    #[test]
    fn keeps_the_earliest_arrival_relative_to_the_origin() {
        let mut f = Firsts::default();
        let t = SimTime::from_nanos;
        f.observe(&frame(TCP_SYN, 0, 0), t(1_500));
        f.observe(&frame(TCP_SYN, 0, 0), t(1_200)); // the same SYN seen earlier on another port
        f.observe(&frame(TCP_SYN, 0, 0), t(9_000)); // a retransmitted SYN
        f.observe(&frame(TCP_ACK, 1448, 0), t(50_000));
        f.observe(&frame(TCP_ACK, 1448, 0), t(60_000));
        let j = f.to_json(Some(t(1_000)));
        assert_eq!(j[0]["syn_ns"], 200);
        assert_eq!(j[0]["data_ns"], 49_000);
        assert_eq!(j[0]["sport"], 40000);
        assert_eq!(j[0]["src"], "10.0.0.1");
        assert_eq!(f.to_json(Some(t(2_000)))[0]["syn_ns"], -800);
        assert_eq!(f.to_json(None)[0]["syn_ns"], serde_json::Value::Null);
    }
}
