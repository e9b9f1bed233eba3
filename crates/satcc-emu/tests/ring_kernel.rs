//! The receive ring against the real kernel (root only; skipped otherwise): a frame sent on one
//! end of a veth pair, in a network namespace of the test's own, comes out of the other end's
//! ring intact, with the kernel's receive stamp, and a socket does not read back what it sent.

use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use satcc_emu::sock::{PacketSocket, RxMeta, FRAME_BUF};

/// An EtherType for local experiments (IEEE 802 "local experimental"): no stack answers it.
const ETHERTYPE_TEST: [u8; 2] = [0x88, 0xb5];
const RING_SLOTS: usize = 64;

fn ip(args: &[&str]) {
    let ok = Command::new("ip").args(args).status().map(|s| s.success());
    assert_eq!(ok.ok(), Some(true), "ip {args:?}");
}

fn test_frame() -> Vec<u8> {
    let mut f = vec![0xff; 6]; // broadcast
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&ETHERTYPE_TEST);
    f.extend((0..100u8).map(|i| i.wrapping_mul(7)));
    f
}

/// Frames of the test's EtherType read from `s` within `wait`.
fn read_test_frames(s: &mut PacketSocket, wait: Duration) -> Vec<(Vec<u8>, RxMeta)> {
    let mut bufs: Vec<Vec<u8>> = (0..8).map(|_| vec![0u8; FRAME_BUF]).collect();
    let mut meta = vec![RxMeta::default(); 8];
    let mut out = Vec::new();
    let until = Instant::now() + wait;
    while Instant::now() < until {
        let got = s.recv_batch(&mut bufs, &mut meta).unwrap();
        for i in 0..got {
            if bufs[i][12..14] == ETHERTYPE_TEST {
                out.push((bufs[i][..meta[i].captured].to_vec(), meta[i]));
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    out
}

#[test]
fn a_frame_sent_on_one_veth_end_comes_out_of_the_other_ends_ring_intact_and_stamped() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root");
        return;
    }
    // A thread of its own: unshare moves only this thread into the new namespace, and the
    // namespace (with its veths) goes away when the thread and its sockets are gone.
    std::thread::spawn(|| {
        // SAFETY: unshare with a flag, on this thread only.
        assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0, "unshare");
        ip(&["link", "add", "rt0", "type", "veth", "peer", "name", "rt1"]);
        ip(&["link", "set", "rt0", "up"]);
        ip(&["link", "set", "rt1", "up"]);
        let mut a = PacketSocket::open("rt0", true, RING_SLOTS).unwrap();
        let mut b = PacketSocket::open("rt1", true, RING_SLOTS).unwrap();
        assert!(a.has_ring() && b.has_ring());
        let frame = test_frame();
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let sent = a.send_batch([frame.as_slice()].into_iter()).unwrap();
        assert_eq!(sent, 1);
        let got = read_test_frames(&mut b, Duration::from_millis(200));
        assert_eq!(got.len(), 1, "one frame through the ring");
        let (bytes, meta) = &got[0];
        assert_eq!(bytes, &frame);
        assert_eq!(meta.len, frame.len());
        let stamp = Duration::from_nanos(meta.stamp_realtime_ns.expect("a kernel stamp"));
        assert!(
            stamp + Duration::from_millis(1) >= before,
            "{stamp:?} vs {before:?}"
        );
        assert!(
            stamp < before + Duration::from_secs(1),
            "{stamp:?} vs {before:?}"
        );
        // the sender's own socket does not see its outgoing frame
        assert!(read_test_frames(&mut a, Duration::from_millis(50)).is_empty());
    })
    .join()
    .unwrap();
}
