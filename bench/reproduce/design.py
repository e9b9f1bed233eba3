"""The runs `satcc reproduce all` plans, design by design: how many, how many are the same run
in two campaigns (same run id: engine + resolved-scenario hash + seed, simulated once and
copied), how many are the same simulation under another run id (resolved scenarios that differ
only by a congestion control parameter written out at its default, or by the scenario's or a
flow's name: the dedup by run id misses them), how many share a prefix with another (the same
resolved scenario and seed apart from the duration), and what they simulate (seconds,
flow-seconds).

    .venv/bin/python bench/reproduce/design.py            # quick and full designs, the simulator
    .venv/bin/python bench/reproduce/design.py --json     # the same as JSON

Study 002 is not a campaign (`satcc validate hybla`'s design, simulated at every `reproduce`):
its runs are not counted here.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections import defaultdict
from itertools import product
from pathlib import Path
from typing import Any

from satcc import _native
from satcc.campaign import spec
from satcc.scenario import scenario_hash
from satcc.studies import common, reproduce

_CC_DEFAULTS: dict[str, dict[str, Any]] = {}


def simulation_key(config: dict[str, Any]) -> str:
    """The resolved scenario as the simulation sees it: without its names and with each flow's
    congestion control parameters that equal the algorithm's default left out."""
    doc = copy.deepcopy(
        {k: v for k, v in config.items() if k not in ("seed", "routes", "name", "description")}
    )
    for f in doc.get("flows", []):
        cca = f.get("cca")
        if cca not in _CC_DEFAULTS:
            try:
                params = _native.cc_info(cca)["params"]
            except Exception:  # noqa: BLE001 - not a TCP algorithm (UDP): no parameters
                params = []
            _CC_DEFAULTS[cca] = {p["name"]: p["default"] for p in params}
        defaults = _CC_DEFAULTS[cca]
        f["cc"] = {k: v for k, v in (f.get("cc") or {}).items() if defaults.get(k, k) != v}
        f.pop("name", None)
    return scenario_hash(doc)


def campaigns(quick: bool) -> list[tuple[str, str, bool]]:
    """(study, campaign name, quick variant) as `reproduce` runs them on the simulator: the
    campaigns each study's `run` asks `common.run` for (asked here, not run)."""
    from unittest import mock

    out: list[tuple[str, str, bool]] = []
    for study in reproduce.STUDIES:
        if study == "002":
            continue

        def ask(_ctx: Any, name: str, *_a: Any, study: str = study, **_k: Any) -> Path:
            out.append((study, name, quick))
            return Path(name)

        with mock.patch.object(common, "run", ask):
            reproduce.module(study).run(common.Context("sim", quick, None, Path("unused")))
    return out


def plan(study: str, name: str, quick: bool) -> list[dict[str, Any]]:
    """Every run of the campaign: run id, duration, flows and the key of its prefix (the
    resolved scenario without its duration, the engine, the seed)."""
    c = common.load(name, quick)
    rows = []
    combos = product(*[range(len(a.labels)) for a in c.axes]) if c.axes else [()]
    for combo in combos:
        doc = copy.deepcopy(c.base)
        for a, k in zip(c.axes, combo, strict=True):
            for path, value in a.overrides[k].items():
                spec.set_key(doc, path, value)
        s, config, problems = spec._check_point(c, doc)
        if s is None:
            raise SystemExit(f"{name}: {problems}")
        h = scenario_hash(config)
        cut = {k: v for k, v in config.items() if k != "duration_ns"}
        prefix = scenario_hash(cut)
        same = simulation_key(config)
        for seed in c.seeds:
            rid = spec.run_id({"engine": s.scenario.engine, "scenario_hash": h, "seed": seed})
            rows.append(
                {
                    "study": study,
                    "campaign": c.name,
                    "run_id": rid,
                    "prefix": (s.scenario.engine, prefix, seed),
                    "simulation": (s.scenario.engine, same, seed),
                    "duration_s": config["duration_ns"] / 1e9,
                    "flows": max(len(config["flows"]), 1),
                }
            )
    return rows


def summary(quick: bool) -> dict[str, Any]:
    rows = [r for st, n, q in campaigns(quick) for r in plan(st, n, q)]
    by_id: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_id[r["run_id"]].append(r)
    unique = {rid: rs[0] for rid, rs in by_id.items()}
    by_prefix: dict[Any, set[float]] = defaultdict(set)
    for r in unique.values():
        by_prefix[r["prefix"]].add(r["duration_s"])
    shared_prefix = [
        r for r in unique.values() if len(by_prefix[r["prefix"]]) > 1
    ]  # a run whose scenario and seed another unique run has with another duration
    per_campaign: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for r in rows:
        pc = per_campaign.setdefault(
            r["campaign"],
            {"study": r["study"], "runs": 0, "copied": 0, "sim_s": 0.0, "flow_s": 0.0},
        )
        pc["runs"] += 1
        if r["run_id"] in seen:
            pc["copied"] += 1
            continue
        seen.add(r["run_id"])
        pc["sim_s"] += r["duration_s"]
        pc["flow_s"] += r["duration_s"] * r["flows"]
    by_simulation: dict[Any, list[str]] = defaultdict(list)
    for rid, r in unique.items():
        by_simulation[r["simulation"]].append(rid)
    twins = [rids for rids in by_simulation.values() if len(rids) > 1]
    saved_prefix_s = 0.0
    for durations in by_prefix.values():
        if len(durations) > 1:  # run the longest once: the shorter ones' seconds saved
            saved_prefix_s += sum(sorted(durations)[:-1])
    return {
        "design": "quick" if quick else "full",
        "campaign_runs": len(rows),
        "unique_runs": len(unique),
        "duplicates": len(rows) - len(unique),
        # distinct run ids simulating what another one does (one run of each group would do)
        "same_simulation_other_id": sum(len(rids) - 1 for rids in twins),
        "same_simulation_groups": [
            sorted(f"{unique[rid]['campaign']}:{rid}" for rid in rids) for rids in twins
        ],
        "runs_sharing_a_prefix": len(shared_prefix),
        "prefix_groups": sum(1 for d in by_prefix.values() if len(d) > 1),
        "prefix_seconds_saved_at_most": saved_prefix_s,
        "sim_s": sum(r["duration_s"] for r in unique.values()),
        "flow_s": sum(r["duration_s"] * r["flows"] for r in unique.values()),
        "campaigns": per_campaign,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    docs = [summary(True), summary(False)]
    if args.json:
        json.dump(docs, sys.stdout, indent=2, default=str)
        print()
        return 0
    for d in docs:
        print(
            f"{d['design']}: {d['campaign_runs']} campaign runs, {d['unique_runs']} distinct "
            f"({d['duplicates']} the same run in two campaigns); "
            f"{d['same_simulation_other_id']} the same simulation under another run id; "
            f"{d['runs_sharing_a_prefix']} "
            f"distinct runs in {d['prefix_groups']} groups differ only in duration (at most "
            f"{d['prefix_seconds_saved_at_most']:.0f} simulated s of {d['sim_s']:.0f} saved); "
            f"{d['flow_s']:.0f} flow-s"
        )
        for name, c in d["campaigns"].items():
            print(
                f"  {c['study']} {name:28s} {c['runs']:5d} runs {c['copied']:4d} copied "
                f"{c['sim_s']:9.0f} s {c['flow_s']:10.0f} flow-s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
