"""Study 003's ramp and Fig. 7 readings on synthetic 1 s series (python/satcc/studies/study003.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from satcc.studies import study003 as S


def series(goodput, cwnd=None, ssthresh=None, start=60):
    n = len(goodput)
    t = np.arange(start, start + n, dtype=float)
    return pd.DataFrame(
        {
            "t_s": t,
            "goodput_bps": np.asarray(goodput, float),
            "cwnd_pkts": np.asarray(cwnd if cwnd is not None else [100.0] * n, float),
            "ssthresh_pkts": np.asarray(ssthresh if ssthresh is not None else [50.0] * n, float),
        }
    )


def test_a_climb_still_rising_at_the_end_of_the_run_has_no_ramp():
    # a linear climb over the whole 25 minutes: its first 95 % point is at the run's end
    rising = series(np.linspace(50e6, 260e6, 25 * 60))
    top, minutes = S.ramp(rising, 60.0)
    assert top is not None and minutes is None
    # the same climb followed by 5 minutes at the top: the ramp is seen
    flat = series(np.concatenate([np.linspace(50e6, 260e6, 10 * 60), np.full(5 * 60, 260e6)]))
    top, minutes = S.ramp(flat, 60.0)
    assert minutes is not None and 9 < minutes < 11


def test_fig7_reads_a_linear_climb_and_none_after_slow_start_filled_the_pipe():
    n_climb, n_top = 9 * 60, 6 * 60
    climb = np.concatenate([np.linspace(90e6, 263e6, n_climb), np.full(n_top, 263e6)])
    rng = np.random.default_rng(1)
    noisy = climb + rng.normal(0, 2e6, len(climb))
    cwnd = np.concatenate([np.linspace(1500, 4300, n_climb), np.full(n_top, 4500)])
    s = series(noisy, cwnd=cwnd, ssthresh=np.full(len(climb), 1200))
    top, _minutes = S.ramp(s, 60.0)
    assert S.climb_r2(s, 60.0, top) > 0.95
    # a concave (square-root) climb to the same top explains less of it with a straight line
    concave = 90e6 + (263e6 - 90e6) * np.sqrt(np.linspace(0, 1, n_climb))
    c = series(
        np.concatenate([concave, np.full(n_top, 263e6)]),
        cwnd=cwnd,
        ssthresh=np.full(len(climb), 1200),
    )
    tc, _m = S.ramp(c, 60.0)
    assert S.climb_r2(c, 60.0, tc) < S.climb_r2(s, 60.0, top)
    # slow start filled the pipe: at the top within seconds, no climb of a minute
    fast = series(
        np.concatenate([np.full(20, 100e6), np.full(20 * 60, 263e6)]),
        cwnd=np.full(20 * 60 + 20, 4500),
        ssthresh=np.full(20 * 60 + 20, 4255),
    )
    tf, _m = S.ramp(fast, 60.0)
    assert tf is not None and S.climb_r2(fast, 60.0, tf) == 0.0
