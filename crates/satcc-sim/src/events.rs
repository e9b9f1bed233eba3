//! The event queue: a binary min-heap of events keyed by `(time, sequence)` packed into one
//! `u128`, with the one operation the event loop needs most — replace the earliest event by
//! the next arrival of the same wire (`replace_top`) in a single pass down the heap.
//!
//! Keys are unique (the sequence number is), so the order in which events leave the queue is
//! the sorted order of their keys, whatever the heap's shape: any correct priority queue gives
//! the same run. This one differs from `std::collections::BinaryHeap` only in cost: the new
//! element is carried down in registers and written once where it belongs, not written at
//! the top first and read back (`PeekMut`), and keys compare as one integer.

use satcc_core::SimTime;

/// An event's key: time in the high 64 bits, sequence number in the low 64.
#[inline]
pub fn key(at: SimTime, seq: u64) -> u128 {
    ((at.as_nanos() as u128) << 64) | seq as u128
}

/// The time of a key.
#[inline]
pub fn key_time(key: u128) -> SimTime {
    SimTime::from_nanos((key >> 64) as u64)
}

/// A min-heap of `(key, event)` pairs.
pub struct EventQueue<E> {
    items: Vec<(u128, E)>,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { items: Vec::new() }
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The earliest event.
    #[inline]
    pub fn peek(&self) -> Option<(u128, E)> {
        self.items.first().copied()
    }

    /// The earliest event's key, `u128::MAX` when there is none (no event has that key: its
    /// sequence number would be `u64::MAX`).
    #[inline(always)]
    pub fn top_key(&self) -> u128 {
        self.items.first().map_or(u128::MAX, |&(k, _)| k)
    }

    pub fn push(&mut self, key: u128, ev: E) {
        let mut i = self.items.len();
        self.items.push((key, ev));
        let items = self.items.as_mut_slice();
        while i > 0 {
            let parent = (i - 1) / 2;
            // SAFETY: `i` starts at the new element's index (below `len`) and only moves to a
            // parent, which is below `i`.
            unsafe {
                let p = *items.get_unchecked(parent);
                if p.0 <= key {
                    break;
                }
                *items.get_unchecked_mut(i) = p;
            }
            i = parent;
        }
        // SAFETY: as above.
        unsafe {
            *items.get_unchecked_mut(i) = (key, ev);
        }
    }

    /// Take the earliest event.
    pub fn pop(&mut self) -> Option<(u128, E)> {
        let last = self.items.pop()?;
        if self.items.is_empty() {
            return Some(last);
        }
        let top = self.items[0];
        self.sift_down_from_top(last);
        Some(top)
    }

    /// Take the earliest event and put `(key, ev)` in its place: `pop` then `push` in one
    /// pass. The queue must not be empty.
    #[inline]
    pub fn replace_top(&mut self, key: u128, ev: E) -> (u128, E) {
        let top = self.items[0];
        self.sift_down_from_top((key, ev));
        top
    }

    /// Put `item` where the top was and move it down past every smaller child. The top's
    /// own step is taken apart from the loop (a small heap, as the wires' arrivals are, needs
    /// no more).
    #[inline]
    fn sift_down_from_top(&mut self, item: (u128, E)) {
        let items = self.items.as_mut_slice();
        let n = items.len();
        debug_assert!(n > 0);
        if n == 1 {
            items[0] = item;
            return;
        }
        // SAFETY (each `get_unchecked` of the top's step): `n >= 2`, so 0 and 1 are in
        // bounds, and 2 is read only when `n > 2`.
        let (first, first_key) = unsafe {
            let l = items.get_unchecked(1).0;
            if n > 2 && items.get_unchecked(2).0 < l {
                (2, items.get_unchecked(2).0)
            } else {
                (1, l)
            }
        };
        if first_key >= item.0 {
            // SAFETY: as above.
            unsafe {
                *items.get_unchecked_mut(0) = item;
            }
            return;
        }
        // SAFETY: as above.
        unsafe {
            *items.get_unchecked_mut(0) = *items.get_unchecked(first);
        }
        let mut i = first;
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            // SAFETY (each `get_unchecked` below): `left < n` was checked above and `right`
            // is read only when `right < n`; `child` is one of them and `i` is 1 or 2 (below
            // `n`, from the top's step) or an earlier `child`.
            let (child, child_key) = unsafe {
                let l = items.get_unchecked(left).0;
                if right < n && items.get_unchecked(right).0 < l {
                    (right, items.get_unchecked(right).0)
                } else {
                    (left, l)
                }
            };
            if child_key >= item.0 {
                break;
            }
            unsafe {
                *items.get_unchecked_mut(i) = *items.get_unchecked(child);
            }
            i = child;
        }
        // SAFETY: as above.
        unsafe {
            *items.get_unchecked_mut(i) = item;
        }
    }
}

/// A min-queue with its earliest event held apart from the heap of the others (the wires'
/// head arrivals, `world`): an arrival whose wire's next arrival is still the earliest event
/// (a burst on one wire) is replaced without touching the heap, and the heap holds one event
/// fewer. An empty queue's earliest key reads as `u128::MAX` (no event has it).
pub struct HeldQueue<E> {
    /// The earliest event; `(u128::MAX, _)` when the queue is empty.
    first: (u128, E),
    /// The other events.
    rest: EventQueue<E>,
}

impl<E: Copy + Default> Default for HeldQueue<E> {
    fn default() -> Self {
        HeldQueue {
            first: (u128::MAX, E::default()),
            rest: EventQueue::default(),
        }
    }
}

impl<E: Copy + Default> HeldQueue<E> {
    pub fn len(&self) -> usize {
        self.rest.len() + usize::from(self.first.0 != u128::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.first.0 == u128::MAX
    }

    /// The earliest event, `(u128::MAX, E::default())` when there is none.
    #[inline(always)]
    pub fn first(&self) -> (u128, E) {
        self.first
    }

    pub fn push(&mut self, key: u128, ev: E) {
        if key < self.first.0 {
            if self.first.0 != u128::MAX {
                self.rest.push(self.first.0, self.first.1);
            }
            self.first = (key, ev);
        } else {
            self.rest.push(key, ev);
        }
    }

    /// Take the earliest event (`first` when the queue is empty).
    pub fn pop(&mut self) -> (u128, E) {
        let top = self.first;
        self.first = self.rest.pop().unwrap_or((u128::MAX, E::default()));
        top
    }

    /// Take the earliest event and put `(key, ev)` in its place: held apart when it is still
    /// the earliest, else the heap's first takes its place (one sift). The queue must not be
    /// empty.
    #[inline(always)]
    pub fn replace_top(&mut self, key: u128, ev: E) -> (u128, E) {
        debug_assert!(!self.is_empty());
        let top = self.first;
        self.first = if key < self.rest.top_key() {
            (key, ev)
        } else {
            self.rest.replace_top(key, ev)
        };
        top
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::Rng;

    #[test]
    fn events_leave_in_key_order_whatever_order_they_came_in() {
        let mut rng = Rng::new(7);
        let mut q = EventQueue::default();
        let mut keys: Vec<u128> = (0..2000)
            .map(|seq| key(SimTime::from_nanos(rng.next_u64() % 500), seq))
            .collect();
        for (i, &k) in keys.iter().enumerate() {
            q.push(k, i);
        }
        keys.sort_unstable();
        let popped: Vec<u128> = std::iter::from_fn(|| q.pop().map(|(k, _)| k)).collect();
        assert_eq!(popped, keys);
        assert!(q.is_empty());
    }

    #[test]
    fn replacing_the_top_is_a_pop_then_a_push() {
        let mut rng = Rng::new(11);
        let (mut a, mut b) = (EventQueue::default(), EventQueue::default());
        let mut seq = 0u64;
        let mut next = |rng: &mut Rng, base: u64| {
            seq += 1;
            key(SimTime::from_nanos(base + rng.next_u64() % 1000), seq)
        };
        for _ in 0..30 {
            let k = next(&mut rng, 0);
            a.push(k, ());
            b.push(k, ());
        }
        for _ in 0..5000 {
            let (top, _) = a.peek().unwrap();
            let k = next(&mut rng, (top >> 64) as u64);
            let from_replace = a.replace_top(k, ());
            let from_pop = b.pop().unwrap();
            b.push(k, ());
            assert_eq!(from_replace, from_pop);
            assert_eq!(a.len(), b.len());
        }
        let rest_a: Vec<u128> = std::iter::from_fn(|| a.pop().map(|(k, _)| k)).collect();
        let rest_b: Vec<u128> = std::iter::from_fn(|| b.pop().map(|(k, _)| k)).collect();
        assert_eq!(rest_a, rest_b);
    }

    #[test]
    fn the_held_queue_gives_the_heaps_order() {
        let mut rng = Rng::new(13);
        let mut held: HeldQueue<u32> = HeldQueue::default();
        let mut heap: EventQueue<u32> = EventQueue::default();
        assert_eq!(held.first().0, u128::MAX);
        let mut seq = 0u64;
        let mut now = 0u64;
        for step in 0..20_000u32 {
            seq += 1;
            let k = key(SimTime::from_nanos(now + rng.next_u64() % 1000), seq);
            match rng.next_u64() % 4 {
                // a burst: the new key is often the earliest
                _ if held.is_empty() || held.len() < 3 => {
                    held.push(k, step);
                    heap.push(k, step);
                }
                0 => {
                    assert_eq!(held.pop(), heap.pop().unwrap());
                }
                _ => {
                    let (top, _) = held.first();
                    now = (top >> 64) as u64;
                    let k = key(SimTime::from_nanos(now + rng.next_u64() % 50), seq);
                    assert_eq!(held.replace_top(k, step), heap.replace_top(k, step));
                }
            }
            assert_eq!(held.len(), heap.len());
            assert_eq!(held.first(), heap.peek().unwrap_or((u128::MAX, 0)));
        }
        while !heap.is_empty() {
            assert_eq!(held.pop(), heap.pop().unwrap());
        }
        assert!(held.is_empty());
        assert_eq!(held.pop().0, u128::MAX);
    }

    #[test]
    fn a_key_orders_by_time_then_by_sequence() {
        let t = |ns| SimTime::from_nanos(ns);
        assert!(key(t(5), 9) < key(t(6), 1));
        assert!(key(t(5), 1) < key(t(5), 2));
        assert_eq!(key_time(key(t(u64::MAX), u64::MAX)), t(u64::MAX));
    }
}
