"""Study 000 Fig. 10-11: RTT over the day and its distribution."""

from __future__ import annotations

import numpy as np
import pandas as pd

from satcc.report.figures.common import (
    Data,
    Drawn,
    Skip,
    _colors,
    _conditions,
    _left_out,
    new_figure,
)


def rtt_day(data: Data) -> Drawn:
    # per condition: (title, per-run hours frame with a `series` column, samples per series)
    panels: list[tuple[str, pd.DataFrame, dict[str, np.ndarray]]] = []
    total = 1
    pings = data.store.query("SELECT run_id, t_epoch_s, rtt_ms FROM pings")
    if not pings.empty and pings["t_epoch_s"].notna().any():
        p = pings[pings["t_epoch_s"].notna()].copy()
        p["hour"] = (p["t_epoch_s"] % 86400) / 3600.0
        hours = (
            p.groupby("run_id")
            .agg(
                hour=("hour", "min"),
                mean=("rtt_ms", "mean"),
                lo=("rtt_ms", "min"),
                hi=("rtt_ms", "max"),
            )
            .assign(series="ping")
        )
        panels.append(("", hours, {"ping": p["rtt_ms"].dropna().to_numpy(dtype=float)}))
        lost = p["rtt_ms"].isna().mean()
        source = (
            f"{len(p)} ping probes from {p['run_id'].nunique()} log(s) (UTC time of day; "
            f"{100 * lost:.2f} % lost)"
        )
    else:
        ax = data.axis("time_of_day")
        if ax is None or data.numeric(ax) is None:
            raise Skip(
                "no ping logs with timestamps (`ping -D`) among analyze runs and no "
                'time-of-day axis (e.g. link[0].model.start = ["09:00:00", ...])'
            )
        col = data.numeric(ax)
        flows = data.flows[data.flows["rtt_mean_ms"].notna()]
        fcol = data.column(flows, col)
        if flows.empty or fcol not in flows:
            raise Skip("no RTT samples in the runs of the time-of-day axis")
        flows = flows.assign(series=flows["cca"].fillna("-").astype(str))
        srtt = data.store.query(
            "SELECT run_id, flow_id, srtt_ms FROM flow_series "
            "WHERE srtt_ms IS NOT NULL AND engine <> 'model'"
        ).merge(
            flows[["run_id", "id", "series"]],
            left_on=["run_id", "flow_id"],
            right_on=["run_id", "id"],
        )
        conds, total = _conditions(data, flows)
        for title, mask in conds:
            mine = flows[mask]
            hours = mine.groupby(["run_id", "series"], sort=False).agg(
                hour=(fcol, "first"),
                mean=("rtt_mean_ms", "mean"),
                lo=("rtt_min_ms", "min"),
                hi=("rtt_p95_ms", "max"),
            )
            hours = hours.reset_index(level="series")
            samples = {}
            for name in dict.fromkeys(mine["series"]):
                own = srtt[srtt["run_id"].isin(mine["run_id"]) & (srtt["series"] == name)]
                samples[name] = (
                    own["srtt_ms"].to_numpy(dtype=float)
                    if len(own)
                    else mine[mine["series"] == name]["rtt_mean_ms"].to_numpy(dtype=float)
                )
            panels.append((title, hours, samples))
        source = (
            f"{flows['run_id'].nunique()} runs over the `{ax['name']}` axis (flow RTT mean, "
            "min-p95 bars; the distribution is every bin's smoothed RTT, under load), one "
            "color per congestion control, a row per condition with its own y axes"
            + _left_out(len(panels), total).rstrip(".")
        )
    fig, axs = new_figure(len(panels), 2, height=3.0 if len(panels) == 1 else 2.6)
    names = list(dict.fromkeys(n for _, h, _ in panels for n in h["series"]))
    colors = dict(zip(names, _colors(len(names)) if len(names) > 1 else ["tab:blue"], strict=True))
    for (a, b), (title, hours, samples) in zip(axs, panels, strict=True):
        for name, h in hours.groupby("series", sort=False):
            h = h.sort_values("hour")
            a.errorbar(
                h["hour"],
                h["mean"],
                yerr=[(h["mean"] - h["lo"]).clip(lower=0), (h["hi"] - h["mean"]).clip(lower=0)],
                fmt="o",
                ms=3,
                capsize=2,
                color=colors[name],
                label=str(name),
            )
        a.set_xlabel("time of day (h)")
        a.set_ylabel("RTT (ms)")
        a.set_xlim(0, 24)
        a.set_xticks(range(0, 25, 3))
        a.grid(True, alpha=0.3)
        a.set_title("RTT over the day" + (f" · {title}" if title else ""), fontsize="small")
        if hours["series"].nunique() > 1:
            a.legend(fontsize="x-small")
        for name, xs in samples.items():
            if xs.size == 0:
                continue
            b.hist(xs, bins=60, color=colors[name], alpha=0.8 if len(samples) == 1 else 0.5)
            b.axvline(
                float(np.mean(xs)),
                color=colors[name] if len(samples) > 1 else "tab:red",
                lw=1,
                label=f"{name} mean {np.mean(xs):.1f} ms",
            )
        b.set_xlabel("RTT (ms)")
        b.set_ylabel("samples")
        b.legend(fontsize="x-small")
        b.grid(True, alpha=0.3)
        b.set_title("RTT distribution" + (f" · {title}" if title else ""), fontsize="small")
    return Drawn(fig, f"Study 000 Fig. 10-11: RTT by time of day and its distribution; {source}.")
