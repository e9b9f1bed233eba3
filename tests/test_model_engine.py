"""satcc.engines.model: a scenario answered by the analytical models, as the simulator's RunResult.

The expected values here are computed in the tests from the scenario's numbers (propagation,
serialisation, window / RTT), not copied from the engine's output.
"""

import json
import math

import pytest

from satcc import cli
from satcc import results as rs
from satcc import scenario as sc
from satcc.engines import model as engine
from satcc.errors import UserError
from satcc.models import cardwell, hybla, pftk
from tests.helpers import requires_sim

TWO_HOPS = """
[scenario]
name = "two-hops"
duration = "12 s"
seed = 3
bin = "500 ms"
engine = "model"

[[link]]
a = "s"
b = "r"
rate = "100 Mbit/s"
delay = "2 ms"

[[link]]
a = "r"
b = "d"
rate = "20 Mbit/s"
delay = "48 ms"
loss = 0.001
loss_ba = 0.0005
queue = "200 pkt"

[[flow]]
from = "s"
to = "d"
cca = "hybla"
mss = 1000
rwnd = "200000 B"
rcvbuf_autotune = false  # W_m = rwnd: a fixed window

[[flow]]
from = "s"
to = "d"
cca = "reno"
size = "2 MB"
count = 2

[[flow]]
from = "d"
to = "s"
cca = "cubic"
start = "1 s"
"""

DATA_BYTES_TS = 40 + 12  # IP + TCP headers + timestamps option, on top of the mss
ACK_BYTES_TS = 40 + 12


def window_scenario(
    cca: str, loss: float, size: str | None = None, rwnd: int = 64_000, duration: str = "30 s"
) -> str:
    extra = f'size = "{size}"\n' if size else ""
    return f"""
[scenario]
name = "window-{cca}"
duration = "{duration}"

[[link]]
a = "s"
b = "d"
rate = "100 Mbit/s"
delay = "50 ms"
loss = {loss!r}
loss_ba = 0

[[flow]]
from = "s"
to = "d"
cca = "{cca}"
mss = 1000
rwnd = "{rwnd} B"
rcvbuf_autotune = false  # W_m = rwnd: a fixed window
{extra}"""


def base_rtt_s(one_way_s: float, rate_bps: float, mss: int = 1000) -> float:
    """Propagation both ways + one data packet and one ACK serialised (single link)."""
    return 2 * one_way_s + (mss + DATA_BYTES_TS) * 8 / rate_bps + ACK_BYTES_TS * 8 / rate_bps


def run_text(text: str, write_toml, name: str = "s.toml"):
    return engine.run(sc.load(write_toml(text, name)))


@requires_sim
def test_model_result_has_the_simulators_shape_for_the_same_scenario(write_toml):
    from satcc.engines import sim

    s = sc.load(write_toml(TWO_HOPS))
    m = engine.run(s)
    r = sim.run(s)
    for name in ("flows_table", "flow_series_table", "link_series_table"):
        assert getattr(m, name).schema == getattr(r, name).schema, name
        assert getattr(m, name).num_rows == getattr(r, name).num_rows, name
    assert m.flows[
        ["id", "name", "scenario_flow", "from", "to", "cca", "start_s", "size_bytes"]
    ].equals(r.flows[["id", "name", "scenario_flow", "from", "to", "cca", "start_s", "size_bytes"]])
    assert m.flow_series[["flow_id", "t_s"]].equals(r.flow_series[["flow_id", "t_s"]])
    keys = ["link_id", "dir", "from", "to", "t_s", "capacity_bps", "delay_ms"]
    assert m.link_series[keys].equals(r.link_series[keys])
    assert set(m.summary()) == set(r.summary())
    assert m.meta["scenario_hash"] == r.meta["scenario_hash"]
    assert (m.meta["engine"], r.meta["engine"]) == ("model", "sim")


def test_what_the_model_cannot_predict_is_null(write_toml):
    result = run_text(TWO_HOPS, write_toml)
    for column in ("rtt_p95_ms", "rto_count", "recovery_count"):
        assert result.flows[column].isna().all(), column
    for column in (
        "cwnd_pkts",
        "ssthresh_pkts",
        "srtt_ms",
        "inflight_pkts",
        "pacing_rate_bps",
        "retransmits",
    ):
        assert result.flow_series[column].isna().all(), column
    for column in (
        "queue_pkts",
        "queue_bytes",
        "drops_queue",
        "drops_random",
        "ecn_marks",
        "tx_bytes",
    ):
        assert result.link_series[column].isna().all(), column
    assert result.flows["goodput_bps"].notna().all()
    assert result.flows["rtt_mean_ms"].notna().all()


def test_each_flow_gets_the_model_of_its_congestion_control(write_toml):
    result = run_text(TWO_HOPS, write_toml)
    chosen = [m["model"] for m in result.meta["models"]]
    assert chosen == ["hybla", "cardwell", "cardwell", "cubic"]
    text = TWO_HOPS.replace('cca = "cubic"', 'cca = "vegas"')
    other = run_text(text, write_toml, "vegas.toml").meta["models"][-1]
    assert other["model"] == "window"
    assert any("no loss model for vegas" in n for n in other["notes"])


def test_path_quantities_come_from_the_route(write_toml):
    result = run_text(TWO_HOPS, write_toml)
    path = result.meta["models"][0]["path"]  # hybla s -> d over both links
    rtt = 2 * (0.002 + 0.048) + 1052 * 8 / 100e6 + 1052 * 8 / 20e6 + 52 * 8 / 20e6 + 52 * 8 / 100e6
    assert path["base_rtt_s"] == pytest.approx(rtt, rel=1e-12)
    assert path["p"] == 0.001
    # three flows cross r -> d forward (hybla and two reno); the cubic flow goes the other way
    assert path["bottleneck"] == {"link": 1, "dir": "ab", "rate_bps": 20_000_000, "flows": 3}
    assert path["share_wire_bps"] == pytest.approx(20e6 / 3)
    assert path["buffer_bytes"] == 200 * 1052
    assert path["t0_s"] == pytest.approx(rtt + 0.2)
    assert path["wmax_pkts"] == pytest.approx(min(200, (20e6 / 3 * rtt / 8 + 200 * 1052) / 1052))
    back = result.meta["models"][3]["path"]  # cubic d -> s: loss_ba
    assert back["p"] == 0.0005
    assert path["ack_loss"] == 0.0005


def test_losses_on_several_hops_combine_as_independent_events(write_toml):
    text = TWO_HOPS.replace('delay = "2 ms"', 'delay = "2 ms"\nloss = 0.002')
    p = run_text(text, write_toml).meta["models"][0]["path"]["p"]
    assert p == pytest.approx(1 - (1 - 0.002) * (1 - 0.001), rel=1e-12)


def test_the_route_is_the_shortest_by_delay_not_by_hops(write_toml):
    text = """
[scenario]
duration = "5 s"
[[link]]
a = "s"
b = "d"
rate = "10 Mbit/s"
delay = "100 ms"
loss = 0.01
[[link]]
a = "s"
b = "m"
rate = "10 Mbit/s"
delay = "10 ms"
[[link]]
a = "m"
b = "d"
rate = "10 Mbit/s"
delay = "10 ms"
[[flow]]
from = "s"
to = "d"
cca = "reno"
"""
    path = run_text(text, write_toml).meta["models"][0]["path"]
    assert path["p"] == 0.0  # the lossy direct link is longer
    assert path["prop_rtt_s"] == pytest.approx(0.040)


@pytest.mark.parametrize("cca", ["hybla", "reno", "cubic", "vegas"])
def test_no_loss_gives_the_window_bound(cca, write_toml):
    result = run_text(window_scenario(cca, 0.0), write_toml)
    bound = 64 * 1000 * 8 / base_rtt_s(0.050, 100e6)
    assert result.flows["goodput_bps"][0] == pytest.approx(bound, rel=1e-6)
    assert result.meta["models"][0]["model"] == "window"


@pytest.mark.parametrize("cca", ["hybla", "reno"])
def test_vanishing_loss_tends_to_the_window_bound(cca, write_toml):
    bound = 64 * 1000 * 8 / base_rtt_s(0.050, 100e6)
    rates = [
        run_text(window_scenario(cca, p), write_toml, f"{p}.toml").flows["goodput_bps"][0]
        for p in (1e-3, 1e-5, 1e-9)
    ]
    assert rates[0] < rates[1] < rates[2] <= bound * (1 + 1e-9)
    assert rates[2] == pytest.approx(bound, rel=1e-3)


def test_hybla_flow_is_the_hybla_model_with_the_derived_inputs(write_toml):
    result = run_text(window_scenario("hybla", 1e-4, rwnd=550_000), write_toml)
    rtt = base_rtt_s(0.050, 100e6)
    expected = hybla.steady_state(
        1e-4, rtt, wmax_pkts=550, rho=rtt / 0.025, t0_s=rtt + 0.2, packet_bytes=1000
    )
    assert result.flows["goodput_bps"][0] == pytest.approx(expected.throughput_bps, rel=1e-9)


def test_hybla_rho_is_held_at_one_below_rtt0_as_linux(write_toml):
    text = window_scenario("hybla", 1e-3).replace('delay = "50 ms"', 'delay = "5 ms"')
    record = run_text(text, write_toml).meta["models"][0]
    assert record["inputs"]["rho"] == 1.0


def test_reno_bulk_is_pftk_and_reno_transfer_is_cardwell(write_toml):
    rtt = base_rtt_s(0.050, 100e6)
    bulk = run_text(window_scenario("reno", 1e-2, rwnd=10_000_000), write_toml)
    expected = pftk.send_rate(1e-2, rtt, t0_s=rtt + 0.2, wmax_pkts=10_000, b=1, packet_bytes=1000)
    assert bulk.flows["goodput_bps"][0] == pytest.approx(expected.throughput_bps, rel=1e-9)
    sized = run_text(
        window_scenario("reno", 1e-2, size="500 kB", rwnd=10_000_000), write_toml, "sized.toml"
    )
    t = cardwell.transfer(
        1e-2,
        rtt,
        500_000,
        t0_s=rtt + 0.2,
        wmax_pkts=10_000,
        b=1,
        w1_pkts=10,
        t_delack_s=0.0,
        syn_timeout_s=1.0,
        packet_bytes=1000,
    ).transfer_time_s
    assert sized.flows["fct_s"][0] == pytest.approx(t, rel=1e-9)
    assert sized.flows["delivered_bytes"][0] == 500_000


def test_a_fat_window_is_capped_at_the_bottleneck_share(write_toml):
    text = window_scenario("cubic", 0.0, rwnd=100_000_000).replace(
        'rate = "100 Mbit/s"', 'rate = "10 Mbit/s"'
    )
    text += text[text.index("[[flow]]") :]  # a second, identical flow
    result = run_text(text, write_toml)
    share = 10e6 / 2 * 1000 / 1052  # goodput share of each flow
    assert list(result.flows["goodput_bps"]) == pytest.approx([share, share], rel=1e-12)
    assert all(m["capped_by_bottleneck"] for m in result.meta["models"])


def test_series_spread_the_delivered_bytes_over_the_active_time(write_toml):
    result = run_text(TWO_HOPS, write_toml)
    series = result.flow_series
    for f in result.flows.to_dict("records"):
        mine = series[series["flow_id"] == f["id"]]
        assert int(mine["delivered_bytes"].sum()) == f["delivered_bytes"]
        before = mine[mine["t_s"] + 0.5 <= f["start_s"]]
        assert before["delivered_bytes"].isna().all()  # no flow yet: null, not 0
        if f["fct_s"] is not None and not math.isnan(f["fct_s"]):
            after = mine[mine["t_s"] >= f["start_s"] + f["fct_s"]]
            assert after["delivered_bytes"].isna().all()


def test_a_transfer_longer_than_the_run_is_unfinished(write_toml):
    text = window_scenario("hybla", 1e-3, size="100 MB", duration="5 s")
    f = run_text(text, write_toml).flows.to_dict("records")[0]
    assert f["fct_s"] is None or math.isnan(f["fct_s"])
    assert 0 < f["delivered_bytes"] < 100_000_000


def test_expected_retransmissions_follow_the_loss_rate(write_toml):
    f = run_text(window_scenario("reno", 1e-2), write_toml).flows.to_dict("records")[0]
    segments = math.ceil(f["delivered_bytes"] / 1000)
    assert f["sent_packets"] == round(segments / (1 - 1e-2))
    assert f["retransmission_rate"] == pytest.approx(1e-2, abs=1 / f["sent_packets"])


def test_a_path_outside_the_models_domain_is_refused_naming_the_flow(write_toml):
    with pytest.raises(UserError, match=r"flow 'flow0' \(id 0\).*p < 0.5"):
        run_text(window_scenario("reno", 0.6), write_toml)
    with pytest.raises(UserError, match=r"W_m = 2 segments"):
        run_text(window_scenario("hybla", 1e-3, rwnd=2000), write_toml)


def test_the_model_engine_is_deterministic(write_toml, tmp_path):
    s = sc.load(write_toml(TWO_HOPS))
    a = engine.run(s).write(tmp_path / "a")
    b = engine.run(s).write(tmp_path / "b")
    for name in ("summary.json", *rs.TABLE_FILES):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    loaded = rs.load(a)
    assert [m["model"] for m in loaded.meta["models"]] == ["hybla", "cardwell", "cardwell", "cubic"]


def _main(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def test_satcc_model_file_writes_a_model_result(write_toml, tmp_path, capsys):
    path = write_toml(TWO_HOPS)
    status, out, err = _main(["model", str(path), "--out", str(tmp_path / "r"), "--json"], capsys)
    assert status == 0, err
    doc = json.loads(out)
    assert doc["engine"] == "model" and len(doc["flows"]) == 4
    assert rs.load(tmp_path / "r").meta["engine"] == "model"


def test_satcc_model_still_runs_named_models_and_refuses_a_typo(capsys):
    status, out, _ = _main(
        ["model", "hybla", "--rtt", "550ms", "--loss", "0.01%", "--wmax", "550", "--json"], capsys
    )
    assert status == 0 and json.loads(out)["model"] == "hybla"
    status, _, err = _main(["model", "hybal", "--rtt", "550ms"], capsys)
    assert status == 2 and "expected a model name" in err and "hybal" in err


@requires_sim
def test_satcc_run_dispatches_on_the_scenarios_engine(write_toml, tmp_path, capsys, monkeypatch):
    path = write_toml(TWO_HOPS)
    status, _, err = _main(["run", str(path), "--out", str(tmp_path / "m")], capsys)
    assert status == 0, err
    assert rs.load(tmp_path / "m").meta["engine"] == "model"
    status, _, err = _main(
        ["run", str(path), "--engine", "sim", "--out", str(tmp_path / "s")], capsys
    )
    assert status == 0, err
    assert rs.load(tmp_path / "s").meta["engine"] == "sim"
    # engine = "emu" goes to the emulator (replaced here: it needs root and namespaces and
    # has its own tests in test_emu.py).
    import satcc.engines.emu as emu_engine
    from satcc.errors import UserError

    calls = []

    def fake_emu_run(scenario, out_dir=None, seed=None, progress=None, **emu_options):
        calls.append((scenario.name, out_dir, seed))
        raise UserError("emulator reached")

    monkeypatch.setattr(emu_engine, "run", fake_emu_run)
    monkeypatch.setattr("satcc.emu.host.require_root", lambda: None)
    emu = write_toml(TWO_HOPS.replace('engine = "model"', 'engine = "emu"'), "emu.toml")
    status, _, err = _main(["run", str(emu), "--seed", "5"], capsys)
    assert status == 2 and "emulator reached" in err
    assert len(calls) == 1 and calls[0][2] == 5
