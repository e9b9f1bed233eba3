"""`kind = "trace"` and `satcc trace export`: Mahimahi traces and delay CSVs in and out."""

import pytest

from satcc import _native, cli
from satcc import scenario as sc
from satcc.commands import trace as tr
from tests.helpers import requires_sim

TRACE = """
[scenario]
duration = "{duration}"
[[link]]
a = "a"
b = "b"
queue = "200 pkt"
[link.model]
kind = "trace"
{model}
[[flow]]
from = "a"
to = "b"
cca = "{cca}"
"""


def load(write_toml, model, duration="10 s", cca="reno", name="s.toml"):
    return sc.load(write_toml(TRACE.format(model=model, duration=duration, cca=cca), name=name))


def test_mahimahi_lines_accumulate_fractions_of_opportunities():
    # 6 Mbit/s = half an opportunity per ms: one line every second ms (satellite-facts.md §4).
    assert tr.mahimahi_lines([6e6] * 6) == [2, 4, 6]
    assert tr.mahimahi_lines([24e6, 0, 12e6]) == [1, 1, 3]


@requires_sim
def test_a_trace_and_a_delay_csv_round_trip_through_export(write_toml, tmp_path):
    lines = "1\n1\n3\n4\n4\n4\n7\n9\n10\n"
    (tmp_path / "up.mahimahi").write_text(lines)
    (tmp_path / "up.csv").write_text("t_ms,delay_ms,loss\n0,20,0\n3,35.5,0.01\n7,12.25,0\n")
    s = load(
        write_toml,
        'mahimahi = "up.mahimahi"\ndelay_csv = "up.csv"\nrate_ba = "10 Mbit/s"\n'
        'delay_ba = "5 ms"\ndelay_csv_ba = "up.csv"',
    )
    out = tmp_path / "export"
    written = tr.export(s, out, duration_ns=10_000_000, link=0, direction="ab")
    assert [p.name for p in written] == ["link0-ab.mahimahi", "link0-ab.csv"]
    assert (out / "link0-ab.mahimahi").read_text() == lines
    assert (
        out / "link0-ab.csv"
    ).read_text() == "t_ms,delay_ms,loss\n0,20,0\n3,35.5,0.01\n7,12.25,0\n"
    # And the exported pair, read back as a scenario, exports to the same files again.
    s2 = load(
        write_toml,
        'mahimahi = "export/link0-ab.mahimahi"\ndelay_csv = "export/link0-ab.csv"',
        name="s2.toml",
    )
    again = tr.export(s2, tmp_path / "again", duration_ns=10_000_000, link=0, direction="ab")
    assert [p.read_text() for p in again] == [p.read_text() for p in written]


@requires_sim
def test_a_trace_of_one_line_per_ms_carries_12_mbit_s(write_toml, tmp_path):
    (tmp_path / "12.mahimahi").write_text("".join(f"{k}\n" for k in range(1, 1001)))
    s = load(write_toml, 'mahimahi = "12.mahimahi"\ndelay = "20 ms"', duration="20 s")
    config = sc.resolve(s)
    assert config["links"][0]["ab"]["rate_bps"] == 12_000_000  # nominal
    out = _native.run_sim(config)
    ls = out["link_series"]
    ab = [i for i, d in enumerate(ls["dir"]) if d == "ab"]
    assert {ls["capacity_bps"][i] for i in ab} == {12_000_000}
    # A saturating flow is served 1500 B per ms: 150,000 B per 100 ms bin, 12 Mbit/s exactly.
    tail = [ls["tx_bytes"][i] for i in ab if ls["t_s"][i] >= 5.0]
    assert set(tail) == {150_000}, set(tail)
    goodput = out["flows"][0]["goodput_bps"]
    assert 0.9 * 12e6 * 1448 / 1500 < goodput <= 12e6 * 1448 / 1500


@requires_sim
def test_export_of_a_starlink_model_shows_its_epochs(write_toml, tmp_path):
    text = """
[scenario]
duration = "30 s"
[[link]]
a = "dish"
b = "pop"
[link.model]
kind = "starlink"
[[flow]]
from = "dish"
to = "pop"
"""
    path = write_toml(text)
    assert (
        cli.main(["trace", "export", str(path), "--out", str(tmp_path / "x"), "--duration", "30 s"])
        == 0
    )
    rows = (tmp_path / "x" / "link0-ab.csv").read_text().splitlines()[1:]
    times = [float(r.split(",")[0]) for r in rows]
    # Delay steps at the boundaries (12 s, 27 s) and loss changes around the disturbances.
    assert 12000 in times and 27000 in times
    lines = [int(x) for x in (tmp_path / "x" / "link0-ab.mahimahi").read_text().split()]
    rate_mbps = len(lines) * 12 / 30_000  # opportunities x 12 Mbit/s per ms
    assert 5 <= rate_mbps <= 25  # residential uplink


@pytest.mark.parametrize(
    "content, message",
    [
        ("1\n\n2\n", "invalid empty line"),
        ("3\n2\n", "non-decreasing"),
        ("0\n", "nonzero"),
    ],
)
def test_bad_mahimahi_files_are_reported_with_the_key(write_toml, tmp_path, content, message):
    (tmp_path / "bad.mahimahi").write_text(content)
    with pytest.raises(sc.ScenarioError) as e:
        load(write_toml, 'mahimahi = "bad.mahimahi"\ndelay = "1 ms"')
    assert "link[0].model.mahimahi" in str(e.value) and message in str(e.value)


def test_a_delay_csvs_loss_is_weighted_by_time_in_the_model_engine_and_check(
    write_toml, tmp_path, capsys
):
    # 10 ms of 50 % loss in a 10 s run: the link loses 0.05 % of the time-weighted packets,
    # not the plain mean of the three rows (16.7 %), which the model engine and check used.
    from satcc.engines import model

    (tmp_path / "burst.csv").write_text("t_ms,delay_ms,loss\n0,20,0\n1000,40,0.5\n1010,20,0\n")
    s = load(write_toml, 'rate = "10 Mbit/s"\ndelay_csv = "burst.csv"\ndelay_ba = "20 ms"')
    config = sc.resolve(s)
    ab = config["links"][0]["ab"]
    assert ab["loss"] == pytest.approx(0.5 * 10 / 10_000)
    assert ab["delay_ns"] == round(20e6 + 20e6 * 10 / 10_000)
    (p,) = model.path_inputs(config)
    assert p.p == pytest.approx(0.0005)
    assert cli.main(["check", s.source]) == 0
    assert "loss 0.0005," in capsys.readouterr().out


def test_the_series_mean_covers_the_whole_run_with_the_first_and_last_rows_held(tmp_path):
    from satcc.linkmodels import delay_csv_info

    # rows at 1 and 3 ms; row 0 also holds before its time
    f = tmp_path / "s.csv"
    f.write_text("1,0,0.2\n3,0,0.0\n")
    ms = 1_000_000
    assert delay_csv_info(f, 0.0, 4 * ms)["mean_loss"] == pytest.approx(0.2 * 3 / 4)
    assert delay_csv_info(f, 0.0, None)["mean_loss"] == pytest.approx(0.2)  # over [0, 3 ms)
    assert delay_csv_info(f, 0.0, 2 * ms)["mean_loss"] == pytest.approx(0.2)
