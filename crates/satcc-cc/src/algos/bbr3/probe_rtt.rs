//! min-RTT filters and PROBE_RTT (`bbr_update_min_rtt`, `bbr_check_probe_rtt_done`,
//! `bbr_exit_probe_rtt`, `bbr_probe_rtt_cwnd`).
//!
//! v3 keeps two filters: `probe_rtt_min` over 5 s, which schedules PROBE_RTT, and `min_rtt`
//! over 10 s, which the model uses (refreshed from the 5 s filter). When 5 s pass without a
//! lower RTT sample, PROBE_RTT caps cwnd at max(4, ½ BDP) for max(200 ms, 1 round), then
//! returns to PROBE_BW (CRUISE) or, if STARTUP never ended, to STARTUP.

use satcc_core::SimTime;

use super::super::bbr::rate::BBR_UNIT;
use super::{AckPhase, Bbr3, Mode, ProbeRttDone, CWND_MIN_TARGET};
use crate::{AckSample, TcpState};

/// `bbr_min_rtt_win_sec`: min-RTT filter window, seconds.
const MIN_RTT_WIN_SEC: u64 = 10;
/// `bbr_probe_rtt_win_ms`: PROBE_RTT filter window, and so the interval between PROBE_RTTs.
pub(super) const PROBE_RTT_WIN_MS: u64 = 5_000;
/// `bbr_probe_rtt_mode_ms`: minimum time at the PROBE_RTT cwnd.
pub(super) const PROBE_RTT_MODE_MS: u64 = 200;
/// `bbr_probe_rtt_cwnd_gain`: PROBE_RTT cwnd = ½ BDP.
pub(super) const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;

impl Bbr3 {
    /// `bbr_probe_rtt_cwnd`: max(4, ½ BDP).
    pub(super) fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// `bbr_update_min_rtt`.
    pub(super) fn update_min_rtt(&mut self, now: SimTime, tcp: &mut TcpState, rs: &AckSample) {
        let now_j = self.cfg.hz.jiffies(now);
        let probe_rtt_expired = now_j
            > self.probe_rtt_min.stamp_jiffies + self.cfg.hz.msecs_to_jiffies(PROBE_RTT_WIN_MS);
        if let Some(rtt_us) = rs.rtt_us {
            let rtt_us = rtt_us.min(u64::from(u32::MAX)) as u32;
            if rtt_us < self.probe_rtt_min.us_or_max() || (probe_rtt_expired && !rs.is_ack_delayed)
            {
                self.probe_rtt_min = super::MinRtt {
                    us: Some(rtt_us),
                    stamp_jiffies: now_j,
                };
            }
        }
        let min_rtt_expired =
            now_j > self.min_rtt.stamp_jiffies + MIN_RTT_WIN_SEC * self.cfg.hz.get();
        if self.probe_rtt_min.us_or_max() <= self.min_rtt.us_or_max() || min_rtt_expired {
            self.min_rtt = self.probe_rtt_min;
        }

        if probe_rtt_expired && !self.idle_restart && !matches!(self.mode, Mode::ProbeRtt { .. }) {
            self.mode = Mode::ProbeRtt { done: None }; // dip, drain queue
            self.save_cwnd(tcp);
            self.ack_phase = AckPhase::ProbeStopping;
            self.round.next_delivered = tcp.delivered;
        }

        if let Mode::ProbeRtt { done } = self.mode {
            // Ignore low-rate samples while inflight is held down.
            tcp.app_limited = (tcp.delivered + u64::from(tcp.in_flight())).max(1);
            match done {
                None if tcp.in_flight() <= self.probe_rtt_cwnd() => {
                    // At the PROBE_RTT cwnd: hold max(200 ms, 1 round) from now.
                    let stamp_jiffies = now_j + self.cfg.hz.msecs_to_jiffies(PROBE_RTT_MODE_MS);
                    self.mode = Mode::ProbeRtt {
                        done: Some(ProbeRttDone {
                            stamp_jiffies,
                            round_done: false,
                        }),
                    };
                    self.round.next_delivered = tcp.delivered;
                }
                Some(mut d) => {
                    if self.round.start {
                        d.round_done = true;
                        self.mode = Mode::ProbeRtt { done: Some(d) };
                    }
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

    /// `bbr_check_probe_rtt_done`: after the hold, schedule the next PROBE_RTT, restore cwnd.
    pub(super) fn check_probe_rtt_done(&mut self, now: SimTime, tcp: &mut TcpState) {
        let Mode::ProbeRtt { done: Some(d) } = self.mode else {
            return;
        };
        let now_j = self.cfg.hz.jiffies(now);
        if now_j <= d.stamp_jiffies {
            return;
        }
        self.probe_rtt_min.stamp_jiffies = now_j; // schedule the next PROBE_RTT
        tcp.cwnd = tcp.cwnd.max(self.prior_cwnd).min(tcp.cwnd_clamp);
        self.exit_probe_rtt(now, tcp);
    }

    /// `bbr_exit_probe_rtt`: lift the lower bounds; PROBE_BW (via DOWN, straight to CRUISE
    /// since inflight is below BDP) or STARTUP.
    fn exit_probe_rtt(&mut self, now: SimTime, tcp: &TcpState) {
        self.model.reset_lower();
        if self.full_bw.reached {
            self.start_bw_probe_down(now, tcp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }
}
