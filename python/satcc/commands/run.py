"""`satcc run FILE`: run a scenario with the engine its `[scenario] engine` key names.

    engine = "sim"    the packet simulator, as `satcc sim FILE`   (default out/<name>)
    engine = "model"  the analytical models, as `satcc model FILE` (default out/<name>-model)
    engine = "emu"    the real-kernel emulator, as `satcc emu FILE` (root; default out/<name>-emu)

`--engine` overrides the key. Output (table or --json summary, --plot, "results: DIR" on
stderr) is the same for every engine.
"""

from __future__ import annotations

import argparse

from satcc import registry
from satcc.api import load_scenario, parse_set
from satcc.cli import COMMAND_HELP
from satcc.commands import options
from satcc.commands.output import run_and_write

HELP = COMMAND_HELP["run"]
DESCRIPTION = """\
Run a scenario with the engine named by its `[scenario] engine` key (or --engine): `sim` is the
packet simulator (as `satcc sim`), `model` the analytical models (as `satcc model FILE`;
docs/models.md, "The model engine", says which model answers which congestion control and what
stays null), `emu` the real
kernel in network namespaces (as `satcc emu FILE`; needs root). Writes the
same result directory either way and prints a per-flow table, or with --json the summary."""


def register(subparsers) -> None:
    p = options.scenario_command(subparsers, "run", HELP, DESCRIPTION)
    options.add_set(p)
    p.add_argument(
        "--engine",
        choices=registry.NAMES,
        help="override the scenario's `engine`: "
        + "; ".join(f"{e.name}, {e.summary}" for e in registry.ENGINES.values()),
    )
    options.add_out(p, "out/<name> for sim, out/<name>-model for model, out/<name>-emu for emu")
    options.add_json(p)
    options.add_seed(p)
    options.add_plot(p)
    options.add_force(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    s = load_scenario(args.file, parse_set(args.set))
    engine = args.engine or s.scenario.engine
    registry.get(engine, where=f"{s.source}: scenario.engine")
    return run_and_write(
        engine, s, args.out, seed=args.seed, force=args.force, as_json=args.json, plot=args.plot
    )
