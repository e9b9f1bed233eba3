"""`satcc cc list` and `satcc cc show NAME`: the congestion control registry."""

from __future__ import annotations

import argparse
import json

from satcc import _native
from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.textgrid import grid

HELP = COMMAND_HELP["cc"]


def register(subparsers) -> None:
    p = subparsers.add_parser("cc", help=HELP, description=HELP.capitalize() + ".")
    sub = p.add_subparsers(title="subcommands", metavar="SUBCOMMAND")
    ls = sub.add_parser(
        "list",
        help="list the algorithms a scenario's `cca` can name",
        description="List the algorithms a scenario's `cca` key can name.",
    )
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=run_list)
    show = sub.add_parser(
        "show",
        help="show an algorithm's source, parameters and deviations from Linux",
        description="Show an algorithm's summary, source, the parameters a scenario's "
        "[flow.cc] table may set (default, unit, accepted values, the Linux parameter it "
        "stands for; as declared in satcc-cc) and its deviations from Linux.",
    )
    show.add_argument("name", metavar="NAME", help="registry name, e.g. cubic")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=run_show)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_list(args: argparse.Namespace) -> int:
    infos = [_native.cc_info(name) for name in _native.cc_names()]
    if args.json:
        print(json.dumps([{"name": i["name"], "summary": i["summary"]} for i in infos], indent=2))
        return 0
    for line in grid(["", ""], [[i["name"], i["summary"]] for i in infos], left={0, 1})[1:]:
        print(line)
    return 0


def run_show(args: argparse.Namespace) -> int:
    names = list(_native.cc_names())
    if args.name not in names:
        raise UserError(f"cc show: expected one of {', '.join(names)}, found {args.name!r}")
    info = _native.cc_info(args.name)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    lines = [f"{info['name']}: {info['summary']}", f"source: {info['source']}", ""]
    params = info["params"]
    if params:
        lines.append("parameters ([flow.cc] keys):")
        rows = [
            [p["name"], _text(p["default"]), p["unit"], _values(p), p["kernel"] or "", p["doc"]]
            for p in params
        ]
        cols = ["name", "default", "unit", "values", "kernel", "meaning"]
        lines.extend("  " + line for line in grid(cols, rows, left={0, 1, 2, 3, 4, 5}))
    else:
        lines.append("parameters: none")
    lines.append("")
    if info["deviations"]:
        lines.append("deviations from Linux:")
        lines += [f"  {n}. {d}" for n, d in enumerate(info["deviations"], 1)]
    else:
        lines.append("deviations from Linux: none listed")
    print("\n".join(lines))
    return 0


def _text(value) -> str:
    """A declared value as the scenario spells it (TOML): true/false, 0.7, words."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _values(p: dict) -> str:
    """What a parameter accepts, from its declaration's kind and range."""
    kind, rng = p["kind"], p["range"]
    if kind in ("number", "integer"):
        lo, hi = (_text(v) for v in rng)
        return f"{'integer ' if kind == 'integer' else ''}{lo}..{hi}"
    if kind == "choice":
        return ", ".join(rng)
    return "true, false" if kind == "bool" else "[[x, y], ...]"
