"""The results store: an embedded DuckDB catalog over a campaign directory's Parquet files.

    campaign dir ──scan (every hash checked)──► good runs ──► DuckDB: table `runs`,
                                              └► problems      views flows, flow_series,
                                                 (reported)    link_series, pings, seqack
                                                               over read_parquet(the files)

The Parquet files stay the truth; the catalog is derived and rebuilt on every open (a scan
hashes every file, so a file changed since is caught, never mixed in). It is also saved as
DIR/catalog.duckdb (a copy of the one built, written aside and renamed in) for other tools: `duckdb DIR/catalog.duckdb`.

Tables and views (docs/campaigns.md documents every column):
| name          | one row per                      | columns                                      |
|---------------|----------------------------------|----------------------------------------------|
| runs          | planned run (done, failed, pending) | run_id, status, error, engine, seed, repetition, point, scenario, scenario_hash, satcc_version, duration_s, bin_s, jain_index, then the parameter columns |
| flows         | flow of a done run               | run columns (run_id, engine, seed, repetition, point, scenario, parameters) + flows.parquet (+ analyze_flows.parquet's columns when the plan has analyze runs) |
| flow_series   | flow x bin                       | run columns + flow_series.parquet            |
| link_series   | link direction x bin             | run columns + link_series.parquet            |
| pings         | ping/nping probe (analyze runs)  | run columns + pings.parquet                  |
| seqack        | data segment, ACK or SACK block (a simulated run's trace, a capture) | run columns + seqack.parquet |
| catalog_info  | key                              | key, value: store_schema_version, results_schema_version, satcc_version, campaign |
| problems      | file left out                    | path, kind, message                          |

A parameter column whose name is also a column of the table it joins (e.g. an axis `cca`
beside flows.cca) appears there as `param_<name>`; in `runs` it keeps its name.

The table schemas live in satcc.store.schema. STORE_SCHEMA_VERSION numbers the layout above. Opening a saved catalog of an older
version rebuilds it (the migration: everything is derived); a newer one is refused. Run
results of another `satcc.results` schema version are reported and left out (no migration
between result schemas exists yet).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Self

import pandas as pd
import pyarrow as pa

from satcc import _native, results
from satcc.errors import SatccError, UserError
from satcc.limits import json_loads
from satcc.store import layout
from satcc.store.schema import (
    ANALYZE_FLOWS_FILE,
    ANALYZE_FLOWS_SCHEMA,
    DATA_VIEWS,
    JOIN_COLUMNS,
    RUN_COLUMNS,
    RUN_SUMMARY_KEYS,
    STORE_SCHEMA_VERSION,
)


class StoreError(UserError):
    pass


class _ReadOnlyStatements:
    """The statement types `Store.query` runs (resolved lazily: duckdb is imported late)."""

    def __contains__(self, kind: Any) -> bool:
        return kind in _read_only_statements()


_READ_ONLY_STATEMENTS = _ReadOnlyStatements()


def _duckdb():
    import duckdb

    return duckdb


class Store:
    """An open catalog. `query(sql)` returns a pandas DataFrame; `problems` lists what was
    left out and why (satcc.store.layout.Problem)."""

    def __init__(self, directory: Path, con: Any, scan: layout.Scan, param_columns: list[str]):
        self.directory = directory
        self.con = con
        self.scan = scan
        self.param_columns = param_columns

    @property
    def problems(self) -> list[layout.Problem]:
        return self.scan.problems

    @property
    def index(self) -> dict[str, Any]:
        return self.scan.index

    def query(
        self, sql: str, params: list[Any] | None = None, timeout_s: float | None = None
    ) -> pd.DataFrame:
        """One read-only statement (SELECT, WITH ... SELECT, FROM ..., DESCRIBE); anything that
        writes, attaches or changes settings is refused before it runs. It runs within
        `memory_limit` (see `limit_memory`) and, given `timeout_s`, is stopped after that long."""
        duckdb = _duckdb()
        try:
            statements = self.con.extract_statements(sql)
            if len(statements) != 1:
                raise StoreError(f"query: expected one SQL statement, found {len(statements)}")
            kind = statements[0].type
            if kind not in _READ_ONLY_STATEMENTS:
                raise StoreError(
                    f"query: expected a read-only statement (SELECT), found "
                    f"{kind.name}; the store is read-only"
                )
        except duckdb.Error as e:
            raise StoreError(f"query failed: {_first_line(str(e))}") from None
        return run_query(self.con, sql, params, timeout_s)

    def arrow(self, sql: str) -> pa.Table:
        result = self.con.execute(sql).arrow()
        return result.read_all() if hasattr(result, "read_all") else result

    def runs(self) -> pd.DataFrame:
        return self.query("SELECT * FROM runs ORDER BY point, repetition, run_id")

    def flows(self) -> pd.DataFrame:
        return self.query("SELECT * FROM flows ORDER BY point, repetition, run_id, id")

    def flow_series(self, where: str | None = None) -> pd.DataFrame:
        w = f"WHERE {where}" if where else ""
        return self.query(
            f"SELECT * FROM flow_series {w} ORDER BY point, repetition, run_id, flow_id, t_s"
        )

    def link_series(self, where: str | None = None) -> pd.DataFrame:
        w = f"WHERE {where}" if where else ""
        return self.query(
            f"SELECT * FROM link_series {w} ORDER BY point, repetition, run_id, link_id, dir, t_s"
        )

    def columns(self, view: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.con.execute(f"DESCRIBE {view}").fetchall()]

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(directory: str | Path, save: bool = True) -> Store:
    """Scan DIR, build the catalog (in memory), save a copy as DIR/catalog.duckdb when the
    directory is writable and `save`; raises UserError if DIR is not a campaign directory."""
    d = Path(directory)
    if not d.is_dir():
        raise StoreError(f"{d}: expected a campaign directory, found none")
    _check_saved_version(d)
    scan = layout.scan(d)
    duckdb = _duckdb()
    con = duckdb.connect(":memory:")
    params = _build(con, d, scan)
    if save and os.access(d, os.W_OK) and not layout.is_locked(d):  # a campaign is writing
        _save(con, d)
    _lock_down(con, d)
    return Store(d, con, scan, params)


# The share of the memory this process may use (limits.available_memory_bytes) a query may
# take: DuckDB's own default is 80 % of the machine's RAM, whatever else runs on it.
QUERY_MEMORY_SHARE = 0.5
QUERY_MEMORY_FLOOR = 256 << 20  # below this DuckDB cannot do much of anything


def limit_memory(con: Any) -> int | None:
    """Cap DuckDB's memory (`memory_limit`) at QUERY_MEMORY_SHARE of what this process may
    still use, so a cross join fails with "out of memory" instead of taking the machine.
    Call before `lock_configuration`. Returns the limit in bytes (None: nothing known)."""
    from satcc.limits import available_memory_bytes

    free = available_memory_bytes()
    if free is None:
        return None
    limit = max(int(free * QUERY_MEMORY_SHARE), QUERY_MEMORY_FLOOR)
    con.execute(f"SET memory_limit = '{limit // (1 << 20)}MiB'")
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar, printed to stdout
    return limit


def run_query(con: Any, sql: str, params: list[Any] | None, timeout_s: float | None):
    """`con.execute(sql).df()` with the ways a query ends made plain: Ctrl-C is
    KeyboardInterrupt (exit 130, "interrupted") and SIGTERM `Terminated` (exit 143) as soon as
    they arrive, `timeout_s` passed is one line (exit 1), DuckDB running out of its
    `memory_limit` is one line (exit 1).

    DuckDB runs the query in C while the main thread waits in it, so a Python signal handler
    would run only once the query returned. Python's own C-level handler writes each signal's
    number to a wakeup fd whichever thread receives it (`signal.set_wakeup_fd`); a watcher
    thread reads it and interrupts DuckDB (`con.interrupt()`, which is made to be called from
    another thread, as the timeout does). Signals without a Python handler are not seen."""
    import signal
    import socket
    import threading

    from satcc.errors import Terminated

    duckdb = _duckdb()
    timer = None
    timed_out = threading.Event()
    caught: list[int] = []
    if timeout_s is not None:

        def stop() -> None:
            timed_out.set()
            con.interrupt()

        timer = threading.Timer(timeout_s, stop)
        timer.daemon = True
        timer.start()
    watcher = None
    wake_r = wake_w = None
    old_fd = -1
    if threading.current_thread() is threading.main_thread():
        wake_r, wake_w = socket.socketpair()
        wake_w.setblocking(False)
        old_fd = signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)

        def watch() -> None:
            while True:
                data = wake_r.recv(64)
                if not data or 0 in data:  # closed, or the query ended on its own
                    return
                for sig in data:
                    if sig in (signal.SIGINT, signal.SIGTERM):
                        caught.append(sig)
                        con.interrupt()
                        return

        watcher = threading.Thread(target=watch, name="query-signals", daemon=True)
        watcher.start()
    try:
        out = con.execute(sql, params or []).df()
        if caught:  # the signal came as the query ended: it still ends the command
            raise KeyboardInterrupt if caught[0] == signal.SIGINT else Terminated(caught[0])
        return out
    except (duckdb.InterruptException, RuntimeError) as e:
        if timed_out.is_set():
            raise SatccError(
                f"query: stopped after --timeout {timeout_s:g} s (the query did not finish)"
            ) from None
        if not caught and watcher is not None:
            # DuckDB also runs Python's own handlers while it works: SIGTERM's (`Terminated`)
            # can stop the query before the watcher has read the signal's byte, which is
            # already on the wakeup fd (written by the C-level handler first): let it read it,
            # or a SIGTERM would end as Ctrl-C's 130.
            watcher.join(timeout=1.0)
        if caught and caught[0] == signal.SIGTERM:
            raise Terminated(signal.SIGTERM) from None
        if caught or isinstance(e, duckdb.InterruptException) or "interrupted" in str(e).lower():
            raise KeyboardInterrupt from None
        raise
    except duckdb.OutOfMemoryException as e:
        raise SatccError(
            f"query: out of memory (DuckDB's memory_limit, half of what this process may use): "
            f"{_first_line(str(e))}"
        ) from None
    except duckdb.Error as e:
        raise StoreError(f"query failed: {_first_line(str(e))}") from None
    finally:
        if timer is not None:
            timer.cancel()
        if watcher is not None and wake_r is not None and wake_w is not None:
            signal.set_wakeup_fd(old_fd)
            try:
                wake_w.send(b"\0")
            except OSError:
                pass
            watcher.join(timeout=5)
            wake_r.close()
            wake_w.close()


def _lock_down(con: Any, d: Path) -> None:
    """After the views are built: no file outside DIR/runs/ may be read, none written, no
    database attached, and no setting changed again (docs/reliability.md, "Store")."""
    runs = str((d / layout.RUNS_DIR).resolve()) + os.sep
    limit_memory(con)
    con.execute(f"SET allowed_directories = [{_sql_string(runs)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"


def _read_only_statements() -> frozenset:
    return frozenset({_duckdb().StatementType.SELECT})  # not EXPLAIN: EXPLAIN ANALYZE runs it


def _check_saved_version(d: Path) -> None:
    path = d / layout.CATALOG_FILE
    if not path.is_file():
        return
    duckdb = _duckdb()
    try:
        con = duckdb.connect(str(path), read_only=True)
        try:
            row = con.execute(
                "SELECT value FROM catalog_info WHERE key = 'store_schema_version'"
            ).fetchone()
        finally:
            con.close()
    except duckdb.Error:
        return  # unreadable or locked: it is rebuilt
    if row is not None and int(row[0]) > STORE_SCHEMA_VERSION:
        raise StoreError(
            f"{path}: store schema version {row[0]} is newer than this satcc's "
            f"({STORE_SCHEMA_VERSION}); upgrade satcc to read it"
        )


def _save(con: Any, d: Path) -> None:
    """Copy the catalog just built in `con` (tables and views; the views read the Parquet
    files by their absolute paths) into DIR/catalog.duckdb: written aside, renamed in. A copy,
    not a second build: building reads every Parquet file's footer again."""
    duckdb = _duckdb()
    fd, tmp = tempfile.mkstemp(prefix=f".{layout.CATALOG_FILE}.tmp-", dir=d)
    os.close(fd)
    os.unlink(tmp)  # duckdb creates the file itself
    attached = False
    try:
        con.execute(f"ATTACH {_sql_string(tmp)} AS _saved")
        attached = True
        con.execute("COPY FROM DATABASE memory TO _saved")
        con.execute("DETACH _saved")
        attached = False
        os.replace(tmp, d / layout.CATALOG_FILE)
    except (OSError, duckdb.Error):
        pass  # the saved copy is a convenience; the in-memory catalog is what we use
    finally:
        if attached:
            try:
                con.execute("DETACH _saved")
            except duckdb.Error:
                pass
        for leftover in (tmp, tmp + ".wal"):
            Path(leftover).unlink(missing_ok=True)


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _runs_frame(scan: layout.Scan, param_columns: list[str]) -> pd.DataFrame:
    rows = []
    for r in scan.planned:
        rid = r["run_id"]
        status = "done" if rid in scan.done else ("failed" if rid in scan.failed else "pending")
        row: dict[str, Any] = {c: None for c in RUN_COLUMNS}
        row.update(
            run_id=rid,
            status=status,
            error=scan.failed.get(rid),
            engine=r["engine"],
            seed=r.get("seed"),
            repetition=r.get("repetition"),
            point=r.get("point"),
        )
        if status == "done":
            summary = scan.summaries.get(rid)
            if summary is None:  # a Scan built by hand: read the file
                path = scan.directory / layout.RUNS_DIR / rid / results.SUMMARY_FILE
                try:
                    summary = json_loads(path.read_text(encoding="utf-8"), str(path))
                except ValueError as e:  # nested too deep, not JSON, not UTF-8
                    raise UserError(f"{path}: expected a run summary, found {e}") from None
            for key in RUN_SUMMARY_KEYS:
                row[key] = summary.get(key)
        params = r.get("params") or {}
        for c in param_columns:
            row[c] = params.get(c)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS + param_columns)
    for c in ("seed", "repetition", "point"):
        frame[c] = frame[c].astype("Int64")
    for c in ("duration_s", "bin_s", "jain_index"):
        frame[c] = frame[c].astype("float64")
    for c in param_columns:
        frame[c] = _typed(frame[c])
    return frame


def _typed(col: pd.Series) -> pd.Series:
    values = [v for v in col if v is not None and not (isinstance(v, float) and pd.isna(v))]
    if values and all(isinstance(v, bool) for v in values):
        return col.astype("boolean")
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return col.astype("Int64")
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return col.astype("float64")
    return col.map(lambda v: None if v is None else str(v)).astype("string")


def _analyze_flows_table(con: Any, d: Path, scan: layout.Scan) -> bool:
    """When the plan has analyze runs: table `_analyze_flows` (run_id + each done analyze
    run's analyze_flows.parquet; a run written before that file existed has none) for the
    `flows` view to join, so its columns are those of a result directory's (`satcc query`).
    False (no table, `flows` unchanged) for campaigns without analyze runs."""
    if not any(r.get("engine") == "analyze" for r in scan.planned):
        return False
    files = _done_files(d, scan, ANALYZE_FLOWS_FILE)
    empty = ANALYZE_FLOWS_SCHEMA.arrow().empty_table()
    con.register("_empty", empty)
    con.execute("CREATE TABLE _analyze_flows AS SELECT '' AS run_id, * FROM _empty WHERE false")
    con.unregister("_empty")
    if files:
        listing = ", ".join(_sql_string(p) for _, p in files)
        con.execute("CREATE TABLE _analyze_files (run_id VARCHAR, path VARCHAR)")
        _insert_files(con, "_analyze_files", files)
        cols = ", ".join(f"a.{_ident(c)}" for c in ANALYZE_FLOWS_SCHEMA.names)
        con.execute(
            f"INSERT INTO _analyze_flows SELECT m.run_id, {cols} FROM read_parquet([{listing}], "
            "filename = true, union_by_name = true) AS a "
            "JOIN _analyze_files AS m ON a.filename = m.path"
        )
    return True


def _insert_files(con: Any, table: str, files: list[tuple[str, str]]) -> None:
    """INSERT the (run id, path) rows into `table` in one statement: `executemany` runs the
    prepared INSERT once a row (~0.2 ms a row: 0.43 CPU s over the quick designs' 12 stores)."""
    values = ", ".join(f"({_sql_string(rid)}, {_sql_string(path)})" for rid, path in files)
    con.execute(f"INSERT INTO {table} VALUES {values}")


def _done_files(d: Path, scan: layout.Scan, filename: str) -> list[tuple[str, str]]:
    """(run id, the file's resolved path) of each done run holding `filename`, in run id order:
    `str((d / "runs" / rid / filename).resolve())`, with the runs directory resolved once (a
    resolve of every file stats each component of its path) and a run directory or file that
    is a symbolic link resolved on its own."""
    runs = os.path.join(d, layout.RUNS_DIR)
    real = None
    files = []
    for rid in sorted(scan.done):
        path = os.path.join(runs, rid, filename)
        if not layout.is_regular_file(path):
            continue
        if os.path.islink(os.path.join(runs, rid)) or os.path.islink(path):
            files.append((rid, str(Path(path).resolve())))
            continue
        if real is None:
            real = str(Path(runs).resolve())
        files.append((rid, os.path.join(real, rid, filename)))
    return files


def _build(con: Any, d: Path, scan: layout.Scan) -> list[str]:
    param_columns = [c for c in scan.index.get("columns", []) if c not in RUN_COLUMNS]
    runs = _runs_frame(scan, param_columns)
    con.register("_runs_df", runs)
    con.execute("CREATE TABLE runs AS SELECT * FROM _runs_df")
    con.unregister("_runs_df")
    info = pd.DataFrame(
        {
            "key": [
                "store_schema_version",
                "results_schema_version",
                "satcc_version",
                "campaign",
                "directory",
            ],
            "value": [
                str(STORE_SCHEMA_VERSION),
                str(results.SCHEMA_VERSION),
                _native.version(),
                str(scan.index.get("name")),
                str(d),
            ],
        }
    )
    con.register("_info_df", info)
    con.execute("CREATE TABLE catalog_info AS SELECT * FROM _info_df")
    con.unregister("_info_df")
    problems = pd.DataFrame(
        [{"path": p.path, "kind": p.kind, "message": p.message} for p in scan.problems],
        columns=["path", "kind", "message"],
        dtype="string",
    )
    con.register("_problems_df", problems)
    con.execute("CREATE TABLE problems AS SELECT * FROM _problems_df")
    con.unregister("_problems_df")

    analyze = _analyze_flows_table(con, d, scan)
    for view, (filename, schema) in DATA_VIEWS.items():
        files = _done_files(d, scan, filename)
        data_columns = set(schema.names)
        if files:
            listing = ", ".join(_sql_string(p) for _, p in files)
            con.execute(f"CREATE TABLE _files_{view} (run_id VARCHAR, path VARCHAR)")
            _insert_files(con, f"_files_{view}", files)
            source = f"read_parquet([{listing}], filename = true, union_by_name = true)"
            probe = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
            data_columns = {r[0] for r in probe} - {"filename"}
            body = (
                f"FROM {source} AS f JOIN _files_{view} AS m ON f.filename = m.path "
                "JOIN runs AS r ON r.run_id = m.run_id"
            )
            data = "f.* EXCLUDE (filename)"
            if view == "flows" and analyze:
                body += " LEFT JOIN _analyze_flows AS a ON a.run_id = m.run_id AND a.flow_id = f.id"
        else:
            con.register("_empty", schema.arrow().empty_table())
            con.execute(f"CREATE TABLE _empty_{view} AS SELECT * FROM _empty")
            con.unregister("_empty")
            body = f"FROM _empty_{view} AS f, runs AS r WHERE false"
            data = "f.*"
            if view == "flows" and analyze:
                body = f"FROM _empty_{view} AS f, runs AS r, _analyze_flows AS a WHERE false"
        if view == "flows" and analyze:
            extra = [c for c in ANALYZE_FLOWS_SCHEMA.names[1:] if c not in data_columns]
            data += "".join(f", a.{_ident(c)}" for c in extra)
            data_columns |= set(extra)
        run_cols = [f"r.{_ident(c)}" for c in JOIN_COLUMNS]
        for c in param_columns:
            alias = f"param_{c}" if c in data_columns else c
            run_cols.append(f"r.{_ident(c)} AS {_ident(alias)}")
        con.execute(f"CREATE VIEW {view} AS SELECT {', '.join(run_cols)}, {data} {body}")
    return param_columns
