//! Stable-Rust randomized robustness test (the cargo-fuzz target in `fuzz/` needs nightly):
//! valid pcap and pcapng captures with every link type are bit-flipped, truncated and spliced
//! with random bytes by a seeded generator; every variant must analyse without panicking, and
//! what the analyzer reports must stay self-consistent. Deterministic (fixed seeds).

use etherparse::{PacketBuilder, TcpOptionElement};
use satcc_pcap::{analyze_bytes, CaptureError, Options};

mod common;
use common::{pcap_header, push_record};

/// xorshift64*: a tiny deterministic generator (test-only; no OS randomness).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn ip_tcp(i: u32, from_client: bool, payload: usize, v6: bool) -> Vec<u8> {
    let (s, d, sp, dp) = if from_client {
        (1u8, 2u8, 40000, 5201)
    } else {
        (2, 1, 5201, 40000)
    };
    let b = if v6 {
        PacketBuilder::ipv6([s; 16], [d; 16], 64)
    } else {
        PacketBuilder::ipv4([10, 0, 0, s], [10, 0, 0, d], 64)
    };
    let b = b
        .tcp(sp, dp, 1000 + i * 100, 65535)
        .ack(5000 + i)
        .options(&[TcpOptionElement::Timestamp(i, i.saturating_sub(1))])
        .unwrap();
    let mut v = Vec::new();
    b.write(&mut v, &vec![0u8; payload]).unwrap();
    v
}

fn link(ip: &[u8], lt: u32) -> Vec<u8> {
    let v6 = ip[0] >> 4 == 6;
    let et: u16 = if v6 { 0x86dd } else { 0x0800 };
    let mut f = Vec::new();
    match lt {
        1 => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0, 7]);
            f.extend_from_slice(&et.to_be_bytes());
        }
        113 => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            f.extend_from_slice(&et.to_be_bytes());
        }
        276 => {
            f.extend_from_slice(&et.to_be_bytes());
            f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        }
        _ => {}
    }
    f.extend_from_slice(ip);
    f
}

fn pcap(lt: u32, n: u32, snap: usize) -> Vec<u8> {
    let mut v = pcap_header(lt);
    for i in 0..n {
        let f = link(
            &ip_tcp(i, i % 3 != 2, if i % 3 == 2 { 0 } else { 1448 }, i % 2 == 0),
            lt,
        );
        let cap = &f[..f.len().min(snap)];
        push_record(
            &mut v,
            1_700_000_000 + i / 10,
            (i % 10) * 100_000,
            cap,
            f.len(),
        );
    }
    v
}

fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let mut b = body.to_vec();
    b.resize(body.len().div_ceil(4) * 4, 0);
    let len = (12 + b.len()) as u32;
    let mut v = Vec::new();
    v.extend_from_slice(&kind.to_le_bytes());
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(&b);
    v.extend_from_slice(&len.to_le_bytes());
    v
}

fn pcapng(lt: u32, n: u32) -> Vec<u8> {
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut v = block(0x0a0d_0d0a, &shb);
    let mut idb = Vec::new();
    idb.extend_from_slice(&(lt as u16).to_le_bytes());
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&262_144u32.to_le_bytes());
    v.extend(block(1, &idb));
    for i in 0..n {
        let f = link(&ip_tcp(i, i % 2 == 0, 100, false), lt);
        let ts = 1_700_000_000_000_000u64 + i as u64 * 1000;
        let mut epb = Vec::new();
        for x in [
            0u32,
            (ts >> 32) as u32,
            ts as u32,
            f.len() as u32,
            f.len() as u32,
        ] {
            epb.extend_from_slice(&x.to_le_bytes());
        }
        epb.extend_from_slice(&f);
        v.extend(block(6, &epb));
    }
    v
}

fn check(data: &[u8]) {
    let opts = Options {
        bin_ns: 10_000_000,
        keep_packets: true,
        keep_rtt_samples: true,
    };
    match analyze_bytes(data, &opts) {
        Ok(a) => {
            let p = a.packets.as_ref().unwrap();
            assert_eq!(
                p.frame.len() as u64,
                a.stats.tcp_packets + a.stats.udp_packets
            );
            let per_flow: u64 = a.flows.iter().map(|f| f.capture.packets).sum();
            assert_eq!(per_flow, a.stats.tcp_packets + a.stats.udp_packets);
            for f in &a.flows {
                assert!(f.columns.retransmitted_packets <= f.columns.sent_packets);
                let binned: u64 = f.bins.payload_bytes.iter().sum();
                assert!(binned <= f.capture.payload_bytes);
                if a.stats.unbinned_packets == 0 {
                    assert_eq!(binned, f.capture.payload_bytes);
                }
            }
        }
        Err(CaptureError::Empty | CaptureError::NotACapture) => {}
        Err(e) => panic!("unexpected error {e}"),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for lt in [1, 101, 113, 276] {
        v.push(pcap(lt, 30, 65535));
        v.push(pcap(lt, 30, 96)); // snap length cuts the payload, not the headers
        v.push(pcapng(lt, 20));
    }
    v
}

#[test]
fn valid_seeds_analyse_cleanly_with_every_link_type() {
    for s in seeds() {
        let a = analyze_bytes(&s, &Options::default()).unwrap();
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        assert!(a.stats.tcp_packets >= 20, "{:?}", a.stats);
    }
}

#[test]
fn every_truncation_point_is_survived() {
    for s in seeds() {
        for cut in 0..s.len() {
            check(&s[..cut]);
        }
    }
}

#[test]
fn random_bit_flips_and_splices_never_panic() {
    let mut rng = Rng(0x5a7c_c0de_1234_5678);
    let seeds = seeds();
    for _ in 0..4000 {
        let mut d = seeds[rng.below(seeds.len())].clone();
        match rng.below(4) {
            0 => {
                for _ in 0..=rng.below(8) {
                    let i = rng.below(d.len());
                    d[i] ^= 1 << rng.below(8);
                }
            }
            1 => {
                let i = rng.below(d.len());
                let n = rng.below(64);
                for k in i..(i + n).min(d.len()) {
                    d[k] = rng.next() as u8;
                }
            }
            2 => {
                // keep the header, replace the body with noise
                let keep = 24.min(d.len());
                d.truncate(keep + rng.below(200));
                let extra = rng.below(400);
                d.extend((0..extra).map(|_| rng.next() as u8));
            }
            _ => {
                let i = rng.below(d.len());
                let j = rng.below(d.len());
                let (a, b) = (i.min(j), i.max(j));
                d.drain(a..b);
            }
        }
        check(&d);
    }
}
