"""`satcc report`: figure files plus one self-contained HTML page for a campaign directory.

    store ──► figures (satcc.report.figures: drawn or skipped with a reason)
          ├─► fig_<id>.png/.pdf/.svg   (paper-quality files, no dates or software names inside)
          ├─► runs/<run>.png, runs.csv, flows.csv   (per-run plots and downloads, linked)
          └─► report.html              (templates/report.html.j2 over SECTIONS, a registry:
                                        figures as PNG data URIs; tables of points and runs;
                                        each point's scenario as TOML; left-out files; versions)

The page loads nothing from anywhere: a Content-Security-Policy meta tag forbids every fetch
(img-src data: only), so a stray external reference shows up as a console error, which the
headless-browser test looks for. A small inline script marks `<body data-figures="ok N">` once
every image has decoded (or names the broken ones): the test reads it from the DOM.
"""

from __future__ import annotations

import base64
import functools
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib import rc_context

from satcc import _native
from satcc.plot import save_figure, starlink_boundaries
from satcc.report import figures
from satcc.report.css import CSS
from satcc.store import layout, open_store

HTML_FILE = "report.html"
PNG_DPI = 150
EMBED_DPI = 110
SVG_HASH_SALT = "satcc"  # fixed ids in SVG output (matplotlib otherwise draws random ones)
MAX_RUN_ROWS = 5000


@dataclass
class Figure:
    id: str
    title: str
    caption: str = ""
    files: list[Path] = field(default_factory=list)
    png: bytes = b""
    skipped: str | None = None


@dataclass
class Report:
    directory: Path
    out: Path
    formats: list[str]
    figures: list[Figure]
    html_path: Path | None = None
    problems: list[str] = field(default_factory=list)
    run_plots: dict[str, str] = field(default_factory=dict)  # run id -> PNG path from out/
    downloads: list[str] = field(default_factory=list)  # CSV files beside report.html
    # `satcc report STORE --scenario`: the field runs beside the simulator, as plain data
    # (satcc.field.compare.Comparison.section(): title, caption, columns, rows, left, files, png)
    field_vs_sim: dict[str, Any] | None = None

    @property
    def drawn(self) -> list[Figure]:
        return [f for f in self.figures if f.skipped is None]

    @property
    def skipped(self) -> list[Figure]:
        return [f for f in self.figures if f.skipped is not None]

    def lines(self) -> list[str]:
        out = [f"figures drawn ({len(self.drawn)}):"]
        for f in self.drawn:
            names = ", ".join(p.name for p in f.files) or "(embedded only)"
            out.append(f"  {f.id}: {names}")
        if self.skipped:
            out.append(f"figures skipped ({len(self.skipped)}):")
            out.extend(f"  {f.id}: {f.skipped}" for f in self.skipped)
        if self.problems:
            out.append(f"left out of the store ({len(self.problems)}):")
            out.extend(f"  {p}" for p in self.problems)
        return out


def build_report(
    directory: str | Path,
    out: str | Path,
    formats: list[str],
    progress: Callable[[float], None] | None = None,
    field_vs_sim: dict[str, Any] | None = None,
) -> Report:
    """The report of a campaign directory; `progress` gets the fraction done (figures 60 %,
    per-run plots 35 %, the page the rest). `field_vs_sim`: a section of measured field runs
    beside the simulator (satcc.field.compare), shown before the figures."""
    tick = progress or (lambda _f: None)
    d, out = Path(directory), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    file_formats = [f for f in formats if f != "html"]
    # names are data: no mathtext ("$…$" in a flow or campaign name is drawn as typed)
    with (
        open_store(d) as store,
        rc_context({"svg.hashsalt": SVG_HASH_SALT, "text.parse_math": False}),
    ):
        data = figures.Data(store, store.index.get("axes", []))
        figs: list[Figure] = []
        for i, (fid, title, fn) in enumerate(figures.FIGURES):
            tick(0.6 * i / len(figures.FIGURES))
            try:
                drawn = fn(data)
            except figures.Skip as e:
                figs.append(Figure(fid, title, skipped=str(e)))
                continue
            items = drawn if isinstance(drawn, list) else [drawn]
            for k, item in enumerate(items):
                name = fid if len(items) == 1 else f"{fid}_{k + 1}"
                shown = item.title or title
                fig = Figure(name, shown if len(items) == 1 else f"{shown} ({k + 1})", item.caption)
                # lay out once and freeze: every file then shows the same layout, whatever
                # the order of formats (constrained layout moves things on each draw)
                item.fig.canvas.draw()
                item.fig.set_layout_engine("none")
                for fmt in file_formats:
                    fig.files.append(save_figure(item.fig, out / f"fig_{name}.{fmt}", fmt, PNG_DPI))
                if "html" in formats:
                    buf = io.BytesIO()
                    item.fig.savefig(buf, format="png", dpi=EMBED_DPI, metadata={"Software": None})
                    fig.png = buf.getvalue()
                figs.append(fig)
        report = Report(
            d,
            out,
            formats,
            figs,
            problems=[p.line() for p in store.problems],
            field_vs_sim=field_vs_sim,
        )
        if "html" in formats:
            report.run_plots = _run_plots(store, out, lambda f: tick(0.6 + 0.35 * f))
            report.downloads = _downloads(store, out)
            path = out / HTML_FILE
            layout.atomic_write_text(path, render_html(store, report))
            report.html_path = path
    tick(1.0)
    return report


def build_result_report(
    directory: str | Path, out: str | Path, formats: list[str], kernel: str | Path | None = None
) -> Report:
    """The report of one result directory (`satcc sim/run/emu/analyze --out`): the `satcc
    plot` figure as files (fig_result.png/.pdf/.svg) and, with html, a self-contained page
    with the figure and the per-flow table. `kernel`: an emulator result directory of the
    same scenario, whose captures are set beside this one's simulator captures, one
    sequence/ACK figure per flow (satcc.report.captures)."""
    from satcc.plot import describe, figure, path_text
    from satcc.results import load

    d, out = Path(directory), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = load(d)
    with rc_context({"svg.hashsalt": SVG_HASH_SALT}):
        fig_obj = figure(result)
        fig_obj.canvas.draw()
        fig_obj.set_layout_engine("none")
        title = describe(result.meta).replace("\\$", "$")
        path = path_text(result)
        fig = Figure(
            "result",
            title,
            "goodput, cwnd (log), srtt and queue per flow (satcc plot)"
            + (f"; {path.replace(chr(10), '; ')}" if path else ""),
        )
        for fmt in (f for f in formats if f != "html"):
            fig.files.append(save_figure(fig_obj, out / f"fig_result.{fmt}", fmt, PNG_DPI))
        report = Report(d, out, formats, [fig])
        extra = []
        if kernel is not None:
            from satcc.report.captures import draw

            for fid, ftitle, caption, item in draw(d, kernel):
                item.canvas.draw()
                item.set_layout_engine("none")
                f = Figure(fid, ftitle, caption)
                for fmt in (x for x in formats if x != "html"):
                    f.files.append(save_figure(item, out / f"fig_{fid}.{fmt}", fmt, PNG_DPI))
                buf = io.BytesIO()
                item.savefig(buf, format="png", dpi=EMBED_DPI, metadata={"Software": None})
                report.figures.append(f)
                extra.append((f, base64.b64encode(buf.getvalue()).decode("ascii")))
        if "html" in formats:
            buf = io.BytesIO()
            fig_obj.savefig(buf, format="png", dpi=EMBED_DPI, metadata={"Software": None})
            img = base64.b64encode(buf.getvalue()).decode("ascii")
            page = (
                _env()
                .get_template("result.html.j2")
                .render(
                    title=title,
                    path=path.splitlines(),
                    table=result.table(),
                    png=img,
                    caption=fig.caption,
                    version=_native.version(),
                    directory=str(d),
                    extra=extra,
                )
            )
            path = out / HTML_FILE
            layout.atomic_write_text(path, page)
            report.html_path = path
    return report


MAX_RUN_PLOTS = 50  # per-run plots drawn for the first runs; the rest: satcc plot runs/<id>
RUN_PLOTS_DIR = "runs"


def _run_plots(
    store: Any, out: Path, progress: Callable[[float], None] | None = None
) -> dict[str, str]:
    """`satcc plot` of each finished run (the first MAX_RUN_PLOTS), linked from the runs table."""
    from satcc.plot import save
    from satcc.results import ResultError, load

    done = store.query(
        "SELECT run_id FROM runs WHERE status = 'done' ORDER BY point, repetition, run_id"
    )["run_id"].tolist()[:MAX_RUN_PLOTS]
    links = {}
    for i, run_id in enumerate(done):
        if progress is not None:
            progress(i / len(done))
        try:
            result = load(store.directory / layout.RUNS_DIR / run_id)
        except ResultError:
            continue
        if result.flow_series.empty:
            continue
        rel = f"{RUN_PLOTS_DIR}/{run_id}.png"
        save(result, out / rel)
        links[run_id] = rel
    return links


def _downloads(store: Any, out: Path) -> list[str]:
    """The runs and flows tables as CSV beside the report (the page links them)."""
    names = []
    for name, sql in (
        ("runs.csv", "SELECT * FROM runs ORDER BY point, repetition, run_id"),
        ("flows.csv", "SELECT * FROM flows ORDER BY run_id, id"),
    ):
        frame = store.query(sql)
        layout.atomic_write_text(out / name, frame.to_csv(index=False, lineterminator="\n"))
        names.append(name)
    return names


# -- HTML --------------------------------------------------------------------------------------

CHECK_SCRIPT = """
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                .map(function (i) { return i.id; });
  document.body.setAttribute("data-figures",
      bad.length ? "broken " + bad.join(" ") : "ok " + imgs.length);
});
"""


@functools.cache
def _env() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("satcc.report", "templates"),
        autoescape=True,
        keep_trailing_newline=True,
    )


def _html(macro: str, *args: Any, **kwargs: Any) -> Any:
    """One macro of templates/sections.html.j2, rendered (Markup: safe to nest)."""
    return getattr(_env().get_template("sections.html.j2").module, macro)(*args, **kwargs)


def _fmt(v: Any) -> str:
    return figures.value_text(v)


def to_toml(doc: dict[str, Any]) -> str:
    """A scenario document as TOML (scalars, arrays, tables, arrays of tables)."""
    lines: list[str] = []

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{_key(k)} = {value(x)}" for k, x in v.items()) + " }"
        return json.dumps(str(v))

    def table(prefix: str, t: dict[str, Any], array: bool) -> None:
        if prefix:
            lines.append(f"[[{prefix}]]" if array else f"[{prefix}]")
        subs = []
        for k, v in t.items():
            if isinstance(v, dict):
                subs.append((k, v, False))
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                subs.append((k, v, True))
            else:
                lines.append(f"{_key(k)} = {value(v)}")
        for k, v, is_array in subs:
            name = f"{prefix}.{_key(k)}" if prefix else _key(k)
            if is_array:
                for item in v:
                    lines.append("")
                    table(name, item, True)
            else:
                lines.append("")
                table(name, v, False)

    table("", doc, False)
    return "\n".join(lines).strip() + "\n"


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


@dataclass
class Section:
    """One part of the HTML report: `render(ctx)` returns its HTML (already escaped) or None
    to leave it out; `nav` is its link text in the page's navigation (None: no link)."""

    id: str
    nav: str | None
    render: Callable[[RenderContext], str | None]


@dataclass
class RenderContext:
    store: Any
    report: Report
    runs: pd.DataFrame
    flows: pd.DataFrame
    params: list[str]


SECTIONS: list[Section] = []


def register_section(section: Section, before: str | None = None) -> None:
    """Add a section to every report, at the end or before the section with id `before`
    (how other modules add theirs: `register_section(Section("fidelity", "Fidelity", fn),
    before="points")`)."""
    ids = [s.id for s in SECTIONS]
    if section.id in ids:
        SECTIONS[ids.index(section.id)] = section
    elif before is not None and before in ids:
        SECTIONS.insert(ids.index(before), section)
    else:
        SECTIONS.append(section)


def _matrix_html(ctx: RenderContext) -> str | None:
    axes = ctx.store.index.get("axes")
    if not axes:
        return None
    rows = [
        [a["name"], a["role"], ", ".join(a["keys"]), ", ".join(str(v) for v in a["values"])]
        for a in axes
    ]
    return _html("matrix", rows)


def _figures_html(ctx: RenderContext) -> str:
    drawn = [
        {
            "id": f.id,
            "title": f.title,
            "caption": f.caption,
            "files": [p.name for p in f.files],
            "png_b64": base64.b64encode(f.png).decode("ascii") if f.png else None,
        }
        for f in ctx.report.drawn
    ]
    return _html("figures", drawn)


def _field_vs_sim_html(ctx: RenderContext) -> str | None:
    doc = ctx.report.field_vs_sim
    if not doc:
        return None
    png = doc.get("png") or b""
    return _html(
        "field_vs_sim",
        doc["title"],
        doc["caption"],
        doc["columns"],
        doc["rows"],
        doc["left"],
        base64.b64encode(png).decode("ascii") if png else None,
        doc.get("files") or [],
    )


def _skipped_html(ctx: RenderContext) -> str:
    return _html("skipped", ctx.report.skipped)


def _problems_html(ctx: RenderContext) -> str:
    return _html("problems", ctx.report.problems)


MAX_INTERACTIVE_RUNS = 6
VENDOR = Path(__file__).parent / "vendor"
INTERACTIVE_SCRIPT = """
(function () {
  var colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#17becf"];
  var charts = JSON.parse(document.getElementById("uplot-data").textContent);
  var marked = {};  // chart -> boundary lines drawn (the page says the total, as data-charts)
  charts.forEach(function (c, i) {
    var series = [{label: "time (s)"}].concat(c.names.map(function (n, k) {
      return {label: n, stroke: colors[k % colors.length], width: 1.2, spanGaps: false};
    }));
    // a field run's Starlink boundaries: dotted vertical lines
    var marks = function (u) {
      var ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = "#737373";
      ctx.lineWidth = 1;
      ctx.setLineDash([2, 3]);
      (c.boundaries || []).forEach(function (t) {
        var x = Math.round(u.valToPos(t, "x", true)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
      });
      ctx.restore();
      marked[i] = (c.boundaries || []).length;
      var total = Object.keys(marked).reduce(function (a, k) { return a + marked[k]; }, 0);
      document.body.setAttribute("data-boundaries", String(total));
    };
    new uPlot({title: c.title, width: 900, height: 260, scales: {x: {time: false}},
               series: series, axes: [{label: "time (s)"}, {label: "goodput (Mbit/s)"}],
               hooks: {draw: [marks]}},
              c.data, document.getElementById("uplot-" + i));
  });
  document.body.setAttribute("data-charts", "ok " + charts.length);
})();
"""


def chart_title(ctx: RenderContext, run_id: str, flows: pd.DataFrame) -> str:
    """A run as a reader names it (figures.run_label); the run id last, for the tables."""
    ccas = [str(c) for c in flows["cca"].dropna()]
    return figures.run_label(ctx.runs, ctx.params, run_id, ccas) + f"  ({str(run_id)[:8]})"


def _interactive_html(ctx: RenderContext) -> str | None:
    """Goodput over time of the first finished runs as uPlot charts (vendored, inlined: no
    network at view time). Drag to zoom, double-click to reset, click a legend entry to hide."""
    done = ctx.runs[ctx.runs["status"] == "done"]["run_id"].tolist()[:MAX_INTERACTIVE_RUNS]
    if not done:
        return None
    ids = ", ".join(_sql_literal(r) for r in done)
    fs = ctx.store.query(
        f"SELECT run_id, flow_id, t_s, goodput_bps FROM flow_series "
        f"WHERE run_id IN ({ids}) ORDER BY run_id, flow_id, t_s"
    )
    names = ctx.store.query(f"SELECT run_id, id, name, cca FROM flows WHERE run_id IN ({ids})")
    charts = []
    for run_id in done:
        mine = fs[fs["run_id"] == run_id]
        if mine.empty:
            continue
        wide = mine.pivot_table(
            index="t_s", columns="flow_id", values="goodput_bps", aggfunc="first", dropna=False
        ).sort_index()
        label = {int(r.id): str(r.name) for r in names[names["run_id"] == run_id].itertuples()}
        data = [list(map(float, wide.index))] + [
            [None if pd.isna(v) else round(float(v) / 1e6, 4) for v in wide[c]]
            for c in wide.columns
        ]
        chart = {
            "title": chart_title(ctx, run_id, names[names["run_id"] == run_id]),
            "names": [label.get(int(c), str(c)) for c in wide.columns],
            "data": data,
        }
        marks = starlink_boundaries(figures.run_summary(ctx.store.directory, run_id))
        if marks:
            chart["boundaries"] = marks
        charts.append(chart)
    if not charts:
        return None
    from markupsafe import Markup

    # JSON inside <script>: "</" cannot end the element early
    payload = json.dumps(charts, ensure_ascii=True, allow_nan=False).replace("</", "<\\/")
    css = (VENDOR / "uPlot.min.css").read_text(encoding="utf-8")
    js = (VENDOR / "uPlot.iife.min.js").read_text(encoding="utf-8")
    return _html(
        "interactive",
        len(charts),
        Markup(css),
        Markup(js),
        Markup(payload),
        Markup(INTERACTIVE_SCRIPT),
    )


def _sql_literal(text: Any) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _fidelity_section(ctx: RenderContext) -> str | None:
    return _fidelity_html(ctx.store) if ctx.store.index.get("fidelity") else None


def _fidelity_html(store: Any) -> str:
    """satcc fidelity's agreement table (satcc.fidelity.table), recomputed from the store."""
    from markupsafe import Markup

    from satcc.fidelity import suite, table

    return _html("fidelity", Markup(table.render_html(suite.evaluate_store(store))))


for _section in (
    Section("matrix", None, _matrix_html),
    Section("field_vs_sim", "Field vs simulator", _field_vs_sim_html),
    Section("figures", "Figures", _figures_html),
    Section("interactive", "Interactive", _interactive_html),
    Section("skipped", "Skipped figures", _skipped_html),
    Section("fidelity", "Fidelity", _fidelity_section),
    Section("points", "Matrix points", lambda c: _points_html(c.store, c.runs, c.flows, c.params)),
    Section("runs", "Runs", lambda c: _runs_html(c.runs, c.flows, c.params, c.report.run_plots)),
    Section("problems", "Left out", _problems_html),
):
    register_section(_section)


def render_html(store: Any, report: Report) -> str:
    from markupsafe import Markup

    idx = store.index
    runs = store.query("SELECT * FROM runs ORDER BY point, repetition, run_id")
    flows = store.query(
        "SELECT run_id, name, cca, goodput_bps, retransmission_rate FROM flows ORDER BY run_id, id"
    )
    ctx = RenderContext(store, report, runs, flows, list(store.param_columns))
    counts = runs["status"].value_counts().to_dict()
    sections = []
    for section in SECTIONS:
        body = section.render(ctx)
        if body is not None:
            sections.append({"id": section.id, "nav": section.nav, "html": Markup(body)})
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            name=idx.get("name"),
            description=idx.get("description"),
            version=_native.version(),
            run_versions=", ".join(sorted(set(runs["satcc_version"].dropna().astype(str)))),
            n_runs=len(runs),
            counts={k: counts.get(k, 0) for k in ("done", "failed", "pending")},
            engines=", ".join(
                f"{e} {n}" for e, n in runs["engine"].value_counts().sort_index().items()
            ),
            scenario=idx.get("scenario"),
            seeds=idx.get("seeds"),
            sections=sections,
            directory=str(store.directory),
            downloads=report.downloads,
            css=Markup(CSS),
            check_script=Markup(CHECK_SCRIPT),
        )
    )


def _flow_cell(flows: pd.DataFrame) -> str:
    if flows.empty:
        return "-"
    groups = flows.assign(g=flows["name"].map(figures.flow_group)).groupby("g", sort=False)
    return (
        ", ".join(
            f"{g} {grp['goodput_bps'].mean() / 1e6:.2f}"
            for g, grp in groups
            if grp["goodput_bps"].notna().any()
        )
        or "-"
    )


def _points_html(store: Any, runs: pd.DataFrame, flows: pd.DataFrame, params: list[str]) -> str:
    cols = [*params, "engines", "runs", "goodput (Mbit/s)", "retx (%)", "Jain", "scenario"]
    rows = []
    for point, group in runs.groupby("point", sort=True, dropna=False):
        first = group.iloc[0]
        done = group[group["status"] == "done"]
        mine = flows[flows["run_id"].isin(done["run_id"])]
        retx = mine["retransmission_rate"].mean()
        scenario = "-"
        if not done.empty:
            run_doc = json.loads(
                (
                    store.directory / layout.RUNS_DIR / done.iloc[0]["run_id"] / layout.RUN_FILE
                ).read_text(encoding="utf-8")
            )
            if run_doc.get("scenario"):
                scenario = _html("toml_details", to_toml(run_doc["scenario"]))
            elif run_doc.get("inputs"):
                scenario = ", ".join(Path(i["path"]).name for i in run_doc["inputs"])
        rows.append(
            [
                *(_fmt(first[c]) for c in params),
                ", ".join(sorted(set(group["engine"].dropna().astype(str)))),
                f"{len(done)}/{len(group)}",
                _flow_cell(mine),
                "-" if pd.isna(retx) else f"{100 * retx:.3f}",
                _fmt(done["jain_index"].mean()),
                scenario,
            ]
        )
    left = set(range(len(params))) | {len(params), len(params) + 2, len(cols) - 1}
    return _html("points", cols, rows, left)


def _runs_html(
    runs: pd.DataFrame, flows: pd.DataFrame, params: list[str], plots: dict[str, str] | None = None
) -> str:
    plots = plots or {}
    cols = ["run", "status", "engine", "seed", *params, "goodput (Mbit/s)", "Jain", "error"]
    rows, classes = [], []
    by_run = dict(tuple(flows.groupby("run_id")))
    for r in runs.head(MAX_RUN_ROWS).to_dict("records"):
        err = r.get("error")
        err = err.strip() if isinstance(err, str) else ""  # null reads back as NaN
        rows.append(
            [
                _html("run_cell", r["run_id"], plots.get(r["run_id"])),
                r["status"],
                r["engine"],
                _fmt(r["seed"]),
                *(_fmt(r[c]) for c in params),
                _flow_cell(by_run.get(r["run_id"], flows.iloc[0:0])),
                _fmt(r["jain_index"]),
                _html("pre", err),
            ]
        )
        classes.append(str(r["status"]))
    more = max(len(runs) - MAX_RUN_ROWS, 0)
    left = {0, 1, 2, *range(4, 4 + len(params)), len(cols) - 1}
    return _html("runs", cols, rows, left, classes, more)
