"""The studies' figures, drawn from a campaign's store, each only when the campaign has its data.

Each figure function takes a `Data` (the store's frames plus the campaign's axes by role) and
returns a `Drawn` (a matplotlib Figure, a caption) or raises `Skip(reason)`. The axes a figure
uses are found by role (satcc.campaign.spec.role_of: `flow.*.cca` is "cca", `*.mss` "mss",
`link[i].loss` "loss", `link[i].delay` "rtt", `link[i].model.start` "time_of_day", ...; a
campaign axis may set `role` itself).

| id             | study figure        | needs                                                        |
|----------------|---------------------|--------------------------------------------------------------|
| timeseries_cca | 001 Fig. 5-6        | goodput series of a sim/emu/analyze run per CCA             |
| box_throughput | 001 Fig. 7-8        | >= 2 runs for some CCA x direction (mean goodput per run)   |
| box_retx       | 001 Fig. 9-10       | the same, with retransmission rates                          |
| rtt_day        | 000 Fig. 10-11      | ping logs with timestamps (analyze) or a time-of-day axis    |
| mss            | 000 Fig. 6-9        | an MSS axis with >= 2 values                                 |
| rtt_fairness   | 004 Fig. 5-17       | an RTT axis with >= 2 values and >= 2 [[flow]] groups        |
| engines_loss   | 002 Fig. 3-9        | a loss axis with >= 2 values and runs of >= 2 engines        |
| seqack         | 003 Fig. 6          | a seqack trace (simulated run or analysed capture)           |
| ca_ramp        | 003 Fig. 7          | a run >= 30 s with cwnd series and a congestion-avoidance stretch |
| traces         | (every study)       | cwnd/srtt series of sim or emu runs (satcc.plot panels)      |
| fidelity       | (sim vs kernel)     | a `satcc fidelity` directory (sim and kernel runs per scenario) |
| cdfs           | (every study)       | >= 2 flows with a CCA and a goodput                          |
| throughput_delay | Pantheon Fig. 2   | flows with a CCA, goodput and 95th-percentile RTT            |

Goodput is application bytes x 8 per time (the studies' "throughput" from iperf3/tshark
counts the same payload). Error bars are min-max over the runs of a point; boxes are
matplotlib's (median, quartiles, 1.5 IQR whiskers, outliers as dots).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from satcc.campaign import layout
from satcc.plot import plain_log_axis, starlink_lines

SSTHRESH_UNSET = 2147483647  # results README: ssthresh not yet set, as Linux
MIN_RAMP_RUN_S = 30.0
MIN_RAMP_BINS = 10
MAX_FACETS = 6
MAX_TRACES = 4
SEQACK_WINDOW_SEGMENTS = 60  # segments either side of the first retransmission
WIDTH_IN = 7.0
MODEL = "model"


class Skip(Exception):
    """The campaign lacks the data for a figure; the message says what is missing."""


@dataclass
class Drawn:
    fig: Figure
    caption: str


@dataclass
class Data:
    """What the figures read: store frames (loaded lazily) and the axes by role."""

    store: Any
    axes: list[dict[str, Any]]
    _cache: dict[str, pd.DataFrame] = field(default_factory=dict)

    def frame(self, name: str, sql: str) -> pd.DataFrame:
        if name not in self._cache:
            self._cache[name] = self.store.query(sql)
        return self._cache[name]

    @property
    def runs(self) -> pd.DataFrame:
        return self.frame(
            "runs", "SELECT * FROM runs WHERE status = 'done' ORDER BY point, repetition, run_id"
        )

    @property
    def flows(self) -> pd.DataFrame:
        return self.frame("flows", "SELECT * FROM flows ORDER BY point, repetition, run_id, id")

    def axis(self, role: str) -> dict[str, Any] | None:
        found = [a for a in self.axes if a["role"] == role and len(a["values"]) >= 1]
        return found[0] if found else None

    def numeric(self, axis: dict[str, Any]) -> str | None:
        """The column holding the axis as numbers, if any."""
        if "numeric_column" in axis:
            return axis["numeric_column"]
        vals = axis["values"]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            return axis["name"]
        return None

    def column(self, frame: pd.DataFrame, name: str) -> str:
        """A parameter column's name in a data view (`param_X` when X clashes)."""
        return f"param_{name}" if f"param_{name}" in frame.columns else name


def new_figure(rows: int = 1, cols: int = 1, height: float = 3.6, **kw: Any):
    fig = Figure(
        figsize=(WIDTH_IN if cols <= 2 else 3.2 * cols, height * rows), layout="constrained"
    )
    FigureCanvasAgg(fig)
    axs = fig.subplots(rows, cols, squeeze=False, **kw)
    return fig, axs


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def flow_group(name: Any) -> str:
    """A flow's [[flow]] name without the `.k` of count copies."""
    text = str(name)
    head, dot, tail = text.rpartition(".")
    return head if dot and tail.isdigit() else text


def _direction(data: Data, flows: pd.DataFrame) -> pd.Series:
    ax = data.axis("direction")
    if ax is not None:
        col = data.column(flows, ax["name"])
        return flows[col].astype(str)
    return flows["name"].map(flow_group)


MAX_CONDITIONS = 12  # panels per figure; beyond this the caption says how many are left out
PANEL_COLS = 3
# Roles that are samples of one condition, not conditions: rounds through the day
SAMPLE_ROLES = {"time_of_day"}


def _short(name: str) -> str:
    """An axis name for a panel title: `link[0].model.plan` -> `plan`."""
    return str(name).rsplit(".", 1)[-1]


def _conditions(
    data: Data,
    frame: pd.DataFrame,
    exclude_roles: set[str] = frozenset(),
    split_paths: bool = True,
) -> tuple[list[tuple[str, pd.Series]], int]:
    """The campaign's conditions present in `frame`, one panel each (as flent and Pantheon
    plot each condition apart): every matrix axis but the CCA's (each CCA is a line or box
    within the panel), the roles in `exclude_roles` and rounds; the engine when more than one
    ran; the path (from→to) when flows go more than one way and no axis says the direction
    (unless not `split_paths`: flows from two senders to one receiver compared in a panel).
    Returns ([(title, row mask)], number of conditions in all)."""
    cols: list[tuple[str, pd.Series]] = []
    names: list[str] = []
    for a in data.axes:
        if a["role"] in exclude_roles | SAMPLE_ROLES | {"cca"}:
            continue
        col = data.column(frame, a["name"])
        if col in frame and frame[col].astype(str).nunique() > 1:
            cols.append((_short(a["name"]), frame[col].astype(str)))
            names.append(a["name"])
    if (
        "engine" in frame
        and frame["engine"].nunique() > 1
        and "engine" not in exclude_roles
        and not any(_short(n) == "engine" for n in names)
    ):
        cols.append(("engine", frame["engine"].astype(str)))
    has_direction = any(a["role"] == "direction" for a in data.axes)
    if split_paths and not has_direction and {"from", "to"} <= set(frame.columns):
        path = frame["from"].astype(str) + "→" + frame["to"].astype(str)
        if path.nunique() > 1:
            cols.append(("", path))
    if not cols:
        return [("", pd.Series(True, index=frame.index))], 1
    key = pd.Series(list(zip(*(c for _, c in cols), strict=True)), index=frame.index)
    out = []
    for values in dict.fromkeys(key):
        title = " · ".join(
            f"{n}={v}" if n and n not in ("engine",) else str(v)
            for (n, _), v in zip(cols, values, strict=True)
        )
        out.append((title, key == values))
    return out[:MAX_CONDITIONS], len(out)


def _grid(n: int, height: float) -> tuple[Figure, list[Any]]:
    """n panels in rows of PANEL_COLS, each with its own y axis; unused cells hidden."""
    cols = min(n, PANEL_COLS)
    rows = math.ceil(n / cols)
    fig, axs = new_figure(rows, cols, height=height)
    flat = [a for row in axs for a in row]
    for a in flat[n:]:
        a.set_axis_off()
    return fig, flat[:n]


def _left_out(shown: int, total: int) -> str:
    return f" The first {shown} of {total} conditions are shown." if total > shown else ""


def _blocks(n: int, per: int, height: float) -> tuple[Figure, list[list[Any]]]:
    """n conditions in rows of PANEL_COLS, each a block of `per` panels stacked (e.g.
    goodput above Jain's index), every panel with its own y axis; unused cells hidden."""
    cols = min(n, PANEL_COLS)
    rows = math.ceil(n / cols)
    fig, axs = new_figure(rows * per, cols, height=height)
    blocks = [[axs[(i // cols) * per + k][i % cols] for k in range(per)] for i in range(n)]
    for i in range(n, rows * cols):
        for k in range(per):
            axs[(i // cols) * per + k][i % cols].set_axis_off()
    return fig, blocks


def _by_group(conds: list[tuple[str, pd.Series]], groups: pd.Series) -> list[tuple[str, pd.Series]]:
    """Each condition split by [[flow]] group when it holds more than one (`mss`: a panel
    per flow, as study 000 draws client and server apart; a direction axis that renames the
    flow already split them)."""
    out = []
    for title, mask in conds:
        names = list(dict.fromkeys(groups[mask]))
        if len(names) < 2:
            out.append((title or (f"flow {names[0]}" if names else ""), mask))
            continue
        for g in names:
            out.append((f"flow {g}" + (f" · {title}" if title else ""), mask & (groups == g)))
    return out


# -- 001 Fig. 5-6 ---------------------------------------------------------------------------


def run_summary(directory: Path, run_id: str) -> dict[str, Any]:
    """A campaign run's summary.json (its `stats` carry a field run's Starlink boundaries);
    {} when unreadable."""
    import json

    path = Path(directory) / layout.RUNS_DIR / str(run_id) / "summary.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def timeseries_cca(data: Data) -> Drawn:
    flows = data.flows[data.flows["engine"] != MODEL]
    flows = flows[flows["cca"].notna()]
    if flows.empty:
        raise Skip("no flow with a congestion control in a sim, emu or analyze run")
    conds, total = _conditions(data, flows)
    ccas = list(dict.fromkeys(flows["cca"]))
    picks: list[tuple[int, str, str]] = []
    for r, (_, mask) in enumerate(conds):
        for cca in ccas:
            mine = flows[mask & (flows["cca"] == cca)]
            if not mine.empty:
                picks.append((r, cca, mine.iloc[0]["run_id"]))
    ids = sorted({p[2] for p in picks})
    series = data.store.query(
        "SELECT run_id, flow_id, t_s, goodput_bps FROM flow_series WHERE run_id IN ("
        + ", ".join(f"'{i}'" for i in ids)
        + ") ORDER BY run_id, flow_id, t_s"
    )
    if series["goodput_bps"].notna().sum() == 0:
        raise Skip("the runs carry no goodput series")
    # a row per condition, its own y scale (an upload beside a download); CCAs share a row's
    with_boundaries = False
    fig, axs = new_figure(len(conds), len(ccas), height=2.6, sharex=True, sharey="row")
    for r, (title, _) in enumerate(conds):
        for c, cca in enumerate(ccas):
            ax = axs[r][c]
            pick = next((p for p in picks if p[0] == r and p[1] == cca), None)
            ax.set_title(f"{cca}" + (f" · {title}" if title else ""), fontsize="medium")
            ax.grid(True, alpha=0.3)
            if pick is None:
                continue
            run_flows = flows[(flows["run_id"] == pick[2]) & (flows["cca"] == cca)]
            colors = _colors(max(len(run_flows), 1))
            for k, f in enumerate(run_flows.itertuples()):
                s = series[(series["run_id"] == pick[2]) & (series["flow_id"] == f.id)]
                ax.plot(
                    s["t_s"], s["goodput_bps"] / 1e6, lw=0.9, color=colors[k], label=str(f.name)
                )
            marked = starlink_lines([ax], run_summary(data.store.directory, pick[2]))
            with_boundaries = with_boundaries or marked > 0
            if r == 0 and c == len(ccas) - 1:
                ax.legend(fontsize="x-small", loc="upper right")
            if c == 0:
                ax.set_ylabel("throughput (Mbit/s)")
            if r == len(conds) - 1:
                ax.set_xlabel("time (s)")
    for row in axs:
        for ax in row:
            ax.autoscale_view()
            ax.set_ylim(bottom=0)
    return Drawn(
        fig,
        "Goodput per time bin of one run per congestion control and condition (the first "
        "repetition that has it), one line per flow, a row per condition with its own y "
        "axis; study 001 Fig. 5-6 plot the same from tshark in 0.1 s bins."
        + (
            " Dotted vertical lines: Starlink's reconfiguration boundaries during a field run "
            "(seconds from iperf3's launch, which precedes its first report by the connection "
            "set-up)."
            if with_boundaries
            else ""
        )
        + _left_out(len(conds), total),
    )


# -- 001 Fig. 7-10 --------------------------------------------------------------------------


def _boxes(data: Data, value: str, scale: float, ylabel: str, what: str) -> Drawn:
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
    return Drawn(
        fig,
        f"{what.capitalize()} per run: one panel per condition (every matrix axis but the "
        f"congestion control), each with its own y axis; a box per congestion control "
        f"({n} runs per box, median), triangles are means.{_left_out(len(conds), total)}",
    )


def box_throughput(data: Data) -> Drawn:
    return _boxes(data, "goodput_bps", 1e-6, "mean throughput (Mbit/s)", "mean goodput")


def box_retx(data: Data) -> Drawn:
    return _boxes(
        data, "retransmission_rate", 100.0, "retransmission rate (%)", "retransmission rate"
    )


# -- 000 Fig. 10-11 -------------------------------------------------------------------------


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


# -- 000 Fig. 6-9 ---------------------------------------------------------------------------


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
        ax.set_ylabel("throughput (Mbit/s)")
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


# -- 004 Fig. 5-17 --------------------------------------------------------------------------


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
        top.set_ylabel("throughput (Mbit/s)")
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


# -- 002 Fig. 3-9 ---------------------------------------------------------------------------


def engines_loss(data: Data) -> Drawn:
    from satcc.studies.hybla import kind_label

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
    flows["_kind"] = flows["size_bytes"].map(lambda s: kind_label(None if pd.isna(s) else int(s)))
    kinds = list(dict.fromkeys(flows["_kind"]))
    sized = [k for k in kinds if k != "steady"]
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
                if sized and kind != "steady":
                    tp = _point_means(em[em["fct_s"].notna()], x, [], "fct_s")
                    if not tp.empty:
                        _errorbars(axs[1], tp, x, 1.0, label, color, line, style)
        what = "steady state" if kind == "steady" else kind.replace("MB", " MB")
        axs[0].set_title(what + (f" · {title}" if title else ""), fontsize="small")
        axs[0].set_ylabel("throughput (Mbit/s)")
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


# -- 003 Fig. 6-7 ---------------------------------------------------------------------------


def seqack(data: Data) -> Drawn:
    sa = data.store.query(
        "SELECT run_id, flow_id, kind, t_s, seq_rel, end_rel, ack_rel, "
        "retransmission FROM seqack ORDER BY run_id, flow_id, t_s"
    )
    if sa.empty:
        raise Skip(
            "no sequence/ACK trace: a simulated run with `[scenario.seqack]` or a capture "
            "analysed with its packets (an [[analyze]] entry with a pcap/pcapng file) gives one"
        )
    run_id, flow_id = sa.iloc[0]["run_id"], sa.iloc[0]["flow_id"]
    fig, where = draw_seqack(sa[(sa["run_id"] == run_id) & (sa["flow_id"] == flow_id)])
    return Drawn(
        fig,
        f"Study 003 Fig. 6: time-sequence graph at the sender (a simulated run's trace or "
        f"a capture's largest flow), {2 * SEQACK_WINDOW_SEGMENTS} data segments {where}; "
        f"run {run_id}. The paper shows test 1 (Osaka): one lost segment, reported by SACK "
        f"and retransmitted at 0.25 s.",
    )


def draw_seqack(g: pd.DataFrame) -> tuple[Any, str]:
    """One flow's sequence/ACK rows (the seqack schema) drawn tcptrace-style around its first
    retransmission: the figure and where the window is ("around the first retransmission")."""
    g = g.sort_values("t_s", kind="stable")
    data_pk = g[g["kind"] == "data"].reset_index(drop=True)
    acks = g[g["kind"] == "ack"]
    retx = data_pk.index[data_pk["retransmission"].fillna(False).astype(bool)]
    centre = int(retx[0]) if len(retx) else len(data_pk) // 2
    lo, hi = max(centre - SEQACK_WINDOW_SEGMENTS, 0), centre + SEQACK_WINDOW_SEGMENTS
    win = data_pk.iloc[lo:hi]
    t0, t1 = float(win["t_s"].min()), float(win["t_s"].max())
    fig, axs = new_figure(1, 1, height=4.0)
    ax = axs[0][0]
    retransmitted = win["retransmission"].fillna(False).astype(bool)
    sacks = g[(g["kind"] == "sack") & (g["t_s"] >= t0) & (g["t_s"] <= t1)]
    for rows, colour, width, label in (
        (win[~retransmitted], "tab:blue", 1.5, "data segment"),
        (win[retransmitted], "tab:red", 2.5, "retransmission"),
        (sacks, "tab:orange", 1.0, "SACK block"),
    ):
        if not rows.empty:  # a byte range per row, drawn as a vertical bar at its time
            ax.vlines(
                rows["t_s"],
                rows["seq_rel"] / 1e3,
                rows["end_rel"] / 1e3,
                color=colour,
                lw=width,
                label=label,
            )
    a = acks[(acks["t_s"] >= t0) & (acks["t_s"] <= t1)]
    if not a.empty:
        ax.step(
            a["t_s"],
            a["ack_rel"] / 1e3,
            where="post",
            color="tab:green",
            lw=1,
            label="cumulative ACK",
        )
    ax.set_xlabel("time (s)")
    ax.set_ylabel("relative sequence number (kB)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig, "around the first retransmission" if len(retx) else "(no retransmission)"


def _ca_stretch(s: pd.DataFrame) -> tuple[int, int] | None:
    """The longest run of bins with one ssthresh (set), cwnd >= ssthresh and cwnd never falling
    (a drop is a loss response even when the new ssthresh equals the old), as (start, end)."""
    ss = s["ssthresh_pkts"].to_numpy()
    cw = s["cwnd_pkts"].to_numpy()
    ok = [
        (not pd.isna(a)) and (not pd.isna(b)) and a < SSTHRESH_UNSET and b >= a
        for a, b in zip(ss, cw, strict=True)
    ]
    best, start = None, None
    for i in range(len(ok) + 1):
        same = (
            i < len(ok)
            and ok[i]
            and start is not None
            and ss[i] == ss[start]
            and cw[i] >= cw[i - 1]
        )
        if i < len(ok) and ok[i] and start is None:
            start = i
            continue
        if not same and start is not None:
            if best is None or i - start > best[1] - best[0]:
                best = (start, i)
            start = i if i < len(ok) and ok[i] else None
    return best


def ca_ramp(data: Data) -> Drawn:
    runs = data.runs[(data.runs["engine"] != MODEL) & (data.runs["duration_s"] >= MIN_RAMP_RUN_S)]
    if runs.empty:
        raise Skip(
            f"no sim/emu run of {MIN_RAMP_RUN_S:g} s or more (study 003's ramp took "
            "10-20 minutes: scenarios/lfn-chicago.toml)"
        )
    longest = runs.sort_values(["duration_s", "point"], ascending=[False, True]).iloc[0]
    s = data.store.query(
        f"SELECT flow_id, t_s, goodput_bps, cwnd_pkts, ssthresh_pkts, srtt_ms "
        f"FROM flow_series WHERE run_id = '{longest['run_id']}' "
        "ORDER BY flow_id, t_s"
    )
    s = s[s["flow_id"] == s["flow_id"].min()].reset_index(drop=True)
    if s["cwnd_pkts"].notna().sum() == 0:
        raise Skip("the longest run has no cwnd series")
    stretch = _ca_stretch(s)
    if stretch is None or stretch[1] - stretch[0] < MIN_RAMP_BINS:
        raise Skip(
            f"the longest run ({longest['duration_s']:g} s) has no congestion-avoidance "
            f"stretch of {MIN_RAMP_BINS} bins (no loss set ssthresh, or it stayed short)"
        )
    fig, axs = new_figure(2, 1, height=2.6, sharex=True)
    top, bottom = axs[0][0], axs[1][0]
    top.plot(s["t_s"], s["goodput_bps"] / 1e6, lw=0.8, color="tab:blue")
    top.set_ylabel("throughput (Mbit/s)")
    top.set_ylim(bottom=0)
    bottom.plot(s["t_s"], s["cwnd_pkts"], lw=0.8, color="tab:blue", label="cwnd")
    i, j = stretch
    t = s["t_s"].to_numpy(dtype=float)[i:j]
    w = s["cwnd_pkts"].to_numpy(dtype=float)[i:j]
    slope, icept = np.polyfit(t, w, 1)
    rtt_s = float(np.nanmedian(s["srtt_ms"].to_numpy(dtype=float)[i:j])) / 1e3
    bottom.plot(
        t,
        slope * t + icept,
        color="tab:red",
        lw=1.5,
        ls="--",
        label=f"fit: {slope:.2f} pkt/s = {slope * rtt_s:.2f} pkt per RTT "
        f"(RTT {rtt_s * 1e3:.0f} ms)",
    )
    bottom.set_ylabel("cwnd (packets)")
    bottom.set_xlabel("time (s)")
    bottom.legend(fontsize="small")
    for a in (top, bottom):
        a.grid(True, alpha=0.3)
    return Drawn(
        fig,
        f"Study 003 Fig. 7: the linear ramp of congestion avoidance in the "
        f"longest run ({longest['scenario']}, {longest['duration_s']:g} s, run "
        f"{longest['run_id']}, first flow); the dashed line is a least-squares fit "
        "over the longest stretch with one ssthresh (Reno adds about one packet "
        "per RTT there).",
    )


# -- cwnd / RTT traces (satcc.plot) -----------------------------------------------------------


def traces(data: Data) -> list[Drawn]:
    from satcc.plot import draw
    from satcc.results import load

    runs = data.runs[data.runs["engine"].isin(["sim", "emu"])]
    if runs.empty:
        raise Skip("no sim or emu run (model and analyze runs carry no cwnd)")
    flows = data.flows
    picked: list[str] = []
    seen: set[str] = set()
    for r in runs.itertuples():
        ccas = ",".join(sorted(set(flows[flows["run_id"] == r.run_id]["cca"].dropna())))
        if ccas not in seen:
            seen.add(ccas)
            picked.append(r.run_id)
        if len(picked) >= MAX_TRACES:
            break
    out = []
    for rid in picked:
        result = load(data.store.directory / layout.RUNS_DIR / rid)
        fig = draw(result)
        out.append(
            Drawn(
                fig, f"Goodput, cwnd and smoothed RTT over time of run {rid} (satcc plot's panels)."
            )
        )
    return out


def fidelity(data: Data) -> Drawn:
    """satcc fidelity's figure (satcc.fidelity.figure), from the store like every figure."""
    if not data.store.index.get("fidelity"):
        raise Skip("not a `satcc fidelity` directory")
    from satcc.fidelity import figure, suite

    doc = suite.evaluate_store(data.store)
    fig = figure.draw(doc)
    if fig is None:
        raise Skip("no finished run in the fidelity directory")
    t = doc["tally"]
    return Drawn(
        fig,
        (
            "Goodput per flow group: the simulator (median of its seeds) beside the "
            "real kernel (median of its runs), error bars min-max, labels the share "
            f"of the total goodput; {t['pass']} checks pass, {t['fail']} fail "
            "(docs/fidelity.md)."
        ),
    )


FigureFn = Callable[[Data], "Drawn | list[Drawn]"]
# -- distributions and the throughput/delay plane -------------------------------------------


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


FIGURES: list[tuple[str, str, FigureFn]] = [
    (
        "timeseries_cca",
        "Throughput over time per congestion control (study 001 Fig. 5-6)",
        timeseries_cca,
    ),
    (
        "box_throughput",
        ("Mean throughput per congestion control and direction (study 001 Fig. 7-8)"),
        box_throughput,
    ),
    (
        "box_retx",
        ("Retransmission rate per congestion control and direction (study 001 Fig. 9-10)"),
        box_retx,
    ),
    ("rtt_day", "RTT over the day and its distribution (study 000 Fig. 10-11)", rtt_day),
    ("mss", "Throughput against the MSS (study 000 Fig. 6-9)", mss),
    (
        "rtt_fairness",
        (
            "Throughput and Jain's index against the RTT of the second flow group "
            "(study 004 Fig. 5-17)"
        ),
        rtt_fairness,
    ),
    (
        "engines_loss",
        (
            "Model vs simulation vs emulation: throughput and transfer time against "
            "loss (study 002 Fig. 3-9)"
        ),
        engines_loss,
    ),
    ("seqack", "Sequence / ACK graph (study 003 Fig. 6)", seqack),
    ("ca_ramp", "The linear ramp of congestion avoidance (study 003 Fig. 7)", ca_ramp),
    ("traces", "cwnd and RTT traces", traces),
    ("fidelity", "Simulator vs real kernel per flow group (satcc fidelity)", fidelity),
    ("cdfs", "Distributions of goodput and RTT per congestion control", cdfs),
    (
        "throughput_delay",
        "Throughput against delay per congestion control (Pantheon-style)",
        throughput_delay,
    ),
]


def is_finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)
