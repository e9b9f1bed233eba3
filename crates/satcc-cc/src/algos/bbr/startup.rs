//! STARTUP and DRAIN: full-pipe detection (`bbr_check_full_bw_reached`) and the switch to
//! DRAIN and then PROBE_BW (`bbr_check_drain`).
//!
//! The pipe is estimated full when the max-filtered bandwidth has not grown by 25 % for 3
//! non-app-limited rounds ("1: rwin autotuning grows the rwin, 2: we fill the higher rwin,
//! 3: we get higher delivery rate samples", tcp_bbr.c).

use satcc_core::SimTime;

use super::rate::BBR_UNIT;
use super::{Bbr, Mode};
use crate::{AckSample, TcpState};

/// `bbr_full_bw_thresh`: growth of 5/4 or more means more bandwidth may be available.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`: rounds without such growth before the pipe is deemed full.
pub(super) const FULL_BW_CNT: u32 = 3;

impl Bbr {
    /// `bbr_check_full_bw_reached`: once per round, outside app-limited phases.
    pub(super) fn check_full_bw_reached(&mut self, rs: &AckSample) {
        if self.full_bw.reached || !self.round.start || rs.is_app_limited {
            return;
        }
        let thresh =
            (u64::from(self.full_bw.bw) * u64::from(FULL_BW_THRESH)) >> super::rate::BBR_SCALE;
        if u64::from(self.max_bw()) >= thresh {
            self.full_bw.bw = self.max_bw();
            self.full_bw.count = 0;
            return;
        }
        self.full_bw.count += 1;
        self.full_bw.reached = self.full_bw.count >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP → DRAIN when full (ssthresh = one BDP of inflight), and
    /// DRAIN → PROBE_BW once the packets in the network fall to one BDP.
    pub(super) fn check_drain(&mut self, now: SimTime, tcp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full_bw.reached {
            self.mode = Mode::Drain;
            tcp.ssthresh = self.inflight(tcp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(now, tcp, tcp.in_flight())
                <= self.inflight(tcp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tcp); // queue drained
        }
    }
}
