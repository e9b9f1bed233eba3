"""Loading a scenario: a file, TOML text or a parsed document through pydantic and the post-pass
to a validated `Scenario`, or a `ScenarioError` listing every problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from satcc import limits, resources
from satcc.errors import UserError
from satcc.scenario.checks import _semantic_issues
from satcc.scenario.messages import ScenarioError, _pydantic_issue
from satcc.scenario.schema import Scenario


def load(path: str | Path) -> Scenario:
    """Read, parse and validate a scenario file. Raises ScenarioError (or a UserError for a
    file that is not a readable regular file within satcc.limits)."""
    p = resources.scenario_path(path)
    source = str(path) if p == Path(path) else str(p)
    try:
        text = limits.read_text(p, "a scenario file")
    except UserError as e:
        raise ScenarioError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    return loads(text, source=source, default_name=p.stem)


def loads(text: str, source: str = "<string>", default_name: str = "scenario") -> Scenario:
    """Parse and validate scenario TOML text; `source` names it in error messages."""
    try:
        data = limits.toml_loads(text.removeprefix("\ufeff"), source)
    except UserError as e:
        raise ScenarioError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    return from_dict(data, source=source, default_name=default_name)


def from_dict(
    data: dict[str, Any], source: str = "<dict>", default_name: str = "scenario"
) -> Scenario:
    """Validate an already-parsed TOML document."""
    why = limits.value_depth_issue(data)
    if why is not None:  # a dict from the Python API is not checked as TOML text is
        raise ScenarioError(source, [("", why)])
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(source, [_pydantic_issue(err) for err in e.errors()]) from None
    if scenario.scenario.name is None:
        section = scenario.scenario.model_copy(update={"name": default_name})
        scenario = scenario.model_copy(update={"scenario": section})
    scenario._source = source
    issues = _semantic_issues(scenario)
    if issues:
        raise ScenarioError(source, issues)
    return scenario
