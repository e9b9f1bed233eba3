//! Per-bin sampling of every flow and link direction, and the run's summaries.

use satcc_core::record::{FlowSeries, FlowSummary, LinkSeries};

use super::{SimOutput, World};
use crate::capture::Tap;
use crate::error::ConfigError;
use crate::trace::SeqAckRecorder;
use crate::udp::UdpFlow;

impl<T: Tap> World<T> {
    /// Reserve the time series for the whole run (one row per flow and link direction per
    /// bin), so that a run too long for memory fails here with an error instead of aborting
    /// the process (or deadlocking its panic handler) hours into the run. `run` works without
    /// it (the series then grow as they fill).
    pub fn reserve_series(&mut self) -> Result<(), ConfigError> {
        let bins = self
            .end
            .as_nanos()
            .div_ceil(self.bin.as_nanos())
            .saturating_add(1); // + the closing bin
        let dirs = self.net.dirs.len();
        let flow_rows = bins
            .checked_mul(self.flows.len() as u64)
            .and_then(|n| usize::try_from(n).ok());
        let link_rows = bins
            .checked_mul(dirs as u64)
            .and_then(|n| usize::try_from(n).ok());
        let reserved = match (flow_rows, link_rows) {
            (Some(f), Some(l)) => satcc_core::mem::fallible(|| {
                self.series
                    .try_reserve(f)
                    .and_then(|_| self.links.try_reserve(l))
                    .is_ok()
            }),
            _ => false,
        };
        if !reserved {
            let need = (bins as f64)
                * ((self.flows.len() * FlowSeries::ROW_BYTES + dirs * LinkSeries::ROW_BYTES)
                    as f64);
            return Err(ConfigError {
                key: "scenario.bin".into(),
                message: format!(
                    "out of memory: {bins} bins of time series need {:.2} GB, more than this process may allocate; use longer bins or a shorter duration",
                    need / 1e9
                ),
            });
        }
        Ok(())
    }

    pub(super) fn sample(&mut self) {
        let t_s = self.bin_start.as_secs_f64();
        for (i, f) in self.flows.iter_mut().enumerate() {
            if let Some(u) = f.udp.as_mut() {
                // UDP: delivered payload; the TCP columns stay 0.
                let s = &mut self.series;
                s.flow_id.push(i as u32);
                s.t_s.push(t_s);
                let got = std::mem::take(&mut u.delivered_in_bin);
                s.delivered_bytes.push(got);
                s.received_bytes.push(got);
                s.cwnd_pkts.push(0);
                s.ssthresh_pkts.push(0);
                s.srtt_ms.push(0.0);
                s.inflight_pkts.push(0);
                s.pacing_rate_bps.push(0.0);
                s.retransmits.push(0);
                continue;
            }
            let s = &f.sender;
            self.series.flow_id.push(i as u32);
            self.series.t_s.push(t_s);
            self.series
                .delivered_bytes
                .push(f.receiver.delivered_in_bin);
            f.receiver.delivered_in_bin = 0;
            self.series
                .received_bytes
                .push(std::mem::take(&mut f.receiver.received_in_bin));
            self.series.cwnd_pkts.push(s.tcp.cwnd);
            self.series
                .ssthresh_pkts
                .push(s.tcp.ssthresh.min(i32::MAX as u32));
            self.series.srtt_ms.push(s.srtt_us() as f64 / 1000.0);
            self.series.inflight_pkts.push(s.tcp.in_flight());
            self.series
                .pacing_rate_bps
                .push(s.tcp.pacing_rate_bps as f64 * 8.0);
            self.series.retransmits.push(s.stats.retrans_in_bin);
            f.sender.stats.retrans_in_bin = 0;
            if let Some(cc) = self.cc_series.as_mut() {
                // with ECN, also what tcp_info counts of it: segments delivered, and those
                // whose ACK carried ECE (`tcpi_delivered`, `tcpi_delivered_ce`)
                let t = &f.sender.tcp;
                let ecn = [
                    ("delivered", t.delivered as f64),
                    ("delivered_ce", t.delivered_ce as f64),
                ];
                let ecn = if t.ecn_ok { &ecn[..] } else { &[] };
                for (name, value) in f.sender.cc_state().into_iter().chain(ecn.iter().copied()) {
                    cc.flow_id.push(i as u32);
                    cc.t_s.push(t_s);
                    cc.name.push(name);
                    cc.value.push(value);
                }
            }
        }
        for d in self.net.dirs.iter_mut() {
            let c = d.core.take_counters();
            let queue = d.core.queue_len();
            // Time-weighted over the bin, from the link's model.
            let m = d.core.model_mut().mean_over(self.bin_start, self.now);
            self.links.push(c.bin_row(d.link, d.dir, t_s, queue, &m));
        }
        self.bin_start = self.now;
        self.expire_fragments();
    }

    pub(super) fn finish(self) -> SimOutput {
        let end = self.end;
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if let Some(u) = &f.udp {
                    let done = u.completed_at;
                    let active = u
                        .active_end(end)
                        .max(u.start)
                        .saturating_since(u.start)
                        .as_secs_f64();
                    return FlowSummary {
                        id: i as u32,
                        delivered_bytes: u.received_bytes,
                        goodput_bps: if active > 0.0 {
                            u.received_bytes as f64 * 8.0 / active
                        } else {
                            0.0
                        },
                        sent_packets: u.sent_packets,
                        fct_s: done.map(|t| t.saturating_since(u.start).as_secs_f64()),
                        ..FlowSummary::default()
                    };
                }
                let s = &f.sender;
                let r = &f.receiver;
                let done = r.completed_at;
                let active_end = done.unwrap_or(end).max(s.start);
                let active = active_end.saturating_since(s.start).as_secs_f64();
                FlowSummary {
                    id: i as u32,
                    delivered_bytes: r.delivered_bytes,
                    goodput_bps: if active > 0.0 {
                        r.delivered_bytes as f64 * 8.0 / active
                    } else {
                        0.0
                    },
                    sent_packets: s.stats.sent_packets,
                    retransmitted_packets: s.stats.retransmitted_packets,
                    rtt_mean_ms: s.stats.rtt.mean_ms(),
                    rtt_p95_ms: s.stats.rtt.quantile_ms(0.95),
                    rtt_min_ms: s.stats.rtt.min_ms(),
                    fct_s: done.map(|t| t.saturating_since(s.start).as_secs_f64()),
                    rto_count: s.stats.rto_count,
                    recovery_count: s.stats.recovery_count,
                }
            })
            .collect();
        let udp = self
            .flows
            .iter()
            .map(|f| f.udp.as_ref().map(UdpFlow::summary))
            .collect();
        SimOutput {
            flows,
            flow_series: self.series,
            link_series: self.links,
            events: self.events,
            peak_pending_events: self.peak_pending,
            packets: self.packets,
            udp,
            fragmented_packets: self.frags.fragmented,
            seqack: self.seqack.map(SeqAckRecorder::finish),
            cc_series: self.cc_series,
        }
    }
}
