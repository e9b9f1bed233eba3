"""Window bound (study 003 eq. 1, time to a rate in CA) and the CUBIC response function."""

from __future__ import annotations

import math

import numpy as np
import pytest

from satcc.models import cubic, window
from satcc.models.common import ModelInputError

# -- window bound --------------------------------------------------------------------------


def test_window_bound_is_window_over_rtt():
    res = window.model(0.189)
    assert res.throughput_bps == pytest.approx(65535 * 8 / 0.189)
    assert window.model(0.015, window_bytes=10**6).throughput_bps == pytest.approx(8e6 / 0.015)


def test_window_scaling_reaches_the_study_s_8_gbits_at_one_second():
    """Study 003: shift 14 allows 2^(16+14) B/s ~ 8 Gbit/s at a 1 s RTT."""
    assert window.max_window_bytes() == 65535
    assert window.max_window_bytes(14) == 65535 * 2**14
    bound = window.model(1.0, window_bytes=window.max_window_bytes(14)).throughput_bps
    assert bound == pytest.approx(2**30 * 8, rel=1e-4)
    with pytest.raises(ModelInputError, match="wscale_shift"):
        window.max_window_bytes(15)


def test_time_to_rate_is_linear_growth_of_one_mss_per_rtt():
    res = window.model(0.1, target_rate_bps=100e6, mss_bytes=1250, start_window_pkts=200)
    # 100 Mbit/s * 0.1 s / 8 / 1250 B = 1000 segments; 800 more rounds of 0.1 s
    assert res.intermediate["target_window_segments"] == pytest.approx(1000)
    assert res.intermediate["time_to_target_s"] == pytest.approx(80.0)
    slow = window.model(0.1, target_rate_bps=100e6, mss_bytes=1250, rtts_per_mss=2)
    assert slow.intermediate["time_to_target_s"] == pytest.approx(200.0)
    assert not res.intermediate["window_sufficient"]  # 65535 B < 1.25 MB needed


def test_study_003_ramp_takes_ten_to_twenty_minutes_at_189_ms():
    """193 Mbit/s at 189 ms with a 1448-byte MSS from an empty window: ~10 min growing one MSS
    per RTT, ~20 min with delayed ACKs (one MSS per two RTTs)."""
    kwargs = {"window_bytes": window.max_window_bytes(14), "target_rate_bps": 193e6}
    per_rtt = window.model(0.189, **kwargs).intermediate["time_to_target_s"]
    delayed = window.model(0.189, rtts_per_mss=2, **kwargs).intermediate["time_to_target_s"]
    assert 9 * 60 < per_rtt < 11 * 60
    assert 18 * 60 < delayed < 21 * 60


def test_window_inputs_are_checked():
    for kwargs, name in [
        ({"rtt_s": 0.0}, "rtt_s"),
        ({"window_bytes": 0}, "window_bytes"),
        ({"rtts_per_mss": 0.5}, "rtts_per_mss"),
        ({"target_rate_bps": -1}, "target_rate_bps"),
    ]:
        args = {"rtt_s": 0.1} | kwargs
        with pytest.raises(ModelInputError, match=name):
            window.model(args.pop("rtt_s"), **args)


# -- CUBIC ---------------------------------------------------------------------------------


def test_k_is_the_cube_root_of_wmax_reduction_over_c():
    assert cubic.k_seconds(100.0) == pytest.approx((100 * 0.3 / 0.4) ** (1 / 3))
    k = cubic.k_seconds(np.array([10.0, 1000.0]), c=0.4, beta=cubic.BETA_CUBIC_LINUX)
    np.testing.assert_allclose(0.4 * k**3, np.array([10.0, 1000.0]) * (1 - 717 / 1024))


@pytest.mark.parametrize(
    "rtt,c,p,window",
    [  # RFC 9438 §5.1 Tables 1-2, columns where CUBIC is above Reno
        (0.1, 0.4, 1e-4, 187),
        (0.1, 0.4, 1e-5, 1054),
        (0.1, 0.4, 1e-6, 5926),
        (0.1, 0.4, 1e-7, 33325),
        (0.1, 0.4, 1e-8, 187400),
        (0.1, 0.04, 1e-6, 3332),
        (0.1, 4.0, 1e-5, 1874),
        (0.01, 0.4, 1e-7, 5926),
        (0.01, 0.4, 1e-8, 33325),
    ],
)
def test_average_window_reproduces_rfc_9438_tables(rtt, c, p, window):
    res = cubic.model(p, rtt, c=c)
    assert res.intermediate["region"] == cubic.REGION_CUBIC
    assert round(res.intermediate["avg_w"]) == window


def test_rfc_9438_constant_1_054_for_c_0_4():
    res = cubic.model(1e-3, 1.0)
    assert res.intermediate["avg_w_cubic"] / (1 / 1e-3) ** 0.75 == pytest.approx(1.054, abs=5e-4)


def test_reno_friendly_region_wins_at_short_rtt_and_equals_reno():
    res = cubic.model(1e-4, 0.01)
    assert res.intermediate["region"] == cubic.REGION_RENO
    assert res.intermediate["avg_w"] == pytest.approx(math.sqrt(1.5 / 1e-4))
    for beta in [0.5, 0.7, 0.8]:  # alpha_cubic makes AIMD(alpha, beta) Reno's for any beta
        b = np.array(beta)
        w = cubic.avg_window_aimd(np.array(1e-4), cubic.alpha_cubic(b), b)
        assert w == pytest.approx(math.sqrt(1.5 / 1e-4))


def test_one_cubic_cycle_carries_one_over_p_segments():
    """Integrate W(t) = C (t - K)^3 + W_max over a cycle [0, K] numerically: 1/p segments."""
    p, rtt = 1e-5, 0.2
    res = cubic.model(p, rtt)
    k, wmax = res.intermediate["K_s"], res.intermediate["W_max_cycle"]
    t = np.linspace(0.0, k, 200_001)
    w = 0.4 * (t - k) ** 3 + wmax
    assert w[0] == pytest.approx(0.7 * wmax)  # starts at beta W_max
    segments = float(np.sum((w[1:] + w[:-1]) / 2 * np.diff(t))) / rtt
    assert segments == pytest.approx(1 / p, rel=1e-6)
    assert rtt / (p * k) == pytest.approx(res.intermediate["avg_w_cubic"], rel=1e-12)


def test_cubic_throughput_and_cap():
    res = cubic.model(1e-6, 0.1, packet_bytes=1500)
    assert res.throughput_bps == pytest.approx(res.intermediate["avg_w"] * 1500 * 8 / 0.1)
    capped = cubic.model(1e-6, 0.1, packet_bytes=1500, wmax_pkts=1000)
    assert capped.throughput_bps == pytest.approx(1000 * 1500 * 8 / 0.1)
    p = np.logspace(-8, -1, 50)
    assert np.all(np.diff(cubic.model(p, 0.1).throughput_bps) < 0)


def test_cubic_inputs_are_checked():
    with pytest.raises(ModelInputError, match="loss probability"):
        cubic.model(0.0, 0.1)
    with pytest.raises(ModelInputError, match="beta"):
        cubic.model(1e-3, 0.1, beta=1.0)
    with pytest.raises(ModelInputError, match="c \\(CUBIC C\\)"):
        cubic.model(1e-3, 0.1, c=0.0)
    with pytest.raises(ModelInputError, match="w_max_pkts"):
        cubic.k_seconds(0.0)
