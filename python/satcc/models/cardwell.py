"""Cardwell et al.: expected latency of a TCP Reno transfer of d segments.

Model (Cardwell, Savage, Anderson, "Modeling TCP Latency", IEEE INFOCOM 2000, eq. 4-25; the
model study 002 extends to Hybla). The transfer is: the handshake (eq. 4), a first slow start
that sends E[d_ss] segments before the first loss with window growth gamma = 1 + 1/b per round
(eq. 5, 11, 15), the first loss recovery, a timeout with probability Q or a fast retransmit
(eq. 16-20), the rest E[d_ca] at the PFTK throughput R (eq. 21-24), and the delayed ACK of the
first segment (eq. 25).

Parameters
| name          | default | unit     | source                                                  |
|---------------|---------|----------|---------------------------------------------------------|
| p             | -       | 1        | loss probability, both directions, 0 < p < 0.5 (eq. 4)  |
| rtt_s         | -       | s        | RTT                                                     |
| size_bytes    | -       | bytes    | data; d = ceil(size / packet) segments                  |
| t0_s          | 1.0     | s        | T_0, base timeout (study 002 §4 uses 1 s)                |
| wmax_pkts     | None    | segments | W_max; None = unlimited; >= 4                           |
| b             | 1       | 1        | segments per ACK; gamma = 1 + 1/b (Cardwell §III-B)     |
| w1_pkts       | 1       | segments | initial window (Cardwell §III-B, w_1)                   |
| t_delack_s    | b>1: 0.1, else 0 | s | E[T_delack], delayed ACK of the first segment (eq. 25): |
|               |         |          | half of a 200 ms BSD delayed-ACK timer; a parameter     |
| syn_timeout_s | 3.0     | s        | T_s, initial SYN timeout (eq. 4)                        |
| include_handshake | True | -       | add E[T_3whs] (eq. 4) to the data-transfer latency      |

Deviations from the paper
1. E[d_ss] (eq. 5) is capped at d: for p -> 0 eq. 5 tends to d + 1, more than there is to send.
2. Q (eq. 17, 20) is evaluated at min(E[W_ss], W_max), the window the flow actually has when
   the first loss happens; the paper writes Q(p, E[W_ss]).
3. The same loss probability p is used forward and backward in eq. 4 (p_f = p_r = p).
Not implemented: Cardwell's distribution (only expected values), receiver delayed-ACK timer
models beyond the constant t_delack_s.
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
from satcc.models.pftk import timeout_backoff_f, timeout_probability_q, unconstrained_window

T0_S = 1.0  # study 002 §4: T_0 = 1 s
SYN_TIMEOUT_S = 3.0  # Cardwell eq. 4: T_s, 3 s initial SYN timeout
ACKED_PER_ACK = 1  # b; 2 with delayed ACKs
INITIAL_WINDOW_PKTS = 1  # w_1 (Cardwell §III-B)
DELACK_S = 0.1  # E[T_delack] with delayed ACKs: mean wait of a 200 ms BSD timer (assumed)
PACKET_BYTES = 1000
MIN_WMAX_PKTS = 4.0
MAX_LOSS = 0.5


def pftk_throughput(p, rtt, t0, wmax, b) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """R(p, RTT, T_0, W_max): the PFTK throughput Cardwell uses for the remainder (eq. 22-23).

    R = ((1-p)/p + W/2 + Q(p,W)) / (RTT (b/2 W + 1) + Q(p,W) G(p) T_0/(1-p))      if W < W_max
      = ((1-p)/p + W_max/2 + Q(p,W_max)) / (RTT (b/8 W_max + (1-p)/(p W_max) + 2)
                                              + Q(p,W_max) G(p) T_0/(1-p))          otherwise
    with W = W(p) of eq. 23 (PFTK E[W_u]). Returns segments/s and the intermediate values.
    """
    w_p = unconstrained_window(p, b)  # eq. 23
    limited = w_p >= wmax
    w = np.where(limited, wmax, w_p)
    q = timeout_probability_q(p, w)  # eq. 17
    g = timeout_backoff_f(p)  # eq. 19
    timeout_time = q * g * t0 / (1.0 - p)
    num = (1.0 - p) / p + w / 2.0 + q  # eq. 22 numerator (same form in both lines)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = np.where(
            limited,
            rtt * (b / 8.0 * w + (1.0 - p) / (p * w) + 2.0) + timeout_time,  # eq. 22, line 2
            rtt * (b / 2.0 * w + 1.0) + timeout_time,  # eq. 22, line 1
        )
    rate = num / den
    return rate, {"W_p": w_p, "R_window_limited": limited, "Q_ca": q, "R_segments_per_s": rate}


def transfer(
    p: Any,
    rtt_s: Any,
    size_bytes: Any,
    *,
    t0_s: Any = T0_S,
    wmax_pkts: Any = None,
    b: float = ACKED_PER_ACK,
    w1_pkts: Any = INITIAL_WINDOW_PKTS,
    t_delack_s: Any = None,
    syn_timeout_s: Any = SYN_TIMEOUT_S,
    include_handshake: bool = True,
    packet_bytes: Any = PACKET_BYTES,
) -> ModelResult:
    """E[T] for size_bytes (Cardwell eq. 25, plus eq. 4 when include_handshake) and size/E[T]."""
    require(np.asarray(b) >= 1, "b (segments per ACK)", "be >= 1", np.asarray(b))
    delack = (DELACK_S if b > 1 else 0.0) if t_delack_s is None else t_delack_s
    named = {
        "p": p,
        "rtt_s": rtt_s,
        "size_bytes": size_bytes,
        "t0_s": t0_s,
        "w1_pkts": w1_pkts,
        "t_delack_s": delack,
        "syn_timeout_s": syn_timeout_s,
        "packet_bytes": packet_bytes,
    }
    if wmax_pkts is not None:
        named["wmax_pkts"] = wmax_pkts
    scalar, a = as_arrays(**named)
    check_loss(a["p"], MAX_LOSS)
    check_positive(a["rtt_s"], "rtt_s")
    check_positive(a["t0_s"], "t0_s (T_0)")
    check_positive(a["packet_bytes"], "packet_bytes")
    check_positive(a["w1_pkts"], "w1_pkts (initial window)")
    require(a["size_bytes"] >= 1, "size_bytes", "be >= 1 byte", a["size_bytes"])
    require(a["t_delack_s"] >= 0, "t_delack_s", "be >= 0", a["t_delack_s"])
    require(a["syn_timeout_s"] >= 0, "syn_timeout_s", "be >= 0", a["syn_timeout_s"])
    if "wmax_pkts" in a:
        require(a["wmax_pkts"] >= MIN_WMAX_PKTS, "wmax_pkts (W_max)", "be >= 4", a["wmax_pkts"])
        require(a["w1_pkts"] <= a["wmax_pkts"], "w1_pkts", "be <= W_max", a["w1_pkts"])
        wmax = a["wmax_pkts"]
    else:
        wmax = np.full(a["p"].shape, np.inf)

    p, rtt, t0, w1 = a["p"], a["rtt_s"], a["t0_s"], a["w1_pkts"]
    gamma = 1.0 + 1.0 / b  # §III-B: window grows by gamma per round in slow start
    d = np.ceil(a["size_bytes"] / a["packet_bytes"])

    t_3whs = rtt + a["syn_timeout_s"] * 2.0 * ((1.0 - p) / (1.0 - 2.0 * p) - 1.0)  # eq. 4
    l_ss = -np.expm1(d * np.log1p(-p))  # eq. 16: 1 - (1-p)^d
    d_ss = np.minimum(l_ss * (1.0 - p) / p + 1.0, d)  # eq. 5 (deviation 1)
    w_ss = d_ss * (gamma - 1.0) / gamma + w1 / gamma  # eq. 11
    capped = w_ss > wmax
    with np.errstate(divide="ignore", invalid="ignore"):
        rounds_capped = (
            np.log(wmax / w1) / np.log(gamma)
            + 1.0
            + (d_ss - (gamma * wmax - w1) / (gamma - 1.0)) / wmax
        )  # eq. 15, W_ss > W_max
    rounds_free = np.log(d_ss * (gamma - 1.0) / w1 + 1.0) / np.log(gamma)  # eq. 15
    t_ss = rtt * np.where(capped, rounds_capped, rounds_free)

    q_ss = timeout_probability_q(p, np.minimum(w_ss, wmax))  # eq. 17 (deviation 2)
    z_to = timeout_backoff_f(p) * t0 / (1.0 - p)  # eq. 18-19
    t_loss = l_ss * (q_ss * z_to + (1.0 - q_ss) * rtt)  # eq. 20

    d_ca = d - d_ss  # eq. 21
    rate, r_values = pftk_throughput(p, rtt, t0, wmax, b)  # eq. 22-23
    t_ca = d_ca / rate  # eq. 24
    t_data = t_ss + t_loss + t_ca + a["t_delack_s"]  # eq. 25
    total = t_data + (t_3whs if include_handshake else 0.0)
    throughput = a["size_bytes"] * BITS_PER_BYTE / total

    inputs: dict[str, Any] = dict(a)
    inputs["b"] = np.full(p.shape, float(b))
    inputs["include_handshake"] = include_handshake
    intermediate = {
        "d": d,
        "gamma": np.full(p.shape, gamma),
        "T_3whs": t_3whs,
        "d_ss": d_ss,
        "W_ss": w_ss,
        "ss_capped_by_wmax": capped,
        "T_ss": t_ss,
        "l_ss": l_ss,
        "Q_ss": q_ss,
        "Z_TO": z_to,
        "T_loss": t_loss,
        "d_ca": d_ca,
        "T_ca": t_ca,
        "T_delack": a["t_delack_s"],
        "T_data": t_data,
        **r_values,
    }
    return ModelResult(
        model="cardwell",
        inputs={k: (v if isinstance(v, bool) else unwrap(v, scalar)) for k, v in inputs.items()},
        throughput_bps=unwrap(throughput, scalar),
        transfer_time_s=unwrap(total, scalar),
        intermediate=unwrap_all(intermediate, scalar),
    )


model = transfer
