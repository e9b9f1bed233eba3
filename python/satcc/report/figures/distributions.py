"""Distributions of goodput and RTT, and the throughput/delay plane (Pantheon-style)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from satcc.report.figures.common import (
    Data,
    Drawn,
    Skip,
    _colors,
    _conditions,
    _grid,
    _left_out,
    new_figure,
)


def cdfs(data: Data) -> Drawn:
    """Empirical CDFs per congestion control and condition: each flow's goodput and
    95th-percentile RTT."""
    flows = data.flows[data.flows["cca"].notna() & data.flows["goodput_bps"].notna()]
    if flows.empty:
        raise Skip("no flow with a congestion control and a goodput")
    if len(flows) < 2:
        raise Skip("one flow in the campaign: a distribution needs more")
    ccas = list(dict.fromkeys(flows["cca"]))
    conds, total = _conditions(data, flows)
    fig, axs = new_figure(len(conds), 2, height=2.8)
    colors = _colors(len(ccas))
    for r, (title, mask) in enumerate(conds):
        for k, cca in enumerate(ccas):
            mine = flows[mask & (flows["cca"] == cca)]
            for ax, col, scale in (
                (axs[r][0], "goodput_bps", 1e-6),
                (axs[r][1], "rtt_p95_ms", 1.0),
            ):
                x = np.sort(mine[col].dropna().to_numpy(dtype=float) * scale)
                if len(x):
                    ax.step(
                        x,
                        np.arange(1, len(x) + 1) / len(x),
                        where="post",
                        color=colors[k],
                        label=f"{cca} ({len(x)})",
                    )
        for ax in axs[r]:
            ax.set_ylabel("fraction of flows")
            ax.set_ylim(0, 1.02)
            ax.grid(True, alpha=0.3)
            if title:
                ax.set_title(title, fontsize="medium")
        axs[r][0].legend(fontsize="x-small", frameon=False)
    axs[-1][0].set_xlabel("goodput per flow (Mbit/s)")
    axs[-1][1].set_xlabel("95th-percentile RTT per flow (ms)")
    return Drawn(
        fig,
        "Empirical CDFs per congestion control (number of flows in the legend), one row per "
        "condition (every matrix axis but the congestion control): goodput and the flow's "
        f"95th-percentile RTT.{_left_out(len(conds), total)}",
    )


def _ellipse(ax: Any, x: np.ndarray, y: np.ndarray, color: Any) -> bool:
    """Pantheon's 1-sigma ellipse of a scheme's runs (the contour of a 2-D Gaussian fitted to
    the points: axes along the covariance's eigenvectors, half-lengths their square roots)."""
    from matplotlib.patches import Ellipse

    if len(x) < 3:
        return False
    cov = np.cov(np.vstack([x, y]))
    if not np.all(np.isfinite(cov)):
        return False
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0.0, None)
    angle = math.degrees(math.atan2(vecs[1, -1], vecs[0, -1]))
    ax.add_patch(
        Ellipse(
            (float(np.mean(x)), float(np.mean(y))),
            2 * math.sqrt(vals[-1]),
            2 * math.sqrt(vals[0]),
            angle=angle,
            facecolor=color,
            alpha=0.15,
            edgecolor=color,
        )
    )
    return True


def throughput_delay(data: Data) -> Drawn:
    """Pantheon's summary plane (Yan et al., USENIX ATC 2018, Fig. 2), one panel per condition:
    per algorithm, each run's mean goodput against its 95th-percentile RTT, the runs' mean and
    1-sigma ellipse, delay axis reversed (better is up and right)."""
    flows = data.flows[
        data.flows["cca"].notna()
        & data.flows["goodput_bps"].notna()
        & data.flows["rtt_p95_ms"].notna()
    ]
    if flows.empty:
        raise Skip("no flow with a congestion control, a goodput and an RTT")
    ccas = list(dict.fromkeys(flows["cca"]))
    colors = _colors(len(ccas))
    conds, total = _conditions(data, flows)
    fig, panels = _grid(len(conds), 3.4)
    for ax, (title, mask) in zip(panels, conds, strict=True):
        per_run = (
            flows[mask]
            .groupby(["run_id", "cca"], sort=False)
            .agg(goodput_bps=("goodput_bps", "mean"), rtt_p95_ms=("rtt_p95_ms", "mean"))
            .reset_index()
        )
        for k, cca in enumerate(ccas):
            mine = per_run[per_run["cca"] == cca]
            if mine.empty:
                continue
            x = mine["rtt_p95_ms"].to_numpy(dtype=float)
            y = mine["goodput_bps"].to_numpy(dtype=float) / 1e6
            ax.scatter(x, y, s=10, alpha=0.5, color=colors[k])
            _ellipse(ax, x, y, colors[k])
            ax.scatter(
                [x.mean()],
                [y.mean()],
                s=40,
                marker="o",
                color=colors[k],
                edgecolor="black",
                label=str(cca),
            )
        ax.autoscale_view()
        ax.invert_xaxis()
        ax.set_xlabel("95th-percentile RTT (ms, better →)")
        ax.set_ylabel("mean goodput (Mbit/s)")
        ax.grid(True, alpha=0.3)
        if title:
            ax.set_title(title, fontsize="medium")
    panels[0].legend(fontsize="x-small", frameon=False, loc="best")
    return Drawn(
        fig,
        "Throughput against delay per congestion control, as Pantheon summarises schemes "
        "(Yan et al., USENIX ATC 2018), one panel per condition (every matrix axis but the "
        "congestion control) with its own axes: small dots are runs (mean over the run's flows "
        "of that algorithm), the outlined dot their mean and the shaded ellipse one standard "
        "deviation of a 2-D Gaussian fitted to the runs (3 runs or more); the delay axis is "
        f"reversed so that better is up and to the right.{_left_out(len(conds), total)}",
    )
