"""Study 001 Fig. 7-10: mean goodput and retransmission rate per run, boxes per congestion
control and condition."""

from __future__ import annotations

import pandas as pd

from satcc.report.figures.common import (
    Data,
    Drawn,
    Skip,
    _conditions,
    _grid,
    _left_out,
    condition_words,
)


def _boxes(data: Data, value: str, scale: float, ylabel: str, what: str, figures: str) -> Drawn:
    flows = data.flows[data.flows["cca"].notna() & data.flows[value].notna()].copy()
    if flows.empty:
        raise Skip(f"no flow with a congestion control and a {what}")
    conds, total = _conditions(data, flows)
    sizes = [flows[m].groupby("cca").size() for _, m in conds]
    if max(int(c.max()) for c in sizes) < 2:
        raise Skip(
            "every congestion control x condition has one run: a box plot needs "
            "repetitions or rounds (campaign `repetitions`, or a time-of-day axis)"
        )
    fig, panels = _grid(len(conds), 3.0)
    for ax, (title, mask) in zip(panels, conds, strict=True):
        mine = flows[mask]
        ccas = list(dict.fromkeys(mine["cca"]))
        values = [mine[mine["cca"] == k][value].to_numpy(dtype=float) * scale for k in ccas]
        ax.boxplot(
            values,
            tick_labels=ccas,
            showmeans=True,
            widths=0.6,
            flierprops={"markersize": 3},
            meanprops={"marker": "^", "markersize": 4},
        )
        ax.set_title(title or what, fontsize="medium")
        ax.grid(True, axis="y", alpha=0.3)
        ax.tick_params(axis="x", labelrotation=30)
        ax.set_ylabel(ylabel)
    n = int(pd.concat(sizes).median())
    split = condition_words(data, flows)
    return Drawn(
        fig,
        f"{what.capitalize()} per run: one panel per condition (every matrix axis but the "
        f"congestion control), each with its own y axis; a box per congestion control "
        f"({n} runs per box, median), triangles are means.{_left_out(len(conds), total)}",
        title=f"{what.capitalize()} per congestion control"
        + (f" and {split}" if split else "")
        + f" ({figures})",
    )


def box_throughput(data: Data) -> Drawn:
    return _boxes(
        data, "goodput_bps", 1e-6, "mean goodput (Mbit/s)", "mean goodput", "study 001 Fig. 7-8"
    )


def box_retx(data: Data) -> Drawn:
    return _boxes(
        data,
        "retransmission_rate",
        100.0,
        "retransmission rate (%)",
        "retransmission rate",
        "study 001 Fig. 9-10",
    )
