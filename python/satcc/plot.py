"""`satcc plot DIR`: goodput, cwnd and smoothed RTT over time per flow, one PNG.

Three stacked panels sharing the time axis:
1. goodput per bin, Mbit/s (delivered application bytes x 8 / bin width), drawn as steps over
   each bin;
2. cwnd, packets, sampled at the end of each bin;
3. srtt, ms, sampled at the end of each bin.
Bins before a flow starts are left blank. Legend: "id cca from→to" per flow. Uses matplotlib's
object API with the Agg canvas (no pyplot, no display needed); the PNG carries no software or
date metadata.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from satcc.results import RunResult, load

DEFAULT_PNG = "plot.png"
PANEL_HEIGHT_IN = 2.4
FIG_WIDTH_IN = 10.0
DPI = 110
MAX_LEGEND_FLOWS = 24  # beyond this the legend says how many flows are drawn instead


def draw(result: RunResult) -> Figure:
    """The figure for one result (not saved)."""
    fig = Figure(figsize=(FIG_WIDTH_IN, 3 * PANEL_HEIGHT_IN + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax_rate, ax_cwnd, ax_rtt = fig.subplots(3, 1, sharex=True)
    meta = result.meta
    bin_s = float(meta.get("bin_s") or 0.1)
    duration_s = float(meta.get("duration_s") or 0.0)
    series = result.flow_series
    flows = result.flows
    colors = _colors(len(flows))
    for k, flow in enumerate(flows.to_dict("records")):
        s = series[series["flow_id"] == flow["id"]].sort_values("t_s")
        t = s["t_s"].to_numpy(dtype=float)
        t_end = np.minimum(t + bin_s, duration_s) if duration_s else t + bin_s
        started = t_end > flow["start_s"]
        label = f"{flow['id']} {flow['cca']} {flow['from']}→{flow['to']}"
        goodput = np.where(started, s["goodput_bps"].to_numpy(dtype=float) / 1e6, np.nan)
        cwnd = np.where(started, s["cwnd_pkts"].to_numpy(dtype=float), np.nan)
        srtt = s["srtt_ms"].to_numpy(dtype=float)
        srtt = np.where(started & (srtt > 0), srtt, np.nan)
        color = colors[k]
        if len(t):
            ax_rate.stairs(goodput, np.append(t, t_end[-1]), color=color, label=label,
                           baseline=None)
        ax_cwnd.plot(t_end, cwnd, color=color, linewidth=1.2)
        ax_rtt.plot(t_end, srtt, color=color, linewidth=1.2)
    ax_rate.set_ylabel("goodput (Mbit/s)")
    ax_cwnd.set_ylabel("cwnd (packets)")
    ax_rtt.set_ylabel("srtt (ms)")
    ax_rtt.set_xlabel("time (s)")
    for ax in (ax_rate, ax_cwnd, ax_rtt):
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        if duration_s:
            ax.set_xlim(0, duration_s)
    if len(flows) <= MAX_LEGEND_FLOWS:
        ax_rate.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
                       title="flow", frameon=False)
    else:
        ax_rate.set_title(f"{len(flows)} flows", fontsize="small", loc="right")
    fig.suptitle(f"{meta.get('scenario')} · {meta.get('engine')} · seed {meta.get('seed')}")
    return fig


def _colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def plot_dir(result_dir: str | Path, out: str | Path | None = None) -> Path:
    """Draw the result in `result_dir` to `out` (default: DIR/plot.png); returns the PNG path."""
    result = load(result_dir)
    path = Path(out) if out is not None else Path(result_dir) / DEFAULT_PNG
    return save(result, path)


def save(result: RunResult, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = draw(result)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=DPI, format="png", metadata={"Software": None})
    tmp.replace(path)
    return path
