//! From a direction's resolved `[link.model]` (JSON, exactly the "MODEL" dictionary of
//! `python/satcc/_native.pyi`, which the runner passes through untouched) to satcc-core's
//! `ModelSpec`, then to the `LinkBehaviour` the simulator builds from the same spec with the same
//! seeds, so a scenario's channel is one model in both engines.
//!
//! The key mapping mirrors `crates/satcc-py/src/sim.rs` `model_from` (the simulator's reader of
//! the same dictionary); the tests below check each kind builds. Keep the two in step.

use satcc_core::link::LinkState;
use satcc_core::models::{constellation, geo, lfn, starlink, trace, EpochClock, LinkBehaviour, ModelSpec, Seeds};
use satcc_core::{SimDuration, SimTime};
use serde_json::Value;

use crate::config::ConfigError;

fn field<'a>(d: &'a Value, key: &str, path: &str) -> Result<&'a Value, ConfigError> {
    d.get(key).filter(|v| !v.is_null()).ok_or_else(|| ConfigError(format!("{path}.{key}: missing")))
}

fn u64_(d: &Value, key: &str, path: &str) -> Result<u64, ConfigError> {
    field(d, key, path)?.as_u64().ok_or_else(|| ConfigError(format!("{path}.{key}: expected a non-negative integer")))
}

fn f64_(d: &Value, key: &str, path: &str) -> Result<f64, ConfigError> {
    field(d, key, path)?.as_f64().ok_or_else(|| ConfigError(format!("{path}.{key}: expected a number")))
}

fn ns(d: &Value, key: &str, path: &str) -> Result<SimDuration, ConfigError> {
    u64_(d, key, path).map(SimDuration::from_nanos)
}

fn pair_u64(d: &Value, key: &str, path: &str) -> Result<(u64, u64), ConfigError> {
    let v = field(d, key, path)?;
    match v.as_array().map(|a| (a.len(), a.first().and_then(Value::as_u64), a.get(1).and_then(Value::as_u64))) {
        Some((2, Some(a), Some(b))) => Ok((a, b)),
        _ => Err(ConfigError(format!("{path}.{key}: expected [integer, integer]"))),
    }
}

fn pair_f64(d: &Value, key: &str, path: &str) -> Result<(f64, f64), ConfigError> {
    let v = field(d, key, path)?;
    match v.as_array().map(|a| (a.len(), a.first().and_then(Value::as_f64), a.get(1).and_then(Value::as_f64))) {
        Some((2, Some(a), Some(b))) => Ok((a, b)),
        _ => Err(ConfigError(format!("{path}.{key}: expected [number, number]"))),
    }
}

fn clock(d: &Value, path: &str) -> Result<EpochClock, ConfigError> {
    Ok(EpochClock { period: ns(d, "period_ns", path)?, phase: ns(d, "phase_ns", path)?, start: ns(d, "start_ns", path)? })
}

/// The `ModelSpec` a resolved model dictionary describes.
pub fn spec(d: &Value, path: &str) -> Result<ModelSpec, ConfigError> {
    let kind = field(d, "kind", path)?.as_str().unwrap_or("");
    Ok(match kind {
        "starlink" => {
            let q: Vec<u64> = field(d, "rtt_quantiles_ns", path)?
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default();
            let q: [u64; starlink::RTT_QUANTILES] = q
                .try_into()
                .map_err(|_| ConfigError(format!("{path}.rtt_quantiles_ns: expected {} integers", starlink::RTT_QUANTILES)))?;
            let (d0, d1) = pair_u64(d, "disturbance_ns", path)?;
            ModelSpec::Starlink(starlink::StarlinkConfig {
                clock: clock(d, path)?,
                rtt_quantiles: q.map(SimDuration::from_nanos),
                capacity_bps: pair_u64(d, "capacity_bps", path)?,
                loss: pair_f64(d, "loss", path)?,
                disturbance: (SimDuration::from_nanos(d0), SimDuration::from_nanos(d1)),
                outage_probability: f64_(d, "outage_probability", path)?,
                burst_loss: pair_f64(d, "burst_loss", path)?,
            })
        }
        "geo" => {
            let delay = match d.get("delay_ns").and_then(Value::as_u64) {
                Some(x) => geo::GeoDelay::Fixed(SimDuration::from_nanos(x)),
                None => geo::GeoDelay::Geometry {
                    altitude_m: f64_(d, "altitude_m", path)?,
                    terminal_elevation_deg: f64_(d, "terminal_elevation_deg", path)?,
                    gateway_elevation_deg: f64_(d, "gateway_elevation_deg", path)?,
                    extra: ns(d, "extra_delay_ns", path)?,
                },
            };
            ModelSpec::Geo(geo::GeoConfig { rate_bps: u64_(d, "rate_bps", path)?, delay, loss: f64_(d, "loss", path)? })
        }
        "lfn" => {
            let police = match d.get("police").filter(|p| !p.is_null()) {
                Some(p) => {
                    let pp = format!("{path}.police");
                    Some(lfn::Police {
                        rate_bps: pair_u64(p, "rate_bps", &pp)?,
                        burst_bytes: u64_(p, "burst_bytes", &pp)?,
                        redraw: ns(p, "redraw_ns", &pp)?,
                    })
                }
                None => None,
            };
            let state = LinkState { rate_bps: u64_(d, "rate_bps", path)?, delay: ns(d, "delay_ns", path)?, loss: f64_(d, "loss", path)? };
            ModelSpec::Lfn(lfn::LfnConfig { state, police })
        }
        "trace" => {
            let capacity = match d.get("opportunities_ms").and_then(Value::as_array) {
                Some(a) => trace::Capacity::Opportunities {
                    stamps_ms: a.iter().filter_map(Value::as_u64).collect(),
                    bytes: u64_(d, "bytes_per_opportunity", path)?,
                },
                None => trace::Capacity::Rate(u64_(d, "rate_bps", path)?),
            };
            let mut series = Vec::new();
            if let Some(rows) = d.get("series").and_then(Value::as_array) {
                for (i, r) in rows.iter().enumerate() {
                    let row = r.as_array().filter(|a| a.len() == 3);
                    let parsed = row.and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?, a[2].as_f64()?)));
                    let (t, delay, loss) = parsed.ok_or_else(|| ConfigError(format!("{path}.series[{i}]: expected [t_ns, delay_ns, loss]")))?;
                    series.push(trace::Row { at: SimTime::from_nanos(t), delay: SimDuration::from_nanos(delay), loss });
                }
            }
            ModelSpec::Trace(trace::TraceConfig { capacity, series, delay: ns(d, "delay_ns", path)?, loss: f64_(d, "loss", path)? })
        }
        "constellation" => {
            let terminal = pair_f64(d, "terminal", path)?;
            let gateway = pair_f64(d, "gateway", path)?;
            ModelSpec::Constellation(constellation::ConstellationConfig {
                shell: constellation::Shell {
                    altitude_m: f64_(d, "altitude_m", path)?,
                    inclination_deg: f64_(d, "inclination_deg", path)?,
                    planes: u64_(d, "planes", path)? as u32,
                    per_plane: u64_(d, "per_plane", path)? as u32,
                    phasing: u64_(d, "phasing", path)? as u32,
                },
                terminal,
                gateway,
                min_elevation_deg: f64_(d, "min_elevation_deg", path)?,
                clock: clock(d, path)?,
                extra_delay: ns(d, "extra_delay_ns", path)?,
                rate_bps: u64_(d, "rate_bps", path)?,
                loss: f64_(d, "loss", path)?,
            })
        }
        other => {
            return Err(ConfigError(format!("{path}.kind: expected starlink, geo, lfn, trace or constellation, found {other:?}")))
        }
    })
}

/// Build the behaviour of link `link`'s direction `dir` (the simulator's direction index,
/// 2·link + (0 for a→b, 1 for b→a)), seeded as the simulator seeds it.
pub fn build(d: &Value, seed: u64, link: u64, dir: u64, path: &str) -> Result<Box<dyn LinkBehaviour>, ConfigError> {
    spec(d, path)?.build(Seeds { seed, link, dir }).map_err(|e| ConfigError(format!("{path}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn starlink() -> Value {
        json!({"kind": "starlink", "period_ns": 15_000_000_000u64, "phase_ns": 12_000_000_000u64, "start_ns": 0,
               "rtt_quantiles_ns": [20_000_000, 40_000_000, 50_000_000, 60_000_000, 85_000_000],
               "capacity_bps": [5_000_000, 25_000_000], "loss": [0.002, 0.005],
               "disturbance_ns": [50_000_000, 150_000_000], "outage_probability": 0.5, "burst_loss": [0.0, 0.5]})
    }

    #[test]
    fn every_model_kind_builds_from_its_resolved_dictionary() {
        let docs = [
            starlink(),
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
        for d in docs {
            let mut m = build(&d, 1, 0, 0, "m").unwrap_or_else(|e| panic!("{d}: {e}"));
            assert!(m.state_at(SimTime::ZERO).rate_bps > 0 || d["kind"] == "starlink");
        }
    }

    #[test]
    fn the_same_seed_gives_the_simulators_model_state_for_state() {
        let spec_a = spec(&starlink(), "m").unwrap();
        let mut a = build(&starlink(), 9, 0, 0, "m").unwrap();
        let mut b = spec_a.build(Seeds { seed: 9, link: 0, dir: 0 }).unwrap();
        for k in 0..200u64 {
            let t = SimTime::from_nanos(k * 250_000_000);
            assert_eq!(a.state_at(t), b.state_at(t));
        }
    }

    #[test]
    fn a_missing_key_is_named_with_its_path() {
        let mut d = starlink();
        d.as_object_mut().unwrap().remove("loss");
        assert_eq!(spec(&d, "links[0].ab.model").unwrap_err().0, "links[0].ab.model.loss: missing");
    }
}
