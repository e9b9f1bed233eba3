//! The resolved `[link.model]` dictionary (the "MODEL" form of `python/satcc/_native.pyi`, as
//! JSON) to a [`ModelSpec`]: the one reader both engines use — the simulator's bindings hand it
//! the dictionary as JSON, satcc-linkd its configuration's. Strict: every value must have the
//! type the model takes (no entry is skipped, no integer truncated), and an error names the key
//! path and what was expected.

use serde_json::Value;

use super::{constellation, geo, lfn, starlink, trace, trace_file, EpochClock, ModelSpec};
use crate::link::LinkState;
use crate::time::{SimDuration, SimTime};

fn field<'a>(d: &'a Value, key: &str, path: &str) -> Result<&'a Value, String> {
    d.get(key)
        .filter(|v| !v.is_null())
        .ok_or_else(|| format!("{path}.{key}: missing"))
}

fn u64_(d: &Value, key: &str, path: &str) -> Result<u64, String> {
    field(d, key, path)?
        .as_u64()
        .ok_or_else(|| format!("{path}.{key}: expected a non-negative integer"))
}

fn f64_(d: &Value, key: &str, path: &str) -> Result<f64, String> {
    field(d, key, path)?
        .as_f64()
        .ok_or_else(|| format!("{path}.{key}: expected a number"))
}

fn u32_(d: &Value, key: &str, path: &str) -> Result<u32, String> {
    u32::try_from(u64_(d, key, path)?)
        .map_err(|_| format!("{path}.{key}: expected an integer below 2^32"))
}

fn u64_array(d: &Value, key: &str, path: &str) -> Result<Vec<u64>, String> {
    field(d, key, path)?
        .as_array()
        .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
        .ok_or_else(|| format!("{path}.{key}: expected an array of non-negative integers"))
}

fn ns(d: &Value, key: &str, path: &str) -> Result<SimDuration, String> {
    u64_(d, key, path).map(SimDuration::from_nanos)
}

/// An optional duration: absent or null is `None`.
fn opt_ns(d: &Value, key: &str, path: &str) -> Result<Option<SimDuration>, String> {
    match d.get(key).filter(|v| !v.is_null()) {
        None => Ok(None),
        Some(_) => ns(d, key, path).map(Some),
    }
}

fn pair_u64(d: &Value, key: &str, path: &str) -> Result<(u64, u64), String> {
    let v = field(d, key, path)?;
    match v.as_array().map(|a| {
        (
            a.len(),
            a.first().and_then(Value::as_u64),
            a.get(1).and_then(Value::as_u64),
        )
    }) {
        Some((2, Some(a), Some(b))) => Ok((a, b)),
        _ => Err(format!("{path}.{key}: expected [integer, integer]")),
    }
}

fn pair_f64(d: &Value, key: &str, path: &str) -> Result<(f64, f64), String> {
    let v = field(d, key, path)?;
    match v.as_array().map(|a| {
        (
            a.len(),
            a.first().and_then(Value::as_f64),
            a.get(1).and_then(Value::as_f64),
        )
    }) {
        Some((2, Some(a), Some(b))) => Ok((a, b)),
        _ => Err(format!("{path}.{key}: expected [number, number]")),
    }
}

fn clock(d: &Value, path: &str) -> Result<EpochClock, String> {
    Ok(EpochClock {
        period: ns(d, "period_ns", path)?,
        phase: ns(d, "phase_ns", path)?,
        start: ns(d, "start_ns", path)?,
    })
}

/// A Starlink model's `intra` table (`variation = "intra"`); absent or null: steady epochs.
fn intra(d: &Value, path: &str) -> Result<Option<starlink::Intra>, String> {
    let Some(i) = d.get("intra").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let p = format!("{path}.intra");
    if !i.is_object() {
        return Err(format!("{p}: expected a table"));
    }
    Ok(Some(starlink::Intra {
        capacity_slot: ns(i, "capacity_slot_ns", &p)?,
        capacity_sigma: f64_(i, "capacity_sigma", &p)?,
        capacity_corr: f64_(i, "capacity_corr", &p)?,
        frame: ns(i, "frame_ns", &p)?,
        frame_duty: f64_(i, "frame_duty", &p)?,
        frame_windows: match i.get("frame_windows").filter(|v| !v.is_null()) {
            None => 1,
            Some(_) => u32_(i, "frame_windows", &p)?,
        },
        frame_offset_sd: opt_ns(i, "frame_offset_sd_ns", &p)?.unwrap_or(SimDuration::ZERO),
        frame_offset_corr: match i.get("frame_offset_corr").filter(|v| !v.is_null()) {
            None => 0.0,
            Some(_) => f64_(i, "frame_offset_corr", &p)?,
        },
        frame_sigma: match i.get("frame_sigma").filter(|v| !v.is_null()) {
            None => 0.0,
            Some(_) => f64_(i, "frame_sigma", &p)?,
        },
        delay_slot: ns(i, "delay_slot_ns", &p)?,
        jitter: ns(i, "jitter_ns", &p)?,
        jitter_floor: opt_ns(i, "jitter_floor_ns", &p)?,
        jitter_corr: f64_(i, "jitter_corr", &p)?,
        burst_rate: f64_(i, "burst_rate", &p)?,
        burst_duration: ns(i, "burst_duration_ns", &p)?,
    }))
}

/// A trace's timestamps from its file (`mahimahi_path`), read once per process
/// ([`trace_file::load`]); with `opportunities_digest`, the file must still hold the trace the
/// scenario was resolved with.
fn trace_stamps(d: &Value, file: &Value, path: &str) -> Result<std::sync::Arc<Vec<u64>>, String> {
    let name = file
        .as_str()
        .ok_or_else(|| format!("{path}.mahimahi_path: expected a path"))?;
    let stamps = trace_file::load(std::path::Path::new(name), None)
        .map_err(|e| format!("{path}.mahimahi_path: {name}: {e}"))?;
    if let Some(want) = d.get("opportunities_digest").and_then(Value::as_str) {
        if want != stamps.digest {
            return Err(format!(
                "{path}.mahimahi_path: {name}: the file changed since the scenario was resolved"
            ));
        }
    }
    Ok(stamps.ms)
}

/// The `ModelSpec` a resolved model dictionary describes.
pub fn from_json(d: &Value, path: &str) -> Result<ModelSpec, String> {
    let kind = field(d, "kind", path)?.as_str().unwrap_or("");
    Ok(match kind {
        "starlink" => {
            let q = u64_array(d, "rtt_quantiles_ns", path)?;
            let q: [u64; starlink::RTT_QUANTILES] = q.try_into().map_err(|_| {
                format!(
                    "{path}.rtt_quantiles_ns: expected {} integers",
                    starlink::RTT_QUANTILES
                )
            })?;
            let (d0, d1) = pair_u64(d, "disturbance_ns", path)?;
            ModelSpec::Starlink(starlink::StarlinkConfig {
                clock: clock(d, path)?,
                rtt_quantiles: q.map(SimDuration::from_nanos),
                capacity_bps: pair_u64(d, "capacity_bps", path)?,
                loss: pair_f64(d, "loss", path)?,
                disturbance: (SimDuration::from_nanos(d0), SimDuration::from_nanos(d1)),
                outage_probability: f64_(d, "outage_probability", path)?,
                burst_loss: pair_f64(d, "burst_loss", path)?,
                intra: intra(d, path)?,
            })
        }
        "geo" => {
            let delay = match d.get("delay_ns").filter(|v| !v.is_null()) {
                Some(_) => geo::GeoDelay::Fixed(ns(d, "delay_ns", path)?),
                None => geo::GeoDelay::Geometry {
                    altitude_m: f64_(d, "altitude_m", path)?,
                    terminal_elevation_deg: f64_(d, "terminal_elevation_deg", path)?,
                    gateway_elevation_deg: f64_(d, "gateway_elevation_deg", path)?,
                    extra: ns(d, "extra_delay_ns", path)?,
                },
            };
            ModelSpec::Geo(geo::GeoConfig {
                rate_bps: u64_(d, "rate_bps", path)?,
                delay,
                loss: f64_(d, "loss", path)?,
            })
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
            let state = LinkState {
                rate_bps: u64_(d, "rate_bps", path)?,
                delay: ns(d, "delay_ns", path)?,
                loss: f64_(d, "loss", path)?,
            };
            ModelSpec::Lfn(lfn::LfnConfig { state, police })
        }
        "trace" => {
            let file = d.get("mahimahi_path").filter(|v| !v.is_null());
            let capacity = match (file, d.get("opportunities_ms").filter(|v| !v.is_null())) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "{path}: expected mahimahi_path or opportunities_ms, found both"
                    ))
                }
                (Some(f), None) => trace::Capacity::Opportunities {
                    stamps_ms: trace_stamps(d, f, path)?,
                    bytes: u64_(d, "bytes_per_opportunity", path)?,
                },
                (None, Some(_)) => trace::Capacity::Opportunities {
                    stamps_ms: std::sync::Arc::new(u64_array(d, "opportunities_ms", path)?),
                    bytes: u64_(d, "bytes_per_opportunity", path)?,
                },
                (None, None) => trace::Capacity::Rate(u64_(d, "rate_bps", path)?),
            };
            let mut series = Vec::new();
            let csv = d.get("delay_csv_path").filter(|v| !v.is_null());
            if let Some(f) = csv {
                if d.get("series").is_some_and(|v| !v.is_null()) {
                    return Err(format!(
                        "{path}: expected delay_csv_path or series, found both"
                    ));
                }
                let name = f
                    .as_str()
                    .ok_or_else(|| format!("{path}.delay_csv_path: expected a path"))?;
                let loss = f64_(d, "delay_csv_loss", path)?;
                let s = trace_file::load_delay_csv(std::path::Path::new(name), loss, None)
                    .map_err(|e| format!("{path}.delay_csv_path: {name}: {e}"))?;
                if let Some(want) = d.get("series_digest").and_then(Value::as_str) {
                    if want != s.digest {
                        return Err(format!(
                            "{path}.delay_csv_path: {name}: the file changed since the scenario was resolved"
                        ));
                    }
                }
                return Ok(ModelSpec::Trace(trace::TraceConfig {
                    capacity,
                    series: s.rows,
                    delay: ns(d, "delay_ns", path)?,
                    loss: f64_(d, "loss", path)?,
                }));
            }
            if let Some(rows) = d.get("series").filter(|v| !v.is_null()) {
                let rows = rows.as_array().ok_or_else(|| {
                    format!("{path}.series: expected an array of [t_ns, delay_ns, loss]")
                })?;
                for (i, r) in rows.iter().enumerate() {
                    let row = r.as_array().filter(|a| a.len() == 3);
                    let parsed =
                        row.and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?, a[2].as_f64()?)));
                    let (t, delay, loss) = parsed.ok_or_else(|| {
                        format!("{path}.series[{i}]: expected [t_ns, delay_ns, loss]")
                    })?;
                    series.push(trace::Row {
                        at: SimTime::from_nanos(t),
                        delay: SimDuration::from_nanos(delay),
                        loss,
                    });
                }
            }
            ModelSpec::Trace(trace::TraceConfig {
                capacity,
                series: std::sync::Arc::new(series),
                delay: ns(d, "delay_ns", path)?,
                loss: f64_(d, "loss", path)?,
            })
        }
        "constellation" => {
            let terminal = pair_f64(d, "terminal", path)?;
            let gateway = pair_f64(d, "gateway", path)?;
            ModelSpec::Constellation(constellation::ConstellationConfig {
                shell: constellation::Shell {
                    altitude_m: f64_(d, "altitude_m", path)?,
                    inclination_deg: f64_(d, "inclination_deg", path)?,
                    planes: u32_(d, "planes", path)?,
                    per_plane: u32_(d, "per_plane", path)?,
                    phasing: u32_(d, "phasing", path)?,
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
            return Err(format!(
                "{path}.kind: expected starlink, geo, lfn, trace or constellation, found {other:?}"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A full Starlink MODEL dictionary (shared with satcc-emu's tests).
    fn starlink() -> Value {
        serde_json::from_str(include_str!("testdata/starlink.json")).unwrap()
    }

    #[test]
    fn a_missing_key_is_named_with_its_path() {
        let mut d = starlink();
        d.as_object_mut().unwrap().remove("loss");
        assert_eq!(
            from_json(&d, "links[0].ab.model").unwrap_err(),
            "links[0].ab.model.loss: missing"
        );
    }

    #[test]
    fn an_intra_table_is_read_and_a_missing_intra_key_is_named() {
        let mut d = starlink();
        d["intra"] = json!({"capacity_slot_ns": 100_000_000, "capacity_sigma": 0.2, "capacity_corr": 0.6,
            "frame_ns": 4_000_000, "frame_duty": 0.25, "delay_slot_ns": 10_000_000, "jitter_ns": 1_000_000,
            "jitter_corr": 0.5, "burst_rate": 0.1, "burst_duration_ns": 50_000_000});
        match from_json(&d, "m").unwrap() {
            ModelSpec::Starlink(c) => {
                let i = c.intra.expect("intra");
                assert_eq!(i.frame, SimDuration::from_millis(4));
                assert_eq!(i.capacity_sigma, 0.2);
                assert_eq!((i.frame_windows, i.jitter_floor), (1, None));
            }
            other => panic!("{other:?}"),
        }
        d["intra"].as_object_mut().unwrap().remove("jitter_ns");
        assert_eq!(
            from_json(&d, "m").unwrap_err(),
            "m.intra.jitter_ns: missing"
        );
    }

    #[test]
    fn a_non_integer_entry_is_refused_not_skipped() {
        // regression: the emulator's old reader dropped it and then failed on the count, or
        // (for trace opportunities) silently ran a shorter trace
        let mut d = starlink();
        d["rtt_quantiles_ns"] =
            json!([20_000_000, 40_000_000.5, 50_000_000, 60_000_000, 85_000_000]);
        assert!(from_json(&d, "m")
            .unwrap_err()
            .contains("m.rtt_quantiles_ns: expected an array of non-negative integers"));
        let t = json!({"kind": "trace", "opportunities_ms": [0, 1, "2"], "bytes_per_opportunity": 1500, "delay_ns": 0, "loss": 0.0});
        assert!(from_json(&t, "m")
            .unwrap_err()
            .contains("m.opportunities_ms"));
    }

    #[test]
    fn an_integer_too_large_for_its_field_is_refused_not_truncated() {
        let c = json!({"kind": "constellation", "altitude_m": 550000.0, "inclination_deg": 53.0, "planes": 4_294_967_368u64,
                       "per_plane": 22, "phasing": 1, "terminal": [48.0, 11.0], "gateway": [48.5, 11.5],
                       "min_elevation_deg": 25.0, "period_ns": 15_000_000_000u64, "phase_ns": 0, "start_ns": 0,
                       "extra_delay_ns": 0, "rate_bps": 100_000_000, "loss": 0.0});
        assert_eq!(
            from_json(&c, "m").unwrap_err(),
            "m.planes: expected an integer below 2^32"
        );
    }

    #[test]
    fn a_trace_file_is_read_by_path_and_its_digest_checked() {
        let f = std::env::temp_dir().join(format!("satcc-spec-{}.trace", std::process::id()));
        std::fs::write(&f, "1\n2\n2\n").unwrap();
        let digest = trace_file::digest(&[1, 2, 2]);
        let t = json!({"kind": "trace", "mahimahi_path": f.to_str().unwrap(), "opportunities_digest": digest,
                       "bytes_per_opportunity": 1500, "delay_ns": 0, "loss": 0.0});
        match from_json(&t, "m").unwrap() {
            ModelSpec::Trace(c) => match c.capacity {
                trace::Capacity::Opportunities { stamps_ms, .. } => {
                    assert_eq!(stamps_ms.as_slice(), &[1, 2, 2])
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        std::fs::write(&f, "1\n2\n33\n").unwrap(); // another size: the cache reads it again
        assert!(from_json(&t, "m").unwrap_err().contains("the file changed"));
        std::fs::write(&f, "1\nx\n").unwrap();
        assert!(from_json(&t, "m")
            .unwrap_err()
            .contains("m.mahimahi_path: "));
        std::fs::remove_file(&f).unwrap();
    }
}
