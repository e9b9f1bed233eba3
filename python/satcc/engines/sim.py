"""The `sim` engine: a resolved scenario through the Rust packet simulator (`_native.run_sim`).

The simulator is deterministic: the same scenario and seed give the same RunResult, and so the
same bytes on disk (satcc.results). Progress, if asked for, goes to a callback; the CLI passes a
`satcc.progress.ProgressBar`.
"""

from __future__ import annotations

from collections.abc import Callable

from satcc import __version__, _native
from satcc.errors import SatccError, UserError
from satcc.results import SCHEMA_VERSION, RunResult
from satcc.scenario import Scenario, expand_flows, resolve, scenario_hash

ENGINE = "sim"


def available() -> bool:
    """Whether this build of the native module carries the simulator."""
    return hasattr(_native, "run_sim")


def run(
    scenario: Scenario,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> RunResult:
    """Simulate `scenario` (with `seed` instead of its own, if given) and return the result."""
    config = resolve(scenario, seed_override=seed)
    if not available():
        raise SatccError("this build of satcc has no simulator (satcc._native.run_sim is "
                         "missing); rebuild it with `make build`")
    try:
        raw = _native.run_sim(config, progress)
    except ValueError as e:
        raise UserError(f"{scenario.source}: the simulator rejected the scenario: {e}") from None
    meta = {
        "schema_version": SCHEMA_VERSION,
        "satcc_version": __version__,
        "native_version": _native.version(),
        "engine": ENGINE,
        "scenario": config["name"],
        "scenario_hash": scenario_hash(config),
        "seed": config["seed"],
    }
    return RunResult.from_engine(raw, config, expand_flows(scenario), meta)
