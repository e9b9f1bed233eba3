"""Issue 44 item 2: `satcc sim base.toml` of a scenario named "try" replaced an earlier
`satcc try --out out/try` result (a different run) without a word, leaving the old two-flow
plot.png beside the new one-flow tables. A result directory is now replaced only when it
holds a result of the same scenario (name and flows) by the same engine, or with --force; and
`satcc try`'s default directory is not `satcc sim`'s."""

from __future__ import annotations

import json

from satcc.cli import main
from tests.helpers import requires_sim

pytestmark = requires_sim

ONE_FLOW = """
[scenario]
name = "try"
duration = "1 s"

[[link]]
a = "client"
b = "server"
rate = "10 Mbit/s"
delay = "20 ms"

[[flow]]
name = "cubic"
from = "client"
to = "server"
cca = "cubic"
"""

TRY = ["try", "-b", "10M", "--rtt", "40ms", "-C", "cubic,bbr", "-t", "1s"]


def flows(d):
    return [f["name"] for f in json.loads((d / "summary.json").read_text())["flows"]]


def test_a_different_runs_result_is_not_replaced_without_force(tmp_path, capsys):
    out = tmp_path / "out-try"
    assert main([*TRY, "--plot", "--out", str(out)]) == 0
    (tmp_path / "base.toml").write_text(ONE_FLOW)
    capsys.readouterr()
    assert main(["sim", str(tmp_path / "base.toml"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"satcc: error: --out {out}: holds a result of another run")
    assert "flows cubic, bbr" in err and "--force" in err
    assert flows(out) == ["cubic", "bbr"] and (out / "plot.png").is_file()
    assert main(["sim", str(tmp_path / "base.toml"), "--out", str(out), "--force"]) == 0
    assert flows(out) == ["cubic"]
    assert not (out / "plot.png").exists()  # the two-flow figure went with its result


def test_the_same_scenario_and_engine_replace_their_result(tmp_path):
    out = tmp_path / "r"
    (tmp_path / "base.toml").write_text(ONE_FLOW)
    assert main(["sim", str(tmp_path / "base.toml"), "--out", str(out)]) == 0
    (tmp_path / "base.toml").write_text(ONE_FLOW.replace("10 Mbit/s", "20 Mbit/s"))
    assert main(["sim", str(tmp_path / "base.toml"), "--out", str(out)]) == 0
    assert main([*TRY[:-2], "-t", "1s", "-C", "cubic", "--out", str(out)]) == 0
    assert main([*TRY[:-2], "-t", "1s", "-C", "cubic", "--engine", "model", "--out", str(out)]) == 2


def test_files_that_are_not_a_result_are_not_replaced(tmp_path, capsys):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main([*TRY, "--out", str(out)]) == 2
    assert "holds files that are not a satcc result" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine"


def test_try_and_sim_default_directories_differ(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.toml").write_text(ONE_FLOW)
    assert main(TRY) == 0
    assert main(["sim", "base.toml"]) == 0
    assert flows(tmp_path / "out" / "try-cubic-bbr") == ["cubic", "bbr"]
    assert flows(tmp_path / "out" / "try") == ["cubic"]
