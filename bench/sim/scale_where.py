"""Where a simulated second's instructions go: two cachegrind outputs of the same bench_sim case
for T1 and T2 simulated seconds, (T2's counts - T1's) / (T2 - T1) per group of source lines.

    CARGO_TARGET_DIR=/tmp/lt CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \\
        cargo build --release -p satcc-sim --example bench_sim
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=a.cg \\
        /tmp/lt/release/examples/bench_sim ARGS --secs 4          # and b.cg with --secs 8
    python bench/sim/scale_where.py a.cg b.cg 4 [--lines]

A build with line tables charges an inlined function's instructions to its own source line, so
the groups (by file and function) hold wherever the optimiser put the code. `--lines` prints the
source lines that cost most instead. Used for BENCHMARKS.md, "Issue 43: the cost as a run grows,
2026-11-30".
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter

# (group, test on file, line, function); the first that matches takes the line.
GROUPS = [
    (
        "event heaps",
        lambda f, ln, fn: (
            f.endswith("events.rs")
            # the heap's unchecked reads, inlined into the event loop
            or (
                f.endswith("core/src/slice/index.rs")
                and ln in (253, 266)
                and fn.endswith("World<T>::run")
            )
        ),
    ),
    (
        "per-bin series",
        lambda f, ln, fn: (
            f.endswith("world/series.rs") or (fn.endswith("::dispatch") and "/alloc/" in f)
        ),
    ),
    (
        "loss recovery, SACK, RACK",
        lambda f, ln, fn: (
            bool(
                re.search(
                    r"recovery::|undo::|sacktag|clean_rtx_queue_walk|retransmit_skb|"
                    r"xmit_retransmit_queue|btree|Scoreboard::|identify_packet_loss|materialize|first_sacked",
                    fn,
                )
            )
            or f.endswith(("recovery.rs", "undo.rs"))
            or "btree" in f
            or "vec_deque" in f
        ),
    ),
    (
        "RTT histogram",
        lambda f, ln, fn: "RttHistogram" in fn or "log_fma" in fn or f.endswith("tcp/stats.rs"),
    ),
    (
        "timer events (handlers, emit)",
        lambda f, ln, fn: (
            bool(
                re.search(r"::dispatch|::emit$|timers::|on_timer|send_ack|schedule_loss_probe", fn)
            )
            or f.endswith(("tcp/timer.rs", "sender/timers.rs"))
        ),
    ),
]
REST = "the rest (the packets' own path)"


def counts(path: str) -> Counter[tuple[str, int, str]]:
    """Instructions per (file, line, function) of one cachegrind output (`Ir` only)."""
    out: Counter[tuple[str, int, str]] = Counter()
    fl = fn = ""
    with open(path) as f:
        for line in f:
            if line.startswith("fl="):
                fl = line[3:].strip()
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif line[:1].isdigit():
                ln, n = line.split()[:2]
                out[(fl, int(ln), fn)] += int(n)
    return out


def group(f: str, ln: int, fn: str) -> str:
    return next((name for name, test in GROUPS if test(f, ln, fn)), REST)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("t1_out", help="cachegrind output of the T1 run")
    ap.add_argument("t2_out", help="cachegrind output of the T2 run")
    ap.add_argument("dt", type=float, help="T2 - T1, simulated seconds")
    ap.add_argument("--lines", action="store_true", help="the 40 costliest source lines instead")
    args = ap.parse_args(argv)
    a, b, dt = counts(args.t1_out), counts(args.t2_out), args.dt
    diff = Counter(b)
    diff.subtract(a)
    if args.lines:
        top = sorted(diff.items(), key=lambda kv: -kv[1])[:40]
        for (f, ln, fn), n in top:
            print(f"{n / dt / 1e6:9.2f} M/s  {f}:{ln}  {fn[:80]}")
        return 0
    by: Counter[str] = Counter()
    for (f, ln, fn), n in diff.items():
        by[group(f, ln, fn)] += n
    for name, n in by.most_common():
        print(f"{name:34} {n / dt / 1e6:10.2f} M instructions / simulated s")
    print(f"{'total':34} {sum(by.values()) / dt / 1e6:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
