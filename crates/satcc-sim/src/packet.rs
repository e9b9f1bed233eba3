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
    /// Advertised receive window, bytes (already scaled).
    pub rwnd: u64,
    /// A retransmission (for link statistics only).
    pub retrans: bool,
    /// Set on each fragment of a fragmented packet (world.rs `send`).
    pub frag: Option<Frag>,
}

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
            rwnd: 0,
            retrans: false,
            frag: None,
        }
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.nsack as usize]
    }
}
