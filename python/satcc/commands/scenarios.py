"""`satcc scenarios` and `satcc scenarios copy NAME [DIR]`: the ready scenarios shipped with satcc.

The list shows each scenario's name and its `scenario.description`; any command that takes a
scenario FILE also takes such a name (satcc.resources.scenario_path). `copy` writes one out to
edit, with the files it refers to by a relative path (a trace), as `cargo new` starts a project.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

from satcc import resources
from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.textgrid import HelpFormatter, grid

HELP = COMMAND_HELP["scenarios"]
DESCRIPTION = """\
List the ready scenarios shipped with satcc (name and description). Every command that takes a
scenario FILE also takes one of these names (`satcc sim demo-geo`), from any directory.
`satcc scenarios copy NAME [DIR]` writes NAME.toml (and any trace file it refers to) into DIR
(default: the current directory) to edit."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "scenarios",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run_list)
    sub = p.add_subparsers(title="subcommands", metavar="SUBCOMMAND")
    cp = sub.add_parser(
        "copy",
        help="write a shipped scenario into a directory to edit",
        description="Write the shipped scenario NAME as DIR/NAME.toml (with any file it refers "
        "to by a relative path, such as a trace) to edit and run.",
    )
    cp.add_argument("name", metavar="NAME", help="a name `satcc scenarios` lists, e.g. demo-geo")
    cp.add_argument("dir", metavar="DIR", nargs="?", default=".", help="default: .")
    cp.add_argument("--force", action="store_true", help="overwrite files that exist")
    cp.set_defaults(func=run_copy)


def run_list(args: argparse.Namespace) -> int:
    items = resources.shipped_scenarios()
    if not items:
        raise UserError(f"expected shipped scenarios in {resources.scenarios_dir()}, found none")
    if args.json:
        print(json.dumps([{"name": s.name, "description": s.description} for s in items]))
        return 0
    for line in grid(["", ""], [[s.name, s.description] for s in items], left={0, 1})[1:]:
        print(line)
    return 0


def _relative_files(doc: Any, base: Path, root: Path) -> list[str]:
    """String values of DOC naming a file beside the scenario (below ROOT) by a relative path."""
    found: list[str] = []
    if isinstance(doc, dict):
        for v in doc.values():
            found += _relative_files(v, base, root)
    elif isinstance(doc, list):
        for v in doc:
            found += _relative_files(v, base, root)
    elif isinstance(doc, str) and doc and not os.path.isabs(doc) and "\n" not in doc:
        target = Path(os.path.normpath(base / doc))
        if target.is_relative_to(root) and target.is_file():
            found.append(doc)
    return found


def run_copy(args: argparse.Namespace) -> int:
    s = resources.shipped_scenario(args.name)
    if s is None:
        names = ", ".join(x.name for x in resources.shipped_scenarios())
        raise UserError(f"scenarios copy: expected one of {names}; found {args.name!r}")
    out_dir = Path(args.dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"scenarios copy: DIR {out_dir} exists and is not a directory")
    doc = tomllib.loads(s.path.read_text())
    extra = sorted(set(_relative_files(doc, s.path.parent, resources.scenarios_dir())))
    copies = [(s.path, out_dir / s.path.name)]
    copies += [
        (Path(os.path.normpath(s.path.parent / r)), Path(os.path.normpath(out_dir / r)))
        for r in extra
    ]
    for _src, dst in copies:
        if not dst.resolve().is_relative_to(out_dir.resolve()):
            raise UserError(f"scenarios copy: {s.name} refers to a file outside DIR ({dst})")
        if dst.exists() and not args.force:
            raise UserError(f"scenarios copy: {dst} exists (pass --force to overwrite it)")
    for src, dst in copies:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        print(dst)
    return 0
