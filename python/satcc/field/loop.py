"""The measurement loop over a plan, into a campaign store (the loop of satcc.store.runloop,
which `campaign` and `fidelity` share; this module decides only when each run is measured):

    plan ─► campaign.json (every run, in order) + campaign.toml (the plan) ─► per round:
      runs not done, in plan order ─► measure ─► runs/<id>/ (atomic) or failed/<id>.json
      ─► the round's failures once more, at its end ─► next round at its start time

- Resume: the store's done runs (complete, hashes good) are never repeated. A rerun of the
  same command (or another plan with the same `name`) picks up the first round with runs left;
  failures recorded earlier are retried. Rounds of a resumed plan start when this process
  reaches them: the first at once, each next one `interval` after the previous one's start, as
  in the first invocation; with `at`, every round (the first too) at the next listed time.
- Ctrl-C and SIGTERM stop the run in flight (its children are stopped, its partial files are
  removed by the next start) and exit 130; a lost connection fails the run with that reason.
- One progress line per run on stderr: what ran, its goodput (or why it failed), what comes
  next and when.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from satcc import _native
from satcc.errors import SatccError, UserError
from satcc.field import clock
from satcc.field.measure import RAW_DIR, build_result, measure, summary_parts
from satcc.field.plan import PARAM_COLUMNS, FieldPlan, RunItem, expand
from satcc.limits import printable
from satcc.store import layout, runloop


@dataclass
class LoopResult:
    done: int = 0
    skipped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    interrupted: bool = False


def index_doc(p: FieldPlan, items: list[RunItem]) -> dict[str, Any]:
    return {
        "index_schema_version": layout.INDEX_SCHEMA_VERSION,
        "satcc_version": _native.version(),
        "name": p.name,
        "description": p.description or f"satcc field plan {p.name}",
        "source": "field",
        "field": p.doc(),
        "order": p.order,
        "columns": PARAM_COLUMNS,
        "runs": [i.index_doc() for i in items],
    }


@contextmanager
def writing(p: FieldPlan, text: str, out: Path) -> Iterator[tuple[runloop.Writer, list[RunItem]]]:
    """The store held for plan `p` (runloop.writing: locked, its index and plan written),
    and the plan's runs."""
    items = expand(p)
    with runloop.writing(
        out,
        index_doc(p, items),
        "field plan",
        lambda old: old.get("name") == p.name and old.get("source") == "field",
        text,
    ) as store:
        yield store, items


def prepare(p: FieldPlan, text: str, out: Path) -> list[RunItem]:
    """Write the store's index and plan, as a run does first; the plan's runs."""
    with writing(p, text, out) as (_store, items):
        return items


def _hms(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%H:%M:%S")


def _next_at(after: float, times: list[str]) -> float:
    """The first of the UTC times of day `times` at or after Unix time `after`."""
    day = dt.datetime.fromtimestamp(after, dt.UTC).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    best = None
    for d in (0, 1):
        for t in times:
            h, m = (int(x) for x in t.split(":"))
            c = (day + dt.timedelta(days=d, hours=h, minutes=m)).timestamp()
            if c >= after and (best is None or c < best):
                best = c
    assert best is not None
    return best


class Loop:
    def __init__(
        self,
        p: FieldPlan,
        text: str,
        out: Path,
        force: bool = False,
        stream: TextIO | None = None,
        now=time.time,
    ):
        self.p = p
        self.text = text
        self.out = out
        self.force = force
        self.stream = stream if stream is not None else sys.stderr
        self.now = now
        self.result = LoopResult()

    def say(self, line: str) -> None:
        print(printable(line), file=self.stream, flush=True)

    def run(self) -> LoopResult:
        if self.p.align == "starlink" and not self.force:
            st = clock.check()
            if not st.usable():
                raise UserError(
                    f"clock: Starlink alignment needs a synchronised clock ({st.source}: "
                    f"{st.detail}); start chrony or systemd-timesyncd, or pass --force"
                )
        try:  # SIGTERM too: runloop.writing raises it as Terminated, a KeyboardInterrupt
            with writing(self.p, self.text, self.out) as (store, items):
                self._run(store, items)
        except KeyboardInterrupt:
            self.result.interrupted = True
        return self.result

    def _run(self, store: runloop.Writer, items: list[RunItem]) -> None:
        self.result.skipped = len(store.done)
        if store.done:
            self.say(
                f"field: {len(store.done)} of {len(items)} runs already done in {self.out}; "
                "resuming"
            )
        number = {it.run_id: n for n, it in enumerate(items, 1)}
        self._queue: list[RunItem] = []
        self._retry_pass = False

        def reported(it: RunItem, rep: runloop.Report, o: runloop.Outcome) -> None:
            label = f"[{number[it.run_id]}/{len(items)}] round {it.round} {it.label()}" + (
                " (retry)" if self._retry_pass else ""
            )
            self.result.failed = [f for f in self.result.failed if f[0] != it.run_id]
            if rep.status != "done":
                reason = rep.error or "?"
                self.result.failed.append((it.run_id, reason))
                later = " (retried at the end of the round)" if not self._retry_pass else ""
                self.say(f"{label}: failed: {reason}{later}{self._next(self._queue)}")
                return
            self.result.done += 1
            self.say(f"{label}: {self._summary(o)}{self._next(self._queue)}")

        loop = runloop.Loop[RunItem](
            run_id=lambda it: it.run_id,
            spec_doc=lambda it: {**it.index_doc(), "field_plan": self.p.name},
        )
        loop.run(store, items, lambda todo: self._rounds(store, todo), on_report=reported)

    def _rounds(
        self, store: runloop.Writer, todo: list[RunItem]
    ) -> Generator[runloop.Outcome, None, None]:
        """The runs not done, round by round at their start times; a run that fails is
        measured once more at the end of its round."""
        rounds: dict[int, list[RunItem]] = {}
        for it in todo:
            rounds.setdefault(it.round, []).append(it)
        round_start: float | None = None
        for r in sorted(rounds):
            if self.p.at:  # every round, the first too, at the next of the listed times
                round_start = _next_at(self.now(), self.p.at)
            elif round_start is None:
                round_start = self.now()
            else:
                round_start = max(self.now(), round_start + self.p.interval_s)
            if round_start > self.now():
                self.say(f"field: round {r} starts at {_hms(round_start)} UTC")
            while self.now() < round_start:
                time.sleep(min(1.0, round_start - self.now()))
            retry: list[RunItem] = []
            self._queue = list(rounds[r])
            first = True
            while self._queue:
                it = self._queue.pop(0)
                if not first and self.p.gap_s > 0:
                    time.sleep(self.p.gap_s)
                first = False
                self._retry_pass = it in retry
                o = self._measure(store, it)
                yield o  # recorded (and reported) before the next run starts
                if not o.ok and it not in retry:
                    retry.append(it)
                    self._queue.append(it)  # once more, at the end of the round

    def _measure(self, store: runloop.Writer, it: RunItem) -> runloop.Outcome:
        def body(raw: Path) -> runloop.Outcome:
            m = measure(self.p, it, raw / RAW_DIR, force=self.force)
            result, extras = build_result(self.p, it, m)
            return runloop.Outcome(
                it.run_id, True, result, extras, doc={"field": m.field_doc}, raw_name=RAW_DIR
            )

        # a failure: RunFailed, or an analyzer's complaint about a file
        return store.attempt(it.run_id, body, failures=(SatccError,))

    def _summary(self, o: runloop.Outcome) -> str:
        parts = summary_parts(o.result, o.doc["field"])
        b = o.doc["field"].get("starlink")
        if b:
            parts.append(
                f"+{b['offset_s']:g} s after the {_hms(b['aligned_boundary_unix_s'])} boundary"
            )
        return ", ".join(parts)

    def _next(self, queue: list[RunItem]) -> str:
        if not queue:
            return ""
        nxt = queue[0]
        when = self.now() + self.p.gap_s
        if self.p.align == "starlink":
            when = clock.aligned_start(when, self.p.align_offset_s)
        return f"; next: {nxt.label()} at {_hms(when)} UTC"


def run_plan(
    p: FieldPlan, text: str, out: Path, force: bool = False, stream: TextIO | None = None
) -> LoopResult:
    return Loop(p, text, out, force=force, stream=stream).run()
