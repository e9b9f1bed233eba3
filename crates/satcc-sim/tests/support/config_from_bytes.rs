//! A scenario (`satcc_core::scenario::Scenario`, what the resolver takes) from arbitrary bytes,
//! biased towards the values that break code: zero, one, the type's maximum, NaN, negative and
//! out-of-range indices. Shared by the stable randomized test (`tests/hostile_config.rs`) and
//! the cargo-fuzz target (`fuzz/fuzz_targets/config.rs`). Durations stay short and bins
//! coarse, so a run that the resolver and the simulator accept also finishes.

use satcc_core::dirspec::{Direction, QueueDrop, QueueSpec};
use satcc_core::scenario::file::{Nanos, Pkts};
use satcc_core::scenario::switches::Key;
use satcc_core::scenario::{Flow, HostNoiseSpec, Link, Pacing, Proto, Scenario};

pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(std::array::from_fn(|_| self.byte()))
    }

    /// 0, 1, the maximum, `small` or anything.
    fn pick(&mut self, small: u64, max: u64) -> u64 {
        match self.byte() % 6 {
            0 => 0,
            1 => 1,
            2 => max,
            3 | 4 => self.u64() % small.max(1),
            _ => self.u64() % max.max(1),
        }
    }

    fn f64(&mut self) -> f64 {
        match self.byte() % 8 {
            0 => f64::NAN,
            1 => -1.0,
            2 => f64::INFINITY,
            3 => 0.0,
            4 => 1.0,
            _ => (self.byte() as f64) / 255.0,
        }
    }

    fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    fn dir(&mut self) -> Direction {
        let rate_bps = self.pick(1_000_000_000, u64::MAX);
        let delay_ns = self.pick(100_000_000, u64::MAX);
        let loss = self.f64();
        // the queue's byte also picks its drop (its high bit), so the bytes read stay as they were
        let q = self.byte();
        let queue = match q % 3 {
            0 => QueueSpec::Packets(self.pick(2_000, u64::MAX)),
            1 => QueueSpec::Bytes(self.pick(3_000_000, u64::MAX)),
            _ => QueueSpec::Bdp(self.f64() * 4.0),
        };
        let ecn = if self.bool() {
            Some(Pkts(self.pick(100, u64::MAX)))
        } else {
            None
        };
        let drop_packets = Some(
            (0..self.byte() % 3)
                .map(|_| self.pick(100, u64::MAX))
                .collect(),
        );
        let jitter = Nanos(self.pick(10_000_000, u64::MAX));
        Direction {
            drop: Key::new(if q & 0x80 != 0 {
                QueueDrop::Front
            } else {
                QueueDrop::Tail
            }),
            ecn_threshold: Key::new(ecn),
            jitter: Key::new(jitter),
            drop_packets,
            ..Direction::new(rate_bps, delay_ns, loss, queue)
        }
    }
}

const CCAS: &[&str] = &[
    "reno", "cubic", "bbr", "bbr3", "hybla", "vegas", "dctcp", "newreno", "nope", "",
];

pub fn config(data: &[u8]) -> Scenario {
    let mut b = Bytes(data);
    let nodes = 1 + (b.byte() % 4) as usize;
    let wild = |b: &mut Bytes, n: usize| {
        if b.byte().is_multiple_of(8) {
            b.pick(10, usize::MAX as u64) as usize
        } else {
            (b.byte() as usize) % n
        }
    };
    let links = (0..b.byte() % 4)
        .map(|_| Link {
            a: wild(&mut b, nodes),
            b: wild(&mut b, nodes),
            ab: b.dir(),
            ba: b.dir(),
        })
        .collect();
    let flows = (0..b.byte() % 4)
        .map(|i| {
            let beta = b.bool().then(|| b.f64());
            let mut f = Flow::bulk(0, 0, 0, "");
            f.id = if b.byte().is_multiple_of(8) {
                b.u64() as u32
            } else {
                i as u32
            };
            f.src = wild(&mut b, nodes);
            f.dst = wild(&mut b, nodes);
            f.cca = CCAS[(b.byte() as usize) % CCAS.len()].to_string();
            if let Some(beta) = beta {
                // a NaN or infinity is JSON's null: refused by the algorithm's registry
                f.set_cc("beta", beta);
            }
            f.start_ns = b.pick(1_000_000_000, u64::MAX);
            f.size_bytes = if b.bool() {
                Some(b.pick(1_000_000, u64::MAX))
            } else {
                None
            };
            f.mss = b.pick(2_000, u32::MAX as u64) as u32;
            f.sack = b.bool();
            f.timestamps = b.bool();
            f.window_scaling = b.bool();
            f.rwnd_bytes = b.pick(10_000_000, u64::MAX);
            f.ecn = b.bool();
            f.initial_cwnd = b.pick(20, u32::MAX as u64) as u32;
            f.pacing = [Pacing::Auto, Pacing::On, Pacing::Off][(b.byte() % 3) as usize];
            f.delayed_ack = b.bool();
            f.min_rto = Key::new(Nanos(b.pick(1_000_000_000, u64::MAX)));
            f.sndbuf_bytes = if b.bool() {
                Some(b.pick(1_000_000, u64::MAX))
            } else {
                None
            };
            if b.byte().is_multiple_of(4) {
                f.proto = Some(Proto::Udp);
                f.udp_rate_bps = Some(b.pick(10_000_000, u64::MAX));
                f.udp_payload_bytes = Some(b.pick(2_000, u32::MAX as u64) as u32);
            }
            f.encap_bytes = b.pick(100, u32::MAX as u64) as u32;
            f.mtu = b.pick(2_000, u32::MAX as u64) as u32;
            f.metrics_save = b.bool();
            f.rcvbuf_autotune = b.bool();
            f
        })
        .collect();
    let mut s = Scenario::new("hostile", &[], links, flows, 0);
    s.seed = b.u64();
    s.duration_ns = 1 + b.u64() % 300_000_000; // up to 0.3 s
    s.bin_ns = 10_000_000 * (1 + b.u64() % 10); // 10..100 ms
    s.nodes = (0..nodes).map(|i| format!("n{i}")).collect();
    s.host_noise_quantiles_ns = match b.byte() % 3 {
        0 => None,
        1 => Some(HostNoiseSpec::kernel()),
        _ => {
            let t = vec![(0.0, 0), (1.0, b.pick(1_000_000, u64::MAX))];
            Some(HostNoiseSpec {
                sender: t.clone(),
                receiver: t,
            })
        }
    };
    s
}
