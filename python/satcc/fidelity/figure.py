"""The fidelity figure: one panel per scenario, per flow group the goodput of the simulator
(median over its seeds) beside the kernel's (median over its runs), error bars from min to max
of each side, and each bar labelled with the group's share of the total goodput."""

from __future__ import annotations

import math
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from satcc.fidelity.metrics import ALL, FAIL

COLS = 4
PANEL_W_IN = 3.3
PANEL_H_IN = 2.7
MIN_WIDTH_IN = 6.0
BAR_W = 0.38
SIM_COLOR = "#4c72b0"
KERNEL_COLOR = "#dd8452"


def draw(doc: dict[str, Any]) -> Figure | None:
    """The figure for a fidelity document (satcc.fidelity.suite.evaluate_store); None when no
    scenario has a goodput to draw."""
    scenarios = list(dict.fromkeys(r["scenario"] for r in doc["rows"]))
    if not scenarios:
        return None
    n = len(scenarios)
    cols = min(COLS, n)
    rows = math.ceil(n / cols)
    fig = Figure(
        figsize=(max(PANEL_W_IN * cols, MIN_WIDTH_IN), PANEL_H_IN * rows + 0.6),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axs = fig.subplots(rows, cols, squeeze=False)
    for i, name in enumerate(scenarios):
        ax = axs[i // cols][i % cols]
        groups = [r for r in doc["rows"] if r["scenario"] == name and r["group"] != ALL]
        for k, r in enumerate(groups):
            g = r["metrics"]["goodput_bps"]
            share = r["metrics"]["share"]
            for side, dx, color in (
                ("sim", -BAR_W / 2, SIM_COLOR),
                ("kernel", BAR_W / 2, KERNEL_COLOR),
            ):
                st = g[side]
                if st["median"] is None:
                    continue
                med = st["median"] / 1e6
                err = [[med - st["min"] / 1e6], [st["max"] / 1e6 - med]]
                ax.bar(
                    k + dx,
                    med,
                    BAR_W,
                    color=color,
                    yerr=err,
                    capsize=3,
                    error_kw={"elinewidth": 1},
                    label=side if (i, k) == (0, 0) else None,
                )
                sh = share[side]["median"]
                if sh is not None and len(groups) > 1:
                    ax.annotate(
                        f"{sh:.2f}",
                        (k + dx, st["max"] / 1e6),
                        ha="center",
                        va="bottom",
                        fontsize="x-small",
                        xytext=(0, 2),
                        textcoords="offset points",
                    )
        ax.set_xticks(
            range(len(groups)),
            [
                r["group"] + (" ✗" if r["metrics"]["share"]["verdict"] == FAIL else "")
                for r in groups
            ],
            fontsize="small",
        )
        ax.set_title(name.removeprefix("fid-"), fontsize="small")
        ax.margins(y=0.15)
        ax.set_ylim(bottom=0)
        ax.grid(True, axis="y", alpha=0.3)
        if i % cols == 0:
            ax.set_ylabel("goodput (Mbit/s)", fontsize="small")
        ax.tick_params(labelsize="small")
    for j in range(n, rows * cols):
        axs[j // cols][j % cols].set_visible(False)
    handles, labels = axs[0][0].get_legend_handles_labels()
    if handles:
        names = {"sim": "simulator (median of seeds)", "kernel": "kernel (median of runs)"}
        labels = [x for x in labels if x in names]
        fig.legend(
            handles,
            [names[x] for x in labels],
            loc="outside upper center",
            ncols=2,
            fontsize="small",
            frameon=False,
        )
    return fig
