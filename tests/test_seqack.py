"""The simulator's sequence/ACK trace (`[scenario.seqack]`, seqack.parquet): what a capture at
the sender would show, checked against the run's own counters."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from satcc import results
from satcc import scenario as sc
from satcc.cli import main
from tests.helpers import requires_sim

LOSSY = """
[scenario]
name = "trace"
duration = "3 s"
{seqack}
[[link]]
a = "s"
b = "r"
rate = "20 Mbit/s"
delay = "10 ms"
loss = 0.005

[[flow]]
from = "s"
to = "r"
cca = "cubic"

[[flow]]
from = "s"
to = "r"
proto = "udp"
rate = "1 Mbit/s"
"""


def run(write_toml, tmp_path, seqack: str, name: str = "out"):
    path = write_toml(LOSSY.format(seqack=seqack))
    out = tmp_path / name
    assert main(["sim", str(path), "--out", str(out)]) == 0
    return out


@requires_sim
def test_a_whole_run_trace_counts_what_the_sender_counted(write_toml, tmp_path):
    out = run(write_toml, tmp_path, "seqack = { flow = 0 }")
    t = pq.read_table(out / "seqack.parquet").to_pandas()
    flow = pq.read_table(out / "flows.parquet").to_pylist()[0]
    data, acks, sacks = (t[t["kind"] == k] for k in ("data", "ack", "sack"))
    assert len(data) == flow["sent_packets"]
    assert int(data["retransmission"].sum()) == flow["retransmitted_packets"] > 0
    assert (data["end_rel"] > data["seq_rel"]).all()
    assert acks["ack_rel"].is_monotonic_increasing  # cumulative ACKs never go back
    assert len(sacks) > 0 and (sacks["end_rel"] > sacks["seq_rel"]).all()
    assert (t["flow_id"] == 0).all() and t["t_s"].is_monotonic_increasing
    doc = results.load(out)
    assert doc.extras["seqack.parquet"].num_rows == len(t)
    assert doc.summary()["seqack"] == {"flow": 0, "rows": len(t), "dropped_rows": 0}


@requires_sim
def test_the_trace_is_deterministic_and_absent_unless_asked_for(write_toml, tmp_path):
    a = run(write_toml, tmp_path, 'seqack = { flow = 0, from = "1 s", to = "2 s" }', "a")
    b = run(write_toml, tmp_path, 'seqack = { flow = 0, from = "1 s", to = "2 s" }', "b")
    assert (a / "seqack.parquet").read_bytes() == (b / "seqack.parquet").read_bytes()
    t = pq.read_table(a / "seqack.parquet").column("t_s").to_pylist()
    assert t and min(t) >= 1.0 and max(t) < 2.0
    plain = run(write_toml, tmp_path, "", "plain")
    assert not (plain / "seqack.parquet").exists()
    # the trace does not change the run
    assert pq.read_table(a / "flows.parquet").equals(pq.read_table(plain / "flows.parquet"))


@requires_sim
def test_rows_past_max_rows_are_counted_in_the_summary(write_toml, tmp_path):
    out = run(write_toml, tmp_path, "seqack = { flow = 0, max_rows = 50 }")
    doc = results.load(out).summary()["seqack"]
    assert doc["rows"] == 50 and doc["dropped_rows"] > 0


@pytest.mark.parametrize(
    ("seqack", "key", "message"),
    [
        ("seqack = { flow = 5 }", "scenario.seqack.flow", "expected a flow id in 0..1, found 5"),
        ("seqack = { flow = 1 }", "scenario.seqack.flow", "expected a TCP flow, flow 1 is UDP"),
        ('seqack = { to = "4 s" }', "scenario.seqack.to", "found from 0 s, to 4 s"),
        ("seqack = { max_rows = 0 }", "scenario.seqack.max_rows", "found 0"),
        ('seqack = { flow = 0, when = "now" }', "scenario.seqack.when", ""),
    ],
)
def test_a_bad_trace_request_names_its_key(write_toml, seqack, key, message):
    with pytest.raises(sc.ScenarioError) as e:
        sc.load(write_toml(LOSSY.format(seqack=seqack)))
    assert key in str(e.value) and message in str(e.value)
