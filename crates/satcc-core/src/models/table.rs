//! The `[link.model]` table read: its keys per kind, the cited presets, every check, and per
//! direction (a→b, b→a) the MODEL dictionary the engines build ([`super::ModelSpec`]), the
//! direction's *nominal* rate, delay and loss (routes, "N BDP" queues, the model engine) and
//! the model's default queue. The scenario reader ([`crate::scenario::file::read`]) calls
//! [`resolve`] once per link; files on the host (Mahimahi traces, delay CSVs, TLE sets) are
//! read through the caller's [`ModelFiles`] (the Python layer's file limits and SGP4).
//!
//! Every direction-specific key `X` has an `X_ba` twin for the b→a direction, defaulting to
//! `X`. Problems are (key path, message) pairs, "expected WHAT, found WHAT"; all of a table's
//! problems are reported together.
//!
//! Each kind's keys, presets (with their sources) and checks live in its model's file
//! ([`super::Kind`]); this file holds what they share: the reader that collects problems, the
//! value parsers and the files the caller reads.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::{starlink, trace, ModelSpec, KINDS};
use crate::dirspec::QueueSpec;
use crate::scenario::file::{Issue, ModelDir};
use crate::units::{self, describe, py_str, Raw, UnitError};

pub(crate) const MS: u64 = 1_000_000;
pub(crate) const S: u64 = 1_000_000_000;

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

/// `X` and its `X_ba` twin for each key: the keys of a direction-specific figure.
pub fn directional(ks: &[&str]) -> Vec<String> {
    ks.iter()
        .flat_map(|k| [k.to_string(), format!("{k}_ba")])
        .collect()
}

/// Keys shared by both directions.
pub fn shared(ks: &[&str]) -> Vec<String> {
    ks.iter().map(|k| k.to_string()).collect()
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
        .map(|k| (k.to_string(), json!(super::keys(k))))
        .collect();
    json!({
        "kinds": KINDS,
        "keys": keys,
        "starlink_capacity_mbps": starlink::STARLINK_CAPACITY_MBPS
            .iter()
            .map(|(p, r, (lo, hi))| json!([p, r, lo, hi]))
            .collect::<Vec<_>>(),
        "starlink_loss": starlink::STARLINK_LOSS
            .iter()
            .map(|(r, (lo, hi))| (r.to_string(), json!([lo, hi])))
            .collect::<Map<String, Value>>(),
        "starlink_intra": match up.model {
            ModelSpec::Starlink(s) => json!(s.intra),
            _ => unreachable!("a Starlink table resolves to a Starlink model"),
        },
        "starlink_period_ns": starlink::STARLINK_PERIOD_NS,
        "mahimahi_bytes": trace::MAHIMAHI_BYTES,
    })
}

// -- value parsers --------------------------------------------------------------------------

pub(crate) type Parse<T> = Box<dyn Fn(&Value) -> Result<T, UnitError>>;

pub(crate) fn raw(v: &Value) -> Raw {
    Raw::from_json(v)
}

pub(crate) fn duration() -> Parse<u64> {
    Box::new(|v| units::duration_ns(&raw(v)))
}

pub(crate) fn rate() -> Parse<u64> {
    Box::new(|v| units::rate_bps(&raw(v)))
}

pub(crate) fn probability() -> Parse<f64> {
    Box::new(|v| units::probability(&raw(v)))
}

pub(crate) fn size() -> Parse<u64> {
    Box::new(|v| units::size_bytes(&raw(v)))
}

/// A bound as Python's `{x:g}` writes the ones used here.
fn g(x: f64) -> String {
    format!("{x}")
}

pub(crate) fn number(lo: f64, hi: f64, what: &'static str) -> Parse<f64> {
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

pub(crate) fn integer(lo: u64, hi: u64, what: &'static str) -> Parse<u64> {
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
pub(crate) fn range<T: PartialOrd + Copy + 'static>(
    parse: Parse<T>,
    what: &'static str,
) -> Parse<(T, T)> {
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

pub(crate) fn choice(options: &'static [&'static str]) -> Parse<&'static str> {
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
pub(crate) fn start() -> Parse<u64> {
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

pub(crate) fn latlon() -> Parse<(f64, f64)> {
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

pub(crate) fn file_path() -> Parse<String> {
    Box::new(|v| match v.as_str() {
        Some(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(UnitError::new("a file path", &raw(v), None)),
    })
}

/// Five non-decreasing durations: the RTT at p = 0, 0.25, 0.5, 0.75, 1.
pub(crate) fn quantiles() -> Parse<Vec<u64>> {
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
pub(crate) fn round_div(n: u128, d: u128) -> u64 {
    let (q, r) = (n / d, n % d);
    let up = 2 * r > d || (2 * r == d && q % 2 == 1);
    (q + u128::from(up)) as u64
}

pub(crate) fn round_f(x: f64) -> u64 {
    x.round_ties_even() as u64
}

// -- a reader that collects issues ----------------------------------------------------------

pub struct Reader<'a> {
    pub(crate) t: &'a Map<String, Value>,
    p: &'a str,
    pub(crate) issues: Vec<Issue>,
}

impl<'a> Reader<'a> {
    fn new(t: &'a Map<String, Value>, p: &'a str, kind: &str) -> Self {
        let mut allowed = vec!["kind".to_string()];
        allowed.extend(super::keys(kind));
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

    pub(crate) fn has(&self, key: &str) -> bool {
        self.t.contains_key(key)
    }

    /// `key` read by `parse`; absent: `default`, or (None) a missing required key.
    pub(crate) fn get<T: Clone>(
        &mut self,
        key: &str,
        parse: &Parse<T>,
        default: Option<T>,
    ) -> Option<T> {
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
    pub(crate) fn opt<T: Clone>(&mut self, key: &str, parse: &Parse<T>) -> Option<T> {
        if self.has(key) {
            self.get(key, parse, None)
        } else {
            None
        }
    }

    /// `key` for a→b and `key_ba` for b→a (defaulting to a→b's value, never required).
    pub(crate) fn both<T: Clone>(
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
    pub(crate) fn both_opt<T: Clone>(
        &mut self,
        key: &str,
        parse: &Parse<T>,
    ) -> (Option<T>, Option<T>) {
        let ab = self.opt(key, parse);
        let kb = format!("{key}_ba");
        let ba = if self.has(&kb) {
            self.get(&kb, parse, None)
        } else {
            ab.clone()
        };
        (ab, ba)
    }

    pub(crate) fn fail(&mut self, key: &str, message: impl Into<String>) {
        let at = if key.is_empty() {
            self.p.to_string()
        } else {
            format!("{}.{key}", self.p)
        };
        self.issues.push((at, message.into()));
    }

    pub(crate) fn found(&self, key: &str) -> String {
        self.t
            .get(key)
            .map_or("nothing".into(), |v| describe(&raw(v)))
    }
}

pub(crate) fn dir(
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
pub(crate) fn nominal_dir(model: ModelSpec, queue: Option<QueueSpec>) -> ModelDir {
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
    match super::read(kind, &mut r, cx) {
        Some([ab, ba]) if r.issues.is_empty() => Ok([ab, ba]),
        _ => Err(r.issues),
    }
}

pub(crate) fn pair<T>(v: Vec<T>) -> Option<[T; 2]> {
    v.try_into().ok()
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
        assert_eq!(super::super::constellation::thousands(100_000), "100,000");
        assert_eq!(super::super::constellation::thousands(999), "999");
    }
}
