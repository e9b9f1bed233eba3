"""`satcc plot DIR`: draw a result's time series into a PNG."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "draw goodput, cwnd and srtt over time from a result directory"
DESCRIPTION = """\
Draw a result directory (written by `satcc sim`) as one PNG with three stacked panels sharing
the time axis: goodput per bin (Mbit/s), cwnd (packets) and smoothed RTT (ms), one line per
flow, labelled "id cca from→to"."""


def register(subparsers) -> None:
    p = subparsers.add_parser("plot", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", metavar="DIR", type=Path, help="result directory")
    p.add_argument("--out", metavar="PNG", type=Path, help="output file (default: DIR/plot.png)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from satcc.plot import plot_dir  # matplotlib is slow to import; only when plotting

    path = plot_dir(args.dir, args.out)
    print(f"plot: {path}", file=sys.stderr)
    return 0
