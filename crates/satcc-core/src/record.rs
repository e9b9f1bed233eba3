//! Result records shared by every engine (the Rust half of `RunResult`).
//!
//! Each record is declared with [`record!`], which checks at compile time that its fields are
//! columns of a table in [`crate::columns`] (the one declaration of every result column), of
//! the same type and written by engines, and that it has every column engines must write; it
//! also gives each record `cells()`, its columns by name, which the bindings turn into the
//! dictionaries `RunResult.from_engine` reads (docs/results.md).

#[allow(unused_imports)] // the columns module, as the records' doc links name it
use crate::columns;

/// Declare an engine record: the struct, its [`columns::Field`]s, `cells()` and the compile-time
/// agreement with its table. `in TABLE (Required, Optional..)`: the table and the sources of the
/// columns it may hold; every column of the first source must be a field.
///
/// `row` records hold one value per field; `columns` records one `Vec` per field (the field's
/// type given as its item's), with `try_reserve` and `ROW_BYTES`, and optionally a row type
/// (`rows Name`) that `push` appends. Exported: satcc-pcap declares the flow columns a capture
/// measures with it.
#[macro_export]
macro_rules! record {
    (@checks $name:ident, $table:ident, $req:ident, [$($field:ident)*]) => {
        $(
            const _: () = assert!(
                $crate::columns::field_declared(
                    $name::FIELDS[$name::index(stringify!($field))],
                    &$crate::columns::$table,
                    $name::SOURCES,
                ),
                concat!(
                    stringify!($name), ".", stringify!($field), ": not a column of columns::",
                    stringify!($table), " with this type and source (or an Option where the \
                    column may not be null)"
                )
            );
        )*
        const _: () = assert!(
            $crate::columns::missing_column($name::FIELDS, &$crate::columns::$table,
                $crate::columns::Source::$req).is_empty(),
            concat!(
                stringify!($name), ": a column of columns::", stringify!($table), " that ",
                stringify!($req), " writes is not a field (columns::missing_column names it)"
            )
        );
    };
    (@fields $name:ident, $table:ident, $req:ident, [$($opt:ident)*], [$($field:ident: $ty:ty),*]) => {
        impl $name {
            /// The fields, in declaration order, as columns.
            pub const FIELDS: &'static [$crate::columns::Field] = &[$(
                $crate::columns::Field {
                    name: stringify!($field),
                    ty: <$ty as $crate::columns::ColumnValue>::TYPE,
                    nullable: <$ty as $crate::columns::ColumnValue>::NULLABLE,
                }
            ),*];
            /// The table the fields are columns of.
            pub const TABLE: $crate::columns::Table = $crate::columns::$table;
            /// Who writes the columns the fields may be.
            pub const SOURCES: &'static [$crate::columns::Source] =
                &[$crate::columns::Source::$req $(, $crate::columns::Source::$opt)*];

            const fn index(name: &str) -> usize {
                let mut i = 0;
                while i < Self::FIELDS.len() {
                    if $crate::columns::same(Self::FIELDS[i].name, name) {
                        return i;
                    }
                    i += 1;
                }
                panic!("no such field")
            }

            /// Every field's column name and value, in declaration order.
            pub fn cells(&self) -> [(&'static str, $crate::columns::Cell<'_>); [$(stringify!($field)),*].len()] {
                [$((stringify!($field), $crate::columns::ColumnValue::cell(&self.$field))),*]
            }
        }
        $crate::record!(@checks $name, $table, $req, [$($field)*]);
    };
    (
        $(#[$m:meta])*
        pub struct $name:ident in $table:ident ($req:ident $(, $opt:ident)*) row {
            $( $(#[$fm:meta])* pub $field:ident: $ty:ty, )*
        }
    ) => {
        $(#[$m])*
        pub struct $name {
            $( $(#[$fm])* pub $field: $ty, )*
        }
        $crate::record!(@fields $name, $table, $req, [$($opt)*], [$($field: $ty),*]);
    };
    (
        $(#[$m:meta])*
        pub struct $name:ident in $table:ident ($req:ident $(, $opt:ident)*) columns {
            $( $(#[$fm:meta])* pub $field:ident: $ty:ty, )*
        }
    ) => {
        $(#[$m])*
        pub struct $name {
            $( $(#[$fm])* pub $field: Vec<$ty>, )*
        }
        $crate::record!(@fields $name, $table, $req, [$($opt)*], [$($field: Vec<$ty>),*]);
        impl $name {
            /// Reserve room for `rows` more rows in every column, or fail without aborting:
            /// the series of a long run with short bins can exceed the memory a process may
            /// use.
            pub fn try_reserve(
                &mut self,
                rows: usize,
            ) -> Result<(), std::collections::TryReserveError> {
                $( self.$field.try_reserve_exact(rows)?; )*
                Ok(())
            }

            /// Bytes one row takes in memory.
            pub const ROW_BYTES: usize = 0 $( + std::mem::size_of::<$ty>() )*;
        }
    };
    (
        $(#[$m:meta])*
        pub struct $name:ident in $table:ident ($req:ident $(, $opt:ident)*) columns,
        $(#[$rm:meta])*
        rows $row:ident {
            $( $(#[$fm:meta])* pub $field:ident: $ty:ty, )*
        }
    ) => {
        $crate::record! {
            $(#[$m])*
            pub struct $name in $table ($req $(, $opt)*) columns {
                $( $(#[$fm])* pub $field: $ty, )*
            }
        }
        $crate::record! {
            $(#[$rm])*
            pub struct $row in $table ($req $(, $opt)*) row {
                $( $(#[$fm])* pub $field: $ty, )*
            }
        }
        impl $name {
            /// Append one row to the columns.
            pub fn push(&mut self, r: $row) {
                $( self.$field.push(r.$field); )*
            }
        }
    };
}

record! {
    /// Per-flow summary over the whole run (TCP and UDP flows; UDP flows add [`UdpColumns`]).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct FlowSummary in FLOWS (Engine) row {
        pub id: u32,
        /// Goodput over the flow's active time (start until completion or the run's end).
        pub goodput_bps: f64,
        /// Application bytes delivered in order to the receiver.
        pub delivered_bytes: u64,
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
}

record! {
    /// A UDP flow's receiver report (iperf3 -u's), the flows columns only UDP flows have.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct UdpColumns in FLOWS (Udp) row {
        pub received_packets: u64,
        pub lost_packets: u64,
        /// lost / (highest sequence + 1), 0 when nothing arrived.
        pub loss_fraction: f64,
        pub jitter_ms: f64,
    }
}

record! {
    /// Per-flow time series in fixed bins (columnar).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct FlowSeries in FLOW_SERIES (Engine, EngineOptional) columns {
        pub flow_id: u32,
        /// Bin start, seconds from the run's start.
        pub t_s: f64,
        /// Application bytes delivered in the bin (in order: a repair releases what waited).
        pub delivered_bytes: u64,
        /// Payload bytes that arrived at the receiver in the bin, in order or not, duplicates
        /// included (bounded by the link; set beside `delivered_bytes` to read a repair's burst).
        pub received_bytes: u64,
        /// Sampled at the end of the bin.
        pub cwnd_pkts: u32,
        pub ssthresh_pkts: u32,
        pub srtt_ms: f64,
        pub inflight_pkts: u32,
        pub pacing_rate_bps: f64,
        /// Segments retransmitted during the bin.
        pub retransmits: u64,
    }
}

record! {
    /// Each TCP flow's congestion-control state at the end of every bin (long form: one row per
    /// flow, bin and quantity the algorithm reports, e.g. CUBIC's `w_max`, `k_s`, `acked_reno`).
    /// Recorded when a scenario asks for it (`[scenario] cc_state = true`; the emulator
    /// records the kernel's BBR only).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CcSeries in CC_SERIES (Engine) columns {
        pub flow_id: u32,
        pub t_s: f64,
        pub name: &'static str,
        pub value: f64,
    }
}

record! {
    /// One TCP flow's sequence/ACK trace at its sender (`[scenario.seqack]`, the simulator; the
    /// bindings fill it from satcc-sim's `SeqAckTrace`). Byte numbers count from the flow's
    /// first data byte; None where a row kind has no such value.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SeqAckSeries in SEQACK (Engine) columns {
        pub flow_id: u32,
        /// "data", "ack" or "sack".
        pub kind: &'static str,
        pub t_s: f64,
        pub seq_rel: Option<u64>,
        pub end_rel: Option<u64>,
        pub ack_rel: Option<u64>,
        pub retransmission: Option<bool>,
    }
}

record! {
    /// Per-link-direction time series in fixed bins (columnar).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct LinkSeries in LINK_SERIES (Engine) columns,
    /// One row of [`LinkSeries`]: what an engine records per link direction and bin. The
    /// simulator pushes it into the columns; satcc-linkd writes it as a JSON line through serde
    /// (with its own frame counters beside it), so both engines share this one definition.
    #[derive(Clone, Debug, PartialEq, serde::Serialize)]
    rows LinkSeriesRow {
        pub link_id: u32,
        /// "ab" or "ba".
        pub dir: &'static str,
        pub t_s: f64,
        /// Queue occupancy sampled at the end of the bin.
        pub queue_pkts: u64,
        pub queue_bytes: u64,
        /// Packets dropped in the bin by the queue (overflow) and by random loss.
        pub drops_queue: u64,
        pub drops_random: u64,
        pub ecn_marks: u64,
        pub tx_bytes: u64,
        pub capacity_bps: u64,
        pub delay_ms: f64,
    }
}
