"""`satcc plot DIR`: draw a result's time series into a PNG."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "draw goodput, cwnd and srtt over time from a result directory"
DESCRIPTION = """\
Draw a result directory (any engine, or `satcc analyze --out`) as one PNG with stacked panels
sharing the time axis: goodput per bin (Mbit/s; the received rate dashed), cwnd (packets),
smoothed RTT (ms) and, with --panels, the queueing delay per link direction (ms); one line per
flow, labelled "name (cca)"."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plot",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", type=Path, help="result directory")
    p.add_argument("--out", metavar="PNG", type=Path, help="output file (default: DIR/plot.png)")
    p.add_argument(
        "--flows", metavar="ID,...", help="only these flows (ids or names, comma-separated)"
    )
    p.add_argument(
        "--panels",
        metavar="NAME,...",
        help="panels in order among goodput, cwnd, srtt, queue (default: goodput,cwnd,srtt)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from satcc.errors import UserError
    from satcc.plot import plot_dir  # matplotlib is slow to import; only when plotting

    flows = args.flows.split(",") if args.flows else None
    panels = args.panels.split(",") if args.panels else None
    if args.out is not None:
        from pathlib import Path

        from satcc.limits import check_out_dir

        check_out_dir(Path(args.out).parent)  # a PNG below a regular file: refused before drawing
    try:
        path = plot_dir(args.dir, args.out, flows=flows, panels=panels)
    except ValueError as e:
        raise UserError(f"{'--panels' if 'panels' in str(e) else '--flows'}: {e}") from None
    print(f"plot: {path}", file=sys.stderr)
    return 0
