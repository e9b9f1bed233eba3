"""What every figure shares: `Data` (the store's frames and the campaign's axes by role), `Drawn`,
`Skip`, the figure's size and colours, and the panels per condition (one per value of the axes
a figure does not draw)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

WIDTH_IN = 7.0
MODEL = "model"


class Skip(Exception):
    """The campaign lacks the data for a figure; the message says what is missing."""


@dataclass
class Drawn:
    fig: Figure
    caption: str
    title: str | None = None  # the figure's title when it depends on the data (else FIGURES')


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


def value_text(v: Any) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and pd.isna(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def run_label(runs: pd.DataFrame, params: list[str], run_id: str, ccas: list[str]) -> str:
    """A run as a reader names it: its CCAs, then each matrix parameter (direction, plan,
    loss ...) and the engine, then the repetition (the report's chart titles, the trace
    figures' titles)."""
    row = runs[runs["run_id"] == run_id].iloc[0]
    shown = ", ".join(dict.fromkeys(ccas)) or "-"
    parts = [shown]
    for p in params:
        if p in row and not pd.isna(row[p]) and (p != "cca" or str(row[p]) != shown):
            parts.append(f"{str(p).rsplit('.', 1)[-1]}={value_text(row[p])}")
    if "engine" in row and not any(str(p).endswith("engine") for p in params):
        parts.append(str(row["engine"]))
    if "repetition" in row and not pd.isna(row["repetition"]):
        parts.append(f"rep {int(row['repetition'])}")
    return " · ".join(parts)


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


MAX_CONDITIONS = 12  # panels per figure; beyond this the caption says how many are left out
PANEL_COLS = 3
# Roles that are samples of one condition, not conditions: rounds through the day
SAMPLE_ROLES = {"time_of_day"}


def _short(name: str) -> str:
    """An axis name for a panel title: `link[0].model.plan` -> `plan`."""
    return str(name).rsplit(".", 1)[-1]


def _condition_columns(
    data: Data,
    frame: pd.DataFrame,
    exclude_roles: set[str] = frozenset(),
    split_paths: bool = True,
) -> list[tuple[str, pd.Series]]:
    """What tells `_conditions` apart: [(short name, values per row)]; the path (from→to)
    is named "" (its values say what it is)."""
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
        # host to host: a measured flow's ephemeral port is not a condition (iperf3 -P)
        def host(col: str) -> pd.Series:
            return frame[col].astype(str).str.replace(r":\d+$", "", regex=True)

        path = host("from") + "→" + host("to")
        if path.nunique() > 1:
            cols.append(("", path))
    return cols


def condition_words(
    data: Data,
    frame: pd.DataFrame,
    exclude_roles: set[str] = frozenset(),
    split_paths: bool = True,
) -> str:
    """What a figure's panels differ by, for its title: "direction and loss", "path", ""."""
    words = [n or "path" for n, _ in _condition_columns(data, frame, exclude_roles, split_paths)]
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


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
    cols = _condition_columns(data, frame, exclude_roles, split_paths)
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


FigureFn = Callable[[Data], "Drawn | list[Drawn]"]
