//! Result records shared by every engine (the Rust half of `RunResult`).
//!
//! Column names carry their units; the Python side turns these into the Parquet tables
//! and JSON summary documented in the README.

/// Per-flow summary over the whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    /// Application bytes delivered in order to the receiver.
    pub delivered_bytes: u64,
    /// Goodput over the flow's active time (start until completion or the run's end).
    pub goodput_bps: f64,
    /// Data segments put on the wire, retransmissions included.
    pub sent_packets: u64,
    pub retransmitted_packets: u64,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    pub rtt_min_ms: Option<f64>,
    /// Flow completion time (limited transfers that finished), seconds from the flow's start.
    pub fct_s: Option<f64>,
    pub rto_count: u64,
    pub recovery_count: u64,
}

/// Per-flow time series in fixed bins (columnar).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSeries {
    pub flow_id: Vec<u32>,
    /// Bin start, seconds from the run's start.
    pub t_s: Vec<f64>,
    /// Application bytes delivered in the bin (in order: a repair releases what waited).
    pub delivered_bytes: Vec<u64>,
    /// Payload bytes that arrived at the receiver in the bin, in order or not, duplicates
    /// included (bounded by the link; set beside `delivered_bytes` to read a repair's burst).
    pub received_bytes: Vec<u64>,
    /// Sampled at the end of the bin.
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub srtt_ms: Vec<f64>,
    pub inflight_pkts: Vec<u32>,
    pub pacing_rate_bps: Vec<f64>,
    /// Segments retransmitted during the bin.
    pub retransmits: Vec<u64>,
}

/// Each TCP flow's congestion-control state at the end of every bin (long form: one row per
/// flow, bin and quantity the algorithm reports, e.g. CUBIC's `w_max`, `k_s`, `acked_reno`).
/// Recorded when a scenario asks for it (`[scenario] cc_state = true`; the simulator only).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcSeries {
    pub flow_id: Vec<u32>,
    pub t_s: Vec<f64>,
    pub name: Vec<&'static str>,
    pub value: Vec<f64>,
}

/// Per-link-direction time series in fixed bins (columnar).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkSeries {
    pub link_id: Vec<u32>,
    /// "ab" or "ba".
    pub dir: Vec<&'static str>,
    pub t_s: Vec<f64>,
    /// Queue occupancy sampled at the end of the bin.
    pub queue_pkts: Vec<u64>,
    pub queue_bytes: Vec<u64>,
    /// Packets dropped in the bin by the queue (overflow) and by random loss.
    pub drops_queue: Vec<u64>,
    pub drops_random: Vec<u64>,
    pub ecn_marks: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub capacity_bps: Vec<u64>,
    pub delay_ms: Vec<f64>,
}

/// One row of [`LinkSeries`]: what an engine records per link direction and bin. The
/// simulator pushes it into the columns; satcc-linkd writes it as a JSON line through serde
/// (with its own frame counters beside it), so both engines share this one definition.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LinkSeriesRow {
    pub link_id: u32,
    pub dir: &'static str,
    pub t_s: f64,
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    pub drops_queue: u64,
    pub drops_random: u64,
    pub ecn_marks: u64,
    pub tx_bytes: u64,
    pub capacity_bps: u64,
    pub delay_ms: f64,
}

impl LinkSeries {
    /// Append one row to the columns.
    pub fn push(&mut self, r: LinkSeriesRow) {
        self.link_id.push(r.link_id);
        self.dir.push(r.dir);
        self.t_s.push(r.t_s);
        self.queue_pkts.push(r.queue_pkts);
        self.queue_bytes.push(r.queue_bytes);
        self.drops_queue.push(r.drops_queue);
        self.drops_random.push(r.drops_random);
        self.ecn_marks.push(r.ecn_marks);
        self.tx_bytes.push(r.tx_bytes);
        self.capacity_bps.push(r.capacity_bps);
        self.delay_ms.push(r.delay_ms);
    }
}

impl FlowSeries {
    /// Reserve room for `rows` more rows in every column, or fail without aborting: the
    /// series of a long run with short bins can exceed the memory a process may use.
    pub fn try_reserve(&mut self, rows: usize) -> Result<(), std::collections::TryReserveError> {
        self.flow_id.try_reserve_exact(rows)?;
        self.t_s.try_reserve_exact(rows)?;
        self.delivered_bytes.try_reserve_exact(rows)?;
        self.cwnd_pkts.try_reserve_exact(rows)?;
        self.ssthresh_pkts.try_reserve_exact(rows)?;
        self.srtt_ms.try_reserve_exact(rows)?;
        self.inflight_pkts.try_reserve_exact(rows)?;
        self.pacing_rate_bps.try_reserve_exact(rows)?;
        self.retransmits.try_reserve_exact(rows)
    }

    /// Bytes one row takes in memory.
    pub const ROW_BYTES: usize = 4 + 8 + 8 + 4 + 4 + 8 + 4 + 8 + 8;
}

impl LinkSeries {
    /// As [`FlowSeries::try_reserve`].
    pub fn try_reserve(&mut self, rows: usize) -> Result<(), std::collections::TryReserveError> {
        self.link_id.try_reserve_exact(rows)?;
        self.dir.try_reserve_exact(rows)?;
        self.t_s.try_reserve_exact(rows)?;
        self.queue_pkts.try_reserve_exact(rows)?;
        self.queue_bytes.try_reserve_exact(rows)?;
        self.drops_queue.try_reserve_exact(rows)?;
        self.drops_random.try_reserve_exact(rows)?;
        self.ecn_marks.try_reserve_exact(rows)?;
        self.tx_bytes.try_reserve_exact(rows)?;
        self.capacity_bps.try_reserve_exact(rows)?;
        self.delay_ms.try_reserve_exact(rows)
    }

    /// Bytes one row takes in memory.
    pub const ROW_BYTES: usize = 4 + 16 + 8 * 9;
}
