"""What each campaign's runs cost in one `satcc reproduce` invocation, run by run: the CPU and
wall seconds of every run in the worker that ran it (`Outcome.cpu_s`, `wall_s`: what
`--timings` sums per study, never written to a result), its simulated events
(summary.json `stats.events`), and when each outcome reached the writer, so that the workers'
idle time between and at the end of campaigns can be read off.

    .venv/bin/python bench/reproduce/runcost.py OUT [--busy] [-- ARGS...]   # default ARGS: all --quick --jobs 2

Runs `satcc reproduce ARGS --json --timings --out OUT` in this process (the CLI's own entry;
its pool and judging process as usual), writes OUT.json (the claims documents), OUT.err (the
log and the `--timings` table) and OUT.runs.json (one record per campaign run), and prints
per campaign: runs (simulated + copied), CPU s, CPU s a run, wall s of its simulation phase,
and the workers' idle in it (jobs x the phase's wall - the runs' wall). Study 002's design is
not a campaign: its runs are in the `--timings` table only.

`--busy` samples the invocation's processes from outside (`busy.py`, every 50 ms: each one's
scheduler state, running/runnable or waiting) and prints where the cores had no work: the
idle core-seconds (2 cores less the processes wanting one, summed), per pool worker its
waiting at the start (before it was spawned, and until its first run), between runs (the
gaps of 0.2 s or more, with the campaign then writing) and at the end; written to
OUT.busy.json. The states count a process waiting for a busy core as wanting one, so the idle
measured on a loaded machine is what the schedule leaves, not what the load took.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
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
    p.add_argument("--busy", action="store_true", help="sample when the processes wait")
    p.add_argument("args", nargs="*", default=["all", "--quick"])
    a = p.parse_args()
    t_start = time.monotonic()
    sampler = None
    if a.busy:
        import os
        import subprocess

        sampler = subprocess.Popen(
            [
                "nice",
                "-n",
                "19",
                sys.executable,
                str(Path(__file__).with_name("busy.py")),
                str(os.getpid()),
                f"{a.out}.busy.json",
            ]
        )

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
    if sampler is not None:
        sampler.terminate()
        sampler.wait()
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
    if sampler is not None:
        idle_report(Path(f"{a.out}.busy.json"), t_start, t_end, phases, a.jobs)
    return 0


def idle_report(
    path: Path, t_start: float, t_end: float, phases: dict[str, list[float]], cores: int
) -> None:
    """Where the cores had no work (`--busy`): from busy.py's samples."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    root = doc["root"]
    samples = {int(k): v for k, v in doc["samples"].items()}
    cmd = {int(k): v for k, v in doc["cmdlines"].items()}
    for p in [p for p in samples if "busy.py" in cmd.get(p, "")]:  # the sampler itself
        del samples[p]
    # the pool's workers: spawned ones (multiprocessing's spawn_main), or forked ones (the
    # root's own command line, as the judging process's): the `cores` busiest of those
    resource = [p for p in samples if "resource_tracker" in cmd.get(p, "")]
    others = [p for p in samples if p != root and p not in resource]
    spent = {p: samples[p][-1][2] - samples[p][0][2] for p in others}
    workers = sorted(sorted(others, key=lambda p: -spent[p])[:cores])
    times = sorted({t for v in samples.values() for t, _s, _c in v})
    if len(times) < 2:
        print("busy: too few samples")
        return
    state = {p: {t: st for t, st, _c in v} for p, v in samples.items()}
    idle = 0.0
    for t0, t1 in itertools.pairwise(times):
        wanting = sum(1 for p in samples if state[p].get(t0) == "R")
        idle += max(0, cores - wanting) * (t1 - t0)

    def campaign_at(t: float) -> str:
        for name, (b, e) in phases.items():
            if b <= t <= e:
                return name
        return "-"

    print(
        f"idle core-s (no process of the tree wanting a core, {cores} cores): {idle:.1f} of "
        f"{cores * (t_end - t_start):.1f} ({len(times)} samples)"
    )
    for p in workers:
        v = samples[p]
        first = v[0][0] - t_start
        gaps, run = [], None
        for t, st, _c in v:
            if st != "R":
                run = run if run is not None else t
            elif run is not None:
                if t - run >= 0.2:
                    gaps.append((run - t_start, t - run, campaign_at(run)))
                run = None
        waiting = sum(t1 - t0 for (t0, s0, _), (t1, _s, _c) in itertools.pairwise(v) if s0 != "R")
        last_r = max((t for t, st, _c in v if st == "R"), default=v[-1][0])
        print(
            f"worker {p}: spawned at {first:.2f} s, waiting {waiting:.1f} s in all, "
            f"ends waiting {t_end - last_r:.1f} s; gaps >= 0.2 s: "
            + ", ".join(f"{g:.1f} s at {t:.1f} ({c})" for t, g, c in gaps[:12])
        )
    judges = [p for p in others if p not in workers]
    for p in judges:
        v = samples[p]
        ticks = (v[-1][2] - v[0][2]) / doc["tck"]
        print(f"judging process {p}: {ticks:.1f} CPU s sampled")


if __name__ == "__main__":
    raise SystemExit(main())
