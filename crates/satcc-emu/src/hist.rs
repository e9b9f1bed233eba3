//! A fixed-resolution latency histogram (1 µs buckets up to 20 ms) for the emulator's own
//! timing report: how late each frame left compared with its scheduled instant.

/// Bucket width and range.
const BUCKET_NS: u64 = 1_000;
const BUCKETS: usize = 20_000;

#[derive(Clone, Debug)]
pub struct Hist {
    buckets: Vec<u64>,
    over: u64,
    n: u64,
    max_ns: u64,
    sum_ns: u128,
}

impl Default for Hist {
    fn default() -> Self {
        Hist {
            buckets: vec![0; BUCKETS],
            over: 0,
            n: 0,
            max_ns: 0,
            sum_ns: 0,
        }
    }
}

impl Hist {
    pub fn record(&mut self, ns: u64) {
        self.n += 1;
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns as u128;
        let b = (ns / BUCKET_NS) as usize;
        if b < BUCKETS {
            self.buckets[b] += 1;
        } else {
            self.over += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    pub fn mean_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.n as f64
        }
    }

    /// The upper edge of the bucket holding quantile `q` (ns); the max if it lies beyond range.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return ((i as u64 + 1) * BUCKET_NS).min(self.max_ns.max(1));
            }
        }
        self.max_ns
    }

    pub fn merge(&mut self, o: &Hist) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.over += o.over;
        self.n += o.n;
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
    }

    /// `{"n":..,"mean_us":..,"p50_us":..,"p99_us":..,"p999_us":..,"max_us":..}`
    /// Count, mean and quantiles in µs (rounded to ns) for the stats line.
    pub fn to_json(&self) -> serde_json::Value {
        let us = |ns: f64| (ns).round() / 1e3;
        serde_json::json!({
            "n": self.n,
            "mean_us": us(self.mean_ns()),
            "p50_us": us(self.quantile_ns(0.5) as f64),
            "p99_us": us(self.quantile_ns(0.99) as f64),
            "p999_us": us(self.quantile_ns(0.999) as f64),
            "max_us": us(self.max_ns as f64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_land_in_the_right_bucket() {
        let mut h = Hist::default();
        for us in 1..=100u64 {
            h.record(us * 1000 - 500);
        }
        assert_eq!(h.quantile_ns(0.5), 50_000);
        assert_eq!(h.quantile_ns(0.99), 99_000);
        assert_eq!(h.max_ns(), 99_500);
    }

    #[test]
    fn values_beyond_the_range_count_towards_the_max() {
        let mut h = Hist::default();
        h.record(1_000);
        h.record(50_000_000);
        assert_eq!(h.quantile_ns(1.0), 50_000_000);
    }
}
