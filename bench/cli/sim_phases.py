"""Where `satcc sim` spends its run, phase by phase (`python bench/cli/sim_phases.py`).

Runs what `satcc sim FILE --out DIR --force` runs (`satcc.cli.entry` → `commands.sim.run` →
`commands.output.run_and_write`), one phase after another in one process, and stops after
phase STOP. Default: a few runs to the end, printing each phase's wall and CPU time (all
threads); `--instructions`: one run per STOP under valgrind's cachegrind (`--cache-sim=no`,
Python's bytecode cache written beforehand), each phase's count being the difference of two
consecutive stops. The result modules, imported by a thread beside the simulation in the real
command (`output.prefetch`), are imported here in a phase of their own, after it.

    python bench/cli/sim_phases.py [--instructions] [--runs N] [FILE]
    (FILE: bench/sim case a, bench/cli/case-a.toml, unless given)
"""

from __future__ import annotations

import os
import sys
import time

# A child run imports nothing here beyond what the interpreter has loaded at start-up (os, sys,
# time), so that phase 1 counts what `satcc` imports; the parent's modules load in main().
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASE = "bench/cli/case-a.toml"  # bench/sim case a as a scenario file
PHASES = (
    "interpreter start-up",
    "import satcc.cli (argparse, the native module)",
    "the sim command's parser and modules (api, output, options)",
    "scenario loaded: satcc-core's TOML parse and reader (types, units, checks)",
    "engine module, resolve (native), budget check",
    "simulation (native, without the GIL)",
    "result modules imported (satcc.results; a thread in satcc sim)",
    "RunResult built from the engine's output",
    "result directory written (Parquet, summary, fsync, rename)",
    "per-flow table printed",
    "exit (collector frozen, interpreter shutdown)",
)


def run_phases(argv: list[str], stop: int, marks: list[tuple[float, float]]) -> None:
    """The command's phases; returns after phase `stop` (os._exit in a child run)."""

    def done(n: int) -> None:
        marks.append((time.perf_counter(), time.process_time()))
        if n >= stop:
            sys.stdout.flush()
            sys.stderr.flush()
            if os.environ.get("SIM_PHASES_EXIT"):
                os._exit(0)

    import gc

    from satcc import cli

    gc.set_threshold(cli.GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
    done(1)
    args = cli.build_parser(argv).parse_args(argv)
    done(2)
    from satcc.api import load_scenario, parse_set

    scenario = load_scenario(args.file, parse_set(args.set))
    done(3)
    from satcc import registry
    from satcc.limits import check_out_dir, printable
    from satcc.progress import ProgressBar

    eng = registry.get("sim")
    out = check_out_dir(args.out)
    eng.check_host()
    eng.check_budget(scenario, seed=args.seed, force=args.force)
    done(4)
    from satcc import _native
    from satcc.engines import sim

    handle = sim._resolved_once(scenario, args.seed)
    with ProgressBar(label=scenario.name) as bar:
        raw = _native.run_sim(handle, bar)
    done(5)
    import importlib

    from satcc.commands.output import RESULT_MODULES

    for name in RESULT_MODULES:  # what `satcc sim` imports in its thread
        importlib.import_module(name)
    from satcc import results

    done(6)
    from satcc.engines.meta import run_meta
    from satcc.scenario import expand_flows

    meta = run_meta("sim", handle.config)
    result = results.RunResult.from_engine(raw, handle.config, expand_flows(scenario), meta)
    done(7)
    out, _ = results.write_or_rescue(result, out)
    done(8)
    print(printable(result.table()))
    print(printable(f"results: {out}"), file=sys.stderr)
    done(9)
    gc.freeze()


def child() -> None:
    """A run of the phases, told by the environment: SIM_PHASES_STOP (the last phase),
    SIM_PHASES_FILE, SIM_PHASES_OUT; SIM_PHASES_MARKS prints each phase's (wall, cpu)."""
    marks = [(time.perf_counter(), time.process_time())]
    argv = ["sim", os.environ["SIM_PHASES_FILE"], "--out", os.environ["SIM_PHASES_OUT"]]
    run_phases([*argv, "--force"], int(os.environ["SIM_PHASES_STOP"]), marks)
    if os.environ.get("SIM_PHASES_MARKS"):
        import itertools

        steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(marks)]
        print(" ".join(f"{w:.6f},{c:.6f}" for w, c in steps), file=sys.stderr)


def main() -> int:
    import argparse
    import itertools
    import statistics
    import subprocess
    import tempfile

    from startup import instructions  # bench/cli/startup.py, beside this script

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=os.path.join(ROOT, CASE))
    ap.add_argument("--instructions", action="store_true", help="count under cachegrind")
    ap.add_argument("--runs", type=int, default=5, help="timed runs (without --instructions)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="satcc-phases-") as tmp:
        out = os.path.join(tmp, "out")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"SIM_PHASES_FILE": args.file, "SIM_PHASES_OUT": out, "SIM_PHASES_STOP": "99"}
        me = [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {HERE!r}); import sim_phases; sim_phases.child()",
        ]
        subprocess.run(me, env=env, check=True, capture_output=True)  # bytecode cache written
        if args.instructions:
            counts = [instructions([sys.executable, "-c", "pass"], env)]
            for n in range(1, 10):
                counts.append(
                    instructions(me, env | {"SIM_PHASES_STOP": str(n), "SIM_PHASES_EXIT": "1"})
                )
            entry = "from satcc.cli import entry; entry()"
            argv = ["sim", args.file, "--out", out, "--force"]
            counts.append(instructions([sys.executable, "-c", entry, *argv], env))
            steps = [counts[0], *(b - a for a, b in itertools.pairwise(counts))]
            total = counts[-1]
            print(f"{'phase':72} {'instructions':>13} {'share':>6}")
            for name, n in zip(PHASES, steps, strict=True):
                print(f"{name:72} {n / 1e6:11.1f} M {100 * n / total:5.1f} %")
            print(f"{'satcc sim, whole process':72} {total / 1e6:11.1f} M")
            return 0
        env["SIM_PHASES_MARKS"] = "1"
        runs = []
        for _ in range(args.runs):
            p = subprocess.run(me, env=env, check=True, capture_output=True)
            line = p.stderr.decode().strip().splitlines()[-1]
            runs.append([tuple(map(float, s.split(","))) for s in line.split()])
        print(f"{'phase (medians of ' + str(args.runs) + ' runs)':72} {'wall ms':>8} {'cpu ms':>7}")
        for i, name in enumerate(PHASES[1:10]):
            wall = statistics.median(r[i][0] for r in runs) * 1e3
            cpu = statistics.median(r[i][1] for r in runs) * 1e3
            print(f"{name:72} {wall:8.1f} {cpu:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
