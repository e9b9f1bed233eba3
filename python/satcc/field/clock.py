"""Starlink's reconfiguration clock on the host's wall clock, and whether that clock is synced.

The boundaries are the `starlink` link model's (crates/satcc-core/src/models/starlink.rs and
`EpochClock` in models/mod.rs): period 15 s, phase 12 s past the minute, so :12, :27, :42 and
:57 of every minute. The model counts from the run's wall-clock start past the minute
(`clock.start`); here the wall clock is Unix time (UTC, minutes start at multiples of 60 s), so
a boundary is every t with (t - PHASE) mod PERIOD = 0.

Sync: `chronyc -c tracking` when chrony runs (leap status, offset), else the kernel's NTP state
from adjtimex(2) with modes = 0 (read only, no privilege): TIME_ERROR or STA_UNSYNC means the
clock is not disciplined, and `maxerror` bounds its error.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import shutil
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

PERIOD_S = 15.0  # starlink.rs clock.period
PHASE_S = 12.0  # starlink.rs clock.phase: :12, :27, :42, :57
MAX_SYNC_ERROR_S = 0.1  # alignment refuses a clock whose error bound exceeds this
TIME_ERROR = 5  # adjtimex return: clock not synchronised
STA_UNSYNC = 0x0040
STA_NANO = 0x2000


def boundary_at_or_after(t: float) -> float:
    """The first boundary at or after Unix time `t`."""
    k = math.ceil((t - PHASE_S) / PERIOD_S - 1e-12)
    return PHASE_S + k * PERIOD_S


def aligned_start(now: float, offset_s: float) -> float:
    """The first instant >= now that is `offset_s` after a boundary."""
    return boundary_at_or_after(now - offset_s) + offset_s


def boundaries_between(t0: float, t1: float) -> list[float]:
    """Boundaries in [t0, t1]."""
    out = []
    b = boundary_at_or_after(t0)
    while b <= t1:
        out.append(b)
        b += PERIOD_S
    return out


@dataclass
class ClockStatus:
    source: str  # "chrony" | "adjtimex" | "none"
    synchronised: bool | None  # None: could not tell
    offset_s: float | None  # estimated offset from the reference (chrony) / adjtimex offset
    max_error_s: float | None
    detail: str

    def doc(self) -> dict[str, Any]:
        return asdict(self)

    def usable(self) -> bool:
        return bool(self.synchronised) and (
            self.max_error_s is None or self.max_error_s <= MAX_SYNC_ERROR_S
        )


def parse_chrony_tracking(text: str) -> ClockStatus | None:
    """`chronyc -c tracking`: ref id, name, stratum, ref time, system time offset (s), last
    offset, rms offset, frequency, residual freq, skew, root delay, root dispersion, update
    interval, leap status."""
    fields = text.strip().split(",")
    if len(fields) < 14:
        return None
    try:
        offset = float(fields[4])
        root_delay = float(fields[10])
        root_disp = float(fields[11])
    except ValueError:
        return None
    leap = fields[13].strip()
    synced = leap != "Not synchronised" and fields[2].strip() not in ("0", "")
    # chrony's bound on the clock's error: |offset| + root dispersion + root delay / 2
    bound = abs(offset) + root_disp + root_delay / 2
    return ClockStatus("chrony", synced, offset, bound, f"leap status {leap}")


class _Timex(ctypes.Structure):
    _fields_ = [
        ("modes", ctypes.c_uint),
        ("offset", ctypes.c_long),
        ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long),
        ("status", ctypes.c_int),
        ("constant", ctypes.c_long),
        ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long),
        ("tv_sec", ctypes.c_long),
        ("tv_usec", ctypes.c_long),
        ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long),
        ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long),
        ("jitcnt", ctypes.c_long),
        ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long),
        ("stbcnt", ctypes.c_long),
        ("tai", ctypes.c_int),
        ("_pad", ctypes.c_int * 11),
    ]


def from_adjtimex(state: int, status: int, offset: int, maxerror_us: int) -> ClockStatus:
    unsynced = state == TIME_ERROR or bool(status & STA_UNSYNC)
    scale = 1e-9 if status & STA_NANO else 1e-6
    return ClockStatus(
        "adjtimex",
        not unsynced,
        offset * scale,
        maxerror_us * 1e-6,
        f"state {state}, status 0x{status:04x}" + (" (STA_UNSYNC)" if status & STA_UNSYNC else ""),
    )


def adjtimex() -> ClockStatus | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name, use_errno=True)
    tx = _Timex()
    tx.modes = 0
    state = libc.adjtimex(ctypes.byref(tx))
    if state < 0:
        return None
    return from_adjtimex(state, tx.status, tx.offset, tx.maxerror)


def check() -> ClockStatus:
    """How far the host clock can be trusted (module doc)."""
    if shutil.which("chronyc"):
        try:
            p = subprocess.run(  # noqa: PLW1510 - the return code is read
                ["chronyc", "-c", "tracking"], capture_output=True, text=True, timeout=5
            )
            st = parse_chrony_tracking(p.stdout) if p.returncode == 0 else None
            if st is not None:
                return st
        except (OSError, subprocess.TimeoutExpired):
            pass
    st = adjtimex()
    if st is not None:
        return st
    return ClockStatus("none", None, None, None, "neither chronyc nor adjtimex answered")
