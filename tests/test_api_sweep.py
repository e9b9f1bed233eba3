"""Issue 44 item 6: the Python API had no sweep or campaign (a user looped, added the
parameter columns with `assign` and concatenated by hand), a bad keyword's error named
`--set flow[3].cca`, the docs' analyze example read `parents[2]/"tests"` (an installed wheel
has no tests directory) and `dir(satcc)` showed `sys`."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import satcc
from satcc.errors import UserError
from tests.helpers import MINIMAL, requires_sim

DOCS = Path(__file__).parents[1] / "docs"
API_DOCS = ("python-api.md", "analyze.md")


def python_blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), flags=re.DOTALL)


def test_dir_satcc_lists_the_api_and_no_module_it_imported():
    import subprocess
    import sys

    code = "import satcc; print(' '.join(n for n in dir(satcc) if not n.startswith('_')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["Result", "analyze", "campaign", "open_store", "run", "sweep"]


@requires_sim
def test_a_bad_keyword_is_named_as_the_keyword_not_a_flag():
    with pytest.raises(UserError) as e:
        satcc.run(MINIMAL, **{"flow[3].cca": "bbr"})
    assert str(e.value) == (
        "<string>: keyword 'flow[3].cca': expected an index below 1 (flow has 1 entries), found [3]"
    )
    assert "--set" not in str(e.value)


@requires_sim
def test_sweep_returns_one_tidy_frame_with_the_parameter_columns():
    df = satcc.sweep(
        MINIMAL,
        seeds=[1, 2],
        duration=["1 s"],
        **{"link[0].loss": ["0", "1%"], "flow.*.cca": ["reno", "cubic"]},
    )
    assert list(df.columns[:7]) == [
        "duration",
        "duration_ms",
        "link0_loss",
        "link0_loss_frac",
        "param_cca",
        "seed",
        "id",
    ]
    assert len(df) == 8
    assert (df["param_cca"] == df["cca"]).all()
    assert sorted(set(df["link0_loss_frac"])) == [0.0, 0.01]
    one = satcc.run(
        MINIMAL, seed=2, duration="1 s", **{"link[0].loss": "1%", "flow.*.cca": "cubic"}
    )
    row = df[(df["link0_loss"] == "1%") & (df["cca"] == "cubic") & (df["seed"] == 2)]
    assert row["goodput_bps"].tolist() == one.summary["goodput_bps"].tolist()


def test_analyzes_bin_keyword_is_named_as_a_keyword():
    with pytest.raises(UserError) as e:
        satcc.analyze("x.pcap", bin="fast")
    assert str(e.value).startswith("satcc.analyze: keyword 'bin': expected a duration")


def test_sweep_refuses_a_value_that_is_not_a_list():
    with pytest.raises(UserError, match="satcc.sweep: keyword 'scenario.duration': expected a"):
        satcc.sweep(MINIMAL, duration="1 s")


@requires_sim
def test_campaign_returns_the_stores_flows_and_the_store_reads_as_dataframes(tmp_path):
    (tmp_path / "base.toml").write_text(MINIMAL.replace('"2 s"', '"0.5 s"'))
    (tmp_path / "c.toml").write_text(
        '[campaign]\nscenario = "base.toml"\n[matrix]\n"flow.*.cca" = ["reno", "bbr"]\n'
    )
    import satcc.campaign.spec  # binds the package satcc.campaign on satcc

    flows = satcc.campaign(tmp_path / "c.toml", out=tmp_path / "out", jobs=1)
    assert sorted(flows["param_cca"]) == ["bbr", "reno"] and flows["goodput_bps"].gt(0).all()
    with satcc.open_store(tmp_path / "out") as store:
        assert sorted(store.runs()["cca"]) == ["bbr", "reno"]
        assert not store.flow_series("cca = 'bbr'").empty


def test_the_api_docs_read_nothing_from_the_source_checkout():
    for name in API_DOCS:
        for block in python_blocks(name):
            assert "parents[" not in block and '"tests"' not in block, name


@requires_sim
def test_the_analyze_docs_python_example_runs(tmp_path):
    (block,) = python_blocks("analyze.md")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        namespace: dict = {}
        exec(compile(block, "docs/analyze.md", "exec"), namespace)  # noqa: S102 - the doc's code
    finally:
        os.chdir(cwd)
    assert not namespace["cap"].flows.empty and not namespace["graph"].empty
