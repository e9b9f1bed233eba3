"""`satcc plot DIR [DIR ...]`: draw a result's time series (several overlaid) into PNG/SVG/PDF."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from satcc.cli import COMMAND_HELP
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["plot"]
DESCRIPTION = """\
Draw a result directory (any engine, or `satcc analyze --out`) as one figure with stacked
panels sharing the time axis: goodput per bin (Mbit/s; the received rate dashed), cwnd (packets,
log axis, the bottleneck's BDP dotted), smoothed RTT (ms), ping probes' RTT (ms) when an
analysis has some and, with --panels, the queueing delay per link direction (ms); one line per
flow, labelled by its name (and its CCA when the name does not say it). Several directories are
overlaid in the same panels, one line style each (`satcc plot out/cubic out/bbr`). --out's
suffix chooses the format: .png, .svg or .pdf."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plot",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "dirs", metavar="DIR", type=Path, nargs="+", help="result directory (several: overlaid)"
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        type=Path,
        help="output file, .png/.svg/.pdf (default: the first DIR/plot.png)",
    )
    p.add_argument(
        "--flows", metavar="ID,...", help="only these flows (ids or names, comma-separated)"
    )
    p.add_argument(
        "--panels",
        metavar="NAME,...",
        help="panels in order among goodput, cwnd, srtt, queue, ping "
        "(default: goodput,cwnd,srtt, plus ping for an analysis with ping logs)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from satcc.errors import UserError

    flows = args.flows.split(",") if args.flows else None
    panels = args.panels.split(",") if args.panels else None
    if args.out is not None:
        from pathlib import Path

        from satcc.limits import check_out_dir

        suffix = Path(args.out).suffix.lower()
        if suffix not in (".png", ".svg", ".pdf"):
            raise UserError(
                f"--out: expected a file ending in .png, .svg or .pdf, found {str(args.out)!r}"
            )
        check_out_dir(Path(args.out).parent)  # a file below a regular file: refused before drawing
    from satcc.plot import plot_dir  # matplotlib is slow to import; only when plotting

    try:
        path = plot_dir(args.dirs, args.out, flows=flows, panels=panels)
    except ValueError as e:
        raise UserError(f"{'--panels' if 'panels' in str(e) else '--flows'}: {e}") from None
    print(f"plot: {path}", file=sys.stderr)
    return 0
