"""Unit strings, parsed once at the edge: "600 ms", "20 Mbit/s", "1.5 MB", "0.3 %", "1 BDP".

Every parser returns an exact integer in the base unit (nanoseconds, bit/s, bytes) or a
float probability, and raises `UnitError` (a `ValueError`) naming what it expected and what it
found. Numbers are read as decimals (not binary floats), so "1.1 s" is exactly 1_100_000_000 ns;
a value that is not a whole number of base units ("0.5 ns", "0.1 B") is an error, not rounded.

| quantity    | base unit | accepted units                                                     |
|-------------|-----------|--------------------------------------------------------------------|
| duration    | ns        | ns, us (µs), ms, s, min, h; a bare number only for 0                |
| rate        | bit/s     | bit/s, bps, b/s with k, M, G, T (×10³ⁿ) or Ki, Mi, Gi (×2¹⁰ⁿ);      |
|             |           | B/s (bytes/s, ×8) with the same prefixes; a bare number is bit/s    |
| size        | bytes     | B, kB = KB (10³), MB (10⁶), GB (10⁹), TB; KiB (2¹⁰), MiB (2²⁰), GiB, |
|             |           | TiB; a bare integer is bytes                                        |
| probability | 1         | a number in [0, 1] ("1e-4", 0.003) or a percentage ("0.3 %")        |
| queue limit | -         | "N pkt" (packets), a size ("1.5 MB"), or "x BDP" (resolved by the   |
|             |           | simulator from the flows' route: rate x base RTT)                   |

Decimal vs binary prefixes follow what network people expect: rates and sizes written with SI
prefixes (k, M, G) are powers of ten, as in "20 Mbit/s" and "1.5 MB"; write KiB/MiB/GiB for powers
of two. Rate prefixes are case-insensitive ("20 mbps" is 20 Mbit/s; milli-bits make no sense),
but the b/B distinction is not: b is bits, B is bytes.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

NS_PER_S = 1_000_000_000

_NUMBER = r"[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_VALUE_RE = re.compile(rf"^\s*({_NUMBER})\s*(.*?)\s*$")

_DURATION_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": NS_PER_S,
    "sec": NS_PER_S,
    "min": 60 * NS_PER_S,
    "h": 3600 * NS_PER_S,
}

_SI = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}

_SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "byte": 1,
    "bytes": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}

_PACKET_UNITS = {"pkt", "pkts", "packet", "packets", "p"}

# Upper bounds (docs/reliability.md): what the simulator's u64 arithmetic handles with room to
# spare, and far beyond any satellite or terrestrial path.
MAX_DURATION_NS = 366 * 86_400 * NS_PER_S  # one year
MAX_RATE_BPS = 10**13  # 10 Tbit/s
MAX_SIZE_BYTES = 2**50  # 1 PiB
MAX_PACKETS = 10**9
MAX_BDP = 10**6

DURATION_HINT = "a duration like '600 ms' or '1.5 s' (units: ns, us, ms, s, min, h)"
RATE_HINT = "a rate like '20 Mbit/s', '1 Gbit/s' or '500 kbit/s' (bare numbers are bit/s)"
SIZE_HINT = "a size like '1448 B', '1.5 MB' or '1 MiB' (bare integers are bytes)"
PROBABILITY_HINT = "a probability in [0, 1] like 1e-4 or '0.3 %'"
QUEUE_HINT = "a queue limit like '1000 pkt', '1.5 MB' or '1 BDP'"
PACKETS_HINT = "a packet count like '20 pkt' (or a bare integer)"


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


DESCRIBE_CHARS = 60  # a found value longer than this is cut in messages


def describe(value: Any) -> str:
    """How a found value is shown in error messages: strings quoted, tables summarised, long
    values cut (a 5,000-character name or a 400-digit number stays one readable line)."""
    text = _describe(value)
    return (
        text
        if len(text) <= DESCRIBE_CHARS
        else f"{text[: DESCRIBE_CHARS - 12]}… ({len(text)} chars)"
    )


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)


def _split(value: Any, expected: str) -> tuple[Decimal, str]:
    """Split a TOML value into (number, unit). Numbers come back with an empty unit."""
    if isinstance(value, bool):
        raise UnitError(expected, value)
    if isinstance(value, int):
        return Decimal(value), ""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnitError(expected, value)
        number = Decimal(repr(value))
        _exponent_in_range(number, expected, value)
        return number, ""
    if not isinstance(value, str):
        raise UnitError(expected, value)
    m = _VALUE_RE.match(value)
    if not m:
        raise UnitError(expected, value)
    try:
        number = Decimal(m.group(1).replace("_", ""))
    except InvalidOperation:  # pragma: no cover - the regex admits only valid decimals
        raise UnitError(expected, value) from None
    _exponent_in_range(number, expected, value)
    return number, m.group(2)


# A number whose decimal exponent is beyond this is refused before any arithmetic on it:
# Decimal's context overflows at 10^999999 ("1e999999999 %" / 100), and every limit above is
# far inside 10^±30.
MAX_EXPONENT = 100


def _exponent_in_range(number: Decimal, expected: str, found: Any) -> None:
    if number and abs(number.adjusted()) > MAX_EXPONENT:
        raise UnitError(expected, found, f"a number beyond 10^±{MAX_EXPONENT}")


def _at_most(number: Decimal, scale: int, limit: int, expected: str, found: Any, text: str) -> None:
    """Refuse number x scale above `limit` before any arithmetic on it (no huge integers)."""
    if number.adjusted() > 20 or number * scale > limit:
        raise UnitError(expected, found, f"above the limit of {text}")


def _whole(x: Decimal, expected: str, found: Any, unit: str) -> int:
    if x != x.to_integral_value():
        raise UnitError(expected, found, f"not a whole number of {unit}")
    return int(x)


def _non_negative(x: Decimal, expected: str, found: Any) -> None:
    if x < 0:
        raise UnitError(expected, found, "negative")


def parse_duration(value: Any) -> int:
    """A duration in integer nanoseconds: "600 ms", "1.5 s", "250us", "2 min"."""
    number, unit = _split(value, DURATION_HINT)
    if unit == "":
        if number == 0:
            return 0
        raise UnitError(DURATION_HINT, value, "a bare number needs a unit")
    scale = _DURATION_UNITS.get(unit)
    if scale is None:
        raise UnitError(DURATION_HINT, value, f"unknown unit {unit!r}")
    _non_negative(number, DURATION_HINT, value)
    _at_most(number, scale, MAX_DURATION_NS, DURATION_HINT, value, "one year")
    return _whole(number * scale, DURATION_HINT, value, "nanoseconds")


def _prefix_scale(prefix: str) -> int | None:
    p = prefix.lower()
    if p in _SI:
        return _SI[p]
    if p in _BINARY:
        return _BINARY[p]
    return None


_RATE_RE = re.compile(r"^([a-zA-Z]{0,2}?)(bit/s|bits/s|bps|b/s|B/s)$")


def parse_rate(value: Any) -> int:
    """A rate in integer bit/s: "20 Mbit/s", "1 Gbit/s", "20Mbps", "500 kbit/s", 1e6, "2 MB/s"."""
    number, unit = _split(value, RATE_HINT)
    if unit == "":
        scale = 1
    else:
        m = _RATE_RE.match(unit)
        scale = _prefix_scale(m.group(1)) if m else None
        if m is None or scale is None:
            raise UnitError(RATE_HINT, value, f"unknown unit {unit!r}")
        if m.group(2) == "B/s":
            scale *= 8
    _non_negative(number, RATE_HINT, value)
    _at_most(number, scale, MAX_RATE_BPS, RATE_HINT, value, "10 Tbit/s")
    return _whole(number * scale, RATE_HINT, value, "bit/s")


def parse_size(value: Any) -> int:
    """A size in integer bytes: "1448 B", "1.5 MB" (10^6), "64 KB" (10^3), "1 MiB" (2^20), 65535."""
    number, unit = _split(value, SIZE_HINT)
    if unit == "":
        scale = 1
    else:
        scale = _SIZE_UNITS.get(unit)
        if scale is None:
            why = f"unknown unit {unit!r}"
            if unit.endswith("b") or unit.lower().endswith("bit"):
                why += "; sizes are in bytes: write B, not b"
            elif unit.lower() in _PACKET_UNITS:
                why += "; packets are not a size here"
            raise UnitError(SIZE_HINT, value, why)
    _non_negative(number, SIZE_HINT, value)
    _at_most(number, scale, MAX_SIZE_BYTES, SIZE_HINT, value, "1 PiB")
    return _whole(number * scale, SIZE_HINT, value, "bytes")


def parse_probability(value: Any) -> float:
    """A probability in [0, 1]: 0.003, "1e-4", "0.3 %"."""
    number, unit = _split(value, PROBABILITY_HINT)
    if unit == "%":
        number = number / 100
    elif unit != "":
        raise UnitError(PROBABILITY_HINT, value, f"unknown unit {unit!r}")
    if number < 0 or number > 1:
        raise UnitError(PROBABILITY_HINT, value, "out of range")
    return float(number)


def parse_packets(value: Any) -> int:
    """A whole number of packets: "20 pkt" or 20."""
    number, unit = _split(value, PACKETS_HINT)
    if unit != "" and unit.lower() not in _PACKET_UNITS:
        raise UnitError(PACKETS_HINT, value, f"unknown unit {unit!r}")
    _non_negative(number, PACKETS_HINT, value)
    _at_most(number, 1, MAX_PACKETS, PACKETS_HINT, value, f"{MAX_PACKETS:,} packets")
    return _whole(number, PACKETS_HINT, value, "packets")


def parse_queue(value: Any) -> dict[str, int | float]:
    """A drop-tail limit: {"packets": n}, {"bytes": n} or {"bdp": x} (the simulator resolves BDP
    from the link rate and the base RTT of the routes through it)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise UnitError(QUEUE_HINT, value, "a bare number needs a unit: pkt, B/MB or BDP")
    number, unit = _split(value, QUEUE_HINT)
    if unit.lower() in _PACKET_UNITS:
        _at_most(number, 1, MAX_PACKETS, QUEUE_HINT, value, f"{MAX_PACKETS:,} packets")
        n = _whole(number, QUEUE_HINT, value, "packets")
        if n < 1:
            raise UnitError(QUEUE_HINT, value, "a queue holds at least 1 packet")
        return {"packets": n}
    if unit.lower() == "bdp":
        if number <= 0:
            raise UnitError(QUEUE_HINT, value, "must be positive")
        _at_most(number, 1, MAX_BDP, QUEUE_HINT, value, f"{MAX_BDP:,} BDP")
        return {"bdp": float(number)}
    try:
        n = parse_size(value)
    except UnitError:
        raise UnitError(QUEUE_HINT, value, f"unknown unit {unit!r}") from None
    if n < 1:
        raise UnitError(QUEUE_HINT, value, "a queue holds at least 1 byte")
    return {"bytes": n}


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
