"""`satcc demo`: CUBIC vs BBR vs Reno over a Starlink-like uplink and over a GEO link.

Each demo scenario gives every algorithm its own identical copy of the path ("lanes"), so one run
compares the three alone on the same link, not competing for it (competition is a different
question: see scenarios/starlink-uplink-shared.toml). Results and a PNG per scenario go under
out/demo/<scenario name>/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from satcc import registry, resources
from satcc.cli import COMMAND_HELP
from satcc.commands.output import safe_name
from satcc.errors import UserError
from satcc.progress import ProgressBar
from satcc.scenario import load
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["demo"]
DESCRIPTION = """\
Run the ready demo scenarios (scenarios/demo-starlink-uplink.toml: 20 Mbit/s uplink, 50 ms
RTT, 0.3 % loss; scenarios/demo-geo.toml: 20 Mbit/s, 600 ms RTT). Each gives CUBIC, BBR and
Reno their own identical copy of the link, so the table compares each algorithm alone on the
same path. Prints a per-flow table per scenario and writes results plus plot.png under
OUT/<scenario name>/."""

DEMO_SCENARIOS = ("demo-starlink-uplink.toml", "demo-geo.toml")
DEFAULT_OUT = Path("out/demo")


def scenarios_dir() -> Path:
    """The scenarios shipped in the package (satcc.resources)."""
    return resources.scenarios_dir()


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "demo",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=DEFAULT_OUT,
        help=f"where to write results (default: {DEFAULT_OUT})",
    )
    p.add_argument(
        "--scenarios",
        metavar="DIR",
        type=Path,
        default=None,
        help="directory holding the demo scenario files (default: the scenarios shipped with satcc)",
    )
    p.add_argument("--no-plot", action="store_true", help="skip the PNGs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    directory = args.scenarios or scenarios_dir()
    paths = [directory / name for name in DEMO_SCENARIOS]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise UserError(
            f"expected the demo scenarios, found none at {', '.join(missing)} "
            "(the satcc install is incomplete: reinstall it, or pass --scenarios DIR)"
        )
    scenarios = [load(p) for p in paths]  # validate all before running any
    for n, s in enumerate(scenarios):
        out = args.out / safe_name(s.name)
        with ProgressBar(label=s.name) as bar:
            result = registry.run("sim", s, registry.RunOptions(progress=bar))
        result.write(out)
        if n:
            print()
        print(result.table(fairness=False))  # lanes do not share a link
        written = f"results: {out}"
        if not args.no_plot:
            from satcc.plot import DEFAULT_PNG, save

            written += f", plot: {save(result, out / DEFAULT_PNG)}"
        print(written)
        sys.stdout.flush()
    return 0
