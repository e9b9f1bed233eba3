//! The resolved scenario, defined once: what the Python scenario layer hands over after
//! validating the TOML ([`Scenario`]: every unit parsed to ns, bit/s and bytes, every default
//! filled, `count` expanded, nodes as indices), and what [`resolve`] returns for every engine
//! ([`Resolved`]: the same, checked, plus the routes, each flow's path and every direction's
//! largest crossing RTT, what sizes an "N BDP" queue). The simulator (`satcc-sim`
//! `World::new(&Resolved)`), satcc-linkd (its JSON input carries the resolved scenario, read
//! back as it is by [`ResolvedLinks`], not resolved again) and the model engine (through the
//! bindings) all read this one form, each link direction through [`Resolved::direction`];
//! each key is documented at its field here (the switches in `switches`), and
//! `python/satcc/_native.pyi` points here rather than spelling them. Scenarios built in code (tests,
//! benchmarks, the fuzzer) use the constructors of `build` (the scenario's defaults).
//!
//! On the wire (JSON and the Python dictionary) a `Resolved` is the scenario's keys plus one
//! more, `routes`.

#[macro_use]
pub mod switches;
mod build;
pub mod file;
pub mod text;

pub use build::{
    DEFAULT_BIN_NS, DEFAULT_INITIAL_CWND, DEFAULT_MIN_RTO_NS, DEFAULT_MSS, DEFAULT_QUEUE,
    DEFAULT_RWND_BYTES, DEFAULT_SEED,
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::dirspec::{self, Direction, QueueSpec};
use crate::hostnoise::{
    HostNoise, Turnaround, KERNEL_RECEIVER_QUANTILES_NS, KERNEL_SENDER_QUANTILES_NS,
};
use crate::link::LinkState;
use crate::models::{LinkBehaviour, ModelConfig, Seeds};
use crate::routing::{LinkEnds, Routing};
use crate::time::SimDuration;

scenario_switches!(switch_fields!(struct resolved
/// A scenario with units, defaults and names resolved (the input of [`resolve`]); its
/// switches (`cc_state`) are declared in `switches`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration_ns: u64,
    pub bin_ns: u64,
    pub nodes: Vec<String>,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    /// Quantile points of every host's turnaround (absent: hosts answer instantly). On input
    /// also the word `"kernel"`: the measured Linux turnarounds (`hostnoise::KERNEL_*`), read
    /// as their points, so the resolved scenario (and its hash) carries the numbers.
    #[serde(
        default,
        deserialize_with = "host_noise_points",
        skip_serializing_if = "Option::is_none"
    )]
    pub host_noise_quantiles_ns: Option<HostNoiseSpec>,
    /// One flow's sequence/ACK trace (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seqack: Option<SeqAckSpec>,
    /// The simulator's packet-capture points (`NODE` or `FROM:TO`, [`capture_point`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capture: Vec<String>,
}));

/// A full-duplex link between nodes `a` and `b` (indices into `nodes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub a: usize,
    pub b: usize,
    pub ab: Direction,
    pub ba: Direction,
}

/// Whether a TCP sender paces (Linux internal pacing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pacing {
    /// Only when the algorithm asks (BBR), as Linux without the fq qdisc.
    Auto,
    On,
    Off,
}

/// What a flow carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    Tcp,
    Udp,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn default_mtu() -> u32 {
    DEFAULT_MTU
}

fn is_default_mtu(n: &u32) -> bool {
    *n == DEFAULT_MTU
}

/// Ethernet's MTU, the default path MTU.
pub const DEFAULT_MTU: u32 = 1500;
/// Smallest path MTU: Linux's `IPV4_MIN_MTU`, the 68-byte datagram every IPv4 module must
/// forward unfragmented (RFC 791). (The fragmenter itself needs only a header and two 8-byte
/// fragment units, 36 B.)
pub const MIN_MTU: u32 = 68;
/// Largest path MTU: the largest IPv4 datagram.
pub const MAX_MTU: u32 = 65_535;
/// Largest tunnel overhead a flow may add per packet (an IPv4 datagram's size; real tunnels
/// add tens of bytes). Keeps `wire_bytes + encap` far from u32 overflow.
pub const MAX_ENCAP_BYTES: u32 = 65_535;
/// Smallest segment payload: Linux `TCP_MIN_MSS`.
pub const MIN_MSS: u32 = 88;
/// Largest segment payload: the largest IPv4 datagram less 20 B of IP and 20 B of TCP header.
pub const MAX_MSS: u32 = 65_495;
/// Largest MSS `setsockopt(TCP_MAXSEG)` accepts: Linux `MAX_TCP_WINDOW` (`do_tcp_setsockopt`
/// refuses a value outside `TCP_MIN_MSS..=MAX_TCP_WINDOW`).
pub const MAX_USER_MSS: u32 = 32_767;
/// Largest UDP payload in an IPv4 datagram.
pub const MAX_UDP_PAYLOAD_BYTES: u32 = 65_507;

flow_switches!(switch_fields!(struct resolved
/// One flow (after `count` expansion); its switches (`sack`, `ecn`, `metrics_save` ...) are
/// declared in `switches`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub id: u32,
    pub src: usize,
    pub dst: usize,
    pub cca: String,
    /// The algorithm's parameters (numbers, booleans, strings, lists of [x, y] pairs), checked
    /// by the algorithm's registry.
    #[serde(default)]
    pub cc: Option<Map<String, Value>>,
    pub start_ns: u64,
    /// Bytes to transfer (`None`: bulk until the end of the run).
    pub size_bytes: Option<u64>,
    pub mss: u32,
    pub rwnd_bytes: u64,
    pub initial_cwnd: u32,
    /// The sender's cap on cwnd, packets (`tp->snd_cwnd_clamp` after the algorithm's init;
    /// absent: the algorithm's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_clamp: Option<u32>,
    pub pacing: Pacing,
    #[serde(default)]
    pub sndbuf_bytes: Option<u64>,
    /// Absent: TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proto: Option<Proto>,
    /// UDP only: payload bit/s and datagram payload bytes (iperf3 -u -b -l).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_rate_bps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_payload_bytes: Option<u32>,
    /// Bytes a tunnel adds to every packet of the flow.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub encap_bytes: u32,
    #[serde(default = "default_mtu", skip_serializing_if = "is_default_mtu")]
    pub mtu: u32,
    /// What the application writes (absent: bulk, all data there from the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<App>,
}));

/// A flow's application traffic (`[[flow]] app`); times are offsets from the flow's start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum App {
    /// All data there from the start (`size` bytes, or until the end): iperf3, BulkSend.
    Bulk,
    /// Writes as fast as the connection takes them for `on_ns`, then nothing for `off_ns`,
    /// repeated from the start (ns-3's OnOffApplication with constant times, over TCP).
    Onoff { on_ns: u64, off_ns: u64 },
    /// Writes of `bytes` each: every `every_ns` from the start, or at each of `at_ns`
    /// (ascending offsets from the start).
    Requests {
        bytes: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        every_ns: Option<u64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        at_ns: Vec<u64>,
    },
}

impl App {
    /// Why this application cannot run, naming the key under `flow[i].app`.
    fn check(&self, i: usize) -> Result<(), String> {
        let key = format!("flow[{i}].app");
        match self {
            App::Bulk => Ok(()),
            App::Onoff { on_ns, off_ns } => {
                if *on_ns == 0 || *off_ns == 0 {
                    return Err(format!("{key}: expected on_ns and off_ns > 0"));
                }
                Ok(())
            }
            App::Requests {
                bytes,
                every_ns,
                at_ns,
            } => {
                if *bytes == 0 {
                    return Err(format!("{key}.bytes: expected > 0"));
                }
                match (every_ns, at_ns.is_empty()) {
                    (Some(0), _) => Err(format!("{key}.every_ns: expected > 0")),
                    (Some(_), true) => Ok(()),
                    (None, false) if at_ns.windows(2).all(|w| w[0] <= w[1]) => Ok(()),
                    (None, false) => Err(format!("{key}.at_ns: expected ascending times")),
                    _ => Err(format!("{key}: expected exactly one of every_ns and at_ns")),
                }
            }
        }
    }
}

impl Flow {
    pub fn is_udp(&self) -> bool {
        self.proto == Some(Proto::Udp)
    }
}

/// Why flow `i`'s sizes cannot run: its MSS, path MTU, tunnel overhead and, for a UDP flow,
/// its rate and payload (`Some((rate_bps, payload_bytes))`).
fn check_flow_sizes(
    i: usize,
    mss: u32,
    mtu: u32,
    encap_bytes: u32,
    udp: Option<(u64, u32)>,
) -> Result<(), String> {
    if !(MIN_MTU..=MAX_MTU).contains(&mtu) {
        return Err(format!(
            "flow[{i}].mtu: expected {MIN_MTU}..{MAX_MTU} bytes, found {mtu} B"
        ));
    }
    if encap_bytes > MAX_ENCAP_BYTES {
        return Err(format!(
            "flow[{i}].encap: must be at most {MAX_ENCAP_BYTES} bytes"
        ));
    }
    if !(MIN_MSS..=MAX_MSS).contains(&mss) {
        return Err(format!(
            "flow[{i}].mss: expected an integer in {MIN_MSS}..{MAX_MSS} bytes, found {mss}"
        ));
    }
    if let Some((rate_bps, payload_bytes)) = udp {
        if rate_bps == 0 || payload_bytes == 0 || payload_bytes > MAX_UDP_PAYLOAD_BYTES {
            return Err(format!(
                "flow[{i}].rate: a UDP flow needs rate > 0 and 1..{MAX_UDP_PAYLOAD_BYTES} payload bytes"
            ));
        }
    }
    Ok(())
}

/// `{"sender": [[probability, ns], ...], "receiver": [...]}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostNoiseSpec {
    pub sender: Vec<(f64, u64)>,
    pub receiver: Vec<(f64, u64)>,
}

/// `host_noise_quantiles_ns` as written: `null`, `"kernel"` or the points.
fn host_noise_points<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<HostNoiseSpec>, D::Error> {
    use serde::de::Error;
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(w) if w == "kernel" => Ok(Some(HostNoiseSpec::kernel())),
        Value::String(w) => Err(D::Error::custom(format!(
            "expected \"kernel\" or {{\"sender\": [[probability, ns], ...], \"receiver\": [...]}}, found {w:?}"
        ))),
        v => HostNoiseSpec::deserialize(v).map(Some).map_err(D::Error::custom),
    }
}

impl HostNoiseSpec {
    /// The measured Linux turnarounds (`host_noise = "kernel"`).
    pub fn kernel() -> HostNoiseSpec {
        HostNoiseSpec {
            sender: KERNEL_SENDER_QUANTILES_NS.to_vec(),
            receiver: KERNEL_RECEIVER_QUANTILES_NS.to_vec(),
        }
    }

    pub fn build(&self) -> Result<HostNoise, String> {
        let side = |key: &str, pts: &[(f64, u64)]| {
            Turnaround::new(pts.to_vec()).map_err(|e| format!("host_noise_quantiles_ns.{key}: {e}"))
        };
        Ok(HostNoise {
            sender: side("sender", &self.sender)?,
            receiver: side("receiver", &self.receiver)?,
        })
    }
}

/// Record flow `flow`'s data segments, ACKs and SACK blocks in `[from_ns, to_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeqAckSpec {
    pub flow: u32,
    pub from_ns: u64,
    pub to_ns: u64,
    pub max_rows: usize,
}

/// A flow's route: link directions (`2i` = link i a→b, `2i + 1` its b→a) from its source to its
/// destination (`fwd`) and back (`rev`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowPath {
    pub fwd: Vec<u32>,
    pub rev: Vec<u32>,
}

/// Up to this many nodes, [`Routes`] carries the all-pairs tables (`next_hop`,
/// `base_delay_ns`: n² entries each) that the emulator builds kernel routes from (it takes at
/// most 256 links, so at most 512 nodes); above it they are empty and only routes towards the
/// flows' end nodes are computed, so that a mesh of 20,000 links resolves in linear time and
/// memory (issue 31).
pub const ROUTE_TABLE_MAX_NODES: usize = 1024;

/// What [`resolve`] computes: routes (satcc-core `routing`), every direction's largest RTT
/// (what sizes an "x BDP" queue) and every flow's path. A direction's queue is held once, in
/// the scenario's link as written; an engine sizes it when it builds the link
/// ([`Resolved::direction`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routes {
    /// `next_hop[node][dst]`: the first link direction from node towards dst (empty above
    /// [`ROUTE_TABLE_MAX_NODES`] nodes).
    pub next_hop: Vec<Vec<Option<u32>>>,
    /// `base_delay_ns[a][b]`: the one-way propagation delay along the route (empty above
    /// [`ROUTE_TABLE_MAX_NODES`] nodes).
    pub base_delay_ns: Vec<Vec<u64>>,
    /// Per direction (`2i` = link i a→b): the largest base RTT of the flows crossing it, ns
    /// (0: no flow crosses it).
    pub max_rtt_ns: Vec<u64>,
    /// Per flow.
    pub paths: Vec<FlowPath>,
}

/// A scenario ready for any engine: checked, with its routes.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub scenario: Scenario,
    pub routes: Routes,
    /// The routes as the simulator walks them (the same tables as `routes`).
    pub routing: Routing,
}

impl Serialize for Resolved {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Flat<'a> {
            #[serde(flatten)]
            scenario: &'a Scenario,
            routes: &'a Routes,
        }
        Flat {
            scenario: &self.scenario,
            routes: &self.routes,
        }
        .serialize(s)
    }
}

impl Resolved {
    /// Read a resolved scenario (the scenario's keys plus `routes`) and check that its routes
    /// are the ones [`resolve`] gives: a resolved scenario cannot carry routes of its own.
    /// (The simulator's bindings, for a RESOLVED dictionary; satcc-linkd reads the links alone
    /// without resolving again: [`ResolvedLinks::from_json`].)
    pub fn from_json(v: &Value) -> Result<Resolved, String> {
        let (scenario, routes) = split_wire(v)?;
        let resolved = resolve(scenario)?;
        if resolved.routes != routes {
            return Err("config.routes: not the routes of this scenario".into());
        }
        Ok(resolved)
    }

    /// Direction `k`'s queue as its link holds it ("x BDP" sized).
    pub fn queue(&self, k: usize) -> QueueSpec {
        queue_of(&self.scenario, &self.routes, k)
    }

    /// Direction `k` (`2i` = link i a→b, `2i + 1` its b→a) as every engine builds it.
    pub fn direction(&self, k: usize) -> Result<DirView, String> {
        direction_of(&self.scenario, &self.routes, k)
    }
}

/// The wire form's scenario and routes, read as they are.
fn split_wire(v: &Value) -> Result<(Scenario, Routes), String> {
    let Value::Object(map) = v else {
        return Err("config: expected a table".into());
    };
    let mut map = map.clone();
    let routes = map
        .remove("routes")
        .ok_or("config.routes: missing (a scenario not yet resolved)")?;
    let scenario: Scenario = dirspec::read(&Value::Object(map), "config")?;
    let routes: Routes = dirspec::read(&routes, "config.routes")?;
    Ok((scenario, routes))
}

/// The one view of a link direction of a resolved scenario (`scenario`'s link, sized by
/// `routes`), for the simulator and satcc-linkd alike.
fn queue_of(s: &Scenario, routes: &Routes, k: usize) -> QueueSpec {
    let l = &s.links[k / 2];
    let d = if k % 2 == 1 { &l.ba } else { &l.ab };
    d.queue
        .sized(d.rate_bps, SimDuration::from_nanos(routes.max_rtt_ns[k]))
}

fn direction_of(s: &Scenario, routes: &Routes, k: usize) -> Result<DirView, String> {
    let (i, ba) = (k / 2, k % 2 == 1);
    let l = &s.links[i];
    let (name, d) = if ba { ("ba", &l.ba) } else { ("ab", &l.ab) };
    let path = format!("link[{i}].{name}");
    d.check(&path)?;
    let mut config = d.clone();
    config.queue = queue_of(s, routes, k);
    // the model moves into its behaviour's configuration (the link holds the behaviour)
    let model = match config.model.take() {
        Some(m) => Some(m.config(&format!("{path}.model"))?),
        None => None,
    };
    Ok(DirView {
        nominal: d.clocked(),
        config,
        model,
        link: i,
        dir: k,
    })
}

/// A resolved scenario's links read back from its wire form (satcc-linkd's input, the
/// RESOLVED dictionary the run resolved once), not resolved again: each direction is checked
/// as it is read ([`Direction::check`]) and built as the simulator builds it
/// ([`ResolvedLinks::direction`] and [`Resolved::direction`] are one function).
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedLinks {
    pub scenario: Scenario,
    pub routes: Routes,
}

impl ResolvedLinks {
    pub fn from_json(v: &Value) -> Result<ResolvedLinks, String> {
        let (scenario, routes) = split_wire(v)?;
        let n = scenario.links.len();
        for (i, l) in scenario.links.iter().enumerate() {
            if l.a >= scenario.nodes.len() || l.b >= scenario.nodes.len() {
                return Err(format!("link[{i}]: node index out of range"));
            }
            l.ab.check(&format!("link[{i}].ab"))?;
            l.ba.check(&format!("link[{i}].ba"))?;
        }
        if routes.max_rtt_ns.len() != 2 * n {
            return Err("config.routes: not the routes of this scenario".into());
        }
        Ok(ResolvedLinks { scenario, routes })
    }

    /// Direction `k` as the simulator builds it.
    pub fn direction(&self, k: usize) -> Result<DirView, String> {
        direction_of(&self.scenario, &self.routes, k)
    }
}

/// One direction of a resolved scenario as the simulator (`satcc-sim` net.rs) and satcc-linkd
/// build it: read from the scenario when an engine builds its links ([`Resolved::direction`]),
/// not kept beside it.
pub struct DirView {
    /// Rate, delay and loss as written (a model's nominal values when it has one), the rate
    /// on the direction's clock (`clock_ppm`: [`Direction::clocked`]).
    pub nominal: LinkState,
    /// The resolved direction as its link holds it: the queue sized ("x BDP" as bytes), the
    /// model taken into `model` (queue, drop, ECN marking, jitter, scripted drops, tick
    /// service are read from it as written).
    pub config: Direction,
    model: Option<ModelConfig>,
    link: usize,
    dir: usize,
}

impl DirView {
    /// The direction's behaviour over time: its model seeded from `seed`, the link and the
    /// direction (so both engines draw the same channel), or the constant nominal link.
    pub fn behaviour(&self, seed: u64) -> Result<Box<dyn LinkBehaviour>, String> {
        let Some(m) = &self.model else {
            return Ok(crate::models::constant(self.nominal));
        };
        let seeds = Seeds {
            seed,
            link: self.link as u64,
            dir: self.dir as u64,
        };
        let name = if self.dir % 2 == 1 { "ba" } else { "ab" };
        m.build(seeds)
            .map_err(|e| format!("link[{}].model.{name}: {e}", self.link))
    }
}

/// A packet-capture point of the simulator (`capture`, `satcc sim --capture`): a node's
/// interfaces, or one link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapturePoint {
    Node(usize),
    /// A link direction (index: link * 2 + 0 for `ab`, + 1 for `ba`).
    Direction(usize),
}

/// Read a capture point (`NODE` or `FROM:TO`) against the scenario's nodes and links.
pub fn capture_point(s: &Scenario, text: &str) -> Result<CapturePoint, String> {
    let node = |name: &str| {
        s.nodes.iter().position(|n| n == name).ok_or_else(|| {
            format!(
                "capture: expected a node ({}) or FROM:TO, found {name:?}",
                s.nodes.join(", ")
            )
        })
    };
    match text.split_once(':') {
        None => node(text).map(CapturePoint::Node),
        Some((from, to)) => {
            let (a, b) = (node(from)?, node(to)?);
            s.links
                .iter()
                .enumerate()
                .find_map(|(i, l)| {
                    if (l.a, l.b) == (a, b) {
                        Some(CapturePoint::Direction(2 * i))
                    } else if (l.b, l.a) == (a, b) {
                        Some(CapturePoint::Direction(2 * i + 1))
                    } else {
                        None
                    }
                })
                .ok_or_else(|| {
                    format!("capture: expected a link between {from} and {to}, found none")
                })
        }
    }
}

/// Check a scenario and compute what every engine needs of it: routes by propagation delay,
/// each flow's path, each direction's largest base RTT of the flows crossing it (an "N BDP"
/// queue holds N × rate × that RTT: [`QueueSpec::sized`]). Errors name the key:
/// `link[i].ab.loss: ...`.
pub fn resolve(s: Scenario) -> Result<Resolved, String> {
    let n = s.nodes.len();
    if s.bin_ns == 0 {
        return Err("config.bin_ns: expected a positive bin width".into());
    }
    for p in &s.capture {
        capture_point(&s, p).map_err(|e| format!("scenario.{e}"))?;
    }
    let mut ends = Vec::with_capacity(s.links.len());
    for (i, l) in s.links.iter().enumerate() {
        if l.a >= n || l.b >= n {
            return Err(format!("link[{i}]: node index out of range"));
        }
        for (name, d) in [("ab", &l.ab), ("ba", &l.ba)] {
            let path = format!("link[{i}].{name}");
            d.check(&path)?;
            if d.rate_bps == 0 {
                return Err(format!("{path}.rate_bps: expected a rate > 0"));
            }
            if let Some(m) = &d.model {
                // built as the engines build it (its constructor's checks), then dropped
                let seeds = crate::models::Seeds {
                    seed: s.seed,
                    link: i as u64,
                    dir: (2 * i + usize::from(name == "ba")) as u64,
                };
                m.config(&format!("{path}.model"))?
                    .build(seeds)
                    .map_err(|e| format!("link[{i}].model.{name}: {e}"))?;
            }
        }
        ends.push(LinkEnds {
            a: l.a,
            b: l.b,
            ab_delay: SimDuration::from_nanos(l.ab.delay_ns),
            ba_delay: SimDuration::from_nanos(l.ba.delay_ns),
        });
    }
    for (i, f) in s.flows.iter().enumerate() {
        if f.src >= n || f.dst >= n {
            return Err(format!("flow[{i}]: node index out of range"));
        }
        // Packets carry the flow id and the simulator indexes flows by it.
        if f.id as usize != i {
            return Err(format!(
                "flow[{i}].id: must be {i} (flows are numbered in order)"
            ));
        }
        if f.src == f.dst {
            return Err(format!("flow[{i}].to: a flow needs two different nodes"));
        }
        let udp = match (f.is_udp(), f.udp_rate_bps, f.udp_payload_bytes) {
            (false, ..) => None,
            (true, Some(rate), Some(payload)) => Some((rate, payload)),
            (true, ..) => {
                return Err(format!(
                    "flow[{i}]: expected udp_rate_bps and udp_payload_bytes for a UDP flow"
                ))
            }
        };
        check_flow_sizes(i, f.mss, f.mtu, f.encap_bytes, udp)?;
        if let Some(app) = &f.app {
            if f.is_udp() && *app != App::Bulk {
                return Err(format!("flow[{i}].app: expected a TCP flow"));
            }
            if f.size_bytes.is_some() && *app != App::Bulk {
                return Err(format!(
                    "flow[{i}].size_bytes: expected none with an application other than bulk"
                ));
            }
            if f.metrics_save && *app != App::Bulk {
                return Err(format!(
                    "flow[{i}].metrics_save: expected false with an application other than bulk"
                ));
            }
            app.check(i)?;
        }
    }
    if let Some(h) = &s.host_noise_quantiles_ns {
        h.build()?;
    }
    if let Some(sa) = &s.seqack {
        match s.flows.get(sa.flow as usize) {
            None => {
                return Err(format!(
                    "seqack.flow: expected a flow id below {}, found {}",
                    s.flows.len(),
                    sa.flow
                ))
            }
            Some(f) if f.is_udp() => {
                return Err(format!(
                    "seqack.flow: expected a TCP flow, flow {} is UDP",
                    sa.flow
                ))
            }
            Some(_) => {}
        }
    }
    let pairs: Vec<(usize, usize)> = s.flows.iter().map(|f| (f.src, f.dst)).collect();
    let all_pairs = n <= ROUTE_TABLE_MAX_NODES;
    let routing = if all_pairs {
        Routing::compute(n, &ends)
    } else {
        let ends_of_flows: Vec<usize> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        Routing::compute_for(n, &ends, &ends_of_flows)
    };
    for (i, &(a, b)) in pairs.iter().enumerate() {
        if !routing.connected(a, b) || !routing.connected(b, a) {
            return Err(format!(
                "flow[{i}].to: no route between {} and {}",
                s.nodes[a], s.nodes[b]
            ));
        }
    }
    let max_rtt_ns = routing
        .max_rtt_per_direction(&pairs)
        .iter()
        .map(|d| d.as_nanos())
        .collect();
    let table_n = if all_pairs { n } else { 0 };
    let routes = Routes {
        next_hop: (0..table_n)
            .map(|a| (0..n).map(|b| routing.next_hop(a, b)).collect())
            .collect(),
        base_delay_ns: (0..table_n)
            .map(|a| {
                (0..n)
                    .map(|b| routing.base_delay(a, b).as_nanos())
                    .collect()
            })
            .collect(),
        max_rtt_ns,
        paths: pairs
            .iter()
            .map(|&(a, b)| FlowPath {
                fwd: routing.path(a, b),
                rev: routing.path(b, a),
            })
            .collect(),
    };
    Ok(Resolved {
        scenario: s,
        routes,
        routing,
    })
}

/// Resolve a scenario given as JSON (the bindings' and tools' entry point).
pub fn resolve_json(v: &Value) -> Result<Resolved, String> {
    resolve(dirspec::read(v, "config")?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dumbbell() -> Value {
        let dir = |rate: u64, delay_ms: u64, queue: Value| {
            json!({"rate_bps": rate, "delay_ns": delay_ms * 1_000_000, "loss": 0.0,
                   "queue": queue, "ecn_threshold_pkts": null})
        };
        let flow = |id: u32, src: usize, dst: usize| {
            json!({"id": id, "src": src, "dst": dst, "cca": "cubic", "cc": {}, "start_ns": 0,
                   "size_bytes": null, "mss": 1448, "sack": true, "timestamps": true,
                   "window_scaling": true, "rwnd_bytes": 33554432, "rcvbuf_autotune": true,
                   "ecn": false, "initial_cwnd": 10, "pacing": "auto", "delayed_ack": true,
                   "min_rto_ns": 200000000, "sndbuf_bytes": null, "metrics_save": false})
        };
        // s1 -(1 ms)- r -(10 ms, 1 BDP)- d ; s2 -(24 ms)- r
        json!({"name": "t", "seed": 1, "duration_ns": 1_000_000_000u64, "bin_ns": 100_000_000,
               "nodes": ["s1", "s2", "r", "d"],
               "links": [
                   {"a": 0, "b": 2, "ab": dir(1_000_000_000, 1, json!({"packets": 1000})),
                    "ba": dir(1_000_000_000, 1, json!({"packets": 1000}))},
                   {"a": 1, "b": 2, "ab": dir(1_000_000_000, 24, json!({"packets": 1000})),
                    "ba": dir(1_000_000_000, 24, json!({"packets": 1000}))},
                   {"a": 2, "b": 3, "ab": dir(10_000_000, 10, json!({"bdp": 1.0})),
                    "ba": dir(10_000_000, 10, json!({"bytes": 50000}))}],
               "flows": [flow(0, 0, 3), flow(1, 1, 3)]})
    }

    #[test]
    fn an_engines_link_is_built_with_the_resolved_direction_its_queue_sized() {
        // one type from the scenario to both engines' links: the direction handed to
        // `direction::Direction::new` is the resolved one, field for field, but for its
        // queue (sized against the routes) and its model (moved into the behaviour)
        let mut v = dumbbell();
        v["links"][2]["ab"]["ecn_threshold_pkts"] = json!(20);
        v["links"][2]["ab"]["jitter_ns"] = json!(300_000);
        v["links"][2]["ab"]["drop"] = json!("front");
        v["links"][2]["ab"]["drop_packets"] = json!([4]);
        let r = resolve_json(&v).unwrap();
        let resolved = &r.scenario.links[2].ab;
        let view = r.direction(4).unwrap();
        assert_eq!(view.config.queue, r.queue(4));
        assert!(matches!(resolved.queue, QueueSpec::Bdp(_)));
        let mut want = resolved.clone();
        want.queue = r.queue(4);
        assert_eq!(view.config, want);
        assert_eq!(view.config.ecn_threshold_pkts(), Some(20));
        assert_eq!(view.config.jitter(), SimDuration::from_micros(300));
        assert_eq!(view.config.drop_packets(), [4]);
        assert_eq!(view.nominal, resolved.nominal());
    }

    #[test]
    fn routes_paths_and_bdp_queues_come_with_the_scenario() {
        let r = resolve_json(&dumbbell()).unwrap();
        assert_eq!(
            r.routes.paths[0],
            FlowPath {
                fwd: vec![0, 4],
                rev: vec![5, 1]
            }
        );
        assert_eq!(
            r.routes.paths[1],
            FlowPath {
                fwd: vec![2, 4],
                rev: vec![5, 3]
            }
        );
        assert_eq!(r.routes.base_delay_ns[1][3], 34_000_000);
        assert_eq!(r.routes.next_hop[3][0], Some(5));
        // the bottleneck holds 1 × 10 Mbit/s × the largest RTT crossing it (68 ms) = 85,000 B
        assert_eq!(r.queue(4), QueueSpec::Bytes(85_000));
        assert_eq!(r.queue(5), QueueSpec::Bytes(50_000));
        assert_eq!(r.queue(0), QueueSpec::Packets(1000));
    }

    #[test]
    fn the_wire_form_round_trips_and_its_routes_are_checked() {
        let r = resolve_json(&dumbbell()).unwrap();
        let v = serde_json::to_value(&r).unwrap();
        assert!(v.get("routes").is_some() && v.get("flows").is_some());
        assert_eq!(Resolved::from_json(&v).unwrap(), r);
        let mut forged = v.clone();
        forged["routes"]["max_rtt_ns"][4] = json!(1);
        assert_eq!(
            Resolved::from_json(&forged).unwrap_err(),
            "config.routes: not the routes of this scenario"
        );
        let mut bare = v;
        bare.as_object_mut().unwrap().remove("routes");
        assert!(Resolved::from_json(&bare)
            .unwrap_err()
            .contains("not yet resolved"));
    }

    #[test]
    fn the_scenario_serialises_back_to_the_keys_it_was_read_from() {
        let v = dumbbell();
        let s: Scenario = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
    }

    #[test]
    fn application_traffic_round_trips_and_defaults_stay_off_the_wire() {
        let mut v = dumbbell();
        v["flows"][0]["app"] = json!({"kind": "onoff", "on_ns": 1_000, "off_ns": 2_000});
        v["flows"][0]["slow_start_after_idle"] = json!(false);
        v["flows"][1]["app"] = json!({"kind": "requests", "bytes": 2897, "at_ns": [0, 5]});
        v["flows"][1]["nodelay"] = json!(true);
        let r = resolve_json(&v).unwrap();
        assert_eq!(
            r.scenario.flows[0].app,
            Some(App::Onoff {
                on_ns: 1_000,
                off_ns: 2_000
            })
        );
        assert!(!r.scenario.flows[0].slow_start_after_idle);
        assert!(r.scenario.flows[1].slow_start_after_idle);
        assert!(!r.scenario.flows[0].nodelay && r.scenario.flows[1].nodelay);
        let s: Scenario = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
    }

    #[test]
    fn bad_input_names_the_key() {
        let cases: [(&str, Value, &str); 5] = [
            (
                "/links/2/ab/loss",
                json!(2.0),
                "link[2].ab.loss: expected a probability",
            ),
            (
                "/links/0/ab/rate_bps",
                json!(0),
                "link[0].ab.rate_bps: expected a rate > 0",
            ),
            ("/flows/1/dst", json!(9), "flow[1]: node index out of range"),
            (
                "/flows/0/pacing",
                json!("sometimes"),
                "config.flows[0].pacing: unknown variant",
            ),
            ("/links/1/b", json!(-1), "config.links[1].b: invalid value"),
        ];
        for (at, value, want) in cases {
            let mut v = dumbbell();
            *v.pointer_mut(at).unwrap() = value;
            let e = resolve_json(&v).unwrap_err();
            assert!(e.starts_with(want), "{at}: {e}");
        }
        let mut v = dumbbell();
        v["flows"][0]["app"] = json!({"kind": "requests", "bytes": 0, "every_ns": 5});
        assert_eq!(
            resolve_json(&v).unwrap_err(),
            "flow[0].app.bytes: expected > 0"
        );
        v["flows"][0]["app"] = json!({"kind": "requests", "bytes": 2896});
        assert!(resolve_json(&v)
            .unwrap_err()
            .contains("exactly one of every_ns and at_ns"));
        v["flows"][0]["app"] = json!({"kind": "onoff", "on_ns": 1, "off_ns": 0});
        assert!(resolve_json(&v).unwrap_err().starts_with("flow[0].app"));
        v["flows"][0]["app"] = json!({"kind": "onoff", "on_ns": 1, "off": 2});
        assert!(resolve_json(&v)
            .unwrap_err()
            .contains("unknown field `off`"));
        let mut v = dumbbell();
        v["flows"][0]["colour"] = json!("red");
        assert!(resolve_json(&v)
            .unwrap_err()
            .contains("unknown field `colour`"));
    }

    #[test]
    fn what_the_simulator_could_not_run_is_refused_by_the_resolver() {
        let cases: [(&str, &str, Value, &str); 6] = [
            (
                "dst",
                "",
                json!(0),
                "flow[0].to: a flow needs two different nodes",
            ),
            (
                "id",
                "",
                json!(7),
                "flow[0].id: must be 0 (flows are numbered in order)",
            ),
            (
                "mss",
                "",
                json!(0),
                "flow[0].mss: expected an integer in 88..65495 bytes, found 0",
            ),
            (
                "mtu",
                "",
                json!(67),
                "flow[0].mtu: expected 68..65535 bytes, found 67 B",
            ),
            (
                "encap_bytes",
                "",
                json!(65_536),
                "flow[0].encap: must be at most 65535 bytes",
            ),
            (
                "udp_payload_bytes",
                "udp",
                json!(65_508),
                "flow[0].rate: a UDP flow needs rate > 0 and 1..65507 payload bytes",
            ),
        ];
        for (key, proto, value, want) in cases {
            let mut v = dumbbell();
            if proto == "udp" {
                v["flows"][0]["proto"] = json!("udp");
                v["flows"][0]["udp_rate_bps"] = json!(1_000_000);
            }
            v["flows"][0][key] = value;
            assert_eq!(resolve_json(&v).unwrap_err(), want, "{key}");
        }
        // a node no link reaches
        let mut v = dumbbell();
        v["nodes"].as_array_mut().unwrap().push(json!("x"));
        v["flows"][1]["dst"] = json!(4);
        assert_eq!(
            resolve_json(&v).unwrap_err(),
            "flow[1].to: no route between s2 and x"
        );
        // a trace of a flow that does not exist, or of a UDP flow
        let mut v = dumbbell();
        v["seqack"] = json!({"flow": 2, "from_ns": 0, "to_ns": 1, "max_rows": 10});
        assert_eq!(
            resolve_json(&v).unwrap_err(),
            "seqack.flow: expected a flow id below 2, found 2"
        );
        v["seqack"]["flow"] = json!(1);
        v["flows"][1]["proto"] = json!("udp");
        v["flows"][1]["udp_rate_bps"] = json!(1_000_000);
        v["flows"][1]["udp_payload_bytes"] = json!(1000);
        assert_eq!(
            resolve_json(&v).unwrap_err(),
            "seqack.flow: expected a TCP flow, flow 1 is UDP"
        );
    }

    #[test]
    fn every_model_kind_builds_through_the_engines_view_of_a_direction() {
        // (from satcc-emu's models.rs: both engines now build through `Resolved::direction`)
        let starlink: Value =
            serde_json::from_str(include_str!("models/testdata/starlink.json")).unwrap();
        let docs = [
            starlink,
            json!({"kind": "geo", "rate_bps": 42_000_000, "loss": 0.0074, "delay_ns": 400_000_000}),
            json!({"kind": "lfn", "rate_bps": 1_000_000_000u64, "delay_ns": 50_000_000, "loss": 0.0,
                   "police": {"rate_bps": [300_000_000, 330_000_000], "burst_bytes": 100_000, "redraw_ns": 1_000_000_000}}),
            json!({"kind": "trace", "opportunities_ms": [0, 1, 2, 3], "bytes_per_opportunity": 1500,
                   "series": [[0, 10_000_000, 0.0]], "delay_ns": 10_000_000, "loss": 0.0}),
            json!({"kind": "constellation", "altitude_m": 550000.0, "inclination_deg": 53.0, "planes": 72,
                   "per_plane": 22, "phasing": 1, "terminal": [48.0, 11.0], "gateway": [48.5, 11.5],
                   "min_elevation_deg": 25.0, "period_ns": 15_000_000_000u64, "phase_ns": 12_000_000_000u64,
                   "start_ns": 0, "extra_delay_ns": 10_000_000, "rate_bps": 100_000_000, "loss": 0.0}),
        ];
        for m in docs {
            let mut v = dumbbell();
            v["links"][2]["ab"]["model"] = m.clone();
            let r = resolve_json(&v).unwrap_or_else(|e| panic!("{m}: {e}"));
            let view = r.direction(4).unwrap();
            let mut a = view.behaviour(1).unwrap();
            let mut b = view.behaviour(1).unwrap();
            for k in 0..50u64 {
                let t = crate::SimTime::from_nanos(k * 250_000_000);
                assert_eq!(a.state_at(t), b.state_at(t), "{m}");
            }
            assert!(a.state_at(crate::SimTime::ZERO).rate_bps > 0 || m["kind"] == "starlink");
        }
        // without a model: the constant nominal link
        let r = resolve_json(&dumbbell()).unwrap();
        let view = r.direction(5).unwrap();
        assert_eq!(view.config.queue, QueueSpec::Bytes(50_000));
        let st = view.behaviour(1).unwrap().state_at(crate::SimTime::ZERO);
        assert_eq!((st.rate_bps, st.delay.as_nanos()), (10_000_000, 10_000_000));
    }

    #[test]
    fn kernel_host_noise_is_read_as_the_measured_points_and_written_as_them() {
        let mut v = dumbbell();
        v["host_noise_quantiles_ns"] = json!("kernel");
        let r = resolve_json(&v).unwrap();
        assert_eq!(
            r.scenario.host_noise_quantiles_ns,
            Some(HostNoiseSpec::kernel())
        );
        let wire = serde_json::to_value(&r).unwrap();
        assert_eq!(
            wire["host_noise_quantiles_ns"]["sender"][1],
            json!([
                KERNEL_SENDER_QUANTILES_NS[1].0,
                KERNEL_SENDER_QUANTILES_NS[1].1
            ])
        );
        assert_eq!(Resolved::from_json(&wire).unwrap(), r);
        v["host_noise_quantiles_ns"] = json!("loud");
        assert!(resolve_json(&v)
            .unwrap_err()
            .starts_with("config.host_noise_quantiles_ns: expected \"kernel\""));
    }
}
