"""The engine config: `spec()` (the resolver's input), `resolve()` (satcc-core's resolver on
it, the form every engine runs, made once per run), the receive window asked of the
simulator's accounting, and the scenario hash."""

from __future__ import annotations

import json

from satcc import _native
from satcc.errors import UserError
from satcc.scenario.messages import ScenarioError
from satcc.scenario.schema import MAX_SEED, Scenario

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any

# The receive buffer's accounting is the simulator's (crates/satcc-sim/src/tcp/receiver/),
# asked through the native module: the packet's `skb->truesize`, the full-segment
# `scaling_ratio`, the buffer that offers a fixed window, the largest window offered.
rx_truesize = _native.rx_truesize
scaling_ratio = _native.scaling_ratio
fixed_rcvbuf_bytes = _native.fixed_rcvbuf_bytes


def receive_window_bytes(flow: dict[str, Any]) -> int:
    """The largest window a resolved flow's receiver offers (deviation 2)."""
    return _native.receive_window_bytes(
        int(flow["rwnd_bytes"]),
        flow["mss"],
        flow["timestamps"],
        flow.get("rcvbuf_autotune", True),
        flow["window_scaling"],
    )


def resolve(s: Scenario, seed_override: int | None = None) -> dict[str, Any]:
    """The resolved scenario every engine takes (`_native.pyi` RESOLVED): satcc-core's one
    resolver checks the scenario as the simulator would and adds `routes` (paths, each
    direction's largest crossing RTT, what sizes an "N BDP" queue)."""
    return resolved(s, seed_override).config


def resolved(s: Scenario, seed_override: int | None = None) -> _native.Resolved:
    """`resolve`'s result as the native module keeps it: `run_sim` runs it as it is (no second
    resolve), `.config` is the RESOLVED dictionary."""
    _check_seed(seed_override)
    try:
        return s._file.resolve(seed_override)
    except (ValueError, OverflowError, KeyError) as e:
        text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        key, sep, why = text.partition(": ")
        if not why.startswith("expected "):
            why = f"expected a value the simulator accepts, found one it refuses: {why}"
        issue = (
            (key, why)
            if sep and " " not in key
            else ("", f"the simulator refuses the scenario: {e}")
        )
        raise ScenarioError(s.source, [issue]) from None


def spec(s: Scenario, seed_override: int | None = None) -> dict[str, Any]:
    """The resolver's input (`_native.pyi` SCENARIO): integers in ns, bit/s, bytes; defaults
    filled; `count` expanded; nodes as indices."""
    _check_seed(seed_override)
    return s._file.spec(seed_override)


def _check_seed(seed: int | None) -> None:
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise UserError(f"--seed: expected an integer in 0..2^64-1, found {seed}")


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, ASCII, no NaN: the same object always gives the same text."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def json_sha256(obj: Any) -> str:
    """The sha256 (hex) of `obj`'s canonical JSON: a resolved scenario's hash, a campaign
    run's id (the native module's sha256, as satcc.results.file_sha256's)."""
    return _native.Sha256(canonical_json(obj).encode("ascii")).hexdigest()


_PATH_KEYS = ("mahimahi_path", "delay_csv_path")  # files that count by their digests


def scenario_hash(config: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a resolved config, without its seed (replicates of a
    scenario share the hash; the seed is recorded beside it) and without its routes (derived
    from the rest). A trace file counts by its contents (`opportunities_digest`), not by
    where it lies (`mahimahi_path`), and so does a delay CSV (`series_digest`,
    `delay_csv_path`)."""
    unseeded = {k: v for k, v in config.items() if k not in ("seed", "routes")}
    if "links" in unseeded:
        unseeded["links"] = [
            {
                k: (
                    {**d, "model": {m: x for m, x in d["model"].items() if m not in _PATH_KEYS}}
                    if isinstance(d, dict) and isinstance(d.get("model"), dict)
                    else d
                )
                for k, d in link.items()
            }
            for link in unseeded["links"]
        ]
    return json_sha256(unseeded)
