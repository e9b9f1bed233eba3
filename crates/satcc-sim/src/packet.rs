//! What travels on simulated wires.

/// IPv4 header bytes.
pub const IP_HEADER: u32 = 20;
/// TCP header bytes without options.
pub const TCP_HEADER: u32 = 20;
/// Timestamps option as Linux sends it: NOP, NOP, kind 8 (10 bytes) = 12 bytes.
pub const TS_OPTION: u32 = 12;
/// UDP header bytes (RFC 768).
pub const UDP_HEADER: u32 = 8;
/// SACK option: NOP, NOP, kind, length = 4 bytes, then 8 per block.
pub const SACK_OPTION_BASE: u32 = 4;
pub const SACK_BLOCK: u32 = 8;
/// A SYN with MSS, SACK-permitted, timestamps and window scale: 40 bytes of options in
/// Linux, 20 without timestamps.
pub const SYN_OPTIONS: u32 = 20;

/// Maximum SACK blocks that fit in the 40-byte option space (RFC 2018 §3): 3 beside
/// timestamps, 4 without.
pub const MAX_SACK_BLOCKS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Syn,
    SynAck,
    Data,
    Ack,
    /// A UDP datagram of a constant-bit-rate flow (`udp.rs`).
    Datagram,
}

impl Kind {
    /// Whether the packet travels from the flow's sender towards its receiver.
    pub fn forward(self) -> bool {
        matches!(self, Kind::Syn | Kind::Data | Kind::Datagram)
    }
}

/// One IP fragment of a packet that, with its encapsulation, exceeded the path MTU (RFC 791):
/// the packet counts as arrived only when all `count` fragments with this `id` have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frag {
    pub id: u64,
    pub count: u16,
}

/// ECN codepoint in the IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ecn {
    NotEct,
    Ect,
    Ce,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    pub flow: u32,
    pub kind: Kind,
    /// Node the packet is addressed to.
    pub dst_node: u32,
    /// Bytes on the wire (IP packet: headers + options + payload).
    pub wire_bytes: u32,
    /// Sequence number of the first payload byte (data) — satcc's data starts at 0.
    pub seq: u64,
    pub len: u32,
    /// Cumulative ACK (ACKs).
    pub ack: u64,
    /// Timestamps option (µs clock), 0 when absent.
    pub tsval: u64,
    pub tsecr: u64,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub nsack: u8,
    pub ecn: Ecn,
    /// ECN-Echo and Congestion Window Reduced flags.
    pub ece: bool,
    pub cwr: bool,
    /// The PSH flag: a data segment that ends a GSO packet of two or more segments
    /// (`__tcp_transmit_skb` forces it there; the sender's `tso_defer` model sets it).
    pub psh: bool,
    /// Advertised receive window, bytes (already scaled).
    pub rwnd: u64,
    /// A retransmission (for link statistics only).
    pub retrans: bool,
}

// A packet is copied once per send (an endpoint's `Out` into the store): at 128 bytes or less
// the copy is inlined as 16-byte moves, larger it is a `memcpy` call (bench_sim --direct,
// callgrind: 29 instructions a packet inside `memcpy` at 152 bytes, when a fragment's
// `Frag` still lived here; it is the store's now, `PacketStore::put_fragment`).
const _: () = assert!(std::mem::size_of::<Packet>() <= 128);

// `PacketStore::put` copies a packet without SACK blocks as bytes: sound only while a packet
// owns nothing (no drop glue), which `Copy` guarantees.
const _: fn() = || {
    fn plain<T: Copy>() {}
    plain::<Packet>();
};

/// Where in a [`Packet`] the fields other than the SACK blocks lie, as (offset, bytes), when they
/// are one range (the blocks at either end of the layout the compiler chose: at its start on
/// rustc 1.95): a packet without blocks is copied as that range (`PacketStore::put`).
const PACKET_BUT_SACK: Option<(usize, usize)> = {
    let at = std::mem::offset_of!(Packet, sack);
    let blocks = std::mem::size_of::<[(u64, u64); MAX_SACK_BLOCKS]>();
    let size = std::mem::size_of::<Packet>();
    if at == 0 {
        Some((blocks, size - blocks))
    } else if at + blocks == size {
        Some((0, at))
    } else {
        None
    }
};

impl Packet {
    pub fn new(flow: u32, kind: Kind, dst_node: u32) -> Self {
        Packet {
            flow,
            kind,
            dst_node,
            wire_bytes: IP_HEADER + TCP_HEADER,
            seq: 0,
            len: 0,
            ack: 0,
            tsval: 0,
            tsecr: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            nsack: 0,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
            psh: false,
            rwnd: 0,
            retrans: false,
        }
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.nsack as usize]
    }
}

/// What a link direction carries for a packet: a handle to the packet (kept in the
/// [`PacketStore`] from the moment its source sends it until it reaches its destination or is
/// dropped) and the few fields the links and routing read, so a hop moves 24 bytes, not the
/// whole packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The packet's slot in the store that made the hop (`PacketStore::put`, the only maker of
    /// hops: this field and `flags` are private), so below that store's slot count.
    slot: u32,
    pub wire_bytes: u32,
    pub dst_node: u32,
    flags: u8,
    /// Sequence number of its arrival event (world/mod.rs), stamped when it leaves a serialiser:
    /// with the arrival instant the wire keeps, the event's key.
    pub seq: u64,
}

impl Hop {
    const TO_RECEIVER: u8 = 1;
    const ECT: u8 = 2;
    const CE: u8 = 4;
    /// One IP fragment of a packet (its `Frag` is in the store: `PacketStore::frag`).
    const FRAG: u8 = 8;

    /// Whether the packet travels towards its flow's receiver (`Kind::forward`).
    pub fn to_receiver(&self) -> bool {
        self.flags & Self::TO_RECEIVER != 0
    }

    /// Whether a queue marked the packet Congestion Experienced (or it was sent so).
    pub fn is_ce(&self) -> bool {
        self.flags & Self::CE != 0
    }

    /// Whether the packet is an IP fragment of a larger one (`PacketStore::frag`).
    pub fn is_fragment(&self) -> bool {
        self.flags & Self::FRAG != 0
    }

    /// Mark Congestion Experienced if the packet is ECN-capable; whether it was marked.
    pub fn mark_ce(&mut self) -> bool {
        let ect = self.flags & Self::ECT != 0;
        if ect {
            self.flags = (self.flags & !Self::ECT) | Self::CE;
        }
        ect
    }
}

/// The packets on their way: each sent packet has a slot until it is delivered or dropped;
/// freed slots are reused, so the store holds as many packets as are in the network at once.
///
/// Invariant (what the unchecked slot reads rely on): `slots` never shrinks, and every index in
/// `free` is below `slots.len()` (only [`drop`](Self::drop) puts one there, after comparing it).
#[derive(Default)]
pub struct PacketStore {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// By slot: the fragment a slot's packet is, valid while its handle says so
    /// (`Hop::is_fragment`); grows only when a run fragments.
    frags: Vec<Frag>,
}

impl PacketStore {
    /// Keep a copy of `pkt`, `extra_wire` bytes longer on the wire (a tunnel's encapsulation);
    /// its handle. Inlined into its callers (the send path's and the fragments').
    #[inline(always)]
    pub fn put(&mut self, pkt: &Packet, extra_wire: u32) -> Hop {
        let direction = if pkt.kind.forward() {
            Hop::TO_RECEIVER
        } else {
            0
        };
        let flags = direction
            | match pkt.ecn {
                Ecn::NotEct => 0,
                Ecn::Ect => Hop::ECT,
                Ecn::Ce => Hop::CE,
            };
        let wire_bytes = pkt.wire_bytes + extra_wire;
        // The slot written through one reference (its wire size with it), not indexed again.
        let slot = match self.free.pop() {
            Some(s) => {
                debug_assert!((s as usize) < self.slots.len());
                // SAFETY: every index in `free` is below `slots.len()` (the store's invariant).
                let p = unsafe { self.slots.get_unchecked_mut(s as usize) };
                match PACKET_BUT_SACK {
                    Some((at, bytes)) if pkt.nsack == 0 => {
                        // SAFETY: `pkt` and `p` are distinct valid `Packet`s (one in the
                        // endpoint's output, one a slot of the store); `at..at + bytes` is the
                        // part of the layout holding every field but `sack` (computed from
                        // `offset_of!` and the sizes), copied as bytes (an untyped copy, padding
                        // included). `p` stays a valid packet, its `sack` the slot's old blocks,
                        // and `nsack` 0 says none of them is read (every reader goes through
                        // `sack_blocks` or `nsack`).
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                (pkt as *const Packet).cast::<u8>().add(at),
                                (p as *mut Packet).cast::<u8>().add(at),
                                bytes,
                            );
                        }
                    }
                    _ => p.clone_from(pkt),
                }
                p.wire_bytes = wire_bytes;
                s
            }
            None => {
                self.slots.push(*pkt);
                let s = self.slots.len() - 1;
                self.slots[s].wire_bytes = wire_bytes;
                s as u32
            }
        };
        Hop {
            slot,
            wire_bytes,
            dst_node: pkt.dst_node,
            flags,
            seq: 0,
        }
    }

    /// Keep one fragment of `pkt` (`wire_bytes` of it on the wire, this fragment's header
    /// included), part `frag` of the packet; its handle.
    #[cold]
    pub fn put_fragment(&mut self, pkt: &Packet, wire_bytes: u32, frag: Frag) -> Hop {
        let mut hop = self.put(pkt, 0);
        self.slots[hop.slot as usize].wire_bytes = wire_bytes;
        hop.wire_bytes = wire_bytes;
        hop.flags |= Hop::FRAG;
        let slot = hop.slot as usize;
        if self.frags.len() <= slot {
            self.frags.resize(slot + 1, frag);
        }
        self.frags[slot] = frag;
        hop
    }

    /// The fragment `hop` is, if it is one.
    pub fn frag(&self, hop: Hop) -> Option<Frag> {
        hop.is_fragment().then(|| self.frags[hop.slot as usize])
    }

    /// The packet `hop` points at, with the ECN codepoint the links left on the handle. It
    /// stays in its slot (read in place, not copied out) until [`PacketStore::drop`].
    ///
    /// # Safety
    /// `hop` was made by this store (`put` or `put_fragment`): its slot is then below the
    /// slot count, which never shrinks. (Read once a packet, unchecked: bench_sim `--direct`
    /// 2.3 M instructions fewer in 60 s.)
    pub unsafe fn deliver(&mut self, hop: Hop) -> &Packet {
        debug_assert!((hop.slot as usize) < self.slots.len());
        // SAFETY: the caller's contract.
        let pkt = unsafe { self.slots.get_unchecked_mut(hop.slot as usize) };
        if hop.flags & Hop::CE != 0 {
            pkt.ecn = Ecn::Ce;
        }
        pkt
    }

    /// The packet `hop` points at, as sent.
    pub fn peek(&self, hop: Hop) -> &Packet {
        &self.slots[hop.slot as usize]
    }

    /// Forget the packet `hop` points at (dropped, or delivered and read). Its slot is reused
    /// only if it is one of this store's (always, for a hop this store made: a hop of another
    /// store is a bug the debug assertion catches), which `put`'s unchecked reuse relies on.
    pub fn drop(&mut self, hop: Hop) {
        debug_assert!(
            (hop.slot as usize) < self.slots.len(),
            "a hop of another store"
        );
        if (hop.slot as usize) < self.slots.len() {
            self.free.push(hop.slot);
        }
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_reuses_freed_slots_and_hands_back_the_links_ecn_mark() {
        let mut store = PacketStore::default();
        let mut data = Packet::new(0, Kind::Data, 2);
        data.ecn = Ecn::Ect;
        data.wire_bytes = 1500;
        let mut hop = store.put(&data, 0);
        assert_eq!((hop.wire_bytes, hop.dst_node), (1500, 2));
        assert!(hop.to_receiver());
        assert!(
            hop.mark_ce() && !hop.mark_ce(),
            "marked once, then no longer ECT"
        );
        let ack = store.put(&Packet::new(0, Kind::Ack, 0), 0);
        assert!(!ack.to_receiver());
        assert_eq!(store.len(), 2);
        // SAFETY: the hops below are this store's.
        assert_eq!(unsafe { store.deliver(hop) }.ecn, Ecn::Ce);
        assert_eq!(store.peek(hop).wire_bytes, 1500);
        store.drop(hop);
        store.drop(ack);
        assert!(store.is_empty());
        let again = store.put(&Packet::new(1, Kind::Data, 2), 0);
        assert!(again.slot <= 1, "a freed slot is reused");
        let mut plain = store.put(&Packet::new(1, Kind::Data, 2), 40);
        assert_eq!(
            plain.wire_bytes,
            IP_HEADER + TCP_HEADER + 40,
            "encapsulation counts"
        );
        assert_eq!(store.peek(plain).wire_bytes, plain.wire_bytes);
        assert!(!plain.mark_ce(), "a Not-ECT packet is never marked");
        // SAFETY: `plain` is this store's.
        assert_eq!(unsafe { store.deliver(plain) }.ecn, Ecn::NotEct);
    }
}
