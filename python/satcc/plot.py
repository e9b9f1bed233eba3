"""`satcc plot DIR [DIR ...]`: goodput, cwnd, smoothed RTT and queueing delay over time, one
figure (PNG, SVG or PDF by the file's suffix); several directories are overlaid (as flent does).

Stacked panels sharing the time axis (choose with `panels`, default the first three, plus
"queue" when the result has link series):
- "goodput": per bin, Mbit/s (delivered in-order bytes x 8 / bin width), steps over each bin;
  the received rate (`received_bps`, bounded by the link) beside it where measured, a thin
  pale line in the run's own line style (line styles tell overlaid directories apart only);
- "cwnd": packets at the end of each bin (iperf3 results: snd_cwnd in kB), on a log axis (a
  65k-packet spike does not flatten the rest; 1-2-5 ticks when it spans few decades), with
  the BDP of each bottleneck the drawn flows cross (the slowest direction on each flow's
  path, found from the link series' from/to; its capacity x the smallest rtt_min_ms of the
  flows crossing it, in 1448-byte packets) dotted where link series exist;
- "srtt": ms at the end of each bin (analyze: the capture's RTT samples, iperf3's rtt);
- "queue": the queue of each link direction that ever held one, in ms at the direction's
  nominal rate (queue_bytes x 8 / the median of its capacity over the run, labelled so): a
  bin whose capacity dips (a Starlink boundary, an outage) would otherwise turn a few
  packets into seconds. The results carry no per-packet sojourn times;
- "ping": an analyze result's ping/nping probes, RTT (ms) per probe (added by default when
  the result has some; ping flows are not drawn in the other panels).
A field run aligned to Starlink's schedule (`stats.starlink_boundaries_s` in summary.json)
gets a thin dotted vertical line in every panel at each reconfiguration boundary.
Each flow's bins are its own: a row's width is the distance to the flow's next row (iperf3's
1 s intervals beside a capture's 100 ms bins), the last one `bin_s` or the interval. Bins
outside a flow's life are null and not drawn. Legend: the flow's name, with "(cca)" when the
name does not already say it; overlaid directories prefix their own name. The title names the
scenario, engine and seed, or an analysis's input files; a single result's second title line
states its path (`path_text`: rate, one-way delay and random loss of each direction the flows
cross). `flows` selects flows by id or name. Names are drawn as plain text (a `$` is not mathtext). Uses matplotlib's
object API with the Agg canvas; the PNG carries no software or date metadata.
"""

from __future__ import annotations

import math
import re
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
PANELS = ("goodput", "cwnd", "srtt", "queue", "ping")
FORMATS = ("png", "svg", "pdf")
# Linux's MSS on a 1500-byte MTU with timestamps: the packet size of the BDP line
BDP_PACKET_BYTES = 1448
LINESTYLES = ("-", "--", ":", "-.")
RECEIVED_ALPHA = 0.45
FEW_DECADES = 3  # a cwnd axis below 10^3 packets gets 1-2-5 ticks
DEFAULT_PANELS = ("goodput", "cwnd", "srtt")
YLABELS = {
    "goodput": "goodput (Mbit/s)",
    "cwnd": "cwnd (packets)",
    "srtt": "srtt (ms)",
    "queue": "queueing delay (ms at median rate)",
    "ping": "ping RTT (ms)",
}


def plain(text: object) -> str:
    """A name drawn as itself: matplotlib reads `$...$` as math, so dollars are escaped."""
    return str(text).replace("$", r"\$")


def _text(v: object) -> str | None:
    """A label part, None when missing (None, NaN, empty)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or str(v) in ("", "nan", "None"):
        return None
    return str(v)


def flow_label(flow: dict) -> str:
    """The flow's name, with "(cca)" when the name does not already say it."""
    name, cca = _text(flow.get("name")), _text(flow.get("cca"))
    base = name if name else f"{flow.get('from')}→{flow.get('to')}"
    return plain(f"{base} ({cca})" if cca and cca not in base.split(".")[0] else base)


def describe(meta: dict) -> str:
    """A result in a few words: scenario · engine · seed, or an analysis's input files."""
    if meta.get("engine") == "analyze" or not _text(meta.get("scenario")):
        inputs = [Path(str(i)).name for i in meta.get("inputs") or []]
        shown = ", ".join(inputs[:3]) + (f" + {len(inputs) - 3} more" if len(inputs) > 3 else "")
        return plain(f"{meta.get('engine') or 'result'} · {shown or 'no inputs'}")
    seed = meta.get("seed")
    return plain(
        f"{meta.get('scenario')} · {meta.get('engine')}"
        + (f" · seed {seed}" if seed is not None else "")
    )


def _pow_text(e: int) -> str:
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return str(e).translate(sup)


def plain_log_axis(axis, base: float = 10) -> None:
    """A log-scaled axis whose tick labels are plain text (1, 10, 100, 10⁴, 0.001, 2⁻³): the
    default formatter writes mathtext (`$\\mathdefault{10^{-4}}$`), which shows raw where
    mathtext is off (reports draw names as typed)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    def label(v: float, _pos: object = None) -> str:
        if v <= 0 or not math.isfinite(v):
            return ""
        e = round(math.log(v, base))
        if abs(v - base**e) > 1e-9 * v:
            return f"{v:g}"
        if (base == 10 and -3 <= e <= 4) or (base == 2 and 0 <= e <= 12):
            return f"{v:g}"
        return f"{base:g}{_pow_text(e)}"

    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(NullFormatter())


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
    return _draw([("", result)], flows, panels)


def draw_overlay(
    runs: Sequence[tuple[str, RunResult]],
    flows: Iterable[int | str] | None = None,
    panels: Sequence[str] | None = None,
) -> Figure:
    """Several results in the same panels (as flent overlays runs): each (label, result) in
    its own line style, its flows labelled "label: flow"."""
    return _draw(runs, flows, panels)


def default_panels(results: Sequence[RunResult]) -> tuple[str, ...]:
    """goodput, cwnd, srtt, plus ping where a result has ping probes (ping alone if only)."""
    kinds = [
        set(r.flows["proto"].dropna().astype(str)) if "proto" in r.flows else set() for r in results
    ]
    has_ping = any("icmp" in k for k in kinds)
    has_other = any(k - {"icmp"} for k in kinds) or not has_ping
    return (DEFAULT_PANELS if has_other else ()) + (("ping",) if has_ping else ())


def _draw(
    runs: Sequence[tuple[str, RunResult]],
    flows: Iterable[int | str] | None,
    panels: Sequence[str] | None,
) -> Figure:
    if panels is None:
        panels = default_panels([r for _, r in runs])
    bad = [p for p in panels if p not in PANELS]
    if bad or not panels:
        raise ValueError(
            f"expected panels among {', '.join(PANELS)}, found {', '.join(bad) or 'none'}"
        )
    fig = Figure(figsize=(FIG_WIDTH_IN, len(panels) * PANEL_HEIGHT_IN + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    ax = dict(zip(panels, axes, strict=True))
    chosen_all = [(label, r, select_flows(r.flows, flows)) for label, r in runs]
    n_lines = sum(len(c) for _, _, c in chosen_all)
    colors = _colors(sum(len(r.flows) for _, r in runs))
    duration_s = max(float(r.meta.get("duration_s") or 0.0) for _, r in runs)
    cwnd_in_kb = False
    received_drawn = False
    color_base = 0
    for k, (run_label, result, chosen) in enumerate(chosen_all):
        meta = result.meta
        bin_s = float(meta.get("bin_s") or 0.1)
        series = result.flow_series
        all_ids = result.flows["id"].tolist()
        style = LINESTYLES[k % len(LINESTYLES)]
        kb = (
            "cwnd_bytes" in series
            and series["cwnd_pkts"].isna().all()
            and series["cwnd_bytes"].notna().any()
        )
        cwnd_in_kb = cwnd_in_kb or kb
        for flow in chosen.to_dict("records"):
            s = series[series["flow_id"] == flow["id"]].sort_values("t_s")
            t = s["t_s"].to_numpy(dtype=float)
            color = colors[color_base + all_ids.index(flow["id"])]
            label = flow_label(flow)
            if run_label:
                label = f"{plain(run_label)}: {label}"
            if flow.get("proto") == "icmp":
                if "ping" in ax and len(t):
                    ax["ping"].plot(
                        t,
                        s["srtt_ms"].to_numpy(dtype=float),
                        color=color,
                        linestyle=style,
                        linewidth=0.8,
                        marker=".",
                        markersize=3,
                        label=label,
                    )
                continue
            edges = _edges(t, bin_s, duration_s)
            t_end = edges[1:] if len(t) else t
            if "goodput" in ax and len(t):
                goodput = s["goodput_bps"].to_numpy(dtype=float) / 1e6
                ax["goodput"].stairs(
                    goodput, edges, color=color, linestyle=style, label=label, baseline=None
                )
                if "received_bps" in s and s["received_bps"].notna().any():
                    received = s["received_bps"].to_numpy(dtype=float) / 1e6
                    ax["goodput"].stairs(
                        received,
                        edges,
                        color=color,
                        linestyle=style,
                        linewidth=0.6,
                        alpha=RECEIVED_ALPHA,
                        baseline=None,
                    )
                    received_drawn = True
            if "cwnd" in ax:
                cwnd = (
                    s["cwnd_bytes"].to_numpy(dtype=float) / 1e3
                    if kb
                    else s["cwnd_pkts"].to_numpy(dtype=float)
                )
                ax["cwnd"].plot(
                    t_end,
                    np.where(cwnd > 0, cwnd, np.nan),
                    color=color,
                    linestyle=style,
                    linewidth=1.2,
                )
            if "srtt" in ax:
                srtt = s["srtt_ms"].to_numpy(dtype=float)
                ax["srtt"].plot(
                    t_end,
                    np.where(srtt > 0, srtt, np.nan),
                    color=color,
                    linestyle=style,
                    linewidth=1.2,
                )
        if "cwnd" in ax and not kb:
            _bdp_line(ax["cwnd"], result, chosen, run_label)
        if "queue" in ax:
            _queue_panel(ax["queue"], result, result.link_series)
        color_base += len(all_ids)
    for name, a in ax.items():
        a.set_ylabel("cwnd (kB)" if name == "cwnd" and cwnd_in_kb else YLABELS[name])
        a.grid(True, alpha=0.3)
        if (
            name == "cwnd"
            and a.lines
            and any(np.nanmax(np.r_[ln.get_ydata(), 0]) > 0 for ln in a.lines)
        ):
            a.set_yscale("log")
            plain_log_axis(a.yaxis)
            a.set_ylim(bottom=1)
            top_value = max(np.nanmax(np.r_[ln.get_ydata(), 1]) for ln in a.lines)
            if top_value < 10**FEW_DECADES:
                # 1, 2, 5, 10, 20, 50 ...: a 1-10-100 axis leaves most values unread
                from matplotlib.ticker import LogLocator

                a.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        else:
            a.set_ylim(bottom=0)
        if duration_s:
            a.set_xlim(0, duration_s)
        if name in ("cwnd", "srtt", "ping") and not any(
            np.isfinite(np.asarray(ln.get_ydata(), dtype=float)).any() for ln in a.lines
        ):
            # e.g. an iperf3 -R client's report: the sender's cwnd and RTT are not in it
            what = {"cwnd": "cwnd", "srtt": "RTT", "ping": "ping probe"}[name]
            a.text(
                0.5,
                0.5,
                f"no {what} samples in this result",
                ha="center",
                va="center",
                transform=a.transAxes,
                fontsize="small",
                color="0.4",
            )
    if received_drawn:
        ax["goodput"].text(
            1.01,
            0.0,
            "thin pale lines:\nreceived rate",
            ha="left",
            va="bottom",
            transform=ax["goodput"].transAxes,
            fontsize="x-small",
            color="0.35",
        )
    # after the panels' checks above, which read their lines' data (a boundary is a line)
    for k, (run_label, result, _) in enumerate(chosen_all):
        starlink_lines(axes, result.meta, LINESTYLES[k % len(LINESTYLES)], run_label)
    axes[-1].set_xlabel("time (s)")
    top = axes[0]
    if n_lines <= MAX_LEGEND_FLOWS:
        for a in axes:
            if a.get_legend_handles_labels()[0] and (
                a is top or a is ax.get("ping") or a is ax.get("cwnd")
            ):
                a.legend(
                    loc="upper left",
                    bbox_to_anchor=(1.01, 1.0),
                    fontsize="small",
                    title="flow" if a is top else None,
                    frameon=False,
                )
    else:
        top.set_title(f"{n_lines} flows", fontsize="small", loc="right")
    if len(runs) == 1:
        path = path_text(runs[0][1])
        fig.suptitle(describe(runs[0][1].meta) + (f"\n{plain(path)}" if path else ""))
    else:
        fig.suptitle("overlay: " + " | ".join(plain(label) for label, _ in runs), fontsize="medium")
    return fig


BOUNDARY_COLOR = "0.45"


def starlink_boundaries(meta: dict) -> list[float]:
    """A field run's Starlink reconfiguration boundaries, seconds from iperf3's launch
    (summary.json `stats.starlink_boundaries_s`); [] for every other result."""
    stats = meta.get("stats") or {}
    values = stats.get("starlink_boundaries_s") if isinstance(stats, dict) else None
    if not isinstance(values, list):
        return []
    return [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]


def starlink_lines(axes: Iterable, meta: dict, style: str = ":", run_label: str = "") -> int:
    """A vertical line per Starlink boundary of a field run in each of `axes`, labelled once
    (the legend of the first axis that has one). Returns how many boundaries were drawn."""
    times = starlink_boundaries(meta)
    for k, a in enumerate(axes):
        for i, t in enumerate(times):
            label = None
            if k == 0 and i == 0:
                label = plain(f"{run_label}: " if run_label else "") + "Starlink boundary"
            a.axvline(
                t,
                color=BOUNDARY_COLOR,
                linestyle=":" if style == "-" else style,
                linewidth=0.9,
                zorder=0.5,
                label=label,
            )
    return len(times)


def _path_edges(ls) -> dict[str, list[tuple[str, int, str]]]:
    """The link directions as a graph: node -> [(next node, link id, dir)], from the link
    series' own from/to columns."""
    edges: dict[str, list[tuple[str, int, str]]] = {}
    for (link_id, d, a, b), _ in ls.groupby(["link_id", "dir", "from", "to"], sort=True):
        edges.setdefault(str(a), []).append((str(b), int(link_id), str(d)))
    return edges


def flow_path(ls, src: object, dst: object) -> list[tuple[int, str]]:
    """The (link id, dir) hops from `src` to `dst` over the result's link directions (the
    fewest hops, as the resolver routes); [] when there is no such path or no link series."""
    if ls is None or ls.empty or "from" not in ls:
        return []
    edges = _path_edges(ls)
    src, dst = str(src), str(dst)
    prev: dict[str, tuple[str, int, str]] = {}
    frontier, seen = [src], {src}
    while frontier and dst not in seen:
        nxt = []
        for node in frontier:
            for b, link_id, d in edges.get(node, []):
                if b not in seen:
                    seen.add(b)
                    prev[b] = (node, link_id, d)
                    nxt.append(b)
        frontier = nxt
    if dst not in prev:
        return []
    hops, node = [], dst
    while node != src:
        a, link_id, d = prev[node]
        hops.append((link_id, d))
        node = a
    return hops[::-1]


def _median_rates(ls) -> dict[tuple[int, str], float]:
    """Each link direction's nominal rate: the median of its capacity over the run (its
    configured rate when constant; the typical epoch's when a model varies it)."""
    return {
        (int(k[0]), str(k[1])): float(v)
        for k, v in ls.groupby(["link_id", "dir"])["capacity_bps"].median().items()
    }


def bottlenecks(result: RunResult, chosen) -> dict[tuple[int, str], list[int]]:
    """Each drawn flow's bottleneck, the direction of least median capacity on its path:
    {(link id, dir): [flow ids crossing it as their bottleneck]}."""
    ls = result.link_series
    if ls is None or ls.empty:
        return {}
    rates = _median_rates(ls)
    out: dict[tuple[int, str], list[int]] = {}
    for flow in chosen.to_dict("records"):
        hops = flow_path(ls, flow.get("from"), flow.get("to"))
        if hops:
            out.setdefault(min(hops, key=lambda h: rates.get(h, math.inf)), []).append(
                int(flow["id"])
            )
    return out


def _direction_name(ls, link_id: int, d: str) -> str:
    g = ls[(ls["link_id"] == link_id) & (ls["dir"] == d)]
    if g.empty or "from" not in g:
        return f"link[{link_id}] {d}"
    return f"link[{link_id}] {g['from'].iloc[0]}→{g['to'].iloc[0]}"


def _bdp_line(a, result: RunResult, chosen, run_label: str) -> None:
    """The bandwidth-delay product in packets over time of each bottleneck the drawn flows
    cross: its capacity per bin times the smallest rtt_min_ms of the flows whose bottleneck it
    is, over 1448-byte packets."""
    ls = result.link_series
    if ls is None or ls.empty or "rtt_min_ms" not in chosen:
        return
    for (link_id, d), ids in bottlenecks(result, chosen).items():
        rtt = chosen[chosen["id"].isin(ids)]["rtt_min_ms"].astype(float)
        rtt = rtt[rtt > 0]
        if rtt.empty:
            continue
        g = ls[(ls["link_id"] == link_id) & (ls["dir"] == d)].sort_values("t_s")
        bdp = (
            g["capacity_bps"].to_numpy(dtype=float)
            * float(rtt.min())
            / 1e3
            / (8 * BDP_PACKET_BYTES)
        )
        end = g["t_s"].to_numpy(dtype=float) + float(result.meta.get("bin_s") or 0.1)
        label = f"BDP {_direction_name(ls, link_id, d)} ({rtt.min():.0f} ms)"
        a.plot(
            end,
            np.where(bdp > 0, bdp, np.nan),
            color="0.3",
            linestyle=":",
            linewidth=1.0,
            label=plain(f"{run_label}: {label}" if run_label else label),
        )


def queue_delay_ms(g, rate_bps: float) -> np.ndarray:
    """A direction's queue in ms at `rate_bps` (its nominal rate): queue_bytes x 8 / rate."""
    q = g["queue_bytes"].to_numpy(dtype=float)
    return q * 8 / rate_bps * 1e3 if rate_bps > 0 else np.full(len(q), np.nan)


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
    rates = _median_rates(ls)
    for (link_id, d), g in ls.groupby(["link_id", "dir"], sort=True):
        if not (g["queue_bytes"].fillna(0) > 0).any():
            continue
        g = g.sort_values("t_s")
        rate = rates[(int(link_id), str(d))]
        end = g["t_s"].to_numpy(dtype=float) + float(result.meta.get("bin_s") or 0.1)
        a.plot(
            end,
            queue_delay_ms(g, rate),
            linewidth=1.0,
            label=plain(
                f"link[{link_id}] {g['from'].iloc[0]}→{g['to'].iloc[0]} "
                f"(÷ {format_rate(rate)} median)"
            ),
        )
    if a.get_legend_handles_labels()[0]:
        a.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)


def format_rate(bps: float) -> str:
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.3g} bit/s"


def path_text(result: RunResult) -> str:
    """The path a result measured, a line per sender→receiver pair of its flows: the
    bottleneck's median rate, the propagation RTT (one-way delays there and back) and the
    random loss on the way (drops ÷ the pair's data packets; where other flows' ACKs cross
    the same direction the drops are only counted, as the packets they came from are not
    known), or the flows' least RTT where the result has no link series (a capture,
    iperf3). "" when neither is known."""
    ls = result.link_series
    flows = result.flows
    if "proto" in flows:
        flows = flows[flows["proto"].astype(str) != "icmp"]
    if ls is None or ls.empty:
        if "rtt_min_ms" in flows and flows["rtt_min_ms"].notna().any():
            return f"path: measured, least RTT {float(flows['rtt_min_ms'].min()):.1f} ms"
        return ""
    rates = _median_rates(ls)
    delays = {
        (int(k[0]), str(k[1])): float(v)
        for k, v in ls.groupby(["link_id", "dir"])["delay_ms"].median().items()
    }
    drops = {
        (int(k[0]), str(k[1])): float(v)
        for k, v in ls.groupby(["link_id", "dir"])["drops_random"].sum().items()
    }
    pairs = list(dict.fromkeys(zip(flows["from"].astype(str), flows["to"].astype(str))))
    hops = {pair: flow_path(ls, *pair) for pair in pairs}
    acked = {h for (a, b) in pairs for h in flow_path(ls, b, a)}  # directions ACKs cross
    lines = []
    for (a, b), fwd in hops.items():
        if not fwd:
            continue
        back = flow_path(ls, b, a)
        rtt = sum(delays[h] for h in fwd) + sum(delays[h] for h in back)
        text = f"{a}→{b}: {format_rate(min(rates[h] for h in fwd))}, RTT {rtt:.3g} ms"
        mine = flows[(flows["from"].astype(str) == a) & (flows["to"].astype(str) == b)]
        sent = float(mine["sent_packets"].fillna(0).sum()) if "sent_packets" in mine else 0.0
        dropped = sum(drops.get(h, 0.0) for h in fwd)
        if any(h in acked for h in fwd) or sent <= 0:
            text += f", {dropped:.0f} random drops (data and ACKs)"
        else:
            text += f", random loss {100 * dropped / sent:.2g} %"
        lines.append(text)
    return "\n".join(f"path {line}" for line in lines)


def figure(
    result: RunResult, flows: Iterable[int | str] | None = None, panels: Sequence[str] | None = None
) -> Figure:
    """`draw` for notebooks: every panel the result has data for unless `panels` is given."""
    if panels is None:
        panels = default_panels([result]) + (("queue",) if not result.link_series.empty else ())
    return draw(result, flows=flows, panels=panels)


def _colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def plot_dir(
    result_dir: str | Path | Sequence[str | Path],
    out: str | Path | None = None,
    flows: Iterable[int | str] | None = None,
    panels: Sequence[str] | None = None,
) -> Path:
    """Draw the result in `result_dir` (or several, overlaid) to `out` (default:
    DIR/plot.png, the first DIR's); the format follows out's suffix (.png, .svg, .pdf)."""
    dirs = [result_dir] if isinstance(result_dir, (str, Path)) else list(result_dir)
    path = Path(out) if out is not None else Path(dirs[0]) / DEFAULT_PNG
    fmt = output_format(path)
    if len(dirs) == 1:
        return save(load(dirs[0]), path, flows=flows, panels=panels, fmt=fmt)
    runs = [(_short_names(dirs)[i], load(d)) for i, d in enumerate(dirs)]
    fig = draw_overlay(runs, flows, panels)
    return save_figure(fig, path, fmt)


def _short_names(dirs: Sequence[str | Path]) -> list[str]:
    """Each directory's name, or its path when two share a name."""
    names = [Path(d).name or str(d) for d in dirs]
    return names if len(set(names)) == len(names) else [str(d) for d in dirs]


def output_format(path: str | Path) -> str:
    """ "png", "svg" or "pdf" from the file's suffix; ValueError naming the suffix otherwise."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ValueError(
            f"expected a file ending in {', '.join('.' + f for f in FORMATS)}, found {str(path)!r}"
        )
    return suffix


def save(
    result: RunResult,
    path: str | Path,
    flows: Iterable[int | str] | None = None,
    panels: Sequence[str] | None = None,
    fmt: str | None = None,
) -> Path:
    path = Path(path)
    fig = draw(result, flows=flows, panels=panels)
    return save_figure(fig, path, fmt or output_format(path))


def save_figure(fig: Figure, path: Path, fmt: str, dpi: int = DPI) -> Path:
    """Write a figure without dates or software names (same figure, same bytes)."""
    from matplotlib import rc_context

    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {
        "png": {"Software": None},
        "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
        "svg": {"Creator": None, "Date": None},
    }[fmt]
    tmp = path.with_name(f".{path.name}.tmp")
    with rc_context({"svg.hashsalt": "satcc"}):
        fig.savefig(tmp, dpi=dpi, format=fmt, metadata=metadata)
    if fmt == "svg":
        tmp.write_text(stable_svg_ids(tmp.read_text(encoding="utf-8")), encoding="utf-8")
    tmp.replace(path)
    return path


_SVG_HASH_ID = re.compile(r"\b([mp])[0-9a-f]{10}\b")  # marker and clip-path ids


def stable_svg_ids(text: str) -> str:
    """matplotlib names SVG markers and clip paths by hashing object addresses: renumber them
    in order of appearance so that the same figure gives the same bytes."""
    names: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0), f"{m.group(1)}id{len(names) + 1}")

    return _SVG_HASH_ID.sub(rename, text)
