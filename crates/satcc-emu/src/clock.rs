//! The one seam between real time and the link models' time.
//!
//! Link models (`satcc_core::link::LinkModel`) and the emulated link directions take `SimTime`
//! and never read a clock themselves. The simulator feeds them virtual time; `satcc-linkd`
//! feeds them [`MonotonicClock`]: `CLOCK_MONOTONIC` nanoseconds since the emulator's origin.
//! Tests feed them a [`ManualClock`]. Nothing else in the crate reads the OS clock.
//!
//! Two origins exist. The *link clock* starts when the emulator starts and is used to schedule
//! frames (so frames exchanged during set-up, such as ARP, are carried with the model's state
//! at t = 0). The *run origin* is set when the runner says `start`: model time and the series
//! bins count from it, so the model's t = 0 is the scenario's t = 0.

use satcc_core::{SimDuration, SimTime};

/// A source of the current time.
pub trait Clock {
    fn now(&self) -> SimTime;
}

/// `CLOCK_MONOTONIC` (the clock Python's `time.monotonic_ns` reads, shared by every process)
/// relative to an origin.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    origin_ns: u64,
}

impl MonotonicClock {
    /// A clock whose zero is now.
    pub fn starting_now() -> Self {
        MonotonicClock {
            origin_ns: monotonic_ns(),
        }
    }
    /// Absolute `CLOCK_MONOTONIC` nanoseconds of this clock's zero.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }
    /// The clock's reading at an absolute `CLOCK_MONOTONIC` instant (zero if before the origin).
    pub fn at_abs(&self, abs_ns: u64) -> SimTime {
        SimTime::from_nanos(abs_ns.saturating_sub(self.origin_ns))
    }
    /// The absolute `CLOCK_MONOTONIC` instant of a reading.
    pub fn to_abs(&self, t: SimTime) -> u64 {
        self.origin_ns.saturating_add(t.as_nanos())
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> SimTime {
        self.at_abs(monotonic_ns())
    }
}

/// A clock that moves only when told to (tests).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: std::cell::Cell<u64>,
}

impl ManualClock {
    pub fn advance(&self, d: SimDuration) {
        self.now.set(self.now.get() + d.as_nanos());
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SimTime {
        SimTime::from_nanos(self.now.get())
    }
}

/// Absolute `CLOCK_MONOTONIC` in nanoseconds.
pub fn monotonic_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// Absolute `CLOCK_REALTIME` in nanoseconds (only to convert kernel receive timestamps).
pub fn realtime_ns() -> u64 {
    read_clock(libc::CLOCK_REALTIME)
}

fn read_clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime has no other preconditions.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_REALTIME - CLOCK_MONOTONIC`, sampled as the middle of a monotonic bracket so that a
/// realtime stamp converts to monotonic within a microsecond (refreshed once per bin, so an NTP
/// slew during a run cannot accumulate).
pub fn realtime_offset_ns() -> i128 {
    let a = monotonic_ns();
    let r = realtime_ns();
    let b = monotonic_ns();
    r as i128 - ((a as i128 + b as i128) / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_never_goes_backwards() {
        let c = MonotonicClock::starting_now();
        let mut last = c.now();
        for _ in 0..10_000 {
            let t = c.now();
            assert!(t >= last);
            last = t;
        }
    }

    #[test]
    fn absolute_and_relative_readings_round_trip() {
        let c = MonotonicClock::starting_now();
        let t = SimTime::from_nanos(123_456_789);
        assert_eq!(c.at_abs(c.to_abs(t)), t);
        assert_eq!(c.at_abs(c.origin_ns().saturating_sub(5)), SimTime::ZERO);
    }

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let c = ManualClock::default();
        assert_eq!(c.now(), SimTime::ZERO);
        c.advance(SimDuration::from_millis(3));
        assert_eq!(c.now(), SimTime::from_nanos(3_000_000));
    }
}
