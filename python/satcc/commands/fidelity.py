"""`satcc fidelity`: the sim-vs-kernel conformance suite (satcc.fidelity, docs/fidelity.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from satcc import registry
from satcc.cli import COMMAND_HELP
from satcc.textgrid import HelpFormatter

TEXT_WIDTH = 130  # the table's width when stdout is not a terminal
HELP = COMMAND_HELP["fidelity"]
DESCRIPTION = """\
Run every scenario of the fidelity grid (scenarios/fidelity/grid.toml) through the simulator
(one run per seed) and the real kernel in the emulator (one run per seed, one at a time), then
compare per flow group: share of goodput, total goodput, retransmission rate, RTT mean and p95,
and the distance between the cwnd time series, with a verdict per target (share within 0.10 of
the kernel's median, total goodput within 10 %, retransmissions within 2x or both below 0.1 %,
mean RTT within 10 %). Writes a campaign directory (runs/<id>/ for every run, the emulator's raw
files in runs/<id>/emu/) plus fidelity.json, fidelity.txt and fidelity.png; `satcc report DIR`
draws it. Runs already in DIR are skipped, so an interrupted suite resumes.

The kernel side needs root; without root, `--engine sim` runs the simulator side only (no
verdicts), and a later run as root into the same --out adds the kernel side.

  satcc fidelity --quick              a short subset (3 scenarios, 8 s, 3 runs each)
  satcc fidelity --only 'cubic-rtt-*' --runs 5
  satcc fidelity --engine sim         simulator only (no root)"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "fidelity",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--quick", action="store_true", help="the grid's quick subset with its shorter duration"
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="result directory (default: out/fidelity or out/fidelity-quick)",
    )
    p.add_argument(
        "--runs",
        metavar="N",
        type=int,
        help="runs per engine and scenario, seeds seed..seed+N-1 (default: the grid's, 3)",
    )
    p.add_argument(
        "--only",
        metavar="PATTERN",
        help="scenarios whose name or file matches (globs, comma-separated; plain "
        "text matches as a substring)",
    )
    p.add_argument(
        "--engine",
        choices=("both", *registry.names(packets=True)),  # the simulator and the kernel side
        default="both",
        help="run only one side (default: both)",
    )
    p.add_argument(
        "--duration", metavar="D", help="every scenario's duration instead of its own (e.g. '8 s')"
    )
    p.add_argument("--grid", metavar="FILE", type=Path, help="another grid file")
    p.add_argument(
        "--capture",
        action="store_true",
        help="keep tcpdump captures of the kernel runs (off: they cost CPU)",
    )
    p.add_argument(
        "--max-lateness",
        metavar="D",
        help="count a kernel run only if satcc-linkd's p99 lateness is at most D ('2 ms'); "
        "rerun it otherwise, 3 attempts in all (default: 1 ms, docs/fidelity.md)",
    )
    p.add_argument(
        "--nominal-starts",
        action="store_true",
        help="start the simulator's flows at the scenario's own `start`, not when the paired "
        "kernel run's SYNs left (docs/fidelity.md, Start instants)",
    )
    p.add_argument("--json", action="store_true", help="print fidelity.json on stdout")
    p.add_argument(
        "--markdown",
        action="store_true",
        help="print the table as Markdown (for BENCHMARKS.md) instead",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a check fails or is undecided, or a run failed",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from satcc.errors import UserError
    from satcc.fidelity import grid, suite, table
    from satcc.store import open_store
    from satcc.units import UnitError, parse_duration

    g = grid.load(args.grid)
    engines = suite.ENGINES if args.engine == "both" else (args.engine,)
    if not all(registry.get(name).runnable_here() for name in engines):
        raise UserError(
            "fidelity: the kernel side needs root (network namespaces, AF_PACKET); "
            "run it with sudo, or pass --engine sim for the simulator side only"
        )
    if args.duration is not None:
        try:
            parse_duration(args.duration)
        except UnitError as e:
            raise UserError(f"--duration: {e}") from None
    max_lateness_us = suite.DEFAULT_MAX_LATENESS_P99_US
    if args.max_lateness is not None:
        try:
            max_lateness_us = parse_duration(args.max_lateness) / 1000
        except UnitError as e:
            raise UserError(f"--max-lateness: {e}") from None
    opts = suite.Options(
        quick=args.quick,
        only=args.only,
        runs=args.runs,
        engines=engines,
        duration=args.duration,
        capture=args.capture,
        max_lateness_p99_us=max_lateness_us,
        paired=not args.nominal_starts,
    )
    out = args.out if args.out is not None else Path("out") / suite.suite_name(g, opts)
    res = suite.run_suite(g, opts, out)
    with open_store(out) as store:
        doc = suite.evaluate_store(store)
    text = table.render_text(doc)
    suite.write_outputs(out, doc, text)
    if args.json:
        import json

        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    elif args.markdown:
        sys.stdout.write(table.render_markdown(doc))
    else:
        from rich.console import Console

        console = Console(  # satcc's own table with its colours: past cli's printable filter
            file=getattr(sys.stdout, "raw", sys.stdout),
            highlight=False,
            width=None if sys.stdout.isatty() else TEXT_WIDTH,
        )
        console.print(table.rich_table(doc))
        for line in table.summary_lines(doc):
            console.print(line, markup=False)
    failed = sum(1 for o in res.outcomes if o.status == "failed")
    print(
        f"{len(res.outcomes)} runs ({failed} failed) in {res.wall_s:.0f} s · results: {out} "
        f"(satcc report {out})",
        file=sys.stderr,
    )
    if args.strict and (failed or doc["tally"]["fail"] or doc["tally"].get("undecided")):
        return 1
    return 0
