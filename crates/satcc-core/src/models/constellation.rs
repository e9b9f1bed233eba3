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
//! | parameter | default (linkmodels.py) | unit | source |
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

use super::geo::{EARTH_RADIUS_M, SPEED_OF_LIGHT_M_S};
use super::{EpochClock, LinkBehaviour};

/// Earth's gravitational parameter μ, m³/s² (WGS 84).
pub const EARTH_MU: f64 = 3.986_004_418e14;
/// Earth's rotation rate, rad/s (sidereal, WGS 84).
pub const EARTH_ROTATION_RAD_S: f64 = 7.292_115_9e-5;
/// Interval at which the delay is recomputed within an epoch.
pub const GEOMETRY_STEP: SimDuration = SimDuration::from_millis(100);

#[derive(Clone, Debug, PartialEq)]
pub struct ConstellationConfig {
    pub shell: Shell,
    /// Terminal and gateway (latitude, longitude), degrees.
    pub terminal: (f64, f64),
    pub gateway: (f64, f64),
    pub min_elevation_deg: f64,
    pub clock: EpochClock,
    pub extra_delay: SimDuration,
    pub rate_bps: u64,
    pub loss: f64,
}

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

pub struct Constellation {
    cfg: ConstellationConfig,
    /// (epoch, serving satellite) of the last epoch asked about.
    cached: Option<(i64, Option<u32>)>,
    /// The state of the last geometry step asked for, keyed by (epoch, step start): every
    /// instant of a step has that step's state, so the packets of a step (hundreds at a few
    /// Mbit/s) compute the geometry once.
    step_state: Option<(i64, i128, LinkState)>,
}

impl Constellation {
    pub fn new(cfg: ConstellationConfig) -> Result<Self, String> {
        let s = &cfg.shell;
        if s.is_empty() || s.altitude_m <= 0.0 {
            return Err("shell: planes, satellites per plane and altitude must be > 0".into());
        }
        if s.phasing >= s.planes {
            return Err("phasing: must be in 0..planes-1".into());
        }
        for (name, (lat, lon)) in [("terminal", cfg.terminal), ("gateway", cfg.gateway)] {
            if !(-90.0..=90.0).contains(&lat) || !(-180.0..=360.0).contains(&lon) {
                return Err(format!(
                    "{name}: expected [latitude -90..90, longitude -180..180]"
                ));
            }
        }
        if cfg.rate_bps == 0 {
            return Err("rate: must be > 0".into());
        }
        if cfg.clock.period.is_zero() {
            return Err("period: must be > 0".into());
        }
        Ok(Constellation {
            cfg,
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
        let t = Self::secs(self.cfg.clock.epoch_start_ns(k));
        let (u, g) = (
            ground(self.cfg.terminal.0, self.cfg.terminal.1, t),
            ground(self.cfg.gateway.0, self.cfg.gateway.1, t),
        );
        let min = self.cfg.min_elevation_deg;
        let mut best: Option<(f64, u32)> = None;
        for idx in 0..self.cfg.shell.len() {
            let s = self.cfg.shell.position(idx, t);
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
        let s = self.cfg.shell.position(idx, t_s);
        let up = norm(sub(
            s,
            ground(self.cfg.terminal.0, self.cfg.terminal.1, t_s),
        ));
        let down = norm(sub(s, ground(self.cfg.gateway.0, self.cfg.gateway.1, t_s)));
        SimDuration::from_secs_f64((up + down) / SPEED_OF_LIGHT_M_S) + self.cfg.extra_delay
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
                rate_bps: self.cfg.rate_bps,
                delay: self.delay_via(idx, Self::secs(at)),
                loss: self.cfg.loss,
            },
            None => LinkState {
                rate_bps: 0,
                delay: self.cfg.extra_delay,
                loss: self.cfg.loss,
            },
        }
    }

    /// Start of the geometry step containing `t` (steps restart at each epoch boundary).
    fn step_start(&self, t: SimTime) -> (i64, i128) {
        let k = self.cfg.clock.epoch_of(t);
        let e = self.cfg.clock.epoch_start_ns(k);
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
        let boundary = self.cfg.clock.epoch_start_ns(k + 1);
        Some(SimTime::from_nanos(next_step.min(boundary).max(0) as u64))
    }
}

impl LinkBehaviour for Constellation {}

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

    fn clock() -> EpochClock {
        EpochClock {
            period: SimDuration::from_secs(15),
            phase: SimDuration::from_secs(12),
            start: SimDuration::ZERO,
        }
    }

    fn cfg(
        shell: Shell,
        terminal: (f64, f64),
        gateway: (f64, f64),
        extra_ms: u64,
    ) -> ConstellationConfig {
        ConstellationConfig {
            shell,
            terminal,
            gateway,
            min_elevation_deg: 25.0,
            clock: clock(),
            extra_delay: SimDuration::from_millis(extra_ms),
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
            let t = Constellation::secs(c.cfg.clock.epoch_start_ns(k));
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
