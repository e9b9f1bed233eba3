"""Run estimates against measured CPU time, and reading a long Mahimahi trace (issue 31).

    python bench/reliability/estimates.py [--only NAME ...] [--trace-lines N]

For each case: the scenario is written to a scratch directory, `satcc.engines.sim.estimate`
gives the estimate, and `satcc sim FILE --force --out DIR` runs in a fresh process whose user
CPU time and peak RSS are read from `wait4`; the CPU time of `satcc check` on the same file
(start-up, validation, resolve) is subtracted, so the figure is the simulation's own, which
is what the estimate predicts. The trace case also times `satcc check` alone on a trace of
`--trace-lines` lines (10^7: a 15-minute recording at ~100 Mbit/s). Prints one Markdown table
(BENCHMARKS.md "Reliability at scale"); the per-kind constants in `satcc.engines.sim` are set
from these ratios, rounded so that estimates err high.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SATCC = [sys.executable, "-c", "import sys; from satcc.cli import main; sys.exit(main())"]

LINK = '[[link]]\na = "{a}"\nb = "{b}"\nrate = "{rate}"\ndelay = "{delay}"\n'


def _scenario(name: str, duration: str, links: str, flows: str) -> str:
    return f'[scenario]\nname = "{name}"\nduration = "{duration}"\n\n{links}\n{flows}'


def _flow(cca: str, src: str = "s", dst: str = "d", extra: str = "") -> str:
    return f'[[flow]]\nfrom = "{src}"\nto = "{dst}"\ncca = "{cca}"\n{extra}\n'


def cases(trace: Path) -> dict[str, str]:
    one = LINK.format(a="s", b="d", rate="1 Gbit/s", delay="10 ms")
    dumbbell = "".join(
        LINK.format(a=a, b=b, rate=r, delay="5 ms")
        for a, b, r in (("s1", "r1", "10 Gbit/s"), ("s2", "r1", "10 Gbit/s"),
                        ("r1", "r2", "1 Gbit/s"), ("r2", "d1", "10 Gbit/s"),
                        ("r2", "d2", "10 Gbit/s"))
    )  # fmt: skip
    udp = '[[flow]]\nfrom = "s"\nto = "d"\nproto = "udp"\nrate = "{rate}"\npacket_size = "{size}"\n'
    trace_link = (
        f'[[link]]\na = "s"\nb = "d"\n[link.model]\nkind = "trace"\nmahimahi = "{trace}"\n'
        'delay = "20 ms"\n'
    )
    return {
        "tcp-1g-60s": _scenario("tcp", "60 s", one, _flow("cubic")),
        "tcp-2-sharing-1g-30s": _scenario(
            "share", "30 s", dumbbell, _flow("cubic", "s1", "d1") + _flow("bbr", "s2", "d2")
        ),
        "tcp-4-sharing-1g-30s": _scenario(
            "share4",
            "30 s",
            dumbbell,
            _flow("cubic", "s1", "d1")
            + _flow("bbr", "s2", "d2")
            + _flow("reno", "s1", "d2")
            + _flow("cubic", "s2", "d1"),
        ),
        "udp-1B-200Mbit-3s": _scenario(
            "udp1", "3 s", one, udp.format(rate="200 Mbit/s", size="1 B")
        ),
        "udp-100B-1g-3s": _scenario(
            "udp100", "3 s", one, udp.format(rate="1 Gbit/s", size="100 B")
        ),
        "trace-cubic-60s": _scenario("trace", "60 s", trace_link, _flow("cubic")),
    }


def run(argv: list[str]) -> tuple[float, float, int, int]:
    """(wall s, user CPU s, peak RSS bytes, exit status) of one fresh process."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode() if p.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"{argv[-4:]}: exit {code}: {err.strip()}", file=sys.stderr)
    return wall, usage.ru_utime, usage.ru_maxrss * 1024, code


def write_trace(path: Path, lines: int, per_ms: int = 8) -> None:
    """`lines` opportunities, `per_ms` a millisecond (8: 96 Mbit/s)."""
    with path.open("w") as f:
        for ms in range(1, lines // per_ms + 1):
            f.write(f"{ms}\n" * per_ms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="case names")
    ap.add_argument("--trace-lines", type=int, default=10_000_000)
    args = ap.parse_args()

    from satcc import scenario as sc
    from satcc.engines import sim

    with tempfile.TemporaryDirectory(prefix="satcc-bench-") as tmp:
        d = Path(tmp)
        small = d / "small.trace"
        write_trace(small, 600_000)  # 75 s of 96 Mbit/s: the trace-driven run
        big = d / "big.trace"
        write_trace(big, args.trace_lines)
        print(f"trace: {args.trace_lines:,} lines, {big.stat().st_size / 1e6:.1f} MB\n")
        # reading the long trace: `check` on it, and on the short one for the start-up
        rows = []
        for name, t in (("short", small), ("long", big)):
            f = d / f"check-{name}.toml"
            f.write_text(cases(t)["trace-cubic-60s"])
            wall, user, rss, code = run([*SATCC, "check", str(f)])
            rows.append((name, wall, user, rss, code))
        print("| `satcc check` over a trace | wall s | user CPU s | peak RSS MB | exit |")
        print("|---|---|---|---|---|")
        for name, wall, user, rss, code in rows:
            print(f"| {name} | {wall:.2f} | {user:.2f} | {rss / 1e6:.0f} | {code} |")
        print()

        print("| run | estimated packets | estimate | measured (sim CPU) | ratio | peak RSS MB |")
        print("|---|---|---|---|---|---|")
        for name, text in cases(small).items():
            if args.only and name not in args.only:
                continue
            f = d / f"{name}.toml"
            f.write_text(text)
            est = sim.estimate(sc.resolve(sc.load(f)))
            _, base, _, _ = run([*SATCC, "check", str(f)])
            _, user, rss, code = run([*SATCC, "sim", str(f), "--force", "--out", str(d / name)])
            measured = max(user - base, 1e-3)
            ratio = est.seconds / measured
            print(
                f"| {name} | {est.packets / 1e6:.2f} M | {est.seconds:.2f} s | {measured:.2f} s "
                f"| {ratio:.2f} | {rss / 1e6:.0f} |" + ("" if code == 0 else f" exit {code}")
            )


if __name__ == "__main__":
    main()
