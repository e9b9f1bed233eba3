"""The scenario written once (issue 40): its limits declared in one place, its keys read by one
reader (satcc-core), and pydantic off the path of a scenario command."""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT = re.compile(r"\b((?:MIN|MAX)_(?:MSS|MTU))\b\s*(?::\s*\w+\s*)?=\s*\d[\d_]*")


def test_each_scenario_limit_is_declared_once_in_satcc_core():
    """MIN_MTU was 68 in Python and 36 in Rust, MAX_MSS 65,495 and 65,000, MIN_MSS written
    three times. (The TCP stack's own kernel constants in satcc-sim/src/tcp are not scenario
    limits and are not scanned.)"""
    found: dict[str, list[str]] = {}
    files = [*(REPO / "python").rglob("*.py"), *(REPO / "crates").rglob("*.rs")]
    for path in files:
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("crates/satcc-sim/src/tcp/"):
            continue
        for m in LIMIT.finditer(path.read_text(encoding="utf-8")):
            found.setdefault(m.group(1), []).append(rel)
    assert found == {
        name: ["crates/satcc-core/src/scenario.rs"]
        for name in ("MIN_MSS", "MAX_MSS", "MIN_MTU", "MAX_MTU")
    }


def test_loading_and_resolving_a_scenario_imports_no_pydantic():
    code = (
        "import sys\n"
        "from satcc import scenario\n"
        "s = scenario.load('scenarios/dumbbell.toml')\n"
        "scenario.resolve(s)\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_no_scenario_key_is_read_in_python():
    """The tables are satcc-core's serde types (scenario/file.rs); the Python package holds the
    view, the loader and the hash, and reads no key's value itself."""
    package = REPO / "python/satcc/scenario"
    text = "".join(p.read_text(encoding="utf-8") for p in package.glob("*.py"))
    for word in ("pydantic", "parse_rate", "parse_size", "parse_queue", "StrictInt"):
        assert word not in text, word
    assert not (package / "checks.py").exists()


def test_a_link_model_is_read_in_rust_alone():
    """A `[link.model]` kind, key or preset is spelled in satcc-core (models/table.rs) only:
    linkmodels.py spelled every key again and resolved the tables, then handed the result to
    Rust. Python keeps the files a model names and the presets it shows, read from Rust.
    (Commands that write a model table, as `satcc trace fit` does, spell the keys they write.)"""
    import ast

    from satcc import _native

    presets = _native.link_model_presets()
    keys = {k for ks in presets["keys"].values() for k in ks}
    keys |= {"starlink_intra", "rtt_quantiles_ns", "capacity_bps", "opportunities_digest"}
    keys |= set(presets["kinds"])
    spelled: dict[str, list[str]] = {}
    package = REPO / "python/satcc"
    for path in [package / "linkmodels.py", *(package / "scenario").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in keys:
                spelled.setdefault(node.value, []).append(path.relative_to(REPO).as_posix())
    assert spelled == {"starlink_intra": ["python/satcc/linkmodels.py"]}, spelled


def test_the_editor_schema_is_generated_from_the_rust_types_and_current():
    """docs/scenario.schema.json is `make schema`'s output: every table's keys, no others."""
    import json

    from satcc import _native

    path = REPO / "docs/scenario.schema.json"
    generated = _native.scenario_json_schema()
    assert path.read_text(encoding="utf-8") == generated, "run `make schema`"
    schema = json.loads(generated)
    defs = schema["definitions"]
    for table, name in (("scenario", "Section"), ("link", "LinkT"), ("flow", "FlowT")):
        assert sorted(defs[name]["properties"]) == sorted(_native.scenario_keys()[table])
        assert defs[name]["additionalProperties"] is False
