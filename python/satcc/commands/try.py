# ruff: noqa: N999 - the module is named after the command word `try`, imported by name
"""`satcc try --rate 20Mbit/s --rtt 50ms --loss 0.3% --cca cubic,bbr`: a scenario from flags.

Two nodes (`client`, `server`) and one link: `--rate` both ways, one-way delay `--rtt` / 2,
`--loss` on the data direction, a `--queue` (default "1 BDP"); one bulk flow client→server per
congestion control in `--cca`, all starting at 0 and sharing the link. `--print` shows the
TOML instead of running it (save it to start a scenario file); `--set` works as on `satcc run`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from satcc.engines import registry
from satcc.errors import UserError

HELP = "run a quick scenario built from flags (rate, RTT, loss, CCAs), as with iperf3"
DESCRIPTION = """\
Build a one-link scenario from flags and run it: `satcc try --rate 20Mbit/s --rtt 50ms
--loss 0.3% --cca cubic,bbr` runs one bulk flow per congestion control over a shared 20 Mbit/s
link with 50 ms round-trip propagation delay and 0.3 % random loss on the data direction.
--print shows the scenario TOML instead (a starting point for a file)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "try",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rate", default="20 Mbit/s", help="link rate (default: 20 Mbit/s)")
    p.add_argument("--rtt", default="50 ms", help="round-trip propagation delay (default: 50 ms)")
    p.add_argument("--loss", default="0", help="random loss on the data direction (0.3%%, 0.003)")
    p.add_argument(
        "--cca",
        default="cubic",
        help="congestion controls, comma-separated: one flow each (default: cubic)",
    )
    p.add_argument("--duration", default="20 s", help="run length (default: 20 s)")
    p.add_argument("--queue", default="1 BDP", help="bottleneck queue (default: 1 BDP)")
    p.add_argument("--engine", choices=registry.NAMES, default="sim", help="engine (default: sim)")
    p.add_argument("--seed", type=int, default=1, help="seed (default: 1)")
    p.add_argument(
        "--set",
        metavar="KEY.PATH=VALUE",
        action="append",
        default=[],
        help="override a key of the built scenario (as on `satcc run`)",
    )
    p.add_argument("--print", action="store_true", help="print the scenario TOML and exit")
    p.add_argument("--out", metavar="DIR", type=Path, help="result directory (default: out/try)")
    p.add_argument(
        "--json", action="store_true", help="print the JSON summary instead of the table"
    )
    p.add_argument("--plot", action="store_true", help="also draw DIR/plot.png")
    p.set_defaults(func=run)


def _toml_str(text: str) -> str:
    return json.dumps(text)  # a TOML basic string is a JSON string for these characters


def scenario_toml(
    rate: str, rtt: str, loss: str, ccas: list[str], duration: str, queue: str, seed: int
) -> str:
    """The scenario the flags describe, as TOML text."""
    from satcc.units import format_duration, parse_duration

    try:
        rtt_ns = parse_duration(rtt)
    except ValueError as e:
        raise UserError(f"--rtt: {e}") from None
    one_way = format_duration(rtt_ns // 2)
    lines = [
        "[scenario]",
        'name = "try"',
        f"duration = {_toml_str(duration)}",
        f"seed = {seed}",
        "",
        "[[link]]",
        'a = "client"',
        'b = "server"',
        f"rate = {_toml_str(rate)}",
        f"delay = {_toml_str(one_way)}",
        f"loss = {_toml_str(loss)}",
        "loss_ba = 0",
        f"queue = {_toml_str(queue)}",
    ]
    for cca in ccas:
        lines += [
            "",
            "[[flow]]",
            f"name = {_toml_str(cca)}",
            'from = "client"',
            'to = "server"',
            f"cca = {_toml_str(cca)}",
        ]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from satcc import api

    ccas = [c.strip() for c in args.cca.split(",") if c.strip()]
    if not ccas:
        raise UserError("--cca: expected one or more congestion controls, found none")
    text = scenario_toml(args.rate, args.rtt, args.loss, ccas, args.duration, args.queue, args.seed)
    overrides = api.parse_set(args.set)
    if args.print:
        if overrides:
            import tomllib

            from satcc.campaign.spec import set_key

            doc = tomllib.loads(text)
            for path, value in overrides.items():
                try:
                    set_key(doc, path, value)
                except ValueError as e:
                    raise UserError(f"--set {path}: {e}") from None
            api.load_scenario(doc)  # the printed scenario is valid
            sys.stdout.write(_dump(doc))
        else:
            api.load_scenario(text)
            sys.stdout.write(text)
        return 0
    from satcc.commands.output import run_and_write

    s = api.load_scenario(text, overrides)
    out = args.out if args.out is not None else Path("out") / "try"
    return run_and_write(args.engine, s, out, as_json=args.json, plot=args.plot, label="try")


def _dump(doc: dict) -> str:
    """TOML for the simple documents `scenario_toml` builds (tables and arrays of tables)."""
    lines: list[str] = []

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return _toml_str(str(v))

    for key, v in doc.items():
        tables = v if isinstance(v, list) else [v]
        for t in tables:
            lines.append(f"[[{key}]]" if isinstance(v, list) else f"[{key}]")
            lines += [f"{k} = {value(x)}" for k, x in t.items()]
            lines.append("")
    return "\n".join(lines)
