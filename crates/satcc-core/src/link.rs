//! Link behaviour: what one direction of a link does to packets, as a function of time.
//!
//! A link direction is a serialiser at `rate_bps`, a propagation `delay`, an independent
//! random `loss` probability and a drop-tail queue (optionally ECN-marking above a
//! threshold). Time-varying behaviours (Starlink epochs, traces, constellation geometry)
//! implement [`LinkModel`]; the simulator asks the model at every packet and re-asks it at
//! the change points the model announces, and the real-time emulator does the same with a
//! real clock, so both engines apply one model.

use crate::time::{SimDuration, SimTime};

/// The state of one link direction over an interval of time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkState {
    /// Serialisation rate; 0 means the link carries nothing (an outage).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: SimDuration,
    /// Probability that a packet is lost on the wire, independently of others.
    pub loss: f64,
}

/// A link direction whose state may change over time.
pub trait LinkModel: Send {
    /// The state in force at `now`.
    fn state_at(&mut self, now: SimTime) -> LinkState;
    /// The first instant strictly after `now` at which the state changes; `None` if never.
    fn next_change(&self, now: SimTime) -> Option<SimTime>;
}

/// A link whose rate, delay and loss never change.
#[derive(Clone, Debug)]
pub struct ConstantLink(pub LinkState);

impl LinkModel for ConstantLink {
    fn state_at(&mut self, _now: SimTime) -> LinkState {
        self.0
    }
    fn next_change(&self, _now: SimTime) -> Option<SimTime> {
        None
    }
}
