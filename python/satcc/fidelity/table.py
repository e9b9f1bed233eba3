"""The agreement table for people: rich on a terminal, plain text in fidelity.txt, HTML in the
report. One row per scenario x flow group; each metric cell holds the simulator's median over
its seeds (first line) and the kernel's median with its min-max over the runs (second line),
with the verdict mark after the value it judges: ✓ pass, ✗ fail, ? undecided (more runs
needed), nothing where no target applies. Retransmissions are the means over runs, as their
check compares (docs/fidelity.md)."""

from __future__ import annotations

from typing import Any

from satcc.fidelity.metrics import FAIL, KERNEL, PASS, TARGETS, UNDECIDED, statistic

MARK = {PASS: "✓", FAIL: "✗", UNDECIDED: "?", None: ""}
COLUMNS = [  # metric, header, scale, format, unit
    ("share", "share", 1.0, "{:.2f}", ""),
    ("goodput_bps", "goodput\nMbit/s", 1e-6, "{:.1f}", " Mbit/s"),
    ("retx_rate", "retx %\n(mean)", 100.0, "{:.2f}", " %"),
    ("rtt_mean_ms", "RTT mean\nms", 1.0, "{:.1f}", " ms"),
    ("rtt_p95_ms", "RTT p95\nms", 1.0, "{:.1f}", " ms"),
]


def _num(x: float | None, scale: float, fmt: str) -> str:
    return "-" if x is None else fmt.format(x * scale)


def cell(
    metric: dict[str, Any], scale: float, fmt: str, stat: str = "median"
) -> tuple[str, str, str, str | None]:
    """(sim value, kernel value, kernel min–max or "", verdict); the value is `stat` (median, or
    mean for retransmissions) over the runs."""
    s, k = metric["sim"], metric["kernel"]
    spread = ""
    if k["n"] and k["n"] > 1:
        spread = f"{_num(k['min'], scale, fmt)}–{_num(k['max'], scale, fmt)}"
    return (
        _num(s.get(stat), scale, fmt),
        _num(k.get(stat), scale, fmt),
        spread,
        metric["verdict"],
    )


def cwnd_cell(row: dict[str, Any]) -> tuple[str, str]:
    c = row["cwnd"]
    d = "-" if c["distance"] is None else f"{c['distance']:.2f}"
    k = "-" if c["kernel_self"] is None else f"{c['kernel_self']:.2f}"
    return d, k


def runs_text(doc: dict[str, Any], scenario: str) -> str:
    for r in doc.get("runs", []):
        if r["scenario"] == scenario:
            return f"{r['sim']['done']}/{r['emu']['done']}"
    return "-"


def rich_table(doc: dict[str, Any]):
    from rich import box
    from rich.table import Table

    t = Table(
        title=f"satcc fidelity: {doc.get('name')} · per cell: simulator (median of "
        "seeds) / kernel (median of runs) with its min–max; retx: means over runs",
        box=box.SIMPLE_HEAD,
        show_lines=True,
        title_justify="left",
    )
    t.add_column("scenario\n(runs sim/kernel)", no_wrap=True)
    t.add_column("group (flows)", no_wrap=True)
    for _, title, _, _, _ in COLUMNS:
        t.add_column(title, justify="right", no_wrap=True)
    t.add_column("cwnd dist\n(kern self)", justify="right", no_wrap=True)
    last = None
    for row in doc["rows"]:
        cells = []
        for key, _, scale, fmt, _ in COLUMNS:
            sim, kern, spread, verdict = cell(row["metrics"][key], scale, fmt, statistic(key))
            style = {PASS: "green", FAIL: "bold red", UNDECIDED: "yellow"}.get(verdict or "", "")
            text = f"sim {sim}  \nkern {kern} {MARK[verdict] or ' '}"
            if spread:
                text += f"\n{spread}"
            cells.append(f"[{style}]{_escape(text)}[/]" if style else _escape(text))
        d, k = cwnd_cell(row)
        scen = ""
        if row["scenario"] != last:
            scen = f"{row['scenario']}\n({runs_text(doc, row['scenario'])})"
        last = row["scenario"]
        t.add_row(_escape(scen), _escape(f"{row['group']} ({row['flows']})"), *cells, f"{d}\n({k})")
    return t


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def summary_lines(doc: dict[str, Any]) -> list[str]:
    ta = doc["tally"]
    tg = {**TARGETS.doc(), **(doc.get("fidelity") or {}).get("targets", {})}
    lines = [
        (
            f"checks: {ta['pass']} pass, {ta['fail']} fail, {ta.get('undecided', 0)} undecided "
            f"(targets: share ±{tg['share_abs']:g}, total goodput ±{100 * tg['goodput_rel']:g} %, "
            f"mean retx: 90 % interval of sim/kernel within {tg['retx_ratio']:g}x, or both "
            f"< {100 * tg['retx_floor']:g} %; RTT mean ±{100 * tg['rtt_rel']:g} %)"
        )
    ]
    for f in ta["failures"]:
        verdict = f.get("verdict", FAIL)
        stat = f.get("statistic", "median")
        line = (
            f"  {MARK[verdict]} {f['scenario']} / {f['group']}: {f['metric']} ({stat}) sim "
            f"{_fmt(f['sim'], f['metric'])} vs kernel {_fmt(f['kernel'], f['metric'])}"
        )
        test = f.get("test") or {}
        if test.get("low") is not None and test.get("high") is not None:
            line += f", sim/kernel {test['ratio']:.2f} (90 %: {test['low']:.2f}–{test['high']:.2f})"
        elif test.get("rule") == "runs":
            line += ", fewer than 2 runs on a side"
        lines.append(line + (": more runs needed" if verdict == UNDECIDED else ""))
    missing = [
        r["scenario"]
        for r in doc.get("runs", [])
        if r[KERNEL]["done"] == 0 and KERNEL in doc["fidelity"].get("engines", [KERNEL])
    ]
    if missing:
        lines.append(
            f"no kernel run finished for: {', '.join(missing)} (see failed/ in the directory)"
        )
    return lines


def _fmt(x: float | None, metric: str) -> str:
    for key, _, scale, fmt, unit in COLUMNS:
        if key == metric:
            return _num(x, scale, fmt) + ("" if x is None else unit)
    return "-" if x is None else f"{x:g}"


def render_text(doc: dict[str, Any], width: int = 130, color: bool = False) -> str:
    """The table and the summary as text (no colours unless asked)."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=color,
        color_system=None if not color else "auto",
        highlight=False,
    )
    console.print(rich_table(doc))
    for line in summary_lines(doc):
        console.print(_escape(line), highlight=False)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


HTML_TEMPLATE = """\
<table><thead><tr><th class="l">scenario</th><th class="l">group</th><th>runs sim/kernel</th>
{%- for title in titles %}<th>{{ title }}<br>sim · kernel</th>{% endfor -%}
<th>cwnd distance<br>(kernel self)</th></tr></thead><tbody>
{%- for row in rows %}<tr><td class="l">{{ row.scenario }}</td><td class="l">{{ row.group }} ({{ row.flows }})</td><td>{{ row.runs }}</td>
{%- for c in row.cells %}<td{% if c.color %} style="background:{{ c.color }}"{% endif %}>{{ c.sim }}<br>{{ c.kernel }} {{ c.mark }}</td>{% endfor -%}
<td>{{ row.cwnd }}<br>({{ row.cwnd_self }})</td></tr>{% endfor -%}
</tbody></table><ul>{% for line in summary %}<li>{{ line }}</li>{% endfor %}</ul>"""
VERDICT_COLORS = {PASS: "#e8f6e8", FAIL: "#fbe3e3", UNDECIDED: "#fdf5d8"}


def render_html(doc: dict[str, Any]) -> str:
    """The same table as an HTML fragment (for satcc report), from HTML_TEMPLATE."""
    import jinja2

    rows = []
    for row in doc["rows"]:
        cells = []
        for key, _, scale, fmt, _ in COLUMNS:
            sim, kern, spread, verdict = cell(row["metrics"][key], scale, fmt, statistic(key))
            cells.append(
                {
                    "sim": sim,
                    "kernel": kern + (f" ({spread})" if spread else ""),
                    "mark": MARK[verdict],
                    "color": VERDICT_COLORS.get(verdict or ""),
                }
            )
        d, k = cwnd_cell(row)
        rows.append(
            {
                "scenario": row["scenario"],
                "group": row["group"],
                "flows": row["flows"],
                "runs": runs_text(doc, row["scenario"]),
                "cells": cells,
                "cwnd": d,
                "cwnd_self": k,
            }
        )
    env = jinja2.Environment(autoescape=True)
    return env.from_string(HTML_TEMPLATE).render(
        titles=[t.replace("\n", " ") for _, t, _, _, _ in COLUMNS],
        rows=rows,
        summary=[line.strip() for line in summary_lines(doc)],
    )


def render_markdown(doc: dict[str, Any]) -> str:
    """The table in Markdown (BENCHMARKS.md): per cell `sim / kernel (min–max) mark`."""
    head = [
        "scenario",
        "group",
        "runs sim/kernel",
        *(t.replace("\n", " ") for _, t, _, _, _ in COLUMNS),
        "cwnd dist (kernel self)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in doc["rows"]:
        cells = [
            row["scenario"],
            f"{row['group']} ({row['flows']})",
            runs_text(doc, row["scenario"]),
        ]
        for key, _, scale, fmt, _ in COLUMNS:
            sim, kern, spread, verdict = cell(row["metrics"][key], scale, fmt, statistic(key))
            text = f"{sim} / {kern}" + (f" ({spread})" if spread else "")
            mark = MARK[verdict]
            bold = verdict in (FAIL, UNDECIDED)
            cells.append(f"**{text} {mark}**" if bold else f"{text} {mark}".rstrip())
        d, k = cwnd_cell(row)
        cells.append(f"{d} ({k})")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(
        "- " + line.strip() if line.startswith("  ") else line for line in summary_lines(doc)
    )
    return "\n".join(lines) + "\n"
