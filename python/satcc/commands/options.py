"""The options the scenario commands share (`check`, `sim`, `run`, `emu`, `try`, `model FILE`),
defined once so that their names, metavars and help read the same everywhere."""

from __future__ import annotations

import argparse
from pathlib import Path

from satcc.textgrid import HelpFormatter

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any


def scenario_command(subparsers: Any, name: str, help: str, description: str) -> Any:
    """The parser of a command whose first argument is a scenario FILE."""
    p = subparsers.add_parser(
        name,
        help=help,
        description=description,
        formatter_class=HelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    return p


SET_HELP = (
    "override a scenario key (campaign key paths: flow[0].cca=bbr, "
    "link[0].rate='\"20 Mbit/s\"', flow.*.mss=1200); repeatable"
)


def add_set(p: argparse.ArgumentParser, help: str = SET_HELP) -> None:
    """--set KEY.PATH=VALUE, repeatable (satcc.api.parse_set reads the list)."""
    p.add_argument("--set", metavar="KEY.PATH=VALUE", action="append", default=[], help=help)


def add_out(p: argparse.ArgumentParser, default: str, note: str = "") -> None:
    """--out DIR; `default` says where results go without it."""
    help = f"result directory (default: {default}){note}"
    p.add_argument("--out", metavar="DIR", type=Path, help=help)


def add_json(
    p: argparse.ArgumentParser, help: str = "print the JSON summary on stdout instead of the table"
) -> None:
    p.add_argument("--json", action="store_true", help=help)


def add_seed(
    p: argparse.ArgumentParser, help: str = "random seed (default: the scenario's `seed`)"
) -> None:
    p.add_argument("--seed", metavar="N", type=int, help=help)


def add_plot(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plot", action="store_true", help="also draw DIR/plot.png")


def add_force(
    p: argparse.ArgumentParser,
    help: str = (
        "run even when the estimate is above a soft limit (memory, run time), and replace "
        "a different run's result in --out"
    ),
) -> None:
    p.add_argument("--force", action="store_true", help=help)
