//! One-shot timers with lazy cancellation on the shared event queue.
//!
//! Re-arming a timer (the RTO on every ACK) must not flood the event heap: a timer only
//! asks for a new event when its new deadline is earlier than every event already queued
//! for it. A queued event that fires early re-asks for the current deadline; one that
//! fires after the timer was cleared is ignored.

use satcc_core::SimTime;

#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline: Option<SimTime>,
    /// Earliest event queued for this timer that has not fired yet.
    queued: Option<SimTime>,
}

impl Timer {
    /// Arm for `at`; returns `Some(at)` when the caller must queue an event.
    #[must_use]
    pub fn set(&mut self, at: SimTime) -> Option<SimTime> {
        self.deadline = Some(at);
        match self.queued {
            Some(q) if q <= at => None,
            _ => {
                self.queued = Some(at);
                Some(at)
            }
        }
    }

    pub fn clear(&mut self) {
        self.deadline = None;
    }

    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }

    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }

    /// An event queued for this timer fired at `now`. Returns `Fire::Now` if the timer
    /// expires, `Fire::Later(t)` if the caller must queue a new event at `t`, or
    /// `Fire::Stale`.
    pub fn on_event(&mut self, now: SimTime) -> Fire {
        if self.queued == Some(now) {
            self.queued = None;
        }
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                Fire::Now
            }
            Some(d) => {
                if self.queued.is_none_or(|q| q > d) {
                    self.queued = Some(d);
                    Fire::Later(d)
                } else {
                    Fire::Stale
                }
            }
            None => Fire::Stale,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fire {
    Now,
    Later(SimTime),
    Stale,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn pushing_the_deadline_later_queues_no_new_event() {
        let mut tm = Timer::default();
        assert_eq!(tm.set(t(10)), Some(t(10)));
        assert_eq!(tm.set(t(20)), None);
        assert_eq!(tm.on_event(t(10)), Fire::Later(t(20)));
        assert_eq!(tm.on_event(t(20)), Fire::Now);
    }

    #[test]
    fn pulling_the_deadline_earlier_queues_an_event_and_the_old_one_goes_stale() {
        let mut tm = Timer::default();
        let _ = tm.set(t(20));
        assert_eq!(tm.set(t(5)), Some(t(5)));
        assert_eq!(tm.on_event(t(5)), Fire::Now);
        assert_eq!(tm.on_event(t(20)), Fire::Stale);
    }

    #[test]
    fn a_cleared_timer_never_fires() {
        let mut tm = Timer::default();
        let _ = tm.set(t(5));
        tm.clear();
        assert_eq!(tm.on_event(t(5)), Fire::Stale);
    }
}
