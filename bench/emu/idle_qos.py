"""satcc-linkd's PM QoS request for polling idle CPUs, measured: runs alternated with and without.

On a VM an idle vCPU halts and the host may run something else on its core; waking it again
can take milliseconds. satcc-linkd asks the kernel for a 0 µs CPU wake-up latency while it
runs (crates/satcc-emu/README.md, "Idle CPUs"). This runs one path (default: one BBR flow on
20 Mbit/s, 50 ms RTT, a 1-BDP queue, 5 s: tests/test_emu.py's) `--pairs` times each way,
alternating (without, then with), and prints per run satcc-linkd's lateness (p50, p99, max),
the flow's median smoothed RTT and the machine's steal time over the run (/proc/stat, the
time the host kept a runnable vCPU waiting, in ms); then the medians each way.

    python bench/emu/idle_qos.py [--pairs 8] [--cca bbr] [--json FILE]     (root)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import textwrap
from pathlib import Path

from satcc import scenario as sc
from satcc.engines import emu

PATH = """
[scenario]
name = "idle-qos"
duration = "{duration}"
[[link]]
a = "client"
b = "server"
rate = "20 Mbit/s"
delay = "25 ms"
queue = "1 BDP"
[[flow]]
from = "client"
to = "server"
cca = "{cca}"
"""


def steal_ms() -> float:
    """The machine's steal time so far (all CPUs), ms."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")


def one(cca: str, duration: str, cpu_latency_us: int | None) -> dict:
    s = sc.loads(textwrap.dedent(PATH.format(cca=cca, duration=duration)), source="<idle-qos>")
    before = steal_ms()
    r = emu.run(s, capture=False, cpu_latency_us=cpu_latency_us)
    st = r.meta["stats"]
    return {
        "request_us": cpu_latency_us,
        "held_us": st.get("linkd_cpu_latency_held_us"),
        "lateness_p50_us": st["linkd_lateness_p50_us"],
        "lateness_p99_us": st["linkd_lateness_p99_us"],
        "lateness_max_us": st["linkd_lateness_max_us"],
        "srtt_median_ms": float(r.flow_series.srtt_ms.dropna().median()),
        "steal_ms": round(steal_ms() - before, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--cca", default="bbr")
    ap.add_argument("--duration", default="5 s")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    runs = []
    print("request  p50 µs  p99 µs  max µs  srtt median ms  steal ms", flush=True)
    for _ in range(args.pairs):
        for request in (None, 0):
            r = one(args.cca, args.duration, request)
            runs.append(r)
            print(
                f"{'none' if request is None else f'{request} µs':>7}  "
                f"{r['lateness_p50_us']:6.0f}  {r['lateness_p99_us']:6.0f}  "
                f"{r['lateness_max_us']:6.0f}  {r['srtt_median_ms']:14.1f}  {r['steal_ms']:8.0f}",
                flush=True,
            )
    for request in (None, 0):
        mine = [r for r in runs if r["request_us"] == request]
        p99 = [r["lateness_p99_us"] for r in mine]
        print(
            f"{'without' if request is None else 'with'} the request: p99 median "
            f"{statistics.median(p99):.0f} µs, {sum(x > 1000 for x in p99)} of {len(p99)} "
            f"runs above 1 ms; srtt median of medians "
            f"{statistics.median(r['srtt_median_ms'] for r in mine):.1f} ms; steal median "
            f"{statistics.median(r['steal_ms'] for r in mine):.0f} ms"
        )
    if args.json:
        args.json.write_text(json.dumps({"kernel": os.uname().release, "runs": runs}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
