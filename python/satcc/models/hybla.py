"""TCP Hybla: steady-state throughput and transfer time of a limited amount of data.

Model (study 002: Usuki, Utsumi, Takeda, Zabir, "Modeling TCP Hybla for Satellite IP Networks:
Throughput and Latency", shared/papers/002_47f5289dd50a2f26.txt). Hybla scales Reno's growth by
rho = RTT/RTT0: per ACK cwnd += 2^rho - 1 in slow start, += rho^2/cwnd in congestion avoidance
(eq. 1). A loss cycle (PFTK-style) sends Y = 1/p + W - L segments in X + 1 + (1 - 1/L) rounds;
the steady state is B = Y/A (eq. 10 / 21). The transfer of d segments (eq. 22-39) adds the
handshake, a first slow start (Cardwell et al. 2000 with growth factor 2^rho), the first loss
recovery and the remainder at rate B, minus R/2.

    p ──► W (eq. 2-8, Newton) ──► W < W_m ? ──yes──► L, D, X, Y, A, B       (eq. 3-10)
                                       └────no───► L_m, D_m, U, V, X, A, B (eq. 11-21)
    d ──► d_ss, W_ss (eq. 23, 28) ──► T_ss (eq. 32) ──► T_loss (eq. 33-36) ──► T_ca = d_ca/B
          T = T_3whs + T_ss [+ T_loss] [+ T_ca] - R/2                                (eq. 39)

Parameters
| name           | default | unit     | source                                                    |
|----------------|---------|----------|-----------------------------------------------------------|
| p              | -       | 1        | packet loss probability, 0 < p < 0.5 (eq. 22 has 1/(1-2p)) |
| rtt_s (R)      | -       | s        | mean RTT                                                  |
| rtt0_s (RTT0)  | 0.025   | s        | paper §3 "e.g. RTT0 = 25 ms"; Linux tcp_hybla.c rtt0 = 25 |
| rho            | R/RTT0  | 1        | paper §3 definition of rho                                |
| wmax_pkts W_m  | -       | segments | max congestion window; >= 4 (eq. 2 needs m <= W - 3)      |
| t0_s (T_0)     | 1.0     | s        | mean first timeout; paper §4 uses T_0 = 1 s               |
| syn_timeout_s  | 3.0     | s        | T_s, SYN timeout, paper §3.2 "initial value 3 s"          |
| packet_bytes   | 1000    | bytes    | converts segments to bytes; paper Table 1 (1000 B)        |
| size_bytes     | None    | bytes    | data to transfer; d = ceil(size/packet) segments          |

Readings of the paper (where the printed text is ambiguous; also in docs/models.md)
1. D_m (eq. 12) printed as "(2-p)W_m^-1 / 2W_m" lost its superscripts; read as
   D_m = (2-p)^(W_m-1) / 2^(W_m), the eq. 4 form at W = W_m (papers/README.md).
2. Eq. 14 prints "W_m = D_m W + rho^2 U"; read as W_m = D_m W_m + rho^2 U, which is what eq. 15
   (U = (1 - D_m) W_m / rho^2) and eq. 18-19 use.
3. Eq. 24-32 print "2^p" and "(1/p) log2": the slow-start growth factor is 2^rho per round
   (eq. 1: cwnd += 2^rho - 1 per ACK) and log_{2^rho}(x) = (1/rho) log2(x); read p as rho there.
4. Regime choice (§3.1.1 vs §3.1.2): solve eq. 2-8 for the unconstrained peak window W; if
   W >= W_m the peak reaches W_m and eq. 11-21 apply, otherwise eq. 2-10. With this rule V
   (eq. 18) is >= 0 whenever the W_m regime is chosen. The two regimes do not join continuously
   at W = W_m: eq. 8 sums rho^2 k for k = 1..X (an extra rho^2 X / 2 segments) while eq. 17 uses
   the trapezoid (D_m + 1) W_m U / 2, so at the switch V = (1 - D_m)/2 rounds are spent at W_m
   and B jumps up as p crosses it. The jump is V R / A: with rho = 22, W_m = 550 (study design)
   the CA phase lasts about one round and B jumps by ~15 % at p ~ 3.9e-3.
5. W is a real number: eq. 2-8 are solved as one equation g(W) = Y_eq8(W) - Y_eq5(W) = 0 with
   X from eq. 7, by Newton's method as the paper does (§4, ref. [9]), started from the D = 1/2,
   L = 1 closed form and safeguarded by a bracket [lo, hi] (g(lo) < 0 < g(hi), from g(0) =
   1 - p - 1/p < 0 and doubling hi): any Newton step leaving the bracket becomes a bisection
   step. `solve_w_bisection` is the independent check used by the tests.
6. d_ss (eq. 23) is taken as printed, without Cardwell's "+1" (Cardwell eq. 5). Hence d_ss < d
   always and the first case of eq. 39 (d < d_ss: no loss recovery) never applies; it is kept
   for fidelity. T_loss (eq. 36) is already weighted by the loss probabilities.
7. l_tda (eq. 34) = 1 - (1-p)^(d-3) is taken as 0 for d <= 3 (no fast retransmit possible
   with fewer than three segments after the loss); the paper assumes d > 3.
8. Eq. 37-39 are taken as printed: in the second case (d <= d_ss + W_m) the d - d_ss segments
   left after the first loss cost only T_loss, which is weighted by the loss probabilities
   (eq. 36); so for small p the transfer time falls as p rises (10 MB, study design: 10.39 s at
   p = 1e-7, 9.90 s at p = 1.2e-5) and a transfer can beat W_m/R by a fraction of a percent.
9. Throughput in bit/s = segments/s x packet_bytes x 8; a limited transfer's throughput is
   size_bytes x 8 / T (what a user timing the transfer sees). The steady-state B (eq. 10, 21) does not depend on T_0; T_0
   enters only through Z_TO (eq. 35) in the transfer time.

Deviations from Linux (tcp_hybla.c) that the model inherits
1. rho is R/RTT0 unclamped; Linux hybla_recalc_param() keeps rho >= 1. Pass rho explicitly
   (e.g. max(1, R/RTT0)) to mimic the kernel for RTT < RTT0.
2. One ACK per segment (paper §3.2.2 (i)); Linux receivers delay ACKs.
3. SACK-style recovery time (eq. 9: (1 + (1 - 1/L)) R); random, independent losses only.

Not implemented: burst losses, receiver-window limits other than W_m, Linux's per-ACK rounding
of 2^rho (hybla_fraction table). The scenario adapter is satcc/engines/model.py; the study's
validation against the simulator is satcc/studies/hybla.py (`satcc validate hybla`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from satcc.models.common import (
    BITS_PER_BYTE,
    ModelInputError,
    ModelResult,
    as_arrays,
    check_loss,
    check_positive,
    require,
    unwrap,
    unwrap_all,
)

RTT0_S = 0.025  # paper §3: reference RTT, "e.g. RTT0 = 25 ms"; Linux tcp_hybla.c rtt0 = 25 ms
T0_S = 1.0  # paper §4: "T_0 = 1 sec" in the validation
SYN_TIMEOUT_S = 3.0  # paper §3.2: T_s, SYN timeout, initial value 3 s (Cardwell eq. 4)
PACKET_BYTES = 1000  # paper Table 1: packet size 1000 bytes
MIN_WMAX_PKTS = 4.0  # eq. 2-3: the first loss is detected by 3 dup ACKs, m <= W - 3
DUPACK_THRESHOLD = 3  # eq. 34: fast retransmit needs 3 more segments after the loss
MAX_LOSS = 0.5  # eq. 22: T_s((1-p)/(1-2p) - 1) needs p < 1/2

NEWTON_MAX_ITER = 200  # safeguarded: every step at least halves the bracket or converges
NEWTON_RTOL = 1e-13  # relative step size at which W is converged
BRACKET_MAX_DOUBLINGS = 1100  # 2^1100 overflows float64: more doublings cannot happen

REGIME_BELOW_WM = "below_wm"  # §3.1.1: peak window below W_m
REGIME_REACHES_WM = "reaches_wm"  # §3.1.2: peak window reaches W_m


# -- the loss cycle below W_m: eq. 3-8 ------------------------------------------------------


def losses_per_event(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """L = 1 + p (W - 1): segments lost in the loss window (eq. 3; eq. 11 with W = W_m)."""
    return 1.0 + p * (w - 1.0)


def reduction_factor(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """D = (2 - p)^(W-1) / 2^W = (1/2)(1 - p/2)^(W-1) (eq. 4; eq. 12 with W = W_m, reading 1).

    Evaluated in log space so that large windows neither overflow nor lose precision.
    """
    return 0.5 * np.exp((w - 1.0) * np.log1p(-p / 2.0))


def ca_rounds(d: np.ndarray, w: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """X = (1 - D) W / rho^2: rounds of congestion avoidance from DW back to W (eq. 7)."""
    return (1.0 - d) * w / rho**2


def segments_per_cycle_eq8(x: np.ndarray, d: np.ndarray, w: np.ndarray, rho: np.ndarray):
    """Y = X (DW + rho^2 (X + 1) / 2) + W / 2 (eq. 8)."""
    return x * (d * w + rho**2 * (x + 1.0) / 2.0) + w / 2.0


def segments_per_cycle_eq5(p: np.ndarray, w: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Y = 1/p + W - L (eq. 5; eq. 13 with W = W_m, L = L_m)."""
    return 1.0 / p + w - losses


def w_residual(w: np.ndarray, p: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """g(W) = Y_eq8 - Y_eq5 with L, D, X from eq. 3, 4, 7: the equation in W of §3.1.1."""
    losses = losses_per_event(p, w)  # eq. 3
    d = reduction_factor(p, w)  # eq. 4
    x = ca_rounds(d, w, rho)  # eq. 7
    return segments_per_cycle_eq8(x, d, w, rho) - segments_per_cycle_eq5(p, w, losses)


def w_residual_derivative(w: np.ndarray, p: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """dg/dW for Newton's method.

    Substituting eq. 7 into eq. 8 gives g(W) = (1 - D^2) W^2 / (2 rho^2) - D W / 2 + L - 1/p,
    with dD/dW = D ln(1 - p/2) and dL/dW = p.
    """
    d = reduction_factor(p, w)
    k = np.log1p(-p / 2.0)  # dD/dW = k D
    return (w * (1.0 - d**2) - k * d**2 * w**2) / rho**2 - d * (1.0 + k * w) / 2.0 + p


def initial_w_guess(p: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Root of g with D = 1/2 and L = 1: 3 W^2 / (8 rho^2) - W / 4 + 1 - 1/p = 0.

    The Reno-like closed form (for rho = 1 it is PFTK's E[W] with b = 1, up to the W/4 term):
    Newton's starting point.
    """
    a = 3.0 / (8.0 * rho**2)
    c = 1.0 / p - 1.0
    return (0.25 + np.sqrt(0.0625 + 4.0 * a * c)) / (2.0 * a)


def _initial_bracket(p: np.ndarray, rho: np.ndarray, start: np.ndarray):
    """lo = 0 (g(0) = 1 - p - 1/p < 0) and hi with g(hi) > 0, found by doubling `start`."""
    lo = np.zeros_like(p)
    hi = np.maximum(start, 1.0)
    for _ in range(BRACKET_MAX_DOUBLINGS):
        low = w_residual(hi, p, rho) <= 0.0
        if not np.any(low):
            return lo, hi
        lo = np.where(low, hi, lo)
        hi = np.where(low, 2.0 * hi, hi)
    raise ModelInputError("no upper bracket found for the Hybla window equation (eq. 2-8)")


def solve_w_newton(p: Any, rho: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Peak window W of §3.1.1 by safeguarded Newton's method (paper §4, reading 5).

    Returns (W, iterations, bisection_fallback) as arrays of the broadcast shape.
    """
    p, rho = np.broadcast_arrays(np.asarray(p, dtype=float), np.asarray(rho, dtype=float))
    w = initial_w_guess(p, rho)
    lo, hi = _initial_bracket(p, rho, 2.0 * w)
    iterations = np.zeros(p.shape, dtype=int)
    fallback = np.zeros(p.shape, dtype=bool)
    active = np.ones(p.shape, dtype=bool)
    for _ in range(NEWTON_MAX_ITER):
        g = w_residual(w, p, rho)
        lo = np.where(active & (g < 0.0), w, lo)
        hi = np.where(active & (g > 0.0), w, hi)
        slope = w_residual_derivative(w, p, rho)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(slope > 0.0, g / slope, np.nan)
        newton = w - step
        # converged: the Newton step is below the tolerance (or g is exactly 0)
        done = (g == 0.0) | (np.abs(step) <= NEWTON_RTOL * np.maximum(w, 1.0))
        inside = np.isfinite(newton) & (newton > lo) & (newton < hi)
        w_next = np.where(done, np.where(g == 0.0, w, newton), w)
        w_next = np.where(~done & inside, newton, w_next)
        w_next = np.where(~done & ~inside, 0.5 * (lo + hi), w_next)
        fallback |= active & ~done & ~inside
        iterations += active
        w = np.where(active, w_next, w)
        active &= ~done
        if not np.any(active):
            return w, iterations, fallback
    raise ModelInputError("Newton's method did not converge for the Hybla window equation")


def solve_w_bisection(p: Any, rho: Any, iterations: int = 200) -> np.ndarray:
    """The same root by plain bisection on [0, hi]: the independent check of `solve_w_newton`."""
    p, rho = np.broadcast_arrays(np.asarray(p, dtype=float), np.asarray(rho, dtype=float))
    lo = np.zeros_like(p)
    hi = np.ones_like(p)
    while np.any(w_residual(hi, p, rho) <= 0.0):
        hi = np.where(w_residual(hi, p, rho) <= 0.0, 2.0 * hi, hi)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        below = w_residual(mid, p, rho) < 0.0
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


# -- steady state: both regimes ---------------------------------------------------------------


def _steady_state_arrays(p, rtt, rho, wmax) -> dict[str, np.ndarray]:
    """All steady-state quantities (arrays) for both regimes, then selected per element."""
    w_u, iterations, fallback = solve_w_newton(p, rho)

    # §3.1.1, peak window below W_m
    l1 = losses_per_event(p, w_u)  # eq. 3
    d1 = reduction_factor(p, w_u)  # eq. 4
    x1 = ca_rounds(d1, w_u, rho)  # eq. 7
    y1 = segments_per_cycle_eq5(p, w_u, l1)  # eq. 5 (= eq. 8 at the root)
    a1 = (x1 + 1.0 + (1.0 - 1.0 / l1)) * rtt  # eq. 9
    # §3.1.2, peak window reaches W_m
    l2 = losses_per_event(p, wmax)  # eq. 11
    d2 = reduction_factor(p, wmax)  # eq. 12, reading 1
    u2 = (1.0 - d2) * wmax / rho**2  # eq. 15 (eq. 14, reading 2)
    v2 = 1.0 / (p * wmax) + 0.5 - l2 / wmax - (1.0 - d2**2) / (2.0 * rho**2) * wmax  # eq. 18
    x2 = u2 + v2  # eq. 16; = eq. 19: 1/(pW_m) + 1/2 - L_m/W_m + (1-D_m)^2 W_m / (2 rho^2)
    y2 = segments_per_cycle_eq5(p, wmax, l2)  # eq. 13
    a2 = (x2 + 1.0 + (1.0 - 1.0 / l2)) * rtt  # eq. 20

    reaches = w_u >= wmax  # reading 4
    out = {
        "reaches_wm": reaches,
        "W": np.where(reaches, wmax, w_u),
        "W_unconstrained": w_u,
        "L": np.where(reaches, l2, l1),
        "D": np.where(reaches, d2, d1),
        "X": np.where(reaches, x2, x1),
        "U": np.where(reaches, u2, x1),  # below W_m the window grows for all X rounds
        "V": np.where(reaches, v2, 0.0),  # ... and spends no round at W_m
        "Y": np.where(reaches, y2, y1),
        "A": np.where(reaches, a2, a1),
        "newton_iterations": iterations,
        "newton_bisection_steps": fallback,
    }
    out["B"] = out["Y"] / out["A"]  # eq. 10 / eq. 21, segments per second
    return out


def _common_inputs(p, rtt_s, wmax_pkts, rho, rtt0_s, t0_s, packet_bytes, extra=None):
    named = {
        "p": p,
        "rtt_s": rtt_s,
        "wmax_pkts": wmax_pkts,
        "rtt0_s": rtt0_s,
        "t0_s": t0_s,
        "packet_bytes": packet_bytes,
    }
    if rho is not None:
        named["rho"] = rho
    named.update(extra or {})
    scalar, a = as_arrays(**named)
    check_loss(a["p"], MAX_LOSS)
    check_positive(a["rtt_s"], "rtt_s (mean RTT R)")
    check_positive(a["rtt0_s"], "rtt0_s (reference RTT RTT0)")
    check_positive(a["t0_s"], "t0_s (mean first timeout T_0)")
    check_positive(a["packet_bytes"], "packet_bytes")
    require(
        a["wmax_pkts"] >= MIN_WMAX_PKTS,
        "wmax_pkts (W_m)",
        f"be >= {MIN_WMAX_PKTS:g} segments (eq. 2 assumes m <= W_m - 3)",
        a["wmax_pkts"],
    )
    if "rho" not in a:
        a["rho"] = a["rtt_s"] / a["rtt0_s"]  # §3: rho = RTT / RTT0
    check_positive(a["rho"], "rho")
    return scalar, a


def steady_state(
    p: Any,
    rtt_s: Any,
    *,
    wmax_pkts: Any,
    rho: Any = None,
    rtt0_s: Any = RTT0_S,
    t0_s: Any = T0_S,
    packet_bytes: Any = PACKET_BYTES,
) -> ModelResult:
    """Steady-state throughput B of TCP Hybla (eq. 2-21); arrays broadcast (loss sweeps)."""
    scalar, a = _common_inputs(p, rtt_s, wmax_pkts, rho, rtt0_s, t0_s, packet_bytes)
    s = _steady_state_arrays(a["p"], a["rtt_s"], a["rho"], a["wmax_pkts"])
    throughput = s["B"] * a["packet_bytes"] * BITS_PER_BYTE
    return ModelResult(
        model="hybla",
        inputs=unwrap_all(a, scalar),
        throughput_bps=unwrap(throughput, scalar),
        transfer_time_s=None,
        intermediate=_steady_intermediate(s, scalar),
    )


def _steady_intermediate(s: dict[str, np.ndarray], scalar: bool) -> dict[str, Any]:
    regime = np.where(s["reaches_wm"], REGIME_REACHES_WM, REGIME_BELOW_WM)
    out = {"regime": unwrap(regime, scalar)}
    for key in ("W", "W_unconstrained", "L", "D", "X", "U", "V", "Y", "A", "B"):
        out[key] = unwrap(s[key], scalar)
    out["B_segments_per_s"] = out.pop("B")
    iters = s["newton_iterations"]
    out["newton_iterations"] = int(iters) if scalar else iters
    out["newton_bisection_steps"] = unwrap(s["newton_bisection_steps"], scalar)
    return out


# -- transfer time of d segments: eq. 22-39 ---------------------------------------------------


def z_timeout(p: np.ndarray, t0: np.ndarray) -> np.ndarray:
    """Z_TO = T_0 (1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6) / (1 - p) (eq. 35; PFTK f(p))."""
    f = 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    return t0 * f / (1.0 - p)


def _log2_growth_minus_1(rho: np.ndarray) -> np.ndarray:
    """log2(2^rho - 1) without overflow for large rho or cancellation for small rho."""
    return rho + np.log2(-np.expm1(-rho * math.log(2.0)))


def transfer(
    p: Any,
    rtt_s: Any,
    size_bytes: Any,
    *,
    wmax_pkts: Any,
    rho: Any = None,
    rtt0_s: Any = RTT0_S,
    t0_s: Any = T0_S,
    packet_bytes: Any = PACKET_BYTES,
    syn_timeout_s: Any = SYN_TIMEOUT_S,
) -> ModelResult:
    """Expected time T to transfer size_bytes with TCP Hybla (eq. 22-39) and size/T."""
    scalar, a = _common_inputs(
        p,
        rtt_s,
        wmax_pkts,
        rho,
        rtt0_s,
        t0_s,
        packet_bytes,
        extra={"size_bytes": size_bytes, "syn_timeout_s": syn_timeout_s},
    )
    require(a["size_bytes"] >= 1, "size_bytes", "be >= 1 byte", a["size_bytes"])
    require(a["syn_timeout_s"] >= 0, "syn_timeout_s (T_s)", "be >= 0", a["syn_timeout_s"])
    require(
        a["rho"] <= a["wmax_pkts"],
        "rho",
        "be <= W_m (slow start starts at cwnd = rho, eq. 25, and grows to W_m, eq. 30)",
        a["rho"],
    )
    p, rtt, rho, wmax = a["p"], a["rtt_s"], a["rho"], a["wmax_pkts"]
    d = np.ceil(a["size_bytes"] / a["packet_bytes"])  # segments to send
    s = _steady_state_arrays(p, rtt, rho, wmax)

    t_3whs = rtt + a["syn_timeout_s"] * ((1.0 - p) / (1.0 - 2.0 * p) - 1.0)  # eq. 22
    survive_d = np.exp(d * np.log1p(-p))  # (1 - p)^d
    d_ss = -np.expm1(d * np.log1p(-p)) * (1.0 - p) / p  # eq. 23 (reading 6: no "+1")
    inv_growth = np.exp2(-rho)  # 2^-rho
    w_ss = d_ss * (1.0 - inv_growth) + rho * inv_growth  # eq. 28
    capped = w_ss > wmax  # §3.2.2: slow start limited by W_m
    d_1 = (wmax - rho * inv_growth) / (1.0 - inv_growth)  # eq. 29 = (2^rho W_m - rho)/(2^rho - 1)
    r_1 = np.log2(wmax / rho) / rho + 1.0  # eq. 30
    r_2 = (d_ss - d_1) / wmax  # eq. 31
    # eq. 27: rounds = (1/rho) log2(d_ss (2^rho - 1)/rho + 1), in log space
    rounds_uncapped = (
        np.logaddexp2(np.log2(d_ss) + _log2_growth_minus_1(rho) - np.log2(rho), 0.0) / rho
    )
    t_ss = rtt * np.where(capped, r_1 + r_2, rounds_uncapped)  # eq. 32

    l_ss = -np.expm1(d * np.log1p(-p))  # eq. 33: 1 - (1-p)^d
    after_loss = np.maximum(d - DUPACK_THRESHOLD, 0.0)  # reading 7
    l_tda = -np.expm1(after_loss * np.log1p(-p))  # eq. 34: 1 - (1-p)^(d-3)
    z_to = z_timeout(p, a["t0_s"])  # eq. 35
    t_loss = (l_ss - l_tda) * z_to + l_tda * rtt  # eq. 36

    d_ca = d - d_ss - np.where(capped, wmax, w_ss)  # eq. 37 (reading 8)
    t_ca = np.where(d_ca > 0.0, d_ca / s["B"], 0.0)  # eq. 38

    no_loss = d < d_ss  # eq. 39, first case (never true with eq. 23: reading 6)
    with_ca = ~no_loss & (d_ca > 0.0)  # eq. 39, third case
    total = (
        t_3whs
        + t_ss
        + np.where(no_loss, 0.0, t_loss)
        + np.where(with_ca, t_ca, 0.0)
        - rtt / 2.0  # eq. 39: the last window needs only half an RTT
    )
    case = np.where(no_loss, 1, np.where(with_ca, 3, 2))
    throughput = a["size_bytes"] * BITS_PER_BYTE / total

    intermediate = _steady_intermediate(s, scalar)
    intermediate["B_steady_bps"] = unwrap(s["B"] * a["packet_bytes"] * BITS_PER_BYTE, scalar)
    transfer_values = {
        "d": d,
        "T_3whs": t_3whs,
        "d_ss": d_ss,
        "W_ss": w_ss,
        "ss_capped_by_wm": capped,
        "d_1": np.where(capped, d_1, 0.0),
        "r_1": np.where(capped, r_1, 0.0),
        "r_2": np.where(capped, r_2, 0.0),
        "T_ss": t_ss,
        "l_ss": l_ss,
        "l_tda": l_tda,
        "Z_TO": z_to,
        "T_loss": t_loss,
        "d_ca": d_ca,
        "T_ca": t_ca,
        "P_no_loss": survive_d,
    }
    intermediate.update(unwrap_all(transfer_values, scalar))
    intermediate["eq39_case"] = int(case) if scalar else case
    return ModelResult(
        model="hybla",
        inputs=unwrap_all(a, scalar),
        throughput_bps=unwrap(throughput, scalar),
        transfer_time_s=unwrap(total, scalar),
        intermediate=intermediate,
    )


def model(
    p: Any,
    rtt_s: Any,
    *,
    wmax_pkts: Any,
    size_bytes: Any = None,
    rho: Any = None,
    rtt0_s: Any = RTT0_S,
    t0_s: Any = T0_S,
    packet_bytes: Any = PACKET_BYTES,
    syn_timeout_s: Any = SYN_TIMEOUT_S,
) -> ModelResult:
    """The entry point for engines and the CLI: steady state when size_bytes is None."""
    if size_bytes is None:
        return steady_state(
            p,
            rtt_s,
            wmax_pkts=wmax_pkts,
            rho=rho,
            rtt0_s=rtt0_s,
            t0_s=t0_s,
            packet_bytes=packet_bytes,
        )
    return transfer(
        p,
        rtt_s,
        size_bytes,
        wmax_pkts=wmax_pkts,
        rho=rho,
        rtt0_s=rtt0_s,
        t0_s=t0_s,
        packet_bytes=packet_bytes,
        syn_timeout_s=syn_timeout_s,
    )


__all__ = [
    "ModelInputError",
    "model",
    "solve_w_bisection",
    "solve_w_newton",
    "steady_state",
    "transfer",
]
