//! Kernel-flavoured constants shared by the algorithm files: the jiffies clock some
//! algorithms count in.

use satcc_core::Hz;

/// Linux `HZ` assumed wherever an algorithm counts in jiffies (BIC, H-TCP, Westwood+).
/// The kernel's value is a build option (100, 250, 300 or 1000); 1000 (one jiffy = 1 ms)
/// is the common desktop/server choice and the finest, so the integer rounding of those
/// algorithms matches a `CONFIG_HZ=1000` kernel. Conversions: satcc-core's [`Hz`].
pub(crate) const CLOCK: Hz = Hz::KERNEL;
pub(crate) const HZ: u64 = CLOCK.get();
