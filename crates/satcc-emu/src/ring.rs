//! The receive ring of an AF_PACKET socket (`PACKET_RX_RING`, `TPACKET_V2`): the kernel copies
//! each frame into a slot of memory we share with it and flips the slot's status to "user";
//! we read frames in slot order without a system call, copy each into our own buffer and
//! hand the slot back.
//!
//! ```text
//!   slot i (FRAME_SLOT bytes): tpacket2_hdr | sockaddr_ll | pad | frame (tp_mac .. +tp_snaplen)
//!   tp_status: KERNEL (0) -> the kernel fills it -> USER (bit 0) -> we read it -> KERNEL
//! ```
//!
//! Why V2 and not V3: V3 hands frames over a block at a time, when a block fills or its retire
//! timer (1 ms at the least, in jiffies) fires, so at low rates a frame would wait a millisecond
//! or more before we could see it, and a frame read late is served from when we read it once
//! the link's clock has moved past its stamp. V2 publishes each frame as soon as it is copied
//! (and wakes epoll), with the kernel's receive stamp in its header, like `recvmmsg` did.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

/// `tpacket2_hdr` (linux/if_packet.h): its size and the offsets of the fields we read.
pub const TPACKET2_HDR_LEN: usize = 32;
const OFF_STATUS: usize = 0;
const OFF_LEN: usize = 4;
const OFF_SNAPLEN: usize = 8;
const OFF_MAC: usize = 12;
const OFF_SEC: usize = 16;
const OFF_NSEC: usize = 20;
/// `tp_status` bits: the slot holds a frame for us; otherwise the kernel owns it (0).
pub const TP_STATUS_KERNEL: u32 = 0;
pub const TP_STATUS_USER: u32 = 1;

/// One slot: the header, the `sockaddr_ll` after it and the 16-byte aligned MAC offset take 66
/// bytes before an Ethernet frame, so a 1514-byte frame (MTU 1500) fits in 2048 with room.
pub const FRAME_SLOT: usize = 2048;

/// Where the ring's memory comes from: the kernel's mapping, or a test's buffer.
pub struct RingMemory {
    pub base: *mut u8,
    pub slots: usize,
}

/// A frame the ring handed us: its real length, the bytes captured (`snaplen`, shorter than
/// `len` if the slot was too small) and the kernel's receive stamp.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RingFrame<'a> {
    pub len: usize,
    pub data: &'a [u8],
    pub stamp_realtime_ns: u64,
}

/// Reads a `TPACKET_V2` ring in slot order.
pub struct RxRing {
    mem: RingMemory,
    head: usize,
}

impl RxRing {
    /// # Safety
    /// `mem.base` must point at `mem.slots * FRAME_SLOT` bytes, 16-byte aligned, that stay
    /// valid for the ring's life and that only the kernel's ring protocol writes besides us.
    pub unsafe fn new(mem: RingMemory) -> RxRing {
        RxRing { mem, head: 0 }
    }

    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: i < slots, so the slot lies inside the mapping (constructor's contract).
        unsafe { self.mem.base.add(i * FRAME_SLOT) }
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: tp_status is the slot's first u32, 4-byte aligned (slots are 2048 apart on
        // an aligned base); the kernel writes it concurrently, hence the atomic view.
        unsafe { &*(self.slot(i).add(OFF_STATUS) as *const AtomicU32) }
    }

    fn field_u32(&self, i: usize, off: usize) -> u32 {
        // SAFETY: off + 4 <= TPACKET2_HDR_LEN, inside the slot; the kernel finished writing the
        // header before it published the slot (we read after an Acquire load of the status).
        unsafe { std::ptr::read_unaligned(self.slot(i).add(off) as *const u32) }
    }

    /// The next frame, if the kernel has published one; `release` must follow before the
    /// next call.
    pub fn peek(&self) -> Option<RingFrame<'_>> {
        let status = self.status(self.head).load(Ordering::Acquire);
        if status & TP_STATUS_USER == 0 {
            return None;
        }
        let i = self.head;
        let len = self.field_u32(i, OFF_LEN) as usize;
        let snap = self.field_u32(i, OFF_SNAPLEN) as usize;
        let mac = (self.field_u32(i, OFF_MAC) & 0xffff) as usize;
        // a slot the kernel filled never points outside itself; clamp in case it did
        let start = mac.min(FRAME_SLOT);
        let snap = snap.min(FRAME_SLOT - start);
        // SAFETY: start + snap <= FRAME_SLOT, inside slot i, published to us by the status.
        let data = unsafe { std::slice::from_raw_parts(self.slot(i).add(start), snap) };
        // The kernel always stamps a ring frame (CLOCK_REALTIME): the skb's receive stamp,
        // taken in netif_rx as SO_TIMESTAMPNS has it, or the time of the copy without one.
        let sec = self.field_u32(i, OFF_SEC) as u64;
        let stamp_realtime_ns = sec * 1_000_000_000 + self.field_u32(i, OFF_NSEC) as u64;
        Some(RingFrame {
            len,
            data,
            stamp_realtime_ns,
        })
    }

    /// Hand the frame `peek` returned back to the kernel and move to the next slot.
    pub fn release(&mut self) {
        self.status(self.head)
            .store(TP_STATUS_KERNEL, Ordering::Release);
        self.head = (self.head + 1) % self.mem.slots;
    }
}

/// `struct tpacket_req` for `PACKET_RX_RING`.
#[repr(C)]
pub struct TpacketReq {
    pub block_size: u32,
    pub block_nr: u32,
    pub frame_size: u32,
    pub frame_nr: u32,
}

/// A ring of `slots` frames in blocks of `block_size` bytes (a power-of-two number of pages,
/// a multiple of `FRAME_SLOT`, so slots lie back to back in the mapping).
pub fn request(slots: usize, block_size: usize) -> io::Result<TpacketReq> {
    let per_block = block_size / FRAME_SLOT;
    if per_block == 0 || !block_size.is_multiple_of(FRAME_SLOT) || !slots.is_multiple_of(per_block)
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "ring slots must fill whole blocks",
        ));
    }
    Ok(TpacketReq {
        block_size: block_size as u32,
        block_nr: (slots / per_block) as u32,
        frame_size: FRAME_SLOT as u32,
        frame_nr: slots as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake ring in a u64 buffer (aligned), filled the way the kernel fills slots.
    struct Fake {
        buf: Vec<u64>,
        slots: usize,
    }

    impl Fake {
        fn new(slots: usize) -> Fake {
            Fake {
                buf: vec![0; slots * FRAME_SLOT / 8],
                slots,
            }
        }
        fn bytes(&mut self) -> &mut [u8] {
            // SAFETY: viewing the u64 buffer as bytes, same length in bytes.
            unsafe {
                std::slice::from_raw_parts_mut(self.buf.as_mut_ptr() as *mut u8, self.buf.len() * 8)
            }
        }
        fn put(&mut self, slot: usize, frame: &[u8], len: usize, stamp: (u32, u32)) {
            let mac = 66usize;
            let b = &mut self.bytes()[slot * FRAME_SLOT..(slot + 1) * FRAME_SLOT];
            let snap = frame.len();
            b[mac..mac + snap].copy_from_slice(frame);
            b[OFF_LEN..OFF_LEN + 4].copy_from_slice(&(len as u32).to_ne_bytes());
            b[OFF_SNAPLEN..OFF_SNAPLEN + 4].copy_from_slice(&(snap as u32).to_ne_bytes());
            b[OFF_MAC..OFF_MAC + 2].copy_from_slice(&(mac as u16).to_ne_bytes());
            b[OFF_MAC + 2..OFF_MAC + 4].copy_from_slice(&80u16.to_ne_bytes());
            b[OFF_SEC..OFF_SEC + 4].copy_from_slice(&stamp.0.to_ne_bytes());
            b[OFF_NSEC..OFF_NSEC + 4].copy_from_slice(&stamp.1.to_ne_bytes());
            // a software-stamp flag beside USER, as the kernel sets it
            let status = TP_STATUS_USER | 1 << 29;
            b[..4].copy_from_slice(&status.to_ne_bytes());
        }
        fn status(&mut self, slot: usize) -> u32 {
            let b = &self.bytes()[slot * FRAME_SLOT..];
            u32::from_ne_bytes(b[..4].try_into().unwrap())
        }
        fn ring(&mut self) -> RxRing {
            let mem = RingMemory {
                base: self.buf.as_mut_ptr() as *mut u8,
                slots: self.slots,
            };
            // SAFETY: the buffer outlives the ring in each test and is 8-byte aligned, enough
            // for the u32 fields read here.
            unsafe { RxRing::new(mem) }
        }
    }

    #[test]
    fn an_empty_ring_has_nothing_to_read() {
        let mut f = Fake::new(4);
        assert!(f.ring().peek().is_none());
    }

    #[test]
    fn a_published_frame_reads_with_its_bytes_length_and_kernel_stamp() {
        let mut f = Fake::new(4);
        f.put(0, &[0xab; 60], 60, (1_700_000_000, 123));
        let ring = f.ring();
        let fr = ring.peek().unwrap();
        assert_eq!(fr.len, 60);
        assert_eq!(fr.data, &[0xab; 60][..]);
        assert_eq!(fr.stamp_realtime_ns, 1_700_000_000_000_000_123);
    }

    #[test]
    fn releasing_hands_the_slot_back_and_frames_follow_in_slot_order_around_the_end() {
        let mut f = Fake::new(2);
        f.put(0, &[1; 20], 20, (1, 0));
        f.put(1, &[2; 30], 30, (1, 1));
        let mut ring = f.ring();
        assert_eq!(ring.peek().unwrap().data[0], 1);
        ring.release();
        assert_eq!(ring.peek().unwrap().data[0], 2);
        ring.release();
        // back at slot 0, which we handed back: nothing until the kernel fills it again
        assert!(ring.peek().is_none());
        assert_eq!(f.status(0), TP_STATUS_KERNEL);
        assert_eq!(f.status(1), TP_STATUS_KERNEL);
    }

    #[test]
    fn a_truncated_frame_keeps_its_real_length_beside_the_bytes_captured() {
        let mut f = Fake::new(1);
        f.put(0, &[7; 100], 9000, (1, 0));
        let ring = f.ring();
        let fr = ring.peek().unwrap();
        assert_eq!((fr.len, fr.data.len()), (9000, 100));
    }

    #[test]
    fn a_ring_request_fills_whole_blocks_of_back_to_back_slots() {
        let r = request(8192, 1 << 16).unwrap();
        assert_eq!(
            (r.block_size, r.block_nr, r.frame_size, r.frame_nr),
            (65536, 256, 2048, 8192)
        );
        assert!(request(8191, 1 << 16).is_err());
        assert!(request(8192, 3000).is_err());
    }
}
