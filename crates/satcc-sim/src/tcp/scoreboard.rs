//! The sender's retransmission queue and SACK scoreboard.
//!
//! Segments are numbered in the order they were first sent. A bulk sender's segment `i`
//! carries bytes `[i·mss, min((i+1)·mss, size))`, so a sequence number maps to its segment in
//! O(1). Segments shorter than the MSS (a write that did not fill one, sent as Linux's
//! `tcp_push` allows) are each followed by a cut: the numbering restarts there, each segment
//! after it one MSS long again, so the map is piecewise linear and a lookup is a binary search
//! over the cuts still held (none for bulk data, whose short segment is only the last). The
//! queue is a ring indexed by segment number: segment `i` sits in slot `i mod capacity` (a power of two), so reaching it is one
//! mask (not the offset from the oldest segment and the wrap of a `VecDeque`), and a
//! cumulative ACK moves the head without touching the segments it frees. SACKed segments are
//! also kept as a set of disjoint index ranges, so an ACK that repeats known SACK blocks costs
//! O(log n), not O(window): only newly covered segments are touched (ns-3 walks its whole sent
//! list per ACK, which is why it slows down at high BDP — research/ns3-baseline.md).
//!
//! Per-segment flags follow Linux's `TCP_SKB_CB(skb)->sacked`: SACKED_ACKED (`sacked`),
//! LOST (`lost`), SACKED_RETRANS (`retrans`: a retransmission is in flight) and
//! EVER_RETRANS (`ever_retrans`).
//!
//! `tsorted` is Linux's `tsorted_sent_queue`: segments in transmission order, for RACK.
//! Entries go stale when their segment is acknowledged, SACKed or sent again; stale
//! entries are dropped when they reach the front, so each costs O(1) amortised. The list's
//! tail since the last retransmission is segments sent once, in index order, up to the
//! highest sent, each entry its segment's index and transmission time: that part is kept
//! implicit, as a range of indices whose times are read from the segments (no push per
//! segment sent, and once the entries before it are gone an ACK drops the acknowledged
//! ones in one step). A retransmission first writes the range out as entries (before the
//! segment's time is overwritten), then appends its own.

use std::collections::{BTreeMap, VecDeque};

use satcc_core::SimTime;

/// Per-segment state (Linux `tcp_skb_cb` and its `tx` rate-sampling fields).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seg {
    /// Time of the latest (re)transmission (`skb->skb_mstamp_ns`).
    pub xmit: SimTime,
    /// `tx.first_tx_mstamp`.
    pub first_tx: SimTime,
    /// `tx.delivered_mstamp`; `None` once the segment's delivery was sampled.
    pub delivered_mstamp: Option<SimTime>,
    /// `tx.delivered`, `tx.delivered_ce`, `tx.is_app_limited`.
    pub delivered: u64,
    pub delivered_ce: u64,
    pub app_limited: bool,
    pub sacked: bool,
    pub lost: bool,
    pub retrans: bool,
    pub ever_retrans: bool,
}

/// What fills a ring slot that holds no segment (never read as one).
const VACANT: Seg = Seg {
    xmit: SimTime::ZERO,
    first_tx: SimTime::ZERO,
    delivered_mstamp: None,
    delivered: 0,
    delivered_ce: 0,
    app_limited: false,
    sacked: false,
    lost: false,
    retrans: false,
    ever_retrans: false,
};

/// Ring capacity on the first segment sent (it doubles when full).
const RING_MIN: usize = 64;

pub struct Scoreboard {
    pub mss: u64,
    /// Index of the oldest segment held, i.e. snd_una / mss.
    pub head: u64,
    /// One past the highest segment index sent.
    tail: u64,
    /// Segment `i` of `[head, tail)` in slot `i & mask`; `segs.len()` = `mask + 1`, a power of
    /// two, always (`new` allocates the first `RING_MIN` slots), so every `i & mask` is a slot
    /// (what `slot` and `slot_mut` read unchecked rely on).
    segs: Vec<Seg>,
    mask: usize,
    /// SACKed segment index ranges `[start, end)`, keyed by start, disjoint, non-adjacent.
    sacked: BTreeMap<u64, u64>,
    /// Transmission order for RACK: the entries (segment index, transmission time) of
    /// `tsorted`, then those of the implicit range `[ts_lo, ts_hi)` (times read from `segs`).
    /// When not empty, the range ends at the tail and holds only segments sent once since
    /// the last retransmission (so not sent again: their times are those of their entries).
    /// Every index in `tsorted` is below `ts_lo` (those entries were made before the range
    /// began), so once the head passes `ts_lo`, `tsorted` holds nothing at or above it.
    tsorted: VecDeque<(u64, SimTime)>,
    ts_lo: u64,
    ts_hi: u64,
    /// The list kept entry by entry as before (debug builds), to check every read against.
    #[cfg(debug_assertions)]
    tsorted_shadow: VecDeque<(u64, SimTime)>,
    /// Lowest index that may be lost and not yet retransmitted (`retransmit_skb_hint`).
    pub retransmit_hint: u64,
    /// One past the highest index ever retransmitted: no segment from here on is
    /// EVER_RETRANS, so segments at or above it were each sent once, in index order.
    pub retrans_end: u64,
    /// The numbering: up to the first cut, segment `i` starts at `i·mss + off` (wrapping: a
    /// segment index past short segments is ahead of the bytes); after each cut `(idx, seq)`
    /// (ascending), segment `idx` starts at `seq` and each following one an MSS further. Cuts
    /// at or below the head are folded into `off`.
    off: u64,
    cuts: VecDeque<(u64, u64)>,
}

impl Scoreboard {
    pub fn new(mss: u32) -> Self {
        Scoreboard {
            mss: mss as u64,
            head: 0,
            tail: 0,
            segs: vec![VACANT; RING_MIN],
            mask: RING_MIN - 1,
            sacked: BTreeMap::new(),
            tsorted: VecDeque::new(),
            ts_lo: 0,
            ts_hi: 0,
            #[cfg(debug_assertions)]
            tsorted_shadow: VecDeque::new(),
            retransmit_hint: 0,
            retrans_end: 0,
            off: 0,
            cuts: VecDeque::new(),
        }
    }

    /// The section (first index, its start) of the numbering that holds segment `idx`, when
    /// there are cuts.
    #[cold]
    #[inline(never)]
    fn section_of_idx(&self, idx: u64) -> (u64, u64) {
        let k = self.cuts.partition_point(|&(i, _)| i <= idx);
        if k == 0 {
            (0, self.off)
        } else {
            self.cuts[k - 1]
        }
    }

    /// The section of the numbering whose first segment starts at or below `seq`, when
    /// there are cuts.
    #[cold]
    #[inline(never)]
    fn section_of_seq(&self, seq: u64) -> (u64, u64) {
        let k = self.cuts.partition_point(|&(_, s)| s <= seq);
        if k == 0 {
            (0, self.off)
        } else {
            self.cuts[k - 1]
        }
    }

    /// First sequence number of segment `idx` (held, or the next to be sent: the tail).
    #[inline(always)]
    pub fn start(&self, idx: u64) -> u64 {
        let (i0, s0) = if self.cuts.is_empty() {
            (0, self.off)
        } else {
            self.section_of_idx(idx)
        };
        ((idx - i0) * self.mss).wrapping_add(s0)
    }

    /// One past the last sequence number of the held segment `idx`: where the next one
    /// starts (a short segment is followed by a cut, so this holds for the tail too).
    #[inline(always)]
    pub fn end(&self, idx: u64) -> u64 {
        self.start(idx + 1)
    }

    /// The end of the newest segment shorter than the MSS, if it is still held (Linux's
    /// `snd_sml` while it is above `snd_una`).
    pub fn last_short_end(&self) -> Option<u64> {
        self.cuts.back().map(|&(_, s)| s)
    }

    /// The segment holding sequence number `seq` (`seq` below the end of what was sent), or
    /// the tail for `seq` at the end: the number of segments that end at or below `seq`.
    #[inline(always)]
    pub fn idx_floor(&self, seq: u64) -> u64 {
        if self.cuts.is_empty() {
            return seq.wrapping_sub(self.off) / self.mss;
        }
        let (i0, s0) = self.section_of_seq(seq);
        i0 + seq.wrapping_sub(s0) / self.mss
    }

    /// The first segment starting at or above `seq` (the tail if none is held).
    #[inline(always)]
    pub fn idx_ceil(&self, seq: u64) -> u64 {
        if self.cuts.is_empty() {
            return (seq.wrapping_sub(self.off).div_ceil(self.mss)).min(self.tail);
        }
        let (i0, s0) = self.section_of_seq(seq);
        (i0 + seq.wrapping_sub(s0).div_ceil(self.mss)).min(self.tail)
    }

    /// Number of segments sent and not cumulatively acknowledged.
    pub fn len(&self) -> u64 {
        self.tail - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.tail == self.head
    }

    /// One past the highest segment index sent.
    #[inline]
    pub fn tail(&self) -> u64 {
        self.tail
    }

    /// The oldest segment held (`tcp_rtx_queue_head`), if any.
    #[inline(always)]
    pub fn head_seg(&self) -> Option<&Seg> {
        (self.head < self.tail).then(|| self.slot(self.head))
    }

    /// Segment `idx`, which must be held (`head <= idx < tail`).
    #[inline]
    pub fn get(&self, idx: u64) -> &Seg {
        assert!(
            idx >= self.head && idx < self.tail,
            "segment {idx} not held"
        );
        self.slot(idx)
    }

    #[inline]
    pub fn get_mut(&mut self, idx: u64) -> &mut Seg {
        assert!(
            idx >= self.head && idx < self.tail,
            "segment {idx} not held"
        );
        self.slot_mut(idx)
    }

    /// The slot of segment index `idx` (`idx & mask`), without a bounds check.
    #[inline(always)]
    fn slot(&self, idx: u64) -> &Seg {
        let i = idx as usize & self.mask;
        debug_assert!(i < self.segs.len());
        // SAFETY: `segs.len()` is `mask + 1` from `new` on (`grow` keeps it), so `i <= mask`
        // is a slot.
        unsafe { self.segs.get_unchecked(i) }
    }

    #[inline(always)]
    fn slot_mut(&mut self, idx: u64) -> &mut Seg {
        let i = idx as usize & self.mask;
        debug_assert!(i < self.segs.len());
        // SAFETY: as in `slot`.
        unsafe { self.segs.get_unchecked_mut(i) }
    }

    /// The segments held, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Seg> {
        let (a, b) = self.slot_ranges();
        self.segs[a].iter().chain(self.segs[b].iter())
    }

    /// The segments held, oldest first, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Seg> {
        let (a, b) = self.slot_ranges();
        let (lo, hi) = self.segs.split_at_mut(a.start);
        hi[..a.end - a.start].iter_mut().chain(lo[b].iter_mut())
    }

    /// The slots of `[head, tail)`: from the head's slot on, then from slot 0 if it wraps.
    fn slot_ranges(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        if self.is_empty() {
            return (0..0, 0..0);
        }
        let start = self.head as usize & self.mask;
        let end = start + self.len() as usize;
        if end <= self.segs.len() {
            (start..end, 0..0)
        } else {
            (start..self.segs.len(), 0..end - self.segs.len())
        }
    }

    /// Double the ring (each held segment moves to its slot under the wider mask).
    #[cold]
    fn grow(&mut self) {
        let cap = (self.segs.len() * 2).max(RING_MIN);
        let mut segs = vec![VACANT; cap];
        for idx in self.head..self.tail {
            segs[idx as usize & (cap - 1)] = self.segs[idx as usize & self.mask];
        }
        self.segs = segs;
        self.mask = cap - 1;
    }

    /// Append a segment of `len` bytes (at most the MSS) sent after every other; its index.
    #[inline(always)]
    pub fn push(&mut self, seg: Seg, len: u32) -> u64 {
        let idx = self.tail;
        if self.len() as usize == self.segs.len() {
            self.grow();
        }
        *self.slot_mut(idx) = seg;
        self.tail = idx + 1;
        debug_assert!(len as u64 <= self.mss && len > 0);
        if (len as u64) < self.mss {
            self.cut(idx, len);
        }
        // Appended to the implicit range, which ends at the tail when not empty.
        if self.ts_lo == self.ts_hi {
            self.ts_lo = idx;
        }
        debug_assert_eq!(self.ts_hi.max(self.ts_lo), idx);
        self.ts_hi = idx + 1;
        #[cfg(debug_assertions)]
        self.tsorted_shadow.push_back((idx, seg.xmit));
        idx
    }

    /// Segment `idx` is `len` bytes, short of the MSS: the numbering restarts after it.
    #[cold]
    #[inline(never)]
    fn cut(&mut self, idx: u64, len: u32) {
        let end = self.start(idx) + len as u64;
        self.cuts.push_back((idx + 1, end));
    }

    /// Record a retransmission of `idx` at `now` in transmission order; called before the
    /// segment's transmission time becomes `now`.
    pub fn retransmitted(&mut self, idx: u64, now: SimTime) {
        self.materialize_tsorted();
        self.tsorted.push_back((idx, now));
        #[cfg(debug_assertions)]
        self.tsorted_shadow.push_back((idx, now));
        self.retrans_end = self.retrans_end.max(idx + 1);
    }

    /// Write the implicit range of the transmission-order list out as entries.
    fn materialize_tsorted(&mut self) {
        for idx in self.ts_lo..self.ts_hi {
            let xmit = self.get(idx).xmit;
            self.tsorted.push_back((idx, xmit));
        }
        self.ts_lo = self.ts_hi;
    }

    /// The first entry of the transmission-order list: (segment index, transmission time).
    pub fn tsorted_front(&self) -> Option<(u64, SimTime)> {
        let front = match self.tsorted.front() {
            Some(&e) => Some(e),
            None if self.ts_lo < self.ts_hi => Some((self.ts_lo, self.get(self.ts_lo).xmit)),
            None => None,
        };
        #[cfg(debug_assertions)]
        assert_eq!(front, self.tsorted_shadow.front().copied(), "tsorted");
        front
    }

    /// Drop the first entry of the transmission-order list.
    pub fn tsorted_pop(&mut self) {
        if self.tsorted.pop_front().is_none() && self.ts_lo < self.ts_hi {
            self.ts_lo += 1;
        }
        #[cfg(debug_assertions)]
        self.tsorted_shadow.pop_front();
    }

    /// Replace the transmission-order list.
    pub fn set_tsorted(&mut self, entries: VecDeque<(u64, SimTime)>) {
        #[cfg(debug_assertions)]
        {
            self.tsorted_shadow = entries.clone();
        }
        self.tsorted = entries;
        self.ts_lo = self.ts_hi;
    }

    /// The transmission-order list, front first, without copying it.
    pub fn tsorted_iter(&self) -> impl Iterator<Item = (u64, SimTime)> + '_ {
        self.tsorted
            .iter()
            .copied()
            .chain((self.ts_lo..self.ts_hi).map(|idx| (idx, self.get(idx).xmit)))
    }

    /// The whole transmission-order list, front first.
    pub fn tsorted_entries(&self) -> Vec<(u64, SimTime)> {
        let mut v: Vec<(u64, SimTime)> = self.tsorted.iter().copied().collect();
        v.extend((self.ts_lo..self.ts_hi).map(|idx| (idx, self.get(idx).xmit)));
        #[cfg(debug_assertions)]
        assert!(v.iter().eq(self.tsorted_shadow.iter()), "tsorted");
        v
    }

    /// Drop segments below `new_head` (cumulatively acknowledged), returning them in order.
    /// `each` gets a segment's index, its sequence range and the segment.
    pub fn pop_acked(&mut self, new_head: u64, mut each: impl FnMut(u64, (u64, u64), Seg)) {
        assert!(new_head <= self.tail, "ack beyond what was sent");
        while self.head < new_head {
            let seg = *self.get(self.head);
            let range = (self.start(self.head), self.end(self.head));
            each(self.head, range, seg);
            self.head += 1;
        }
        self.trim_below_head();
    }

    /// Drop the non-empty run `[head, new_head)` of segments the caller knows were each sent
    /// once, in index order (at or above `retrans_end`), never SACKed nor marked lost, as
    /// `pop_acked` does: the first one's transmission time and the last segment (read in
    /// its slot, which stays as it is until a segment is pushed).
    #[inline(always)]
    pub fn pop_acked_run(&mut self, new_head: u64) -> (SimTime, &Seg) {
        debug_assert!(new_head > self.head && self.head >= self.retrans_end);
        assert!(new_head <= self.tail, "ack beyond what was sent");
        let first = self.slot(self.head).xmit;
        self.head = new_head;
        self.trim_below_head();
        (first, self.slot(new_head - 1))
    }

    /// After the head advanced: SACK ranges, the retransmission hint, the numbering's cuts and
    /// the transmission-order list forget what lies below it.
    #[inline(always)]
    fn trim_below_head(&mut self) {
        while self.cuts.front().is_some_and(|&(i, _)| i <= self.head) {
            let (i, s) = self.cuts.pop_front().expect("a cut");
            self.off = s.wrapping_sub(i * self.mss);
        }
        // Trim SACK ranges below the new head.
        while let Some((&s, &e)) = self.sacked.iter().next() {
            if s >= self.head {
                break;
            }
            self.sacked.pop_first();
            if e > self.head {
                self.sacked.insert(self.head, e);
            }
        }
        self.retransmit_hint = self.retransmit_hint.max(self.head);
        // Acknowledged segments leave the transmission-order list too (it would otherwise
        // grow by one entry per packet on a flow that never needs RACK): the front entries
        // below the head, which in the implicit range (in index order) are those below it.
        while self.tsorted.front().is_some_and(|&(i, _)| i < self.head) {
            self.tsorted.pop_front();
        }
        if self.tsorted.is_empty() && self.ts_lo < self.head {
            self.ts_lo = self.head.min(self.ts_hi);
        }
        #[cfg(debug_assertions)]
        while self
            .tsorted_shadow
            .front()
            .is_some_and(|&(i, _)| i < self.head)
        {
            self.tsorted_shadow.pop_front();
        }
    }

    /// Mark segments `[a, b)` SACKed; calls `each` for every segment newly covered (its
    /// index, sequence range and state).
    pub fn sack(&mut self, a: u64, b: u64, mut each: impl FnMut(u64, (u64, u64), &mut Seg)) {
        let a = a.max(self.head);
        let b = b.min(self.tail());
        if a >= b {
            return;
        }
        // Merge with every range that overlaps or touches [a, b). The ranges are disjoint and
        // non-adjacent: if the highest one starting at or below `b` starts at or below `a` and
        // reaches `a`, it is the only one (the usual case: a block repeated, or grown at its
        // right edge), and it grows in place.
        // (The highest range overall, when it starts at or below `b`, is that one: read from
        // the tree's right edge, the usual case, without `range_mut`'s two-sided search.)
        let at_or_below_b = match self.sacked.last_entry() {
            Some(last) if *last.key() <= b => Some((*last.key(), last.into_mut())),
            _ => self
                .sacked
                .range_mut(..=b)
                .next_back()
                .map(|(&s, e)| (s, e)),
        };
        if let Some((s, e)) = at_or_below_b {
            if s <= a && *e >= a {
                let from = *e;
                if b > from {
                    *e = b;
                    for idx in from..b {
                        let range = (self.start(idx), self.end(idx));
                        each(idx, range, &mut self.segs[idx as usize & self.mask]);
                    }
                }
                return;
            }
        }
        // Else, in index order: the range reaching `a` from below, if any, then every range
        // starting in [a, b]; newly covered = [a, b) minus them.
        let mut lo = a;
        let mut hi = b;
        let mut cursor = a;
        let below = self
            .sacked
            .range(..a)
            .next_back()
            .filter(|&(_, &e)| e >= a)
            .map(|(&s, &e)| (s, e));
        let mut next = below.or_else(|| self.first_sacked_in(a, b));
        while let Some((s, e)) = next {
            lo = lo.min(s);
            hi = hi.max(e);
            let gap_end = s.min(b);
            for idx in cursor..gap_end.max(cursor) {
                let range = (self.start(idx), self.end(idx));
                each(idx, range, &mut self.segs[idx as usize & self.mask]);
            }
            cursor = cursor.max(e);
            self.sacked.remove(&s);
            next = self.first_sacked_in(a, b);
        }
        for idx in cursor..b.max(cursor) {
            let range = (self.start(idx), self.end(idx));
            each(idx, range, &mut self.segs[idx as usize & self.mask]);
        }
        self.sacked.insert(lo, hi);
    }

    /// The lowest SACKed range starting in `[a, b]`.
    fn first_sacked_in(&self, a: u64, b: u64) -> Option<(u64, u64)> {
        self.sacked.range(a..=b).next().map(|(&s, &e)| (s, e))
    }

    /// One past the highest SACKed segment, if any.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.sacked.iter().next_back().map(|(_, &e)| e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg() -> Seg {
        VACANT
    }

    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(1000);
        for _ in 0..n {
            sb.push(seg(), 1000);
        }
        sb
    }

    fn sack(sb: &mut Scoreboard, a: u64, b: u64) -> Vec<u64> {
        let mut v = Vec::new();
        sb.sack(a, b, |i, _, s| {
            s.sacked = true;
            v.push(i)
        });
        v
    }

    #[test]
    fn repeated_sack_blocks_touch_only_new_segments() {
        let mut sb = board(20);
        assert_eq!(sack(&mut sb, 5, 8), vec![5, 6, 7]);
        assert_eq!(sack(&mut sb, 5, 8), Vec::<u64>::new());
        assert_eq!(sack(&mut sb, 5, 10), vec![8, 9]);
    }

    #[test]
    fn a_block_spanning_two_ranges_fills_only_the_gap_and_merges() {
        let mut sb = board(20);
        sack(&mut sb, 2, 4);
        sack(&mut sb, 6, 8);
        assert_eq!(sack(&mut sb, 1, 10), vec![1, 4, 5, 8, 9]);
        assert_eq!(sb.highest_sacked(), Some(10));
        assert_eq!(sack(&mut sb, 1, 10), Vec::<u64>::new());
    }

    #[test]
    fn cumulative_ack_trims_sack_ranges() {
        let mut sb = board(20);
        sack(&mut sb, 3, 6);
        sb.pop_acked(4, |_, _, _| {});
        assert_eq!(sb.head, 4);
        assert_eq!(sack(&mut sb, 4, 7), vec![6]);
    }

    #[test]
    fn cumulative_ack_prunes_the_transmission_order_list() {
        let mut sb = board(10);
        sb.pop_acked(6, |_, _, _| {});
        assert_eq!(sb.tsorted_entries().len(), 4);
        assert_eq!(sb.tsorted_front().map(|e| e.0), Some(6));
    }

    #[test]
    fn the_transmission_order_list_reads_as_the_list_of_every_entry() {
        // Against the list kept entry by entry: sends, retransmissions (time overwritten
        // after the entry is recorded, as `__tcp_retransmit_skb` does), cumulative ACKs,
        // RACK's pops from the front, and a rebuilt list, in random order.
        let mut sb = Scoreboard::new(1000);
        let mut reference: VecDeque<(u64, SimTime)> = VecDeque::new();
        let mut now = 0u64;
        let mut rng = satcc_core::Rng::new(7);
        for step in 0..20_000 {
            let x = rng.next_u64();
            now += (x >> 60) % 2; // several events at one instant now and then
            let t = SimTime::from_nanos(now);
            match (x >> 33) % 100 {
                0..=49 => {
                    let mut s = seg();
                    s.xmit = t;
                    let idx = sb.push(s, 1000);
                    reference.push_back((idx, t));
                }
                50..=54 if !sb.is_empty() => {
                    let idx = sb.head + (x >> 20) % sb.len();
                    sb.retransmitted(idx, t);
                    sb.get_mut(idx).xmit = t;
                    reference.push_back((idx, t));
                }
                55..=74 if !sb.is_empty() => {
                    let h = sb.head + 1 + (x >> 24) % sb.len().min(4);
                    if (x >> 40).is_multiple_of(2) || sb.head < sb.retrans_end {
                        sb.pop_acked(h, |_, _, _| {});
                    } else {
                        sb.pop_acked_run(h);
                    }
                    while reference.front().is_some_and(|&(i, _)| i < sb.head) {
                        reference.pop_front();
                    }
                }
                75..=89 if reference.pop_front().is_some() => sb.tsorted_pop(),
                90 => {
                    let v: VecDeque<(u64, SimTime)> = (sb.head..sb.tail())
                        .filter(|i| i % 3 != 0)
                        .map(|i| (i, sb.get(i).xmit))
                        .collect();
                    sb.set_tsorted(v.clone());
                    reference = v;
                }
                _ => {}
            }
            assert_eq!(
                sb.tsorted_front(),
                reference.front().copied(),
                "step {step}"
            );
            assert!(
                sb.tsorted_entries().iter().eq(reference.iter()),
                "step {step}"
            );
        }
    }

    #[test]
    fn sack_marks_exactly_the_new_segments_in_order_and_keeps_maximal_ranges() {
        // Against a per-segment flag array: blocks repeated, grown, bridging, inside and
        // overlapping ranges, with the head advancing now and then.
        let n = 400;
        let mut sb = board(n);
        let mut flags = vec![false; n as usize];
        let mut rng = satcc_core::Rng::new(99);
        for k in 0..5000 {
            let x = rng.next_u64();
            let a = sb.head + (x >> 33) % 60;
            let b = a + 1 + (x >> 45) % 12;
            let expected: Vec<u64> = (a.max(sb.head)..b.min(sb.tail()))
                .filter(|&i| !flags[i as usize])
                .collect();
            assert_eq!(sack(&mut sb, a, b), expected, "block {a}..{b} at step {k}");
            for &i in &expected {
                flags[i as usize] = true;
            }
            if k % 97 == 0 && sb.head + 20 < sb.tail() {
                let h = sb.head + 3 + (x >> 50) % 8;
                sb.pop_acked(h, |_, _, _| {});
            }
            // The ranges are the maximal runs of SACKed segments at or above the head.
            let mut runs = Vec::new();
            let mut i = sb.head;
            while i < sb.tail() {
                if flags[i as usize] {
                    let s = i;
                    while i < sb.tail() && flags[i as usize] {
                        i += 1;
                    }
                    runs.push((s, i));
                } else {
                    i += 1;
                }
            }
            assert_eq!(
                sb.sacked.iter().map(|(&s, &e)| (s, e)).collect::<Vec<_>>(),
                runs
            );
            assert_eq!(sb.highest_sacked(), runs.last().map(|r| r.1));
        }
    }

    #[test]
    fn the_ring_holds_what_a_queue_of_the_same_segments_holds() {
        // Against a `VecDeque` of the segments held: pushes (growing the ring while it
        // wraps), cumulative ACKs one by one and in runs, changes through `get_mut` and
        // `iter_mut`, in random order.
        let mut sb = Scoreboard::new(1000);
        let mut reference: VecDeque<Seg> = VecDeque::new();
        let mut rng = satcc_core::Rng::new(3);
        for step in 0..20_000u64 {
            let x = rng.next_u64();
            // Phases of sending more than is acknowledged, then less, so the ring grows and
            // empties over and over.
            let sending = (step / 500) % 2 == 0;
            match (x >> 33) % 10 {
                0..=5 if sending || sb.is_empty() => {
                    let mut s = seg();
                    s.xmit = SimTime::from_nanos(step);
                    s.delivered = x >> 40;
                    assert_eq!(sb.push(s, 1000), sb.tail() - 1);
                    reference.push_back(s);
                }
                0..=7 if !sb.is_empty() => {
                    let h = sb.head + 1 + (x >> 24) % sb.len().min(5);
                    let n = (h - sb.head) as usize;
                    if (x >> 40).is_multiple_of(2) {
                        let mut popped = Vec::new();
                        sb.pop_acked(h, |i, _, s| popped.push((i, s)));
                        let first = h - n as u64;
                        for (k, (i, s)) in popped.into_iter().enumerate() {
                            assert_eq!((i, s), (first + k as u64, reference[k]), "step {step}");
                        }
                    } else {
                        let (first, last) = sb.pop_acked_run(h);
                        assert_eq!((first, *last), (reference[0].xmit, reference[n - 1]));
                    }
                    reference.drain(..n);
                }
                8 if !sb.is_empty() => {
                    let k = (x >> 20) % sb.len();
                    sb.get_mut(sb.head + k).lost = true;
                    reference[k as usize].lost = true;
                }
                9 => {
                    for (s, r) in sb.iter_mut().zip(reference.iter_mut()) {
                        s.delivered_ce += 1;
                        r.delivered_ce += 1;
                    }
                }
                _ => {}
            }
            assert_eq!(sb.len(), reference.len() as u64, "step {step}");
            assert!(sb.iter().eq(reference.iter()), "step {step}");
            for (k, r) in reference.iter().enumerate() {
                assert_eq!(sb.get(sb.head + k as u64), r, "step {step}");
            }
        }
    }

    #[test]
    fn short_segments_cut_the_numbering_and_lookups_follow_it() {
        // Segments of 1000, 100, 1000, 1000, 40, 1000 bytes (MSS 1000): starts 0, 1000, 1100,
        // 2100, 3100, 3140; end 4140.
        let lens = [1000u32, 100, 1000, 1000, 40, 1000];
        let mut sb = Scoreboard::new(1000);
        for &l in &lens {
            sb.push(seg(), l);
        }
        let starts: Vec<u64> = (0..6).map(|i| sb.start(i)).collect();
        assert_eq!(starts, vec![0, 1000, 1100, 2100, 3100, 3140]);
        let ends: Vec<u64> = (0..6).map(|i| sb.end(i)).collect();
        assert_eq!(ends, vec![1000, 1100, 2100, 3100, 3140, 4140]);
        // Against a linear search over the segments, for every sequence number.
        for seq in 0..=4140u64 {
            let floor = (0..6u64).find(|&i| sb.end(i) > seq).unwrap_or(6);
            let ceil = (0..6u64).find(|&i| sb.start(i) >= seq).unwrap_or(6);
            assert_eq!(sb.idx_floor(seq), floor, "floor {seq}");
            assert_eq!(sb.idx_ceil(seq), ceil, "ceil {seq}");
        }
        // The head passing a cut folds it: lookups above the head stay the same.
        sb.pop_acked(3, |_, _, _| {});
        assert_eq!((sb.start(3), sb.start(4), sb.start(5)), (2100, 3100, 3140));
        assert_eq!((sb.idx_floor(3139), sb.idx_floor(3140)), (4, 5));
        sb.pop_acked(5, |_, _, _| {});
        assert!(sb.cuts.is_empty());
        assert_eq!(
            (sb.start(5), sb.end(5), sb.idx_floor(4140)),
            (3140, 4140, 6)
        );
    }

    #[test]
    fn blocks_beyond_what_was_sent_are_clamped() {
        let mut sb = board(5);
        assert_eq!(sack(&mut sb, 3, 100), vec![3, 4]);
    }
}
