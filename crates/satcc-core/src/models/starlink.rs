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
//! Parameters (the presets, cited, and the `[link.model]` reader are below the model):
//!
//! | parameter | preset default | unit | source |
//! |---|---|---|---|
//! | period | 15 | s | facts §1.4 [V] |
//! | phase | 12 | s past the minute | facts §1.4 [V] (:12, :27, :42, :57) |
//! | start | 0 | s past the minute | the run's wall-clock start (scenario) |
//! | rtt_quantiles | 20, 40, 50, 60, 85 | ms at p 0, .25, .5, .75, 1 | Michel et al. IMC'22 (min, p25, median, p75) [V]; max: Mohan et al. whisker ≈85 ms [F] |
//! | capacity (residential) | up 5–25, down 50–150 | Mbit/s | starlink.com DOC-1075-86535-76 (DE) [V] |
//! | capacity (business) | up 8–30, down 40–220 | Mbit/s | same document, Priority (ES) / Local Priority (DE) [V] |
//! | loss | up 0.2–0.5 %, down 0.01 % | probability | LeoCC/LeoReplayer README [V] |
//! | disturbance | 50–150 | ms | facts §5 [D] from arXiv 2601.08439 (≈140 ms) [V] |
//! | burst_loss | 0–50 % | probability | Kassem et al. IMC'22: "up to 50 %" [V] |
//! | outage_probability | 0.5 | probability | not measured: facts §1.6 says "to calibrate" |
//!
//! With [`Intra`] (`variation = "intra"`, the presets' default) the link also moves inside
//! the epoch: capacity per 100 ms slot = C_k × a log-normal AR(1) factor (mean 1); delivery
//! in scheduler frames (the link serves only `frame_duty` of every `frame`, at C / duty, in
//! one window at the frame start or two, the second moving around mid-frame; each frame
//! carries its slot's rate × a log-normal factor normalised over the slot); one-way delay per
//! 10 ms slot = RTT_k / 2 + a Gaussian AR(1) jitter shared by both directions, clipped at the
//! propagation floor RTT_k / 2 − `jitter_floor`; Gilbert–Elliott loss bursts in 10 ms slots
//! (everything lost in a burst).
//! Each process restarts from its stationary law at every boundary. Its parameters are fitted
//! by `satcc trace fit` from the LeoCC and LEONetEM recordings (docs/starlink-fit.md has the
//! figures and sources; the `INTRA_*` presets below the values).
//!
//! Deviations from the measured link, numbered:
//! 1. Epoch draws are independent: a step may exceed the 50 ms worst case Huston reports.
//! 2. `variation = "epoch"`: no in-slot RTT jitter and no sub-second burst structure (within
//!    an epoch the link is constant). `intra`: the jitter is a clipped Gaussian (the recordings'
//!    delay spikes come from the boundary outages only), frames are aligned to the epoch start.
//! 3. The ≈75 ms disturbance at the end of each period (arXiv 2601.08439) is folded into the
//!    one at the start.
//! 4. Bufferbloat is not in this model but in the dish-side queue the preset sizes
//!    (`STARLINK_QUEUE_MS`), as on the real dish.
//!
//! Not implemented: weather, obstructions, multi-second outages, ICMP's separate queue.

use crate::link::{LinkModel, LinkState};
use crate::time::{SimDuration, SimTime};

use serde::{Deserialize, Serialize};

use super::table::{
    choice, directional, duration, integer, nominal_dir, number, pair, probability, quantiles,
    range, rate, round_f, shared, start, Context, Reader, MS, S,
};
use super::{EpochClock, Kind, LinkBehaviour, ModelSpec, Seeds};
use crate::dirspec::QueueSpec;
use crate::rng::Rng;
use crate::scenario::file::ModelDir;

/// Number of RTT quantiles in a preset (p = 0, 0.25, 0.5, 0.75, 1).
pub const RTT_QUANTILES: usize = 5;

/// Labels of the independent draws (kept apart within one epoch's streams).
const DRAW_RTT: u64 = 1;
const DRAW_DISTURBANCE: u64 = 2;
const DRAW_CAPACITY: u64 = 3;
const DRAW_LOSS: u64 = 4;
const DRAW_CAPACITY_PROCESS: u64 = 5;
const DRAW_JITTER: u64 = 6;
const DRAW_BURSTS: u64 = 7;
const DRAW_FRAME_SPLIT: u64 = 8;
const DRAW_FRAME_SIZE: u64 = 9;

/// One direction of a Starlink link, as the scenario resolves it and the behaviour reads it
/// (its own configuration: the behaviour reads no file). On the wire each duration is its
/// nanoseconds, under its key's `_ns` name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StarlinkSpec {
    /// The reconfiguration clock ([`StarlinkSpec::clock`]): the epoch, the boundaries' phase
    /// past each period of wall time, the run's start past the minute.
    #[serde(rename = "period_ns")]
    pub period: SimDuration,
    #[serde(rename = "phase_ns")]
    pub phase: SimDuration,
    #[serde(rename = "start_ns")]
    pub start: SimDuration,
    /// The link's idle RTT at p = 0, 0.25, 0.5, 0.75, 1 (non-decreasing); one-way = RTT / 2.
    #[serde(rename = "rtt_quantiles_ns")]
    pub rtt_quantiles: [SimDuration; RTT_QUANTILES],
    /// This direction's capacity range, bit/s (uniform per epoch).
    pub capacity_bps: (u64, u64),
    /// This direction's background loss range (uniform per epoch).
    pub loss: (f64, f64),
    /// Duration range of the disturbance that starts at each boundary.
    #[serde(rename = "disturbance_ns")]
    pub disturbance: (SimDuration, SimDuration),
    /// Probability that a boundary's disturbance is an outage rather than a loss burst.
    pub outage_probability: f64,
    /// Loss probability range of a boundary loss burst.
    pub burst_loss: (f64, f64),
    /// `None` (absent): steady within an epoch (`variation = "epoch"`); `Some`: the
    /// within-epoch processes of [`Intra`] (`variation = "intra"`, the presets' default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intra: Option<Intra>,
}

impl StarlinkSpec {
    /// The reconfiguration clock.
    pub fn clock(&self) -> EpochClock {
        EpochClock {
            period: self.period,
            phase: self.phase,
            start: self.start,
        }
    }
}

/// What moves inside an epoch (`variation = "intra"`). Every process restarts from its
/// stationary distribution at each boundary, so an epoch's series is a pure function of
/// (seed, link, direction, epoch index).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intra {
    /// Step of the capacity process.
    #[serde(rename = "capacity_slot_ns")]
    pub capacity_slot: SimDuration,
    /// Log-normal spread of a capacity slot around the epoch's drawn capacity (σ of ln).
    pub capacity_sigma: f64,
    /// Lag-1 correlation of successive capacity slots (AR(1) on the log).
    pub capacity_corr: f64,
    /// Scheduler frame: the link serves only during the first `frame_duty` of each frame, at
    /// capacity / duty (the mean stays the slot's capacity). Zero: no frames.
    #[serde(rename = "frame_ns")]
    pub frame: SimDuration,
    pub frame_duty: f64,
    /// Serving windows per frame: 1 (at the frame start) or 2 (half the serving time each, the
    /// first at the frame start, the second half a frame later moved by `frame_offset_sd`·z,
    /// z a unit AR(1) over frames with lag-1 correlation `frame_offset_corr`).
    #[serde(default = "one")]
    pub frame_windows: u32,
    #[serde(default, rename = "frame_offset_sd_ns")]
    pub frame_offset_sd: SimDuration,
    #[serde(default)]
    pub frame_offset_corr: f64,
    /// Spread of what each frame carries: its rate × exp(σz), z independent per frame
    /// (σ = `frame_sigma`), normalised to mean 1 over the frames that start in each capacity
    /// slot. Zero: every frame of a slot carries the same.
    #[serde(default)]
    pub frame_sigma: f64,
    /// Step of the delay jitter and loss-burst processes.
    #[serde(rename = "delay_slot_ns")]
    pub delay_slot: SimDuration,
    /// Standard deviation of the one-way delay around the epoch's base (AR(1), Gaussian,
    /// clipped below at base − `jitter_floor`). Shared by both directions.
    #[serde(rename = "jitter_ns")]
    pub jitter: SimDuration,
    /// How far the one-way delay may fall below the epoch's base (the propagation floor);
    /// `None`: half the base.
    #[serde(default, rename = "jitter_floor_ns")]
    pub jitter_floor: Option<SimDuration>,
    /// Lag-1 correlation of successive delay slots.
    pub jitter_corr: f64,
    /// Loss bursts (Gilbert–Elliott, bad state loses everything): mean bursts per second.
    pub burst_rate: f64,
    /// Mean burst length (geometric in delay slots).
    #[serde(rename = "burst_duration_ns")]
    pub burst_duration: SimDuration,
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

/// One epoch's within-epoch series (`variation = "intra"`).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Capacity per capacity slot, bit/s.
    pub capacity_bps: Vec<u64>,
    /// One-way delay per delay slot.
    pub delay: Vec<SimDuration>,
    /// Whether each delay slot is in a loss burst.
    pub burst: Vec<bool>,
    /// Per frame, the second serving window's offset into it, ns (empty with one window per
    /// frame).
    pub second_window_ns: Vec<u64>,
    /// Per frame, the factor on its rate (empty without frames or with `frame_sigma` 0).
    pub frame_factor: Vec<f64>,
}

pub struct Starlink {
    cfg: StarlinkSpec,
    seeds: Seeds,
    cached: Option<Epoch>,
    series: Option<(i64, Series)>,
}

impl Starlink {
    pub fn new(cfg: StarlinkSpec, seeds: Seeds) -> Result<Self, String> {
        if cfg.period.is_zero() {
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
        if cfg.disturbance.1 >= cfg.period {
            return Err("disturbance: must be shorter than the period".into());
        }
        if let Some(i) = &cfg.intra {
            if i.capacity_slot.is_zero() || i.delay_slot.is_zero() {
                return Err("capacity_slot and delay_slot: must be > 0".into());
            }
            if i.capacity_slot.as_nanos() < 1_000_000 || i.delay_slot.as_nanos() < 1_000_000 {
                return Err("capacity_slot and delay_slot: must be at least 1 ms".into());
            }
            for (name, v) in [
                ("capacity_corr", i.capacity_corr),
                ("jitter_corr", i.jitter_corr),
                ("frame_offset_corr", i.frame_offset_corr),
            ] {
                if !(0.0..1.0).contains(&v) {
                    return Err(format!("{name}: must be in [0, 1)"));
                }
            }
            if !(1..=2).contains(&i.frame_windows) {
                return Err("frame_windows: must be 1 or 2".into());
            }
            if !(0.0..=3.0).contains(&i.capacity_sigma) {
                return Err("capacity_sigma: must be in [0, 3]".into());
            }
            if !(0.0..=3.0).contains(&i.frame_sigma) {
                return Err("frame_sigma: must be in [0, 3]".into());
            }
            if !(i.frame_duty > 0.0 && i.frame_duty <= 1.0) {
                return Err("frame_duty: must be in (0, 1]".into());
            }
            if !(i.burst_rate >= 0.0 && i.burst_rate.is_finite()) {
                return Err("burst_rate: must be >= 0".into());
            }
            if i.burst_rate > 0.0 && i.burst_duration.is_zero() {
                return Err("burst_duration: must be > 0 when burst_rate is".into());
            }
        }
        Ok(Starlink {
            cfg,
            seeds,
            cached: None,
            series: None,
        })
    }

    /// Epoch `k`'s within-epoch series (empty vectors for `variation = "epoch"`).
    pub fn series(&self, k: i64) -> Series {
        let Some(i) = self.cfg.intra else {
            return Series {
                capacity_bps: Vec::new(),
                delay: Vec::new(),
                burst: Vec::new(),
                second_window_ns: Vec::new(),
                frame_factor: Vec::new(),
            };
        };
        let e = self.epoch(k);
        let period = self.cfg.period.as_nanos();
        let n_cap = period.div_ceil(i.capacity_slot.as_nanos()) as usize;
        let n_delay = period.div_ceil(i.delay_slot.as_nanos()) as usize;
        // capacity: exp(σ·z − σ²/2) keeps the slot mean at the epoch's capacity
        let mut r = self.seeds.dir_stream(DRAW_CAPACITY_PROCESS, k);
        let s = i.capacity_sigma;
        let capacity_bps = ar1(&mut r, n_cap, i.capacity_corr)
            .into_iter()
            .map(|z| (e.capacity_bps as f64 * (s * z - s * s / 2.0).exp()).round() as u64)
            .collect();
        // delay: base + jitter, never below the floor (half the base without one)
        let mut r = self.seeds.link_stream(DRAW_JITTER, k);
        let base = e.rtt.as_nanos() as f64 / 2.0;
        let sd = i.jitter.as_nanos() as f64;
        let lowest = match i.jitter_floor {
            Some(f) => (base - f.as_nanos() as f64).max(0.0),
            None => base / 2.0,
        };
        let delay = ar1(&mut r, n_delay, i.jitter_corr)
            .into_iter()
            .map(|z| SimDuration::from_nanos((base + sd * z).max(lowest).round() as u64))
            .collect();
        // bursts: two-state chain per delay slot, entered at burst_rate, left after a
        // geometric number of slots with mean burst_duration
        let mut r = self.seeds.dir_stream(DRAW_BURSTS, k);
        let slot_s = i.delay_slot.as_secs_f64();
        let enter = (i.burst_rate * slot_s).min(1.0);
        let leave = if i.burst_duration.is_zero() {
            1.0
        } else {
            (slot_s / i.burst_duration.as_secs_f64()).min(1.0)
        };
        let mut bad = false;
        let burst = (0..n_delay)
            .map(|_| {
                bad = if bad {
                    !r.chance(leave)
                } else {
                    r.chance(enter)
                };
                bad
            })
            .collect();
        let second_window_ns = self.second_windows(k);
        // frame sizes: log-normal factors, normalised over the frames that start in each
        // capacity slot so the slot still carries its capacity (what one frame lacks, the
        // others of its slot carry: the 100 ms statistics stay the slot process's)
        let frame_factor = if frame_on_ns(&i).is_some() && i.frame_sigma > 0.0 {
            let frame = i.frame.as_nanos();
            let n = period.div_ceil(frame) as usize;
            let mut r = self.seeds.dir_stream(DRAW_FRAME_SIZE, k);
            let s = i.frame_sigma;
            let mut f: Vec<f64> = (0..n).map(|_| (s * normal(&mut r)).exp()).collect();
            let slot_of = |j: usize| (j as u64 * frame / i.capacity_slot.as_nanos()) as usize;
            let mut a = 0;
            while a < n {
                let mut b = a;
                while b < n && slot_of(b) == slot_of(a) {
                    b += 1;
                }
                let mean = f[a..b].iter().sum::<f64>() / (b - a) as f64;
                f[a..b].iter_mut().for_each(|x| *x /= mean);
                a = b;
            }
            f
        } else {
            Vec::new()
        };
        Series {
            capacity_bps,
            delay,
            burst,
            second_window_ns,
            frame_factor,
        }
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
            start_ns: c.clock().epoch_start_ns(k),
            rtt,
            capacity_bps: (capacity.round() as u64).clamp(c.capacity_bps.0, c.capacity_bps.1),
            loss,
            disturbance,
            burst: (!outage).then_some(burst_p),
        }
    }

    fn epoch_at(&mut self, t: SimTime) -> Epoch {
        let k = self.cfg.clock().epoch_of(t);
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

/// A standard normal draw (Box–Muller; one of the pair).
fn normal(r: &mut Rng) -> f64 {
    let u1 = 1.0 - r.next_f64(); // (0, 1]
    let u2 = r.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `n` steps of a stationary AR(1) with unit variance and lag-1 correlation `rho`.
fn ar1(r: &mut Rng, n: usize, rho: f64) -> Vec<f64> {
    let innovation = (1.0 - rho * rho).sqrt();
    let mut z = normal(r);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(z);
        z = rho * z + innovation * normal(r);
    }
    out
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

impl Starlink {
    /// The within-epoch state at `t` in epoch `e` (`variation = "intra"`).
    fn intra_state(&mut self, e: &Epoch, i: &Intra, t: SimTime) -> LinkState {
        let steady = state_in(e, t);
        if self.series.as_ref().map(|(k, _)| *k) != Some(e.index) {
            self.series = Some((e.index, self.series(e.index)));
        }
        let (_, s) = self.series.as_ref().expect("series cached above");
        let o = (t.as_nanos() as i128 - e.start_ns) as u64;
        let ci = ((o / i.capacity_slot.as_nanos()) as usize).min(s.capacity_bps.len() - 1);
        let di = ((o / i.delay_slot.as_nanos()) as usize).min(s.delay.len() - 1);
        let mut rate = s.capacity_bps[ci];
        if let Some(f) = s.frame_factor.get((o / i.frame.as_nanos().max(1)) as usize) {
            rate = (rate as f64 * f).round() as u64;
        }
        if let Some((half, frame)) = split_windows(i) {
            let x = o % frame;
            let b = self.second_window_at(i, e.index, o);
            rate = if x < half || (b..b + half).contains(&x) {
                (rate as u128 * frame as u128 / (2 * half) as u128) as u64
            } else {
                0
            };
        } else if let Some(on) = frame_on_ns(i) {
            let frame = i.frame.as_nanos();
            rate = if o % frame < on {
                (rate as u128 * frame as u128 / on as u128) as u64
            } else {
                0
            };
        }
        if steady.rate_bps == 0 {
            rate = 0; // the boundary outage
        }
        LinkState {
            rate_bps: rate,
            delay: s.delay[di],
            loss: if s.burst[di] { 1.0 } else { steady.loss },
        }
    }
}

impl Starlink {
    /// Epoch `k`'s second-window offsets, one per frame: half a frame after the first window,
    /// moved by frame_offset_sd·z (z a unit AR(1) over frames), kept inside the frame and clear
    /// of the first window (empty with one window per frame).
    fn second_windows(&self, k: i64) -> Vec<u64> {
        let (Some(i), Some((half, frame))) = (
            self.cfg.intra,
            self.cfg.intra.as_ref().and_then(split_windows),
        ) else {
            return Vec::new();
        };
        let n = self.cfg.period.as_nanos().div_ceil(frame) as usize;
        let mut r = self.seeds.dir_stream(DRAW_FRAME_SPLIT, k);
        let sd = i.frame_offset_sd.as_nanos() as f64;
        ar1(&mut r, n, i.frame_offset_corr)
            .into_iter()
            .map(|z| {
                let b = frame as f64 / 2.0 + sd * z;
                (b.round().max(half as f64) as u64).min(frame - half)
            })
            .collect()
    }

    /// The second window's offset in the frame that contains offset `o` (ns into epoch `k`).
    fn second_window_at(&self, i: &Intra, k: i64, o: u64) -> u64 {
        let f = (o / i.frame.as_nanos()) as usize;
        let pick = |v: &[u64]| v[f.min(v.len() - 1)];
        match &self.series {
            Some((c, s)) if *c == k => pick(&s.second_window_ns),
            _ => pick(&self.second_windows(k)),
        }
    }
}

/// With two serving windows per frame: (each window's length, the frame), ns.
fn split_windows(i: &Intra) -> Option<(u64, u64)> {
    let on = frame_on_ns(i)?;
    if i.frame_windows < 2 {
        return None;
    }
    let frame = i.frame.as_nanos();
    Some(((on / 2).clamp(1, frame / 2), frame))
}

/// The serving part of a frame, ns (`None`: no frames).
fn frame_on_ns(i: &Intra) -> Option<u64> {
    let frame = i.frame.as_nanos();
    if frame == 0 || i.frame_duty >= 1.0 {
        return None;
    }
    Some(((frame as f64 * i.frame_duty).round() as u64).clamp(1, frame))
}

impl LinkModel for Starlink {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        let e = self.epoch_at(now);
        match self.cfg.intra {
            None => state_in(&e, now),
            Some(i) => self.intra_state(&e, &i, now),
        }
    }

    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        let k = self.cfg.clock().epoch_of(now);
        let e = match self.cached {
            Some(e) if e.index == k => e,
            _ => self.epoch(k),
        };
        let t = now.as_nanos() as i128;
        let mut next = self.cfg.clock().epoch_start_ns(k + 1);
        let end = e.start_ns + e.disturbance.as_nanos() as i128;
        if t < end {
            next = next.min(end);
        }
        if let Some(i) = &self.cfg.intra {
            let o = t - e.start_ns;
            for slot in [i.capacity_slot.as_nanos(), i.delay_slot.as_nanos()] {
                let slot = slot as i128;
                next = next.min(e.start_ns + (o / slot + 1) * slot);
            }
            if let Some((half, frame)) = split_windows(i) {
                // the window edges of this frame: 0, half, b, b + half, frame
                let (x, frame) = (o % frame as i128, frame as i128);
                let b = self.second_window_at(i, k, o as u64) as i128;
                let half = half as i128;
                let edge = [half, b, b + half, frame]
                    .into_iter()
                    .find(|&y| y > x)
                    .unwrap_or(frame);
                next = next.min(e.start_ns + o - x + edge);
            } else if let Some(on) = frame_on_ns(i) {
                let (frame, on) = (i.frame.as_nanos() as i128, on as i128);
                let frame_start = e.start_ns + o - o % frame;
                next = next.min(if o % frame < on {
                    frame_start + on
                } else {
                    frame_start + frame
                });
            }
        }
        Some(SimTime::from_nanos(next as u64))
    }
}

impl LinkBehaviour for Starlink {}

// -- the `[link.model]` table: presets, keys, reader, resolved form --------------------------
// Sources (shared/research/satellite-facts.md, tags as there: [V] verified, [F] read off a
// figure, [D] derived):
// - Reconfiguration every 15 s at :12/:27/:42/:57 (§1.4 [V]).
// - Idle RTT: min 20, p25 40, median 50, p75 60 ms (Michel et al. IMC'22 [V]); upper end
//   85 ms (Mohan et al. WWW'24 whiskers ≈15-85 ms [F]).
// - Plan capacities (starlink.com DOC-1075-86535-76 [V]): Residential 50-150 down / 5-25 up
//   (DE); business = Priority 40-220 down / 8-25 up (ES table) widened to 30 up by Local
//   Priority 10-30 (DE): 40-220 down / 8-30 up.
// - Loss: uplink 0.2-0.5 %, downlink 0.01 % (LeoCC/LeoReplayer README [V]).
// - Boundary disturbance ≈140 ms (arXiv 2601.08439 [V]) → 50-150 ms (§5 [D]); loss bursts up
//   to 50 % (Kassem et al. IMC'22 [V]); outage vs burst share not measured (§1.6).
// - Bufferbloat: 150-200 ms standing queue downlink, 50-150 ms uplink under load (§1.3/§5).
/// Reconfiguration period, facts §1.4 [V].
pub const STARLINK_PERIOD_NS: u64 = 15 * S;
/// Boundaries at :12, :27, :42, :57, facts §1.4 [V].
pub(super) const STARLINK_PHASE_NS: u64 = 12 * S;
/// p0, p25, p50, p75, p100 of the idle RTT (ms): Michel [V], Mohan [F].
const STARLINK_RTT_QUANTILES_MS: [u64; 5] = [20, 40, 50, 60, 85];
/// (plan, role) → capacity range (Mbit/s).
pub const STARLINK_CAPACITY_MBPS: [(&str, &str, (u64, u64)); 6] = [
    ("residential", "uplink", (5, 25)), // DOC-1075-86535-76 DE, Residential [V]
    ("residential", "downlink", (50, 150)), // same [V]
    ("business", "uplink", (8, 30)),    // Priority ES 8-25 / Local Priority DE 10-30 [V]
    ("business", "downlink", (40, 220)), // Priority ES 40-220 [V]
    // Roam: residential's range x the Roam / Standard ratio of mean 1 s iperf3 throughput from
    // one dish site, Laniewski et al. OJCOMS'25 (sys-uos/Starlink-on-the-Autobahn@2eec78c,
    // Analysis_Fig6ab.ipynb's printed output, CC BY-SA 4.0): down 245.2 / 279.6 = 0.877, up
    // 18.25 / 22.89 = 0.797 [D]; their RTT and loss do not differ (docs/starlink-fit.md)
    ("roam", "uplink", (4, 20)),
    ("roam", "downlink", (44, 132)),
];
/// role → loss range: LeoReplayer [V].
pub const STARLINK_LOSS: [(&str, (f64, f64)); 2] =
    [("uplink", (0.002, 0.005)), ("downlink", (0.0001, 0.0001))];
/// facts §5 [D] from arXiv 2601.08439 (≈140 ms) [V].
const STARLINK_DISTURBANCE_MS: (u64, u64) = (50, 150);
/// "up to 50 %", Kassem et al. IMC'22 [V].
const STARLINK_BURST_LOSS: (f64, f64) = (0.0, 0.5);
/// Not measured (facts §1.6: "to calibrate").
const STARLINK_OUTAGE_PROBABILITY: f64 = 0.5;
/// Standing queue under load (ms), facts §1.3/§5: uplink, downlink.
const STARLINK_QUEUE_MS: [(&str, u64); 2] = [("uplink", 150), ("downlink", 200)];
pub const STARLINK_PLANS: [&str; 3] = ["residential", "business", "roam"];
const STARLINK_VARIATIONS: [&str; 2] = ["intra", "epoch"];
// Within-epoch variation (`variation = "intra"`, the default), fitted by `satcc trace fit`
// (python/satcc/tracefit.py) from two public recordings; figures in docs/starlink-fit.md:
// - LeoCC: SpaceNetLab/LeoCC@867e673 leoreplayer/replayer/example/Cubic/bw_example.txt and
//   delay_example.txt (MIT): 120 s of saturating-UDP deliveries + 10 ms one-way delays.
// - LEONetEM: clarkzjw/LEONetEM@780a063 latency/ping-example-isl.txt: 154 s of ping -D -i 0.01.
// The knobs: `satcc trace fit` on the whole LeoCC recording (first guess from the statistics,
// then five rounds of simulated moments: tracefit.refine), so the model's own 100 ms bins,
// 1 ms deliveries and 10 ms delays show the recording's statistics.
/// The 100 ms bins the statistics use.
const INTRA_CAPACITY_SLOT_NS: u64 = 100 * MS;
/// LeoCC: sd/mean of 100 ms bins around the epoch mean 0.114 [D].
const INTRA_CAPACITY_SIGMA: f64 = 0.112;
/// LeoCC: lag-1 correlation of those bins 0.471 [D].
const INTRA_CAPACITY_CORR: f64 = 0.556;
/// LeoCC: autocorrelation peak of per-ms deliveries at 8 ms [D].
const INTRA_FRAME_NS: u64 = 8 * MS;
/// LeoCC: 29.9 % of milliseconds see a delivery [D].
const INTRA_FRAME_DUTY: f64 = 0.103;
/// LeoCC: successive delivery spacings alternate (lag-1 corr -0.41) [D].
const INTRA_FRAME_WINDOWS: u64 = 2;
/// LeoCC: lag-1 corr of the delivery spacings -0.41 (sd 1.61 ms) [D].
const INTRA_FRAME_OFFSET_SD_NS: u64 = 1_260_000;
/// LeoCC: lag-2 correlation of the spacings 0.547 [D].
const INTRA_FRAME_OFFSET_CORR: f64 = 0.856;
/// LeoCC: 8 ms bins vary by sd/mean 0.336 around their 100 ms bin [D].
const INTRA_FRAME_SIGMA: f64 = 0.337;
/// The recordings' 10 ms step.
const INTRA_DELAY_SLOT_NS: u64 = 10 * MS;
/// LeoCC: RTT 1.4826 x MAD around the epoch median 2.97 ms [D].
const INTRA_JITTER_NS: u64 = 1_480_000;
/// LeoCC: RTT p1 4 ms below its epoch median (one way: 2) [D].
const INTRA_JITTER_FLOOR_NS: u64 = 2 * MS;
/// LeoCC: lag-1 (10 ms) correlation of that residual 0.439 [D].
const INTRA_JITTER_CORR: f64 = 0.462;
/// LEONetEM: 2 in-epoch loss runs of >= 2 probes in 154 s of pings, 0.013/s [D, weak]; a
/// ping's round trip meets both directions' bursts, each direction draws its own: half each
/// (as `satcc trace fit` splits a ping's bursts).
const INTRA_BURST_RATE: f64 = 0.0065;
/// LEONetEM: their mean length [D, weak].
const INTRA_BURST_DURATION_NS: u64 = 82 * MS;
/// LeoCC: every one of 8 boundaries has a delivery gap of 58-134 ms (the ISL recording of
/// LEONetEM: 10 of 10 boundaries lose 447-506 ms of pings) [D].
const STARLINK_INTRA_DISTURBANCE_MS: (u64, u64) = (58, 134);
const STARLINK_INTRA_OUTAGE_PROBABILITY: f64 = 1.0;
const INTRA_KEYS: [&str; 13] = [
    "capacity_sigma",
    "capacity_corr",
    "frame",
    "frame_duty",
    "frame_windows",
    "frame_offset_sd",
    "frame_offset_corr",
    "frame_sigma",
    "jitter",
    "jitter_floor",
    "jitter_corr",
    "burst_rate",
    "burst_duration",
];

fn one() -> u32 {
    1
}

impl Kind for StarlinkSpec {
    /// The resolved form itself: a Starlink link reads no file.
    type Config = StarlinkSpec;

    fn keys() -> Vec<String> {
        [
            directional(&["plan"]),
            shared(&["dish", "phase", "start", "rtt"]),
            directional(&["capacity", "loss"]),
            shared(&[
                "disturbance",
                "burst_loss",
                "outage_probability",
                "variation",
                "rtt_quantiles",
            ]),
            shared(&INTRA_KEYS),
        ]
        .concat()
    }

    fn read(r: &mut Reader, _: &Context) -> Option<[ModelDir; 2]> {
        starlink(r)
    }

    /// The mean capacity, half the median idle RTT and the mean loss.
    fn nominal(&self) -> Option<LinkState> {
        Some(LinkState {
            rate_bps: ((self.capacity_bps.0 + self.capacity_bps.1) as f64 / 2.0).round_ties_even()
                as u64,
            delay: SimDuration::from_nanos(self.rtt_quantiles[2].as_nanos() / 2),
            loss: (self.loss.0 + self.loss.1) / 2.0,
        })
    }

    fn config(&self, _: &str) -> Result<StarlinkSpec, String> {
        Ok(self.clone())
    }

    fn build(c: &StarlinkSpec, seeds: Seeds) -> Result<Box<dyn LinkBehaviour>, String> {
        Ok(Box::new(Starlink::new(c.clone(), seeds)?))
    }
}

fn starlink(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let ns = SimDuration::from_nanos;
    let plans = r.both("plan", &choice(&STARLINK_PLANS), Some("residential"));
    let variation = r.get("variation", &choice(&STARLINK_VARIATIONS), Some("intra"));
    let intra = variation == Some("intra");
    let dish = r.get("dish", &choice(&["a", "b"]), Some("a"));
    let phase = r.get("phase", &duration(), Some(STARLINK_PHASE_NS));
    let start = r.get("start", &start(), Some(0));
    let rtt = r.opt("rtt", &range(duration(), "a duration"));
    let rtt_q = r.opt("rtt_quantiles", &quantiles());
    let caps = r.both_opt("capacity", &range(rate(), "a rate"));
    let losses = r.both_opt("loss", &range(probability(), "a probability"));
    let dist_ms = if intra {
        STARLINK_INTRA_DISTURBANCE_MS
    } else {
        STARLINK_DISTURBANCE_MS
    };
    let disturbance = r.get(
        "disturbance",
        &range(duration(), "a duration"),
        Some((dist_ms.0 * MS, dist_ms.1 * MS)),
    );
    let burst = r.get(
        "burst_loss",
        &range(probability(), "a probability"),
        Some(STARLINK_BURST_LOSS),
    );
    let outage = r.get(
        "outage_probability",
        &probability(),
        Some(if intra {
            STARLINK_INTRA_OUTAGE_PROBABILITY
        } else {
            STARLINK_OUTAGE_PROBABILITY
        }),
    );
    let corr = || number(0.0, 0.99, "a correlation");
    let sigma = r.get(
        "capacity_sigma",
        &number(0.0, 3.0, "a number"),
        Some(INTRA_CAPACITY_SIGMA),
    );
    let capacity_corr = r.get("capacity_corr", &corr(), Some(INTRA_CAPACITY_CORR));
    let frame = r.get("frame", &duration(), Some(INTRA_FRAME_NS));
    let duty = r.get(
        "frame_duty",
        &number(0.01, 1.0, "a share"),
        Some(INTRA_FRAME_DUTY),
    );
    let windows = r.get(
        "frame_windows",
        &integer(1, 2, "windows per frame"),
        Some(INTRA_FRAME_WINDOWS),
    );
    let offset_sd = r.get(
        "frame_offset_sd",
        &duration(),
        Some(INTRA_FRAME_OFFSET_SD_NS),
    );
    let offset_corr = r.get("frame_offset_corr", &corr(), Some(INTRA_FRAME_OFFSET_CORR));
    let frame_sigma = r.get(
        "frame_sigma",
        &number(0.0, 3.0, "a number"),
        Some(INTRA_FRAME_SIGMA),
    );
    let jitter = r.get("jitter", &duration(), Some(INTRA_JITTER_NS));
    let jitter_floor = r.get("jitter_floor", &duration(), Some(INTRA_JITTER_FLOOR_NS));
    let jitter_corr = r.get("jitter_corr", &corr(), Some(INTRA_JITTER_CORR));
    let burst_rate = r.get(
        "burst_rate",
        &number(0.0, 100.0, "bursts per second"),
        Some(INTRA_BURST_RATE),
    );
    let burst_duration = r.get("burst_duration", &duration(), Some(INTRA_BURST_DURATION_NS));
    if !r.issues.is_empty() {
        return None;
    }
    let (phase, start, disturbance, burst, outage) =
        (phase?, start?, disturbance?, burst?, outage?);
    if !intra {
        for key in std::iter::once("rtt_quantiles").chain(INTRA_KEYS) {
            if r.has(key) {
                r.fail(
                    key,
                    format!("expected no {key} with variation = 'epoch' (steady epochs)"),
                );
            }
        }
    }
    if rtt.is_some() && rtt_q.is_some() {
        r.fail(
            "rtt_quantiles",
            "expected either rtt or rtt_quantiles, found both",
        );
    }
    check_phase(r, phase);
    if disturbance.1 >= STARLINK_PERIOD_NS {
        r.fail("disturbance", "expected durations below the 15 s period");
    }
    if frame? >= STARLINK_PERIOD_NS {
        r.fail("frame", "expected a frame shorter than the 15 s period");
    }
    if burst_rate? > 0.0 && burst_duration? < MS {
        r.fail(
            "burst_duration",
            "expected at least 1 ms when burst_rate > 0",
        );
    }
    let quantiles: Vec<u64> = match (rtt, rtt_q) {
        (Some((lo, hi)), _) => (0..5u64)
            .map(|k| round_f(lo as f64 + ((hi - lo) * k) as f64 / 4.0))
            .collect(),
        (None, Some(q)) => q,
        (None, None) => STARLINK_RTT_QUANTILES_MS.map(|q| q * MS).to_vec(),
    };
    let roles = if dish == Some("a") {
        ["uplink", "downlink"]
    } else {
        ["downlink", "uplink"]
    };
    let mut out = Vec::new();
    for (((plan, role), cap), loss) in [plans.0?, plans.1?]
        .into_iter()
        .zip(roles)
        .zip([caps.0, caps.1])
        .zip([losses.0, losses.1])
    {
        let cap = cap.unwrap_or_else(|| {
            let (_, _, (lo, hi)) = STARLINK_CAPACITY_MBPS
                .iter()
                .find(|(p, ro, _)| *p == plan && *ro == role)
                .expect("every plan has both roles");
            (lo * 1_000_000, hi * 1_000_000)
        });
        if cap.0 == 0 {
            r.fail("capacity", "expected positive rates, found 0 bit/s");
            continue;
        }
        let loss = loss.unwrap_or_else(|| {
            STARLINK_LOSS
                .iter()
                .find(|(ro, _)| *ro == role)
                .expect("both roles")
                .1
        });
        let intra = if intra {
            Some(Intra {
                capacity_slot: ns(INTRA_CAPACITY_SLOT_NS),
                delay_slot: ns(INTRA_DELAY_SLOT_NS),
                capacity_sigma: sigma?,
                capacity_corr: capacity_corr?,
                frame: ns(frame?),
                frame_duty: duty?,
                frame_windows: windows? as u32, // 1..2
                frame_offset_sd: ns(offset_sd?),
                frame_offset_corr: offset_corr?,
                frame_sigma: frame_sigma?,
                jitter: ns(jitter?),
                jitter_floor: jitter_floor.map(ns),
                jitter_corr: jitter_corr?,
                burst_rate: burst_rate?,
                burst_duration: ns(burst_duration?),
            })
        } else {
            None
        };
        let model = ModelSpec::Starlink(StarlinkSpec {
            period: ns(STARLINK_PERIOD_NS),
            phase: ns(phase),
            start: ns(start),
            rtt_quantiles: quantiles
                .iter()
                .copied()
                .map(ns)
                .collect::<Vec<_>>()
                .try_into()
                .expect("five quantiles"),
            capacity_bps: cap,
            loss,
            disturbance: (ns(disturbance.0), ns(disturbance.1)),
            outage_probability: outage,
            burst_loss: burst,
            intra,
        });
        let mean_bps = model.nominal().expect("starlink").rate_bps;
        let queue_ms = STARLINK_QUEUE_MS
            .iter()
            .find(|(ro, _)| *ro == role)
            .expect("both roles")
            .1;
        let queue = QueueSpec::Bytes(round_f(mean_bps as f64 / 8.0 * queue_ms as f64 / 1000.0));
        out.push(nominal_dir(model, Some(queue)));
    }
    pair(out)
}

/// The reconfiguration phase must fall inside the 15 s period.
pub(super) fn check_phase(r: &mut Reader, phase: u64) {
    if phase >= STARLINK_PERIOD_NS {
        let f = r.found("phase");
        r.fail(
            "phase",
            format!("expected a duration below 15 s, found {f}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    /// The residential uplink preset (cited above).
    fn residential_uplink(start_s: u64, phase_s: u64) -> StarlinkSpec {
        StarlinkSpec {
            period: SimDuration::from_secs(15),
            phase: SimDuration::from_secs(phase_s),
            start: SimDuration::from_secs(start_s),
            rtt_quantiles: [ms(20), ms(40), ms(50), ms(60), ms(85)],
            capacity_bps: (5_000_000, 25_000_000),
            loss: (0.002, 0.005),
            disturbance: (ms(50), ms(150)),
            outage_probability: 0.5,
            burst_loss: (0.0, 0.5),
            intra: None,
        }
    }

    fn model(cfg: StarlinkSpec, seed: u64, dir: u64) -> Starlink {
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

    fn intra() -> Intra {
        Intra {
            capacity_slot: ms(100),
            capacity_sigma: 0.25,
            capacity_corr: 0.7,
            frame: ms(4),
            frame_duty: 0.25,
            frame_windows: 1,
            frame_offset_sd: SimDuration::ZERO,
            frame_offset_corr: 0.0,
            frame_sigma: 0.0,
            delay_slot: ms(10),
            jitter: ms(1),
            jitter_floor: None,
            jitter_corr: 0.6,
            burst_rate: 0.5,
            burst_duration: ms(40),
        }
    }

    fn intra_uplink() -> StarlinkSpec {
        StarlinkSpec {
            intra: Some(intra()),
            ..residential_uplink(0, 12)
        }
    }

    #[test]
    fn the_state_is_constant_between_the_changes_it_announces() {
        let mut m = model(intra_uplink(), 3, 0);
        let mut t = SimTime::ZERO;
        let mut steps = 0;
        while t < SimTime::ZERO + SimDuration::from_secs(20) {
            let next = m.next_change(t).unwrap();
            assert!(next > t);
            let a = m.state_at(t);
            let mid = SimTime::from_nanos((t.as_nanos() + next.as_nanos()) / 2);
            let b = m.state_at(SimTime::from_nanos(next.as_nanos() - 1));
            assert_eq!(a, m.state_at(mid), "at {t}");
            assert_eq!(a, b, "at {t}");
            t = next;
            steps += 1;
        }
        // 20 s of 4 ms frames (two edges each) plus 10 ms slots: thousands of changes
        assert!(steps > 10_000, "{steps}");
    }

    #[test]
    fn frames_carry_the_slot_capacity_on_average() {
        let mut m = model(intra_uplink(), 5, 0);
        let k = 1;
        let e = m.epoch(k);
        let s = m.series(k);
        let from = SimTime::from_nanos((e.start_ns + 1_000_000_000) as u64); // past the disturbance
        let to = from + ms(100);
        let slot = ((from.as_nanos() as i128 - e.start_ns) / 100_000_000) as usize;
        let mean = m.mean_over(from, to).rate_bps;
        let want = s.capacity_bps[slot] as f64;
        assert!((mean / want - 1.0).abs() < 1e-6, "{mean} vs {want}");
        // and the link is idle for three quarters of each frame
        assert_eq!(m.state_at(from + ms(2)).rate_bps, 0);
        assert_eq!(m.state_at(from).rate_bps, s.capacity_bps[slot] * 4);
    }

    #[test]
    fn the_capacity_process_keeps_the_epoch_mean_and_its_spread() {
        let m = model(intra_uplink(), 9, 0);
        let (mut ratios, mut lag) = (Vec::new(), Vec::new());
        for k in 0..400 {
            let c = m.epoch(k).capacity_bps as f64;
            let logs: Vec<f64> = m
                .series(k)
                .capacity_bps
                .iter()
                .map(|&x| (x as f64 / c).ln())
                .collect();
            ratios.extend(logs.iter().map(|l| l.exp()));
            lag.extend(logs.windows(2).map(|w| (w[0], w[1])));
        }
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        assert!((mean - 1.0).abs() < 0.01, "mean ratio {mean}");
        let n = lag.len() as f64;
        let (mx, my) = (
            lag.iter().map(|p| p.0).sum::<f64>() / n,
            lag.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let cov = lag.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / n;
        let var = lag.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>() / n;
        assert!((var.sqrt() - 0.25).abs() < 0.01, "sigma {}", var.sqrt());
        assert!((cov / var - 0.7).abs() < 0.03, "corr {}", cov / var);
    }

    #[test]
    fn bursts_lose_everything_for_their_measured_length() {
        let m = model(intra_uplink(), 13, 0);
        let (mut runs, mut slots, mut bad) = (Vec::new(), 0usize, 0usize);
        for k in 0..400 {
            let mut run = 0;
            for &b in &m.series(k).burst {
                slots += 1;
                if b {
                    run += 1;
                    bad += 1;
                } else if run > 0 {
                    runs.push(run);
                    run = 0;
                }
            }
        }
        let mean_ms = runs.iter().sum::<usize>() as f64 / runs.len() as f64 * 10.0;
        let per_s = runs.len() as f64 / (slots as f64 * 0.01);
        assert!((mean_ms - 40.0).abs() < 4.0, "mean burst {mean_ms} ms");
        // bursts start only from the good state: rate = 0.5/s x share of good time
        let good = 1.0 - bad as f64 / slots as f64;
        assert!((per_s / (0.5 * good) - 1.0).abs() < 0.1, "{per_s} bursts/s");
        let mut l = model(intra_uplink(), 13, 0);
        let k = (0..400)
            .find(|&k| l.series(k).burst[200])
            .expect("a burst somewhere");
        let at = SimTime::from_nanos((l.epoch(k).start_ns + 2_005_000_000) as u64);
        assert_eq!(l.state_at(at).loss, 1.0);
    }

    #[test]
    fn the_delay_jitter_is_shared_by_both_directions_and_moves_inside_the_epoch() {
        let mut up = model(intra_uplink(), 21, 0);
        let mut down = model(intra_uplink(), 21, 1);
        let t0 = SimTime::ZERO + SimDuration::from_secs(13);
        let delays: Vec<SimDuration> = (0..100)
            .map(|i| up.state_at(t0 + ms(10 * i)).delay)
            .collect();
        for (i, d) in delays.iter().enumerate() {
            assert_eq!(*d, down.state_at(t0 + ms(10 * i as u64)).delay);
        }
        let distinct: std::collections::BTreeSet<_> = delays.iter().collect();
        assert!(distinct.len() > 50, "{} distinct delays", distinct.len());
    }

    /// The presets' shape: 8 ms frames served in two windows, the second moving over frames.
    fn split_uplink() -> StarlinkSpec {
        StarlinkSpec {
            intra: Some(Intra {
                frame: ms(8),
                frame_duty: 0.2,
                frame_windows: 2,
                frame_offset_sd: SimDuration::from_micros(1500),
                frame_sigma: 0.0,
                jitter_floor: Some(ms(2)),
                ..intra()
            }),
            ..residential_uplink(0, 12)
        }
    }

    #[test]
    fn two_windows_per_frame_carry_the_slot_capacity_and_announce_every_edge() {
        let mut m = model(split_uplink(), 5, 0);
        let mut t = SimTime::ZERO + SimDuration::from_secs(13);
        let end = t + SimDuration::from_secs(3);
        let (mut gaps, mut idle_since) = (Vec::new(), None);
        while t < end {
            let next = m.next_change(t).unwrap();
            assert!(next > t);
            let a = m.state_at(t);
            assert_eq!(
                a,
                m.state_at(SimTime::from_nanos(next.as_nanos() - 1)),
                "at {t}"
            );
            match (a.rate_bps, idle_since) {
                (0, None) => idle_since = Some(t),
                (r, Some(s)) if r > 0 => {
                    gaps.push((t.as_nanos() - s.as_nanos()) as f64 / 1e6);
                    idle_since = None;
                }
                _ => {}
            }
            t = next;
        }
        // two idle gaps per 8 ms frame (0.8 ms windows), their sum 6.4 ms, sizes that move
        let per_frame = gaps.len() as f64 / (3000.0 / 8.0);
        // (a window clamped against the other merges two gaps: rare at sd 1.5 ms)
        assert!((per_frame - 2.0).abs() < 0.1, "{per_frame} gaps per frame");
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 3.2).abs() < 0.15, "mean gap {mean} ms");
        let distinct: std::collections::BTreeSet<u64> =
            gaps.iter().map(|g| (g * 1e3) as u64).collect();
        assert!(distinct.len() > 10, "{distinct:?}");
        // the mean over a capacity slot is the slot's capacity
        let k = 1;
        let e = m.epoch(k);
        let s = m.series(k);
        let from = SimTime::from_nanos((e.start_ns + 1_000_000_000) as u64);
        let mean = m.mean_over(from, from + ms(800)).rate_bps;
        let want: f64 = s.capacity_bps[10..18]
            .iter()
            .map(|&c| c as f64)
            .sum::<f64>()
            / 8.0;
        assert!((mean / want - 1.0).abs() < 0.01, "{mean} vs {want}");
    }

    #[test]
    fn the_delay_never_falls_below_the_floor_and_sits_on_it_as_often_as_the_law_says() {
        let m = model(split_uplink(), 17, 0);
        let (mut at_floor, mut n) = (0usize, 0usize);
        for k in 0..200 {
            let base = m.epoch(k).rtt.div_u64(2);
            let floor = base.saturating_sub(ms(2));
            for d in m.series(k).delay {
                assert!(d >= floor, "{d} below {floor}");
                // (an odd RTT puts the floor half a ns above the integer one)
                at_floor += (d <= floor + SimDuration::from_nanos(1)) as usize;
                n += 1;
            }
        }
        // P(z < -2 ms / 1 ms) = 2.28 %
        let share = at_floor as f64 / n as f64;
        assert!((share - 0.0228).abs() < 0.004, "{share}");
    }

    #[test]
    fn frames_carry_different_amounts_around_the_slot_capacity() {
        let cfg = StarlinkSpec {
            intra: Some(Intra {
                frame_sigma: 0.3,
                ..split_uplink().intra.unwrap()
            }),
            ..split_uplink()
        };
        let mut m = model(cfg, 23, 0);
        let (mut ratios, mut all) = (Vec::new(), 0.0);
        for k in 1..4 {
            let e = m.epoch(k);
            let s = m.series(k);
            for f in 100..1800u64 {
                let from = SimTime::from_nanos((e.start_ns + (f * 8_000_000) as i128) as u64);
                let slot = (f * 8 / 100) as usize;
                if (f * 8) % 100 > 92 {
                    continue; // the frame straddles two slots
                }
                let r = m.mean_over(from, from + ms(8)).rate_bps / s.capacity_bps[slot] as f64;
                ratios.push(r);
                all += r;
            }
        }
        let n = ratios.len() as f64;
        let mean = all / n;
        let sd = (ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 1.0).abs() < 0.02, "mean {mean}");
        // log-normal σ 0.3: sd of the factor sqrt(exp(0.09) - 1) = 0.307 (a little less after
        // normalising over about 12 frames)
        assert!((sd - 0.295).abs() < 0.025, "sd {sd}");
        // and a slot carries its capacity whatever its frames do
        let e = m.epoch(2);
        let s = m.series(2);
        let from = SimTime::from_nanos((e.start_ns + 1_000_000_000) as u64);
        let got = m.mean_over(from, from + ms(800)).rate_bps;
        let want: f64 = s.capacity_bps[10..18]
            .iter()
            .map(|&c| c as f64)
            .sum::<f64>()
            / 8.0;
        assert!((got / want - 1.0).abs() < 0.02, "{got} vs {want}");
    }
}
