"""Issue 29's report items: one panel per condition with its own y axis (box plots pooled
upload and download on one axis before), plain log tick labels (`$\\mathdefault{10^{-4}}$`
before), interactive charts titled by CCA and parameters (the run hash before), Pantheon
ellipses, `satcc report` on one result, and the campaign end table (engine and the CCA that
ran shown, Jain's index left out for single flows)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from matplotlib import rc_context

from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
from satcc.campaign.summary import point_table
from satcc.cli import main
from satcc.report import figures as F
from satcc.report.build import build_report
from satcc.store import open_store
from tests.campaign_helpers import write_campaign
from tests.helpers import requires_sim

pytestmark = requires_sim

BASE = """
[scenario]
name = "updown"
duration = "2 s"

[[link]]
a = "dish"
b = "server"
rate = "40 Mbit/s"
rate_ba = "4 Mbit/s"
delay = "20 ms"
loss = 0.002
queue = "1 BDP"

[[flow]]
name = "down"
from = "dish"
to = "server"
cca = "cubic"
"""

CAMPAIGN = """
[campaign]
name = "updown"
scenario = "base.toml"
repetitions = 3

[matrix.direction]
role = "direction"
[matrix.direction.cases]
down = { "flow[0].name" = "down", "flow[0].from" = "dish", "flow[0].to" = "server" }
up = { "flow[0].name" = "up", "flow[0].from" = "server", "flow[0].to" = "dish" }

[matrix]
"flow.*.cca" = ["cubic", "bbr"]
"""


@pytest.fixture(scope="module")
def updown(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("updown")
    run_campaign(
        spec.load(write_campaign(tmp, CAMPAIGN, BASE)), tmp / "out", jobs=2, progress=False
    )
    return tmp / "out"


def figure(directory, fn):
    with open_store(directory) as store:
        return fn(F.Data(store, store.index.get("axes", []))).fig


def test_box_plots_draw_each_direction_in_its_own_panel_with_its_own_y_axis(updown):
    fig = figure(updown, F.box_throughput)
    panels = [a for a in fig.get_axes() if a.axison]
    assert [a.get_title() for a in panels] == ["direction=down", "direction=up"]
    (_, down_hi), (_, up_hi) = (a.get_ylim() for a in panels)
    # 40 vs 4 Mbit/s: separate scales, the upload not flattened at the bottom of the download's
    assert up_hi < 0.5 * down_hi
    for a in panels:
        assert [t.get_text() for t in a.get_xticklabels()] == ["cubic", "bbr"]


def test_the_throughput_delay_plane_has_a_panel_per_condition_and_ellipses(updown):
    fig = figure(updown, F.throughput_delay)
    panels = [a for a in fig.get_axes() if a.axison]
    assert len(panels) == 2
    for a in panels:
        assert len(a.patches) == 2  # one 1-sigma ellipse per CCA (3 runs each)
        assert [t.get_text() for t in panels[0].get_legend().get_texts()] == ["cubic", "bbr"]


def test_pantheon_ellipse_is_centred_on_the_mean_with_the_spread_of_the_runs():
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    x, y = np.array([1.0, 2.0, 3.0, 2.0]), np.array([5.0, 5.0, 5.0, 5.0])
    assert F._ellipse(ax, x, y, "k")
    (e,) = ax.patches
    assert e.center == pytest.approx((2.0, 5.0))
    assert max(e.width, e.height) == pytest.approx(2 * np.std(x, ddof=1))
    assert not F._ellipse(ax, x[:2], y[:2], "k")  # two runs: no ellipse


def test_log_axes_have_plain_tick_labels_when_mathtext_is_off():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from satcc.plot import plain_log_axis

    with rc_context({"text.parse_math": False}):
        fig = Figure()
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        ax.plot([1e-5, 1e-4, 1e-3, 1e-2], [1, 2, 3, 4])
        ax.set_xscale("log")
        plain_log_axis(ax.xaxis)
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and not any("$" in t or "mathdefault" in t for t in labels)
    assert "10⁻⁵" in labels and "0.001" in labels


def test_interactive_charts_are_titled_by_cca_and_parameters(updown, tmp_path):
    build_report(updown, tmp_path / "rep", ["html"])
    page = (tmp_path / "rep" / "report.html").read_text()
    m = re.search(
        r'<script type="application/json" id="uplot-data">(.*?)</script>', page, re.DOTALL
    )
    titles = [c["title"] for c in json.loads(m.group(1).replace("<\\/", "</"))]
    assert titles and all(re.match(r"(cubic|bbr) · direction=(down|up)", t) for t in titles), titles


def test_report_on_one_result_writes_its_figure_and_page(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["try", "-b", "10M", "--rtt", "30ms", "-C", "cubic,bbr", "-t", "2s", "--out", str(out)]
    assert main(argv) == 0
    assert main(["report", str(out), "--format", "html,svg"]) == 0
    capsys.readouterr()
    page = (out / "report" / "report.html").read_text()
    assert "try · sim · seed 1" in page and "data:image/png;base64," in page and "bbr" in page
    assert (out / "report" / "fig_result.svg").read_bytes().startswith(b"<?xml")


def test_campaign_end_table_shows_engine_and_cca_and_no_jain_for_single_flows(updown):
    with open_store(updown) as store:
        lines = point_table(store)
    header = lines[0].split()
    assert "engine" in header and "jain" not in header
    assert any("down (cubic)" in line for line in lines) and any(
        "up (bbr)" in line for line in lines
    )
