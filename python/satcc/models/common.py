"""Shared pieces of the analytical models: the input error, the result record, input checks.

Every model in `satcc.models` takes plain numbers (SI units in the argument names: `rtt_s`,
`packet_bytes`, `wmax_pkts`) or numpy arrays of them (broadcast together, so a user can sweep the
loss rate in one call), and returns a `ModelResult`:

    model            registry name ("hybla", "pftk", ...)
    inputs           the inputs actually used, after defaults (rho, b, ...)
    throughput_bps   predicted throughput in bit/s (per element when inputs are arrays)
    transfer_time_s  predicted time to move `size_bytes`, or None for a steady-state prediction
    intermediate     the model's intermediate quantities under the paper's names (W, X, L, D ...)
                     so that a user can check them against the paper

Invalid inputs raise `ModelInputError` (a `ValueError` and a `satcc.errors.UserError`, so the
CLI exits with status 2 and the message) before any arithmetic: no model returns NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from satcc.errors import UserError

BITS_PER_BYTE = 8


class ModelInputError(UserError, ValueError):
    """An input outside the domain where a model's equations hold (p <= 0, R <= 0, W_m < 4 ...)."""


@dataclass
class ModelResult:
    """What every model returns; arrays when any input was an array, floats otherwise."""

    model: str
    inputs: dict[str, Any]
    throughput_bps: Any
    transfer_time_s: Any = None
    intermediate: dict[str, Any] = field(default_factory=dict)

    def element(self, index: int) -> ModelResult:
        """The scalar result of one element of a vectorised (1-D) call, e.g. one loss rate."""

        def pick(value: Any) -> Any:
            if isinstance(value, np.ndarray) and value.ndim > 0:
                return jsonable(value.reshape(-1)[index])
            return jsonable(value)

        return ModelResult(
            model=self.model,
            inputs={k: pick(v) for k, v in self.inputs.items()},
            throughput_bps=pick(self.throughput_bps),
            transfer_time_s=pick(self.transfer_time_s),
            intermediate={k: pick(v) for k, v in self.intermediate.items()},
        )

    def to_json_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (numpy scalars/arrays become floats/lists)."""
        return {
            "model": self.model,
            "inputs": {k: jsonable(v) for k, v in self.inputs.items()},
            "throughput_bps": jsonable(self.throughput_bps),
            "transfer_time_s": jsonable(self.transfer_time_s),
            "intermediate": {k: jsonable(v) for k, v in self.intermediate.items()},
        }


def jsonable(value: Any) -> Any:
    """numpy -> plain Python for json.dumps; other values unchanged."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def as_arrays(**named: Any) -> tuple[bool, dict[str, np.ndarray]]:
    """Broadcast the named inputs to float arrays of one shape.

    Returns (scalar, arrays): `scalar` is True when every input was a plain number, in which case
    the caller turns its outputs back into floats with `unwrap`.
    """
    scalar = all(np.ndim(v) == 0 for v in named.values())
    try:
        arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in named.values()))
    except (TypeError, ValueError) as exc:
        raise ModelInputError(f"model inputs are not numbers of compatible shapes: {exc}") from None
    out = {}
    for name, arr in zip(named, arrays, strict=True):
        if not np.all(np.isfinite(arr)):
            raise ModelInputError(f"{name} must be a finite number; got {_show(arr)}")
        out[name] = np.array(arr, dtype=float)  # writable copy
    return scalar, out


def unwrap(value: Any, scalar: bool) -> Any:
    """Back to a Python float (or bool/str) when the call was scalar; arrays otherwise."""
    if not scalar or value is None:
        return value
    arr = np.asarray(value)
    if arr.dtype == bool:
        return bool(arr)
    if arr.dtype.kind in "US":
        return str(arr)
    return float(arr)


def unwrap_all(values: dict[str, Any], scalar: bool) -> dict[str, Any]:
    return {k: unwrap(v, scalar) for k, v in values.items()}


def require(ok: np.ndarray | bool, name: str, rule: str, value: np.ndarray) -> None:
    """Raise ModelInputError("<name> must <rule>; got <offending values>") unless all ok."""
    ok_arr = np.asarray(ok, dtype=bool)
    if not np.all(ok_arr):
        bad = np.asarray(value)[~ok_arr] if np.ndim(value) else np.asarray(value)
        raise ModelInputError(f"{name} must {rule}; got {_show(bad)}")


def check_loss(p: np.ndarray, upper: float = 0.5) -> None:
    """0 < p < upper (the models divide by p and, for the handshake, by 1 - 2p)."""
    require((p > 0) & (p < upper), "loss probability p", f"be in (0, {upper:g})", p)


def check_positive(x: np.ndarray, name: str) -> None:
    require(x > 0, name, "be > 0", x)


def _show(arr: np.ndarray) -> str:
    flat = np.ravel(arr)
    if flat.size == 1:
        return f"{flat[0]:g}"
    shown = ", ".join(f"{v:g}" for v in flat[:5])
    return f"[{shown}{', ...' if flat.size > 5 else ''}]"
