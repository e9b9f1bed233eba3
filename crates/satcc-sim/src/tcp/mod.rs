//! TCP endpoints. The sender follows Linux's `tcp_ack` / `tcp_fastretrans_alert` /
//! `tcp_write_xmit` structure (net/ipv4/tcp_input.c, tcp_output.c, tcp_recovery.c,
//! tcp_rate.c); the receiver is in [`receiver`].

pub mod endpoint;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod stats;
pub mod timer;

use satcc_core::SimTime;

use crate::packet::Packet;

/// Linux `TCP_MSS_DEFAULT` (RFC 9293 §3.7.1): the peer's MSS when its SYN carries no MSS
/// option, and the first guess of the receiver's `rcv_mss`.
pub(crate) const MSS_DEFAULT: u32 = 536;

/// Timers of a flow's two ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Retransmission timeout (also SYN retransmission).
    Rto,
    /// RACK reordering timer (`ICSK_TIME_REO_TIMEOUT`).
    Reo,
    /// Tail loss probe (`ICSK_TIME_LOSS_PROBE`).
    Tlp,
    /// Internal pacing (`tcp_pace_kick`).
    Pace,
    /// Receiver's delayed ACK.
    DelAck,
}

/// What an endpoint wants done after handling an event.
#[derive(Default)]
pub struct Out {
    pub pkts: Vec<Packet>,
    pub timers: Vec<(TimerKind, SimTime)>,
}

impl Out {
    pub fn clear(&mut self) {
        self.pkts.clear();
        self.timers.clear();
    }
}
