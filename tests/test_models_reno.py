"""Reno models: PFTK (full and approximate), Cardwell transfer latency, Mathis.

No published PFTK example values were found in the reference corpus, so the full model is checked
against a scalar transcription of eq. 31 written here, against its limits (Mathis as p -> 0,
W_max/RTT when window-limited) and against the approximation (eq. 32).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from satcc.models import cardwell, mathis, pftk
from satcc.models.common import ModelInputError


def f_of_p(p):
    return 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def q_hat(p, w):
    if w <= 3:
        return 1.0
    a = 1 - (1 - p) ** 3
    return min(1.0, a * (1 + (1 - p) ** 3 * (1 - (1 - p) ** (w - 3))) / (1 - (1 - p) ** w))


def pftk_eq31(p, rtt, t0, wmax, b):
    """PFTK eq. 31 as printed, scalar."""
    k = (2 + b) / (3 * b)
    ew = k + math.sqrt(8 * (1 - p) / (3 * b * p) + k * k)  # eq. 13
    if ew < wmax:
        q = q_hat(p, ew)
        return ((1 - p) / p + ew + q / (1 - p)) / (
            rtt * (b / 2 * ew + 1) + q * t0 * f_of_p(p) / (1 - p)
        )
    q = q_hat(p, wmax)
    return ((1 - p) / p + wmax + q / (1 - p)) / (
        rtt * (b / 8 * wmax + (1 - p) / (p * wmax) + 2) + q * t0 * f_of_p(p) / (1 - p)
    )


# -- PFTK -------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [1e-6, 1e-4, 3e-3, 0.02, 0.1, 0.3])
@pytest.mark.parametrize("b", [1, 2])
@pytest.mark.parametrize("wmax", [8, 64, 1e9])
def test_pftk_full_model_matches_the_scalar_transcription(p, b, wmax):
    res = pftk.send_rate(p, 0.2, t0_s=1.5, wmax_pkts=wmax, b=b, packet_bytes=1460)
    expected = pftk_eq31(p, 0.2, 1.5, wmax, b) * 1460 * 8
    assert res.throughput_bps == pytest.approx(expected, rel=1e-12)


def test_pftk_without_window_limit_tends_to_mathis():
    for b in [1, 2]:
        for p in [1e-8, 1e-7]:
            res = pftk.send_rate(p, 0.1, b=b, packet_bytes=1000)
            assert res.throughput_bps * 0.1 * math.sqrt(p) / 8000 == pytest.approx(
                math.sqrt(3 / (2 * b)), rel=1e-3
            )


def test_pftk_window_limited_tends_to_wmax_over_rtt():
    res = pftk.send_rate(1e-10, 0.55, wmax_pkts=550, packet_bytes=1000)
    assert res.intermediate["regime"] == pftk.REGIME_WINDOW
    assert res.throughput_bps == pytest.approx(550 * 8000 / 0.55, rel=1e-3)


def test_pftk_approximation_is_close_to_the_full_model():
    p = np.logspace(-6, -1.5, 40)
    for b in [1, 2]:
        full = pftk.send_rate(p, 0.2, b=b).throughput_bps
        approx = pftk.approximate(p, 0.2, b=b).throughput_bps
        np.testing.assert_allclose(approx, full, rtol=0.03)
    capped = pftk.approximate(1e-8, 0.2, wmax_pkts=20).throughput_bps
    assert capped == pytest.approx(20 * 8000 / 0.2)


def test_pftk_falls_with_loss_and_timeouts_take_over():
    p = np.logspace(-7, math.log10(0.45), 200)
    res = pftk.send_rate(p, 0.55, wmax_pkts=550)
    assert np.all(np.diff(res.throughput_bps) < 0)
    q = res.intermediate["Q_hat"]
    assert np.all((q > 0) & (q <= 1)) and q[-1] > 0.99 and q[0] < 0.01
    assert np.all(np.diff(q) > 0)  # smaller windows: more losses end in a timeout


def test_q_hat_is_one_for_windows_too_small_for_three_dupacks():
    q = pftk.timeout_probability_q(np.array([0.01, 0.01, 0.01]), np.array([2.0, 3.0, 10.0]))
    assert q[0] == 1.0 and q[1] == 1.0 and q[2] == pytest.approx(q_hat(0.01, 10.0))


# -- Mathis ----------------------------------------------------------------------------------


def test_mathis_at_hand_computed_points():
    # 1460-byte MSS, 100 ms, p = 1e-4: 1460*8/0.1 * sqrt(3/2)/0.01 bit/s
    res = mathis.model(1e-4, 0.1, packet_bytes=1460)
    assert res.throughput_bps == pytest.approx(1460 * 8 / 0.1 * math.sqrt(1.5) / 0.01, rel=1e-12)
    rounded = mathis.model(1e-4, 0.1, packet_bytes=1460, c=mathis.C_ROUNDED)
    assert rounded.throughput_bps == pytest.approx(1460 * 8 / 0.1 * 1.22 / 0.01, rel=1e-12)
    delayed = mathis.model(1e-4, 0.1, packet_bytes=1460, b=2)
    assert delayed.intermediate["C"] == pytest.approx(math.sqrt(0.75))


def test_mathis_with_1_2_reproduces_the_reno_column_of_rfc_9438_table_1():
    # RFC 9438 §5.1 Table 1 (from RFC 3649): Reno average window 1.2/sqrt(p), rounded
    table = {1e-2: 12, 1e-3: 38, 1e-4: 120, 1e-5: 379, 1e-6: 1200, 1e-7: 3795, 1e-8: 12000}
    for p, window in table.items():
        got = mathis.model(p, 0.1, c=1.2).intermediate["mean_window_segments"]
        assert round(got) == window


def test_mathis_errors():
    with pytest.raises(ModelInputError, match="loss probability"):
        mathis.model(0.0, 0.1)
    with pytest.raises(ModelInputError, match="rtt_s"):
        mathis.model(1e-3, 0.0)
    with pytest.raises(ModelInputError, match="b"):
        mathis.model(1e-3, 0.1, b=0.5)


# -- Cardwell -----------------------------------------------------------------------------


def cardwell_scalar(p, rtt, d, t0, wmax, b, w1, delack, ts=3.0):
    gamma = 1 + 1 / b
    t3 = rtt + ts * ((1 - p) / (1 - 2 * p) + (1 - p) / (1 - 2 * p) - 2)  # eq. 4
    dss = min((1 - (1 - p) ** d) * (1 - p) / p + 1, d)  # eq. 5 (capped at d)
    wss = dss * (gamma - 1) / gamma + w1 / gamma  # eq. 11
    if wss > wmax:  # eq. 15
        tss = rtt * (
            math.log(wmax / w1, gamma) + 1 + (dss - (gamma * wmax - w1) / (gamma - 1)) / wmax
        )
    else:
        tss = rtt * math.log(dss * (gamma - 1) / w1 + 1, gamma)
    lss = 1 - (1 - p) ** d  # eq. 16
    q = q_hat(p, min(wss, wmax))  # eq. 17
    zto = f_of_p(p) * t0 / (1 - p)  # eq. 18-19
    tloss = lss * (q * zto + (1 - q) * rtt)  # eq. 20
    k = (2 + b) / (3 * b)
    wp = k + math.sqrt(8 * (1 - p) / (3 * b * p) + k * k)  # eq. 23
    if wp < wmax:  # eq. 22
        qw = q_hat(p, wp)
        r = ((1 - p) / p + wp / 2 + qw) / (rtt * (b / 2 * wp + 1) + qw * f_of_p(p) * t0 / (1 - p))
    else:
        qw = q_hat(p, wmax)
        r = ((1 - p) / p + wmax / 2 + qw) / (
            rtt * (b / 8 * wmax + (1 - p) / (p * wmax) + 2) + qw * f_of_p(p) * t0 / (1 - p)
        )
    tca = (d - dss) / r  # eq. 21, 24
    return t3 + tss + tloss + tca + delack  # eq. 25 + handshake


@pytest.mark.parametrize("p", [1e-5, 1e-3, 0.02, 0.2])
@pytest.mark.parametrize("b,wmax", [(1, 1e9), (2, 20), (2, 1e9), (1, 44)])
@pytest.mark.parametrize("segments", [5, 100, 10_000])
def test_cardwell_matches_the_scalar_transcription(p, b, wmax, segments):
    delack = 0.1 if b == 2 else 0.0
    res = cardwell.transfer(
        p, 0.08, segments * 1460, t0_s=1.2, wmax_pkts=wmax, b=b, packet_bytes=1460
    )
    expected = cardwell_scalar(p, 0.08, segments, 1.2, wmax, b, 1, delack)
    assert res.transfer_time_s == pytest.approx(expected, rel=1e-9)  # expm1 vs 1 - (1-p)^d


def test_cardwell_lossless_limit_is_handshake_plus_slow_start():
    for wmax, d in [(None, 1000), (64, 10_000)]:
        res = cardwell.transfer(1e-12, 0.1, d * 1000, wmax_pkts=wmax)
        if wmax is None:
            rounds = math.log2(d + 1)  # gamma = 2, w1 = 1
        else:
            rounds = math.log2(wmax) + 1 + (d - (2 * wmax - 1)) / wmax
        assert res.transfer_time_s == pytest.approx(0.1 + 0.1 * rounds, rel=1e-6)


def test_cardwell_long_transfers_tend_to_the_pftk_throughput():
    p = 1e-3
    long = cardwell.transfer(p, 0.1, 10**11, wmax_pkts=1e9)
    rate = long.intermediate["R_segments_per_s"] * 8000
    assert long.throughput_bps == pytest.approx(rate, rel=1e-3)


def test_cardwell_latency_grows_with_loss_and_size():
    p = np.logspace(-7, -1, 200)
    res = cardwell.transfer(p, 0.1, 1e6, wmax_pkts=64)
    assert np.all(np.diff(res.transfer_time_s) > 0)
    sizes = cardwell.transfer(1e-3, 0.1, np.array([1e3, 1e4, 1e5, 1e6]))
    assert np.all(np.diff(sizes.transfer_time_s) > 0)


def test_cardwell_handshake_can_be_left_out():
    a = cardwell.transfer(1e-2, 0.1, 1e5)
    b = cardwell.transfer(1e-2, 0.1, 1e5, include_handshake=False)
    assert a.transfer_time_s - b.transfer_time_s == pytest.approx(a.intermediate["T_3whs"])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"p": 0.5}, "loss probability"),
        ({"rtt_s": 0}, "rtt_s"),
        ({"size_bytes": 0}, "size_bytes"),
        ({"wmax_pkts": 2}, "wmax_pkts"),
        ({"t0_s": -1}, "t0_s"),
        ({"b": 0.5}, "b (segments per ACK)"),
        ({"w1_pkts": 100, "wmax_pkts": 10}, "w1_pkts must be <= W_max"),
    ],
)
def test_cardwell_and_pftk_reject_invalid_inputs(kwargs, message):
    args = {"p": 1e-3, "rtt_s": 0.1, "size_bytes": 1e6} | kwargs
    with pytest.raises(ModelInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cardwell.transfer(args.pop("p"), args.pop("rtt_s"), args.pop("size_bytes"), **args)
    if "size_bytes" in kwargs or "w1_pkts" in kwargs:
        return
    args = {"p": 1e-3, "rtt_s": 0.1} | kwargs
    with pytest.raises(ModelInputError):
        pftk.send_rate(args.pop("p"), args.pop("rtt_s"), **args)
