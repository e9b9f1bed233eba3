"""The full design's CPU, estimated from sampled runs: a few runs of each campaign of
`satcc reproduce all` (the simulator) executed here, one at a time, their CPU time measured
(getrusage of this process around `satcc.campaign.worker.execute`: validate, resolve, simulate,
build the result; not the writing), scaled to the campaign by flow-seconds.

    .venv/bin/python bench/reproduce/sample.py [--per-campaign 3] [--design full|quick]
        [--campaign NAME ...] [--json]

The samples are spread over the plan (the first, the last and evenly between, in plan order:
the axes' extremes are in), a run planned in an earlier campaign is not counted twice (it is
copied, not simulated). The estimate is the campaign's flow-seconds times the samples' CPU per
flow-second (a ratio estimator: a run's cost grows with its packets, which flow-seconds track
only as well as the campaign's rates are alike; the table prints the samples' spread).
CPU seconds on a loaded machine run high (contention); say the load beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from design import campaigns

from satcc.campaign import spec
from satcc.campaign.worker import execute
from satcc.studies import common


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-campaign", type=int, default=3)
    p.add_argument("--design", choices=("full", "quick"), default="full")
    p.add_argument("--campaign", action="append", help="only these (repeatable)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    quick = args.design == "quick"
    seen: set[str] = set()
    rows = []
    load0 = os.getloadavg()[0]
    for study, name, q in campaigns(quick):
        c = common.load(name, q)
        specs = [s for s in spec.expand(c, force=True, progress=False) if s.run_id not in seen]
        seen |= {s.run_id for s in specs}
        if args.campaign and c.name not in args.campaign and name not in args.campaign:
            continue
        if not specs:
            continue
        k = min(args.per_campaign, len(specs))
        picks = sorted({round(i * (len(specs) - 1) / max(k - 1, 1)) for i in range(k)})
        samples = []
        for i in picks:
            s = specs[i]
            before = cpu()
            o = execute(s)
            took = cpu() - before
            if not o.ok:
                raise SystemExit(f"{c.name} run {s.run_id}: {o.error}")
            samples.append({"run_id": s.run_id, "flow_s": s.cost, "cpu_s": took})
        flow_s = sum(s.cost for s in specs)
        per = sum(x["cpu_s"] for x in samples) / sum(x["flow_s"] for x in samples)
        rows.append(
            {
                "study": study,
                "campaign": c.name,
                "runs": len(specs),
                "flow_s": flow_s,
                "samples": samples,
                "cpu_per_flow_s_ms": 1e3 * per,
                "estimate_cpu_s": per * flow_s,
            }
        )
        spread = ", ".join(f"{x['cpu_s']:.2f}" for x in samples)
        print(
            f"{study} {c.name:24s} {len(specs):5d} runs {flow_s:9.0f} flow-s "
            f"samples {spread} CPU s "
            f"-> {1e3 * per:.2f} ms/flow-s, est. {per * flow_s:8.0f} CPU s",
            file=sys.stderr,
            flush=True,
        )
    total = sum(r["estimate_cpu_s"] for r in rows)
    doc = {
        "design": args.design,
        "load_1min": [load0, os.getloadavg()[0]],
        "campaigns": rows,
        "estimate_cpu_s": total,
    }
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        print()
    else:
        print(
            f"{args.design}: estimated {total:.0f} CPU s of runs (campaigns; study 002 apart), "
            f"load {load0:.1f} -> {os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
