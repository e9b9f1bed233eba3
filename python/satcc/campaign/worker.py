"""One campaign run, executed where a worker is: a local pool process, a Dask worker, or the
campaign process itself (emu runs). Returns an `Outcome`; never raises for a run that fails
(the error travels back as text, so one bad run cannot stop the campaign).

    RunSpec ──► registry (sim | model | emu) or analyze ──► Outcome(result, extras)
            ──► writer

`execute` is a module-level function so that pool and Dask workers import it by name: they
need the same satcc installed (docs/campaigns.md "Running on a Dask cluster").

Extras (Parquet tables beside the result, analyze runs only) have the schemas of
satcc.store.schema (PINGS_SCHEMA, SEQACK_SCHEMA, ANALYZE_FLOWS_SCHEMA), which the store owns.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path
from typing import Any

from satcc.campaign.spec import ANALYZE, RunSpec
from satcc.results import file_sha256
from satcc.store.runloop import Outcome
from satcc.store.schema import (
    ANALYZE_FLOWS_FILE,
    ANALYZE_FLOWS_SCHEMA,
    PINGS_FILE,
    PINGS_SCHEMA,
    SEQACK_FILE,
    SEQACK_SCHEMA,
)
from satcc.tables import Table

SEQACK_MAX_CAPTURE_BYTES = 512 * 1024 * 1024  # beyond this, no per-packet table (memory)
TRACEBACK_LINES = 6


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def init_pool_worker() -> None:
    """A local pool worker's start: it gets SIGKILL when the campaign process dies, however it
    dies (kill -9 included), so no worker outlives it simulating for nobody. SIGTERM and
    SIGHUP keep their default action in the worker (the CLI's handlers are not inherited
    across spawn): the campaign process stops its workers itself on Ctrl-C and SIGTERM."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def execute(spec: RunSpec, out_dir: str | None = None) -> Outcome:
    """Run one spec; `out_dir` is where an emu run leaves its raw files."""
    # wall and CPU time for the summary and `--timings` only; never written to a result
    started, cpu = time.monotonic(), time.process_time()
    try:
        result, extras = _run(spec, out_dir)
        o = Outcome(spec.run_id, True, result, extras)
    except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the campaign
        o = Outcome(spec.run_id, False, error=_describe(e))
    o.wall_s, o.cpu_s, o.pid = time.monotonic() - started, time.process_time() - cpu, os.getpid()
    return o


def _describe(e: BaseException) -> str:
    from satcc.errors import SatccError

    if isinstance(e, SatccError):
        return str(e)
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    tail = "".join(tb[-TRACEBACK_LINES:]).rstrip()
    return f"{type(e).__name__}: {e}\n{tail}"


def _run(spec: RunSpec, out_dir: str | None) -> tuple[Any, dict[str, Table]]:
    if spec.engine == ANALYZE:
        return _analyze(spec)
    from satcc.scenario import from_dict

    s = from_dict(
        _copy(spec.scenario),
        source=spec.source,
        default_name=str(spec.scenario.get("scenario", {}).get("name", "scenario")),
    )
    from satcc import registry

    opts = registry.RunOptions(seed=spec.seed, raw_dir=out_dir)
    return registry.run(spec.engine, s, opts), {}


def _copy(doc: Any) -> Any:
    import copy

    return copy.deepcopy(doc)


def _analyze(spec: RunSpec) -> tuple[Any, dict[str, Table]]:
    import numpy as np

    from satcc.analyze.capture import CaptureAnalysis, read_capture, seq_ack_graph
    from satcc.analyze.inputs import detect_kind, load_input
    from satcc.analyze.ping import PingResult
    from satcc.analyze.result import build
    from satcc.errors import SatccError
    from satcc.units import parse_duration

    bin_s = parse_duration(spec.bin) / 1e9
    inputs = []
    for path_text, want in spec.inputs:
        path = Path(path_text)
        if not path.is_file():
            raise SatccError(
                f"{path}: no such file on this worker (analyze inputs must be "
                "visible to the worker at the same path)"
            )
        if file_sha256(path) != want:
            raise SatccError(
                f"{path}: the file changed since the campaign was planned "
                "(sha256 differs); rerun `satcc campaign` to plan it anew"
            )
        if detect_kind(path) == "capture" and path.stat().st_size <= SEQACK_MAX_CAPTURE_BYTES:
            cap = read_capture(path, bin_s=bin_s, packets=True)
            if cap.stats["frames"] == 0:
                raise SatccError(f"{path}: no packets could be read")
            inputs.append(cap)
        else:
            inputs.append(load_input(path, bin_s))
    built = build(inputs)
    pings: dict[str, list[Any]] = {n: [] for n in PINGS_SCHEMA.names}
    seqack: dict[str, list[Any]] = {n: [] for n in SEQACK_SCHEMA.names}
    for flow in built.flows:
        src = next((i for i in inputs if i.path == flow["file"]), None)
        if isinstance(src, PingResult):
            smp = src.samples
            epoch = smp["t_epoch"].to_numpy(dtype=float)
            rtt = smp["rtt_ms"].to_numpy(dtype=float)
            t = smp["t_s"].to_numpy(dtype=float)
            pings["flow_id"].extend([flow["id"]] * len(smp))
            pings["seq"].extend(int(x) for x in smp["seq"])
            pings["t_s"].extend(None if np.isnan(x) else float(x) for x in t)
            pings["t_epoch_s"].extend(None if np.isnan(x) else float(x) for x in epoch)
            pings["rtt_ms"].extend(None if np.isnan(x) else float(x) for x in rtt)
    for cap in inputs:
        if not isinstance(cap, CaptureAnalysis) or cap.packets is None:
            continue
        mine = [f for f in built.flows if f["file"] == cap.path and f.get("proto") == "tcp"]
        if not mine:
            continue
        biggest = max(mine, key=lambda f: f.get("payload_bytes") or 0)
        local = cap.flows[
            (cap.flows["src"] == biggest["src"])
            & (cap.flows["dst"] == biggest["dst"])
            & (cap.flows["sport"] == biggest["sport"])
            & (cap.flows["dport"] == biggest["dport"])
        ]
        if local.empty:
            continue
        g = seq_ack_graph(cap, int(local["id"].iloc[0]))
        seqack["flow_id"].extend([biggest["id"]] * len(g))
        seqack["kind"].extend(g["kind"].tolist())
        seqack["t_s"].extend(float(x) for x in g["t_s"])
        for col in ("seq_rel", "end_rel", "ack_rel"):
            vals = g[col] if col in g else [None] * len(g)
            seqack[col].extend(
                None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v)
                for v in vals
            )
        rt = g["retransmission"] if "retransmission" in g else [None] * len(g)
        seqack["retransmission"].extend(
            None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v) for v in rt
        )
    extras = {ANALYZE_FLOWS_FILE: _analyze_flows(built.flows)}
    if pings["flow_id"]:
        extras[PINGS_FILE] = Table.from_columns(PINGS_SCHEMA, pings, "pings")
    if seqack["flow_id"]:
        extras[SEQACK_FILE] = Table.from_columns(SEQACK_SCHEMA, seqack, "seqack")
    return built.result, extras


def _analyze_flows(flows: list[dict[str, Any]]) -> Table:
    """The per-flow keys `satcc analyze --json` adds beyond flows.parquet, one row per flow."""
    columns: dict[str, list[Any]] = {"flow_id": [f["id"] for f in flows]}
    for name in ANALYZE_FLOWS_SCHEMA.names[1:]:
        columns[name] = [f.get(name) for f in flows]
    return Table.from_columns(ANALYZE_FLOWS_SCHEMA, columns, "analyze_flows")
