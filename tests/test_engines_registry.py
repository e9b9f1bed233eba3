"""satcc.registry: one list of engines, one dispatch, engines imported when used."""

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from satcc import api, cli, registry
from satcc import scenario as sc
from satcc.campaign import execute as campaign_execute
from satcc.campaign.spec import ANALYZE, RunSpec
from satcc.campaign.worker import execute as worker_execute
from satcc.errors import UserError
from tests.helpers import MINIMAL

PACKAGE = Path(sc.__file__).resolve().parents[1]  # python/satcc (satcc.scenario is a package)


class Dispatched(UserError):
    """Raised by the fake engine: proves a caller reached `EngineSpec.run`."""


@pytest.fixture
def dispatched(monkeypatch):
    """Replace every engine's run by a recorder; returns the list of (engine, options)."""
    calls = []

    def fake_run(self, scenario, opts=None):
        calls.append((self.name, opts))
        raise Dispatched(f"dispatched to {self.name}")

    monkeypatch.setattr(registry.EngineSpec, "run", fake_run)
    monkeypatch.setattr("satcc.emu.host.require_root", lambda: None)
    return calls


def _main(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def test_an_unknown_engine_names_the_known_ones():
    with pytest.raises(UserError) as e:
        registry.get("simm")
    assert str(e.value) == "engine: expected one of sim, model, emu, found 'simm'"
    with pytest.raises(UserError, match=r"scenario\.engine: expected one of sim, model, emu"):
        registry.get("kernel", where="scenario.engine")


def test_the_api_refuses_an_unknown_engine_with_the_list(write_toml):
    with pytest.raises(UserError, match="expected one of sim, model, emu, found 'ns3'"):
        api.run(write_toml(MINIMAL), engine="ns3")


def test_the_scenario_schema_takes_its_engine_names_from_the_registry(write_toml):
    for name in registry.NAMES:
        s = sc.load(
            write_toml(MINIMAL.replace('duration = "2 s"', f'duration = "2 s"\nengine = "{name}"'))
        )
        assert s.scenario.engine == name
    with pytest.raises(sc.ScenarioError) as e:
        sc.load(write_toml(MINIMAL.replace('duration = "2 s"', 'duration = "2 s"\nengine = "ns3"')))
    assert "scenario.engine" in str(e.value)
    assert all(repr(n) in str(e.value) for n in registry.NAMES)


def test_an_engine_checks_its_host_before_it_runs(monkeypatch, write_toml):
    import satcc.engines.emu as emu_engine
    from satcc.emu.host import EmuError

    ran = []
    monkeypatch.setattr(emu_engine, "run", lambda *a, **k: ran.append(a))

    def not_root():
        raise EmuError("the emulator needs root")

    monkeypatch.setattr("satcc.emu.host.require_root", not_root)
    s = sc.load(write_toml(MINIMAL))
    with pytest.raises(EmuError, match="needs root"):
        registry.run("emu", s)
    assert ran == []


def test_capabilities_are_where_callers_read_them():
    assert registry.get("emu").needs_root and registry.get("emu").exclusive
    assert not registry.get("emu").deterministic
    assert registry.names(needs_root=False) == ("sim", "model")
    sim_spec = RunSpec("a", "sim", 1, 0, 0, {}, {}, "x")
    emu_spec = RunSpec("b", "emu", 1, 0, 0, {}, {}, "x")
    ana_spec = RunSpec("c", ANALYZE, None, 0, 0, {}, None, "x")
    assert [campaign_execute._exclusive(s) for s in (sim_spec, emu_spec, ana_spec)] == [
        False,
        True,
        False,
    ]


@pytest.mark.parametrize(
    ("argv", "engine"),
    [
        (["sim", "{f}"], "sim"),
        (["run", "{f}"], "sim"),
        (["run", "{f}", "--engine", "model"], "model"),
        (["run", "{f}", "--engine", "emu"], "emu"),
        (["model", "{f}"], "model"),
        (["emu", "{f}"], "emu"),
        (["try", "--engine", "model"], "model"),
        (["demo"], "sim"),
    ],
)
def test_every_command_dispatches_through_the_registry(
    argv, engine, dispatched, write_toml, tmp_path, capsys
):
    path = write_toml(MINIMAL)
    argv = [a.format(f=path) for a in argv] + ["--out", str(tmp_path / "o")]
    status, _, err = _main(argv, capsys)
    assert status == 2 and f"dispatched to {engine}" in err, err
    assert [c[0] for c in dispatched] == [engine]
    opts = dispatched[0][1]
    assert isinstance(opts, registry.RunOptions)


def test_the_api_campaign_worker_and_fidelity_dispatch_through_the_registry(dispatched, write_toml):
    with pytest.raises(Dispatched, match="dispatched to model"):
        api.run(write_toml(MINIMAL), engine="model", seed=4)
    assert dispatched[-1][1].seed == 4
    doc = tomllib.loads(MINIMAL)
    spec = RunSpec("r1", "sim", 9, 0, 0, {}, doc, "x.toml")
    outcome = worker_execute(spec)
    assert not outcome.ok and "dispatched to sim" in outcome.error
    assert dispatched[-1][0] == "sim" and dispatched[-1][1].seed == 9
    bad = worker_execute(RunSpec("r2", "ns3", 9, 0, 0, {}, doc, "x.toml"))
    assert not bad.ok and "expected one of sim, model, emu, found 'ns3'" in bad.error


def test_no_module_outside_the_registry_dispatches_on_engine_modules():
    """Callers name an engine and go through the registry; importing an engine module to run
    it (or comparing engine names to pick a module) would be a second dispatch."""
    direct = re.compile(
        r"from satcc\.engines import (sim|model|emu)\b|satcc\.engines\.(sim|model|emu) import run\b"
    )
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "engines":
            continue
        text = path.read_text(encoding="utf-8")
        if direct.search(text):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


def test_the_command_line_imports_no_engine_until_one_runs():
    code = (
        "import sys; from satcc import cli; cli.build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith(('satcc.engines', 'satcc.emu', 'satcc.registry'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['satcc.registry']"


# Where a root check may stand outside the registry: the emulator's own modules, packetdrill's
# kernel side and field measurements (neither is a registry engine), the analyzer's test bed.
GETEUID_OK = (
    "registry.py",
    "emu/",
    "drill/",
    "field/measure.py",
    "field/preflight.py",
    "analyze/testbed.py",
)


def test_engine_decisions_go_through_the_registrys_capabilities():
    """No module outside engines/ compares an engine variable with an engine's name, lists
    engines by name (`("sim", "emu")`, `choices=`, `.isin([...])`) or asks for root itself: it
    asks the registry (`get(name).real_time`, `names(packets=True)`, `.runnable_here()`, ...)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("engines/", "drill/")):  # drill: packetdrill's own sim/kernel pair
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                named = any(
                    isinstance(c, ast.Constant) and c.value in registry.NAMES for c in sides
                )
                if named and "engine" in ast.unparse(node):
                    offenders.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                named = [
                    e.value
                    for e in node.elts
                    if isinstance(e, ast.Constant) and e.value in registry.NAMES
                ]
                if len(named) >= 2:
                    offenders.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "geteuid"
                and not rel.startswith(GETEUID_OK)
            ):
                offenders.append(f"{rel}:{node.lineno}: geteuid")
    assert offenders == []


@pytest.mark.kernel
def test_capabilities_answer_what_callers_used_to_ask_by_name():
    emu, sim, model = registry.get("emu"), registry.get("sim"), registry.get("model")
    assert emu.real_time and emu.kernel_tcp and emu.exclusive and emu.needs_root
    assert not any(e.real_time or e.kernel_tcp or e.needs_root for e in (sim, model))
    assert sim.runnable_here() and model.runnable_here()
    assert emu.runnable_here() == (os.geteuid() == 0)
    assert sim.packets and emu.packets and not model.packets


def test_engines_are_picked_by_capability():
    """The lists callers used to spell out, and where they now come from."""
    from satcc.fidelity import metrics, suite
    from satcc.studies import reproduce

    assert registry.names() == registry.NAMES == ("sim", "model", "emu")
    assert registry.names(packets=True) == ("sim", "emu")
    assert registry.names(packets=True, kernel_tcp=False) == ("sim",)
    assert registry.names(budget="memory") == ("model",)
    assert (metrics.SIM, metrics.KERNEL) == suite.ENGINES == ("sim", "emu")
    assert reproduce.ENGINES == ("sim", "emu")
    with pytest.raises(TypeError, match="no capability root_ok"):
        registry.names(root_ok=False)
