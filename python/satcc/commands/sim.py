"""`satcc sim FILE`: run a scenario through the packet simulator and write the results."""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path

from satcc.api import load_scenario, parse_set
from satcc.engines import sim
from satcc.limits import check_out_dir
from satcc.progress import ProgressBar

HELP = "run a scenario in the packet simulator"
DESCRIPTION = """\
Run a scenario through satcc's deterministic packet-level simulator (Linux-like TCP: SACK,
PRR, RTO, delayed ACKs, pacing; CCAs from `satcc cc list`). Writes a result directory
(summary.json, flows.parquet, flow_series.parquet, link_series.parquet; see README "Results")
and prints a per-flow table, or with --json the summary document. The same file and seed give
byte-identical results. A progress bar appears on a terminal when a run takes over a second."""

DEFAULT_OUT_ROOT = Path("out")


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


SAFE_NAME_CHARS = 100  # a directory name from a scenario name; longer ones end in a hash


def safe_name(name: str) -> str:
    """A scenario name as one path component (no separators, no leading dots, at most
    SAFE_NAME_CHARS characters: a longer name is cut and ends in 8 hex digits of its hash)."""
    out = re.sub(r"[^\w.-]+", "_", name, flags=re.ASCII).lstrip(".") or "scenario"
    if len(out) > SAFE_NAME_CHARS:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        out = f"{out[: SAFE_NAME_CHARS - 9]}-{digest}"
    return out


def run(args: argparse.Namespace) -> int:
    s = load_scenario(args.file, parse_set(args.set))
    out = args.out if args.out is not None else DEFAULT_OUT_ROOT / safe_name(s.name)
    check_out_dir(out)
    sim.check_budget(s, seed=args.seed, force=args.force)
    with ProgressBar(label=s.name) as bar:
        result = sim.run(s, seed=args.seed, progress=bar)
    from satcc.models.cli import write_and_print

    return write_and_print(result, out, as_json=args.json, plot=args.plot)
