//! Frames a direction has due but the kernel has not taken yet.
//!
//! A send can be refused part-way (ENOBUFS: the receiving node's backlog — 1000 frames by
//! default — is full because the CPU its receive processing is steered to has not caught up).
//! The refused frames are not lost: they wait here, in order, ahead of anything due later, and
//! the next try comes `BACKOFF_NS` later, as a back-pressured NIC would hold them. They leave
//! late, and the lateness histogram shows it. Only a frame refused for `HOLD_LIMIT_NS` past
//! its instant is dropped (`send_failures`).

use satcc_core::{SimDuration, SimTime};

use crate::direction::{Direction, Frame};
use crate::hist::Hist;

/// Long enough for the other CPU to take a few dozen frames off the backlog (≈ 1 µs each),
/// short next to the spin window (200 µs), so a retry is usually spun, not slept.
pub const BACKOFF_NS: u64 = 20_000;
/// A receiver that has not drained its backlog in 100 ms is not coming back soon; holding
/// frames longer would only grow this queue without bound.
pub const HOLD_LIMIT_NS: u64 = 100_000_000;

#[derive(Default)]
pub struct Outbox {
    /// Due frames with their instants, oldest first.
    pub waiting: Vec<(SimTime, Frame)>,
    retry_at: Option<SimTime>,
    /// How many times the kernel refused part of a batch.
    pub pushed_back: u64,
    /// Frames dropped after `HOLD_LIMIT_NS` of refusals.
    pub send_failures: u64,
}

impl Outbox {
    /// Whether a send may be tried at `now` (no back-off pending).
    pub fn ready(&mut self, now: SimTime) -> bool {
        if self.retry_at.is_some_and(|r| now < r) {
            return false;
        }
        self.retry_at = None;
        true
    }

    /// When the loop must come back for this direction: its next event, not before a retry.
    pub fn next_wake(&self, dir: &Direction) -> Option<SimTime> {
        match (dir.next_due(), self.retry_at) {
            (Some(n), Some(r)) => Some(n.max(r)),
            (n, r) => n.or(r),
        }
    }

    /// The kernel took the first `sent` waiting frames at `handed`: record their lateness and
    /// give their buffers back; back off if it refused the rest, dropping those held too long.
    pub fn settle(
        &mut self,
        sent: usize,
        handed: SimTime,
        lateness: &mut Hist,
        recycle: &mut impl FnMut(Vec<u8>),
    ) {
        for (at, f) in self.waiting.drain(..sent) {
            lateness.record(handed.saturating_since(at).as_nanos());
            recycle(f.buf);
        }
        if self.waiting.is_empty() {
            return;
        }
        self.pushed_back += 1;
        self.retry_at = Some(handed + SimDuration::from_nanos(BACKOFF_NS));
        let stale = self
            .waiting
            .iter()
            .take_while(|(at, _)| handed.saturating_since(*at).as_nanos() > HOLD_LIMIT_NS)
            .count();
        self.send_failures += stale as u64;
        for (_, f) in self.waiting.drain(..stale) {
            recycle(f.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(tag: u8) -> Frame {
        Frame {
            buf: vec![tag; 64],
            len: 64,
        }
    }

    fn at_us(us: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_nanos(us * 1000)
    }

    fn outbox(instants_us: &[u64]) -> Outbox {
        let mut o = Outbox::default();
        for (i, &us) in instants_us.iter().enumerate() {
            o.waiting.push((at_us(us), frame(i as u8)));
        }
        o
    }

    #[test]
    fn frames_the_kernel_took_leave_with_their_lateness_and_give_their_buffers_back() {
        let mut o = outbox(&[10, 20]);
        let (mut hist, mut back) = (Hist::default(), Vec::new());
        o.settle(2, at_us(25), &mut hist, &mut |b| back.push(b));
        assert!(o.waiting.is_empty());
        assert_eq!(back.len(), 2);
        assert_eq!(o.pushed_back, 0);
        assert!(o.ready(at_us(25)));
    }

    #[test]
    fn refused_frames_wait_in_order_and_are_retried_after_the_backoff() {
        let mut o = outbox(&[10, 20, 30]);
        let (mut hist, mut back) = (Hist::default(), Vec::new());
        o.settle(1, at_us(40), &mut hist, &mut |b| back.push(b));
        assert_eq!(back.len(), 1);
        assert_eq!(o.pushed_back, 1);
        assert_eq!(o.send_failures, 0);
        let tags: Vec<u8> = o.waiting.iter().map(|(_, f)| f.buf[0]).collect();
        assert_eq!(tags, [1, 2]);
        let retry = at_us(40) + SimDuration::from_nanos(BACKOFF_NS);
        assert!(!o.ready(retry - SimDuration::from_nanos(1)));
        assert!(o.ready(retry));
    }

    #[test]
    fn a_frame_refused_past_the_hold_limit_is_dropped_and_counted() {
        let limit_us = HOLD_LIMIT_NS / 1000;
        let mut o = outbox(&[0, limit_us]);
        let (mut hist, mut back) = (Hist::default(), Vec::new());
        o.settle(0, at_us(limit_us + 1), &mut hist, &mut |b| back.push(b));
        assert_eq!(o.send_failures, 1);
        assert_eq!(back.len(), 1);
        assert_eq!(o.waiting.len(), 1);
        assert_eq!(o.waiting[0].0, at_us(limit_us));
    }
}
