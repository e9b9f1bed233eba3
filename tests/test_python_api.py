"""The Python API (satcc.run / satcc.analyze), `--set`, `satcc try` and `satcc query` on one
result directory; docs/python-api.md's code blocks run here as one notebook."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import satcc
from satcc.cli import main
from satcc.errors import UserError
from tests.helpers import MINIMAL, requires_sim

DOC = Path(__file__).parents[1] / "docs" / "python-api.md"


@requires_sim
def test_the_python_api_doc_runs_as_a_notebook(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for block in blocks:
            exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own code
    finally:
        os.chdir(cwd)
    assert (tmp_path / "geo-try.png").is_file()


@requires_sim
def test_run_takes_a_path_text_or_dict_and_gives_dataframes(tmp_path):
    import tomllib

    path = tmp_path / "m.toml"
    path.write_text(MINIMAL)
    a = satcc.run(path)
    b = satcc.run(MINIMAL)
    c = satcc.run(tomllib.loads(MINIMAL))
    for r in (a, b, c):
        assert list(r.summary["name"]) == ["flow0"]
        assert r.flows.shape[0] == 1 and not r.flow_series.empty and not r.link_series.empty
    assert a.summary["goodput_bps"].tolist() == b.summary["goodput_bps"].tolist()


@requires_sim
def test_overrides_are_campaign_key_paths_and_bad_ones_are_one_line_errors():
    r = satcc.run(MINIMAL, duration="1 s", **{"link[0].rate": "2 Mbit/s"})
    assert r.meta["duration_s"] == 1.0 and r.summary["goodput_bps"][0] < 2e6
    with pytest.raises(UserError, match=r"keyword 'flow\[3\].cca': expected an index below 1"):
        satcc.run(MINIMAL, **{"flow[3].cca": "bbr"})


@requires_sim
def test_set_on_the_command_line_overrides_keys_for_check_sim_and_run(tmp_path, capsys):
    path = tmp_path / "m.toml"
    path.write_text(MINIMAL)
    assert (
        main(["check", str(path), "--set", 'link[0].rate="3 Mbit/s"', "--set", "flow[0].cca=cubic"])
        == 0
    )
    out = capsys.readouterr().out
    assert "3.00 Mbit/s" in out and "cubic" in out
    for cmd in ("sim", "run"):
        assert (
            main(
                [
                    cmd,
                    str(path),
                    "--json",
                    "--out",
                    str(tmp_path / cmd),
                    "--set",
                    'scenario.duration="1 s"',
                    "--set",
                    "flow[0].cca=cubic",
                ]
            )
            == 0
        )
        doc = json.loads(capsys.readouterr().out)
        assert doc["duration_s"] == 1.0 and doc["flows"][0]["cca"] == "cubic"
    assert main(["check", str(path), "--set", "nonsense"]) == 2
    assert "expected KEY.PATH=VALUE" in capsys.readouterr().err


@requires_sim
def test_try_builds_a_scenario_from_flags(tmp_path, capsys):
    assert (
        main(
            [
                "try",
                "--rate",
                "20Mbit/s",
                "--rtt",
                "50ms",
                "--loss",
                "0.3%",
                "--cca",
                "cubic,bbr",
                "--print",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert 'delay = "25 ms"' in text and text.count("[[flow]]") == 2
    assert (
        main(
            [
                "try",
                "--rate",
                "10Mbit/s",
                "--rtt",
                "40ms",
                "--cca",
                "reno,cubic",
                "--duration",
                "2s",
                "--json",
                "--out",
                str(tmp_path / "t"),
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert [f["cca"] for f in doc["flows"]] == ["reno", "cubic"] and doc["jain_flows"] == [0, 1]
    assert sum(f["goodput_bps"] for f in doc["flows"]) < 10e6


@requires_sim
def test_query_runs_sql_on_one_result_directory_and_nothing_else(tmp_path, capsys):
    out = tmp_path / "r"
    satcc.run(MINIMAL, duration="1 s").write(out)
    assert main(["query", str(out), "SELECT name, cca FROM flows", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"name": "flow0", "cca": "reno"}]
    assert main(["query", str(out), "SELECT count(*) AS n FROM flow_series", "--csv"]) == 0
    assert capsys.readouterr().out.startswith("n\n")
    assert main(["query", str(out), f"COPY flows TO '{tmp_path / 'x.csv'}'"]) == 2
    assert not (tmp_path / "x.csv").exists()


def test_satcc_analyze_is_callable_even_after_the_analyze_package_was_imported():
    import satcc.analyze as package  # binds satcc.analyze to the package

    a = satcc.analyze(Path(__file__).parent / "data" / "iperf3" / "udp_client.json")
    assert package is satcc.analyze and a.summary["goodput_bps"][0] > 4e6
    assert callable(package.read_iperf3)
