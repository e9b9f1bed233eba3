//! A resolved scenario as the simulator takes it: every unit parsed (ns, bit/s, bytes),
//! every default filled, node names mapped to indices. The Python scenario layer builds
//! it (see `python/satcc/_native.pyi` for the dictionary form).

use satcc_cc::Params;
use satcc_core::dirspec::QueueSpec;
use satcc_core::hostnoise::HostNoise;
use satcc_core::models::ModelSpec;
use satcc_core::routing::{LinkEnds, Routing};
use satcc_core::scenario::{check_flow_sizes, App, Pacing, Proto as ScenarioProto, Resolved};
use satcc_core::SimDuration;

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub name: String,
    pub seed: u64,
    pub duration: SimDuration,
    /// Width of the time-series bins.
    pub bin: SimDuration,
    pub nodes: Vec<String>,
    pub links: Vec<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    /// Turnaround of every host (`satcc_core::hostnoise`): each packet reaching its destination
    /// node is delayed by a draw before the node sees it. `None`: hosts answer instantly.
    pub host_noise: Option<HostNoise>,
}

/// A full-duplex link between nodes `a` and `b`.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub a: usize,
    pub b: usize,
    pub ab: DirConfig,
    pub ba: DirConfig,
}

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct DirConfig {
    pub rate_bps: u64,
    pub delay: SimDuration,
    pub loss: f64,
    /// As written (a hand-built config's "N BDP" is sized by `World::new` along the routes);
    /// from a resolved scenario, the limit the resolver sized.
    pub queue: QueueSpec,
    /// Mark CE (instead of queueing unmarked) at or above this many queued packets.
    pub ecn_threshold_pkts: Option<u64>,
    /// Ordinals (1-based, ascending) of packets this direction drops on the wire, counting
    /// every packet it serialises: deterministic losses, like ns-3's ReceiveListErrorModel.
    pub drop_packets: Vec<u64>,
    /// Extra one-way delay drawn uniformly from [0, jitter) per packet; the wire stays FIFO (a
    /// packet never overtakes an earlier one). Zero draws nothing, so other runs are unchanged.
    pub jitter: SimDuration,
    /// Dummynet-like tick service's period (`satcc_core::direction`); `None`: exact service.
    pub tick: Option<SimDuration>,
    /// A time-varying behaviour (`[link.model]`); `None` keeps `rate_bps`, `delay` and `loss`
    /// constant. With a model, those three are its nominal values: routing and "N BDP" queues
    /// use them, the serialiser, loss and wire follow the model.
    pub model: Option<ModelSpec>,
}

/// Whether the sender paces (Linux internal pacing, `tcp_internal_pacing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingMode {
    /// As Linux without the fq qdisc: only when the algorithm asks (BBR).
    Auto,
    /// Always, as with fq: at the rate `tcp_update_pacing_rate` computes.
    On,
    Off,
}

#[derive(Clone, Debug)]
pub struct FlowConfig {
    pub id: u32,
    pub src: usize,
    pub dst: usize,
    pub cca: String,
    pub params: Params,
    pub start: SimDuration,
    /// Bytes to transfer; `None` for a bulk flow that sends until the end of the run.
    pub size_bytes: Option<u64>,
    /// Payload bytes per segment (Linux `mss_cache`).
    pub mss: u32,
    pub sack: bool,
    pub timestamps: bool,
    pub window_scaling: bool,
    /// The receiver's buffer ceiling in bytes, Linux's `tcp_rmem[2]`: autotuning grows the
    /// buffer up to it, and the window offered is a share of the buffer (tcp/receiver.rs).
    pub rwnd_bytes: u64,
    /// Receive-buffer autotuning (`tcp_moderate_rcvbuf`); false: the buffer is `rwnd_bytes`
    /// from the start and never grows.
    pub rcvbuf_autotune: bool,
    pub ecn: bool,
    pub initial_cwnd: u32,
    pub pacing: PacingMode,
    pub delayed_ack: bool,
    pub min_rto: SimDuration,
    /// Cap on payload bytes sent and not acknowledged (a send buffer); `None`: no cap.
    pub sndbuf_bytes: Option<u64>,
    /// TCP, or a UDP constant-bit-rate flow (`udp.rs`).
    pub proto: Proto,
    /// Bytes a tunnel (VPN) adds to every packet of the flow, both directions.
    pub encap_bytes: u32,
    /// Path MTU: a packet longer than this once encapsulated travels as IP fragments.
    pub mtu: u32,
    /// Linux's per-destination metrics cache (`tcp_no_metrics_save = 0`): a limited transfer
    /// stores its ssthresh when fully acknowledged, and a later flow between the same two
    /// nodes starts with it (`world/metrics.rs`, `tcp_update_metrics` / `tcp_init_metrics`).
    pub metrics_save: bool,
    /// What the application writes (TCP only; `world/app.rs` drives the writes).
    pub app: AppConfig,
    /// `net.ipv4.tcp_slow_start_after_idle`: a write after more than an RTO without sending
    /// restarts cwnd (`tcp_cwnd_restart`). Only writes check it, so bulk flows never do.
    pub slow_start_after_idle: bool,
    /// `TCP_NODELAY` on the sender: Nagle off (Linux's default: on).
    pub nodelay: bool,
}

/// A TCP flow's application (`satcc_core::scenario::App`); times are offsets from the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppConfig {
    /// All data (`size_bytes`, or unlimited) there from the start.
    Bulk,
    /// Writes as fast as the connection takes them for `on`, nothing for `off`, repeated.
    OnOff { on: SimDuration, off: SimDuration },
    /// Writes of `bytes` every `every` from the start.
    Periodic { bytes: u64, every: SimDuration },
    /// Writes of `bytes` at each offset (ascending).
    At { bytes: u64, at: Vec<SimDuration> },
}

impl AppConfig {
    /// Why this application cannot run (the resolver's `App::check`).
    fn check(&self) -> Result<(), String> {
        match self {
            AppConfig::Bulk => Ok(()),
            AppConfig::OnOff { on, off } if on.is_zero() || off.is_zero() => {
                Err("on and off must be > 0".into())
            }
            AppConfig::Periodic { every, .. } if every.is_zero() => Err("every must be > 0".into()),
            AppConfig::Periodic { bytes, .. } | AppConfig::At { bytes, .. } if *bytes == 0 => {
                Err("writes must be > 0 bytes".into())
            }
            AppConfig::At { at, .. } if at.windows(2).any(|w| w[0] > w[1]) => {
                Err("write times must be ascending".into())
            }
            _ => Ok(()),
        }
    }
}

/// What a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Tcp,
    /// UDP datagrams of `payload_bytes` at `rate_bps` of payload (iperf3 -u -b -l).
    Udp {
        rate_bps: u64,
        payload_bytes: u32,
    },
}

/// Ethernet's MTU, the default path MTU.
pub const DEFAULT_MTU: u32 = satcc_core::scenario::DEFAULT_MTU;

impl FlowConfig {
    /// A bulk flow with Linux defaults, for tests.
    pub fn bulk(id: u32, src: usize, dst: usize, cca: &str) -> Self {
        FlowConfig {
            id,
            src,
            dst,
            cca: cca.to_string(),
            params: Params::new(),
            start: SimDuration::ZERO,
            size_bytes: None,
            mss: 1448,
            sack: true,
            timestamps: true,
            window_scaling: true,
            rwnd_bytes: 32 << 20, // Linux 6.16+ net.ipv4.tcp_rmem[2]
            rcvbuf_autotune: true,
            ecn: false,
            initial_cwnd: 10,
            pacing: PacingMode::Auto,
            delayed_ack: true,
            min_rto: SimDuration::from_millis(200),
            sndbuf_bytes: None,
            proto: Proto::Tcp,
            encap_bytes: 0,
            mtu: DEFAULT_MTU,
            metrics_save: false,
            app: AppConfig::Bulk,
            slow_start_after_idle: true,
            nodelay: false,
        }
    }
}

impl DirConfig {
    pub fn new(rate_bps: u64, delay: SimDuration, loss: f64, queue: QueueSpec) -> Self {
        DirConfig {
            rate_bps,
            delay,
            loss,
            queue,
            ecn_threshold_pkts: None,
            drop_packets: Vec::new(),
            jitter: SimDuration::ZERO,
            tick: None,
            model: None,
        }
    }
}

/// A configuration error: which key and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A resolver's error, `key: message`, as a `ConfigError`.
fn resolver_error(e: String) -> ConfigError {
    match e.split_once(": ") {
        Some((key, message)) => ConfigError {
            key: key.into(),
            message: message.into(),
        },
        None => ConfigError {
            key: String::new(),
            message: e,
        },
    }
}

impl SimConfig {
    /// Check a configuration built by hand (tests, benchmarks, the fuzzer) as the resolver
    /// checks a scenario (satcc-core `scenario::resolve`, whose size checks it shares), and
    /// compute its routes. A resolved scenario (`from_resolved`) has passed the resolver's
    /// checks; `World::with_routing` does not repeat them.
    pub fn check(&self) -> Result<Routing, ConfigError> {
        let bad = |key: String, message: &str| ConfigError {
            key,
            message: message.into(),
        };
        if self.bin.is_zero() {
            return Err(bad("scenario.bin".into(), "must be > 0"));
        }
        let n = self.nodes.len();
        for (i, l) in self.links.iter().enumerate() {
            if l.a >= n || l.b >= n {
                return Err(bad(format!("link[{i}]"), "node index out of range"));
            }
            for d in [&l.ab, &l.ba] {
                if d.rate_bps == 0 {
                    return Err(bad(format!("link[{i}].rate"), "must be > 0"));
                }
                if !(0.0..=1.0).contains(&d.loss) {
                    return Err(bad(format!("link[{i}].loss"), "must be in [0, 1]"));
                }
                if d.tick.is_some_and(|t| t.is_zero() || d.model.is_some()) {
                    return Err(bad(
                        format!("link[{i}].tick"),
                        "tick service needs a period > 0 and a link without a model",
                    ));
                }
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.src >= n || f.dst >= n {
                return Err(bad(format!("flow[{i}].from"), "node index out of range"));
            }
            if f.id as usize != i {
                return Err(ConfigError {
                    key: format!("flow[{i}].id"),
                    message: format!("must be {i} (flows are numbered in order)"),
                });
            }
            if f.src == f.dst {
                return Err(bad(
                    format!("flow[{i}].to"),
                    "a flow needs two different nodes",
                ));
            }
            let udp = match f.proto {
                Proto::Tcp => None,
                Proto::Udp {
                    rate_bps,
                    payload_bytes,
                } => Some((rate_bps, payload_bytes)),
            };
            check_flow_sizes(i, f.mss, f.mtu, f.encap_bytes, udp).map_err(resolver_error)?;
            if udp.is_none() {
                f.app.check().map_err(|message| ConfigError {
                    key: format!("flow[{i}].app"),
                    message,
                })?;
            }
        }
        let ends: Vec<LinkEnds> = self
            .links
            .iter()
            .map(|l| LinkEnds {
                a: l.a,
                b: l.b,
                ab_delay: l.ab.delay,
                ba_delay: l.ba.delay,
            })
            .collect();
        let routing = Routing::compute(n, &ends);
        for (i, f) in self.flows.iter().enumerate() {
            if !routing.connected(f.src, f.dst) || !routing.connected(f.dst, f.src) {
                return Err(ConfigError {
                    key: format!("flow[{i}].to"),
                    message: format!(
                        "no route between {} and {}",
                        self.nodes[f.src], self.nodes[f.dst]
                    ),
                });
            }
        }
        Ok(routing)
    }

    /// The simulator's form of a resolved scenario (`satcc_core::scenario`): queue limits
    /// as the resolver sized them, models and algorithm parameters read and checked. Pass
    /// `resolved.routing` to `World::with_routing` to walk the resolver's routes.
    pub fn from_resolved(r: &Resolved) -> Result<SimConfig, ConfigError> {
        let s = &r.scenario;
        let bad = |key: String| move |message: String| ConfigError { key, message };
        let mut links = Vec::with_capacity(s.links.len());
        for (i, l) in s.links.iter().enumerate() {
            let dir = |k: usize, name: &str, d: &satcc_core::dirspec::Direction| {
                let path = format!("link[{i}].{name}");
                let spec = d.spec(&path).map_err(bad(path.clone()))?;
                Ok::<_, ConfigError>(DirConfig {
                    rate_bps: spec.state.rate_bps,
                    delay: spec.state.delay,
                    loss: spec.state.loss,
                    queue: r.queue(k).into(),
                    ecn_threshold_pkts: spec.ecn_threshold_pkts,
                    drop_packets: spec.drop_packets,
                    jitter: spec.jitter,
                    tick: spec.tick,
                    model: match &spec.model {
                        Some(m) => Some(
                            satcc_core::models::spec::from_json(m, &format!("{path}.model"))
                                .map_err(bad(format!("{path}.model")))?,
                        ),
                        None => None,
                    },
                })
            };
            links.push(LinkConfig {
                a: l.a,
                b: l.b,
                ab: dir(2 * i, "ab", &l.ab)?,
                ba: dir(2 * i + 1, "ba", &l.ba)?,
            });
        }
        let mut flows = Vec::with_capacity(s.flows.len());
        for (i, f) in s.flows.iter().enumerate() {
            let params = match &f.cc {
                Some(t) => Params::from_json(t).map_err(bad(format!("flow[{i}].cc")))?,
                None => Params::new(),
            };
            flows.push(FlowConfig {
                id: f.id,
                src: f.src,
                dst: f.dst,
                cca: f.cca.clone(),
                params,
                start: SimDuration::from_nanos(f.start_ns),
                size_bytes: f.size_bytes,
                mss: f.mss,
                sack: f.sack,
                timestamps: f.timestamps,
                window_scaling: f.window_scaling,
                rwnd_bytes: f.rwnd_bytes,
                rcvbuf_autotune: f.rcvbuf_autotune,
                ecn: f.ecn,
                initial_cwnd: f.initial_cwnd,
                pacing: match f.pacing {
                    Pacing::Auto => PacingMode::Auto,
                    Pacing::On => PacingMode::On,
                    Pacing::Off => PacingMode::Off,
                },
                delayed_ack: f.delayed_ack,
                min_rto: SimDuration::from_nanos(f.min_rto_ns),
                sndbuf_bytes: f.sndbuf_bytes,
                proto: match (f.proto, f.udp_rate_bps, f.udp_payload_bytes) {
                    (Some(ScenarioProto::Udp), Some(rate_bps), Some(payload_bytes)) => Proto::Udp {
                        rate_bps,
                        payload_bytes,
                    },
                    (Some(ScenarioProto::Udp), ..) => {
                        return Err(ConfigError {
                            key: format!("flow[{i}]"),
                            message: "a UDP flow needs udp_rate_bps and udp_payload_bytes".into(),
                        })
                    }
                    _ => Proto::Tcp,
                },
                encap_bytes: f.encap_bytes,
                mtu: f.mtu,
                metrics_save: f.metrics_save,
                app: match &f.app {
                    None | Some(App::Bulk) => AppConfig::Bulk,
                    Some(App::Onoff { on_ns, off_ns }) => AppConfig::OnOff {
                        on: SimDuration::from_nanos(*on_ns),
                        off: SimDuration::from_nanos(*off_ns),
                    },
                    Some(App::Requests {
                        bytes,
                        every_ns: Some(every),
                        ..
                    }) => AppConfig::Periodic {
                        bytes: *bytes,
                        every: SimDuration::from_nanos(*every),
                    },
                    Some(App::Requests { bytes, at_ns, .. }) => AppConfig::At {
                        bytes: *bytes,
                        at: at_ns.iter().map(|&t| SimDuration::from_nanos(t)).collect(),
                    },
                },
                slow_start_after_idle: f.slow_start_after_idle,
                nodelay: f.nodelay,
            });
        }
        Ok(SimConfig {
            name: s.name.clone(),
            seed: s.seed,
            duration: SimDuration::from_nanos(s.duration_ns),
            bin: SimDuration::from_nanos(s.bin_ns),
            nodes: s.nodes.clone(),
            links,
            flows,
            host_noise: match &s.host_noise_quantiles_ns {
                Some(h) => Some(h.build().map_err(bad("host_noise_quantiles_ns".into()))?),
                None => None,
            },
        })
    }
}
