"""A scenario key is spelled by hand once (issue 40: `metrics_save` was declared in the file's
table, the resolved flow, the copy between them, the defaults of a scenario built in code and
the bindings' stub). A true/false key, or a key with a unit (`NAME: UNIT = DEFAULT`), is one
entry of satcc-core's scenario/switches.rs; the bindings' stub names no scenario key."""

from __future__ import annotations

import re
from pathlib import Path

from satcc import _native

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "crates/satcc-core/src"
SCENARIO_SOURCES = [CORE / "scenario.rs", *sorted((CORE / "scenario").glob("*.rs"))]
STUB = ROOT / "python/satcc/_native.pyi"


UNITS = ("Nanos", "Bps", "Bytes", "Pkts", "Prob", "Queue", "Encap")
# The keys with a unit whose file field and resolved field were written apart before the key
# lists took units, each with a conversion of its own (`count` and `stagger` into `start_ns`,
# `size` absent for bulk, the MTU checked then held as u32, ...): no key joins them.
COPIED_BEFORE = {"start", "size", "rwnd", "sndbuf", "encap", "mtu", "duration", "bin"}


def _unit_entries() -> list[tuple[str, str, str]]:
    """(key, wire name, unit) of every `NAME [as "WIRE"]: UNIT = DEFAULT` entry."""
    text = (CORE / "scenario/switches.rs").read_text(encoding="utf-8")
    return [
        (k, wire or k, unit)
        for k, wire, unit in re.findall(r'^\s*(\w+)(?: as "(\w+)")?: (\w+) = ', text, re.MULTILINE)
    ]


def _fields(text: str, struct: str) -> dict[str, str]:
    """A struct's `pub NAME: TYPE` fields (`Option<T>` read as T)."""
    body = re.search(rf"pub struct {struct} \{{(.*?)\n\}}", text, re.DOTALL)
    assert body, struct
    return dict(re.findall(r"pub (\w+): (?:Option<)?(\w+)", body.group(1)))


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


def test_a_key_with_a_unit_is_one_entry_read_from_the_file_and_written_resolved():
    # `min_rto` was a `Nanos` field of the file's table, a `min_rto_ns: u64` of the resolved
    # flow, a line of the copy and one of `Flow::bulk`: now one entry, whose resolved form is
    # the same value written under its old name.
    entries = _unit_entries()
    assert ("min_rto", "min_rto_ns", "Nanos") in entries
    keys = _native.scenario_keys()
    sources = {p: p.read_text(encoding="utf-8") for p in SCENARIO_SOURCES}
    for key, wire, unit in entries:
        assert unit in UNITS, f"{key}: {unit} is not a unit type"
        assert key in keys["flow"] or key in keys["scenario"], f"{key}: not a file key"
        spelled = [
            p.name
            for p, text in sources.items()
            if p.name != "switches.rs"
            and re.search(rf"^\s*pub (?:{key}|{wire}):", text, re.MULTILINE)
        ]
        assert not spelled, f"{key}: also declared as a field in {spelled}"


def test_no_key_with_a_unit_is_copied_from_the_file_into_a_second_resolved_field():
    # A file field with a unit beside a resolved field of the same key (`x`, `x_ns`, `x_bytes`
    # ...) is the pair of types (and the copy between them) the key lists replace: a new key
    # with a unit is an entry of switches.rs instead.
    file_rs = (CORE / "scenario/file.rs").read_text(encoding="utf-8")
    scenario_rs = (CORE / "scenario.rs").read_text(encoding="utf-8")
    pairs = set()
    for table, resolved in (("FlowT", "Flow"), ("Section", "Scenario")):
        resolved_keys = set(_fields(scenario_rs, resolved))
        for key, unit in _fields(file_rs, table).items():
            suffixes = ("", "_ns", "_bps", "_bytes", "_pkts")
            if unit in UNITS and any(key + s in resolved_keys for s in suffixes):
                pairs.add(key)
    assert pairs <= COPIED_BEFORE, f"declare these in switches.rs: {sorted(pairs - COPIED_BEFORE)}"


# The `[[link]]` keys the resolver still takes in another shape: `rate`, `delay` and `loss` are
# required (or a link model's nominal figures), `queue` falls back to a model's default queue.
LINK_COPIED_BEFORE = {"rate", "delay", "loss", "queue"}


def _link_entries() -> list[tuple[str, str, str]]:
    """(key, b->a twin, wire name) of every `NAME / NAME_ba [as "WIRE"]: UNIT = DEFAULT`."""
    text = (CORE / "scenario/switches.rs").read_text(encoding="utf-8")
    return [
        (k, ba, wire or k)
        for k, ba, wire in re.findall(
            r'^\s*(\w+) / (\w+)(?: as "(\w+)")?: [\w<>]+ = ', text, re.MULTILINE
        )
    ]


def test_a_link_key_is_one_entry_for_both_directions_and_the_resolved_form():
    # `jitter` was a `Nanos` field of the file's table, another for `jitter_ba`, a `jitter_ns`
    # field of the resolved direction and a copy per direction: now one entry of
    # `link_keys!`, whose twin and resolved field it generates.
    entries = _link_entries()
    assert ("jitter", "jitter_ba", "jitter_ns") in entries
    link_keys = set(_native.scenario_keys()["link"])
    sources = {p: p.read_text(encoding="utf-8") for p in SCENARIO_SOURCES}
    direction = _fields((CORE / "dirspec.rs").read_text(encoding="utf-8"), "Direction")
    for key, ba, wire in entries:
        assert ba == f"{key}_ba", f"{key}: its twin is {ba}"
        assert {key, ba} <= link_keys, f"{key}: not a [[link]] key of the file"
        spelled = [
            p.name
            for p, text in sources.items()
            if p.name != "switches.rs"
            and re.search(rf"^\s*pub (?:{key}|{ba}|{wire}):", text, re.MULTILINE)
        ] + [f"Direction.{k}" for k in (key, wire) if k in direction]
        assert not spelled, f"{key}: also declared as a field in {spelled}"


def test_no_link_key_with_a_unit_is_copied_from_the_file_into_a_second_resolved_field():
    # A `[[link]]` field with a unit beside a resolved direction's field of the same key is the
    # pair the link key list replaces.
    file_rs = (CORE / "scenario/file.rs").read_text(encoding="utf-8")
    direction = _fields((CORE / "dirspec.rs").read_text(encoding="utf-8"), "Direction")
    pairs = {
        key
        for key, unit in _fields(file_rs, "LinkT").items()
        if unit in UNITS
        and any(key + s in direction for s in ("", "_ns", "_bps", "_bytes", "_pkts"))
    }
    assert pairs <= LINK_COPIED_BEFORE, (
        f"declare these in switches.rs's link_keys!: {sorted(pairs - LINK_COPIED_BEFORE)}"
    )
