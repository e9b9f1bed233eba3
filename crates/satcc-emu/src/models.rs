//! From a direction's resolved `[link.model]` (JSON, exactly the "MODEL" dictionary of
//! `python/satcc/_native.pyi`, which the runner passes through untouched) to satcc-core's
//! `ModelSpec`, then to the `LinkBehaviour` the simulator builds from the same spec with the same
//! seeds, so a scenario's channel is one model in both engines.
//!
//! The dictionary is read by `satcc_core::models::spec::from_json`, the reader the simulator's
//! bindings use too; the tests below check each kind builds and seeds as the simulator does.

use satcc_core::models::{LinkBehaviour, ModelSpec, Seeds};
use serde_json::Value;

use crate::config::ConfigError;

/// The `ModelSpec` a resolved model dictionary describes (satcc-core's one reader).
pub fn spec(d: &Value, path: &str) -> Result<ModelSpec, ConfigError> {
    satcc_core::models::spec::from_json(d, path).map_err(ConfigError)
}

/// Build the behaviour of link `link`'s direction `dir` (the simulator's direction index,
/// 2·link + (0 for a→b, 1 for b→a)), seeded as the simulator seeds it.
pub fn build(
    d: &Value,
    seed: u64,
    link: u64,
    dir: u64,
    path: &str,
) -> Result<Box<dyn LinkBehaviour>, ConfigError> {
    spec(d, path)?
        .build(Seeds { seed, link, dir })
        .map_err(|e| ConfigError(format!("{path}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::SimTime;
    use serde_json::json;

    /// satcc-core's Starlink MODEL dictionary (its spec.rs tests read it too).
    fn starlink() -> Value {
        serde_json::from_str(include_str!(
            "../../satcc-core/src/models/testdata/starlink.json"
        ))
        .unwrap()
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
        let mut b = spec_a
            .build(Seeds {
                seed: 9,
                link: 0,
                dir: 0,
            })
            .unwrap();
        for k in 0..200u64 {
            let t = SimTime::from_nanos(k * 250_000_000);
            assert_eq!(a.state_at(t), b.state_at(t));
        }
    }
}
