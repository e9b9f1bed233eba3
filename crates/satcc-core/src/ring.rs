//! A FIFO ring of power-of-two capacity for the link direction's queue and wire
//! ([`crate::direction`]): what `VecDeque` does there, with the slot found by a mask instead of
//! a wrap-around comparison and no bounds check on the hot path.
//!
//! Invariants: `buf.len()` is 0 or a power of two, and `mask` is `buf.len() - 1` once it is not
//! (kept: a slot costs one `and`, not a length read and a decrement); `head` and `tail` count
//! pushes and pops (wrapping), `tail - head <= buf.len()`, and exactly the slots `head..tail`
//! (each taken modulo the capacity) hold initialised values. Every access below goes through a position inside
//! `head..tail` (reads) or through `tail` with `tail - head < buf.len()` (writes), so the masked
//! index is always in bounds and initialised where it is read.

use std::mem::MaybeUninit;

/// Capacity of a ring's first allocation.
const MIN_CAPACITY: usize = 8;

pub struct Ring<T> {
    buf: Box<[MaybeUninit<T>]>,
    /// `buf.len() - 1` (0 while `buf` is empty): a position's slot is `pos & mask`.
    mask: usize,
    head: usize,
    tail: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring::new()
    }
}

impl<T> Ring<T> {
    pub fn new() -> Self {
        Ring {
            buf: Box::new([]),
            mask: 0,
            head: 0,
            tail: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// The slot of position `pos` (a count of pushes).
    #[inline(always)]
    fn slot(&self, pos: usize) -> &MaybeUninit<T> {
        let i = pos & self.mask;
        debug_assert!(i < self.buf.len());
        // SAFETY: callers pass a position with a non-empty buffer (a held element, or the tail
        // of a ring with room); the capacity is a power of two, so the mask keeps `i` below it.
        unsafe { self.buf.get_unchecked(i) }
    }

    #[inline(always)]
    fn slot_mut(&mut self, pos: usize) -> &mut MaybeUninit<T> {
        let i = pos & self.mask;
        debug_assert!(i < self.buf.len());
        // SAFETY: as in `slot`.
        unsafe { self.buf.get_unchecked_mut(i) }
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if self.len() == self.buf.len() {
            self.grow();
        }
        let tail = self.tail;
        self.slot_mut(tail).write(v);
        self.tail = tail.wrapping_add(1);
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let head = self.head;
        self.head = head.wrapping_add(1);
        // SAFETY: `head` was inside `head..tail` (initialised); it is outside now, so the value
        // is read out exactly once.
        Some(unsafe { self.slot(head).assume_init_read() })
    }

    /// Whether a push needs no larger buffer.
    #[inline(always)]
    pub fn has_room(&self) -> bool {
        self.len() < self.buf.len()
    }

    /// Push `v` if the ring has room ([`has_room`](Self::has_room)), else hand it back: no
    /// growth, so no call, on this path.
    #[inline(always)]
    pub fn try_push_back(&mut self, v: T) -> Result<(), T> {
        if !self.has_room() {
            return Err(v);
        }
        let tail = self.tail;
        self.slot_mut(tail).write(v);
        self.tail = tail.wrapping_add(1);
        Ok(())
    }

    /// The element `i` places behind the front.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len() {
            return None;
        }
        // SAFETY: `head + i` is inside `head..tail`.
        Some(unsafe { self.slot(self.head.wrapping_add(i)).assume_init_ref() })
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    #[inline]
    pub fn back(&self) -> Option<&T> {
        if self.is_empty() {
            return None;
        }
        // SAFETY: `tail - 1` is inside `head..tail`.
        Some(unsafe { self.slot(self.tail.wrapping_sub(1)).assume_init_ref() })
    }

    /// Double the capacity; each held element moves to its slot under the wider mask.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(MIN_CAPACITY);
        let mut buf: Box<[MaybeUninit<T>]> = std::iter::repeat_with(MaybeUninit::uninit)
            .take(cap)
            .collect();
        let mask = cap - 1;
        let mut pos = self.head;
        while pos != self.tail {
            // SAFETY: `pos` is inside `head..tail`; the old buffer is dropped below without
            // dropping its elements (`MaybeUninit`), so each value moves exactly once.
            let v = unsafe { self.slot(pos).assume_init_read() };
            buf[pos & mask].write(v);
            pos = pos.wrapping_add(1);
        }
        self.buf = buf;
        self.mask = mask;
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        while self.pop_front().is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::VecDeque;
    use std::rc::Rc;

    #[test]
    fn the_ring_does_what_a_vecdeque_does_through_growth_and_wrap_around() {
        let mut rng = Rng::new(3);
        let mut ring = Ring::new();
        let mut reference = VecDeque::new();
        let mut next = 0u64;
        for step in 0..20_000 {
            // a drifting bias: the ring fills past several doublings, then drains
            let push = rng.next_f64() < if step % 5000 < 3000 { 0.7 } else { 0.3 };
            if push {
                ring.push_back(next);
                reference.push_back(next);
                next += 1;
            } else {
                assert_eq!(ring.pop_front(), reference.pop_front());
            }
            assert_eq!(ring.len(), reference.len());
            assert_eq!(ring.is_empty(), reference.is_empty());
            assert_eq!(ring.front(), reference.front());
            assert_eq!(ring.back(), reference.back());
            for i in [0, 1, 2, reference.len().saturating_sub(1), reference.len()] {
                assert_eq!(ring.get(i), reference.get(i));
            }
        }
    }

    #[test]
    fn the_ring_drops_each_value_once() {
        let v = Rc::new(());
        {
            let mut ring = Ring::new();
            for _ in 0..20 {
                ring.push_back(Rc::clone(&v));
            }
            for _ in 0..5 {
                drop(ring.pop_front());
            }
            assert_eq!(Rc::strong_count(&v), 16);
        }
        assert_eq!(Rc::strong_count(&v), 1);
    }
}
