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
//! | parameter | default | unit | source |
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

use serde::{Deserialize, Serialize};

use super::table::{
    choice, directional, duration, nominal_dir, number, pair, probability, rate, shared, Context,
    Reader, MS,
};
use super::{missing, Kind, LinkBehaviour, ModelSpec, Seeds};
use crate::dirspec::QueueSpec;
use crate::scenario::file::ModelDir;

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

pub struct Geo(ConstantLink);

impl Geo {
    pub fn new(c: &GeoSpec) -> Result<Self, String> {
        if c.rate_bps == 0 {
            return Err("rate: must be > 0".into());
        }
        if c.delay.is_none() {
            let elevations = [c.terminal_elevation_deg, c.gateway_elevation_deg];
            if elevations
                .iter()
                .any(|e| e.is_some_and(|e| !(0.0..=90.0).contains(&e)))
            {
                return Err("elevation: must be in 0..90 degrees".into());
            }
            if c.altitude_m.is_some_and(|a| a <= 0.0) {
                return Err("altitude: must be > 0".into());
            }
        }
        let delay = c
            .one_way()
            .map_err(|k| format!("{k}: missing (a fixed delay or the geometry)"))?;
        Ok(Geo(ConstantLink(LinkState {
            rate_bps: c.rate_bps,
            delay,
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

// -- GEO ------------------------------------------------------------------------------------
/// [D] a site near 50° N at the satellite's longitude.
const GEO_DEFAULT_ELEVATION_DEG: f64 = 30.0;
/// JerryLX/pantheon test_Satellite.sh [V].
const PCC_RATE_BPS: u64 = 42_000_000;
/// mm-delay 400 (800 ms RTT) [V].
const PCC_DELAY_NS: u64 = 400 * MS;
/// mm-loss uplink 0.0074 [V].
const PCC_LOSS: f64 = 0.0074;
/// droptail 1500 packets [V].
const PCC_QUEUE_PKTS: u64 = 1500;

/// A GEO hop: a fixed one-way delay (`delay_ns`, the PCC preset), or (`delay_ns` null) the
/// slant-range geometry of the other keys. Its own configuration: the behaviour reads no file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeoSpec {
    pub rate_bps: u64,
    pub loss: f64,
    #[serde(rename = "delay_ns")]
    pub delay: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub altitude_m: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_elevation_deg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_elevation_deg: Option<f64>,
    #[serde(
        default,
        rename = "extra_delay_ns",
        skip_serializing_if = "Option::is_none"
    )]
    pub extra_delay: Option<SimDuration>,
}

impl GeoSpec {
    /// The one-way delay: the fixed one, else the slant ranges at the two elevations plus the
    /// extra delay; `Err(key)`: the geometry lacks that key.
    pub fn one_way(&self) -> Result<SimDuration, &'static str> {
        if let Some(d) = self.delay {
            return Ok(d);
        }
        let altitude = self.altitude_m.ok_or("altitude_m")?;
        let terminal = self
            .terminal_elevation_deg
            .ok_or("terminal_elevation_deg")?;
        let gateway = self.gateway_elevation_deg.ok_or("gateway_elevation_deg")?;
        let extra = self.extra_delay.ok_or("extra_delay_ns")?;
        Ok(light_time(
            slant_range_m(altitude, terminal) + slant_range_m(altitude, gateway),
        ) + extra)
    }
}

impl Kind for GeoSpec {
    /// The resolved form itself: a GEO hop reads no file.
    type Config = GeoSpec;

    fn keys() -> Vec<String> {
        [
            shared(&["preset"]),
            directional(&["rate", "loss"]),
            shared(&["elevation", "gateway_elevation", "extra_delay"]),
        ]
        .concat()
    }

    fn read(r: &mut Reader, _: &Context) -> Option<[ModelDir; 2]> {
        geo(r)
    }

    /// The rate, the one-way delay (fixed, or the slant geometry) and the loss.
    fn nominal(&self) -> Option<LinkState> {
        Some(LinkState {
            rate_bps: self.rate_bps,
            delay: self.one_way().ok()?,
            loss: self.loss,
        })
    }

    fn config(&self, path: &str) -> Result<GeoSpec, String> {
        self.one_way().map_err(|k| missing(path, k))?;
        Ok(self.clone())
    }

    fn build(c: &GeoSpec, _: Seeds) -> Result<Box<dyn LinkBehaviour>, String> {
        Ok(Box::new(Geo::new(c)?))
    }
}

fn geo(r: &mut Reader) -> Option<[ModelDir; 2]> {
    let preset = r.opt("preset", &choice(&["pcc"]));
    let pcc = preset == Some("pcc");
    let rates = r.both("rate", &rate(), pcc.then_some(PCC_RATE_BPS));
    let loss_ab = r.get(
        "loss",
        &probability(),
        Some(if pcc { PCC_LOSS } else { 0.0 }),
    );
    let loss_ba = if r.has("loss_ba") {
        r.get("loss_ba", &probability(), None)
    } else if pcc {
        Some(0.0)
    } else {
        loss_ab
    };
    let degrees = || number(0.0, 90.0, "degrees");
    let elev = r.get("elevation", &degrees(), Some(GEO_DEFAULT_ELEVATION_DEG));
    let gw = r.get(
        "gateway_elevation",
        &degrees(),
        Some(GEO_DEFAULT_ELEVATION_DEG),
    );
    let extra = r.get("extra_delay", &duration(), Some(0));
    if pcc
        && ["elevation", "gateway_elevation", "extra_delay"]
            .iter()
            .any(|k| r.has(k))
    {
        r.fail(
            "preset",
            "expected either preset = 'pcc' (a fixed 400 ms) or elevations, found both",
        );
    }
    if !r.issues.is_empty() {
        return None;
    }
    let (elev, gw, extra) = (elev?, gw?, extra?);
    let mut out = Vec::new();
    for (rate, loss) in [(rates.0?, loss_ab?), (rates.1?, loss_ba?)] {
        if rate == 0 {
            r.fail("rate", "expected a positive rate, found 0 bit/s");
            continue;
        }
        if pcc {
            let model = ModelSpec::Geo(GeoSpec {
                rate_bps: rate,
                loss,
                delay: Some(SimDuration::from_nanos(PCC_DELAY_NS)),
                altitude_m: None,
                terminal_elevation_deg: None,
                gateway_elevation_deg: None,
                extra_delay: None,
            });
            out.push(nominal_dir(model, Some(QueueSpec::Packets(PCC_QUEUE_PKTS))));
        } else {
            let model = ModelSpec::Geo(GeoSpec {
                rate_bps: rate,
                loss,
                delay: None,
                altitude_m: Some(GEO_ALTITUDE_M),
                terminal_elevation_deg: Some(elev),
                gateway_elevation_deg: Some(gw),
                extra_delay: Some(SimDuration::from_nanos(extra)),
            });
            out.push(nominal_dir(model, None));
        }
    }
    pair(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rtt_ms(elevation: f64) -> f64 {
        let g = GeoSpec {
            rate_bps: 1,
            loss: 0.0,
            delay: None,
            altitude_m: Some(GEO_ALTITUDE_M),
            terminal_elevation_deg: Some(elevation),
            gateway_elevation_deg: Some(elevation),
            extra_delay: Some(SimDuration::ZERO),
        };
        2.0 * g.one_way().unwrap().as_secs_f64() * 1e3
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
        let mut g = Geo::new(&GeoSpec {
            rate_bps: 42_000_000,
            loss: 0.0074,
            delay: Some(SimDuration::from_millis(400)),
            altitude_m: None,
            terminal_elevation_deg: None,
            gateway_elevation_deg: None,
            extra_delay: None,
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
