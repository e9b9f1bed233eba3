"""`satcc sim FILE`: run a scenario through the packet simulator and write the results."""

from __future__ import annotations

import argparse

from satcc.api import load_scenario, parse_set
from satcc.cli import COMMAND_HELP
from satcc.commands import options
from satcc.commands.output import run_and_write

HELP = COMMAND_HELP["sim"]
DESCRIPTION = """\
Run a scenario through satcc's deterministic packet-level simulator (Linux-like TCP: SACK,
PRR, RTO, delayed ACKs, pacing; CCAs from `satcc cc list`). Writes a result directory
(summary.json, flows.parquet, flow_series.parquet, link_series.parquet; see docs/results.md)
and prints a per-flow table, or with --json the summary document. The same file and seed give
byte-identical results. A progress bar appears on a terminal when a run takes over a second.

--capture POINT[,POINT] also writes a pcapng capture per point into DIR/sim/, named and laid
out as the emulator's tcpdump captures (headers only, snap length 128, simulated time in ns):
POINT is a node (every packet it sends or receives, one interface per link) or FROM:TO (what
leaves the link direction from FROM to TO, at TO). Open them in Wireshark or `satcc analyze`."""


def register(subparsers) -> None:
    p = options.scenario_command(subparsers, "sim", HELP, DESCRIPTION)
    options.add_out(p, "out/<scenario name>", "; replaced atomically")
    options.add_json(p)
    options.add_seed(p)
    options.add_set(p)
    options.add_plot(p)
    options.add_force(p)
    p.add_argument(
        "--capture",
        metavar="POINT[,POINT]",
        action="append",
        default=[],
        help="write a pcapng capture at each node (NODE) or link direction (FROM:TO) into DIR/sim/",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    s = load_scenario(args.file, parse_set(args.set))
    points = tuple(p.strip() for arg in args.capture for p in arg.split(",") if p.strip())
    return run_and_write(
        "sim",
        s,
        args.out,
        seed=args.seed,
        force=args.force,
        as_json=args.json,
        plot=args.plot,
        capture_points=points,
    )
