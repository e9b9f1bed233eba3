"""Loading a scenario: a file, TOML text or a parsed document to a checked `Scenario`, or a
`ScenarioError` listing every problem. satcc-core parses a file's TOML text
(`_native.read_scenario_text`; no tomllib on this path) and reads the tables (`_native.read_scenario`:
types, units, defaults, every check, the `[link.model]` tables with their presets); the files
a link model names are read through satcc.linkmodels (the host's limits, SGP4)."""

from __future__ import annotations

from pathlib import Path

from satcc import _native, limits, linkmodels, registry, resources
from satcc.errors import UserError
from satcc.scenario.messages import ScenarioError
from satcc.scenario.schema import Scenario

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any


def load(path: str | Path) -> Scenario:
    """Read, parse and check a scenario file. Raises ScenarioError (or a UserError for a
    file that is not a readable regular file within satcc.limits)."""
    p = resources.scenario_path(path)
    source = str(path) if p == Path(path) else str(p)
    try:
        text = limits.read_text(p, "a scenario file")
    except UserError as e:
        raise ScenarioError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    return loads(text, source=source, default_name=p.stem)


def loads(text: str, source: str = "<string>", default_name: str = "scenario") -> Scenario:
    """Parse and check scenario TOML text (parsed by satcc-core, the `toml` crate); `source`
    names it in error messages."""
    text = text.removeprefix("\ufeff")
    why = limits.toml_depth_issue(text)
    if why is not None:
        raise ScenarioError(source, [("", why)])
    return _read(_native.read_scenario_text, text, source, default_name)


def from_dict(
    data: dict[str, Any], source: str = "<dict>", default_name: str = "scenario"
) -> Scenario:
    """Check an already-parsed TOML document (a campaign's point, the API's dict)."""
    why = limits.value_depth_issue(data)
    if why is not None:  # a dict from the Python API is not checked as TOML text is
        raise ScenarioError(source, [("", why)])
    return _read(_native.read_scenario, data, source, default_name)


def _read(reader: Any, doc: Any, source: str, default_name: str) -> Scenario:
    """A `_native` scenario reader's file as a Scenario; its problems as a ScenarioError."""
    try:
        file = reader(doc, default_name, list(registry.NAMES), Path(source).parent, linkmodels)
    except ValueError as e:
        problems = e.args[0]
        if not isinstance(problems, list):
            raise ScenarioError(source, [("", str(e))]) from None
        raise ScenarioError(source, problems) from None
    return Scenario(file, source)
