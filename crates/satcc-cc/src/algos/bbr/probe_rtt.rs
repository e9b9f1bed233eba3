//! The min-RTT filter and PROBE_RTT (`bbr_update_min_rtt`, `bbr_check_probe_rtt_done`).
//!
//! min RTT is the lowest RTT sample of the last 10 s. When it expires without a new low
//! (and the flow did not just restart from idle), BBR enters PROBE_RTT: cwnd drops to 4,
//! and once inflight is down to 4 it holds for max(200 ms, one round), then re-arms the
//! 10 s window and returns to PROBE_BW (or STARTUP if the pipe was never filled). Flows
//! with natural silences refresh min RTT for free and never pay the ~2 % (200 ms / 10 s).

use satcc_core::SimTime;

use super::{Bbr, Mode, ProbeRttDone, CWND_MIN_TARGET};
use crate::{AckSample, TcpState};

/// `bbr_min_rtt_win_sec`: min-RTT filter window, seconds.
pub(super) const MIN_RTT_WIN_SEC: u64 = 10;
/// `bbr_probe_rtt_mode_ms`: minimum time at the cwnd floor in PROBE_RTT.
pub(super) const PROBE_RTT_MODE_MS: u64 = 200;

impl Bbr {
    /// `bbr_update_min_rtt`.
    pub(super) fn update_min_rtt(&mut self, now: SimTime, tcp: &mut TcpState, rs: &AckSample) {
        let now_j = self.cfg.hz.jiffies(now);
        let hz = self.cfg.hz;
        let filter_expired = now_j > self.min_rtt.stamp_jiffies + MIN_RTT_WIN_SEC * hz.get();
        if let Some(rtt_us) = rs.rtt_us {
            let rtt_us = rtt_us.min(u64::from(u32::MAX)) as u32;
            let lower = !matches!(self.min_rtt.us, Some(m) if rtt_us > m); // rtt_us <= min_rtt_us
            if lower || (filter_expired && !rs.is_ack_delayed) {
                self.min_rtt.us = Some(rtt_us);
                self.min_rtt.stamp_jiffies = now_j;
            }
        }

        if filter_expired && !self.idle_restart && !matches!(self.mode, Mode::ProbeRtt { .. }) {
            self.mode = Mode::ProbeRtt { done: None }; // dip, drain queue
            self.save_cwnd(tcp);
        }

        if let Mode::ProbeRtt { done } = self.mode {
            // Ignore low-rate samples while inflight is held down.
            tcp.app_limited = (tcp.delivered + u64::from(tcp.in_flight())).max(1);
            match done {
                None if tcp.in_flight() <= CWND_MIN_TARGET => {
                    // At the floor: hold max(200 ms, 1 round) from now.
                    let hold = hz.msecs_to_jiffies(PROBE_RTT_MODE_MS);
                    self.mode = Mode::ProbeRtt {
                        done: Some(ProbeRttDone {
                            stamp_jiffies: now_j + hold,
                            round_done: false,
                        }),
                    };
                    self.round.next_delivered = tcp.delivered;
                }
                Some(mut d) => {
                    if self.round.start {
                        d.round_done = true;
                    }
                    self.mode = Mode::ProbeRtt { done: Some(d) };
                    if d.round_done {
                        self.check_probe_rtt_done(now, tcp);
                    }
                }
                None => {}
            }
        }
        // Restart after idle ends once a new (S)ACK delivers data.
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    /// `bbr_check_probe_rtt_done`: leave PROBE_RTT after its hold time.
    pub(super) fn check_probe_rtt_done(&mut self, now: SimTime, tcp: &mut TcpState) {
        let Mode::ProbeRtt { done: Some(d) } = self.mode else {
            return;
        };
        let now_j = self.cfg.hz.jiffies(now);
        if now_j <= d.stamp_jiffies {
            return;
        }
        self.min_rtt.stamp_jiffies = now_j; // wait a while until the next PROBE_RTT
        tcp.cwnd = tcp.cwnd.max(self.recovery.prior_cwnd);
        self.reset_mode(tcp);
    }
}
