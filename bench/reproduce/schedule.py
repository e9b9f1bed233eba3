"""How well `satcc reproduce --jobs N` keeps its N workers busy, replayed from a finished output
root (no run is executed): each run's cost is its simulated events (summary.json
`stats.events`, a load-independent proxy for its CPU: ~10 M events per CPU s on this machine),
and the pool is replayed as `satcc.campaign.execute` feeds it (each campaign's runs in the order
the campaign submits them, a free worker taking the next; the studies in `reproduce.RUN_ORDER`),
with a barrier per campaign (the next campaign starting when the last run of the previous one
is done: `reproduce` before `execute.ahead`) and without (a free worker taking the next
campaign's next run: `execute.ahead`).

    .venv/bin/python bench/reproduce/schedule.py OUT [--jobs 2] [--design quick|full]
        [--events-per-s 1.03e7] [--json]

Prints per campaign its runs, its events (as CPU s), the replayed span against the ideal
(events / jobs) and the idle worker-seconds at its end (its drain), then the whole plan
replayed with a barrier per campaign, without (`execute.ahead`: the campaigns' runs in turn on
one queue) and as one queue across every campaign (the longest first: the lower bound a global
longest-first order could reach). Study 002's
design (not a campaign) is left out.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from design import campaigns

from satcc.campaign import spec
from satcc.studies import common, reproduce


def replay(costs: list[float], jobs: int, start: list[float] | None = None) -> list[float]:
    """The workers' finishing times after running `costs` in order, each run on the worker
    free first (`start`: when each worker is free; all at 0 by default)."""
    free = list(start or [0.0] * jobs)
    heapq.heapify(free)
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return sorted(free)


def events_of(root: Path, study: str, name: str) -> dict[str, int]:
    """run id -> simulated events, from the campaign directory's done runs."""
    out = {}
    for f in (root / study / "sim" / name).glob("runs/*/summary.json"):
        doc = json.loads(f.read_text(encoding="utf-8"))
        out[f.parent.name] = int((doc.get("stats") or {}).get("events") or 0)
    return out


def plan(root: Path, quick: bool, rate: float) -> list[dict[str, Any]]:
    """Per campaign in the order `reproduce all` runs them: its runs' costs (CPU s) in the order
    the campaign submits them (longest `RunSpec.cost` first, plan order for ties), copies
    (a run another campaign of the root has done) left out."""
    seen: set[str] = set()
    order = {s: i for i, s in enumerate(reproduce.RUN_ORDER)}
    rows = []
    for study, name, q in sorted(campaigns(quick), key=lambda x: order.get(x[0], -1)):
        c = common.load(name, q)
        events = events_of(root, study, c.name)
        specs = [s for s in spec.expand(c) if s.run_id not in seen]
        seen.update(s.run_id for s in specs)
        specs.sort(key=lambda s: -s.cost)  # as execute_all sorts them (a stable sort)
        rows.append(
            {
                "study": study,
                "campaign": c.name,
                "costs": [events.get(s.run_id, 0) / rate for s in specs],
                "missing": sum(1 for s in specs if s.run_id not in events),
            }
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--design", choices=("quick", "full"), default="quick")
    p.add_argument("--events-per-s", type=float, default=1.03e7)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = plan(args.root, args.design == "quick", args.events_per_s)
    t, idle_total = 0.0, 0.0
    for r in rows:
        ends = replay(r["costs"], args.jobs)
        span, work = ends[-1], sum(r["costs"])
        r.update(span_s=span, work_s=work, ideal_s=work / args.jobs)
        r["drain_idle_s"] = sum(span - e for e in ends)  # workers waiting for the barrier
        idle_total += r["drain_idle_s"]
        t += span
    work = sum(r["work_s"] for r in rows)
    glob = replay(sorted((c for r in rows for c in r["costs"]), reverse=True), args.jobs)[-1]
    ahead = replay([c for r in rows for c in r["costs"]], args.jobs)[-1]
    doc = {
        "jobs": args.jobs,
        "events_per_cpu_s": args.events_per_s,
        "campaigns": [{k: v for k, v in r.items() if k != "costs"} for r in rows],
        "work_s": work,
        "ideal_s": work / args.jobs,
        "barriers_span_s": t,
        "barriers_idle_worker_s": idle_total,
        "ahead_span_s": ahead,
        "one_queue_longest_first_span_s": glob,
    }
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    print(
        f"{'study':5} {'campaign':28} {'runs':>5} {'CPU s':>7} {'span s':>7} {'ideal s':>7} {'idle':>6}"
    )
    for r in rows:
        print(
            f"{r['study']:5} {r['campaign']:28} {len(r['costs']):5d} {r['work_s']:7.1f} "
            f"{r['span_s']:7.1f} {r['ideal_s']:7.1f} {r['drain_idle_s']:6.1f}"
            + (f"  ({r['missing']} runs without a result)" if r["missing"] else "")
        )
    print(
        f"all: {work:.1f} CPU s of runs, ideal {work / args.jobs:.1f} s on {args.jobs} workers; "
        f"a barrier per campaign {t:.1f} s ({idle_total:.1f} worker-s idle); the campaigns in "
        f"turn on one queue (execute.ahead) {ahead:.1f} s; one queue, longest first {glob:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
