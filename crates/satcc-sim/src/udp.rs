//! UDP constant-bit-rate flows, measured as `iperf3 -u -b RATE -l LEN` reports them.
//!
//! The sender emits datagram k (k = 0, 1, …) at `start + ⌈k·LEN·8 / RATE⌉` (exact, no drift;
//! iperf3's `-b` is the rate of UDP payload), each `LEN + 8 + 20` bytes on the wire (plus the
//! flow's tunnel encapsulation, added by the world). It carries its sequence number and send
//! time, as iperf3's datagram header does. The receiver computes:
//! - received payload bytes (goodput over the flow's active time);
//! - lost datagrams = highest sequence seen + 1 − datagrams received (iperf3's `cnt_error`
//!   without reordering: satcc's wire is FIFO, so none is out of order);
//! - interarrival jitter, RFC 3550 §6.4.1 / A.8: D = (R_j − R_i) − (S_j − S_i) between
//!   consecutive datagrams, J += (|D| − J) / 16.
//!
//! | parameter | default (scenario.py) | unit | source |
//! |---|---|---|---|
//! | rate | required | bit/s of payload | iperf3 `-b` (its default, 1 Mbit/s, is not used) |
//! | packet_size | 1460 | bytes of payload | iperf3 `DEFAULT_UDP_BLKSIZE` (esnet/iperf `iperf.h`) |
//!
//! Deviations from iperf3: no bursts of several datagrams per pacing-timer tick (iperf3 sends
//! in 1 ms ticks by default); the jitter is computed in nanoseconds, not from µs timestamps.
//! Not implemented: reverse mode, a control connection.

use satcc_core::{SimDuration, SimTime};

use crate::packet::{Kind, Packet, IP_HEADER, UDP_HEADER};

/// RFC 3550 A.8: the jitter estimator's gain, 1/16.
const JITTER_GAIN: f64 = 1.0 / 16.0;

/// One UDP flow's two ends.
#[derive(Clone, Debug)]
pub struct UdpFlow {
    pub id: u32,
    /// Node the datagrams go to.
    pub peer: u32,
    pub rate_bps: u64,
    pub payload: u32,
    pub start: SimTime,
    /// Bytes of payload to send; `None`: until the end of the run.
    pub size: Option<u64>,
    next: u64,
    pub sent_packets: u64,
    pub received_packets: u64,
    pub received_bytes: u64,
    /// Payload bytes received in the current statistics bin.
    pub delivered_in_bin: u64,
    max_seq: Option<u64>,
    last_transit_ns: Option<i128>,
    jitter_ns: f64,
    /// When the last datagram of a limited flow arrived, if all did.
    pub completed_at: Option<SimTime>,
    /// When the latest datagram arrived.
    pub last_arrival: Option<SimTime>,
}

/// What iperf3's receiver side reports for a UDP flow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UdpSummary {
    pub sent_packets: u64,
    pub received_packets: u64,
    pub lost_packets: u64,
    /// lost / (highest sequence + 1), 0 when nothing arrived.
    pub loss_fraction: f64,
    pub jitter_ms: f64,
}

impl UdpFlow {
    pub fn new(
        id: u32,
        peer: u32,
        rate_bps: u64,
        payload: u32,
        start: SimTime,
        size: Option<u64>,
    ) -> Self {
        UdpFlow {
            id,
            peer,
            rate_bps,
            payload,
            start,
            size,
            next: 0,
            sent_packets: 0,
            received_packets: 0,
            received_bytes: 0,
            delivered_in_bin: 0,
            max_seq: None,
            last_transit_ns: None,
            jitter_ns: 0.0,
            completed_at: None,
            last_arrival: None,
        }
    }

    /// Datagrams a limited flow sends (the last one may carry fewer bytes in iperf3; here the
    /// count is rounded up and every datagram is full).
    fn total(&self) -> Option<u64> {
        self.size.map(|s| s.div_ceil(self.payload as u64))
    }

    /// Send time of datagram `k`.
    pub fn send_time(&self, k: u64) -> SimTime {
        let ns = (k as u128 * self.payload as u128 * 8 * 1_000_000_000)
            .div_ceil(self.rate_bps.max(1) as u128);
        self.start + SimDuration::from_nanos(ns.min(u64::MAX as u128) as u64)
    }

    /// The datagram due at `now`, and when the next one is due (`None`: the flow is done).
    pub fn send(&mut self, now: SimTime) -> (Packet, Option<SimTime>) {
        let mut p = Packet::new(self.id, Kind::Datagram, self.peer);
        p.wire_bytes = IP_HEADER + UDP_HEADER + self.payload;
        p.seq = self.next;
        p.len = self.payload;
        p.tsval = now.as_nanos(); // send time, as iperf3's header carries it
        self.next += 1;
        self.sent_packets += 1;
        let more = self.total().is_none_or(|n| self.next < n);
        (p, more.then(|| self.send_time(self.next)))
    }

    /// A datagram arrived at the receiver (out of line: the event loop, which inlines its
    /// caller, mostly carries TCP).
    #[inline(never)]
    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet) {
        self.received_packets += 1;
        self.received_bytes += pkt.len as u64;
        self.delivered_in_bin += pkt.len as u64;
        self.max_seq = Some(self.max_seq.map_or(pkt.seq, |m| m.max(pkt.seq)));
        let transit = now.as_nanos() as i128 - pkt.tsval as i128;
        if let Some(prev) = self.last_transit_ns {
            let d = (transit - prev).abs() as f64; // RFC 3550 §6.4.1: D(i-1, i)
            self.jitter_ns += (d - self.jitter_ns) * JITTER_GAIN; // J += (|D| − J) / 16
        }
        self.last_transit_ns = Some(transit);
        self.last_arrival = Some(now);
        if self.total() == Some(self.received_packets) {
            self.completed_at = Some(now);
        }
    }

    /// End of the flow's active time: its completion, or for a limited flow that lost some
    /// datagrams its last arrival (iperf3 reports over the sending time), else `run_end`.
    pub fn active_end(&self, run_end: SimTime) -> SimTime {
        match (self.completed_at, self.size, self.last_arrival) {
            (Some(t), _, _) => t,
            (None, Some(_), Some(t)) if self.total() == Some(self.next) => t,
            _ => run_end,
        }
    }

    pub fn summary(&self) -> UdpSummary {
        let expected = self.max_seq.map_or(0, |m| m + 1);
        let lost = expected.saturating_sub(self.received_packets);
        UdpSummary {
            sent_packets: self.sent_packets,
            received_packets: self.received_packets,
            lost_packets: lost,
            loss_fraction: if expected > 0 {
                lost as f64 / expected as f64
            } else {
                0.0
            },
            jitter_ms: self.jitter_ns / 1e6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> SimTime {
        SimTime::from_nanos(ns)
    }

    #[test]
    fn datagrams_leave_at_the_constant_bit_rate_without_drift() {
        // 10 Mbit/s of 1250-byte payloads: one every 1 ms exactly.
        let f = UdpFlow::new(0, 1, 10_000_000, 1250, SimTime::ZERO, None);
        assert_eq!(f.send_time(1), at(1_000_000));
        assert_eq!(f.send_time(10_000), at(10_000_000_000));
        // 3 Mbit/s of 1000 B: 2.666… ms apart, rounded up per datagram, never accumulating.
        let g = UdpFlow::new(0, 1, 3_000_000, 1000, SimTime::ZERO, None);
        assert_eq!(g.send_time(3), at(8_000_000));
    }

    #[test]
    fn a_limited_flow_stops_after_its_size() {
        let mut f = UdpFlow::new(0, 1, 8_000_000, 1000, SimTime::ZERO, Some(2500));
        let (_, n1) = f.send(SimTime::ZERO);
        let (_, n2) = f.send(n1.unwrap());
        let (p, n3) = f.send(n2.unwrap());
        assert_eq!((p.seq, n3), (2, None));
        assert_eq!(p.wire_bytes, 1000 + 8 + 20);
    }

    #[test]
    fn constant_transit_gives_zero_jitter_and_a_gap_counts_as_lost() {
        let mut f = UdpFlow::new(0, 1, 8_000_000, 1000, SimTime::ZERO, None);
        for k in [0u64, 1, 2, 4, 5] {
            let mut p = Packet::new(0, Kind::Datagram, 1);
            p.seq = k;
            p.len = 1000;
            p.tsval = k * 1_000_000;
            f.on_packet(at(k * 1_000_000 + 30_000_000), &p);
        }
        let s = f.summary();
        assert_eq!((s.received_packets, s.lost_packets), (5, 1));
        assert!((s.loss_fraction - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(s.jitter_ms, 0.0);
    }

    #[test]
    fn jitter_follows_rfc_3550s_estimator() {
        // Transits 30, 32, 30 ms: |D| = 2 ms twice → J = 2/16 = 0.125, then 0.125 + (2 − 0.125)/16.
        let mut f = UdpFlow::new(0, 1, 8_000_000, 1000, SimTime::ZERO, None);
        for (k, transit_ms) in [(0u64, 30u64), (1, 32), (2, 30)] {
            let mut p = Packet::new(0, Kind::Datagram, 1);
            p.seq = k;
            p.len = 1000;
            p.tsval = k * 1_000_000;
            f.on_packet(at(k * 1_000_000 + transit_ms * 1_000_000), &p);
        }
        let want = 0.125 + (2.0 - 0.125) / 16.0;
        assert!(
            (f.summary().jitter_ms - want).abs() < 1e-12,
            "{}",
            f.summary().jitter_ms
        );
    }
}
