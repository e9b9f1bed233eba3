//! One direction of an emulated link, in real time: the simulator's link direction
//! (`satcc-sim/src/net.rs`) with frames instead of simulated packets.
//!
//! ```text
//!  offer(t) ──► [drop-tail queue, CE marking ≥ K] ──► serialiser (rate at start) ──► loss? ──► wire (delay) ──► take_due(now)
//! ```
//! Everything is a function of the times handed in (no clock, no I/O), so the same code runs
//! under a manual clock in the tests below and under `CLOCK_MONOTONIC` in `satcc-linkd`. The
//! link behaviour is asked what the simulator asks it (`satcc-sim` net.rs `LinkDir`): when a
//! frame that starts serialising now has left (`LinkBehaviour::transmit_end`, so a rate of 0 —
//! an outage — holds the frame in service until the link returns), then the state in force as
//! it leaves (loss, delay) and whether it is dropped otherwise (`extra_drop`).
//!
//! | parameter          | default       | unit    | source                                   |
//! |--------------------|---------------|---------|------------------------------------------|
//! | rate, delay, loss  | from the model| bit/s, ns, probability | `LinkModel::state_at`     |
//! | queue limit        | scenario      | packets or bytes | `QueueLimit` (BDP resolved by the runner) |
//! | ecn_threshold_pkts | none          | packets | step marking, RFC 8257 §3.1 (DCTCP's K)   |
//! | jitter             | 0             | ns      | uniform extra delay per frame, FIFO kept (the simulator's `jitter`) |
//!
//! Frame size for rate and byte limits is the IP packet (the Ethernet frame less its 14-byte
//! header), as the simulator counts `wire_bytes`.
//!
//! Deviations from the simulator's link direction:
//! 1. Arrival times come from the kernel's receive timestamp and are made non-decreasing per
//!    direction (a frame stamped before the previous one is treated as arriving with it).
//! 2. Before the run's origin is set (`start`), the model is asked at its t = 0 (frames during
//!    set-up, such as ARP, see the first instant's link).
//!
//! Not implemented: scripted per-packet drop lists (`drop_packets`, a simulator test aid).

use std::collections::VecDeque;

use satcc_core::link::{LinkState, QueueLimit};
use satcc_core::models::{LinkBehaviour, MeanState};
use satcc_core::{Rng, SimDuration, SimTime};

use crate::ecn;


/// Bytes of the Ethernet header in front of the IP packet (no VLAN tag on our veths).
pub const ETH_HEADER: usize = 14;

/// A frame and the buffer holding it (`buf[..len]`); the buffer returns to the pool on delivery.
#[derive(Debug)]
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

/// Counters of one direction (per bin, and for the whole run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub rx_frames: u64,
    pub tx_frames: u64,
    pub drops_queue: u64,
    pub drops_random: u64,
    pub ecn_marks: u64,
    pub tx_bytes: u64,
}

impl Counters {
    fn add(&mut self, o: &Counters) {
        self.rx_frames += o.rx_frames;
        self.tx_frames += o.tx_frames;
        self.drops_queue += o.drops_queue;
        self.drops_random += o.drops_random;
        self.ecn_marks += o.ecn_marks;
        self.tx_bytes += o.tx_bytes;
    }
}

/// The static part of a direction's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    pub limit: QueueLimit,
    pub ecn_threshold_pkts: Option<u64>,
    /// Extra one-way delay drawn uniformly from [0, jitter) per frame that survives the loss
    /// draw, from the same stream and in the same order as the simulator's (`net.rs` `finish`);
    /// zero draws nothing. The wire stays FIFO.
    pub jitter: SimDuration,
}

/// What `offer` did with a frame.
#[derive(Debug)]
pub enum Offered {
    Accepted,
    /// Dropped by the full queue; the frame is handed back so its buffer can be reused.
    Dropped(Frame),
}

/// One direction of an emulated link.
pub struct Direction {
    model: Box<dyn LinkBehaviour>,
    cfg: QueueConfig,
    /// Link-clock instant of the run's t = 0 (`None` until `start`).
    origin: Option<SimTime>,
    queue: VecDeque<Frame>,
    queue_bytes: u64,
    /// The frame being serialised, when it is done (`SimTime::MAX`: the link is down for
    /// good), when it started, and the state it started under (reported, not used).
    in_service: Option<(Frame, SimTime, SimTime, LinkState)>,
    /// Frames propagating, with their delivery instants (FIFO, non-decreasing).
    wire: VecDeque<(SimTime, Frame)>,
    rng: Rng,
    /// Latest instant the serialiser has been brought up to (arrivals never go before it).
    clock_floor: SimTime,
    bin: Counters,
    total: Counters,
}

impl Direction {
    pub fn new(model: Box<dyn LinkBehaviour>, cfg: QueueConfig, rng: Rng) -> Self {
        Direction {
            model,
            cfg,
            origin: None,
            queue: VecDeque::new(),
            queue_bytes: 0,
            in_service: None,
            wire: VecDeque::new(),
            rng,
            clock_floor: SimTime::ZERO,
            bin: Counters::default(),
            total: Counters::default(),
        }
    }

    /// Set the run's origin: model time is link time minus `origin` from now on.
    pub fn set_origin(&mut self, origin: SimTime) {
        self.origin = Some(origin);
        // A frame held by an outage before the start: its end is now known in run time.
        if let Some((frame, done, started, state)) = self.in_service.take() {
            let done = if done == SimTime::MAX {
                self.transmit_end(origin.max(started), frame.ip_bytes()).unwrap_or(SimTime::MAX)
            } else {
                done
            };
            self.in_service = Some((frame, done, started, state));
        }
    }

    fn model_time(&self, t: SimTime) -> SimTime {
        match self.origin {
            Some(o) => SimTime::from_nanos(t.saturating_since(o).as_nanos()),
            None => SimTime::ZERO,
        }
    }

    /// The model's state at link-clock instant `t`.
    pub fn state_at(&mut self, t: SimTime) -> LinkState {
        let mt = self.model_time(t);
        self.model.state_at(mt)
    }

    /// The model's time-weighted mean state over `[from, to)` (link clock), as the simulator
    /// reports each bin's capacity and delay.
    pub fn mean_over(&mut self, from: SimTime, to: SimTime) -> MeanState {
        let (a, b) = (self.model_time(from), self.model_time(to));
        self.model.mean_over(a, b)
    }

    /// A frame arrived at `t` (link clock).
    pub fn offer(&mut self, t: SimTime, mut frame: Frame) -> Offered {
        let t = t.max(self.clock_floor);
        self.run_serialiser(t);
        self.bin.rx_frames += 1;
        if self.in_service.is_none() && self.queue.is_empty() {
            self.start(t, frame);
            return Offered::Accepted;
        }
        let pkts = self.queue.len() as u64;
        let size = frame.ip_bytes();
        if !self.cfg.limit.admits(pkts, self.queue_bytes, size) {
            self.bin.drops_queue += 1;
            return Offered::Dropped(frame);
        }
        if let Some(k) = self.cfg.ecn_threshold_pkts {
            // Step marking on the instantaneous queue (DCTCP's K, RFC 8257 §3.1).
            if pkts >= k && ecn::mark_ce(&mut frame.buf[..frame.len]) {
                self.bin.ecn_marks += 1;
            }
        }
        self.queue_bytes += size;
        self.queue.push_back(frame);
        Offered::Accepted
    }

    /// Bring the serialiser up to `now` and move every frame due by `now` into `out`.
    pub fn take_due(&mut self, now: SimTime, out: &mut Vec<(SimTime, Frame)>) {
        self.run_serialiser(now);
        while self.wire.front().is_some_and(|(at, _)| *at <= now) {
            let (at, f) = self.wire.pop_front().expect("checked non-empty");
            self.bin.tx_frames += 1;
            out.push((at, f));
        }
    }

    /// The next instant something happens here (a transmission ends, a frame is due), if any.
    pub fn next_due(&self) -> Option<SimTime> {
        let a = self.in_service.as_ref().map(|(_, done, _, _)| *done).filter(|d| *d != SimTime::MAX);
        let c = self.wire.front().map(|(at, _)| *at);
        [a, c].into_iter().flatten().min()
    }

    fn run_serialiser(&mut self, t: SimTime) {
        self.clock_floor = self.clock_floor.max(t);
        while let Some((_, done, _, _)) = &self.in_service {
            if *done > t {
                return;
            }
            let done = *done;
            self.finish(done);
        }
    }

    /// Start serialising `frame` at `at`.
    fn start(&mut self, at: SimTime, frame: Frame) {
        let state = self.state_at(at);
        let done = self.transmit_end(at, frame.ip_bytes()).unwrap_or(SimTime::MAX);
        self.in_service = Some((frame, done, at, state));
    }

    /// When a transmission of `bytes` starting at link-clock `at` ends (link clock); `None` if
    /// the link never carries it. Before the run's origin, model time stands at 0.
    fn transmit_end(&mut self, at: SimTime, bytes: u64) -> Option<SimTime> {
        let m0 = self.model_time(at);
        let end = self.model.transmit_end(m0, bytes)?;
        Some(at + (end - m0))
    }

    /// The frame in service finished at `done`: onto the wire (or lost), next one starts.
    fn finish(&mut self, done: SimTime) {
        let (frame, _, _, _) = self.in_service.take().expect("finish without a frame in service");
        let bytes = frame.ip_bytes();
        self.bin.tx_bytes += bytes;
        // net.rs `finish`: the state in force as the frame leaves decides its loss and delay
        let mt = self.model_time(done);
        let state = self.model.state_at(mt);
        if self.rng.chance(state.loss) || self.model.extra_drop(mt, bytes) {
            self.bin.drops_random += 1;
        } else {
            let mut at = done + state.delay;
            if !self.cfg.jitter.is_zero() {
                let extra = (self.rng.next_f64() * self.cfg.jitter.as_nanos() as f64) as u64;
                at += SimDuration::from_nanos(extra);
            }
            if let Some((last, _)) = self.wire.back() {
                at = at.max(*last); // the wire is FIFO: a shrinking delay never reorders
            }
            self.wire.push_back((at, frame));
        }
        if let Some(f) = self.queue.pop_front() {
            self.queue_bytes -= f.ip_bytes();
            self.start(done, f);
        }
    }

    /// Queue occupancy now (frames waiting, not the one in service), packets and bytes.
    pub fn queue_len(&self) -> (u64, u64) {
        (self.queue.len() as u64, self.queue_bytes)
    }

    /// The counters of the bin that just ended; a new bin starts.
    pub fn end_bin(&mut self) -> Counters {
        let c = std::mem::take(&mut self.bin);
        self.total.add(&c);
        c
    }

    /// Counters of the whole run so far (bins already ended plus the current one).
    pub fn totals(&self) -> Counters {
        let mut t = self.total;
        t.add(&self.bin);
        t
    }

    /// Frames still held (queued, in service, on the wire).
    pub fn held(&self) -> usize {
        self.queue.len() + self.wire.len() + usize::from(self.in_service.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::link::{ConstantLink, LinkModel};
    use satcc_core::SimDuration;

    const MS: u64 = 1_000_000;

    fn frame(ip_len: usize) -> Frame {
        let mut buf = vec![0u8; ip_len + ETH_HEADER];
        buf[12] = 0x08; // IPv4 ethertype
        buf[14] = 0x45;
        buf[15] = 0x02; // ECT(0)
        Frame { len: buf.len(), buf }
    }

    fn dir(rate_bps: u64, delay_ms: u64, loss: f64, limit: QueueLimit, ecn: Option<u64>) -> Direction {
        let state = LinkState { rate_bps, delay: SimDuration::from_millis(delay_ms), loss };
        let mut d = Direction::new(
            Box::new(ConstantLink(state)),
            QueueConfig { limit, ecn_threshold_pkts: ecn, jitter: SimDuration::ZERO },
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
        let mut d = dir(12_000_000, 10, 0.0, QueueLimit::Packets(10), None);
        d.offer(SimTime::ZERO, frame(1500));
        assert_eq!(d.next_due(), Some(SimTime::from_nanos(MS)));
        assert!(drain(&mut d, SimTime::from_nanos(10 * MS)).is_empty());
        assert_eq!(drain(&mut d, SimTime::from_nanos(11 * MS)), vec![SimTime::from_nanos(11 * MS)]);
    }

    #[test]
    fn back_to_back_frames_are_spaced_by_their_serialisation_time() {
        let mut d = dir(12_000_000, 0, 0.0, QueueLimit::Packets(10), None);
        for _ in 0..3 {
            d.offer(SimTime::ZERO, frame(1500));
        }
        let due = drain(&mut d, SimTime::from_nanos(100 * MS));
        assert_eq!(due, vec![1, 2, 3].into_iter().map(|k| SimTime::from_nanos(k * MS)).collect::<Vec<_>>());
    }

    #[test]
    fn a_full_queue_drops_the_arriving_frame() {
        // one in service + two queued; the fourth is dropped
        let mut d = dir(12_000_000, 0, 0.0, QueueLimit::Packets(2), None);
        for _ in 0..3 {
            assert!(matches!(d.offer(SimTime::ZERO, frame(1500)), Offered::Accepted));
        }
        assert!(matches!(d.offer(SimTime::ZERO, frame(1500)), Offered::Dropped(_)));
        assert_eq!(d.queue_len(), (2, 3000));
        assert_eq!(d.end_bin().drops_queue, 1);
    }

    #[test]
    fn ce_is_marked_at_or_above_the_threshold_only() {
        let mut d = dir(12_000_000, 0, 0.0, QueueLimit::Packets(100), Some(2));
        for _ in 0..5 {
            d.offer(SimTime::ZERO, frame(100));
        }
        // in service, queue 0 and 1 unmarked, queue 2 and 3 marked
        assert_eq!(d.end_bin().ecn_marks, 2);
    }

    #[test]
    fn random_loss_drops_close_to_the_configured_fraction() {
        let mut d = dir(1_000_000_000, 0, 0.1, QueueLimit::Packets(100_000), None);
        let n = 20_000;
        for _ in 0..n {
            d.offer(SimTime::ZERO, frame(100));
        }
        let got = drain(&mut d, SimTime::from_nanos(1000 * MS)).len() as f64;
        let lost = n as f64 - got;
        // mean 2000, sd ≈ 42: 5 sd band
        assert!((lost - 2000.0).abs() < 212.0, "lost {lost}");
    }

    #[test]
    fn arrivals_before_the_serialiser_floor_are_treated_as_now() {
        let mut d = dir(12_000_000, 0, 0.0, QueueLimit::Packets(10), None);
        d.take_due(SimTime::from_nanos(5 * MS), &mut Vec::new());
        d.offer(SimTime::from_nanos(MS), frame(1500));
        assert_eq!(d.next_due(), Some(SimTime::from_nanos(6 * MS)));
    }

    /// A model with an outage from 10 ms to 20 ms, rate 12 Mbit/s otherwise.
    struct Outage;
    impl LinkModel for Outage {
        fn state_at(&mut self, now: SimTime) -> LinkState {
            let ms = now.as_nanos() / MS;
            let rate = if (10..20).contains(&ms) { 0 } else { 12_000_000 };
            LinkState { rate_bps: rate, delay: SimDuration::ZERO, loss: 0.0 }
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
            QueueConfig { limit: QueueLimit::Packets(10), ecn_threshold_pkts: None, jitter: SimDuration::ZERO },
            Rng::new(1),
        );
        d.set_origin(SimTime::from_nanos(100 * MS)); // run time 0 = link time 100 ms
        d.offer(SimTime::from_nanos(112 * MS), frame(1500));
        // held in service through the outage, serialised from 20 ms (run time) to 21 ms
        assert_eq!(d.next_due(), Some(SimTime::from_nanos(121 * MS)));
        assert!(drain(&mut d, SimTime::from_nanos(120 * MS)).is_empty());
        assert_eq!(drain(&mut d, SimTime::from_nanos(130 * MS)), vec![SimTime::from_nanos(121 * MS)]);
    }

    #[test]
    fn a_shrinking_delay_never_reorders_frames() {
        struct Shrinking;
        impl LinkModel for Shrinking {
            fn state_at(&mut self, now: SimTime) -> LinkState {
                let delay = if now.as_nanos() < MS { 50 * MS } else { MS };
                LinkState { rate_bps: 1_000_000_000, delay: SimDuration::from_nanos(delay), loss: 0.0 }
            }
            fn next_change(&self, _now: SimTime) -> Option<SimTime> {
                None
            }
        }
        impl LinkBehaviour for Shrinking {}
        let mut d = Direction::new(
            Box::new(Shrinking),
            QueueConfig { limit: QueueLimit::Packets(10), ecn_threshold_pkts: None, jitter: SimDuration::ZERO },
            Rng::new(1),
        );
        d.set_origin(SimTime::ZERO);
        d.offer(SimTime::ZERO, frame(100));
        d.offer(SimTime::from_nanos(2 * MS), frame(100));
        let due = drain(&mut d, SimTime::from_nanos(100 * MS));
        assert_eq!(due.len(), 2);
        assert!(due[0] <= due[1]);
    }

    #[test]
    fn jitter_delays_each_frame_by_the_simulators_draw_and_keeps_the_wire_fifo() {
        // 1500 B at 1.2 Gbit/s = 10 us apart; 10 ms delay, up to 50 us of jitter per frame.
        let state = LinkState { rate_bps: 1_200_000_000, delay: SimDuration::from_millis(10), loss: 0.0 };
        let jitter = SimDuration::from_micros(50);
        let mut d = Direction::new(
            Box::new(ConstantLink(state)),
            QueueConfig { limit: QueueLimit::Packets(100), ecn_threshold_pkts: None, jitter },
            Rng::new(7),
        );
        d.set_origin(SimTime::ZERO);
        for _ in 0..20 {
            d.offer(SimTime::ZERO, frame(1500));
        }
        let due = drain(&mut d, SimTime::from_nanos(20 * MS));
        // The simulator's rule (net.rs `finish`): one uniform draw per surviving frame, added to
        // the delay, then clamped so no frame overtakes the one before it.
        let mut rng = Rng::new(7);
        let mut last = SimTime::ZERO;
        let mut clamped = 0;
        for (k, got) in due.iter().enumerate() {
            let done = SimTime::from_nanos(10_000 * (k as u64 + 1));
            let raw = done + state.delay + SimDuration::from_nanos((rng.next_f64() * jitter.as_nanos() as f64) as u64);
            clamped += usize::from(raw < last);
            last = raw.max(last);
            assert_eq!(*got, last, "frame {k}");
        }
        assert_eq!(due.len(), 20);
        assert!(clamped > 0, "50 us of jitter over 10 us spacing must bunch some frames");
    }
}
