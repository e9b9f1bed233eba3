//! Per-flow statistics the sender keeps for the run's summary.

use std::sync::OnceLock;

/// Log-linear histogram of RTT samples: buckets 0.5 % wide, so percentiles are exact to
/// within half a percent at any scale while memory stays a few kilobytes.
#[derive(Clone, Debug, Default)]
pub struct RttHistogram {
    counts: Vec<u64>,
    n: u64,
    sum_us: f64,
    min_us: u64,
    /// The bucket of the last sample placed by the table (most samples fall in it again),
    /// and its bounds `[last_lo, last_hi)` (an empty range until then).
    last: usize,
    last_lo: u64,
    last_hi: u64,
    /// [`bounds`], once looked up.
    table: Option<&'static [u64]>,
}

/// Bucket growth factor.
const STEP: f64 = 1.005;

/// The bucket of a sample of `v` µs (v ≥ 1): ⌊ln v / ln STEP⌋.
fn bucket_of(v: u64) -> usize {
    ((v as f64).ln() / STEP.ln()) as usize
}

/// `bounds()[b]`: the smallest sample in bucket `b` or above ([`bucket_of`] as a table, so a
/// sample is placed without a logarithm), for every bucket up to 2^32 µs (71 minutes); built
/// once per process (~4,400 buckets, a few logarithms each).
fn bounds() -> &'static [u64] {
    static BOUNDS: OnceLock<Vec<u64>> = OnceLock::new();
    BOUNDS.get_or_init(|| {
        let top = bucket_of(1 << 32) + 1;
        let mut out = Vec::with_capacity(top + 1);
        for b in 0..=top {
            // smallest g with bucket_of(g) >= b, from the estimate STEP^b
            let mut g = (STEP.powi(b as i32).ceil() as u64).max(1);
            while g > 1 && bucket_of(g - 1) >= b {
                g -= 1;
            }
            while bucket_of(g) < b {
                g += 1;
            }
            out.push(g);
        }
        out
    })
}

impl RttHistogram {
    /// [`bucket_of`]`(v)`, read from the table of bucket bounds (beyond it, computed).
    #[inline]
    fn bucket(&mut self, v: u64) -> usize {
        if self.last_lo <= v && v < self.last_hi {
            debug_assert_eq!(self.last, bucket_of(v), "stale bucket bounds");
            return self.last;
        }
        self.bucket_by_table(v)
    }

    /// [`bucket`](Self::bucket) off the last bucket: a search of the table.
    fn bucket_by_table(&mut self, v: u64) -> usize {
        let bounds = *self.table.get_or_insert_with(bounds);
        if v >= bounds[bounds.len() - 1] {
            return bucket_of(v);
        }
        let b = bounds.partition_point(|&lo| lo <= v) - 1;
        self.last = b;
        (self.last_lo, self.last_hi) = (bounds[b], bounds[b + 1]);
        b
    }

    pub fn record(&mut self, rtt_us: u64) {
        let v = rtt_us.max(1);
        let b = self.bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        if self.n == 0 || v < self.min_us {
            self.min_us = v;
        }
        self.n += 1;
        self.sum_us += v as f64;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean_ms(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_us / self.n as f64 / 1000.0)
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
        for (b, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                let mid = STEP.powf(b as f64 + 0.5);
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
    fn the_bucket_table_places_every_sample_where_the_logarithm_does() {
        let mut h = RttHistogram::default();
        // every value to 3 s, then up and down across the range as RTTs jump
        for v in
            (1..=3_000_000u64).chain((0..200_000u64).map(|k| 1 + (k * 7_919_993) % 400_000_000))
        {
            assert_eq!(h.bucket(v), bucket_of(v), "v = {v}");
        }
        assert!(bounds().windows(2).all(|w| w[0] <= w[1]));
        for v in [(1u64 << 32) - 1, 1 << 32, (1 << 32) + 1, 1 << 40] {
            assert_eq!(h.bucket(v), bucket_of(v), "v = {v}");
        }
    }
}
