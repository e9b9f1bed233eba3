"""What every study module shares: the run context, running a ready campaign, figures.

A study runs the campaign files shipped with satcc (satcc.resources: `study00X-NAME.toml`, with
--quick its [quick] variant, named `study00X-NAME-quick`; --quick on the emulator, or `--design kernel` on any engine, its
[kernel] design, `study00X-NAME-quick-kernel`: `kernel_design`) through `satcc.campaign.execute.run_campaign`, into
`OUT/<engine>/<campaign name>/` (a normal campaign directory: `satcc query`, `satcc report` and
`satcc campaign status` work on it, and a rerun resumes it). `--seeds N` replaces the campaign's
repetitions by N seeds from its first seed; `--engine emu` sets `scenario.engine = "emu"` on the
base scenario and applies the study's emulator changes (rates this machine carries), which
the kernel design applies on the simulator too (`Context.emulator_paths`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from satcc import registry, resources, timings, units
from satcc.errors import UserError
from satcc.studies.designs import AUTO, kernel_design

EMU_MAX_RATE_BPS = 100_000_000  # what satcc-linkd carries faithfully on a 2-core machine
# The kernel column (`satcc reproduce all --quick --engine emu`) runs in real time: each study's
# campaigns have a [kernel] design (their quick design cut to fit, campaign files), planned to
# take at most KERNEL_BUDGET_S for the five studies together, counting each run's length plus
# EMU_RUN_OVERHEAD_S (namespaces, satcc-linkd and the capture started and stopped, the run's
# files written). Measured: study 002's 4 kernel runs (161 s of runs) took 173 s (12 s more, 3 s a run) on a
# loaded machine (/work/runs/kcol-002, `--timings`).
KERNEL_BUDGET_S = 75 * 60
EMU_RUN_OVERHEAD_S = 3.0
FIG_DPI = 110


def campaigns_dir() -> Path:
    """The campaign files shipped in the package (satcc.resources)."""
    return resources.campaigns_dir()


def scenarios_dir() -> Path:
    return resources.scenarios_dir()


@dataclass
class Context:
    """How to run a study: engine, size, seeds, where, how many processes."""

    engine: str  # sim | emu
    quick: bool
    seeds: int | None
    out: Path
    jobs: int | None = None
    progress: bool | None = None
    log: Callable[[str], None] = field(default=lambda _m: None)
    # other output roots (another design's, an earlier invocation's) whose done runs are
    # copied, not simulated again (`siblings`)
    reuse: tuple[Path, ...] = ()
    design: str = AUTO  # `--design` (satcc.studies.designs): AUTO, or the kernel design

    @property
    def engine_dir(self) -> Path:
        return self.out / self.engine

    @property
    def real_time(self) -> bool:
        """The engine runs at wall-clock speed (the emulator): one run at a time, nothing beside
        it, a study's rates scaled to what this machine carries (`emulator_paths`)."""
        return registry.get(self.engine).real_time

    @property
    def kernel_design(self) -> bool:
        """This invocation runs the kernel design (`kernel_design`): the campaigns' [kernel]
        variants, study 002's dummynet column on the emulator's design, the emulator's paths."""
        return kernel_design(self.quick, self.engine, self.design)

    @property
    def emulator_paths(self) -> bool:
        """The study's paths are the emulator's (its EMU_CHANGES: rates this machine carries):
        on a real-time engine in any design, and in the kernel design on any engine (its twin
        on the simulator runs the same paths)."""
        return self.real_time or self.kernel_design

    @property
    def kernel_tcp(self) -> bool:
        """The engine's TCP is this host's kernel (the emulator)."""
        return registry.get(self.engine).kernel_tcp


@dataclass
class Figure:
    """A drawn figure: the paper's number it stands for, a caption, the PNG file."""

    id: str
    title: str
    caption: str
    path: Path


def campaign_file(name: str) -> Path:
    path = campaigns_dir() / f"{name}.toml"
    if not path.exists():
        raise UserError(f"{path}: expected the study's campaign file, found no such file")
    return path


def run(
    ctx: Context,
    name: str,
    emu_changes: dict[str, Any] | None = None,
    quick_variant: bool = False,
) -> Path:
    """Run (or resume) campaigns/<name>.toml (its [quick] variant with --quick, and also in the
    full design with `quick_variant`) for ctx.engine; returns its directory."""
    from satcc.campaign import spec
    from satcc.campaign.execute import run_campaign

    c = load(
        name, ctx.quick or quick_variant, ctx.engine, ctx.seeds, emu_changes, ctx.kernel_design
    )
    out = ctx.engine_dir / c.name
    key = out.resolve()
    if _PLANNING is not None:  # `planned`: what would run, not run
        _PLANNING.append((ctx, out, spec.expand(c, progress=False)))
        _PLANS[key] = (c, _PLANNING[-1][2])
        return out
    kept = _PLANS.pop(key, None)
    plan = kept[1] if kept is not None and kept[0] == c else spec.expand(c)
    ctx.log(f"campaign {c.name}: {len(plan)} runs -> {out}")
    done = run_campaign(
        c, out, jobs=ctx.jobs, progress=ctx.progress, reuse=siblings(ctx, out), plan=plan
    )
    if done.copied:
        ctx.log(f"campaign {c.name}: {done.copied} run(s) done in another campaign, copied")
    failed = done.count("failed")
    if failed:
        ctx.log(f"campaign {c.name}: {failed} run(s) failed (satcc campaign status {out})")
    return out


# while `planned` runs: the campaigns a study's `run` asks for, (ctx, directory, expanded plan),
# not run; and each planned campaign with its plan (by directory), which `run` takes instead of
# expanding the same campaign again
_PLANNING: list[tuple[Context, Path, list[Any]]] | None = None
_PLANS: dict[Path, tuple[Any, list[Any]]] = {}


def planned(ctx: Context, study_run: Callable[[Context], Any]) -> list[tuple[Path, list[Any]]]:
    """The campaigns `study_run(ctx)` (a study's `run`, whose campaigns go through `run`)
    would run, in order, each with its runs (RunSpecs) that are neither done in its
    directory nor in a sibling's (`siblings`: those are copied), longest first as
    `run_campaign` submits them; nothing is run or written. The plans are kept for `run`."""
    from satcc.campaign.execute import _done_in
    from satcc.store import layout

    global _PLANNING
    outer, _PLANNING = _PLANNING, []
    try:
        study_run(ctx)
        found = _PLANNING
    finally:
        _PLANNING = outer
    out = []
    for c_ctx, d, specs in found:
        elsewhere = _done_in(siblings(c_ctx, d), [s.run_id for s in specs])
        todo = [
            s
            for s in specs
            if s.run_id not in elsewhere
            and not (d / layout.RUNS_DIR / s.run_id / layout.RUN_FILE).is_file()
        ]
        out.append((d, sorted(todo, key=lambda s: -s.cost)))
    return out


def siblings(ctx: Context, out: Path) -> list[Path]:
    """The other campaign directories of this output root and engine (every study's), then
    those of the output roots in `ctx.reuse` (another design's: the quick designs plan most of
    their runs in the full ones too): a run one of them has done is copied, not simulated
    again (`run_campaign`'s `reuse`; the same run id and satcc version only)."""
    from satcc.store import layout

    found, seen = [], {Path(out).resolve()}
    for root in (ctx.out.parent, *ctx.reuse):
        for d in sorted(Path(root).glob(f"*/{ctx.engine}/*")):
            key = d.resolve()
            if key not in seen and (d / layout.INDEX_FILE).is_file():
                seen.add(key)
                found.append(d)
    return found


def load(
    name: str,
    quick: bool,
    engine: str = registry.DEFAULT,
    seeds: int | None = None,
    engine_changes: dict[str, Any] | None = None,
    kernel: bool = False,
) -> Any:
    """The study campaign as this invocation runs it: seeds replaced, for another engine
    `scenario.engine` set (and `-ENGINE` added to its name), and the emulator's changes
    (`engine_changes`, on the emulator or in the kernel design on any engine) applied, also
    where an axis sets the key. `kernel`: the file's [kernel] design (its quick design sized
    for the emulator's real time)."""
    from satcc.campaign import spec

    c = spec.load(campaign_file(name), quick=quick, kernel=kernel)
    if seeds is not None:
        first = c.seeds[0]
        c.seeds = [first + k for k in range(seeds)]
    if engine != registry.DEFAULT:
        assert c.base is not None
        c.base.setdefault("scenario", {})["engine"] = engine
    for path, value in (engine_changes or {}).items():
        if callable(value):  # a change of each value the campaign's axes set
            for axis in c.axes:
                for overrides in axis.overrides:
                    if path in overrides:
                        overrides[path] = value(overrides[path])
            continue
        assert c.base is not None
        spec.set_key(c.base, path, value)
        for axis in c.axes:  # an axis setting the same key would undo the change
            for overrides in axis.overrides:
                if path in overrides:
                    overrides[path] = value
    if engine != registry.DEFAULT:
        c.name = f"{c.name}-{engine}"
    return c


def scaled_rates(factor: float) -> Callable[[Any], Any]:
    """An engine change (`load`'s engine_changes) multiplying a rate or a [low, high] range of
    rates by `factor`: one factor for a whole study keeps the ratios between its cases (two
    plans capped at the same range would be one scenario)."""
    from satcc import units

    def scale(value: Any) -> Any:
        one = lambda v: f"{units.parse_rate(v) * factor / 1e6:.4g} Mbit/s"
        return [one(v) for v in value] if isinstance(value, list) else one(value)

    return scale


@dataclass(frozen=True)
class Planned:
    """One campaign of the kernel column: its runs, their length, its seeds per point."""

    name: str
    runs: int
    run_s: float  # the runs' scenario durations, summed
    seeds: int

    @property
    def real_time_s(self) -> float:
        return self.run_s + self.runs * EMU_RUN_OVERHEAD_S


def kernel_plan(changes: dict[str, dict[str, Any] | None]) -> list[Planned]:
    """The kernel design of each campaign (its [kernel] table over --quick) as the emulator
    runs it: campaign name -> the study's emulator changes for it."""
    from satcc.campaign import spec

    out = []
    for name, emu_changes in changes.items():
        c = load(name, True, "emu", None, emu_changes, kernel=True)
        runs = spec.expand(c)
        run_s = sum(units.parse_duration(r.scenario["scenario"]["duration"]) / 1e9 for r in runs)
        out.append(Planned(c.name, len(runs), run_s, len(c.seeds)))
    return out


# while `reading()` is on: each campaign directory's open store, and what was read from it
# ((directory, table or query) -> DataFrame); None when it is off
_READ: dict[tuple[Path, str], pd.DataFrame] | None = None
_STORES: dict[Path, Any] | None = None


@contextmanager
def reading() -> Iterator[None]:
    """Inside the block, each campaign directory's store is opened once (every run's files
    hashed, the DuckDB catalog built, catalog.duckdb saved) and each of its tables and queries
    read once: a study's measures and figures ask for them a dozen times per directory.
    For reading only: the campaigns must be done when the block starts."""
    global _READ, _STORES
    outer = _READ, _STORES
    mine = _STORES is None
    if mine:
        _READ, _STORES = {}, {}
    try:
        yield
    finally:
        if mine:
            for st in (_STORES or {}).values():
                st.close()
        _READ, _STORES = outer


@contextmanager
def _opened(directory: Path) -> Iterator[Any]:
    """The directory's store: the one `reading()` holds, else opened for this call."""
    from satcc.store import open_store

    key = Path(directory).resolve()
    if _STORES is None:
        with timings.phase(timings.STORE), open_store(directory) as s:
            yield s
        return
    if key not in _STORES:
        with timings.phase(timings.STORE):
            _STORES[key] = open_store(directory)
    yield _STORES[key]


def frames(
    directory: Path, flow_series: bool = False, link_series: bool = False
) -> dict[str, pd.DataFrame]:
    """The store's runs and flows (and series when asked) as DataFrames, done runs only."""
    names = ["runs", "flows"] + ["flow_series"] * flow_series + ["link_series"] * link_series
    key = Path(directory).resolve()
    cache = _READ if _READ is not None else {}
    missing = [n for n in names if (key, n) not in cache]
    if missing:
        with _opened(directory) as s, timings.phase(timings.STORE):
            for n in missing:
                frame = getattr(s, n)()
                cache[key, n] = frame[frame["status"] == "done"] if n == "runs" else frame
    # a shallow copy (copy-on-write): a caller that changes its frame changes only its own
    return {n: cache[key, n].copy(deep=False) for n in names}


def query(directory: Path, sql: str) -> pd.DataFrame:
    """One query on the directory's store (`Store.query`), read once inside `reading()`."""
    key = (Path(directory).resolve(), sql)
    cache = _READ if _READ is not None else {}
    if key not in cache:
        with _opened(directory) as s, timings.phase(timings.STORE):
            cache[key] = s.query(sql)
    return cache[key].copy(deep=False)


def derived(directory: Path, what: str, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """A table computed from a directory's store (`compute()`), computed once inside
    `reading()` (a study's measures and figures both use it) and at every call outside."""
    key = (Path(directory).resolve(), f"derived:{what}")
    if _READ is None:
        return compute()
    if key not in _READ:
        _READ[key] = compute()
    return _READ[key].copy(deep=False)


def engine_of(directory: Path) -> str:
    """The engine of a campaign directory's runs (the default engine when it has none)."""
    runs = frames(directory)["runs"]
    return str(runs["engine"].iloc[0]) if len(runs) else registry.DEFAULT


def param(frame: pd.DataFrame, name: str) -> pd.Series:
    """A campaign parameter column (the store renames clashes with result columns)."""
    return frame[f"param_{name}"] if f"param_{name}" in frame.columns else frame[name]


def mbps(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x / 1e6


def finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(x: float | None, spec: str = ".3g") -> str:
    return "-" if x is None else format(x, spec)


def new_figure(rows: int = 1, cols: int = 1, width: float = 6.4, height: float = 3.8):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(
        figsize=(width * cols if cols > 1 else width, height * rows), layout="constrained"
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def save(fig: Any, out_dir: Path, fid: str, title: str, caption: str) -> Figure:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{fid}.png"
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=FIG_DPI, format="png", metadata={"Software": None})
    tmp.replace(path)
    return Figure(fid, title, caption, path)


def paper_line(ax: Any, y: float, label: str, color: str = "black") -> None:
    """The paper's number as a dashed horizontal line."""
    ax.axhline(y, color=color, ls="--", lw=1.2, label=label)


def box(ax: Any, groups: list[np.ndarray], labels: list[str]) -> None:
    data = [g if len(g) else np.array([np.nan]) for g in groups]
    ax.boxplot(data, tick_labels=labels, showmeans=True, widths=0.6)


def seeds_of(frame: pd.DataFrame) -> int | None:
    """How many seeds (repetitions) a frame of runs or flows holds."""
    if not len(frame) or "repetition" not in frame.columns:
        return None
    return int(frame["repetition"].nunique())


def tag(
    measured: dict[str, Any], ids: list[str] | tuple[str, ...], source: str, seeds: int | None
) -> None:
    """Set the source (campaign, runs, columns) and seed count of the named claims' values."""
    from dataclasses import replace

    for i in ids:
        if i in measured:
            m = measured[i]
            measured[i] = replace(
                m, source=m.source or source, seeds=m.seeds if m.seeds is not None else seeds
            )


def per_seed(
    frame: pd.DataFrame, stat: Callable[[pd.DataFrame], float | None]
) -> tuple[float, ...]:
    """The statistic computed from each seed's (repetition's) rows alone, in repetition order."""
    out = []
    for _, g in frame.groupby("repetition", sort=True):
        v = stat(g)
        out.append(float("nan") if v is None else float(v))
    return tuple(out)


def points(frame: pd.DataFrame, axis: str) -> dict[str, pd.DataFrame]:
    """The frame's rows per point of a swept unknown's axis (one point, "-", without the axis)."""
    if axis not in frame.columns and f"param_{axis}" not in frame.columns:
        return {"-": frame}
    col = param(frame, axis).astype(str)
    return {pt: frame[col == pt] for pt in sorted(col.unique())}


def over_points(
    study: str,
    per_point: dict[str, dict[str, Any]],
    unknown: str,
    label: str,
    headline: str | None = None,
) -> dict[str, Any]:
    """Each finding across the points of a swept unknown the paper bounds only on one side: the
    value shown is the point farthest from the paper; judged only when every point gives the
    same verdict (claims.across), the sweep printed either way. `label` formats a point ("uplink
    {} Mbit/s"). With `headline` (a point), the reason printed is that point's (the mechanism
    measured where the study's figures are drawn), not the farthest point's."""
    from dataclasses import replace

    from satcc.studies.claims import across, distance, load

    claims = {c.id: c for c in load(study).claims}
    if len(per_point) == 1:
        return next(iter(per_point.values()))
    out: dict[str, Any] = {}
    for cid in sorted({cid for found in per_point.values() for cid in found}):
        ms = {pt: found[cid] for pt, found in per_point.items() if cid in found}
        claim = claims.get(cid)
        if claim is None:
            out[cid] = next(iter(ms.values()))
            continue
        sweep, depends = across(claim, {pt: (m.value, m.per_seed) for pt, m in ms.items()}, unknown)
        measured = {pt: m for pt, m in ms.items() if m.value is not None}
        pt = (
            max(measured, key=lambda q: distance(claim, measured[q].value))
            if measured
            else next(iter(ms))
        )
        m = ms[pt]
        where = label.format(pt)
        said = pt if headline is None or headline not in ms else headline
        at = label.format(said) + (" (the headline point)" if said != pt else "")
        out[cid] = replace(
            m,
            how=f"{m.how} ({where}: of the swept points, the farthest from the paper)",
            why=f"at {at}: {ms[said].why.rstrip('.')}. Every point ({unknown}): {sweep}",
            skipped=m.skipped or depends,
        )
    return out
