//! A sequence/ACK trace of one TCP flow seen at its sender's host, as tcpdump there would record
//! it and tcptrace would plot it (study 003 Fig. 6): each data segment leaving (its byte range,
//! whether it is a retransmission), each ACK arriving (the cumulative ACK) and each SACK block
//! it carries, within a time window. Off unless a run asks for it (the scenario's `seqack`);
//! a trace never changes the run.

use satcc_core::SimTime;

use crate::packet::{Kind, Packet};

/// What to record: the scenario's `seqack` table (`satcc_core::scenario::SeqAckSpec`): flow
/// `flow`'s packets at its sender from `from_ns` (inclusive) to `to_ns` (exclusive), at most
/// `max_rows` rows (the rest are counted in `SeqAckTrace::dropped_rows`).
pub use satcc_core::scenario::SeqAckSpec;

/// A row's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// A data segment the sender transmits: `seq`..`end`.
    Data,
    /// An ACK reaching the sender: `ack` is its cumulative acknowledgement.
    Ack,
    /// One SACK block of that ACK: `seq`..`end` received out of order.
    Sack,
}

impl RowKind {
    pub fn name(self) -> &'static str {
        match self {
            RowKind::Data => "data",
            RowKind::Ack => "ack",
            RowKind::Sack => "sack",
        }
    }
}

/// The recorded rows, columnar; byte numbers count from the flow's first data byte.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeqAckTrace {
    pub flow: u32,
    pub t_ns: Vec<u64>,
    pub kind: Vec<RowKind>,
    /// Data and SACK rows: first byte (None on ACK rows).
    pub seq: Vec<Option<u64>>,
    /// Data and SACK rows: one past the last byte.
    pub end: Vec<Option<u64>>,
    /// ACK rows: the cumulative ACK.
    pub ack: Vec<Option<u64>>,
    /// Data rows: sent again (a retransmission).
    pub retransmission: Vec<Option<bool>>,
    /// Rows left out after `max_rows`.
    pub dropped_rows: u64,
}

/// The recorder the event loop feeds.
#[derive(Clone, Debug)]
pub struct SeqAckRecorder {
    spec: SeqAckSpec,
    trace: SeqAckTrace,
}

impl SeqAckRecorder {
    pub fn new(spec: SeqAckSpec) -> Self {
        SeqAckRecorder {
            spec,
            trace: SeqAckTrace {
                flow: spec.flow,
                ..SeqAckTrace::default()
            },
        }
    }

    fn wants(&self, now: SimTime, pkt: &Packet) -> bool {
        pkt.flow == self.spec.flow
            && now.as_nanos() >= self.spec.from_ns
            && now.as_nanos() < self.spec.to_ns
    }

    fn push(
        &mut self,
        now: SimTime,
        row: (RowKind, Option<u64>, Option<u64>, Option<u64>, Option<bool>),
    ) {
        if self.trace.t_ns.len() >= self.spec.max_rows {
            self.trace.dropped_rows += 1;
            return;
        }
        let t = &mut self.trace;
        t.t_ns.push(now.as_nanos());
        t.kind.push(row.0);
        t.seq.push(row.1);
        t.end.push(row.2);
        t.ack.push(row.3);
        t.retransmission.push(row.4);
    }

    /// The sender put `pkt` on its host's interface (out of line, as `received`: only a
    /// flow the scenario traces calls it, and the event loop inlines its callers).
    #[inline(never)]
    pub fn sent(&mut self, now: SimTime, pkt: &Packet) {
        if pkt.kind == Kind::Data && self.wants(now, pkt) {
            let end = pkt.seq + u64::from(pkt.len);
            self.push(
                now,
                (
                    RowKind::Data,
                    Some(pkt.seq),
                    Some(end),
                    None,
                    Some(pkt.retrans),
                ),
            );
        }
    }

    /// `pkt` reached the sender's host from the receiver.
    #[inline(never)]
    pub fn received(&mut self, now: SimTime, pkt: &Packet) {
        if pkt.kind != Kind::Ack || !self.wants(now, pkt) {
            return;
        }
        self.push(now, (RowKind::Ack, None, None, Some(pkt.ack), None));
        for &(left, right) in &pkt.sack[..usize::from(pkt.nsack)] {
            self.push(now, (RowKind::Sack, Some(left), Some(right), None, None));
        }
    }

    pub fn finish(self) -> SeqAckTrace {
        self.trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satcc_core::SimDuration;

    fn spec(max_rows: usize) -> SeqAckSpec {
        SeqAckSpec {
            flow: 1,
            from_ns: 10_000_000,
            to_ns: 20_000_000,
            max_rows,
        }
    }

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    #[test]
    fn only_the_flows_packets_inside_the_window_are_recorded() {
        let mut r = SeqAckRecorder::new(spec(100));
        let mut data = Packet::new(1, Kind::Data, 2);
        data.seq = 1448;
        data.len = 1448;
        let mut other = data;
        other.flow = 0;
        r.sent(at(9), &data); // before the window
        r.sent(at(10), &data);
        r.sent(at(12), &other); // another flow
        r.sent(at(20), &data); // the window's end is exclusive
        let t = r.finish();
        assert_eq!(t.t_ns, vec![10_000_000]);
        assert_eq!(
            (t.seq[0], t.end[0], t.retransmission[0]),
            (Some(1448), Some(2896), Some(false))
        );
    }

    #[test]
    fn an_ack_gives_a_row_and_one_more_per_sack_block() {
        let mut r = SeqAckRecorder::new(spec(100));
        let mut ack = Packet::new(1, Kind::Ack, 0);
        ack.ack = 2896;
        ack.sack[0] = (5792, 7240);
        ack.sack[1] = (8688, 10136);
        ack.nsack = 2;
        r.received(at(15), &ack);
        let t = r.finish();
        assert_eq!(t.kind, vec![RowKind::Ack, RowKind::Sack, RowKind::Sack]);
        assert_eq!(t.ack, vec![Some(2896), None, None]);
        assert_eq!(t.seq, vec![None, Some(5792), Some(8688)]);
        assert_eq!(t.end, vec![None, Some(7240), Some(10136)]);
    }

    #[test]
    fn rows_past_the_cap_are_counted_not_kept() {
        let mut r = SeqAckRecorder::new(spec(2));
        let mut data = Packet::new(1, Kind::Data, 2);
        data.len = 100;
        for ms in 10..15 {
            r.sent(at(ms), &data);
        }
        let t = r.finish();
        assert_eq!((t.t_ns.len(), t.dropped_rows), (2, 3));
    }
}
