"""Issue 29, the figures the first ux pass left pooled: `mss`, `rtt_fairness` and `rtt_day` draw
one panel per condition (every matrix axis but their x axis and the CCA; the engine when more
than one ran), each with its own y axis, and `engines_loss` splits by the other matrix axes.
Before: `mss` drew one panel per flow over every condition (4 and 40 Mbit/s on one axis),
`rtt_fairness` averaged the model with the simulator, `rtt_day` pooled every condition and
CCA, and `engines_loss` averaged over the other axes (MSS, rate)."""

from __future__ import annotations

import pytest

from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
from satcc.report import figures as F
from satcc.store import open_store
from tests.campaign_helpers import BASE_SCENARIO, write_campaign
from tests.helpers import requires_sim

pytestmark = requires_sim

ONE_FLOW = """
[scenario]
name = "one"
duration = "2 s"
bin = "200 ms"

[[link]]
a = "snd"
b = "rcv"
rate = "10 Mbit/s"
delay = "20 ms"
queue = "100 pkt"

[[flow]]
name = "bulk"
from = "snd"
to = "rcv"
cca = "reno"
"""

MSS_LOSS = """
[campaign]
name = "mssloss"
scenario = "base.toml"

[matrix]
"scenario.engine" = ["model", "sim"]
"link[0].loss" = [1e-4, 1e-3]
"flow.*.mss" = [1000, 1448]
"link[0].rate" = ["40 Mbit/s", "4 Mbit/s"]
"""

FAIRNESS = """
[campaign]
name = "fair"
scenario = "base.toml"

[matrix]
"scenario.engine" = ["model", "sim"]
"link[1].delay" = ["5 ms", "20 ms"]
"link[2].rate" = ["10 Mbit/s", "2 Mbit/s"]
"""

STARLINK = """
[scenario]
name = "day"
duration = "2 s"

[[link]]
a = "dish"
b = "pop"
[link.model]
kind = "starlink"
plan = "residential"

[[link]]
a = "pop"
b = "server"
rate = "1 Gbit/s"
delay = "2 ms"

[[flow]]
name = "up"
from = "dish"
to = "server"
cca = "cubic"
"""

DAY = """
[campaign]
name = "day"
scenario = "base.toml"

[matrix]
"flow.*.cca" = ["cubic", "bbr"]
"link[0].model.plan" = ["residential", "business"]

[matrix.hour]
key = "link[0].model.start"
role = "time_of_day"
values = ["09:00:00", "21:00:00"]
"""


def _campaign(tmp_path_factory, name, campaign, base):
    tmp = tmp_path_factory.mktemp(name)
    r = run_campaign(
        spec.load(write_campaign(tmp, campaign, base)), tmp / "out", jobs=2, progress=False
    )
    assert r.count("failed") == 0, [x.error for x in r.reports if x.error]
    return tmp / "out"


@pytest.fixture(scope="module")
def mssloss(tmp_path_factory):
    return _campaign(tmp_path_factory, "mssloss", MSS_LOSS, ONE_FLOW)


def drawn(directory, fn):
    with open_store(directory) as store:
        return fn(F.Data(store, store.index.get("axes", []))).fig


def _panels(fig):
    return [a for a in fig.get_axes() if a.axison]


def _top(fig, rate: str) -> list[float]:
    return [a.get_ylim()[1] for a in _panels(fig) if f"rate={rate}" in a.get_title()]


def test_mss_draws_a_panel_per_condition_each_with_its_own_y_axis(mssloss):
    fig = drawn(mssloss, F.mss)
    titles = [a.get_title() for a in _panels(fig)]
    assert len(titles) == 8, titles  # engine x loss x rate; the MSS is the x axis
    for engine in ("model", "sim"):
        assert sum(engine in t.split(" · ") for t in titles) == 4, titles
    assert all("mss=" not in t for t in titles)
    # 4 vs 40 Mbit/s: each panel scaled to its own runs, not to the fastest condition's
    assert max(_top(fig, "4 Mbit/s")) < 0.5 * min(_top(fig, "40 Mbit/s"))
    for a in _panels(fig):
        assert [t.get_text() for t in a.get_legend().get_texts()] == ["reno"]


def test_engines_loss_splits_by_the_other_matrix_axes(mssloss):
    fig = drawn(mssloss, F.engines_loss)
    panels = _panels(fig)
    titles = [a.get_title() for a in panels]
    assert len(panels) == 4, titles  # mss x rate; loss is the x axis, engines are lines
    assert {t.split(" · ", 1)[0] for t in titles} == {"steady state"}
    assert sum("mss=1000" in t for t in titles) == 2 and sum("mss=1448" in t for t in titles) == 2
    assert max(_top(fig, "4 Mbit/s")) < 0.5 * min(_top(fig, "40 Mbit/s"))
    for a in panels:
        labels = [t.get_text() for t in a.get_legend().get_texts()]
        assert labels == ["model", "sim"], labels


def test_rtt_fairness_draws_a_pair_of_panels_per_condition_engines_apart(tmp_path_factory):
    out = _campaign(tmp_path_factory, "fair", FAIRNESS, BASE_SCENARIO)
    fig = drawn(out, F.rtt_fairness)
    panels = _panels(fig)
    assert len(panels) == 8  # (engine x rate) x (goodput, Jain)
    tops = [a for a in panels if a.get_ylabel() == "goodput (Mbit/s)"]
    titles = [a.get_title() for a in tops]
    for engine in ("model", "sim"):
        assert sum(engine in t.split(" · ") for t in titles) == 2, titles
    assert max(_top(fig, "2 Mbit/s")) < 0.5 * min(_top(fig, "10 Mbit/s"))
    # each panel's points are its own condition's: two RTT points per group
    for a in tops:
        assert [len(line.get_xdata()) for line in a.get_lines()[:1]] == [2]


def test_rtt_day_draws_a_row_per_condition_and_a_color_per_cca(tmp_path_factory):
    out = _campaign(tmp_path_factory, "day", DAY, STARLINK)
    fig = drawn(out, F.rtt_day)
    panels = _panels(fig)
    assert len(panels) == 4  # (plan) x (over the day, distribution)
    titles = [a.get_title() for a in panels]
    for plan in ("residential", "business"):
        assert sum(f"plan={plan}" in t for t in titles) == 2, titles
    hists = [a for a in panels if a.get_title().startswith("RTT distribution")]
    for a in hists:
        labels = [t.get_text() for t in a.get_legend().get_texts()]
        assert [lab.split(" mean")[0] for lab in labels] == ["cubic", "bbr"], labels
