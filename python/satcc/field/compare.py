"""Measured field runs beside the simulator's prediction for the same path, per CCA and
direction (`satcc report STORE --scenario PATH.toml`).

The scenario describes the user's path (written by hand, or with the `[link.model]` table that
`satcc trace fit` fitted from the same session's capture) and has exactly one [[flow]]: its
`from` → `to` is the upload; a download swaps them. For each CCA x direction the store
measured, the simulator runs that one flow for the plan's duration with `seeds` seeds
(1..seeds), and the table puts the mean measured goodput (with the runs' range) beside the
simulated mean. UDP runs are left out (there is no CCA to predict).

Writes DIR/field-vs-sim.txt and .json (and .png/.pdf/.svg with the figure formats) and
returns a `Comparison`: the table's lines for the report's output, its rows and the figure as
PNG bytes for the report page's "Field vs simulator" section (`section()`, handed to
satcc.report.build_report, which does not import this module).
"""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from satcc.errors import UserError

TITLE = "field vs sim"


@dataclass
class Row:
    cca: str
    direction: str
    runs: int
    measured_mbps: float
    measured_min_mbps: float
    measured_max_mbps: float
    sim_mbps: float | None
    ratio: float | None  # measured / sim
    note: str = ""


@dataclass
class Comparison:
    scenario: Path
    seeds: int
    rows: list[Row]
    lines: list[str]
    files: list[Path] = field(default_factory=list)
    png: bytes = b""  # the figure for the HTML page (empty unless asked for)

    def section(self) -> dict[str, Any]:
        """The report page's section as plain data (satcc.report.build renders it)."""
        cols = ["cca", "direction", "runs", "measured (Mbit/s)", "min-max", "sim (Mbit/s)"]
        cols += ["measured / sim", "note"]
        rows = [
            [
                r.cca,
                r.direction,
                str(r.runs),
                f"{r.measured_mbps:.2f}",
                f"{r.measured_min_mbps:.2f}-{r.measured_max_mbps:.2f}",
                f"{r.sim_mbps:.2f}" if r.sim_mbps is not None else "-",
                f"{r.ratio:.2f}" if r.ratio is not None else "-",
                r.note,
            ]
            for r in self.rows
        ]
        return {
            "title": f"{TITLE}: {self.scenario.name}",
            "caption": (
                f"Measured goodput per congestion control and direction (mean of the field "
                f"runs, min-max beside it) and the simulator's on {self.scenario.name} (mean "
                f"of {self.seeds} seed(s), one flow of the plan's duration; a download swaps "
                "the flow's ends); measured / sim is their ratio."
            ),
            "columns": cols,
            "rows": rows,
            "left": [0, 1, len(cols) - 1],
            "files": [p.name for p in self.files],
            "png": self.png,
        }


def _scenario_doc(path: Path) -> dict[str, Any]:
    from satcc import limits

    try:  # through satcc.limits: a FIFO blocked here for good, a device read without end
        text = limits.read_text(path, "a scenario (TOML)")
    except UserError as e:
        raise UserError(f"--scenario {e}") from None
    why = limits.toml_depth_issue(text)
    if why is not None:
        raise limits.LimitError(f"--scenario {path}: {why}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"--scenario {path}: expected TOML, found a syntax error: {e}") from None
    flows = doc.get("flow")
    if not isinstance(flows, list) or len(flows) != 1:
        raise UserError(
            f"--scenario {path}: flow: expected exactly one [[flow]] (the upload: from this "
            f"host to the server), found {len(flows) if isinstance(flows, list) else 0}"
        )
    return doc


def _simulate(
    doc: dict[str, Any], cca: str, direction: str, duration_s: float, seed: int, source: str
):
    from satcc import registry
    from satcc.scenario import from_dict

    d = copy.deepcopy(doc)
    f = d["flow"][0]
    f["cca"] = cca
    f["name"] = "upload" if direction == "up" else "download"
    if direction == "down":
        f["from"], f["to"] = f["to"], f["from"]
    d.setdefault("scenario", {})["duration"] = f"{duration_s:g} s"
    d["scenario"]["seed"] = seed
    s = from_dict(d, source=source)
    r = registry.run("sim", s, registry.RunOptions(seed=seed))
    return float(r.flows.goodput_bps.iloc[0])


def compare(
    store_dir: Path, scenario: Path, out: Path, seeds: int = 3, formats=("png",)
) -> list[str]:
    """The comparison's files in `out` and its table's lines (see `run`)."""
    return run(store_dir, scenario, out, seeds, formats).lines


def run(
    store_dir: Path,
    scenario: Path,
    out: Path,
    seeds: int = 3,
    formats=("png",),
    embed: bool = False,
) -> Comparison:
    """Simulate each measured CCA x direction and write field-vs-sim.* in `out`; `embed`
    also draws the figure as PNG bytes for the report page."""
    from satcc import store

    doc = _scenario_doc(scenario)
    with store.open_store(store_dir, save=False) as s:
        if "direction" not in s.param_columns:
            raise UserError(f"--scenario: {store_dir} is not a `satcc field` store (no direction)")
        m = s.query(
            "SELECT f.cca, f.direction, f.goodput_bps, r.duration_s FROM flows AS f "
            "JOIN runs AS r USING (run_id) WHERE f.id = 0 AND f.engine = 'field' "
            "AND f.kind = 'tcp' AND f.goodput_bps IS NOT NULL"
        )
    if m.empty:
        raise UserError(f"{store_dir}: no finished TCP field runs to compare")
    rows: list[Row] = []
    for (cca, direction), g in m.groupby(["cca", "direction"], sort=True):
        mbps = g.goodput_bps / 1e6
        duration_s = float(g.duration_s.max())
        sims, note = [], ""
        try:
            for seed in range(1, seeds + 1):
                sims.append(_simulate(doc, cca, direction, duration_s, seed, str(scenario)) / 1e6)
        except UserError as e:
            note = f"not simulated: {str(e).splitlines()[0][:120]}"
            sims = []
        sim = sum(sims) / len(sims) if sims else None
        mean = float(mbps.mean())
        rows.append(
            Row(
                cca, direction, len(g), mean, float(mbps.min()), float(mbps.max()), sim,
                mean / sim if sim else None, note,
            )
        )  # fmt: skip
    lines = [
        f"{TITLE} ({scenario.name}, {seeds} seed(s); goodput Mbit/s):",
        f"  {'cca':<10} {'dir':<5} {'runs':>4} {'measured':>9} {'(min-max)':>15} {'sim':>8} {'ratio':>6}",
    ]
    for r in rows:
        rng = f"({r.measured_min_mbps:.2f}-{r.measured_max_mbps:.2f})"
        sim = f"{r.sim_mbps:8.2f}" if r.sim_mbps is not None else f"{'-':>8}"
        ratio = f"{r.ratio:6.2f}" if r.ratio is not None else f"{'-':>6}"
        lines.append(
            f"  {r.cca:<10} {r.direction:<5} {r.runs:>4} {r.measured_mbps:9.2f} {rng:>15} {sim} {ratio}"
            + (f"  {r.note}" if r.note else "")
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "field-vs-sim.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "field-vs-sim.json").write_text(
        json.dumps(
            {"scenario": str(scenario), "seeds": seeds, "rows": [asdict(r) for r in rows]},
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    result = Comparison(scenario, seeds, rows, lines)
    result.files = [out / "field-vs-sim.txt", out / "field-vs-sim.json"]
    figs = [f for f in formats if f in ("png", "pdf", "svg")]
    if figs or embed:
        result.files += _figure(rows, out, figs)
        if embed:
            import io

            buf = io.BytesIO()
            _draw(rows).savefig(buf, format="png", dpi=EMBED_DPI, metadata={"Software": None})
            result.png = buf.getvalue()
    return result


EMBED_DPI = 110  # as the report page's other figures (satcc.report.build.EMBED_DPI)


def _figure(rows: list[Row], out: Path, formats: list[str]) -> list[Path]:
    from matplotlib import rc_context

    fig = _draw(rows)
    paths = []
    with rc_context({"svg.hashsalt": "satcc"}):
        for f in formats:
            path = out / f"field-vs-sim.{f}"
            fig.savefig(path, format=f, metadata=_NO_DATES[f])
            paths.append(path)
    return paths


# no software name or date inside the files: the same comparison gives the same bytes
_NO_DATES = {
    "png": {"Software": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
    "svg": {"Creator": None, "Date": None},
}


def _draw(rows: list[Row]):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(4, 1.2 * len(rows) + 2), 3.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r.measured_mbps for r in rows], 0.4, label="field (mean)")
    ax.errorbar(
        [x - 0.2 for x in xs],
        [r.measured_mbps for r in rows],
        yerr=[
            [r.measured_mbps - r.measured_min_mbps for r in rows],
            [r.measured_max_mbps - r.measured_mbps for r in rows],
        ],
        fmt="none",
        ecolor="black",
        capsize=3,
    )
    ax.bar([x + 0.2 for x in xs], [r.sim_mbps or 0 for r in rows], 0.4, label="sim")
    ax.set_xticks(list(xs), [f"{r.cca}\n{r.direction}" for r in rows])
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return fig
