"""Window bound: throughput <= window / RTT, and the time congestion avoidance needs to reach a rate.

Model (study 003, Kitatsuji et al., eq. 1: "window size / round-trip time"). Without the window
scale option the advertised window is a 16-bit field, at most 65535 bytes (RFC 793 §3.1; the
study's "64 KB"); with it the window is shifted by up to 14 bits (RFC 1323 §2.3 / RFC 7323
§2.3), which the study rounds to 2^(16+14) B/s = 8 Gbit/s at a 1 s RTT.

Congestion avoidance grows cwnd by one MSS per RTT (RFC 5681 §3.1), or one MSS per two RTTs
when every other segment is ACKed and the sender counts ACKs (delayed ACKs, b = 2, as Linux 2.4
did). Reaching a rate r from a window of w_0 segments therefore takes
    t = b * RTT * (r * RTT / (8 * MSS) - w_0)
which is the linear ramp of study 003 Fig. 7 ("10 to 20 minutes" at 187-189 ms).

Parameters
| name              | default | unit     | source                                            |
|-------------------|---------|----------|---------------------------------------------------|
| rtt_s             | -       | s        | RTT                                               |
| window_bytes      | 65535   | bytes    | RFC 793 16-bit window, no window scaling          |
| target_rate_bps   | None    | bit/s    | rate to reach in congestion avoidance             |
| mss_bytes         | 1448    | bytes    | 1500 MTU - 20 IP - 20 TCP - 12 timestamp option   |
| start_window_pkts | 0       | segments | cwnd when linear growth starts                    |
| rtts_per_mss (b)  | 1       | RTTs     | 2 with delayed ACKs (1 MSS per 2 RTTs)            |

Not implemented: slow start before the linear phase (it is short: log2(W) RTTs), losses during
the ramp (each halves cwnd and restarts it), Linux's cached ssthresh (route metrics), which the
study names as the reason later connections leave slow start early.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from satcc.models.common import (
    BITS_PER_BYTE,
    ModelResult,
    as_arrays,
    check_positive,
    require,
    unwrap,
    unwrap_all,
)

MAX_WINDOW_NO_WSCALE_BYTES = 65535  # RFC 793 §3.1: 16-bit window field
MAX_WSCALE_SHIFT = 14  # RFC 7323 §2.3 (RFC 1323 §2.3): shift.cnt limited to 14
MSS_TIMESTAMPS_BYTES = 1448  # 1500 - 20 (IPv4) - 20 (TCP) - 12 (timestamps option, aligned)


def max_window_bytes(wscale_shift: int | None = None) -> int:
    """Largest window: 65535 B without scaling, 65535 * 2^shift with it (shift <= 14)."""
    if wscale_shift is None:
        return MAX_WINDOW_NO_WSCALE_BYTES
    require(
        np.asarray(0 <= wscale_shift <= MAX_WSCALE_SHIFT),
        "wscale_shift",
        f"be in [0, {MAX_WSCALE_SHIFT}] (RFC 7323 §2.3)",
        np.asarray(wscale_shift),
    )
    return MAX_WINDOW_NO_WSCALE_BYTES << wscale_shift


def model(
    rtt_s: Any,
    *,
    window_bytes: Any = MAX_WINDOW_NO_WSCALE_BYTES,
    target_rate_bps: Any = None,
    mss_bytes: Any = MSS_TIMESTAMPS_BYTES,
    start_window_pkts: Any = 0.0,
    rtts_per_mss: Any = 1.0,
) -> ModelResult:
    """Throughput bound window/RTT (study 003 eq. 1) and, with target_rate_bps, the time to it."""
    named = {
        "rtt_s": rtt_s,
        "window_bytes": window_bytes,
        "mss_bytes": mss_bytes,
        "start_window_pkts": start_window_pkts,
        "rtts_per_mss": rtts_per_mss,
    }
    if target_rate_bps is not None:
        named["target_rate_bps"] = target_rate_bps
    scalar, a = as_arrays(**named)
    check_positive(a["rtt_s"], "rtt_s")
    check_positive(a["window_bytes"], "window_bytes")
    check_positive(a["mss_bytes"], "mss_bytes")
    require(a["start_window_pkts"] >= 0, "start_window_pkts", "be >= 0", a["start_window_pkts"])
    require(a["rtts_per_mss"] >= 1, "rtts_per_mss", "be >= 1", a["rtts_per_mss"])
    bound = a["window_bytes"] * BITS_PER_BYTE / a["rtt_s"]  # study 003 eq. 1
    intermediate: dict[str, Any] = {
        "window_bound_bps": bound,
        "window_segments": a["window_bytes"] / a["mss_bytes"],
    }
    if "target_rate_bps" in a:
        check_positive(a["target_rate_bps"], "target_rate_bps")
        needed_bytes = a["target_rate_bps"] * a["rtt_s"] / BITS_PER_BYTE  # eq. 1 solved for W
        target_pkts = needed_bytes / a["mss_bytes"]
        rounds = np.maximum(target_pkts - a["start_window_pkts"], 0.0) * a["rtts_per_mss"]
        intermediate.update(
            {
                "window_needed_bytes": needed_bytes,
                "window_sufficient": a["window_bytes"] >= needed_bytes,
                "target_window_segments": target_pkts,
                "ca_rounds_to_target": rounds,  # +1 MSS per rtts_per_mss RTTs (RFC 5681 §3.1)
                "time_to_target_s": rounds * a["rtt_s"],
            }
        )
    return ModelResult(
        model="window",
        inputs=unwrap_all(a, scalar),
        throughput_bps=unwrap(bound, scalar),
        intermediate=unwrap_all(intermediate, scalar),
    )
