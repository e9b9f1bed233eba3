"""Run estimates against measured CPU time, and reading a long Mahimahi trace (issue 31).

    python bench/reliability/estimates.py [--only NAME ...] [--trace-lines N]
    python bench/reliability/estimates.py --in-process [--repeat 3] [--only NAME ...]

For each case: the scenario is written to a scratch directory, `satcc.engines.sim.estimate`
gives the estimate, and `satcc sim FILE --force --out DIR` runs in a fresh process whose user
CPU time and peak RSS are read from `wait4`; the CPU time of `satcc check` on the same file
(start-up, validation, resolve) is subtracted, so the figure is the simulation's own, which
is what the estimate predicts. The trace case also times `satcc check` alone on a trace of
`--trace-lines` lines (10^7: a 15-minute recording at ~100 Mbit/s). Prints one Markdown table
(BENCHMARKS.md "Reliability at scale"); the per-kind constants in `satcc.engines.sim` are set
from these ratios, rounded so that estimates err high.

`--in-process` measures instead what `tests/test_reliability.py` measures: the CPU time
(`time.process_time`) of `_native.run_sim` on the resolved scenario in this process, the
least of `--repeat` runs (contention on a shared machine only adds), and prints beside each
case the constant it implies (the constant times measured / estimated: one kind of packet per
case, UDP's two constants solved from its two cases).
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


# the constants each calibration case sets (`--in-process`)
CONSTANT_OF = {
    "tcp-1g-60s": "NS_PER_PACKET_HOP",
    "tcp-2-sharing-1g-30s": "NS_PER_PACKET_HOP",
    "tcp-4-sharing-1g-30s": "NS_PER_PACKET_HOP",
    "trace-cubic-60s": "NS_PER_TRACE_HOP",
}
UDP_CASES = ("udp-1B-200Mbit-3s", "udp-100B-1g-3s")


def _parts(sim, config, names: tuple[str, ...]) -> list[float]:
    """The estimate's seconds per ns of each named constant (the others set to 0): solving
    measured seconds = sum(part x constant) gives the constants in ns."""
    saved = {n: getattr(sim, n) for n in names}
    out = []
    try:
        for n in names:
            for m in names:
                setattr(sim, m, 1 if m == n else 0)
            out.append(sim.estimate(config).seconds)
    finally:
        for n, v in saved.items():
            setattr(sim, n, v)
    return out


def in_process(args) -> None:
    from satcc import _native
    from satcc import scenario as sc
    from satcc.engines import sim

    with tempfile.TemporaryDirectory(prefix="satcc-bench-") as tmp:
        small = Path(tmp) / "small.trace"
        write_trace(small, 600_000)
        print(
            "| run | estimated packets | estimate | measured (run_sim CPU, least of "
            f"{args.repeat}) | ratio | constant implied |"
        )
        print("|---|---|---|---|---|---|")
        udp = {}
        for name, text in cases(small).items():
            if args.only and name not in args.only:
                continue
            f = Path(tmp) / f"{name}.toml"
            f.write_text(text)
            config = sc.resolve(sc.load(f))
            est = sim.estimate(config)
            times = []
            for _ in range(args.repeat):
                started = time.process_time()
                _native.run_sim(config)
                times.append(time.process_time() - started)
            measured = min(times)
            implied = ""
            if name in CONSTANT_OF:
                const = CONSTANT_OF[name]
                implied = f"{const} {getattr(sim, const) * measured / est.seconds:.0f} ns"
            if name in UDP_CASES:
                udp[name] = (_parts(sim, config, ("NS_PER_UDP_SENT", "NS_PER_UDP_HOP")), measured)
            print(
                f"| {name} | {est.packets / 1e6:.2f} M | {est.seconds:.2f} s | {measured:.3f} s "
                f"({', '.join(f'{t:.3f}' for t in times)}) | {est.seconds / measured:.2f} "
                f"| {implied} |"
            )
        if len(udp) == 2:
            (a1, b1), t1 = udp[UDP_CASES[0]]
            (a2, b2), t2 = udp[UDP_CASES[1]]
            det = a1 * b2 - a2 * b1
            sent, hop = (t1 * b2 - t2 * b1) / det, (a1 * t2 - a2 * t1) / det
            print(
                f"\nUDP, solved from its two cases: NS_PER_UDP_SENT {sent:.0f} ns, "
                f"NS_PER_UDP_HOP {hop:.0f} ns"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="case names")
    ap.add_argument("--trace-lines", type=int, default=10_000_000)
    ap.add_argument("--in-process", action="store_true", help="time _native.run_sim here")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.in_process:
        in_process(args)
        return

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
