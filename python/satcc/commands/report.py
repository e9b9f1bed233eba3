"""`satcc report DIR`: an HTML report and paper-quality figure files for a campaign or a result."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from satcc.cli import COMMAND_HELP
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["report"]
DESCRIPTION = """\
Draw the studies' figures from a campaign directory, each only when the campaign has the data
for it (the report says which were skipped and why), and write a self-contained HTML report:
figures embedded, tables of every matrix point, the scenario and parameters of each run, the
satcc version, and any file left out of the store. Figure files go beside it. DIR may also
be one result (`satcc sim/run/emu/analyze --out`): its `satcc plot` figure and per-flow table.
A progress bar shows on a terminal.

  --format html,png   (default) report.html + PNG figures
  --format pdf        PDF figures only (vector, for papers); svg likewise"""

FORMATS = ("html", "png", "pdf", "svg")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", type=Path, help="campaign or result directory")
    p.add_argument(
        "--format",
        metavar="FMT[,FMT]",
        default=None,
        help="html, png, pdf, svg; comma-separated or repeated (default: html,png)",
        action="append",
    )
    p.add_argument("--out", metavar="DIR", type=Path, help="output directory (default: DIR/report)")
    p.add_argument(
        "--scenario",
        metavar="FILE",
        type=Path,
        help="a `satcc field` store: the simulator's prediction on this path beside the "
        "measured runs, per CCA and direction (satcc.field.compare)",
    )
    p.add_argument(
        "--seeds", type=int, default=3, help="simulator seeds for --scenario (default: 3)"
    )
    p.add_argument(
        "--kernel",
        metavar="EMU_DIR",
        type=Path,
        help="DIR is a `satcc sim --capture` result: set the emulator result EMU_DIR's "
        "captures of the same scenario beside its own, a sequence/ACK graph per flow",
    )
    p.set_defaults(func=run)


def parse_formats(values: list[str] | str | None) -> list[str]:
    from satcc.errors import UserError

    if values is None:
        return ["html", "png"]
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values:
        for f in v.split(","):
            f = f.strip().lower()
            if f not in FORMATS:
                raise UserError(f"--format: expected html, png, pdf or svg, found {f!r}")
            if f not in out:
                out.append(f)
    return out


def run(args: argparse.Namespace) -> int:
    from satcc.limits import check_out_dir, printable
    from satcc.progress import ProgressBar
    from satcc.report import build_report
    from satcc.store.layout import read_index

    formats = parse_formats(args.format)
    comparison = None
    if (args.dir / "summary.json").is_file():  # one result, not a campaign
        from satcc.report import build_result_report

        out = check_out_dir(args.out if args.out is not None else args.dir / "report")
        if getattr(args, "scenario", None) is not None:
            from satcc.errors import UserError

            raise UserError(f"--scenario: {args.dir} is one result; expected a `satcc field` store")
        report = build_result_report(args.dir, out, formats, kernel=getattr(args, "kernel", None))
    else:
        if getattr(args, "kernel", None) is not None:
            from satcc.errors import UserError

            raise UserError(
                f"--kernel: expected DIR to be one result, found a campaign: {args.dir}"
            )
        read_index(args.dir)  # a campaign directory, readable, before anything is written
        out = check_out_dir(args.out if args.out is not None else args.dir / "report")
        if getattr(args, "scenario", None) is not None:
            from satcc.field.compare import run as compare

            # before the page: its "Field vs simulator" section shows the table and figure
            comparison = compare(
                args.dir,
                args.scenario,
                out,
                seeds=args.seeds,
                formats=formats,
                embed="html" in formats,
            )
        with ProgressBar(label=f"report {args.dir.name}") as bar:
            report = build_report(
                args.dir,
                out,
                formats,
                progress=bar,
                field_vs_sim=comparison.section() if comparison is not None else None,
            )
    for line in report.lines():
        print(printable(line))
    if comparison is not None:
        for line in comparison.lines:
            print(printable(line))
    print(printable(f"report: {report.html_path or out}"), file=sys.stderr)
    return 0
