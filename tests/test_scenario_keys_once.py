"""A scenario key is spelled by hand once (issue 40: `metrics_save` was declared in the file's
table, the resolved flow, the copy between them, the defaults of a scenario built in code and
the bindings' stub). A true/false key whose file form is its resolved form is one entry of
satcc-core's scenario/switches.rs; the bindings' stub names no scenario key."""

from __future__ import annotations

import re
from pathlib import Path

from satcc import _native

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "crates/satcc-core/src"
SCENARIO_SOURCES = [CORE / "scenario.rs", *sorted((CORE / "scenario").glob("*.rs"))]
STUB = ROOT / "python/satcc/_native.pyi"


def _keys() -> set[str]:
    return {k for keys in _native.scenario_keys().values() for k in keys}


def test_no_true_false_key_is_declared_twice_in_the_scenario_types():
    # A `pub KEY: bool` field per struct: the file's table and the resolved form each wrote
    # their own; the switches' list declares them once for both.
    declared: dict[str, list[str]] = {}
    for p in SCENARIO_SOURCES:
        for m in re.finditer(r"^\s*pub (\w+): bool,", p.read_text(encoding="utf-8"), re.MULTILINE):
            declared.setdefault(m.group(1), []).append(p.name)
    twice = {k: v for k, v in declared.items() if k in _keys() and len(v) > 1}
    assert not twice, f"declared more than once (make it an entry of switches.rs): {twice}"


def test_every_switch_reaches_the_file_and_the_resolved_flow():
    # The list is the one declaration: each switch is a key of its table and of the resolved
    # scenario a file gives.
    text = (CORE / "scenario/switches.rs").read_text(encoding="utf-8")
    switches = re.findall(r"^\s*(\w+) = (?:true|false)", text, re.MULTILINE)
    assert "metrics_save" in switches and "cc_state" in switches
    keys = _native.scenario_keys()
    assert set(switches) <= set(keys["flow"]) | set(keys["scenario"])


def test_the_bindings_stub_spells_no_scenario_key():
    # The stub pointed at satcc-core's types instead of writing the SCENARIO dictionary out
    # (it spelled every flow key, `metrics_save` with its meaning, a second time).
    text = STUB.read_text(encoding="utf-8")
    switches = re.findall(
        r"^\s*(\w+) = (?:true|false)",
        (CORE / "scenario/switches.rs").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    spelled = sorted(k for k in switches if f'"{k}"' in text)
    assert not spelled, f"_native.pyi spells scenario keys by hand: {spelled}"
    assert not re.search(r"SCENARIO = \{|DIR = \{", text), "_native.pyi writes the dict out"
