//! Tunnels: a flow with `encap_bytes` adds them to every packet it sends (both ends); a packet
//! that then exceeds the flow's path MTU leaves its source as IP fragments (RFC 791: the first
//! ones carry ⌊(MTU − 20) / 8⌋·8 bytes of payload, each fragment has its own 20-byte header),
//! which cross the links independently. The far end takes the packet only when every fragment
//! has arrived; losing any loses the packet. Incomplete packets are forgotten after 30 s
//! (Linux `net.ipv4.ipfrag_time`). The TCP/UDP ends never see the fragments.

use std::collections::HashMap;

use satcc_core::{SimDuration, SimTime};

use super::World;
use crate::capture::Tap;
use crate::packet::{Frag, Packet, IP_HEADER};

/// Linux `net.ipv4.ipfrag_time`: how long an incomplete packet's fragments are kept.
const REASSEMBLY_TIMEOUT: SimDuration = SimDuration::from_secs(30);
/// IPv4 fragment offsets count 8-byte units (RFC 791).
const FRAGMENT_UNIT: u32 = 8;
// The resolver's smallest MTU carries at least a header and two fragment units.
const _: () = assert!(IP_HEADER + 2 * FRAGMENT_UNIT <= satcc_core::scenario::MIN_MTU);

/// Fragments seen so far per fragmented packet, and the fragment ids handed out.
#[derive(Default)]
pub(super) struct Reassembly {
    /// Per fragmented packet: (fragments arrived, first arrival).
    pending: HashMap<u64, (u16, SimTime)>,
    next_id: u64,
    /// Packets that left their source as fragments.
    pub(super) fragmented: u64,
}

impl<T: Tap> World<T> {
    /// A fragment arrived at its destination: whether its packet is now complete (out of
    /// line: only tunnelled packets over the MTU are fragments).
    #[inline(never)]
    pub(super) fn reassemble(&mut self, frag: Frag) -> bool {
        let e = self.frags.pending.entry(frag.id).or_insert((0, self.now));
        e.0 += 1;
        if e.0 == frag.count {
            self.frags.pending.remove(&frag.id);
            return true;
        }
        false
    }

    /// Forget packets whose first fragment arrived more than `REASSEMBLY_TIMEOUT` ago.
    pub(super) fn expire_fragments(&mut self) {
        let now = self.now;
        self.frags
            .pending
            .retain(|_, &mut (_, first)| now.saturating_since(first) < REASSEMBLY_TIMEOUT);
    }

    /// An endpoint of flow `f` at `node` sends `pkt`: through the flow's tunnel, fragmented
    /// if it no longer fits the path MTU (RFC 791 §2.3, "Fragmentation and Reassembly").
    pub(super) fn send(&mut self, f: u32, node: u32, pkt: &Packet) {
        let (encap, mtu) = (
            self.flows[f as usize].encap_bytes,
            self.flows[f as usize].mtu,
        );
        self.send_via(node, pkt, encap, mtu);
    }

    /// [`send`](Self::send) given the flow's encapsulation and path MTU (a caller sending
    /// several packets of one flow reads them once). Inlined: a packet that fits is stored
    /// and forwarded in place; fragmenting is out of line.
    #[inline(always)]
    pub(super) fn send_via(&mut self, node: u32, pkt: &Packet, encap: u32, mtu: u32) {
        if pkt.wire_bytes + encap <= mtu {
            let hop = self.store.put(pkt, encap);
            self.forward(node, hop);
        } else {
            self.send_fragments(node, pkt, encap, mtu);
        }
    }

    /// `pkt` with its encapsulation exceeds the path MTU: it leaves as IP fragments.
    #[cold]
    #[inline(never)]
    fn send_fragments(&mut self, node: u32, pkt: &Packet, encap: u32, mtu: u32) {
        let wire_bytes = pkt.wire_bytes + encap;
        let per = (mtu - IP_HEADER) / FRAGMENT_UNIT * FRAGMENT_UNIT; // payload per fragment
        let payload = wire_bytes - IP_HEADER;
        let count = payload.div_ceil(per);
        let id = self.frags.next_id;
        self.frags.next_id += 1;
        self.frags.fragmented += 1;
        let frag = Frag {
            id,
            count: count.min(u16::MAX as u32) as u16,
        };
        for k in 0..count {
            let hop = self
                .store
                .put_fragment(pkt, IP_HEADER + per.min(payload - k * per), frag);
            self.forward(node, hop);
        }
    }
}
