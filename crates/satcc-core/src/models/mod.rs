//! Time-varying link behaviours: Starlink epochs, GEO, long fat links, trace replay and
//! constellation geometry, each a [`LinkModel`] that the simulator and the real-time emulator
//! drive with their own clocks.
//!
//! A behaviour answers three questions about one link direction:
//! - *state* (`LinkModel::state_at`/`next_change`): rate, one-way delay and loss in force now,
//!   and when that changes. Every model here is a pure function of time once built (draws are
//!   keyed by epoch index, not by call order), so asking about any instant in any order gives
//!   the same answer;
//! - *service* ([`LinkBehaviour::transmit_end`]): when a packet whose transmission starts at
//!   `start` has left the serialiser. The default integrates the rate over the model's change
//!   points (a rate change mid-packet is honoured exactly; rate 0 is an outage during which
//!   the packet in service is held, not lost, and resumes when the link returns). Trace replay
//!   overrides it with Mahimahi's delivery opportunities;
//! - *extra drops* ([`LinkBehaviour::extra_drop`]): drops that are not Bernoulli loss, such as
//!   the rate-threshold router of study 003.
//!
//! | model | file | what varies |
//! |---|---|---|
//! | `starlink` | [`starlink`] | per 15 s epoch: delay, capacity, loss; a disturbance at each boundary; inside the epoch (`intra`): capacity per 100 ms, scheduler frames, delay jitter, loss bursts |
//! | `geo` | [`geo`] | nothing: delay from the slant-range formula |
//! | `lfn` | [`lfn`] | nothing, but a policing hop drops above a rate threshold |
//! | `trace` | [`trace`] | Mahimahi delivery opportunities; delay/loss from a CSV series |
//! | `constellation` | [`constellation`] | serving satellite every 15 s; delay from geometry |
//!
//! Each model is one file holding both halves: the behaviour, and its [`Kind`] (the
//! `[link.model]` table's keys, cited presets and checks, read with [`table`]'s reader; the
//! resolved form engines read; its nominal figures; its configuration). `kinds!` below lists
//! the kinds: to add a model, write its file and add its line there (and its keys to
//! docs/scenario.md, which a test holds to the keys).
//!
//! Not implemented: reordering links (the simulator's wire is FIFO), correlated (Gilbert–
//! Elliott) loss outside the Starlink model.

pub mod table;
pub mod trace_file;

use serde::{Deserialize, Serialize};

use crate::link::{ConstantLink, LinkModel, LinkState};
use crate::rng::Rng;
use crate::scenario::file::ModelDir;
use crate::time::{SimDuration, SimTime};

/// Nanoseconds per second, for bit·ns arithmetic.
const NS_PER_S: u128 = 1_000_000_000;

/// A link direction's full behaviour: its state over time plus how it serves packets.
pub trait LinkBehaviour: LinkModel {
    /// When a packet of `bytes` whose transmission starts at `start` has fully left the
    /// serialiser; `None` if the link never carries it (rate 0 for ever). Called once per
    /// packet, in transmission order.
    fn transmit_end(&mut self, start: SimTime, bytes: u64) -> Option<SimTime> {
        fluid_transmit_end(self, start, bytes)
    }

    /// Mean capacity (bit/s), delay and loss over `[from, to)`, time-weighted.
    fn mean_over(&mut self, from: SimTime, to: SimTime) -> MeanState {
        integrate_state(self, from, to)
    }

    /// Whether a packet of `bytes` leaving the serialiser at `now` is dropped by something other
    /// than the Bernoulli loss of [`LinkState::loss`] (which the caller applies). Called once per
    /// packet, in order.
    fn extra_drop(&mut self, _now: SimTime, _bytes: u64) -> bool {
        false
    }

    /// This behaviour as a [`ConstantLink`] if that is what it is (a link direction then
    /// calls it directly, without going through the trait object, once per packet).
    fn as_constant(&self) -> Option<ConstantLink> {
        None
    }
}

impl LinkBehaviour for ConstantLink {
    fn as_constant(&self) -> Option<ConstantLink> {
        Some(self.clone())
    }

    /// [`fluid_transmit_end`] at one rate for ever: `start` + the transmission time.
    fn transmit_end(&mut self, start: SimTime, bytes: u64) -> Option<SimTime> {
        (self.0.rate_bps > 0).then(|| start + SimDuration::transmission(bytes, self.0.rate_bps))
    }
}

/// Time-weighted means of a link direction's state over an interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanState {
    pub rate_bps: f64,
    pub delay: SimDuration,
    pub loss: f64,
}

/// End of a transmission at a piecewise-constant rate: the packet needs `bytes·8` bits; in an
/// interval of `dt` ns at `r` bit/s the serialiser moves `r·dt/1e9` bits. Counted exactly in
/// bit·ns, rounded up to a whole nanosecond at the end (as `SimDuration::transmission`).
pub fn fluid_transmit_end<M: LinkModel + ?Sized>(
    m: &mut M,
    start: SimTime,
    bytes: u64,
) -> Option<SimTime> {
    let mut remaining = bytes as u128 * 8 * NS_PER_S; // bit·ns still to serialise
    let mut t = start;
    loop {
        let rate = m.state_at(t).rate_bps as u128;
        let change = m.next_change(t);
        if rate > 0 {
            let need_ns = remaining.div_ceil(rate);
            match change {
                Some(c) if need_ns > (c - t).as_nanos() as u128 => {
                    remaining -= rate * (c - t).as_nanos() as u128;
                }
                _ => {
                    return Some(t + SimDuration::from_nanos(need_ns.min(u64::MAX as u128) as u64))
                }
            }
        }
        // Rate 0 (an outage) or the rate changes before the packet is out: walk on.
        t = change?;
    }
}

/// Time-weighted mean of the state over `[from, to)`, walking the change points.
pub fn integrate_state<M: LinkModel + ?Sized>(m: &mut M, from: SimTime, to: SimTime) -> MeanState {
    if to <= from {
        let s = m.state_at(from);
        return MeanState {
            rate_bps: s.rate_bps as f64,
            delay: s.delay,
            loss: s.loss,
        };
    }
    let total = (to - from).as_nanos() as f64;
    let (mut rate, mut delay, mut loss) = (0.0, 0.0, 0.0);
    let mut t = from;
    while t < to {
        let s = m.state_at(t);
        let end = m.next_change(t).map_or(to, |c| c.min(to));
        let w = (end - t).as_nanos() as f64 / total;
        rate += s.rate_bps as f64 * w;
        delay += s.delay.as_nanos() as f64 * w;
        loss += s.loss * w;
        t = end;
    }
    MeanState {
        rate_bps: rate,
        delay: SimDuration::from_nanos(delay.round() as u64),
        loss,
    }
}

/// A rate, delay and loss that never change (the plain `[[link]]` keys).
pub fn constant(state: LinkState) -> Box<dyn LinkBehaviour> {
    Box::new(ConstantLink(state))
}

/// One link model kind: the resolved form (`Self`, serde: what the engines read, satcc-linkd
/// as JSON), the `[link.model]` table's reader that makes it, its nominal figures and its
/// behaviour.
pub trait Kind: Sized {
    /// The behaviour's configuration (units in types, files read), made once per process.
    type Config: Clone + std::fmt::Debug + PartialEq;
    /// The keys its table accepts besides `kind` (docs/scenario.md lists them).
    fn keys() -> Vec<String>;
    /// The table read into [a→b, b→a]; every problem is pushed to `r` (then `None`).
    fn read(r: &mut table::Reader, cx: &table::Context) -> Option<[ModelDir; 2]>;
    /// The direction's nominal rate, delay and loss: what routes, "N BDP" queues, the model
    /// engine and `satcc check` take for a link with this model, from the typed form alone;
    /// `None` when they are means over files' contents, which the reader takes from the files
    /// as it reads them.
    fn nominal(&self) -> Option<LinkState>;
    /// The behaviour's configuration; files are read here and must still be the ones the
    /// scenario was resolved with. Errors name `path.KEY`.
    fn config(&self, path: &str) -> Result<Self::Config, String>;
    /// Build the model; an error names what is inconsistent.
    fn build(c: &Self::Config, seeds: Seeds) -> Result<Box<dyn LinkBehaviour>, String>;
}

/// The kinds, each `"name" => Variant(module::Spec)`, in the order messages list them: their
/// modules, the tagged [`ModelSpec`], the [`ModelConfig`] and the dispatch by name.
macro_rules! kinds {
    ($($name:literal => $variant:ident($module:ident::$spec:ident)),+ $(,)?) => {
        $(pub mod $module;)+

        /// A link direction's model as the scenario resolves it, tagged by `kind`.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        pub enum ModelSpec {
            $(#[serde(rename = $name)] $variant($module::$spec),)+
        }

        /// A behaviour's configuration, per link direction (units in types, files read): what
        /// [`ModelSpec::config`] makes of the resolved model; `build` makes the model.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ModelConfig {
            $($variant(<$module::$spec as Kind>::Config),)+
        }

        /// The model kinds, in the order messages list them.
        pub const KINDS: &[&str] = &[$($name),+];

        /// The keys a `[link.model]` of this kind accepts besides `kind`.
        pub fn keys(kind: &str) -> Vec<String> {
            match kind {
                $($name => <$module::$spec as Kind>::keys(),)+
                _ => Vec::new(),
            }
        }

        /// A table of a known kind read ([`Kind::read`]).
        fn read(kind: &str, r: &mut table::Reader, cx: &table::Context) -> Option<[ModelDir; 2]> {
            match kind {
                $($name => <$module::$spec as Kind>::read(r, cx),)+
                _ => None,
            }
        }

        impl ModelSpec {
            /// [`Kind::nominal`] of the model.
            pub fn nominal(&self) -> Option<LinkState> {
                match self {
                    $(ModelSpec::$variant(m) => m.nominal(),)+
                }
            }

            /// [`Kind::config`] of the model.
            pub fn config(&self, path: &str) -> Result<ModelConfig, String> {
                match self {
                    $(ModelSpec::$variant(m) => m.config(path).map(ModelConfig::$variant),)+
                }
            }
        }

        impl ModelConfig {
            /// [`Kind::build`] of the configuration.
            pub fn build(&self, seeds: Seeds) -> Result<Box<dyn LinkBehaviour>, String> {
                match self {
                    $(ModelConfig::$variant(c) => <$module::$spec as Kind>::build(c, seeds),)+
                }
            }
        }
    };
}

kinds! {
    "starlink" => Starlink(starlink::StarlinkSpec),
    "geo" => Geo(geo::GeoSpec),
    "lfn" => Lfn(lfn::LfnSpec),
    "trace" => Trace(trace::TraceSpec),
    "constellation" => Constellation(constellation::ConstellationSpec),
}

/// A model in the wire form: its keys sorted, as the JSON object it is written as (the
/// `serialize_with` of a direction's `model`; the scenario hash and every result written from
/// the dictionary keep their bytes).
pub fn sorted<S: serde::Serializer>(m: &Option<ModelSpec>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::Error;
    serde_json::to_value(m)
        .map_err(S::Error::custom)?
        .serialize(s)
}

/// "path.key: missing" (a key the resolved form lacks).
pub(crate) fn missing(path: &str, key: &str) -> String {
    format!("{path}.{key}: missing")
}

/// Where a model's random streams come from: the scenario seed, the link index (draws both
/// directions share, e.g. a Starlink epoch's RTT) and the direction index (draws of one
/// direction, e.g. its capacity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    pub seed: u64,
    pub link: u64,
    pub dir: u64,
}

impl Seeds {
    /// Stream for draw `index` (an epoch number) of kind `what`, shared by both directions.
    pub fn link_stream(&self, what: u64, index: i64) -> Rng {
        Rng::derive(
            Rng::derive(self.seed, LINK_LABEL ^ self.link.wrapping_mul(PRIME) ^ what).next_u64(),
            index as u64,
        )
    }
    /// Stream for draw `index` of kind `what`, private to this direction.
    pub fn dir_stream(&self, what: u64, index: i64) -> Rng {
        Rng::derive(
            Rng::derive(self.seed, DIR_LABEL ^ self.dir.wrapping_mul(PRIME) ^ what).next_u64(),
            index as u64,
        )
    }
}

/// Labels that keep model streams apart from the links' own loss streams.
const LINK_LABEL: u64 = 0x4D4F_444C_0000_0000;
const DIR_LABEL: u64 = 0x4D4F_4444_0000_0000;
/// Odd multiplier spreading small indices over the label space.
const PRIME: u64 = 0x9E37_79B9_7F4A_7C15;

/// The Starlink reconfiguration clock: epochs of `period` whose boundaries fall at `phase`
/// past each period of wall time (:12, :27, :42, :57 for 15 s and 12 s), for a run that starts
/// `start` past the minute. Shared by `starlink` and `constellation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochClock {
    pub period: SimDuration,
    pub phase: SimDuration,
    /// Wall time of the run's start, past the minute (only its value modulo `period` matters).
    pub start: SimDuration,
}

impl EpochClock {
    /// The clock of a resolved model's keys, in ns.
    pub fn from_ns(period_ns: u64, phase_ns: u64, start_ns: u64) -> EpochClock {
        EpochClock {
            period: SimDuration::from_nanos(period_ns),
            phase: SimDuration::from_nanos(phase_ns),
            start: SimDuration::from_nanos(start_ns),
        }
    }

    /// Simulated time (ns, may be negative) at which epoch `k` begins; epoch 0 is the first
    /// boundary at or after the run's start.
    pub fn epoch_start_ns(&self, k: i64) -> i128 {
        let p = self.period.as_nanos().max(1) as i128;
        // first boundary at or after the start: (phase - start) mod period
        let first = (self.phase.as_nanos() as i128 - self.start.as_nanos() as i128).rem_euclid(p);
        first + k as i128 * p
    }

    /// The epoch containing `t` (the last boundary at or before `t`).
    pub fn epoch_of(&self, t: SimTime) -> i64 {
        let p = self.period.as_nanos().max(1) as i128;
        (t.as_nanos() as i128 - self.epoch_start_ns(0)).div_euclid(p) as i64
    }

    /// Epoch `k`'s start as a `SimTime` (clamped at 0 for the epoch in progress at the start).
    pub fn epoch_start(&self, k: i64) -> SimTime {
        SimTime::from_nanos(self.epoch_start_ns(k).clamp(0, u64::MAX as i128) as u64)
    }
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

    #[test]
    fn a_constant_links_shortcut_is_the_fluid_end_exactly() {
        for rate_bps in [
            1,
            7,
            9_600,
            12_000_000,
            99_999_999,
            1_000_000_000,
            400_000_000_000,
        ] {
            for bytes in [0, 1, 52, 1500, 1501, 9000, 65_535, 1 << 40] {
                let mut link = ConstantLink(LinkState {
                    rate_bps,
                    delay: SimDuration::ZERO,
                    loss: 0.0,
                });
                let start = SimTime::from_nanos(123_456_789);
                assert_eq!(
                    link.transmit_end(start, bytes),
                    fluid_transmit_end(&mut link, start, bytes),
                    "{bytes} B at {rate_bps} bit/s"
                );
            }
        }
        let mut down = ConstantLink(LinkState {
            rate_bps: 0,
            delay: SimDuration::ZERO,
            loss: 0.0,
        });
        assert_eq!(down.transmit_end(SimTime::ZERO, 1500), None);
    }

    /// A link whose rate is `r1` before `t1` ms and `r2` after.
    struct Step {
        t1: SimTime,
        r1: u64,
        r2: u64,
    }
    impl LinkModel for Step {
        fn state_at(&mut self, now: SimTime) -> LinkState {
            let rate_bps = if now < self.t1 { self.r1 } else { self.r2 };
            LinkState {
                rate_bps,
                delay: SimDuration::from_millis(10),
                loss: 0.0,
            }
        }
        fn next_change(&self, now: SimTime) -> Option<SimTime> {
            (now < self.t1).then_some(self.t1)
        }
    }
    impl LinkBehaviour for Step {}

    fn ms(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(x)
    }

    #[test]
    fn constant_rate_matches_plain_transmission_time() {
        let mut c = ConstantLink(LinkState {
            rate_bps: 12_000_000,
            delay: SimDuration::ZERO,
            loss: 0.0,
        });
        assert_eq!(c.transmit_end(ms(5), 1500), Some(ms(6)));
        assert_eq!(
            fluid_transmit_end(&mut c, ms(0), 1),
            Some(SimTime::ZERO + SimDuration::transmission(1, 12_000_000))
        );
    }

    #[test]
    fn a_rate_change_mid_packet_is_honoured() {
        // 1500 B: 0.5 ms at 12 Mbit/s moves 750 B, the rest at 6 Mbit/s takes 1 ms.
        let mut s = Step {
            t1: SimTime::from_nanos(500_000),
            r1: 12_000_000,
            r2: 6_000_000,
        };
        assert_eq!(
            s.transmit_end(SimTime::ZERO, 1500),
            Some(SimTime::from_nanos(1_500_000))
        );
    }

    #[test]
    fn a_packet_in_service_during_an_outage_resumes_when_the_link_returns() {
        // Outage from 0 to 100 ms, then 12 Mbit/s: the packet leaves 1 ms after the outage.
        let mut s = Step {
            t1: ms(100),
            r1: 0,
            r2: 12_000_000,
        };
        assert_eq!(s.transmit_end(ms(3), 1500), Some(ms(101)));
    }

    #[test]
    fn a_link_down_for_ever_never_finishes_a_packet() {
        let mut s = Step {
            t1: ms(1),
            r1: 12_000_000,
            r2: 0,
        };
        assert_eq!(s.transmit_end(ms(0), 3000), None);
    }

    #[test]
    fn mean_state_weights_each_piece_by_its_duration() {
        let mut s = Step {
            t1: ms(25),
            r1: 40_000_000,
            r2: 0,
        };
        let m = s.mean_over(ms(0), ms(100));
        assert!((m.rate_bps - 10_000_000.0).abs() < 1e-6, "{m:?}");
        assert_eq!(m.delay, SimDuration::from_millis(10));
    }

    #[test]
    fn epoch_boundaries_fall_at_the_phase_past_the_start() {
        let clock = EpochClock {
            period: SimDuration::from_secs(15),
            phase: SimDuration::from_secs(12),
            start: SimDuration::from_secs(5),
        };
        // Run starts at :05, boundaries at :12, :27 → sim 7 s, 22 s; epoch -1 began at -8 s.
        assert_eq!(clock.epoch_start_ns(0), 7_000_000_000);
        assert_eq!(clock.epoch_start_ns(1), 22_000_000_000);
        assert_eq!(clock.epoch_start_ns(-1), -8_000_000_000);
        assert_eq!(clock.epoch_of(SimTime::ZERO), -1);
        assert_eq!(clock.epoch_of(SimTime::from_nanos(7_000_000_000)), 0);
        assert_eq!(clock.epoch_of(SimTime::from_nanos(6_999_999_999)), -1);
        assert_eq!(clock.epoch_start(-1), SimTime::ZERO);
    }

    #[test]
    fn streams_are_keyed_by_link_direction_and_index_not_by_call_order() {
        let a = Seeds {
            seed: 9,
            link: 2,
            dir: 4,
        };
        let b = Seeds {
            seed: 9,
            link: 2,
            dir: 5,
        };
        assert_eq!(
            a.link_stream(1, 7).next_u64(),
            b.link_stream(1, 7).next_u64()
        );
        assert_ne!(a.dir_stream(1, 7).next_u64(), b.dir_stream(1, 7).next_u64());
        assert_ne!(
            a.link_stream(1, 7).next_u64(),
            a.link_stream(1, 8).next_u64()
        );
        assert_ne!(
            a.link_stream(1, 7).next_u64(),
            a.link_stream(2, 7).next_u64()
        );
    }
}
