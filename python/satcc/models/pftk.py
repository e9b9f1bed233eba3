"""PFTK: steady-state send rate of TCP Reno with fast retransmit, timeouts and a window limit.

Model (Padhye, Firoiu, Towsley, Kurose, "Modeling TCP Throughput: A Simple Model and its
Empirical Validation", SIGCOMM'98; journal version "Modeling TCP Reno performance: a simple
model and its empirical validation", IEEE/ACM ToN 8(2), 2000). Equation numbers are those of the
SIGCOMM'98 paper (the ones usually quoted: full model eq. 31, approximation eq. 32). A loss
cycle of triple-duplicate-ACK periods (window grows 1/b per RTT, halves on loss) is followed,
with probability Q̂(w), by a timeout sequence of mean length T_0 f(p)/(1-p).

Parameters
| name      | default | unit     | source                                                     |
|-----------|---------|----------|------------------------------------------------------------|
| p         | -       | 1        | loss-event probability, 0 < p < 0.5 (satcc's common domain) |
| rtt_s     | -       | s        | mean RTT                                                   |
| t0_s      | 1.0     | s        | T_0, base timeout (study 002 §4 uses 1 s)                  |
| wmax_pkts | None    | segments | W_max, receiver/sender window limit; None = unlimited; >= 4 |
| b         | 1       | 1        | segments acknowledged per ACK (2 with delayed ACKs)        |
| packet_bytes | 1000 | bytes    | segment size used to convert segments/s to bit/s           |

Deviations from the paper: none in the formulas. satcc's default b = 1 (one ACK per segment,
as in study 002's model); PFTK's validation traces had b = 2 — pass b=2 for delayed ACKs.
Not implemented: the PFTK "throughput" (goodput) variant lives in `cardwell.py` (Cardwell eq. 22,
which uses it); no loss correlation beyond PFTK's "rest of the round is lost" assumption.
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

T0_S = 1.0  # study 002 §4: T_0 = 1 s
ACKED_PER_ACK = 1  # b: one ACK per segment (study 002 §3.2.2 (i)); 2 with delayed ACKs
PACKET_BYTES = 1000
MIN_WMAX_PKTS = 4.0  # a window of 3 or fewer segments cannot produce 3 duplicate ACKs
DUPACK_THRESHOLD = 3
MAX_LOSS = 0.5

REGIME_LOSS = "loss_limited"  # E[W_u] < W_max
REGIME_WINDOW = "window_limited"  # E[W_u] >= W_max


def timeout_backoff_f(p: np.ndarray) -> np.ndarray:
    """f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6: mean timeout-sequence length in T_0
    units times (1 - p) (PFTK eq. 28; study 002 eq. 35; Cardwell's G(p), eq. 19)."""
    return 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def unconstrained_window(p: np.ndarray, b: np.ndarray) -> np.ndarray:
    """E[W_u] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2) (PFTK eq. 13)."""
    k = (2.0 + b) / (3.0 * b)
    return k + np.sqrt(8.0 * (1.0 - p) / (3.0 * b * p) + k**2)


def timeout_probability_q(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Q̂(w) = min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)) (PFTK
    timeout analysis; Cardwell eq. 17):
    probability that a loss in a window of w segments ends in a timeout; 1 for w <= 3."""
    q3 = (1.0 - p) ** DUPACK_THRESHOLD
    with np.errstate(over="ignore"):
        num = (1.0 - q3) * (1.0 + q3 * (1.0 - (1.0 - p) ** (w - DUPACK_THRESHOLD)))
    den = -np.expm1(w * np.log1p(-p))  # 1 - (1-p)^w
    q = np.minimum(1.0, num / den)
    return np.where(w <= DUPACK_THRESHOLD, 1.0, q)


def _inputs(p, rtt_s, t0_s, wmax_pkts, b, packet_bytes):
    named = {"p": p, "rtt_s": rtt_s, "t0_s": t0_s, "b": b, "packet_bytes": packet_bytes}
    if wmax_pkts is not None:
        named["wmax_pkts"] = wmax_pkts
    scalar, a = as_arrays(**named)
    check_loss(a["p"], MAX_LOSS)
    check_positive(a["rtt_s"], "rtt_s")
    check_positive(a["t0_s"], "t0_s (T_0)")
    check_positive(a["packet_bytes"], "packet_bytes")
    require(a["b"] >= 1, "b (segments per ACK)", "be >= 1", a["b"])
    if "wmax_pkts" in a:
        require(
            a["wmax_pkts"] >= MIN_WMAX_PKTS,
            "wmax_pkts (W_max)",
            f"be >= {MIN_WMAX_PKTS:g} segments",
            a["wmax_pkts"],
        )
    else:
        a["wmax_pkts"] = np.full(a["p"].shape, np.inf)  # no window limit
    return scalar, a


def send_rate(
    p: Any,
    rtt_s: Any,
    *,
    t0_s: Any = T0_S,
    wmax_pkts: Any = None,
    b: Any = ACKED_PER_ACK,
    packet_bytes: Any = PACKET_BYTES,
) -> ModelResult:
    """PFTK full model B(p) with timeouts and W_max (PFTK eq. 31), in segments/s and bit/s."""
    scalar, a = _inputs(p, rtt_s, t0_s, wmax_pkts, b, packet_bytes)
    p, rtt, t0, wmax, b = a["p"], a["rtt_s"], a["t0_s"], a["wmax_pkts"], a["b"]
    f = timeout_backoff_f(p)  # eq. 28
    w_u = unconstrained_window(p, b)  # eq. 13
    window_limited = w_u >= wmax
    w = np.where(window_limited, wmax, w_u)
    q = timeout_probability_q(p, w)  # Q̂(E[W_u]) or Q̂(W_max)
    timeout_time = q * t0 * f / (1.0 - p)
    # eq. 31, first line (E[W_u] < W_max)
    num_loss = (1.0 - p) / p + w + q / (1.0 - p)
    den_loss = rtt * (b / 2.0 * w + 1.0) + timeout_time
    # eq. 31, second line (E[W_u] >= W_max): window stays at W_max for part of the cycle
    with np.errstate(divide="ignore", invalid="ignore"):
        den_window = rtt * (b / 8.0 * w + (1.0 - p) / (p * w) + 2.0) + timeout_time
    den = np.where(window_limited, den_window, den_loss)
    rate = num_loss / den  # the numerator has the same form in both lines (W = W_max in the 2nd)
    regime = np.where(window_limited, REGIME_WINDOW, REGIME_LOSS)
    intermediate = {
        "regime": regime,
        "E_W_u": w_u,
        "W": w,
        "Q_hat": q,
        "f_p": f,
        "numerator_segments": num_loss,
        "denominator_s": den,
        "B_segments_per_s": rate,
    }
    return ModelResult(
        model="pftk",
        inputs=unwrap_all(_shown_inputs(a), scalar),
        throughput_bps=unwrap(rate * a["packet_bytes"] * BITS_PER_BYTE, scalar),
        intermediate=unwrap_all(intermediate, scalar),
    )


def approximate(
    p: Any,
    rtt_s: Any,
    *,
    t0_s: Any = T0_S,
    wmax_pkts: Any = None,
    b: Any = ACKED_PER_ACK,
    packet_bytes: Any = PACKET_BYTES,
) -> ModelResult:
    """PFTK approximation (eq. 32):
    B ~ min(W_max/RTT, 1 / (RTT sqrt(2bp/3) + T_0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))."""
    scalar, a = _inputs(p, rtt_s, t0_s, wmax_pkts, b, packet_bytes)
    p, rtt, t0, wmax, b = a["p"], a["rtt_s"], a["t0_s"], a["wmax_pkts"], a["b"]
    ca_term = rtt * np.sqrt(2.0 * b * p / 3.0)
    to_term = t0 * np.minimum(1.0, 3.0 * np.sqrt(3.0 * b * p / 8.0)) * p * (1.0 + 32.0 * p**2)
    loss_rate = 1.0 / (ca_term + to_term)
    window_rate = wmax / rtt
    rate = np.minimum(window_rate, loss_rate)
    intermediate = {
        "regime": np.where(window_rate <= loss_rate, REGIME_WINDOW, REGIME_LOSS),
        "ca_term_s": ca_term,
        "timeout_term_s": to_term,
        "B_segments_per_s": rate,
    }
    return ModelResult(
        model="pftk-approx",
        inputs=unwrap_all(_shown_inputs(a), scalar),
        throughput_bps=unwrap(rate * a["packet_bytes"] * BITS_PER_BYTE, scalar),
        intermediate=unwrap_all(intermediate, scalar),
    )


def _shown_inputs(a: dict[str, np.ndarray]) -> dict[str, Any]:
    """Inputs for the record; an unlimited W_max is shown as None (JSON null), not inf."""
    shown: dict[str, Any] = dict(a)
    if np.all(np.isinf(a["wmax_pkts"])):
        shown["wmax_pkts"] = None
    return shown


def model(
    p: Any,
    rtt_s: Any,
    *,
    t0_s: Any = T0_S,
    wmax_pkts: Any = None,
    b: Any = ACKED_PER_ACK,
    packet_bytes: Any = PACKET_BYTES,
    approximate_formula: bool = False,
) -> ModelResult:
    """Entry point for engines and the CLI."""
    fn = approximate if approximate_formula else send_rate
    return fn(p, rtt_s, t0_s=t0_s, wmax_pkts=wmax_pkts, b=b, packet_bytes=packet_bytes)
