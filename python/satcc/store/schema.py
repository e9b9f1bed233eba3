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
| analyze_flows.parquet | flow_id, file, kind, src, dst, ...    | what `satcc analyze` adds per flow (file, kind, endpoints, rtt_source, ...); the catalog joins it into `flows` |
"""

from __future__ import annotations

from satcc import results
from satcc.results import CC_SERIES_FILE, CC_SERIES_SCHEMA, SEQACK_FILE, SEQACK_SCHEMA
from satcc.tables import Schema

STORE_SCHEMA_VERSION = 1  # numbers the catalog's layout (satcc.store.catalog)

PINGS_FILE = "pings.parquet"

# The analyzer's tables are declared with every other result column (crates/satcc-core/src/
# columns.rs: `PINGS`, `ANALYZE_FLOWS`; docs/results.md). analyze_flows holds an analyze run's
# per-flow columns beyond flows.parquet: the scalar keys `satcc analyze --json` adds per flow
# (satcc.analyze.result.build), so the store's `flows` view has the columns a result
# directory's `satcc query` view has (satcc.commands.query).
PINGS_SCHEMA = results.schema_of(results.PINGS_COLUMNS)
ANALYZE_FLOWS_FILE = "analyze_flows.parquet"
ANALYZE_FLOWS_SCHEMA = results.schema_of(results.ANALYZE_FLOWS_COLUMNS)

# The summary.json keys the `runs` table holds (kept by the run directories' scan,
# satcc.store.layout, so the catalog does not read the file again).
RUN_SUMMARY_KEYS = (
    "scenario",
    "scenario_hash",
    "satcc_version",
    "duration_s",
    "bin_s",
    "jain_index",
)
# The catalog's `runs` table: one row per planned run, then the parameter columns.
RUN_COLUMNS = [
    "run_id",
    "status",
    "error",
    "engine",
    "seed",
    "repetition",
    "point",
    *RUN_SUMMARY_KEYS,
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
