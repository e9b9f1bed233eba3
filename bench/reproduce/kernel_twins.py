"""A kernel design's runs replayed in the simulator: the same scenario, the same seed.

`satcc reproduce --quick --engine emu` runs each study's kernel design (its quick design cut to
what the emulator carries: rates scaled to 100 Mbit/s, shorter runs), and docs/reproduce.md's
"Where the engines disagree" sets its verdicts beside the simulator's quick design, which runs
another path (unless it is given the kernel design's run on the simulator: `satcc reproduce all
--quick --design kernel --engine sim`, doc.py's --kernel-sim, which compares the verdicts). This
replays every run of one kernel campaign directory through the simulator (each run's run.json
holds the scenario as run) and compares the two engines on the same path, run by run: each
flow group's share of the goodput, Jain's index over the groups and over the flows, and the
total goodput, all over the second half of the run (as study 004's claims read it).

    python bench/reproduce/kernel_twins.py KERNEL_CAMPAIGN_DIR [--param rtt_pc2=63.5ms]
        [--out DIR] [--group short-rtt] [--starts nominal|kernel]

KERNEL_CAMPAIGN_DIR: e.g. OUT/004/emu/study004-many-quick-kernel-emu. The simulator's runs go
to --out (default: a temporary directory) and are reused when there. `--starts kernel` starts
each simulator flow when its kernel run's flow did, as `satcc fidelity`'s paired twins do
(satcc.fidelity.suite: `kernel_starts`, `twin_starts`, `with_starts`): a bulk flow one base RTT
of its path before the kernel's first data segment (its handshake then ends, and its first data
leaves, when the kernel's did), never before its SYN; `--starts syn` starts each flow at its
kernel SYN's instant (on a path whose delay varies, as study 000's and 001's Starlink paths, the
handshake's RTT is not the base RTT, and the data instant less the base RTT is off by the
difference; the simulator's handshake on the same channel draws takes the path's own RTT, as
the kernel's did); the default, `nominal`, runs the
scenario's own starts (every flow at 0 unless it says otherwise), as `satcc reproduce --design
kernel --engine sim` does. The columns `k data ms` give each flow's first data instant in the
kernel run (ms from t0, flows by id), `start ms` the simulator's starts (kernel or SYN starts).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))


def second_half(run_dir: Path, duration_s: float, first: str) -> tuple[float, ...]:
    """(first group's share, Jain over the groups, Jain over the flows, total goodput in
    Mbit/s) over t >= duration/2."""
    import pandas as pd

    fs = pd.read_parquet(run_dir / "flow_series.parquet")
    fl = pd.read_parquet(run_dir / "flows.parquet")
    rate = fs[fs["t_s"] >= duration_s / 2].groupby("flow_id")["goodput_bps"].mean()
    group = dict(zip(fl["id"], (n.split(".")[0] for n in fl["name"]), strict=True))
    per_group: dict[str, float] = {}
    for fid, v in rate.items():
        per_group[group[fid]] = per_group.get(group[fid], 0.0) + float(v)

    from satcc.results import jain_index

    def jain(xs: list[float]) -> float:
        j = jain_index(xs)
        return float("nan") if j is None else j

    total = sum(per_group.values())
    share = per_group.get(first, 0.0) / total if total else float("nan")
    return share, jain(list(per_group.values())), jain(list(rate)), total / 1e6


STARTS = ("nominal", "kernel", "syn")


def replay(
    run_json: Path, out: Path, starts: str = "nominal", starts_of: Path | None = None
) -> tuple[Path, dict[str, Any]]:
    """Kernel run `run_json` (its run.json) run again in the simulator, same scenario and seed,
    into `out` (reused when there: `<run_id>` with nominal starts, `<run_id>-kstarts` with the
    kernel's, `<run_id>-synstarts` at the kernel's SYNs); returns the simulator run's directory
    and its run.json document as `satcc reproduce` would write it (engine `sim`, the scenario
    as run; with the kernel's starts also `starts_from`, as satcc fidelity's twins record it).
    `starts_of`: take the instants from this other kernel run (its run.json; the same flows)
    instead of the run's own (a start draw of the kernel's, on another seed's channel)."""
    import satcc
    from satcc.fidelity import suite
    from satcc.scenario import from_dict, resolve

    run = json.loads(run_json.read_text())
    doc = copy.deepcopy(run["scenario"])
    doc["scenario"]["engine"] = "sim"
    extra: dict[str, Any] = {}
    name = run["run_id"]
    if starts in ("kernel", "syn"):
        src = json.loads(starts_of.read_text()) if starts_of is not None else run
        campaign = (starts_of or run_json).parent.parent.parent
        syn, data = suite.kernel_starts(campaign, src["run_id"])
        # "syn": twin_starts' rule for a flow without a data instant, its SYN's
        use = [None] * len(syn) if starts == "syn" else data
        config = resolve(from_dict(copy.deepcopy(doc)), run["seed"])
        at = suite.twin_starts(config, syn, use)
        doc = suite.with_starts(doc, at)
        extra = {
            "starts_from": {
                "run_id": src["run_id"],
                "first_syn_ns": syn,
                "first_data_ns": data,
                "start_ns": at,
            }
        }
        name += "-kstarts" if starts == "kernel" else "-synstarts"
        if starts_of is not None:
            name += f"-of-{src['run_id']}"
    twin = out / name
    if not (twin / "flow_series.parquet").exists():
        satcc.run(copy.deepcopy(doc), engine="sim", seed=run["seed"]).write(twin)
    return twin, {**run, "engine": "sim", "scenario": doc, **extra}


def _ms(xs: list[int | None] | None) -> str:
    return " ".join("-" if x is None else f"{x / 1e6:.1f}" for x in xs or [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaign", type=Path, help="a kernel campaign directory")
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="only runs whose parameter NAME is VALUE (spaces ignored; repeatable)",
    )
    ap.add_argument("--out", type=Path, help="where the simulator's runs go")
    ap.add_argument("--group", default="short-rtt", help="the group whose share is printed")
    ap.add_argument(
        "--starts",
        choices=STARTS,
        default="nominal",
        help="the simulator flows' starts: the scenario's own, or the kernel run's (module doc)",
    )
    args = ap.parse_args()

    import pandas as pd

    from satcc.units import parse_duration

    want = {}
    for p in args.param:
        k, _, v = p.partition("=")
        want[k] = v.replace(" ", "")
    out = args.out or Path(tempfile.mkdtemp(prefix="satcc-kernel-twins-"))
    rows = []
    for rj in sorted((args.campaign / "runs").glob("*/run.json")):
        run = json.loads(rj.read_text())
        if run["engine"] != "emu":
            continue
        params = run["params"]
        if any(str(params.get(k, "")).replace(" ", "") != v for k, v in want.items()):
            continue
        duration_s = parse_duration(run["scenario"]["scenario"]["duration"]) / 1e9
        twin, twin_doc = replay(rj, out, args.starts)
        stats = json.loads((rj.parent / "summary.json").read_text()).get("stats") or {}
        k_share, k_jain, k_jf, k_mbps = second_half(rj.parent, duration_s, args.group)
        s_share, s_jain, s_jf, s_mbps = second_half(twin, duration_s, args.group)
        case = {k: v for k, v in params.items() if not k.endswith("_ms") and k not in want}
        rows.append(
            {
                **case,
                "seed": run["seed"],
                "k data ms": _ms(stats.get("first_data_ns")),
                **(
                    {"start ms": _ms(twin_doc["starts_from"]["start_ns"])}
                    if "starts_from" in twin_doc
                    else {}
                ),
                "kernel share": k_share,
                "sim share": s_share,
                "kernel Jain (groups)": k_jain,
                "sim Jain (groups)": s_jain,
                "kernel Jain (flows)": k_jf,
                "sim Jain (flows)": s_jf,
                "kernel Mbit/s": k_mbps,
                "sim Mbit/s": s_mbps,
            }
        )
    if not rows:
        print("no kernel run matches", file=sys.stderr)
        return 1
    df = pd.DataFrame(rows)
    keys = [
        c
        for c in df.columns
        if c not in ("seed", "k data ms", "start ms") and not c.startswith(("kernel", "sim"))
    ]
    pd.set_option("display.width", 200)
    print(df.sort_values([*keys, "seed"]).round(3).to_string(index=False))
    print("\nmedians over seeds:")
    values = [c for c in df.columns if c.startswith(("kernel", "sim"))]
    print(df.groupby(keys)[values].median().round(3).to_string() if keys else df[values].median())
    return 0


if __name__ == "__main__":
    sys.exit(main())
