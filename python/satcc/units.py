"""Unit strings, parsed once at the edge: "600 ms", "20 Mbit/s", "1.5 MB", "0.3 %", "1 BDP".

The grammar lives in satcc-core (`crates/satcc-core/src/units.rs`: the table of accepted units
and the rule for bare numbers); these functions are its Python face, used by the scenario
loader, command-line flags, `--set`, campaign matrices and the Python API alike. Every parser
returns an exact integer in the base unit (nanoseconds, bit/s, bytes) or a float probability,
and raises `UnitError` (a `ValueError`) naming what it expected and what it found.

The rule for bare numbers: a duration or a rate needs a unit (except 0); a size without one is
bytes; a queue always needs one; a probability written as a number (TOML `loss = 0.003`, a
Python float) is a fraction, written as text (`"0.3"`, `--loss 0.3`) it needs "%" (except "0").
"""

from __future__ import annotations

from satcc import _native

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any

_C = _native.unit_constants()
NS_PER_S = 1_000_000_000
MAX_DURATION_NS: int = _C["MAX_DURATION_NS"]
MAX_RATE_BPS: int = _C["MAX_RATE_BPS"]
MAX_SIZE_BYTES: int = _C["MAX_SIZE_BYTES"]
MAX_PACKETS: int = _C["MAX_PACKETS"]
MAX_BDP: int = _C["MAX_BDP"]
MAX_EXPONENT: int = _C["MAX_EXPONENT"]
DESCRIBE_CHARS: int = _C["DESCRIBE_CHARS"]
DURATION_HINT: str = _C["DURATION_HINT"]
RATE_HINT: str = _C["RATE_HINT"]
SIZE_HINT: str = _C["SIZE_HINT"]
PROBABILITY_HINT: str = _C["PROBABILITY_HINT"]
QUEUE_HINT: str = _C["QUEUE_HINT"]
PACKETS_HINT: str = _C["PACKETS_HINT"]

# How messages show a found value: strings quoted, tables summarised, long values cut.
describe = _native.describe


class UnitError(ValueError):
    """A value that could not be read as the expected quantity."""

    def __init__(self, expected: str, found: Any, why: str | None = None):
        self.expected = expected
        self.found = found
        self.why = why
        text = f"expected {expected}, found {describe(found)}"
        if why:
            text += f" ({why})"
        super().__init__(text)


def _parse(kind: str, value: Any) -> Any:
    try:
        return _native.parse_unit(kind, value)
    except ValueError as e:
        expected, why = e.args
        raise UnitError(expected, value, why) from None


def parse_duration(value: Any) -> int:
    """A duration in integer nanoseconds: "600 ms", "1.5 s", "250us", "2 min"."""
    return _parse("duration", value)


def parse_rate(value: Any) -> int:
    """A rate in integer bit/s: "20 Mbit/s", "1 Gbit/s", "20Mbps", "20 MBit/s", "2 MB/s"."""
    return _parse("rate", value)


def parse_size(value: Any) -> int:
    """A size in integer bytes: "1448 B", "1.5 MB" (10^6), "64 KB" (10^3), "1 MiB", 65535."""
    return _parse("size", value)


def parse_probability(value: Any) -> float:
    """A probability in [0, 1]: 0.003 (a number), "0.3 %" (text needs the %), "0"."""
    return _parse("probability", value)


def parse_packets(value: Any) -> int:
    """A whole number of packets: "20 pkt" or 20."""
    return _parse("packets", value)


def parse_queue(value: Any) -> dict[str, int | float]:
    """A drop-tail limit: {"packets": n}, {"bytes": n} or {"bdp": x} (the resolver sizes BDP
    from the link rate and the base RTT of the routes through it)."""
    return _parse("queue", value)


# -- formatting for people (tables, messages); never parsed back ---------------------------


def _trim(x: float) -> str:
    text = f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"
    return text


def format_duration(ns: float) -> str:
    if ns == 0:
        return "0 s"
    for unit, scale in (("s", NS_PER_S), ("ms", 10**6), ("us", 10**3)):
        if abs(ns) >= scale:
            return f"{_trim(ns / scale)} {unit}"
    return f"{_trim(ns)} ns"


def format_rate(bps: float) -> str:
    for unit, scale in (("Gbit/s", 10**9), ("Mbit/s", 10**6), ("kbit/s", 10**3)):
        if abs(bps) >= scale:
            return f"{bps / scale:.2f} {unit}"
    return f"{bps:.0f} bit/s"


def format_size(nbytes: float) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes:.0f} B"


def format_queue(queue: dict[str, int | float]) -> str:
    if "packets" in queue:
        return f"{queue['packets']} pkt"
    if "bytes" in queue:
        return format_size(queue["bytes"])
    return f"{queue['bdp']:g} BDP"
