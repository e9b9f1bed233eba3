//! Windowed max filter: Kathleen Nichols' algorithm as in Linux `lib/win_minmax.c`
//! (`minmax_running_max`, `minmax_subwin_update`).
//!
//! Keeps the best, second-best and third-best samples of the last `win` time units with
//! their times (n-th best is never older than the (n−1)-th), so the max over a sliding
//! window costs O(1) space and time and is almost always exact. BBR uses it over packet-
//! timed rounds (`rtt_cnt`) with a window of 10 rounds.

/// One (time, value) sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u32,
    v: u32,
}

/// `struct minmax` used as a running max.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    /// `minmax_reset`: forget everything; `v` at `t` is the max.
    pub fn reset(&mut self, t: u32, v: u32) -> u32 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// `minmax_get`: the windowed max.
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_running_max`: add `v` measured at `t`; returns the windowed max.
    pub fn running_max(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let val = Sample { t, v };
        // A new max, or nothing left in the window: start over.
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_subwin_update`: age the choices as time passes.
    fn subwin_update(&mut self, win: u32, val: Sample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best is out of the window: promote the 2nd and 3rd (maybe twice).
            self.s = [self.s[1], self.s[2], val];
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter window without a 2nd choice: take one from the 2nd quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half a window without a 3rd choice: take one from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact windowed max of `samples` (t, v) at time `now` over `win`.
    fn exact(samples: &[(u32, u32)], now: u32, win: u32) -> u32 {
        samples
            .iter()
            .filter(|s| now - s.0 <= win)
            .map(|s| s.1)
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_peak_is_forgotten_once_it_leaves_the_window() {
        let mut f = MaxFilter::default();
        f.reset(0, 0);
        f.running_max(10, 0, 100);
        for t in 1..=10 {
            assert_eq!(f.running_max(10, t, 50), 100, "t = {t}");
        }
        assert_eq!(f.running_max(10, 11, 50), 50);
    }

    #[test]
    fn the_second_best_takes_over_when_the_best_expires() {
        let mut f = MaxFilter::default();
        f.reset(0, 100);
        f.running_max(10, 3, 80);
        f.running_max(10, 6, 60);
        assert_eq!(f.running_max(10, 11, 10), 80);
        assert_eq!(f.running_max(10, 14, 10), 60);
    }

    #[test]
    fn on_a_decaying_series_the_max_is_always_a_sample_from_inside_the_window() {
        // Nichols' filter approximates here: it may report a younger sample than the
        // exact max, but never one that has left the window or one never seen.
        let mut f = MaxFilter::default();
        f.reset(0, 0);
        let mut seen = Vec::new();
        for t in 0..100u32 {
            let v = 1000 - 7 * t;
            seen.push((t, v));
            let got = f.running_max(10, t, v);
            assert!(got <= exact(&seen, t, 10), "t = {t}");
            let age = seen
                .iter()
                .find(|s| s.1 == got)
                .map(|s| t - s.0)
                .expect("a seen value");
            assert!(age <= 10, "t = {t}: reported a sample {age} rounds old");
        }
    }

    #[test]
    fn on_a_rising_series_the_max_is_the_latest_sample() {
        let mut f = MaxFilter::default();
        f.reset(0, 0);
        for t in 0..50u32 {
            assert_eq!(f.running_max(10, t, 10 * t + 5), 10 * t + 5);
        }
    }
}
