"""A scenario's problems as messages: `ScenarioError` (one `FILE: KEY.PATH: expected WHAT, found
WHAT` line per problem) and the rewording of pydantic's validation errors into that form."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from satcc.errors import UserError
from satcc.scenario.schema import Scenario
from satcc.units import UnitError, describe


class ScenarioError(UserError):
    """A scenario file that cannot be used; `issues` holds one (path, message) per problem."""

    def __init__(self, source: str, issues: list[tuple[str, str]]):
        self.source = source
        self.issues = issues
        lines = [f"{source}: {path}: {msg}" if path else f"{source}: {msg}" for path, msg in issues]
        super().__init__("\n".join(lines))


def key_path(loc: tuple[Any, ...]) -> str:
    """('flow', 2, 'rate') -> 'flow[2].rate'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_TYPE_EXPECTED = {
    "bool_type": "true or false",
    "int_type": "an integer",
    "string_type": "a string",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "list_type": "an array",
    "float_type": "a number",
}


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model class that holds the last key of `loc` (for listing valid keys)."""
    model: type[BaseModel] = Scenario
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = _field_by_alias(model, part)
        if field is None:
            return None
        inner = _item_model(field.annotation)
        if inner is None:
            return None
        model = inner
    return model


def _field_by_alias(model: type[BaseModel], key: str):
    for name, field in model.model_fields.items():
        if (field.alias or name) == key:
            return field
    return None


def _item_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _item_model(arg)
        if found is not None:
            return found
    return None


def table_keys(model: type[BaseModel]) -> list[str]:
    """The TOML keys a table accepts."""
    return [field.alias or name for name, field in model.model_fields.items()]


def _pydantic_issue(err: dict[str, Any]) -> tuple[str, str]:
    loc = tuple(err["loc"])
    path = key_path(loc)
    kind = err["type"]
    found = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "value_error" and isinstance(ctx.get("error"), UnitError):
        return path, str(ctx["error"])
    if kind == "extra_forbidden":
        model = _model_at(loc)
        keys = ", ".join(table_keys(model)) if model else "a known key"
        return path, f"expected one of the keys {keys}; found an unknown key {loc[-1]!r}"
    if kind == "missing":
        if loc == ("scenario",):
            return path, "expected a [scenario] table with at least `duration`, found none"
        if loc in (("link",), ("flow",)):
            return path, f"expected at least one [[{loc[0]}]] table, found none"
        return path, f"expected the required key {loc[-1]!r}, found nothing"
    if kind == "too_short" and loc in (("link",), ("flow",)):
        return path, f"expected at least one [[{loc[0]}]] table, found none"
    if kind == "list_type" and loc in (("link",), ("flow",)):
        return path, f"expected an array of tables written [[{loc[0]}]], found {describe(found)}"
    if kind == "literal_error":
        return path, f"expected one of {ctx.get('expected')}, found {describe(found)}"
    if kind in ("model_type", "model_attributes_type") and loc == ("scenario",):
        return path, f"expected a [scenario] table, found {describe(found)}"
    expected = _TYPE_EXPECTED.get(kind)
    if expected is None:
        msg = err.get("msg", kind)
        expected = msg.removeprefix("Input should be ").removeprefix("Value error, ")
    return path, f"expected {expected}, found {describe(found)}"
