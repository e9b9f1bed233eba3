"""CLI start-up beside the peers' (`python bench/cli/startup.py [--runs N]`).

Times N runs of each command (wall clock, a fresh process each) and prints the median and p90:
`satcc --help`, `satcc --version`, `satcc check` on a ready scenario, `satcc cc list`, beside `iperf3 --version`
and `tshark --version`, and two floors: the venv's Python doing nothing, and the same Python
importing pydantic and validating a one-field model (what any pydantic-checked CLI pays before
its own work). The commands take turns, run by run, so a noisy neighbour slows them alike. The
first round is discarded (it warms the page cache and writes Python's bytecode cache, as a
user's first run does once). Last, the goals: `satcc --help` at most 0.10 s (issue 40; 0.15 s in
issue 28), and `satcc check` within 30 ms of the pydantic floor (issue 28; the difference of
the medians). Wall times mean something on a quiet machine only; `--instructions` does not
move with the load.

`--instructions` counts instead of timing (valgrind's cachegrind, `--cache-sim=no`, every
thread of the whole process, Python's bytecode cache written by one run beforehand): the two
floors, `satcc --help`, `satcc check` and `satcc sim` on the end-to-end case of bench/sim (case a,
bench/cli/case-a.toml), each run as the `satcc` script runs it
(`satcc.cli.entry`) by this Python. Counts do not move with the machine's load as times do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SATCC = os.environ.get("SATCC_BIN", str(Path(sys.executable).parent / "satcc"))

PYDANTIC_FLOOR = (
    "from pydantic import BaseModel, ConfigDict\n"
    "class A(BaseModel):\n"
    "    model_config = ConfigDict(extra='forbid', frozen=True)\n"
    "    x: int = 1\n"
    "A.model_validate({'x': 2})\n"
)

HELP = "satcc --help"
CHECK = "satcc check scenarios/dumbbell.toml"
FLOOR = "floor: python + pydantic, one model"
HELP_GOAL_S = 0.10
CHECK_OVER_FLOOR_GOAL_S = 0.030

COMMANDS = {
    HELP: [SATCC, "--help"],
    "satcc --version": [SATCC, "--version"],
    CHECK: [SATCC, "check", str(ROOT / "scenarios/dumbbell.toml")],
    "satcc cc list": [SATCC, "cc", "list"],
    "iperf3 --version": ["iperf3", "--version"],
    "tshark --version": ["tshark", "--version"],
    "floor: python -c pass": [sys.executable, "-c", "pass"],
    FLOOR: [sys.executable, "-c", PYDANTIC_FLOOR],
}


def time_rounds(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out: dict[str, list[float]] = {name: [] for name in cmds}
    for i in range(runs + 1):
        for name, cmd in cmds.items():
            t = time.perf_counter()
            subprocess.run(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True
            )
            if i:
                out[name].append(time.perf_counter() - t)
    return out


SIM_CASE = "bench/cli/case-a.toml"  # bench/sim case a as a scenario file
ENTRY = "from satcc.cli import entry; entry()"  # what the `satcc` script runs


def instruction_commands(out_dir: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "floor: python -c pass": [py, "-c", "pass"],
        FLOOR: [py, "-c", PYDANTIC_FLOOR],
        HELP: [py, "-c", ENTRY, "--help"],
        CHECK: [py, "-c", ENTRY, "check", str(ROOT / "scenarios/dumbbell.toml")],
        f"satcc sim {SIM_CASE}": [
            py, "-c", ENTRY, "sim", str(ROOT / SIM_CASE), "--out", str(out_dir), "--force"
        ],
    }  # fmt: skip


def instructions(cmd: list[str], env: dict[str, str]) -> int:
    """Instructions executed by `cmd` (all threads), under cachegrind."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    vg = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            *cmd,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        check=True,
    )
    refs = [line for line in vg.stderr.splitlines() if "I   refs:" in line or "I refs:" in line]
    if not refs:
        raise SystemExit(f"startup.py: no instruction count in valgrind's output for {cmd}")
    return int(refs[-1].rsplit(":", 1)[1].replace(",", ""))


def count_instructions() -> int:
    if shutil.which("valgrind") is None:
        print(
            "startup.py: --instructions needs valgrind (apt-get install valgrind)", file=sys.stderr
        )
        return 1
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="satcc-startup-") as tmp:
        counts = {
            name: instructions(cmd, env)
            for name, cmd in instruction_commands(Path(tmp) / "sim").items()
        }
    print(f"{'command':52} {'instructions':>14}")
    for name, n in counts.items():
        print(f"{name:52} {n / 1e6:12.1f} M")
    over = counts[CHECK] - counts[FLOOR]
    print(
        f"satcc check - pydantic floor: {over / 1e6:+.1f} M instructions "
        f"({100 * over / counts[FLOOR]:+.1f} % of the floor)"
    )
    bare = counts["floor: python -c pass"]
    print(f"satcc check / python -c pass: {counts[CHECK] / bare:.2f}x (issue 40's goal: <= 4x)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind instead of timing (see the module doc)",
    )
    args = ap.parse_args()
    if args.instructions:
        return count_instructions()
    present = {
        name: cmd
        for name, cmd in COMMANDS.items()
        if shutil.which(cmd[0]) is not None or Path(cmd[0]).exists()
    }
    times = time_rounds(present, args.runs)
    print(f"{'command':40} {'median s':>9} {'p90 s':>7}")
    for name in COMMANDS:
        if name not in present:
            print(f"{name:40} {'absent':>9}")
            continue
        ts = sorted(times[name])
        p90 = ts[min(len(ts) - 1, int(0.9 * len(ts)))]
        print(f"{name:40} {statistics.median(ts):9.3f} {p90:7.3f}")
    median = {name: statistics.median(ts) for name, ts in times.items()}
    if HELP in median:
        verdict = "met" if median[HELP] <= HELP_GOAL_S else "NOT met"
        print(f"{HELP}: median {median[HELP]:.3f} s (goal <= {HELP_GOAL_S} s: {verdict})")
    if CHECK in median and FLOOR in median:
        over = median[CHECK] - median[FLOOR]
        verdict = "met" if over <= CHECK_OVER_FLOOR_GOAL_S else "NOT met"
        print(
            f"satcc check - pydantic floor: {over * 1e3:.0f} ms "
            f"(goal <= {CHECK_OVER_FLOOR_GOAL_S * 1e3:.0f} ms: {verdict})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
