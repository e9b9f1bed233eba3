"""Running the suite: every scenario of the grid through the simulator and the real kernel.

    grid.toml ──select (--quick, --only)──► plan: scenario x engine x seed ──► campaign.json
        sim runs (one per seed)  ─┐
        emu runs (one per seed,  ─┼──► runs/<id>/ (satcc.store.layout.write_run: the same run
          one at a time, root)   ─┘    directories as `satcc campaign`; emu/ keeps the raw files)
    store (satcc.store, every hash checked) ──► metrics.evaluate ──► fidelity.json,
                                                                    fidelity.txt, fidelity.png

The result directory is a campaign directory: `satcc query DIR "SQL"`, `satcc campaign status
DIR` and `satcc report DIR` (which draws the fidelity figure and table) read it. Runs already
in DIR are kept and skipped (an interrupted suite resumes), so the simulator side can run
without root first and the kernel side later into the same directory.

Seeds: run k of a scenario (k = 0..runs-1) uses seed = the scenario's seed + k in both engines,
so each kernel run has a simulator twin on the same channel (random loss and link-model draws
are the same in satcc-linkd); the simulator's spread comes from those seeds.

Start instants (paired runs): a kernel sender connects when its process wakes, so its SYN
leaves a fraction of a millisecond after the flow's `start`, and two flows "starting at 0"
never start together; in the simulator they do, to the nanosecond, and which of two CUBIC/Reno
flows leaves slow start first (HyStart's round order) follows from that order
(docs/fidelity.md). When both engines run, each scenario's kernel runs come first and
simulator run k starts every flow at the instant kernel run k's first SYN reached satcc-linkd
(summary `stats.first_syn_ns`, satcc.emu.runner.first_on_wire), a bulk flow one base RTT before
its first data segment did (`stats.first_data_ns`; `twin_starts`): the simulator twin's run id
names its kernel run (`starts_from`), its run.json holds the scenario as run (each flow's
`start`, `count` copies written out), and a twin whose kernel run failed fails too. A flow the
kernel side did not see (UDP, through a VPN) keeps its own `start`. `--engine sim` alone (or
`paired = False`) runs the scenarios' own starts.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from satcc import _native, registry, results
from satcc.campaign.spec import run_id
from satcc.errors import UserError
from satcc.fidelity import metrics
from satcc.fidelity.grid import Entry, Grid
from satcc.scenario import from_dict, resolve, scenario_hash
from satcc.store import layout, runloop
from satcc.units import parse_duration

ENGINES = (metrics.SIM, metrics.KERNEL)
JSON_FILE = "fidelity.json"
TEXT_FILE = "fidelity.txt"
FIGURE_DPI = 150  # as the HTML report's figures (satcc.report.build.PNG_DPI)
FIGURE_FILE = "fidelity.png"
PARAM = "fidelity_scenario"
FIDELITY_SCHEMA_VERSION = 1
# A kernel run counts only if satcc-linkd kept time: its p99 lateness (how late it released
# packets against its schedule, the run's summary `stats.linkd_lateness_p99_us`) at most this
# (--max-lateness). 1 ms is 4 packet times at the grid's 50 Mbit/s rows and 1/40 of their base
# RTT; a loaded 2-core VM ranged 0.2-7 ms. A run above it is refused and rerun, at most
# LATENESS_ATTEMPTS times in all, then recorded as failed with the figures.
DEFAULT_MAX_LATENESS_P99_US = 1000.0
LATENESS_ATTEMPTS = 3


@dataclass(frozen=True)
class Planned:
    """One run of the suite."""

    entry: Entry
    engine: str
    seed: int
    repetition: int
    point: int
    doc: dict[str, Any]  # the scenario TOML document as run (a paired twin: before its starts)
    run_id: str
    twin: str | None = None  # a paired simulator run: the kernel run whose starts it takes

    def index_doc(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "engine": self.engine,
            "seed": self.seed,
            "repetition": self.repetition,
            "point": self.point,
            "params": {PARAM: self.entry.name},
        }


@dataclass
class Options:
    quick: bool = False
    only: str | None = None
    runs: int | None = None  # default: the grid's
    engines: tuple[str, ...] = ENGINES
    duration: str | None = None  # overrides every scenario's (and quick_duration)
    capture: bool = False
    max_lateness_p99_us: float = DEFAULT_MAX_LATENESS_P99_US  # kernel runs above: rerun
    paired: bool = True  # with both engines: simulator run k starts flows as kernel run k did
    lateness_attempts: int = LATENESS_ATTEMPTS


@dataclass
class SuiteRun:
    out_dir: Path
    name: str
    plan: list[Planned]
    outcomes: list[runloop.Report] = field(default_factory=list)
    wall_s: float = 0.0


def suite_name(grid: Grid, opts: Options) -> str:
    return f"{grid.name}-quick" if opts.quick else grid.name


def plan(grid: Grid, opts: Options) -> list[Planned]:
    """Every run, in order: per scenario, the simulator's seeds, then the kernel's."""
    entries = grid.select(opts.quick, opts.only)
    runs = opts.runs if opts.runs is not None else grid.runs
    if runs < 1:
        raise UserError(f"--runs: expected an integer >= 1, found {runs}")
    duration = opts.duration or (grid.quick_duration if opts.quick else None)
    paired = opts.paired and metrics.SIM in opts.engines and metrics.KERNEL in opts.engines
    # paired: the kernel's runs first, their simulator twins after
    engines = (metrics.KERNEL, metrics.SIM) if paired else opts.engines
    out = []
    for point, e in enumerate(entries):
        doc = e.scenario_doc(duration)
        s = e.scenario(duration)
        config = resolve(s)
        h = scenario_hash(config)
        base_seed = config["seed"]
        kernel_ids: dict[int, str] = {}
        for engine in engines:
            # min_runs is the judged grid's; --quick (a short check) runs what --runs says
            for k in range(runs if opts.quick else max(runs, e.min_runs)):
                seed = base_seed + k
                ident = {"engine": engine, "scenario_hash": h, "seed": seed}
                if registry.get(engine).kernel_tcp and e.vpn:
                    ident["vpn"] = e.vpn
                twin = kernel_ids.get(k) if paired and engine == metrics.SIM else None
                if twin is not None:
                    ident["starts_from"] = twin
                rid = run_id(ident)
                if engine == metrics.KERNEL:
                    kernel_ids[k] = rid
                out.append(Planned(e, engine, seed, k, point, doc, rid, twin))
    return out


def kernel_starts(out_dir: Path, twin: str) -> tuple[list[int | None], list[int | None]]:
    """When each flow's first SYN and first data segment reached satcc-linkd in kernel run
    `twin` of `out_dir` (ns from t0, by flow id; None: not seen). UserError when that run has
    no SYN record (a run without data instants gives Nones)."""
    path = out_dir / layout.RUNS_DIR / twin / results.SUMMARY_FILE
    if not path.is_file():
        raise UserError(
            f"{path}: expected the result of kernel run {twin} (this simulator run starts its "
            "flows when that run's SYNs left), found none: the kernel run failed or did not run"
        )
    stats = json.loads(path.read_text(encoding="utf-8")).get("stats") or {}
    syn = stats.get("first_syn_ns")
    if not isinstance(syn, list):
        raise UserError(
            f"{path}: stats.first_syn_ns: expected each flow's first SYN instant (a kernel run "
            "of this satcc version), found none"
        )
    data = stats.get("first_data_ns")
    return syn, data if isinstance(data, list) else [None] * len(syn)


def twin_starts(
    config: dict[str, Any], syn: list[int | None], data: list[int | None]
) -> list[int | None]:
    """The simulator twin's start per flow id, from its kernel run's instants: a bulk flow
    (no `app`) starts one base RTT of its path before the kernel's first data segment, so
    that its handshake ends and its data leaves when the kernel's did (the kernel's sender
    writes some 0.7-1 ms after its handshake, and the second of two flows up to 0.3 ms
    later than its SYN order says: docs/fidelity.md); a flow with an `app`, or without a data
    instant, starts at its SYN."""
    delay = config["routes"]["base_delay_ns"]
    out: list[int | None] = []
    for i, at in enumerate(syn):
        f = config["flows"][i] if i < len(config["flows"]) else None
        d = data[i] if i < len(data) else None
        if f is None or at is None or d is None or f.get("app") is not None:
            out.append(at)
            continue
        rtt = delay[f["src"]][f["dst"]] + delay[f["dst"]][f["src"]]
        out.append(max(int(at), int(d) - rtt))
    return out


def with_starts(doc: dict[str, Any], starts: list[int | None]) -> dict[str, Any]:
    """The scenario document with flow id i starting at starts[i] ns (None: its own start):
    `count` copies become one [[flow]] table each, under the names they had (`name.k`)."""
    out = _copy(doc)
    tables = []
    fid = 0
    for i, t in enumerate(doc.get("flow", [])):
        n = t.get("count", 1)
        base = t.get("name", f"flow{i}")
        for k in range(n):
            c = {x: v for x, v in t.items() if x not in ("count", "stagger")}
            c["name"] = base if n == 1 else f"{base}.{k}"
            at = starts[fid] if fid < len(starts) else None
            if at is not None:
                c["start"] = f"{int(at)} ns"
            elif k and "stagger" in t:  # the copy's own start, as `count` spelled it
                own = parse_duration(t.get("start", "0 s")) + k * parse_duration(t["stagger"])
                c["start"] = f"{own} ns"
            tables.append(c)
            fid += 1
    out["flow"] = tables
    return out


def index_doc(grid: Grid, opts: Options, planned: list[Planned]) -> dict[str, Any]:
    """campaign.json of the suite: a campaign index (satcc.campaign.execute.plan_doc's shape)
    plus a `fidelity` section (how it was run and the targets)."""
    names = list(dict.fromkeys(p.entry.name for p in planned))
    return {
        "index_schema_version": layout.INDEX_SCHEMA_VERSION,
        "satcc_version": _native.version(),
        "name": suite_name(grid, opts),
        "description": grid.description,
        "source": str(grid.path),
        "scenario": None,
        "seeds": sorted({p.seed for p in planned}),
        "axes": [{"name": PARAM, "role": "other", "keys": [], "values": names}],
        "columns": [PARAM],
        "runs": [p.index_doc() for p in planned],
        "fidelity": {
            "schema_version": FIDELITY_SCHEMA_VERSION,
            "grid": str(grid.path),
            "quick": opts.quick,
            "only": opts.only,
            "runs": opts.runs if opts.runs is not None else grid.runs,
            "engines": list(opts.engines),
            "duration": opts.duration or (grid.quick_duration if opts.quick else None),
            "scenarios": [
                {
                    "name": n,
                    "file": str(next(p.entry.path for p in planned if p.entry.name == n)),
                    "vpn": next(p.entry.vpn for p in planned if p.entry.name == n),
                }
                for n in names
            ],
            "targets": metrics.TARGETS.doc(),
            "max_lateness_p99_us": opts.max_lateness_p99_us,
            "lateness_attempts": opts.lateness_attempts,
        },
    }


def _lateness(us: float) -> str:
    """A lateness as the messages print it: ms from 0.1 ms up, else µs."""
    return f"{us / 1000:.2f} ms" if us >= 100 else f"{us:.0f} µs"


def lateness_bound_us(opts: Options, entry: Entry) -> float:
    """The p99 lateness (µs) above which a kernel run of `entry` is not counted: the suite's
    (--max-lateness) or the row's own (`max_lateness` in the grid), whichever is tighter."""
    own = entry.max_lateness_p99_us
    return opts.max_lateness_p99_us if own is None else min(own, opts.max_lateness_p99_us)


def linkd_p99_us(result: Any) -> float | None:
    """satcc-linkd's p99 lateness (µs) recorded in a kernel run's summary (None: not recorded,
    as in a simulator run)."""
    v = (result.meta.get("stats") or {}).get("linkd_lateness_p99_us")
    return float(v) if isinstance(v, (int, float)) else None


def _execute(p: Planned, raw: Path, capture: bool, out_dir: Path) -> runloop.Outcome:
    doc = p.doc
    extra: dict[str, Any] = {}
    if p.twin is not None:
        syn, data = kernel_starts(out_dir, p.twin)
        config = resolve(
            from_dict(_copy(p.doc), source=str(p.entry.path), default_name=p.entry.path.stem)
        )
        starts = twin_starts(config, syn, data)
        doc = with_starts(p.doc, starts)
        extra = {
            "scenario": doc,
            "starts_from": {
                "run_id": p.twin,
                "first_syn_ns": syn,
                "first_data_ns": data,
                "start_ns": starts,
            },
        }
    s = from_dict(_copy(doc), source=str(p.entry.path), default_name=p.entry.path.stem)
    opts = registry.RunOptions(seed=p.seed, raw_dir=raw, capture=capture, vpn_server=p.entry.vpn)
    o = runloop.Outcome(p.run_id, True, registry.run(p.engine, s, opts))
    o.doc.update(extra)
    return o


def _copy(doc: Any) -> Any:
    import copy

    return copy.deepcopy(doc)


def run_suite(
    grid: Grid,
    opts: Options,
    out_dir: Path,
    log: TextIO | None = None,
    on_done: Callable[[runloop.Report], None] | None = None,
) -> SuiteRun:
    """Plan, run what is not done yet, and return what happened (results stay in out_dir)."""
    log = log if log is not None else sys.stderr
    started = time.monotonic()  # wall time for the log only; never written to a result
    planned = plan(grid, opts)
    doc = index_doc(grid, opts, planned)
    for name in opts.engines:
        registry.get(name).check_host()
    number = {p.run_id: i for i, p in enumerate(planned, 1)}

    def label(p: Planned) -> str:
        return f"[{number[p.run_id]}/{len(planned)}] {p.entry.name} {p.engine} seed {p.seed}"

    with runloop.writing(
        out_dir,
        doc,
        "suite",
        lambda old: old.get("name") == doc["name"] and "fidelity" in old,
    ) as store:

        def attempt(p: Planned) -> runloop.Outcome:  # a failed run does not stop the suite
            return store.attempt(
                p.run_id,
                lambda raw: _execute(p, raw, opts.capture, out_dir),
            )

        def execute(todo: list[Planned]) -> Generator[runloop.Outcome, None, None]:
            for p in todo:  # one at a time: a kernel run has the host to itself
                bound = lateness_bound_us(opts, p.entry)
                refused: list[float] = []
                while True:
                    o = attempt(p)
                    p99 = linkd_p99_us(o.result) if o.ok else None
                    if p99 is None or p99 <= bound:
                        if refused:
                            o.doc["lateness_refused_p99_us"] = refused
                        break
                    refused.append(p99)
                    if o.raw_dir is not None:
                        shutil.rmtree(o.raw_dir, ignore_errors=True)
                    again = len(refused) < opts.lateness_attempts
                    print(
                        f"{label(p)}: satcc-linkd's p99 lateness {_lateness(p99)} is above "
                        f"the bound {_lateness(bound)}: not counted"
                        + (
                            f", rerunning (attempt {len(refused) + 1} of {opts.lateness_attempts})"
                            if again
                            else ""
                        ),
                        file=log,
                        flush=True,
                    )
                    if not again:
                        figures = ", ".join(_lateness(x) for x in refused)
                        o = runloop.Outcome(
                            p.run_id,
                            False,
                            error=(
                                f"satcc-linkd's p99 lateness was above the bound "
                                f"{_lateness(bound)} in all {len(refused)} attempts "
                                f"({figures}): the host was too busy for a kernel run"
                            ),
                            wall_s=o.wall_s,
                        )
                        break
                yield o

        def skipped(p: Planned) -> None:
            print(f"{label(p)}: already in {out_dir}", file=log, flush=True)

        def reported(p: Planned, r: runloop.Report, _o: runloop.Outcome) -> None:
            tail = (
                f"{r.wall_s:.1f} s"
                if r.status == "done"
                else f"FAILED: {(r.error or '?').splitlines()[0]}"
            )
            print(f"{label(p)}: {tail}", file=log, flush=True)
            if on_done is not None:
                on_done(r)

        loop = runloop.Loop[Planned](
            run_id=lambda p: p.run_id,
            spec_doc=lambda p: p.index_doc(),
            run_doc=lambda p: {"scenario": p.doc, "campaign": doc["name"]},
        )
        reports = loop.run(store, planned, execute, on_skip=skipped, on_report=reported)
    run = SuiteRun(out_dir, doc["name"], planned, reports)
    run.wall_s = time.monotonic() - started
    return run


# -- evaluation ------------------------------------------------------------------------------


def load_frames(store: Any) -> tuple:
    """flows and flow_series of the store's done runs (the columns metrics.evaluate reads)."""
    flows = store.query(
        "SELECT f.run_id, f.scenario, f.engine, f.seed, f.id, f.name, f.start_s, "
        "f.delivered_bytes, f.goodput_bps, f.sent_packets, f.retransmitted_packets, "
        f"f.{PARAM}, r.duration_s, r.bin_s FROM flows AS f JOIN runs AS r ON f.run_id = r.run_id "
        "ORDER BY f.point, f.engine, f.seed, f.run_id, f.id"
    )
    series = store.query(
        "SELECT run_id, flow_id, t_s, cwnd_pkts, srtt_ms FROM flow_series "
        "ORDER BY run_id, flow_id, t_s"
    )
    return flows, series


def evaluate_store(store: Any) -> dict[str, Any]:
    """The fidelity document of a suite directory's store (also what `satcc report` draws)."""
    fid = store.index.get("fidelity") or {}
    order = [s["name"] for s in fid.get("scenarios", [])]
    flows, series = load_frames(store)
    ev = metrics.evaluate(flows, series, metrics.Targets(**fid.get("targets", {})), order)
    runs = store.runs()
    counts = []
    for name in order:
        mine = runs[runs[PARAM] == name]
        entry = {"scenario": name}
        for engine in ENGINES:
            e = mine[mine["engine"] == engine]
            entry[engine] = {
                status: int((e["status"] == status).sum())
                for status in ("done", "failed", "pending")
            }
        counts.append(entry)
    per_run = (
        ev["per_run"].merge(runs[["run_id", "repetition"]], on="run_id", how="left")
        if len(ev["per_run"])
        else None
    )
    return {
        "schema_version": FIDELITY_SCHEMA_VERSION,
        "satcc_version": _native.version(),
        "name": store.index.get("name"),
        "fidelity": fid,
        "runs": counts,
        "rows": ev["rows"],
        "tally": ev["tally"],
        "per_run": []
        if per_run is None
        else json.loads(per_run.to_json(orient="records", double_precision=15)),
    }


def write_outputs(out_dir: Path, doc: dict[str, Any], text: str) -> list[Path]:
    """fidelity.json, fidelity.txt and fidelity.png beside the runs (atomic writes)."""
    from satcc.fidelity import figure

    layout.atomic_write_text(out_dir / JSON_FILE, layout.dumps(doc))
    layout.atomic_write_text(out_dir / TEXT_FILE, text)
    paths = [out_dir / JSON_FILE, out_dir / TEXT_FILE]
    drawn = figure.draw(doc)
    if drawn is not None:
        from satcc.plot import save_figure

        paths.append(save_figure(drawn, out_dir / FIGURE_FILE, "png", FIGURE_DPI))
    return paths
