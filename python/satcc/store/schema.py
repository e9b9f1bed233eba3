"""The store's tables, defined here and nowhere else.

A campaign run directory holds a `RunResult` (its three tables are `satcc.results`'s
FLOWS_SCHEMA, FLOW_SERIES_SCHEMA and LINK_SERIES_SCHEMA, the one result schema every engine
writes), the extras a RunResult may carry (`results.CC_SERIES_SCHEMA`, `results.SEQACK_SCHEMA`,
defined there) and, for analyze runs, the extra tables below; the campaign worker builds the
extras with these schemas, the writer stores them, the catalog exposes every table as a view.

| file              | columns                                    | what                          |
|-------------------|--------------------------------------------|-------------------------------|
| pings.parquet     | flow_id, seq, t_s, t_epoch_s, rtt_ms       | every probe of a ping/nping log (rtt null if lost) |
| seqack.parquet    | flow_id, kind, t_s, seq_rel, end_rel, ack_rel, retransmission | study 003 Fig. 6: the data segments and ACKs of each capture's largest flow |
| analyze_flows.parquet | flow_id, then ANALYZE_FLOW_COLUMNS     | what `satcc analyze` adds per flow (file, kind, endpoints, rtt_source, ...); the catalog joins it into `flows` |
"""

from __future__ import annotations

from satcc import results
from satcc.results import CC_SERIES_FILE, CC_SERIES_SCHEMA, SEQACK_FILE, SEQACK_SCHEMA
from satcc.tables import Schema

STORE_SCHEMA_VERSION = 1  # numbers the catalog's layout (satcc.store.catalog)

PINGS_FILE = "pings.parquet"

PINGS_SCHEMA = Schema(
    ("flow_id", "int64"),
    ("seq", "int64"),
    ("t_s", "float64"),  # from the log's first probe
    ("t_epoch_s", "float64"),  # Unix time when the log has it (ping -D), else null
    ("rtt_ms", "float64"),  # null: no reply
)
# An analyze run's per-flow columns beyond flows.parquet: the scalar keys `satcc analyze --json`
# adds per flow (satcc.analyze.result.build), so the store's `flows` view has the columns a
# result directory's `satcc query` view has (satcc.commands.query).
ANALYZE_FLOWS_FILE = "analyze_flows.parquet"
ANALYZE_FLOW_COLUMNS = (
    ("file", "string"),  # the input file
    ("kind", "string"),  # capture | iperf3 | ping
    ("src", "string"),  # addresses (null for a ping log)
    ("dst", "string"),
    ("sport", "int64"),
    ("dport", "int64"),
    ("conn", "int64"),  # capture: the connection's index in the capture
    ("packets", "int64"),  # capture: packets of this direction
    ("payload_bytes", "int64"),  # capture: payload bytes, retransmissions included
    ("rtt_source", "string"),  # capture: the RTT estimator (docs/analyze.md)
    ("capture_point", "string"),  # capture: sender | receiver | between | unknown
    ("udp_lost", "int64"),  # iperf3 UDP / capture of iperf3 UDP
    ("udp_loss_rate", "float64"),
    ("udp_jitter_ms", "float64"),
    ("loss_rate", "float64"),  # ping log: lost / sent
    ("bin_s", "float64"),  # width of the flow's bins (capture bin, iperf3 interval)
)
ANALYZE_FLOWS_SCHEMA = Schema(("flow_id", "int64"), *ANALYZE_FLOW_COLUMNS)

# The catalog's `runs` table: one row per planned run, then the parameter columns.
RUN_COLUMNS = [
    "run_id",
    "status",
    "error",
    "engine",
    "seed",
    "repetition",
    "point",
    "scenario",
    "scenario_hash",
    "satcc_version",
    "duration_s",
    "bin_s",
    "jain_index",
]
# The run columns every data view starts with.
JOIN_COLUMNS = ["run_id", "engine", "seed", "repetition", "point", "scenario"]
# view name -> (file name in a run directory, its schema: `.arrow()` for empty views)
DATA_VIEWS: dict[str, tuple[str, Schema]] = {
    "flows": (results.FLOWS_FILE, results.FLOWS_SCHEMA),
    "flow_series": (results.FLOW_SERIES_FILE, results.FLOW_SERIES_SCHEMA),
    "link_series": (results.LINK_SERIES_FILE, results.LINK_SERIES_SCHEMA),
    "pings": (PINGS_FILE, PINGS_SCHEMA),
    "seqack": (SEQACK_FILE, SEQACK_SCHEMA),
    "cc_series": (CC_SERIES_FILE, CC_SERIES_SCHEMA),
}
# Not a view of its own: joined into `flows` (catalog) when the plan has analyze runs.
VIEWS = ("runs", *DATA_VIEWS)
