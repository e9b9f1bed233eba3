//! The one reader of a resolved link direction (the DIR dictionary of
//! `python/satcc/_native.pyi`): the simulator's bindings hand it the scenario's directions and
//! satcc-linkd its JSON input, so both engines take rate, delay, loss, queue, ECN threshold,
//! jitter, scripted drops and the model from the same words with the same checks.
//!
//! | key                  | required | unit           | meaning                                  |
//! |----------------------|----------|----------------|------------------------------------------|
//! | `rate_bps`           | yes      | bit/s          | nominal rate                             |
//! | `delay_ns`           | yes      | ns             | nominal one-way delay                    |
//! | `loss`               | no (0)   | probability    | Bernoulli loss on the wire               |
//! | `queue`              | yes      | `{"packets": n}`, `{"bytes": n}` or `{"bdp": x}` | drop-tail limit (BDP: resolved by the caller) |
//! | `ecn_threshold_pkts` | no       | packets        | CE marking threshold                     |
//! | `jitter_ns`          | no (0)   | ns             | uniform extra delay per packet           |
//! | `drop_packets`       | no       | ordinals ≥ 1   | scripted losses                          |
//! | `model`              | no       | MODEL          | time-varying behaviour (`models::spec`)  |

use serde_json::Value;

use crate::link::LinkState;
use crate::time::SimDuration;

/// A direction's queue limit as written: BDP multiples still to be resolved against routes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueSpec {
    Packets(u64),
    Bytes(u64),
    Bdp(f64),
}

/// One resolved link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct DirSpec {
    /// Nominal rate, delay and loss (a model's nominal values when it has one).
    pub state: LinkState,
    pub queue: QueueSpec,
    pub ecn_threshold_pkts: Option<u64>,
    pub jitter: SimDuration,
    pub drop_packets: Vec<u64>,
    /// The MODEL dictionary, read by `models::spec::from_json` where it is built.
    pub model: Option<Value>,
}

fn err(path: &str, key: &str, what: &str) -> String {
    format!("{path}.{key}: {what}")
}

fn u64_key(v: &Value, key: &str, path: &str) -> Result<u64, String> {
    v.get(key)
        .ok_or_else(|| err(path, key, "missing"))?
        .as_u64()
        .ok_or_else(|| err(path, key, "expected a non-negative integer"))
}

fn opt_u64(v: &Value, key: &str, path: &str) -> Result<Option<u64>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_u64()
            .map(Some)
            .ok_or_else(|| err(path, key, "expected a non-negative integer")),
    }
}

/// Read a DIR dictionary; errors name `path.key` and what was expected.
pub fn from_json(v: &Value, path: &str) -> Result<DirSpec, String> {
    if !v.is_object() {
        return Err(format!("{path}: expected a table"));
    }
    let loss = match v.get("loss") {
        None | Some(Value::Null) => 0.0,
        Some(x) => x
            .as_f64()
            .ok_or_else(|| err(path, "loss", "expected a probability in [0, 1]"))?,
    };
    if !(0.0..=1.0).contains(&loss) {
        return Err(err(path, "loss", "expected a probability in [0, 1]"));
    }
    let q = v
        .get("queue")
        .ok_or_else(|| err(path, "queue", "missing"))?;
    let queue = if let Some(n) = q.get("packets") {
        QueueSpec::Packets(
            n.as_u64()
                .ok_or_else(|| err(path, "queue.packets", "expected a non-negative integer"))?,
        )
    } else if let Some(n) = q.get("bytes") {
        QueueSpec::Bytes(
            n.as_u64()
                .ok_or_else(|| err(path, "queue.bytes", "expected a non-negative integer"))?,
        )
    } else if let Some(x) = q.get("bdp") {
        QueueSpec::Bdp(
            x.as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| err(path, "queue.bdp", "expected a non-negative number"))?,
        )
    } else {
        return Err(err(
            path,
            "queue",
            "expected {\"packets\": n}, {\"bytes\": n} or {\"bdp\": x}",
        ));
    };
    let drop_packets = match v.get("drop_packets") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_u64().filter(|&n| n > 0))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| {
                err(
                    path,
                    "drop_packets",
                    "expected an array of packet ordinals (integers >= 1)",
                )
            })?,
        Some(_) => {
            return Err(err(
                path,
                "drop_packets",
                "expected an array of packet ordinals (integers >= 1)",
            ))
        }
    };
    Ok(DirSpec {
        state: LinkState {
            rate_bps: u64_key(v, "rate_bps", path)?,
            delay: SimDuration::from_nanos(u64_key(v, "delay_ns", path)?),
            loss,
        },
        queue,
        ecn_threshold_pkts: opt_u64(v, "ecn_threshold_pkts", path)?,
        jitter: SimDuration::from_nanos(opt_u64(v, "jitter_ns", path)?.unwrap_or(0)),
        drop_packets,
        model: v.get("model").filter(|m| !m.is_null()).cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_direction_reads_with_units_in_place() {
        let d = from_json(
            &json!({"rate_bps": 20_000_000u64, "delay_ns": 25_000_000u64, "loss": 0.01,
                    "queue": {"bdp": 1.5}, "ecn_threshold_pkts": 20, "jitter_ns": 1000,
                    "drop_packets": [3, 7], "model": null}),
            "link[0]",
        )
        .unwrap();
        assert_eq!(d.state.rate_bps, 20_000_000);
        assert_eq!(d.state.delay, SimDuration::from_millis(25));
        assert_eq!(d.queue, QueueSpec::Bdp(1.5));
        assert_eq!(d.ecn_threshold_pkts, Some(20));
        assert_eq!(d.jitter, SimDuration::from_nanos(1000));
        assert_eq!(d.drop_packets, vec![3, 7]);
        assert!(d.model.is_none());
    }

    #[test]
    fn bad_values_are_refused_with_their_key() {
        let base = json!({"rate_bps": 1, "delay_ns": 1, "queue": {"packets": 10}});
        let cases = [
            (
                "loss",
                json!(1.5),
                "link[0].loss: expected a probability in [0, 1]",
            ),
            (
                "rate_bps",
                json!(-1),
                "link[0].rate_bps: expected a non-negative integer",
            ),
            (
                "jitter_ns",
                json!(2.5),
                "link[0].jitter_ns: expected a non-negative integer",
            ),
            (
                "drop_packets",
                json!([0]),
                "link[0].drop_packets: expected an array",
            ),
            ("queue", json!({"slots": 3}), "link[0].queue: expected"),
        ];
        for (key, value, want) in cases {
            let mut v = base.clone();
            v[key] = value;
            let e = from_json(&v, "link[0]").unwrap_err();
            assert!(e.starts_with(want), "{key}: {e}");
        }
        let mut v = base.clone();
        v.as_object_mut().unwrap().remove("delay_ns");
        assert_eq!(
            from_json(&v, "link[0]").unwrap_err(),
            "link[0].delay_ns: missing"
        );
    }
}
