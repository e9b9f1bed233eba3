"""What `satcc check` and `satcc --help` import (issue 40: `satcc check` within 4x a bare
`python -c pass`, counted by bench/cli/startup.py --instructions). Each module below costs
every run millions of instructions and the command has no use for it: dataclasses (which
pulls in inspect, ast, dis, tokenize), importlib.resources, hashlib (OpenSSL), the command
modules it does not run, and for --help the scenario reader and the native module's callers.
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
    *("tomllib", "json", "satcc.scenario", "satcc.api", "satcc.commands.check"),
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
