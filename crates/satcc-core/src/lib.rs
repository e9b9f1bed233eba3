//! satcc-core: what every engine shares and nothing that does I/O (one exception: the
//! Mahimahi trace reader, `models::trace_file`, so both engines read a trace the same way).
//!
//! - [`time`]: `SimTime` / `SimDuration`, integer nanoseconds.
//! - [`rng`]: the seeded random stream handed to every stochastic model.
//! - [`link`]: link behaviour (rate, delay, loss, queue) as functions of time, driven by the
//!   simulator's virtual clock or the emulator's real one.
//! - [`models`]: time-varying link behaviours (Starlink epochs, GEO, LFN, traces, constellation
//!   geometry) behind [`models::LinkBehaviour`].
//! - [`direction`]: one link direction (queue, serialiser, loss, jitter, ECN, FIFO wire), driven
//!   by the simulator's event loop and by satcc-linkd's real clock alike.
//! - [`ring`]: the power-of-two FIFO ring of a direction's queue and wire.
//! - [`hostnoise`]: how long a real host takes to answer a packet (the simulator's default
//!   timing noise, measured on the kernel).
//! - [`columns`]: every result column declared once (name, type, unit, null, writer, meaning).
//! - [`record`]: result records every engine produces, checked against [`columns`].
//! - [`routing`]: routes and "N BDP" queue sizes, computed once for every engine.
//! - [`scenario`]: the resolved scenario (serde), and the one resolver every engine reads.
//! - [`dirspec`]: a resolved link direction (serde) and its checks.
//! - [`mem`]: the global allocator every satcc artifact installs (out of memory: one line,
//!   exit 1) and `fallible` for `try_reserve`.

pub mod columns;
pub mod direction;
pub mod dirspec;
pub mod hostnoise;
pub mod link;
pub mod mem;
pub mod models;
pub mod record;
pub mod ring;
pub mod rng;
pub mod routing;
pub mod scenario;
pub mod time;
pub mod units;

pub use rng::Rng;
pub use time::{Hz, SimDuration, SimTime};
