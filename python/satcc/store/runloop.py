"""The one loop of every command that runs many things into a store (`satcc campaign`,
`satcc fidelity`, `satcc field`):

    plan ──► open the store: lock it, check it holds this plan (or nothing), write the index,
             remove what a killed writer left ──► skip the runs already done ──► run the rest
             (the caller's `execute`: a pool, a Dask cluster, one at a time, rounds) ──►
             each outcome as it comes: runs/<id>/ (atomic) or failed/<id>.json

What differs between the commands is only how the runs are executed; what is shared, and so
behaves the same everywhere: one writer per store (the lock: a second command on the same
directory is refused, naming the first one's pid), a run directory that appears whole or not
at all (`layout.write_run`), a failed run recorded with its reason and retried by the next
invocation, a result that cannot be written (disk full) recorded as a failure, never lost
silently, SIGTERM and SIGHUP taken as Ctrl-C (the run in flight abandoned, its scratch files
removed) whether the CLI or the API runs the loop, and resuming after any interruption (Ctrl-C,
kill -9, power loss) by running the same command again.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from satcc import timings
from satcc.errors import UserError, catch_termination, raise_if_terminated, restore_handlers
from satcc.store import layout

T = TypeVar("T")


@dataclass
class Outcome:
    """What executing one run gave: a result (with extra tables, raw files and what it adds to
    run.json) or the reason it failed."""

    run_id: str
    ok: bool
    result: Any = None  # satcc.results.RunResult
    extras: dict[str, Any] = field(default_factory=dict)  # name -> satcc.tables.Table
    error: str | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0  # CPU time of the process that ran it (timings only; never written)
    pid: int = 0  # that process
    doc: dict[str, Any] = field(default_factory=dict)  # added to run.json beside the plan's
    raw_dir: Path | None = None  # a scratch directory (`Writer.scratch`); removed once recorded
    raw_name: str = layout.EMU_RAW_DIR  # its entry kept in the run directory
    copy_of: Path | None = None  # the same run, done in another store: copied, not rerun


@dataclass
class Report:
    """One planned run as this invocation left it."""

    run_id: str
    status: str  # done | skipped | failed
    wall_s: float = 0.0
    error: str | None = None


@dataclass
class Writer:
    """A store held for writing (`writing`)."""

    out_dir: Path
    done: set[str]
    removed: list[str]  # what a killed writer left and was removed

    def scratch(self, run_id: str) -> Path:
        """A new directory for a run's raw files, inside the store (removed by the next
        `writing` if this process dies before the run is recorded)."""
        return Path(tempfile.mkdtemp(prefix=f".{run_id}.raw-", dir=self.out_dir / layout.RUNS_DIR))

    def attempt(
        self,
        run_id: str,
        body: Callable[[Path], Outcome],
        failures: tuple[type[Exception], ...] = (Exception,),
    ) -> Outcome:
        """Run one run here: `body(raw)` with a new scratch directory for its raw files,
        which becomes the outcome's raw_dir (moved into the run directory when recorded). An
        exception among `failures` is the run's failure (its message the reason); any other
        (Ctrl-C) propagates. Either way the scratch directory is removed."""
        started = time.monotonic()
        raw = self.scratch(run_id)
        try:
            o = body(raw)
        except failures as e:
            shutil.rmtree(raw, ignore_errors=True)
            return Outcome(run_id, False, error=str(e), wall_s=time.monotonic() - started)
        except BaseException:
            shutil.rmtree(raw, ignore_errors=True)
            raise
        o.raw_dir = raw
        o.wall_s = o.wall_s or time.monotonic() - started
        return o

    def record(self, spec_doc: dict[str, Any], run_doc: dict[str, Any], o: Outcome) -> Report:
        """Write the outcome: the run directory (run.json = spec_doc | run_doc | o.doc) or
        failed/<id>.json (spec_doc and the error). A result that cannot be written (disk full,
        permissions) is recorded as a failure with that reason."""
        try:
            if o.ok:
                try:
                    if o.copy_of is not None:
                        layout.copy_run(self.out_dir, spec_doc | run_doc | o.doc, o.copy_of)
                    else:
                        layout.write_run(
                            self.out_dir,
                            spec_doc | run_doc | o.doc,
                            o.result,
                            o.extras,
                            o.raw_dir,
                            o.raw_name,
                        )
                    self.done.add(o.run_id)
                    return Report(o.run_id, "done", o.wall_s)
                except OSError as e:
                    o = Outcome(o.run_id, False, error=f"writing the result failed: {e}")
            layout.write_failure(self.out_dir, spec_doc, o.error or "?")
            return Report(o.run_id, "failed", o.wall_s, o.error)
        finally:
            if o.raw_dir is not None:
                shutil.rmtree(o.raw_dir, ignore_errors=True)


@contextmanager
def writing(
    out_dir: Path,
    index: dict[str, Any],
    kind: str,
    holds: Callable[[dict[str, Any]], bool],
    copy_text: str | None = None,
) -> Iterator[Writer]:
    """Hold `out_dir` for writing the plan `index` (campaign.json) of a `kind` ("campaign",
    "suite", "field plan"): lock it (a second writer is refused), check that it is new, empty
    or holds this plan (`holds(old index)`), write the index and `copy_text` (campaign.toml),
    and remove a killed writer's leftovers. While it is held, SIGTERM and SIGHUP raise
    `Terminated` (a KeyboardInterrupt) as the CLI's own handler does, so a loop run from the
    API stops as on Ctrl-C too: the run in flight abandoned, its scratch files removed, the
    pool's workers stopped, the lock released."""
    index_path = out_dir / layout.INDEX_FILE

    def foreign() -> bool:  # files, and not a store: not ours to write into (nor lock)
        return (
            out_dir.is_dir()
            and not index_path.exists()
            and any(e.name != layout.LOCK_FILE for e in out_dir.iterdir())
        )

    previous = catch_termination()  # SIGTERM/SIGHUP while held: the cleanup of Ctrl-C
    try:
        if out_dir.exists() and not out_dir.is_dir():
            raise UserError(f"{out_dir}: expected a directory for the {kind}, found a file")
        empty = f"{out_dir}: expected an empty or new directory for the {kind}, found other files"
        if foreign():
            raise UserError(empty)
        with layout.locked(out_dir):
            if index_path.exists():
                old = layout.read_index(out_dir)
                if not holds(old):
                    raise UserError(
                        f"{out_dir}: holds campaign {old.get('name')!r}, not {kind} "
                        f"{index.get('name')!r}; choose another --out"
                    )
            elif foreign():
                raise UserError(empty)
            (out_dir / layout.RUNS_DIR).mkdir(parents=True, exist_ok=True)
            if copy_text is not None:
                layout.atomic_write_text(out_dir / layout.CAMPAIGN_COPY, copy_text)
            layout.atomic_write_text(index_path, layout.dumps(index))
            removed = layout.remove_leftovers(out_dir)
            yield Writer(out_dir, set(layout.scan(out_dir).done), removed)
    finally:
        restore_handlers(previous)


@dataclass
class Loop(Generic[T]):
    """How a command's planned runs map onto the store: each item's id, the document failed/
    and run.json record, and what run.json adds for a finished run."""

    run_id: Callable[[T], str]
    spec_doc: Callable[[T], dict[str, Any]]
    run_doc: Callable[[T], dict[str, Any]] = lambda _item: {}

    def run(
        self,
        store: Writer,
        plan: Sequence[T],
        execute: Callable[[list[T]], Generator[Outcome, None, None]],
        on_skip: Callable[[T], None] | None = None,
        on_report: Callable[[T, Report, Outcome], None] | None = None,
    ) -> list[Report]:
        """Skip what `store` has done, hand the rest (in plan order) to `execute`, and record
        each outcome as it comes (before `execute` runs the next: a generator that decides
        on retries sees the store up to date). Returns a report per planned run."""
        by_id = {self.run_id(p): p for p in plan}
        reports: dict[str, Report] = {}  # a run retried by `execute`: its last outcome
        todo = []
        for p in plan:
            if self.run_id(p) in store.done:
                reports[self.run_id(p)] = Report(self.run_id(p), "skipped")
                if on_skip is not None:
                    on_skip(p)
            else:
                todo.append(p)
        if todo:
            # closing: an interrupt raised while recording stops the executor now (its pool,
            # its cluster futures), not when the generator is collected
            with closing(execute(todo)) as outcomes:
                for o in outcomes:
                    p = by_id[o.run_id]
                    with timings.phase(timings.WRITING):
                        rep = store.record(self.spec_doc(p), self.run_doc(p), o)
                    reports[rep.run_id] = rep
                    if on_report is not None:
                        on_report(p, rep, o)
                    raise_if_terminated()  # a SIGTERM swallowed where it landed: stop here
        return list(reports.values())
