//! Every result column, declared once: name, type, unit, whether it may be null, who writes
//! it, and what it means.
//!
//! Everything else is read from here: the engine records of [`crate::record`] are declared
//! with [`record!`](crate::record), which checks at compile time that each field is a column
//! of its table, of the same type, written by engines (and that every column engines must
//! write is a field); the bindings (satcc-py) build the simulator's dictionaries by iterating
//! those records and hand this table to Python (`_native.result_columns()`), where
//! `satcc.results` builds its `Column`s and Parquet schemas from it and the Python engines take
//! their column names; docs/results.md's column tables are [`markdown`]'s text (a test in
//! `tests/columns_doc.rs` compares them; `SATCC_BLESS=1` rewrites them).
//!
//! Order matters: it is the order of the Parquet files' columns.

/// A column's type in the result files (`satcc.tables`: int64, float64, string, bool).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Int64,
    Float64,
    String,
    Bool,
}

impl Type {
    pub const fn name(self) -> &'static str {
        match self {
            Type::Int64 => "int64",
            Type::Float64 => "float64",
            Type::String => "string",
            Type::Bool => "bool",
        }
    }
}

/// Who writes a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Every engine's raw output (the simulator's rows are [`crate::record`]'s structs; the
    /// model engine and the emulator write the same keys).
    Engine,
    /// An engine that measures it writes it; one that does not leaves it out and
    /// `RunResult.from_engine` fills it with nulls.
    EngineOptional,
    /// UDP flows' extra keys (`UdpColumns`; null for TCP flows).
    Udp,
    /// `RunResult.from_engine`, from the resolved scenario.
    Scenario,
    /// `RunResult.from_engine`, from other columns.
    Derived,
    /// The field analyzer (`satcc analyze`; a campaign's `[[analyze]]` runs): what it adds
    /// per input beside the result's tables.
    Analyzer,
}

impl Source {
    pub const fn name(self) -> &'static str {
        match self {
            Source::Engine => "engine",
            Source::EngineOptional => "engine-optional",
            Source::Udp => "udp",
            Source::Scenario => "scenario",
            Source::Derived => "derived",
            Source::Analyzer => "analyzer",
        }
    }
}

/// One result column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub ty: Type,
    /// As docs/results.md writes it; "-" for none.
    pub unit: &'static str,
    /// May be null in some row (a test checks the others never are).
    pub nullable: bool,
    pub source: Source,
    pub doc: &'static str,
    /// The sender's TCP state (null for UDP flows: `RunResult.from_engine` clears it).
    pub tcp_state: bool,
    /// Added to schema version 1 after results were first written with it: a result from
    /// before it existed loads with it null (it never measured it).
    pub added: bool,
}

impl Column {
    /// This column with [`Column::tcp_state`] set.
    const fn tcp_state(self) -> Column {
        Column {
            tcp_state: true,
            ..self
        }
    }

    /// This column with [`Column::added`] set.
    const fn added(self) -> Column {
        Column {
            added: true,
            ..self
        }
    }
}

/// One result table: its name (the Python dictionary key, the campaign store's view) and
/// columns in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
}

const fn col(
    name: &'static str,
    ty: Type,
    unit: &'static str,
    nullable: bool,
    source: Source,
    doc: &'static str,
) -> Column {
    Column {
        name,
        ty,
        unit,
        nullable,
        source,
        doc,
        tcp_state: false,
        added: false,
    }
}

use Source::{Analyzer, Derived, Engine, EngineOptional, Scenario, Udp};
use Type::{Bool, Float64, Int64, String};

/// `flows.parquet`: one row per flow (after `count` expansion).
#[rustfmt::skip]
pub const FLOWS: Table = Table {
    name: "flows",
    columns: &[
        col("id", Int64, "-", false, Engine, "flow id, 0 … n−1 in file order"),
        col("name", String, "-", false, Scenario, "the `[[flow]]` name (`.k` for copies)"),
        col("scenario_flow", Int64, "-", false, Scenario, "index of the `[[flow]]` table it came from"),
        col("from", String, "-", false, Scenario, "sender node"),
        col("to", String, "-", false, Scenario, "receiver node"),
        col("cca", String, "-", false, Scenario, "congestion control (`udp` for UDP flows)"),
        col("proto", String, "-", false, Scenario, "`tcp` or `udp`"),
        col("start_s", Float64, "s", false, Scenario, "start time"),
        col("size_bytes", Int64, "B", true, Scenario, "transfer size; null for bulk flows"),
        col("goodput_bps", Float64, "bit/s", false, Engine, "application bytes delivered in order × 8 over the flow's active time (start until completion or the end of the run)"),
        col("delivered_bytes", Int64, "B", false, Engine, "application bytes delivered in order"),
        col("sent_packets", Int64, "packets", false, Engine, "data segments sent, retransmissions included"),
        col("retransmitted_packets", Int64, "packets", false, Engine, "retransmitted segments"),
        col("retransmission_rate", Float64, "-", true, Derived, "`retransmitted_packets / sent_packets`; null if nothing was sent"),
        col("rtt_mean_ms", Float64, "ms", true, Engine, "mean of the flow's RTT samples"),
        col("rtt_p95_ms", Float64, "ms", true, Engine, "95th percentile of the flow's RTT samples"),
        col("rtt_min_ms", Float64, "ms", true, Engine, "least of the flow's RTT samples"),
        col("fct_s", Float64, "s", true, Engine, "flow completion time from `start`; null for bulk or unfinished flows"),
        col("rto_count", Int64, "-", true, Engine, "retransmission timeouts"),
        col("recovery_count", Int64, "-", true, Engine, "fast-recovery episodes"),
        col("received_packets", Int64, "packets", true, Udp, "UDP: datagrams received (null for TCP)"),
        col("lost_packets", Int64, "packets", true, Udp, "UDP: datagrams sent and never received"),
        col("loss_fraction", Float64, "-", true, Udp, "UDP: `lost_packets` / datagrams sent"),
        col("jitter_ms", Float64, "ms", true, Udp, "UDP: RFC 3550 interarrival jitter at the end of the run (emulator: from the receiver's capture against the send stamps iperf3 writes into each datagram when the run captured, else iperf3's own figure, which adds its server's scheduling: 2.2 ms with no link jitter on a loaded machine, 0.004 ms on the wire)"),
    ],
};

/// `flow_series.parquet`: one row per flow per bin.
#[rustfmt::skip]
pub const FLOW_SERIES: Table = Table {
    name: "flow_series",
    columns: &[
        col("flow_id", Int64, "-", false, Engine, "`flows.id`"),
        col("t_s", Float64, "s", false, Engine, "start of the bin"),
        col("delivered_bytes", Int64, "B", true, Engine, "application bytes delivered in order in the bin (after a repair, what waited is released at once)"),
        col("goodput_bps", Float64, "bit/s", true, Derived, "`delivered_bytes × 8 / bin width` (the last bin may be shorter; analyze: the iperf3 interval)"),
        col("received_bytes", Int64, "B", true, EngineOptional, "payload that reached the receiver in the bin, in order or not, duplicates included (sim; analyze: capture payload; null for the emulator, the model and iperf3)").added(),
        col("received_bps", Float64, "bit/s", true, Derived, "`received_bytes × 8 / bin width`: bounded by the link, unlike `goodput_bps`").added(),
        col("cwnd_bytes", Int64, "B", true, EngineOptional, "congestion window where it is measured in bytes: iperf3's `snd_cwnd` (analyze); else null").added(),
        col("cwnd_pkts", Int64, "packets", true, Engine, "congestion window at the end of the bin").tcp_state(),
        col("ssthresh_pkts", Int64, "packets", true, Engine, "slow-start threshold at the end of the bin (2147483647 = not yet set, as Linux)").tcp_state(),
        col("srtt_ms", Float64, "ms", true, Engine, "smoothed RTT at the end of the bin (analyze: mean of the capture's RTT samples in the bin, iperf3's `rtt`)").tcp_state(),
        col("inflight_pkts", Int64, "packets", true, Engine, "packets in flight at the end of the bin").tcp_state(),
        col("pacing_rate_bps", Float64, "bit/s", true, Engine, "pacing rate at the end of the bin").tcp_state(),
        col("retransmits", Int64, "packets", true, Engine, "segments retransmitted in the bin").tcp_state(),
    ],
};

/// `link_series.parquet`: one row per link direction per bin. The queue and drop counters
/// are null where an engine does not count them (the model engine).
#[rustfmt::skip]
pub const LINK_SERIES: Table = Table {
    name: "link_series",
    columns: &[
        col("link_id", Int64, "-", false, Engine, "index of the `[[link]]` table"),
        col("dir", String, "-", false, Engine, "`ab` or `ba`"),
        col("from", String, "-", false, Scenario, "the node this direction leaves"),
        col("to", String, "-", false, Scenario, "the node this direction enters"),
        col("t_s", Float64, "s", false, Engine, "start of the bin"),
        col("queue_pkts", Int64, "packets", true, Engine, "queue occupancy at the end of the bin"),
        col("queue_bytes", Int64, "B", true, Engine, "queue occupancy at the end of the bin"),
        col("drops_queue", Int64, "packets", true, Engine, "dropped by the full queue in the bin"),
        col("drops_random", Int64, "packets", true, Engine, "dropped by random loss in the bin"),
        col("ecn_marks", Int64, "packets", true, Engine, "CE-marked in the bin"),
        col("tx_bytes", Int64, "B", true, Engine, "bytes put on the wire in the bin"),
        col("capacity_bps", Int64, "bit/s", false, Engine, "the direction's rate in the bin"),
        col("delay_ms", Float64, "ms", false, Engine, "the direction's propagation delay in the bin"),
    ],
};

/// `cc_series.parquet` (`[scenario] cc_state = true`; the emulator: the kernel's BBR only):
/// each TCP flow's congestion-control state per bin, one row per flow, bin and quantity.
#[rustfmt::skip]
pub const CC_SERIES: Table = Table {
    name: "cc_series",
    columns: &[
        col("flow_id", Int64, "-", false, Engine, "`flows.id`"),
        col("t_s", Float64, "s", false, Engine, "start of the bin, as `flow_series`"),
        col("name", String, "-", false, Engine, "the quantity the algorithm reports (CUBIC: `w_max`, `k_s`, `acked_reno`, …)"),
        col("value", Float64, "-", false, Engine, "its value at the end of the bin, in the unit its name gives"),
    ],
};

/// `seqack.parquet` (`[scenario.seqack]`, the simulator; captures in analyze campaigns): one
/// flow's sequence/ACK trace at its sender.
#[rustfmt::skip]
pub const SEQACK: Table = Table {
    name: "seqack",
    columns: &[
        col("flow_id", Int64, "-", false, Engine, "the traced flow"),
        col("kind", String, "-", false, Engine, "`data` (a segment the sender transmits), `ack` (an ACK reaching it), `sack` (one SACK block of that ACK)"),
        col("t_s", Float64, "s", false, Engine, "when the sender's host sent or received it"),
        col("seq_rel", Int64, "B", true, Engine, "data and SACK rows: first byte, from the flow's first data byte"),
        col("end_rel", Int64, "B", true, Engine, "data and SACK rows: one past the last byte"),
        col("ack_rel", Int64, "B", true, Engine, "ACK rows: the cumulative acknowledgement"),
        col("retransmission", Bool, "-", true, Engine, "data rows: a retransmitted segment"),
    ],
};

/// `analyze_flows.parquet` (an analyze run of a campaign): what `satcc analyze` adds per flow
/// beside `flows` (the `--json` summary's extra keys); the store joins it into its `flows` view.
#[rustfmt::skip]
pub const ANALYZE_FLOWS: Table = Table {
    name: "analyze_flows",
    columns: &[
        col("flow_id", Int64, "-", false, Analyzer, "`flows.id`"),
        col("file", String, "-", false, Analyzer, "the input file"),
        col("kind", String, "-", false, Analyzer, "`capture`, `iperf3` or `ping`"),
        col("src", String, "-", true, Analyzer, "the sender's address (null for a ping log)"),
        col("dst", String, "-", true, Analyzer, "the receiver's address (null for a ping log)"),
        col("sport", Int64, "-", true, Analyzer, "the sender's port"),
        col("dport", Int64, "-", true, Analyzer, "the receiver's port"),
        col("conn", Int64, "-", true, Analyzer, "capture: the connection's index in the capture (tshark's `tcp.stream`)"),
        col("packets", Int64, "packets", true, Analyzer, "capture: packets of this direction"),
        col("payload_bytes", Int64, "B", true, Analyzer, "capture: payload bytes, retransmissions included"),
        col("rtt_source", String, "-", true, Analyzer, "capture: the RTT estimator the `rtt_*` columns come from (docs/analyze.md)"),
        col("capture_point", String, "-", true, Analyzer, "capture: `sender`, `receiver`, `between` or `unknown`"),
        col("udp_lost", Int64, "packets", true, Analyzer, "iperf3 UDP (its report, or a capture of its datagrams): datagrams lost"),
        col("udp_loss_rate", Float64, "-", true, Analyzer, "iperf3 UDP: `udp_lost` / datagrams sent"),
        col("udp_jitter_ms", Float64, "ms", true, Analyzer, "iperf3 UDP: RFC 3550 interarrival jitter"),
        col("loss_rate", Float64, "-", true, Analyzer, "ping log: probes lost / sent"),
        col("bin_s", Float64, "s", true, Analyzer, "the width of the flow's bins (the capture's bin, the iperf3 interval)"),
    ],
};

/// `pings.parquet` (an analyze run of a ping or nping log): every probe.
#[rustfmt::skip]
pub const PINGS: Table = Table {
    name: "pings",
    columns: &[
        col("flow_id", Int64, "-", false, Analyzer, "`flows.id` of the log"),
        col("seq", Int64, "-", false, Analyzer, "the probe's sequence number"),
        col("t_s", Float64, "s", true, Analyzer, "when it was sent, from the log's first probe"),
        col("t_epoch_s", Float64, "s", true, Analyzer, "Unix time, when the log has it (`ping -D`)"),
        col("rtt_ms", Float64, "ms", true, Analyzer, "its round-trip time; null: no reply"),
    ],
};

/// Every table, in the order docs/results.md describes them.
pub const TABLES: &[Table] = &[
    FLOWS,
    FLOW_SERIES,
    LINK_SERIES,
    CC_SERIES,
    SEQACK,
    ANALYZE_FLOWS,
    PINGS,
];

/// The keys of each flow in the `--json` summary (and summary.json), in their order: columns
/// of [`FLOWS`] (checked at compile time). A contract scripts rely on: add keys, never rename
/// or reorder them (the order is not the file's column order).
pub const SUMMARY_FLOW_KEYS: &[&str] = &[
    "id",
    "name",
    "from",
    "to",
    "cca",
    "goodput_bps",
    "delivered_bytes",
    "sent_packets",
    "retransmitted_packets",
    "retransmission_rate",
    "rtt_mean_ms",
    "rtt_p95_ms",
    "rtt_min_ms",
    "fct_s",
    "rto_count",
    "recovery_count",
    "proto",
    "received_packets",
    "lost_packets",
    "loss_fraction",
    "jitter_ms",
];

const _: () = {
    let mut i = 0;
    while i < SUMMARY_FLOW_KEYS.len() {
        let mut found = false;
        let mut j = 0;
        while j < FLOWS.columns.len() {
            found = found || same(FLOWS.columns[j].name, SUMMARY_FLOW_KEYS[i]);
            j += 1;
        }
        assert!(
            found,
            "SUMMARY_FLOW_KEYS: a key that is not a column of FLOWS"
        );
        i += 1;
    }
};

/// A record field's column type: what a Rust field of this type writes (a `Vec` is a column of
/// its items; an `Option` may be null).
pub trait ColumnValue {
    const TYPE: Type;
    const NULLABLE: bool;
    /// The value (a row's field) or values (a columnar field), for the bindings to convert.
    fn cell(&self) -> Cell<'_>;
}

/// A field's value as the bindings read it (satcc-core does not know Python).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Int(u64),
    Float(f64),
    OptInt(Option<u64>),
    OptFloat(Option<f64>),
    Str(&'a str),
    U32s(&'a [u32]),
    U64s(&'a [u64]),
    F64s(&'a [f64]),
    Strs(&'a [&'static str]),
    OptU64s(&'a [Option<u64>]),
    OptBools(&'a [Option<bool>]),
}

macro_rules! column_value {
    ($($ty:ty => $t:ident, $nullable:literal, |$x:ident| $cell:expr;)*) => {$(
        impl ColumnValue for $ty {
            const TYPE: Type = Type::$t;
            const NULLABLE: bool = $nullable;
            fn cell(&self) -> Cell<'_> {
                let $x = self;
                $cell
            }
        }
    )*};
}

column_value! {
    u16 => Int64, false, |x| Cell::Int(u64::from(*x));
    u32 => Int64, false, |x| Cell::Int(u64::from(*x));
    u64 => Int64, false, |x| Cell::Int(*x);
    f64 => Float64, false, |x| Cell::Float(*x);
    Option<u64> => Int64, true, |x| Cell::OptInt(*x);
    Option<f64> => Float64, true, |x| Cell::OptFloat(*x);
    &'static str => String, false, |x| Cell::Str(x);
    std::string::String => String, false, |x| Cell::Str(x);
    Vec<u32> => Int64, false, |x| Cell::U32s(x);
    Vec<u64> => Int64, false, |x| Cell::U64s(x);
    Vec<f64> => Float64, false, |x| Cell::F64s(x);
    Vec<&'static str> => String, false, |x| Cell::Strs(x);
    Vec<Option<u64>> => Int64, true, |x| Cell::OptU64s(x);
    Vec<Option<bool>> => Bool, true, |x| Cell::OptBools(x);
}

/// A record's field as [`record!`](crate::record) describes it to the checks below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub ty: Type,
    pub nullable: bool,
}

/// String equality at compile time (`record!`'s checks).
pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn source_in(s: Source, sources: &[Source]) -> bool {
    let mut i = 0;
    while i < sources.len() {
        if sources[i] as u8 == s as u8 {
            return true;
        }
        i += 1;
    }
    false
}

/// `field` is a column of `table` written by one of `sources`, of the same type, and nullable
/// if the field may be `None` (used by `record!` at compile time).
pub const fn field_declared(field: Field, table: &Table, sources: &[Source]) -> bool {
    let mut i = 0;
    while i < table.columns.len() {
        let c = &table.columns[i];
        if same(c.name, field.name) {
            return source_in(c.source, sources)
                && c.ty as u8 == field.ty as u8
                && (c.nullable || !field.nullable);
        }
        i += 1;
    }
    false
}

/// The first column of `table` written by `source` that is not among `fields`, or "" (used by
/// `record!` at compile time: a record has every column its engines must write).
pub const fn missing_column(fields: &[Field], table: &Table, source: Source) -> &'static str {
    let mut i = 0;
    while i < table.columns.len() {
        let c = &table.columns[i];
        if c.source as u8 == source as u8 {
            let mut found = false;
            let mut j = 0;
            while j < fields.len() {
                found = found || same(fields[j].name, c.name);
                j += 1;
            }
            if !found {
                return c.name;
            }
        }
        i += 1;
    }
    ""
}

/// The column named `name` of `table`.
pub fn column(table: &Table, name: &str) -> Option<&'static Column> {
    table.columns.iter().find(|c| c.name == name)
}

/// docs/results.md's table of `table`'s columns (name, type, unit, meaning).
pub fn markdown(table: &Table) -> std::string::String {
    let mut out = std::string::String::from(
        "| column | type | unit | meaning |\n|--------|------|------|---------|\n",
    );
    for c in table.columns {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            c.name,
            c.ty.name(),
            c.unit,
            c.doc
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_a_table_and_carry_a_unit_and_a_meaning() {
        for t in TABLES {
            for (i, c) in t.columns.iter().enumerate() {
                assert!(
                    t.columns[..i].iter().all(|d| d.name != c.name),
                    "{}.{} twice",
                    t.name,
                    c.name
                );
                assert!(
                    !c.unit.is_empty() && !c.doc.is_empty(),
                    "{}.{}",
                    t.name,
                    c.name
                );
                assert!(
                    !c.doc.contains('|'),
                    "{}.{}: a | breaks the table",
                    t.name,
                    c.name
                );
            }
        }
    }

    #[test]
    fn the_checks_refuse_a_field_of_another_type_source_or_nullability() {
        let f = |name, ty, nullable| Field { name, ty, nullable };
        assert!(field_declared(
            f("goodput_bps", Type::Float64, false),
            &FLOWS,
            &[Engine]
        ));
        assert!(!field_declared(
            f("goodput_bps", Type::Int64, false),
            &FLOWS,
            &[Engine]
        ));
        assert!(!field_declared(
            f("goodput_bps", Type::Float64, false),
            &FLOWS,
            &[Udp]
        ));
        assert!(!field_declared(
            f("goodput", Type::Float64, false),
            &FLOWS,
            &[Engine]
        ));
        // a non-nullable column cannot take an Option field; a nullable one takes either
        assert!(!field_declared(
            f("goodput_bps", Type::Float64, true),
            &FLOWS,
            &[Engine]
        ));
        assert!(field_declared(
            f("fct_s", Type::Float64, false),
            &FLOWS,
            &[Engine]
        ));
        let some = [f("id", Type::Int64, false)];
        assert_eq!(missing_column(&some, &FLOWS, Engine), "goodput_bps");
        assert_eq!(missing_column(&some, &FLOWS, Scenario), "name");
        assert_eq!(missing_column(&[], &CC_SERIES, Derived), "");
    }
}
