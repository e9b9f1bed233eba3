"""Goodput against one axis, error bars min-max over a point's runs: study 000 Fig. 6-9 (MSS),
study 004 Fig. 5-17 (RTT of the second flow group, with Jain's index), study 002 Fig. 3-9
(model vs simulation vs emulation against loss)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from satcc.plot import plain_log_axis
from satcc.report.figures.common import (
    MAX_CONDITIONS,
    MODEL,
    Data,
    Drawn,
    Skip,
    _blocks,
    _by_group,
    _colors,
    _conditions,
    _grid,
    _left_out,
    flow_group,
)


def _point_means(frame: pd.DataFrame, x: str, group: list[str], value: str) -> pd.DataFrame:
    g = frame.groupby([*group, x], dropna=False)[value]
    return g.agg(["mean", "min", "max", "count"]).reset_index()


def _errorbars(
    ax,
    pts: pd.DataFrame,
    x: str,
    scale: float,
    label: str,
    color: Any,
    line: bool = True,
    linestyle: str = "-",
) -> None:
    pts = pts.sort_values(x)
    mean = pts["mean"].to_numpy(dtype=float) * scale
    lo = pts["min"].to_numpy(dtype=float) * scale
    hi = pts["max"].to_numpy(dtype=float) * scale
    ax.errorbar(
        pts[x].to_numpy(dtype=float),
        mean,
        yerr=[np.maximum(mean - lo, 0), np.maximum(hi - mean, 0)],
        fmt="o",
        linestyle=linestyle if line else "none",
        ms=4,
        capsize=2,
        lw=1.2,
        color=color,
        label=label,
    )


def mss(data: Data) -> Drawn:
    ax_ = data.axis("mss")
    if ax_ is None or len(ax_["values"]) < 2:
        raise Skip('no MSS axis with two or more values (e.g. "flow.*.mss" = [1200, 1300, 1400])')
    flows = data.flows[data.flows["goodput_bps"].notna()]
    x = data.column(flows, ax_["name"])
    flows = flows[flows[x].notna() & flows["cca"].notna()]
    if flows.empty:
        raise Skip("no flow with a congestion control and a goodput on the MSS axis")
    conds, total = _conditions(data, flows, exclude_roles={"mss"})
    panels = _by_group(conds, flows["name"].map(flow_group))[:MAX_CONDITIONS]
    fig, axs = _grid(len(panels), 3.0)
    ccas = list(dict.fromkeys(flows["cca"]))
    colors = _colors(len(ccas))
    for ax, (title, mask) in zip(axs, panels, strict=True):
        pts = _point_means(flows[mask], x, ["cca"], "goodput_bps")
        for cca, grp in pts.groupby("cca", sort=False):
            _errorbars(ax, grp, x, 1e-6, str(cca), colors[ccas.index(cca)])
        ax.set_title(title, fontsize="small")
        ax.set_xlabel("MSS (bytes)")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small")
        ax.set_ylim(bottom=0)
    return Drawn(
        fig,
        "Study 000 Fig. 6-9: goodput against the MSS, mean over the runs of each "
        "point with min-max bars, one line per congestion control, a panel per flow and "
        "condition (every other matrix axis), each with its own y axis (with a VPN `encap`, "
        "segments past the MTU fragment)." + _left_out(len(conds), total),
    )


def rtt_fairness(data: Data) -> Drawn:
    ax_ = data.axis("rtt")
    if ax_ is None or len(ax_["values"]) < 2:
        raise Skip(
            'no RTT axis with two or more values (e.g. "link[1].delay" = ["1 ms", "8 ms", "32 ms"])'
        )
    flows = data.flows[data.flows["goodput_bps"].notna()].copy()
    key = data.column(flows, ax_["name"])
    flows = flows[flows[key].notna()]
    if flows["scenario_flow"].nunique() < 2:
        raise Skip("one [[flow]] group only: fairness needs a second group")
    flows["_group"] = flows["name"].map(flow_group)
    groups = list(dict.fromkeys(flows["_group"]))
    conds, total = _conditions(data, flows, exclude_roles={"rtt"}, split_paths=False)
    # x: the measured minimum RTT of the second group at each point of the condition (over
    # every condition where a condition has none, e.g. the model's)
    second = flows[flows["_group"] == groups[1]]
    pooled = flows[key].map(second.groupby(key)["rtt_min_ms"].mean())
    flows["_x"] = pooled
    for _, mask in conds:
        own = second[mask[second.index]].groupby(key)["rtt_min_ms"].mean()
        flows.loc[mask, "_x"] = flows.loc[mask, key].map(own).fillna(pooled[mask])
    runs = data.runs
    colors = _colors(max(len(groups), 1))
    fig, blocks = _blocks(len(conds), 2, 2.6)
    for (top, bottom), (title, mask) in zip(blocks, conds, strict=True):
        mine = flows[mask]
        per_run = mine.groupby(["run_id", "_group", "_x"])["goodput_bps"].sum().reset_index()
        for k, g in enumerate(groups):
            pts = _point_means(per_run[per_run["_group"] == g], "_x", [], "goodput_bps")
            if not pts.empty:
                _errorbars(top, pts, "_x", 1e-6, f"{g}", colors[k])
        jr = runs[runs["run_id"].isin(mine["run_id"])].merge(
            mine[["run_id", "_x"]].drop_duplicates(), on="run_id"
        )
        pts = _point_means(jr[jr["jain_index"].notna()], "_x", [], "jain_index")
        if not pts.empty:
            _errorbars(bottom, pts, "_x", 1.0, "Jain index", "k")
        top.set_title(title, fontsize="small")
        top.set_ylabel("goodput (Mbit/s)")
        bottom.set_ylabel("Jain's index")
        bottom.set_ylim(0, 1.05)
        bottom.set_xlabel(f"RTT of {groups[1]} (ms)")
        for a in (top, bottom):
            if a.has_data():
                a.set_xscale("log", base=2)
                plain_log_axis(a.xaxis, base=2)
            a.grid(True, which="both", alpha=0.3)
        top.set_ylim(bottom=0)
        if top.has_data():
            top.legend(fontsize="x-small")
    return Drawn(
        fig,
        f"Study 004 Fig. 5-17: per-group goodput (sum over the group's flows) "
        f"and Jain's index over the flows sharing the bottleneck against the second group's "
        f"measured minimum RTT (axis `{ax_['name']}`), mean over runs with min-max bars; a "
        "pair of panels per condition (every other matrix axis, the engine), each with its "
        "own y axis." + _left_out(len(conds), total),
    )


STEADY = "steady"  # the panel of flows without a size (study 002's rows are named alike)


def _kind(size_bytes: float) -> str:
    """A flow's transfer-size panel: "steady" (no size) or "10MB" (MB = 10^6 B)."""
    return STEADY if pd.isna(size_bytes) else f"{int(size_bytes) / 1e6:g}MB"


def engines_loss(data: Data) -> Drawn:
    ax_ = data.axis("loss")
    if ax_ is None or len(ax_["values"]) < 2:
        raise Skip('no loss axis with two or more values (e.g. "link[0].loss" = [1e-5, 1e-4])')
    flows = data.flows[data.flows["goodput_bps"].notna()].copy()
    x = data.column(flows, ax_["name"])
    flows = flows[flows[x].notna()]
    engines = list(dict.fromkeys(flows["engine"]))
    if len(engines) < 2:
        raise Skip(
            f"runs of one engine only ({', '.join(engines) or 'none'}): add "
            '"scenario.engine" = ["model", "sim"] (and "emu") to the matrix'
        )
    flows["_kind"] = flows["size_bytes"].map(_kind)
    kinds = list(dict.fromkeys(flows["_kind"]))
    sized = [k for k in kinds if k != STEADY]
    # a panel (column of goodput and transfer time) per transfer size and condition: the
    # other matrix axes (MSS, RTT, ...) are never averaged together, nor are the engines and
    # CCAs, which are the lines
    conds, total = _conditions(data, flows, exclude_roles={"loss", "engine", "size"})
    cells = [
        (kind, title, mask & (flows["_kind"] == kind))
        for title, mask in conds
        for kind in kinds
        if (mask & (flows["_kind"] == kind)).any()
    ][:MAX_CONDITIONS]
    fig, blocks = _blocks(len(cells), 2 if sized else 1, 3.0)
    flows["_cca"] = flows["cca"].fillna("-").astype(str)
    ccas = list(dict.fromkeys(flows["_cca"]))
    cca_colors = _colors(len(ccas))
    styles = {"model": "-", "sim": "--", "emu": ":", "analyze": "-."}
    order = {"model": 0, "sim": 1, "emu": 2, "analyze": 3}
    colors = {"model": "tab:blue", "sim": "tab:red", "emu": "tab:green", "analyze": "tab:purple"}
    for axs, (kind, title, mask) in zip(blocks, cells, strict=True):
        mine = flows[mask]
        # one line per engine and congestion control: CCAs are never averaged together
        for e in sorted(engines, key=lambda e: order.get(e, 9)):
            for j, cca in enumerate(ccas):
                em = mine[(mine["engine"] == e) & (mine["_cca"] == cca)]
                if em.empty:
                    continue
                label = e if len(ccas) == 1 else f"{e} · {cca}"
                color = colors.get(e, "k") if len(ccas) == 1 else cca_colors[j]
                # the model as a line; measured engines as points, joined when CCAs share
                # the panel (a line style per engine tells them apart)
                line = e == MODEL or len(ccas) > 1
                style = styles.get(e, "-") if len(ccas) > 1 else "-"
                pts = _point_means(em, x, [], "goodput_bps")
                _errorbars(axs[0], pts, x, 1e-6, label, color, line, style)
                if sized and kind != STEADY:
                    tp = _point_means(em[em["fct_s"].notna()], x, [], "fct_s")
                    if not tp.empty:
                        _errorbars(axs[1], tp, x, 1.0, label, color, line, style)
        what = "steady state" if kind == STEADY else kind.replace("MB", " MB")
        axs[0].set_title(what + (f" · {title}" if title else ""), fontsize="small")
        axs[0].set_ylabel("goodput (Mbit/s)")
        for r, a in enumerate(axs):
            a.set_xscale("log")
            plain_log_axis(a.xaxis)
            a.grid(True, which="both", alpha=0.3)
            a.set_xlabel("packet loss rate p")
            if a.has_data():
                a.legend(fontsize="x-small")
                a.set_ylim(bottom=0)
            elif r == 1:
                a.set_axis_off()
        if sized:
            axs[1].set_ylabel("transfer time (s)")
    return Drawn(
        fig,
        "Study 002 Fig. 3-9: goodput (top) and transfer time (bottom, limited "
        "transfers) against the loss rate, one line per engine and congestion control "
        "(a line style per engine, a color per CCA): the model as a line, "
        "measured engines as means over seeds with min-max bars; a panel per "
        "transfer size and condition (every other matrix axis), each with its own y axis "
        "(`satcc validate hybla` tabulates the study's Table 3)." + _left_out(len(conds), total),
    )
