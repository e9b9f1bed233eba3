"""`satcc validate hybla`: study 002's validation design through the simulator (docs/models.md).

Prints the study's Table 3 (max |model - sim| / model for p <= 1e-4, and the p >= 5e-3
figures) beside the study's own ns-2 and dummynet values, then every point; writes runs.csv,
points.csv, validation.json and fig3..fig9 PNGs to --out. The design and its readings are in
satcc/studies/hybla.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.progress import ProgressBar
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["validate"]
DEFAULT_OUT = Path("out/validate-hybla")
DEFAULT_OUT_QUICK = Path("out/validate-hybla-quick")


def register(subparsers) -> None:
    p = subparsers.add_parser("validate", help=HELP, description=HELP)
    sub = p.add_subparsers(dest="study", metavar="STUDY", required=True)
    h = sub.add_parser(
        "hybla",
        help="study 002: TCP Hybla model vs the simulator (Table 3, Fig. 3-9)",
        formatter_class=HelpFormatter,
        description="""\
Run study 002's validation design through satcc's simulator: TCP Hybla, 1000-byte segments
(mss 1000, 1052-byte IP packets), W_m = 550 (receive window), 1000-packet buffer, RTT 550 ms,
10 Mbit/s, loss on the data direction swept 1e-6..1e-2; steady state (1000 s runs) and
10/50/100 MB transfers; 10 seeds. Prints Table 3 beside the study's values, writes every
point (runs.csv, points.csv, validation.json) and Fig. 3-9 as PNGs.
--quick: p in {1e-6, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2}, one seed, 200 s steady state.""",
    )
    h.add_argument("--quick", action="store_true", help="the reduced grid (seconds, not minutes)")
    h.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help=f"output directory (default {DEFAULT_OUT}, or {DEFAULT_OUT_QUICK})",
    )
    h.add_argument("--seeds", metavar="N", type=int, help="seeds per point (default 10; quick 1)")
    h.add_argument(
        "--jobs",
        metavar="N",
        type=int,
        help=f"simulator processes (default: the CPU count, {os.cpu_count()})",
    )
    h.add_argument(
        "--loss",
        metavar="P",
        type=float,
        nargs="+",
        help="loss rates instead of the design's sweep",
    )
    h.add_argument(
        "--steady-duration",
        metavar="S",
        type=float,
        help="steady-state run length in s (default 1000; quick 200)",
    )
    h.add_argument(
        "--rate",
        metavar="BPS",
        type=float,
        help="link rate in bit/s (default 10e6; the study does not give it)",
    )
    h.add_argument(
        "--no-delayed-ack",
        action="store_true",
        help="an ACK per segment, as the model assumes (default: Linux delayed ACKs)",
    )
    h.add_argument("--no-plot", action="store_true", help="skip the PNGs")
    h.set_defaults(func=run_hybla)


def run_hybla(args: argparse.Namespace) -> int:
    from satcc.studies import hybla

    if args.seeds is not None and args.seeds < 1:
        raise UserError(f"--seeds: expected an integer >= 1, found {args.seeds}")
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs: expected an integer >= 1, found {args.jobs}")
    if args.loss is not None and not all(0 < p < hybla.hybla.MAX_LOSS for p in args.loss):
        raise UserError(f"--loss: expected probabilities in (0, 0.5), found {args.loss}")
    if args.steady_duration is not None and args.steady_duration < 1:
        raise UserError(f"--steady-duration: expected at least 1 s, found {args.steady_duration}")
    if args.rate is not None and args.rate < 1:
        raise UserError(f"--rate: expected a positive rate in bit/s, found {args.rate}")
    changes = {
        "seeds": args.seeds,
        "losses": tuple(sorted(set(args.loss))) if args.loss else None,
        "steady_duration_s": args.steady_duration,
        "rate_bps": int(args.rate) if args.rate is not None else None,
        "delayed_ack": False if args.no_delayed_ack else None,
    }
    design = hybla.Design.quick(**changes) if args.quick else hybla.Design.full(**changes)
    out = args.out or (DEFAULT_OUT_QUICK if args.quick else DEFAULT_OUT)
    with ProgressBar(label="validate hybla") as bar:
        result = hybla.validate(design, out, jobs=args.jobs, progress=bar, plots=not args.no_plot)
    print(result.text())
    print()
    print(hybla.format_points(result.points))
    sys.stdout.flush()
    written = ["runs.csv", "points.csv", "validation.json", *(f.name for f in result.figures)]
    print(f"wrote {out}/: {', '.join(written)}", file=sys.stderr)
    return 0
