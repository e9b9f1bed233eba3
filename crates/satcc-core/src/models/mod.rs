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
//! Every parameter arrives resolved (units parsed, presets applied) by [`table`] (the
//! `[link.model]` table's keys, cited presets and checks), so these files take numbers.
//!
//! Not implemented: reordering links (the simulator's wire is FIFO), correlated (Gilbert–
//! Elliott) loss outside the Starlink model.

pub mod constellation;
pub mod geo;
pub mod lfn;
pub mod spec;
pub mod starlink;
pub mod table;
pub mod trace;
pub mod trace_file;

use crate::link::{ConstantLink, LinkModel, LinkState};
use crate::rng::Rng;
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

pub use spec::ModelSpec;

/// A behaviour's configuration, per link direction (units in types, files read): what
/// [`ModelSpec::config`] makes of the resolved model; `build` makes the model.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelConfig {
    Starlink(starlink::StarlinkConfig),
    Geo(geo::GeoConfig),
    Lfn(lfn::LfnConfig),
    Trace(trace::TraceConfig),
    Constellation(constellation::ConstellationConfig),
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

impl ModelConfig {
    /// Build the model; an error names what is inconsistent.
    pub fn build(&self, seeds: Seeds) -> Result<Box<dyn LinkBehaviour>, String> {
        Ok(match self {
            ModelConfig::Starlink(c) => Box::new(starlink::Starlink::new(c.clone(), seeds)?),
            ModelConfig::Geo(c) => Box::new(geo::Geo::new(c)?),
            ModelConfig::Lfn(c) => Box::new(lfn::Lfn::new(c.clone(), seeds)?),
            ModelConfig::Trace(c) => Box::new(trace::Trace::new(c.clone())?),
            ModelConfig::Constellation(c) => {
                Box::new(constellation::Constellation::new(c.clone())?)
            }
        })
    }
}

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
