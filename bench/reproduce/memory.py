"""Does a campaign's writer grow with its runs? The campaign process's own peak RSS
(getrusage RUSAGE_SELF: the writer, not its pool's workers) over a campaign of N short runs,
for a few N, run exactly as `satcc campaign FILE --jobs 2 --no-progress` runs it
(`run_campaign`, bench/campaign/scaling.py's one-link scenario).

    .venv/bin/python bench/reproduce/memory.py [--runs 250 2000] [--duration "1 s"]

Each N runs in a fresh interpreter (peak RSS only ever grows): the figure printed is that
process's peak after the campaign, and its growth per run between the smallest and largest N.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, {bench!r})
from scaling import write_campaign
from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
d = Path({tmp!r})
path = write_campaign(d, {runs}, {duration!r}, "100 Mbit/s", flows=1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.monotonic()
done = run_campaign(spec.load(path), d / "out", jobs=2, progress=False)
print(json.dumps({{"runs": {runs}, "done": done.count("done"),
    "peak_kib_before": before,
    "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "wall_s": time.monotonic() - t0}}))
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, nargs="+", default=[250, 2000])
    p.add_argument("--duration", default="1 s")
    args = p.parse_args()
    bench = str(Path(__file__).resolve().parent.parent / "campaign")
    rows = []
    for n in args.runs:
        with tempfile.TemporaryDirectory(prefix="satcc-mem-") as tmp:
            code = CHILD.format(bench=bench, tmp=tmp, runs=n, duration=args.duration)
            out = subprocess.run(
                [sys.executable, "-c", code], check=True, capture_output=True, text=True
            )
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(
                f"{n:6d} runs ({r['done']} done): peak RSS {r['peak_kib'] / 1024:.1f} MiB "
                f"(after imports {r['peak_kib_before'] / 1024:.1f} MiB), {r['wall_s']:.1f} s wall"
            )
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        per = (b["peak_kib"] - a["peak_kib"]) / (b["runs"] - a["runs"])
        print(f"growth: {per:.2f} KiB per run between {a['runs']} and {b['runs']} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
