"""What every scenario-running command shares: where results go by default, running an engine
from the registry, and writing and printing the result.

    satcc sim | run | emu | model FILE | try ──► run_and_write(engine, scenario, ...)
        ──► registry.get(engine): check_host, check_budget ──► .run(RunOptions) ──► write_and_print
"""

from __future__ import annotations

import importlib
import re
import sys
import threading
from pathlib import Path

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any

DEFAULT_OUT_ROOT = Path("out")
SAFE_NAME_CHARS = 100  # a directory name from a scenario name; longer ones end in a hash


def safe_name(name: str) -> str:
    """A scenario name as one path component (no separators, no leading dots, at most
    SAFE_NAME_CHARS characters: a longer name is cut and ends in 8 hex digits of its hash)."""
    out = re.sub(r"[^\w.-]+", "_", name, flags=re.ASCII).lstrip(".") or "scenario"
    if len(out) > SAFE_NAME_CHARS:
        from satcc.scenario.config import json_sha256

        digest = json_sha256(name)[:8]
        out = f"{out[: SAFE_NAME_CHARS - 9]}-{digest}"
    return out


TRY_OUT_PREFIX = "try-"  # `satcc try`'s default: out/try-<ccas>, never a scenario's out/<name>


def try_out(ccas: list[str]) -> Path:
    """`satcc try`'s default result directory: out/try-cubic-bbr (apart from `satcc sim`'s
    out/<scenario name>, even for a scenario named "try")."""
    return DEFAULT_OUT_ROOT / safe_name(TRY_OUT_PREFIX + "-".join(ccas))


def default_out(engine: str, scenario_name: str) -> Path:
    """out/<scenario name> for the simulator, out/<name>-model, out/<name>-emu (the engine's
    `out_suffix`): engines write beside, not over, each other."""
    from satcc import registry

    return DEFAULT_OUT_ROOT / f"{safe_name(scenario_name)}{registry.get(engine).out_suffix}"


def _held(out: Path) -> dict[str, Any] | None:
    """What a result directory holds: its summary's scenario, engine and flow names; None
    when `out` is missing or empty; {} when it holds files but no readable result."""
    import json

    from satcc.results import SUMMARY_FILE

    if not out.is_dir() or not any(out.iterdir()):
        return None
    try:
        doc = json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}
    flows = doc.get("flows") if isinstance(doc.get("flows"), list) else []
    return {
        "scenario": doc.get("scenario"),
        "engine": doc.get("engine"),
        "flows": [f.get("name") for f in flows if isinstance(f, dict)],
    }


def check_replace(out: Path, engine: str, scenario: Any, force: bool = False) -> None:
    """Refuse (UserError, before any work) to replace what `out` holds unless it is a result
    of the same scenario (its name and its flows' names) by the same engine, or `force`: a
    different run's result, or files that are not a result, are never replaced silently."""
    from satcc.errors import UserError
    from satcc.scenario.schema import expand_flows

    if force:
        return
    held = _held(out)
    if held is None:
        return
    mine = {
        "scenario": scenario.name,
        "engine": engine,
        "flows": [f.name for f in expand_flows(scenario)],
    }
    if held == mine:
        return

    def say(r: dict[str, Any]) -> str:
        return f"scenario {r['scenario']!r}, engine {r['engine']}, flows {', '.join(map(str, r['flows']))}"

    what = f"a result of another run ({say(held)})" if held else "files that are not a satcc result"
    raise UserError(
        f"--out {out}: holds {what}, not this run's ({say(mine)}); "
        "choose another --out, or --force to replace it"
    )


# What the end of a run needs: the result writer (satcc.results; no pyarrow since the Parquet
# writer is satcc's own, no table library since satcc.textgrid's tables are drawn natively)
RESULT_MODULES = ("satcc.results",)


def prefetch(modules: tuple[str, ...] = RESULT_MODULES) -> None:
    """Import `modules` in a thread while the engine runs (the simulator and the capture
    analyzer run without the GIL), so they are ready when the run ends: ~50 ms of imports off
    a short run's wall time. An import that fails here is left to the main thread's own."""

    def load() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - reported where the main thread imports it
                return

    if not all(name in sys.modules for name in modules):
        threading.Thread(target=load, name="satcc-prefetch", daemon=True).start()


def run_and_write(
    engine: str,
    scenario: Any,
    out: Path | None,
    *,
    seed: int | None = None,
    force: bool = False,
    as_json: bool = False,
    plot: bool = False,
    label: str | None = None,
    capture: bool = True,
    vpn_server: str | None = None,
    capture_points: tuple[str, ...] = (),
) -> int:
    """Run `scenario` (a validated Scenario) with the engine named `engine` into `out` (its
    default when None) and print it; the exit status. Checks come before any work: the result
    directory (what it holds is replaced only if it is a result of the same scenario by the
    same engine, or with `force`), the host (root for emu), the run's estimated cost (unless
    `force`)."""
    from satcc import registry
    from satcc.limits import check_out_dir
    from satcc.progress import ProgressBar

    eng = registry.get(engine)
    out = check_out_dir(out if out is not None else default_out(engine, scenario.name))
    check_replace(out, engine, scenario, force)
    eng.check_host()
    eng.check_budget(scenario, seed=seed, force=force)
    if label is None:
        label = scenario.name if engine == registry.DEFAULT else f"{scenario.name} ({engine})"
    prefetch(RESULT_MODULES)
    with ProgressBar(label=label) as bar:
        opts = registry.RunOptions(
            seed=seed,
            progress=bar,
            raw_dir=out,
            capture=capture,
            vpn_server=vpn_server,
            capture_points=capture_points,
        )
        result = eng.run(scenario, opts)
    return write_and_print(result, out, as_json=as_json, plot=plot)


def write_and_print(result: Any, out: Path, as_json: bool, plot: bool) -> int:
    """Write a RunResult and print it (table or JSON on stdout; notes, warnings and
    "results: DIR" on stderr). A result that cannot be written to `out` is written elsewhere
    and said so (exit 1): a computed result is never lost (satcc.results.write_or_rescue)."""
    from satcc.limits import json_printable, printable
    from satcc.results import write_or_rescue

    target = out
    out, why = write_or_rescue(result, out)
    if out == target and not plot:
        # an earlier run's figure (satcc.plot.DEFAULT_PNG, not imported: numpy), not this one's
        (out / "plot.png").unlink(missing_ok=True)
    if plot:
        from satcc.plot import DEFAULT_PNG, save

        save(result, out / DEFAULT_PNG)
    if as_json:
        sys.stdout.write(json_printable(result.to_json()))
    else:
        print(printable(result.table()))
        for m in result.meta.get("models", []):
            notes = "; ".join(m["notes"])
            print(
                f"  flow {m['id']}: {m['model']} model, p = {m['path']['p']:.4g}, "
                f"R = {m['path']['rtt_s'] * 1e3:.1f} ms, W_m = {m['path']['wmax_pkts']:.1f} "
                f"segments ({m['path']['wmax_limited_by']})" + (f"; {notes}" if notes else "")
            )
    own = result.meta.get(result.meta.get("engine"))  # an engine's own metadata (emu: "emu")
    for w in own.get("warnings", []) if isinstance(own, dict) else []:
        print(f"satcc: warning: {printable(w)}", file=sys.stderr)
    if why is not None:
        print(
            f"satcc: error: could not write the results where asked ({printable(why)}); "
            f"they are in {out}",
            file=sys.stderr,
        )
        return 1
    print(printable(f"results: {out}"), file=sys.stderr)
    return 0
