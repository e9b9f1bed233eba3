"""Mathis et al.: the macroscopic model of TCP congestion avoidance, BW = (MSS/RTT) C / sqrt(p).

Model (Mathis, Semke, Mahdavi, Ott, "The Macroscopic Behavior of the TCP Congestion Avoidance
Algorithm", ACM CCR 27(3), 1997, eq. 3). Periodic loss, one loss per 1/p segments, the window
saw-tooths between W/2 and W growing one segment per b RTTs: 1/p = (3/8) W^2 / b, so the mean
rate is (MSS/RTT) sqrt(3/(2b p)): C = sqrt(3/2) ~ 1.22 with an ACK per segment, sqrt(3/4) ~ 0.87
with delayed ACKs (b = 2). The paper's rounded constant 1.22 is available as C_ROUNDED.

Parameters
| name         | default        | unit  | source                                         |
|--------------|----------------|-------|------------------------------------------------|
| p            | -              | 1     | loss probability, 0 < p < 0.5 (satcc's domain) |
| rtt_s        | -              | s     | RTT                                            |
| packet_bytes | 1000           | bytes | MSS                                            |
| b            | 1              | 1     | segments per ACK; C = sqrt(3/(2b))             |
| c            | sqrt(3/(2b))   | 1     | override, e.g. C_ROUNDED = 1.22                |

Not implemented: timeouts, window limits (see pftk.py), random-loss constants other than C.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from satcc.models.common import (
    BITS_PER_BYTE,
    ModelResult,
    as_arrays,
    check_loss,
    check_positive,
    require,
    unwrap,
    unwrap_all,
)

C_PERIODIC = math.sqrt(3.0 / 2.0)  # Mathis 1997 eq. 3, periodic loss, ACK every segment
C_ROUNDED = 1.22  # the rounded constant quoted with eq. 3
C_DELAYED_ACK = math.sqrt(3.0 / 4.0)  # b = 2: window grows 1 segment per 2 RTTs
PACKET_BYTES = 1000
MAX_LOSS = 0.5


def constant_for(b: float) -> float:
    """C = sqrt(3/(2b)) (Mathis 1997 §2 derivation with growth 1/b segment per RTT)."""
    return math.sqrt(3.0 / (2.0 * b))


def model(
    p: Any,
    rtt_s: Any,
    *,
    packet_bytes: Any = PACKET_BYTES,
    b: float = 1.0,
    c: float | None = None,
) -> ModelResult:
    """BW = (MSS / RTT) * C / sqrt(p) (Mathis 1997 eq. 3) in bit/s."""
    require(np.asarray(b) >= 1, "b (segments per ACK)", "be >= 1", np.asarray(b))
    constant = constant_for(b) if c is None else float(c)
    scalar, a = as_arrays(p=p, rtt_s=rtt_s, packet_bytes=packet_bytes, c=constant)
    check_loss(a["p"], MAX_LOSS)
    check_positive(a["rtt_s"], "rtt_s")
    check_positive(a["packet_bytes"], "packet_bytes")
    check_positive(a["c"], "c (Mathis constant C)")
    window = a["c"] / np.sqrt(a["p"])  # mean window in segments, C / sqrt(p)
    rate = window / a["rtt_s"]  # eq. 3 in segments/s
    inputs = dict(a)
    inputs["b"] = np.full(a["p"].shape, float(b))
    intermediate = {
        "C": a["c"],
        "mean_window_segments": window,
        "peak_window_segments": np.sqrt(8.0 / (3.0 * b * a["p"])),  # 1/p = (3/8) W^2 / b
        "B_segments_per_s": rate,
    }
    return ModelResult(
        model="mathis",
        inputs=unwrap_all(inputs, scalar),
        throughput_bps=unwrap(rate * a["packet_bytes"] * BITS_PER_BYTE, scalar),
        intermediate=unwrap_all(intermediate, scalar),
    )
