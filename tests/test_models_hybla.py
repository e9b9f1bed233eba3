"""TCP Hybla model (study 002): the window equation, both regimes, transfer time, limits, errors.

Oracles are written here from the paper's printed equations with `math` (scalar, no numpy),
independently of satcc.models.hybla's vectorised kernels.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from satcc.models import hybla, mathis
from satcc.models.common import ModelInputError

STUDY = {"rtt_s": 0.55, "wmax_pkts": 550, "t0_s": 1.0, "packet_bytes": 1000}  # Tables 1-2
STUDY_LOSSES = [1e-6, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2]


# -- independent scalar transcription of the paper ------------------------------------------


def paper_g(w: float, p: float, rho: float) -> float:
    """Eq. 8 minus eq. 5 with eq. 3, 4, 7 as printed."""
    big_l = 1 + p * (w - 1)  # eq. 3
    big_d = (2 - p) ** (w - 1) / 2**w if w < 1000 else 0.5 * (1 - p / 2) ** (w - 1)  # eq. 4
    x = (1 - big_d) / rho**2 * w  # eq. 7
    y8 = x * (big_d * w + rho**2 / 2 * (x + 1)) + w / 2  # eq. 8
    y5 = 1 / p + w - big_l  # eq. 5
    return y8 - y5


def paper_bisection(p: float, rho: float) -> float:
    lo, hi = 0.0, 1.0
    while paper_g(hi, p, rho) < 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if paper_g(mid, p, rho) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def paper_steady_b(p: float, rtt: float, rho: float, wm: float) -> float:
    """B in segments/s from eq. 2-21 with the regime rule W >= W_m."""
    w = paper_bisection(p, rho)
    if w < wm:
        big_l = 1 + p * (w - 1)
        big_d = 0.5 * (1 - p / 2) ** (w - 1)
        x = (1 - big_d) / rho**2 * w
        a = (x + 1 + (1 - 1 / big_l)) * rtt  # eq. 9
        return (1 / p + w - big_l) / a  # eq. 10
    lm = 1 + p * (wm - 1)  # eq. 11
    dm = (2 - p) ** (wm - 1) / 2**wm  # eq. 12 with the lost superscripts restored
    x = 1 / (p * wm) + 0.5 - lm / wm + (1 - dm) ** 2 / (2 * rho**2) * wm  # eq. 19
    a = (x + 1 + (1 - 1 / lm)) * rtt  # eq. 20
    return (1 / p + wm - lm) / a  # eq. 21


def paper_transfer_t(p, rtt, rho, wm, t0, d, ts=3.0) -> float:
    """Eq. 22-39 as printed (2^p read as 2^rho), scalar."""
    b = paper_steady_b(p, rtt, rho, wm)
    t3 = rtt + ts * ((1 - p) / (1 - 2 * p) - 1)  # eq. 22
    dss = (1 - (1 - p) ** d) * (1 - p) / p  # eq. 23
    g = 2**rho
    wss = dss * (g - 1) / g + rho / g  # eq. 28
    if wss > wm:
        tss = rtt * (math.log2(wm / rho) / rho + 1 + (dss - (g * wm - rho) / (g - 1)) / wm)
    else:
        tss = rtt * math.log2(dss * (g - 1) / rho + 1) / rho  # eq. 32
    zto = t0 * (1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6) / (1 - p)
    tloss = ((1 - p) ** (d - 3) - (1 - p) ** d) * zto + (1 - (1 - p) ** (d - 3)) * rtt  # eq. 36
    dca = d - dss - min(wss, wm)  # eq. 37
    total = t3 + tss + tloss - rtt / 2  # eq. 39, second case
    if dca > 0:
        total += dca / b  # eq. 38-39, third case
    return total


# -- the window equation ----------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.2, 1.0, 3.0, 22.0, 80.0])
def test_newton_and_bisection_find_the_same_window(rho):
    p = np.logspace(-9, math.log10(0.49), 80)
    w_newton, iterations, fallback = hybla.solve_w_newton(p, rho)
    w_bisect = hybla.solve_w_bisection(p, rho)
    np.testing.assert_allclose(w_newton, w_bisect, rtol=1e-11)
    assert iterations.max() < 20
    assert not fallback.any()  # the Reno-like start keeps Newton inside the bracket


@pytest.mark.parametrize("p,rho", [(1e-6, 22.0), (1e-3, 22.0), (1e-2, 1.0), (0.3, 5.0)])
def test_solved_window_satisfies_the_printed_equations(p, rho):
    w = float(hybla.solve_w_newton(p, rho)[0])
    assert w == pytest.approx(paper_bisection(p, rho), rel=1e-10)
    assert abs(paper_g(w, p, rho)) < 1e-8 * (1 / p)  # eq. 5 == eq. 8
    d = 0.5 * (1 - p / 2) ** (w - 1)
    x = (1 - d) / rho**2 * w
    assert d * w + rho**2 * x == pytest.approx(w, rel=1e-12)  # eq. 6


def test_residual_derivative_matches_finite_differences():
    p, rho = np.array(2e-3), np.array(22.0)
    for w in [10.0, 300.0, 900.0, 5000.0]:
        h = 1e-4 * w
        fd = (hybla.w_residual(w + h, p, rho) - hybla.w_residual(w - h, p, rho)) / (2 * h)
        assert hybla.w_residual_derivative(np.array(w), p, rho) == pytest.approx(fd, rel=1e-6)


def test_window_equation_has_one_root_over_the_whole_domain():
    w = np.logspace(-3, 9, 4000)
    for p in np.logspace(-9, math.log10(0.49), 25):
        for rho in [0.1, 1.0, 22.0, 200.0]:
            g = hybla.w_residual(w, p, rho)
            assert np.count_nonzero(np.diff(np.sign(g))) == 1


# -- steady state ---------------------------------------------------------------------------


@pytest.mark.parametrize("p", STUDY_LOSSES + [2e-3, 3e-2, 0.2])
def test_steady_state_matches_the_scalar_transcription(p):
    res = hybla.steady_state(p, **STUDY)
    expected = paper_steady_b(p, 0.55, 22.0, 550) * 1000 * 8
    assert res.throughput_bps == pytest.approx(expected, rel=1e-9)
    assert res.transfer_time_s is None


def test_regime_follows_the_unconstrained_window():
    p = np.logspace(-7, -1, 200)
    res = hybla.steady_state(p, **STUDY)
    reaches = res.intermediate["W_unconstrained"] >= 550
    assert np.array_equal(res.intermediate["regime"] == hybla.REGIME_REACHES_WM, reaches)
    assert reaches[0] and not reaches[-1]
    assert np.all(res.intermediate["W"] <= 550)


def test_wm_regime_is_self_consistent():
    p = np.logspace(-8, -2.5, 60)
    res = hybla.steady_state(p, rtt_s=0.55, wmax_pkts=550)
    i = res.intermediate
    assert np.all(i["regime"] == hybla.REGIME_REACHES_WM)
    assert np.all(i["V"] >= 0)  # the regime rule keeps V (eq. 18) non-negative
    rho2 = 22.0**2
    # eq. 17 with eq. 15 and 18 reproduces eq. 13
    y17 = 0.5 * (i["D"] + 1) * 550 * i["U"] + 550 * i["V"] + 550 / 2
    np.testing.assert_allclose(y17, i["Y"], rtol=1e-12)
    # eq. 19 closed form equals U + V (eq. 16)
    x19 = 1 / (p * 550) + 0.5 - i["L"] / 550 + (1 - i["D"]) ** 2 / (2 * rho2) * 550
    np.testing.assert_allclose(x19, i["X"], rtol=1e-12)


def test_small_loss_tends_to_the_window_bound():
    for rtt, wm in [(0.55, 550), (0.03, 64), (1.2, 4000)]:
        res = hybla.steady_state(1e-10, rtt, wmax_pkts=wm, packet_bytes=1000)
        assert res.throughput_bps == pytest.approx(wm * 1000 * 8 / rtt, rel=2e-4)


def test_rho_one_is_reno_mathis_and_pftk_without_timeouts():
    """rho = 1: Hybla's growth is Reno's, and its cycle is PFTK's triple-dup-ACK cycle."""
    rtt = 0.1
    p = np.logspace(-8, -2, 13)
    res = hybla.steady_state(p, rtt, wmax_pkts=1e12, rho=1.0)
    b = res.intermediate["B_segments_per_s"]
    # Mathis with C = sqrt(3/2) is the p -> 0 limit ...
    ratio = b / (mathis.model(p, rtt).throughput_bps / 8000)
    assert abs(ratio[0] - 1) < 1e-4 and abs(ratio[-1] - 1) < 0.05
    assert np.all(np.diff(ratio) < 0)  # ... approached monotonically as p decreases
    # ... and PFTK's TD-only rate ((1-p)/p + E[W]) / (RTT (E[W]/2 + 1)), b = 1, within 3 %
    w = 1 + np.sqrt(8 * (1 - p) / (3 * p) + 1)
    td_only = ((1 - p) / p + w) / (rtt * (w / 2 + 1))
    np.testing.assert_allclose(b, td_only, rtol=0.03)
    assert np.all(np.abs(b / td_only - 1)[p <= 1e-4] < 2e-3)


def test_throughput_scales_with_rho_when_the_window_is_unlimited():
    p = 1e-10
    base = hybla.steady_state(p, 0.1, wmax_pkts=1e15, rho=1.0).throughput_bps
    for rho in [2.0, 8.0, 22.0]:
        res = hybla.steady_state(p, 0.1, wmax_pkts=1e15, rho=rho)
        assert res.throughput_bps / base == pytest.approx(rho, rel=1e-3)


def test_steady_state_falls_with_loss_within_each_regime():
    p = np.logspace(-8, math.log10(0.4), 600)
    res = hybla.steady_state(p, **STUDY)
    b = res.throughput_bps
    regime = res.intermediate["regime"]
    for name in (hybla.REGIME_REACHES_WM, hybla.REGIME_BELOW_WM):
        sel = regime == name
        assert np.all(np.diff(b[sel]) < 0)


def test_regime_switch_jumps_by_the_rounds_spent_at_wm():
    """Reading 4: at W = W_m the W_m regime spends V ~ (1 - D)/2 extra rounds at W_m."""
    p = np.linspace(3.0e-3, 5.0e-3, 4001)
    res = hybla.steady_state(p, **STUDY)
    switch = np.flatnonzero(res.intermediate["regime"] == hybla.REGIME_BELOW_WM)[0]
    before, after = res.element(switch - 1), res.element(switch)
    assert after.throughput_bps > before.throughput_bps  # B jumps up as p crosses the switch
    v = before.intermediate["V"]
    assert v == pytest.approx((1 - before.intermediate["D"]) / 2, abs=0.01)
    # the jump is the extra V R in A (eq. 20 vs eq. 9), Y being continuous
    a_without_v = before.intermediate["A"] - v * 0.55
    assert before.intermediate["Y"] / a_without_v == pytest.approx(
        after.intermediate["Y"] / after.intermediate["A"], rel=2e-3
    )


def test_vectorised_call_equals_scalar_calls():
    p = np.array(STUDY_LOSSES)
    vec = hybla.transfer(p, 0.55, 50e6, wmax_pkts=550)
    for i, pi in enumerate(STUDY_LOSSES):
        one = hybla.transfer(pi, 0.55, 50e6, wmax_pkts=550)
        assert one.transfer_time_s == vec.transfer_time_s[i]
        assert one.intermediate["regime"] == vec.intermediate["regime"][i]


# -- transfer time --------------------------------------------------------------------------


@pytest.mark.parametrize("p", STUDY_LOSSES)
@pytest.mark.parametrize("mbytes", [10, 50, 100])
def test_transfer_time_matches_the_scalar_transcription(p, mbytes):
    res = hybla.transfer(p, 0.55, mbytes * 10**6, wmax_pkts=550, t0_s=1.0)
    expected = paper_transfer_t(p, 0.55, 22.0, 550, 1.0, mbytes * 1000)
    assert res.transfer_time_s == pytest.approx(expected, rel=1e-9)
    assert res.throughput_bps == pytest.approx(mbytes * 8e6 / expected, rel=1e-9)


def test_uncapped_slow_start_uses_eq_27():
    # rho = 2, W_m large: cwnd 2, 8, 32, ... never reaches W_m
    res = hybla.transfer(1e-2, 0.05, 200_000, wmax_pkts=10_000, packet_bytes=1000)
    i = res.intermediate
    assert not i["ss_capped_by_wm"]
    expected_rounds = math.log2(i["d_ss"] * (2**2 - 1) / 2 + 1) / 2
    assert i["T_ss"] == pytest.approx(0.05 * expected_rounds, rel=1e-12)
    assert i["d_ca"] == pytest.approx(i["d"] - i["d_ss"] - i["W_ss"], rel=1e-12)


def test_lossless_limit_is_handshake_plus_slow_start_to_wm():
    rtt, wm, rho, d = 0.55, 550, 22.0, 10_000
    res = hybla.transfer(1e-13, rtt, d * 1000, wmax_pkts=wm)
    rounds = math.log2(wm / rho) / rho + 1 + (d - (2**rho * wm - rho) / (2**rho - 1)) / wm
    assert res.transfer_time_s == pytest.approx(rtt + rtt * rounds - rtt / 2, rel=1e-6)
    assert res.intermediate["eq39_case"] == 2


def test_long_transfers_tend_to_the_steady_state_rate():
    for p in [1e-5, 1e-3, 1e-2]:
        steady = hybla.steady_state(p, **STUDY).throughput_bps
        long = hybla.transfer(p, 0.55, 10**11, wmax_pkts=550).throughput_bps
        assert long == pytest.approx(steady, rel=2e-3)


def test_transfer_time_grows_with_loss_when_the_remainder_runs_at_b():
    """Eq. 39 third case (d_ca > 0): T grows with p within each steady-state regime."""
    p = np.logspace(-7, -1, 300)
    for size in [10e6, 100e6]:
        res = hybla.transfer(p, 0.55, size, wmax_pkts=550)
        regime, case = res.intermediate["regime"], res.intermediate["eq39_case"]
        for name in (hybla.REGIME_REACHES_WM, hybla.REGIME_BELOW_WM):
            sel = (regime == name) & (case == 3)
            assert np.count_nonzero(sel) > 10
            assert np.all(np.diff(res.transfer_time_s[sel]) > 0)
    t = hybla.transfer(1e-4, 0.55, np.array([1e6, 10e6, 50e6, 100e6]), wmax_pkts=550)
    assert np.all(np.diff(t.transfer_time_s) > 0)


def test_second_case_charges_the_last_window_only_the_loss_recovery_time():
    """Eq. 37-39 as printed: when d <= d_ss + W_m the d - d_ss segments after the first loss
    cost only T_loss, so T falls slightly as p rises (hybla.py reading 8)."""
    p = np.logspace(-7, -5, 50)
    res = hybla.transfer(p, 0.55, 10e6, wmax_pkts=550)
    i = res.intermediate
    assert np.all(i["eq39_case"] == 2)
    expected = i["T_3whs"] + i["T_ss"] + i["T_loss"] - 0.55 / 2
    np.testing.assert_allclose(res.transfer_time_s, expected, rtol=1e-12)
    assert np.all(np.diff(res.transfer_time_s) < 0)


def test_first_loss_mixes_timeout_and_fast_recovery_per_eq_36():
    res = hybla.transfer(1e-3, 0.55, 10e6, wmax_pkts=550, t0_s=2.0)
    i = res.intermediate
    zto = 2.0 * (1 + 1e-3 + 2e-6 + 4e-9 + 8e-12 + 16e-15 + 32e-18) / (1 - 1e-3)
    assert i["Z_TO"] == pytest.approx(zto, rel=1e-12)
    assert i["T_loss"] == pytest.approx((i["l_ss"] - i["l_tda"]) * zto + i["l_tda"] * 0.55)
    tiny = hybla.transfer(1e-3, 0.55, 3000, wmax_pkts=550)  # d = 3: no fast retransmit
    assert tiny.intermediate["l_tda"] == 0.0
    z = (1 + 1e-3 + 2e-6 + 4e-9 + 8e-12 + 16e-15 + 32e-18) / (1 - 1e-3)  # T_0 = 1 s
    assert tiny.intermediate["T_loss"] == pytest.approx(tiny.intermediate["l_ss"] * z, rel=1e-12)


def test_model_entry_point_dispatches_on_size():
    assert hybla.model(1e-4, 0.55, wmax_pkts=550).transfer_time_s is None
    assert hybla.model(1e-4, 0.55, wmax_pkts=550, size_bytes=10**7).transfer_time_s > 0


def test_result_serialises_to_json_with_the_paper_names():
    import json

    data = json.loads(json.dumps(hybla.transfer(1e-4, 0.55, 10**7, wmax_pkts=550).to_json_dict()))
    assert set(data) == {"model", "inputs", "throughput_bps", "transfer_time_s", "intermediate"}
    for key in ("W", "regime", "X", "L", "D", "Y", "A", "U", "V", "T_ss", "T_loss", "Z_TO"):
        assert key in data["intermediate"]
    assert data["inputs"]["rho"] == pytest.approx(22.0)


# -- invalid inputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"p": 0.0}, "loss probability p must be in (0, 0.5)"),
        ({"p": 0.5}, "loss probability p must be in (0, 0.5)"),
        ({"p": -1e-3}, "loss probability p"),
        ({"p": [1e-4, 0.7]}, "got 0.7"),
        ({"p": float("nan")}, "p must be a finite number"),
        ({"rtt_s": 0.0}, "rtt_s (mean RTT R) must be > 0"),
        ({"rtt_s": -0.1}, "rtt_s"),
        ({"wmax_pkts": 3}, "wmax_pkts (W_m) must be >= 4"),
        ({"t0_s": 0.0}, "t0_s"),
        ({"packet_bytes": 0}, "packet_bytes"),
        ({"rho": 0.0}, "rho must be > 0"),
        ({"rtt0_s": 0.0}, "rtt0_s"),
    ],
)
def test_invalid_inputs_raise_clear_errors(kwargs, message):
    args = {"p": 1e-4, "rtt_s": 0.55, "wmax_pkts": 550} | kwargs
    p, rtt = args.pop("p"), args.pop("rtt_s")
    with pytest.raises(ModelInputError, match=_literal(message)):
        hybla.steady_state(p, rtt, **args)
    with pytest.raises(ModelInputError, match=_literal(message)):
        hybla.transfer(p, rtt, 10**7, **args)


def test_transfer_specific_inputs_are_checked():
    with pytest.raises(ModelInputError, match="size_bytes"):
        hybla.transfer(1e-4, 0.55, 0, wmax_pkts=550)
    with pytest.raises(ModelInputError, match="rho must be <= W_m"):
        hybla.transfer(1e-4, 0.55, 10**7, wmax_pkts=10)  # rho = 22 > W_m
    with pytest.raises(ModelInputError, match="syn_timeout_s"):
        hybla.transfer(1e-4, 0.55, 10**7, wmax_pkts=550, syn_timeout_s=-1)


def test_no_nan_anywhere_on_a_wide_grid():
    p = np.logspace(-10, math.log10(0.499), 50)[:, None]
    rtt = np.array([0.001, 0.03, 0.55, 2.0])[None, :]
    res = hybla.transfer(p, rtt, 10**8, wmax_pkts=4000)
    assert np.all(np.isfinite(res.transfer_time_s)) and np.all(res.transfer_time_s > 0)
    for key, value in res.intermediate.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.all(np.isfinite(value)), key


def _literal(text: str) -> str:
    import re

    return re.escape(text)
