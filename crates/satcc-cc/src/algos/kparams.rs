//! Kernel-flavoured helpers shared by the algorithm files: the jiffies clock some
//! algorithms count in.

use satcc_core::SimTime;

/// Linux `HZ` assumed wherever an algorithm counts in jiffies (BIC, H-TCP, Westwood+).
/// The kernel's value is a build option (100, 250, 300 or 1000); 1000 (one jiffy = 1 ms)
/// is the common desktop/server choice and the finest, so the integer rounding of those
/// algorithms matches a `CONFIG_HZ=1000` kernel.
pub(crate) const HZ: u64 = 1000;

/// `jiffies` at `now` (the simulation starts at jiffy 0; Linux starts near −5 min, which
/// only matters for wrap-around, and satcc's counters do not wrap).
pub(crate) fn jiffies(now: SimTime) -> u64 {
    now.as_nanos() / (1_000_000_000 / HZ)
}

/// `usecs_to_jiffies`: rounds up, as the kernel does.
pub(crate) fn usecs_to_jiffies(us: u64) -> u64 {
    us.div_ceil(1_000_000 / HZ)
}

/// `msecs_to_jiffies`.
pub(crate) fn msecs_to_jiffies(ms: u64) -> u64 {
    (ms * HZ).div_ceil(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffies_are_milliseconds_and_usecs_round_up() {
        assert_eq!(jiffies(SimTime::from_nanos(2_999_999)), 2);
        assert_eq!(usecs_to_jiffies(1), 1);
        assert_eq!(usecs_to_jiffies(1000), 1);
        assert_eq!(usecs_to_jiffies(1001), 2);
        assert_eq!(msecs_to_jiffies(20), 20);
    }
}
