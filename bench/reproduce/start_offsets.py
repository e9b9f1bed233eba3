"""The kernel column's start instants: how far apart a kernel run's flows started, and whether
starting the simulator's flows there moves `satcc reproduce`'s verdicts.

A kernel run records when each flow's first SYN and first data segment reached satcc-linkd
(summary.json `stats.first_syn_ns`, `stats.first_data_ns`, ns from t0); the simulator twin of
the kernel design (`satcc reproduce --quick --design kernel --engine sim`) starts every flow at
its scenario's own start (0 in the kernel designs).

    python bench/reproduce/start_offsets.py offsets KERNEL_OUT
    python bench/reproduce/start_offsets.py judge [--starts kernel|syn] KERNEL_OUT SIM_OUT
        NEW_OUT STUDY...

`offsets`: per kernel campaign of KERNEL_OUT (a `satcc reproduce --quick --engine emu` output),
over its runs with two or more flows seen: the median, p90 and largest spread (max - min over a
run's flows, ms) of the first data instants, of the first SYNs, and of the simulator starts that
put each flow's first data where the kernel's left (`satcc.fidelity.suite.twin_starts`: one base
RTT of the flow's path before it, never before the SYN; the first data spread less the paths'
own handshake difference, which the simulator has too); over every run, the latest flow's first
SYN and the latest start so computed (how late after t0 the kernel's flows began); and over every
flow, its handshake (first data less first SYN) less its path's base RTT (the resolver's
`routes.base_delay_ns` both ways): the kernel's writer delay on a fixed path, plus the path's
own delay variation on Starlink's.

`judge`: for each STUDY, a copy of SIM_OUT's kernel-design campaigns (the twin) in NEW_OUT whose
every run is run again with the kernel run's starts (bench/reproduce/kernel_twins.py `replay`,
its `--starts kernel`, the default, or `--starts syn`: the kernel run of KERNEL_OUT with the same parameters and seed; same
scenario, same seed), then each study's claims measured and judged as `satcc reproduce` judges
the kernel design, on the three: the kernel column, the twin with nominal starts, the twin with
the kernel's starts. Prints every finding whose verdicts differ between any two, with the value
per seed of a paired finding.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def campaigns(root: Path, study: str, engine: str) -> dict[str, Path]:
    """A study's campaign directories in a `satcc reproduce` output, by the campaign's name as
    the study's `measure` keys it (the directory name less its design suffix, `-quick...`)."""
    d = root / study / engine
    out = {}
    for c in sorted(d.iterdir()) if d.is_dir() else []:
        if (c / "campaign.json").is_file():
            out[c.name.split("-quick")[0]] = c
    return out


def run_key(run: dict[str, Any]) -> str:
    return json.dumps([run["params"], run["seed"]], sort_keys=True)


def spread(xs: list[int | None] | None) -> float | None:
    v = [x for x in xs or [] if x is not None]
    return (max(v) - min(v)) / 1e6 if len(v) >= 2 else None


def quantiles(xs: list[float]) -> tuple[float, float, float]:
    """Median, p90 (nearest rank) and largest."""
    s = sorted(xs)
    p90 = s[min(len(s) - 1, max(0, -(-9 * len(s) // 10) - 1))]
    return statistics.median(s), p90, s[-1]


def run_offsets(run_dir: Path) -> dict[str, Any]:
    """One kernel run's instants: spreads (ms) of the first data, the first SYNs and the
    simulator starts that reproduce them, and its latest start (ms)."""
    from satcc.fidelity import suite
    from satcc.scenario import from_dict, resolve

    run = json.loads((run_dir / "run.json").read_text())
    stats = json.loads((run_dir / "summary.json").read_text()).get("stats") or {}
    syn = stats.get("first_syn_ns")
    data = stats.get("first_data_ns") or [None] * len(syn or [])
    if not isinstance(syn, list) or all(x is None for x in syn):
        return {}
    doc = json.loads(json.dumps(run["scenario"]))
    doc["scenario"]["engine"] = "sim"
    config = resolve(from_dict(doc), run["seed"])
    starts = suite.twin_starts(config, syn, data)
    seen = [x for x in starts if x is not None]
    syns = [x for x in syn if x is not None]
    delay = config["routes"]["base_delay_ns"]
    hs = []
    for f, s, d in zip(config["flows"], syn, data, strict=False):
        if s is not None and d is not None:
            hs.append((d - s - delay[f["src"]][f["dst"]] - delay[f["dst"]][f["src"]]) / 1e6)
    return {
        "data": spread(data),
        "syn": spread(syn),
        "start": spread(starts),
        "latest syn": max(syns) / 1e6 if syns else None,
        "latest": max(seen) / 1e6 if seen else None,
        "hs": hs,
    }


KEYS = ("data", "syn", "start", "latest syn", "latest")


def offsets(kernel_out: Path) -> int:
    rows = []
    for study in sorted(p.name for p in kernel_out.iterdir() if p.is_dir()):
        for c in campaigns(kernel_out, study, "emu").values():
            per = [run_offsets(r) for r in sorted((c / "runs").glob("*")) if r.is_dir()]
            per = [p for p in per if p]
            if not per:
                continue
            row = {"campaign": c.name, "runs": len(per)}
            for key in KEYS:
                v = [p[key] for p in per if p.get(key) is not None]
                row[key] = quantiles(v) if v else None
                row[f"{key} n"] = len(v)
            hs = [x for p in per for x in p["hs"]]
            row["hs"] = (min(hs), statistics.median(hs), max(hs)) if hs else None
            rows.append(row)
    if not rows:
        print("no kernel run with recorded start instants", file=sys.stderr)
        return 1
    print(
        "campaign | runs | ms, median / p90 / max over the runs (n: runs counted): first data "
        "spread | first SYN spread | simulator-start spread (data less base RTT) | latest SYN "
        "after t0 | latest simulator start after t0 | handshake less base RTT, min / median / "
        "max over the flows"
    )
    for r in rows:
        cells = []
        for key in KEYS:
            q = r[key]
            cells.append(
                "-" if q is None else f"{q[0]:.3g} / {q[1]:.3g} / {q[2]:.3g} (n {r[key + ' n']})"
            )
        h = r["hs"]
        cells.append("-" if h is None else f"{h[0]:.3g} / {h[1]:.3g} / {h[2]:.3g}")
        print(f"| {r['campaign']} | {r['runs']} | " + " | ".join(cells) + " |")
    return 0


def kernel_start_copy(
    kernel: Path, sim: Path, new: Path, cache: Path, starts: str = "kernel", rotate: int = 0
) -> int:
    """NEW: a copy of the simulator campaign SIM whose every run is the kernel-start replay of
    the run of KERNEL campaign with the same parameters and seed; returns the runs replayed
    (a SIM run without a kernel counterpart is an error). `rotate` k: each run takes the
    instants of the kernel run with the same parameters k seeds on (cyclically over the
    campaign's seeds), its own seed and channel kept: another draw of the kernel's starts."""
    from kernel_twins import replay

    from satcc.results import SUMMARY_FILE

    by_key = {}
    seeds = set()
    for rj in (kernel / "runs").glob("*/run.json"):
        run = json.loads(rj.read_text())
        by_key[run_key(run)] = rj
        seeds.add(run["seed"])
    order = sorted(seeds)
    if new.exists():
        shutil.rmtree(new)
    new.mkdir(parents=True)
    for f in ("campaign.json", "campaign.toml"):
        shutil.copy2(sim / f, new / f)
    n = 0
    for rj in sorted((sim / "runs").glob("*/run.json")):
        run = json.loads(rj.read_text())
        k = by_key.get(run_key(run))
        if k is None:
            raise SystemExit(f"{rj}: no kernel run of {kernel} with its parameters and seed")
        other = None
        if rotate:
            s = order[(order.index(run["seed"]) + rotate) % len(order)]
            other = by_key.get(run_key({**run, "seed": s}))
        twin, doc = replay(k, cache, starts, other)
        dest = new / "runs" / run["run_id"]
        shutil.copytree(twin, dest)
        (dest / "run.json").unlink(missing_ok=True)
        doc = {**run, "scenario": doc["scenario"], "starts_from": doc["starts_from"]}
        (dest / "run.json").write_text(json.dumps(doc, indent=2) + "\n")
        assert (dest / SUMMARY_FILE).is_file()
        n += 1
    return n


def judged(study: str, dirs: dict[str, Path], engine: str) -> dict[str, Any]:
    """The study's claims measured and judged on `dirs` as the kernel design is: id -> Row."""
    from satcc.studies import claims, common, reproduce

    spec = claims.load(study)
    with common.reading():
        measured = reproduce.module(study).measure(dirs)
    return {r.claim.id: r for r in claims.judge_all(spec, engine, measured, kernel=True)}


def judge(
    kernel_out: Path,
    sim_out: Path,
    new_out: Path,
    studies: list[str],
    starts: str = "kernel",
    rotate: int = 0,
) -> int:
    from satcc.studies import claims

    cache = new_out / "replays"
    for study in studies:
        k_dirs = campaigns(kernel_out, study, "emu")
        s_dirs = campaigns(sim_out, study, "sim")
        n_dirs = {}
        for name, s in s_dirs.items():
            new = new_out / study / "sim" / s.name
            if name not in k_dirs:
                raise SystemExit(f"{s}: no kernel campaign {name} in {kernel_out / study}")
            n = kernel_start_copy(k_dirs[name], s, new, cache, starts, rotate)
            print(f"{study} {s.name}: {n} runs with the kernel's starts ({starts}) -> {new}")
            n_dirs[name] = new
        rows = {
            "kernel": judged(study, k_dirs, "emu"),
            "nominal": judged(study, s_dirs, "sim"),
            "kstarts": judged(study, n_dirs, "sim"),
        }
        print(f"\nstudy {study}: finding | twin, nominal starts | twin, kernel starts | kernel")
        for cid, r in rows["kernel"].items():
            if r.claim.kind != "finding":
                continue
            three = [rows[w][cid] for w in ("nominal", "kstarts", "kernel")]
            if len({x.verdict for x in three}) == 1 and len({x.flag for x in three}) == 1:
                continue
            cells = [f"{claims.value_text(x)} {claims.verdict_text(x)}" for x in three]
            print(f"  {cid} | " + " | ".join(cells))
            for w, x in zip(("nominal", "kstarts", "kernel"), three, strict=True):
                if x.measured.per_seed is not None:
                    seeds = ", ".join(claims._num(v) for v in x.measured.per_seed)
                    print(f"      {w} per seed: {seeds}")
        same = sum(
            1
            for cid, r in rows["kernel"].items()
            if r.claim.kind == "finding" and r.verdict == rows["kstarts"][cid].verdict
        )
        moved = sum(
            1
            for cid, r in rows["nominal"].items()
            if r.claim.kind == "finding" and r.verdict != rows["kstarts"][cid].verdict
        )
        print(
            f"study {study}: kernel starts move {moved} verdict(s) of the twin; the twin with "
            f"the kernel's starts agrees with the kernel on {same} finding(s) (every finding, "
            "judged or not)"
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("offsets", help="the kernel runs' start spreads per campaign")
    o.add_argument("kernel_out", type=Path)
    j = sub.add_parser("judge", help="the twin rerun with the kernel's starts, judged")
    j.add_argument(
        "--starts",
        choices=("kernel", "syn"),
        default="kernel",
        help="the kernel's data instants less the base RTT (satcc fidelity's), or its SYNs",
    )
    j.add_argument(
        "--rotate",
        type=int,
        default=0,
        metavar="K",
        help="each run takes the starts of the kernel run K seeds on (same parameters)",
    )
    j.add_argument("kernel_out", type=Path)
    j.add_argument("sim_out", type=Path)
    j.add_argument("new_out", type=Path)
    j.add_argument("studies", nargs="+")
    a = ap.parse_args()
    if a.cmd == "offsets":
        return offsets(a.kernel_out)
    return judge(a.kernel_out, a.sim_out, a.new_out, a.studies, a.starts, a.rotate)


if __name__ == "__main__":
    sys.exit(main())
