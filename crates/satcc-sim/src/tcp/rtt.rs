//! RTT estimation and RTO, as Linux `tcp_rtt_estimator` / `tcp_set_rto` (tcp_input.c),
//! which implements RFC 6298 with two Linux refinements: the variance term never falls
//! below `tcp_rto_min` (200 ms) within an RTT, and it decays at most once per RTT.
//! Also Linux's windowed minimum RTT (`tcp_update_rtt_min`, 300 s window).

use satcc_core::{SimDuration, SimTime};

/// Linux `TCP_RTO_MAX`: 120 s.
pub const RTO_MAX: SimDuration = SimDuration::from_secs(120);
/// Linux `TCP_TIMEOUT_INIT`: 1 s before the first sample (RFC 6298 §2.1).
pub const RTO_INIT: SimDuration = SimDuration::from_secs(1);
/// `sysctl_tcp_min_rtt_wlen`: 300 s.
pub const MIN_RTT_WINDOW: SimDuration = SimDuration::from_secs(300);

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT ×8, µs (`tp->srtt_us`).
    srtt8_us: u64,
    /// Mean deviation ×4, µs (`tp->mdev_us`).
    mdev4_us: u64,
    /// Maximal mdev over the last RTT (`tp->mdev_max_us`).
    mdev_max_us: u64,
    /// `tp->rttvar_us`.
    rttvar_us: u64,
    /// `tp->rtt_seq`: snd_nxt when the variance was last decayed.
    rtt_seq: u64,
    min_rto_us: u64,
    min_rtt: WindowedMin,
}

impl RttEstimator {
    pub fn new(min_rto: SimDuration) -> Self {
        RttEstimator {
            srtt8_us: 0,
            mdev4_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            min_rto_us: min_rto.as_micros(),
            min_rtt: WindowedMin::default(),
        }
    }

    /// What `rto()` and `srtt_us()` are computed from: (`srtt_us`×8, `rttvar_us`).
    pub fn state(&self) -> (u64, u64) {
        (self.srtt8_us, self.rttvar_us)
    }

    /// Smoothed RTT in µs (0 before the first sample).
    pub fn srtt_us(&self) -> u64 {
        self.srtt8_us >> 3
    }

    /// The mean deviation in µs (`tcpi_rttvar`: `tp->mdev_us >> 2`).
    pub fn mdev_us(&self) -> u64 {
        self.mdev4_us >> 2
    }

    /// `tcp_rtt_estimator`: feed one sample `m` (µs); `snd_una`/`snd_nxt` for the once-per-RTT decay.
    pub fn sample(&mut self, m_us: u64, snd_una: u64, snd_nxt: u64) {
        let m = m_us.max(1) as i64;
        if self.srtt8_us != 0 {
            let mut m = m - (self.srtt8_us >> 3) as i64; // error
            self.srtt8_us = (self.srtt8_us as i64 + m) as u64; // srtt = 7/8 srtt + 1/8 new
            if m < 0 {
                m = -m;
                m -= (self.mdev4_us >> 2) as i64;
                // Do not let a falling RTT inflate the variance (Linux's "rtt drops" rule).
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= (self.mdev4_us >> 2) as i64;
            }
            self.mdev4_us = (self.mdev4_us as i64 + m).max(0) as u64; // mdev = 3/4 mdev + 1/4 |err|
            if self.mdev4_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev4_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.min_rto_us;
            }
        } else {
            // First measurement (RFC 6298 §2.2).
            self.srtt8_us = (m as u64) << 3;
            self.mdev4_us = (m as u64) << 1;
            self.mdev_max_us = self.mdev4_us.max(self.min_rto_us);
            self.rttvar_us = self.mdev_max_us;
            self.rtt_seq = snd_nxt;
        }
    }

    /// `__tcp_set_rto` bounded by `tcp_bound_rto`: srtt + rttvar, at most 120 s.
    pub fn rto(&self) -> SimDuration {
        if self.srtt8_us == 0 {
            return RTO_INIT;
        }
        SimDuration::from_micros((self.srtt8_us >> 3) + self.rttvar_us).min(RTO_MAX)
    }

    /// `tcp_update_rtt_min`.
    pub fn update_min_rtt(&mut self, now: SimTime, rtt_us: u64) {
        self.min_rtt.update(now, rtt_us.max(1), MIN_RTT_WINDOW);
    }

    pub fn min_rtt_us(&self) -> u64 {
        self.min_rtt.min_or_max()
    }
}

/// Windowed running minimum keeping three samples (Kathleen Nichols' algorithm, as in
/// Linux lib/win_minmax.c): the best, second-best and third-best in successive sub-windows.
/// Their values never decrease from the best to the third (each step keeps that order).
/// Before the first sample the best value reads `u64::MAX` (so `min_or_max` needs no test).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowedMin {
    s: [(SimTime, u64); 3],
    init: bool,
}

impl Default for WindowedMin {
    fn default() -> Self {
        WindowedMin {
            s: [(SimTime::ZERO, u64::MAX); 3],
            init: false,
        }
    }
}

impl WindowedMin {
    /// The minimum, or `u64::MAX` before the first sample: `get().unwrap_or(u64::MAX)`.
    #[inline]
    pub fn min_or_max(&self) -> u64 {
        debug_assert_eq!(self.s[0].1, self.get().unwrap_or(u64::MAX));
        self.s[0].1
    }

    pub fn get(&self) -> Option<u64> {
        self.init.then_some(self.s[0].1)
    }

    /// `minmax_running_min`. Most samples change nothing: one above all three kept values
    /// (so above the third, by their order), while the best is younger than a quarter window
    /// (so none of the sub-window steps applies) and the third is within the window (so no
    /// restart), leaves the three as they are; that case returns before the full update.
    /// (Before the first sample no value is above the third, `u64::MAX`.)
    #[inline]
    pub fn update(&mut self, now: SimTime, v: u64, win: SimDuration) {
        if v > self.s[2].1
            && now.saturating_since(self.s[0].0) <= win.div_u64(4)
            && now.saturating_since(self.s[2].0) <= win
        {
            #[cfg(debug_assertions)]
            {
                let mut full = *self;
                full.update_full(now, v, win);
                assert_eq!(full, *self, "a windowed-min sample skipped that changes it");
            }
            return;
        }
        self.update_full(now, v, win);
    }

    /// The whole of `minmax_running_min` (not inlined: `update` skips most samples).
    #[inline(never)]
    fn update_full(&mut self, now: SimTime, v: u64, win: SimDuration) {
        let fresh = (now, v);
        if !self.init || v <= self.s[0].1 || now.saturating_since(self.s[2].0) > win {
            self.s = [fresh; 3];
            self.init = true;
            return;
        }
        if v <= self.s[1].1 {
            self.s[1] = fresh;
            self.s[2] = fresh;
        } else if v <= self.s[2].1 {
            self.s[2] = fresh;
        }
        // Subwindow bookkeeping: age out the best when it is older than the window.
        let dt = now.saturating_since(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = fresh;
            if now.saturating_since(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win.div_u64(4) {
            self.s[1] = fresh;
            self.s[2] = fresh;
        } else if self.s[2].0 == self.s[1].0 && dt > win.div_u64(2) {
            self.s[2] = fresh;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_sets_srtt_and_rto_floor_of_200ms() {
        let mut e = RttEstimator::new(SimDuration::from_millis(200));
        e.sample(50_000, 0, 10);
        assert_eq!(e.srtt_us(), 50_000);
        // rttvar = max(2·rtt, rto_min) = 200 ms → RTO = 250 ms
        assert_eq!(e.rto(), SimDuration::from_millis(250));
    }

    #[test]
    fn steady_samples_keep_rto_at_srtt_plus_min_rto() {
        let mut e = RttEstimator::new(SimDuration::from_millis(200));
        for i in 0..200 {
            e.sample(600_000, i * 10, i * 10 + 10);
        }
        assert_eq!(e.srtt_us(), 600_000);
        // Linux's integer decay leaves rttvar a few µs above the floor.
        let rto = e.rto().as_micros();
        assert!((800_000..800_010).contains(&rto), "rto = {rto} µs");
    }

    #[test]
    fn srtt_moves_an_eighth_of_the_error() {
        let mut e = RttEstimator::new(SimDuration::from_millis(200));
        e.sample(80_000, 0, 1);
        e.sample(160_000, 0, 1);
        assert_eq!(e.srtt_us(), 90_000);
    }

    #[test]
    fn a_skipped_windowed_min_sample_is_one_the_full_update_leaves_unchanged() {
        // `update` against `update_full` alone, on RTTs that fall, rise and jump, at times
        // that cross the quarter, half and whole window now and then.
        let win = SimDuration::from_secs(8);
        let (mut fast, mut full) = (WindowedMin::default(), WindowedMin::default());
        let mut now = 0u64;
        let mut rng = satcc_core::Rng::new(11);
        for step in 0..100_000 {
            let x = rng.next_u64();
            now += match (x >> 60) % 8 {
                0 => 0,
                1 => 3_000_000_000,
                _ => (x >> 20) % 50_000_000,
            };
            let v = 1
                + (x >> 33) % 1_000
                + if (x >> 44).is_multiple_of(4) {
                    5_000
                } else {
                    0
                };
            let t = SimTime::from_nanos(now);
            fast.update(t, v, win);
            full.update_full(t, v, win);
            assert_eq!(fast, full, "step {step}");
        }
    }

    #[test]
    fn windowed_min_forgets_old_minimum_after_the_window() {
        let mut w = WindowedMin::default();
        let win = SimDuration::from_secs(10);
        w.update(SimTime::from_nanos(0), 10, win);
        w.update(SimTime::from_nanos(5_000_000_000), 20, win);
        assert_eq!(w.get(), Some(10));
        w.update(SimTime::from_nanos(11_000_000_000), 30, win);
        assert_eq!(w.get(), Some(20));
    }
}
