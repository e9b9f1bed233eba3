"""A design's CPU, estimated from sampled runs: a few runs of each campaign of `satcc reproduce
all` (the simulator) and of study 002's design executed here, one at a time, their CPU time
measured (getrusage of this process around `satcc.campaign.worker.execute`: validate, resolve,
simulate, build the result; not the writing), and scaled to the campaign.

    .venv/bin/python bench/reproduce/sample.py [--per-campaign 3] [--design full|quick]
        [--campaign NAME ...] [--every-point NAME ...] [--study002 K] [--json]

The samples are distinct points of the campaign spread over its plan (the first, the last and
evenly between, in plan order: the axes' extremes are in), each at its first seed; with
`--every-point NAME` every point of that campaign (study003-bursts: 8 points whose runs differ
8-fold). A run planned in an earlier campaign is not counted twice (it is copied, not
simulated). Two ratio estimators scale the samples to the campaign: by flow-seconds (duration x
flows: what the campaign's longest-first order uses) and by the simulator's own estimate of the
run (`satcc.engines.sim.estimate`: packets per link direction crossed, the flows sharing each
direction), which follows a run's rate where flow-seconds do not (16 flows sharing one GbE
bottleneck send what 4 do). Each sample also records the simulator's events (summary.json
`stats.events`: deterministic, a load-independent proxy for its CPU). `--study002 K` samples K
runs of each of study 002's two columns (`study002.designs`), scaled by the estimate.
CPU seconds on a loaded machine run high (contention); say the load beside them.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from design import campaigns

from satcc.campaign import spec
from satcc.campaign.worker import execute
from satcc.engines import sim
from satcc.studies import common


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def picks(n: int, k: int) -> list[int]:
    """k indices spread evenly over range(n), the first and the last included."""
    k = min(k, n)
    return sorted({round(i * (n - 1) / max(k - 1, 1)) for i in range(k)})


def estimate_s(c: Any, doc: dict[str, Any]) -> tuple[float, float]:
    """The simulator's estimate (CPU s) of a point's run and its duration (s), from its
    resolved scenario."""
    _s, config, problems = spec._check_point(c, doc)
    if config is None:
        raise SystemExit(f"{c.name}: {problems}")
    return sim.estimate(config).seconds, config["duration_ns"] / 1e9


_WARM: list[bool] = []


def measure(run: Any, keep: Path | None = None) -> dict[str, Any]:
    """Execute one campaign RunSpec here: its CPU and events. The process's first run is
    executed twice, the first unmeasured (the engine's and the results' modules import then).
    `keep`: a campaign directory the run is written into (`layout.write_run`)."""
    if not _WARM:
        execute(run)
        _WARM.append(True)
    before = cpu()
    o = execute(run)
    took = cpu() - before
    if not o.ok:
        raise SystemExit(f"run {run.run_id}: {o.error}")
    if keep is not None:
        from satcc.store import layout

        layout.write_run(keep, run.index_doc(), o.result, o.extras)
    stats = o.result.meta.get("stats") or {}
    return {"run_id": run.run_id, "cpu_s": took, "events": stats.get("events")}


def scale(samples: list[dict[str, Any]], total: float, key: str) -> float:
    """Ratio estimator: the campaign's total of `key` times the samples' CPU per unit of it."""
    return total * sum(x["cpu_s"] for x in samples) / sum(x[key] for x in samples)


def study002(quick: bool, k: int) -> list[dict[str, Any]]:
    """Study 002's two columns (not campaigns): k runs each, scaled by the estimate."""
    from satcc.scenario import from_dict, resolve
    from satcc.studies import hybla, study002

    rows = []
    for name, design in study002.designs(quick).items():
        specs = hybla.run_specs(design)
        est = [
            sim.estimate(resolve(from_dict(hybla.scenario_dict(s), source="<002>"))).seconds
            for s in specs
        ]
        # spread over the estimate's order: the cheapest, the dearest and between
        order = sorted(range(len(specs)), key=lambda i: est[i])
        samples = []
        for i in (order[j] for j in picks(len(order), k)):
            if not _WARM:
                hybla.simulate(specs[i])
                _WARM.append(True)
            before = cpu()
            hybla.simulate(specs[i])
            samples.append({"run": str(specs[i]), "cpu_s": cpu() - before, "estimate_s": est[i]})
        rows.append(
            {
                "study": "002",
                "campaign": name,
                "runs": len(specs),
                "sim_s": float(sum(s.duration_s for s in specs)),
                "flow_s": float(sum(s.duration_s for s in specs)),
                "estimate_sum_s": sum(est),
                "samples": samples,
                "estimate_cpu_s": scale(samples, sum(est), "estimate_s"),
                "estimate_cpu_s_by_flow_s": None,
            }
        )
        report(rows[-1])
    return rows


def replay(costs: list[float], jobs: int) -> float:
    """The span of `costs` run in this order on `jobs` workers, each run on the worker free
    first (as `satcc.campaign.execute` feeds its pool)."""
    free = [0.0] * jobs
    heapq.heapify(free)
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return max(free)


def drains(runs: list[tuple[float, float, float]], jobs: int) -> dict[str, float]:
    """A campaign's runs as (cost, flow-s, estimate) in plan order, each cost modelled
    (its point's measured CPU, or its estimate times the campaign's measured ratio): the span
    on `jobs` workers longest first by flow-s (what `execute` does: a stable sort), by the
    estimate, and the ideal (the costs over the workers)."""
    by_flow = [c for c, _f, _e in sorted(runs, key=lambda r: -r[1])]
    by_est = [c for c, _f, _e in sorted(runs, key=lambda r: -r[2])]
    return {
        "ideal_s": sum(c for c, _f, _e in runs) / jobs,
        "span_by_flow_s": replay(by_flow, jobs),
        "span_by_estimate_s": replay(by_est, jobs),
    }


def report(r: dict[str, Any]) -> None:
    spread = ", ".join(f"{x['cpu_s']:.2f}" for x in r["samples"])
    flow = r["estimate_cpu_s_by_flow_s"]
    print(
        f"{r['study']} {r['campaign']:26s} {r['runs']:5d} runs {r['flow_s']:9.0f} flow-s "
        f"samples {spread} CPU s -> est. {r['estimate_cpu_s']:7.1f} CPU s (by estimate)"
        + (f", {flow:7.1f} (by flow-s)" if flow is not None else ""),
        file=sys.stderr,
        flush=True,
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-campaign", type=int, default=3)
    p.add_argument("--design", choices=("full", "quick"), default="full")
    p.add_argument("--campaign", action="append", help="only these (repeatable)")
    p.add_argument("--every-point", action="append", default=[], help="sample every point")
    p.add_argument("--study002", type=int, default=0, help="runs sampled per 002 column")
    p.add_argument(
        "--keep",
        type=Path,
        help="write the sampled runs into KEEP/<campaign>/ (a campaign directory of them: "
        "satcc query and the studies' measures read it)",
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    quick = args.design == "quick"
    seen: set[str] = set()
    rows = []
    every_run: list[float] = []  # the modelled cost of every run of the design
    load0 = os.getloadavg()[0]
    for study, name, q in campaigns(quick):
        c = common.load(name, q)
        specs = [s for s in spec.expand(c, force=True, progress=False) if s.run_id not in seen]
        seen |= {s.run_id for s in specs}
        if args.campaign and c.name not in args.campaign and name not in args.campaign:
            continue
        if not specs:
            continue
        points: dict[int, list[Any]] = {}
        for s in specs:
            points.setdefault(s.point, []).append(s)
        both = {pt: estimate_s(c, runs[0].scenario) for pt, runs in points.items()}
        est = {pt: e for pt, (e, _d) in both.items()}
        order = sorted(points)
        every = name in args.every_point or c.name in args.every_point
        chosen = order if every else [order[i] for i in picks(len(order), args.per_campaign)]
        samples = []
        keep = None
        if args.keep is not None:
            from satcc.campaign.execute import plan_doc
            from satcc.store import layout

            keep = args.keep / c.name
            keep.mkdir(parents=True, exist_ok=True)
            layout.atomic_write_text(
                keep / layout.INDEX_FILE,
                layout.dumps(plan_doc(c, [points[pt][0] for pt in chosen])),
            )
        for pt in chosen:
            x = measure(points[pt][0], keep)
            x |= {"point": pt, "flow_s": points[pt][0].cost, "estimate_s": est[pt]}
            x["params"] = points[pt][0].params
            samples.append(x)
        flow_s = sum(s.cost for s in specs)
        est_sum = sum(est[s.point] for s in specs)
        ratio = sum(x["cpu_s"] for x in samples) / sum(x["estimate_s"] for x in samples)
        measured = {x["point"]: x["cpu_s"] for x in samples}
        modelled = [
            (measured.get(s.point, est[s.point] * ratio), s.cost, est[s.point]) for s in specs
        ]
        every_run += [c for c, _f, _e in modelled]
        rows.append(
            {
                "study": study,
                "campaign": c.name,
                "runs": len(specs),
                "sim_s": sum(both[s.point][1] for s in specs),
                "flow_s": flow_s,
                "estimate_sum_s": est_sum,
                "samples": samples,
                "estimate_cpu_s": scale(samples, est_sum, "estimate_s"),
                "estimate_cpu_s_by_flow_s": scale(samples, flow_s, "flow_s"),
                "pool_2_jobs": drains(modelled, 2),
            }
        )
        report(rows[-1])
    if args.study002:
        rows += study002(quick, args.study002)
    total = sum(r["estimate_cpu_s"] for r in rows)
    pools = [r["pool_2_jobs"] for r in rows if "pool_2_jobs" in r]
    doc = {
        "design": args.design,
        "load_1min": [load0, os.getloadavg()[0]],
        "campaigns": rows,
        "estimate_cpu_s": total,
        "pool_2_jobs": {  # the sampled campaigns (study 002's design apart)
            "ideal_s": sum(p["ideal_s"] for p in pools),
            "barrier_per_campaign_by_flow_s": sum(p["span_by_flow_s"] for p in pools),
            "barrier_per_campaign_by_estimate_s": sum(p["span_by_estimate_s"] for p in pools),
            "one_queue_longest_first_s": replay(sorted(every_run, reverse=True), 2),
        },
    }
    if args.json:
        json.dump(doc, sys.stdout, indent=2, default=str)
        print()
    else:
        print(
            f"{args.design}: estimated {total:.0f} CPU s of runs, load {load0:.1f} -> "
            f"{os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
