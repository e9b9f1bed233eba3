"""What each campaign's runs cost in one `satcc reproduce` invocation, run by run: the CPU and
wall seconds of every run in the worker that ran it (`Outcome.cpu_s`, `wall_s`: what
`--timings` sums per study, never written to a result), its simulated events
(summary.json `stats.events`), and when each outcome reached the writer, so that the workers'
idle time between and at the end of campaigns can be read off.

    .venv/bin/python bench/reproduce/runcost.py OUT [-- ARGS...]   # default ARGS: all --quick --jobs 2

Runs `satcc reproduce ARGS --json --timings --out OUT` in this process (the CLI's own entry;
its pool and judging process as usual), writes OUT.json (the claims documents), OUT.err (the
log and the `--timings` table) and OUT.runs.json (one record per campaign run), and prints
per campaign: runs (simulated + copied), CPU s, CPU s a run, wall s of its simulation phase,
and the workers' idle in it (jobs x the phase's wall - the runs' wall). Study 002's design is
not a campaign: its runs are in the `--timings` table only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("args", nargs="*", default=["all", "--quick"])
    a = p.parse_args()
    t_start = time.monotonic()

    from satcc.cli import entry
    from satcc.store import runloop

    records: list[dict[str, Any]] = []
    phases: dict[str, list[float]] = {}
    original = runloop.Loop.run

    def run(self, store, plan, execute, on_skip=None, on_report=None):  # type: ignore[no-untyped-def]
        name = store.out_dir.name
        started = time.monotonic()

        def report(p: Any, rep: Any, o: Any) -> None:
            records.append(
                {
                    "campaign": name,
                    "run_id": o.run_id,
                    "copied": o.copy_of is not None,
                    "cpu_s": o.cpu_s,
                    "wall_s": o.wall_s,
                    "pid": o.pid,
                    "arrived": time.monotonic(),
                    "cost": getattr(p, "cost", None),
                }
            )
            if on_report is not None:
                on_report(p, rep, o)

        try:
            return original(self, store, plan, execute, on_skip, report)
        finally:
            phases[name] = [started, time.monotonic()]

    runloop.Loop.run = run  # type: ignore[method-assign]
    argv = [*a.args, "--jobs", str(a.jobs), "--json", "--timings", "--out", str(a.out)]
    with (
        open(f"{a.out}.json", "w", encoding="utf-8") as out,
        open(f"{a.out}.err", "w", encoding="utf-8") as err,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        sys.argv = ["satcc", "reproduce", *argv]
        try:
            code = entry()
        except SystemExit as e:
            code = int(e.code or 0)
    t_end = time.monotonic()
    if code:
        print(Path(f"{a.out}.err").read_text(encoding="utf-8")[-3000:], file=sys.stderr)
        return int(code)
    for r in records:  # the simulator's events, from the run's summary
        for summary in Path(a.out).glob(f"*/*/{r['campaign']}/runs/{r['run_id']}/summary.json"):
            r["events"] = (json.loads(summary.read_text()).get("stats") or {}).get("events")
    Path(f"{a.out}.runs.json").write_text(
        json.dumps({"runs": records, "phases": phases, "start": t_start, "end": t_end}, indent=1),
        encoding="utf-8",
    )
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by[r["campaign"]].append(r)
    print(
        f"{'campaign':32s} {'runs':>5s} {'copied':>6s} {'CPU s':>7s} {'a run':>7s} "
        f"{'M events':>9s} {'wall s':>7s} {'idle s':>7s}"
    )
    total = 0.0
    for name, rs in by.items():
        sim = [r for r in rs if not r["copied"]]
        cpu = sum(r["cpu_s"] for r in sim)
        total += cpu
        t0, t1 = phases.get(name, [0.0, 0.0])
        idle = a.jobs * (t1 - t0) - sum(r["wall_s"] for r in sim) if sim else 0.0
        events = sum(r.get("events") or 0 for r in sim) / 1e6
        print(
            f"{name:32s} {len(rs):5d} {len(rs) - len(sim):6d} {cpu:7.2f} "
            f"{cpu / max(len(sim), 1):7.3f} {events:9.1f} {t1 - t0:7.1f} {idle:7.1f}"
        )
    print(f"{'campaigns':32s} {len(records):5d} {'':6s} {total:7.2f}")
    if phases:
        first = min(t0 for t0, _t1 in phases.values())
        last = max(t1 for _t0, t1 in phases.values())
        print(
            f"wall {t_end - t_start:.1f} s: the first campaign's runs began at {first - t_start:.1f} s, "
            f"the last campaign's ended at {last - t_start:.1f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
