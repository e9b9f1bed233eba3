"""Study 001 Fig. 5-6: goodput over time per congestion control."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from satcc.plot import flow_label, starlink_lines
from satcc.report.figures.common import (
    MODEL,
    Data,
    Drawn,
    Skip,
    _colors,
    _conditions,
    _left_out,
    new_figure,
)
from satcc.store import layout


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
                    s["t_s"],
                    s["goodput_bps"] / 1e6,
                    lw=0.9,
                    color=colors[k],
                    label=flow_label({"name": f.name, "cca": f.cca}),
                )
            marked = starlink_lines([ax], run_summary(data.store.directory, pick[2]))
            with_boundaries = with_boundaries or marked > 0
            if r == 0 or len(run_flows) > 1:
                # each panel's own flows: a CCA's panel names that CCA's flows
                ax.legend(fontsize="x-small", loc="upper right")
            if c == 0:
                ax.set_ylabel("goodput (Mbit/s)")
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
