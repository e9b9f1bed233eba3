"""The tools behind study 004's investigation: the tick-served link, the CC state series, and the
table that reads them (satcc.studies.study004_why)."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

import satcc
from satcc.errors import UserError
from satcc.studies import study004_why as why

ONE_LINK = """
[scenario]
name = "tick"
duration = "{duration}"
bin = "0.5 s"
seed = 3

[[link]]
a = "h1"
b = "h2"
rate = "10 Mbit/s"
delay = "10 ms"
queue = "{queue}"
{extra}

[[flow]]
from = "h1"
to = "h2"
cca = "cubic"
"""


def scenario(tmp_path, extra: str = "", duration: str = "6 s", queue: str = "1000 pkt"):
    p = tmp_path / "s.toml"
    p.write_text(ONE_LINK.format(extra=extra, duration=duration, queue=queue))
    return p


def test_a_tick_served_link_still_carries_its_rate(tmp_path):
    # 10 Mbit/s on a 100 Hz tick: 12.5 kB bursts every 10 ms; a backlogged flow still gets the
    # rate, its RTT grows by up to a tick per crossing
    exact = satcc.run(scenario(tmp_path))
    tick = satcc.run(scenario(tmp_path, 'service = "tick"\nhz = 100'))
    e = float(exact.summary["goodput_bps"].iloc[0])
    t = float(tick.summary["goodput_bps"].iloc[0])
    assert abs(t - e) / e < 0.05, (e, t)
    assert float(tick.summary["rtt_min_ms"].iloc[0]) > float(exact.summary["rtt_min_ms"].iloc[0])


def test_tick_service_is_refused_on_a_link_with_a_model(tmp_path):
    p = tmp_path / "m.toml"
    p.write_text(
        """
[scenario]
duration = "1 s"
[[link]]
a = "dish"
b = "pop"
service = "tick"
[link.model]
kind = "starlink"
preset = "residential"
direction = "up"
[[flow]]
from = "dish"
to = "pop"
"""
    )
    with pytest.raises(UserError, match=r"link\[0\]\.service"):
        satcc.run(p)


def test_a_tick_rate_out_of_range_is_named(tmp_path):
    with pytest.raises(UserError, match=r"link\[0\]\.hz: expected a tick rate in 1\.\.1000000"):
        satcc.run(scenario(tmp_path, 'service = "tick"\nhz = 0'))


def test_the_cc_state_series_records_cubic_and_changes_nothing_else(tmp_path):
    plain = tmp_path / "plain"
    traced = tmp_path / "traced"
    satcc.run(scenario(tmp_path, duration="4 s", queue="20 pkt")).write(plain)
    s = scenario(tmp_path, duration="4 s", queue="20 pkt")
    s.write_text(s.read_text().replace("seed = 3", "seed = 3\ncc_state = true"))
    satcc.run(s).write(traced)
    assert not (plain / "cc_series.parquet").exists()
    cc = pq.read_table(traced / "cc_series.parquet").to_pandas()
    names = set(cc["name"])
    assert {"w_max", "acked_cubic", "acked_reno", "k_s"} <= names
    # cumulative counts never fall
    for name in ("acked_cubic", "acked_reno"):
        v = cc[cc["name"] == name].sort_values("t_s")["value"]
        assert v.is_monotonic_increasing
    for f in ("flows.parquet", "flow_series.parquet", "link_series.parquet"):
        assert pq.read_table(plain / f).equals(pq.read_table(traced / f)), f
    a = json.loads((plain / "summary.json").read_text())["flows"]
    b = json.loads((traced / "summary.json").read_text())["flows"]
    assert a == b


def runs_frame(deltas: dict[int, float]) -> pd.DataFrame:
    rows = []
    for seed, d in deltas.items():
        for k, jain in (("stock", 0.6), ("eq6-1ms", 0.6 + d)):
            rows.append(
                {
                    "setup": "testbed",
                    "pc2_ms": 128.0,
                    "k": k,
                    "seed": seed,
                    "short_bps": 1.0,
                    "long_bps": 1.0,
                    "long_share": 0.5,
                    "jain": jain,
                    "retx_short": 0.0,
                    "retx_long": 0.0,
                    "reno_short": 0.5,
                    "reno_long": 0.5,
                    "k_long_s": 1.0,
                    "wmax_long": 10.0,
                }
            )
    return pd.DataFrame(rows)


def test_a_change_from_stock_holds_only_when_the_sign_test_shows_it():
    """'Every seed agrees' is a coin toss at 2 seeds (the quick investigation's): the change
    from stock is shown only by the sign test (5 seeds on one side at least), as a claim's."""
    two = why.summary(runs_frame({1: 0.02, 2: 0.05}))
    row = two[two["k"] == "eq6-1ms"].iloc[0]
    assert row["holds"] == "not shown (2 seeds)" and row["d_jain"] == pytest.approx(0.035)
    agree = why.summary(runs_frame({s: 0.01 * s for s in range(1, 6)}))
    assert agree[agree["k"] == "eq6-1ms"].iloc[0]["holds"] == "shown"
    down = why.summary(runs_frame({s: -0.01 * s for s in range(1, 6)}))
    assert down[down["k"] == "eq6-1ms"].iloc[0]["holds"] == "shown"  # either side
    mixed = why.summary(runs_frame({1: 0.02, 2: -0.01, 3: 0.02, 4: 0.03, 5: 0.01}))
    assert mixed[mixed["k"] == "eq6-1ms"].iloc[0]["holds"] == "not shown (5 seeds)"
    zero = why.summary(runs_frame({1: 0.0, 2: 0.03, 3: 0.02, 4: 0.03, 5: 0.01}))
    assert zero[zero["k"] == "eq6-1ms"].iloc[0]["holds"] == "not shown (5 seeds)"
    assert "(not shown (2 seeds))" in why.explain(two.assign(engine="sim"))


def test_the_reno_share_is_each_counters_gain_over_the_second_half():
    # per (run, flow): the acks counted under Reno's emulation over all congestion-avoidance
    # acks from the half on (each counter's last sample minus its last before the half, 0 when
    # it has none); NaN without counters or gain. One pass over the series (study004-why's 36
    # quick runs: 0.56 -> 0.13-0.19 CPU s, the same table), rows in any order.
    rows = [
        # run a (60 s, half 30), flow 0: reno 10 -> 40, cubic 90 -> 150: 30 / (30 + 60)
        ("a", 0, 50.0, "acked_reno", 40.0),
        ("a", 0, 10.0, "acked_reno", 10.0),
        ("a", 0, 10.0, "acked_cubic", 90.0),
        ("a", 0, 55.0, "acked_cubic", 150.0),
        ("a", 0, 20.0, "w_max", 7.0),
        # flow 1: no sample before the half (counted from 0); cubic only -> share 0
        ("a", 1, 40.0, "acked_cubic", 5.0),
        ("a", 1, 45.0, "acked_reno", 0.0),
        # run b (10 s, half 5), flow 0: no gain at all -> NaN; flow 1: no counters -> absent
        ("b", 0, 1.0, "acked_reno", 3.0),
        ("b", 0, 1.0, "acked_cubic", 3.0),
        ("b", 1, 2.0, "w_max", 1.0),
    ]
    cc = pd.DataFrame(rows, columns=["run_id", "flow_id", "t_s", "name", "value"])
    half = pd.Series({"a": 30.0, "b": 5.0})
    out = why._reno_shares(cc.iloc[::-1], half)
    assert out[("a", 0)] == pytest.approx(30 / 90) and out[("a", 1)] == 0.0
    assert pd.isna(out[("b", 0)]) and ("b", 1) not in out
