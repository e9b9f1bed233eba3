"""Where a command's time goes, phase by phase: wall and CPU (`satcc reproduce --timings`).

    with timings.recording() as t:             turn recording on (off by default: a no-op)
        with timings.section("001"):           a row group (a study)
            with timings.phase("simulation"):  nested phases are exclusive: an inner phase's
                with timings.phase("writing"): time is its own, not its parent's too
                    ...
    t.rows()                                   [(section, phase, wall_s, cpu_s, child_cpu_s)]

Each boundary reads the monotonic clock, this process's CPU time and the CPU time of its
reaped children (`getrusage(RUSAGE_CHILDREN)`: a process pool's workers count once the pool has
shut down, which `satcc.campaign.execute` does inside the simulation phase) and charges what
passed since the previous boundary to the innermost open phase. Time outside any phase goes to
"other". `runs(n, cpu_s)` adds what the runs themselves took (their CPU measured in the process
that ran them), so that a pool's start-up (spawn, imports) can be told from the simulation;
a pool worker's runs are charged when they are reported (see `runs`). What another process
recorded (the studies' claims and figures, judged beside the next study's runs) is added with
`merge`: its CPU as children's, its wall as its own (overlapping this process's: the table's
total wall is the recording's elapsed time, not the sum of the rows).
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# the phases `satcc reproduce --timings` prints, in its order
RESOLVE = "resolve"  # campaign files loaded, points expanded and checked, scenarios resolved
SIMULATION = "simulation"  # the runs (a pool's workers, or in this process)
WRITING = "writing"  # run directories written (results, run.json, fsync)
STORE = "store"  # the store opened: scanned, hashes checked, DuckDB catalog built and queried
CLAIMS = "claims"  # measured values computed from the frames, claims judged
FIGURES = "figures/docs"  # figures drawn, claims.json, claims.txt, report.html written
WORKERS = "workers"  # a shared pool's workers beyond their runs: spawn, imports
TAIL = "tail"  # waiting, after the last runs, for the studies still being judged elsewhere
OTHER = "other"  # anything else (imports)
PHASES = (RESOLVE, SIMULATION, WRITING, STORE, CLAIMS, FIGURES, WORKERS, TAIL, OTHER)


def _now() -> tuple[float, float, float]:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), time.process_time(), kids.ru_utime + kids.ru_stime


@dataclass
class Cost:
    wall_s: float = 0.0
    cpu_s: float = 0.0  # this process
    child_cpu_s: float = 0.0  # its reaped children (pool workers)

    @property
    def total_cpu_s(self) -> float:
        return self.cpu_s + self.child_cpu_s


@dataclass
class Timings:
    """Costs per (section, phase), in the order first seen, and the runs' own CPU per section."""

    costs: dict[tuple[str, str], Cost] = field(default_factory=dict)
    run_cpu_s: dict[str, float] = field(default_factory=dict)
    run_count: dict[str, int] = field(default_factory=dict)
    _section: str = ""
    _stack: list[str] = field(default_factory=list)
    _mark: tuple[float, float, float] = field(default_factory=_now)
    # a shared pool's runs' CPU, charged by `runs` before its processes are reaped (WORKERS)
    _credit_s: float = 0.0
    started: float = field(default_factory=time.monotonic)
    elapsed_s: float = 0.0  # the recording's wall time (set when it ends)

    def _key(self) -> tuple[str, str]:
        return self._section, self._stack[-1] if self._stack else OTHER

    def _charge(self) -> None:
        now = _now()
        c = self.costs.setdefault(self._key(), Cost())
        c.wall_s += now[0] - self._mark[0]
        c.cpu_s += now[1] - self._mark[1]
        reaped = now[2] - self._mark[2]
        if self._key()[1] == WORKERS:  # the shared pool reaped: its runs were charged already
            paid = min(reaped, self._credit_s)
            self._credit_s -= paid
            reaped -= paid
        c.child_cpu_s += reaped
        self._mark = now

    def rows(self) -> list[tuple[str, str, Cost]]:
        return [(s, p, c) for (s, p), c in self.costs.items()]


_ACTIVE: Timings | None = None


@contextmanager
def recording() -> Iterator[Timings]:
    """Record every phase and section entered inside the block (one recording at a time)."""
    global _ACTIVE
    if _ACTIVE is not None:
        raise RuntimeError("timings are already being recorded")
    t = _ACTIVE = Timings()
    try:
        yield t
    finally:
        t._charge()
        t.elapsed_s = time.monotonic() - t.started
        _ACTIVE = None


def recording_now() -> bool:
    """Whether a recording is on (in this process)."""
    return _ACTIVE is not None


@contextmanager
def section(name: str) -> Iterator[None]:
    """Charge what follows to the rows of `name` (a study); phases restart at "other"."""
    t = _ACTIVE
    if t is None:
        yield
        return
    t._charge()
    outer, stack = t._section, t._stack
    t._section, t._stack = name, []
    try:
        yield
    finally:
        t._charge()
        t._section, t._stack = outer, stack


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Charge the block's time to `name` (exclusive of the phases opened inside it)."""
    t = _ACTIVE
    if t is None:
        yield
        return
    t._charge()
    t._stack.append(name)
    try:
        yield
    finally:
        t._charge()
        t._stack.pop()


def runs(n: int, cpu_s: float, in_child: bool = False) -> None:
    """Count `n` runs that took `cpu_s` of CPU where they ran (see the module doc). Runs of a
    child process (a pool's worker) charge their CPU to the open phase now, not when the
    process is reaped (a pool shared by several sections is reaped after them all); the
    reaped remainder (start-up, imports) goes to the WORKERS phase, where the pool is shut
    down (`satcc.campaign.execute.sharing_workers`)."""
    t = _ACTIVE
    if t is None:
        return
    t.run_cpu_s[t._section] = t.run_cpu_s.get(t._section, 0.0) + cpu_s
    t.run_count[t._section] = t.run_count.get(t._section, 0) + n
    if in_child:
        t.costs.setdefault(t._key(), Cost()).child_cpu_s += cpu_s
        t._credit_s += cpu_s


def merge(other: Timings) -> None:
    """Add what another process recorded (a child of this one, reaped later inside a WORKERS
    phase, which then deducts it): its phases' CPU as children's CPU, its wall as its own."""
    t = _ACTIVE
    if t is None:
        return
    for (section_, phase_), c in other.costs.items():
        mine = t.costs.setdefault((section_, phase_), Cost())
        mine.wall_s += c.wall_s
        mine.child_cpu_s += c.total_cpu_s
        t._credit_s += c.total_cpu_s
    for section_, cpu in other.run_cpu_s.items():
        t.run_cpu_s[section_] = t.run_cpu_s.get(section_, 0.0) + cpu
        t.run_count[section_] = t.run_count.get(section_, 0) + other.run_count.get(section_, 0)
