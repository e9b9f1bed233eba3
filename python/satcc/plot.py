"""`satcc plot DIR`: goodput, cwnd, smoothed RTT and queueing delay over time, one PNG.

Stacked panels sharing the time axis (choose with `panels`, default the first three, plus
"queue" when the result has link series):
- "goodput": per bin, Mbit/s (delivered in-order bytes x 8 / bin width), steps over each bin;
  the received rate (`received_bps`, bounded by the link) dashed beside it where measured;
- "cwnd": packets at the end of each bin (iperf3 results: snd_cwnd in kB);
- "srtt": ms at the end of each bin (analyze: the capture's RTT samples, iperf3's rtt);
- "queue": queueing delay per link direction that ever held a queue, ms
  (queue_bytes x 8 / capacity at the end of each bin).
Each flow's bins are its own: a row's width is the distance to the flow's next row (iperf3's
1 s intervals beside a capture's 100 ms bins), the last one `bin_s` or the interval. Bins
outside a flow's life are null and not drawn. Legend: "name (cca)" per flow; `flows` selects
flows by id or name. Names are drawn as plain text (a `$` is not mathtext). Uses matplotlib's
object API with the Agg canvas; the PNG carries no software or date metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
PANELS = ("goodput", "cwnd", "srtt", "queue")
DEFAULT_PANELS = ("goodput", "cwnd", "srtt")
YLABELS = {
    "goodput": "goodput (Mbit/s)",
    "cwnd": "cwnd (packets)",
    "srtt": "srtt (ms)",
    "queue": "queueing delay (ms)",
}


def plain(text: object) -> str:
    """A name drawn as itself: matplotlib reads `$...$` as math, so dollars are escaped."""
    return str(text).replace("$", r"\$")


def flow_label(flow: dict) -> str:
    name = flow.get("name")
    cca = flow.get("cca")
    base = name if name else f"{flow.get('from')}→{flow.get('to')}"
    return plain(f"{base} ({cca})" if cca else base)


def select_flows(flows, which: Iterable[int | str] | None):
    """Rows of `flows` whose id or name is in `which` (all when None)."""
    if which is None:
        return flows
    wanted = [str(w) for w in which]
    mask = flows["id"].astype(str).isin(wanted) | flows["name"].astype(str).isin(wanted)
    if not mask.any():
        raise ValueError(
            f"expected flow ids or names among {', '.join(map(str, flows['id']))}, "
            f"found {', '.join(wanted)}"
        )
    return flows[mask]


def _edges(t: np.ndarray, bin_s: float, duration_s: float) -> np.ndarray:
    """Bin edges of one flow's rows: each row ends where the next begins; the last after
    one bin (or the previous row's width when rows are wider than bin_s, as iperf3's are)."""
    if len(t) == 0:
        return t
    last = float(np.diff(t)[-1]) if len(t) > 1 else bin_s
    end = t[-1] + max(last, bin_s) if len(t) > 1 and last > bin_s * 1.5 else t[-1] + bin_s
    if duration_s and len(t) and t[-1] < duration_s:
        end = min(end, duration_s)
    return np.append(t, end)


def draw(
    result: RunResult, flows: Iterable[int | str] | None = None, panels: Sequence[str] | None = None
) -> Figure:
    """The figure for one result (not saved)."""
    link_series = result.link_series
    if panels is None:
        panels = DEFAULT_PANELS
    bad = [p for p in panels if p not in PANELS]
    if bad or not panels:
        raise ValueError(
            f"expected panels among {', '.join(PANELS)}, found {', '.join(bad) or 'none'}"
        )
    fig = Figure(figsize=(FIG_WIDTH_IN, len(panels) * PANEL_HEIGHT_IN + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    ax = dict(zip(panels, axes, strict=True))
    meta = result.meta
    bin_s = float(meta.get("bin_s") or 0.1)
    duration_s = float(meta.get("duration_s") or 0.0)
    series = result.flow_series
    chosen = select_flows(result.flows, flows)
    all_ids = result.flows["id"].tolist()
    colors = _colors(len(all_ids))
    cwnd_in_kb = (
        "cwnd_bytes" in series
        and series["cwnd_pkts"].isna().all()
        and series["cwnd_bytes"].notna().any()
    )
    for flow in chosen.to_dict("records"):
        s = series[series["flow_id"] == flow["id"]].sort_values("t_s")
        t = s["t_s"].to_numpy(dtype=float)
        edges = _edges(t, bin_s, duration_s)
        t_end = edges[1:] if len(t) else t
        color = colors[all_ids.index(flow["id"])]
        label = flow_label(flow)
        if "goodput" in ax and len(t):
            goodput = s["goodput_bps"].to_numpy(dtype=float) / 1e6
            ax["goodput"].stairs(goodput, edges, color=color, label=label, baseline=None)
            if "received_bps" in s and s["received_bps"].notna().any():
                received = s["received_bps"].to_numpy(dtype=float) / 1e6
                ax["goodput"].stairs(
                    received, edges, color=color, linestyle="--", linewidth=0.8, baseline=None
                )
        if "cwnd" in ax:
            cwnd = (
                s["cwnd_bytes"].to_numpy(dtype=float) / 1e3
                if cwnd_in_kb
                else s["cwnd_pkts"].to_numpy(dtype=float)
            )
            ax["cwnd"].plot(t_end, cwnd, color=color, linewidth=1.2)
        if "srtt" in ax:
            srtt = s["srtt_ms"].to_numpy(dtype=float)
            ax["srtt"].plot(t_end, np.where(srtt > 0, srtt, np.nan), color=color, linewidth=1.2)
    if "queue" in ax:
        _queue_panel(ax["queue"], result, link_series)
    for name, a in ax.items():
        a.set_ylabel("cwnd (kB)" if name == "cwnd" and cwnd_in_kb else YLABELS[name])
        a.grid(True, alpha=0.3)
        a.set_ylim(bottom=0)
        if duration_s:
            a.set_xlim(0, duration_s)
    axes[-1].set_xlabel("time (s)")
    top = axes[0]
    if len(chosen) <= MAX_LEGEND_FLOWS:
        handles = [h for h in top.get_legend_handles_labels()[0]]
        if handles:
            top.legend(
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
                fontsize="small",
                title="flow",
                frameon=False,
            )
    else:
        top.set_title(f"{len(chosen)} flows", fontsize="small", loc="right")
    fig.suptitle(plain(f"{meta.get('scenario')} · {meta.get('engine')} · seed {meta.get('seed')}"))
    return fig


def _queue_panel(a, result: RunResult, ls) -> None:
    if ls is None or ls.empty:
        a.text(
            0.5,
            0.5,
            "no link series (analyze results have no queue)",
            ha="center",
            va="center",
            transform=a.transAxes,
            fontsize="small",
        )
        return
    for (link_id, d), g in ls.groupby(["link_id", "dir"], sort=True):
        if not (g["queue_bytes"].fillna(0) > 0).any():
            continue
        g = g.sort_values("t_s")
        cap = g["capacity_bps"].to_numpy(dtype=float)
        qdelay = np.where(
            cap > 0,
            g["queue_bytes"].to_numpy(dtype=float) * 8 / np.where(cap > 0, cap, 1) * 1e3,
            np.nan,
        )
        end = g["t_s"].to_numpy(dtype=float) + float(result.meta.get("bin_s") or 0.1)
        a.plot(
            end,
            qdelay,
            linewidth=1.0,
            label=plain(f"link[{link_id}] {g['from'].iloc[0]}→{g['to'].iloc[0]}"),
        )
    if a.get_legend_handles_labels()[0]:
        a.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)


def figure(
    result: RunResult, flows: Iterable[int | str] | None = None, panels: Sequence[str] | None = None
) -> Figure:
    """`draw` for notebooks: every panel the result has data for unless `panels` is given."""
    if panels is None:
        panels = DEFAULT_PANELS + (("queue",) if not result.link_series.empty else ())
    return draw(result, flows=flows, panels=panels)


def _colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def plot_dir(
    result_dir: str | Path,
    out: str | Path | None = None,
    flows: Iterable[int | str] | None = None,
    panels: Sequence[str] | None = None,
) -> Path:
    """Draw the result in `result_dir` to `out` (default: DIR/plot.png); returns the PNG path."""
    result = load(result_dir)
    path = Path(out) if out is not None else Path(result_dir) / DEFAULT_PNG
    return save(result, path, flows=flows, panels=panels)


def save(
    result: RunResult,
    path: str | Path,
    flows: Iterable[int | str] | None = None,
    panels: Sequence[str] | None = None,
) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = draw(result, flows=flows, panels=panels)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=DPI, format="png", metadata={"Software": None})
    tmp.replace(path)
    return path
