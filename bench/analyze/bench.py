"""Benchmark: satcc's capture analyzer vs `tshark -T fields` with the tcp.analysis flags.

Makes its own capture (a real 1 Gbit/s namespace run: client - router with tbf - server,
iperf3 cubic, tcpdump -s 128 at the client) of at least 1.5 million packets, then times, on one
core (taskset):
  * tshark -n -r FILE -Y 'tcp && !icmp && !icmpv6' -T fields -e frame.number ... -e
    tcp.analysis.{retransmission,fast_retransmission,spurious_retransmission,out_of_order,
    lost_segment,duplicate_ack}            (the per-packet flags, what studies 000/001 ran)
  * target/release/satcc-pcap FILE --packets (the Rust analyzer computing the same per-packet
    flags plus flows, bins and RTT)
  * satcc.analyze.read_capture(FILE, packets=True) (the Python API, DataFrames included)
  * `satcc analyze FILE --out DIR` (the CLI end to end: start-up, analysis, results written)
and checks that satcc's per-packet tcp.len, tcp.stream and six flags equal tshark's.

usage: sudo .venv/bin/python bench/analyze/bench.py [--seconds 20] [--pcap FILE] [--keep]
Prints one JSON line with the figures (copied into BENCHMARKS.md by hand).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from satcc.analyze import read_capture, testbed
from satcc.analyze import tshark as ts
from satcc.analyze.capture import FLAG_NAMES, RETRANSMITTED_ANY

ROOT = Path(__file__).resolve().parents[2]
RUST_BIN = ROOT / "target" / "release" / "satcc-pcap"
MIN_PACKETS = 1_500_000
CORE = "1"


def count_frames(path: Path) -> int:
    out = subprocess.run([str(RUST_BIN), str(path)], capture_output=True, text=True, check=True)
    return int(out.stderr.split("frames ")[1].split()[0])


def make_capture(path: Path, seconds: int) -> int:
    while True:
        testbed.iperf_capture(
            path,
            cca="cubic",
            seconds=seconds,
            rate="1gbit",
            queue_bytes=1_000_000,
            burst_bytes=200_000,
            buffer_kib=262144,
        )
        n = count_frames(path)
        print(f"capture: {n} frames in {seconds} s", file=sys.stderr)
        if n >= MIN_PACKETS:
            return n
        seconds = int(seconds * MIN_PACKETS / max(n, 1) * 1.2) + 1


def timed(cmd: list[str], out_path: Path | None = None) -> float:
    return timed_cpu(cmd, out_path)[0]


def timed_cpu(cmd: list[str], out_path: Path | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of `cmd` on CORE."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(out_path or os.devnull, "w") as fh:
        subprocess.run(
            ["taskset", "-c", CORE, *cmd], stdout=fh, stderr=subprocess.DEVNULL, check=True
        )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--pcap", type=Path, help="use this capture instead of making one")
    ap.add_argument("--keep", action="store_true", help="keep the capture it made")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if not RUST_BIN.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "satcc-pcap"], cwd=ROOT, check=True)
    tmp = Path(tempfile.mkdtemp(prefix="satcc-bench-"))
    pcap = a.pcap or tmp / "bench.pcap"
    if a.pcap is None:
        if reason := testbed.available():
            print(f"cannot make the capture: {reason}", file=sys.stderr)
            return 1
        frames = make_capture(pcap, a.seconds)
    else:
        frames = count_frames(pcap)
    size = pcap.stat().st_size
    # warm the page cache so both tools read from memory
    pcap.read_bytes()

    tshark_out = tmp / "tshark.tsv"
    t_tshark, cpu_tshark = timed_cpu(ts.command(pcap), tshark_out)
    t_rust = min(timed([str(RUST_BIN), str(pcap), "--packets"]) for _ in range(a.repeat))
    t_py = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        cap = read_capture(pcap, packets=True)
        t_py.append(time.perf_counter() - t0)

    satcc_exe = Path(sys.executable).parent / "satcc"
    cli_runs = []
    for _ in range(a.repeat):
        shutil.rmtree(tmp / "cli", ignore_errors=True)
        cli_runs.append(
            timed_cpu([str(satcc_exe), "analyze", str(pcap), "--out", str(tmp / "cli")])
        )
    t_cli, cpu_cli = min(cli_runs)
    shutil.rmtree(tmp / "cli", ignore_errors=True)

    theirs = ts.parse_fields(tshark_out.read_text()).set_index("frame")
    ours = cap.packets[cap.packets["proto"] == "tcp"].set_index("frame")
    same = list(ours.index) == list(theirs.index)
    same = same and bool((ours["len"].to_numpy() == theirs["len"].to_numpy()).all())
    same = same and bool((ours["conn"].to_numpy() == theirs["stream"].to_numpy()).all())
    counts = {}
    for name in ts.FLAGS:
        bit = RETRANSMITTED_ANY if name == "retransmission" else 1 << FLAG_NAMES.index(name)
        mine = (ours["analysis"].to_numpy() & bit) != 0
        same = same and bool((mine == theirs[name].to_numpy()).all())
        counts[name] = int(np.count_nonzero(theirs[name].to_numpy()))
    res = {
        "frames": frames,
        "tcp_packets": len(theirs),
        "file_mb": round(size / 1e6, 1),
        "tshark_s": round(t_tshark, 3),
        "satcc_rust_s": round(t_rust, 3),
        "satcc_python_s": round(min(t_py), 3),
        "satcc_cli_s": round(t_cli, 3),
        "tshark_cpu_s": round(cpu_tshark, 3),
        "satcc_cli_cpu_s": round(cpu_cli, 3),
        "tshark_pps": round(frames / t_tshark),
        "satcc_rust_pps": round(frames / t_rust),
        "satcc_python_pps": round(frames / min(t_py)),
        "ratio_rust": round(t_tshark / t_rust, 1),
        "ratio_python": round(t_tshark / min(t_py), 1),
        "ratio_cli": round(t_tshark / t_cli, 1),
        "ratio_cli_cpu": round(cpu_tshark / cpu_cli, 1),
        "identical": same,
        "flag_counts": counts,
    }
    print(json.dumps(res))
    if a.pcap is None and a.keep:
        print(f"capture kept: {pcap}", file=sys.stderr)
    elif a.pcap is None:
        pcap.unlink()
    tshark_out.unlink()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
