"""What the flow series say before, during and after a flow, and beside in-order goodput."""

from __future__ import annotations

import pytest

from satcc import scenario as sc
from satcc.engines import sim
from tests.helpers import requires_sim

SCENARIO = """
[scenario]
name = "late"
duration = "4 s"
bin = "50 ms"
seed = 3

[[link]]
a = "s"
b = "d"
rate = "20 Mbit/s"
delay = "20 ms"
loss = 0.005

[[flow]]
name = "late"
from = "s"
to = "d"
cca = "cubic"
start = "1 s"
size = "1 MB"

[[flow]]
name = "dgram"
from = "s"
to = "d"
proto = "udp"
rate = "1 Mbit/s"
"""


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("s") / "late.toml"
    path.write_text(SCENARIO)
    return sim.run(sc.load(path))


@requires_sim
def test_series_are_null_before_a_flow_starts_and_after_it_completes(result):
    # Before: cwnd 10 and srtt 0 before the start, frozen values after the end.
    f = result.flows.set_index("name").loc["late"]
    assert f["fct_s"] is not None and f["start_s"] + f["fct_s"] < 3.5
    s = result.flow_series[result.flow_series["flow_id"] == f["id"]]
    before = s[s["t_s"] + 0.05 <= f["start_s"]]
    after = s[s["t_s"] >= f["start_s"] + f["fct_s"]]
    during = s[(s["t_s"] >= f["start_s"]) & (s["t_s"] + 0.05 <= f["start_s"] + f["fct_s"])]
    assert len(before) == 20 and len(after) > 0 and len(during) > 0
    for col in ("cwnd_pkts", "srtt_ms", "delivered_bytes", "goodput_bps", "received_bps"):
        assert before[col].isna().all() and after[col].isna().all(), col
    assert during["cwnd_pkts"].notna().all() and during["srtt_ms"].dropna().gt(0).all()


@requires_sim
def test_udp_flows_have_no_tcp_state(result):
    f = result.flows.set_index("name").loc["dgram"]
    s = result.flow_series[result.flow_series["flow_id"] == f["id"]]
    assert s["cwnd_pkts"].isna().all() and s["srtt_ms"].isna().all()
    assert (s["received_bytes"] == s["delivered_bytes"]).all()


@requires_sim
def test_the_received_rate_is_bounded_by_the_link_where_in_order_goodput_is_not(result):
    f = result.flows.set_index("name").loc["late"]
    s = result.flow_series[result.flow_series["flow_id"] == f["id"]].dropna(subset=["received_bps"])
    assert s["received_bps"].max() <= 20e6
    # a repair releases what waited: that bin delivers more in order than arrived in it
    assert (s["goodput_bps"] > s["received_bps"]).any()
    assert s["received_bytes"].sum() >= s["delivered_bytes"].sum()
