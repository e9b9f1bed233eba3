"""The fidelity grid: which scenarios the suite runs, and how (scenarios/fidelity/grid.toml).

    [grid]
    name = "fidelity"               # the suite's name (default: the file's stem)
    description = "..."
    runs = 3                        # runs per engine and scenario (--runs overrides)
    quick_duration = "10 s"         # every scenario's duration with --quick

    [[scenario]]
    file = "cubic-rtt-1v1-equal.toml"   # a scenario file, relative to the grid file
    quick = true                        # part of --quick (default false)
    vpn = "vpn"                         # emulator: carry the flows through OpenVPN via this node
    min_runs = 8                        # at least this many runs per engine (over --runs; not --quick)
    max_lateness = "20 us"              # count a kernel run only if satcc-linkd's p99 lateness is
                                        # at most this (a row decided by µs timing; the suite's
                                        # bound, --max-lateness, applies too: the tighter counts)

Every scenario is an ordinary scenario file (`satcc check` accepts it); its flow groups are its
[[flow]] tables. Scenario names must be unique within a grid.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from satcc import resources
from satcc.errors import UserError
from satcc.scenario import Scenario, ScenarioError, from_dict
from satcc.scenario import load as load_scenario
from satcc.units import UnitError, parse_duration

DEFAULT_GRID = resources.fidelity_grid()
GRID_KEYS = ("name", "description", "runs", "quick_duration")
ENTRY_KEYS = ("file", "quick", "vpn", "min_runs", "max_lateness")
DEFAULT_RUNS = 3
DEFAULT_QUICK_DURATION = "10 s"
GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class Entry:
    """One scenario of the grid: its file, parsed TOML document and options."""

    path: Path
    doc: dict[str, Any]
    name: str
    quick: bool
    vpn: str | None
    min_runs: int = 1
    max_lateness_p99_us: float | None = None  # the row's own bound on satcc-linkd's p99

    def scenario_doc(self, duration: str | None) -> dict[str, Any]:
        """The TOML document to run, with `duration` (if given) instead of its own."""
        import copy

        doc = copy.deepcopy(self.doc)
        if duration is not None:
            doc.setdefault("scenario", {})["duration"] = duration
        return doc

    def scenario(self, duration: str | None) -> Scenario:
        return from_dict(
            self.scenario_doc(duration), source=str(self.path), default_name=self.path.stem
        )


@dataclass(frozen=True)
class Grid:
    path: Path
    name: str
    description: str
    runs: int
    quick_duration: str
    entries: tuple[Entry, ...]

    def select(self, quick: bool = False, only: str | None = None) -> list[Entry]:
        """The entries to run: the quick ones with `quick`, those matching `only` (module
        `matches`). Raises UserError when nothing is left."""
        out = [e for e in self.entries if e.quick or not quick]
        if only:
            out = [e for e in out if matches(only, e)]
        if not out:
            what = "quick " if quick else ""
            raise UserError(
                f"--only {only!r}: expected a pattern matching some {what}scenario "
                f"of {self.path}, found none (names: "
                f"{', '.join(e.name for e in self.entries)})"
            )
        return out


def matches(pattern: str, entry: Entry) -> bool:
    """A comma-separated list of shell globs against the scenario name and the file stem; a
    pattern without glob characters matches as a substring."""
    for p in (x.strip() for x in pattern.split(",")):
        if not p:
            continue
        glob = p if GLOB_CHARS & set(p) else f"*{p}*"
        if fnmatch.fnmatchcase(entry.name, glob) or fnmatch.fnmatchcase(entry.path.stem, glob):
            return True
    return False


def load(path: str | Path | None = None) -> Grid:
    """Read and check a grid file (every scenario validated); UserError lists every problem."""
    p = Path(path) if path is not None else DEFAULT_GRID
    from satcc import limits

    # a user's file: the limits of every file satcc reads (no FIFO, a size cap, nesting depth)
    data = limits.toml_loads(
        limits.read_text(p, "a fidelity grid file").removeprefix("\ufeff"), str(p)
    )
    issues: list[str] = []
    for k in data:
        if k not in ("grid", "scenario"):
            issues.append(f"{k}: expected `grid` or `scenario`, found an unknown key {k!r}")
    head = data.get("grid", {})
    if not isinstance(head, dict):
        issues.append(f"grid: expected a table, found {head!r}")
        head = {}
    for k in head:
        if k not in GRID_KEYS:
            issues.append(
                f"grid.{k}: expected one of {', '.join(GRID_KEYS)}, found an unknown key {k!r}"
            )
    runs = head.get("runs", DEFAULT_RUNS)
    if not isinstance(runs, int) or isinstance(runs, bool) or runs < 1:
        issues.append(f"grid.runs: expected an integer >= 1, found {runs!r}")
        runs = DEFAULT_RUNS
    quick_duration = head.get("quick_duration", DEFAULT_QUICK_DURATION)
    try:
        parse_duration(quick_duration)
    except UnitError as e:
        issues.append(f"grid.quick_duration: {e}")
    raw = data.get("scenario", [])
    if not isinstance(raw, list) or not raw:
        issues.append("scenario: expected one or more [[scenario]] tables, found none")
        raw = []
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(raw):
        where = f"scenario[{i}]"
        if not isinstance(item, dict):
            issues.append(f"{where}: expected a table, found {item!r}")
            continue
        for k in item:
            if k not in ENTRY_KEYS:
                issues.append(
                    f"{where}.{k}: expected one of {', '.join(ENTRY_KEYS)}, found an "
                    f"unknown key {k!r}"
                )
        file = item.get("file")
        if not isinstance(file, str):
            issues.append(f"{where}.file: expected a scenario file name, found {file!r}")
            continue
        quick = item.get("quick", False)
        if not isinstance(quick, bool):
            issues.append(f"{where}.quick: expected true or false, found {quick!r}")
        vpn = item.get("vpn")
        if vpn is not None and not isinstance(vpn, str):
            issues.append(f"{where}.vpn: expected a node name, found {vpn!r}")
            vpn = None
        min_runs = item.get("min_runs", 1)
        if not isinstance(min_runs, int) or isinstance(min_runs, bool) or min_runs < 1:
            issues.append(f"{where}.min_runs: expected an integer >= 1, found {min_runs!r}")
            min_runs = 1
        max_lateness = item.get("max_lateness")
        bound_us = None
        if max_lateness is not None:
            try:
                bound_us = parse_duration(max_lateness) / 1000
            except UnitError as e:
                issues.append(f"{where}.max_lateness: {e}")
            else:
                if bound_us <= 0:
                    issues.append(
                        f"{where}.max_lateness: expected a positive duration, found "
                        f"{max_lateness!r}"
                    )
                    bound_us = None
        fpath = (p.parent / file).resolve()
        try:
            scenario = load_scenario(fpath)
            doc = tomllib.loads(fpath.read_text(encoding="utf-8"))
        except ScenarioError as e:
            issues.extend(f"{where}.file: {line}" for line in str(e).splitlines())
            continue
        if vpn is not None and vpn not in scenario.nodes:
            issues.append(
                f"{where}.vpn: expected a node of {file} "
                f"({', '.join(scenario.nodes)}), found {vpn!r}"
            )
        if scenario.name in seen:
            issues.append(
                f"{where}.file: scenario name {scenario.name!r} is also "
                f"scenario[{seen[scenario.name]}]'s; names must be unique"
            )
        seen[scenario.name] = i
        entries.append(Entry(fpath, doc, scenario.name, bool(quick), vpn, min_runs, bound_us))
    if issues:
        raise UserError("\n".join(f"{p}: {line}" for line in issues))
    return Grid(
        p,
        str(head.get("name") or p.stem),
        str(head.get("description") or ""),
        runs,
        str(quick_duration),
        tuple(entries),
    )
