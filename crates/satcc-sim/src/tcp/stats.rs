//! Per-flow statistics the sender keeps for the run's summary.

use std::sync::OnceLock;

/// Log-linear histogram of RTT samples: buckets 0.5 % wide, so percentiles are exact to
/// within half a percent at any scale while memory stays a few kilobytes.
#[derive(Clone, Debug, Default)]
pub struct RttHistogram {
    /// Samples per bucket from bucket `base` on: only the span the samples cover is held
    /// (a path's RTTs span tens of buckets, where counting from bucket 0 would hold ~2,000
    /// for 50 ms: 17 kB a flow, written and scanned once each).
    counts: Vec<u64>,
    base: usize,
    n: u64,
    /// The samples' sum, as an integer: the `f64` sum it replaced was exact only while below
    /// 2^53 µs (285 years of RTT), where the mean is the same (no per-sample conversion).
    sum_us: u128,
    min_us: u64,
    /// For samples from [`BY_US`] on: the bucket of the last one below the table's top
    /// (most samples fall in it again), and its bounds `[last_lo, last_hi)` (an empty range
    /// until then).
    last: usize,
    last_lo: u64,
    last_hi: u64,
}

/// Bucket growth factor.
const STEP: f64 = 1.005;

/// The bucket of a sample of `v` µs (v ≥ 1): ⌊ln v / ln STEP⌋.
fn bucket_of(v: u64) -> usize {
    ((v as f64).ln() / STEP.ln()) as usize
}

/// Bounds in each piece of the bounds table.
const PIECE: usize = 64;
/// Pieces of the table: enough for every bucket to [`top`] (4,448).
const PIECES: usize = 70;

/// The first bucket beyond the table: samples from 2^32 µs (71 minutes) on.
fn top() -> usize {
    static TOP: OnceLock<usize> = OnceLock::new();
    *TOP.get_or_init(|| {
        let top = bucket_of(1 << 32) + 1;
        assert!(top < PIECES * PIECE, "the bounds table is too short");
        top
    })
}

/// The smallest sample in bucket `b` or above ([`bucket_of`] as a table, so the bounds of a
/// sample's bucket are known without a logarithm each), for `b <= top()`. The table is built
/// once per process, a piece of 64 bounds (a few logarithms each) when first read: a run
/// reads the few pieces its RTTs span, not all 4,448 bounds.
fn bound(b: usize) -> u64 {
    static TABLE: [OnceLock<[u64; PIECE]>; PIECES] = [const { OnceLock::new() }; PIECES];
    TABLE[b / PIECE].get_or_init(|| {
        let first = b / PIECE * PIECE;
        std::array::from_fn(|i| smallest_in(first + i))
    })[b % PIECE]
}

/// The smallest `g` with `bucket_of(g) >= b`, searched from the estimate STEP^b.
fn smallest_in(b: usize) -> u64 {
    let mut g = (STEP.powi(b as i32).ceil() as u64).max(1);
    while g > 1 && bucket_of(g - 1) >= b {
        g -= 1;
    }
    while bucket_of(g) < b {
        g += 1;
    }
    g
}

/// Microseconds in each piece of the per-µs table ([`bucket_by_us`]).
const US_PIECE_BITS: u32 = 12;
const US_PIECE: usize = 1 << US_PIECE_BITS;
/// Samples below this (2^22 µs, 4.2 s: bucket 3,058) have their bucket read from the per-µs
/// table.
const BY_US: u64 = 1 << 22;

/// [`bucket_of`]`(v)` for `1 <= v <` [`BY_US`], read from a table of every µs: built once per
/// process, a piece of 4,096 µs (8 kB, from the bounds table: no logarithm) when first read,
/// so a run holds the few pieces its RTTs span. A sender whose GSO packets leave back to back
/// (`tso_defer`) samples RTTs a few buckets apart in turn (the packet's segments are
/// acknowledged one bottleneck slot later each): one read a sample, whichever bucket.
#[inline]
fn bucket_by_us(v: u64) -> usize {
    static TABLE: [OnceLock<Box<[u16; US_PIECE]>>; (BY_US >> US_PIECE_BITS) as usize] =
        [const { OnceLock::new() }; (BY_US >> US_PIECE_BITS) as usize];
    let p = (v >> US_PIECE_BITS) as usize;
    let piece = TABLE[p].get_or_init(|| us_piece((p * US_PIECE) as u64));
    usize::from(piece[v as usize & (US_PIECE - 1)])
}

/// The buckets of `first..first + US_PIECE` (of 1 for 0): each bucket's run of µs from the
/// bounds table.
#[cold]
fn us_piece(first: u64) -> Box<[u16; US_PIECE]> {
    let mut piece = Box::new([0u16; US_PIECE]);
    let end = first + US_PIECE as u64;
    let (mut b, mut v) = (bucket_of(first.max(1)), first);
    while v < end {
        let next = bound(b + 1).min(end);
        let b16 = u16::try_from(b).expect("a bucket below BY_US fits in 16 bits");
        piece[(v - first) as usize..(next - first) as usize].fill(b16);
        (b, v) = (b + 1, next);
    }
    piece
}

impl RttHistogram {
    /// [`bucket_of`]`(v)` (v ≥ 1): the per-µs table's below [`BY_US`]; above it two
    /// comparisons when `v` falls in the last such sample's bucket, else the logarithm.
    #[inline]
    fn bucket(&mut self, v: u64) -> usize {
        if v < BY_US {
            let b = bucket_by_us(v);
            debug_assert_eq!(b, bucket_of(v), "the per-µs table's bucket");
            return b;
        }
        if self.last_lo <= v && v < self.last_hi {
            debug_assert_eq!(self.last, bucket_of(v), "stale bucket bounds");
            return self.last;
        }
        self.bucket_by_log(v)
    }

    /// [`bucket`](Self::bucket) from [`BY_US`] on, off the last bucket: the logarithm, and
    /// the bucket's bounds from the table to place the next samples by (below the table's
    /// top). Not inlined: most samples fall in the last bucket.
    #[inline(never)]
    fn bucket_by_log(&mut self, v: u64) -> usize {
        let b = bucket_of(v);
        if b < top() {
            self.last = b;
            (self.last_lo, self.last_hi) = (bound(b), bound(b + 1));
            debug_assert!(self.last_lo <= v && v < self.last_hi, "bucket bounds");
        }
        b
    }

    pub fn record(&mut self, rtt_us: u64) {
        let v = rtt_us.max(1);
        let b = self.bucket(v);
        match self.counts.get_mut(b.wrapping_sub(self.base)) {
            Some(c) => *c += 1,
            None => self.count_outside(b),
        }
        if self.n == 0 || v < self.min_us {
            self.min_us = v;
        }
        self.n += 1;
        self.sum_us += u128::from(v);
    }

    /// Count a sample in bucket `b`, outside the span held so far: the span grows to it.
    #[inline(never)]
    fn count_outside(&mut self, b: usize) {
        if self.counts.is_empty() {
            self.base = b;
        } else if b < self.base {
            let grow = self.base - b;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.base = b;
        }
        let i = b - self.base;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean_ms(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_us as f64 / self.n as f64 / 1000.0)
    }

    pub fn min_ms(&self) -> Option<f64> {
        (self.n > 0).then(|| self.min_us as f64 / 1000.0)
    }

    /// The `q`-quantile (0..1), at the bucket's geometric middle.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                let mid = STEP.powf((self.base + i) as f64 + 0.5);
                return Some(mid / 1000.0);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_within_half_a_percent() {
        let mut h = RttHistogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 100);
        }
        let p95 = h.quantile_ms(0.95).unwrap();
        assert!((p95 - 950.0).abs() / 950.0 < 0.005, "p95 = {p95}");
        assert!((h.mean_ms().unwrap() - 500.05).abs() < 1e-6);
        assert_eq!(h.min_ms(), Some(0.1));
    }

    #[test]
    fn the_histogram_holds_only_the_buckets_its_samples_span() {
        // RTTs between 40 and 60 ms span ~80 buckets of 0.5 %; counting from bucket 0 held
        // ~2,200 (4096 flows: 72 MB). Samples arriving below the first one extend it down.
        let mut h = RttHistogram::default();
        for v in (50_000..60_000u64)
            .step_by(7)
            .chain((40_000..50_000u64).rev().step_by(11))
        {
            h.record(v);
        }
        assert!(h.counts.len() < 100, "{} buckets held", h.counts.len());
        let mut full = [0u64; 3000];
        for v in (50_000..60_000u64)
            .step_by(7)
            .chain((40_000..50_000u64).rev().step_by(11))
        {
            full[bucket_of(v)] += 1;
        }
        assert_eq!(&full[h.base..h.base + h.counts.len()], &h.counts[..]);
        assert_eq!(full.iter().sum::<u64>(), h.counts.iter().sum::<u64>());
        let p95 = h.quantile_ms(0.95).unwrap();
        assert!((56.0..60.5).contains(&p95), "p95 = {p95}");
    }

    #[test]
    fn the_bucket_table_places_every_sample_where_the_logarithm_does() {
        let mut h = RttHistogram::default();
        // every value to 3 s, then up and down across the range as RTTs jump
        for v in
            (1..=3_000_000u64).chain((0..200_000u64).map(|k| 1 + (k * 7_919_993) % 400_000_000))
        {
            assert_eq!(h.bucket(v), bucket_of(v), "v = {v}");
        }
        // Every bound is the smallest sample of its bucket or above, per the logarithm.
        for b in 0..=top() {
            let g = bound(b);
            assert!(
                bucket_of(g) >= b && (g == 1 || bucket_of(g - 1) < b),
                "bound {b}"
            );
        }
        for v in [(1u64 << 32) - 1, 1 << 32, (1 << 32) + 1, 1 << 40] {
            assert_eq!(h.bucket(v), bucket_of(v), "v = {v}");
        }
    }

    /// Samples a few buckets from the last and further, at every scale, across empty
    /// buckets (below ~200 µs a bucket is narrower than 1 µs), the per-µs table's pieces
    /// and top and the bounds table's top: every one where the logarithm puts it.
    #[test]
    fn samples_near_the_last_bucket_are_placed_where_the_logarithm_does() {
        let mut h = RttHistogram::default();
        let mut v = 1u64;
        let mut k = 0u64;
        while v < 1 << 34 {
            for step in [1.004, 0.997, 1.02, 0.96, 1.06, 0.93, 1.3] {
                k += 1;
                let w = ((v as f64 * step) as u64).max(1) + k % 3;
                assert_eq!(h.bucket(w), bucket_of(w), "w = {w}");
            }
            assert_eq!(h.bucket(v), bucket_of(v), "v = {v}");
            v = v + v / 50 + 1;
        }
        // a deferring sender's sawtooth: bursts of 8 samples 116 µs apart, the burst's start
        // drifting up
        for burst in 0..2_000u64 {
            for k in 0..8 {
                let w = 60_000 + burst * 7 + k * 116;
                assert_eq!(h.bucket(w), bucket_of(w), "w = {w}");
            }
        }
        for v in [
            BY_US - 1,
            BY_US,
            BY_US + 1,
            BY_US - 1,
            (1u64 << 32) - 2,
            (1 << 32) - 1,
            1 << 32,
            (1 << 32) - 1,
            1 << 33,
        ] {
            assert_eq!(h.bucket(v), bucket_of(v), "v = {v}");
        }
    }
}
