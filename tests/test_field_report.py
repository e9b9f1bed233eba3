"""A `satcc field` store as `plot` and `report` read it, without a network: downloads' figure
sources (iperf3 -R's retransmits), Starlink boundary lines, the field-vs-sim section of
report.html with a scenario whose link has a hand-written `[link.model]` Starlink table.
The loop runs with `measure` replaced by recorded files (as in tests/test_field.py)."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from satcc.field import plan as fp

ROOT = Path(__file__).resolve().parents[1]
IPERF3_R = ROOT / "tests" / "data" / "iperf3" / "rp2_client.json"  # a -R client, 2 streams
BOUNDARIES = [0.4, 1.6]  # seconds from iperf3's launch, as measure() records them
PING_LOG = """PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data.
[1700000000.100000] 64 bytes from 192.0.2.1: icmp_seq=1 ttl=64 time=41.2 ms
[1700000000.300000] 64 bytes from 192.0.2.1: icmp_seq=2 ttl=64 time=40.8 ms
"""


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: PLW1510 - the tests read the return code
        [sys.executable, "-c", "from satcc.cli import main; raise SystemExit(main())", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Two downloads (cubic, bbr) from the recorded iperf3 -R report, Starlink-aligned: the
    run documents carry boundaries as measure() writes them."""
    from satcc.field import loop
    from satcc.field.measure import Measured

    def fake_measure(p, item, raw_dir, force=False, not_before=None):
        raw_dir.mkdir(parents=True)
        shutil.copy(IPERF3_R, raw_dir / "iperf3.json")
        (raw_dir / "ping-idle.txt").write_text(PING_LOG)
        doc = {
            "warnings": [],
            "host": {"kernel": "test"},
            "starlink": {
                "offset_s": 1.0,
                "aligned_boundary_unix_s": 1_700_000_052.0,
                "boundaries_s": list(BOUNDARIES),
            },
        }
        files = {"iperf3": raw_dir / "iperf3.json", "ping_idle": raw_dir / "ping-idle.txt"}
        return Measured(raw_dir, doc, files)

    mp = pytest.MonkeyPatch()
    mp.setattr(loop, "measure", fake_measure)
    try:
        p = fp.validate(
            fp.FieldPlan(
                name="rep",
                server="192.0.2.1",
                ccas=["cubic", "bbr"],
                directions=["down"],
                duration="2 s",
                gap="0 s",
                align="starlink",
            ),
            "t",
        )
        out = tmp_path_factory.mktemp("field") / "store"
        r = loop.run_plan(p, fp.to_toml(p), out, stream=io.StringIO(), force=True)
        assert r.done == 2
    finally:
        mp.undo()
    return out


def _runs(store: Path) -> list[Path]:
    return sorted(d for d in (store / "runs").iterdir() if not d.name.startswith("."))


def test_a_downloads_retransmissions_come_from_iperf3_R_and_say_so(store):
    from satcc import store as st

    doc = json.loads(IPERF3_R.read_text())
    streams = {s["receiver"]["bytes"]: s["sender"]["retransmits"] for s in doc["end"]["streams"]}
    delivered = max(streams)  # flow 0 is the stream that delivered most
    mss = doc["start"]["tcp_mss_default"]
    flows = st.query(
        store,
        "SELECT cca, direction, retransmitted_packets, sent_packets, retransmission_rate, "
        "delivered_bytes FROM flows WHERE id = 0 ORDER BY cca",
    )
    assert list(flows.cca) == ["bbr", "cubic"] and set(flows.direction) == {"down"}
    row = flows.iloc[0]
    assert row.delivered_bytes == delivered
    assert row.retransmitted_packets == streams[delivered]  # the server's, from the -R report
    assert row.sent_packets == math.ceil(delivered / mss) + streams[delivered]
    assert row.retransmission_rate == pytest.approx(streams[delivered] / row.sent_packets)
    for d in _runs(store):
        field = json.loads((d / "run.json").read_text())["field"]
        stats = json.loads((d / "summary.json").read_text())["stats"]
        assert field["retx_source"] == "iperf3 -R (the server's retransmits)"
        assert stats["retx_source"] == field["retx_source"]
        assert stats["goodput_source"] == "iperf3"
        # no capture here, and an iperf3 -R client reports no RTT: none, and it says so
        assert field["rtt_source"] is None and stats["rtt_source"] is None
        assert stats["starlink_boundaries_s"] == BOUNDARIES


def test_iperf3_retx_rate_counts_the_delivered_segments_plus_the_retransmissions():
    from satcc.field.measure import iperf3_retx_rate

    assert iperf3_retx_rate(10, 1448 * 90, 1448) == (100, 0.1)
    assert iperf3_retx_rate(0, 1448 * 90 + 1, 1448) == (91, 0.0)  # a partial last segment
    assert iperf3_retx_rate(None, 1000, 1448) is None
    assert iperf3_retx_rate(5, 1000, None) is None


def _vertical_at(ax, times: list[float]) -> bool:
    xs = {
        round(float(ln.get_xdata()[0]), 6)
        for ln in ax.lines
        if len(ln.get_xdata()) == 2 and ln.get_xdata()[0] == ln.get_xdata()[1]
    }
    return set(times) <= xs


def test_plot_marks_the_starlink_boundaries_of_a_field_run_in_every_panel(store, tmp_path):
    from satcc import plot
    from satcc.results import load

    result = load(_runs(store)[0])
    fig = plot.draw(result)
    axes = fig.axes
    assert axes and all(_vertical_at(a, BOUNDARIES) for a in axes)
    labels = axes[0].get_legend_handles_labels()[1]
    assert labels.count("Starlink boundary") == 1
    # the panels with no samples still say so (a boundary line is not a sample)
    texts = [t.get_text() for a in axes for t in a.texts]
    assert "no cwnd samples in this result" in texts
    # a result without boundaries gets none
    result.meta["stats"].pop("starlink_boundaries_s")
    assert not any(_vertical_at(a, BOUNDARIES[:1]) for a in plot.draw(result).axes)
    # `satcc plot RUN` on the run directory
    r = _cli("plot", str(_runs(store)[0]), "--out", str(tmp_path / "p.svg"))
    assert r.returncode == 0, r.stderr
    assert "Starlink boundary" in (tmp_path / "p.svg").read_text()


def test_the_reports_timeseries_figure_marks_the_boundaries(store):
    from satcc.report import figures as F
    from satcc.store import open_store

    with open_store(store) as s:
        drawn = F.timeseries_cca(F.Data(s, s.index.get("axes", [])))
    panels = [a for a in drawn.fig.axes if a.lines]
    assert len(panels) == 2 and all(_vertical_at(a, BOUNDARIES) for a in panels)
    assert "Starlink's reconfiguration boundaries" in drawn.caption


STARLINK_SCENARIO = """
[scenario]
name = "my-dish"
duration = "15 s"
seed = 1

[[link]]
a = "client"
b = "server"
queue = "200 kB"

# as `satcc trace fit` prints it (docs/starlink-fit.md), plus the download's capacity_ba
[link.model]
kind = "starlink"
variation = "intra"
dish = "a"
capacity = ["4 Mbit/s", "6 Mbit/s"]
capacity_ba = ["8 Mbit/s", "10 Mbit/s"]
capacity_sigma = 0.11
capacity_corr = 0.47
frame = "8 ms"
frame_duty = 0.2
rtt_quantiles = ["30 ms", "35 ms", "40 ms", "45 ms", "60 ms"]
jitter = "1.5 ms"
jitter_corr = 0.44
outage_probability = 1.0
disturbance = ["58 ms", "134 ms"]
loss = [0.0008, 0.0008]
burst_rate = 0.013
burst_duration = "82 ms"
phase = "12 s"
start = "5 s"

[[flow]]
name = "up"
from = "client"
to = "server"
cca = "cubic"
"""


def test_report_with_a_starlink_model_scenario_puts_the_comparison_in_the_page(store, tmp_path):
    scenario = tmp_path / "my-dish.toml"
    scenario.write_text(STARLINK_SCENARIO)
    out = tmp_path / "report"
    r = _cli(
        "report", str(store), "--scenario", str(scenario), "--seeds", "2", "--out", str(out),
        "--format", "html,png",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "field vs sim (my-dish.toml, 2 seed(s)" in r.stdout
    doc = json.loads((out / "field-vs-sim.json").read_text())
    rows = {(x["cca"], x["direction"]): x for x in doc["rows"]}
    assert set(rows) == {("bbr", "down"), ("cubic", "down")}
    for x in rows.values():
        # a download runs server -> client: b -> a, the model's capacity_ba (8-10 Mbit/s),
        # neither the uplink's 4-6 Mbit/s nor the residential plan's downlink (50-150)
        assert 6.0 < x["sim_mbps"] <= 11.0, x
        assert x["ratio"] == pytest.approx(x["measured_mbps"] / x["sim_mbps"])
        assert not x["note"]
    page = (out / "report.html").read_text()
    assert '<h2 id="field_vs_sim">Field vs simulator</h2>' in page
    assert 'href="#field_vs_sim"' in page
    assert 'id="img-field-vs-sim" alt="field vs sim: my-dish.toml"' in page
    section = page[page.index('id="field_vs_sim"') : page.index('id="figures"')]
    for x in rows.values():
        assert f'<td class="">{x["sim_mbps"]:.2f}</td>' in section
    assert (out / "field-vs-sim.png").is_file()


def test_report_scenario_errors_name_the_flag(store, tmp_path):
    bad = tmp_path / "two.toml"
    bad.write_text(STARLINK_SCENARIO + '[[flow]]\nfrom = "server"\nto = "client"\n')
    r = _cli("report", str(store), "--scenario", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith(f"satcc: error: --scenario {bad}: flow:")
    r = _cli("report", str(_runs(store)[0]), "--scenario", str(bad), "--out", str(tmp_path / "o2"))
    assert r.returncode == 2 and "expected a `satcc field` store" in r.stderr


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (make build installs it)"
)
def test_the_field_report_page_renders_the_comparison_and_the_boundaries_in_chromium(
    store, tmp_path
):
    from satcc.field.compare import run as compare
    from satcc.report import build_report

    scenario = tmp_path / "my-dish.toml"
    scenario.write_text(STARLINK_SCENARIO)
    out = tmp_path / "report"
    cmp = compare(store, scenario, out, seeds=1, formats=(), embed=True)
    report = build_report(store, out, ["html"], field_vs_sim=cmp.section())
    page = report.html_path.read_text()
    assert page.count('"boundaries": [0.4, 1.6]') == 2  # both runs' interactive charts
    p = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom",
            report.html_path.resolve().as_uri(),
        ],
        check=False, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    dom = p.stdout
    assert f'data-figures="ok {len(report.drawn) + 1}"' in dom  # + the comparison's image
    assert 'data-charts="ok 2"' in dom
    assert 'data-boundaries="4"' in dom  # two lines in each of the two charts
    assert [ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln] == []
