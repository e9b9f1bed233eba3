//! Geostationary satellite link: a constant rate, loss and a delay from orbital geometry.
//!
//! One-way delay terminal → satellite → gateway = (d(ε_t) + d(ε_g)) / c + extra, with the slant
//! range from a ground point at elevation ε to a satellite at altitude h over a spherical Earth
//! of radius R (law of cosines in the Earth-centre / ground / satellite triangle):
//!
//! ```text
//!   d(ε) = sqrt((R + h)² − (R cos ε)²) − R sin ε
//! ```
//! Propagation-only RTT (four legs) is then 477.5 ms with both ends at 90° and 556 ms at 0°
//! (shared/research/satellite-facts.md §2.1 [D]); measured GEO RTTs are ≈600 ms ([V] Michel et
//! al. IMC'22 intro), the difference being MAC/DAMA scheduling and processing: put it in
//! `extra_delay`.
//!
//! | parameter | default (linkmodels.py) | unit | source |
//! |---|---|---|---|
//! | altitude | 35,786 | km | geostationary altitude |
//! | terminal / gateway elevation | 30 | degrees | [D] a mid-latitude site (≈50° N) at the satellite's longitude |
//! | extra_delay | 0 | ms one way | measured − propagation ≈ 40–60 ms RTT |
//! | rate, loss | required / 0 | bit/s, probability | loss presets 1e-6 … 1e-2 (study 002's sweep) |
//! | preset `pcc` | 42 Mbit/s, 400 ms one way, 0.74 % a→b, 1500 pkt | | JerryLX/pantheon `test_Satellite.sh` [V] |
//!
//! Deviations: none beyond a spherical Earth and a constant state (GEO is quasi-static).
//! Not implemented: rain fade, DAMA request-grant cycles, PEPs.

use crate::link::{ConstantLink, LinkModel, LinkState};
use crate::time::{SimDuration, SimTime};

use super::LinkBehaviour;

/// Mean Earth radius, m (the radius satellite-facts.md's derivations use).
pub const EARTH_RADIUS_M: f64 = 6_371_000.0;
/// Speed of light in vacuum, m/s.
pub const SPEED_OF_LIGHT_M_S: f64 = 299_792_458.0;
/// Geostationary altitude above the equator, m.
pub const GEO_ALTITUDE_M: f64 = 35_786_000.0;

/// Slant range (m) from a ground point to a satellite at `altitude_m`, seen at `elevation_deg`.
pub fn slant_range_m(altitude_m: f64, elevation_deg: f64) -> f64 {
    let e = elevation_deg.to_radians();
    let r = EARTH_RADIUS_M;
    let rs = r + altitude_m;
    (rs * rs - (r * e.cos()).powi(2)).sqrt() - r * e.sin()
}

/// Propagation time over `metres`.
pub fn light_time(metres: f64) -> SimDuration {
    SimDuration::from_secs_f64(metres / SPEED_OF_LIGHT_M_S)
}

#[derive(Clone, Debug, PartialEq)]
pub struct GeoConfig {
    pub rate_bps: u64,
    pub delay: GeoDelay,
    pub loss: f64,
}

/// Where the one-way delay comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum GeoDelay {
    /// Slant ranges at the two elevations, plus `extra`.
    Geometry {
        altitude_m: f64,
        terminal_elevation_deg: f64,
        gateway_elevation_deg: f64,
        extra: SimDuration,
    },
    /// A fixed one-way delay (the PCC/Pantheon preset's 400 ms).
    Fixed(SimDuration),
}

impl GeoDelay {
    pub fn one_way(&self) -> SimDuration {
        match *self {
            GeoDelay::Geometry {
                altitude_m,
                terminal_elevation_deg,
                gateway_elevation_deg,
                extra,
            } => {
                light_time(
                    slant_range_m(altitude_m, terminal_elevation_deg)
                        + slant_range_m(altitude_m, gateway_elevation_deg),
                ) + extra
            }
            GeoDelay::Fixed(d) => d,
        }
    }
}

pub struct Geo(ConstantLink);

impl Geo {
    pub fn new(c: &GeoConfig) -> Result<Self, String> {
        if c.rate_bps == 0 {
            return Err("rate: must be > 0".into());
        }
        if let GeoDelay::Geometry {
            terminal_elevation_deg: t,
            gateway_elevation_deg: g,
            altitude_m,
            ..
        } = c.delay
        {
            if !(0.0..=90.0).contains(&t) || !(0.0..=90.0).contains(&g) {
                return Err("elevation: must be in 0..90 degrees".into());
            }
            if altitude_m <= 0.0 {
                return Err("altitude: must be > 0".into());
            }
        }
        Ok(Geo(ConstantLink(LinkState {
            rate_bps: c.rate_bps,
            delay: c.delay.one_way(),
            loss: c.loss,
        })))
    }
}

impl LinkModel for Geo {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        self.0.state_at(now)
    }
    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        self.0.next_change(now)
    }
}

impl LinkBehaviour for Geo {}

#[cfg(test)]
mod tests {
    use super::*;

    fn rtt_ms(elevation: f64) -> f64 {
        let d = GeoDelay::Geometry {
            altitude_m: GEO_ALTITUDE_M,
            terminal_elevation_deg: elevation,
            gateway_elevation_deg: elevation,
            extra: SimDuration::ZERO,
        };
        2.0 * d.one_way().as_secs_f64() * 1e3
    }

    #[test]
    fn slant_range_at_zenith_is_the_altitude() {
        assert!((slant_range_m(GEO_ALTITUDE_M, 90.0) - GEO_ALTITUDE_M).abs() < 1e-3);
        assert!((slant_range_m(550_000.0, 90.0) - 550_000.0).abs() < 1e-6);
    }

    #[test]
    fn slant_range_at_the_horizon_is_the_tangent_length() {
        // ε = 0: right angle at the ground point, d = sqrt((R+h)² − R²).
        let h = GEO_ALTITUDE_M;
        let tangent = ((EARTH_RADIUS_M + h).powi(2) - EARTH_RADIUS_M.powi(2)).sqrt();
        assert!((slant_range_m(h, 0.0) - tangent).abs() < 1e-3);
    }

    #[test]
    fn propagation_rtt_spans_477_to_556_ms_by_elevation() {
        // satellite-facts.md §2.1 table: 477.5 (90°), 521.3 (25°), 541.5 (10°), 556.0 (0°).
        for (elev, want) in [(90.0, 477.5), (25.0, 521.3), (10.0, 541.5), (0.0, 556.0)] {
            let got = rtt_ms(elev);
            assert!(
                (got - want).abs() < 0.15,
                "{elev}°: {got:.2} ms, table {want}"
            );
        }
    }

    #[test]
    fn the_pcc_preset_keeps_its_fixed_delay() {
        let mut g = Geo::new(&GeoConfig {
            rate_bps: 42_000_000,
            delay: GeoDelay::Fixed(SimDuration::from_millis(400)),
            loss: 0.0074,
        })
        .unwrap();
        let s = g.state_at(SimTime::ZERO);
        assert_eq!(
            (s.rate_bps, s.delay, s.loss),
            (42_000_000, SimDuration::from_millis(400), 0.0074)
        );
        assert_eq!(g.next_change(SimTime::ZERO), None);
    }
}
