"""Table of a bench/sim/run.sh run: satcc vs ns-3 per case, the ratios, and satcc's
event rate against the issue's target (>= 5 million packet events per second, one core).

Usage: python3 bench/sim/report.py bench/out/sim/<date>
Reads results.jsonl (one line per run: case, rep, load, the tool's JSON) and cases.txt
(case|description|why ns-3 was not run).
Times are medians over the runs of a case and tool; counts and goodputs are deterministic
(same flags and seed), and a mismatch between runs is reported.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

# The speed target: packet events per second on one core, release build.
TARGET_EVENTS_PER_S = 5e6


def verdict(events_per_s: float) -> str:
    return "meets" if events_per_s >= TARGET_EVENTS_PER_S else "below"


def jain(xs: list[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2)."""
    sq = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * sq) if sq > 0 else 0.0


def summarise(runs: list[dict]) -> dict:
    res = [r["result"] for r in runs]
    first = res[0]
    deterministic = all(
        (x["events"], x["data_segments"], x["goodput_bps"])
        == (first["events"], first["data_segments"], first["goodput_bps"])
        for x in res
    )
    wall = statistics.median(x["wall_s"] for x in res)
    cpus = [x["cpu_s"] for x in res if x.get("cpu_s") is not None]
    return {
        "runs": len(res),
        "wall": wall,
        "cpu": statistics.median(cpus) if cpus else None,
        "events": first["events"],
        "packets": first["packets"],
        "segments": first["data_segments"],
        "retrans": first.get("retransmissions"),
        "goodput": first["goodput_total_bps"],
        "flows": first["goodput_bps"],
        "groups": first["groups"],
        "load": max(r["load1_before"] for r in runs),
        "deterministic": deterministic,
    }


def group_goodputs(s: dict) -> list[tuple[float, float]]:
    """(RTT ms, mean goodput bit/s) per RTT group, flows being listed group by group."""
    out, i = [], 0
    for rtt, n in s["groups"]:
        xs = s["flows"][i : i + int(n)]
        out.append((rtt, sum(xs) / len(xs)))
        i += int(n)
    return out


def main(out_dir: str) -> None:
    d = Path(out_dir)
    runs = [
        json.loads(line) for line in (d / "results.jsonl").read_text().splitlines() if line.strip()
    ]
    cli_file = d / "cli.jsonl"  # `satcc sim` end to end (run.sh, case a)
    clis = (
        [json.loads(line) for line in cli_file.read_text().splitlines() if line.strip()]
        if cli_file.exists()
        else []
    )
    descs, why_not = {}, {}
    for line in (d / "cases.txt").read_text().splitlines():
        if line.strip():
            c, desc, why = (line.split("|", 2) + ["", ""])[:3]
            descs[c], why_not[c] = desc, why
    by: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        by.setdefault((r["case"], r["result"]["tool"].split("-")[0]), []).append(r)

    hdr = f"{'case':<4} {'tool':<8} {'runs':>4} {'wall s':>9} {'cpu s':>9} {'events':>11} {'data segs':>10} {'retrans':>8} {'segs/wall-s':>12} {'goodput Mbit/s':>14} {'load':>5}"
    print(hdr)
    print("-" * len(hdr))
    tools = {}
    for c in descs:
        for tool, name in (("satcc", "satcc"), ("ns", "ns-3.37")):
            if (c, tool) not in by:
                continue
            s = summarise(by[(c, tool)])
            tools[(c, tool)] = s
            cpu = f"{s['cpu']:9.3f}" if s["cpu"] is not None else f"{'-':>9}"
            flag = "" if s["deterministic"] else "  (counts differ between runs!)"
            print(
                f"{c:<4} {name:<8} {s['runs']:>4} {s['wall']:9.3f} {cpu} {s['events']:>11,} {s['segments']:>10,} "
                f"{s['retrans'] if s['retrans'] is not None else '-':>8} "
                f"{s['segments'] / s['wall']:>12,.0f} {s['goodput'] / 1e6:>14.2f} {s['load']:>5.2f}{flag}"
            )
    print()
    for c, desc in descs.items():
        print(f"case {c}: {desc}")
        sa, ns = tools.get((c, "satcc")), tools.get((c, "ns"))
        if sa and ns:
            wall_ratio = sa["wall"] / ns["wall"]
            seg_ratio = (sa["segments"] / sa["wall"]) / (ns["segments"] / ns["wall"])
            line = f"  satcc/ns-3 wall time {wall_ratio:.4f} (ns-3 {1 / wall_ratio:.0f}x longer), segments/s {seg_ratio:.0f}x"
            if sa["cpu"] and ns["cpu"]:
                cpu_seg = (sa["segments"] / sa["cpu"]) / (ns["segments"] / ns["cpu"])
                line += f"; by CPU time: {sa['cpu'] / ns['cpu']:.4f}, segments/cpu-s {cpu_seg:.0f}x"
            print(line)
            diff = (
                (sa["goodput"] - ns["goodput"]) / ns["goodput"] * 100
                if ns["goodput"]
                else float("nan")
            )
            print(
                f"  goodput satcc {sa['goodput'] / 1e6:.2f} vs ns-3 {ns['goodput'] / 1e6:.2f} Mbit/s ({diff:+.1f} %)"
            )
            if len(sa["groups"]) > 1 or len(sa["flows"]) > 1:
                for (rtt, g_sa), (_, g_ns) in zip(group_goodputs(sa), group_goodputs(ns)):
                    print(
                        f"    RTT {rtt:g} ms: mean per flow satcc {g_sa / 1e6:.2f}, ns-3 {g_ns / 1e6:.2f} Mbit/s"
                    )
                print(
                    f"    Jain index over flows: satcc {jain(sa['flows']):.3f}, ns-3 {jain(ns['flows']):.3f}"
                )
        elif sa:
            print(f"  satcc only (ns-3 {why_not[c] or 'not run'})")
            if len(sa["groups"]) > 1:
                for rtt, g in group_goodputs(sa):
                    print(f"    RTT {rtt:g} ms: mean per flow satcc {g / 1e6:.2f} Mbit/s")
                print(f"    Jain index over flows: satcc {jain(sa['flows']):.3f}")
        cli = [r for r in clis if r["case"] == c]
        if cli and ns:
            wall = statistics.median(r["wall_s"] for r in cli)
            print(
                f"  `satcc sim` end to end (start-up, resolve, simulation, results written): "
                f"{wall:.3f} s wall, median of {len(cli)}; ns-3 {ns['wall'] / wall:.1f}x longer"
            )
            if sa and "data_segments" in cli[0]:  # bench/cli/case-a.toml: bench_sim's work
                print(
                    f"    its data segments {cli[0]['data_segments']:,} (bench_sim "
                    f"{sa['segments']:,}), goodput {cli[0]['goodput_total_bps'] / 1e6:.2f} Mbit/s"
                )
        if sa:
            # The target's "packet events": read as scheduler events (mostly per-packet: a
            # transmission end and an arrival per hop) and, stricter, as packet hops.
            for label, count in (("events", sa["events"]), ("packet hops", sa["packets"])):
                by_wall = count / sa["wall"]
                line = (
                    f"  satcc {label}: {by_wall / 1e6:.1f} M/s by wall time ({verdict(by_wall)} "
                    f"the {TARGET_EVENTS_PER_S / 1e6:.0f} M target)"
                )
                if sa["cpu"]:
                    by_cpu = count / sa["cpu"]
                    line += f", {by_cpu / 1e6:.1f} M per CPU-second ({verdict(by_cpu)})"
                print(line)
    print()
    print("events = scheduler events executed; packets = packets handed to a link (hops);")
    print(
        "data segs = data segments the senders sent, retransmissions included; load = 1-min load average before the run (max over runs)."
    )
    print(
        "On a loaded machine wall time overstates both tools' cost; CPU time (the tool's thread) "
        "much less, though shared caches still move it."
    )


if __name__ == "__main__":
    main(sys.argv[1])
