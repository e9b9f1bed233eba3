//! The resolved link model, typed: [`ModelSpec`], the `model` of a resolved link direction
//! (`python/satcc/_native.pyi` MODEL), tagged by `kind`. [`super::table`] makes it from the
//! `[link.model]` table (presets applied, units parsed, files named by absolute path with
//! their digests); serde reads it back from the resolved scenario's JSON (satcc-linkd's input,
//! a dictionary handed to the bindings) and writes it; [`ModelSpec::config`] turns it into
//! the behaviour's configuration where an engine builds the link (reading a trace or a delay
//! CSV there, once per process, and checking it is still the file the scenario was resolved
//! with).
//!
//! On the wire the keys are written in sorted order, as JSON objects of `serde_json` are (the
//! scenario hash and every result written from the dictionary keep their bytes).

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{constellation, geo, lfn, starlink, trace, trace_file, EpochClock, ModelConfig};
use crate::link::LinkState;
use crate::time::{SimDuration, SimTime};

/// A link direction's model as the scenario resolves it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ModelSpec {
    Starlink(StarlinkSpec),
    Geo(GeoSpec),
    Lfn(LfnSpec),
    Trace(TraceSpec),
    Constellation(ConstellationSpec),
}

/// The Starlink reconfiguration clock's keys (`EpochClock`), in ns.
fn clock(period_ns: u64, phase_ns: u64, start_ns: u64) -> EpochClock {
    EpochClock {
        period: SimDuration::from_nanos(period_ns),
        phase: SimDuration::from_nanos(phase_ns),
        start: SimDuration::from_nanos(start_ns),
    }
}

fn ns(x: u64) -> SimDuration {
    SimDuration::from_nanos(x)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StarlinkSpec {
    pub period_ns: u64,
    pub phase_ns: u64,
    pub start_ns: u64,
    pub rtt_quantiles_ns: [u64; starlink::RTT_QUANTILES],
    pub capacity_bps: (u64, u64),
    pub loss: (f64, f64),
    pub disturbance_ns: (u64, u64),
    pub outage_probability: f64,
    pub burst_loss: (f64, f64),
    /// Within-epoch variation (`variation = "intra"`); absent: steady epochs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intra: Option<IntraSpec>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntraSpec {
    pub capacity_slot_ns: u64,
    pub capacity_sigma: f64,
    pub capacity_corr: f64,
    pub frame_ns: u64,
    pub frame_duty: f64,
    #[serde(default = "one")]
    pub frame_windows: u32,
    #[serde(default)]
    pub frame_offset_sd_ns: u64,
    #[serde(default)]
    pub frame_offset_corr: f64,
    #[serde(default)]
    pub frame_sigma: f64,
    pub delay_slot_ns: u64,
    pub jitter_ns: u64,
    #[serde(default)]
    pub jitter_floor_ns: Option<u64>,
    pub jitter_corr: f64,
    pub burst_rate: f64,
    pub burst_duration_ns: u64,
}

/// A GEO hop: a fixed one-way delay (`delay_ns`, the PCC preset), or (`delay_ns` null) the
/// slant-range geometry of the other keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeoSpec {
    pub rate_bps: u64,
    pub loss: f64,
    pub delay_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub altitude_m: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_elevation_deg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_elevation_deg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_delay_ns: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LfnSpec {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub loss: f64,
    /// The policing hop (study 003); null: none.
    #[serde(default)]
    pub police: Option<PoliceSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoliceSpec {
    pub rate_bps: (u64, u64),
    pub burst_bytes: u64,
    pub redraw_ns: u64,
}

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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstellationSpec {
    pub altitude_m: f64,
    pub inclination_deg: f64,
    pub planes: u32,
    pub per_plane: u32,
    pub phasing: u32,
    pub terminal: (f64, f64),
    pub gateway: (f64, f64),
    pub min_elevation_deg: f64,
    pub period_ns: u64,
    pub phase_ns: u64,
    pub start_ns: u64,
    pub extra_delay_ns: u64,
    pub rate_bps: u64,
    pub loss: f64,
}

/// A model in the wire form: its keys sorted, as the JSON object it is written as (the
/// `serialize_with` of a direction's `model`).
pub fn sorted<S: serde::Serializer>(m: &Option<ModelSpec>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::Error;
    serde_json::to_value(m)
        .map_err(S::Error::custom)?
        .serialize(s)
}

fn rows(series: &Option<Vec<(u64, u64, f64)>>) -> Arc<Vec<trace::Row>> {
    Arc::new(
        series
            .iter()
            .flatten()
            .map(|&(t, delay, loss)| trace::Row {
                at: SimTime::from_nanos(t),
                delay: ns(delay),
                loss,
            })
            .collect(),
    )
}

fn missing(path: &str, key: &str) -> String {
    format!("{path}.{key}: missing")
}

impl ModelSpec {
    /// The direction's nominal rate, delay and loss: what routes, "N BDP" queues, the model
    /// engine and `satcc check` take for a link with this model (the scenario reader writes
    /// them into the direction, `scenario::file`). From the typed form alone: a Starlink
    /// direction's mean capacity, half its median idle RTT and its mean loss; a GEO link's
    /// rate, one-way delay (fixed, or the slant geometry as `geo.rs` computes it) and loss; an
    /// LFN's figures; a constellation's rate, zenith bent pipe (2h/c) plus its extra delay, and
    /// loss; a trace given inline with a constant rate (a TLE set's geometry) its rate, mean
    /// delay and loss. `None` for a trace of files or of opportunities: its figures are means
    /// over the files' contents (opportunities per ms, a delay CSV's rows over the run), which
    /// the reader takes from the files as it reads them (`table::trace`).
    pub fn nominal(&self) -> Option<LinkState> {
        let state = |rate_bps: u64, delay_ns: u64, loss: f64| {
            Some(LinkState {
                rate_bps,
                delay: ns(delay_ns),
                loss,
            })
        };
        match self {
            ModelSpec::Starlink(s) => state(
                ((s.capacity_bps.0 + s.capacity_bps.1) as f64 / 2.0).round_ties_even() as u64,
                s.rtt_quantiles_ns[2] / 2,
                (s.loss.0 + s.loss.1) / 2.0,
            ),
            ModelSpec::Geo(g) => {
                let delay_ns = match g.delay_ns {
                    Some(d) => d,
                    None => geo::GeoDelay::Geometry {
                        altitude_m: g.altitude_m?,
                        terminal_elevation_deg: g.terminal_elevation_deg?,
                        gateway_elevation_deg: g.gateway_elevation_deg?,
                        extra: ns(g.extra_delay_ns?),
                    }
                    .one_way()
                    .as_nanos(),
                };
                state(g.rate_bps, delay_ns, g.loss)
            }
            ModelSpec::Lfn(l) => state(l.rate_bps, l.delay_ns, l.loss),
            ModelSpec::Constellation(c) => {
                let zenith_s = 2.0 * c.altitude_m / geo::SPEED_OF_LIGHT_M_S;
                let zenith_ns = (zenith_s * 1e9).round_ties_even() as u64;
                state(c.rate_bps, zenith_ns + c.extra_delay_ns, c.loss)
            }
            ModelSpec::Trace(TraceSpec::Inline(t)) if t.opportunities_ms.is_none() => {
                state(t.rate_bps?, t.delay_ns, t.loss)
            }
            ModelSpec::Trace(_) => None,
        }
    }

    /// The behaviour's configuration; a trace or delay CSV is read here (once per process)
    /// and must still be the file the scenario was resolved with. Errors name `path.KEY`.
    pub fn config(&self, path: &str) -> Result<ModelConfig, String> {
        Ok(match self {
            ModelSpec::Starlink(s) => ModelConfig::Starlink(starlink::StarlinkConfig {
                clock: clock(s.period_ns, s.phase_ns, s.start_ns),
                rtt_quantiles: s.rtt_quantiles_ns.map(ns),
                capacity_bps: s.capacity_bps,
                loss: s.loss,
                disturbance: (ns(s.disturbance_ns.0), ns(s.disturbance_ns.1)),
                outage_probability: s.outage_probability,
                burst_loss: s.burst_loss,
                intra: s.intra.as_ref().map(|i| starlink::Intra {
                    capacity_slot: ns(i.capacity_slot_ns),
                    capacity_sigma: i.capacity_sigma,
                    capacity_corr: i.capacity_corr,
                    frame: ns(i.frame_ns),
                    frame_duty: i.frame_duty,
                    frame_windows: i.frame_windows,
                    frame_offset_sd: ns(i.frame_offset_sd_ns),
                    frame_offset_corr: i.frame_offset_corr,
                    frame_sigma: i.frame_sigma,
                    delay_slot: ns(i.delay_slot_ns),
                    jitter: ns(i.jitter_ns),
                    jitter_floor: i.jitter_floor_ns.map(ns),
                    jitter_corr: i.jitter_corr,
                    burst_rate: i.burst_rate,
                    burst_duration: ns(i.burst_duration_ns),
                }),
            }),
            ModelSpec::Geo(g) => {
                let delay = match g.delay_ns {
                    Some(d) => geo::GeoDelay::Fixed(ns(d)),
                    None => geo::GeoDelay::Geometry {
                        altitude_m: g.altitude_m.ok_or_else(|| missing(path, "altitude_m"))?,
                        terminal_elevation_deg: g
                            .terminal_elevation_deg
                            .ok_or_else(|| missing(path, "terminal_elevation_deg"))?,
                        gateway_elevation_deg: g
                            .gateway_elevation_deg
                            .ok_or_else(|| missing(path, "gateway_elevation_deg"))?,
                        extra: ns(g
                            .extra_delay_ns
                            .ok_or_else(|| missing(path, "extra_delay_ns"))?),
                    },
                };
                ModelConfig::Geo(geo::GeoConfig {
                    rate_bps: g.rate_bps,
                    delay,
                    loss: g.loss,
                })
            }
            ModelSpec::Lfn(l) => ModelConfig::Lfn(lfn::LfnConfig {
                state: LinkState {
                    rate_bps: l.rate_bps,
                    delay: ns(l.delay_ns),
                    loss: l.loss,
                },
                police: l.police.as_ref().map(|p| lfn::Police {
                    rate_bps: p.rate_bps,
                    burst_bytes: p.burst_bytes,
                    redraw: ns(p.redraw_ns),
                }),
            }),
            ModelSpec::Trace(TraceSpec::Files(t)) => ModelConfig::Trace(files(t, path)?),
            ModelSpec::Trace(TraceSpec::Inline(t)) => {
                let capacity = match &t.opportunities_ms {
                    Some(stamps) => trace::Capacity::Opportunities {
                        stamps_ms: Arc::new(stamps.clone()),
                        bytes: t.bytes_per_opportunity,
                    },
                    None => {
                        trace::Capacity::Rate(t.rate_bps.ok_or_else(|| missing(path, "rate_bps"))?)
                    }
                };
                ModelConfig::Trace(trace::TraceConfig {
                    capacity,
                    series: rows(&t.series),
                    delay: ns(t.delay_ns),
                    loss: t.loss,
                })
            }
            ModelSpec::Constellation(c) => {
                ModelConfig::Constellation(constellation::ConstellationConfig {
                    shell: constellation::Shell {
                        altitude_m: c.altitude_m,
                        inclination_deg: c.inclination_deg,
                        planes: c.planes,
                        per_plane: c.per_plane,
                        phasing: c.phasing,
                    },
                    terminal: c.terminal,
                    gateway: c.gateway,
                    min_elevation_deg: c.min_elevation_deg,
                    clock: clock(c.period_ns, c.phase_ns, c.start_ns),
                    extra_delay: ns(c.extra_delay_ns),
                    rate_bps: c.rate_bps,
                    loss: c.loss,
                })
            }
        })
    }
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
fn files(t: &TraceFiles, path: &str) -> Result<trace::TraceConfig, String> {
    let capacity = match &t.mahimahi_path {
        Some(name) => {
            let key = format!("{path}.mahimahi_path");
            let stamps = trace_file::load(Path::new(name), None)
                .map_err(|e| format!("{key}: {name}: {e}"))?;
            same_file(&key, name, &t.opportunities_digest, &stamps.digest)?;
            trace::Capacity::Opportunities {
                stamps_ms: stamps.ms,
                bytes: t.bytes_per_opportunity,
            }
        }
        None => trace::Capacity::Rate(t.rate_bps.ok_or_else(|| missing(path, "rate_bps"))?),
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
    Ok(trace::TraceConfig {
        capacity,
        series,
        delay: ns(t.delay_ns),
        loss: t.loss,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A full Starlink MODEL dictionary (shared with satcc-emu's tests).
    fn starlink() -> Value {
        serde_json::from_str(include_str!("testdata/starlink.json")).unwrap()
    }

    fn read(v: &Value) -> Result<ModelConfig, String> {
        crate::dirspec::read::<ModelSpec>(v, "m")?.config("m")
    }

    fn nominal(v: Value) -> Option<(u64, u64, f64)> {
        let m: ModelSpec = crate::dirspec::read(&v, "m").unwrap();
        m.nominal()
            .map(|s| (s.rate_bps, s.delay.as_nanos(), s.loss))
    }

    #[test]
    fn each_model_gives_its_nominal_figures() {
        let mut s = starlink();
        s["capacity_bps"] = json!([5_000_000, 25_000_001]);
        s["loss"] = json!([0.002, 0.004]);
        s["rtt_quantiles_ns"] = json!([20, 40, 50_000_001, 60, 85]);
        // the mean capacity rounded half to even, half the median RTT, the mean loss
        assert_eq!(nominal(s), Some((15_000_000, 25_000_000, 0.003)));
        let geo = json!({"kind": "geo", "rate_bps": 42, "loss": 0.01, "delay_ns": 400});
        assert_eq!(nominal(geo), Some((42, 400, 0.01)));
        // a 35,786 km GEO seen at 90 degrees from both ends: twice the altitude over c
        let geo = json!({"kind": "geo", "rate_bps": 1, "loss": 0.0, "delay_ns": null,
            "altitude_m": 35_786_000.0, "terminal_elevation_deg": 90.0,
            "gateway_elevation_deg": 90.0, "extra_delay_ns": 5});
        let (_, d, _) = nominal(geo).unwrap();
        assert!((d as i64 - 238_740_000).abs() < 10_000, "{d}");
        let lfn = json!({"kind": "lfn", "rate_bps": 7, "delay_ns": 8, "loss": 0.5});
        assert_eq!(nominal(lfn), Some((7, 8, 0.5)));
        let shell = json!({"kind": "constellation", "altitude_m": 550000.0,
            "inclination_deg": 53.0, "planes": 72, "per_plane": 22, "phasing": 1,
            "terminal": [48.0, 11.0], "gateway": [48.5, 11.5], "min_elevation_deg": 25.0,
            "period_ns": 15_000_000_000u64, "phase_ns": 12_000_000_000u64, "start_ns": 0,
            "extra_delay_ns": 10_000_000, "rate_bps": 100, "loss": 0.0});
        // 2 x 550 km / c = 3,669,205 ns, plus the extra 10 ms
        assert_eq!(nominal(shell), Some((100, 13_669_205, 0.0)));
        let tle = json!({"kind": "trace", "opportunities_ms": null, "bytes_per_opportunity": 1500,
            "rate_bps": 9, "series": [[0, 10, 0.0]], "delay_ns": 12, "loss": 0.25});
        assert_eq!(nominal(tle), Some((9, 12, 0.25)));
        // a trace of opportunities: its figures come from the opportunities, read by the table
        let trace = json!({"kind": "trace", "opportunities_ms": [0, 1], "bytes_per_opportunity": 1500,
            "series": [[0, 10, 0.0]], "delay_ns": 10, "loss": 0.0});
        assert_eq!(nominal(trace), None);
    }

    #[test]
    fn a_missing_key_is_named() {
        let mut d = starlink();
        d.as_object_mut().unwrap().remove("loss");
        assert_eq!(read(&d).unwrap_err(), "m: missing field `loss`");
        let g =
            json!({"kind": "geo", "rate_bps": 1, "loss": 0.0, "delay_ns": null, "altitude_m": 1.0});
        assert_eq!(read(&g).unwrap_err(), "m.terminal_elevation_deg: missing");
    }

    #[test]
    fn an_intra_table_is_read_with_its_defaults() {
        let mut d = starlink();
        d["intra"] = json!({"capacity_slot_ns": 100_000_000, "capacity_sigma": 0.2, "capacity_corr": 0.6,
            "frame_ns": 4_000_000, "frame_duty": 0.25, "delay_slot_ns": 10_000_000, "jitter_ns": 1_000_000,
            "jitter_corr": 0.5, "burst_rate": 0.1, "burst_duration_ns": 50_000_000});
        match read(&d).unwrap() {
            ModelConfig::Starlink(c) => {
                let i = c.intra.expect("intra");
                assert_eq!(i.frame, SimDuration::from_millis(4));
                assert_eq!(i.capacity_sigma, 0.2);
                assert_eq!((i.frame_windows, i.jitter_floor), (1, None));
            }
            other => panic!("{other:?}"),
        }
        d["intra"].as_object_mut().unwrap().remove("jitter_ns");
        assert!(read(&d).unwrap_err().contains("missing field `jitter_ns`"));
    }

    #[test]
    fn a_wrong_type_an_unknown_key_and_an_unknown_kind_are_refused() {
        let mut d = starlink();
        d["rtt_quantiles_ns"] =
            json!([20_000_000, 40_000_000.5, 50_000_000, 60_000_000, 85_000_000]);
        assert!(read(&d).unwrap_err().contains("expected u64"));
        let t = json!({"kind": "trace", "opportunities_ms": [0, 1, "2"], "bytes_per_opportunity": 1500, "delay_ns": 0, "loss": 0.0});
        assert!(read(&t).unwrap_err().contains("expected u64"));
        let mut d = starlink();
        d["colour"] = json!(1);
        assert!(read(&d).unwrap_err().contains("unknown field `colour`"));
        d["kind"] = json!("boat");
        assert!(read(&d).unwrap_err().contains("unknown variant `boat`"));
    }

    #[test]
    fn an_integer_too_large_for_its_field_is_refused_not_truncated() {
        let c = json!({"kind": "constellation", "altitude_m": 550000.0, "inclination_deg": 53.0, "planes": 4_294_967_368u64,
                       "per_plane": 22, "phasing": 1, "terminal": [48.0, 11.0], "gateway": [48.5, 11.5],
                       "min_elevation_deg": 25.0, "period_ns": 15_000_000_000u64, "phase_ns": 0, "start_ns": 0,
                       "extra_delay_ns": 0, "rate_bps": 100_000_000, "loss": 0.0});
        assert!(read(&c)
            .unwrap_err()
            .contains("integer `4294967368`, expected u32"));
    }

    #[test]
    fn the_wire_form_is_written_back_with_its_keys_sorted() {
        let d = starlink();
        let spec: ModelSpec = serde_json::from_value(d.clone()).unwrap();
        let mut text = Vec::new();
        sorted(&Some(spec), &mut serde_json::Serializer::new(&mut text)).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), d.to_string());
    }

    #[test]
    fn a_trace_file_is_read_by_path_and_its_digest_checked() {
        let f = std::env::temp_dir().join(format!("satcc-spec-{}.trace", std::process::id()));
        std::fs::write(&f, "1\n2\n2\n").unwrap();
        let digest = trace_file::digest(&[1, 2, 2]);
        let t = json!({"kind": "trace", "mahimahi_path": f.to_str().unwrap(), "opportunities_digest": digest,
                       "opportunities_lines": 3, "bytes_per_opportunity": 1500, "rate_bps": null, "series": null,
                       "delay_csv_path": null, "delay_csv_loss": null, "series_digest": null, "series_rows": null,
                       "delay_ns": 0, "loss": 0.0});
        match read(&t).unwrap() {
            ModelConfig::Trace(c) => match c.capacity {
                trace::Capacity::Opportunities { stamps_ms, .. } => {
                    assert_eq!(stamps_ms.as_slice(), &[1, 2, 2])
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        std::fs::write(&f, "1\n2\n33\n").unwrap(); // another size: the cache reads it again
        assert!(read(&t).unwrap_err().contains("the file changed"));
        std::fs::write(&f, "1\nx\n").unwrap();
        assert!(read(&t).unwrap_err().contains("m.mahimahi_path: "));
        std::fs::remove_file(&f).unwrap();
    }
}
