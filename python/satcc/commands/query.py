"""`satcc query DIR "SQL"`: SQL over a campaign's results (DuckDB), as a table, JSON or CSV."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from satcc.cli import COMMAND_HELP
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["query"]
DESCRIPTION = """\
Run one SQL query (DuckDB dialect) over a campaign directory. Views: runs (one row per planned
run, with the matrix parameters as columns), flows, flow_series, link_series, pings, seqack
(each with the run's id, engine, seed and parameters), plus catalog_info and problems. Every
file is checked against its recorded sha256 first; corrupt or foreign files are listed on
stderr and left out. docs/campaigns.md documents every column.

  satcc query out/campaigns/x "SELECT cca, avg(goodput_bps)/1e6 AS mbps FROM flows GROUP BY cca"
  satcc query out/campaigns/x --schema          the views and their columns

DIR may also be one result directory (`satcc sim/run/analyze --out`): views flows, flow_series,
link_series and summary (one row: engine, scenario, seed, jain_index ...).

  satcc query out/geo "SELECT name, goodput_bps/1e6 AS mbps FROM flows"
  satcc query out/geo --csv "SELECT * FROM flows"      (flags go anywhere)
"""

MAX_CELL = 60


class _Intermixed(argparse.ArgumentParser):
    """Flags anywhere: `query DIR --csv "SQL"` as well as `query --csv DIR "SQL"` (argparse
    otherwise binds both positionals at the first one and calls the SQL an extra argument)."""

    _inner = False

    def parse_known_args(self, args=None, namespace=None):
        if self._inner:
            return super().parse_known_args(args, namespace)
        self._inner = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inner = False


def register(subparsers) -> None:
    parser_class = subparsers._parser_class
    subparsers._parser_class = _Intermixed
    try:
        p = subparsers.add_parser(
            "query",
            help=HELP,
            description=DESCRIPTION,
            formatter_class=HelpFormatter,
        )
    finally:
        subparsers._parser_class = parser_class
    p.add_argument("dir", metavar="DIR", type=Path, help="campaign directory")
    p.add_argument("sql", metavar="SQL", nargs="?", help="the query")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="rows as a JSON array of objects")
    fmt.add_argument("--csv", action="store_true", help="rows as CSV with a header")
    p.add_argument("--schema", action="store_true", help="list the views and their columns")
    p.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        help="stop the query after this long (exit 1); DuckDB's memory is capped at half of "
        "what satcc may use either way",
    )
    p.set_defaults(func=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 366 * 86400:  # NaN fails too
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds above 0 (at most a year), found {text[:60]!r}"
        )
    return value


def run(args: argparse.Namespace) -> int:
    from satcc.errors import UserError
    from satcc.limits import printable
    from satcc.store import VIEWS, open_store

    if args.sql is None and not args.schema:
        raise UserError("expected a SQL query (or --schema)")
    if (args.dir / "summary.json").is_file():
        frame = query_result_dir(args.dir, args.sql, schema=args.schema, timeout_s=args.timeout)
        if args.schema:
            return 0
        return _print(frame, args)
    with open_store(args.dir) as store:
        for p in store.problems:
            print(printable(f"satcc: warning: {args.dir}/{p.line()}"), file=sys.stderr)
        if args.schema:
            for view in VIEWS:
                print(f"{view}:")
                for name, kind in store.columns(view):
                    print(printable(f"  {name:<28} {kind}"))
            return 0
        frame = store.query(args.sql, timeout_s=args.timeout)
    return _print(frame, args)


RESULT_VIEWS = ("flows", "flow_series", "link_series", "summary")


def query_result_dir(
    directory: Path, sql: str | None, schema: bool = False, timeout_s: float | None = None
):
    """SQL over one result directory: its three tables and a one-row summary, in an in-memory
    DuckDB with no file access (the tables are handed over from Arrow, nothing is read by SQL)."""
    import duckdb
    import pandas as pd
    import pyarrow as pa

    from satcc.errors import UserError
    from satcc.results import load
    from satcc.store.catalog import StoreError, limit_memory, run_query

    result = load(directory)
    doc = result.summary()
    summary = pa.Table.from_pandas(
        pd.DataFrame(
            [
                {
                    k: doc.get(k)
                    for k in (
                        "engine",
                        "scenario",
                        "scenario_hash",
                        "seed",
                        "duration_s",
                        "bin_s",
                        "jain_index",
                        "satcc_version",
                    )
                }
            ]
        ),
        preserve_index=False,
    )
    con = duckdb.connect(":memory:")
    try:
        for name, table in (
            ("flows", _with_analyze_columns(directory, result.flows_table)),
            ("flow_series", result.flow_series_table),
            ("link_series", result.link_series_table),
            ("summary", summary),
        ):
            con.register(name, table)
        limit_memory(con)
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        if schema:
            for view in RESULT_VIEWS:
                print(f"{view}:")
                for row in con.execute(f"DESCRIBE {view}").fetchall():
                    print(f"  {row[0]:<28} {row[1]}")
            return None
        try:
            return run_query(con, sql, None, timeout_s)
        except StoreError as e:
            raise UserError(f"{directory}: {e}") from None
    finally:
        con.close()


def _with_analyze_columns(directory: Path, flows):
    """An analyze result's flows with the columns its `--json` summary and `Result.summary`
    add per flow (kind, file, src, dst, sport, dport, rtt_source, capture_point ...), read
    from DIR/analyze.json; other results' flows as they are."""
    import pyarrow as pa

    from satcc.limits import json_loads

    path = directory / "analyze.json"
    if not path.is_file():
        return flows
    doc = json_loads(path.read_text(encoding="utf-8"), str(path))
    extra = [
        {
            k: v
            for k, v in f.items()
            if k not in flows.column_names and not isinstance(v, (list, dict))
        }
        for f in doc.get("flows", [])
    ]
    if len(extra) != flows.num_rows:
        return flows
    names = list(dict.fromkeys(k for row in extra for k in row))
    for name in names:
        values = [row.get(name) for row in extra]
        if all(
            isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in values
        ):
            column = pa.array([None if v is None else float(v) for v in values], pa.float64())
            if all(isinstance(v, int) or v is None for v in values):
                column = pa.array(values, pa.int64())
        else:
            column = pa.array([None if v is None else str(v) for v in values], pa.string())
        flows = flows.append_column(name, column)
    return flows


def _print(frame, args: argparse.Namespace) -> int:
    from satcc.limits import json_printable, printable

    if args.json:
        rows = [{k: _json_value(v) for k, v in row.items()} for row in frame.to_dict("records")]
        text = json.dumps(rows, indent=2, ensure_ascii=False, allow_nan=False)
        sys.stdout.write(json_printable(text) + "\n")
    elif args.csv:
        frame.map(lambda v: printable(v) if isinstance(v, str) else v).to_csv(
            sys.stdout, index=False, lineterminator="\n"
        )
    else:
        print(table(frame))
    return 0


def _json_value(v):
    if v is None:
        return None
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    return v


def table(frame) -> str:
    from satcc.campaign.summary import grid
    from satcc.limits import printable

    def cell(v) -> str:
        v = _json_value(v)
        if v is None:
            return "-"
        if isinstance(v, float):
            text = f"{v:.6g}"
        else:
            text = str(v)
        text = printable(text.replace("\n", " "))
        return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"

    cols = [printable(str(c)) for c in frame.columns]
    rows = [[cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    numeric = {
        i
        for i, c in enumerate(frame.columns)
        if str(frame[c].dtype) not in ("object", "string", "str", "bool", "boolean")
    }
    left = set(range(len(cols))) - numeric
    lines = grid(cols, rows, left)
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)
