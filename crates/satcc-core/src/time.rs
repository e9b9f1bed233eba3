//! Simulated time: two integer-nanosecond newtypes.
//!
//! `SimTime` is an instant since the start of a run, `SimDuration` an interval. Both are
//! plain `u64` nanoseconds (584 years of range), so event ordering is exact and runs are
//! reproducible bit for bit. Floats appear only in formula helpers (`as_secs_f64`).
//! Model code never reads the OS clock: the current time is passed into every hook.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Nanoseconds per unit, for readable constructors.
const NS_PER_US: u64 = 1_000;
const NS_PER_MS: u64 = 1_000_000;
const NS_PER_S: u64 = 1_000_000_000;

/// An instant of simulated (or, in the emulator, monotonic real) time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(u64);

/// A non-negative interval of time. Its serde form is its nanoseconds (a resolved link
/// model's `*_ns` keys).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct SimDuration(u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Microseconds since the start, truncated (Linux's `tcp_mstamp` resolution).
    pub const fn as_micros(self) -> u64 {
        self.0 / NS_PER_US
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }
    /// Interval since `earlier`; zero if `earlier` is later (never panics).
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns)
    }
    /// Saturating at [`SimDuration::MAX`] (585 years: "never"): a timer computed from an
    /// absurd but accepted input (a minimum RTO or a delay near u64::MAX ns, the config
    /// fuzzer's) must not overflow.
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us.saturating_mul(NS_PER_US))
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms.saturating_mul(NS_PER_MS))
    }
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s.saturating_mul(NS_PER_S))
    }
    /// From float seconds, rounded to the nearest nanosecond (negative clamps to zero).
    pub fn from_secs_f64(s: f64) -> Self {
        SimDuration((s.max(0.0) * NS_PER_S as f64).round() as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub const fn as_micros(self) -> u64 {
        self.0 / NS_PER_US
    }
    pub const fn as_millis(self) -> u64 {
        self.0 / NS_PER_MS
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    pub fn saturating_sub(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(rhs.0))
    }
    pub fn mul_u64(self, k: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(k))
    }
    pub fn div_u64(self, k: u64) -> SimDuration {
        SimDuration(self.0 / k.max(1))
    }
    /// Time to serialise `bytes` at `rate_bps`, rounded up to a whole nanosecond.
    pub fn transmission(bytes: u64, rate_bps: u64) -> SimDuration {
        if rate_bps == 0 {
            return SimDuration::MAX;
        }
        // bit·ns in 64 bits while they fit (any packet), else in 128: the same exact ceiling.
        match bytes.checked_mul(8 * NS_PER_S) {
            Some(bits) => SimDuration(bits.div_ceil(rate_bps)),
            None => {
                let bits = bytes as u128 * 8 * NS_PER_S as u128;
                SimDuration(bits.div_ceil(rate_bps as u128).min(u64::MAX as u128) as u64)
            }
        }
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, rhs: SimDuration) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Panics in debug builds if `rhs` is later: time never goes backwards.
    fn sub(self, rhs: SimTime) -> SimDuration {
        debug_assert!(
            self.0 >= rhs.0,
            "time went backwards: {} < {}",
            self.0,
            rhs.0
        );
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}
impl Sub<SimDuration> for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(rhs.0))
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, rhs: SimDuration) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}
impl SubAssign for SimDuration {
    fn sub_assign(&mut self, rhs: SimDuration) {
        self.0 = self.0.saturating_sub(rhs.0);
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} s", self.as_secs_f64())
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ms", self.0 as f64 / NS_PER_MS as f64)
    }
}

/// A kernel jiffies clock: `CONFIG_HZ` ticks per second, counted from the start of the run
/// (Linux starts near −5 min; that matters only for the 32-bit wrap, and satcc's jiffies are
/// 64-bit and never wrap). The one place jiffies are converted: every conversion is exact
/// while its product fits in 64 bits and taken in 128 bits beyond, saturating at `u64::MAX`,
/// so no input overflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hz {
    hz: u64,
    /// Nanoseconds per jiffy when `hz` divides 10⁹ (then ⌊ns·hz/10⁹⌋ = ⌊ns/that⌋), else 0.
    ns_per_jiffy: u64,
}

impl Hz {
    /// `CONFIG_HZ=1000` (one jiffy = 1 ms): the common server build and the finest.
    pub const KERNEL: Hz = Hz::new(1000);

    /// A clock at `hz` ticks per second (at least 1: 0 is taken as 1).
    pub const fn new(hz: u64) -> Self {
        let hz = if hz == 0 { 1 } else { hz };
        let ns_per_jiffy = if NS_PER_S.is_multiple_of(hz) {
            NS_PER_S / hz
        } else {
            0
        };
        Hz { hz, ns_per_jiffy }
    }

    /// Ticks per second.
    pub const fn get(self) -> u64 {
        self.hz
    }

    /// `jiffies` at `t`: ⌊ns·hz / 10⁹⌋.
    #[inline]
    pub fn jiffies(self, t: SimTime) -> u64 {
        let ns = t.as_nanos();
        if let Some(j) = ns.checked_div(self.ns_per_jiffy) {
            return j;
        }
        match ns.checked_mul(self.hz) {
            Some(p) => p / NS_PER_S,
            None => saturate(u128::from(ns) * u128::from(self.hz) / u128::from(NS_PER_S)),
        }
    }

    /// `usecs_to_jiffies`: ⌈us·hz / 10⁶⌉ (the kernel rounds up).
    #[inline]
    pub fn usecs_to_jiffies(self, us: u64) -> u64 {
        match us.checked_mul(self.hz) {
            Some(p) => p.div_ceil(NS_PER_MS),
            None => {
                saturate((u128::from(us) * u128::from(self.hz)).div_ceil(u128::from(NS_PER_MS)))
            }
        }
    }

    /// `msecs_to_jiffies`: ⌈ms·hz / 1000⌉.
    #[inline]
    pub fn msecs_to_jiffies(self, ms: u64) -> u64 {
        match ms.checked_mul(self.hz) {
            Some(p) => p.div_ceil(1000),
            None => saturate((u128::from(ms) * u128::from(self.hz)).div_ceil(1000)),
        }
    }

    /// `jiffies_to_msecs`: ⌊j·1000 / hz⌋.
    #[inline]
    pub fn jiffies_to_msecs(self, j: u64) -> u64 {
        match j.checked_mul(1000) {
            Some(p) => p / self.hz,
            None => saturate(u128::from(j) * 1000 / u128::from(self.hz)),
        }
    }
}

fn saturate(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_from_whole_units_saturate_instead_of_overflowing() {
        assert_eq!(
            super::SimDuration::from_micros(u64::MAX),
            super::SimDuration::MAX
        );
        assert_eq!(
            super::SimDuration::from_millis(u64::MAX / 2),
            super::SimDuration::MAX
        );
        assert_eq!(
            super::SimDuration::from_secs(u64::MAX),
            super::SimDuration::MAX
        );
        assert_eq!(super::SimDuration::from_micros(7).as_nanos(), 7_000);
    }

    use super::*;

    #[test]
    fn transmission_time_of_a_1500_byte_packet_at_12_mbps_is_1_ms() {
        assert_eq!(
            SimDuration::transmission(1500, 12_000_000),
            SimDuration::from_millis(1)
        );
    }

    #[test]
    fn transmission_time_rounds_up() {
        // 1 byte at 3 bit/s = 2.666.. s
        assert_eq!(SimDuration::transmission(1, 3).as_nanos(), 2_666_666_667);
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(SimTime::MAX + SimDuration::from_secs(1), SimTime::MAX);
        assert_eq!(
            SimDuration::ZERO - SimDuration::from_secs(1),
            SimDuration::ZERO
        );
    }

    #[test]
    fn jiffies_match_the_128_bit_formula_at_every_hz_and_saturate_at_the_edges() {
        let exact = |ns: u64, hz: u64| (u128::from(ns) * u128::from(hz) / 1_000_000_000) as u64;
        for hz in [1u64, 100, 250, 300, 1000, 1024, 1_000_000] {
            let c = Hz::new(hz);
            let edge = u64::MAX / hz;
            for v in [
                0,
                1,
                999_999,
                1_000_000,
                2_999_999,
                edge - 1,
                edge,
                edge.saturating_add(1),
                u64::MAX,
            ] {
                assert_eq!(
                    c.jiffies(SimTime::from_nanos(v)),
                    exact(v, hz),
                    "ns {v} hz {hz}"
                );
                let us = (u128::from(v) * u128::from(hz)).div_ceil(1_000_000);
                assert_eq!(
                    c.usecs_to_jiffies(v) as u128,
                    us.min(u64::MAX as u128),
                    "us {v}"
                );
                let ms = (u128::from(v) * u128::from(hz)).div_ceil(1000);
                assert_eq!(
                    c.msecs_to_jiffies(v) as u128,
                    ms.min(u64::MAX as u128),
                    "ms {v}"
                );
                let back = u128::from(v) * 1000 / u128::from(hz);
                assert_eq!(
                    c.jiffies_to_msecs(v) as u128,
                    back.min(u64::MAX as u128),
                    "j {v}"
                );
            }
        }
        let k = Hz::KERNEL;
        assert_eq!(k.jiffies(SimTime::from_nanos(2_999_999)), 2);
        assert_eq!(k.usecs_to_jiffies(1), 1);
        assert_eq!(k.usecs_to_jiffies(1001), 2);
        assert_eq!(k.msecs_to_jiffies(20), 20);
        assert_eq!(Hz::new(0).get(), 1);
    }
}
