//! Trace replay: capacity from a Mahimahi link trace, delay and loss from a time series.
//!
//! **Capacity.** A Mahimahi trace (`mm-link(1)`; ravinet/mahimahi `link_queue.cc`;
//! shared/research/satellite-facts.md §4) is one millisecond timestamp per line; each line is
//! one *delivery opportunity* of `bytes_per_opportunity` (1500) bytes at that millisecond. This
//! is a service schedule, not a rate, and is replayed as such:
//! - accounting is per byte: one opportunity can finish several small packets, and a packet
//!   larger than what is left takes further opportunities (its deficit carries over);
//! - a packet leaves the serialiser at the opportunity that covers its last byte;
//! - bytes left in an opportunity go to the next packet only if it is queued at that instant;
//!   an opportunity with nothing queued is wasted (no credit is banked);
//! - a packet that enters service at `t` may use an opportunity stamped exactly `t`;
//! - the trace loops: after the last line, the base time advances by the last timestamp P and
//!   playback restarts at line 1 (a line `0` thus coincides with ms P of the previous period).
//!
//! The file is read by [`super::trace_file`] (the one parser of the format, 8 B a line, once per
//! process); the timestamps are shared (`Arc`) by every direction and run that replays them.
//!
//! One line per ms carries 1500·8 bit/ms = 12 Mbit/s. Without a trace, a constant `rate`
//! serves packets as any other link does.
//!
//! **Delay and loss.** Rows `t_ms,delay_ms[,loss]` (as LeoReplayer's delay files, one-way):
//! each row holds from its time until the next row; before the first row the first row holds,
//! after the last the last one does (the series does not loop). Without rows, constant
//! `delay` and `loss`.
//!
//! | parameter | default | unit | source |
//! |---|---|---|---|
//! | bytes_per_opportunity | 1500 | bytes | mm-link(1) man page (the source uses 1504 with the TUN header: 0.27 % apart) |
//! | rate (no trace) | required | bit/s | |
//! | delay, loss (no series) | required, 0 | ns, probability | |
//!
//! Deviations from Mahimahi: packets larger than an opportunity are accepted (deficit
//! accounting) instead of rejected; there is no `--once` mode (the trace always loops).
//! Not implemented: Mahimahi's own queue disciplines (the link's queue is satcc's drop-tail).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::link::{LinkModel, LinkState};
use crate::scenario::file::ModelDir;
use crate::time::{SimDuration, SimTime};
use crate::units::py_str;

use super::table::{
    dir, directional, duration, file_path, integer, pair, probability, rate, round_div, round_f,
    shared, Context, Reader,
};
use super::{integrate_state, missing, trace_file, Kind, LinkBehaviour, MeanState, ModelSpec, Seeds};

/// Nanoseconds per millisecond.
const NS_PER_MS: u64 = 1_000_000;
/// Bytes per delivery opportunity (`mm-link(1)`).
pub const MAHIMAHI_BYTES: u64 = 1500;

#[derive(Clone, Debug, PartialEq)]
pub struct TraceConfig {
    pub capacity: Capacity,
    /// Delay/loss rows (time, one-way delay, loss), sorted by time; empty = `delay`, `loss`.
    /// (Shared: a CSV file is parsed once per process, [`super::trace_file::load_delay_csv`].)
    pub series: Arc<Vec<Row>>,
    pub delay: SimDuration,
    pub loss: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    /// Mahimahi timestamps (ms, non-decreasing, last > 0; shared: a trace file is parsed once
    /// per process, [`super::trace_file::load`]) and bytes per opportunity.
    Opportunities {
        stamps_ms: Arc<Vec<u64>>,
        bytes: u64,
    },
    Rate(u64),
}

/// One row of the delay/loss series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub at: SimTime,
    pub delay: SimDuration,
    pub loss: f64,
}

fn check_stamps(stamps: &[u64]) -> Result<(), String> {
    super::trace_file::check(stamps).map_err(|e| e.to_string())
}

pub struct Trace {
    cfg: TraceConfig,
    /// Global index (over loops) of the first unused opportunity.
    next: u64,
    /// (time, bytes) left in the opportunity that finished the last packet.
    leftover: Option<(SimTime, u64)>,
}

impl Trace {
    pub fn new(cfg: TraceConfig) -> Result<Self, String> {
        match &cfg.capacity {
            Capacity::Opportunities { stamps_ms, bytes } => {
                check_stamps(stamps_ms)?;
                if *bytes == 0 {
                    return Err("bytes per opportunity must be > 0".into());
                }
            }
            Capacity::Rate(0) => return Err("rate: must be > 0".into()),
            Capacity::Rate(_) => {}
        }
        if cfg.series.windows(2).any(|w| w[0].at > w[1].at) {
            return Err("delay series: times must be non-decreasing".into());
        }
        if cfg.series.iter().any(|r| !(0.0..=1.0).contains(&r.loss)) {
            return Err("delay series: loss must be in [0, 1]".into());
        }
        Ok(Trace {
            cfg,
            next: 0,
            leftover: None,
        })
    }

    fn stamps(&self) -> Option<(&[u64], u64)> {
        match &self.cfg.capacity {
            Capacity::Opportunities { stamps_ms, bytes } => Some((stamps_ms.as_slice(), *bytes)),
            Capacity::Rate(_) => None,
        }
    }

    /// Time of opportunity `j` (global index over loops).
    fn opportunity(stamps: &[u64], j: u64) -> SimTime {
        let n = stamps.len() as u64;
        let period = *stamps.last().expect("checked non-empty");
        SimTime::from_nanos(((j / n) * period + stamps[(j % n) as usize]) * NS_PER_MS)
    }

    /// Global index of the first opportunity at or after `t`.
    fn first_at_or_after(stamps: &[u64], t: SimTime) -> u64 {
        let n = stamps.len() as u64;
        let period = *stamps.last().expect("checked non-empty");
        let t_ms = t.as_nanos().div_ceil(NS_PER_MS);
        let mut cycle = (t_ms / period).saturating_sub(1);
        loop {
            let base = cycle * period;
            let i = stamps.partition_point(|&s| base + s < t_ms) as u64;
            if i < n {
                return cycle * n + i;
            }
            cycle += 1;
        }
    }

    /// Opportunities with times in `(from, to]`.
    pub fn opportunities_in(&self, from: SimTime, to: SimTime) -> u64 {
        let Some((stamps, _)) = self.stamps() else {
            return 0;
        };
        let a = Self::first_at_or_after(stamps, from + SimDuration::from_nanos(1));
        let b = Self::first_at_or_after(stamps, to + SimDuration::from_nanos(1));
        b - a
    }

    fn row_at(&self, t: SimTime) -> Option<&Row> {
        let s = &self.cfg.series;
        if s.is_empty() {
            return None;
        }
        let i = s.partition_point(|r| r.at <= t);
        Some(&s[i.saturating_sub(1)])
    }

    fn next_row(&self, t: SimTime) -> Option<SimTime> {
        let s = &self.cfg.series;
        let i = s.partition_point(|r| r.at <= t);
        s.get(i).map(|r| r.at)
    }
}

/// The delay/loss series alone, as a `LinkModel` with a nominal rate (for integration).
struct SeriesOnly<'a>(&'a Trace);

impl LinkModel for SeriesOnly<'_> {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        let (delay, loss) = self
            .0
            .row_at(now)
            .map_or((self.0.cfg.delay, self.0.cfg.loss), |r| (r.delay, r.loss));
        LinkState {
            rate_bps: 0,
            delay,
            loss,
        }
    }
    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        self.0.next_row(now)
    }
}

impl LinkModel for Trace {
    /// The rate is the capacity of the millisecond that ends at the next whole ms after `now`
    /// (opportunities stamped at its end).
    fn state_at(&mut self, now: SimTime) -> LinkState {
        let mut s = SeriesOnly(self).state_at(now);
        s.rate_bps = match self.stamps() {
            Some((_, bytes)) => {
                let start = SimTime::from_nanos(now.as_nanos() / NS_PER_MS * NS_PER_MS);
                self.opportunities_in(start, start + SimDuration::from_millis(1)) * bytes * 8 * 1000
            }
            None => match self.cfg.capacity {
                Capacity::Rate(r) => r,
                Capacity::Opportunities { .. } => unreachable!(),
            },
        };
        s
    }

    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        let row = self.next_row(now);
        let ms = self
            .stamps()
            .map(|_| SimTime::from_nanos((now.as_nanos() / NS_PER_MS + 1) * NS_PER_MS));
        match (row, ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl LinkBehaviour for Trace {
    fn transmit_end(&mut self, start: SimTime, bytes: u64) -> Option<SimTime> {
        let Some((stamps, per)) = self.stamps() else {
            return super::fluid_transmit_end(self, start, bytes);
        };
        let mut need = bytes;
        if let Some((at, left)) = self.leftover {
            if at == start && left > 0 {
                let used = left.min(need);
                need -= used;
                if need == 0 {
                    self.leftover = Some((at, left - used));
                    return Some(start);
                }
            }
        }
        let mut j = Self::first_at_or_after(stamps, start).max(self.next);
        loop {
            let at = Self::opportunity(stamps, j);
            if need <= per {
                self.leftover = Some((at, per - need));
                self.next = j + 1;
                return Some(at);
            }
            need -= per;
            j += 1;
        }
    }

    fn mean_over(&mut self, from: SimTime, to: SimTime) -> MeanState {
        let mut m = integrate_state(&mut SeriesOnly(self), from, to);
        m.rate_bps = match self.stamps() {
            Some((_, bytes)) if to > from => {
                self.opportunities_in(from, to) as f64 * bytes as f64 * 8.0
                    / (to - from).as_secs_f64()
            }
            Some(_) => 0.0,
            None => match self.cfg.capacity {
                Capacity::Rate(r) => r as f64,
                Capacity::Opportunities { .. } => unreachable!(),
            },
        };
        m
    }
}

// -- the `[link.model]` table: keys, reader, resolved form ----------------------------------

/// Trace replay in one of two forms: the files a `kind = "trace"` table names (read where the
/// model is built, their digests tying the run to them), or the opportunities and rows
/// written inline (a TLE constellation's delay series; scenarios built in code). A document
/// with `opportunities_ms` is the inline form.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TraceSpec {
    Files(TraceFiles),
    Inline(TraceInline),
}

impl<'de> Deserialize<'de> for TraceSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        if v.get("opportunities_ms").is_some() {
            TraceInline::deserialize(v).map(TraceSpec::Inline)
        } else {
            TraceFiles::deserialize(v).map(TraceSpec::Files)
        }
        .map_err(D::Error::custom)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceFiles {
    /// A Mahimahi trace (absolute path); null: the constant `rate_bps`.
    pub mahimahi_path: Option<String>,
    pub opportunities_digest: Option<String>,
    /// The trace's line count (the run-time estimate, `satcc.engines.sim`).
    pub opportunities_lines: Option<u64>,
    pub bytes_per_opportunity: u64,
    pub rate_bps: Option<u64>,
    #[serde(default)]
    pub series: Option<Vec<(u64, u64, f64)>>,
    /// A delay/loss CSV (absolute path) and the loss of its rows without one; null: `delay_ns`
    /// and `loss` for ever.
    pub delay_csv_path: Option<String>,
    pub delay_csv_loss: Option<f64>,
    pub series_digest: Option<String>,
    pub series_rows: Option<u64>,
    pub delay_ns: u64,
    pub loss: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceInline {
    /// Delivery opportunities (ms); null: the constant `rate_bps`.
    pub opportunities_ms: Option<Vec<u64>>,
    pub bytes_per_opportunity: u64,
    #[serde(default)]
    pub rate_bps: Option<u64>,
    /// Rows `[t_ns, delay_ns, loss]`, sorted by time.
    #[serde(default)]
    pub series: Option<Vec<(u64, u64, f64)>>,
    pub delay_ns: u64,
    pub loss: f64,
}

impl Kind for TraceSpec {
    type Config = TraceConfig;

    fn keys() -> Vec<String> {
        [
            directional(&["mahimahi", "rate", "delay_csv", "delay", "loss"]),
            shared(&["bytes_per_opportunity"]),
        ]
        .concat()
    }

    fn read(r: &mut Reader, cx: &Context) -> Option<[ModelDir; 2]> {
        trace(r, cx)
    }

    /// Inline with a constant rate (a TLE set's geometry): its rate, mean delay and loss.
    /// `None` for a trace of files or of opportunities: its figures are means over the files'
    /// contents (opportunities per ms, a delay CSV's rows over the run), which [`trace`]
    /// takes from the files as it reads them.
    fn nominal(&self) -> Option<LinkState> {
        match self {
            TraceSpec::Inline(t) if t.opportunities_ms.is_none() => Some(LinkState {
                rate_bps: t.rate_bps?,
                delay: SimDuration::from_nanos(t.delay_ns),
                loss: t.loss,
            }),
            _ => None,
        }
    }

    fn config(&self, path: &str) -> Result<TraceConfig, String> {
        match self {
            TraceSpec::Files(t) => files(t, path),
            TraceSpec::Inline(t) => {
                let capacity = match &t.opportunities_ms {
                    Some(stamps) => Capacity::Opportunities {
                        stamps_ms: Arc::new(stamps.clone()),
                        bytes: t.bytes_per_opportunity,
                    },
                    None => Capacity::Rate(t.rate_bps.ok_or_else(|| missing(path, "rate_bps"))?),
                };
                Ok(TraceConfig {
                    capacity,
                    series: rows(&t.series),
                    delay: SimDuration::from_nanos(t.delay_ns),
                    loss: t.loss,
                })
            }
        }
    }

    fn build(c: &TraceConfig, _: Seeds) -> Result<Box<dyn LinkBehaviour>, String> {
        Ok(Box::new(Trace::new(c.clone())?))
    }
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

fn rows(series: &Option<Vec<(u64, u64, f64)>>) -> Arc<Vec<Row>> {
    Arc::new(
        series
            .iter()
            .flatten()
            .map(|&(t, delay, loss)| Row {
                at: SimTime::from_nanos(t),
                delay: SimDuration::from_nanos(delay),
                loss,
            })
            .collect(),
    )
}

/// "the file changed" unless `found` is the digest the scenario was resolved with.
fn same_file(key: &str, name: &str, want: &Option<String>, found: &str) -> Result<(), String> {
    match want {
        Some(w) if w != found => Err(format!(
            "{key}: {name}: the file changed since the scenario was resolved"
        )),
        _ => Ok(()),
    }
}

/// A trace of files: the Mahimahi trace and the delay CSV read by path.
fn files(t: &TraceFiles, path: &str) -> Result<TraceConfig, String> {
    let capacity = match &t.mahimahi_path {
        Some(name) => {
            let key = format!("{path}.mahimahi_path");
            let stamps = trace_file::load(Path::new(name), None)
                .map_err(|e| format!("{key}: {name}: {e}"))?;
            same_file(&key, name, &t.opportunities_digest, &stamps.digest)?;
            Capacity::Opportunities {
                stamps_ms: stamps.ms,
                bytes: t.bytes_per_opportunity,
            }
        }
        None => Capacity::Rate(t.rate_bps.ok_or_else(|| missing(path, "rate_bps"))?),
    };
    let series = match &t.delay_csv_path {
        Some(name) => {
            if t.series.is_some() {
                return Err(format!(
                    "{path}: expected delay_csv_path or series, found both"
                ));
            }
            let key = format!("{path}.delay_csv_path");
            let loss = t
                .delay_csv_loss
                .ok_or_else(|| missing(path, "delay_csv_loss"))?;
            let s = trace_file::load_delay_csv(Path::new(name), loss, None)
                .map_err(|e| format!("{key}: {name}: {e}"))?;
            same_file(&key, name, &t.series_digest, &s.digest)?;
            s.rows
        }
        None => rows(&t.series),
    };
    Ok(TraceConfig {
        capacity,
        series,
        delay: SimDuration::from_nanos(t.delay_ns),
        loss: t.loss,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_nanos(x * NS_PER_MS)
    }

    fn trace(text: &str) -> Trace {
        let stamps_ms = Arc::new(super::super::trace_file::read_mahimahi(text.as_bytes()).unwrap());
        Trace::new(TraceConfig {
            capacity: Capacity::Opportunities {
                stamps_ms,
                bytes: MAHIMAHI_BYTES,
            },
            series: Arc::new(vec![]),
            delay: SimDuration::from_millis(20),
            loss: 0.0,
        })
        .unwrap()
    }

    #[test]
    fn one_line_per_ms_carries_12_mbit_s() {
        // A single line "1": one opportunity every ms, for ever.
        let mut t = trace("1");
        let m = t.mean_over(SimTime::ZERO, ms(10_000));
        assert!((m.rate_bps - 12e6).abs() < 1.0, "{}", m.rate_bps);
        // And back-to-back 1500-byte packets leave one per ms.
        let mut now = SimTime::ZERO;
        for k in 1..=1000 {
            now = t.transmit_end(now, 1500).unwrap();
            assert_eq!(now, ms(k));
        }
    }

    #[test]
    fn the_trace_loops_at_its_last_timestamp() {
        // Opportunities at 2 and 5 ms, period 5: 2, 5, 7, 10, 12, ...
        let mut t = trace("2\n5");
        let mut now = SimTime::ZERO;
        let mut got = vec![];
        for _ in 0..6 {
            now = t.transmit_end(now, 1500).unwrap();
            got.push(now.as_nanos() / NS_PER_MS);
        }
        assert_eq!(got, vec![2, 5, 7, 10, 12, 15]);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_carry_a_deficit() {
        let mut t = trace("1\n2\n3\n4");
        // 500 + 500 + 500 fill the opportunity at 1 ms, back to back.
        assert_eq!(t.transmit_end(SimTime::ZERO, 500), Some(ms(1)));
        assert_eq!(t.transmit_end(ms(1), 500), Some(ms(1)));
        assert_eq!(t.transmit_end(ms(1), 500), Some(ms(1)));
        // A 2000-byte packet takes the opportunities at 2 and 3 ms, leaving 1000 B at 3 ms.
        assert_eq!(t.transmit_end(ms(1), 2000), Some(ms(3)));
        assert_eq!(t.transmit_end(ms(3), 1000), Some(ms(3)));
        assert_eq!(t.transmit_end(ms(3), 1), Some(ms(4)));
    }

    #[test]
    fn an_opportunity_with_nothing_queued_is_wasted() {
        let mut t = trace("1\n2\n3\n4\n5");
        assert_eq!(t.transmit_end(SimTime::ZERO, 100), Some(ms(1)));
        // Next packet arrives at 2.5 ms: the leftover of 1 ms and the opportunity at 2 are gone.
        assert_eq!(
            t.transmit_end(SimTime::from_nanos(2_500_000), 1500),
            Some(ms(3))
        );
    }

    #[test]
    fn repeated_lines_are_parallel_opportunities() {
        let mut t = trace("1\n1\n2\n2");
        let m = t.mean_over(SimTime::ZERO, ms(1000));
        assert!((m.rate_bps - 24e6).abs() < 1.0);
        assert_eq!(t.transmit_end(SimTime::ZERO, 1500), Some(ms(1)));
        assert_eq!(t.transmit_end(ms(1), 1500), Some(ms(1)));
        assert_eq!(t.transmit_end(ms(1), 1500), Some(ms(2)));
    }

    #[test]
    fn the_delay_series_steps_at_its_rows() {
        let rows = vec![
            Row {
                at: ms(0),
                delay: SimDuration::from_millis(30),
                loss: 0.0,
            },
            Row {
                at: ms(100),
                delay: SimDuration::from_millis(50),
                loss: 0.01,
            },
        ];
        let mut t = Trace::new(TraceConfig {
            capacity: Capacity::Rate(10_000_000),
            series: Arc::new(rows),
            delay: SimDuration::ZERO,
            loss: 0.0,
        })
        .unwrap();
        assert_eq!(t.state_at(ms(99)).delay, SimDuration::from_millis(30));
        assert_eq!(t.state_at(ms(100)).delay, SimDuration::from_millis(50));
        assert_eq!(t.state_at(ms(5000)).loss, 0.01);
        assert_eq!(t.next_change(ms(50)), Some(ms(100)));
        assert_eq!(t.next_change(ms(100)), None);
        let m = t.mean_over(ms(50), ms(150));
        assert_eq!(m.delay, SimDuration::from_millis(40));
        assert_eq!(m.rate_bps, 10e6);
    }

    #[test]
    fn counting_opportunities_in_one_ms_windows_reproduces_the_trace() {
        // The export's view: per-ms opportunity counts give back the lines.
        let text = "1\n1\n3\n4\n4\n4\n7\n9";
        let t = trace(text);
        let mut lines = vec![];
        for k in 0..9u64 {
            for _ in 0..t.opportunities_in(ms(k), ms(k + 1)) {
                lines.push((k + 1).to_string());
            }
        }
        assert_eq!(lines.join("\n"), text);
    }
}
