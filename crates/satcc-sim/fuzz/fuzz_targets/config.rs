//! Any config is refused by `World::new` with an error or runs to its end: never a panic
//! (issue 16). The bytes become a SimConfig through the generator the stable randomized
//! test uses (tests/support/config_from_bytes.rs).
#![no_main]

#[path = "../../tests/support/config_from_bytes.rs"]
mod config_from_bytes;

use libfuzzer_sys::fuzz_target;
use satcc_sim::world::World;

fuzz_target!(|data: &[u8]| {
    let cfg = config_from_bytes::config(data);
    if let Ok(mut world) = World::new(&cfg) {
        if world.reserve_series().is_ok() {
            let out = world.run(&mut |_| true);
            assert_eq!(out.flows.len(), cfg.flows.len());
        }
    }
});
