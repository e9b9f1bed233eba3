"""TLE input for `kind = "constellation"`: satellite positions from SGP4 instead of a Walker shell.

With `tle = "FILE"` a constellation link takes its satellites from a TLE file (standard 2-line
sets, optionally preceded by a name line: 3-line sets), propagates them with SGP4 (the PyPI
`sgp4` package, imported only here and only when a TLE is used), rotates the TEME positions to
Earth-fixed coordinates by Greenwich mean sidereal time, and applies the Walker model's rule
(crates/satcc-core/src/models/constellation.rs): at every reconfiguration
boundary (15 s, `phase` past each UTC minute) the terminal takes, among the satellites at or
above `min_elevation` seen from the terminal *and* from the gateway, the one highest in the
terminal's sky, and keeps it until the next boundary; none means an outage. One-way delay =
(|terminal - sat| + |sat - gateway|) / c + `extra_delay`, evaluated every `GEOMETRY_STEP` within
the slot (the satellite moves). satcc-core reads the keys (models/constellation.rs) and asks
`read_geometry` here (through satcc.linkmodels.tle_geometry). The result is handed to Rust as a `kind = "trace"` delay series
(`_native.pyi`), so the simulator and the emulator need nothing new.

| parameter | default | unit | source |
|---|---|---|---|
| tle | required | path, relative to the scenario file | NORAD two-line element format (CelesTrak "NORAD Two-Line Element Set Format") |
| epoch | the latest epoch in the file | UTC instant, ISO 8601 (`2026-11-22T10:00:00Z`) | the run's start |
| span | 1 h | duration | how long the series lasts; after it the last row holds (trace.rs) |
| terminal, gateway, min_elevation, phase, extra_delay, rate, loss | as the Walker model | | models/constellation.rs |
| GEOMETRY_STEP | 100 ms | | constellation.rs GEOMETRY_STEP |

Deviations, numbered:
1. TEME -> Earth-fixed by GMST alone (IAU-82, Vallado 2013 eq. 3-47, UT1 = UTC): no polar
   motion, no equation of the equinoxes (< 1.1 arcsec, ~40 m at 550 km: < 0.2 µs of delay).
2. Ground points on a sphere of radius 6371 km, as the Walker model (not WGS 84: the terminal
   sits up to ~21 km off, up to 70 µs of one-way delay at the poles, ~20 µs at 50°).
3. An outage is a row with loss 1 (every packet lost) and delay `extra_delay`; the Walker model
   instead sets the rate to 0 (packets wait in the queue). The trace kind has no rate-0 rows.
4. The series is finite (`span`); the scenario's duration is not known here, so a run longer
   than `span` keeps the last row's delay.
5. Satellites that SGP4 reports as decayed or in error at an instant are treated as not visible.

Not implemented: polar motion / UT1-UTC (no EOP data offline), ellipsoidal Earth, per-satellite
capacity, inter-satellite links.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from typing import Any

import numpy as np

from satcc.physics import EARTH_RADIUS_M, SPEED_OF_LIGHT_M_S
from satcc.units import NS_PER_S, UnitError

GEOMETRY_STEP_NS = (
    NS_PER_S // 10
)  # 100 ms, constellation.rs GEOMETRY_STEP: < 1 km of range change per step
TLE_LINE_CHARS = 69  # columns 1-69 of each element line (col 69 = checksum)
SECONDS_PER_DAY = 86_400.0
J2000_JD = 2451545.0  # JD of 2000-01-01 12:00 TT, the IAU-82 GMST origin


class TleError(ValueError):
    """A TLE file that cannot be read; the message names the line."""


def checksum(line: str) -> int:
    """NORAD TLE checksum: the digits of columns 1-68 summed, each '-' counting 1, modulo 10."""
    return sum(int(c) if c.isdigit() else (1 if c == "-" else 0) for c in line[:68]) % 10


def _element_line(n: int, line: str, number: str) -> str:
    s = line.rstrip()
    if len(s) < TLE_LINE_CHARS or not s.startswith(f"{number} "):
        raise TleError(
            f"line {n}: expected TLE line {number} (69 columns starting {number!r}), "
            f"found a line of {len(s)} characters that is not"
        )
    if not s[68].isdigit() or int(s[68]) != checksum(s):
        raise TleError(
            f"line {n}: expected checksum {checksum(s)} in column 69, found another character"
        )
    return s[:TLE_LINE_CHARS]


def parse_tle(text: str) -> list[tuple[str, str, str]]:
    """[(name, line 1, line 2)] from 2- or 3-line sets; raises TleError naming the line."""
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    out: list[tuple[str, str, str]] = []
    i = 0
    while i < len(lines):
        name = ""
        if not lines[i][1].startswith("1 "):  # a name line (3-line set)
            name = lines[i][1].strip().removeprefix("0 ")
            i += 1
        if i + 1 >= len(lines):
            n = lines[i][0] if i < len(lines) else lines[-1][0]
            raise TleError(
                f"line {n}: expected lines 1 and 2 of a TLE set, found the end of the file"
            )
        l1 = _element_line(lines[i][0], lines[i][1], "1")
        l2 = _element_line(lines[i + 1][0], lines[i + 1][1], "2")
        if l1[2:7] != l2[2:7]:
            raise TleError(
                f"line {lines[i + 1][0]}: expected the catalog number of line 1, found another"
            )
        out.append((name or l1[2:7].strip(), l1, l2))
        i += 2
    if not out:
        raise TleError("expected at least one TLE set, found none")
    return out


def parse_epoch(v: Any) -> tuple[float, float]:
    """An ISO 8601 UTC instant ("2026-11-22T10:00:00Z") as (whole Julian date, day fraction)."""
    what = "a UTC instant like '2026-11-22T10:00:00Z'"
    if not isinstance(v, str):
        raise UnitError(what, v)
    try:
        t = dt.datetime.fromisoformat(v.strip())
    except ValueError:
        raise UnitError(what, v) from None
    if t.tzinfo is None:
        raise UnitError(what + " (with Z or an offset)", v)
    t = t.astimezone(dt.UTC)
    day = dt.datetime(t.year, t.month, t.day, tzinfo=dt.UTC)
    jd = day.toordinal() + 1721424.5  # proleptic Gregorian ordinal 1 = JD 1721425.5 at 00:00
    return jd, (t - day).total_seconds() / SECONDS_PER_DAY


def gmst_rad(jd: float, fr: float) -> float:
    """Greenwich mean sidereal time (IAU-82; Vallado 2013 eq. 3-47), UT1 taken as UTC."""
    t = ((jd - J2000_JD) + fr) / 36525.0  # Julian centuries of UT1 since J2000
    seconds = (
        67310.54841
        + (876600.0 * 3600.0 + 8640184.812866) * t
        + 0.093104 * t * t
        - 6.2e-6 * t * t * t
    )  # eq. 3-47, in seconds of time
    return math.radians((seconds % SECONDS_PER_DAY) / 240.0)  # 240 s of time = 1 degree


def teme_to_ecef(r_km: np.ndarray, jd: np.ndarray, fr: np.ndarray) -> np.ndarray:
    """TEME positions (..., 3) in km at (jd, fr) to Earth-fixed metres: R3(GMST) (deviation 1)."""
    theta = np.array([gmst_rad(a, b) for a, b in zip(np.ravel(jd), np.ravel(fr), strict=True)])
    c, s = np.cos(theta), np.sin(theta)
    x, y, z = r_km[..., 0], r_km[..., 1], r_km[..., 2]
    return np.stack([c * x + s * y, -s * x + c * y, z], axis=-1) * 1000.0


def ground_m(lat_deg: float, lon_deg: float) -> np.ndarray:
    """An Earth-fixed point on the sphere of radius EARTH_RADIUS_M (deviation 2)."""
    phi, lam = math.radians(lat_deg), math.radians(lon_deg)
    return EARTH_RADIUS_M * np.array(
        [math.cos(phi) * math.cos(lam), math.cos(phi) * math.sin(lam), math.sin(phi)]
    )


def elevation_deg(g: np.ndarray, sat: np.ndarray) -> np.ndarray:
    """sin e = (s - g)·ĝ / |s - g| (constellation.rs `look`), for sat of shape (..., 3)."""
    d = sat - g
    up = (d @ g) / (np.linalg.norm(d, axis=-1) * np.linalg.norm(g))
    return np.degrees(np.arcsin(np.clip(up, -1.0, 1.0)))


def satellites(sets: list[tuple[str, str, str]]) -> list[Any]:
    from sgp4.api import WGS72, Satrec  # lazily: only TLE users need sgp4

    # WGS 72 constants: the ones the TLEs are fitted with (Vallado et al. 2006, "Revisiting
    # Spacetrack Report #3", §"Gravitational constants").
    return [Satrec.twoline2rv(l1, l2, WGS72) for _, l1, l2 in sets]


def latest_epoch(sats: list[Any]) -> tuple[float, float]:
    """The latest TLE epoch in the set, as (whole JD, fraction)."""
    best = max(sats, key=lambda s: s.jdsatepoch + s.jdsatepochF)
    return best.jdsatepoch, best.jdsatepochF


def slot_starts_ns(start_ns: int, phase_ns: int, period_ns: int, span_ns: int) -> list[int]:
    """Run-relative starts of the slots (reconfiguration `period_ns`) overlapping [0, span):
    epoch_start_ns in models/mod.rs."""
    first = (phase_ns - start_ns) % period_ns
    k0 = -1 if first > 0 else 0
    return [first + k * period_ns for k in range(k0, math.ceil((span_ns - first) / period_ns))]


@functools.lru_cache(maxsize=8)
def geometry(
    text: str,
    terminal: tuple[float, float],
    gateway: tuple[float, float],
    min_el: float,
    phase_ns: int,
    period_ns: int,
    epoch: tuple[float, float] | None,
    span_ns: int,
) -> tuple[tuple[int, int | None], ...]:
    """((t_ns, propagation delay ns or None for an outage), ...) over [0, span): the satellite
    serving each slot of `period_ns` from `phase_ns` past the UTC minute (module doc)."""
    from sgp4.api import SatrecArray

    sats = satellites(parse_tle(text))
    jd0, fr0 = epoch if epoch is not None else latest_epoch(sats)
    start_ns = round((fr0 * SECONDS_PER_DAY % 60.0) * NS_PER_S)  # seconds past the UTC minute
    u, g = ground_m(*terminal), ground_m(*gateway)
    slots = slot_starts_ns(start_ns, phase_ns, period_ns, span_ns)
    fr_slots = fr0 + np.array(slots, dtype=float) / (NS_PER_S * SECONDS_PER_DAY)
    jd_slots = np.full(len(slots), jd0)
    err, r_km, _ = SatrecArray(sats).sgp4(jd_slots, fr_slots)  # (sat, slot, 3), TEME km
    pos = teme_to_ecef(r_km, jd_slots, fr_slots)
    el_u, el_g = elevation_deg(u, pos), elevation_deg(g, pos)
    ok = (err == 0) & (el_u >= min_el) & (el_g >= min_el)  # deviation 5; visible from both ends
    rows: list[tuple[int, int | None]] = []
    for k, e in enumerate(slots):
        end = min(e + period_ns, span_ns)
        steps = [e + j * GEOMETRY_STEP_NS for j in range(math.ceil((end - e) / GEOMETRY_STEP_NS))]
        steps = [t for t in steps if t + GEOMETRY_STEP_NS > 0]  # the step containing 0 onwards
        if not ok[:, k].any():
            rows.extend((max(t, 0), None) for t in steps)
            continue
        best = int(
            np.argmax(np.where(ok[:, k], el_u[:, k], -np.inf))
        )  # highest in the terminal's sky
        fr = fr0 + np.array(steps, dtype=float) / (NS_PER_S * SECONDS_PER_DAY)
        jd = np.full(len(steps), jd0)
        e2, r2, _ = sats[best].sgp4_array(jd, fr)
        p = teme_to_ecef(r2, jd, fr)
        metres = np.linalg.norm(p - u, axis=-1) + np.linalg.norm(p - g, axis=-1)
        for t, m, bad in zip(steps, metres, e2, strict=True):
            rows.append((max(t, 0), None if bad else round(m / SPEED_OF_LIGHT_M_S * NS_PER_S)))
    return tuple(rows)


def read_geometry(
    path: str,
    name: str,
    epoch: Any,
    terminal: tuple[float, float],
    gateway: tuple[float, float],
    min_el: float,
    phase_ns: int,
    period_ns: int,
    span_ns: int,
) -> tuple[tuple[int, int | None], ...]:
    """`geometry` for a constellation's TLE file as satcc-core's `[link.model]` reader asks for
    it (models/table.rs `ModelFiles::tle`: the keys already read and checked there; `name` is
    the file as the table writes it). A problem raises ValueError((key, message))."""
    from pathlib import Path

    from satcc import limits
    from satcc.errors import UserError

    p = Path(path)
    try:
        when = None if epoch is None else parse_epoch(epoch)
    except UnitError as e:
        raise ValueError(("epoch", str(e))) from None
    found = f"expected a TLE file of 2- or 3-line sets, found {name!r}"
    try:
        text = limits.read_text(p, "a TLE file", limits.MAX_TRACE_BYTES)
        parse_tle(text)
    except UserError as e:
        raise ValueError(("tle", f"{found}: {str(e).removeprefix(f'{p}: ')}")) from None
    except TleError as e:
        raise ValueError(("tle", f"{found}: {e}")) from None
    try:
        return geometry(
            text, tuple(terminal), tuple(gateway), min_el, phase_ns, period_ns, when, span_ns
        )
    except ImportError:
        raise ValueError(
            ("tle", "expected the sgp4 package (pip install sgp4), found it missing")
        ) from None
