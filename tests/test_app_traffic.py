"""Application traffic in `[[flow]]` (issue 27 item 2, docs/scenario.md): `app` = bulk, on/off
or requests (of any byte count), run by the simulator through the sender's application writes,
`slow_start_after_idle` (Linux's net.ipv4.tcp_slow_start_after_idle) and `nodelay`
(TCP_NODELAY: Nagle off)."""

from __future__ import annotations

import pytest

from satcc import scenario as sc
from satcc.emu.host import EmuError
from satcc.emu.runner import check_apps
from satcc.emu.traffic import tcp_client_cmd
from satcc.engines import model, sim
from satcc.errors import UserError

# One 20 Mbit/s link, 100 ms RTT: a bulk Reno flow's cwnd reaches hundreds of segments in 1 s.
PATH = """
[scenario]
name = "app"
duration = "{duration}"
host_noise = "off"

[[link]]
a = "s"
b = "d"
rate = "20 Mbit/s"
delay = "50 ms"
queue = "1 BDP"

[[flow]]
from = "s"
to = "d"
cca = "reno"
{flow}
"""

ONOFF = 'app = { kind = "onoff", on = "1 s", off = "2 s" }'


def _load(flow: str, duration: str = "4 s") -> sc.Scenario:
    return sc.loads(PATH.format(flow=flow, duration=duration), source="app.toml")


def _issues(flow: str) -> list[str]:
    with pytest.raises(sc.ScenarioError) as e:
        _load(flow)
    return str(e.value).splitlines()


def _series(flow: str, duration: str = "4 s"):
    fs = sim.run(_load(flow, duration)).flow_series
    return fs.set_index(fs.t_s.round(1))


# -- the schema ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flow", "want"),
    [
        ('app = { kind = "poisson" }', "app.toml: flow[0].app.kind: expected one of 'bulk'"),
        (
            'app = { on = "1 s" }',
            "flow[0].app.kind: expected one of 'bulk', 'onoff', 'requests', found nothing",
        ),
        ('app = { kind = "onoff", on = "1 s" }', "flow[0].app.off: expected a duration"),
        (
            'app = { kind = "onoff", on = "1 s", off = "2 parsecs" }',
            "flow[0].app.off: expected a duration",
        ),
        (
            'app = { kind = "onoff", on = "0 s", off = "1 s" }',
            "flow[0].app.on: expected a positive value",
        ),
        ('app = { kind = "onoff", on = "1 s", off = "1 s", every = "1 s" }', "unknown key 'every'"),
        (
            'app = { kind = "requests", size = "0 B", every = "500 ms" }',
            "flow[0].app.size: expected a positive value",
        ),
        (
            'app = { kind = "requests", size = "2896 B" }',
            "flow[0].app.every: expected exactly one of every and at, found neither",
        ),
        (
            'app = { kind = "requests", size = "2896 B", every = "1 s", at = ["0 s"] }',
            "found both",
        ),
        (
            'app = { kind = "requests", size = "2896 B", at = ["1 s", "0 s"] }',
            "flow[0].app.at: expected ascending",
        ),
        (
            'app = { kind = "requests", size = "2896 B", at = ["1 s", 3] }',
            "flow[0].app.at[1]: expected a duration",
        ),
        ('size = "1 MB"\n' + ONOFF, "flow[0].size: expected no size (the application decides"),
        (
            "metrics_save = true\n" + ONOFF,
            "flow[0].metrics_save: expected false (the cache",
        ),
        ('proto = "udp"\nrate = "1 Mbit/s"\n' + ONOFF, "flow[0].proto: expected a TCP flow"),
        ('slow_start_after_idle = "yes"', "flow[0].slow_start_after_idle: expected true or false"),
        ('nodelay = "on"', "flow[0].nodelay: expected true or false"),
    ],
)
def test_a_bad_app_key_is_one_line_naming_file_key_and_expectation(flow, want):
    lines = _issues(flow)
    assert any(want in line for line in lines), lines
    assert all(line.startswith("app.toml: flow[0].") for line in lines), lines


def test_the_resolved_flow_carries_the_app_only_when_it_is_not_the_default():
    bulk = sc.spec(_load(""))["flows"][0]
    assert "app" not in bulk and "slow_start_after_idle" not in bulk
    assert sc.spec(_load('app = { kind = "bulk" }'))["flows"][0] == bulk
    f = sc.spec(_load(ONOFF + "\nslow_start_after_idle = false"))["flows"][0]
    assert f["app"] == {"kind": "onoff", "on_ns": 1_000_000_000, "off_ns": 2_000_000_000}
    assert f["slow_start_after_idle"] is False
    f = sc.spec(_load('app = { kind = "requests", size = "2896 B", at = ["0 s", "1.5 s"] }'))
    assert f["flows"][0]["app"] == {"kind": "requests", "bytes": 2896, "at_ns": [0, 1_500_000_000]}
    assert "nodelay" not in bulk and sc.spec(_load("nodelay = false"))["flows"][0] == bulk
    assert sc.spec(_load("nodelay = true"))["flows"][0]["nodelay"] is True


# -- the simulator ------------------------------------------------------------------------------


def test_on_off_leaves_idle_gaps_and_restarts_cwnd_after_idle():
    on = _series(ONOFF)
    # on 0-1 s, off 1-3 s, on 3-4 s; the last data of the first "on" lands by ~1.2 s
    assert on.loc[0.5, "delivered_bytes"] > 0 and on.loc[3.5, "delivered_bytes"] > 0
    idle = on.loc[1.3:2.9, "delivered_bytes"]
    assert len(idle) == 17 and (idle == 0).all(), idle
    grown = on.loc[2.5, "cwnd_pkts"]
    assert grown > 40  # slow start for 1 s on a 172-segment BDP
    # tcp_cwnd_restart at the write (3 s): cwnd halves once per RTO idle beyond the first
    # (~1.8 s idle, RTO ~0.4 s here: four halvings), never below the initial window
    restarted = on.loc[2.9, "cwnd_pkts"]
    assert 10 <= restarted <= grown // 8, (grown, restarted)

    off = _series(ONOFF + "\nslow_start_after_idle = false")
    assert (off.loc[1.3:2.9, "delivered_bytes"] == 0).all()
    assert off.loc[2.5, "cwnd_pkts"] == grown  # the same first "on" period
    assert off.loc[2.9, "cwnd_pkts"] == grown  # no restart
    # the kept window gets the second burst through faster
    assert off.loc[3.0:3.9, "delivered_bytes"].sum() > on.loc[3.0:3.9, "delivered_bytes"].sum()


def test_requests_deliver_exactly_what_was_written_at_the_given_times():
    size = 100 * 1448
    r = sim.run(_load(f'app = {{ kind = "requests", size = "{size} B", at = ["0 s", "1.5 s"] }}'))
    assert int(r.flows.delivered_bytes[0]) == 2 * size
    fs = r.flow_series.set_index(r.flow_series.t_s.round(1))
    assert fs.loc[0.0:0.9, "delivered_bytes"].sum() == size
    assert (fs.loc[1.0:1.4, "delivered_bytes"] == 0).all()  # bins before the write at 1.5 s
    assert fs.loc[1.5:, "delivered_bytes"].sum() == size


def test_periodic_requests_never_deliver_more_than_was_written():
    size = 20 * 1448
    r = sim.run(
        _load(f'app = {{ kind = "requests", size = "{size} B", every = "500 ms" }}', "2.2 s")
    )
    delivered = int(r.flows.delivered_bytes[0])
    assert delivered == 5 * size  # writes at 0, 0.5, 1, 1.5, 2 s; each takes < 200 ms


def test_requests_of_any_byte_count_are_delivered_exactly():
    # 1000 B and 2000 B are not multiples of the 1448 B MSS: the sender cuts a short segment.
    for size in (1000, 2000):
        r = sim.run(_load(f'app = {{ kind = "requests", size = "{size} B", at = ["0 s", "1 s"] }}'))
        assert int(r.flows.delivered_bytes[0]) == 2 * size


SMALL = 'app = { kind = "requests", size = "100 B", every = "10 ms" }'


def test_nagle_coalesces_small_requests_and_nodelay_sends_each_at_once():
    # 100 B every 10 ms over a 100 ms RTT, 2 s: 200 writes. With Nagle (Linux's default,
    # Minshall's variant) at most one short segment is unacknowledged, so about one segment
    # per RTT carries the writes made meanwhile; with TCP_NODELAY each write goes at once
    # (coalescing only when cwnd, 10 segments, is full).
    nagle = sim.run(_load(SMALL, "2 s")).flows.iloc[0]
    nodelay = sim.run(_load("nodelay = true\n" + SMALL, "2 s")).flows.iloc[0]
    assert nagle.delivered_bytes == nodelay.delivered_bytes > 190 * 100
    assert nagle.sent_packets <= 2.0 / 0.1 + 1, nagle.sent_packets
    assert nodelay.sent_packets >= 150, nodelay.sent_packets
    assert nagle.sent_packets * 5 < nodelay.sent_packets


def test_the_emulator_sets_tcp_nodelay_when_asked():
    bulk = sc.resolve(_load("nodelay = true"))["flows"][0]
    assert "--nodelay" in tcp_client_cmd("ns", bulk, "10.0.0.2", "reno", 1, 5)
    limited = sc.resolve(_load('nodelay = true\nsize = "1 MB"'))["flows"][0]
    assert "--nodelay" in tcp_client_cmd("ns", limited, "10.0.0.2", "reno", 1, 5)
    plain = sc.resolve(_load(""))["flows"][0]
    cmd = tcp_client_cmd("ns", plain, "10.0.0.2", "reno", 1, 5)
    assert "--nodelay" not in cmd


def test_the_model_engine_refuses_nodelay():
    with pytest.raises(UserError, match=r"flow 'flow0' \(id 0\): nodelay: the model engine"):
        model.run(_load("nodelay = true"))


def test_the_same_seed_gives_the_same_series():
    a = sim.run(_load(ONOFF)).flow_series
    b = sim.run(_load(ONOFF)).flow_series
    assert a.equals(b)


# -- the emulator carries it (tests/test_emu_app.py); the model engine refuses, with one line ------


def test_the_emulator_accepts_application_traffic():
    check_apps(sc.resolve(_load(ONOFF)))
    check_apps(sc.resolve(_load("")))  # bulk passes
    cfg = sc.resolve(_load(ONOFF))
    cfg["flows"][0]["app"]["kind"] = "poisson"  # a kind it does not know is refused
    with pytest.raises(EmuError, match=r"^flow\[0\]\.app\.kind: expected one of"):
        check_apps(cfg)


def test_the_model_engine_refuses_application_traffic():
    with pytest.raises(UserError, match=r"app\.toml: flow 'flow0' \(id 0\): app: the model engine"):
        model.run(_load(ONOFF))
