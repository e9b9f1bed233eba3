"""The campaign file's schema: [campaign], [matrix] and [[analyze]] as pydantic models (the
key paths' grammar is satcc.scenario.keypath's), and one `validate` that checks a parsed file against them.

    dict ──validate()──► CampaignFile   types, ranges, key paths, the rules inside one table
                         + problems     (seeds or repetitions, cases or key and values),
                                        unknown keys; every problem one (key path, message)

The messages are worded as the scenario's (`_pydantic_issue` below: `KEY.PATH: expected WHAT,
found WHAT`); what needs the disk or several tables at once (the base scenario, the
[[analyze]] globs, the matrix's column names) is checked by `satcc.campaign.spec`.
docs/campaigns.md is the user-facing copy of the file format.

Deviations from what a user might assume:
1. A matrix entry is either an array (`"KEY.PATH" = [values]`, the key is the path) or a table
   (`name = { key = ..., values = [...] }` or `name.cases`); pydantic tells them apart by the
   value's type, and its "tag" (`values`/`table`) never shows in a message.
2. `validate` reports every problem and also returns the file with the keys that failed left
   out, so the checks that need the disk still run on the rest (a misspelled key and a broken
   base scenario are reported together, as the hand-written checks did).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from satcc import limits
from satcc.scenario import MAX_SEED, canonical_json
from satcc.scenario.keypath import parse_key_path
from satcc.units import UnitError, describe, parse_duration


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


DEFAULT_ANALYZE_BIN = "100 ms"  # satcc analyze's default
ROLES = (
    "cca",
    "mss",
    "loss",
    "rtt",
    "time_of_day",
    "engine",
    "size",
    "direction",
    "plan",
    "count",
    "other",
)
TABLES = ("[campaign]", "[matrix]", "[[analyze]]")
# what a table that is not one should have been (by its key), for messages
_TABLE_HINTS = {
    "cases": "a table of label = { key.path = value, ... }",
    "params": "a table of name = string, number or true/false",
}
_ARRAY_HINTS = {  # the same for an array
    "seeds": "a non-empty array of integers in 0..2^64-1",
    "values": "a non-empty array of values",
}

# -- field types ---------------------------------------------------------------------------
# Each validator raises ValueError with the whole message ("expected WHAT, found WHAT").


def _key_path(value: Any) -> str:
    parse_key_path(value)
    return value


def _one_or_many(what: str, check=None):
    """A string or a non-empty array (of strings, checked item by item after this); `check`
    checks a lone string here, so its message names the key itself, not `key[0]`."""

    def wrap(value: Any) -> Any:
        if isinstance(value, str):
            if check is not None:
                check(value)
            return [value]
        if isinstance(value, list) and value:
            return value
        found = "an empty array" if value == [] else describe(value)
        raise ValueError(f"expected {what}, or a non-empty array of them, found {found}")

    return BeforeValidator(wrap)


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise UnitError("a non-empty string", value)
    why = limits.check_name(value)
    if why is not None:
        raise ValueError(why)
    return value


def _seed(value: int) -> int:
    if not 0 <= value <= MAX_SEED:
        raise UnitError("an integer in 0..2^64-1", value)
    return value


def _count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UnitError("an integer >= 1", value)
    return value


def _values(values: list[Any]) -> list[Any]:
    """A matrix axis's values: at least one, no two alike (as the scenario would see them)."""
    if not values:
        raise ValueError("expected a non-empty array of values, found an empty one")
    seen: set[str] = set()
    for v in values:
        try:
            text = canonical_json(v)
        except ValueError:  # NaN or infinity, which no scenario key takes
            raise ValueError(f"expected finite numbers, found {describe(v)}") from None
        if text in seen:
            raise ValueError(f"expected distinct values, found {describe(v)} twice")
        seen.add(text)
    return values


def _non_empty_cases(cases: dict[str, Any]) -> dict[str, Any]:
    if not cases:
        raise ValueError(
            "expected a table of label = { key.path = value, ... }, found an empty one"
        )
    return cases


def _positive_duration(value: Any) -> Any:
    """A duration > 0, kept as written (it names analyze runs)."""
    if parse_duration(value) <= 0:
        raise UnitError("a positive duration", value)
    return value


def _scalar(value: Any) -> Any:
    if not isinstance(value, (str, int, float, bool)):
        raise UnitError("a string, number or true/false", value)
    return value


KeyPath = Annotated[str, PlainValidator(_key_path)]
Name = Annotated[str, PlainValidator(_name)]
Seed = Annotated[StrictInt, AfterValidator(_seed)]


# -- the tables ----------------------------------------------------------------------------


class CampaignSection(_Table):
    """[campaign]. Field order is the order unknown-key messages list the keys in."""

    name: Name | None = None  # default: the file stem
    description: str | None = None
    scenario: str | None = None  # the base scenario, relative to the campaign file
    repetitions: Annotated[int, PlainValidator(_count)] | None = None  # default 1
    seed: Seed | None = None  # default: the base scenario's
    seeds: list[Seed] | None = None

    @field_validator("seed")
    @classmethod
    def _room_for_repetitions(cls, seed: int, info: ValidationInfo) -> int:
        reps = info.data.get("repetitions") or 1
        if seed > MAX_SEED - (reps - 1):
            raise ValueError(
                f"expected a first seed of at most 2^64-{reps} ({reps} repetitions count up "
                f"from it within 0..2^64-1), found {seed}"
            )
        return seed

    @field_validator("seeds")
    @classmethod
    def _seeds_alone(cls, seeds: list[int], info: ValidationInfo) -> list[int]:
        if info.data.get("repetitions") is not None:
            raise ValueError("expected either `seeds` or `repetitions`, found both")
        if info.data.get("seed") is not None:
            raise ValueError(
                "expected either `seeds` or `seed` (the first of the seeds), found both"
            )
        if not seeds:
            raise ValueError("expected a non-empty array of seeds, found an empty one")
        seen: set[int] = set()
        for s in seeds:
            if s in seen:
                raise ValueError(f"expected distinct seeds, found {s} twice")
            seen.add(s)
        return seeds


class AxisTable(_Table):
    """A [matrix] entry written as a table: `key` and `values`, or `cases`."""

    key: Annotated[list[KeyPath], _one_or_many("a key path", parse_key_path)] | None = None
    values: Annotated[list[Any], AfterValidator(_values)] | None = None
    # label = { key.path = value, ... }: a label may set several keys
    cases: Annotated[dict[str, dict[KeyPath, Any]], AfterValidator(_non_empty_cases)] | None = None
    role: Literal[ROLES] | None = None  # default: from the key path (spec.role_of)
    name: Name | None = None  # the column; default: the entry's key

    @model_validator(mode="after")
    def _one_form(self) -> AxisTable:
        if self.cases is not None and (self.key is not None or self.values is not None):
            raise ValueError("expected either `cases` or `key` and `values`, found both")
        if self.cases is None and (self.key is None or self.values is None):
            given = ", ".join(sorted(self.model_fields_set)) or "an empty table"
            raise ValueError(f"expected `key` and `values` (or `cases`), found {given}")
        return self


def _axis_form(value: Any) -> str | None:
    if isinstance(value, list):
        return "values"
    if isinstance(value, dict):
        return "table"
    return None


# `"KEY.PATH" = [values]` or a table; the tag picks the form and is dropped from messages
AxisEntry = Annotated[
    Annotated[list[Any], AfterValidator(_values), Tag("values")]
    | Annotated[AxisTable, Tag("table")],
    Discriminator(
        _axis_form,
        custom_error_type="axis_form",
        custom_error_message="an array of values or a table",
    ),
]


class AnalyzeTable(_Table):
    """An [[analyze]] entry: field measurements read by `satcc analyze`."""

    files: Annotated[list[str], _one_or_many("a file name or glob")]  # relative to the file
    each: StrictBool = True  # one run per file; false: one run over all of them
    bin: Annotated[Any, PlainValidator(_positive_duration)] = DEFAULT_ANALYZE_BIN
    params: dict[str, Annotated[Any, PlainValidator(_scalar)]] = Field(default_factory=dict)


class CampaignFile(_Table):
    """A campaign file as written (before the base scenario and the globs are read)."""

    campaign: CampaignSection = CampaignSection()
    matrix: dict[str, AxisEntry] = Field(default_factory=dict)
    analyze: list[AnalyzeTable] = Field(default_factory=list)


# -- validation and its messages -----------------------------------------------------------

_TABLE_OF = {"campaign": CampaignSection, "matrix": AxisTable, "analyze": AnalyzeTable}


def validate(
    data: Any,
) -> tuple[CampaignFile, list[tuple[str, str]], set[tuple[str, ...]]]:
    """Check a parsed campaign file. Returns the file (with every key that failed left out, so
    the defaults stand in for it), the problems as (key path, message), and the keys left out
    as `(table,)` or `(table, key)`."""
    try:
        return CampaignFile.model_validate(data), [], set()
    except ValidationError as e:
        errors = e.errors()
    issues = [issue(err) for err in errors]
    if not isinstance(data, dict):
        return CampaignFile(), issues, {(name,) for name in _TABLE_OF}
    dropped = {_failed_key(tuple(err["loc"]), data) for err in errors}
    rest = {k: v for k, v in data.items() if (k,) not in dropped}
    for table in ("campaign", "matrix"):
        if isinstance(rest.get(table), dict):
            rest[table] = {k: v for k, v in rest[table].items() if (table, k) not in dropped}
    try:
        return CampaignFile.model_validate(rest), issues, dropped
    except ValidationError:  # not expected: every table's keys are optional
        return CampaignFile(), issues, {(name,) for name in _TABLE_OF}


def _failed_key(loc: tuple[Any, ...], data: dict[str, Any]) -> tuple[str, ...]:
    """The key to leave out for an error at `loc`: a key of [campaign] or [matrix], else the
    whole table (an [[analyze]] entry cannot be left out without renumbering the rest)."""
    if len(loc) >= 2 and loc[0] in ("campaign", "matrix") and isinstance(data.get(loc[0]), dict):
        return (loc[0], loc[1])
    return (loc[0],)


def entry_name(key: str) -> str:
    """A [matrix] entry's key as messages show it: `rtt`, `'flow.*.cca'` (quoted, cut if long)."""
    return key if re.match(r"^\w+$", key) else describe(key)


def issue(err: dict[str, Any]) -> tuple[str, str]:
    """One pydantic error as (key path, message), worded as the scenario's errors."""
    loc = list(err["loc"])
    if loc[:1] == ["matrix"] and len(loc) >= 3:
        del loc[2]  # the entry's form tag (deviation 1)
    if loc[-1:] == ["[key]"]:
        del loc[-2:]  # a bad key inside a table: name the table; the message quotes the key
    if loc[:1] == ["matrix"] and len(loc) >= 2:
        loc[1] = entry_name(loc[1])
    path = key_path(tuple(loc))
    kind = err["type"]
    found = err.get("input")
    error = (err.get("ctx") or {}).get("error")
    if kind == "value_error" and isinstance(error, ValueError):
        return path, str(error)
    if kind == "extra_forbidden":
        if len(loc) == 1:
            return path, (
                f"expected one of the tables {', '.join(TABLES)}; found an unknown key {loc[0]!r}"
            )
        keys = ", ".join(table_keys(_TABLE_OF[loc[0]]))
        return path, f"expected one of the keys {keys}; found an unknown key {loc[-1]!r}"
    if len(loc) == 1 and kind in ("model_type", "model_attributes_type", "dict_type"):
        return path, f"expected a [{loc[0]}] table, found {describe(found)}"
    if kind == "dict_type" and loc[-1:] and loc[-1] in _TABLE_HINTS:
        return path, f"expected {_TABLE_HINTS[loc[-1]]}, found {describe(found)}"
    if kind == "dict_type" and loc[-2:-1] == ["cases"]:
        return path, f"expected a table of key.path = value, found {describe(found)}"
    if kind == "list_type" and loc[-1:] and loc[-1] in _ARRAY_HINTS:
        return path, f"expected {_ARRAY_HINTS[loc[-1]]}, found {describe(found)}"
    if loc == ["analyze"] and kind == "list_type":
        return path, f"expected an array of tables written [[analyze]], found {describe(found)}"
    return _pydantic_issue({**err, "loc": tuple(loc)})


# -- pydantic's errors worded as the scenario's: KEY.PATH: expected WHAT, found WHAT --------


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
    model: type[BaseModel] = CampaignFile
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
