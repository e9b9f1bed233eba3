"""RunResult: one schema for every engine, written as a JSON summary plus three Parquet tables.

A result directory holds

    summary.json          the `--json` document: run metadata, per-flow summary, Jain's index,
                          and the sha256 of each Parquet file (the loader checks them)
    flows.parquet         per-flow summary, one row per resolved flow
    flow_series.parquet   per flow per time bin
    link_series.parquet   per link direction per time bin

Every column name carries its unit; docs/results.md lists them all. Writes are atomic: files are
written to a temporary directory beside the target and moved in with `os.replace`, the summary
last (a reader that finds `summary.json` finds the tables it describes, and the hashes catch any
mix-up). Output bytes depend only on the result: no timestamps, host names or wall-clock times;
Parquet is written with fixed options and our own key/value metadata only (no pandas metadata).
"""

from __future__ import annotations

import errno
import json
import keyword
import math
import os
from collections import namedtuple
from pathlib import Path

from satcc.errors import SatccError, UserError
from satcc.limits import json_loads
from satcc.tables import Schema, Table
from satcc.units import format_rate

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:  # pandas and pyarrow are imported only when a view is asked for
    from typing import Any

    import pandas as pd
    import pyarrow as pa

SCHEMA_VERSION = 1
SUMMARY_FILE = "summary.json"
FLOWS_FILE = "flows.parquet"
FLOW_SERIES_FILE = "flow_series.parquet"
LINK_SERIES_FILE = "link_series.parquet"
TABLE_FILES = (FLOWS_FILE, FLOW_SERIES_FILE, LINK_SERIES_FILE)


# A column's fields, in the order `_native.result_columns()` gives them. Column is a
# collections.namedtuple: typing.NamedTuple would import typing into `satcc sim` (~15 M
# instructions; tests/test_cli_imports.py).
_COLUMN_FIELDS = (
    "name",
    "type",  # satcc.tables type: int64, float64, string, bool
    "unit",  # as docs/results.md writes it; "-" for none
    "nullable",  # may be null in some row (a test checks the others never are)
    "source",  # who writes it, below (SOURCES)
    "doc",
    "tcp_state",  # the sender's TCP state: null for UDP flows (from_engine clears it)
    "added",  # added within schema version 1: a result from before loads it as null
)


class Column(namedtuple("Column", _COLUMN_FIELDS)):
    """One result column as satcc-core declares it (crates/satcc-core/src/columns.rs, the one
    declaration: `_native.result_columns()`): the Parquet schemas below, docs/results.md's
    tables, the Rust records and what each producer may write derive from it."""

    __slots__ = ()


# Who writes a column: every engine's raw output (`ENGINE`: the simulator's rows are satcc-core's
# record.rs structs, the model engine and the emulator write the same keys), an engine that
# measures it (`ENGINE_OPTIONAL`: from_engine fills nulls where an engine leaves it out), UDP
# flows' extra keys (`UDP`: `UdpColumns`), `RunResult.from_engine` from the resolved scenario
# (`SCENARIO`) or from other columns (`DERIVED`), the field analyzer's own tables (`ANALYZER`:
# analyze_flows, pings).
ENGINE, ENGINE_OPTIONAL, UDP, SCENARIO, DERIVED, ANALYZER = (
    "engine",
    "engine-optional",
    "udp",
    "scenario",
    "derived",
    "analyzer",
)
SOURCES = (ENGINE, ENGINE_OPTIONAL, UDP, SCENARIO, DERIVED, ANALYZER)


def _declared() -> dict[str, tuple[Column, ...]]:
    from satcc import _native

    return {t: tuple(Column(*c) for c in cs) for t, cs in _native.result_columns().items()}


DECLARED = _declared()
FLOWS_COLUMNS = DECLARED["flows"]
FLOW_SERIES_COLUMNS = DECLARED["flow_series"]
LINK_SERIES_COLUMNS = DECLARED["link_series"]
CC_SERIES_COLUMNS = DECLARED["cc_series"]
SEQACK_COLUMNS = DECLARED["seqack"]
ANALYZE_FLOWS_COLUMNS = DECLARED["analyze_flows"]
PINGS_COLUMNS = DECLARED["pings"]


class Names:
    """A table's column names as attributes (`FLOW.goodput_bps == "goodput_bps"`): how the
    Python engines and from_engine name a column without spelling it; a name the table does not
    declare is an AttributeError."""

    def __init__(self, table: str, columns: tuple[Column, ...]) -> None:
        self._table = table
        # a name that is a Python keyword gets a trailing underscore (`from` -> `from_`)
        self.__dict__.update({c.name + "_" * keyword.iskeyword(c.name): c.name for c in columns})

    def __getattr__(self, name: str) -> str:  # only for names not declared
        raise AttributeError(f"{self._table} declares no column {name!r}")


FLOW = Names("flows", FLOWS_COLUMNS)
FLOW_SERIES = Names("flow_series", FLOW_SERIES_COLUMNS)
LINK_SERIES = Names("link_series", LINK_SERIES_COLUMNS)
ANALYZE_FLOW = Names("analyze_flows", ANALYZE_FLOWS_COLUMNS)


def schema_of(columns: tuple[Column, ...]) -> Schema:
    return Schema(*((c.name, c.type) for c in columns))


def written_by(columns: tuple[Column, ...], *sources: str) -> tuple[str, ...]:
    return tuple(c.name for c in columns if c.source in sources)


# Columns an engine may leave out of its raw series (from_engine fills them with nulls).
OPTIONAL_ENGINE_SERIES_COLUMNS = written_by(FLOW_SERIES_COLUMNS, ENGINE_OPTIONAL)

FLOWS_SCHEMA = schema_of(FLOWS_COLUMNS)
FLOW_SERIES_SCHEMA = schema_of(FLOW_SERIES_COLUMNS)
LINK_SERIES_SCHEMA = schema_of(LINK_SERIES_COLUMNS)

# What each engine's raw output holds (`_native.run_sim`'s shape; checked by from_engine): a flow
# summary has the ENGINE keys and may have the UDP ones; the series have the ENGINE columns
# (received_bytes and cwnd_bytes optional).
ENGINE_FLOW_COLUMNS = written_by(FLOWS_COLUMNS, ENGINE)
UDP_FLOW_COLUMNS = written_by(FLOWS_COLUMNS, UDP)

# Tables a RunResult may carry beside the three (RunResult.extras; the store's views of the same
# name, satcc.store.schema): the algorithm's own state per bin (simulator), study 003's
# sequence/ACK trace (simulator; analyze runs of captures, satcc.campaign.worker).
CC_SERIES_FILE = "cc_series.parquet"
CC_SERIES_SCHEMA = schema_of(CC_SERIES_COLUMNS)
SEQACK_FILE = "seqack.parquet"
SEQACK_SCHEMA = schema_of(SEQACK_COLUMNS)

# The series columns an engine hands `RunResult.from_engine` (the `_native.run_sim` shape; the
# simulator's rows are satcc-core's FlowSeries/LinkSeriesRow); from_engine derives the rest:
# goodput_bps and received_bps from the bytes, from/to from the link ends, and fills
# received_bytes and cwnd_bytes with nulls when an engine has none.
ENGINE_FLOW_SERIES_COLUMNS = written_by(FLOW_SERIES_COLUMNS, ENGINE)
ENGINE_LINK_SERIES_COLUMNS = written_by(LINK_SERIES_COLUMNS, ENGINE)

# Integer flow columns that may be null; pandas gets them as nullable Int64, not float64.
NULLABLE_INT_COLUMNS = frozenset(c.name for c in FLOWS_COLUMNS if c.type == "int64" and c.nullable)

# Flow-series columns that describe the sender's TCP state (null for UDP flows, and null where
# no value exists yet: srtt before the first RTT sample).
TCP_STATE_COLUMNS = tuple(c.name for c in FLOW_SERIES_COLUMNS if c.tcp_state)


# Keys of the --json summary's flows[], in order (a contract scripts rely on: add keys, never
# rename; columns.rs `SUMMARY_FLOW_KEYS`).
def _summary_keys() -> tuple[str, ...]:
    from satcc import _native

    return tuple(_native.summary_flow_keys())


SUMMARY_FLOW_KEYS = _summary_keys()


def check_engine_columns(raw: dict[str, Any], engine: str) -> None:
    """An engine's raw output holds exactly the columns the declaration gives engines (above):
    a key it lacks or one the schema does not know is a bug in that engine (SatccError)."""
    problems = []
    allowed = set(ENGINE_FLOW_COLUMNS) | set(UDP_FLOW_COLUMNS)
    for summary in raw["flows"]:
        keys = set(summary)
        if keys - allowed or set(ENGINE_FLOW_COLUMNS) - keys:
            problems.append(("flows", keys - allowed, set(ENGINE_FLOW_COLUMNS) - keys))
            break
    for table, required, optional in (
        ("flow_series", ENGINE_FLOW_SERIES_COLUMNS, OPTIONAL_ENGINE_SERIES_COLUMNS),
        ("link_series", ENGINE_LINK_SERIES_COLUMNS, ()),
    ):
        keys = set(raw[table])
        extra, missing = keys - set(required) - set(optional), set(required) - keys
        if extra or missing:
            problems.append((table, extra, missing))
    if problems:
        raise SatccError(
            "; ".join(
                f"{engine}: {table}: "
                + ", ".join(
                    [f"column {k!r} not in satcc.results' declaration" for k in sorted(extra)]
                    + [f"declared column {k!r} not written" for k in sorted(missing)]
                )
                for table, extra, missing in problems
            )
        )


class ResultError(UserError):
    """A result directory that is missing, incomplete or inconsistent (bad input: exit 2)."""

    exit_code = 2


def jain_index(values: list[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n·Σx²) (Jain, Chiu, Hawe 1984); None if undefined."""
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    squares = sum(x * x for x in xs)
    if not xs or squares == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * squares)


def shared_bottleneck(config: dict[str, Any]) -> dict[str, Any] | None:
    """The flows Jain's index is taken over: those whose bottleneck is the same link direction.

    A flow's bottleneck is the direction on its route with the smallest rate per flow crossing
    it (the model engine's rule; nominal rates). Flows are grouped by bottleneck; the group with
    the most flows is chosen (ties: the lower link id, then "ab"). Flows in opposite directions
    or on disjoint paths never share. Returns {"link_id", "dir", "flows": [ids]} or None."""
    flows = config.get("flows", [])
    if not flows:
        return None
    paths = config["routes"]["paths"]  # the resolver's routes, the simulator's
    fwd = {
        f["id"]: [(k // 2, "ab" if k % 2 == 0 else "ba") for k in p["fwd"]]
        for f, p in zip(flows, paths, strict=True)
    }
    users: dict[tuple[int, str], int] = {}
    for hops in fwd.values():
        for hop in hops:
            users[hop] = users.get(hop, 0) + 1
    links = config["links"]
    groups: dict[tuple[int, str], list[int]] = {}
    for f in flows:
        hops = fwd[f["id"]]
        if not hops:
            continue
        hop = min(hops, key=lambda h: (links[h[0]][h[1]]["rate_bps"] / users[h], h))
        groups.setdefault(hop, []).append(f["id"])
    if not groups:
        return None
    (link_id, direction), ids = min(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return {"link_id": link_id, "dir": direction, "flows": sorted(ids)}


def _clean(value: Any) -> Any:
    """JSON-safe scalars: NaN/inf become null, numpy scalars become Python numbers."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class RunResult:
    """One run of one engine on one scenario.

    `meta`: schema_version, satcc_version, engine, scenario, scenario_hash, seed, duration_s,
    bin_s, nodes, links [{id, a, b}], stats (engine counters; deterministic).
    The tables (`flows_data`, ...) are `satcc.tables.Table`s with the schemas above: Python
    lists, written without pyarrow. `flows_table`, `flow_series_table` and `link_series_table`
    give them as pyarrow Tables, `flows`, `flow_series` and `link_series` as pandas DataFrames.
    `extras`: optional tables written beside the three (file name -> table): the simulator's
    sequence/ACK trace (seqack.parquet, SEQACK_SCHEMA) when asked for. A plain class, not a
    dataclass: `satcc sim` imports this module at every run, and dataclasses (with inspect,
    ast, dis, tokenize) costs it ~30 M instructions.
    """

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(
        self,
        meta: dict[str, Any],
        flows_data: Table,
        flow_series_data: Table,
        link_series_data: Table,
        extras: dict[str, Table] | None = None,
    ) -> None:
        self.meta = meta
        self.flows_data = flows_data
        self.flow_series_data = flow_series_data
        self.link_series_data = link_series_data
        self.extras: dict[str, Table] = {} if extras is None else extras
        self._frames: dict[str, pd.DataFrame] = {}

    def _fields(self) -> tuple[Any, ...]:
        return (
            self.meta,
            self.flows_data,
            self.flow_series_data,
            self.link_series_data,
            self.extras,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResult):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        names = ("meta", "flows_data", "flow_series_data", "link_series_data", "extras")
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(names, self._fields(), strict=True))
        return f"RunResult({inner})"

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_engine(
        cls,
        raw: dict[str, Any],
        config: dict[str, Any],
        origins: list[Any],
        meta: dict[str, Any],
    ) -> RunResult:
        """Build from an engine's raw output (the `_native.run_sim` return shape), the resolved
        config it ran, the flows' origins (`scenario.expand_flows`) and run metadata."""
        check_engine_columns(raw, meta.get("engine", "engine"))
        nodes = config["nodes"]
        by_id = {f["id"]: f for f in config["flows"]}
        origin_by_id = {o.id: o for o in origins}
        rows: dict[str, list[Any]] = {name: [] for name in FLOWS_SCHEMA.names}
        for summary in sorted(raw["flows"], key=lambda f: f[FLOW.id]):
            fid = summary[FLOW.id]
            cfg = by_id[fid]
            origin = origin_by_id[fid]
            sent = summary[FLOW.sent_packets]
            retx = summary[FLOW.retransmitted_packets]
            values = {
                FLOW.id: fid,
                FLOW.name: origin.name,
                FLOW.scenario_flow: origin.scenario_flow,
                FLOW.from_: nodes[cfg["src"]],
                FLOW.to: nodes[cfg["dst"]],
                FLOW.cca: "udp" if cfg.get("proto") == "udp" else cfg["cca"],
                FLOW.proto: cfg.get("proto") or "tcp",
                FLOW.start_s: cfg["start_ns"] / 1e9,
                FLOW.size_bytes: cfg["size_bytes"],
                FLOW.retransmission_rate: retx / sent if sent else None,
            }
            for name, column in rows.items():
                column.append(_clean(values[name] if name in values else summary.get(name)))
        flows = Table.from_columns(FLOWS_SCHEMA, rows, "flows")

        bin_s = config["bin_ns"] / 1e9
        duration_s = config["duration_ns"] / 1e9
        fs = _null_outside_flows(dict(raw["flow_series"]), flows, bin_s)
        t = fs.get(FLOW_SERIES.t_s, [])
        # the last bin may be shorter than `bin` when duration is not a multiple of it
        width = [min(bin_s, duration_s - ts) for ts in t]
        fs[FLOW_SERIES.goodput_bps] = [
            d * 8 / w if d is not None and w > 0 else None
            for d, w in zip(fs.get(FLOW_SERIES.delivered_bytes, []), width, strict=True)
        ]
        fs.setdefault(FLOW_SERIES.received_bytes, [None] * len(t))
        fs[FLOW_SERIES.received_bps] = [
            d * 8 / w if d is not None and w > 0 else None
            for d, w in zip(fs[FLOW_SERIES.received_bytes], width, strict=True)
        ]
        fs.setdefault(FLOW_SERIES.cwnd_bytes, [None] * len(t))
        flow_series = Table.from_columns(FLOW_SERIES_SCHEMA, fs, "flow_series")

        ls = dict(raw["link_series"])
        ends = {i: (nodes[link["a"]], nodes[link["b"]]) for i, link in enumerate(config["links"])}
        ls[LINK_SERIES.from_] = [
            ends[i][0] if d == "ab" else ends[i][1]
            for i, d in zip(
                ls.get(LINK_SERIES.link_id, []), ls.get(LINK_SERIES.dir, []), strict=True
            )
        ]
        ls[LINK_SERIES.to] = [
            ends[i][1] if d == "ab" else ends[i][0]
            for i, d in zip(
                ls.get(LINK_SERIES.link_id, []), ls.get(LINK_SERIES.dir, []), strict=True
            )
        ]
        link_series = Table.from_columns(LINK_SERIES_SCHEMA, ls, "link_series")

        full_meta = dict(meta)
        full_meta.setdefault("schema_version", SCHEMA_VERSION)
        full_meta.setdefault("duration_s", duration_s)
        full_meta.setdefault("bin_s", bin_s)
        full_meta.setdefault("nodes", list(nodes))
        full_meta.setdefault(
            "links",
            [{"id": i, "a": a, "b": b} for i, (a, b) in ends.items()],
        )
        full_meta.setdefault("stats", {k: _clean(v) for k, v in raw.get("stats", {}).items()})
        full_meta.setdefault("fairness", shared_bottleneck(config))
        extras = {}
        if raw.get("seqack") is not None:
            sa = dict(raw["seqack"])
            dropped = sa.pop("dropped_rows", 0)
            extras[SEQACK_FILE] = Table.from_columns(SEQACK_SCHEMA, sa, "seqack")
            full_meta.setdefault(
                "seqack",
                {
                    "flow": config["seqack"]["flow"],
                    "rows": len(sa["t_s"]),
                    "dropped_rows": dropped,
                },
            )
        if raw.get("cc_series") is not None:
            extras[CC_SERIES_FILE] = Table.from_columns(
                CC_SERIES_SCHEMA, raw["cc_series"], "cc_series"
            )
        return cls(full_meta, flows, flow_series, link_series, extras)

    # -- views --------------------------------------------------------------------------------

    @property
    def flows_table(self) -> pa.Table:
        return self.flows_data.to_arrow()

    @property
    def flow_series_table(self) -> pa.Table:
        return self.flow_series_data.to_arrow()

    @property
    def link_series_table(self) -> pa.Table:
        return self.link_series_data.to_arrow()

    def _frame(self, key: str, table: Table) -> pd.DataFrame:
        if key not in self._frames:
            frame = table.to_arrow().to_pandas()
            for name in NULLABLE_INT_COLUMNS & set(frame.columns):
                frame[name] = frame[name].astype("Int64")  # integers with nulls, not floats
            self._frames[key] = frame
        return self._frames[key]

    @property
    def flows(self) -> pd.DataFrame:
        return self._frame("flows", self.flows_data)

    @property
    def flow_series(self) -> pd.DataFrame:
        return self._frame("flow_series", self.flow_series_data)

    @property
    def link_series(self) -> pd.DataFrame:
        return self._frame("link_series", self.link_series_data)

    @property
    def jain_flows(self) -> list[int]:
        """Ids of the flows Jain's index is over: those sharing one bottleneck (meta
        "fairness", see `shared_bottleneck`); every flow for results written without it."""
        fair = self.meta.get("fairness", "all")
        if fair == "all":
            return list(self.flows_data.column("id"))
        return list(fair["flows"]) if fair else []

    @property
    def jain_index(self) -> float | None:
        """Over `jain_flows`; None when fewer than two flows share the bottleneck (one flow has
        no fairness to speak of: 1.0 would read as "perfectly fair") or none has a goodput."""
        ids = set(self.jain_flows)
        if len(ids) < 2:
            return None
        rows = self.flows_data.to_pylist()
        return jain_index([r["goodput_bps"] for r in rows if r["id"] in ids])

    def summary(self) -> dict[str, Any]:
        """The `--json` document (also `summary.json`, minus the file hashes)."""
        m = self.meta
        flows = []
        for row in self.flows_data.to_pylist():
            flows.append({key: _clean(row.get(key)) for key in SUMMARY_FLOW_KEYS})
        doc: dict[str, Any] = {
            "schema_version": m.get("schema_version", SCHEMA_VERSION),
            "satcc_version": m.get("satcc_version"),
            "engine": m.get("engine"),
            "scenario": m.get("scenario"),
            "scenario_hash": m.get("scenario_hash"),
            "seed": m.get("seed"),
            "duration_s": m.get("duration_s"),
            "bin_s": m.get("bin_s"),
            "jain_index": self.jain_index,
            "jain_flows": self.jain_flows,
            "flows": flows,
            "nodes": m.get("nodes", []),
            "links": m.get("links", []),
            "stats": m.get("stats", {}),
        }
        if "seqack" in m:  # only when a trace was asked for: other summaries are unchanged
            doc["seqack"] = m["seqack"]
        return doc

    def to_json(self) -> str:
        return _dumps(self.summary())

    # -- writing ------------------------------------------------------------------------------

    def write(self, out_dir: str | Path) -> Path:
        """Write the result directory atomically (see module doc); returns its path."""
        from satcc.limits import check_out_dir

        out = check_out_dir(out_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(out)
        tmp = _new_temporary(out)
        try:
            os.chmod(tmp, 0o777 & ~_umask())  # made 0700; a result is an ordinary dir
            files = self.write_files(tmp)
            if not out.exists():
                os.rename(tmp, out)  # the whole directory appears at once
                _fsync_dir(out.parent)
                return out
            # Replacing an existing result: drop the old summary first, so that at no moment
            # does a summary describe tables it does not match; move it in last.
            (out / SUMMARY_FILE).unlink(missing_ok=True)
            for name in files:
                os.replace(tmp / name, out / name)
            os.replace(tmp / SUMMARY_FILE, out / SUMMARY_FILE)
            _fsync_dir(out)
            return out
        finally:
            if os.path.lexists(tmp):  # renamed into place, there is nothing left to remove
                try:
                    os.rmdir(tmp)  # a result replaced: its files were moved out of it
                except OSError:  # a write that failed half-way
                    import shutil

                    shutil.rmtree(tmp, ignore_errors=True)

    def write_files(self, into: Path) -> tuple[str, ...]:
        """Write the result's files into the directory `into` (new and empty, not yet where
        readers look: `write`'s temporary directory, a campaign's staging directory) and
        fsync them; returns the tables' names (the summary is written too, last)."""
        meta_json = _dumps(self.meta, indent=None)
        digests = {}
        for name, table in (
            (FLOWS_FILE, self.flows_data),
            (FLOW_SERIES_FILE, self.flow_series_data),
            (LINK_SERIES_FILE, self.link_series_data),
        ):
            digests[name] = table.write_parquet(into / name, {"satcc": meta_json})
        for name, table in sorted(self.extras.items()):
            digests[name] = table.write_parquet(into / name)
        files = (*TABLE_FILES, *sorted(self.extras))
        doc = self.summary()
        doc["files"] = {name: {"sha256": digests[name]} for name in files}
        (into / SUMMARY_FILE).write_text(_dumps(doc), encoding="utf-8", newline="\n")
        fsync_files([into / name for name in (*files, SUMMARY_FILE)])
        return files

    # -- text ---------------------------------------------------------------------------------

    def table(self, fairness: bool = True) -> str:
        """A per-flow text table for people; `fairness` adds Jain's index over the goodputs
        (meaningless when the flows do not share a path, as in the demo's lanes)."""
        m = self.meta
        if m.get("scenario") is None:  # an analysis: no scenario, no seed
            inputs = [Path(str(i)).name for i in m.get("inputs") or []]
            head = f"{m.get('engine')} · {', '.join(inputs) or 'no inputs'}"
        else:
            head = f"{m.get('scenario')} · {m.get('engine')} · seed {m.get('seed')}"
        head += f" · {_num(m.get('duration_s'))} s"
        columns = [
            "id",
            "name",
            "path",
            "cca",
            "goodput",
            "delivered",
            "retx/loss",
            "rtt mean",
            "rtt p95",
            "fct",
        ]
        rows = []
        for f in self.flows_data.to_pylist():
            rows.append(
                [
                    str(f["id"]),
                    f["name"] if f["name"] is not None else "-",
                    f"{f['from']}→{f['to']}" if f["from"] is not None else "-",
                    f["cca"] if f["cca"] is not None else "-",
                    format_rate(f["goodput_bps"]) if f["goodput_bps"] is not None else "-",
                    _mb(f["delivered_bytes"]),
                    # TCP: retransmitted share; UDP: datagrams lost
                    _pct(
                        f["loss_fraction"] if f.get("proto") == "udp" else f["retransmission_rate"]
                    ),
                    _ms(f["rtt_mean_ms"]),
                    _ms(f["rtt_p95_ms"]),
                    f"{f['fct_s']:.2f} s" if f["fct_s"] is not None else "-",
                ]
            )
        from satcc.textgrid import grid

        lines = [head, *grid(columns, rows, left={1, 2, 3})]
        j = self.jain_index
        if fairness and len(self.jain_flows) >= 2:  # one flow: no fairness to speak of
            ids = self.jain_flows
            fair = self.meta.get("fairness")
            where = (
                f" of the {len(ids)} flows sharing bottleneck link[{fair['link_id']}] {fair['dir']}"
                if isinstance(fair, dict) and fair.get("link_id") is not None
                else f" of flows {', '.join(map(str, ids))}"
                if fair != "all" and ids
                else ""
            )
            lines.append(
                f"Jain's fairness index over goodputs{where}: {j:.3f}"
                if j is not None
                else f"Jain's fairness index over goodputs{where}: undefined (no goodput)"
            )
        return "\n".join(lines)


def _null_outside_flows(
    fs: dict[str, list[Any]], flows: Table, bin_s: float
) -> dict[str, list[Any]]:
    """Missing values are null: every column of a bin that ends before the flow starts or
    starts after it completed (start + fct); the TCP state of UDP flows; srtt 0 (no sample)."""
    rows = flows.to_pylist()
    span = {
        f["id"]: (f["start_s"], f["start_s"] + f["fct_s"] if f["fct_s"] is not None else math.inf)
        for f in rows
    }
    udp = {f["id"] for f in rows if f["proto"] == "udp"}
    ids, t = fs.get("flow_id", []), fs.get("t_s", [])
    out = {k: list(v) for k, v in fs.items()}
    data_columns = [k for k in out if k not in ("flow_id", "t_s")]
    srtt = out.get("srtt_ms")
    for i, (fid, ts) in enumerate(zip(ids, t, strict=True)):
        start, end = span.get(fid, (0.0, math.inf))
        if ts + bin_s <= start or ts >= end:
            for k in data_columns:
                out[k][i] = None
            continue
        if fid in udp:
            for k in TCP_STATE_COLUMNS:
                if k in out:
                    out[k][i] = None
        elif srtt is not None and srtt[i] == 0:
            srtt[i] = None
    return out


def _num(x: Any) -> str:
    return "?" if x is None else f"{x:g}"


def _mb(nbytes: int | None) -> str:
    return "-" if nbytes is None else f"{nbytes / 1e6:.2f} MB"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f} %"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f} ms"


def _dumps(obj: Any, indent: int | None = 2) -> str:
    text = json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False)
    return text + "\n" if indent else text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


SHA256_CHUNK = 1 << 18  # bytes read at a time (hashlib.file_digest's buffer)


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, hex (the one digest every store and campaign file records;
    `Table.write_parquet` returns the same of the file it writes). satcc's one sha256 is the
    native module's (`_native.Sha256`, the sha2 crate): hashlib's import loads OpenSSL."""
    from satcc import _native

    digest = _native.Sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(SHA256_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_text_fsync(path: Path, text: str) -> None:
    """Write and fsync (used by the campaign layout too)."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def fsync_file(path: Path) -> None:
    """fsync an existing file (used by the campaign layout too)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_files(paths: list[Path]) -> None:
    """fsync every file in `paths` at once, one thread each: the filesystem commits them
    together instead of one journal commit after another (a result's four files: one wait
    instead of four). The first failure is raised once all have finished."""
    import threading

    failed: list[OSError] = []

    def one(path: Path) -> None:
        try:
            fsync_file(path)
        except OSError as e:
            failed.append(e)

    threads = [threading.Thread(target=one, args=(p,)) for p in paths[1:]]
    for t in threads:
        t.start()
    one(paths[0])
    for t in threads:
        t.join()
    if failed:
        raise failed[0]


def _fsync_dir(path: Path) -> None:
    try:
        fsync_file(path)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass


TMP_MARK = ".tmp-"  # .NAME.tmp-PID-XXXX: a result being written by process PID
TMP_TRIES = 100  # names tried before giving up, as mkdtemp gives up (64 random bits a name)


def _new_temporary(out: Path) -> Path:
    """A new directory beside `out`, `.NAME.tmp-PID-XXXX`, mode 0700: made as tempfile.mkdtemp
    makes one (os.mkdir creates it here or fails; a name taken is skipped), its XXXX 16 hex
    digits from os.urandom where mkdtemp's are 8 letters from a Mersenne Twister seeded from it.
    tempfile would import random and weakref into every `satcc sim` (~8 M instructions,
    BENCHMARKS.md); write_or_rescue's fallback under the system's temporary directory keeps
    tempfile, which knows where that is."""
    for _ in range(TMP_TRIES):
        tmp = out.parent / f".{out.name}{TMP_MARK}{os.getpid()}-{os.urandom(8).hex()}"
        try:
            tmp.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(errno.EEXIST, "no unused temporary directory name", str(out.parent))


def remove_stale_temporaries(out: Path) -> list[Path]:
    """Delete `.NAME.tmp-PID-*` directories beside `out` left by a writer that was killed
    (its PID is gone); a live writer's are kept. Returns what was removed."""
    gone = []
    prefix = f".{out.name}{TMP_MARK}"
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return gone
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid = entry.name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and _pid_alive(int(pid)):
            continue
        if entry.is_dir() and not entry.is_symlink():
            import shutil

            shutil.rmtree(entry, ignore_errors=True)
            gone.append(entry)
    return gone


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_or_rescue(result: RunResult, out: Path) -> tuple[Path, str | None]:
    """Write `result` to `out`; if that fails for a reason outside the result (disk full,
    permissions, a name the filesystem refuses), write it to a fresh directory under the
    system's temporary directory instead. Returns (where it is, why `out` failed or None)."""
    try:
        return result.write(out), None
    except (OSError, UserError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        import tempfile

        rescue = Path(tempfile.mkdtemp(prefix="satcc-result-")) / "result"
        try:
            return result.write(rescue), why
        except (OSError, UserError) as e2:  # the system refuses both: say so in one line
            why2 = e2.strerror if isinstance(e2, OSError) and e2.strerror else str(e2)
            import shutil

            shutil.rmtree(rescue.parent, ignore_errors=True)
            raise SatccError(
                f"{out}: cannot write the result ({why}); writing it under {rescue.parent} "
                f"failed too ({why2})"
            ) from None


# -- loading ---------------------------------------------------------------------------------


def load(result_dir: str | Path) -> RunResult:
    """Read a result directory written by `RunResult.write`; checks the files' hashes."""
    d = Path(result_dir)
    summary_path = d / SUMMARY_FILE
    if not d.is_dir():
        raise ResultError(f"{d}: expected a result directory, found none")
    if not summary_path.is_file():
        raise ResultError(
            f"{d}: expected {SUMMARY_FILE} (a result written by `satcc sim`), "
            "found none; the run may not have finished"
        )
    try:
        doc = json_loads(summary_path.read_text(encoding="utf-8"), str(summary_path))
    except (OSError, ValueError) as e:
        raise ResultError(
            f"{summary_path}: expected a JSON summary, found unreadable data: {e}"
        ) from None
    if not isinstance(doc, dict):
        raise ResultError(f"{summary_path}: expected a JSON object, found another JSON value")
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ResultError(
            f"{summary_path}: expected schema_version {SCHEMA_VERSION}, found {version!r}"
        )
    import pyarrow.parquet as pq

    tables = {}
    for name in TABLE_FILES:
        path = d / name
        if not path.is_file():
            raise ResultError(f"{d}: expected {name}, found none")
        want = doc.get("files", {}).get(name, {}).get("sha256")
        if want != file_sha256(path):
            raise ResultError(
                f"{path}: does not match the sha256 recorded in {SUMMARY_FILE}; "
                "the result was modified or mixed with another run"
            )
        tables[name] = pq.read_table(path)
    meta_raw = tables[FLOWS_FILE].schema.metadata or {}
    try:
        meta = json_loads(meta_raw.get(b"satcc", b"{}").decode("utf-8"), str(d))
    except ValueError as e:
        raise ResultError(
            f"{d / FLOWS_FILE}: expected satcc metadata, found unreadable data: {e}"
        ) from None
    extras = {}
    for name in sorted(set(doc.get("files", {})) - set(TABLE_FILES)):
        path = d / name
        want = doc["files"][name].get("sha256") if isinstance(doc["files"][name], dict) else None
        if not path.is_file() or want != file_sha256(path):
            raise ResultError(
                f"{path}: missing or not matching the sha256 recorded in {SUMMARY_FILE}"
            )
        table = pq.read_table(path).replace_schema_metadata(None)
        extras[name] = Table.from_arrow(Schema.from_arrow(table.schema, path), table)
    return RunResult(
        meta,
        _conform(tables[FLOWS_FILE], FLOWS_SCHEMA, d / FLOWS_FILE),
        _conform(tables[FLOW_SERIES_FILE], FLOW_SERIES_SCHEMA, d / FLOW_SERIES_FILE),
        _conform(tables[LINK_SERIES_FILE], LINK_SERIES_SCHEMA, d / LINK_SERIES_FILE),
        extras,
    )


# Columns added to schema version 1 after results were first written with it: a result from
# before they existed loads with them null (it never measured them).
ADDED_COLUMNS = frozenset(c.name for c in FLOW_SERIES_COLUMNS if c.added)


def _conform(table: pa.Table, schema: Schema, source: Path | None = None) -> Table:
    """The stored table with our schema (and no key/value metadata), so that writing a loaded
    result gives the same bytes as writing the original."""
    import pyarrow as pa

    arrow = schema.arrow()
    for column in arrow:
        if column.name not in table.column_names:
            if column.name not in ADDED_COLUMNS:
                raise ResultError(
                    f"{source or 'result'}: expected a column {column.name!r}, found none"
                )
            table = table.append_column(column.name, pa.nulls(table.num_rows, column.type))
    return Table.from_arrow(
        schema, table.select(arrow.names).cast(arrow).replace_schema_metadata(None)
    )
