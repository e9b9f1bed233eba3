//! A terrestrial long fat link (study 003): constant rate, delay and loss, and optionally a
//! router hop that drops what exceeds a rate threshold.
//!
//! Study 003 (shared/papers/README.md §003) reached only half of an OC-12 at 15–22 ms RTT
//! because "one router hop dropped packets above 300–330 Mbit/s". We read that hop as a
//! policer: a token bucket filled at the threshold rate and holding at most `burst` bytes; a
//! packet that finds fewer tokens than its size is dropped, never queued. The threshold is
//! drawn uniformly in its range for every `redraw` interval (seeded), so a range such as
//! 300–330 Mbit/s gives a threshold that wanders inside it.
//!
//! | parameter | default | unit | source |
//! |---|---|---|---|
//! | rate | required | bit/s | e.g. OC-12 ≈ 540 Mbit/s payload (study 003) |
//! | rtt → delay | required | one-way = RTT / 2 | study 003: 15, 22, 187, 189 ms |
//! | police.rate | none; preset `study-003` = 300–330 | Mbit/s | study 003 |
//! | police.burst | 256 | kB | not given by study 003; calibrated: Reno 235, CUBIC 266 Mbit/s at 15 ms (study: 244, 280) |
//! | police.redraw | 1 | s | [assumed] |
//!
//! Deviations: the hop's drops are rate-based only (a policer), not the queue overflow of a
//! slower interface; study 003 does not say which it was.
//! Not implemented: route-metrics caching (that is TCP's, see study 003's notes in README).

use crate::link::{ConstantLink, LinkModel, LinkState};
use crate::time::{SimDuration, SimTime};

use serde::{Deserialize, Serialize};

use super::table::{
    choice, directional, duration, nominal_dir, pair, probability, range, rate, shared, size,
    Context, Reader, S,
};
use super::{Kind, LinkBehaviour, ModelSpec, Seeds};
use crate::scenario::file::ModelDir;

/// Label of the threshold draws.
const DRAW_THRESHOLD: u64 = 5;

/// A token-bucket policer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Police {
    /// Threshold range, bit/s (uniform per `redraw` interval).
    pub rate_bps: (u64, u64),
    pub burst_bytes: u64,
    #[serde(rename = "redraw_ns")]
    pub redraw: SimDuration,
}

pub struct Lfn {
    link: ConstantLink,
    police: Option<Police>,
    seeds: Seeds,
    /// Tokens (bytes) at `last`.
    tokens: f64,
    last: SimTime,
    /// The last redraw interval whose threshold `extra_drop` drew, and that threshold
    /// (`threshold_bps`, a pure function of the interval: drawn once rather than per packet).
    threshold: (i64, f64),
}

impl Lfn {
    pub fn new(c: LfnSpec, seeds: Seeds) -> Result<Self, String> {
        if c.rate_bps == 0 {
            return Err("rate: must be > 0".into());
        }
        if let Some(p) = &c.police {
            if p.rate_bps.0 > p.rate_bps.1 || p.rate_bps.1 == 0 {
                return Err("drop_above: expected a positive rate or a low..high range".into());
            }
            if p.redraw.is_zero() || p.burst_bytes == 0 {
                return Err("drop_burst and the redraw interval must be > 0".into());
            }
        }
        let tokens = c.police.as_ref().map_or(0.0, |p| p.burst_bytes as f64);
        Ok(Lfn {
            link: ConstantLink(c.state()),
            police: c.police,
            seeds,
            tokens,
            last: SimTime::ZERO,
            threshold: (i64::MIN, 0.0),
        })
    }

    /// Remember interval `k`'s threshold (out of line: once an interval, and inlined the
    /// compiler drew it on every refill before testing whether it was needed).
    #[cold]
    #[inline(never)]
    fn redraw(&mut self, k: i64) {
        self.threshold = (k, self.threshold_bps(k));
    }

    /// The threshold in force during redraw interval `k`.
    pub fn threshold_bps(&self, k: i64) -> f64 {
        let p = self.police.as_ref().expect("a policer");
        self.seeds
            .dir_stream(DRAW_THRESHOLD, k)
            .uniform(p.rate_bps.0 as f64, p.rate_bps.1 as f64)
    }
}

impl LinkModel for Lfn {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        self.link.state_at(now)
    }
    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        self.link.next_change(now)
    }
}

impl LinkBehaviour for Lfn {
    /// A constant link's ([`ConstantLink::transmit_end`]: the rate never changes, so the
    /// fluid walk's one interval, without it).
    fn transmit_end(&mut self, start: SimTime, bytes: u64) -> Option<SimTime> {
        self.link.transmit_end(start, bytes)
    }

    /// Without a policer, a constant link (nothing dropped beyond its loss): a link direction
    /// then serves it as one, the same packets at the same instants.
    fn as_constant(&self) -> Option<ConstantLink> {
        self.police.is_none().then(|| self.link.clone())
    }

    fn extra_drop(&mut self, now: SimTime, bytes: u64) -> bool {
        let Some(p) = self.police.clone() else {
            return false;
        };
        // Refill from `last` to `now`, interval by interval (the threshold may change).
        let step = p.redraw.as_nanos();
        let mut t = self.last.as_nanos();
        let end = now.as_nanos().max(t);
        while t < end && self.tokens < p.burst_bytes as f64 {
            let k = (t / step) as i64;
            let until = ((k as u64 + 1) * step).min(end);
            if self.threshold.0 != k {
                self.redraw(k);
            }
            self.tokens += self.threshold.1 / 8.0 * (until - t) as f64 / 1e9;
            t = until;
        }
        self.tokens = self.tokens.min(p.burst_bytes as f64);
        self.last = now.max(self.last);
        if self.tokens >= bytes as f64 {
            self.tokens -= bytes as f64;
            false
        } else {
            true
        }
    }
}

// -- LFN ------------------------------------------------------------------------------------
/// papers/README.md §003.
const STUDY_003_DROP_ABOVE_BPS: (u64, u64) = (300_000_000, 330_000_000);
/// Not given by study 003: calibrated so Reno/CUBIC get 235/266 Mbit/s at 15 ms (study:
/// 244/280).
const DEFAULT_DROP_BURST_BYTES: u64 = 256_000;
/// The threshold wanders within its range once a second [assumed].
const DROP_REDRAW_NS: u64 = S;

/// A long fat link: its constant state and its policing hop. Its own configuration: the
/// behaviour reads no file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LfnSpec {
    pub rate_bps: u64,
    #[serde(rename = "delay_ns")]
    pub delay: SimDuration,
    pub loss: f64,
    /// The policing hop (study 003); null: none.
    #[serde(default)]
    pub police: Option<Police>,
}

impl LfnSpec {
    /// The rate, one-way delay and loss (constant).
    pub fn state(&self) -> LinkState {
        LinkState {
            rate_bps: self.rate_bps,
            delay: self.delay,
            loss: self.loss,
        }
    }
}

impl Kind for LfnSpec {
    /// The resolved form itself: an LFN reads no file.
    type Config = LfnSpec;

    fn keys() -> Vec<String> {
        [
            directional(&["rate", "rtt", "delay", "loss", "drop_above"]),
            shared(&["hop", "drop_burst"]),
        ]
        .concat()
    }

    fn read(r: &mut Reader, _: &Context) -> Option<[ModelDir; 2]> {
        lfn(r)
    }

    fn nominal(&self) -> Option<LinkState> {
        Some(self.state())
    }

    fn config(&self, _: &str) -> Result<LfnSpec, String> {
        Ok(self.clone())
    }

    fn build(c: &LfnSpec, seeds: Seeds) -> Result<Box<dyn LinkBehaviour>, String> {
        Ok(Box::new(Lfn::new(c.clone(), seeds)?))
    }
}

fn lfn(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let rates = r.both("rate", &rate(), None);
    if r.has("rtt") && r.has("delay") {
        r.fail("rtt", "expected rtt or delay (one way), found both");
    }
    let delays = if r.has("rtt") || !r.has("delay") {
        let rtt = r.both("rtt", &duration(), None);
        (rtt.0.map(|x| x / 2), rtt.1.map(|x| x / 2))
    } else {
        r.both("delay", &duration(), None)
    };
    let losses = r.both("loss", &probability(), Some(0.0));
    let hop = r.opt("hop", &choice(&["study-003"]));
    let range_rate = range(rate(), "a rate");
    let drops = if hop.is_some() {
        r.both("drop_above", &range_rate, Some(STUDY_003_DROP_ABOVE_BPS))
    } else {
        r.both_opt("drop_above", &range_rate)
    };
    let burst = r.get("drop_burst", &size(), Some(DEFAULT_DROP_BURST_BYTES));
    if !r.issues.is_empty() {
        return None;
    }
    let burst = burst?;
    let mut out = Vec::new();
    for (((rate, delay), loss), drop) in [rates.0?, rates.1?]
        .into_iter()
        .zip([delays.0?, delays.1?])
        .zip([losses.0?, losses.1?])
        .zip([drops.0, drops.1])
    {
        if rate == 0 || drop.is_some_and(|d| d.0 == 0) || burst == 0 {
            r.fail("rate", "expected positive rates and a positive drop_burst");
            continue;
        }
        let police = drop.map(|rate_bps| Police {
            rate_bps,
            burst_bytes: burst,
            redraw: SimDuration::from_nanos(DROP_REDRAW_NS),
        });
        let model = ModelSpec::Lfn(LfnSpec {
            rate_bps: rate,
            delay: SimDuration::from_nanos(delay),
            loss,
            police,
        });
        out.push(nominal_dir(model, None));
    }
    pair(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lfn(police: Option<Police>) -> Lfn {
        Lfn::new(
            LfnSpec {
                rate_bps: 540_000_000,
                delay: SimDuration::from_micros(7_500),
                loss: 0.0,
                police,
            },
            Seeds {
                seed: 1,
                link: 0,
                dir: 0,
            },
        )
        .unwrap()
    }

    /// Offer 1500-byte packets at `offered_bps` for `secs`; return the rate that passes.
    fn passed_bps(m: &mut Lfn, offered_bps: f64, secs: f64) -> f64 {
        let gap_ns = 1500.0 * 8.0 / offered_bps * 1e9;
        let n = (secs * 1e9 / gap_ns) as u64;
        let mut ok = 0u64;
        for i in 0..n {
            let t = SimTime::from_nanos((i as f64 * gap_ns) as u64);
            ok += (!m.extra_drop(t, 1500)) as u64;
        }
        ok as f64 * 1500.0 * 8.0 / secs
    }

    fn study_003_hop() -> Option<Police> {
        Some(Police {
            rate_bps: (300_000_000, 330_000_000),
            burst_bytes: 64_000,
            redraw: SimDuration::from_secs(1),
        })
    }

    #[test]
    fn without_a_policer_nothing_extra_is_dropped() {
        let mut m = lfn(None);
        assert!((0..10_000u64).all(|i| !m.extra_drop(SimTime::from_nanos(i * 1000), 1500)));
    }

    #[test]
    fn the_policing_hop_passes_at_most_its_threshold() {
        let mut m = lfn(study_003_hop());
        let got = passed_bps(&mut m, 500e6, 5.0);
        // 300–330 Mbit/s plus one 64 kB burst over 5 s.
        assert!(
            (299e6..=331e6).contains(&got),
            "{:.1} Mbit/s passed",
            got / 1e6
        );
    }

    #[test]
    fn traffic_below_the_threshold_passes_untouched() {
        let mut m = lfn(study_003_hop());
        let offered = 250e6;
        let got = passed_bps(&mut m, offered, 3.0);
        assert!((got - offered).abs() / offered < 1e-3, "{got}");
    }

    #[test]
    fn the_policer_drops_what_it_did_with_every_threshold_drawn_afresh() {
        // the threshold drawn once per interval (`Lfn::threshold`) against the formula
        // drawing it for every refill: the same drops, offered at varying rates
        let mut m = lfn(study_003_hop());
        let p = study_003_hop().unwrap();
        let (mut tokens, mut last) = (p.burst_bytes as f64, 0u64);
        let mut rng = crate::Rng::new(7);
        let mut now = 0u64;
        for _ in 0..200_000 {
            now += rng.next_u64() % 60_000;
            let bytes = [1500, 66, 9000][(rng.next_u64() % 3) as usize];
            let step = p.redraw.as_nanos();
            let (mut t, end) = (last, now.max(last));
            while t < end && tokens < p.burst_bytes as f64 {
                let k = (t / step) as i64;
                let until = ((k as u64 + 1) * step).min(end);
                tokens += m.threshold_bps(k) / 8.0 * (until - t) as f64 / 1e9;
                t = until;
            }
            tokens = tokens.min(p.burst_bytes as f64);
            last = now.max(last);
            let want = if tokens >= bytes as f64 {
                tokens -= bytes as f64;
                false
            } else {
                true
            };
            assert_eq!(m.extra_drop(SimTime::from_nanos(now), bytes), want, "at {now} ns");
            assert_eq!(m.tokens.to_bits(), tokens.to_bits());
        }
    }

    #[test]
    fn a_link_without_a_policer_is_served_as_a_constant_one_and_ends_as_the_fluid_walk() {
        let mut plain = lfn(None);
        assert_eq!(plain.as_constant().map(|c| c.0), Some(plain.link.0));
        assert!(lfn(study_003_hop()).as_constant().is_none());
        for (start, bytes) in [(0, 1500), (123_456_789, 66), (7, 65_535), (u64::MAX / 2, 1)] {
            let start = SimTime::from_nanos(start);
            assert_eq!(
                plain.transmit_end(start, bytes),
                super::super::fluid_transmit_end(&mut plain, start, bytes)
            );
        }
    }

    #[test]
    fn the_threshold_wanders_within_its_range() {
        let m = lfn(study_003_hop());
        let t: Vec<f64> = (0..200).map(|k| m.threshold_bps(k)).collect();
        assert!(t.iter().all(|&x| (300e6..=330e6).contains(&x)));
        let (lo, hi) = t
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        assert!(lo < 303e6 && hi > 327e6);
    }
}
