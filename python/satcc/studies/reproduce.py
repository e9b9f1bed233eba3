"""`satcc reproduce STUDY`: run what a study ran, put satcc's numbers beside the paper's.

    data/study00X.toml (claims) ─────────────────────────────────┐
    study00X.run(ctx) ──► campaigns (OUT/00X/<engine>/<campaign>/) ├─► claims table (verdicts)
    study00X.measure(dirs) ──► Measured per claim id ────────────┘      │
    study00X.figures(dirs, OUT/00X/figures/<engine>/) ──────────────────┴─► OUT/00X/report.html
      (with `figures`: --figures)                                           OUT/00X/claims.json

A study module exposes `CAMPAIGNS`, `run(ctx) -> {name: dir}`, `measure(dirs) -> {claim id:
Measured}` and `figures(dirs, out) -> [Figure]`; study 002 runs `satcc validate hybla`'s design
instead of a campaign. Every satcc number is computed from the runs of this invocation (or the
resumed campaign directories): nothing measured is stored in code or data.
"""

from __future__ import annotations

import base64
import importlib
import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from satcc import _native, registry, timings
from satcc.store import layout
from satcc.studies import claims, common, designs
from satcc.studies.common import Context, Figure

STUDIES = ("000", "001", "002", "003", "004")
ENGINES = registry.names(packets=True)  # `--engine both`: the papers measure packets over time


def module(study: str) -> Any:
    return importlib.import_module(f"satcc.studies.study{study}")


@dataclass
class StudyResult:
    study: claims.StudyClaims
    rows: list[claims.Row]
    figures: dict[str, list[Figure]] = field(default_factory=dict)  # per engine
    dirs: dict[str, dict[str, Path]] = field(default_factory=dict)  # engine -> campaign -> dir
    out: Path = Path(".")
    quick: bool = False
    seeds: int | None = None
    sensitivity: dict[str, list[str]] = field(default_factory=dict)  # per engine: printed sweeps
    run: dict[str, Any] = field(default_factory=dict)  # when, how long, the machine's load
    drew_figures: bool = False  # asked for (`--figures`); report.html says how otherwise
    design: str = designs.AUTO  # `--design` (designs.DESIGNS)

    def engine_designs(self) -> dict[str, str]:
        """Each engine's design ("full", "quick" or "kernel": designs.design_name)."""
        return {e: designs.design_name(self.quick, e, self.design) for e in self.dirs}

    def design_text(self) -> str:
        """The design(s) and engine(s) as the header says them: "quick design, engine sim",
        "kernel design, engine sim" (the kernel column's twin), "quick design, engine sim;
        kernel design, engine emu" (`--quick --engine both`)."""
        per_engine = self.engine_designs()
        if len(set(per_engine.values())) > 1:
            return "; ".join(f"{d} design, engine {e}" for e, d in per_engine.items())
        name = next(iter(per_engine.values()), "quick" if self.quick else "full")
        many = "s" if len(per_engine) > 1 else ""
        return f"{name} design, engine{many} {', '.join(per_engine)}"

    def doc(self) -> dict[str, Any]:
        # the kernel design (the emulator's --quick, or --design kernel) says so per engine, so
        # that its twin on the simulator is never read as the quick design; the simulator's own
        # designs' documents are as they were
        kernel = designs.KERNEL in self.engine_designs().values()
        return {
            "study": self.study.id,
            "title": self.study.title,
            "paper": self.study.paper,
            "reference": self.study.reference,
            "satcc_version": _native.version(),
            "quick": self.quick,
            **({"designs": self.engine_designs()} if kernel else {}),
            "run": self.run,
            "seeds": self.seeds,
            "engines": sorted(self.dirs),
            "campaigns": {e: {k: str(v) for k, v in d.items()} for e, d in self.dirs.items()},
            "claims": [r.doc() for r in claims.ordered(self.rows)],
            "verdicts": claims.tally(self.rows),  # findings only
            "not_judged_in_design": sum(1 for r in self.rows if r.verdict == claims.NOT_JUDGED),
            "inputs": sum(1 for r in self.rows if r.claim.kind == "input"),
            "coverage": dict(
                zip(("judged", "main_results"), self.study.coverage(self.rows), strict=True)
            ),
            "not_judged": [n.model_dump() for n in self.study.not_judged],
            "anomalies": [a.model_dump() for a in self.study.anomalies],
            "path": [p.model_dump() for p in self.study.path],
            "kernel_cuts": [c.model_dump() for c in self.study.kernel_cuts],
            "no_kernel": self.study.no_kernel or None,
            "sensitivity": self.sensitivity,
            "figures": {
                e: [
                    {"id": f.id, "title": f.title, "caption": f.caption, "path": str(f.path)}
                    for f in figs
                ]
                for e, figs in self.figures.items()
            },
            "report": str(self.out / "report.html"),
        }


@dataclass
class Ran:
    """A study whose runs are done (`run_study`), to be judged (`judge`): picklable, so that
    another process can judge it while this one runs the next study."""

    study: str
    dirs: dict[str, dict[str, Path]]  # engine -> campaign -> dir
    quick: bool
    seeds: int | None
    out: Path
    jobs: int | None
    started_utc: str
    t0: float  # time.monotonic() at the start (one clock for every process of the machine)
    load_start: float
    figures: bool = False  # draw the paper's figures (`--figures`): matplotlib, ~0.3 CPU s each
    started_epoch: float = 0.0  # time.time() at the start: a run written since is this one's
    design: str = designs.AUTO  # `--design` (designs.DESIGNS)


def ran_nothing(ran: Ran) -> bool:
    """Whether this invocation found every run of the study done (a resume, a re-judge): no run's
    summary.json (nor study 002's validation.json) was written since it started."""
    for dirs in ran.dirs.values():
        for d in dirs.values():
            files = [*Path(d).glob("runs/*/summary.json"), Path(d) / "validation.json"]
            if any(f.is_file() and f.stat().st_mtime >= ran.started_epoch for f in files):
                return False
    return True


def previous_run(out: Path) -> dict[str, Any] | None:
    """The dated run record of the study's last claims.json in `out`, if any."""
    try:
        return json.loads((out / "claims.json").read_text(encoding="utf-8")).get("run")
    except (OSError, ValueError):
        return None


def run_study(
    study: str,
    engines: list[str],
    quick: bool,
    seeds: int | None,
    out_root: Path,
    jobs: int | None = None,
    progress: bool | None = None,
    log: Any = None,
    reuse: tuple[Path, ...] = (),
    figures: bool = False,
    design: str = designs.AUTO,
) -> Ran:
    """Run (or resume) the study's campaigns on each engine; a run done in another output
    root of `reuse` is copied (`common.siblings`). `figures`: the study's judging draws the
    paper's figures (`judge`). `design`: `--design` (designs.kernel_design)."""
    import time

    mod = module(study)
    out = out_root / study
    started, t0, load = whole_start()
    ran = Ran(study, {}, quick, seeds, out, jobs, started, t0, 0.0)
    ran.load_start = load
    ran.started_epoch = time.time()
    ran.figures = figures
    ran.design = design
    no_kernel = claims.load(study).no_kernel
    for engine in engines:
        ctx = Context(
            engine,
            quick,
            seeds,
            out,
            jobs=jobs,
            progress=progress,
            log=log or (lambda _m: None),
            reuse=tuple(reuse),
            design=design,
        )
        if ctx.kernel_design and no_kernel:  # nothing a kernel run could show
            (log or (lambda _m: None))(f"study {study}: no kernel design ({no_kernel})")
            ran.dirs[engine] = {}
            continue
        ran.dirs[engine] = mod.run(ctx)
    return ran


def run_stats(directory: Path) -> list[dict[str, Any]]:
    """Each run's recorded stats in one of a study's output directories: a campaign's runs'
    summaries (`runs/*/summary.json`, their `stats`), or the rows of study 002's design
    (`validation.json`'s `runs`, which carry the same keys for a kernel run:
    hybla.LATENESS_KEYS)."""
    d = Path(directory)
    out = [
        json.loads(f.read_text(encoding="utf-8")).get("stats") or {}
        for f in sorted(d.glob("runs/*/summary.json"))
    ]
    if (d / "validation.json").is_file():
        out += json.loads((d / "validation.json").read_text(encoding="utf-8")).get("runs") or []
    return out


def linkd_lateness(dirs: dict[str, Path]) -> dict[str, Any] | None:
    """satcc-linkd's lateness over a kernel design's runs (each run's stats: `run_stats`): how
    many runs recorded it, the median and largest of their p99 (µs), the largest single
    lateness, and the runs' late samples; None when no run recorded it (a simulator's runs)."""
    from satcc.studies.hybla import LATENESS_KEYS

    p99_key, max_key, late_key = LATENESS_KEYS
    p99, worst, late = [], [], 0
    for d in dirs.values():
        for stats in run_stats(d):
            if stats.get(p99_key) is None:
                continue
            p99.append(float(stats[p99_key]))
            worst.append(float(stats.get(max_key) or 0.0))
            late += int(stats.get(late_key) or 0)
    if not p99:
        return None
    p99.sort()
    return {
        "runs": len(p99),
        "p99_median_us": p99[len(p99) // 2],
        "p99_max_us": p99[-1],
        "max_us": max(worst),
        "late_samples": late,
    }


def judge(ran: Ran) -> StudyResult:
    """Measure and judge every claim of a study whose runs are done, draw its figures when
    asked (`ran.figures`: they are most of a study's judging, ~0.3 CPU s each, and no verdict
    reads them), write claims.json, claims.txt and report.html."""
    import os
    import time

    spec = claims.load(ran.study)
    mod = module(ran.study)
    out = ran.out
    result = StudyResult(spec, [], out=out, quick=ran.quick, seeds=ran.seeds, design=ran.design)
    result.drew_figures = ran.figures
    for engine, dirs in ran.dirs.items():
        kernel = designs.kernel_design(ran.quick, engine, ran.design)
        if kernel and spec.no_kernel:  # no design: every finding not judged, with the reason
            result.dirs[engine] = dirs
            nothing = {c.id: claims.Measured(None) for c in spec.claims}
            result.rows.extend(claims.judge_all(spec, engine, nothing, kernel=True))
            continue
        with common.reading(), timings.phase(timings.CLAIMS):  # each store opened once
            measured = mod.measure(dirs)
            result.dirs[engine] = dirs
            result.rows.extend(claims.judge_all(spec, engine, measured, kernel=kernel))
            if hasattr(mod, "sensitivity"):  # the unknowns the paper does not give, swept
                result.sensitivity[engine] = mod.sensitivity(dirs)
            if ran.figures:
                with timings.phase(timings.FIGURES):
                    result.figures[engine] = mod.figures(dirs, out / "figures" / engine)
    result.run = {  # a dated run: the doc generator prints these beside the tables
        "started_utc": ran.started_utc,
        "wall_s": round(time.monotonic() - ran.t0),
        "load_1min": [round(ran.load_start, 1), round(os.getloadavg()[0], 1)],
        "cpus": os.cpu_count(),
        "jobs": ran.jobs,
    }
    earlier = previous_run(out)
    if earlier and earlier.get("started_utc") and ran_nothing(ran):
        # only judged again: the runs' own date, wall and load stay the record (a re-judge on a
        # busy machine does not make a quiet kernel run a loaded one), with when it was judged
        result.run = {**earlier, "judged_utc": ran.started_utc}
    lateness = {e: linkd_lateness(d) for e, d in ran.dirs.items() if registry.get(e).real_time}
    if lateness:
        result.run["linkd_lateness"] = lateness
    with timings.phase(timings.FIGURES):
        out.mkdir(parents=True, exist_ok=True)
        layout.atomic_write_text(
            out / "claims.json", json.dumps(result.doc(), indent=2, ensure_ascii=False) + "\n"
        )
        layout.atomic_write_text(out / "claims.txt", "\n".join(text_lines(result)) + "\n")
        layout.atomic_write_text(out / "report.html", render_html(result))
    return result


def _judge_recorded(ran: Ran, record: bool) -> tuple[StudyResult, timings.Timings | None]:
    """`judge` in a process of its own, with what its phases took when `record`."""
    if not record:
        return judge(ran), None
    with timings.recording() as t, timings.section(ran.study):
        result = judge(ran)
    return result, t


# The order `reproduce_many` runs the studies in: the costliest runs first (study 004's are
# most of any design's CPU, study 002's the least), so that the study judged while nothing else
# runs (the last) is a short one. Scheduling only: every result is the same in any order.
RUN_ORDER = ("004", "000", "003", "001", "002")


def run_order(studies: list[str]) -> list[str]:
    """The order `reproduce_many` runs `studies` in (beside an engine that runs alone, or for
    one study, the order given)."""
    if len(studies) < 2:
        return list(studies)
    return sorted(studies, key=lambda s: RUN_ORDER.index(s) if s in RUN_ORDER else -1)


def planned_runs(
    studies: list[str],
    engines: list[str],
    quick: bool,
    seeds: int | None,
    out_root: Path,
    jobs: int | None = None,
    reuse: tuple[Path, ...] = (),
    design: str = designs.AUTO,
) -> list[Any]:
    """Every campaign run (RunSpec) `reproduce_many(studies, ...)` will submit to the shared
    pool, in the order it will: the studies in `run_order`, each study's campaigns in its
    order, each campaign's runs longest first, without those done already or to be copied
    (`common.planned`). For `execute.ahead`: the pool starts the next campaign's runs while
    a campaign's last ones leave its workers idle. Nothing for an engine that runs alone (the
    emulator) nor a study whose design is not campaigns (`CAMPAIGN_RUNS = False`: 002)."""
    specs: list[Any] = []
    for study in run_order(studies):
        mod = module(study)
        if not getattr(mod, "CAMPAIGN_RUNS", True):
            continue
        no_kernel = claims.load(study).no_kernel
        for engine in engines:
            ctx = Context(
                engine, quick, seeds, out_root / study, jobs=jobs, reuse=tuple(reuse), design=design
            )
            if registry.get(engine).exclusive or (ctx.kernel_design and no_kernel):
                continue
            for _directory, todo in common.planned(ctx, mod.run):
                specs.extend(todo)
    return specs


WHOLE = "reproduce-all.json"  # OUT/: the last `reproduce all` (several studies) as one command


def whole_start() -> tuple[str, float, float]:
    """(UTC start to the minute, monotonic start, 1-min load): when a study's run or a whole
    `reproduce` invocation began, as their records give it."""
    import datetime
    import os
    import time

    now = datetime.datetime.now(datetime.UTC)
    return now.strftime("%Y-%m-%d %H:%M"), time.monotonic(), os.getloadavg()[0]


def write_whole(
    out_root: Path,
    began: tuple[str, float, float],
    studies: list[str],
    engines: list[str],
    quick: bool,
    jobs: int | None,
    design: str = designs.AUTO,
) -> None:
    """OUT/reproduce-all.json: one invocation of several studies as a whole (its start, wall
    and load), which the studies' own records cannot give (each is judged beside the next
    one's runs, and a study run again later has its own date): docs/reproduce.md's design
    time. Written once the invocation ended (a temporary file renamed: never half-written)."""
    import os
    import time

    started, t0, load = began
    doc = {
        "started_utc": started,
        "wall_s": round(time.monotonic() - t0, 1),
        "load_1min": [round(load, 1), round(os.getloadavg()[0], 1)],
        "cpus": os.cpu_count(),
        "jobs": jobs,
        "studies": studies,
        "engines": engines,
        "quick": quick,
    }
    per_engine = {e: designs.design_name(quick, e, design) for e in engines}
    if designs.KERNEL in per_engine.values():  # as claims.json says it (StudyResult.doc)
        doc["designs"] = per_engine
    out_root.mkdir(parents=True, exist_ok=True)
    tmp = out_root / f".{WHOLE}.tmp"
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out_root / WHOLE)


def reproduce_many(
    studies: list[str],
    run: Callable[[str], Ran],
    alone: bool = False,
    done: Callable[[StudyResult], None] = lambda _r: None,
    jobs: int | None = None,
) -> list[StudyResult]:
    """Run each study (`run(study)`: `run_study` with the invocation's options) and judge it
    (`judge`: claims, figures; one core, for seconds) in a process of its own while this one
    runs the next study's campaigns, instead of the simulator's pool waiting for it.
    `done(result)` is called as each study is judged; the results are returned in `studies`'
    order. `alone`: an engine must run alone (the emulator), nothing beside it: each study
    is judged here, before the next runs. `jobs`: the invocation's (`--jobs`), whose shared
    pool of workers (`execute.sharing_workers`) is forked with the judging process."""
    from concurrent.futures import FIRST_COMPLETED, Future, wait

    if len(studies) < 2 or alone:
        out = []
        for study in studies:
            with timings.section(study):
                out.append(judge(run(study)))
            done(out[-1])
        return out
    order = run_order(studies)
    record = timings.recording_now()
    results: dict[str, StudyResult] = {}
    pending: dict[Future, str] = {}

    def collect(block: bool) -> None:
        if not pending:
            return
        finished, _ = wait(list(pending), timeout=None if block else 0, return_when=FIRST_COMPLETED)
        for fut in sorted(finished, key=lambda f: order.index(pending[f])):
            study = pending.pop(fut)
            result, recorded = fut.result()
            if recorded is not None:
                timings.merge(recorded)
            results[study] = result
            done(result)

    pool = _judging_pool(studies, jobs)
    try:
        for study in order:
            with timings.section(study):
                ran = run(study)
            pending[pool.submit(_judge_recorded, ran, record)] = study
            collect(block=False)
        with timings.phase(timings.TAIL):
            while pending:
                collect(block=True)
    except BaseException:  # Ctrl-C, an error: the judging process ends with this one
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    with timings.phase(timings.WORKERS):  # its CPU beyond what it recorded: start, imports
        pool.shutdown(wait=True)
    return [results[s] for s in studies]


def _judging_pool(studies: list[str], jobs: int | None = None) -> Any:
    """The one process that judges the studies (`reproduce_many`), started now, before this
    process has run anything. Forked where the platform can: it starts as a copy of this
    process with the studies' modules and pandas, numpy and pydantic already imported, where a
    spawned one imports them again (~2 CPU s). Forking is safe only before this process holds
    threads that lock (the campaigns' pool's, DuckDB's, Arrow's): hence now, once, with the
    fork forced by a first task rather than left to the first study's submission. The shared
    pool's workers are forked at the same moment (`execute.fork_shared_workers`): each starts
    with what it runs imported (a spawned one imports satcc, and pandas at its first study 002
    run: pyarrow's `pa.array` asks pandas) and the first run starts at once."""
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    from satcc.campaign import execute

    for study in studies:  # this process runs them; the copy judges them
        module(study)
    if "fork" not in multiprocessing.get_all_start_methods():
        from satcc.campaign.worker import init_pool_worker

        return ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=init_pool_worker
        )
    sys.stdout.flush()  # a copy of what is buffered would be written again by the child
    sys.stderr.flush()
    pool = ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("fork"), initializer=execute.init_forked
    )
    # every process forked before any pool's thread exists (the workers, then the judging
    # process), each pool's thread started after: forked here
    execute.fork_shared_workers(jobs, then=pool)
    pool.submit(int).result()
    return pool


def text_lines(result: StudyResult) -> list[str]:
    s = result.study
    lines = [f"Study {s.id}: {s.title} ({result.design_text()})"]
    if designs.KERNEL in result.engine_designs().values():
        lines += kernel_design_lines(s)
    lines += claims.table_lines(result.rows, study=s)
    for engine, sens in result.sensitivity.items():
        if sens:
            lines += [
                "",
                f"sensitivities ({engine}): the unknowns the paper does not give, swept",
                *sens,
            ]
    return lines


def kernel_design_lines(s: claims.StudyClaims, width: int = 100) -> list[str]:
    """The kernel design as printed above its table: what it runs, and each cut with the
    claims it leaves not judged and those it weakens (judged), and why."""
    if s.no_kernel:
        return textwrap.wrap(f"no kernel design: {s.no_kernel}", width)
    lines = textwrap.wrap(f"kernel design ({kernel_plan_text(s.id)}): {s.kernel}", width)
    for cut in s.kernel_cuts:
        told = [
            *([f"not judged on the kernel: {', '.join(cut.not_judged)}"] if cut.not_judged else []),
            *(
                [f"weakened, still judged (an input: checked): {', '.join(cut.weakens)}"]
                if cut.weakens
                else []
            ),
        ]
        text = f"- cut: {cut.what} ({'; '.join(told) or 'no claim'}): {cut.reason}"
        lines += textwrap.wrap(text, width, subsequent_indent="  ")
    return lines


def kernel_plan_text(study: str) -> str:
    """The kernel design's size: its runs and the real time it plans (common.Planned)."""
    plan = module(study).kernel_plan()
    runs = sum(p.runs for p in plan)
    minutes = sum(p.real_time_s for p in plan) / 60
    return f"{runs} runs, {minutes:.0f} min of real time planned"


def summary_lines(results: list[StudyResult]) -> list[str]:
    """`reproduce all`: per study and over all, the findings' tally and the coverage."""
    from satcc.textgrid import grid

    body, total = [], dict.fromkeys(claims.VERDICTS, 0)
    judged_all = listed_all = 0
    for r in results:
        t = claims.tally(r.rows)
        judged, listed = r.study.coverage(r.rows)
        judged_all, listed_all = judged_all + judged, listed_all + listed
        for v in claims.VERDICTS:
            total[v] += t[v]
        n = sum(t.values())
        body.append(
            [
                r.study.id,
                *(str(t[v]) for v in claims.VERDICTS),
                f"{100 * t[claims.REPRODUCED] / n:.0f} %" if n else "-",
                str(sum(1 for x in r.rows if x.verdict == claims.NOT_JUDGED)),
                str(sum(1 for x in r.rows if x.claim.kind == "input")),
                f"{judged} / {listed}",
            ]
        )
    n = sum(total.values())
    body.append(
        [
            "all",
            *(str(total[v]) for v in claims.VERDICTS),
            f"{100 * total[claims.REPRODUCED] / n:.0f} %" if n else "-",
            str(sum(1 for r in results for x in r.rows if x.verdict == claims.NOT_JUDGED)),
            str(sum(1 for r in results for x in r.rows if x.claim.kind == "input")),
            f"{judged_all} / {listed_all}",
        ]
    )
    cols = ["study", *claims.VERDICTS, "share reproduced", "not judged here", "inputs", "coverage"]
    head = (
        "Findings per study (inputs not tallied; share = reproduced / judged findings; "
        "coverage = findings / main results listed)"
    )
    return [head, *grid(cols, body, left={0})]


def timing_lines(t: timings.Timings) -> list[str]:
    """`--timings`: wall and CPU per study and phase, the share of each outside the simulation,
    and what the runs themselves took (their CPU in the process that ran them)."""
    from satcc.textgrid import grid

    rows = t.rows()
    cpu_all = sum(c.total_cpu_s for _s, _p, c in rows) or 1.0
    # the elapsed time: the rows' walls overlap where studies were judged beside the runs
    wall_all = t.elapsed_s or sum(c.wall_s for _s, _p, c in rows) or 1.0
    order = {p: i for i, p in enumerate(timings.PHASES)}
    body = []

    def line(study: str, phase: str, wall: float, cpu: float, child: float) -> list[str]:
        return [
            study,
            phase,
            f"{wall:.1f}",
            f"{100 * wall / wall_all:.1f} %",
            f"{cpu:.1f}",
            f"{child:.1f}",
            f"{100 * (cpu + child) / cpu_all:.1f} %",
        ]

    for study in dict.fromkeys(s for s, _p, _c in rows):
        mine = sorted((r for r in rows if r[0] == study), key=lambda r: order.get(r[1], 99))
        for _s, p, c in mine:
            body.append(line(study or "-", p, c.wall_s, c.cpu_s, c.child_cpu_s))
    for p in sorted({p for _s, p, _c in rows}, key=lambda p: order.get(p, 99)):
        mine = [c for _s, q, c in rows if q == p]
        body.append(
            line(
                "all",
                p,
                sum(c.wall_s for c in mine),
                sum(c.cpu_s for c in mine),
                sum(c.child_cpu_s for c in mine),
            )
        )
    sim = [c for _s, p, c in rows if p == timings.SIMULATION]
    sim_wall, sim_cpu = sum(c.wall_s for c in sim), sum(c.total_cpu_s for c in sim)
    runs, run_cpu = sum(t.run_count.values()), sum(t.run_cpu_s.values())
    cols = ["study", "phase", "wall s", "wall", "CPU s here", "CPU s workers", "CPU"]
    head = f"Where the time went: {wall_all:.1f} s wall, {cpu_all:.1f} CPU s"
    outside = (
        f"outside the simulation: {100 * (1 - sim_wall / wall_all):.1f} % of the wall time, "
        f"{100 * (1 - sim_cpu / cpu_all):.1f} % of the CPU time"
    )
    ran = (
        f"runs: {runs}, {run_cpu:.1f} CPU s in the processes that ran them (the campaigns' and, "
        "in the shared pool, study 002's design's; the simulation phase beyond them: a pool's "
        "start-up outside the shared one, results returned)"
    )
    overlap = (
        "claims and figures/docs: judged in a process of their own beside the next study's "
        "runs (their wall overlaps the other rows'); tail: waiting for the last of them"
    )
    return [
        f"{head} (this process and its pool workers)",
        *grid(cols, body, left={0, 1}),
        outside,
        ran,
        *[overlap] * any(p == timings.TAIL for _s, p, _c in rows),
    ]


# -- HTML --------------------------------------------------------------------------------------

TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>satcc reproduce {{ s.id }}</title><style>{{ css|safe }}
tr.reproduced td.v{background:#e6f6e6}tr.partly td.v{background:#fff6d6}tr.not td.v{background:#fde4e4}
td.why{text-align:left;font-size:.9em;color:#333;max-width:32em}
</style></head><body>
<h1>Study {{ s.id }}: {{ s.title }}</h1>
<p class="meta">{{ s.reference }} (shared/papers/{{ s.paper }}). satcc {{ version }},
{{ design }}{% if r.seeds %}, {{ r.seeds }} seed(s) per point{% endif %}. Findings: {{ counts }}; {{ n_inputs }} input(s), not tallied.
Coverage: {{ coverage[0] }} of the paper's {{ coverage[1] }} main results judged as findings.</p>
<h2>Claims</h2>
<p>Findings are judged from the numbers: near/within against the claim's tolerance (reproduced)
and partly tolerance; above/below strictly (the wrong side is "not"); a ratio or difference between
groups is reproduced only when the one-sided sign test over the per-seed values (at least 5 seeds)
excludes "no difference" at 5 %, never on a tie (a ratio within 5 % of 1), a floor or a lockout; a
finding whose run's inputs miss the study's path is "path mismatch" and does not count. Inputs are
the study's path, which satcc's scenario is set from: shown beside satcc's path, not tallied. Rule
in satcc/studies/claims.py.</p>
<table><tr><th class="l">claim</th><th class="l">cite</th><th>engine</th><th>paper</th>
<th>satcc</th><th>seeds</th><th>tolerance</th><th>verdict</th><th class="l">source; how satcc measured; why it differs</th></tr>
{% for row in rows %}<tr class="{{ row.verdict }}"><td class="l" title="{{ row.quote or '' }}">
<b>{{ row.id }}</b><br>{{ row.what }}</td><td class="l">{{ row.cite }}</td><td>{{ row.engine }}</td>
<td>{{ row.paper_text }}</td><td>{{ row.satcc_text }}</td><td>{{ row.seeds if row.seeds is not none else '-' }}</td><td>{{ row.tolerance_text }}</td>
<td class="v">{{ row.verdict_text }}</td><td class="why">{{ row.source }}{% if row.source %}<br>{% endif %}{{ row.how }}{% if row.skipped %}<br><i>{{ row.skipped }}</i>{% elif row.verdict != 'reproduced' and row.why %}<br><i>{{ row.why }}</i>{% endif %}{% if row.flag %}<br><b>{{ row.flag }}</b>{% endif %}{% if row.sign_test %}<br>sign test: {{ row.sign_test.k }} of {{ row.sign_test.n }} seeds on the claimed side, p = {{ '%.3g'|format(row.sign_test.p) }}{% endif %}{% if row.per_seed is not none %}<br>per seed: {{ row.per_seed|join(', ') }}{% endif %}{% if row.note %}<br>({{ row.note }}){% endif %}</td></tr>
{% endfor %}</table>
{% if s.not_judged %}<h2>Main results not judged</h2><ul>{% for n in s.not_judged %}
<li>{{ n.what }} ({{ n.cite }}): {{ n.reason }}</li>{% endfor %}</ul>{% endif %}
{% if s.anomalies %}<h2>The paper's own anomalies</h2><ul>{% for a in s.anomalies %}
<li>{{ a.what }} ({{ a.cite }}): {{ a.note }}</li>{% endfor %}</ul>{% endif %}
{% if not r.drew_figures %}<h2>Figures</h2><p>Not drawn: <code>{{ redraw }}</code> with the
same <code>--out</code> draws the paper's figures from these runs (finished runs are not run
again).</p>{% endif %}
{% for engine, figs in figures %}<h2>The paper's figures from satcc's {{ engine }} runs</h2>
{% for f in figs %}<figure><img id="{{ engine }}-{{ f.id }}" alt="{{ f.title }}" src="data:image/png;base64,{{ f.data }}">
<figcaption><b>{{ f.title }}.</b> {{ f.caption }}</figcaption></figure>
{% endfor %}{% endfor %}
<h2>Runs</h2><ul>{% for engine, name, path in campaigns %}<li>{{ engine }}: {{ name }}:
<code>{{ path }}</code> (satcc report / satcc query work on it)</li>{% endfor %}</ul>
</body></html>
"""


def redraw_command(result: StudyResult) -> str:
    """The command that draws a judged study's figures from its runs (`--figures`)."""
    engines = sorted(result.dirs)
    engine = (
        "" if engines in ([], [registry.DEFAULT]) else engines[0] if len(engines) == 1 else "both"
    )
    return " ".join(
        [
            f"satcc reproduce {result.study.id}",
            *(["--quick"] if result.quick else []),
            *([f"--design {result.design}"] if result.design != designs.AUTO else []),
            *([f"--engine {engine}"] if engine else []),
            *([f"--seeds {result.seeds}"] if result.seeds else []),
            "--figures",
        ]
    )


def render_html(result: StudyResult) -> str:
    import jinja2

    from satcc.report.css import CSS

    rows = []
    for r in claims.ordered(result.rows):
        d = r.doc()
        d["tolerance_text"] = claims.tolerance_text(r.claim)
        rows.append(d)
    figures = [
        (
            engine,
            [
                {
                    "id": f.id,
                    "title": f.title,
                    "caption": f.caption,
                    "data": base64.b64encode(f.path.read_bytes()).decode("ascii"),
                }
                for f in figs
            ],
        )
        for engine, figs in result.figures.items()
    ]
    counts = ", ".join(f"{n} {v}" for v, n in result.doc()["verdicts"].items())
    campaigns = [(e, n, str(p)) for e, d in result.dirs.items() for n, p in d.items()]
    env = jinja2.Environment(autoescape=True)
    return env.from_string(TEMPLATE).render(
        redraw=redraw_command(result),
        s=result.study,
        r=result,
        version=_native.version(),
        css=CSS,
        rows=rows,
        figures=figures,
        counts=counts,
        n_inputs=result.doc()["inputs"],
        coverage=result.study.coverage(result.rows),
        design=result.design_text(),
        campaigns=campaigns,
    )
