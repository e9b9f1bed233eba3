"""Campaign scaling: runs/s with 1 and 2 local workers and a loopback Dask cluster, and what a
run costs besides simulating (BENCHMARKS.md "Campaigns").

    .venv/bin/python bench/campaign/scaling.py [--runs N] [--duration "10 s"] [--rate "1 Gbit/s"]
        [--flows 2]

The campaign: one base scenario (one link, `--flows` CUBIC flows, `--duration` simulated,
`--rate`; each flow's window is bounded by the 6 MiB default receive buffer),
repeated `--runs` times with different seeds, run into a fresh directory per backend with
`satcc.campaign.execute.run_campaign`, exactly as `satcc campaign FILE --jobs N
[--cluster ADDR] --no-progress` runs it. The Dask cluster is a LocalCluster of 2 worker
processes (1 thread each) on 127.0.0.1, started before the clock starts.

Columns
| column       | meaning                                                                          |
|--------------|----------------------------------------------------------------------------------|
| wall s       | the campaign's wall time (planning, running, writing every run directory)        |
| runs/s       | runs / wall                                                                      |
| speed-up     | runs/s over the 1-worker runs/s                                                  |
| run s        | mean time of one run inside its worker (validate, resolve, simulate, build the result) |
| overhead/run | wall x workers / runs - run s: what a run costs beyond its own work (planning, pickling, the single writer, idle workers) |

The breakdown table times one run's steps in this process (median of `--repeat`), the start
cost being everything but `simulate`.

All figures are wall time on whatever machine runs it; nothing here is written into a result.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE = """\
[scenario]
name = "scaling"
duration = "{duration}"
seed = 1

[[link]]
a = "s"
b = "d"
rate = "{rate}"
delay = "20 ms"
queue = "1 BDP"

[[flow]]
name = "bulk"
from = "s"
to = "d"
cca = "cubic"
count = {flows}
"""

CAMPAIGN = """\
[campaign]
name = "scaling"
scenario = "base.toml"
repetitions = {runs}
seed = 1
"""


def write_campaign(directory: Path, runs: int, duration: str, rate: str, flows: int = 2) -> Path:
    (directory / "base.toml").write_text(BASE.format(duration=duration, rate=rate, flows=flows))
    path = directory / "scaling.toml"
    path.write_text(CAMPAIGN.format(runs=runs))
    return path


def run_one(path: Path, out: Path, jobs: int | None = None, cluster: str | None = None):
    from satcc.campaign import spec
    from satcc.campaign.execute import run_campaign

    c = spec.load(path)
    started = time.monotonic()
    res = run_campaign(c, out, jobs=jobs, cluster=cluster, progress=False)
    wall = time.monotonic() - started
    done = [r for r in res.reports if r.status == "done"]
    if len(done) != res.planned:
        failed = [r.error for r in res.reports if r.status == "failed"]
        raise SystemExit(f"{out}: {len(done)} of {res.planned} runs done; failures: {failed[:2]}")
    return wall, statistics.fmean(r.wall_s for r in done), len(done)


def breakdown(path: Path, repeat: int) -> list[tuple[str, float]]:
    """Median seconds of each step of one run, in this (warm) process."""
    from satcc import _native, results
    from satcc import scenario as sc
    from satcc.campaign import spec
    from satcc.store import layout

    c = spec.load(path)
    run_spec = spec.expand(c)[0]
    steps: dict[str, list[float]] = {}

    def timed(name, fn, *a):
        t = time.perf_counter()
        out = fn(*a)
        steps.setdefault(name, []).append(time.perf_counter() - t)
        return out

    for _ in range(repeat):
        doc = _copy(run_spec.scenario)
        s = timed("validate (pydantic)", sc.from_dict, doc, run_spec.source, "scaling")
        config = timed("resolve", sc.resolve, s, run_spec.seed)
        raw = timed("simulate (Rust)", _native.run_sim, config, None)
        meta = {"schema_version": results.SCHEMA_VERSION, "engine": "sim", "seed": config["seed"]}
        result = timed(
            "build RunResult",
            results.RunResult.from_engine,
            raw,
            config,
            sc.expand_flows(s),
            meta,
        )
        with tempfile.TemporaryDirectory() as d:
            timed(
                "write run dir (Parquet, hashes)",
                layout.write_run,
                Path(d),
                run_spec.index_doc() | {"scenario": run_spec.scenario, "campaign": c.name},
                result,
                {},
                None,
            )
    return [(name, statistics.median(v)) for name, v in steps.items()]


def _copy(doc):
    import copy

    return copy.deepcopy(doc)


def import_cost() -> float:
    """Seconds for a fresh interpreter to import what a spawned pool worker imports."""
    code = "import satcc.campaign.worker, satcc.engines.sim, satcc.scenario"
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=16, help="runs per backend (default 16)")
    ap.add_argument("--duration", default="10 s", help="simulated time per run (default 10 s)")
    ap.add_argument("--rate", default="1 Gbit/s", help="link rate (default 1 Gbit/s)")
    ap.add_argument("--flows", type=int, default=2, help="CUBIC flows sharing the link (default 2)")
    ap.add_argument("--repeat", type=int, default=5, help="repeats of the breakdown (default 5)")
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask cluster")
    args = ap.parse_args()

    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, width=120)
    rows = []
    with tempfile.TemporaryDirectory(prefix="satcc-bench-campaign-") as tmp:
        tmp = Path(tmp)
        path = write_campaign(tmp, args.runs, args.duration, args.rate, args.flows)
        steps = breakdown(path, args.repeat)
        for label, jobs in (("local, 1 worker", 1), ("local, 2 workers", 2)):
            wall, run_s, n = run_one(path, tmp / f"out-{jobs}", jobs=jobs)
            rows.append((label, jobs, wall, run_s, n))
        if not args.no_dask:
            import distributed

            with distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            ) as cluster:
                wall, run_s, n = run_one(path, tmp / "out-dask", cluster=cluster.scheduler_address)
                rows.append(("Dask loopback, 2 workers", 2, wall, run_s, n))

    base_rate = rows[0][4] / rows[0][2]
    t = Table(
        title=f"{args.runs} runs of {args.duration} simulated ({args.rate}, {args.flows} CUBIC flows)"
    )
    for col in ("backend", "wall s", "runs/s", "speed-up", "run s", "overhead/run s"):
        t.add_column(col, justify="left" if col == "backend" else "right")
    for label, workers, wall, run_s, n in rows:
        rate = n / wall
        overhead = wall * workers / n - run_s
        t.add_row(
            label,
            f"{wall:.2f}",
            f"{rate:.2f}",
            f"{rate / base_rate:.2f}x",
            f"{run_s:.3f}",
            f"{overhead:.3f}",
        )
    console.print(t)

    b = Table(title=f"one run, step by step (median of {args.repeat}, warm process)")
    b.add_column("step")
    b.add_column("s", justify="right")
    b.add_column("share", justify="right")
    total = sum(s for _, s in steps)
    for name, s in steps:
        b.add_row(name, f"{s:.4f}", f"{100 * s / total:.0f} %")
    start = total - dict(steps)["simulate (Rust)"]
    b.add_row("start cost (all but simulate)", f"{start:.4f}", f"{100 * start / total:.0f} %")
    console.print(b)
    console.print(
        f"a spawned worker's imports (fresh interpreter, best of 3): {import_cost():.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
