"""The measurement loop over a plan, into a campaign store (satcc.store.layout):

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
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from satcc import _native
from satcc.errors import SatccError, UserError
from satcc.field import clock
from satcc.field.measure import RAW_DIR, build_result, measure, summary_parts
from satcc.field.plan import PARAM_COLUMNS, FieldPlan, RunItem, expand
from satcc.limits import printable
from satcc.store import layout


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the loop is so its clean-up runs."""


def _on_sigterm(signum, frame):  # pragma: no cover - signal path
    raise Terminated()


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


def prepare(p: FieldPlan, text: str, out: Path) -> list[RunItem]:
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: expected a directory for the store, found a file")
    if (out / layout.INDEX_FILE).exists():
        old = layout.read_index(out)
        if old.get("name") != p.name or old.get("source") != "field":
            raise UserError(
                f"{out}: holds campaign {old.get('name')!r}, not field plan {p.name!r}; "
                "choose another --out"
            )
    elif out.is_dir() and any(e.name != layout.LOCK_FILE for e in out.iterdir()):
        raise UserError(f"{out}: expected an empty or new directory for the store, found files")
    items = expand(p)
    (out / layout.RUNS_DIR).mkdir(parents=True, exist_ok=True)
    layout.atomic_write_text(out / layout.CAMPAIGN_COPY, text)
    layout.atomic_write_text(out / layout.INDEX_FILE, layout.dumps(index_doc(p, items)))
    layout.remove_leftovers(out)
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
        old = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            with layout.locked(self.out):
                items = prepare(self.p, self.text, self.out)
                self._rounds(items)
        except KeyboardInterrupt:
            self.result.interrupted = True
        finally:
            signal.signal(signal.SIGTERM, old)
        return self.result

    def _rounds(self, items: list[RunItem]) -> None:
        scan = layout.scan(self.out)
        done = set(scan.done)
        total = len(items)
        self.result.skipped = len(done)
        if done:
            self.say(f"field: {len(done)} of {total} runs already done in {self.out}; resuming")
        rounds: dict[int, list[RunItem]] = {}
        for it in items:
            rounds.setdefault(it.round, []).append(it)
        round_start: float | None = None
        for r in sorted(rounds):
            todo = [it for it in rounds[r] if it.run_id not in done]
            if not todo:
                continue
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
            queue = list(todo)
            first = True
            while queue:
                it = queue.pop(0)
                if not first and self.p.gap_s > 0:
                    time.sleep(self.p.gap_s)
                first = False
                ok = self._one(it, items, done, queue, retry_pass=it in retry)
                if not ok and it not in retry:
                    retry.append(it)
                    queue.append(it)  # once more, at the end of the round

    def _one(
        self,
        it: RunItem,
        items: list[RunItem],
        done: set[str],
        queue: list[RunItem],
        retry_pass: bool,
    ) -> bool:
        n = items.index(it) + 1
        spec = {**it.index_doc(), "field_plan": self.p.name}
        tmp = Path(tempfile.mkdtemp(prefix=".field.tmp-", dir=self.out))
        label = f"[{n}/{len(items)}] round {it.round} {it.label()}" + (
            " (retry)" if retry_pass else ""
        )
        try:
            try:
                m = measure(self.p, it, tmp / RAW_DIR, force=self.force)
                result, extras = build_result(self.p, it, m)
            except SatccError as e:  # RunFailed, or an analyzer's complaint about a file
                reason = str(e)
                layout.write_failure(self.out, spec, reason)
                self.result.failed = [f for f in self.result.failed if f[0] != it.run_id]
                self.result.failed.append((it.run_id, reason))
                later = " (retried at the end of the round)" if not retry_pass else ""
                self.say(f"{label}: failed: {reason}{later}{self._next(queue)}")
                return False
            spec_doc = {**spec, "field": m.field_doc}
            layout.write_run(self.out, spec_doc, result, extras, raw_dir=tmp, raw_name=RAW_DIR)
            done.add(it.run_id)
            self.result.done += 1
            self.result.failed = [f for f in self.result.failed if f[0] != it.run_id]
            parts = summary_parts(result, m.field_doc)
            b = m.field_doc.get("starlink")
            if b:
                parts.append(
                    f"+{b['offset_s']:g} s after the {_hms(b['aligned_boundary_unix_s'])} boundary"
                )
            self.say(f"{label}: {', '.join(parts)}{self._next(queue)}")
            return True
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

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
