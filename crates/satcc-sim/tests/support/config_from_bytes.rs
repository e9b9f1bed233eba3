//! A `SimConfig` from arbitrary bytes, biased towards the values that break code: zero, one,
//! the type's maximum, NaN, negative and out-of-range indices. Shared by the stable randomized
//! test (`tests/hostile_config.rs`) and the cargo-fuzz target (`fuzz/fuzz_targets/config.rs`).
//! Durations stay short and bins coarse, so a run that the simulator accepts also finishes.

use satcc_cc::params::ParamValue;
use satcc_cc::Params;
use satcc_core::hostnoise::{HostNoise, Turnaround};
use satcc_core::SimDuration;
use satcc_sim::{
    AppConfig, DirConfig, FlowConfig, LinkConfig, PacingMode, Proto, QueueSpec, SimConfig,
};

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

    fn dir(&mut self) -> DirConfig {
        DirConfig {
            rate_bps: self.pick(1_000_000_000, u64::MAX),
            delay: SimDuration::from_nanos(self.pick(100_000_000, u64::MAX)),
            loss: self.f64(),
            queue: match self.byte() % 3 {
                0 => QueueSpec::Packets(self.pick(2_000, u64::MAX)),
                1 => QueueSpec::Bytes(self.pick(3_000_000, u64::MAX)),
                _ => QueueSpec::Bdp(self.f64() * 4.0),
            },
            ecn_threshold_pkts: if self.bool() {
                Some(self.pick(100, u64::MAX))
            } else {
                None
            },
            drop_packets: (0..self.byte() % 3)
                .map(|_| self.pick(100, u64::MAX))
                .collect(),
            jitter: SimDuration::from_nanos(self.pick(10_000_000, u64::MAX)),
            tick: None,
            model: None,
        }
    }
}

const CCAS: &[&str] = &[
    "reno", "cubic", "bbr", "bbr3", "hybla", "vegas", "dctcp", "newreno", "nope", "",
];

pub fn config(data: &[u8]) -> SimConfig {
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
        .map(|_| LinkConfig {
            a: wild(&mut b, nodes),
            b: wild(&mut b, nodes),
            ab: b.dir(),
            ba: b.dir(),
        })
        .collect();
    let flows = (0..b.byte() % 4)
        .map(|i| {
            let mut params = Params::new();
            if b.bool() {
                params.insert("beta", ParamValue::Num(b.f64()));
            }
            FlowConfig {
                id: if b.byte().is_multiple_of(8) {
                    b.u64() as u32
                } else {
                    i as u32
                },
                src: wild(&mut b, nodes),
                dst: wild(&mut b, nodes),
                cca: CCAS[(b.byte() as usize) % CCAS.len()].to_string(),
                params,
                start: SimDuration::from_nanos(b.pick(1_000_000_000, u64::MAX)),
                size_bytes: if b.bool() {
                    Some(b.pick(1_000_000, u64::MAX))
                } else {
                    None
                },
                mss: b.pick(2_000, u32::MAX as u64) as u32,
                sack: b.bool(),
                timestamps: b.bool(),
                window_scaling: b.bool(),
                rwnd_bytes: b.pick(10_000_000, u64::MAX),
                ecn: b.bool(),
                initial_cwnd: b.pick(20, u32::MAX as u64) as u32,
                pacing: [PacingMode::Auto, PacingMode::On, PacingMode::Off]
                    [(b.byte() % 3) as usize],
                delayed_ack: b.bool(),
                min_rto: SimDuration::from_nanos(b.pick(1_000_000_000, u64::MAX)),
                sndbuf_bytes: if b.bool() {
                    Some(b.pick(1_000_000, u64::MAX))
                } else {
                    None
                },
                proto: if b.byte().is_multiple_of(4) {
                    Proto::Udp {
                        rate_bps: b.pick(10_000_000, u64::MAX),
                        payload_bytes: b.pick(2_000, u32::MAX as u64) as u32,
                    }
                } else {
                    Proto::Tcp
                },
                encap_bytes: b.pick(100, u32::MAX as u64) as u32,
                mtu: b.pick(2_000, u32::MAX as u64) as u32,
                metrics_save: b.bool(),
                rcvbuf_autotune: b.bool(),
                app: AppConfig::Bulk,
                slow_start_after_idle: true,
                nodelay: false,
            }
        })
        .collect();
    SimConfig {
        name: "hostile".into(),
        seed: b.u64(),
        duration: SimDuration::from_nanos(1 + b.u64() % 300_000_000), // up to 0.3 s
        bin: SimDuration::from_nanos(10_000_000 * (1 + b.u64() % 10)), // 10..100 ms
        nodes: (0..nodes).map(|i| format!("n{i}")).collect(),
        links,
        flows,
        host_noise: match b.byte() % 3 {
            0 => None,
            1 => Some(HostNoise::kernel()),
            _ => {
                let t = Turnaround::uniform(SimDuration::from_nanos(b.pick(1_000_000, u64::MAX)));
                Some(HostNoise {
                    sender: t.clone(),
                    receiver: t,
                })
            }
        },
    }
}
