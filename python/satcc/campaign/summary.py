"""Text for people: the end-of-campaign summary and `satcc campaign status`.

Both read the campaign directory through the store (every file's hash checked), so what they
print is what `satcc query` and `satcc report` will see.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from satcc.campaign.execute import SUMMARY_MAX_ROWS, CampaignRun, format_seconds
from satcc.store import open_store
from satcc.textgrid import grid

ERROR_LINE_CHARS = 160


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)) or v is pd.NA:
        return "-"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _flow_label(flow: str, cca: Any) -> str:
    """A flow group with the congestion control that ran it, unless its name says it."""
    if cca is None or (isinstance(cca, float) and pd.isna(cca)) or str(cca) in flow:
        return flow
    return f"{flow} ({cca})"


def point_table(store, max_rows: int = SUMMARY_MAX_ROWS) -> list[str]:
    """One row per matrix point: every matrix parameter and the engine, runs done/planned,
    mean goodput per flow name with the CCA that ran it (Mbit/s), mean retransmission rate,
    and the mean Jain index over the repetitions where a run has two or more flows (the column
    is left out when no run has)."""
    runs = store.runs()
    if runs.empty:
        return ["(no runs planned)"]
    params = [
        c
        for c in store.param_columns
        if not c.endswith(("_ms", "_bps", "_bytes", "_h", "_frac"))
        or c.rsplit("_", 1)[0] not in store.param_columns
    ]
    if "engine" in runs.columns and not any(p.rsplit(".", 1)[-1] == "engine" for p in params):
        params.append("engine")
    per_point = runs.groupby("point", sort=True, dropna=False)
    flows = store.query(
        "SELECT point, regexp_replace(name, '\\.[0-9]+$', '') AS flow, "
        "string_agg(DISTINCT cca, ',' ORDER BY cca) AS cca, "
        "avg(goodput_bps) / 1e6 AS mbps, avg(retransmission_rate) AS retx "
        "FROM flows GROUP BY ALL ORDER BY point, flow"
    )
    per_run = store.query(
        "SELECT point, max(n) AS flows FROM "
        "(SELECT point, run_id, count(*) AS n FROM flows GROUP BY ALL) GROUP BY point"
    )
    many = dict(zip(per_run["point"], per_run["flows"] > 1, strict=True))
    show_jain = any(many.values())
    columns = [*params, "runs", "goodput Mbit/s (mean per flow)", "retx"]
    columns += ["jain"] if show_jain else []
    rows = []
    for point, group in per_point:
        first = group.iloc[0]
        mine = flows[flows["point"] == point]
        goodput = ", ".join(
            f"{_flow_label(r.flow, r.cca)} {r.mbps:.2f}"
            for r in mine.itertuples()
            if pd.notna(r.mbps)
        )
        if len(mine) > 4:
            goodput = f"{len(mine)} flows, mean {mine['mbps'].mean():.2f}"
        retx = mine["retx"].mean() if len(mine) else None
        jain = group["jain_index"].mean() if many.get(point) else None
        done = int((group["status"] == "done").sum())
        rows.append(
            [
                *(_cell(first[c]) for c in params),
                f"{done}/{len(group)}",
                goodput or "-",
                "-" if retx is None or pd.isna(retx) else f"{100 * retx:.2f} %",
            ]
            + (["-" if jain is None or pd.isna(jain) else f"{jain:.3f}"] if show_jain else [])
        )
    lines = grid(columns, rows[:max_rows], left=set(range(len(params))) | {len(params) + 1})
    if len(rows) > max_rows:
        lines.append(
            f'... {len(rows) - max_rows} more points: satcc query DIR "SELECT * FROM runs"'
        )
    return lines


def end_of_run(run: CampaignRun) -> str:
    """The summary printed when `satcc campaign` finishes."""
    done, skipped, failed = run.count("done"), run.count("skipped"), run.count("failed")
    rate = done / run.wall_s if run.wall_s > 0 else 0.0
    head = (
        f"campaign {run.name}: {run.planned} runs planned · {done} run now · {skipped} "
        f"already done · {failed} failed · {format_seconds(run.wall_s)} · "
        f"{rate:.2f} runs/s ({run.backend})"
    )
    lines = [head]
    if run.removed_leftovers:
        lines.append(
            f"removed {len(run.removed_leftovers)} interrupted write(s) from an earlier "
            "attempt; their runs were redone"
        )
    with open_store(run.out_dir) as store:
        lines.append("")
        lines.extend(point_table(store))
        lines.extend(_failures(store))
        lines.extend(_problems(store))
    lines.append("")
    lines.append(
        f'results: {run.out_dir}  (satcc query {run.out_dir} "SQL"; satcc report {run.out_dir})'
    )
    return "\n".join(lines)


def _failures(store) -> list[str]:
    failed = store.query(
        "SELECT run_id, engine, seed, point, error FROM runs "
        "WHERE status = 'failed' ORDER BY point, seed"
    )
    if failed.empty:
        return []
    runs = {r["run_id"]: r for r in store.index["runs"]}
    lines = ["", f"failed runs ({len(failed)}; rerun the same command to retry them):"]
    for r in failed.itertuples():
        params = ", ".join(f"{k}={v}" for k, v in (runs[r.run_id].get("params") or {}).items())
        first = (r.error or "?").strip().splitlines()[0][:ERROR_LINE_CHARS]
        lines.append(f"  {r.run_id}  {r.engine} seed {_cell(r.seed)}  {params}: {first}")
    return lines


def _problems(store) -> list[str]:
    if not store.problems:
        return []
    lines = ["", f"left out of the store ({len(store.problems)}):"]
    lines.extend(f"  {p.line()}" for p in store.problems)
    return lines


def status(directory) -> tuple[str, int]:
    """`satcc campaign status DIR`: (text, exit status: 0 all done, 1 otherwise)."""
    with open_store(directory, save=False) as store:
        idx = store.index
        counts = store.query(
            "SELECT engine, status, count(*) AS n FROM runs GROUP BY ALL ORDER BY engine, status"
        )
        total = int(counts["n"].sum()) if len(counts) else 0
        by_status = counts.groupby("status")["n"].sum().to_dict()
        lines = [
            (
                f"campaign {idx.get('name')} in {directory}: {total} runs planned · "
                f"{by_status.get('done', 0)} done · {by_status.get('failed', 0)} failed · "
                f"{by_status.get('pending', 0)} pending"
            )
        ]
        rows = [[r.engine, r.status, str(r.n)] for r in counts.itertuples()]
        if rows:
            lines.extend("  " + line for line in grid(["engine", "status", "runs"], rows, {0, 1}))
        versions = store.query(
            "SELECT satcc_version, count(*) AS n FROM runs WHERE "
            "status = 'done' GROUP BY ALL ORDER BY 1"
        )
        if len(versions) > 1:
            lines.append(
                "note: runs from several satcc versions: "
                + ", ".join(f"{r.satcc_version} ({r.n})" for r in versions.itertuples())
            )
        lines.extend(_failures(store))
        lines.extend(_problems(store))
        complete = by_status.get("done", 0) == total and not store.problems
        if not complete:
            lines.append("")
            lines.append(
                f"to finish: satcc campaign {idx.get('source')} --out {directory}"
                if by_status.get("done", 0) != total
                else "every run is done; the files listed above are left out"
            )
        return "\n".join(lines), 0 if complete else 1
