"""`satcc check FILE`: validate a scenario and say what it contains."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from satcc.api import load_scenario, parse_set
from satcc.cli import COMMAND_HELP
from satcc.commands import options
from satcc.errors import UserError
from satcc.limits import printable
from satcc.scenario import Scenario, ScenarioError, expand_flows, from_dict, resolve
from satcc.units import format_duration, format_queue, format_rate, format_size

HELP = COMMAND_HELP["check"]
DESCRIPTION = """\
Validate a scenario file: TOML syntax, every key and unit, that the nodes a flow names exist and
are connected, that each cca is known and its [flow.cc] parameters valid. Prints a short
description of the scenario, or every problem as `FILE: KEY.PATH: expected ..., found ...`
(exit status 2)."""


def register(subparsers) -> None:
    p = options.scenario_command(subparsers, "check", HELP, DESCRIPTION)
    options.add_set(p)
    p.add_argument(
        "--resolved",
        action="store_true",
        help="print the resolved config (JSON: integer ns, bit/s, bytes) the "
        "simulator runs, instead of the description",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    overrides = parse_set(args.set)
    try:
        s = load_scenario(args.file, overrides)
    except ScenarioError as e:
        found = list(e.issues)
        found += [i for i in later_issues(args.file, overrides, e.issues) if i not in found]
        raise ScenarioError(e.source, found) from None
    config = resolve(s)
    if args.resolved:
        import json

        print(json.dumps(config, indent=2))
        return 0
    print(printable(describe(s, config)))
    return 0


MAX_PASSES = 8  # each pass sets aside the keys found wrong and validates the rest again
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _drop(doc: dict, path: str) -> bool:
    """Remove the key at `path` (`link[0].rate`) from doc; False if there is none."""
    parts = [int(i) if i else k for k, i in _PATH_PART.findall(path)]
    node: Any = doc
    for part in parts[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    last = parts[-1] if parts else None
    if isinstance(node, dict) and last in node:
        del node[last]
        return True
    return False


def _parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


# Valid values for required keys set aside (the stand-ins are never reported or run).
STAND_INS = {"duration": "1 s", "rate": "1 Mbit/s", "delay": "1 ms"}


def _stand_in(doc: dict, path: str) -> bool:
    parts = [int(i) if i else k for k, i in _PATH_PART.findall(path)]
    if not parts or parts[-1] not in STAND_INS:
        return False
    node: Any = doc
    for part in parts[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    if not isinstance(node, dict) or parts[-1] in node:
        return False
    node[parts[-1]] = STAND_INS[parts[-1]]
    return True


def later_issues(
    file: str, overrides: dict, issues: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The problems a first validation hides: the key-and-unit stage stops before the checks
    of names, nodes and congestion controls. The keys already found wrong are set aside (to
    their defaults) and the rest validated again, until nothing new turns up; a required key
    set aside is not reported twice."""
    import tomllib

    from satcc.api import apply_overrides

    if any(not p for p, _ in issues):  # the file as a whole (TOML syntax, size, nesting)
        return []
    try:
        return _later_issues(file, overrides, issues, tomllib, apply_overrides)
    except (RecursionError, ValueError, UserError):
        return []


def _later_issues(file, overrides, issues, tomllib, apply_overrides) -> list[tuple[str, str]]:
    try:
        doc = apply_overrides(
            tomllib.loads(Path(file).read_text(encoding="utf-8")), overrides, file
        )
    except (OSError, ValueError, UserError):
        return []
    dropped: set[str] = set()
    pending = [p for p, _ in issues]
    out: list[tuple[str, str]] = []
    for _ in range(MAX_PASSES):
        removed = [p for p in pending if p and _drop(doc, p)]
        if not removed:
            return out
        dropped.update(removed)
        try:
            from_dict(doc, source=file)
        except ScenarioError as e:
            # a required key set aside gets a stand-in, so that validation goes on past it
            if [p for p, _ in e.issues if p in dropped and _stand_in(doc, p)]:
                try:
                    from_dict(doc, source=file)
                except ScenarioError as e2:
                    e = e2
                else:
                    return out
            # a problem in a table that had a key set aside may come from the setting aside
            # (a stand-in duration, a trace that is gone): only other tables' problems count
            touched = {_parent(d) for d in dropped}
            new = [
                (p, m)
                for p, m in e.issues
                if p not in dropped and _parent(p) not in touched and (p, m) not in out
            ]
            out += new
            pending = [p for p, _ in new]
            continue
        return out
    return out


def describe(s: Scenario, config: dict) -> str:
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
                + (" drop-front" if p.get("drop") == "front" else "")
                + (f", served on a {1e9 / p['tick_ns']:g} Hz tick" if "tick_ns" in p else "")
                + (f", clock {p['clock_ppm']:+g} ppm" if p.get("clock_ppm") else "")
            )
    for origin, f in zip(expand_flows(s), config["flows"], strict=True):
        size = format_size(f["size_bytes"]) if f["size_bytes"] is not None else "bulk"
        lines.append(
            f"  flow {f['id']} ({origin.name}) {config['nodes'][f['src']]}→"
            f"{config['nodes'][f['dst']]}: {f['cca']}, {size}, starts at "
            f"{format_duration(f['start_ns'])}"
        )
    return "\n".join(lines)
