//! satcc-sim: a deterministic packet-level discrete-event simulator whose TCP follows the
//! Linux stack. See the README's "Simulator" section for what is modelled and how it
//! deviates from Linux; each module's header has the details.
//!
//! The simulator reads the resolved scenario (`satcc_core::scenario::Resolved`, the one form
//! every engine takes): [`world::World::new`] builds from it, [`run`] runs it.
//!
//! - [`error`]: what can still fail after the resolver (an algorithm's parameters, memory).
//! - [`net`]: links (queue → serialiser → loss → propagation) and routing.
//! - [`tcp`]: sender (`tcp_ack`, RACK, PRR, RTO, TLP, pacing, rate sampling), receiver.
//! - [`udp`]: UDP constant-bit-rate flows (iperf3 -u): throughput, loss, RFC 3550 jitter.
//! - [`events`]: the event queue (a min-heap keyed by time and sequence).
//! - [`world`]: the event loop and result collection.

pub mod capture;
pub mod error;
pub mod events;
pub mod net;
pub mod packet;
pub mod tcp;
pub mod trace;
pub mod udp;
pub mod world;

pub use error::ConfigError;
/// A direction's queue as written (satcc-core's `dirspec`; "N BDP" sized along the routes).
pub use satcc_core::dirspec::QueueSpec;
pub use world::{run, SimOutput};
