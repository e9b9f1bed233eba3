//! A LEO bent-pipe path from orbital geometry: a Walker-delta shell, a user terminal and a
//! gateway on a rotating spherical Earth; the terminal re-selects its satellite every 15 s.
//!
//! Walker delta i:T/P/F (Walker 1984): P planes with right ascensions Ω_p = 2πp/P, S = T/P
//! satellites per plane, circular orbits of radius a = R + h and inclination i; satellite s of
//! plane p has argument of latitude u = 2πs/S + 2πFp/T + n·t with mean motion n = sqrt(μ/a³).
//! Position (ECI):
//! ```text
//!   x = a (cos Ω cos u − sin Ω sin u cos i)
//!   y = a (sin Ω cos u + cos Ω sin u cos i)
//!   z = a  sin u sin i
//! ```
//! A ground point at latitude φ, longitude λ sits at R (cos φ cos(λ+θ), cos φ sin(λ+θ), sin φ)
//! with θ = ω_E·t (Earth rotation). Elevation of a satellite seen from a ground point g:
//! sin ε = (s − g)·ĝ / |s − g|.
//!
//! At every reconfiguration boundary (the Starlink clock: 15 s, :12/:27/:42/:57, facts §1.4) the
//! terminal takes, among the satellites at or above `min_elevation` from the terminal *and*
//! from the gateway, the one highest in the terminal's sky, and keeps it for the epoch
//! (Starlink: one satellite at a time, ≥ 25°, re-assigned every 15 s — facts §1.1, Huston;
//! Tanveer et al. [S]). No such satellite: an outage for the epoch. One-way delay =
//! (|terminal − sat| + |sat − gateway|) / c + `extra_delay`, recomputed every
//! `GEOMETRY_STEP` (the range changes by < 1 km per 100 ms, < 4 µs of delay).
//!
//! | parameter | default | unit | source |
//! |---|---|---|---|
//! | altitude | 550 | km | Starlink shell 1 (72 × 22, 53°) |
//! | inclination | 53 | degrees | shell 1 |
//! | planes × per plane | 72 × 22 | | shell 1 |
//! | phasing F | 1 | 0..P−1 | no filing gives F (arXiv 2109.13994) [assumed] |
//! | min_elevation | 25 | degrees | facts §1.1 (dish tracks at ≥ 25°) |
//! | extra_delay | 10 | ms one way | [D] dish→GS RTT ≈35 ms near 0 km (Mohan et al. [F]) minus the 7–15 ms geometric floor: MAC scheduling, processing, GS→PoP |
//! | rate, loss | required, 0 | bit/s, probability | |
//!
//! Deviations, numbered:
//! 1. Spherical Earth, circular Keplerian orbits, no J2 precession, no drag.
//! 2. The selection policy (highest elevation) is ours; Starlink's scheduler is not public.
//! 3. The Earth rotation angle is 0 at the run's start (the shell's RAAN origin is arbitrary).
//!
//! Not implemented: inter-satellite links, capacity from elevation. TLE input (SGP4) lives in
//! Python (`python/satcc/tle.py`) and reaches the simulator as a `trace` delay series.

use std::f64::consts::PI;

use crate::link::{LinkModel, LinkState};
use crate::time::{SimDuration, SimTime};

use serde::{Deserialize, Serialize};

use super::geo::{EARTH_RADIUS_M, SPEED_OF_LIGHT_M_S};
use super::starlink::{check_phase, STARLINK_PERIOD_NS, STARLINK_PHASE_NS};
use super::table::{
    directional, duration, file_path, integer, latlon, nominal_dir, number, pair, probability,
    rate, round_f, shared, start, Context, Reader, TleAsk, MS, S,
};
use super::trace::{TraceInline, TraceSpec, MAHIMAHI_BYTES};
use super::{EpochClock, Kind, LinkBehaviour, ModelSpec, Seeds};
use crate::scenario::file::ModelDir;
use crate::units::py_str;

/// Earth's gravitational parameter μ, m³/s² (WGS 84).
pub const EARTH_MU: f64 = 3.986_004_418e14;
/// Earth's rotation rate, rad/s (sidereal, WGS 84).
pub const EARTH_ROTATION_RAD_S: f64 = 7.292_115_9e-5;
/// Interval at which the delay is recomputed within an epoch.
pub const GEOMETRY_STEP: SimDuration = SimDuration::from_millis(100);

/// A Walker-delta shell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shell {
    pub altitude_m: f64,
    pub inclination_deg: f64,
    pub planes: u32,
    pub per_plane: u32,
    pub phasing: u32,
}

type Vec3 = [f64; 3];

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn norm(a: Vec3) -> f64 {
    dot(a, a).sqrt()
}

impl Shell {
    pub fn len(&self) -> u32 {
        self.planes * self.per_plane
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// ECI position (m) of satellite `idx` (= plane · per_plane + slot) at `t_s` seconds.
    pub fn position(&self, idx: u32, t_s: f64) -> Vec3 {
        let a = EARTH_RADIUS_M + self.altitude_m;
        let n = (EARTH_MU / a.powi(3)).sqrt(); // mean motion, rad/s
        let (p, s) = (idx / self.per_plane, idx % self.per_plane);
        let raan = 2.0 * PI * p as f64 / self.planes as f64;
        let u = 2.0 * PI * s as f64 / self.per_plane as f64
            + 2.0 * PI * (self.phasing * p) as f64 / self.len() as f64
            + n * t_s;
        let i = self.inclination_deg.to_radians();
        [
            a * (raan.cos() * u.cos() - raan.sin() * u.sin() * i.cos()),
            a * (raan.sin() * u.cos() + raan.cos() * u.sin() * i.cos()),
            a * u.sin() * i.sin(),
        ]
    }
}

/// ECI position (m) of a ground point at `t_s` seconds (Earth rotation angle 0 at t = 0).
pub fn ground(lat_deg: f64, lon_deg: f64, t_s: f64) -> Vec3 {
    let (phi, lam) = (
        lat_deg.to_radians(),
        lon_deg.to_radians() + EARTH_ROTATION_RAD_S * t_s,
    );
    [
        EARTH_RADIUS_M * phi.cos() * lam.cos(),
        EARTH_RADIUS_M * phi.cos() * lam.sin(),
        EARTH_RADIUS_M * phi.sin(),
    ]
}

/// Elevation (degrees) and range (m) of `sat` seen from ground point `g`.
pub fn look(g: Vec3, sat: Vec3) -> (f64, f64) {
    let d = sub(sat, g);
    let range = norm(d);
    let up = dot(d, g) / (range * norm(g));
    (up.clamp(-1.0, 1.0).asin().to_degrees(), range)
}

/// The behaviour of a resolved [`ConstellationSpec`] (its configuration: a shell reads no
/// file, so the resolved form is all it needs).
pub struct Constellation {
    spec: ConstellationSpec,
    shell: Shell,
    clock: EpochClock,
    extra_delay: SimDuration,
    /// (epoch, serving satellite) of the last epoch asked about.
    cached: Option<(i64, Option<u32>)>,
    /// The state of the last geometry step asked for, keyed by (epoch, step start): every
    /// instant of a step has that step's state, so the packets of a step (hundreds at a few
    /// Mbit/s) compute the geometry once.
    step_state: Option<(i64, i128, LinkState)>,
}

impl Constellation {
    pub fn new(spec: ConstellationSpec) -> Result<Self, String> {
        let s = &spec.shell();
        if s.is_empty() || s.altitude_m <= 0.0 {
            return Err("shell: planes, satellites per plane and altitude must be > 0".into());
        }
        if s.phasing >= s.planes {
            return Err("phasing: must be in 0..planes-1".into());
        }
        for (name, (lat, lon)) in [("terminal", spec.terminal), ("gateway", spec.gateway)] {
            if !(-90.0..=90.0).contains(&lat) || !(-180.0..=360.0).contains(&lon) {
                return Err(format!(
                    "{name}: expected [latitude -90..90, longitude -180..180]"
                ));
            }
        }
        if spec.rate_bps == 0 {
            return Err("rate: must be > 0".into());
        }
        if spec.period_ns == 0 {
            return Err("period: must be > 0".into());
        }
        Ok(Constellation {
            shell: spec.shell(),
            clock: EpochClock::from_ns(spec.period_ns, spec.phase_ns, spec.start_ns),
            extra_delay: SimDuration::from_nanos(spec.extra_delay_ns),
            spec,
            cached: None,
            step_state: None,
        })
    }

    fn secs(ns: i128) -> f64 {
        ns as f64 / 1e9
    }

    /// The satellite serving epoch `k`: visible from both ends at the epoch's start, highest
    /// in the terminal's sky; `None` if there is none.
    pub fn serving(&self, k: i64) -> Option<u32> {
        let t = Self::secs(self.clock.epoch_start_ns(k));
        let (u, g) = (
            ground(self.spec.terminal.0, self.spec.terminal.1, t),
            ground(self.spec.gateway.0, self.spec.gateway.1, t),
        );
        let min = self.spec.min_elevation_deg;
        let mut best: Option<(f64, u32)> = None;
        for idx in 0..self.shell.len() {
            let s = self.shell.position(idx, t);
            let (eu, _) = look(u, s);
            if eu < min || best.is_some_and(|(b, _)| eu <= b) {
                continue;
            }
            if look(g, s).0 >= min {
                best = Some((eu, idx));
            }
        }
        best.map(|(_, i)| i)
    }

    /// One-way delay through satellite `idx` at `t_s`, extra part included.
    pub fn delay_via(&self, idx: u32, t_s: f64) -> SimDuration {
        let s = self.shell.position(idx, t_s);
        let up = norm(sub(
            s,
            ground(self.spec.terminal.0, self.spec.terminal.1, t_s),
        ));
        let down = norm(sub(s, ground(self.spec.gateway.0, self.spec.gateway.1, t_s)));
        SimDuration::from_secs_f64((up + down) / SPEED_OF_LIGHT_M_S) + self.extra_delay
    }

    fn serving_cached(&mut self, k: i64) -> Option<u32> {
        match self.cached {
            Some((e, s)) if e == k => s,
            _ => {
                let s = self.serving(k);
                self.cached = Some((k, s));
                s
            }
        }
    }

    /// The state of geometry step `at` of epoch `k` (what [`LinkModel::state_at`] caches).
    fn step_state_uncached(&mut self, k: i64, at: i128) -> LinkState {
        match self.serving_cached(k) {
            Some(idx) => LinkState {
                rate_bps: self.spec.rate_bps,
                delay: self.delay_via(idx, Self::secs(at)),
                loss: self.spec.loss,
            },
            None => LinkState {
                rate_bps: 0,
                delay: self.extra_delay,
                loss: self.spec.loss,
            },
        }
    }

    /// Start of the geometry step containing `t` (steps restart at each epoch boundary).
    fn step_start(&self, t: SimTime) -> (i64, i128) {
        let k = self.clock.epoch_of(t);
        let e = self.clock.epoch_start_ns(k);
        let step = GEOMETRY_STEP.as_nanos() as i128;
        (k, e + (t.as_nanos() as i128 - e).div_euclid(step) * step)
    }
}

impl LinkModel for Constellation {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        let (k, at) = self.step_start(now);
        if let Some((ck, cat, state)) = self.step_state {
            if (ck, cat) == (k, at) {
                return state;
            }
        }
        let state = self.step_state_uncached(k, at);
        self.step_state = Some((k, at, state));
        state
    }

    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        let (k, at) = self.step_start(now);
        let next_step = at + GEOMETRY_STEP.as_nanos() as i128;
        let boundary = self.clock.epoch_start_ns(k + 1);
        Some(SimTime::from_nanos(next_step.min(boundary).max(0) as u64))
    }
}

impl LinkBehaviour for Constellation {}

// -- the `[link.model]` table: presets, keys, reader, resolved form ----------------------------------
// Sources (shared/research/satellite-facts.md): Starlink shell 1 = 550 km, 53°, 72 planes x
// 22 (§1.1), min elevation 25° (§1.1 [V] Huston), extra one-way delay 10 ms [D] from the
// dish→GS RTT of ≈35 ms near 0 km (Mohan et al. [F]) minus the 7-15 ms geometric floor.
/// A shell's satellites are searched once an epoch per direction; Starlink's largest shell has
/// ~4,400, the whole constellation ~10,000.
const MAX_SHELL_SATELLITES: u64 = 100_000;
const SHELL1_ALTITUDE_KM: f64 = 550.0;
const SHELL1_INCLINATION: f64 = 53.0;
const SHELL1_PLANES: u64 = 72;
const SHELL1_PER_PLANE: u64 = 22;
const SHELL1_PHASING: u64 = 1;
/// facts §1.1 [V].
const MIN_ELEVATION_DEG: f64 = 25.0;
/// [D], see the module header.
const CONSTELLATION_EXTRA_DELAY_NS: u64 = 10 * MS;
const WALKER_KEYS: [&str; 5] = [
    "altitude_km",
    "inclination",
    "planes",
    "per_plane",
    "phasing",
];
/// Long enough for every ready scenario (the longest runs 20 min).
const TLE_DEFAULT_SPAN_NS: u64 = 3600 * S;
/// python/satcc/tle.py deviation 3: an outage row loses every packet.
const TLE_OUTAGE_LOSS: f64 = 1.0;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstellationSpec {
    pub altitude_m: f64,
    pub inclination_deg: f64,
    pub planes: u32,
    pub per_plane: u32,
    pub phasing: u32,
    pub terminal: (f64, f64),
    pub gateway: (f64, f64),
    pub min_elevation_deg: f64,
    pub period_ns: u64,
    pub phase_ns: u64,
    pub start_ns: u64,
    pub extra_delay_ns: u64,
    pub rate_bps: u64,
    pub loss: f64,
}

impl ConstellationSpec {
    /// The Walker shell of the resolved keys.
    pub fn shell(&self) -> Shell {
        Shell {
            altitude_m: self.altitude_m,
            inclination_deg: self.inclination_deg,
            planes: self.planes,
            per_plane: self.per_plane,
            phasing: self.phasing,
        }
    }
}

impl Kind for ConstellationSpec {
    /// The resolved form itself: a shell reads no file.
    type Config = ConstellationSpec;

    fn keys() -> Vec<String> {
        [
            shared(&[
                "terminal",
                "gateway",
                "altitude_km",
                "inclination",
                "planes",
                "per_plane",
                "phasing",
                "min_elevation",
                "phase",
                "start",
            ]),
            directional(&["extra_delay", "rate", "loss"]),
            // satellites from a TLE file (python/satcc/tle.py)
            shared(&["tle", "epoch", "span"]),
        ]
        .concat()
    }

    /// A Walker shell, or (`tle`, `epoch` or `span` given) a TLE set's trace.
    fn read(r: &mut Reader, cx: &Context) -> Option<[ModelDir; 2]> {
        if ["tle", "epoch", "span"].iter().any(|k| r.has(k)) {
            constellation_tle(r, cx)
        } else {
            constellation(r)
        }
    }

    /// The rate, the zenith bent pipe (2h/c) plus the extra delay, and the loss.
    fn nominal(&self) -> Option<LinkState> {
        let zenith_s = 2.0 * self.altitude_m / SPEED_OF_LIGHT_M_S;
        let zenith_ns = (zenith_s * 1e9).round_ties_even() as u64;
        Some(LinkState {
            rate_bps: self.rate_bps,
            delay: SimDuration::from_nanos(zenith_ns + self.extra_delay_ns),
            loss: self.loss,
        })
    }

    fn config(&self, _: &str) -> Result<ConstellationSpec, String> {
        Ok(self.clone())
    }

    fn build(c: &ConstellationSpec, _: Seeds) -> Result<Box<dyn LinkBehaviour>, String> {
        Ok(Box::new(Constellation::new(c.clone())?))
    }
}

/// The keys a Walker shell and a TLE set share: the two ground points, the visibility mask,
/// the reconfiguration phase, and per direction the extra delay, rate and loss.
struct Ends {
    terminal: Option<(f64, f64)>,
    gateway: Option<(f64, f64)>,
    min_el: Option<f64>,
    phase: Option<u64>,
    extras: (Option<u64>, Option<u64>),
    rates: (Option<u64>, Option<u64>),
    losses: (Option<f64>, Option<f64>),
}

impl Ends {
    /// (rate, loss, extra delay) for a→b and b→a.
    fn directions(&self) -> Option<[(u64, f64, u64); 2]> {
        Some([
            (self.rates.0?, self.losses.0?, self.extras.0?),
            (self.rates.1?, self.losses.1?, self.extras.1?),
        ])
    }
}

fn ends(r: &mut Reader) -> Ends {
    Ends {
        terminal: r.get("terminal", &latlon(), None),
        gateway: r.get("gateway", &latlon(), None),
        min_el: r.get(
            "min_elevation",
            &number(0.0, 90.0, "degrees"),
            Some(MIN_ELEVATION_DEG),
        ),
        phase: r.get("phase", &duration(), Some(STARLINK_PHASE_NS)),
        extras: r.both(
            "extra_delay",
            &duration(),
            Some(CONSTELLATION_EXTRA_DELAY_NS),
        ),
        rates: r.both("rate", &rate(), None),
        losses: r.both("loss", &probability(), Some(0.0)),
    }
}

fn constellation(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let e = ends(r);
    let altitude_km = r.get(
        "altitude_km",
        &number(100.0, 50_000.0, "km"),
        Some(SHELL1_ALTITUDE_KM),
    );
    let inclination = r.get(
        "inclination",
        &number(0.0, 180.0, "degrees"),
        Some(SHELL1_INCLINATION),
    );
    let planes = r.get("planes", &integer(1, 10_000, "planes"), Some(SHELL1_PLANES));
    let per_plane = r.get(
        "per_plane",
        &integer(1, 10_000, "satellites per plane"),
        Some(SHELL1_PER_PLANE),
    );
    let phasing = r.get(
        "phasing",
        &integer(0, 9_999, "phasing F"),
        Some(SHELL1_PHASING),
    );
    let start = r.get("start", &start(), Some(0));
    if !r.issues.is_empty() {
        return None;
    }
    let (planes, per_plane, phasing, phase) = (planes?, per_plane?, phasing?, e.phase?);
    let altitude_km = altitude_km?;
    if phasing >= planes {
        r.fail(
            "phasing",
            format!(
                "expected an integer in 0..{} (below planes), found {phasing}",
                planes - 1
            ),
        );
    }
    if planes * per_plane > MAX_SHELL_SATELLITES {
        r.fail(
            "per_plane",
            format!(
                "expected a shell of at most {} satellites (planes x per_plane), found {}",
                thousands(MAX_SHELL_SATELLITES),
                thousands(planes * per_plane)
            ),
        );
    }
    check_phase(r, phase);
    let (terminal, gateway) = (e.terminal?, e.gateway?);
    let mut out = Vec::new();
    for (rate, loss, extra) in e.directions()? {
        if rate == 0 {
            r.fail("rate", "expected a positive rate, found 0 bit/s");
            continue;
        }
        let model = ModelSpec::Constellation(ConstellationSpec {
            altitude_m: altitude_km * 1000.0,
            inclination_deg: inclination?,
            // each at most 10,000 (checked above)
            planes: planes as u32,
            per_plane: per_plane as u32,
            phasing: phasing as u32,
            terminal,
            gateway,
            min_elevation_deg: e.min_el?,
            period_ns: STARLINK_PERIOD_NS,
            phase_ns: phase,
            start_ns: start?,
            extra_delay_ns: extra,
            rate_bps: rate,
            loss,
        });
        // nominal delay (routing, BDP queues): the zenith bent pipe, 2h/c, plus the extra part
        out.push(nominal_dir(model, None));
    }
    pair(out)
}

/// `f"{n:,}"`.
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A constellation whose satellites come from a TLE file (the caller's SGP4,
/// python/satcc/tle.py): a trace-kind delay series per direction.
fn constellation_tle(r: &mut Reader, cx: &Context) -> Option<[ModelDir; 2]> {
    let name = r.get("tle", &file_path(), None);
    let epoch = r.t.get("epoch").cloned();
    let span = r.get("span", &duration(), Some(TLE_DEFAULT_SPAN_NS));
    let e = ends(r);
    for key in WALKER_KEYS.iter().chain(&["start"]) {
        if r.has(key) {
            r.fail(
                key,
                format!(
                    "expected no {key} beside tle (the TLE set and epoch give it), found {key} = ..."
                ),
            );
        }
    }
    if !r.issues.is_empty() {
        return None;
    }
    let (name, span, phase) = (name?, span?, e.phase?);
    if span == 0 {
        r.fail("span", "expected a positive duration, found 0 s");
    }
    check_phase(r, phase);
    if !r.issues.is_empty() {
        return None;
    }
    let path = cx.base.join(&name);
    let ask = TleAsk {
        path: &path,
        name: &name,
        epoch: epoch.as_ref(),
        terminal: e.terminal?,
        gateway: e.gateway?,
        min_elevation_deg: e.min_el?,
        phase_ns: phase,
        period_ns: STARLINK_PERIOD_NS,
        span_ns: span,
    };
    let geometry = match cx.files.tle(&ask) {
        Ok(g) => g,
        Err((key, message)) => {
            r.fail(&key, message);
            return None;
        }
    };
    let up: Vec<u64> = geometry.iter().filter_map(|(_, d)| *d).collect();
    if up.is_empty() {
        r.fail(
            "tle",
            format!(
                "expected a satellite visible from both ends within the span, found none in {}",
                py_str(&name)
            ),
        );
        return None;
    }
    let mut out = Vec::new();
    for (rate, loss, extra) in e.directions()? {
        if rate == 0 {
            r.fail("rate", "expected a positive rate, found 0 bit/s");
            continue;
        }
        let mut series: Vec<(u64, u64, f64)> = Vec::new();
        for &(t, d) in &geometry {
            let row = match d {
                None => (t, extra, TLE_OUTAGE_LOSS),
                Some(d) => (t, d + extra, loss),
            };
            // equal neighbours add nothing
            if series.last().is_none_or(|l| (l.1, l.2) != (row.1, row.2)) {
                series.push(row);
            }
        }
        let sum: u128 = up.iter().map(|&d| u128::from(d)).sum();
        // a mean while a satellite serves; Python's round(sum / len)
        let nominal_delay = round_f(sum as f64 / up.len() as f64) + extra;
        let model = ModelSpec::Trace(TraceSpec::Inline(TraceInline {
            opportunities_ms: None,
            bytes_per_opportunity: MAHIMAHI_BYTES,
            rate_bps: Some(rate),
            series: Some(series),
            delay_ns: nominal_delay,
            loss,
        }));
        out.push(nominal_dir(model, None));
    }
    pair(out)
}

#[cfg(test)]
mod tests {
    use super::super::geo::slant_range_m;
    use super::*;

    const H: f64 = 550_000.0;

    fn shell1() -> Shell {
        Shell {
            altitude_m: H,
            inclination_deg: 53.0,
            planes: 72,
            per_plane: 22,
            phasing: 1,
        }
    }

    fn cfg(
        shell: Shell,
        terminal: (f64, f64),
        gateway: (f64, f64),
        extra_ms: u64,
    ) -> ConstellationSpec {
        ConstellationSpec {
            altitude_m: shell.altitude_m,
            inclination_deg: shell.inclination_deg,
            planes: shell.planes,
            per_plane: shell.per_plane,
            phasing: shell.phasing,
            terminal,
            gateway,
            min_elevation_deg: 25.0,
            period_ns: 15 * S,
            phase_ns: 12 * S,
            start_ns: 0,
            extra_delay_ns: extra_ms * MS,
            rate_bps: 100_000_000,
            loss: 0.0,
        }
    }

    #[test]
    fn a_satellite_at_zenith_is_altitude_over_c_away() {
        // One equatorial satellite above (0°, 0°) at t = 0; terminal and gateway right below.
        let one = Shell {
            altitude_m: H,
            inclination_deg: 0.0,
            planes: 1,
            per_plane: 1,
            phasing: 0,
        };
        let c = Constellation::new(cfg(one, (0.0, 0.0), (0.0, 0.0), 0)).unwrap();
        let (el, range) = look(ground(0.0, 0.0, 0.0), one.position(0, 0.0));
        assert!((el - 90.0).abs() < 1e-9 && (range - H).abs() < 1e-6);
        let leg = H / SPEED_OF_LIGHT_M_S; // 1.8346 ms
        let d = c.delay_via(0, 0.0).as_secs_f64();
        assert!((d - 2.0 * leg).abs() < 1e-9, "{d} vs 2 × {leg}");
    }

    #[test]
    fn slant_ranges_match_the_closed_form_at_known_elevations() {
        // Move the ground point away from the sub-satellite point; whatever elevation results,
        // the range must equal d(ε) = sqrt((R+h)² − (R cos ε)²) − R sin ε.
        let one = Shell {
            altitude_m: H,
            inclination_deg: 0.0,
            planes: 1,
            per_plane: 1,
            phasing: 0,
        };
        let sat = one.position(0, 0.0);
        for lon in [0.0, 2.0, 5.0, 8.0, 12.0, 15.0] {
            let (el, range) = look(ground(0.0, lon, 0.0), sat);
            assert!(
                (range - slant_range_m(H, el)).abs() < 1e-3,
                "lon {lon}: el {el}"
            );
        }
        // Hand-computed at 550 km: 25° → 1,123 km (3.75 ms), 40° → 812 km (satellite-facts §1.1:
        // 7.5 ms up+down at 25°; 10.8 ms user-sat-GS-sat-user RTT at 40°).
        assert!((slant_range_m(H, 25.0) / 1e3 - 1123.0).abs() < 1.5);
        assert!((4.0 * slant_range_m(H, 40.0) / SPEED_OF_LIGHT_M_S * 1e3 - 10.8).abs() < 0.05);
    }

    #[test]
    fn the_walker_shell_has_its_satellites_on_the_orbit_radius_and_inclination() {
        let s = shell1();
        let a = EARTH_RADIUS_M + H;
        let mut max_z = 0.0f64;
        for idx in 0..s.len() {
            let p = s.position(idx, 123.0);
            assert!((norm(p) - a).abs() < 1e-3);
            max_z = max_z.max(p[2]);
        }
        let lat_max = (max_z / a).asin().to_degrees();
        assert!((lat_max - 53.0).abs() < 0.5, "highest latitude {lat_max}");
    }

    #[test]
    fn a_european_terminal_always_finds_a_satellite_above_25_degrees() {
        let c = Constellation::new(cfg(shell1(), (50.1, 8.7), (50.3, 8.5), 0)).unwrap();
        for k in 0..240 {
            let idx = c
                .serving(k)
                .unwrap_or_else(|| panic!("no satellite in epoch {k}"));
            let t = Constellation::secs(c.clock.epoch_start_ns(k));
            let (el, _) = look(ground(50.1, 8.7, t), shell1().position(idx, t));
            assert!(el >= 25.0, "epoch {k}: elevation {el}");
        }
    }

    #[test]
    fn user_gateway_user_rtt_is_in_the_25_to_60_ms_class() {
        // Terminal near Frankfurt, gateway ~ 100 km away, default 10 ms extra each way.
        let mut c = Constellation::new(cfg(shell1(), (50.1, 8.7), (50.9, 9.3), 10)).unwrap();
        let (mut lo, mut hi) = (f64::MAX, 0.0f64);
        let mut t = SimTime::ZERO;
        while t < SimTime::ZERO + SimDuration::from_secs(3600) {
            let rtt = 2.0 * c.state_at(t).delay.as_secs_f64() * 1e3;
            lo = lo.min(rtt);
            hi = hi.max(rtt);
            t += SimDuration::from_millis(500);
        }
        assert!(lo >= 25.0 && hi <= 60.0, "RTT {lo:.1} .. {hi:.1} ms");
        // Geometry alone spans the 7.3 (zenith) .. 15 ms (25°) floor of satellite-facts §1.1.
        // (2 × 10 ms of extra delay in the round trip.)
        assert!(
            lo - 20.0 >= 7.2 && hi - 20.0 <= 15.5,
            "geometric part {:.1} .. {:.1}",
            lo - 20.0,
            hi - 20.0
        );
    }

    #[test]
    fn the_satellite_changes_only_at_reconfiguration_boundaries() {
        let mut c = Constellation::new(cfg(shell1(), (50.1, 8.7), (50.3, 8.5), 0)).unwrap();
        let mut t = SimTime::ZERO;
        let mut prev = c.state_at(t).delay;
        while t < SimTime::ZERO + SimDuration::from_secs(120) {
            let next = c.next_change(t).unwrap();
            let d = c.state_at(next).delay;
            let jump = (d.as_nanos() as i64 - prev.as_nanos() as i64).abs();
            let at_boundary =
                (next.as_nanos() as i128 - 12_000_000_000).rem_euclid(15_000_000_000) == 0;
            // Within an epoch the delay drifts by microseconds per step.
            assert!(at_boundary || jump < 20_000, "jump of {jump} ns at {next}");
            prev = d;
            t = next;
        }
    }

    #[test]
    fn no_common_satellite_means_an_outage() {
        // Terminal and gateway on opposite sides of the Earth.
        let mut c = Constellation::new(cfg(shell1(), (10.0, 0.0), (-10.0, 180.0), 0)).unwrap();
        assert_eq!(c.state_at(SimTime::ZERO).rate_bps, 0);
    }

    #[test]
    fn the_state_kept_per_geometry_step_is_the_state_computed_afresh() {
        // Instants in and across steps and epochs, in and out of order: the kept state of a
        // step must be what a model without it computes at that instant.
        let mut kept = Constellation::new(cfg(shell1(), (50.1, 8.7), (50.9, 9.3), 10)).unwrap();
        let mut rng = crate::Rng::new(7);
        let mut t = 0u64;
        for i in 0..3_000u64 {
            t = match i % 3 {
                0 => t + rng.next_u64() % 20_000_000,
                1 => t.saturating_sub(rng.next_u64() % 150_000_000),
                _ => t + rng.next_u64() % 2_000_000_000,
            };
            let at = SimTime::from_nanos(t);
            let fresh = Constellation::new(cfg(shell1(), (50.1, 8.7), (50.9, 9.3), 10))
                .unwrap()
                .state_at(at);
            assert_eq!(kept.state_at(at), fresh, "t = {t} ns");
        }
    }
}
