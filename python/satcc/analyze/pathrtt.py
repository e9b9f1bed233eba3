"""Where a capture was taken, and the path RTT of each TCP data direction from there.

A data→ACK sample (newest segment a cumulative ACK covers) measures the path only when the
capture sits at the sender: at the receiver it is the receiver's ACK delay (0.03 ms), in the
middle of the path the downstream half. TCP timestamps give both halves wherever the capture is:

    data direction D (sender S → receiver R), capture point C
    down half  TSval of a D packet seen at C → its echo in R's ACK seen at C   (C → R → C)
    up half    TSval of an R packet seen at C → its echo in S's data seen at C (C → S → C)

The sender-side half is ~0 at the sender, the receiver-side half ~0 at the receiver; their sum
is the path RTT at any capture point. Each down-half sample is paired with the newest up-half
sample completed by the time the data packet it answers was seen (`t - down`), so every pair
is one round trip R → S → R through the capture point.

    capture point   rule (smallest sample of each half)       RTT estimator (`rtt_source`)
    "sender"        up <= 0.25 x down                          data→ACK ("data-ack"), as before
    "receiver"      down <= 0.25 x up                          up + down ("tsval-both")
    "between"       neither                                    up + down ("tsval-both")
    "unknown"       no timestamps in one of the directions     data→ACK, else TSval→TSecr

The halves' means first settle a sender-side capture (and "unknown") without reading the samples;
for the rest the smallest samples decide: an application pause or a delayed ACK lengthens some
samples of a host's own half, never all of them. Pure Python over the analyzer's sample buffers (`satcc
analyze` imports neither numpy nor pandas for a capture); only directions away from the sender
are paired sample by sample.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

# One half at most this share of the other: the capture sits at that half's end host (a host's
# turnaround is tens of microseconds; the other half is the path's milliseconds).
NEAR_HOST_SHARE = 0.25
# ... or at most this long: what a host adds to its own half (turnaround, and a paced sender
# such as BBR waiting for its next slot before echoing the receiver's TSval), which on a
# sub-millisecond path is not small beside the other half (a 0.6 ms path read as "between"
# gave 2.6 ms from TSval-resolution pairings).
HOST_TURNAROUND_MS = 0.5
KIND_DATA_ACK, KIND_TSVAL = 0, 1
_TYPECODES = {"u1": "B", "u2": "H", "u4": "I", "u8": "Q", "i4": "i", "i8": "q", "f8": "d"}


def _array(dtype: str, buf: bytes) -> array:
    a = array(_TYPECODES[dtype.lstrip("<|=")], buf)
    if sys.byteorder == "big" and a.itemsize > 1:
        a.byteswap()  # the analyzer writes little-endian
    return a


def capture_point(up_ms: Sequence[float], down_ms: Sequence[float]) -> str:
    """ "sender", "receiver", "between" or "unknown" from the two halves' samples (ms)."""
    if len(up_ms) == 0 or len(down_ms) == 0:
        return "unknown"
    up, down = min(up_ms), min(down_ms)
    if up <= NEAR_HOST_SHARE * down:
        return "sender"
    if down <= NEAR_HOST_SHARE * up:
        return "receiver"
    if min(up, down) <= HOST_TURNAROUND_MS:  # a host's own half, lengthened: its end
        return "sender" if up < down else "receiver"
    return "between"


def _pair(up: list[tuple[int, int]], down: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(t_ns, rtt_ns) of each round trip: a down half plus the newest up half completed when
    the data packet it answers was seen. Down halves with no earlier up half are dropped."""
    up = sorted(up)
    up_t = [t for t, _ in up]
    out = []
    for t, rtt in down:
        j = bisect_right(up_t, t - rtt) - 1
        if j >= 0:
            out.append((t, rtt + up[j][1]))
    return out


def _p95(sorted_ms: list[float]) -> float:
    """numpy's default (linear) 95th percentile."""
    pos = 0.95 * (len(sorted_ms) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_ms) - 1)
    return sorted_ms[lo] + (sorted_ms[hi] - sorted_ms[lo]) * (pos - lo)


def path_rtt(
    raw_flows: Sequence[dict[str, Any]], raw_rtt: dict[str, Any] | None, bin_s: float
) -> dict[int, dict[str, Any]]:
    """Per TCP flow direction that carried data: {"capture_point", "rtt_source"} and, when
    the estimator changes (receiver side or between), the RTT figures recomputed from paired
    halves: rtt_mean_ms, rtt_p95_ms, rtt_min_ms, rtt_samples, bin_rtt_mean_ms (aligned with
    the flow's bins). `raw_flows`, `raw_rtt` and `bin_s` are a CaptureAnalysis's (read with
    rtt=True: the per-sample table)."""
    if raw_rtt is None:
        raise ValueError("path_rtt needs read_capture(..., rtt=True)")
    by_conn = {(f["proto"], f["conn"], f["dir"]): f for f in raw_flows}
    # Settled from the analyzer's per-direction means without touching the samples: a
    # sender-side capture (the common case, and a capture's whole cost otherwise) or no
    # timestamps. Only the other directions are classified and paired sample by sample.
    settled: dict[int, str] = {}
    wanted: set[int] = set()
    for f in raw_flows:
        if f["proto"] != "tcp" or not f["sent_packets"]:
            continue
        rev = by_conn.get(("tcp", f["conn"], 1 - f["dir"]))
        up = rev.get("ts_rtt_mean_ms") if rev is not None else None
        down = f.get("ts_rtt_mean_ms")
        point = capture_point([up] if up is not None else [], [down] if down is not None else [])
        if point in ("sender", "unknown"):
            settled[f["id"]] = point
        else:
            wanted.update((f["id"], rev["id"]))
    ts: dict[int, list[tuple[int, int]]] = {}
    if wanted:
        cols = {k: _array(dt, buf) for k, (dt, buf) in raw_rtt.items()}
        for fid, t, rtt, kind in zip(
            cols["flow_id"], cols["t_ns"], cols["rtt_ns"], cols["kind"], strict=True
        ):
            if kind == KIND_TSVAL and fid in wanted:
                ts.setdefault(fid, []).append((t, rtt))
    bin_ns = round(bin_s * 1e9)
    out: dict[int, dict[str, Any]] = {}
    for f in raw_flows:
        if f["proto"] != "tcp" or not f["sent_packets"]:
            continue
        if f["id"] in settled:
            out[f["id"]] = {"capture_point": settled[f["id"]], "rtt_source": f["rtt_source"]}
            continue
        rev = by_conn.get(("tcp", f["conn"], 1 - f["dir"]))
        down = ts.get(f["id"], [])
        up = ts.get(rev["id"], []) if rev is not None else []
        point = capture_point([r / 1e6 for _, r in up], [r / 1e6 for _, r in down])
        entry: dict[str, Any] = {"capture_point": point, "rtt_source": f["rtt_source"]}
        if point in ("receiver", "between"):
            pairs = _pair(up, down)
            ms = sorted(r / 1e6 for _, r in pairs)
            entry.update(
                rtt_source="tsval-both",
                rtt_mean_ms=sum(ms) / len(ms) if ms else None,
                rtt_p95_ms=_p95(ms) if ms else None,
                rtt_min_ms=ms[0] if ms else None,
                rtt_samples=len(ms),
            )
            b = f["bins"]
            n = len(b["payload_bytes"])
            sums, counts = [0.0] * n, [0] * n
            for t, r in pairs:
                i = t // bin_ns - b["first"]
                if 0 <= i < n:
                    sums[i] += r / 1e6
                    counts[i] += 1
            entry["bin_rtt_mean_ms"] = [
                sm / c if c else None for sm, c in zip(sums, counts, strict=True)
            ]
        out[f["id"]] = entry
    return out
