"""Key paths into a scenario document: `flow[0].cca`, `link[1].delay`, `flow.*.mss` (or
`flow[*].mss`: every [[flow]]), `link[0].model.plan`, `flow[1].cc.beta`: their grammar
(`parse_key_path`) and setting one in a parsed TOML document (`set_key`). One code for
`--set KEY.PATH=VALUE`, the API's keyword overrides and a campaign's matrix axes; no
validation library on this path (a scenario with overrides is read by satcc-core as any other).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from satcc import limits
from satcc.units import describe

_SEGMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_-]*)(?:\[(?P<index>\d+|\*)\])?$|^\*$")


def parse_key_path(path: str) -> list[tuple[str | None, int | str | None]]:
    """'flow[0].cc.beta' -> [('flow', 0), ('cc', None), ('beta', None)];
    'flow.*.mss' -> [('flow', '*'), ('mss', None)]. Raises ValueError."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"expected a key path like 'flow[0].cca', found {describe(path)}")
    why = limits.key_path_issue(path)
    if why is not None:
        raise ValueError(why)
    out: list[tuple[str | None, int | str | None]] = []
    for part in path.split("."):
        m = _SEGMENT.match(part)
        if m is None:
            raise ValueError(
                f"expected a key path like 'flow[0].cca' or 'flow.*.mss', "
                f"found {describe(path)} (bad part {describe(part)})"
            )
        if part == "*":
            if not out or out[-1][1] is not None:
                raise ValueError(f"expected '*' right after an array key, found {path!r}")
            out[-1] = (out[-1][0], "*")
            continue
        index = m.group("index")
        out.append(
            (m.group("name"), None if index is None else ("*" if index == "*" else int(index)))
        )
    return out


def set_key(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set `path` in a TOML document (in place). Raises ValueError naming what is missing."""
    parts = parse_key_path(path)

    def walk(node: Any, i: int, where: str) -> None:
        name, index = parts[i]
        last = i == len(parts) - 1
        if not isinstance(node, dict):
            raise ValueError(  # noqa: TRY004 - one error type for every bad key path
                f"expected a table at {where or 'the top'}, found {type(node).__name__}"
            )
        here = f"{where}.{name}" if where else name
        if index is None:
            if last:
                node[name] = copy.deepcopy(value)
                return
            if name not in node:
                node[name] = {}
            walk(node[name], i + 1, here)
            return
        items = node.get(name)
        if not isinstance(items, list):
            raise ValueError(  # noqa: TRY004 - one error type for every bad key path
                f"expected an array of tables at {here}, found "
                f"{'nothing' if items is None else type(items).__name__}"
            )
        targets = range(len(items)) if index == "*" else [index]
        for k in targets:
            if k >= len(items):
                raise ValueError(
                    f"expected an index below {len(items)} ({here} has "
                    f"{len(items)} entries), found [{k}]"
                )
            if last:
                items[k] = copy.deepcopy(value)
            else:
                walk(items[k], i + 1, f"{here}[{k}]")

    walk(doc, 0, "")
