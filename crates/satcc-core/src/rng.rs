//! Deterministic pseudo-random numbers, seeded from the scenario and handed in.
//!
//! xoshiro256** (Blackman & Vigna, 2018) seeded through SplitMix64, written here so the
//! stream never changes with a dependency update: same seed ⇒ same run, on every machine.

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64 step: spreads a small seed over the whole state (Steele et al., 2014).
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    /// A stream derived from this seed and a label (e.g. a link index), independent of
    /// the order in which other streams are drawn from.
    pub fn derive(seed: u64, label: u64) -> Self {
        let mut x = seed ^ label.wrapping_mul(0xD1B5_4A32_D192_ED03);
        Rng::new(splitmix64(&mut x))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        Rng::unit_f64(self.next_u64())
    }

    /// `next_f64`'s value for the draw `x` of `next_u64`: its top 53 bits over 2^53 (exact).
    #[inline(always)]
    pub fn unit_f64(x: u64) -> f64 {
        (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (p ≤ 0 never, p ≥ 1 always).
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.next_f64() < p)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_same_stream() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn derived_streams_differ_by_label() {
        let a = Rng::derive(1, 0).next_u64();
        let b = Rng::derive(1, 1).next_u64();
        assert_ne!(a, b);
    }

    #[test]
    fn chance_matches_probability_within_sampling_error() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let hits = (0..n).filter(|_| r.chance(0.01)).count() as f64;
        // mean 2000, sd ≈ 44.5: 5 sd band
        assert!((hits - 2000.0).abs() < 225.0, "hits = {hits}");
    }
}
