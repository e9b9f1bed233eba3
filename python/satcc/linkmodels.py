"""Time-varying link behaviours: the `[link.model]` table, its cited presets, and its resolution.

A `[[link]]` may carry a `[link.model]` table with `kind = "starlink" | "geo" | "lfn" | "trace" |
"constellation"`. The behaviour itself lives in Rust (`crates/satcc-core/src/models/`, one file
per kind, shared by the simulator and the emulator); this module holds the presets (every number
cited), checks the model table's keys, and resolves them into one dictionary per direction (the
"MODEL" of `_native.pyi`) plus the direction's *nominal* rate, delay and loss, which routing,
"N BDP" queues and the analytical engine use. The scenario loader calls `resolve_model` once per
link and hands the result to satcc-core's reader (`scenario/file.rs`), which checks the rest of
the link (no `rate`/`delay`/`loss` beside a model; `queue` and `ecn_threshold` still apply).

Every direction-specific key `X` has an `X_ba` twin for the b→a direction, defaulting to `X`
(asymmetric links on every kind). With a model, the link's own `rate`, `delay` and `loss` keys
are not allowed (the model sets them); `queue` and `ecn_threshold` still are, and a model may
supply the default queue (Starlink's deep dish-side buffer, the PCC preset's 1500 packets).

Sources (shared/research/satellite-facts.md, tags as there: [V] verified, [F] read off a figure,
[D] derived):
- Starlink reconfiguration every 15 s at :12/:27/:42/:57 (§1.4 [V]).
- Starlink idle RTT: min 20, p25 40, median 50, p75 60 ms (Michel et al. IMC'22 [V]); upper end
  85 ms (Mohan et al. WWW'24 whiskers ≈15-85 ms [F]).
- Plan capacities (starlink.com DOC-1075-86535-76 [V]): Residential 50-150 down / 5-25 up (DE);
  business = Priority 40-220 down / 8-25 up (ES table) widened to 30 up by Local Priority 10-30
  (DE): 40-220 down / 8-30 up.
- Loss: uplink 0.2-0.5 %, downlink 0.01 % (LeoCC/LeoReplayer README [V]).
- Boundary disturbance ≈140 ms (arXiv 2601.08439 [V]) → 50-150 ms (§5 [D]); loss bursts up to
  50 % (Kassem et al. IMC'22 [V]); outage vs burst share not measured (§1.6: "to calibrate").
- Bufferbloat: 150-200 ms standing queue downlink, 50-150 ms uplink under load (§1.3/§5 [F, D]).
- GEO: slant-range propagation 477-556 ms RTT (§2.1 [D]); PCC/Pantheon emulator 42 Mbit/s,
  400 ms one way, 0.74 % uplink loss, 1500-packet droptail (JerryLX/pantheon [V]).
- LFN: study 003's router hop dropping above 300-330 Mbit/s (papers/README.md §003).
- Constellation: Starlink shell 1 = 550 km, 53°, 72 planes x 22 (§1.1), min elevation
  25° (§1.1 [V] Huston), extra one-way delay 10 ms [D] from the dish→GS RTT of ≈35 ms near 0 km
  (Mohan et al. [F]) minus the 7-15 ms geometric floor.
"""

from __future__ import annotations

import array
import itertools
import os
import re
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from satcc import _native, limits
from satcc.errors import UserError
from satcc.physics import SPEED_OF_LIGHT_M_S
from satcc.units import (
    UnitError,
    describe,
    parse_duration,
    parse_probability,
    parse_rate,
    parse_size,
)

KINDS = ("starlink", "geo", "lfn", "trace", "constellation")
MS = 1_000_000  # ns
MAX_TRACE_MS = 366 * 86_400_000  # a trace time or delay: one year (trace_file::MAX_TRACE_MS)
S = 1_000_000_000  # ns

# -- Starlink presets (sources in the module docstring) ----------------------------------------
STARLINK_PERIOD_NS = 15 * S  # reconfiguration period, facts §1.4 [V]
STARLINK_PHASE_NS = 12 * S  # boundaries at :12, :27, :42, :57, facts §1.4 [V]
STARLINK_RTT_QUANTILES_MS = (20, 40, 50, 60, 85)  # p0, p25, p50, p75, p100: Michel [V], Mohan [F]
STARLINK_CAPACITY_MBPS = {
    ("residential", "uplink"): (5, 25),  # DOC-1075-86535-76 DE, Residential [V]
    ("residential", "downlink"): (50, 150),  # same [V]
    ("business", "uplink"): (8, 30),  # Priority ES 8-25 / Local Priority DE 10-30 [V]
    ("business", "downlink"): (40, 220),  # Priority ES 40-220 [V]
    # Roam: residential's range x the Roam / Standard ratio of mean 1 s iperf3 throughput from
    # one dish site, Laniewski et al. OJCOMS'25 (sys-uos/Starlink-on-the-Autobahn@2eec78c,
    # Analysis_Fig6ab.ipynb's printed output, CC BY-SA 4.0): down 245.2 / 279.6 = 0.877, up
    # 18.25 / 22.89 = 0.797 [D]; their RTT and loss do not differ (docs/starlink-fit.md)
    ("roam", "uplink"): (4, 20),
    ("roam", "downlink"): (44, 132),
}
STARLINK_LOSS = {"uplink": (0.002, 0.005), "downlink": (0.0001, 0.0001)}  # LeoReplayer [V]
STARLINK_DISTURBANCE_MS = (50, 150)  # facts §5 [D] from arXiv 2601.08439 (≈140 ms) [V]
STARLINK_BURST_LOSS = (0.0, 0.5)  # "up to 50 %", Kassem et al. IMC'22 [V]
STARLINK_OUTAGE_PROBABILITY = 0.5  # not measured (facts §1.6: "to calibrate")
STARLINK_QUEUE_MS = {"uplink": 150, "downlink": 200}  # standing queue under load, facts §1.3/§5
STARLINK_PLANS = ("residential", "business", "roam")
STARLINK_VARIATIONS = ("intra", "epoch")
# Within-epoch variation (`variation = "intra"`, the default), fitted by `satcc trace fit`
# (satcc/tracefit.py) from two public recordings; figures in docs/starlink-fit.md:
# - LeoCC: SpaceNetLab/LeoCC@867e673 leoreplayer/replayer/example/Cubic/bw_example.txt and
#   delay_example.txt (MIT): 120 s of saturating-UDP deliveries + 10 ms one-way delays.
# - LEONetEM: clarkzjw/LEONetEM@780a063 latency/ping-example-isl.txt: 154 s of ping -D -i 0.01.
STARLINK_INTRA = {
    "capacity_slot_ns": 100 * MS,  # the 100 ms bins the statistics use
    # the knobs below: `satcc trace fit` on the whole LeoCC recording (first guess from the
    # statistics, then five rounds of simulated moments: tracefit.refine), so the model's own
    # 100 ms bins, 1 ms deliveries and 10 ms delays (rounded to whole ms, as the recording's)
    # show the recording's statistics; docs/starlink-fit.md has the comparison
    "capacity_sigma": 0.112,  # LeoCC: sd/mean of 100 ms bins around the epoch mean 0.114 [D]
    "capacity_corr": 0.556,  # LeoCC: lag-1 correlation of those bins 0.471 [D]
    "frame_ns": 8 * MS,  # LeoCC: autocorrelation peak of per-ms deliveries at 8 ms [D]
    "frame_duty": 0.103,  # LeoCC: 29.9 % of milliseconds see a delivery [D]
    "frame_windows": 2,  # LeoCC: successive delivery spacings alternate (lag-1 corr -0.41) [D]
    "frame_offset_sd_ns": 1_260_000,  # LeoCC: lag-1 corr of the delivery spacings -0.41 (sd 1.61 ms) [D]
    "frame_offset_corr": 0.856,  # LeoCC: lag-2 correlation of the spacings 0.547 [D]
    "frame_sigma": 0.337,  # LeoCC: 8 ms bins vary by sd/mean 0.336 around their 100 ms bin [D]
    "delay_slot_ns": 10 * MS,  # the recordings' 10 ms step
    "jitter_ns": 1_480_000,  # LeoCC: RTT 1.4826 x MAD around the epoch median 2.97 ms [D]
    "jitter_floor_ns": 2 * MS,  # LeoCC: RTT p1 4 ms below its epoch median (one way: 2) [D]
    "jitter_corr": 0.462,  # LeoCC: lag-1 (10 ms) correlation of that residual 0.439 [D]
    # LEONetEM: 2 in-epoch loss runs of >= 2 probes in 154 s of pings, 0.013/s [D, weak]; a
    # ping's round trip meets both directions' bursts, each direction draws its own: half each
    # (as `satcc trace fit` splits a ping's bursts)
    "burst_rate": 0.0065,
    "burst_duration_ns": 82 * MS,  # LEONetEM: their mean length [D, weak]
}
# LeoCC: every one of 8 boundaries has a delivery gap of 58-134 ms (the ISL recording of
# LEONetEM: 10 of 10 boundaries lose 447-506 ms of pings) [D]
STARLINK_INTRA_DISTURBANCE_MS = (58, 134)
STARLINK_INTRA_OUTAGE_PROBABILITY = 1.0

# -- GEO -----------------------------------------------------------------------------------------
GEO_ALTITUDE_M = 35_786_000.0
GEO_DEFAULT_ELEVATION_DEG = 30.0  # [D] a site near 50° N at the satellite's longitude
PCC_RATE_BPS = 42_000_000  # JerryLX/pantheon test_Satellite.sh [V]
PCC_DELAY_NS = 400 * MS  # mm-delay 400 (800 ms RTT) [V]
PCC_LOSS = 0.0074  # mm-loss uplink 0.0074 [V]
PCC_QUEUE_PKTS = 1500  # droptail 1500 packets [V]

# -- LFN -----------------------------------------------------------------------------------------
STUDY_003_DROP_ABOVE_BPS = (300_000_000, 330_000_000)  # papers/README.md §003
DEFAULT_DROP_BURST = "256 kB"  # not given by study 003: calibrated so Reno/CUBIC get 235/266 Mbit/s at 15 ms (study: 244/280)
DROP_REDRAW_NS = 1 * S  # the threshold wanders within its range once a second [assumed]

# -- trace ---------------------------------------------------------------------------------------
MAHIMAHI_BYTES = 1500  # one delivery opportunity, mm-link(1)

# -- constellation (Starlink shell 1) --------------------------------------------------------------
# A shell's satellites are searched once an epoch per direction (engines/sim.py's estimate
# counts it); Starlink's largest shell has ~4,400, the whole constellation ~10,000.
MAX_SHELL_SATELLITES = 100_000
SHELL1 = {"altitude_km": 550.0, "inclination": 53.0, "planes": 72, "per_plane": 22, "phasing": 1}
MIN_ELEVATION_DEG = 25.0  # facts §1.1 [V]
CONSTELLATION_EXTRA_DELAY = "10 ms"  # [D], see the module docstring
WALKER_KEYS = ("altitude_km", "inclination", "planes", "per_plane", "phasing")
TLE_DEFAULT_SPAN = "1 h"  # long enough for every ready scenario (the longest runs 20 min)
TLE_OUTAGE_LOSS = 1.0  # tle.py deviation 3

# -- flows: tunnels and path MTU (the keys are read by satcc-core scenario/file.rs) ---------------
DEFAULT_MTU = 1500  # Ethernet
IP_TCP_TS_HEADERS = 52  # 20 IP + 20 TCP + 12 timestamp option

_REQUIRED = object()


def fragments(mss: int, encap: int, mtu: int = DEFAULT_MTU, timestamps: bool = True) -> bool:
    """Whether a full segment travels as IP fragments: mss + headers + tunnel > MTU."""
    return mss + IP_TCP_TS_HEADERS - (0 if timestamps else 12) + encap > mtu


class ModelIssues(Exception):
    """Problems in a `[link.model]` table, as (key path, message) pairs."""

    def __init__(self, issues: list[tuple[str, str]]):
        super().__init__("; ".join(f"{p}: {m}" for p, m in issues))
        self.issues = issues


# -- value parsers -------------------------------------------------------------------------------


def _number(lo: float, hi: float, what: str) -> Callable[[Any], float]:
    def parse(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
            raise UnitError(f"{what} in {lo:g}..{hi:g}", v)
        return float(v)

    return parse


def _integer(lo: int, hi: int, what: str) -> Callable[[Any], int]:
    def parse(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise UnitError(f"{what} (an integer in {lo}..{hi})", v)
        return v

    return parse


def _range(parse: Callable[[Any], Any], what: str) -> Callable[[Any], tuple[Any, Any]]:
    """A single value (low = high) or [low, high]."""

    def parse_range(v: Any) -> tuple[Any, Any]:
        if isinstance(v, list):
            if len(v) != 2:
                raise UnitError(f"{what} or a [low, high] pair", v)
            lo, hi = parse(v[0]), parse(v[1])
            if lo > hi:
                raise UnitError(f"a [low, high] pair with low <= high ({what})", v)
            return lo, hi
        x = parse(v)
        return x, x

    return parse_range


def _choice(*options: str) -> Callable[[Any], str]:
    def parse(v: Any) -> str:
        if v not in options:
            raise UnitError("one of " + ", ".join(repr(o) for o in options), v)
        return v

    return parse


_CLOCK_RE = re.compile(r"^\s*(\d{1,2}):(\d{2}):(\d{2}(?:\.\d{1,9})?)\s*$")


def parse_start(v: Any) -> int:
    """The run's wall-clock start: "HH:MM:SS[.fff]" or a duration past the minute ("5 s")."""
    if isinstance(v, str):
        m = _CLOCK_RE.match(v)
        if m:
            h, mi, sec = int(m.group(1)), int(m.group(2)), m.group(3)
            if h > 23 or mi > 59 or float(sec) >= 60:
                raise UnitError("a time of day 'HH:MM:SS' or a duration like '5 s'", v)
            return (h * 3600 + mi * 60) * S + parse_duration(f"{sec} s")
    try:
        return parse_duration(v)
    except UnitError:
        raise UnitError("a time of day 'HH:MM:SS' or a duration like '5 s'", v) from None


def _latlon(v: Any) -> tuple[float, float]:
    ok = (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
    )
    if not ok or not -90 <= v[0] <= 90 or not -180 <= v[1] <= 360:
        raise UnitError("[latitude, longitude] in degrees (latitude -90..90)", v)
    return float(v[0]), float(v[1])


def _path(v: Any) -> str:
    if not isinstance(v, str) or not v:
        raise UnitError("a file path", v)
    return v


# -- a reader that collects issues ---------------------------------------------------------------


class _Reader:
    def __init__(self, table: dict[str, Any], prefix: str, keys: list[str]):
        self.t, self.p, self.issues = table, prefix, []
        allowed = ["kind", *keys]
        for key in table:
            if key not in allowed:
                self.issues.append(
                    (
                        f"{prefix}.{key}",
                        (
                            f"expected one of the keys {', '.join(allowed)}; found an unknown key {key!r}"
                        ),
                    )
                )

    def get(self, key: str, parse: Callable[[Any], Any], default: Any = _REQUIRED) -> Any:
        if key not in self.t:
            if default is _REQUIRED:
                self.issues.append(
                    (f"{self.p}.{key}", f"expected the required key {key!r}, found nothing")
                )
            return default if default is not _REQUIRED else None
        try:
            return parse(self.t[key])
        except UnitError as e:
            self.issues.append((f"{self.p}.{key}", str(e)))
            return None

    def both(
        self, key: str, parse: Callable[[Any], Any], default: Any = _REQUIRED
    ) -> tuple[Any, Any]:
        """`key` for a→b and `key_ba` for b→a (defaulting to a→b's value)."""
        ab = self.get(key, parse, default)
        return ab, self.get(f"{key}_ba", parse, ab)

    def fail(self, key: str, message: str) -> None:
        self.issues.append((f"{self.p}.{key}" if key else self.p, message))


def _with_ba(*keys: str) -> list[str]:
    return [k for key in keys for k in (key, f"{key}_ba")]


# -- per kind: (a→b, b→a) directions, each (nominal state, model dict, default queue) ------------


def _starlink(r: _Reader) -> list[tuple[dict, dict, dict | None]]:
    plans = r.both("plan", _choice(*STARLINK_PLANS), "residential")
    variation = r.get("variation", _choice(*STARLINK_VARIATIONS), "intra")
    intra = variation == "intra"
    dish = r.get("dish", _choice("a", "b"), "a")
    phase = r.get("phase", parse_duration, STARLINK_PHASE_NS)
    start = r.get("start", parse_start, 0)
    rtt = r.get("rtt", _range(parse_duration, "a duration"), None)
    rtt_q = r.get("rtt_quantiles", _quantiles, None)
    caps = r.both("capacity", _range(parse_rate, "a rate"), None)
    losses = r.both("loss", _range(parse_probability, "a probability"), None)
    dist_ms = STARLINK_INTRA_DISTURBANCE_MS if intra else STARLINK_DISTURBANCE_MS
    disturbance = r.get(
        "disturbance", _range(parse_duration, "a duration"), (dist_ms[0] * MS, dist_ms[1] * MS)
    )
    burst = r.get("burst_loss", _range(parse_probability, "a probability"), STARLINK_BURST_LOSS)
    outage = r.get(
        "outage_probability",
        parse_probability,
        STARLINK_INTRA_OUTAGE_PROBABILITY if intra else STARLINK_OUTAGE_PROBABILITY,
    )
    d = STARLINK_INTRA
    knobs = {
        "capacity_sigma": r.get("capacity_sigma", _number(0, 3, "a number"), d["capacity_sigma"]),
        "capacity_corr": r.get(
            "capacity_corr", _number(0, 0.99, "a correlation"), d["capacity_corr"]
        ),
        "frame_ns": r.get("frame", parse_duration, d["frame_ns"]),
        "frame_duty": r.get("frame_duty", _number(0.01, 1, "a share"), d["frame_duty"]),
        "frame_windows": r.get(
            "frame_windows", _integer(1, 2, "windows per frame"), d["frame_windows"]
        ),
        "frame_offset_sd_ns": r.get("frame_offset_sd", parse_duration, d["frame_offset_sd_ns"]),
        "frame_offset_corr": r.get(
            "frame_offset_corr", _number(0, 0.99, "a correlation"), d["frame_offset_corr"]
        ),
        "frame_sigma": r.get("frame_sigma", _number(0, 3, "a number"), d["frame_sigma"]),
        "jitter_ns": r.get("jitter", parse_duration, d["jitter_ns"]),
        "jitter_floor_ns": r.get("jitter_floor", parse_duration, d["jitter_floor_ns"]),
        "jitter_corr": r.get("jitter_corr", _number(0, 0.99, "a correlation"), d["jitter_corr"]),
        "burst_rate": r.get("burst_rate", _number(0, 100, "bursts per second"), d["burst_rate"]),
        "burst_duration_ns": r.get("burst_duration", parse_duration, d["burst_duration_ns"]),
    }
    if r.issues:
        return []
    if not intra:
        for key in ("rtt_quantiles", *_INTRA_KEYS):
            if key in r.t:
                r.fail(key, f"expected no {key} with variation = 'epoch' (steady epochs)")
    if rtt is not None and rtt_q is not None:
        r.fail("rtt_quantiles", "expected either rtt or rtt_quantiles, found both")
    if phase >= STARLINK_PERIOD_NS:
        r.fail("phase", f"expected a duration below 15 s, found {r.t['phase']!r}")
    if disturbance[1] >= STARLINK_PERIOD_NS:
        r.fail("disturbance", "expected durations below the 15 s period")
    if knobs["frame_ns"] >= STARLINK_PERIOD_NS:
        r.fail("frame", "expected a frame shorter than the 15 s period")
    if knobs["burst_rate"] > 0 and knobs["burst_duration_ns"] < MS:
        r.fail("burst_duration", "expected at least 1 ms when burst_rate > 0")
    if rtt is not None:
        quantiles = [round(rtt[0] + (rtt[1] - rtt[0]) * k / 4) for k in range(5)]
    elif rtt_q is not None:
        quantiles = rtt_q
    else:
        quantiles = [q * MS for q in STARLINK_RTT_QUANTILES_MS]
    out = []
    roles = ("uplink", "downlink") if dish == "a" else ("downlink", "uplink")
    for plan, role, cap, loss in zip(plans, roles, caps, losses, strict=True):
        if cap is None:
            lo, hi = STARLINK_CAPACITY_MBPS[(plan, role)]
            cap = (lo * 1_000_000, hi * 1_000_000)
        if cap[0] <= 0:
            r.fail("capacity", "expected positive rates, found 0 bit/s")
            continue
        loss = STARLINK_LOSS[role] if loss is None else loss
        model = {
            "kind": "starlink",
            "period_ns": STARLINK_PERIOD_NS,
            "phase_ns": phase,
            "start_ns": start,
            "rtt_quantiles_ns": quantiles,
            "capacity_bps": list(cap),
            "loss": list(loss),
            "disturbance_ns": list(disturbance),
            "outage_probability": outage,
            "burst_loss": list(burst),
        }
        if intra:
            model["intra"] = {
                "capacity_slot_ns": d["capacity_slot_ns"],
                "delay_slot_ns": d["delay_slot_ns"],
                **knobs,
            }
        mean_bps = round((cap[0] + cap[1]) / 2)
        nominal = {
            "rate_bps": mean_bps,
            "delay_ns": quantiles[2] // 2,
            "loss": (loss[0] + loss[1]) / 2,
        }
        queue = {"bytes": round(mean_bps / 8 * STARLINK_QUEUE_MS[role] / 1000)}
        out.append((nominal, model, queue))
    return out


_INTRA_KEYS = (
    "capacity_sigma",
    "capacity_corr",
    "frame",
    "frame_duty",
    "frame_windows",
    "frame_offset_sd",
    "frame_offset_corr",
    "frame_sigma",
    "jitter",
    "jitter_floor",
    "jitter_corr",
    "burst_rate",
    "burst_duration",
)


def _quantiles(v: Any) -> list[int]:
    """Five non-decreasing durations: the RTT at p = 0, 0.25, 0.5, 0.75, 1."""
    if not isinstance(v, list) or len(v) != 5:
        raise UnitError("a list of five durations (RTT at p 0, 0.25, 0.5, 0.75, 1)", v)
    out = [parse_duration(x) for x in v]
    if any(a > b for a, b in itertools.pairwise(out)):
        raise UnitError("five non-decreasing durations", v)
    return out


def _geo(r: _Reader) -> list[tuple[dict, dict, dict | None]]:
    preset = r.get("preset", _choice("pcc"), None)
    pcc = preset == "pcc"
    rates = r.both("rate", parse_rate, PCC_RATE_BPS if pcc else _REQUIRED)
    loss_ab = r.get("loss", parse_probability, PCC_LOSS if pcc else 0.0)
    loss_ba = r.get("loss_ba", parse_probability, 0.0 if pcc else loss_ab)
    elev = r.get("elevation", _number(0, 90, "degrees"), GEO_DEFAULT_ELEVATION_DEG)
    gw = r.get("gateway_elevation", _number(0, 90, "degrees"), GEO_DEFAULT_ELEVATION_DEG)
    extra = r.get("extra_delay", parse_duration, 0)
    if pcc and any(k in r.t for k in ("elevation", "gateway_elevation", "extra_delay")):
        r.fail(
            "preset", "expected either preset = 'pcc' (a fixed 400 ms) or elevations, found both"
        )
    if r.issues:
        return []
    out = []
    for rate, loss in zip(rates, (loss_ab, loss_ba), strict=True):
        if rate == 0:
            r.fail("rate", "expected a positive rate, found 0 bit/s")
            continue
        if pcc:
            delay = PCC_DELAY_NS
            model = {"kind": "geo", "rate_bps": rate, "loss": loss, "delay_ns": PCC_DELAY_NS}
        else:
            # the model's own delay (satcc-core models/geo.rs), as nominal for routes and queues
            delay = _native.geo_one_way_ns(GEO_ALTITUDE_M, elev, gw, extra)
            model = {
                "kind": "geo",
                "rate_bps": rate,
                "loss": loss,
                "delay_ns": None,
                "altitude_m": GEO_ALTITUDE_M,
                "terminal_elevation_deg": elev,
                "gateway_elevation_deg": gw,
                "extra_delay_ns": extra,
            }
        out.append(
            (
                {"rate_bps": rate, "delay_ns": delay, "loss": loss},
                model,
                {"packets": PCC_QUEUE_PKTS} if pcc else None,
            )
        )
    return out


def _lfn(r: _Reader) -> list[tuple[dict, dict, dict | None]]:
    rates = r.both("rate", parse_rate)
    if "rtt" in r.t and "delay" in r.t:
        r.fail("rtt", "expected rtt or delay (one way), found both")
    if "rtt" in r.t or "delay" not in r.t:
        rtt = r.both("rtt", parse_duration)
        delays = tuple(None if x is None else x // 2 for x in rtt)
    else:
        delays = r.both("delay", parse_duration)
    losses = r.both("loss", parse_probability, 0.0)
    hop = r.get("hop", _choice("study-003"), None)
    drops = r.both(
        "drop_above", _range(parse_rate, "a rate"), STUDY_003_DROP_ABOVE_BPS if hop else None
    )
    burst = r.get("drop_burst", parse_size, parse_size(DEFAULT_DROP_BURST))
    if r.issues:
        return []
    out = []
    for rate, delay, loss, drop in zip(rates, delays, losses, drops, strict=True):
        if rate == 0 or (drop is not None and drop[0] == 0) or burst == 0:
            r.fail("rate", "expected positive rates and a positive drop_burst")
            continue
        police = (
            None
            if drop is None
            else {"rate_bps": list(drop), "burst_bytes": burst, "redraw_ns": DROP_REDRAW_NS}
        )
        model = {"kind": "lfn", "rate_bps": rate, "delay_ns": delay, "loss": loss, "police": police}
        out.append(({"rate_bps": rate, "delay_ns": delay, "loss": loss}, model, None))
    return out


def mahimahi_info(path: Path) -> dict[str, Any]:
    """A Mahimahi trace's `{"lines", "last_ms", "digest"}`: the path is checked here
    (satcc.limits: a regular file of at most 256 MiB), the file read by satcc-core's one parser
    (models/trace_file.rs: mm-link's rules, 8 B a line, once per process); ValueError naming the
    line, or before parsing when its lines need more memory than this process may still use,
    MemoryError when it does not fit."""
    try:
        limits.check_file(path, "a Mahimahi trace", limits.MAX_TRACE_BYTES)
    except UserError as e:
        raise ValueError(str(e).removeprefix(f"{path}: ")) from None
    return _native.mahimahi_info(path, limits.available_memory_bytes())


def read_mahimahi(path: Path) -> array.array:
    """A Mahimahi trace's timestamps (ms) as an `array('Q')` (8 B a line; `numpy.asarray`
    takes it without a copy), read as `mahimahi_info` reads it."""
    mahimahi_info(path)
    out = array.array("Q")
    out.frombytes(_native.mahimahi_stamps(path))
    if sys.byteorder != "little":
        out.byteswap()
    return out


def delay_csv_info(
    path: Path, default_loss: float, duration_ns: int | None = None
) -> dict[str, Any]:
    """A delay/loss CSV's `{"rows", "mean_delay_ns", "mean_loss", "digest"}`: rows
    `t_ms,delay_ms[,loss]` (a header line is skipped), read by satcc-core
    (models/trace_file.rs: 24 B a row, once per process); the means are weighted by time over
    [0, duration_ns) as the model applies the rows (`trace_file::series_time_mean`)."""
    try:
        limits.check_file(path, "a delay/loss CSV", limits.MAX_TRACE_BYTES)
    except UserError as e:
        raise ValueError(str(e).removeprefix(f"{path}: ")) from None
    return _native.delay_csv_info(path, default_loss, duration_ns, limits.available_memory_bytes())


def read_delay_csv(path: Path, default_loss: float) -> list[tuple[int, int, float]]:
    """Rows `t_ms,delay_ms[,loss]` → [(t_ns, delay_ns, loss)], read as `delay_csv_info` reads
    them (for `satcc trace fit`)."""
    delay_csv_info(path, default_loss)
    return list(struct.iter_unpack("<QQd", _native.delay_csv_rows(path, default_loss)))


def _trace(
    r: _Reader, base: Path, duration_ns: int | None = None
) -> list[tuple[dict, dict, dict | None]]:
    traces = r.both("mahimahi", _path, None)
    rates = r.both("rate", parse_rate, None)
    csvs = r.both("delay_csv", _path, None)
    delays = r.both("delay", parse_duration, None)
    losses = r.both("loss", parse_probability, 0.0)
    per = r.get("bytes_per_opportunity", _integer(1, 65_535, "bytes"), MAHIMAHI_BYTES)
    if r.issues:
        return []
    out = []
    failed: set[str] = set()  # a file both directions share is reported once
    for d, trace, rate, csv, delay, loss in zip(
        ("", "_ba"), traces, rates, csvs, delays, losses, strict=True
    ):
        stamps = rows = None
        if trace is not None:
            try:
                stamps = mahimahi_info(base / trace)
            except (OSError, ValueError) as e:
                if trace not in failed:
                    r.fail(f"mahimahi{d}", f"expected a Mahimahi trace, found {trace!r}: {e}")
                failed.add(trace)
        elif rate is None or rate == 0:
            r.fail(f"rate{d}", "expected a positive rate or a mahimahi trace, found neither")
        if csv is not None:
            try:
                rows = delay_csv_info(base / csv, loss, duration_ns)
            except (OSError, ValueError) as e:
                if csv not in failed:
                    r.fail(f"delay_csv{d}", f"expected a delay/loss CSV, found {csv!r}: {e}")
                failed.add(csv)
        elif delay is None:
            r.fail(f"delay{d}", "expected a delay or a delay_csv, found neither")
        if r.issues:
            continue
        if stamps is not None:
            nominal_rate = round(stamps["lines"] * per * 8 * 1000 / stamps["last_ms"])
        else:
            nominal_rate = rate
        if rows is not None:
            # Each row holds until the next (the first from time 0, the last for ever): the
            # nominal figures are means over the run's time, not over the rows.
            nominal_delay = round(rows["mean_delay_ns"])
            nominal_loss = rows["mean_loss"]
        else:
            nominal_delay, nominal_loss = delay, loss
        model = {
            "kind": "trace",
            # the file itself, read by satcc-core where the model is built (simulator,
            # satcc-linkd); its digest ties the run to the trace it was resolved with
            "mahimahi_path": None if stamps is None else os.path.abspath(base / trace),
            "opportunities_digest": None if stamps is None else stamps["digest"],
            "opportunities_lines": None if stamps is None else stamps["lines"],
            "bytes_per_opportunity": per,
            "rate_bps": rate,
            # the CSV itself, read by satcc-core where the model is built, as the trace
            "series": None,
            "delay_csv_path": None if rows is None else os.path.abspath(base / csv),
            "delay_csv_loss": None if rows is None else loss,
            "series_digest": None if rows is None else rows["digest"],
            "series_rows": None if rows is None else rows["rows"],
            "delay_ns": nominal_delay,
            "loss": loss,
        }
        out.append(
            (
                {"rate_bps": max(nominal_rate, 1), "delay_ns": nominal_delay, "loss": nominal_loss},
                model,
                None,
            )
        )
    return out


def _constellation(r: _Reader) -> list[tuple[dict, dict, dict | None]]:
    terminal = r.get("terminal", _latlon)
    gateway = r.get("gateway", _latlon)
    altitude_km = r.get("altitude_km", _number(100, 50_000, "km"), SHELL1["altitude_km"])
    inclination = r.get("inclination", _number(0, 180, "degrees"), SHELL1["inclination"])
    planes = r.get("planes", _integer(1, 10_000, "planes"), SHELL1["planes"])
    per_plane = r.get("per_plane", _integer(1, 10_000, "satellites per plane"), SHELL1["per_plane"])
    phasing = r.get("phasing", _integer(0, 9_999, "phasing F"), SHELL1["phasing"])
    min_el = r.get("min_elevation", _number(0, 90, "degrees"), MIN_ELEVATION_DEG)
    phase = r.get("phase", parse_duration, STARLINK_PHASE_NS)
    start = r.get("start", parse_start, 0)
    extras = r.both("extra_delay", parse_duration, parse_duration(CONSTELLATION_EXTRA_DELAY))
    rates = r.both("rate", parse_rate)
    losses = r.both("loss", parse_probability, 0.0)
    if r.issues:
        return []
    if phasing >= planes:
        r.fail("phasing", f"expected an integer in 0..{planes - 1} (below planes), found {phasing}")
    if planes * per_plane > MAX_SHELL_SATELLITES:
        r.fail(
            "per_plane",
            f"expected a shell of at most {MAX_SHELL_SATELLITES:,} satellites (planes x "
            f"per_plane), found {planes * per_plane:,}",
        )
    if phase >= STARLINK_PERIOD_NS:
        r.fail("phase", f"expected a duration below 15 s, found {r.t['phase']!r}")
    out = []
    for rate, loss, extra in zip(rates, losses, extras, strict=True):
        if rate == 0:
            r.fail("rate", "expected a positive rate, found 0 bit/s")
            continue
        model = {
            "kind": "constellation",
            "altitude_m": altitude_km * 1000,
            "inclination_deg": inclination,
            "planes": planes,
            "per_plane": per_plane,
            "phasing": phasing,
            "terminal": list(terminal),
            "gateway": list(gateway),
            "min_elevation_deg": min_el,
            "period_ns": STARLINK_PERIOD_NS,
            "phase_ns": phase,
            "start_ns": start,
            "extra_delay_ns": extra,
            "rate_bps": rate,
            "loss": loss,
        }
        # Nominal delay (routing, BDP queues): the zenith bent pipe, 2h/c, plus the extra part.
        zenith = round(2 * altitude_km * 1000 / SPEED_OF_LIGHT_M_S * S)
        out.append(({"rate_bps": rate, "delay_ns": zenith + extra, "loss": loss}, model, None))
    return out


_KEYS = {
    "starlink": [
        *_with_ba("plan"),
        "dish",
        "phase",
        "start",
        "rtt",
        *_with_ba("capacity", "loss"),
        "disturbance",
        "burst_loss",
        "outage_probability",
        "variation",
        "rtt_quantiles",
        *_INTRA_KEYS,
    ],
    "geo": ["preset", *_with_ba("rate", "loss"), "elevation", "gateway_elevation", "extra_delay"],
    "lfn": [*_with_ba("rate", "rtt", "delay", "loss", "drop_above"), "hop", "drop_burst"],
    "trace": [*_with_ba("mahimahi", "rate", "delay_csv", "delay", "loss"), "bytes_per_opportunity"],
    "constellation": [
        "terminal",
        "gateway",
        "altitude_km",
        "inclination",
        "planes",
        "per_plane",
        "phasing",
        "min_elevation",
        "phase",
        "start",
        *_with_ba("extra_delay", "rate", "loss"),
        "tle",
        "epoch",
        "span",
    ],  # the last three: satellites from a TLE file (tle.py)
}


def _constellation_tle(r: _Reader, base: Path) -> list[tuple[dict, dict, dict | None]]:
    """A constellation whose satellites come from a TLE file (tle.py: SGP4 geometry, imported only
    here): (nominal, trace model, None) per direction."""
    from satcc import tle

    tle_file = r.get("tle", _path)
    epoch = r.get("epoch", tle.parse_epoch, None)
    span = r.get("span", parse_duration, parse_duration(TLE_DEFAULT_SPAN))
    terminal = r.get("terminal", _latlon)
    gateway = r.get("gateway", _latlon)
    min_el = r.get("min_elevation", _number(0, 90, "degrees"), MIN_ELEVATION_DEG)
    phase = r.get("phase", parse_duration, STARLINK_PHASE_NS)
    extras = r.both("extra_delay", parse_duration, parse_duration(CONSTELLATION_EXTRA_DELAY))
    rates = r.both("rate", parse_rate)
    losses = r.both("loss", parse_probability, 0.0)
    for key in (*WALKER_KEYS, "start"):
        if key in r.t:
            r.fail(
                key,
                f"expected no {key} beside tle (the TLE set and epoch give it), found {key} = ...",
            )
    if r.issues:
        return []
    if span <= 0:
        r.fail("span", "expected a positive duration, found 0 s")
    if phase >= STARLINK_PERIOD_NS:
        r.fail("phase", f"expected a duration below 15 s, found {r.t['phase']!r}")
    try:
        text = limits.read_text(base / tle_file, "a TLE file", limits.MAX_TRACE_BYTES)
        tle.parse_tle(text)
    except UserError as e:
        r.fail(
            "tle",
            f"expected a TLE file of 2- or 3-line sets, found {tle_file!r}: "
            f"{str(e).removeprefix(f'{base / tle_file}: ')}",
        )
    except tle.TleError as e:
        r.fail("tle", f"expected a TLE file of 2- or 3-line sets, found {tle_file!r}: {e}")
    if r.issues:
        return []
    try:
        geometry = tle.geometry(
            text, terminal, gateway, min_el, phase, STARLINK_PERIOD_NS, epoch, span
        )
    except ImportError:
        r.fail("tle", "expected the sgp4 package (pip install sgp4), found it missing")
        return []
    up = [d for _, d in geometry if d is not None]
    if not up:
        r.fail(
            "tle",
            f"expected a satellite visible from both ends within the span, found none in {tle_file!r}",
        )
        return []
    out = []
    for rate, loss, extra in zip(rates, losses, extras, strict=True):
        if rate == 0:
            r.fail("rate", "expected a positive rate, found 0 bit/s")
            continue
        series: list[list[Any]] = []
        for t, d in geometry:
            row = [t, extra, TLE_OUTAGE_LOSS] if d is None else [t, d + extra, loss]
            if not series or series[-1][1:] != row[1:]:  # equal neighbours add nothing
                series.append(row)
        model = {
            "kind": "trace",
            "opportunities_ms": None,
            "bytes_per_opportunity": MAHIMAHI_BYTES,
            "rate_bps": rate,
            "series": series,
            "delay_ns": None,
            "loss": loss,
        }
        nominal_delay = round(sum(up) / len(up)) + extra  # mean while a satellite serves
        model["delay_ns"] = nominal_delay
        out.append(({"rate_bps": rate, "delay_ns": nominal_delay, "loss": loss}, model, None))
    return out


def model_keys(kind: str) -> list[str]:
    """The keys a `[link.model]` of this kind accepts (besides `kind`)."""
    return list(_KEYS[kind])


def resolve_model(
    table: dict[str, Any], prefix: str, base: Path, duration_ns: int | None = None
) -> list[tuple[dict, dict, dict | None]]:
    """[(nominal, model, default queue)] for a→b and b→a; raises ModelIssues."""
    kind = table.get("kind")
    if kind not in KINDS:
        raise ModelIssues(
            [(f"{prefix}.kind", f"expected one of {', '.join(KINDS)}, found {describe(kind)}")]
        )
    r = _Reader(table, prefix, _KEYS[kind])
    if kind == "trace":
        out = _trace(r, base, duration_ns)
    elif kind == "constellation" and {"tle", "epoch", "span"} & table.keys():
        # SGP4 positions → a trace-kind delay series; sgp4 is imported only there
        out = _constellation_tle(r, base)
    else:
        out = {"starlink": _starlink, "geo": _geo, "lfn": _lfn, "constellation": _constellation}[
            kind
        ](r)
    if r.issues:
        raise ModelIssues(r.issues)
    return out
