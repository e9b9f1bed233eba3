"""`satcc sim FILE`: run a scenario through the packet simulator and write the results."""

from __future__ import annotations

import argparse
from pathlib import Path

from satcc.api import load_scenario, parse_set
from satcc.cli import COMMAND_HELP
from satcc.commands.output import run_and_write

HELP = COMMAND_HELP["sim"]
DESCRIPTION = """\
Run a scenario through satcc's deterministic packet-level simulator (Linux-like TCP: SACK,
PRR, RTO, delayed ACKs, pacing; CCAs from `satcc cc list`). Writes a result directory
(summary.json, flows.parquet, flow_series.parquet, link_series.parquet; see docs/results.md)
and prints a per-flow table, or with --json the summary document. The same file and seed give
byte-identical results. A progress bar appears on a terminal when a run takes over a second."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sim",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="result directory (default: out/<scenario name>); replaced atomically",
    )
    p.add_argument(
        "--json", action="store_true", help="print the JSON summary on stdout instead of the table"
    )
    p.add_argument(
        "--seed", metavar="N", type=int, help="random seed (default: the scenario's `seed`)"
    )
    p.add_argument(
        "--set",
        metavar="KEY.PATH=VALUE",
        action="append",
        default=[],
        help="override a scenario key (campaign key paths: flow[0].cca=bbr, "
        "link[0].rate='\"20 Mbit/s\"', flow.*.mss=1200); repeatable",
    )
    p.add_argument("--plot", action="store_true", help="also draw DIR/plot.png")
    p.add_argument(
        "--force",
        action="store_true",
        help="run even when the estimate is above a soft limit (memory, run time)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    s = load_scenario(args.file, parse_set(args.set))
    return run_and_write(
        "sim", s, args.out, seed=args.seed, force=args.force, as_json=args.json, plot=args.plot
    )
