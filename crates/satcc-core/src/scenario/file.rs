//! A scenario file, read: the TOML document (as the Python layer or a campaign hands it over,
//! after `--set` and matrix edits) through serde into typed tables whose units are parsed once
//! at the edge ([`Nanos`], [`Bps`], [`Bytes`], [`Prob`], [`Queue`]: satcc-core `units`), the
//! defaults declared once (serde defaults, from `build`'s constants), every check made once
//! ([`read`]), and the resolver's input built from it ([`File::scenario`]).
//!
//! Every problem is a (TOML key path, message) pair, "expected WHAT, found WHAT": a type
//! error stops serde at the first one; every check after it is collected, so a file's
//! problems are reported together.
//!
//! `[link.model]` tables are resolved here too, once per read, by `models::table` (their keys,
//! cited presets and checks); files on the host are read through [`Known::files`].
//!
//! To add a scenario key whose file form is its resolved form (a switch or a key with a unit,
//! a `[[link]]` key with its `_ba` twin): an entry of `switches.rs`, its check in [`read`] if
//! its type does not say it all, and docs/scenario.md. A key the resolver takes in another
//! shape (`count` and `stagger` into `start_ns`, node names into indices, a link's `rate`
//! required or a model's) is a field in one of the tables below, its resolved field in
//! `scenario.rs` or `dirspec.rs` and its conversion in [`File::scenario`].

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::build::{
    DEFAULT_BIN_NS, DEFAULT_INITIAL_CWND, DEFAULT_MSS, DEFAULT_QUEUE, DEFAULT_RWND_BYTES,
    DEFAULT_SEED,
};
use super::switches;
use super::{
    App, Flow, HostNoiseSpec, Link, Pacing, Proto, Scenario, SeqAckSpec, DEFAULT_MTU, MAX_MSS,
    MAX_MTU, MAX_UDP_PAYLOAD_BYTES, MIN_MSS, MIN_MTU,
};
use crate::dirspec::{Direction, QueueSpec};
use crate::models::table::{self, ModelFiles};
use crate::units::{self, describe, py_str, Raw};

/// One problem: (key path, message).
pub type Issue = (String, String);

/// Most bins a run's series may have (duration / bin).
pub const MAX_BINS: u64 = 10_000_000;
/// Most flows after `count`.
pub const MAX_FLOWS: u64 = 100_000;
/// Most rows a sequence/ACK trace keeps.
pub const MAX_SEQACK_ROWS: u64 = 2_000_000;
/// A scenario or flow name's longest.
pub const MAX_NAME_CHARS: usize = 200;
/// UDP payload when `packet_size` is not given: iperf3's DEFAULT_UDP_BLKSIZE.
pub const DEFAULT_UDP_PAYLOAD: u64 = 1460;
/// Per-packet bytes of the named tunnels (docs/scenario.md "Tunnels").
pub const ENCAP_BYTES: [(&str, u64); 4] = [
    ("wireguard", 60),
    ("openvpn", 43),
    ("ipsec", 60),
    ("softether", 43),
];
pub const APP_KINDS: [&str; 3] = ["bulk", "onoff", "requests"];

macro_rules! unit_type {
    ($name:ident, $t:ty, $parse:path, $doc:literal, $hint:expr) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $t);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = Value::deserialize(d)?;
                $parse(&Raw::from_json(&v))
                    .map($name)
                    .map_err(serde::de::Error::custom)
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                use schemars::schema::{InstanceType, SchemaObject, SingleOrVec};
                let mut s = SchemaObject {
                    instance_type: Some(SingleOrVec::Vec(vec![
                        InstanceType::String,
                        InstanceType::Number,
                        InstanceType::Boolean,
                    ])),
                    ..Default::default()
                };
                s.metadata().description = Some(format!("{}: {}", $doc, $hint));
                s.into()
            }
        }
    };
}

unit_type!(
    Nanos,
    u64,
    units::duration_ns,
    "A duration, in ns.",
    units::DURATION_HINT
);
unit_type!(
    Bps,
    u64,
    units::rate_bps,
    "A rate, in bit/s.",
    units::RATE_HINT
);
unit_type!(
    Bytes,
    u64,
    units::size_bytes,
    "A size, in bytes.",
    units::SIZE_HINT
);
unit_type!(
    Prob,
    f64,
    units::probability,
    "A probability.",
    units::PROBABILITY_HINT
);
unit_type!(
    Pkts,
    u64,
    units::packets,
    "A packet count.",
    units::PACKETS_HINT
);
unit_type!(
    Ppm,
    f64,
    units::clock_ppm,
    "A clock offset, in parts per million.",
    units::CLOCK_HINT
);
unit_type!(
    Queue,
    QueueSpec,
    units::queue,
    "A drop-tail limit.",
    units::QUEUE_HINT
);

fn parse_pacing(v: &Raw) -> Result<Pacing, units::UnitError> {
    match v {
        Raw::Bool(true) => Ok(Pacing::On),
        Raw::Bool(false) => Ok(Pacing::Off),
        Raw::Str(s) if s == "auto" => Ok(Pacing::Auto),
        Raw::Str(s) if s == "on" => Ok(Pacing::On),
        Raw::Str(s) if s == "off" => Ok(Pacing::Off),
        _ => Err(units::UnitError::new(
            "'auto', 'on' or 'off' (or true/false)",
            v,
            None,
        )),
    }
}
unit_type!(
    PacingT,
    Pacing,
    parse_pacing,
    "`pacing`",
    "'auto', 'on' or 'off' (or true/false)"
);

pub const HOST_NOISE_HINT: &str = "'kernel', 'off' or a duration (uniform turnaround in [0, d))";

/// `host_noise`: the measured kernel turnarounds, none, or uniform in [0, d).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum HostNoiseT {
    Word(&'static str),
    Uniform(u64),
}

fn parse_host_noise(v: &Raw) -> Result<HostNoiseT, units::UnitError> {
    match v {
        Raw::Str(s) if s == "kernel" => return Ok(HostNoiseT::Word("kernel")),
        Raw::Str(s) if s == "off" => return Ok(HostNoiseT::Word("off")),
        Raw::Str(s) if s.trim_start().starts_with(|c: char| c.is_ascii_digit()) => {
            if let Ok(ns) = units::duration_ns(v) {
                return Ok(HostNoiseT::Uniform(ns));
            }
        }
        _ => {}
    }
    Err(units::UnitError::new(HOST_NOISE_HINT, v, None))
}
unit_type!(
    HostNoiseV,
    HostNoiseT,
    parse_host_noise,
    "`host_noise`",
    HOST_NOISE_HINT
);

fn parse_encap(v: &Raw) -> Result<u64, units::UnitError> {
    if let Raw::Str(s) = v {
        let w = s.trim().to_lowercase();
        if let Some((_, n)) = ENCAP_BYTES.iter().find(|(k, _)| *k == w) {
            return Ok(*n);
        }
    }
    units::size_bytes(v).map_err(|_| {
        let names: Vec<&str> = ENCAP_BYTES.iter().map(|(k, _)| *k).collect();
        units::UnitError::new(
            &format!("a tunnel ({}) or a size like '60 B'", names.join(", ")),
            v,
            None,
        )
    })
}
unit_type!(
    Encap,
    u64,
    parse_encap,
    "`encap`",
    "a tunnel (wireguard, openvpn, ipsec, softether) or a size like '60 B'"
);

/// `[scenario.seqack]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeqAckT {
    #[serde(default)]
    pub flow: i64,
    #[serde(default = "zero_ns", rename = "from")]
    pub from: Nanos,
    #[serde(default)]
    pub to: Option<Nanos>,
    #[serde(default = "default_max_rows")]
    pub max_rows: i64,
}

fn zero_ns() -> Nanos {
    Nanos(0)
}
fn default_max_rows() -> i64 {
    200_000
}
fn default_bin() -> Nanos {
    Nanos(DEFAULT_BIN_NS)
}
fn default_seed() -> Value {
    Value::from(DEFAULT_SEED)
}
fn default_engine() -> String {
    "sim".into()
}
fn default_host_noise() -> HostNoiseV {
    HostNoiseV(HostNoiseT::Word("kernel"))
}
fn default_queue() -> Queue {
    Queue(DEFAULT_QUEUE)
}
fn default_hz() -> i64 {
    1000
}
fn default_cca() -> String {
    "cubic".into() // Linux's default congestion control since 2.6.19
}
fn one() -> i64 {
    1
}
fn default_mss() -> i64 {
    DEFAULT_MSS as i64
}
fn default_rwnd() -> Bytes {
    Bytes(DEFAULT_RWND_BYTES)
}
fn default_iw() -> i64 {
    DEFAULT_INITIAL_CWND as i64
}
fn default_mtu() -> Bytes {
    Bytes(DEFAULT_MTU as u64)
}
fn exact() -> Service {
    Service::Exact
}
fn tcp() -> ProtoT {
    ProtoT::Tcp
}

scenario_switches!(switch_fields!(struct file
/// `[scenario]` (its switches: `super::switches`).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Section {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Required (checked after serde, with the other problems).
    #[serde(default)]
    pub duration: Option<Nanos>,
    /// An integer in 0..2^64-1 (checked after serde, naming the range).
    #[serde(default = "default_seed")]
    pub seed: Value,
    #[serde(default = "default_bin")]
    pub bin: Nanos,
    /// One of the caller's engines ([`Known::engines`]).
    #[serde(default = "default_engine")]
    pub engine: String,
    #[serde(default = "default_host_noise")]
    pub host_noise: HostNoiseV,
    /// Every constant link direction without its own `clock` runs on a clock drawn uniformly
    /// within ± this tolerance from the seed (real NICs' independent oscillators; Ethernet's
    /// is 100 ppm); absent: ideal clocks. Resolved into each direction's `clock_ppm`.
    #[serde(default)]
    pub clock_tolerance: Option<Ppm>,
    /// The node hosting a VPN server (study 000).
    #[serde(default)]
    pub vpn: Option<String>,
    #[serde(default)]
    pub seqack: Option<SeqAckT>,
    /// The simulator's packet-capture points: a node (`"d"`) or a link direction
    /// (`"r:d"`), as `satcc sim --capture` (checked by the resolver).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capture: Vec<String>,
}));

#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Service {
    Exact,
    Tick,
}

// The keys of `switches::link_keys!` (each with its b→a twin) are appended from their list.
link_keys!(link_fields!(struct file
/// `[[link]]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkT {
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub rate: Option<Bps>,
    #[serde(default)]
    pub delay: Option<Nanos>,
    #[serde(default)]
    pub loss: Option<Prob>,
    #[serde(default)]
    pub queue: Option<Queue>,
    #[serde(default)]
    pub rate_ba: Option<Bps>,
    #[serde(default)]
    pub delay_ba: Option<Nanos>,
    #[serde(default)]
    pub loss_ba: Option<Prob>,
    #[serde(default)]
    pub queue_ba: Option<Queue>,
    #[serde(default = "exact")]
    pub service: Service,
    #[serde(default = "default_hz")]
    pub hz: i64,
    /// `[link.model]`: a time-varying path, `kind = ...` and its keys (docs/scenario.md "Path
    /// models"), read by `models::table`.
    #[serde(default)]
    pub model: Option<Map<String, Value>>,
}
));
link_keys!(link_fields!(twins LinkT));

#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProtoT {
    Tcp,
    Udp,
}

/// A flow's `app` table, read by [`read_app`] (its messages name the kind's keys).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AppT {
    Bulk,
    Onoff {
        on: Nanos,
        off: Nanos,
    },
    Requests {
        size: Bytes,
        every: Option<Nanos>,
        at: Option<Vec<Nanos>>,
    },
}

/// A flow's `app` table: the application, or the problems under `{p}.app`.
fn read_app(p: &str, v: &Value) -> Result<AppT, Vec<Issue>> {
    let key = format!("{p}.app");
    let found = |v: &Value| describe(&Raw::from_json(v));
    let Some(t) = v.as_object() else {
        return Err(vec![(key, format!("expected a table, found {}", found(v)))]);
    };
    let kinds = APP_KINDS.map(py_str).join(", ");
    let kind = match t.get("kind") {
        Some(Value::String(k)) if APP_KINDS.contains(&k.as_str()) => k.as_str(),
        other => {
            let f = other.map_or("nothing".into(), found);
            return Err(vec![(
                format!("{key}.kind"),
                format!("expected one of {kinds}, found {f}"),
            )]);
        }
    };
    let allowed: &[&str] = match kind {
        "bulk" => &["kind"],
        "onoff" => &["kind", "on", "off"],
        _ => &["kind", "size", "every", "at"],
    };
    let mut issues: Vec<Issue> = t
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .map(|k| {
            (
                format!("{key}.{k}"),
                format!(
                    "expected one of the keys {} for kind {}; found an unknown key {}",
                    allowed.join(", "),
                    py_str(kind),
                    py_str(k)
                ),
            )
        })
        .collect();
    let mut get =
        |k: &str, parse: fn(&Raw) -> Result<u64, units::UnitError>, hint: &str| match t.get(k) {
            None => {
                if !hint.is_empty() {
                    issues.push((
                        format!("{key}.{k}"),
                        format!("expected {hint}, found nothing"),
                    ));
                }
                None
            }
            Some(v) => match parse(&Raw::from_json(v)) {
                Ok(x) => Some(x),
                Err(e) => {
                    issues.push((format!("{key}.{k}"), e.to_string()));
                    None
                }
            },
        };
    let app = match kind {
        "bulk" => Some(AppT::Bulk),
        "onoff" => {
            let on = get("on", units::duration_ns, "a duration (e.g. \"1 s\")");
            let off = get("off", units::duration_ns, "a duration (e.g. \"1 s\")");
            on.zip(off).map(|(on, off)| AppT::Onoff {
                on: Nanos(on),
                off: Nanos(off),
            })
        }
        _ => {
            let size = get("size", units::size_bytes, "a size (e.g. \"100 kB\")");
            let every = get("every", units::duration_ns, "");
            let at = match t.get("at") {
                None => None,
                Some(Value::Array(xs)) if !xs.is_empty() => {
                    let mut times = Vec::with_capacity(xs.len());
                    for (i, x) in xs.iter().enumerate() {
                        match units::duration_ns(&Raw::from_json(x)) {
                            Ok(ns) => times.push(Nanos(ns)),
                            Err(e) => issues.push((format!("{key}.at[{i}]"), e.to_string())),
                        }
                    }
                    Some(times)
                }
                Some(v) => {
                    issues.push((
                        format!("{key}.at"),
                        format!(
                            "expected a non-empty array of durations, found {}",
                            found(v)
                        ),
                    ));
                    None
                }
            };
            size.map(|size| AppT::Requests {
                size: Bytes(size),
                every: every.map(Nanos),
                at,
            })
        }
    };
    match app {
        Some(a) if issues.is_empty() => Ok(a),
        _ => Err(issues),
    }
}

flow_switches!(switch_fields!(struct file
/// `[[flow]]` (its switches: `super::switches`).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowT {
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default = "default_cca")]
    pub cca: String,
    #[serde(default)]
    pub cc: Map<String, Value>,
    #[serde(default = "zero_ns")]
    pub start: Nanos,
    #[serde(default)]
    pub size: Option<Bytes>,
    #[serde(default = "one")]
    pub count: i64,
    #[serde(default = "zero_ns")]
    pub stagger: Nanos,
    #[serde(default = "default_mss")]
    pub mss: i64,
    #[serde(default = "default_rwnd")]
    pub rwnd: Bytes,
    #[serde(default = "default_iw")]
    pub initial_cwnd: i64,
    /// Packets; absent: no cap beyond the algorithm's own.
    #[serde(default)]
    pub cwnd_clamp: Option<i64>,
    #[serde(default = "auto")]
    pub pacing: PacingT,
    #[serde(default)]
    pub sndbuf: Option<Bytes>,
    #[serde(default = "tcp")]
    pub proto: ProtoT,
    #[serde(default)]
    pub rate: Option<Bps>,
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    #[serde(default = "no_encap")]
    pub encap: Encap,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Read by [`read_app`].
    #[serde(default)]
    pub app: Option<Value>,
}));

fn auto() -> PacingT {
    PacingT(Pacing::Auto)
}
fn no_encap() -> Encap {
    Encap(0)
}

/// The document: `[scenario]`, `[[link]]`, `[[flow]]` (the tables' presence is checked after
/// serde, with the other problems).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Doc {
    #[serde(default)]
    pub scenario: Option<Section>,
    #[serde(default)]
    pub link: Option<Vec<LinkT>>,
    #[serde(default)]
    pub flow: Option<Vec<FlowT>>,
}

/// One direction of a `[link.model]`, as the model's resolver gives it: the nominal rate,
/// delay and loss (routes, BDP queues, the model engine), the model the engines build, and
/// the model's default queue (a Starlink dish's deep buffer) if it has one.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDir {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub loss: f64,
    pub model: crate::models::ModelSpec,
    #[serde(default)]
    pub queue: Option<QueueSpec>,
}

/// Checks one algorithm's parameters: "cc.KEY: expected ..." on failure.
pub type CheckCc<'a> = &'a dyn Fn(&str, &Map<String, Value>) -> Result<(), String>;

/// What the caller knows that satcc-core does not: the congestion controls (satcc-cc, above
/// this crate), the engines (Python's registry), where the scenario file lies and how files
/// on the host are read (a link model's trace, CSV or TLE set).
pub struct Known<'a> {
    pub ccas: &'a [&'a str],
    pub engines: &'a [&'a str],
    pub check_cc: CheckCc<'a>,
    /// The scenario file's folder: a model's file names are relative to it.
    pub base: &'a std::path::Path,
    pub files: &'a dyn ModelFiles,
}

/// A read, checked scenario file.
#[derive(Clone, Debug, Serialize)]
pub struct File {
    pub scenario: Section,
    pub links: Vec<LinkT>,
    pub flows: Vec<FlowT>,
    /// Per link: its model's two directions (a→b, b→a), if it has one.
    #[serde(skip)]
    pub models: Vec<Option<[ModelDir; 2]>>,
    /// Per flow: its application (`app`), read.
    #[serde(skip)]
    pub apps: Vec<Option<AppT>>,
    /// Keys reported as type errors and read as absent (not reported again as missing).
    #[serde(skip)]
    pub set_aside: HashSet<String>,
    pub name: String,
    pub nodes: Vec<String>,
    pub seed: u64,
}

/// serde's message for a type error, reworded as the scenario's: (key path, message).
fn reword(doc: &Value, path: &serde_path_to_error::Path, msg: &str) -> Issue {
    use serde_path_to_error::Segment;
    let mut key = String::new();
    let mut at = Some(doc);
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => {
                key.push_str(&format!("[{index}]"));
                at = at.and_then(|v| v.get(index));
            }
            Segment::Map { key: k } | Segment::Enum { variant: k } => {
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(k);
                at = at.and_then(|v| v.get(k));
            }
            Segment::Unknown => {}
        }
    }
    let found = || at.map_or("nothing".to_string(), |v| describe(&Raw::from_json(v)));
    let ticks = |s: &str| -> Vec<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let join = |k: &str| {
        if key.is_empty() {
            k.to_string()
        } else if key.ends_with(&format!(".{k}")) || key == k {
            key.clone()
        } else {
            format!("{key}.{k}")
        }
    };
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let names = ticks(rest);
        let (unknown, valid) = names
            .split_first()
            .map_or((String::new(), &[][..]), |(a, b)| (a.clone(), b));
        let valid: Vec<&str> = valid.iter().map(String::as_str).collect();
        return (
            join(&unknown),
            format!(
                "expected one of the keys {}; found an unknown key {}",
                valid.join(", "),
                py_str(&unknown)
            ),
        );
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let k = ticks(rest).into_iter().next().unwrap_or_default();
        if k == "kind" {
            return (
                join("kind"),
                format!(
                    "expected one of {}, found nothing",
                    APP_KINDS.map(py_str).join(", ")
                ),
            );
        }
        return (
            join(&k),
            format!("expected the required key {}, found nothing", py_str(&k)),
        );
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        let names = ticks(rest);
        let valid: Vec<String> = names.iter().skip(1).map(|n| py_str(n)).collect();
        let key = if at.is_some_and(Value::is_object) {
            join("kind")
        } else {
            key.clone()
        };
        let found = names.first().map_or("nothing".into(), |n| py_str(n));
        return (
            key,
            format!("expected one of {}, found {found}", valid.join(", ")),
        );
    }
    if msg.starts_with("invalid type") || msg.starts_with("invalid value") {
        let want = msg.rsplit(", expected ").next().unwrap_or("");
        if (key == "link" || key == "flow") && want == "a sequence" {
            return (
                key.clone(),
                format!(
                    "expected an array of tables written [[{key}]], found {}",
                    found()
                ),
            );
        }
        if key == "scenario" {
            return (
                key.clone(),
                format!("expected a [scenario] table, found {}", found()),
            );
        }
        let expected = match want {
            "a boolean" => "true or false",
            "i64" | "u64" | "u32" | "usize" | "i32" => "an integer",
            "f64" => "a number",
            "a string" => "a string",
            "a sequence" => "an array",
            w if w == "a map" || w.starts_with("struct ") || w.starts_with("internally tagged") => {
                "a table"
            }
            w => w,
        };
        return (
            key.clone(),
            format!("expected {expected}, found {}", found()),
        );
    }
    (key, msg.to_string())
}

/// Remove the key a type error is about from `doc` (false: nothing to set aside, as for a
/// missing key or a table of the wrong type at the top).
fn set_aside_key(doc: &mut Value, path: &serde_path_to_error::Path, msg: &str) -> bool {
    use serde_path_to_error::Segment;
    let segs: Vec<&Segment> = path.iter().collect();
    if msg.starts_with("missing field") || segs.len() < 2 {
        return false;
    }
    let unknown = msg
        .strip_prefix("unknown field `")
        .and_then(|r| r.split('`').next())
        .map(str::to_string);
    let (parent, last) = match (&unknown, segs.last()) {
        (Some(u), Some(Segment::Map { key })) if key == u => (&segs[..segs.len() - 1], u.clone()),
        (Some(u), _) => (&segs[..], u.clone()),
        (None, Some(Segment::Map { key })) => (&segs[..segs.len() - 1], key.clone()),
        _ => return false,
    };
    let mut at = doc;
    for seg in parent {
        at = match seg {
            Segment::Seq { index } => match at.get_mut(*index) {
                Some(v) => v,
                None => return false,
            },
            Segment::Map { key } => match at.get_mut(key.as_str()) {
                Some(v) => v,
                None => return false,
            },
            _ => return false,
        };
    }
    at.as_object_mut().and_then(|m| m.remove(&last)).is_some()
}

/// Read a scenario document: its `[link.model]` tables resolved ([`table::resolve`]), its
/// tables, units and defaults through serde, then every check; the models' problems follow
/// the others.
pub fn read(doc: &Value, default_name: &str, known: &Known) -> Result<File, Vec<Issue>> {
    let (models, model_issues) = resolve_models(doc, known);
    match read_tables(doc, default_name, models, known) {
        Ok(f) if model_issues.is_empty() => Ok(f),
        Ok(_) => Err(model_issues),
        Err(mut issues) => {
            issues.extend(model_issues);
            Err(issues)
        }
    }
}

/// Each link's `[link.model]` resolved (None: no model, or one with problems, which are
/// returned beside), read from the document as it is, before serde.
fn resolve_models(doc: &Value, known: &Known) -> (Vec<Option<[ModelDir; 2]>>, Vec<Issue>) {
    let Some(links) = doc.get("link").and_then(Value::as_array) else {
        return (Vec::new(), Vec::new());
    };
    let duration_ns = doc
        .get("scenario")
        .and_then(|s| s.get("duration"))
        .and_then(|d| units::duration_ns(&Raw::from_json(d)).ok());
    let cx = table::Context {
        base: known.base,
        duration_ns,
        files: known.files,
    };
    let mut issues = Vec::new();
    let models = links
        .iter()
        .enumerate()
        .map(|(i, link)| {
            let t = link.get("model").filter(|t| t.is_object())?;
            table::resolve(t, &format!("link[{i}].model"), &cx)
                .map_err(|e| issues.extend(e))
                .ok()
        })
        .collect();
    (models, issues)
}

fn read_tables(
    doc: &Value,
    default_name: &str,
    models: Vec<Option<[ModelDir; 2]>>,
    known: &Known,
) -> Result<File, Vec<Issue>> {
    if !doc.is_object() {
        return Err(vec![(
            String::new(),
            format!(
                "expected a table of [scenario], [[link]] and [[flow]], found {}",
                describe(&Raw::from_json(doc))
            ),
        )]);
    }
    // serde stops at the first type error: each bad key is reported and set aside (removed from
    // a copy, its default taken), and the rest read again, so one pass reports every problem;
    // a required key set aside is not reported again as missing.
    let mut rest = doc.clone();
    let mut issues: Vec<Issue> = Vec::new();
    let mut set_aside: HashSet<String> = HashSet::new();
    let d: Doc = loop {
        match serde_path_to_error::deserialize::<_, Doc>(&rest) {
            Ok(d) => break d,
            Err(e) => {
                let path = e.path().clone();
                let msg = e.into_inner().to_string();
                let (key, text) = reword(&rest, &path, &msg);
                if set_aside.contains(&key) {
                    return Err(issues); // a required key already reported
                }
                issues.push((key.clone(), text));
                if issues.len() > 100 || !set_aside_key(&mut rest, &path, &msg) {
                    return Err(issues);
                }
                set_aside.insert(key);
            }
        }
    };
    let mut bad = |k: &str, m: String| issues.push((k.to_string(), m));
    let section = match d.scenario {
        Some(s) => s,
        None => {
            bad(
                "scenario",
                "expected a [scenario] table with at least `duration`, found none".into(),
            );
            serde_json::from_value(serde_json::json!({})).expect("a section of defaults")
        }
    };
    let links = d.link.unwrap_or_default();
    let flows = d.flow.unwrap_or_default();
    if doc.get("scenario").is_some()
        && section.duration.is_none()
        && !set_aside.contains("scenario.duration")
    {
        bad(
            "scenario.duration",
            "expected the required key 'duration', found nothing".into(),
        );
    }
    for (t, n) in [("link", links.len()), ("flow", flows.len())] {
        if n == 0 {
            bad(
                t,
                format!("expected at least one [[{t}]] table, found none"),
            );
        }
    }
    let mut f = File {
        name: section
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_string()),
        nodes: Vec::new(),
        seed: DEFAULT_SEED,
        scenario: section,
        links,
        flows,
        models,
        apps: Vec::new(),
        set_aside,
    };
    f.models.resize(f.links.len(), None);
    let mut seen = HashSet::new();
    for l in &f.links {
        for n in [&l.a, &l.b] {
            if seen.insert(n.clone()) {
                f.nodes.push(n.clone());
            }
        }
    }
    let checked = check(&mut f, known);
    issues.extend(checked);
    if issues.is_empty() {
        Ok(f)
    } else {
        Err(issues)
    }
}

fn fmt_ns(ns: u64) -> String {
    // as satcc.units.format_duration writes it (3 significant digits)
    if ns == 0 {
        return "0 s".into();
    }
    for (unit, scale) in [("s", 1e9), ("ms", 1e6), ("us", 1e3)] {
        if ns as f64 >= scale {
            return format!("{} {unit}", trim3(ns as f64 / scale));
        }
    }
    format!("{} ns", trim3(ns as f64))
}

/// Python's `f"{x:.3g}"` for 1 <= x < 1000, `f"{x:.0f}"` above.
fn trim3(x: f64) -> String {
    if x >= 1000.0 {
        return format!("{x:.0}");
    }
    let digits = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{x:.digits$}");
    // a rounding that reaches the next decade (9.995 -> 10.00) has one digit too many
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    s
}

fn check(f: &mut File, known: &Known) -> Vec<Issue> {
    let mut out: Vec<Issue> = Vec::new();
    macro_rules! bad {
        ($k:expr, $m:expr $(,)?) => {
            out.push(($k.to_string(), $m.to_string()))
        };
    }
    let mut seed = DEFAULT_SEED;
    let mut apps = Vec::with_capacity(f.flows.len());
    let sec = &f.scenario;
    let name_issue = |n: &str| {
        let c = n.chars().count();
        (c > MAX_NAME_CHARS)
            .then(|| format!("expected a name of at most {MAX_NAME_CHARS} characters, found {c}"))
    };
    if let Some(m) = sec.name.as_deref().and_then(name_issue) {
        bad!("scenario.name", m);
    }
    for (i, fl) in f.flows.iter().enumerate() {
        if let Some(m) = fl.name.as_deref().and_then(name_issue) {
            bad!(format!("flow[{i}].name"), m);
        }
    }
    let duration = sec.duration.map_or(0, |d| d.0);
    let dtext = fmt_ns(duration);
    if sec.duration.is_some() && duration == 0 {
        bad!(
            "scenario.duration",
            format!("expected a positive duration, found {dtext}"),
        );
    }
    match sec.seed.as_u64() {
        Some(s) => seed = s,
        None if sec.seed.is_i64()
            || sec.seed.is_f64()
                && sec
                    .seed
                    .as_f64()
                    .is_some_and(|x| x.fract() == 0.0 && x.abs() > 1.0) =>
        {
            bad!(
                "scenario.seed",
                format!(
                    "expected an integer in 0..2^64-1, found {}",
                    describe(&Raw::from_json(&sec.seed))
                ),
            )
        }
        None => bad!(
            "scenario.seed",
            format!(
                "expected an integer, found {}",
                describe(&Raw::from_json(&sec.seed))
            ),
        ),
    }
    if !known.engines.contains(&sec.engine.as_str()) {
        let names: Vec<String> = known.engines.iter().map(|e| py_str(e)).collect();
        bad!(
            "scenario.engine",
            format!(
                "expected one of {}, found {}",
                names.join(", "),
                py_str(&sec.engine)
            ),
        );
    }
    if let Some(t) = sec.clock_tolerance.filter(|t| t.0 < 0.0) {
        bad!(
            "scenario.clock_tolerance",
            format!(
                "expected a tolerance of at least 0 ppm (the draw spreads it either way), found {} ppm",
                t.0
            ),
        );
    }
    let bin = sec.bin.0;
    if bin == 0 {
        bad!("scenario.bin", "expected a positive duration, found 0");
    } else if duration > 0 && bin > duration {
        bad!(
            "scenario.bin",
            format!(
                "expected at most the duration ({dtext}), found {}",
                fmt_ns(bin)
            ),
        );
    } else if duration > 0 && duration.div_ceil(bin) > MAX_BINS {
        bad!(
            "scenario.bin",
            format!(
                "expected at most {MAX_BINS} bins over the duration, found {} bins of {}",
                duration.div_ceil(bin),
                fmt_ns(bin)
            ),
        );
    }

    // links
    let mut pairs: HashMap<(String, String), usize> = HashMap::new();
    for (i, l) in f.links.iter().enumerate() {
        let p = format!("link[{i}]");
        if l.a == l.b {
            bad!(
                format!("{p}.b"),
                format!(
                    "expected a node other than a ({}), found {}",
                    py_str(&l.a),
                    py_str(&l.b)
                ),
            );
            continue;
        }
        if l.model.is_none() {
            for (k, missing) in [("rate", l.rate.is_none()), ("delay", l.delay.is_none())] {
                if missing && !f.set_aside.contains(&format!("{p}.{k}")) {
                    bad!(
                        format!("{p}.{k}"),
                        format!("expected the required key '{k}' (or a [link.model] table), found nothing"),
                    );
                }
            }
        } else {
            for (k, set) in [
                ("rate", l.rate.is_some()),
                ("delay", l.delay.is_some()),
                ("loss", l.loss.is_some()),
                ("rate_ba", l.rate_ba.is_some()),
                ("delay_ba", l.delay_ba.is_some()),
                ("loss_ba", l.loss_ba.is_some()),
                ("clock", l.clock.is_some()),
                ("clock_ba", l.clock_ba.is_some()),
            ] {
                if set {
                    bad!(
                        format!("{p}.{k}"),
                        format!("expected no {k} beside [link.model] (the model sets it), found {k} = ..."),
                    );
                }
            }
        }
        let pair = if l.a < l.b {
            (l.a.clone(), l.b.clone())
        } else {
            (l.b.clone(), l.a.clone())
        };
        if let Some(first) = pairs.get(&pair) {
            bad!(
                p.clone(),
                format!(
                    "expected at most one link between {} and {}, found a second one (the first is link[{first}])",
                    py_str(&l.a),
                    py_str(&l.b)
                ),
            );
        } else {
            pairs.insert(pair, i);
        }
        for (k, r) in [("rate", l.rate), ("rate_ba", l.rate_ba)] {
            if r.is_some_and(|r| r.0 == 0) {
                bad!(
                    format!("{p}.{k}"),
                    "expected a positive rate, found 0 bit/s"
                );
            }
        }
        for (k, e) in l.twin::<switches::link::ecn_threshold>() {
            if e.is_some_and(|e| e.get() == Some(Pkts(0))) {
                bad!(format!("{p}.{k}"), "expected at least 1 packet, found 0");
            }
        }
        if !(1..=1_000_000).contains(&l.hz) {
            bad!(
                format!("{p}.hz"),
                format!("expected a tick rate in 1..1000000, found {}", l.hz)
            );
        }
        if l.service == Service::Tick && l.model.is_some() {
            bad!(
                format!("{p}.service"),
                "expected \"exact\" on a link with [link.model] (tick service serves constant links only), found \"tick\"",
            );
        }
    }

    // flows
    let nodes: HashSet<&str> = f.nodes.iter().map(String::as_str).collect();
    let mut sorted: Vec<&str> = nodes.iter().copied().collect();
    sorted.sort();
    let names = sorted.join(", ");
    let mut adjacency: HashMap<&str, Vec<&str>> = HashMap::new();
    for l in &f.links {
        adjacency.entry(&l.a).or_default().push(&l.b);
        adjacency.entry(&l.b).or_default().push(&l.a);
    }
    if let Some(v) = &sec.vpn {
        if !nodes.contains(v.as_str()) {
            bad!(
                "scenario.vpn",
                format!(
                    "expected a node named in a link ({names}), found {}",
                    py_str(v)
                ),
            );
        }
    }
    let mut total: u64 = 0;
    for (i, fl) in f.flows.iter().enumerate() {
        let p = format!("flow[{i}]");
        for (k, n) in [("from", &fl.from), ("to", &fl.to)] {
            if !nodes.contains(n.as_str()) {
                bad!(
                    format!("{p}.{k}"),
                    format!(
                        "expected a node named in a link ({names}), found {}",
                        py_str(n)
                    ),
                );
            }
        }
        if nodes.contains(fl.from.as_str()) && nodes.contains(fl.to.as_str()) {
            if fl.from == fl.to {
                bad!(
                    format!("{p}.to"),
                    format!(
                        "expected a node other than from ({}), found {}",
                        py_str(&fl.from),
                        py_str(&fl.to)
                    ),
                );
            } else if !reachable(&adjacency, &fl.from).contains(fl.to.as_str()) {
                bad!(
                    format!("{p}.to"),
                    format!(
                        "expected a node connected to {} by links, found {}, which is not",
                        py_str(&fl.from),
                        py_str(&fl.to)
                    ),
                );
            }
        }
        if !known.ccas.contains(&fl.cca.as_str()) {
            bad!(
                format!("{p}.cca"),
                format!(
                    "expected one of {}, found {}",
                    known.ccas.join(", "),
                    py_str(&fl.cca)
                ),
            );
        } else if let Err(e) = (known.check_cc)(&fl.cca, &normalize_cc(&fl.cc)) {
            out.push(cc_issue(&p, &fl.cca, &e, &fl.cc));
        }
        if fl.count < 1 {
            bad!(
                format!("{p}.count"),
                format!("expected an integer >= 1, found {}", fl.count)
            );
        }
        total = total.saturating_add(fl.count.max(0) as u64);
        let last = fl
            .start
            .0
            .saturating_add((fl.count.max(1) as u64 - 1).saturating_mul(fl.stagger.0));
        if duration > 0 && last >= duration {
            let k = if fl.count <= 1 || fl.stagger.0 == 0 {
                "start"
            } else {
                "stagger"
            };
            bad!(
                format!("{p}.{k}"),
                format!(
                    "expected flows to start before the end of the run ({dtext}), found a start at {}",
                    fmt_ns(last)
                ),
            );
        }
        if fl.size.is_some_and(|s| s.0 < 1) {
            bad!(format!("{p}.size"), "expected at least 1 byte, found 0 B");
        }
        if !(MIN_MSS as i64..=MAX_MSS as i64).contains(&fl.mss) {
            bad!(
                format!("{p}.mss"),
                format!(
                    "expected an integer in {MIN_MSS}..{MAX_MSS} bytes, found {}",
                    fl.mss
                ),
            );
        } else if fl.rwnd.0 < fl.mss as u64 {
            bad!(
                format!("{p}.rwnd"),
                format!(
                    "expected at least one segment (mss = {} B), found {} B",
                    fl.mss, fl.rwnd.0
                ),
            );
        }
        if fl.initial_cwnd < 1 {
            bad!(
                format!("{p}.initial_cwnd"),
                format!("expected an integer >= 1, found {}", fl.initial_cwnd),
            );
        }
        if fl
            .cwnd_clamp
            .is_some_and(|c| !(1..=i64::from(u32::MAX / 2)).contains(&c))
        {
            bad!(
                format!("{p}.cwnd_clamp"),
                format!(
                    "expected an integer of packets in 1..{}, found {}",
                    u32::MAX / 2,
                    fl.cwnd_clamp.unwrap_or(0)
                ),
            );
        }
        if fl.min_rto.get().0 == 0 {
            bad!(
                format!("{p}.min_rto"),
                "expected a positive duration, found 0"
            );
        }
        // UDP, tunnels, path MTU
        if fl.proto == ProtoT::Udp {
            match fl.rate {
                Some(r) if r.0 > 0 => {}
                r => bad!(
                    format!("{p}.rate"),
                    format!(
                        "expected a positive rate for a UDP flow, found {}",
                        if r.is_none() { "nothing" } else { "0 bit/s" }
                    ),
                ),
            }
            let size = fl.packet_size.map_or(DEFAULT_UDP_PAYLOAD, |s| s.0);
            if !(1..=MAX_UDP_PAYLOAD_BYTES as u64).contains(&size) {
                bad!(
                    format!("{p}.packet_size"),
                    format!(
                        "expected 1..{MAX_UDP_PAYLOAD_BYTES} bytes of UDP payload, found {size} B"
                    ),
                );
            }
        } else {
            for (k, set) in [
                ("rate", fl.rate.is_some()),
                ("packet_size", fl.packet_size.is_some()),
            ] {
                if set {
                    bad!(
                        format!("{p}.{k}"),
                        format!("expected {k} only with proto = 'udp', found it on a TCP flow"),
                    );
                }
            }
        }
        if !(MIN_MTU as u64..=MAX_MTU as u64).contains(&fl.mtu.0) {
            bad!(
                format!("{p}.mtu"),
                format!("expected {MIN_MTU}..{MAX_MTU} bytes, found {} B", fl.mtu.0),
            );
        } else if fl.encap.0 >= fl.mtu.0 - 40 {
            bad!(
                format!("{p}.encap"),
                format!(
                    "expected fewer bytes than the MTU less 40, found {} B",
                    fl.encap.0
                ),
            );
        }
        // application traffic
        let app = match fl.app.as_ref().map(|v| read_app(&p, v)) {
            None => None,
            Some(Ok(a)) => Some(a),
            Some(Err(e)) => {
                out.extend(e);
                None
            }
        };
        apps.push(app.clone());
        if let Some(app) = &app {
            let kind = match app {
                AppT::Bulk => "bulk",
                AppT::Onoff { .. } => "onoff",
                AppT::Requests { .. } => "requests",
            };
            match app {
                AppT::Bulk => {}
                AppT::Onoff { on, off } => {
                    for (k, v) in [("on", on), ("off", off)] {
                        if v.0 == 0 {
                            bad!(format!("{p}.app.{k}"), "expected a positive value, found 0");
                        }
                    }
                }
                AppT::Requests { size, every, at } => {
                    if size.0 == 0 {
                        bad!(
                            format!("{p}.app.size"),
                            "expected a positive value, found 0"
                        );
                    }
                    match (every, at) {
                        (Some(e), None) => {
                            if e.0 == 0 {
                                bad!(
                                    format!("{p}.app.every"),
                                    "expected a positive value, found 0"
                                );
                            }
                        }
                        (None, Some(at)) => {
                            if at.is_empty() {
                                bad!(
                                    format!("{p}.app.at"),
                                    "expected a non-empty array of durations, found an array",
                                );
                            } else if at.windows(2).any(|w| w[0].0 > w[1].0) {
                                bad!(
                                    format!("{p}.app.at"),
                                    "expected ascending times, found them out of order",
                                );
                            }
                        }
                        (e, _) => bad!(
                            format!("{p}.app.every"),
                            format!(
                                "expected exactly one of every and at, found {}",
                                if e.is_some() { "both" } else { "neither" }
                            ),
                        ),
                    }
                }
            }
            if kind != "bulk" {
                for (k, wrong, what) in [
                    ("proto", fl.proto != ProtoT::Tcp, "a TCP flow"),
                    (
                        "size",
                        fl.size.is_some(),
                        "no size (the application decides what is written)",
                    ),
                    (
                        "metrics_save",
                        fl.metrics_save,
                        "false (the cache is written when a transfer closes)",
                    ),
                ] {
                    if wrong {
                        bad!(
                            format!("{p}.{k}"),
                            format!("expected {what} with app kind {}", py_str(kind))
                        );
                    }
                }
            }
        }
    }
    if total > MAX_FLOWS {
        bad!(
            "flow",
            format!("expected at most {MAX_FLOWS} flows after count, found {total}")
        );
    }
    if let Some(sa) = &sec.seqack {
        if !(sa.flow >= 0 && (sa.flow as u64) < total) {
            bad!(
                "scenario.seqack.flow",
                format!(
                    "expected a flow id in 0..{}, found {}",
                    total as i64 - 1,
                    sa.flow
                ),
            );
        } else {
            let mut k = sa.flow as u64;
            for fl in &f.flows {
                let n = fl.count.max(0) as u64;
                if k < n {
                    if fl.proto != ProtoT::Tcp {
                        bad!(
                            "scenario.seqack.flow",
                            format!("expected a TCP flow, flow {} is UDP", sa.flow),
                        );
                    }
                    break;
                }
                k -= n;
            }
        }
        let to = sa.to.map_or(duration, |t| t.0);
        if !(sa.from.0 < to && to <= duration) {
            bad!(
                "scenario.seqack.to",
                format!(
                    "expected 0 <= from < to <= the run's {dtext}, found from {}, to {}",
                    fmt_ns(sa.from.0),
                    fmt_ns(to)
                ),
            );
        }
        if !(1..=MAX_SEQACK_ROWS as i64).contains(&sa.max_rows) {
            bad!(
                "scenario.seqack.max_rows",
                format!(
                    "expected an integer in 1..{MAX_SEQACK_ROWS}, found {}",
                    sa.max_rows
                ),
            );
        }
    }
    f.seed = seed;
    f.apps = apps;
    out
}

fn reachable<'a>(adjacency: &HashMap<&'a str, Vec<&'a str>>, start: &'a str) -> HashSet<&'a str> {
    let mut seen = HashSet::from([start]);
    let mut todo = VecDeque::from([start]);
    while let Some(n) = todo.pop_front() {
        for &next in adjacency.get(n).into_iter().flatten() {
            if seen.insert(next) {
                todo.push_back(next);
            }
        }
    }
    seen
}

/// CCA parameters in the registry's types: integers become floats (TOML `3` == `3.0`), also
/// inside arrays of pairs; keys sorted.
pub fn normalize_cc(params: &Map<String, Value>) -> Map<String, Value> {
    let float = |v: &Value| match v {
        Value::Number(n) if !n.is_f64() => n.as_f64().map_or(v.clone(), Value::from),
        _ => v.clone(),
    };
    let sorted: BTreeMap<&String, &Value> = params.iter().collect();
    sorted
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|pair| match pair {
                            Value::Array(xs) => Value::Array(xs.iter().map(float).collect()),
                            other => other.clone(),
                        })
                        .collect(),
                ),
                other => float(other),
            };
            (k.clone(), v)
        })
        .collect()
}

/// The registry's "cc.beta: expected ..." as a key path and a message.
fn cc_issue(prefix: &str, cca: &str, message: &str, params: &Map<String, Value>) -> Issue {
    let (head, rest) = match message.split_once(": ") {
        Some((h, r)) if h == "cc" || h.starts_with("cc.") => (h.to_string(), r.to_string()),
        _ => ("cc".to_string(), message.to_string()),
    };
    let path = format!("{prefix}.{head}");
    let text = if !rest.contains("expected") {
        format!("expected parameters valid for {cca}, found: {rest}")
    } else if !rest.contains("found") {
        let key = head.trim_start_matches("cc").trim_start_matches('.');
        let value = if key.is_empty() {
            Raw::Table
        } else {
            params.get(key).map_or(Raw::Table, Raw::from_json)
        };
        format!("{rest}, found {}", describe(&value))
    } else {
        rest
    };
    (path, text)
}

impl File {
    /// Resolved flows: (scenario flow index, copy, name) in id order.
    pub fn flow_origins(&self) -> Vec<(usize, u64, String)> {
        let mut out = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            let base = fl.name.clone().unwrap_or_else(|| format!("flow{i}"));
            let n = fl.count.max(0) as u64;
            for k in 0..n {
                let name = if n == 1 {
                    base.clone()
                } else {
                    format!("{base}.{k}")
                };
                out.push((i, k, name));
            }
        }
        out
    }

    /// The resolver's input: units in base units, defaults filled, `count` expanded, nodes as
    /// indices; `seed` replaces the file's.
    pub fn scenario(&self, seed: Option<u64>) -> Scenario {
        let seed = seed.unwrap_or(self.seed);
        let tolerance = self.scenario.clock_tolerance.map_or(0.0, |t| t.0);
        let index: HashMap<&str, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let links = self
            .links
            .iter()
            .zip(&self.models)
            .enumerate()
            .map(|(i, (l, m))| {
                let (mut ab, mut ba) = match m {
                    Some([ab, ba]) => (model_dir(l, ab, false), model_dir(l, ba, true)),
                    None => {
                        let q = l.queue.unwrap_or(default_queue()).0;
                        let ab = Direction::new(
                            l.rate.map_or(0, |r| r.0),
                            l.delay.map_or(0, |d| d.0),
                            l.loss.map_or(0.0, |p| p.0),
                            q,
                        );
                        let ba = Direction::new(
                            l.rate_ba.or(l.rate).map_or(0, |r| r.0),
                            l.delay_ba.or(l.delay).map_or(0, |d| d.0),
                            l.loss_ba.or(l.loss).map_or(0.0, |p| p.0),
                            l.queue_ba.map_or(q, |q| q.0),
                        );
                        (ab, ba)
                    }
                };
                link_keys!(link_fields!(copy l => ab, ba));
                if tolerance > 0.0 && m.is_none() {
                    let own = [l.clock.is_some(), l.clock_ba.or(l.clock).is_some()];
                    for (k, (d, own)) in [&mut ab, &mut ba].into_iter().zip(own).enumerate() {
                        if !own {
                            d.clock =
                                switches::Key::new(Ppm(clock_draw(seed, 2 * i + k, tolerance)));
                        }
                    }
                }
                if l.service == Service::Tick {
                    for d in [&mut ab, &mut ba] {
                        d.tick_ns = Some(1_000_000_000 / l.hz.max(1) as u64);
                    }
                }
                Link {
                    a: index[l.a.as_str()],
                    b: index[l.b.as_str()],
                    ab,
                    ba,
                }
            })
            .collect();
        let flows = self
            .flow_origins()
            .into_iter()
            .enumerate()
            .map(|(id, (i, k, _))| {
                let fl = &self.flows[i];
                let udp = fl.proto == ProtoT::Udp;
                flow_switches!(switch_fields!(copy fl => Flow {
                    id: id as u32,
                    src: index[fl.from.as_str()],
                    dst: index[fl.to.as_str()],
                    cca: fl.cca.clone(),
                    cc: Some(normalize_cc(&fl.cc)),
                    start_ns: fl.start.0 + k * fl.stagger.0,
                    size_bytes: fl.size.map(|s| s.0),
                    mss: fl.mss as u32,
                    rwnd_bytes: fl.rwnd.0,
                    initial_cwnd: fl.initial_cwnd as u32,
                    cwnd_clamp: fl.cwnd_clamp.map(|c| c as u32),
                    pacing: fl.pacing.0,
                    sndbuf_bytes: fl.sndbuf.map(|s| s.0),
                    proto: udp.then_some(Proto::Udp),
                    udp_rate_bps: if udp { fl.rate.map(|r| r.0) } else { None },
                    udp_payload_bytes: udp
                        .then(|| fl.packet_size.map_or(DEFAULT_UDP_PAYLOAD, |s| s.0) as u32),
                    encap_bytes: fl.encap.0 as u32,
                    mtu: fl.mtu.0 as u32,
                    app: self.apps.get(i).and_then(Option::as_ref).and_then(app),
                }))
            })
            .collect();
        let s = &self.scenario;
        let duration = s.duration.map_or(0, |d| d.0);
        scenario_switches!(switch_fields!(copy s => Scenario {
            name: self.name.clone(),
            seed,
            duration_ns: duration,
            bin_ns: s.bin.0,
            nodes: self.nodes.clone(),
            links,
            flows,
            host_noise_quantiles_ns: match s.host_noise.0 {
                HostNoiseT::Word("kernel") => Some(HostNoiseSpec::kernel()),
                HostNoiseT::Word(_) | HostNoiseT::Uniform(0) => None,
                HostNoiseT::Uniform(ns) => {
                    let u = vec![(0.0, 0), (1.0, ns)];
                    Some(HostNoiseSpec {
                        sender: u.clone(),
                        receiver: u,
                    })
                }
            },
            seqack: s.seqack.as_ref().map(|sa| SeqAckSpec {
                flow: sa.flow as u32,
                from_ns: sa.from.0,
                to_ns: sa.to.map_or(duration, |t| t.0),
                max_rows: sa.max_rows as usize,
            }),
            capture: s.capture.clone(),
        }))
    }
}

/// Where the clock draws' streams start (`Rng::derive(seed, CLOCK_RNG_BASE + direction)`),
/// apart from every other stream drawn from the scenario's seed.
const CLOCK_RNG_BASE: u64 = 0xC10C_0000_0000;

/// Direction `k`'s clock offset under `scenario.clock_tolerance` (ppm, uniform in ±tolerance,
/// rounded to 0.001 ppm so the resolved form reads as written).
fn clock_draw(seed: u64, k: usize, tolerance: f64) -> f64 {
    let mut rng = crate::rng::Rng::derive(seed, CLOCK_RNG_BASE + k as u64);
    (rng.uniform(-tolerance, tolerance) * 1000.0).round() / 1000.0
}

/// A link direction with a model: the model's nominal state and MODEL dictionary; the queue
/// the link gives (`queue`, `queue_ba`), else the model's, else the default.
fn model_dir(l: &LinkT, m: &ModelDir, ba: bool) -> Direction {
    let explicit = if ba { l.queue_ba.or(l.queue) } else { l.queue };
    let queue = explicit.map(|q| q.0).or(m.queue).unwrap_or(DEFAULT_QUEUE);
    Direction {
        model: Some(m.model.clone()),
        ..Direction::new(m.rate_bps, m.delay_ns, m.loss, queue)
    }
}

fn app(a: &AppT) -> Option<App> {
    match a {
        AppT::Bulk => None, // absent = bulk, so existing scenarios keep their hash
        AppT::Onoff { on, off } => Some(App::Onoff {
            on_ns: on.0,
            off_ns: off.0,
        }),
        AppT::Requests { size, every, at } => Some(App::Requests {
            bytes: size.0,
            every_ns: every.map(|e| e.0),
            at_ns: at
                .as_ref()
                .map_or(Vec::new(), |a| a.iter().map(|t| t.0).collect()),
        }),
    }
}

/// The JSON Schema of a scenario file (for editors: taplo, Even Better TOML), from the types
/// above; `make schema` writes it to docs/scenario.schema.json and a test keeps it current.
pub fn json_schema() -> String {
    let mut text =
        serde_json::to_string_pretty(&schemars::schema_for!(Doc)).expect("a schema serialises");
    text.push('\n');
    text
}

/// The keys each table accepts (its serde field names), for the reference's test and editors:
/// `[scenario]`, `[[link]]`, `[[flow]]`.
pub fn table_keys() -> [(&'static str, &'static [&'static str]); 3] {
    [
        ("scenario", fields_of::<Section>()),
        ("link", fields_of::<LinkT>()),
        ("flow", fields_of::<FlowT>()),
    ]
}

/// A struct's field names, as serde hands them to a deserializer.
fn fields_of<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Stop {
            Stop
        }
    }
    struct Capture<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Capture<'_> {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            *self.0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut out: &'static [&'static str] = &[];
    let _ = T::deserialize(Capture(&mut out));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn known() -> Known<'static> {
        Known {
            ccas: &["cubic", "reno"],
            engines: &["sim", "model", "emu"],
            check_cc: &|_, _| Ok(()),
            base: std::path::Path::new("."),
            files: &table::NoFiles,
        }
    }

    fn minimal() -> Value {
        json!({"scenario": {"name": "tiny", "duration": "2 s"},
               "link": [{"a": "s", "b": "d", "rate": "10 Mbit/s", "delay": "10 ms"}],
               "flow": [{"from": "s", "to": "d", "cca": "reno"}]})
    }

    fn issues(doc: &Value) -> Vec<Issue> {
        read(doc, "x", &known()).unwrap_err()
    }

    /// `doc` resolved, with its wire form, which must read back as the same scenario.
    fn resolved_wire(doc: &Value) -> (super::super::Resolved, Value) {
        let r = read(doc, "x", &known())
            .unwrap()
            .scenario(None)
            .resolve()
            .unwrap();
        let wire = serde_json::to_value(&r).unwrap();
        assert_eq!(super::super::Resolved::from_json(&wire).unwrap(), r);
        (r, wire)
    }

    #[test]
    fn clocks_fixed_drawn_and_refused() {
        // a fixed offset: both directions (the twin defaults to the key), written in ppm
        // in the resolved form and applied to the rate both engines serialise at
        let mut d = minimal();
        d["link"][0]["clock"] = json!("+20 ppm");
        d["link"][0]["clock_ba"] = json!("-1000 ppm");
        let (r, wire) = resolved_wire(&d);
        assert_eq!(wire["links"][0]["ab"]["clock_ppm"], 20.0);
        assert_eq!(wire["links"][0]["ba"]["clock_ppm"], -1000.0);
        assert_eq!(r.direction(0).unwrap().nominal.rate_bps, 10_000_200);
        assert_eq!(r.direction(1).unwrap().nominal.rate_bps, 9_990_000);
        // none written: the nominal rate, and nothing in the resolved form
        let (plain, wire) = resolved_wire(&minimal());
        assert!(wire["links"][0]["ab"].get("clock_ppm").is_none());
        assert_eq!(plain.direction(0).unwrap().nominal.rate_bps, 10_000_000);
        // a tolerance: each direction drawn from the seed within it, the same draw for the
        // same seed, another for another seed; a direction's own clock is kept
        let mut d = minimal();
        d["scenario"]["clock_tolerance"] = json!("100 ppm");
        let f = read(&d, "x", &known()).unwrap();
        let ppm = |s: &Scenario| [s.links[0].ab.clock.get().0, s.links[0].ba.clock.get().0];
        let (a, b) = (ppm(&f.scenario(Some(1))), ppm(&f.scenario(Some(2))));
        assert_eq!(a, ppm(&f.scenario(Some(1))));
        assert_ne!(a, b);
        for x in a.into_iter().chain(b) {
            assert!(x.abs() <= 100.0 && x != 0.0, "{x}");
        }
        assert_ne!(a[0], a[1]);
        d["link"][0]["clock_ba"] = json!("0 ppm");
        let kept = ppm(&read(&d, "x", &known()).unwrap().scenario(Some(1)));
        assert_eq!(kept, [a[0], 0.0]);
        // refused: no unit, beyond the limit, a negative tolerance, beside a model
        for (v, why) in [
            (json!(20), "a bare number needs its unit: ppm"),
            (json!("1001 ppm"), "above the limit of 1000 ppm either way"),
        ] {
            let mut d = minimal();
            d["link"][0]["clock"] = v;
            let (k, m) = &issues(&d)[0];
            assert_eq!(k, "link[0].clock");
            assert!(
                m.starts_with("expected a clock offset like") && m.contains(why),
                "{m}"
            );
        }
        let mut d = minimal();
        d["scenario"]["clock_tolerance"] = json!("-5 ppm");
        let (k, m) = &issues(&d)[0];
        assert_eq!(k, "scenario.clock_tolerance");
        assert!(
            m.starts_with("expected a tolerance of at least 0 ppm"),
            "{m}"
        );
        let mut dir = Direction::new(1, 1, 0.0, QueueSpec::Packets(1));
        dir.clock = switches::Key::new(Ppm(f64::NAN));
        assert!(dir.check("link[0].ab").unwrap_err().contains("clock_ppm"));
    }

    #[test]
    fn integer_cc_parameters_become_floats_and_keys_are_sorted() {
        let m = json!({"b": 2, "a": true, "c": [[0, 1]]});
        let n = normalize_cc(m.as_object().unwrap());
        assert_eq!(
            Value::Object(n.clone()),
            json!({"a": true, "b": 2.0, "c": [[0.0, 1.0]]})
        );
        assert_eq!(n.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
    }

    #[test]
    fn each_table_lists_its_keys() {
        let [(_, s), (_, l), (_, f)] = table_keys();
        assert!(s.contains(&"duration") && l.contains(&"queue_ba") && f.contains(&"from"));
    }

    #[test]
    fn a_minimal_file_resolves_with_the_defaults() {
        let f = read(&minimal(), "x", &known()).unwrap();
        let r = f.scenario(None).resolve().unwrap();
        let fl = &r.scenario.flows[0];
        assert_eq!(
            (fl.mss, fl.rwnd_bytes, fl.initial_cwnd),
            (1448, 6 << 20, 10)
        );
        assert_eq!(r.scenario.links[0].ab.queue, QueueSpec::Packets(1000));
        assert_eq!(r.scenario.duration_ns, 2_000_000_000);
    }

    #[test]
    fn type_errors_and_checks_name_the_key() {
        let mut d = minimal();
        d["flow"][0]["sack"] = json!("yes");
        assert_eq!(
            issues(&d),
            vec![(
                "flow[0].sack".into(),
                "expected true or false, found 'yes'".into()
            )]
        );
        let mut d = minimal();
        d["flow"][0]["colour"] = json!("red");
        let (k, m) = &issues(&d)[0];
        assert_eq!(k, "flow[0].colour");
        assert!(
            m.contains("window_scaling") && m.ends_with("found an unknown key 'colour'"),
            "{m}"
        );
        let mut d = minimal();
        d["link"][0]["rate"] = json!("10 MB");
        assert!(issues(&d)[0].1.starts_with("expected a rate"));
        let mut d = minimal();
        d["flow"][0]["to"] = json!("x");
        d["flow"][0]["cca"] = json!("no");
        let keys: Vec<String> = issues(&d).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["flow[0].to", "flow[0].cca"]);
        let keys: Vec<String> = issues(&json!({"scenario": {"name": "x"}}))
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["scenario.duration", "link", "flow"]);
        let mut d = minimal();
        d["link"] = json!({"a": "s"});
        assert_eq!(
            issues(&d)[0].1,
            "expected an array of tables written [[link]], found a table"
        );
    }

    #[test]
    fn a_key_with_a_unit_is_one_value_from_the_file_to_the_resolved_wire() {
        // `min_rto` is one entry of switches.rs: read as the file writes it, held as the same
        // value by the resolved flow, written in ns under its old name, read back from it.
        let mut d = minimal();
        d["flow"][0]["min_rto"] = json!("150 ms");
        let f = read(&d, "x", &known()).unwrap();
        assert_eq!(f.flows[0].min_rto.get(), Nanos(150_000_000));
        let r = f.scenario(None).resolve().unwrap();
        assert_eq!(r.scenario.flows[0].min_rto, f.flows[0].min_rto);
        let wire = serde_json::to_value(&r).unwrap();
        assert_eq!(wire["flows"][0]["min_rto_ns"], 150_000_000);
        assert!(wire["flows"][0].get("min_rto").is_none());
        assert_eq!(super::super::Resolved::from_json(&wire).unwrap(), r);
        // its default, in a file and in a scenario built in code
        let r = read(&minimal(), "x", &known()).unwrap().scenario(None);
        assert_eq!(
            r.flows[0].min_rto.get(),
            Nanos(super::super::DEFAULT_MIN_RTO_NS)
        );
        let built = Flow::bulk(0, 0, 1, "cubic");
        assert_eq!(built.min_rto, r.flows[0].min_rto);
        // bad input names the file's key and what was expected
        d["flow"][0]["min_rto"] = json!("150 furlongs");
        let (k, m) = &issues(&d)[0];
        assert_eq!(k, "flow[0].min_rto");
        assert!(m.starts_with("expected a duration like"), "{m}");
    }

    #[test]
    fn a_link_key_is_one_value_per_direction_from_the_file_to_the_resolved_wire() {
        // `jitter` is one entry of switches.rs's link_keys!: `jitter` sets both directions,
        // `jitter_ba` the b→a one, each direction holds the same value and writes it in ns
        // under its old name, left out at its default.
        let mut d = minimal();
        d["link"][0]["jitter"] = json!("2 ms");
        let both = read(&d, "x", &known()).unwrap().scenario(None);
        let ns = |dir: &Direction| dir.jitter.get();
        assert_eq!(ns(&both.links[0].ab), Nanos(2_000_000));
        assert_eq!(ns(&both.links[0].ba), Nanos(2_000_000));
        d["link"][0]["jitter_ba"] = json!("0 ms");
        let (_, wire) = resolved_wire(&d);
        assert_eq!(wire["links"][0]["ab"]["jitter_ns"], 2_000_000);
        assert!(wire["links"][0]["ba"].get("jitter_ns").is_none());
        // its default, in a file and in a direction built in code
        let plain = read(&minimal(), "x", &known()).unwrap().scenario(None);
        let built = Direction::new(1, 1, 0.0, QueueSpec::Packets(1));
        assert_eq!(plain.links[0].ab.jitter, built.jitter);
        assert_eq!(ns(&built), Nanos(0));
        // bad input names the file's key (the twin's own) and what was expected
        d["link"][0]["jitter_ba"] = json!("2 furlongs");
        let (k, m) = &issues(&d)[0];
        assert_eq!(k, "link[0].jitter_ba");
        assert!(m.starts_with("expected a duration like"), "{m}");
        // a check names the direction it refuses
        let mut d = minimal();
        d["link"][0]["ecn_threshold_ba"] = json!(0);
        let (k, m) = &issues(&d)[0];
        assert_eq!(
            (k.as_str(), m.as_str()),
            (
                "link[0].ecn_threshold_ba",
                "expected at least 1 packet, found 0"
            )
        );
    }

    #[test]
    fn a_sender_cwnd_clamp_reaches_the_flow_and_a_zero_one_is_refused() {
        let mut d = minimal();
        d["flow"][0]["cwnd_clamp"] = json!(550);
        let f = read(&d, "x", &known()).unwrap();
        let r = f.scenario(None).resolve().unwrap();
        assert_eq!(r.scenario.flows[0].cwnd_clamp, Some(550));
        d["flow"][0]["cwnd_clamp"] = json!(0);
        assert_eq!(
            issues(&d),
            vec![(
                "flow[0].cwnd_clamp".into(),
                format!(
                    "expected an integer of packets in 1..{}, found 0",
                    u32::MAX / 2
                )
            )]
        );
    }
}
