//! `TCP_INFO`: what the endpoint reports, and the chronographs behind `tcpi_busy_time` and
//! `tcpi_rwnd_limited` (`tcp_get_info`, `tcp_chrono_start/stop`).

use satcc_core::{Hz, SimTime};

use super::{Endpoint, State, TS_ALIGNED};
use crate::tcp::sender::{Sender, SenderInfo};

/// `enum tcp_chrono`: what a connection is doing (`tcp_chrono_start/stop`), in priority order.
pub(super) const CHRONO_UNSPEC: u8 = 0;
const CHRONO_BUSY: u8 = 1;
const CHRONO_RWND_LIMITED: u8 = 2;

/// What the endpoint's `TCP_INFO` reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointInfo {
    pub state: u8,
    /// `TCPI_OPT_*`: timestamps 1, SACK 2, window scaling 4, ECN 8.
    pub options: u8,
    pub snd_wscale: u32,
    pub rcv_wscale: u32,
    pub ato_us: u64,
    pub rcv_mss: u64,
    pub advmss: u32,
    pub rcv_ssthresh: u64,
    pub rcv_wnd: u64,
    pub bytes_received: u64,
    pub notsent_bytes: u64,
    /// `tcpi_last_data_sent`, `tcpi_last_data_recv`, `tcpi_last_ack_recv`: ms since.
    pub last_data_sent_ms: u64,
    pub last_data_recv_ms: u64,
    pub last_ack_recv_ms: u64,
    /// `tcpi_busy_time`, `tcpi_rwnd_limited` (µs; `tcp_get_info_chrono_stats`).
    pub busy_time_us: u64,
    pub rwnd_limited_us: u64,
    /// The sender's part; `None` before the connection is established.
    pub sender: Option<SenderInfo>,
}

impl Endpoint {
    /// `tcp_chrono_start/stop`: busy while data or a FIN is queued or unacknowledged
    /// (`tcp_add_write_queue_tail` starts it, the ACK emptying both queues stops it);
    /// receive-window limited while unsent data waits only for the peer's window
    /// (`tcp_write_xmit`'s `is_rwnd_limited`: cwnd has room, the next segment does not fit).
    pub(super) fn chrono_update(&mut self, info: Option<SenderInfo>) {
        let Some(i) = info else {
            return;
        };
        let queues_empty = i.snd_una >= self.written && !self.fin_in_flight();
        let new = if self.state == State::Closed || queues_empty {
            CHRONO_UNSPEC
        } else {
            let in_flight =
                i.packets_out + i.retrans_out - (i.sacked_out + i.lost_out).min(i.packets_out);
            let unsent = self.written.saturating_sub(i.snd_nxt);
            let next = unsent.min(i.mss as u64);
            if unsent > 0 && in_flight < i.cwnd && i.snd_nxt + next > i.snd_una + i.snd_wnd {
                CHRONO_RWND_LIMITED
            } else {
                CHRONO_BUSY
            }
        };
        if new != self.chrono_type {
            let now_ms = Hz::KERNEL.jiffies(self.now);
            if self.chrono_type != CHRONO_UNSPEC {
                self.chrono_stat_ms[self.chrono_type as usize - 1] += now_ms - self.chrono_start_ms;
            }
            self.chrono_start_ms = now_ms;
            self.chrono_type = new;
        }
    }

    /// `tcp_get_info_chrono_stats`: (busy incl. the limited times, rwnd-limited), µs.
    pub(super) fn chrono_stats_us(&self) -> (u64, u64) {
        let mut stat = self.chrono_stat_ms;
        if self.chrono_type != CHRONO_UNSPEC {
            stat[self.chrono_type as usize - 1] +=
                Hz::KERNEL.jiffies(self.now) - self.chrono_start_ms;
        }
        ((stat[0] + stat[1]) * 1000, stat[1] * 1000)
    }

    pub fn info(&self) -> EndpointInfo {
        let c = &self.cfg;
        let r = self.receiver.as_ref();
        let established = self.sender.is_some();
        let mut options = 0;
        if established {
            options |= u8::from(c.timestamps)
                | (u8::from(c.sack) << 1)
                | (u8::from(c.window_scaling) << 2)
                | (u8::from(self.ecn_ok) << 3);
        }
        EndpointInfo {
            state: self.state as u8,
            options,
            snd_wscale: self.snd_wscale,
            rcv_wscale: r.map_or(0, |r| r.rcv_wscale()),
            ato_us: r.map_or(0, |r| r.ato().as_micros()),
            rcv_mss: r.map_or(0, |r| r.rcv_mss()),
            advmss: self.advmss() - if c.timestamps { TS_ALIGNED } else { 0 },
            rcv_ssthresh: r.map_or(0, |r| r.rcv_ssthresh()),
            rcv_wnd: r.map_or(0, |r| r.rcv_wnd()),
            bytes_received: r.map_or(0, |r| r.rcv_nxt),
            notsent_bytes: self
                .sender
                .as_ref()
                .map_or(0, |s| self.written.saturating_sub(s.info().snd_nxt)),
            last_data_sent_ms: ms_since(self.now, self.last_data_sent),
            last_data_recv_ms: ms_since(self.now, self.last_data_recv),
            last_ack_recv_ms: ms_since(self.now, self.last_ack_recv),
            busy_time_us: self.chrono_stats_us().0,
            rwnd_limited_us: self.chrono_stats_us().1,
            sender: self.sender.as_ref().map(Sender::info),
        }
    }
}

/// `jiffies_to_msecs(now - then)`.
fn ms_since(now: SimTime, then: SimTime) -> u64 {
    let hz = Hz::KERNEL;
    hz.jiffies_to_msecs(hz.jiffies(now).saturating_sub(hz.jiffies(then)))
}
