//! AF_PACKET sockets on the emulator's veth ends: batched non-blocking receive with the
//! kernel's receive timestamp (from a mapped `TPACKET_V2` ring, `ring.rs`, or by `recvmmsg`
//! where the kernel refuses a ring), batched send, and the kernel's drop counter.
//!
//! One `SOCK_RAW` socket per interface, bound to it for `ETH_P_ALL`, so it sees every frame the
//! node's end of the veth sends (ARP included: the emulator is a wire, not a router). Frames we
//! send on the same socket are not looped back to it (`PACKET_IGNORE_OUTGOING`, Linux 4.20).
//! The socket is created with protocol 0 and only then bound with `ETH_P_ALL`, so it never
//! queues frames from other interfaces in between (the ring is set up before the bind, too).
//! Receive buffers and rings are large (`SO_RCVBUFFORCE`, `rx_ring_slots`), because the emulator's own queue is the only queue that should ever
//! drop; `PACKET_STATISTICS` reports any frame the socket dropped (emulator-induced loss).

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::RawFd;

use crate::ring::{self, RingMemory, RxRing};

/// Largest frame the emulator carries: MTU 1500 + 14 Ethernet header fits; anything larger
/// means GSO/GRO/TSO is on somewhere and is counted as oversize and dropped.
pub const FRAME_BUF: usize = 2048;
/// Socket buffer sizes (bytes, before the kernel's doubling): a few tens of ms at 1 Gbit/s.
const SOCKET_BUFFER: libc::c_int = 32 << 20;
/// Bytes of control data per message: one `SCM_TIMESTAMPNS` (cmsghdr 16 + timespec 16).
const CONTROL_BYTES: usize = 64;
/// `linux/if_packet.h` options not exported by every libc crate version.
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V2: libc::c_int = 1;
/// Receive ring slots per socket, at most: 16384 frames of up to 2 KiB (32 MiB, what the socket
/// buffer held before), ≈ 25 ms of the most this machine forwards (≈ 650 kframes/s), so a
/// stalled pass does not lose frames.
pub const RX_RING_SLOTS_MAX: usize = 16384;
/// At least one block's worth per socket, however many links share the budget.
const RX_RING_SLOTS_MIN: usize = RX_RING_BLOCK / ring::FRAME_SLOT;
/// All sockets' rings together (the kernel allocates them up front): 256 MiB, the largest
/// rings for up to 4 links, smaller ones beyond, rather than gigabytes for a large topology.
const RX_RING_BUDGET: usize = 256 << 20;
/// Blocks of 64 KiB (order-4 pages) hold 32 slots each.
const RX_RING_BLOCK: usize = 1 << 16;

/// Ring slots for each of `sockets` sockets: the budget shared, whole blocks, within bounds.
pub fn rx_ring_slots(sockets: usize) -> usize {
    let share = RX_RING_BUDGET / ring::FRAME_SLOT / sockets.max(1);
    let whole = share / RX_RING_SLOTS_MIN * RX_RING_SLOTS_MIN;
    whole.clamp(RX_RING_SLOTS_MIN, RX_RING_SLOTS_MAX)
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setopt(fd: RawFd, level: libc::c_int, name: libc::c_int, val: libc::c_int) -> io::Result<()> {
    // SAFETY: passing a pointer to a live c_int and its size.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &val as *const _ as *const libc::c_void,
            size_of::<libc::c_int>() as u32,
        )
    })
    .map(|_| ())
}

/// The index of interface `name` in the current network namespace.
pub fn ifindex(name: &str) -> io::Result<i32> {
    let c = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL"))?;
    // SAFETY: a valid NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface {name} in this namespace"),
        ))
    } else {
        Ok(i as i32)
    }
}

/// One bound AF_PACKET socket.
pub struct PacketSocket {
    fd: RawFd,
    pub ifname: String,
    /// The message headers, I/O vectors and control buffers of a batch, allocated once: a
    /// receive or send re-points them at the caller's buffers and allocates nothing.
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
    control: Vec<u8>,
    /// The mapped receive ring, if the socket has one (else frames come by `recvmmsg`).
    ring: Option<MappedRing>,
}

/// A receive ring and the mapping it lives in.
struct MappedRing {
    ring: RxRing,
    base: *mut libc::c_void,
    bytes: usize,
}

/// One received frame's length (the real one, even if truncated), the bytes of it we have, and
/// kernel timestamp.
#[derive(Clone, Copy, Debug, Default)]
pub struct RxMeta {
    pub len: usize,
    pub captured: usize,
    /// `CLOCK_REALTIME` ns of the kernel's receive stamp, if it gave one.
    pub stamp_realtime_ns: Option<u64>,
}

impl PacketSocket {
    /// `qdisc_bypass`: frames we send skip our end's qdisc and the packet taps, as the
    /// emulator wants; without it a capture in the emulator's namespace sees them too.
    /// `ring_slots` > 0: receive through a mapped `TPACKET_V2` ring of that many slots (no
    /// system call per batch, see `ring`), falling back to `recvmmsg` if the kernel refuses it.
    pub fn open(ifname: &str, qdisc_bypass: bool, ring_slots: usize) -> io::Result<PacketSocket> {
        let index = ifindex(ifname)?;
        // SAFETY: plain socket(2) call.
        let fd = cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })?;
        let mut s = PacketSocket {
            fd,
            ifname: ifname.to_string(),
            iov: Vec::new(),
            msgs: Vec::new(),
            control: Vec::new(),
            ring: None,
        };
        setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, SOCKET_BUFFER)?;
        setopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, SOCKET_BUFFER)?;
        setopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
        setopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
        // Frames we send skip the (noqueue) qdisc of our end: nothing but us shapes them.
        if qdisc_bypass {
            let _ = setopt(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, 1);
        }
        if ring_slots > 0 {
            // before bind: no frame is queued outside the ring in between
            s.ring = map_rx_ring(fd, ring_slots)
                .map_err(|e| eprintln!("satcc-linkd: note: {ifname}: no receive ring ({e})"))
                .ok();
        }
        // SAFETY: zeroed sockaddr_ll is a valid value; we fill the fields bind needs.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = index;
        // SAFETY: sll is a valid sockaddr_ll and the length matches.
        cvt(unsafe {
            libc::bind(
                fd,
                &sll as *const _ as *const libc::sockaddr,
                size_of::<libc::sockaddr_ll>() as u32,
            )
        })?;
        Ok(s)
    }

    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// Whether frames come through a mapped ring (else by `recvmmsg`).
    pub fn has_ring(&self) -> bool {
        self.ring.is_some()
    }

    /// The batch's headers for `n` messages, each with one I/O vector (and, for a receive, a
    /// control buffer); grows the storage on the first call for a larger batch only.
    fn headers(&mut self, n: usize, with_control: bool) {
        if self.msgs.len() < n {
            // SAFETY: an all-zero iovec / mmsghdr is a valid (empty) value.
            self.iov.resize(n, unsafe { zeroed() });
            self.msgs.resize(n, unsafe { zeroed() });
            self.control.resize(CONTROL_BYTES * n, 0);
        }
        for i in 0..n {
            let h = &mut self.msgs[i];
            h.msg_len = 0;
            h.msg_hdr.msg_iov = &mut self.iov[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_flags = 0;
            if with_control {
                h.msg_hdr.msg_control =
                    self.control[i * CONTROL_BYTES..].as_mut_ptr() as *mut libc::c_void;
                h.msg_hdr.msg_controllen = CONTROL_BYTES;
            } else {
                h.msg_hdr.msg_control = std::ptr::null_mut();
                h.msg_hdr.msg_controllen = 0;
            }
        }
    }

    /// Receive up to `bufs.len()` frames without blocking; returns how many arrived (0 if
    /// none). Each buffer must hold `FRAME_BUF` bytes; `meta[i].len` may exceed it (truncated).
    pub fn recv_batch(&mut self, bufs: &mut [Vec<u8>], meta: &mut [RxMeta]) -> io::Result<usize> {
        let n = bufs.len().min(meta.len());
        if let Some(r) = &mut self.ring {
            return Ok(read_ring(&mut r.ring, &mut bufs[..n], meta));
        }
        self.headers(n, true);
        for (v, b) in self.iov.iter_mut().zip(&mut bufs[..n]) {
            v.iov_base = b.as_mut_ptr() as *mut libc::c_void;
            v.iov_len = FRAME_BUF.min(b.len());
        }
        // SAFETY: the first n headers point at live iovecs (the caller's buffers, of the
        // stated sizes) and at control buffers of CONTROL_BYTES each.
        let got = unsafe {
            libc::recvmmsg(
                self.fd,
                self.msgs.as_mut_ptr(),
                n as u32,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock {
                Ok(0)
            } else {
                Err(e)
            };
        }
        for (m, h) in meta.iter_mut().zip(&self.msgs[..got as usize]) {
            *m = RxMeta {
                len: h.msg_len as usize,
                captured: (h.msg_len as usize).min(FRAME_BUF),
                stamp_realtime_ns: stamp(&h.msg_hdr),
            };
        }
        Ok(got as usize)
    }

    /// Send frames; returns how many the kernel took (the rest hit a full buffer).
    pub fn send_batch<'a>(
        &mut self,
        frames: impl ExactSizeIterator<Item = &'a [u8]>,
    ) -> io::Result<usize> {
        let n = frames.len();
        if n == 0 {
            return Ok(0);
        }
        self.headers(n, false);
        for (v, f) in self.iov.iter_mut().zip(frames) {
            v.iov_base = f.as_ptr() as *mut libc::c_void;
            v.iov_len = f.len();
        }
        let mut sent = 0usize;
        while sent < n {
            // SAFETY: headers sent..n point at live iovecs over the caller's frames (which
            // outlive this call); the socket is bound, so no address.
            let r = unsafe {
                libc::sendmmsg(
                    self.fd,
                    self.msgs[sent..].as_mut_ptr(),
                    (n - sent) as u32,
                    libc::MSG_DONTWAIT,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => return Ok(sent),
                    _ if e.raw_os_error() == Some(libc::ENOBUFS) => return Ok(sent),
                    _ => return Err(e),
                }
            }
            if r == 0 {
                break;
            }
            sent += r as usize;
        }
        Ok(sent)
    }

    /// Frames received and frames the kernel dropped for lack of room since the last call
    /// (`PACKET_STATISTICS` resets on read).
    pub fn take_stats(&self) -> (u64, u64) {
        #[repr(C)]
        struct TpacketStats {
            tp_packets: u32,
            tp_drops: u32,
        }
        let mut st = TpacketStats {
            tp_packets: 0,
            tp_drops: 0,
        };
        let mut len = size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: st is a writable struct of the stated length.
        let r = unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                &mut st as *mut _ as *mut libc::c_void,
                &mut len,
            )
        };
        if r < 0 {
            return (0, 0);
        }
        (st.tp_packets as u64, st.tp_drops as u64)
    }
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        if let Some(r) = self.ring.take() {
            // SAFETY: the mapping we made in map_rx_ring, unmapped once (the ring goes with it).
            unsafe { libc::munmap(r.base, r.bytes) };
        }
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.fd) };
    }
}

/// Give `fd` a `TPACKET_V2` receive ring and map it.
fn map_rx_ring(fd: RawFd, slots: usize) -> io::Result<MappedRing> {
    setopt(fd, libc::SOL_PACKET, PACKET_VERSION, TPACKET_V2)?;
    let req = ring::request(slots, RX_RING_BLOCK)?;
    // SAFETY: req is a live tpacket_req of the stated size.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_PACKET,
            PACKET_RX_RING,
            &req as *const _ as *const libc::c_void,
            size_of::<ring::TpacketReq>() as u32,
        )
    })?;
    let bytes = slots * ring::FRAME_SLOT;
    // SAFETY: mapping the ring the kernel just allocated for fd, shared, at offset 0.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mem = RingMemory {
        base: base as *mut u8,
        slots,
    };
    // SAFETY: the mapping is page-aligned, slots * FRAME_SLOT bytes, lives until Drop
    // unmaps it together with the ring, and only the kernel's ring protocol writes it.
    let ring = unsafe { RxRing::new(mem) };
    Ok(MappedRing { ring, base, bytes })
}

/// Copy up to `bufs.len()` published frames out of the ring into `bufs` (each `FRAME_BUF`
/// long), handing each slot straight back; returns how many.
fn read_ring(ring: &mut RxRing, bufs: &mut [Vec<u8>], meta: &mut [RxMeta]) -> usize {
    let mut got = 0;
    while got < bufs.len() {
        let Some(f) = ring.peek() else { break };
        let buf = &mut bufs[got];
        let captured = f.data.len().min(buf.len());
        buf[..captured].copy_from_slice(&f.data[..captured]);
        meta[got] = RxMeta {
            len: f.len,
            captured,
            stamp_realtime_ns: Some(f.stamp_realtime_ns),
        };
        ring.release();
        got += 1;
    }
    got
}

/// The `SCM_TIMESTAMPNS` control message of a received message, as realtime nanoseconds.
fn stamp(h: &libc::msghdr) -> Option<u64> {
    // SAFETY: the kernel filled msg_control up to msg_controllen with well-formed cmsgs; the
    // CMSG_* helpers stay inside it.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}

/// Enter the network namespace mounted at `/run/netns/<name>` (as `ip netns` names them).
pub fn enter_netns(name: &str) -> io::Result<()> {
    if name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "namespace name has a '/'",
        ));
    }
    let path = CString::new(format!("/run/netns/{name}")).expect("no NUL in a checked name");
    // SAFETY: valid path; the fd is closed below.
    let fd = cvt(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })
        .map_err(|e| io::Error::new(e.kind(), format!("network namespace {name}: {e}")))?;
    // SAFETY: fd is a namespace file descriptor.
    let r = cvt(unsafe { libc::setns(fd, libc::CLONE_NEWNET) });
    // SAFETY: we own fd.
    unsafe { libc::close(fd) };
    r.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_take_the_largest_size_for_a_few_links_and_share_the_budget_beyond() {
        assert_eq!(rx_ring_slots(2), RX_RING_SLOTS_MAX);
        assert_eq!(rx_ring_slots(8), RX_RING_SLOTS_MAX);
        assert_eq!(rx_ring_slots(16), 8192);
        assert_eq!(rx_ring_slots(20) % RX_RING_SLOTS_MIN, 0);
        assert!(rx_ring_slots(20) * 20 * ring::FRAME_SLOT <= RX_RING_BUDGET);
        assert_eq!(rx_ring_slots(512), 256);
        assert_eq!(rx_ring_slots(10_000), RX_RING_SLOTS_MIN);
    }
}
