"""What `satcc check` and `satcc --help` import (issue 40: `satcc check` within 4x a bare
`python -c pass`, counted by bench/cli/startup.py --instructions). Each module below costs
every run millions of instructions and the command has no use for it: dataclasses (which
pulls in inspect, ast, dis, tokenize), importlib.resources, hashlib (OpenSSL), tomllib
(satcc-core parses a scenario's TOML), the command modules it does not run, and for --help
the scenario reader and the native module's callers. `satcc sim` (issue 40: >= 85 % of its
instructions in the simulation) prints its table without rich, builds its result without
dataclasses and imports no typing (~15 M instructions with contextlib: annotations only, under
`if TYPE_CHECKING:`; collections.namedtuple for the NamedTuples on its path) nor tempfile (~8 M
with random and weakref: the result's temporary directory is made by satcc.results itself)
nor hashlib (OpenSSL, ~11 M: the sha256 of the result's files is the native module's), nor
shutil (bz2, lzma: ~7 M; argparse's formatter asks it for the terminal's width unless given
one, satcc.textgrid.HelpFormatter finds it, and a new result directory needs no rmtree).
A new import on these paths that brings one back fails here; put it inside the function that
needs it."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# after the command (--help and --version end in SystemExit): which of WATCH were imported?
PROBE = """
import sys
from satcc import cli
try:
    status = cli.main(sys.argv[1:])
except SystemExit as e:
    status = e.code
import threading
for t in threading.enumerate():  # `satcc sim`'s prefetch of the result modules
    if t is not threading.main_thread():
        t.join()
print(status, *sorted(m for m in WATCH if m in sys.modules))
"""
# Modules the check path must not import (their cost: bench/cli/startup.py, BENCHMARKS.md
# "CLI start-up")
HEAVY = (
    "dataclasses",
    "inspect",
    "ast",
    "dis",
    "tokenize",
    "importlib.resources",
    "hashlib",
    "tomllib",
    "copy",
    "rich",
    "pydantic",
    "numpy",
    "pyarrow",
    "satcc.results",
    "satcc.commands.sim",
    "satcc.commands.output",
)
# `satcc --help` lists the commands from satcc.cli's table: no scenario reader, not even typing
# or pathlib (~30 M instructions of its ~125 M)
HELP_HEAVY = (
    *HEAVY,
    *("json", "satcc.scenario", "satcc.api", "satcc.commands.check"),
    *("typing", "pathlib", "satcc.limits"),
)


def _imported(argv: list[str], watch: tuple[str, ...]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"WATCH = {watch!r}\n{PROBE}", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.splitlines()[-1].split()


def test_check_imports_none_of_the_heavy_modules():
    status, *found = _imported(["check", str(ROOT / "scenarios" / "dumbbell.toml")], HEAVY)
    assert status == "0"
    assert found == [], f"satcc check imported {found}"


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_help_imports_no_command(argv):
    found = _imported(argv, HELP_HEAVY)[1:]  # after the exit status
    assert found == [], f"satcc {' '.join(argv)} imported {found}"


# `satcc sim` printing its per-flow table: the result writer is imported, these are not
SIM_HEAVY = (
    *("rich", "dataclasses", "inspect", "ast", "tomllib", "pydantic", "numpy", "pyarrow"),
    *("pandas", "typing", "contextlib", "tempfile", "random", "hashlib", "shutil", "bz2"),
)
SIM_SCENARIO = (
    '[scenario]\nduration = "1 s"\n'
    '[[link]]\na = "s"\nb = "r"\nrate = "10 Mbit/s"\ndelay = "10 ms"\n'
    '[[flow]]\nfrom = "s"\nto = "r"\ncca = "cubic"\n'
)


def test_sim_with_its_table_imports_no_table_library_dataclasses_typing_nor_tempfile(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SIM_SCENARIO)
    out = tmp_path / "res"
    status, *found = _imported(["sim", str(path), "--out", str(out)], SIM_HEAVY)
    assert status == "0"
    assert found == [], f"satcc sim imported {found}"
    assert (out / "flows.parquet").is_file()
    # run again over it (--force): the old result replaced file by file, still no shutil
    status, *found = _imported(["sim", str(path), "--out", str(out), "--force"], SIM_HEAVY)
    assert status == "0"
    assert found == [], f"satcc sim --force imported {found}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res", "s.toml"]  # no temporary left


def test_set_overrides_import_no_pydantic():
    """`--set KEY.PATH=VALUE` edits the document with satcc.scenario.keypath; it imported the
    campaign file's pydantic models before (set_key lived in satcc.campaign.spec)."""
    dumbbell = str(ROOT / "scenarios" / "dumbbell.toml")
    argv = ["check", dumbbell, "--set", 'flow[0].cca="reno"', "--set", "link[2].loss=0.001"]
    status, *found = _imported(argv, ("pydantic", "satcc.campaign"))
    assert status == "0"
    assert found == [], f"satcc check --set imported {found}"


def test_api_keyword_overrides_on_a_dict_import_no_pydantic():
    code = (
        "import sys, tomllib\n"
        "from satcc.api import load_scenario\n"
        f"doc = tomllib.loads(open({str(ROOT / 'scenarios' / 'dumbbell.toml')!r}).read())\n"
        "s = load_scenario(doc, {'flow.*.mss': 1300, 'flow[0].cca': 'reno'})\n"
        "assert [f.mss for f in s.flows] == [1300, 1300], s.flows\n"
        "print(*sorted(m for m in ('pydantic', 'satcc.campaign') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], f"keyword overrides imported {done.stdout}"


@pytest.mark.parametrize("columns", [None, "100", "0", "junk", "33"])
def test_the_help_formatter_is_as_wide_as_argparses_own(monkeypatch, columns):
    import argparse

    from satcc.textgrid import HelpFormatter

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = HelpFormatter("satcc")
    theirs = argparse.RawDescriptionHelpFormatter("satcc")
    assert (ours._width, ours._max_help_position) == (theirs._width, theirs._max_help_position)
