//! Delivery-rate samples, as Linux's `tcp_rate.c` takes them: state recorded when a segment is
//! sent (`tcp_rate_skb_sent`), folded in when it is delivered (`tcp_rate_skb_delivered`), turned
//! into a rate once per ACK (`tcp_rate_gen`), and application-limited periods
//! (`tcp_rate_check_app_limited`).

use super::*;

impl Sender {
    /// `tcp_rate_skb_sent`.
    pub(super) fn rate_on_send(&mut self, now: SimTime) -> (SimTime, SimTime, u64, u64, bool) {
        if self.tcp.packets_out == 0 {
            self.first_tx_mstamp = now;
            self.tcp.delivered_mstamp = now;
        }
        (
            self.first_tx_mstamp,
            self.tcp.delivered_mstamp,
            self.tcp.delivered,
            self.tcp.delivered_ce,
            self.tcp.app_limited != 0,
        )
    }

    /// `tcp_rate_check_app_limited`.
    pub(super) fn rate_check_app_limited(&mut self) {
        if self.tcp.in_flight() < self.tcp.cwnd && self.tcp.lost_out <= self.tcp.retrans_out {
            self.tcp.app_limited = (self.tcp.delivered + self.tcp.in_flight() as u64).max(1);
        }
    }

    /// `tcp_rate_gen`: turn the sample built during this ACK into a delivery rate (the ACK
    /// path runs its two parts apart, the sample only for an algorithm that reads it).
    #[cfg(test)]
    pub(super) fn rate_gen(
        &mut self,
        now: SimTime,
        delivered: u32,
        lost: u32,
        rs: &mut RateSample,
    ) {
        let _ = lost;
        self.rate_gen_clocks(now, delivered);
        self.rate_gen_sample(now, rs);
    }

    /// `tcp_rate_gen`'s effects on the connection: the end of an application-limited
    /// period, the delivery clock (`delivered` segments newly delivered).
    #[inline(always)]
    pub(super) fn rate_gen_clocks(&mut self, now: SimTime, delivered: u32) {
        let t = &mut self.tcp;
        if t.app_limited != 0 && t.delivered > t.app_limited {
            t.app_limited = 0;
        }
        if delivered > 0 {
            t.delivered_mstamp = now;
        }
    }

    /// `tcp_rate_gen`'s sample: what was delivered and over which interval (after
    /// [`rate_gen_clocks`](Self::rate_gen_clocks); it reads no state they change).
    #[inline(always)]
    pub(super) fn rate_gen_sample(&self, now: SimTime, rs: &mut RateSample) {
        let t = &self.tcp;
        let Some(prior_mstamp) = rs.prior_mstamp else {
            rs.delivered = None;
            rs.interval_us = None;
            return;
        };
        let d = t.delivered - rs.prior_delivered;
        rs.delivered = Some(d);
        rs.delivered_ce = t.delivered_ce - rs.prior_delivered_ce;
        let snd_us = rs.interval_us.unwrap_or(0);
        let ack_us = now.saturating_since(prior_mstamp).as_micros();
        let interval = snd_us.max(ack_us);
        // Intervals shorter than min_rtt are implausible (ACK compression); drop them.
        if interval < self.rtt.min_rtt_us() {
            rs.interval_us = None;
            return;
        }
        rs.interval_us = Some(interval);
    }
}

/// Linux `struct rate_sample` while it is being built.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RateSample {
    pub(super) prior_mstamp: Option<SimTime>,
    pub(super) prior_delivered: u64,
    pub(super) prior_delivered_ce: u64,
    pub(super) delivered: Option<u64>,
    pub(super) delivered_ce: u64,
    /// Send interval while building; final interval after `rate_gen`.
    pub(super) interval_us: Option<u64>,
    pub(super) is_app_limited: bool,
    pub(super) is_retrans: bool,
    /// Transmission time and index of the most recently sent segment sampled.
    pub(super) last_xmit: Option<(SimTime, u64)>,
}

/// `tcp_rate_skb_delivered`: sample from the most recently sent segment this ACK delivered.
/// A SACKed segment is sampled once: its caller then clears `delivered_mstamp`.
pub(super) fn rate_skb_delivered(
    rs: &mut RateSample,
    first_tx_mstamp: &mut SimTime,
    idx: u64,
    seg: &Seg,
) {
    let Some(dmst) = seg.delivered_mstamp else {
        return;
    };
    let newer = match rs.last_xmit {
        None => true,
        Some((t, i)) => seg.xmit > t || (seg.xmit == t && idx > i),
    };
    if rs.prior_mstamp.is_none() || newer {
        rs.prior_delivered = seg.delivered;
        rs.prior_delivered_ce = seg.delivered_ce;
        rs.prior_mstamp = Some(dmst);
        rs.is_app_limited = seg.app_limited;
        rs.is_retrans = seg.ever_retrans;
        rs.last_xmit = Some((seg.xmit, idx));
        // Send interval: from the first transmission of the window to this one.
        rs.interval_us = Some(seg.xmit.saturating_since(seg.first_tx).as_micros());
        *first_tx_mstamp = seg.xmit;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::RateSample;

    #[test]
    fn a_rate_sample_is_what_was_delivered_over_the_longer_of_send_and_ack_intervals() {
        // `tcp_rate_gen`: interval = max(send interval 20 ms, ACK interval 130 ms), kept as
        // it is not below min_rtt (the handshake's 100 ms)
        let (mut s, _, _) = established();
        s.tcp.delivered = 30;
        let mut rs = RateSample {
            prior_mstamp: Some(ms(20)),
            prior_delivered: 10,
            interval_us: Some(20_000),
            ..RateSample::default()
        };
        s.rate_gen(ms(150), 20, 0, &mut rs);
        assert_eq!(rs.delivered, Some(20));
        assert_eq!(rs.interval_us, Some(130_000));
    }

    #[test]
    fn an_interval_shorter_than_min_rtt_gives_no_rate() {
        // ACK compression: `tcp_rate_gen` drops intervals below min_rtt (100 ms here)
        let (mut s, _, _) = established();
        s.tcp.delivered = 30;
        let mut rs = RateSample {
            prior_mstamp: Some(ms(140)),
            prior_delivered: 10,
            interval_us: Some(1_000),
            ..RateSample::default()
        };
        s.rate_gen(ms(150), 20, 0, &mut rs);
        assert_eq!(rs.interval_us, None);
    }
}
