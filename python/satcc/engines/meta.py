"""The run metadata every scenario engine puts in its result (`RunResult.meta`, summary.json's
head: docs/results.md)."""

from __future__ import annotations

from satcc import _native
from satcc.scenario import scenario_hash

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any


def run_meta(
    engine: str, config: dict[str, Any], *, native_version: bool = True, **extra: Any
) -> dict[str, Any]:
    """schema_version, satcc_version (and native_version), engine, scenario, scenario_hash and
    seed of a run of the resolved `config`, then `extra` (the engine's own keys), in that order."""
    # imported only now: the CLI imports satcc.results in a thread while the simulation runs
    # (satcc.commands.output.prefetch)
    from satcc.results import SCHEMA_VERSION

    meta: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "satcc_version": _native.version()}
    if native_version:
        meta["native_version"] = _native.version()
    meta.update(
        engine=engine,
        scenario=config["name"],
        scenario_hash=scenario_hash(config),
        seed=config["seed"],
    )
    meta.update(extra)
    return meta
