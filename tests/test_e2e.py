"""End to end through the real simulator: `satcc sim` / `satcc plot` / `satcc demo`.

These run only once `satcc._native.run_sim` exists (they skip with the reason until then).
"""

import json
import re

from satcc import cli
from satcc import results as rs
from tests.helpers import requires_sim

pytestmark = requires_sim

SMALL = """
[scenario]
name = "small"
duration = "3 s"
seed = 5
bin = "100 ms"

[[link]]
a = "s"
b = "r"
rate = "100 Mbit/s"
delay = "1 ms"

[[link]]
a = "r"
b = "d"
rate = "10 Mbit/s"
delay = "10 ms"
loss = "1 %"
queue = "100 pkt"

[[flow]]
name = "bulk"
from = "s"
to = "d"
cca = "reno"

[[flow]]
name = "short"
from = "s"
to = "d"
cca = "reno"
start = "0.5 s"
size = "200 kB"
"""

CONTRACT_FLOW_KEYS = {
    "id",
    "from",
    "to",
    "cca",
    "goodput_bps",
    "delivered_bytes",
    "sent_packets",
    "retransmitted_packets",
    "retransmission_rate",
    "rtt_mean_ms",
    "rtt_p95_ms",
    "fct_s",
}


def sim(argv, capsys):
    status = cli.main(["sim", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _files(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_sim_writes_every_file_and_a_json_summary_matching_the_contract(
    write_toml, tmp_path, capsys
):
    path = write_toml(SMALL)
    status, out, err = sim([str(path), "--out", str(tmp_path / "r"), "--json"], capsys)
    assert status == 0, err
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == sorted(
        [rs.SUMMARY_FILE, *rs.TABLE_FILES]
    )
    doc = json.loads(out)
    assert doc["engine"] == "sim" and doc["scenario"] == "small" and doc["seed"] == 5
    assert re.fullmatch(r"[0-9a-f]{64}", doc["scenario_hash"])
    assert [f["id"] for f in doc["flows"]] == [0, 1]
    for f in doc["flows"]:
        assert CONTRACT_FLOW_KEYS <= set(f)
        assert (f["from"], f["to"], f["cca"]) == ("s", "d", "reno")
        assert f["goodput_bps"] > 0 and f["delivered_bytes"] > 0
        assert f["sent_packets"] >= f["retransmitted_packets"] >= 0
    bulk, short = doc["flows"]
    assert bulk["fct_s"] is None
    assert short["delivered_bytes"] == 200_000 and short["fct_s"] > 0
    assert 0 < doc["jain_index"] <= 1
    on_disk = json.loads((tmp_path / "r" / rs.SUMMARY_FILE).read_text())
    on_disk.pop("files")
    assert on_disk == doc


def test_the_same_seed_twice_gives_byte_identical_directories(write_toml, tmp_path, capsys):
    path = write_toml(SMALL)
    assert sim([str(path), "--out", str(tmp_path / "a")], capsys)[0] == 0
    assert sim([str(path), "--out", str(tmp_path / "b")], capsys)[0] == 0
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_another_seed_gives_another_random_loss_pattern(write_toml, tmp_path, capsys):
    path = write_toml(SMALL)
    assert sim([str(path), "--out", str(tmp_path / "a")], capsys)[0] == 0
    assert sim([str(path), "--out", str(tmp_path / "b"), "--seed", "6"], capsys)[0] == 0
    a, b = rs.load(tmp_path / "a"), rs.load(tmp_path / "b")
    assert a.meta["seed"] == 5 and b.meta["seed"] == 6
    assert a.meta["scenario_hash"] == b.meta["scenario_hash"]
    assert not a.link_series["drops_random"].equals(b.link_series["drops_random"])


def test_the_series_add_up_to_the_summary(write_toml, tmp_path, capsys):
    path = write_toml(SMALL)
    assert sim([str(path), "--out", str(tmp_path / "r")], capsys)[0] == 0
    r = rs.load(tmp_path / "r")
    nbins = 30
    assert len(r.flow_series) == 2 * nbins
    assert len(r.link_series) == 2 * 2 * nbins
    for f in r.flows.to_dict("records"):
        s = r.flow_series[r.flow_series["flow_id"] == f["id"]]
        assert int(s["delivered_bytes"].sum()) == f["delivered_bytes"]
        assert int(s["retransmits"].sum()) == f["retransmitted_packets"]


def test_plot_makes_a_png_from_a_simulated_run(write_toml, tmp_path, capsys):
    path = write_toml(SMALL)
    assert sim([str(path), "--out", str(tmp_path / "r")], capsys)[0] == 0
    assert cli.main(["plot", str(tmp_path / "r"), "--out", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_table_is_printed_without_json(write_toml, tmp_path, capsys):
    status, out, _ = sim([str(write_toml(SMALL)), "--out", str(tmp_path / "r")], capsys)
    assert status == 0
    assert "bulk" in out and "short" in out and "Jain's fairness index" in out


def test_demo_runs_both_scenarios(tmp_path, capsys):
    assert cli.main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for name in ("demo-starlink-uplink", "demo-geo"):
        r = rs.load(tmp_path / name)
        assert list(r.flows["cca"]) == ["cubic", "bbr", "reno"]
        assert (tmp_path / name / "plot.png").is_file()
        assert name in out
