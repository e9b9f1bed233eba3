"""`satcc check FILE`: validate a scenario and say what it contains."""

from __future__ import annotations

import argparse
import json

from satcc import scenario as sc
from satcc.api import load_scenario, parse_set
from satcc.limits import printable
from satcc.units import format_duration, format_queue, format_rate, format_size

HELP = "validate a scenario file"
DESCRIPTION = """\
Validate a scenario file: TOML syntax, every key and unit, that the nodes a flow names exist and
are connected, that each cca is known and its [flow.cc] parameters valid. Prints a short
description of the scenario, or every problem as `FILE: KEY.PATH: expected ..., found ...`
(exit status 2)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "check",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument(
        "--set",
        metavar="KEY.PATH=VALUE",
        action="append",
        default=[],
        help="override a scenario key (campaign key paths: flow[0].cca=bbr, "
        "link[0].rate='\"20 Mbit/s\"', flow.*.mss=1200); repeatable",
    )
    p.add_argument(
        "--resolved",
        action="store_true",
        help="print the resolved config (JSON: integer ns, bit/s, bytes) the "
        "simulator runs, instead of the description",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    s = load_scenario(args.file, parse_set(args.set))
    config = sc.resolve(s)
    if args.resolved:
        print(json.dumps(config, indent=2))
        return 0
    print(printable(describe(s, config)))
    return 0


def describe(s: sc.Scenario, config: dict) -> str:
    sec = s.scenario
    nflows = len(config["flows"])
    lines = [
        (
            f"{s.source}: ok: scenario {s.name!r}, {len(s.nodes)} nodes, {len(s.links)} links, "
            f"{nflows} flow{'s' if nflows != 1 else ''}; {format_duration(sec.duration)} in "
            f"{format_duration(sec.bin)} bins, seed {sec.seed}"
        )
    ]
    for i, link in enumerate(config["links"]):
        a, b = config["nodes"][link["a"]], config["nodes"][link["b"]]
        for d, (x, y) in (("ab", (a, b)), ("ba", (b, a))):
            p = link[d]
            lines.append(
                f"  link[{i}] {x}→{y}: {format_rate(p['rate_bps'])}, "
                f"{format_duration(p['delay_ns'])}, loss {p['loss']:g}, "
                f"queue {format_queue(p['queue'])}"
                + (f", served on a {1e9 / p['tick_ns']:g} Hz tick" if "tick_ns" in p else "")
            )
    for origin, f in zip(sc.expand_flows(s), config["flows"], strict=True):
        size = format_size(f["size_bytes"]) if f["size_bytes"] is not None else "bulk"
        lines.append(
            f"  flow {f['id']} ({origin.name}) {config['nodes'][f['src']]}→"
            f"{config['nodes'][f['dst']]}: {f['cca']}, {size}, starts at "
            f"{format_duration(f['start_ns'])}"
        )
    return "\n".join(lines)
