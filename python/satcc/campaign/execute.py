"""Running a campaign: plan, skip what is done, run the rest, keep every result safe.

    campaign file ──expand──► plan ──► campaign.json (atomic)
                                 │
                     done? ──────┤ (runs/<id> complete and its hashes good: skipped)
                                 ▼
     sim / model / analyze ──► local process pool (default, --jobs N)  ─┐
                           └─► Dask distributed (--cluster tcp://...)  ─┼──► writer (this process:
     emu ──────────────────► one at a time, here, after the rest      ─┘    runs/<id> atomically)

Workers only compute and return the result; this process writes every run directory through
satcc.store.runloop (the loop `fidelity` and `field` share), so the campaign directory has a
single writer (a second `satcc campaign` on it is refused). A run that fails is recorded in
failed/<id>.json with its error and does not stop the others; a rerun retries it. Interrupting
(Ctrl-C, kill -9, power loss) loses at most the runs in flight: a run directory appears complete
or not at all (satcc.store.layout), and the next run of the same command picks up where this
one stopped. A Dask worker that dies with a run in flight is the scheduler's to handle: it
runs the task again on another worker (up to `distributed.scheduler.allowed-failures` times).

Deviations from what a user might assume:
1. Emulation runs are never sent to a Dask cluster and never run beside other runs: they use
   the real kernel and a real clock of this host, so they run here, one at a time, at the end.
2. When a pool worker process dies (a crash, the OOM killer), the runs it had in flight are
   recorded as failed with that reason; rerun to retry them.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Self, TextIO

from satcc import _native, registry, timings
from satcc.campaign.spec import ANALYZE, Campaign, RunSpec, columns, expand
from satcc.campaign.worker import execute, init_pool_worker
from satcc.errors import UserError
from satcc.limits import check_out_dir, printable
from satcc.store import layout, runloop
from satcc.store.runloop import Outcome

DEFAULT_OUT_ROOT = Path("out") / "campaigns"
DASK_CONNECT_TIMEOUT_S = 10
REDRAW_S = 0.2
SUMMARY_MAX_ROWS = 40  # points in the end-of-campaign table; the rest: satcc query


@dataclass
class CampaignRun:
    """What one invocation did (the end-of-campaign summary)."""

    out_dir: Path
    name: str
    backend: str
    planned: int
    reports: list[runloop.Report] = field(default_factory=list)
    removed_leftovers: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    copied: int = 0  # done runs copied from another campaign directory (`reuse`)

    def count(self, status: str) -> int:
        return sum(1 for r in self.reports if r.status == status)


def plan_doc(c: Campaign, specs: list[RunSpec]) -> dict[str, Any]:
    """The campaign index (campaign.json): deterministic, no timestamps."""
    return {
        "index_schema_version": layout.INDEX_SCHEMA_VERSION,
        "satcc_version": _native.version(),
        "name": c.name,
        "description": c.description,
        "source": c.source,
        **{k: v for k, v in c.doc().items() if k not in ("name", "description")},
        "columns": columns(c, specs),
        "runs": [s.index_doc() for s in specs],
    }


def run_campaign(
    c: Campaign,
    out_dir: Path,
    jobs: int | None = None,
    cluster: str | None = None,
    stream: TextIO | None = None,
    progress: bool | None = None,
    force: bool = False,
    reuse: Sequence[Path] = (),
    plan: list[RunSpec] | None = None,
) -> CampaignRun:
    """Run (or resume) a campaign into `out_dir`, holding its lock; returns what happened.
    A run already done in one of the `reuse` campaign directories (the same run id: engine,
    resolved scenario and seed) is copied from there instead of run again. `plan`: the
    campaign's `expand`ed already (a caller that planned it ahead), not expanded again."""
    check_out_dir(out_dir)
    with timings.phase(timings.RESOLVE):
        # every point checked before any write
        specs = plan if plan is not None else expand(c, force=force, progress=progress)
        index = plan_doc(c, specs)
    started = time.monotonic()  # for the summary (runs/s, ETA) only
    with ExitStack() as held:
        with timings.phase(timings.STORE):  # locked, checked, what is done scanned
            store = held.enter_context(
                runloop.writing(
                    out_dir, index, "campaign", lambda old: old.get("name") == c.name, c.text
                )
            )
        backend = f"dask {cluster}" if cluster else f"local, {_jobs(jobs)} job(s)"
        run = CampaignRun(out_dir, c.name, backend, len(specs), removed_leftovers=store.removed)
        done = sum(1 for s in specs if s.run_id in store.done)
        bar = ProgressLine(c.name, len(specs), already=done, stream=stream, enabled=progress)

        def execute_all(todo: list[RunSpec]) -> Generator[Outcome, None, None]:
            done_elsewhere = _done_in(reuse, [s.run_id for s in todo])
            for s in todo:
                if s.run_id in done_elsewhere:
                    run.copied += 1
                    yield Outcome(s.run_id, True, copy_of=done_elsewhere[s.run_id])
            todo = [s for s in todo if s.run_id not in done_elsewhere]
            serial = [s for s in todo if _exclusive(s)]
            parallel = [s for s in todo if not _exclusive(s)]
            parallel.sort(key=lambda s: -s.cost)  # longest first: the pool ends together
            if parallel:
                source = _dask(parallel, cluster) if cluster else _local(parallel, _jobs(jobs))
                with closing(source):
                    yield from source
            for spec in serial:
                yield store.attempt(spec.run_id, lambda raw, s=spec: execute(s, out_dir=str(raw)))

        loop = runloop.Loop[RunSpec](
            run_id=lambda s: s.run_id,
            spec_doc=lambda s: s.index_doc(),
            run_doc=lambda s: {"scenario": s.scenario, "campaign": c.name},
        )

        def on_report(s: RunSpec, r: runloop.Report, o: Outcome) -> None:
            # a run in the shared pool's worker: its CPU is charged now (the pool is reaped
            # after every campaign; a campaign's own pool is reaped inside its simulation)
            shared = _SHARED is not None and cluster is None and o.pid != os.getpid()
            timings.runs(1, o.cpu_s, in_child=shared)
            bar.advance(ok=r.status == "done", run_id=s.run_id)

        with bar, timings.phase(timings.SIMULATION):
            run.reports = loop.run(store, specs, execute_all, on_report=on_report)
        run.wall_s = time.monotonic() - started
        return run


def _done_in(stores: Sequence[Path], run_ids: list[str]) -> dict[str, Path]:
    """run id -> its finished run directory in the first of `stores` (made by this satcc
    version) that has it: a directory with run.json (`layout.copy_run` checks its files)."""
    found: dict[str, Path] = {}
    for d in stores:
        try:  # another satcc's results are not this one's
            if layout.read_index(d).get("satcc_version") != _native.version():
                continue
        except UserError:
            continue
        for rid in run_ids:
            if rid not in found and (d / layout.RUNS_DIR / rid / layout.RUN_FILE).is_file():
                found[rid] = d / layout.RUNS_DIR / rid
    return found


def _exclusive(spec: RunSpec) -> bool:
    """Whether the run's engine must run alone on this host (the emulator)."""
    return spec.engine != ANALYZE and registry.get(spec.engine).exclusive


def _jobs(jobs: int | None) -> int:
    if jobs is None:
        return (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else (os.cpu_count() or 1)
        )
    if jobs < 1:
        raise UserError(f"--jobs: expected an integer >= 1, found {jobs}")
    return jobs


# jobs -> a pool the campaigns run inside `sharing_workers()` use in turn; None: each its own
_SHARED: dict[int, ProcessPoolExecutor] | None = None
# Runs of the campaigns to come (`ahead`), in the order they will run: a shared pool's worker
# that the running campaign leaves idle (its last runs in flight, nothing left to submit)
# starts them before their campaign does, instead of waiting at each campaign's end.
_AHEAD: deque[RunSpec] = deque()
_PLAN: Callable[[], Iterable[RunSpec]] | None = None  # gives _AHEAD when first needed
_STARTED: dict[str, Any] = {}  # run id -> its future, submitted ahead, not yet taken
_SUBMITTED: set[str] = set()  # run ids submitted to the shared pool inside `ahead`


@contextmanager
def ahead(plan: Callable[[], Iterable[RunSpec]]) -> Iterator[None]:
    """Inside `sharing_workers`: `plan()` gives the runs the campaigns to come will ask the
    shared pool for, in the order they will (each campaign's runs longest first, as
    `run_campaign` orders them; none done already nor to be copied). It is called once, when
    a campaign has submitted its last run (so planning does not delay the first run; an error
    in it only leaves the pool without runs ahead). While the pool's window
    (`IN_FLIGHT_PER_JOB` a job) has room, the next of them are submitted; their campaign takes
    the futures (`_local`) and writes the results as its own, so every run is still written by
    its campaign, once. A run id submitted already in the block (two campaigns planning one
    run: the later copies it) is not submitted ahead. What no campaign took by the end of the
    block (a plan that changed) is cancelled or dropped. Scheduling only: every run's result
    is the same."""
    global _AHEAD, _PLAN, _STARTED, _SUBMITTED
    outer = _AHEAD, _PLAN, _STARTED, _SUBMITTED
    _AHEAD, _PLAN, _STARTED, _SUBMITTED = deque(), plan, {}, set()
    try:
        yield
    finally:
        for future in _STARTED.values():
            future.cancel()
        _AHEAD, _PLAN, _STARTED, _SUBMITTED = outer


def _planned_ahead(jobs: int) -> deque[RunSpec]:
    """The runs to come (`ahead`), planned at the first call, the longest of them first
    (`longest_first`)."""
    global _AHEAD, _PLAN
    if _PLAN is not None:
        plan, _PLAN = _PLAN, None
        with timings.phase(timings.RESOLVE):
            try:
                _AHEAD = deque(longest_first(list(plan()), jobs))
            except Exception:  # noqa: BLE001 - its campaign reports it when it runs
                _AHEAD = deque()
    return _AHEAD


# A run planned ahead whose cost is above this share of one worker's part of the whole plan
# (the plan's cost over the jobs) starts before the rest (`longest_first`).
LONG_RUN_SHARE = 0.1


def longest_first(runs: list[RunSpec], jobs: int) -> list[RunSpec]:
    """The runs to come (`ahead`), in their campaigns' order but for the few longest: each run
    whose cost (`RunSpec.cost`: flow-seconds) is above LONG_RUN_SHARE of one worker's share of
    the whole plan, at most `jobs` of them, goes first, longest first. Run where their
    campaign comes (near the end), such runs leave the pool with one worker on them and the
    others idle once every shorter run is done (the quick designs' study003-long: two runs of
    ~15 CPU s among ~60 s a worker); started first, the short runs fill in beside them
    (longest processing time first). Each is still written by its own campaign, which takes
    its finished future when it comes; they hold at most `jobs` results meanwhile.
    Scheduling only: every run's result is the same."""
    if jobs < 2 or len(runs) <= jobs:
        return runs
    share = sum(s.cost for s in runs) / jobs
    long_ = sorted(
        (i for i, s in enumerate(runs) if s.cost > LONG_RUN_SHARE * share),
        key=lambda i: -runs[i].cost,
    )[:jobs]
    if not long_:
        return runs
    first = set(long_)
    return [runs[i] for i in long_] + [s for i, s in enumerate(runs) if i not in first]


@contextmanager
def sharing_workers() -> Iterator[None]:
    """Inside the block, the campaigns run with the same number of jobs share one pool of
    worker processes, spawned once and shut down at the end, instead of a pool per campaign
    (each worker's start imports satcc: ~0.3 CPU s, paid per campaign otherwise)."""
    global _SHARED
    outer, _SHARED = _SHARED, {} if _SHARED is None else _SHARED
    mine = _SHARED if outer is None else None
    finished = False
    try:
        yield
        finished = True
    finally:
        _SHARED = outer
        with timings.phase(timings.WORKERS):  # what the workers took beyond their runs
            for pool in (mine or {}).values():
                if not finished:  # Ctrl-C, SIGTERM, an error: what is queued is dropped
                    _stop_workers(pool)  # (study 002's design submits all its runs at once)
                pool.shutdown(wait=finished, cancel_futures=not finished)


def fork_shared_workers(jobs: int | None, then: ProcessPoolExecutor | None = None) -> bool:
    """Inside `sharing_workers`, start the shared pool's workers now as copies of this process
    (fork), where the platform can: each starts with what this process has imported (a
    spawned worker imports satcc first, ~0.1 CPU s, and pandas at its first study 002 run,
    ~0.45) and takes its first run at once. The caller promises what forking needs: no thread
    that locks exists yet (no pool's, DuckDB's, Arrow's: `reproduce` calls it before running
    anything). `then`: another fork-context pool (`reproduce`'s judging process) whose
    processes are forked right after these, before either pool starts its thread (a pool
    starts its thread right after its processes, and no process may be forked after any
    thread exists). False, and nothing done, where it cannot: no fork (the workers are
    spawned at the first run, as outside `reproduce`), one job, a pool already there. A pool
    that breaks is replaced by a spawned one (`_local`)."""
    import multiprocessing

    n = _jobs(jobs)
    if (
        _SHARED is None
        or n <= 1
        or n in _SHARED
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return False
    pools = [
        ProcessPoolExecutor(max_workers=n, mp_context=get_context("fork"), initializer=init_forked),
        *([then] if then is not None else []),
    ]
    if not all(hasattr(p, "_launch_processes") for p in pools):  # CPython's, 3.11-3.13
        return False
    sys.stdout.flush()  # a copy of what is buffered would be written again by a child
    sys.stderr.flush()
    for p in pools:  # every process forked, then the threads started (at the first submit)
        p._launch_processes()
    pools[0].submit(int)
    _SHARED[n] = pools[0]
    return True


def init_forked() -> None:
    """A forked pool process (a shared pool's worker, `reproduce`'s judging process) starts as
    a spawned one would (`init_pool_worker`): SIGTERM and SIGHUP at their default action (this
    process's CLI handlers are not its own), no recording of this process's timings inherited
    (the judging process records its own phases), killed when this process dies."""
    import signal

    from satcc.errors import TERMINATING_SIGNALS

    for signum in TERMINATING_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    timings._ACTIVE = None
    init_pool_worker()


def _new_pool(jobs: int) -> ProcessPoolExecutor:
    # spawn: never fork a process that may hold threads (DuckDB, Arrow, Dask)
    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=get_context("spawn"), initializer=init_pool_worker
    )


@contextmanager
def worker_pool(jobs: int) -> Iterator[tuple[ProcessPoolExecutor, bool]]:
    """A pool of `jobs` worker processes for work that is not a campaign's runs (study 002's
    design) and whether it is shared: the shared one inside `sharing_workers` (left running),
    else one of its own, shut down at the end of the block. Submit `timed` calls to a shared
    pool and charge their CPU with `timings.runs(..., in_child=True)`."""
    shared = _SHARED
    if shared is None:
        with _new_pool(jobs) as pool:
            yield pool, False
        return
    if jobs not in shared:
        shared[jobs] = _new_pool(jobs)
    yield shared[jobs], True


def timed(fn: Callable[[Any], Any], arg: Any) -> tuple[Any, float]:
    """`fn(arg)` and the CPU seconds it took in this process (a pool worker)."""
    started = time.process_time()
    out = fn(arg)
    return out, time.process_time() - started


# runs submitted to a local pool per worker ahead of the writer (`_local`): enough that no
# worker waits for its next run while this process writes (nor when the scheduler of a loaded
# machine leaves this process out for a while), few enough that the results waiting to be
# written stay a handful, whatever the campaign's size
IN_FLIGHT_PER_JOB = 4


def _local(specs: list[RunSpec], jobs: int) -> Iterator[Outcome]:
    """Outcomes as they finish, from a pool of `jobs` spawned processes (in-process for 1;
    the shared pool inside `sharing_workers`, which may have started some of `specs` already
    and starts the runs to come when this campaign's last are in flight: `ahead`)."""
    shared = _SHARED
    started = {s.run_id: _STARTED.pop(s.run_id) for s in specs if s.run_id in _STARTED}
    if (jobs <= 1 or len(specs) == 1) and not started:
        for spec in specs:
            yield execute(spec)
        return
    pool = shared.get(jobs) if shared is not None else None
    if pool is None:
        pool = _new_pool(jobs if shared is not None else min(jobs, len(specs)))
        if shared is not None:
            shared[jobs] = pool
    finished = False
    pending: dict[Any, RunSpec] = {started[s.run_id]: s for s in specs if s.run_id in started}
    queue = iter([s for s in specs if s.run_id not in started])
    lost: list[RunSpec] = []  # not submitted: the pool broke first
    mine = {s.run_id for s in specs}
    window = jobs * IN_FLIGHT_PER_JOB

    def top_up() -> None:
        # a window of runs ahead of the writer, not the whole plan: a finished run's result
        # waits in its future until this process has written the ones before it, so a plan
        # submitted at once holds every result the writer has not reached (memory grows with
        # the campaign's runs when the runs are faster than the writer)
        while len(pending) + len(_STARTED) < window and (s := next(queue, None)) is not None:
            try:
                pending[pool.submit(execute, s)] = s
                if shared is not None:
                    _SUBMITTED.add(s.run_id)
            except BrokenProcessPool:
                lost.append(s)
        # this campaign's runs all submitted: the window's room goes to the next campaigns'
        # (`ahead`), which the pool starts as this campaign's last runs leave workers idle
        while shared is not None and len(pending) + len(_STARTED) < window:
            if not (upcoming := _planned_ahead(jobs)):
                break
            nxt = upcoming.popleft()
            if nxt.run_id in _SUBMITTED or nxt.run_id in mine:
                continue
            try:
                _STARTED[nxt.run_id] = pool.submit(execute, nxt)
                _SUBMITTED.add(nxt.run_id)
            except BrokenProcessPool:
                break

    def died(spec: RunSpec, when: str = "while this run was in flight") -> Outcome:
        return Outcome(
            spec.run_id,
            False,
            error=f"the worker process died (a crash or the OOM killer) {when}; rerun to retry",
        )

    try:
        top_up()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                spec = pending.pop(fut)
                try:
                    outcome = fut.result()
                except (BrokenProcessPool, CancelledError):  # (one started ahead: its pool broke)
                    outcome = died(spec)
                top_up()  # before the writer takes this one: the workers stay busy
                yield outcome
        for spec in lost:
            yield died(spec, "before this run started")
        finished = True
    finally:
        if not finished:  # Ctrl-C, SIGTERM, an error: the runs in flight are abandoned
            _stop_workers(pool)
        if not finished or shared is None or getattr(pool, "_broken", False):
            if shared is not None and shared.get(jobs) is pool:
                del shared[jobs]  # the next campaign starts a pool of its own
            with timings.phase(timings.WORKERS if shared is not None else timings.SIMULATION):
                pool.shutdown(wait=finished, cancel_futures=True)


WORKER_STOP_S = 5.0  # a worker asked to stop (SIGTERM) gets this long before SIGKILL


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop a pool's worker processes now (Ctrl-C reaches them through the terminal's process
    group; SIGTERM, sent to this process alone, does not) and wait for them, so none is left
    running and multiprocessing's resource tracker ends with this process."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + WORKER_STOP_S
    for p in procs:
        p.join(max(deadline - time.monotonic(), 0.0))
        if p.is_alive():
            p.kill()
            p.join()
    # the pool's manager thread sees a worker gone, calls the pool broken and reaps the workers
    # too: a worker it reaps first reads as alive here (waitpid: no such child) until that thread
    # records the exit code, so wait for the thread before anyone asks
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(WORKER_STOP_S)


def _dask(specs: list[RunSpec], address: str) -> Iterator[Outcome]:
    """Outcomes as they finish, from a Dask distributed cluster at `address`."""
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - a dependency of satcc
        raise UserError(
            "--cluster needs the `distributed` package (pip install 'dask[distributed]')"
        ) from None
    try:
        client = Client(address, timeout=DASK_CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise UserError(f"--cluster {address}: cannot reach a Dask scheduler there ({e})") from None
    futures: dict[Any, RunSpec] = {}
    finished = False
    try:
        futures = {
            client.submit(execute, s, key=f"satcc-run-{s.run_id}", pure=False): s for s in specs
        }
        for fut in as_completed(list(futures), loop=client.loop):
            spec = futures[fut]
            try:
                yield fut.result()
            except Exception as e:  # noqa: BLE001 - KilledWorker, lost connection: per run
                yield Outcome(
                    spec.run_id,
                    False,
                    error=f"the Dask cluster could not run it: {type(e).__name__}: {e}",
                )
        finished = True
    finally:
        if not finished and futures:  # Ctrl-C, SIGTERM: the cluster drops what is left
            try:
                client.cancel(list(futures), force=True)
            except Exception:  # noqa: BLE001, S110 - best effort on the way out
                pass
        client.close()


# -- progress --------------------------------------------------------------------------------


class ProgressLine:
    """`name ━━━━━╺━━━━ 12/40 · 2 failed · 0.90 runs/s · ETA 31 s` on a terminal's stderr
    (rich.progress, redrawn in place and erased at the end). On a pipe or in a log (no
    terminal, progress not turned off) one plain line per finished run instead:
    `name: 12/40 · run 3f2a… done · 0.90 runs/s · ETA 31 s`, as a scheduler's log wants it;
    `enabled=False` (`--no-progress`) writes nothing."""

    WIDTH = 24

    def __init__(
        self,
        name: str,
        total: int,
        already: int = 0,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.name, self.total, self.already = printable(name), total, already
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        tty = bool(isatty and isatty())
        # no terminal and not turned off: a line per finished run (see the class doc)
        self.lines = enabled is None and not tty
        self.enabled = tty if enabled is None else enabled
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.failed = 0
        self.last_draw = -1.0
        self._progress: Any = None
        self._task: Any = None

    @property
    def drawn(self) -> bool:
        return self._progress is not None

    def status(self) -> str:
        """`2 failed · 0.50 runs/s · ETA 12 s`: the rate counts the runs of this invocation."""
        finished = self.already + self.done
        elapsed = self.clock() - self.started
        parts = []
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            parts.append(f"{rate:.2f} runs/s")
            parts.append(f"ETA {format_seconds((self.total - finished) / rate)}")
        elif self.total - finished:
            parts.append("ETA ?")
        return " · ".join(parts)

    def text(self) -> str:
        """The line as plain text (what the bar shows beside the bar itself)."""
        status = self.status()
        return f"{self.name} {self.already + self.done}/{self.total}" + (
            f" · {status}" if status else ""
        )

    def advance(self, ok: bool = True, run_id: str | None = None) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if self.lines:
            status = self.status()
            what = f"run {run_id} {'done' if ok else 'failed'}" if run_id else None
            parts = [f"{self.name}: {self.already + self.done}/{self.total}", what, status]
            self.stream.write(" · ".join(p for p in parts if p) + "\n")
            self.stream.flush()
            return
        self.draw()

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(bar_width=self.WIDTH),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}", markup=False),
            console=Console(file=self.stream, force_terminal=True, highlight=False),
            auto_refresh=False,
            transient=True,
            get_time=self.clock,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            self.name, total=self.total, completed=self.already, status=""
        )

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if not force and now - self.last_draw < REDRAW_S:
            return
        self.last_draw = now
        if self._progress is None:
            self._start()
        status = self.status()
        self._progress.update(
            self._task,
            completed=self.already + self.done,
            status=f"· {status}" if status else "",
        )
        self._progress.refresh()

    def __enter__(self) -> Self:
        self.draw(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def format_seconds(s: float) -> str:
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"
