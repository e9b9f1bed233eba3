"""Receiver stalls in a real-kernel run, read from the destination's capture.

A Linux receiver acknowledges every second full segment (or sooner); when the receiving process
holds the socket, or its softirq does not run, arriving segments wait (in the socket's backlog or
the device's queue) and one ACK then covers all of them: a stretch ACK. This counts them per flow
in a `satcc emu` run's destination capture (`OUT/emu/capture-N-dst.pcap`: each data segment as it
reaches the receiving host, each ACK as it leaves):

    segments per ACK      the newly acknowledged segments each ACK covers (sizes 1-5, 6+)
    stalls                ACKs covering more than --stretch segments that all arrived in order
                          (an ACK that fills a loss's hole covers many segments too: not counted)
    stalled share         the segments those ACKs cover, over all acknowledged segments
    wait                  for each stall, the oldest covered segment's arrival to the ACK (ms)

    python bench/emu/receiver_stalls.py CAPTURE [--from S] [--to S] [--stretch N]
    (S: seconds from the capture's first frame; tshark reads the capture)
"""

from __future__ import annotations

import argparse
import bisect
import statistics
import subprocess
import sys
from collections import Counter, defaultdict

FIELDS = (
    "frame.time_epoch",
    "ip.src",
    "tcp.srcport",
    "ip.dst",
    "tcp.dstport",
    "tcp.seq",
    "tcp.ack",
    "tcp.len",
)


def read(capture: str):
    """(time, sender endpoint, receiver endpoint, seq, ack, payload) for every TCP frame."""
    cmd = ["tshark", "-r", capture, "-Y", "tcp", "-T", "fields"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        t, src, sport, dst, dport, seq, ack, length = line.split("\t")
        yield float(t), (src, int(sport)), (dst, int(dport)), int(seq), int(ack), int(length)


def flow_stalls(
    data: list[tuple[float, int, int]],
    acks: list[tuple[float, int]],
    lo: float,
    hi: float,
    stretch: int,
):
    """data: (arrival, seq, end) first arrivals by seq; acks: (time, ack) in capture order."""
    data.sort(key=lambda d: d[1])
    ends = [d[2] for d in data]
    sizes: Counter[int] = Counter()
    stalls, stalled, total, waits = 0, 0, 0, []
    prev = 0
    for t, ack in acks:
        if ack <= prev:
            continue
        first, last = bisect.bisect_right(ends, prev), bisect.bisect_right(ends, ack)
        prev = ack
        covered = data[first:last]
        if not covered or not lo <= t <= hi:
            continue
        n = len(covered)
        sizes[min(n, stretch + 1)] += 1
        total += n
        in_order = all(covered[i][0] >= covered[i - 1][0] for i in range(1, n))
        if n > stretch and in_order:
            stalls += 1
            stalled += n
            waits.append((t - covered[0][0]) * 1e3)
    return sizes, stalls, stalled, total, waits


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("capture")
    p.add_argument(
        "--from", dest="lo", type=float, default=0.0, help="seconds from the first frame"
    )
    p.add_argument("--to", dest="hi", type=float, default=float("inf"))
    p.add_argument(
        "--stretch", type=int, default=5, help="an ACK covering more segments is a stall"
    )
    a = p.parse_args()
    data: dict[tuple, dict[int, tuple[float, int, int]]] = defaultdict(dict)
    acks: dict[tuple, list[tuple[float, int]]] = defaultdict(list)
    t0 = None
    last = 0.0
    for t, src, dst, seq, ack, length in read(a.capture):
        t0 = t if t0 is None else t0
        last = t - t0
        if length > 0:
            data[src].setdefault(seq, (t - t0, seq, seq + length))
        else:
            acks[dst].append((t - t0, ack))
    span = min(a.hi, last) - a.lo
    for flow in sorted(data):
        sizes, stalls, stalled, total, waits = flow_stalls(
            list(data[flow].values()), acks[flow], a.lo, a.hi, a.stretch
        )
        q = statistics.quantiles(waits, n=10) if len(waits) >= 10 else None
        wait = f"{q[0]:.2f} / {q[4]:.2f} / {q[8]:.2f}" if q else "-"
        acked = sum(sizes.values())
        print(
            f"{flow[0]}:{flow[1]}  ACKs {acked}, segments {total} ({total / max(acked, 1):.2f} an ACK), "
            f"by size {dict(sorted(sizes.items()))}; stalls {stalls} ({stalls / max(span, 1e-9):.1f}/s), "
            f"{100 * stalled / max(total, 1):.1f} % of segments; wait p10 / p50 / p90 {wait} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
