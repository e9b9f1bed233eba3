"""satcc.resources and `satcc scenarios` (issue 32; docs/packaging.md), in the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from satcc import resources
from satcc.cli import main
from satcc.emu import linkd
from satcc.emu.host import EmuError

REPO = Path(__file__).resolve().parents[1]


def test_shipped_scenarios_have_names_and_descriptions():
    items = {s.name: s for s in resources.shipped_scenarios()}
    assert "demo-geo" in items and "fidelity/mahimahi-trace" in items
    assert "fidelity/grid" not in items
    assert items["demo-geo"].description.startswith("CUBIC, BBR and Reno")
    assert all(s.description for s in items.values()), [
        n for n, s in items.items() if not s.description
    ]
    assert items["demo-geo"].path.read_bytes() == (REPO / "scenarios/demo-geo.toml").read_bytes()


def test_a_file_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert (
        resources.scenario_path("scenarios/demo-geo.toml")
        == resources.scenarios_dir() / "demo-geo.toml"
    )
    assert resources.scenario_path("demo-geo") == resources.scenarios_dir() / "demo-geo.toml"
    assert resources.scenario_path("nope.toml") == Path("nope.toml")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "demo-geo.toml").write_text("mine")
    assert resources.scenario_path("scenarios/demo-geo.toml") == Path("scenarios/demo-geo.toml")


def test_scenarios_copy_writes_the_trace_and_refuses_to_overwrite(tmp_path, capsys):
    assert main(["scenarios", "copy", "fidelity/mahimahi-trace", str(tmp_path)]) == 0
    assert (tmp_path / "mahimahi-trace.toml").is_file()
    trace = tmp_path / "traces" / "starlink-residential-up-seed7.mahimahi"
    assert (
        trace.read_bytes()
        == (REPO / "scenarios/fidelity/traces/starlink-residential-up-seed7.mahimahi").read_bytes()
    )
    assert main(["scenarios", "copy", "fidelity/mahimahi-trace", str(tmp_path)]) == 2
    assert "exists (pass --force" in capsys.readouterr().err
    assert main(["scenarios", "copy", "fidelity/mahimahi-trace", str(tmp_path), "--force"]) == 0
    assert main(["scenarios", "copy", "no-such-scenario", str(tmp_path)]) == 2
    assert "expected one of" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "mahimahi-trace.toml")]) == 0


def test_scenarios_lists_json(capsys):
    assert main(["scenarios", "--json"]) == 0
    assert '"name": "demo-starlink-uplink"' in capsys.readouterr().out


def test_an_install_without_linkd_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.delenv("SATCC_LINKD", raising=False)
    monkeypatch.setattr(linkd, "in_checkout", lambda: False)
    monkeypatch.setattr(resources, "linkd_binary", lambda: tmp_path / "satcc-linkd")
    with pytest.raises(EmuError, match="install the wheel `make dist` builds"):
        linkd.binary()
    (tmp_path / "satcc-linkd").write_text("")
    assert linkd.binary() == tmp_path / "satcc-linkd"
