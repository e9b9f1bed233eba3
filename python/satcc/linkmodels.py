"""Link models, as the Python layer needs them: the files a `[link.model]` names, read on the
host, and the presets other commands show.

The `[link.model]` table (kinds, keys, cited presets, checks, per-direction resolution) is
read by satcc-core: one file per kind under `crates/satcc-core/src/models/`, holding the
kind's reader beside its behaviour (shared by the simulator and the emulator). That reader asks
this module for the files a model names (`mahimahi_info`, `delay_csv_info`: the host's file
limits and memory budget, then satcc-core's parser; `tle_geometry`: SGP4 in satcc.tle).
"""

from __future__ import annotations

import sys
from pathlib import Path

from satcc import _native, limits
from satcc.errors import UserError

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    import array
    from typing import Any

_PRESETS = _native.link_model_presets()
KINDS: tuple[str, ...] = tuple(_PRESETS["kinds"])
# (plan, role) -> capacity range (Mbit/s); role -> loss range; the within-epoch defaults
STARLINK_CAPACITY_MBPS: dict[tuple[str, str], tuple[int, int]] = {
    (plan, role): (lo, hi) for plan, role, lo, hi in _PRESETS["starlink_capacity_mbps"]
}
STARLINK_LOSS: dict[str, tuple[float, float]] = {
    role: (lo, hi) for role, (lo, hi) in _PRESETS["starlink_loss"].items()
}
STARLINK_INTRA: dict[str, Any] = _PRESETS["starlink_intra"]
STARLINK_PERIOD_NS: int = _PRESETS["starlink_period_ns"]
MAHIMAHI_BYTES: int = _PRESETS["mahimahi_bytes"]  # one delivery opportunity, mm-link(1)

# -- flows: tunnels and path MTU (the keys are read by satcc-core scenario/file.rs) ---------------
DEFAULT_MTU = 1500  # Ethernet
IP_TCP_TS_HEADERS = 52  # 20 IP + 20 TCP + 12 timestamp option


def fragments(mss: int, encap: int, mtu: int = DEFAULT_MTU, timestamps: bool = True) -> bool:
    """Whether a full segment travels as IP fragments: mss + headers + tunnel > MTU."""
    return mss + IP_TCP_TS_HEADERS - (0 if timestamps else 12) + encap > mtu


def model_keys(kind: str) -> list[str]:
    """The keys a `[link.model]` of this kind accepts (besides `kind`)."""
    return list(_PRESETS["keys"][kind])


def mahimahi_info(path: str | Path) -> dict[str, Any]:
    """A Mahimahi trace's `{"lines", "last_ms", "digest"}`: the path is checked here
    (satcc.limits: a regular file of at most 256 MiB), the file read by satcc-core's one parser
    (models/trace_file.rs: mm-link's rules, 8 B a line, once per process); ValueError naming the
    line, or before parsing when its lines need more memory than this process may still use,
    MemoryError when it does not fit."""
    path = Path(path)
    try:
        limits.check_file(path, "a Mahimahi trace", limits.MAX_TRACE_BYTES)
    except UserError as e:
        raise ValueError(str(e).removeprefix(f"{path}: ")) from None
    return _native.mahimahi_info(path, limits.available_memory_bytes())


def read_mahimahi(path: Path) -> array.array:
    """A Mahimahi trace's timestamps (ms) as an `array('Q')` (8 B a line; `numpy.asarray`
    takes it without a copy), read as `mahimahi_info` reads it."""
    import array  # here: a run's scenario reader needs neither array nor struct

    mahimahi_info(path)
    out = array.array("Q")
    out.frombytes(_native.mahimahi_stamps(path))
    if sys.byteorder != "little":
        out.byteswap()
    return out


def delay_csv_info(
    path: str | Path, default_loss: float, duration_ns: int | None = None
) -> dict[str, Any]:
    """A delay/loss CSV's `{"rows", "mean_delay_ns", "mean_loss", "digest"}`: rows
    `t_ms,delay_ms[,loss]` (a header line is skipped), read by satcc-core
    (models/trace_file.rs: 24 B a row, once per process); the means are weighted by time over
    [0, duration_ns) as the model applies the rows (`trace_file::series_time_mean`)."""
    path = Path(path)
    try:
        limits.check_file(path, "a delay/loss CSV", limits.MAX_TRACE_BYTES)
    except UserError as e:
        raise ValueError(str(e).removeprefix(f"{path}: ")) from None
    return _native.delay_csv_info(path, default_loss, duration_ns, limits.available_memory_bytes())


def read_delay_csv(path: Path, default_loss: float) -> list[tuple[int, int, float]]:
    """Rows `t_ms,delay_ms[,loss]` → [(t_ns, delay_ns, loss)], read as `delay_csv_info` reads
    them (for `satcc trace fit`)."""
    import struct

    delay_csv_info(path, default_loss)
    return list(struct.iter_unpack("<QQd", _native.delay_csv_rows(path, default_loss)))


def tle_geometry(*args: Any) -> tuple[tuple[int, int | None], ...]:
    """A TLE constellation's geometry (satcc.tle.read_geometry, imported only here: numpy,
    sgp4)."""
    from satcc import tle

    return tle.read_geometry(*args)
