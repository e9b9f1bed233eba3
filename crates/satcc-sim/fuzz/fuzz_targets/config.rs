//! Any scenario is refused by the resolver or `World::new` with an error or runs to its end:
//! never a panic (a panic in the bindings is an internal error for the user). The bytes become
//! a scenario through the generator the stable randomized test uses
//! (tests/support/config_from_bytes.rs), resolved as every scenario is.
#![no_main]

#[path = "../../tests/support/config_from_bytes.rs"]
mod config_from_bytes;

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use satcc_sim::world::World;

/// Wall-time budget per input: a valid config may simply be a lot of work (10 Tbit/s links,
/// tiny segments); the target looks for panics, so it stops such a run early (the progress
/// callback's `false`) instead of letting libFuzzer report a timeout. The harness reads the
/// clock; the simulator does not.
const BUDGET: Duration = Duration::from_secs(2);

fuzz_target!(|data: &[u8]| {
    let cfg = config_from_bytes::config(data);
    let Ok(r) = cfg.resolve() else { return };
    if let Ok(mut world) = World::new(&r) {
        if world.reserve_series().is_ok() {
            let start = Instant::now();
            let out = world.run(&mut |_| start.elapsed() < BUDGET);
            assert_eq!(out.flows.len(), cfg.flows.len());
        }
    }
});
