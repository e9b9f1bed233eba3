//! The `[link.model]` table read: its keys per kind, the cited presets, every check, and per
//! direction (a→b, b→a) the MODEL dictionary the engines build ([`super::spec`]), the
//! direction's *nominal* rate, delay and loss (routes, "N BDP" queues, the model engine) and
//! the model's default queue. The scenario reader ([`crate::scenario::file::read`]) calls
//! [`resolve`] once per link; files on the host (Mahimahi traces, delay CSVs, TLE sets) are
//! read through the caller's [`ModelFiles`] (the Python layer's file limits and SGP4).
//!
//! Every direction-specific key `X` has an `X_ba` twin for the b→a direction, defaulting to
//! `X`. Problems are (key path, message) pairs, "expected WHAT, found WHAT"; all of a table's
//! problems are reported together.
//!
//! Sources (shared/research/satellite-facts.md, tags as there: [V] verified, [F] read off a
//! figure, [D] derived):
//! - Starlink reconfiguration every 15 s at :12/:27/:42/:57 (§1.4 [V]).
//! - Starlink idle RTT: min 20, p25 40, median 50, p75 60 ms (Michel et al. IMC'22 [V]); upper
//!   end 85 ms (Mohan et al. WWW'24 whiskers ≈15-85 ms [F]).
//! - Plan capacities (starlink.com DOC-1075-86535-76 [V]): Residential 50-150 down / 5-25 up
//!   (DE); business = Priority 40-220 down / 8-25 up (ES table) widened to 30 up by Local
//!   Priority 10-30 (DE): 40-220 down / 8-30 up.
//! - Loss: uplink 0.2-0.5 %, downlink 0.01 % (LeoCC/LeoReplayer README [V]).
//! - Boundary disturbance ≈140 ms (arXiv 2601.08439 [V]) → 50-150 ms (§5 [D]); loss bursts up
//!   to 50 % (Kassem et al. IMC'22 [V]); outage vs burst share not measured (§1.6).
//! - Bufferbloat: 150-200 ms standing queue downlink, 50-150 ms uplink under load (§1.3/§5).
//! - GEO: slant-range propagation 477-556 ms RTT (§2.1 [D]); PCC/Pantheon emulator 42 Mbit/s,
//!   400 ms one way, 0.74 % uplink loss, 1500-packet droptail (JerryLX/pantheon [V]).
//! - LFN: study 003's router hop dropping above 300-330 Mbit/s (papers/README.md §003).
//! - Constellation: Starlink shell 1 = 550 km, 53°, 72 planes x 22 (§1.1), min elevation
//!   25° (§1.1 [V] Huston), extra one-way delay 10 ms [D] from the dish→GS RTT of ≈35 ms near
//!   0 km (Mohan et al. [F]) minus the 7-15 ms geometric floor.
//!
//! To add a link model: its behaviour file and, here, its kind in [`KINDS`], its keys in
//! [`keys`] and its reader in [`resolve`].

use std::path::{Component, Path, PathBuf};

use serde_json::{json, Map, Value};

use super::geo::GEO_ALTITUDE_M;
use super::spec::{
    ConstellationSpec, GeoSpec, IntraSpec, LfnSpec, ModelSpec, PoliceSpec, StarlinkSpec,
    TraceFiles, TraceInline, TraceSpec,
};
use crate::dirspec::QueueSpec;
use crate::scenario::file::{Issue, ModelDir};
use crate::units::{self, describe, py_str, Raw, UnitError};

/// The model kinds, in the order messages list them.
pub const KINDS: [&str; 5] = ["starlink", "geo", "lfn", "trace", "constellation"];

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

// -- Starlink presets (sources in the module header) ----------------------------------------
/// Reconfiguration period, facts §1.4 [V].
pub const STARLINK_PERIOD_NS: u64 = 15 * S;
/// Boundaries at :12, :27, :42, :57, facts §1.4 [V].
const STARLINK_PHASE_NS: u64 = 12 * S;
/// p0, p25, p50, p75, p100 of the idle RTT (ms): Michel [V], Mohan [F].
const STARLINK_RTT_QUANTILES_MS: [u64; 5] = [20, 40, 50, 60, 85];
/// (plan, role) → capacity range (Mbit/s).
pub const STARLINK_CAPACITY_MBPS: [(&str, &str, (u64, u64)); 6] = [
    ("residential", "uplink", (5, 25)), // DOC-1075-86535-76 DE, Residential [V]
    ("residential", "downlink", (50, 150)), // same [V]
    ("business", "uplink", (8, 30)),    // Priority ES 8-25 / Local Priority DE 10-30 [V]
    ("business", "downlink", (40, 220)), // Priority ES 40-220 [V]
    // Roam: residential's range x the Roam / Standard ratio of mean 1 s iperf3 throughput from
    // one dish site, Laniewski et al. OJCOMS'25 (sys-uos/Starlink-on-the-Autobahn@2eec78c,
    // Analysis_Fig6ab.ipynb's printed output, CC BY-SA 4.0): down 245.2 / 279.6 = 0.877, up
    // 18.25 / 22.89 = 0.797 [D]; their RTT and loss do not differ (docs/starlink-fit.md)
    ("roam", "uplink", (4, 20)),
    ("roam", "downlink", (44, 132)),
];
/// role → loss range: LeoReplayer [V].
pub const STARLINK_LOSS: [(&str, (f64, f64)); 2] =
    [("uplink", (0.002, 0.005)), ("downlink", (0.0001, 0.0001))];
/// facts §5 [D] from arXiv 2601.08439 (≈140 ms) [V].
const STARLINK_DISTURBANCE_MS: (u64, u64) = (50, 150);
/// "up to 50 %", Kassem et al. IMC'22 [V].
const STARLINK_BURST_LOSS: (f64, f64) = (0.0, 0.5);
/// Not measured (facts §1.6: "to calibrate").
const STARLINK_OUTAGE_PROBABILITY: f64 = 0.5;
/// Standing queue under load (ms), facts §1.3/§5: uplink, downlink.
const STARLINK_QUEUE_MS: [(&str, u64); 2] = [("uplink", 150), ("downlink", 200)];
pub const STARLINK_PLANS: [&str; 3] = ["residential", "business", "roam"];
const STARLINK_VARIATIONS: [&str; 2] = ["intra", "epoch"];
// Within-epoch variation (`variation = "intra"`, the default), fitted by `satcc trace fit`
// (python/satcc/tracefit.py) from two public recordings; figures in docs/starlink-fit.md:
// - LeoCC: SpaceNetLab/LeoCC@867e673 leoreplayer/replayer/example/Cubic/bw_example.txt and
//   delay_example.txt (MIT): 120 s of saturating-UDP deliveries + 10 ms one-way delays.
// - LEONetEM: clarkzjw/LEONetEM@780a063 latency/ping-example-isl.txt: 154 s of ping -D -i 0.01.
// The knobs: `satcc trace fit` on the whole LeoCC recording (first guess from the statistics,
// then five rounds of simulated moments: tracefit.refine), so the model's own 100 ms bins,
// 1 ms deliveries and 10 ms delays show the recording's statistics.
/// The 100 ms bins the statistics use.
const INTRA_CAPACITY_SLOT_NS: u64 = 100 * MS;
/// LeoCC: sd/mean of 100 ms bins around the epoch mean 0.114 [D].
const INTRA_CAPACITY_SIGMA: f64 = 0.112;
/// LeoCC: lag-1 correlation of those bins 0.471 [D].
const INTRA_CAPACITY_CORR: f64 = 0.556;
/// LeoCC: autocorrelation peak of per-ms deliveries at 8 ms [D].
const INTRA_FRAME_NS: u64 = 8 * MS;
/// LeoCC: 29.9 % of milliseconds see a delivery [D].
const INTRA_FRAME_DUTY: f64 = 0.103;
/// LeoCC: successive delivery spacings alternate (lag-1 corr -0.41) [D].
const INTRA_FRAME_WINDOWS: u64 = 2;
/// LeoCC: lag-1 corr of the delivery spacings -0.41 (sd 1.61 ms) [D].
const INTRA_FRAME_OFFSET_SD_NS: u64 = 1_260_000;
/// LeoCC: lag-2 correlation of the spacings 0.547 [D].
const INTRA_FRAME_OFFSET_CORR: f64 = 0.856;
/// LeoCC: 8 ms bins vary by sd/mean 0.336 around their 100 ms bin [D].
const INTRA_FRAME_SIGMA: f64 = 0.337;
/// The recordings' 10 ms step.
const INTRA_DELAY_SLOT_NS: u64 = 10 * MS;
/// LeoCC: RTT 1.4826 x MAD around the epoch median 2.97 ms [D].
const INTRA_JITTER_NS: u64 = 1_480_000;
/// LeoCC: RTT p1 4 ms below its epoch median (one way: 2) [D].
const INTRA_JITTER_FLOOR_NS: u64 = 2 * MS;
/// LeoCC: lag-1 (10 ms) correlation of that residual 0.439 [D].
const INTRA_JITTER_CORR: f64 = 0.462;
/// LEONetEM: 2 in-epoch loss runs of >= 2 probes in 154 s of pings, 0.013/s [D, weak]; a
/// ping's round trip meets both directions' bursts, each direction draws its own: half each
/// (as `satcc trace fit` splits a ping's bursts).
const INTRA_BURST_RATE: f64 = 0.0065;
/// LEONetEM: their mean length [D, weak].
const INTRA_BURST_DURATION_NS: u64 = 82 * MS;
/// LeoCC: every one of 8 boundaries has a delivery gap of 58-134 ms (the ISL recording of
/// LEONetEM: 10 of 10 boundaries lose 447-506 ms of pings) [D].
const STARLINK_INTRA_DISTURBANCE_MS: (u64, u64) = (58, 134);
const STARLINK_INTRA_OUTAGE_PROBABILITY: f64 = 1.0;
const INTRA_KEYS: [&str; 13] = [
    "capacity_sigma",
    "capacity_corr",
    "frame",
    "frame_duty",
    "frame_windows",
    "frame_offset_sd",
    "frame_offset_corr",
    "frame_sigma",
    "jitter",
    "jitter_floor",
    "jitter_corr",
    "burst_rate",
    "burst_duration",
];

// -- GEO ------------------------------------------------------------------------------------
/// [D] a site near 50° N at the satellite's longitude.
const GEO_DEFAULT_ELEVATION_DEG: f64 = 30.0;
/// JerryLX/pantheon test_Satellite.sh [V].
const PCC_RATE_BPS: u64 = 42_000_000;
/// mm-delay 400 (800 ms RTT) [V].
const PCC_DELAY_NS: u64 = 400 * MS;
/// mm-loss uplink 0.0074 [V].
const PCC_LOSS: f64 = 0.0074;
/// droptail 1500 packets [V].
const PCC_QUEUE_PKTS: u64 = 1500;

// -- LFN ------------------------------------------------------------------------------------
/// papers/README.md §003.
const STUDY_003_DROP_ABOVE_BPS: (u64, u64) = (300_000_000, 330_000_000);
/// Not given by study 003: calibrated so Reno/CUBIC get 235/266 Mbit/s at 15 ms (study:
/// 244/280).
const DEFAULT_DROP_BURST_BYTES: u64 = 256_000;
/// The threshold wanders within its range once a second [assumed].
const DROP_REDRAW_NS: u64 = S;

// -- trace ----------------------------------------------------------------------------------
/// One delivery opportunity, mm-link(1).
pub const MAHIMAHI_BYTES: u64 = 1500;

// -- constellation (Starlink shell 1) -------------------------------------------------------
/// A shell's satellites are searched once an epoch per direction; Starlink's largest shell has
/// ~4,400, the whole constellation ~10,000.
const MAX_SHELL_SATELLITES: u64 = 100_000;
const SHELL1_ALTITUDE_KM: f64 = 550.0;
const SHELL1_INCLINATION: f64 = 53.0;
const SHELL1_PLANES: u64 = 72;
const SHELL1_PER_PLANE: u64 = 22;
const SHELL1_PHASING: u64 = 1;
/// facts §1.1 [V].
const MIN_ELEVATION_DEG: f64 = 25.0;
/// [D], see the module header.
const CONSTELLATION_EXTRA_DELAY_NS: u64 = 10 * MS;
const WALKER_KEYS: [&str; 5] = [
    "altitude_km",
    "inclination",
    "planes",
    "per_plane",
    "phasing",
];
/// Long enough for every ready scenario (the longest runs 20 min).
const TLE_DEFAULT_SPAN_NS: u64 = 3600 * S;
/// python/satcc/tle.py deviation 3: an outage row loses every packet.
const TLE_OUTAGE_LOSS: f64 = 1.0;

/// A Mahimahi trace as the caller read it.
pub struct TraceInfo {
    pub lines: u64,
    pub last_ms: u64,
    pub digest: String,
}

/// A delay/loss CSV as the caller read it (means weighted by time over the run).
pub struct CsvInfo {
    pub rows: u64,
    pub mean_delay_ns: f64,
    pub mean_loss: f64,
    pub digest: String,
}

/// What a TLE constellation asks of the caller's SGP4.
pub struct TleAsk<'a> {
    pub path: &'a Path,
    /// The file as the table names it (for messages).
    pub name: &'a str,
    pub epoch: Option<&'a Value>,
    pub terminal: (f64, f64),
    pub gateway: (f64, f64),
    pub min_elevation_deg: f64,
    pub phase_ns: u64,
    pub period_ns: u64,
    pub span_ns: u64,
}

/// Files on the host, read by the caller: `Err` is the problem as a message (for the TLE
/// set: a (key, message) pair).
pub trait ModelFiles {
    fn mahimahi(&self, path: &Path) -> Result<TraceInfo, String>;
    fn delay_csv(
        &self,
        path: &Path,
        default_loss: f64,
        duration_ns: Option<u64>,
    ) -> Result<CsvInfo, String>;
    /// Per geometry step: (t_ns, one-way delay in ns or None for no common satellite).
    fn tle(&self, ask: &TleAsk) -> Result<Vec<(u64, Option<u64>)>, Issue>;
}

/// No files: a model that names one is refused (satcc-core alone, without the Python layer
/// that reads files on the host; the presets and tests need none).
pub struct NoFiles;

impl ModelFiles for NoFiles {
    fn mahimahi(&self, _: &Path) -> Result<TraceInfo, String> {
        Err(NO_READER.into())
    }
    fn delay_csv(&self, _: &Path, _: f64, _: Option<u64>) -> Result<CsvInfo, String> {
        Err(NO_READER.into())
    }
    fn tle(&self, _: &TleAsk) -> Result<Vec<(u64, Option<u64>)>, Issue> {
        Err(("tle".into(), NO_READER.into()))
    }
}

const NO_READER: &str = "expected a file reader (the Python layer), found none";

/// The keys a `[link.model]` of this kind accepts besides `kind` (docs/scenario.md lists them).
pub fn keys(kind: &str) -> Vec<String> {
    let ba = |ks: &[&str]| -> Vec<String> {
        ks.iter()
            .flat_map(|k| [k.to_string(), format!("{k}_ba")])
            .collect()
    };
    let own = |ks: &[&str]| -> Vec<String> { ks.iter().map(|k| k.to_string()).collect() };
    match kind {
        "starlink" => [
            ba(&["plan"]),
            own(&["dish", "phase", "start", "rtt"]),
            ba(&["capacity", "loss"]),
            own(&[
                "disturbance",
                "burst_loss",
                "outage_probability",
                "variation",
                "rtt_quantiles",
            ]),
            own(&INTRA_KEYS),
        ]
        .concat(),
        "geo" => [
            own(&["preset"]),
            ba(&["rate", "loss"]),
            own(&["elevation", "gateway_elevation", "extra_delay"]),
        ]
        .concat(),
        "lfn" => [
            ba(&["rate", "rtt", "delay", "loss", "drop_above"]),
            own(&["hop", "drop_burst"]),
        ]
        .concat(),
        "trace" => [
            ba(&["mahimahi", "rate", "delay_csv", "delay", "loss"]),
            own(&["bytes_per_opportunity"]),
        ]
        .concat(),
        "constellation" => [
            own(&[
                "terminal",
                "gateway",
                "altitude_km",
                "inclination",
                "planes",
                "per_plane",
                "phasing",
                "min_elevation",
                "phase",
                "start",
            ]),
            ba(&["extra_delay", "rate", "loss"]),
            // satellites from a TLE file (python/satcc/tle.py)
            own(&["tle", "epoch", "span"]),
        ]
        .concat(),
        _ => Vec::new(),
    }
}

/// The presets other layers show (`satcc trace`'s plans, `satcc trace fit`'s starting
/// point): the kinds and their keys, the Starlink plan capacities and losses, its
/// within-epoch defaults (as a default table resolves them), the reconfiguration period and
/// a Mahimahi opportunity's bytes.
pub fn presets() -> Value {
    let cx = Context {
        base: Path::new("."),
        duration_ns: None,
        files: &NoFiles,
    };
    let [up, _] = resolve(&json!({"kind": "starlink"}), "preset", &cx)
        .expect("the default Starlink table resolves");
    let keys: Map<String, Value> = KINDS
        .iter()
        .map(|k| (k.to_string(), json!(keys(k))))
        .collect();
    json!({
        "kinds": KINDS,
        "keys": keys,
        "starlink_capacity_mbps": STARLINK_CAPACITY_MBPS
            .iter()
            .map(|(p, r, (lo, hi))| json!([p, r, lo, hi]))
            .collect::<Vec<_>>(),
        "starlink_loss": STARLINK_LOSS
            .iter()
            .map(|(r, (lo, hi))| (r.to_string(), json!([lo, hi])))
            .collect::<Map<String, Value>>(),
        "starlink_intra": match up.model {
            ModelSpec::Starlink(s) => json!(s.intra),
            _ => unreachable!("a Starlink table resolves to a Starlink model"),
        },
        "starlink_period_ns": STARLINK_PERIOD_NS,
        "mahimahi_bytes": MAHIMAHI_BYTES,
    })
}

// -- value parsers --------------------------------------------------------------------------

type Parse<T> = Box<dyn Fn(&Value) -> Result<T, UnitError>>;

fn raw(v: &Value) -> Raw {
    Raw::from_json(v)
}

fn duration() -> Parse<u64> {
    Box::new(|v| units::duration_ns(&raw(v)))
}

fn rate() -> Parse<u64> {
    Box::new(|v| units::rate_bps(&raw(v)))
}

fn probability() -> Parse<f64> {
    Box::new(|v| units::probability(&raw(v)))
}

fn size() -> Parse<u64> {
    Box::new(|v| units::size_bytes(&raw(v)))
}

/// A bound as Python's `{x:g}` writes the ones used here.
fn g(x: f64) -> String {
    format!("{x}")
}

fn number(lo: f64, hi: f64, what: &'static str) -> Parse<f64> {
    Box::new(move |v| match v {
        Value::Number(n) if (lo..=hi).contains(&n.as_f64().unwrap_or(f64::NAN)) => {
            Ok(n.as_f64().unwrap_or(f64::NAN))
        }
        _ => Err(UnitError::new(
            &format!("{what} in {}..{}", g(lo), g(hi)),
            &raw(v),
            None,
        )),
    })
}

fn integer(lo: u64, hi: u64, what: &'static str) -> Parse<u64> {
    Box::new(move |v| match v.as_u64() {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(UnitError::new(
            &format!("{what} (an integer in {lo}..{hi})"),
            &raw(v),
            None,
        )),
    })
}

/// A single value (low = high) or [low, high].
fn range<T: PartialOrd + Copy + 'static>(parse: Parse<T>, what: &'static str) -> Parse<(T, T)> {
    Box::new(move |v| match v {
        Value::Array(a) => {
            if a.len() != 2 {
                return Err(UnitError::new(
                    &format!("{what} or a [low, high] pair"),
                    &raw(v),
                    None,
                ));
            }
            let (lo, hi) = (parse(&a[0])?, parse(&a[1])?);
            if lo > hi {
                return Err(UnitError::new(
                    &format!("a [low, high] pair with low <= high ({what})"),
                    &raw(v),
                    None,
                ));
            }
            Ok((lo, hi))
        }
        _ => parse(v).map(|x| (x, x)),
    })
}

fn choice(options: &'static [&'static str]) -> Parse<&'static str> {
    Box::new(move |v| {
        v.as_str()
            .and_then(|s| options.iter().find(|o| **o == s).copied())
            .ok_or_else(|| {
                let names: Vec<String> = options.iter().map(|o| py_str(o)).collect();
                UnitError::new(&format!("one of {}", names.join(", ")), &raw(v), None)
            })
    })
}

const START_HINT: &str = "a time of day 'HH:MM:SS' or a duration like '5 s'";

/// The run's wall-clock start: "HH:MM:SS[.fff]" or a duration past the minute ("5 s").
fn start() -> Parse<u64> {
    Box::new(|v| {
        let bad = || UnitError::new(START_HINT, &raw(v), None);
        if let Some(s) = v.as_str() {
            if let Some((h, m, sec)) = clock_parts(s.trim()) {
                let whole: f64 = sec.parse().map_err(|_| bad())?;
                if h > 23 || m > 59 || whole >= 60.0 {
                    return Err(bad());
                }
                let secs = units::duration_ns(&Raw::Str(format!("{sec} s"))).map_err(|_| bad())?;
                return Ok((h * 3600 + m * 60) * S + secs);
            }
        }
        units::duration_ns(&raw(v)).map_err(|_| bad())
    })
}

/// `H:MM:SS[.f{1,9}]` (one or two digits of hours) split, or None.
fn clock_parts(s: &str) -> Option<(u64, u64, &str)> {
    let mut it = s.splitn(3, ':');
    let (h, m, sec) = (it.next()?, it.next()?, it.next()?);
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let ok = (1..=2).contains(&h.len())
        && digits(h)
        && m.len() == 2
        && digits(m)
        && whole.len() == 2
        && digits(whole)
        && (!sec.contains('.') || ((1..=9).contains(&frac.len()) && digits(frac)));
    ok.then(|| Some((h.parse().ok()?, m.parse().ok()?, sec)))
        .flatten()
}

fn latlon() -> Parse<(f64, f64)> {
    Box::new(|v| {
        let pair = v.as_array().filter(|a| a.len() == 2).and_then(|a| {
            let x = |i: usize| a[i].is_number().then(|| a[i].as_f64()).flatten();
            Some((x(0)?, x(1)?))
        });
        match pair {
            Some((lat, lon))
                if (-90.0..=90.0).contains(&lat) && (-180.0..=360.0).contains(&lon) =>
            {
                Ok((lat, lon))
            }
            _ => Err(UnitError::new(
                "[latitude, longitude] in degrees (latitude -90..90)",
                &raw(v),
                None,
            )),
        }
    })
}

fn file_path() -> Parse<String> {
    Box::new(|v| match v.as_str() {
        Some(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(UnitError::new("a file path", &raw(v), None)),
    })
}

/// Five non-decreasing durations: the RTT at p = 0, 0.25, 0.5, 0.75, 1.
fn quantiles() -> Parse<Vec<u64>> {
    Box::new(|v| {
        let a = v.as_array().filter(|a| a.len() == 5).ok_or_else(|| {
            UnitError::new(
                "a list of five durations (RTT at p 0, 0.25, 0.5, 0.75, 1)",
                &raw(v),
                None,
            )
        })?;
        let out = a
            .iter()
            .map(|x| units::duration_ns(&raw(x)))
            .collect::<Result<Vec<u64>, _>>()?;
        if out.windows(2).any(|w| w[0] > w[1]) {
            return Err(UnitError::new(
                "five non-decreasing durations",
                &raw(v),
                None,
            ));
        }
        Ok(out)
    })
}

/// Python's `round(n / d)` for integers, exactly (half to even).
fn round_div(n: u128, d: u128) -> u64 {
    let (q, r) = (n / d, n % d);
    let up = 2 * r > d || (2 * r == d && q % 2 == 1);
    (q + u128::from(up)) as u64
}

fn round_f(x: f64) -> u64 {
    x.round_ties_even() as u64
}

// -- a reader that collects issues ----------------------------------------------------------

struct Reader<'a> {
    t: &'a Map<String, Value>,
    p: &'a str,
    issues: Vec<Issue>,
}

impl<'a> Reader<'a> {
    fn new(t: &'a Map<String, Value>, p: &'a str, kind: &str) -> Self {
        let mut allowed = vec!["kind".to_string()];
        allowed.extend(keys(kind));
        let issues = t
            .keys()
            .filter(|k| !allowed.contains(k))
            .map(|k| {
                (
                    format!("{p}.{k}"),
                    format!(
                        "expected one of the keys {}; found an unknown key {}",
                        allowed.join(", "),
                        py_str(k)
                    ),
                )
            })
            .collect();
        Reader { t, p, issues }
    }

    fn has(&self, key: &str) -> bool {
        self.t.contains_key(key)
    }

    /// `key` read by `parse`; absent: `default`, or (None) a missing required key.
    fn get<T: Clone>(&mut self, key: &str, parse: &Parse<T>, default: Option<T>) -> Option<T> {
        match self.t.get(key) {
            None => {
                if default.is_none() {
                    self.issues.push((
                        format!("{}.{key}", self.p),
                        format!("expected the required key {}, found nothing", py_str(key)),
                    ));
                }
                default
            }
            Some(v) => match parse(v) {
                Ok(x) => Some(x),
                Err(e) => {
                    self.issues
                        .push((format!("{}.{key}", self.p), e.to_string()));
                    None
                }
            },
        }
    }

    /// An optional key: absent is `None` (no problem).
    fn opt<T: Clone>(&mut self, key: &str, parse: &Parse<T>) -> Option<T> {
        if self.has(key) {
            self.get(key, parse, None)
        } else {
            None
        }
    }

    /// `key` for a→b and `key_ba` for b→a (defaulting to a→b's value, never required).
    fn both<T: Clone>(
        &mut self,
        key: &str,
        parse: &Parse<T>,
        default: Option<T>,
    ) -> (Option<T>, Option<T>) {
        let ab = self.get(key, parse, default);
        let kb = format!("{key}_ba");
        let ba = if self.has(&kb) {
            self.get(&kb, parse, None)
        } else {
            ab.clone()
        };
        (ab, ba)
    }

    /// Both directions of an optional key (absent: `None`, not a problem).
    fn both_opt<T: Clone>(&mut self, key: &str, parse: &Parse<T>) -> (Option<T>, Option<T>) {
        let ab = self.opt(key, parse);
        let kb = format!("{key}_ba");
        let ba = if self.has(&kb) {
            self.get(&kb, parse, None)
        } else {
            ab.clone()
        };
        (ab, ba)
    }

    fn fail(&mut self, key: &str, message: impl Into<String>) {
        let at = if key.is_empty() {
            self.p.to_string()
        } else {
            format!("{}.{key}", self.p)
        };
        self.issues.push((at, message.into()));
    }

    fn found(&self, key: &str) -> String {
        self.t
            .get(key)
            .map_or("nothing".into(), |v| describe(&raw(v)))
    }
}

fn dir(
    rate_bps: u64,
    delay_ns: u64,
    loss: f64,
    model: ModelSpec,
    queue: Option<QueueSpec>,
) -> ModelDir {
    ModelDir {
        rate_bps,
        delay_ns,
        loss,
        model,
        queue,
    }
}

/// A direction whose nominal figures its model gives ([`ModelSpec::nominal`]).
fn nominal_dir(model: ModelSpec, queue: Option<QueueSpec>) -> ModelDir {
    let st = model
        .nominal()
        .expect("a model read from its table alone has nominal figures");
    dir(st.rate_bps, st.delay.as_nanos(), st.loss, model, queue)
}

/// Where the model's files are looked for and how long the run is.
pub struct Context<'a> {
    /// The scenario file's folder.
    pub base: &'a Path,
    pub duration_ns: Option<u64>,
    pub files: &'a dyn ModelFiles,
}

/// A `[link.model]` table resolved: [a→b, b→a], or every problem under `prefix`.
pub fn resolve(v: &Value, prefix: &str, cx: &Context) -> Result<[ModelDir; 2], Vec<Issue>> {
    let empty = Map::new();
    let t = v.as_object().unwrap_or(&empty);
    let kind = match t.get("kind").and_then(Value::as_str) {
        Some(k) if KINDS.contains(&k) => k,
        other => {
            let found = match (other, t.get("kind")) {
                (_, None) => "None".to_string(),
                (_, Some(k)) => describe(&raw(k)),
            };
            return Err(vec![(
                format!("{prefix}.kind"),
                format!("expected one of {}, found {found}", KINDS.join(", ")),
            )]);
        }
    };
    let mut r = Reader::new(t, prefix, kind);
    let tle = kind == "constellation" && ["tle", "epoch", "span"].iter().any(|k| r.has(k));
    let out = match kind {
        "starlink" => starlink(&mut r),
        "geo" => geo(&mut r),
        "lfn" => lfn(&mut r),
        "trace" => trace(&mut r, cx),
        _ if tle => constellation_tle(&mut r, cx),
        _ => constellation(&mut r),
    };
    match out {
        Some([ab, ba]) if r.issues.is_empty() => Ok([ab, ba]),
        _ => Err(r.issues),
    }
}

fn pair<T>(v: Vec<T>) -> Option<[T; 2]> {
    v.try_into().ok()
}

fn starlink(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let plans = r.both("plan", &choice(&STARLINK_PLANS), Some("residential"));
    let variation = r.get("variation", &choice(&STARLINK_VARIATIONS), Some("intra"));
    let intra = variation == Some("intra");
    let dish = r.get("dish", &choice(&["a", "b"]), Some("a"));
    let phase = r.get("phase", &duration(), Some(STARLINK_PHASE_NS));
    let start = r.get("start", &start(), Some(0));
    let rtt = r.opt("rtt", &range(duration(), "a duration"));
    let rtt_q = r.opt("rtt_quantiles", &quantiles());
    let caps = r.both_opt("capacity", &range(rate(), "a rate"));
    let losses = r.both_opt("loss", &range(probability(), "a probability"));
    let dist_ms = if intra {
        STARLINK_INTRA_DISTURBANCE_MS
    } else {
        STARLINK_DISTURBANCE_MS
    };
    let disturbance = r.get(
        "disturbance",
        &range(duration(), "a duration"),
        Some((dist_ms.0 * MS, dist_ms.1 * MS)),
    );
    let burst = r.get(
        "burst_loss",
        &range(probability(), "a probability"),
        Some(STARLINK_BURST_LOSS),
    );
    let outage = r.get(
        "outage_probability",
        &probability(),
        Some(if intra {
            STARLINK_INTRA_OUTAGE_PROBABILITY
        } else {
            STARLINK_OUTAGE_PROBABILITY
        }),
    );
    let corr = || number(0.0, 0.99, "a correlation");
    let sigma = r.get(
        "capacity_sigma",
        &number(0.0, 3.0, "a number"),
        Some(INTRA_CAPACITY_SIGMA),
    );
    let capacity_corr = r.get("capacity_corr", &corr(), Some(INTRA_CAPACITY_CORR));
    let frame = r.get("frame", &duration(), Some(INTRA_FRAME_NS));
    let duty = r.get(
        "frame_duty",
        &number(0.01, 1.0, "a share"),
        Some(INTRA_FRAME_DUTY),
    );
    let windows = r.get(
        "frame_windows",
        &integer(1, 2, "windows per frame"),
        Some(INTRA_FRAME_WINDOWS),
    );
    let offset_sd = r.get(
        "frame_offset_sd",
        &duration(),
        Some(INTRA_FRAME_OFFSET_SD_NS),
    );
    let offset_corr = r.get("frame_offset_corr", &corr(), Some(INTRA_FRAME_OFFSET_CORR));
    let frame_sigma = r.get(
        "frame_sigma",
        &number(0.0, 3.0, "a number"),
        Some(INTRA_FRAME_SIGMA),
    );
    let jitter = r.get("jitter", &duration(), Some(INTRA_JITTER_NS));
    let jitter_floor = r.get("jitter_floor", &duration(), Some(INTRA_JITTER_FLOOR_NS));
    let jitter_corr = r.get("jitter_corr", &corr(), Some(INTRA_JITTER_CORR));
    let burst_rate = r.get(
        "burst_rate",
        &number(0.0, 100.0, "bursts per second"),
        Some(INTRA_BURST_RATE),
    );
    let burst_duration = r.get("burst_duration", &duration(), Some(INTRA_BURST_DURATION_NS));
    if !r.issues.is_empty() {
        return None;
    }
    let (phase, start, disturbance, burst, outage) =
        (phase?, start?, disturbance?, burst?, outage?);
    if !intra {
        for key in std::iter::once("rtt_quantiles").chain(INTRA_KEYS) {
            if r.has(key) {
                r.fail(
                    key,
                    format!("expected no {key} with variation = 'epoch' (steady epochs)"),
                );
            }
        }
    }
    if rtt.is_some() && rtt_q.is_some() {
        r.fail(
            "rtt_quantiles",
            "expected either rtt or rtt_quantiles, found both",
        );
    }
    check_phase(r, phase);
    if disturbance.1 >= STARLINK_PERIOD_NS {
        r.fail("disturbance", "expected durations below the 15 s period");
    }
    if frame? >= STARLINK_PERIOD_NS {
        r.fail("frame", "expected a frame shorter than the 15 s period");
    }
    if burst_rate? > 0.0 && burst_duration? < MS {
        r.fail(
            "burst_duration",
            "expected at least 1 ms when burst_rate > 0",
        );
    }
    let quantiles: Vec<u64> = match (rtt, rtt_q) {
        (Some((lo, hi)), _) => (0..5u64)
            .map(|k| round_f(lo as f64 + ((hi - lo) * k) as f64 / 4.0))
            .collect(),
        (None, Some(q)) => q,
        (None, None) => STARLINK_RTT_QUANTILES_MS.map(|q| q * MS).to_vec(),
    };
    let roles = if dish == Some("a") {
        ["uplink", "downlink"]
    } else {
        ["downlink", "uplink"]
    };
    let mut out = Vec::new();
    for (((plan, role), cap), loss) in [plans.0?, plans.1?]
        .into_iter()
        .zip(roles)
        .zip([caps.0, caps.1])
        .zip([losses.0, losses.1])
    {
        let cap = cap.unwrap_or_else(|| {
            let (_, _, (lo, hi)) = STARLINK_CAPACITY_MBPS
                .iter()
                .find(|(p, ro, _)| *p == plan && *ro == role)
                .expect("every plan has both roles");
            (lo * 1_000_000, hi * 1_000_000)
        });
        if cap.0 == 0 {
            r.fail("capacity", "expected positive rates, found 0 bit/s");
            continue;
        }
        let loss = loss.unwrap_or_else(|| {
            STARLINK_LOSS
                .iter()
                .find(|(ro, _)| *ro == role)
                .expect("both roles")
                .1
        });
        let intra = if intra {
            Some(IntraSpec {
                capacity_slot_ns: INTRA_CAPACITY_SLOT_NS,
                delay_slot_ns: INTRA_DELAY_SLOT_NS,
                capacity_sigma: sigma?,
                capacity_corr: capacity_corr?,
                frame_ns: frame?,
                frame_duty: duty?,
                frame_windows: windows? as u32, // 1..2
                frame_offset_sd_ns: offset_sd?,
                frame_offset_corr: offset_corr?,
                frame_sigma: frame_sigma?,
                jitter_ns: jitter?,
                jitter_floor_ns: jitter_floor,
                jitter_corr: jitter_corr?,
                burst_rate: burst_rate?,
                burst_duration_ns: burst_duration?,
            })
        } else {
            None
        };
        let model = ModelSpec::Starlink(StarlinkSpec {
            period_ns: STARLINK_PERIOD_NS,
            phase_ns: phase,
            start_ns: start,
            rtt_quantiles_ns: quantiles.clone().try_into().expect("five quantiles"),
            capacity_bps: cap,
            loss,
            disturbance_ns: disturbance,
            outage_probability: outage,
            burst_loss: burst,
            intra,
        });
        let mean_bps = model.nominal().expect("starlink").rate_bps;
        let queue_ms = STARLINK_QUEUE_MS
            .iter()
            .find(|(ro, _)| *ro == role)
            .expect("both roles")
            .1;
        let queue = QueueSpec::Bytes(round_f(mean_bps as f64 / 8.0 * queue_ms as f64 / 1000.0));
        out.push(nominal_dir(model, Some(queue)));
    }
    pair(out)
}

fn geo(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let preset = r.opt("preset", &choice(&["pcc"]));
    let pcc = preset == Some("pcc");
    let rates = r.both("rate", &rate(), pcc.then_some(PCC_RATE_BPS));
    let loss_ab = r.get(
        "loss",
        &probability(),
        Some(if pcc { PCC_LOSS } else { 0.0 }),
    );
    let loss_ba = if r.has("loss_ba") {
        r.get("loss_ba", &probability(), None)
    } else if pcc {
        Some(0.0)
    } else {
        loss_ab
    };
    let degrees = || number(0.0, 90.0, "degrees");
    let elev = r.get("elevation", &degrees(), Some(GEO_DEFAULT_ELEVATION_DEG));
    let gw = r.get(
        "gateway_elevation",
        &degrees(),
        Some(GEO_DEFAULT_ELEVATION_DEG),
    );
    let extra = r.get("extra_delay", &duration(), Some(0));
    if pcc
        && ["elevation", "gateway_elevation", "extra_delay"]
            .iter()
            .any(|k| r.has(k))
    {
        r.fail(
            "preset",
            "expected either preset = 'pcc' (a fixed 400 ms) or elevations, found both",
        );
    }
    if !r.issues.is_empty() {
        return None;
    }
    let (elev, gw, extra) = (elev?, gw?, extra?);
    let mut out = Vec::new();
    for (rate, loss) in [(rates.0?, loss_ab?), (rates.1?, loss_ba?)] {
        if rate == 0 {
            r.fail("rate", "expected a positive rate, found 0 bit/s");
            continue;
        }
        if pcc {
            let model = ModelSpec::Geo(GeoSpec {
                rate_bps: rate,
                loss,
                delay_ns: Some(PCC_DELAY_NS),
                altitude_m: None,
                terminal_elevation_deg: None,
                gateway_elevation_deg: None,
                extra_delay_ns: None,
            });
            out.push(nominal_dir(model, Some(QueueSpec::Packets(PCC_QUEUE_PKTS))));
        } else {
            let model = ModelSpec::Geo(GeoSpec {
                rate_bps: rate,
                loss,
                delay_ns: None,
                altitude_m: Some(GEO_ALTITUDE_M),
                terminal_elevation_deg: Some(elev),
                gateway_elevation_deg: Some(gw),
                extra_delay_ns: Some(extra),
            });
            out.push(nominal_dir(model, None));
        }
    }
    pair(out)
}

fn lfn(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let rates = r.both("rate", &rate(), None);
    if r.has("rtt") && r.has("delay") {
        r.fail("rtt", "expected rtt or delay (one way), found both");
    }
    let delays = if r.has("rtt") || !r.has("delay") {
        let rtt = r.both("rtt", &duration(), None);
        (rtt.0.map(|x| x / 2), rtt.1.map(|x| x / 2))
    } else {
        r.both("delay", &duration(), None)
    };
    let losses = r.both("loss", &probability(), Some(0.0));
    let hop = r.opt("hop", &choice(&["study-003"]));
    let range_rate = range(rate(), "a rate");
    let drops = if hop.is_some() {
        r.both("drop_above", &range_rate, Some(STUDY_003_DROP_ABOVE_BPS))
    } else {
        r.both_opt("drop_above", &range_rate)
    };
    let burst = r.get("drop_burst", &size(), Some(DEFAULT_DROP_BURST_BYTES));
    if !r.issues.is_empty() {
        return None;
    }
    let burst = burst?;
    let mut out = Vec::new();
    for (((rate, delay), loss), drop) in [rates.0?, rates.1?]
        .into_iter()
        .zip([delays.0?, delays.1?])
        .zip([losses.0?, losses.1?])
        .zip([drops.0, drops.1])
    {
        if rate == 0 || drop.is_some_and(|d| d.0 == 0) || burst == 0 {
            r.fail("rate", "expected positive rates and a positive drop_burst");
            continue;
        }
        let police = drop.map(|rate_bps| PoliceSpec {
            rate_bps,
            burst_bytes: burst,
            redraw_ns: DROP_REDRAW_NS,
        });
        let model = ModelSpec::Lfn(LfnSpec {
            rate_bps: rate,
            delay_ns: delay,
            loss,
            police,
        });
        out.push(nominal_dir(model, None));
    }
    pair(out)
}

/// `base / name` as Python's `os.path.abspath` writes it (made absolute against the working
/// folder, `.` and `..` removed lexically).
fn abspath(base: &Path, name: &str) -> String {
    let joined = base.join(name);
    let full = if joined.is_absolute() {
        joined
    } else {
        std::env::current_dir().unwrap_or_default().join(joined)
    };
    let mut out = PathBuf::new();
    for c in full.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.to_string_lossy().into_owned()
}

fn trace(r: &mut Reader, cx: &Context) -> Option<[ModelDir; 2]> {
    let traces = r.both_opt("mahimahi", &file_path());
    let rates = r.both_opt("rate", &rate());
    let csvs = r.both_opt("delay_csv", &file_path());
    let delays = r.both_opt("delay", &duration());
    let losses = r.both("loss", &probability(), Some(0.0));
    let per = r.get(
        "bytes_per_opportunity",
        &integer(1, 65_535, "bytes"),
        Some(MAHIMAHI_BYTES),
    );
    if !r.issues.is_empty() {
        return None;
    }
    let per = per?;
    let mut failed: Vec<String> = Vec::new(); // a file both directions share is reported once
    let mut out = Vec::new();
    let dirs = [
        ("", traces.0, rates.0, csvs.0, delays.0, losses.0?),
        ("_ba", traces.1, rates.1, csvs.1, delays.1, losses.1?),
    ];
    for (d, trace, rate, csv, delay, loss) in dirs {
        let mut stamps = None;
        let mut rows = None;
        if let Some(name) = &trace {
            match cx.files.mahimahi(&cx.base.join(name)) {
                Ok(s) => stamps = Some(s),
                Err(e) => {
                    if !failed.contains(name) {
                        r.fail(
                            &format!("mahimahi{d}"),
                            format!("expected a Mahimahi trace, found {}: {e}", py_str(name)),
                        );
                    }
                    failed.push(name.clone());
                }
            }
        } else if rate.unwrap_or(0) == 0 {
            r.fail(
                &format!("rate{d}"),
                "expected a positive rate or a mahimahi trace, found neither",
            );
        }
        if let Some(name) = &csv {
            match cx
                .files
                .delay_csv(&cx.base.join(name), loss, cx.duration_ns)
            {
                Ok(s) => rows = Some(s),
                Err(e) => {
                    if !failed.contains(name) {
                        r.fail(
                            &format!("delay_csv{d}"),
                            format!("expected a delay/loss CSV, found {}: {e}", py_str(name)),
                        );
                    }
                    failed.push(name.clone());
                }
            }
        } else if delay.is_none() {
            r.fail(
                &format!("delay{d}"),
                "expected a delay or a delay_csv, found neither",
            );
        }
        if !r.issues.is_empty() {
            continue;
        }
        let nominal_rate = match &stamps {
            Some(s) => round_div(
                u128::from(s.lines) * u128::from(per) * 8 * 1000,
                u128::from(s.last_ms.max(1)),
            ),
            None => rate.unwrap_or(0),
        };
        let (nominal_delay, nominal_loss) = match &rows {
            // Each row holds until the next (the first from time 0, the last for ever): the
            // nominal figures are means over the run's time, not over the rows.
            Some(c) => (round_f(c.mean_delay_ns), c.mean_loss),
            None => (delay.unwrap_or(0), loss),
        };
        let model = ModelSpec::Trace(TraceSpec::Files(TraceFiles {
            // the file itself, read where the model is built (simulator, satcc-linkd); its
            // digest ties the run to the trace it was resolved with
            mahimahi_path: stamps
                .as_ref()
                .map(|_| abspath(cx.base, trace.as_deref().unwrap_or(""))),
            opportunities_digest: stamps.as_ref().map(|s| s.digest.clone()),
            opportunities_lines: stamps.as_ref().map(|s| s.lines),
            bytes_per_opportunity: per,
            rate_bps: rate,
            // the CSV itself, read where the model is built, as the trace
            series: None,
            delay_csv_path: rows
                .as_ref()
                .map(|_| abspath(cx.base, csv.as_deref().unwrap_or(""))),
            delay_csv_loss: rows.as_ref().map(|_| loss),
            series_digest: rows.as_ref().map(|c| c.digest.clone()),
            series_rows: rows.as_ref().map(|c| c.rows),
            delay_ns: nominal_delay,
            loss,
        }));
        out.push(dir(
            nominal_rate.max(1),
            nominal_delay,
            nominal_loss,
            model,
            None,
        ));
    }
    pair(out)
}

/// The keys a Walker shell and a TLE set share: the two ground points, the visibility mask,
/// the reconfiguration phase, and per direction the extra delay, rate and loss.
struct Ends {
    terminal: Option<(f64, f64)>,
    gateway: Option<(f64, f64)>,
    min_el: Option<f64>,
    phase: Option<u64>,
    extras: (Option<u64>, Option<u64>),
    rates: (Option<u64>, Option<u64>),
    losses: (Option<f64>, Option<f64>),
}

impl Ends {
    /// (rate, loss, extra delay) for a→b and b→a.
    fn directions(&self) -> Option<[(u64, f64, u64); 2]> {
        Some([
            (self.rates.0?, self.losses.0?, self.extras.0?),
            (self.rates.1?, self.losses.1?, self.extras.1?),
        ])
    }
}

fn ends(r: &mut Reader) -> Ends {
    Ends {
        terminal: r.get("terminal", &latlon(), None),
        gateway: r.get("gateway", &latlon(), None),
        min_el: r.get(
            "min_elevation",
            &number(0.0, 90.0, "degrees"),
            Some(MIN_ELEVATION_DEG),
        ),
        phase: r.get("phase", &duration(), Some(STARLINK_PHASE_NS)),
        extras: r.both(
            "extra_delay",
            &duration(),
            Some(CONSTELLATION_EXTRA_DELAY_NS),
        ),
        rates: r.both("rate", &rate(), None),
        losses: r.both("loss", &probability(), Some(0.0)),
    }
}

/// The reconfiguration phase must fall inside the 15 s period.
fn check_phase(r: &mut Reader, phase: u64) {
    if phase >= STARLINK_PERIOD_NS {
        let f = r.found("phase");
        r.fail(
            "phase",
            format!("expected a duration below 15 s, found {f}"),
        );
    }
}

fn constellation(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let e = ends(r);
    let altitude_km = r.get(
        "altitude_km",
        &number(100.0, 50_000.0, "km"),
        Some(SHELL1_ALTITUDE_KM),
    );
    let inclination = r.get(
        "inclination",
        &number(0.0, 180.0, "degrees"),
        Some(SHELL1_INCLINATION),
    );
    let planes = r.get("planes", &integer(1, 10_000, "planes"), Some(SHELL1_PLANES));
    let per_plane = r.get(
        "per_plane",
        &integer(1, 10_000, "satellites per plane"),
        Some(SHELL1_PER_PLANE),
    );
    let phasing = r.get(
        "phasing",
        &integer(0, 9_999, "phasing F"),
        Some(SHELL1_PHASING),
    );
    let start = r.get("start", &start(), Some(0));
    if !r.issues.is_empty() {
        return None;
    }
    let (planes, per_plane, phasing, phase) = (planes?, per_plane?, phasing?, e.phase?);
    let altitude_km = altitude_km?;
    if phasing >= planes {
        r.fail(
            "phasing",
            format!(
                "expected an integer in 0..{} (below planes), found {phasing}",
                planes - 1
            ),
        );
    }
    if planes * per_plane > MAX_SHELL_SATELLITES {
        r.fail(
            "per_plane",
            format!(
                "expected a shell of at most {} satellites (planes x per_plane), found {}",
                thousands(MAX_SHELL_SATELLITES),
                thousands(planes * per_plane)
            ),
        );
    }
    check_phase(r, phase);
    let (terminal, gateway) = (e.terminal?, e.gateway?);
    let mut out = Vec::new();
    for (rate, loss, extra) in e.directions()? {
        if rate == 0 {
            r.fail("rate", "expected a positive rate, found 0 bit/s");
            continue;
        }
        let model = ModelSpec::Constellation(ConstellationSpec {
            altitude_m: altitude_km * 1000.0,
            inclination_deg: inclination?,
            // each at most 10,000 (checked above)
            planes: planes as u32,
            per_plane: per_plane as u32,
            phasing: phasing as u32,
            terminal,
            gateway,
            min_elevation_deg: e.min_el?,
            period_ns: STARLINK_PERIOD_NS,
            phase_ns: phase,
            start_ns: start?,
            extra_delay_ns: extra,
            rate_bps: rate,
            loss,
        });
        // nominal delay (routing, BDP queues): the zenith bent pipe, 2h/c, plus the extra part
        out.push(nominal_dir(model, None));
    }
    pair(out)
}

/// `f"{n:,}"`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A constellation whose satellites come from a TLE file (the caller's SGP4,
/// python/satcc/tle.py): a trace-kind delay series per direction.
fn constellation_tle(r: &mut Reader, cx: &Context) -> Option<[ModelDir; 2]> {
    let name = r.get("tle", &file_path(), None);
    let epoch = r.t.get("epoch").cloned();
    let span = r.get("span", &duration(), Some(TLE_DEFAULT_SPAN_NS));
    let e = ends(r);
    for key in WALKER_KEYS.iter().chain(&["start"]) {
        if r.has(key) {
            r.fail(
                key,
                format!(
                    "expected no {key} beside tle (the TLE set and epoch give it), found {key} = ..."
                ),
            );
        }
    }
    if !r.issues.is_empty() {
        return None;
    }
    let (name, span, phase) = (name?, span?, e.phase?);
    if span == 0 {
        r.fail("span", "expected a positive duration, found 0 s");
    }
    check_phase(r, phase);
    if !r.issues.is_empty() {
        return None;
    }
    let path = cx.base.join(&name);
    let ask = TleAsk {
        path: &path,
        name: &name,
        epoch: epoch.as_ref(),
        terminal: e.terminal?,
        gateway: e.gateway?,
        min_elevation_deg: e.min_el?,
        phase_ns: phase,
        period_ns: STARLINK_PERIOD_NS,
        span_ns: span,
    };
    let geometry = match cx.files.tle(&ask) {
        Ok(g) => g,
        Err((key, message)) => {
            r.fail(&key, message);
            return None;
        }
    };
    let up: Vec<u64> = geometry.iter().filter_map(|(_, d)| *d).collect();
    if up.is_empty() {
        r.fail(
            "tle",
            format!(
                "expected a satellite visible from both ends within the span, found none in {}",
                py_str(&name)
            ),
        );
        return None;
    }
    let mut out = Vec::new();
    for (rate, loss, extra) in e.directions()? {
        if rate == 0 {
            r.fail("rate", "expected a positive rate, found 0 bit/s");
            continue;
        }
        let mut series: Vec<(u64, u64, f64)> = Vec::new();
        for &(t, d) in &geometry {
            let row = match d {
                None => (t, extra, TLE_OUTAGE_LOSS),
                Some(d) => (t, d + extra, loss),
            };
            // equal neighbours add nothing
            if series.last().is_none_or(|l| (l.1, l.2) != (row.1, row.2)) {
                series.push(row);
            }
        }
        let sum: u128 = up.iter().map(|&d| u128::from(d)).sum();
        // a mean while a satellite serves; Python's round(sum / len)
        let nominal_delay = round_f(sum as f64 / up.len() as f64) + extra;
        let model = ModelSpec::Trace(TraceSpec::Inline(TraceInline {
            opportunities_ms: None,
            bytes_per_opportunity: MAHIMAHI_BYTES,
            rate_bps: Some(rate),
            series: Some(series),
            delay_ns: nominal_delay,
            loss,
        }));
        out.push(nominal_dir(model, None));
    }
    pair(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(v: Value) -> Result<[ModelDir; 2], Vec<Issue>> {
        let cx = Context {
            base: Path::new("."),
            duration_ns: None,
            files: &NoFiles,
        };
        resolve(&v, "link[0].model", &cx)
    }

    #[test]
    fn starlink_defaults_are_the_residential_presets_uplink_from_the_dish() {
        let [ab, ba] = read(json!({"kind": "starlink"})).unwrap();
        assert_eq!((ab.rate_bps, ba.rate_bps), (15_000_000, 100_000_000));
        assert_eq!(ab.delay_ns, 25_000_000);
        assert_eq!(ab.queue, Some(QueueSpec::Bytes(281_250)));
        match ab.model {
            ModelSpec::Starlink(s) => {
                assert_eq!(s.capacity_bps, (5_000_000, 25_000_000));
                assert!(s.intra.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_problem_of_a_table_is_named_with_its_key() {
        let e = read(json!({"kind": "lfn", "rate": "fast", "colour": 1})).unwrap_err();
        let keys: Vec<&str> = e.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "link[0].model.colour",
                "link[0].model.rate",
                "link[0].model.rtt"
            ]
        );
        assert!(e[2].1.starts_with("expected the required key 'rtt'"));
        let e = read(json!({"kind": "boat"})).unwrap_err();
        assert_eq!(
            e[0].1,
            "expected one of starlink, geo, lfn, trace, constellation, found 'boat'"
        );
    }

    #[test]
    fn a_start_reads_a_time_of_day_or_a_duration() {
        let p = start();
        assert_eq!(p(&json!("00:00:12")).unwrap(), 12 * S);
        assert_eq!(p(&json!("1:02:03.5")).unwrap(), 3723 * S + S / 2);
        assert_eq!(p(&json!("5 s")).unwrap(), 5 * S);
        assert!(p(&json!("24:00:00")).is_err());
        assert!(p(&json!("12:60:00")).is_err());
    }

    #[test]
    fn integer_rounding_is_half_to_even_as_pythons() {
        assert_eq!(round_div(5, 2), 2);
        assert_eq!(round_div(7, 2), 4);
        assert_eq!(round_div(10, 4), 2);
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(999), "999");
    }
}
