"""What a packet capture costs the simulator: `satcc sim` of a 60 s, 100 Mbit/s run with and
without `--capture`, alternating, each run a whole process (start-up and result writing
included), wall and CPU time from outside.

    .venv/bin/python bench/sim/capture.py [--reps 5] [--points d] [--secs 60]

The scenario is scenarios/dumbbell.toml (one CUBIC and two Reno flows over a 100 Mbit/s
bottleneck) run for `--secs`; `--points` is `satcc sim --capture`'s argument (default: the
receiving node, the emulator's capture point). Prints one JSON line per run and a summary:
the median of the per-pair ratios (with / without), the capture files' size and packet count.
BENCHMARKS.md "Simulator captures" has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "dumbbell.toml"


def timed(cmd: list[str]) -> dict[str, float]:
    """Wall and CPU (user + system of the child) seconds of one run of `cmd`."""
    before = os.times()
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return {"wall_s": wall, "cpu_s": cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--points", default="d")
    ap.add_argument("--secs", type=int, default=60)
    args = ap.parse_args()
    satcc = shutil.which("satcc", path=str(Path(sys.executable).parent)) or "satcc"
    work = Path(tempfile.mkdtemp(prefix="satcc-bench-capture-"))
    base = [satcc, "sim", str(SCENARIO), "--set", f"scenario.duration={args.secs} s", "--json"]
    try:
        pairs = []
        for rep in range(args.reps):
            row = {}
            for label, extra in (("plain", []), ("capture", ["--capture", args.points])):
                out = work / label
                row[label] = timed([*base, "--out", str(out), *extra])
            files = sorted((work / "capture" / "sim").iterdir())
            row["capture_bytes"] = sum(f.stat().st_size for f in files)
            print(json.dumps({"rep": rep, **row}), flush=True)
            pairs.append(row)
        ratio = {
            k: statistics.median(p["capture"][k] / p["plain"][k] for p in pairs)
            for k in ("wall_s", "cpu_s")
        }
        med = {
            label: {k: statistics.median(p[label][k] for p in pairs) for k in ("wall_s", "cpu_s")}
            for label in ("plain", "capture")
        }
        print(
            json.dumps(
                {
                    "secs": args.secs,
                    "points": args.points,
                    "reps": args.reps,
                    "median": med,
                    "median_ratio": ratio,
                    "capture_bytes": pairs[-1]["capture_bytes"],
                }
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
