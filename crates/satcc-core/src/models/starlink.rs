//! Starlink access link (dish ↔ PoP) as a sequence of 15-second reconfiguration epochs.
//!
//! Starlink's global controller re-assigns every terminal a serving satellite every 15 s, at
//! :12, :27, :42 and :57 past each minute, worldwide (shared/research/satellite-facts.md §1.4,
//! [V] Mohan et al. WWW'24 artifact `controlled/16c/plot.py`; clarkzjw/mmsys24 README). Each
//! epoch therefore has its own base delay, capacity and loss; the boundary itself is disturbed
//! for ≈140 ms ([V] arXiv 2601.08439) by loss bursts of up to 50 % ([V] Kassem et al. IMC'22)
//! or a short outage. The model:
//!
//! ```text
//!   boundary k            boundary k+1 (= k + 15 s)
//!   |<- disturbance ->|                |
//!   |  outage (rate 0) |  rate C_k, one-way delay RTT_k / 2, loss p_k
//!   |  or loss max(p_k, b_k)           |
//! ```
//! with, per epoch k (independent draws, keyed by k so any instant can be asked in any order):
//! - RTT_k from the preset's RTT quantiles (piecewise-linear inverse CDF), shared by both
//!   directions of the link (the same satellite and gateway carry both, §1.1); a new draw at
//!   each boundary is the RTT step;
//! - C_k uniform in this direction's capacity range, p_k uniform in its loss range;
//! - the disturbance: duration uniform in its range; an outage with `outage_probability`,
//!   otherwise a loss burst b_k uniform in `burst_loss` (shared by both directions).
//!
//! Parameters (all resolved by `python/satcc/linkmodels.py`, which holds the cited presets):
//!
//! | parameter | preset default | unit | source |
//! |---|---|---|---|
//! | clock.period | 15 | s | facts §1.4 [V] |
//! | clock.phase | 12 | s past the minute | facts §1.4 [V] (:12, :27, :42, :57) |
//! | clock.start | 0 | s past the minute | the run's wall-clock start (scenario) |
//! | rtt_quantiles | 20, 40, 50, 60, 85 | ms at p 0, .25, .5, .75, 1 | Michel et al. IMC'22 (min, p25, median, p75) [V]; max: Mohan et al. whisker ≈85 ms [F] |
//! | capacity (residential) | up 5–25, down 50–150 | Mbit/s | starlink.com DOC-1075-86535-76 (DE) [V] |
//! | capacity (business) | up 8–30, down 40–220 | Mbit/s | same document, Priority (ES) / Local Priority (DE) [V] |
//! | loss | up 0.2–0.5 %, down 0.01 % | probability | LeoCC/LeoReplayer README [V] |
//! | disturbance | 50–150 | ms | facts §5 [D] from arXiv 2601.08439 (≈140 ms) [V] |
//! | burst_loss | 0–50 % | probability | Kassem et al. IMC'22: "up to 50 %" [V] |
//! | outage_probability | 0.5 | probability | not measured: facts §1.6 says "to calibrate" |
//!
//! Deviations from the measured link, numbered:
//! 1. Epoch draws are independent: a step may exceed the 50 ms worst case Huston reports.
//! 2. No in-slot RTT jitter (Huston's 6.7 ms between successive samples) and no sub-second
//!    OFDMA burst structure: within an epoch the link is constant.
//! 3. The ≈75 ms disturbance at the end of each period (arXiv 2601.08439) is folded into the
//!    one at the start.
//! 4. Bufferbloat is not in this model but in the dish-side queue the preset sizes
//!    (`python/satcc/linkmodels.py`), as on the real dish.
//!
//! Not implemented: weather, obstructions, multi-second outages, ICMP's separate queue.

use crate::link::{LinkModel, LinkState};
use crate::time::{SimDuration, SimTime};

use super::{EpochClock, LinkBehaviour, Seeds};

/// Number of RTT quantiles in a preset (p = 0, 0.25, 0.5, 0.75, 1).
pub const RTT_QUANTILES: usize = 5;

/// Labels of the independent draws (kept apart within one epoch's streams).
const DRAW_RTT: u64 = 1;
const DRAW_DISTURBANCE: u64 = 2;
const DRAW_CAPACITY: u64 = 3;
const DRAW_LOSS: u64 = 4;

#[derive(Clone, Debug, PartialEq)]
pub struct StarlinkConfig {
    pub clock: EpochClock,
    /// The link's idle RTT at p = 0, 0.25, 0.5, 0.75, 1 (non-decreasing); one-way = RTT / 2.
    pub rtt_quantiles: [SimDuration; RTT_QUANTILES],
    /// This direction's capacity range, bit/s (uniform per epoch).
    pub capacity_bps: (u64, u64),
    /// This direction's background loss range (uniform per epoch).
    pub loss: (f64, f64),
    /// Duration range of the disturbance that starts at each boundary.
    pub disturbance: (SimDuration, SimDuration),
    /// Probability that a boundary's disturbance is an outage rather than a loss burst.
    pub outage_probability: f64,
    /// Loss probability range of a boundary loss burst.
    pub burst_loss: (f64, f64),
}

/// What one epoch looks like.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epoch {
    pub index: i64,
    /// Start (ns since the run's start; negative for the epoch in progress at the start).
    pub start_ns: i128,
    pub rtt: SimDuration,
    pub capacity_bps: u64,
    pub loss: f64,
    pub disturbance: SimDuration,
    /// `None`: an outage; `Some(p)`: a loss burst of probability p.
    pub burst: Option<f64>,
}

pub struct Starlink {
    cfg: StarlinkConfig,
    seeds: Seeds,
    cached: Option<Epoch>,
}

impl Starlink {
    pub fn new(cfg: StarlinkConfig, seeds: Seeds) -> Result<Self, String> {
        if cfg.clock.period.is_zero() {
            return Err("period: must be > 0".into());
        }
        if cfg.rtt_quantiles.windows(2).any(|w| w[0] > w[1]) {
            return Err("rtt: quantiles must be non-decreasing".into());
        }
        let ranges = [
            (
                "capacity",
                cfg.capacity_bps.0 as f64,
                cfg.capacity_bps.1 as f64,
            ),
            ("loss", cfg.loss.0, cfg.loss.1),
            ("burst_loss", cfg.burst_loss.0, cfg.burst_loss.1),
            (
                "disturbance",
                cfg.disturbance.0.as_nanos() as f64,
                cfg.disturbance.1.as_nanos() as f64,
            ),
        ];
        for (name, lo, hi) in ranges {
            if lo > hi {
                return Err(format!("{name}: range low end above high end"));
            }
        }
        if cfg.capacity_bps.1 == 0 {
            return Err("capacity: must be > 0".into());
        }
        for p in [
            cfg.loss.0,
            cfg.loss.1,
            cfg.burst_loss.0,
            cfg.burst_loss.1,
            cfg.outage_probability,
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err("loss, burst_loss and outage_probability must be in [0, 1]".into());
            }
        }
        if cfg.disturbance.1 >= cfg.clock.period {
            return Err("disturbance: must be shorter than the period".into());
        }
        Ok(Starlink {
            cfg,
            seeds,
            cached: None,
        })
    }

    /// Epoch `k`'s parameters: a pure function of (seed, link, direction, k).
    pub fn epoch(&self, k: i64) -> Epoch {
        let c = &self.cfg;
        let u = self.seeds.link_stream(DRAW_RTT, k).next_f64();
        let rtt = quantile(&c.rtt_quantiles, u);
        let mut d = self.seeds.link_stream(DRAW_DISTURBANCE, k);
        let disturbance = SimDuration::from_nanos(
            d.uniform(
                c.disturbance.0.as_nanos() as f64,
                c.disturbance.1.as_nanos() as f64,
            )
            .round() as u64,
        );
        let outage = d.chance(c.outage_probability);
        let burst_p = d.uniform(c.burst_loss.0, c.burst_loss.1);
        let capacity = self
            .seeds
            .dir_stream(DRAW_CAPACITY, k)
            .uniform(c.capacity_bps.0 as f64, c.capacity_bps.1 as f64);
        let loss = self
            .seeds
            .dir_stream(DRAW_LOSS, k)
            .uniform(c.loss.0, c.loss.1);
        Epoch {
            index: k,
            start_ns: c.clock.epoch_start_ns(k),
            rtt,
            capacity_bps: (capacity.round() as u64).clamp(c.capacity_bps.0, c.capacity_bps.1),
            loss,
            disturbance,
            burst: (!outage).then_some(burst_p),
        }
    }

    fn epoch_at(&mut self, t: SimTime) -> Epoch {
        let k = self.cfg.clock.epoch_of(t);
        match self.cached {
            Some(e) if e.index == k => e,
            _ => {
                let e = self.epoch(k);
                self.cached = Some(e);
                e
            }
        }
    }
}

/// Piecewise-linear inverse CDF through the quantiles at p = 0, 1/4, 1/2, 3/4, 1.
fn quantile(q: &[SimDuration; RTT_QUANTILES], u: f64) -> SimDuration {
    let x = u.clamp(0.0, 1.0) * (RTT_QUANTILES - 1) as f64;
    let i = (x.floor() as usize).min(RTT_QUANTILES - 2);
    let f = x - i as f64;
    let (a, b) = (q[i].as_nanos() as f64, q[i + 1].as_nanos() as f64);
    SimDuration::from_nanos((a + (b - a) * f).round() as u64)
}

fn state_in(e: &Epoch, t: SimTime) -> LinkState {
    let disturbed = (t.as_nanos() as i128) < e.start_ns + e.disturbance.as_nanos() as i128;
    let delay = e.rtt.div_u64(2);
    match (disturbed, e.burst) {
        (true, None) => LinkState {
            rate_bps: 0,
            delay,
            loss: e.loss,
        },
        (true, Some(b)) => LinkState {
            rate_bps: e.capacity_bps,
            delay,
            loss: e.loss.max(b),
        },
        (false, _) => LinkState {
            rate_bps: e.capacity_bps,
            delay,
            loss: e.loss,
        },
    }
}

impl LinkModel for Starlink {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        let e = self.epoch_at(now);
        state_in(&e, now)
    }

    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        let k = self.cfg.clock.epoch_of(now);
        let e = match self.cached {
            Some(e) if e.index == k => e,
            _ => self.epoch(k),
        };
        let end = e.start_ns + e.disturbance.as_nanos() as i128;
        if (now.as_nanos() as i128) < end {
            return Some(SimTime::from_nanos(end as u64));
        }
        Some(self.cfg.clock.epoch_start(k + 1))
    }
}

impl LinkBehaviour for Starlink {}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    /// The residential uplink preset of `python/satcc/linkmodels.py` (cited there and above).
    fn residential_uplink(start_s: u64, phase_s: u64) -> StarlinkConfig {
        StarlinkConfig {
            clock: EpochClock {
                period: SimDuration::from_secs(15),
                phase: SimDuration::from_secs(phase_s),
                start: SimDuration::from_secs(start_s),
            },
            rtt_quantiles: [ms(20), ms(40), ms(50), ms(60), ms(85)],
            capacity_bps: (5_000_000, 25_000_000),
            loss: (0.002, 0.005),
            disturbance: (ms(50), ms(150)),
            outage_probability: 0.5,
            burst_loss: (0.0, 0.5),
        }
    }

    fn model(cfg: StarlinkConfig, seed: u64, dir: u64) -> Starlink {
        Starlink::new(cfg, Seeds { seed, link: 0, dir }).unwrap()
    }

    /// Every instant at which the state changes in `[0, until)`.
    fn changes(m: &Starlink, until: SimTime) -> Vec<SimTime> {
        let mut out = Vec::new();
        let mut t = SimTime::ZERO;
        while let Some(c) = m.next_change(t) {
            if c >= until {
                break;
            }
            out.push(c);
            t = c;
        }
        out
    }

    #[test]
    fn epoch_boundaries_land_exactly_at_the_configured_phase() {
        for (start, phase, first) in [(0, 12, 12), (5, 12, 7), (0, 3, 3), (50, 12, 7), (12, 12, 0)]
        {
            let m = model(residential_uplink(start, phase), 1, 0);
            let ch = changes(&m, SimTime::ZERO + SimDuration::from_secs(100));
            for k in 0..6u64 {
                let b = SimTime::ZERO + SimDuration::from_secs(first + 15 * k);
                if b == SimTime::ZERO {
                    continue; // the run starts on a boundary
                }
                assert!(
                    ch.contains(&b),
                    "start {start} phase {phase}: no change at {b}: {ch:?}"
                );
            }
            // Between boundaries, the only change is the end of the boundary's disturbance.
            for c in &ch {
                let since = (c.as_nanos() as i128 - (first as i128) * 1_000_000_000)
                    .rem_euclid(15_000_000_000);
                assert!(
                    since == 0 || (50_000_000..=150_000_000).contains(&since),
                    "stray change at {c}"
                );
            }
        }
    }

    #[test]
    fn the_state_steps_at_the_boundary_and_not_before() {
        let mut m = model(residential_uplink(0, 12), 3, 0);
        let b = SimTime::ZERO + SimDuration::from_secs(12);
        let before = m.state_at(SimTime::from_nanos(b.as_nanos() - 1));
        let e0 = m.epoch(0);
        let e_prev = m.epoch(-1);
        assert_eq!(before.delay, e_prev.rtt.div_u64(2));
        let at = m.state_at(b);
        assert_eq!(at.delay, e0.rtt.div_u64(2));
        match e0.burst {
            None => assert_eq!(at.rate_bps, 0, "an outage starts at the boundary"),
            Some(p) => assert!(at.loss >= p && at.rate_bps == e0.capacity_bps),
        }
        let after = m.state_at(b + e0.disturbance);
        assert_eq!(
            after,
            LinkState {
                rate_bps: e0.capacity_bps,
                delay: e0.rtt.div_u64(2),
                loss: e0.loss
            }
        );
    }

    #[test]
    fn drawn_parameters_stay_within_the_presets_ranges() {
        let cfg = residential_uplink(0, 12);
        let m = model(cfg.clone(), 7, 0);
        let (mut outages, mut lo_rtt, mut hi_rtt) = (0, SimDuration::MAX, SimDuration::ZERO);
        for k in -5..2000 {
            let e = m.epoch(k);
            assert!((ms(20)..=ms(85)).contains(&e.rtt), "{e:?}");
            assert!((5_000_000..=25_000_000).contains(&e.capacity_bps), "{e:?}");
            assert!((0.002..=0.005).contains(&e.loss), "{e:?}");
            assert!((ms(50)..=ms(150)).contains(&e.disturbance), "{e:?}");
            match e.burst {
                None => outages += 1,
                Some(p) => assert!((0.0..=0.5).contains(&p)),
            }
            lo_rtt = lo_rtt.min(e.rtt);
            hi_rtt = hi_rtt.max(e.rtt);
        }
        // The draws use the range, not one corner of it.
        assert!(lo_rtt < ms(25) && hi_rtt > ms(80), "{lo_rtt} .. {hi_rtt}");
        assert!((800..1200).contains(&outages), "outages {outages} of 2005");
    }

    #[test]
    fn the_rtt_median_follows_the_quantiles() {
        let m = model(residential_uplink(0, 12), 11, 0);
        let mut rtts: Vec<_> = (0..4001).map(|k| m.epoch(k).rtt).collect();
        rtts.sort();
        let median = rtts[2000].as_secs_f64() * 1e3;
        assert!((median - 50.0).abs() < 1.5, "median {median} ms");
    }

    #[test]
    fn same_seed_gives_same_epochs_and_another_seed_does_not() {
        let a = model(residential_uplink(0, 12), 42, 0);
        let b = model(residential_uplink(0, 12), 42, 0);
        let c = model(residential_uplink(0, 12), 43, 0);
        let ea: Vec<_> = (0..50).map(|k| a.epoch(k)).collect();
        let eb: Vec<_> = (0..50).map(|k| b.epoch(k)).collect();
        let ec: Vec<_> = (0..50).map(|k| c.epoch(k)).collect();
        assert_eq!(ea, eb);
        assert_ne!(ea, ec);
    }

    #[test]
    fn the_answer_does_not_depend_on_the_order_of_questions() {
        let mut a = model(residential_uplink(0, 12), 5, 0);
        let mut b = model(residential_uplink(0, 12), 5, 0);
        let times: Vec<SimTime> = (0..200).map(|i| SimTime::ZERO + ms(i * 731)).collect();
        let fwd: Vec<_> = times.iter().map(|&t| a.state_at(t)).collect();
        let mut back: Vec<_> = times.iter().rev().map(|&t| b.state_at(t)).collect();
        back.reverse();
        assert_eq!(fwd, back);
    }

    #[test]
    fn both_directions_share_the_rtt_step_but_not_the_capacity() {
        let up = model(residential_uplink(0, 12), 5, 0);
        let mut down_cfg = residential_uplink(0, 12);
        down_cfg.capacity_bps = (50_000_000, 150_000_000);
        let down = model(down_cfg, 5, 1);
        let mut same_capacity = 0;
        for k in 0..20 {
            assert_eq!(up.epoch(k).rtt, down.epoch(k).rtt);
            assert_eq!(up.epoch(k).disturbance, down.epoch(k).disturbance);
            same_capacity += (up.epoch(k).capacity_bps * 10 == down.epoch(k).capacity_bps) as u32;
        }
        assert!(same_capacity < 3);
    }

    #[test]
    fn an_outage_holds_the_packet_in_service_until_the_link_returns() {
        // Find a seed whose first boundary is an outage, then send a packet just before it.
        let (mut m, e) = (0..100)
            .map(|s| {
                let m = model(residential_uplink(0, 12), s, 0);
                let e = m.epoch(0);
                (m, e)
            })
            .find(|(_, e)| e.burst.is_none())
            .expect("some seed draws an outage");
        let b = SimTime::ZERO + SimDuration::from_secs(12);
        let start = SimTime::from_nanos(b.as_nanos() - 100_000); // 0.1 ms before the boundary
        let end = m.transmit_end(start, 1500).unwrap();
        assert!(
            end > b + e.disturbance,
            "finished at {end} inside the outage"
        );
    }
}
