"""The README's examples run as written: each `satcc` line of its ```sh blocks through the CLI
and its ```python blocks as one notebook, in a scratch directory beside the ready scenarios.
A README that drifts from the code fails here."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from satcc.cli import main
from tests.helpers import requires_sim

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README.read_text(), flags=re.DOTALL)


@pytest.fixture
def scratch(tmp_path):
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def test_the_readme_is_short_and_names_its_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 160
    assert "make demo" in text and "make test" in text
    assert "../shared" not in text  # nothing outside the repository


@requires_sim
def test_the_readme_shell_examples_run(scratch, capsys):
    commands = [
        line for block in _blocks("sh") for line in block.splitlines() if line.startswith("satcc ")
    ]
    assert len(commands) >= 4
    for line in commands:
        status = main(shlex.split(line)[1:])
        out, err = capsys.readouterr()
        assert status in (0, None), f"{line}\n{err}"
    assert (scratch / "out/res/plot.png").is_file()
    assert "upload" in out  # the query printed the scenario's flows


@requires_sim
def test_the_readme_python_example_runs(scratch):
    blocks = _blocks("python")
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README's own code
    both = namespace["both"]
    assert list(both["name"]) == ["cubic", "bbr", "reno"]
    assert (both["goodput_bps_sim"] > 0).all() and (both["goodput_bps_model"] > 0).all()
