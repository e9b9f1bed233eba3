//! One direction of an emulated link, in real time: satcc-core's [`core::Direction`] (the
//! very code the simulator's event loop drives) with frames instead of simulated packets, a
//! real clock's instants, and the run's time origin.
//!
//! ```text
//!  offer(t) ──► [queue: drop tail or front, CE marking ≥ K] ──► serialiser (rate at start) ──► loss? ──► wire (delay + jitter) ──► take_due(now)
//! ```
//! Everything is a function of the times handed in (no clock, no I/O), so the same code runs
//! under a manual clock in the tests below and under `CLOCK_MONOTONIC` in `satcc-linkd`.
//! Link-clock instants are mapped to model time (the run's t = 0 is `set_origin`'s instant)
//! by [`OriginShift`], a wrapper around the link behaviour, so the core direction sees one
//! consistent clock and the model sees the simulator's.
//!
//! Frame size for rate and byte limits is the IP packet (the Ethernet frame less its 14-byte
//! header), as the simulator counts `wire_bytes`.
//!
//! Differences from the simulator's use of the same direction:
//! 1. Arrival times come from the kernel's receive timestamp and are made non-decreasing per
//!    direction (a frame stamped before the previous one is treated as arriving with it).
//! 2. Before the run's origin is set (`set_origin`), the model is asked at its t = 0 (frames
//!    during set-up, such as ARP, see the first instant's link).
//! 3. No host turnaround is added: the hosts are real.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use satcc_core::direction::{self as core, Counters, LinkPacket};
use satcc_core::dirspec;
use satcc_core::link::{LinkModel, LinkState};
use satcc_core::models::{LinkBehaviour, MeanState};
use satcc_core::{Rng, SimTime};

use crate::ecn;

pub use satcc_core::direction::Offered;

/// Bytes of the Ethernet header in front of the IP packet (no VLAN tag on our veths).
pub const ETH_HEADER: usize = 14;

/// A frame and the buffer holding it (`buf[..len]`); the buffer returns to the pool on delivery.
#[derive(Debug, PartialEq)]
pub struct Frame {
    pub buf: Vec<u8>,
    pub len: usize,
}

impl Frame {
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    /// The size the link charges: the IP packet (see the module header).
    pub fn ip_bytes(&self) -> u64 {
        self.len.saturating_sub(ETH_HEADER).max(1) as u64
    }
}

impl LinkPacket for Frame {
    fn size_bytes(&self) -> u64 {
        self.ip_bytes()
    }
    fn mark_ce(&mut self) -> bool {
        ecn::mark_ce(&mut self.buf[..self.len])
    }
}

/// "Not set yet" for the shared origin.
const NO_ORIGIN: u64 = u64::MAX;

/// A link behaviour seen on the link clock: instants are shifted by the run's origin before
/// the model sees them (model time 0 before the origin is set or before it).
pub struct OriginShift {
    inner: Box<dyn LinkBehaviour>,
    origin: Arc<AtomicU64>,
}

impl OriginShift {
    fn model_time(&self, t: SimTime) -> SimTime {
        match self.origin.load(Ordering::Relaxed) {
            NO_ORIGIN => SimTime::ZERO,
            o => SimTime::from_nanos(t.as_nanos().saturating_sub(o)),
        }
    }
}

impl LinkModel for OriginShift {
    fn state_at(&mut self, now: SimTime) -> LinkState {
        let mt = self.model_time(now);
        self.inner.state_at(mt)
    }
    fn next_change(&self, now: SimTime) -> Option<SimTime> {
        let mt = self.model_time(now);
        let c = self.inner.next_change(mt)?;
        Some(now + (c - mt))
    }
}

impl LinkBehaviour for OriginShift {
    fn transmit_end(&mut self, start: SimTime, bytes: u64) -> Option<SimTime> {
        let m0 = self.model_time(start);
        let end = self.inner.transmit_end(m0, bytes)?;
        Some(start + (end - m0))
    }
    fn mean_over(&mut self, from: SimTime, to: SimTime) -> MeanState {
        let (a, b) = (self.model_time(from), self.model_time(to));
        self.inner.mean_over(a, b)
    }
    fn extra_drop(&mut self, now: SimTime, bytes: u64) -> bool {
        let mt = self.model_time(now);
        self.inner.extra_drop(mt, bytes)
    }
}

/// One direction of an emulated link.
pub struct Direction {
    core: core::Direction<Frame>,
    origin: Arc<AtomicU64>,
    /// Latest instant the serialiser has been brought up to (arrivals never go before it).
    clock_floor: SimTime,
    /// Counters of the bins already ended.
    total: Counters,
}

impl Direction {
    /// `cfg`: the resolved direction as `scenario::ResolvedLinks::direction` gives it (its
    /// queue sized).
    pub fn new(model: Box<dyn LinkBehaviour>, cfg: dirspec::Direction, rng: Rng) -> Self {
        let origin = Arc::new(AtomicU64::new(NO_ORIGIN));
        let mut shifted = OriginShift {
            inner: model,
            origin: origin.clone(),
        };
        let nominal = shifted.state_at(SimTime::ZERO);
        Direction {
            core: core::Direction::new(Box::new(shifted), cfg, nominal, rng),
            origin,
            clock_floor: SimTime::ZERO,
            total: Counters::default(),
        }
    }

    /// Set the run's origin: model time is link time minus `origin` from now on.
    pub fn set_origin(&mut self, origin: SimTime) {
        self.origin.store(origin.as_nanos(), Ordering::Relaxed);
        // A frame held by an outage before the start: its end is now known in run time.
        self.core.retime_held(origin);
    }

    /// The model's state at link-clock instant `t`.
    pub fn state_at(&mut self, t: SimTime) -> LinkState {
        self.core.model_mut().state_at(t)
    }

    /// The model's time-weighted mean state over `[from, to)` (link clock), as the simulator
    /// reports each bin's capacity and delay.
    pub fn mean_over(&mut self, from: SimTime, to: SimTime) -> MeanState {
        self.core.model_mut().mean_over(from, to)
    }

    /// A frame arrived at `t` (link clock); a frame the full queue drops goes to `lost`.
    pub fn offer(&mut self, t: SimTime, frame: Frame, lost: impl FnMut(Frame)) -> Offered {
        let t = t.max(self.clock_floor);
        self.run_serialiser(t);
        self.core.offer(frame, t, lost)
    }

    /// Bring the serialiser up to `now` and move every frame due by `now` into `out`.
    pub fn take_due(&mut self, now: SimTime, out: &mut Vec<(SimTime, Frame)>) {
        self.run_serialiser(now);
        while let Some(at) = self.core.next_arrival().filter(|at| *at <= now) {
            out.push((at, self.core.arrive()));
        }
    }

    /// The next instant something happens here (a transmission ends, a frame is due), if any.
    pub fn next_due(&self) -> Option<SimTime> {
        [self.core.service_done(), self.core.next_arrival()]
            .into_iter()
            .flatten()
            .min()
    }

    fn run_serialiser(&mut self, t: SimTime) {
        self.clock_floor = self.clock_floor.max(t);
        self.core.serve_until(t);
    }

    /// Queue occupancy now (frames waiting, not the one in service), packets and bytes.
    pub fn queue_len(&self) -> (u64, u64) {
        self.core.queue_len()
    }

    /// The counters of the bin that just ended; a new bin starts.
    pub fn end_bin(&mut self) -> Counters {
        let c = self.core.take_counters();
        self.total.add(&c);
        c
    }

    /// Counters of the whole run so far (bins already ended plus the current one).
    pub fn totals(&self) -> Counters {
        let mut t = self.total;
        t.add(&self.core.counters());
        t
    }

    /// Frames still held (queued, in service, on the wire).
    pub fn held(&self) -> usize {
        self.core.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::dirspec::QueueSpec;
    use satcc_core::link::ConstantLink;
    use satcc_core::scenario::file::{Nanos, Pkts};
    use satcc_core::scenario::switches::Key;
    use satcc_core::SimDuration;

    const MS: u64 = 1_000_000;

    /// A direction with queue `limit`, ECN threshold `ecn` and `jitter` (its rate, delay and
    /// loss are the model's).
    fn cfg(limit: QueueSpec, ecn: Option<u64>, jitter: SimDuration) -> dirspec::Direction {
        let mut d = dirspec::Direction::new(0, 0, 0.0, limit);
        d.ecn_threshold = Key::new(ecn.map(Pkts));
        d.jitter = Key::new(Nanos(jitter.as_nanos()));
        d
    }

    fn frame(ip_len: usize) -> Frame {
        let mut buf = vec![0u8; ip_len + ETH_HEADER];
        buf[12] = 0x08; // IPv4 ethertype
        buf[14] = 0x45;
        buf[15] = 0x02; // ECT(0)
        Frame {
            len: buf.len(),
            buf,
        }
    }

    fn dir(
        rate_bps: u64,
        delay_ms: u64,
        loss: f64,
        limit: QueueSpec,
        ecn: Option<u64>,
    ) -> Direction {
        let state = LinkState {
            rate_bps,
            delay: SimDuration::from_millis(delay_ms),
            loss,
        };
        let mut d = Direction::new(
            Box::new(ConstantLink(state)),
            cfg(limit, ecn, SimDuration::ZERO),
            Rng::new(1),
        );
        d.set_origin(SimTime::ZERO);
        d
    }

    fn drain(d: &mut Direction, now: SimTime) -> Vec<SimTime> {
        let mut out = Vec::new();
        d.take_due(now, &mut out);
        out.into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn a_lone_frame_arrives_after_serialisation_plus_delay() {
        // 1500 B at 12 Mbit/s = 1 ms, then 10 ms of propagation.
        let mut d = dir(12_000_000, 10, 0.0, QueueSpec::Packets(10), None);
        d.offer(SimTime::ZERO, frame(1500), drop);
        assert_eq!(d.next_due(), Some(SimTime::from_nanos(MS)));
        assert!(drain(&mut d, SimTime::from_nanos(10 * MS)).is_empty());
        assert_eq!(
            drain(&mut d, SimTime::from_nanos(11 * MS)),
            vec![SimTime::from_nanos(11 * MS)]
        );
    }

    #[test]
    fn a_tick_served_link_releases_frames_on_the_tick_behind_the_origin_shift() {
        // regression: satcc-linkd wraps the constant link (OriginShift), and the tick service
        // read the rate from the bare constant link only: every frame was held forever.
        // 1500 B at 36 Mbit/s = 1/3 ms: three frames per 1 ms tick of the link's clock.
        let state = LinkState {
            rate_bps: 36_000_000,
            delay: SimDuration::ZERO,
            loss: 0.0,
        };
        let mut c = cfg(QueueSpec::Packets(10), None, SimDuration::ZERO);
        c.tick_ns = Some(MS);
        let mut d = Direction::new(Box::new(ConstantLink(state)), c, Rng::new(1));
        d.set_origin(SimTime::from_nanos(MS / 2));
        for _ in 0..4 {
            d.offer(SimTime::from_nanos(MS / 2 + MS / 10), frame(1500), drop);
        }
        let due = drain(&mut d, SimTime::from_nanos(10 * MS));
        assert_eq!(due.len(), 4, "every frame leaves");
        let first = due[0];
        assert!(due[..3].iter().all(|&t| t == first), "{due:?}");
        assert_eq!(due[3] - first, SimDuration::from_millis(1), "{due:?}");
    }

    #[test]
    fn back_to_back_frames_are_spaced_by_their_serialisation_time() {
        let mut d = dir(12_000_000, 0, 0.0, QueueSpec::Packets(10), None);
        for _ in 0..3 {
            d.offer(SimTime::ZERO, frame(1500), drop);
        }
        let due = drain(&mut d, SimTime::from_nanos(100 * MS));
        assert_eq!(
            due,
            vec![1, 2, 3]
                .into_iter()
                .map(|k| SimTime::from_nanos(k * MS))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_full_queue_drops_the_arriving_frame() {
        // one in service + two queued; the fourth is dropped
        let mut d = dir(12_000_000, 0, 0.0, QueueSpec::Packets(2), None);
        for _ in 0..3 {
            assert!(matches!(
                d.offer(SimTime::ZERO, frame(1500), drop),
                Offered::Started(_) | Offered::Queued
            ));
        }
        assert!(matches!(
            d.offer(SimTime::ZERO, frame(1500), drop),
            Offered::Dropped
        ));
        assert_eq!(d.queue_len(), (2, 3000));
        assert_eq!(d.end_bin().drops_queue, 1);
    }

    #[test]
    fn ce_is_marked_at_or_above_the_threshold_only() {
        let mut d = dir(12_000_000, 0, 0.0, QueueSpec::Packets(100), Some(2));
        for _ in 0..5 {
            d.offer(SimTime::ZERO, frame(100), drop);
        }
        // in service, queue 0 and 1 unmarked, queue 2 and 3 marked
        assert_eq!(d.end_bin().ecn_marks, 2);
    }

    #[test]
    fn random_loss_drops_close_to_the_configured_fraction() {
        let mut d = dir(1_000_000_000, 0, 0.1, QueueSpec::Packets(100_000), None);
        let n = 20_000;
        for _ in 0..n {
            d.offer(SimTime::ZERO, frame(100), drop);
        }
        let got = drain(&mut d, SimTime::from_nanos(1000 * MS)).len() as f64;
        let lost = n as f64 - got;
        // mean 2000, sd ≈ 42: 5 sd band
        assert!((lost - 2000.0).abs() < 212.0, "lost {lost}");
    }

    #[test]
    fn arrivals_before_the_serialiser_floor_are_treated_as_now() {
        let mut d = dir(12_000_000, 0, 0.0, QueueSpec::Packets(10), None);
        d.take_due(SimTime::from_nanos(5 * MS), &mut Vec::new());
        d.offer(SimTime::from_nanos(MS), frame(1500), drop);
        assert_eq!(d.next_due(), Some(SimTime::from_nanos(6 * MS)));
    }

    /// A model with an outage from 10 ms to 20 ms, rate 12 Mbit/s otherwise.
    struct Outage;
    impl LinkModel for Outage {
        fn state_at(&mut self, now: SimTime) -> LinkState {
            let ms = now.as_nanos() / MS;
            let rate = if (10..20).contains(&ms) {
                0
            } else {
                12_000_000
            };
            LinkState {
                rate_bps: rate,
                delay: SimDuration::ZERO,
                loss: 0.0,
            }
        }
        fn next_change(&self, now: SimTime) -> Option<SimTime> {
            let ms = now.as_nanos() / MS;
            if ms < 10 {
                Some(SimTime::from_nanos(10 * MS))
            } else if ms < 20 {
                Some(SimTime::from_nanos(20 * MS))
            } else {
                None
            }
        }
    }
    impl LinkBehaviour for Outage {}

    #[test]
    fn an_outage_holds_the_frame_in_service_until_the_model_restores_the_rate() {
        let mut d = Direction::new(
            Box::new(Outage),
            cfg(QueueSpec::Packets(10), None, SimDuration::ZERO),
            Rng::new(1),
        );
        d.set_origin(SimTime::from_nanos(100 * MS)); // run time 0 = link time 100 ms
        d.offer(SimTime::from_nanos(112 * MS), frame(1500), drop);
        // held in service through the outage, serialised from 20 ms (run time) to 21 ms
        assert_eq!(d.next_due(), Some(SimTime::from_nanos(121 * MS)));
        assert!(drain(&mut d, SimTime::from_nanos(120 * MS)).is_empty());
        assert_eq!(
            drain(&mut d, SimTime::from_nanos(130 * MS)),
            vec![SimTime::from_nanos(121 * MS)]
        );
    }

    #[test]
    fn a_shrinking_delay_never_reorders_frames() {
        struct Shrinking;
        impl LinkModel for Shrinking {
            fn state_at(&mut self, now: SimTime) -> LinkState {
                let delay = if now.as_nanos() < MS { 50 * MS } else { MS };
                LinkState {
                    rate_bps: 1_000_000_000,
                    delay: SimDuration::from_nanos(delay),
                    loss: 0.0,
                }
            }
            fn next_change(&self, _now: SimTime) -> Option<SimTime> {
                None
            }
        }
        impl LinkBehaviour for Shrinking {}
        let mut d = Direction::new(
            Box::new(Shrinking),
            cfg(QueueSpec::Packets(10), None, SimDuration::ZERO),
            Rng::new(1),
        );
        d.set_origin(SimTime::ZERO);
        d.offer(SimTime::ZERO, frame(100), drop);
        d.offer(SimTime::from_nanos(2 * MS), frame(100), drop);
        let due = drain(&mut d, SimTime::from_nanos(100 * MS));
        assert_eq!(due.len(), 2);
        assert!(due[0] <= due[1]);
    }

    #[test]
    fn jitter_delays_each_frame_by_the_simulators_draw_and_keeps_the_wire_fifo() {
        // 1500 B at 1.2 Gbit/s = 10 us apart; 10 ms delay, up to 50 us of jitter per frame.
        let state = LinkState {
            rate_bps: 1_200_000_000,
            delay: SimDuration::from_millis(10),
            loss: 0.0,
        };
        let jitter = SimDuration::from_micros(50);
        let mut d = Direction::new(
            Box::new(ConstantLink(state)),
            cfg(QueueSpec::Packets(100), None, jitter),
            Rng::new(7),
        );
        d.set_origin(SimTime::ZERO);
        for _ in 0..20 {
            d.offer(SimTime::ZERO, frame(1500), drop);
        }
        let due = drain(&mut d, SimTime::from_nanos(20 * MS));
        // The simulator's rule (net.rs `finish`): one uniform draw per surviving frame, added to
        // the delay, then clamped so no frame overtakes the one before it.
        let mut rng = Rng::new(7);
        let mut last = SimTime::ZERO;
        let mut clamped = 0;
        for (k, got) in due.iter().enumerate() {
            let done = SimTime::from_nanos(10_000 * (k as u64 + 1));
            let raw = done
                + state.delay
                + SimDuration::from_nanos((rng.next_f64() * jitter.as_nanos() as f64) as u64);
            clamped += usize::from(raw < last);
            last = raw.max(last);
            assert_eq!(*got, last, "frame {k}");
        }
        assert_eq!(due.len(), 20);
        assert!(
            clamped > 0,
            "50 us of jitter over 10 us spacing must bunch some frames"
        );
    }
}
