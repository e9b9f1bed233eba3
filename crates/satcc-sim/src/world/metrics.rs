//! Metrics cache (study 003; Linux `tcp_metrics.c` with `tcp_no_metrics_save = 0` and
//! `tcp_no_ssthresh_metrics_save = 0`): one ssthresh per (source node, destination node).
//! A `metrics_save` flow's limited transfer "closes" when its last byte is acknowledged and
//! then updates the entry (`Sender::ssthresh_to_cache`, `tcp_update_metrics`); a
//! `metrics_save` flow starting later reads it when it connects and applies it when
//! established (`tcp_init_metrics`). Only ssthresh is cached.
//! Deviations from Linux's cache:
//! 1. The entry is read when the SYN is sent, not when the SYN-ACK arrives: a flow closing
//!    during another's handshake is not seen by it.
//! 2. Bulk flows never close (the run ends first), so they never write; nor do flows whose
//!    transfer is never fully acknowledged. Linux also writes on close after a
//!    reset-free teardown of any connection; satcc's flows have no teardown.
//! 3. RTT, RTT variance, cwnd and reordering are not cached (Linux seeds the first RTO
//!    from the cached RTT; satcc's first RTO is always 1 s).

use std::collections::HashMap;

use super::Flow;

/// The metrics cache: ssthresh (packets) per (source node, destination node).
#[derive(Default)]
pub(super) struct MetricsCache(HashMap<(u32, u32), u32>);

impl MetricsCache {
    /// Flow `flow` connects: a `metrics_save` flow reads its entry (`tcp_init_metrics`,
    /// deviation 1).
    pub(super) fn on_connect(&self, flow: &mut Flow) {
        if flow.metrics_save {
            flow.sender
                .set_cached_ssthresh(self.0.get(&(flow.src, flow.dst)).copied());
        }
    }

    /// An ACK reached `flow`'s sender: once its transfer is complete, a `metrics_save` flow
    /// updates its entry (`tcp_update_metrics` at close).
    #[inline(always)]
    pub(super) fn on_ack(&mut self, flow: &mut Flow) {
        if flow.metrics_save && !flow.metrics_written && flow.sender.acked_all_at.is_some() {
            flow.metrics_written = true;
            let key = (flow.src, flow.dst);
            match flow.sender.ssthresh_to_cache(self.0.get(&key).copied()) {
                Some(v) => self.0.insert(key, v),
                None => self.0.remove(&key),
            };
        }
    }
}
