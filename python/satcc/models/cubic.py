"""CUBIC response function: average window under periodic loss, the Reno-friendly floor, and K.

Model (RFC 9438 §4.2, §4.3, §5). Under deterministic loss (one loss every 1/p segments) CUBIC
stays in its concave region: after a loss cwnd = beta W_max and W(t) = C (t - K)^3 + W_max
(§4.2, W_cubic) returns to W_max at t = K = cbrt(W_max (1 - beta) / C) (§4.2, with cwnd_epoch =
beta W_max, §4.6), when the next loss comes. Integrating W(t)/RTT over one cycle and setting it
to 1/p gives §5's average window (eq. 5 of draft-ietf-tcpm-rfc8312bis, as in RFC 8312):
    AVG_W_cubic = (C (3 + beta) / (4 (1 - beta)))^(1/4) * RTT^(3/4) / p^(3/4)
(1.054 RTT^(3/4)/p^(3/4) for C = 0.4, beta = 0.7, §5.1), with the cycle's peak
W_max = AVG_W_cubic * 4 / (3 + beta). The Reno-friendly region (§4.3) keeps the window at least
that of AIMD(alpha_cubic, beta), §4.3 AVG_AIMD: sqrt(alpha (1 + beta) / (2 (1 - beta) p)) with
alpha_cubic = 3 (1 - beta) / (1 + beta), i.e. Reno's sqrt(3 / (2p)). The effective average is
the larger of the two (RFC 9438 §5.1 Tables 1-2 are this maximum).

Parameters
| name         | default | unit         | source                                        |
|--------------|---------|--------------|-----------------------------------------------|
| p            | -       | 1            | loss probability, 0 < p < 0.5                 |
| rtt_s        | -       | s            | RTT (C is in segments/s^3, so RTT in seconds) |
| c            | 0.4     | segments/s^3 | RFC 9438 §4.2 / §5.1: C SHOULD be 0.4         |
| beta         | 0.7     | 1            | RFC 9438 §4.6 beta_cubic (Linux: 717/1024)    |
| packet_bytes | 1000    | bytes        | MSS                                           |
| wmax_pkts    | None    | segments     | optional window cap applied to the average    |

Not implemented: fast convergence (§4.7; a single flow under periodic loss does not use it),
HyStart++, the convex region, random (non-periodic) loss.
"""

from __future__ import annotations

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

C_CUBIC = 0.4  # RFC 9438 §5.1: "C SHOULD be set to 0.4" (segments / s^3)
BETA_CUBIC = 0.7  # RFC 9438 §4.6: "beta_cubic SHOULD be set to 0.7"
BETA_CUBIC_LINUX = 717 / 1024  # tcp_cubic.c: beta = 717 (/1024)
PACKET_BYTES = 1000
MAX_LOSS = 0.5

REGION_CUBIC = "cubic"  # concave cubic region dominates
REGION_RENO = "reno_friendly"  # AIMD(alpha_cubic, beta) estimate dominates (§4.3)


def k_seconds(w_max_pkts: Any, c: float = C_CUBIC, beta: float = BETA_CUBIC) -> Any:
    """K = cbrt(W_max (1 - beta) / C) (RFC 9438 §4.2, cwnd_epoch = beta W_max)."""
    scalar, a = as_arrays(w_max_pkts=w_max_pkts, c=c, beta=beta)
    check_positive(a["w_max_pkts"], "w_max_pkts")
    _check_c_beta(a)
    return unwrap(np.cbrt(a["w_max_pkts"] * (1.0 - a["beta"]) / a["c"]), scalar)


def alpha_cubic(beta: np.ndarray) -> np.ndarray:
    """alpha_cubic = 3 (1 - beta) / (1 + beta) (RFC 9438 §4.3)."""
    return 3.0 * (1.0 - beta) / (1.0 + beta)


def avg_window_aimd(p: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """AVG_AIMD(alpha, beta) = sqrt(alpha (1 + beta) / (2 (1 - beta) p)) (RFC 9438 §4.3)."""
    return np.sqrt(alpha * (1.0 + beta) / (2.0 * (1.0 - beta) * p))


def avg_window_cubic(p: np.ndarray, rtt: np.ndarray, c: np.ndarray, beta: np.ndarray):
    """AVG_W_cubic = (C (3+beta) / (4 (1-beta)))^(1/4) RTT^(3/4) / p^(3/4) (RFC 9438 §5)."""
    return (c * (3.0 + beta) / (4.0 * (1.0 - beta))) ** 0.25 * (rtt / p) ** 0.75


def _check_c_beta(a: dict[str, np.ndarray]) -> None:
    check_positive(a["c"], "c (CUBIC C)")
    require((a["beta"] > 0) & (a["beta"] < 1), "beta (beta_cubic)", "be in (0, 1)", a["beta"])


def model(
    p: Any,
    rtt_s: Any,
    *,
    c: Any = C_CUBIC,
    beta: Any = BETA_CUBIC,
    packet_bytes: Any = PACKET_BYTES,
    wmax_pkts: Any = None,
) -> ModelResult:
    """CUBIC's average window and throughput under periodic loss (RFC 9438 §5), with K."""
    named = {"p": p, "rtt_s": rtt_s, "c": c, "beta": beta, "packet_bytes": packet_bytes}
    if wmax_pkts is not None:
        named["wmax_pkts"] = wmax_pkts
    scalar, a = as_arrays(**named)
    check_loss(a["p"], MAX_LOSS)
    check_positive(a["rtt_s"], "rtt_s")
    check_positive(a["packet_bytes"], "packet_bytes")
    _check_c_beta(a)
    p, rtt, c, beta = a["p"], a["rtt_s"], a["c"], a["beta"]
    w_cubic = avg_window_cubic(p, rtt, c, beta)  # RFC 9438 §5
    alpha = alpha_cubic(beta)  # §4.3
    w_reno = avg_window_aimd(p, alpha, beta)  # §4.3 AVG_AIMD = sqrt(3 / (2p)) for any beta
    reno_region = w_reno > w_cubic
    w_avg = np.maximum(w_cubic, w_reno)  # §5.1 tables: the larger of the two
    peak = w_cubic * 4.0 / (3.0 + beta)  # cycle peak: AVG = W_max (3 + beta) / 4
    k = np.cbrt(peak * (1.0 - beta) / c)  # §4.2 K; also the cycle period in seconds
    intermediate = {
        "region": np.where(reno_region, REGION_RENO, REGION_CUBIC),
        "avg_w_cubic": w_cubic,
        "avg_w_reno_friendly": w_reno,
        "alpha_cubic": alpha,
        "avg_w": w_avg,
        "W_max_cycle": peak,
        "K_s": k,
    }
    if "wmax_pkts" in a:
        require(a["wmax_pkts"] > 0, "wmax_pkts", "be > 0", a["wmax_pkts"])
        w_avg = np.minimum(w_avg, a["wmax_pkts"])
        intermediate["avg_w_capped"] = w_avg
    rate = w_avg / rtt  # segments per second
    intermediate["B_segments_per_s"] = rate
    return ModelResult(
        model="cubic",
        inputs=unwrap_all(a, scalar),
        throughput_bps=unwrap(rate * a["packet_bytes"] * BITS_PER_BYTE, scalar),
        intermediate=unwrap_all(intermediate, scalar),
    )
