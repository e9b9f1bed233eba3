//! A resolved link direction, one type ([`Direction`]): its serde form is a resolved
//! scenario's `links[i].ab`/`.ba`, [`Direction::check`] its checks, and the same value (its
//! queue sized, its model built: [`crate::scenario::Resolved::direction`]) is what the link
//! direction of both engines holds (`direction::Direction::new`, in the simulator and in
//! satcc-linkd), so both take rate, delay, loss, queue, ECN threshold, jitter, scripted drops,
//! tick service and the model from the same words with the same checks.
//!
//! | key                  | required | unit           | meaning                                  |
//! |----------------------|----------|----------------|------------------------------------------|
//! | `rate_bps`           | yes      | bit/s          | nominal rate                             |
//! | `delay_ns`           | yes      | ns             | nominal one-way delay                    |
//! | `loss`               | no (0)   | probability    | Bernoulli loss on the wire               |
//! | `queue`              | yes      | `{"packets": n}`, `{"bytes": n}` or `{"bdp": x}` | the queue's limit (BDP: resolved by the caller) |
//! | `drop`               | no (`"tail"`) | `"tail"` or `"front"` | which packet a full queue drops ([`QueueDrop`]); written only when `"front"` |
//! | `ecn_threshold_pkts` | no       | packets        | CE marking threshold                     |
//! | `jitter_ns`          | no (0)   | ns             | uniform extra delay per packet           |
//! | `drop_packets`       | no       | ordinals ≥ 1   | scripted losses                          |
//! | `tick_ns`            | no       | ns             | dummynet-like tick service (no `model`)  |
//! | `clock_ppm`          | no (0)   | ppm            | the serialiser's clock offset (no `model`) |
//! | `model`              | no       | MODEL          | time-varying behaviour (`models::ModelSpec`) |

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::link::LinkState;
use crate::models::ModelSpec;
use crate::routing::bdp_queue_bytes;
use crate::scenario::switches::{link_fields, link_keys};
use crate::time::SimDuration;

/// A direction's queue limit (the queue drops by [`QueueDrop`]): as written (`{"packets": n}`,
/// `{"bytes": n}` or `{"bdp": x}`, the scenario's and the resolved scenario's form) and as the
/// engines' links hold it (the [`Direction::queue`] a link is built with, packets or bytes:
/// [`Resolved::direction`](crate::scenario::Resolved::direction) sizes "x BDP" with
/// [`QueueSpec::sized`] against the routes' largest RTT through the direction).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum QueueSpec {
    Packets(u64),
    Bytes(u64),
    Bdp(f64),
}

impl QueueSpec {
    /// The limit a link holds: "x BDP" as bytes of `rate_bps` over `max_rtt` (the largest base
    /// RTT of the flows crossing the direction, `scenario::Routes::max_rtt_ns`), others as they
    /// are.
    pub fn sized(self, rate_bps: u64, max_rtt: SimDuration) -> QueueSpec {
        match self {
            QueueSpec::Bdp(x) => QueueSpec::Bytes(bdp_queue_bytes(rate_bps, max_rtt, x)),
            q => q,
        }
    }

    /// Whether a packet of `size` bytes still fits behind `pkts`/`bytes` already queued.
    pub fn admits(self, pkts: u64, bytes: u64, size: u64) -> bool {
        match self {
            QueueSpec::Packets(n) => pkts < n,
            QueueSpec::Bytes(n) => bytes + size <= n,
            QueueSpec::Bdp(_) => {
                unreachable!("an x-BDP queue is sized before a link is built (QueueSpec::sized)")
            }
        }
    }
}

/// Which packet a full queue drops: the arriving one (`Tail`, Linux's `pfifo`) or the oldest
/// queued ones (`Front`, Linux's `pfifo_head_drop`: the arrival is queued and packets leave the
/// head until it fits; the packet in service is never dropped). An arrival that would not fit
/// an empty queue (a byte limit below its size) is dropped under either.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum QueueDrop {
    #[default]
    Tail,
    Front,
}

link_keys!(link_fields!(struct resolved
/// One link direction as the resolved scenario writes it (the DIR dictionary) and as both
/// engines' link directions hold it: the serde form, read by [`from_json`] or as part of
/// [`crate::scenario::Scenario`], checked by [`Direction::check`]. The keys of
/// `switches::link_keys!` (`drop`, `ecn_threshold`, `jitter`) are appended from their list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Direction {
    pub rate_bps: u64,
    pub delay_ns: u64,
    #[serde(default)]
    pub loss: f64,
    pub queue: QueueSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_packets: Option<Vec<u64>>,
    /// Tick service: the kernel tick's period (`direction` module header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_ns: Option<u64>,
    /// The model (`models::ModelSpec`); absent or `null`: none (written back absent).
    #[serde(
        default,
        serialize_with = "crate::models::sorted",
        skip_serializing_if = "Option::is_none"
    )]
    pub model: Option<ModelSpec>,
}
));

fn err(path: &str, key: &str, what: &str) -> String {
    format!("{path}.{key}: {what}")
}

impl Direction {
    /// Check the direction: a loss probability, a finite non-negative BDP multiple, packet
    /// ordinals from 1, a tick period only without a model; errors name `path.key`.
    pub fn check(&self, path: &str) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(err(path, "loss", "expected a probability in [0, 1]"));
        }
        if let QueueSpec::Bdp(x) = self.queue {
            if !(x.is_finite() && x >= 0.0) {
                return Err(err(path, "queue.bdp", "expected a non-negative number"));
            }
        }
        if self.drop_packets().contains(&0) {
            return Err(err(
                path,
                "drop_packets",
                "expected an array of packet ordinals (integers >= 1)",
            ));
        }
        let clock = self.clock.get().0;
        if !(clock.is_finite() && clock.abs() <= crate::units::MAX_CLOCK_PPM as f64) {
            return Err(err(
                path,
                "clock_ppm",
                "expected a clock offset within ±1000 ppm",
            ));
        }
        if clock != 0.0 && self.model.is_some() {
            return Err(err(
                path,
                "clock_ppm",
                "expected no clock offset on a link with a model (the model sets its rates)",
            ));
        }
        if let Some(t) = self.tick_ns {
            if t == 0 {
                return Err(err(path, "tick_ns", "expected a tick period > 0 ns"));
            }
            if self.model.is_some() {
                return Err(err(
                    path,
                    "tick_ns",
                    "expected no tick service on a link with a model (tick service serves constant links only)",
                ));
            }
        }
        Ok(())
    }

    /// Rate, delay and loss as written (a model's nominal values when it has one).
    pub fn nominal(&self) -> LinkState {
        LinkState {
            rate_bps: self.rate_bps,
            delay: SimDuration::from_nanos(self.delay_ns),
            loss: self.loss,
        }
    }

    /// [`nominal`](Self::nominal) on the direction's clock: the rate offset by `clock_ppm`
    /// (rate × (1 + clock / 10⁶), rounded to a whole bit/s, at least 1), what both engines'
    /// serialisers send at.
    pub fn clocked(&self) -> LinkState {
        let mut s = self.nominal();
        let ppm = self.clock.get().0;
        if ppm != 0.0 {
            s.rate_bps = ((s.rate_bps as f64) * (1.0 + ppm * 1e-6)).round().max(1.0) as u64;
        }
        s
    }

    /// The CE marking threshold, packets queued.
    #[inline]
    pub fn ecn_threshold_pkts(&self) -> Option<u64> {
        self.ecn_threshold.get().map(|p| p.0)
    }

    /// The bound of the uniform extra delay per packet (zero: none).
    #[inline]
    pub fn jitter(&self) -> SimDuration {
        SimDuration::from_nanos(self.jitter.get().0)
    }

    /// Tick service's period; `None`: exact serialisation.
    #[inline]
    pub fn tick(&self) -> Option<SimDuration> {
        self.tick_ns.map(SimDuration::from_nanos)
    }

    /// The scripted drops' packet ordinals (none: empty).
    pub fn drop_packets(&self) -> &[u64] {
        self.drop_packets.as_deref().unwrap_or_default()
    }
}

/// Deserialize `T` from `v`, naming the key path of a type error under `path`.
pub fn read<T: serde::de::DeserializeOwned>(v: &Value, path: &str) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        if at == "." {
            format!("{path}: {inner}")
        } else {
            format!("{path}.{at}: {inner}")
        }
    })
}

/// Read and check a DIR dictionary; errors name `path.key` and what was expected.
pub fn from_json(v: &Value, path: &str) -> Result<Direction, String> {
    let d = read::<Direction>(v, path)?;
    d.check(path)?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn packet_limit_admits_until_full() {
        let q = QueueSpec::Packets(2);
        assert!(q.admits(1, 3000, 1500));
        assert!(!q.admits(2, 3000, 1500));
    }

    #[test]
    fn byte_limit_counts_the_arriving_packet() {
        let q = QueueSpec::Bytes(3000);
        assert!(q.admits(1, 1500, 1500));
        assert!(!q.admits(1, 1501, 1500));
    }

    #[test]
    fn only_a_bdp_queue_is_sized() {
        let rtt = SimDuration::from_millis(68);
        assert_eq!(
            QueueSpec::Bdp(1.0).sized(10_000_000, rtt),
            QueueSpec::Bytes(85_000)
        );
        assert_eq!(
            QueueSpec::Packets(7).sized(10_000_000, rtt),
            QueueSpec::Packets(7)
        );
    }

    #[test]
    fn a_full_direction_reads_with_units_in_place() {
        let d = from_json(
            &json!({"rate_bps": 20_000_000u64, "delay_ns": 25_000_000u64, "loss": 0.01,
                    "queue": {"bdp": 1.5}, "ecn_threshold_pkts": 20, "jitter_ns": 1000,
                    "drop_packets": [3, 7], "model": null}),
            "link[0]",
        )
        .unwrap();
        assert_eq!(d.nominal().rate_bps, 20_000_000);
        assert_eq!(d.nominal().delay, SimDuration::from_millis(25));
        assert_eq!(d.queue, QueueSpec::Bdp(1.5));
        assert_eq!(d.ecn_threshold_pkts(), Some(20));
        assert_eq!(d.jitter(), SimDuration::from_nanos(1000));
        assert_eq!(d.drop_packets(), [3, 7]);
        assert!(d.model.is_none());
    }

    #[test]
    fn the_drop_reads_from_the_resolved_form_and_is_written_only_when_front() {
        let base = json!({"rate_bps": 1, "delay_ns": 1, "queue": {"packets": 10}});
        let tail: Direction = read(&base, "link[0]").unwrap();
        assert_eq!(tail.drop.get(), QueueDrop::Tail);
        assert_eq!(serde_json::to_value(&tail).unwrap().get("drop"), None);
        let mut v = base.clone();
        v["drop"] = json!("front");
        let front: Direction = read(&v, "link[0]").unwrap();
        assert_eq!(front.drop.get(), QueueDrop::Front);
        assert_eq!(
            serde_json::to_value(&front).unwrap()["drop"],
            json!("front")
        );
        v["drop"] = json!("head");
        let e = from_json(&v, "link[0]").unwrap_err();
        assert!(
            e.starts_with("link[0].drop: unknown variant `head`, expected `tail` or `front`"),
            "{e}"
        );
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
                "link[0].rate_bps: invalid value: integer `-1`, expected u64",
            ),
            (
                "jitter_ns",
                json!(2.5),
                "link[0].jitter_ns: invalid type: floating point `2.5`, expected u64",
            ),
            (
                "drop_packets",
                json!([0]),
                "link[0].drop_packets: expected an array",
            ),
            (
                "queue",
                json!({"slots": 3}),
                "link[0].queue: unknown variant `slots`",
            ),
            (
                "colour",
                json!("red"),
                "link[0].colour: unknown field `colour`",
            ),
        ];
        for (key, value, want) in cases {
            let mut v = base.clone();
            v[key] = value;
            let e = from_json(&v, "link[0]").unwrap_err();
            assert!(e.starts_with(want), "{key}: {e}");
        }
        let mut v = base.clone();
        v.as_object_mut().unwrap().remove("delay_ns");
        assert!(from_json(&v, "link[0]")
            .unwrap_err()
            .starts_with("link[0]: missing field `delay_ns`"));
    }
}
