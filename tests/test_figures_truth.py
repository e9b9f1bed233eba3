"""Issue 44 item 1: figures right by construction. Each test names what misled before: the
queue panel divided by a bin's own capacity (a Starlink boundary bin at 1.9 Mbit/s plotted
seconds of queue), the BDP line was link[0] ab's whatever way the flows went, the bbr panel's
legend said "cubic", box titles said "direction" without a direction axis, axes said
throughput where captions said goodput, trace figures were titled by a hash, the log cwnd
axis was labelled at 1 and 10 only, dashes meant both "second directory" and "received
rate", and the single-result report did not state the path."""

from __future__ import annotations

import numpy as np
import pytest

from satcc import plot
from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
from satcc.cli import main
from satcc.report import figures as F
from satcc.report.build import build_result_report
from satcc.results import load
from satcc.store import open_store
from tests.campaign_helpers import write_campaign
from tests.helpers import requires_sim

pytestmark = requires_sim

DOWNLOAD = """
[scenario]
name = "download"
duration = "2 s"

[[link]]
a = "dish"
b = "server"
rate = "10 Mbit/s"
rate_ba = "100 Mbit/s"
delay = "20 ms"

[[flow]]
name = "cubic"
from = "server"
to = "dish"
cca = "cubic"
"""

CAMPAIGN = """
[campaign]
name = "ccas"
scenario = "base.toml"
repetitions = 2

[matrix]
"flow.*.cca" = ["cubic", "bbr"]
"""


@pytest.fixture(scope="module")
def download(tmp_path_factory):
    d = tmp_path_factory.mktemp("download")
    (d / "s.toml").write_text(DOWNLOAD)
    assert main(["sim", str(d / "s.toml"), "--out", str(d / "r")]) == 0
    return d / "r"


@pytest.fixture(scope="module")
def ccas(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ccas")
    base = DOWNLOAD.replace('duration = "2 s"', 'duration = "1 s"')
    run_campaign(spec.load(write_campaign(tmp, CAMPAIGN, base)), tmp / "out", progress=False)
    return tmp / "out"


def drawn(directory, fn):
    with open_store(directory) as store:
        return fn(F.Data(store, store.index.get("axes", [])))


def test_the_queue_is_in_ms_at_the_nominal_rate_not_a_dipping_bins(download):
    result = load(download)
    ls = result.link_series
    busy = ls.index[(ls["dir"] == "ba") & (ls["queue_bytes"] > 0)]
    assert len(busy)
    ls.loc[busy[0], "capacity_bps"] = 1_900_000  # a Starlink boundary bin's capacity
    fig = plot.draw(result, panels=["goodput", "queue"])
    queue = fig.get_axes()[1]
    assert "median rate" in queue.get_ylabel()
    (line,) = [ln for ln in queue.get_lines() if "server→dish" in ln.get_label()]
    assert "100 Mbit/s" in line.get_label()
    q = ls[ls["dir"] == "ba"].sort_values("t_s")["queue_bytes"].to_numpy(dtype=float)
    assert np.nanmax(line.get_ydata()) == pytest.approx(q.max() * 8 / 100e6 * 1e3)


def test_the_bdp_line_is_the_direction_the_flows_use(download):
    result = load(download)
    cwnd = plot.draw(result).get_axes()[1]
    (bdp,) = [ln for ln in cwnd.get_lines() if ln.get_label().startswith("BDP")]
    assert "server→dish" in bdp.get_label()
    rtt = float(result.flows["rtt_min_ms"].min())
    assert bdp.get_ydata()[-1] == pytest.approx(100e6 * rtt / 1e3 / (8 * 1448))


@pytest.fixture(scope="module")
def short_download(tmp_path_factory):
    """The download with a 1-BDP queue: cwnd stays within about two decades (with the
    default queue CUBIC's HyStart leaves slow start only at 490 packets since its rounds
    follow Linux's order, and the axis spans four decades)."""
    d = tmp_path_factory.mktemp("short")
    (d / "s.toml").write_text(
        DOWNLOAD.replace('delay = "20 ms"', 'delay = "20 ms"\nqueue = "1 BDP"')
    )
    assert main(["sim", str(d / "s.toml"), "--out", str(d / "r")]) == 0
    return d / "r"


def test_a_short_log_cwnd_axis_is_labelled_between_decades(short_download):
    fig = plot.draw(load(short_download))
    cwnd = fig.get_axes()[1]
    fig.canvas.draw()
    shown = {t.get_text() for t in cwnd.get_yticklabels() if t.get_text()}
    assert {"2", "5", "20"} <= shown


def test_received_rate_keeps_the_runs_line_style_dashes_mark_the_second_directory(download):
    result = load(download)
    assert result.flow_series["received_bps"].notna().any()
    one = plot.draw(result).get_axes()[0]
    assert {p.get_linestyle() for p in one.patches} == {"-"}
    two = plot.draw_overlay([("a", result), ("b", load(download))]).get_axes()[0]
    styles = [p.get_linestyle() for p in two.patches]
    half = len(styles) // 2
    assert set(styles[:half]) == {"-"} and set(styles[half:]) == {"--"}


def test_a_single_result_states_its_path(download, tmp_path):
    fig = plot.draw(load(download))
    title = fig.get_suptitle()
    assert "path server→dish: 100 Mbit/s, RTT 40 ms, random loss 0 %" in title
    report = build_result_report(download, tmp_path / "rep", ["png", "html"])
    page = report.html_path.read_text()
    assert "path server→dish: 100 Mbit/s, RTT 40 ms" in page


def test_the_cca_panels_legend_names_the_flows_cca(ccas):
    fig = drawn(ccas, F.timeseries_cca).fig
    panels = {a.get_title(): a for a in fig.get_axes()}
    legend = [t.get_text() for t in panels["bbr"].get_legend().get_texts()]
    assert legend == ["cubic (bbr)"]
    assert panels["cubic"].get_ylabel() == "goodput (Mbit/s)"
    (line,) = panels["bbr"].get_lines()
    assert np.nanmax(line.get_ydata()) > 0


def test_box_titles_name_no_direction_without_a_direction_axis(ccas):
    box = drawn(ccas, F.box_throughput)
    assert box.title == "Mean goodput per congestion control (study 001 Fig. 7-8)"
    (ax,) = box.fig.get_axes()
    assert ax.get_ylabel() == "mean goodput (Mbit/s)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cubic", "bbr"]


def test_trace_figures_are_titled_by_their_point_not_a_hash(ccas):
    traces = drawn(ccas, F.traces)
    titles = [t.fig.get_suptitle() for t in traces]
    assert [t.splitlines()[0] for t in titles] == ["cubic · sim · rep 0", "bbr · sim · rep 0"]
    assert all("path server→dish: 100 Mbit/s" in t for t in titles)
    assert traces[1].title == "cwnd and RTT traces: bbr · sim · rep 0"
