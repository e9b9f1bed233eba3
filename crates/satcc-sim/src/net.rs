//! Topology: nodes joined by full-duplex links; each link direction is a queue (drop-tail, or drop-front)
//! feeding a serialiser at the link's rate, then a propagation delay and random loss.
//!
//! ```text
//!  enqueue ──► [queue: drop tail or front, optional CE marking] ──► serialiser (rate) ──► loss? ──► wire (delay) ──► next node
//! ```
//! Routes are shortest paths by propagation delay (ties: fewer hops, then lower link index),
//! computed once by satcc-core's `routing`, which the emulator and the model engine use too. The wire is FIFO: a delay that shrinks over time (time-varying models)
//! never lets a packet overtake one sent before it.
//!
//! Time-varying links (`satcc_core::models`): the serialiser asks the model when a packet
//! that starts now has left (`LinkBehaviour::transmit_end`), which honours rate changes
//! mid-packet exactly. During an outage (rate 0) queued packets wait, and the packet in
//! service is held, not lost: its transmission pauses and resumes when the link returns
//! (boundary loss bursts are the model's `loss`, not the serialiser's business). Loss and
//! delay are those in force when the packet leaves the serialiser.
//!
//! Host timing noise (the scenario's `host_noise_quantiles_ns`, `satcc_core::hostnoise`): a packet whose
//! destination is the direction's far node arrives later by a draw of that host's turnaround,
//! before the FIFO clamp, so packets into a host keep their order.

use satcc_core::direction::{Direction, LinkPacket};
use satcc_core::hostnoise::HostNoise;
use satcc_core::routing::Routing;
use satcc_core::scenario::Resolved;
use satcc_core::{Rng, SimDuration, SimTime};

use crate::error::ConfigError;
use crate::packet::{Hop, PacketStore};

/// Stream label base of the host-noise draws of packets arriving by a direction: turning the
/// noise on or off leaves the channel's draws as they were.
const HOST_NOISE_RNG_BASE: u64 = 0x4057_0000;

/// One direction of a link: satcc-core's [`Direction`] (the same code satcc-linkd runs),
/// with where it leads and the far node's host turnaround.
pub struct LinkDir {
    pub link: u32,
    /// "ab" or "ba".
    pub dir: &'static str,
    pub to_node: u32,
    pub core: Direction<Hop>,
    /// The far node's turnaround and its own stream, for packets addressed to that node
    /// (`None` without host noise, and for a far node no packet is addressed to: a router).
    host_noise: Option<(HostNoise, Rng)>,
    /// The run has host noise, but not this direction (its far node is no flow's end): no
    /// packet it carries may be addressed to that node (checked in debug builds).
    noise_withheld: bool,
    /// Whether the arrival of the packet at the head of the wire is in the event heap
    /// (world/mod.rs). The wire is FIFO, so only the head's arrival is: the number of pending
    /// events stays independent of the bandwidth-delay product. Each packet's event key is
    /// its arrival instant and the sequence number stamped on its hop when it left the
    /// serialiser, as a per-packet event would have had, so events pop in exactly the order
    /// they did when every packet had its own.
    pub(crate) arrival_scheduled: bool,
    /// When this direction's wake-up event (world/mod.rs `Ev::TxDone`) is due, if one is pending:
    /// it has one only while its wire is empty and a packet is in service.
    pub(crate) wake_at: Option<SimTime>,
}

impl LinkPacket for Hop {
    fn size_bytes(&self) -> u64 {
        self.wire_bytes as u64
    }
    fn mark_ce(&mut self) -> bool {
        Hop::mark_ce(self)
    }
}

impl LinkDir {
    /// Offer a packet at `now` (every transmission due by now finished first); a packet the
    /// full queue drops (the arrival, or the oldest queued under drop-front) is freed.
    #[inline(always)]
    pub fn enqueue(&mut self, hop: Hop, now: SimTime, store: &mut PacketStore) {
        if let Err(hop) = self.core.offer_usual(hop, now) {
            self.enqueue_rest(hop, now, store);
        }
    }

    /// [`enqueue`](Self::enqueue) for what `Direction::offer_usual` leaves (a drop, a growing
    /// queue, a new transmission time, a link that is not plain): out of line, so the usual
    /// cases save and restore no registers.
    #[inline(never)]
    fn enqueue_rest(&mut self, hop: Hop, now: SimTime, store: &mut PacketStore) {
        self.core.offer(hop, now, |hop| store.drop(hop));
    }

    /// The serialiser finished at `now`: the arrival time if the packet survived, its hop then
    /// stamped with `seq`, its arrival event's sequence number (the next queued packet is in
    /// service). A packet addressed to the far node arrives later by a draw of that host's
    /// turnaround.
    #[inline(always)]
    pub fn finish(&mut self, now: SimTime, seq: u64, store: &mut PacketStore) -> Option<SimTime> {
        let (to_node, withheld) = (self.to_node, self.noise_withheld);
        let stamp = |hop: &mut Hop| {
            debug_assert!(
                !(withheld && hop.dst_node == to_node),
                "a packet to node {to_node}, whose turnaround was withheld"
            );
            hop.seq = seq;
            SimDuration::ZERO
        };
        if self.host_noise.is_none() {
            // no host turnaround here (most runs): the packet is only stamped
            return match self.core.complete_usual(now, stamp) {
                Some(at) => Some(at),
                None => self.finish_rest(now, seq, store),
            };
        }
        self.finish_noisy(now, seq, store)
    }

    /// [`finish`](Self::finish) without host noise for what `Direction::complete_usual`
    /// leaves (a growing wire, a new transmission time, a link that is not plain): out of
    /// line, so the usual case saves and restores no registers.
    #[inline(never)]
    fn finish_rest(&mut self, now: SimTime, seq: u64, store: &mut PacketStore) -> Option<SimTime> {
        let (to_node, withheld) = (self.to_node, self.noise_withheld);
        let stamp = |hop: &mut Hop| {
            debug_assert!(
                !(withheld && hop.dst_node == to_node),
                "a packet to node {to_node}, whose turnaround was withheld"
            );
            hop.seq = seq;
            SimDuration::ZERO
        };
        self.core.complete(now, stamp, |hop| store.drop(hop))
    }

    /// [`finish`](Self::finish) with the far node's host turnaround drawn for a packet
    /// addressed to it (out of line: only runs with host noise take it). The usual case
    /// (`Direction::complete_usual`: a plain lossless link, room on the wire) first, as
    /// without noise; it draws only for a packet it completes, so the draws are those of
    /// `complete`, which takes the rest.
    #[inline(never)]
    fn finish_noisy(&mut self, now: SimTime, seq: u64, store: &mut PacketStore) -> Option<SimTime> {
        let to_node = self.to_node;
        let (n, rng) = self.host_noise.as_mut().expect("host noise");
        let mut noisy = |hop: &mut Hop| {
            hop.seq = seq;
            if hop.dst_node == to_node {
                n.sample(hop.to_receiver(), rng)
            } else {
                SimDuration::ZERO
            }
        };
        if let Some(at) = self.core.complete_usual(now, &mut noisy) {
            return Some(at);
        }
        self.core.complete(now, noisy, |hop| store.drop(hop))
    }

    /// Take the packet at the head of the wire (its arrival event fired).
    /// An event will bring this direction up to date (its wire's head arrival or its
    /// wake-up): `World::wake` has nothing to schedule.
    #[inline(always)]
    pub fn waits(&self) -> bool {
        self.arrival_scheduled || self.wake_at.is_some()
    }

    pub fn arrive(&mut self) -> Hop {
        self.core.arrive()
    }
}

/// Link directions and the routes between nodes (satcc-core `routing`, shared with the
/// emulator's topology and the model engine).
pub struct Network {
    pub dirs: Vec<LinkDir>,
    routing: Routing,
}

impl Network {
    /// The directions of a resolved scenario (each as `Resolved::direction` gives it, the
    /// resolver's queue limits in place), every host's turnaround `host_noise`, and the
    /// resolver's routes. Only a direction into a flow's end (a node packets are addressed
    /// to: a flow's source or destination, TCP's and UDP's peers) draws turnarounds: into a
    /// router it would draw none, and it finishes packets without the noisy path's call
    /// (the draws of the others are their own streams', so they do not move).
    pub fn build(
        r: &Resolved,
        host_noise: Option<&HostNoise>,
        routing: Routing,
    ) -> Result<Network, ConfigError> {
        let seed = r.scenario.seed;
        let mut ends = vec![false; r.scenario.nodes.len()];
        for f in &r.scenario.flows {
            ends[f.src] = true;
            ends[f.dst] = true;
        }
        let host_noise = host_noise.filter(|n| !n.is_zero());
        let mut dirs = Vec::with_capacity(r.scenario.links.len() * 2);
        for (i, l) in r.scenario.links.iter().enumerate() {
            for (name, to) in [("ab", l.b), ("ba", l.a)] {
                let label = dirs.len() as u64;
                let view = r.direction(dirs.len())?;
                // resolved: a rate of 0 would be an outage for good, a loss outside [0, 1] a
                // certainty
                debug_assert!(
                    view.nominal.rate_bps > 0 && (0.0..=1.0).contains(&view.nominal.loss)
                );
                let model = view.behaviour(seed)?;
                dirs.push(LinkDir {
                    link: i as u32,
                    dir: name,
                    to_node: to as u32,
                    core: Direction::new(
                        model,
                        view.config,
                        view.nominal,
                        satcc_core::direction::stream(seed, label),
                    ),
                    host_noise: host_noise
                        .filter(|_| ends[to])
                        .map(|n| (n.clone(), Rng::derive(seed, HOST_NOISE_RNG_BASE + label))),
                    noise_withheld: host_noise.is_some() && !ends[to],
                    arrival_scheduled: false,
                    wake_at: None,
                });
            }
        }
        Ok(Network { dirs, routing })
    }

    /// Index of the link direction to take from `node` towards `dst`.
    #[inline]
    pub fn next_hop(&self, node: u32, dst: u32) -> Option<u32> {
        self.routing.next_hop(node as usize, dst as usize)
    }

    pub fn connected(&self, a: usize, b: usize) -> bool {
        self.routing.connected(a, b)
    }

    pub fn base_delay(&self, a: usize, b: usize) -> SimDuration {
        self.routing.base_delay(a, b)
    }

    /// Link directions along the route from `a` to `b`.
    pub fn path(&self, a: usize, b: usize) -> Vec<u32> {
        self.routing.path(a, b)
    }

    /// Narrowest rate along the route from `a` to `b`.
    pub fn bottleneck_bps(&mut self, a: usize, b: usize, now: SimTime) -> u64 {
        self.path(a, b)
            .iter()
            .map(|&d| {
                self.dirs[d as usize]
                    .core
                    .model_mut()
                    .state_at(now)
                    .rate_bps
            })
            .min()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::dirspec::{Direction as DirSpec, QueueSpec};
    use satcc_core::scenario::{Flow, Link, Scenario};

    #[test]
    fn only_the_directions_into_a_flows_end_draw_turnarounds() {
        // s (0) -- r (1) -- d (2), one flow s -> d: the directions into the router draw
        // nothing (no packet is addressed to it), those into s and d draw; without noise
        // none does and none is withheld
        let d = DirSpec::new(100_000_000, 1_000_000, 0.0, QueueSpec::Packets(100));
        let links = vec![Link::symmetric(0, 1, d.clone()), Link::symmetric(1, 2, d)];
        let flows = vec![Flow::bulk(0, 0, 2, "reno")];
        let s = Scenario::new("t", &["s", "r", "d"], links, flows, 1_000_000_000);
        let r = s.resolve().unwrap();
        let net = Network::build(&r, Some(&HostNoise::kernel()), r.routing.clone()).unwrap();
        let drawn: Vec<(u32, bool, bool)> = net
            .dirs
            .iter()
            .map(|d| (d.to_node, d.host_noise.is_some(), d.noise_withheld))
            .collect();
        assert_eq!(
            drawn,
            [
                (1, false, true),
                (0, true, false),
                (2, true, false),
                (1, false, true)
            ]
        );
        let quiet = Network::build(&r, None, r.routing.clone()).unwrap();
        assert!(quiet
            .dirs
            .iter()
            .all(|d| d.host_noise.is_none() && !d.noise_withheld));
    }
}
