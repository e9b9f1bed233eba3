"""Issue 44 item 4: a campaign file with one bad key reported the same error once per point
(4x here 8x) and hid the next problem (`bbrr`); a unit column ("0.1%") had no numeric twin
to sort or plot on (and a loss axis ["0"] got a `_ms` twin, read as a duration)."""

from __future__ import annotations

import pytest

from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
from satcc.campaign.summary import point_table
from satcc.store import open_store
from tests.campaign_helpers import write_campaign
from tests.helpers import requires_sim

BASE = """
[scenario]
name = "b"
duration = "1 s"

[[link]]
a = "x"
b = "y"
rate = "10 Mbit/s"
delay = "10 ms"

[[flow]]
from = "x"
to = "y"
cca = "cubic"
"""


def problems(tmp_path, matrix: str) -> list[tuple[str, str]]:
    path = write_campaign(tmp_path, f'[campaign]\nscenario = "base.toml"\n{matrix}', BASE)
    with pytest.raises(spec.CampaignError) as e:
        spec.expand(spec.load(path))
    return e.value.issues


def test_each_distinct_problem_is_reported_once_and_a_bad_key_hides_no_other(tmp_path):
    issues = problems(
        tmp_path,
        """[matrix]
"link[0].rat" = ["1 Mbit/s", "2 Mbit/s"]
"flow.*.cca" = ["cubic", "bbrr"]
"link[0].loss" = ["0.1%", "1%"]
""",
    )
    assert [where for where, _ in issues] == [
        "matrix link0_rat (every value)",
        "matrix cca = 'bbrr'",
    ]
    assert "found an unknown key 'rat'" in issues[0][1]
    assert issues[1][1].startswith("flow[0].cca: expected one of") and "'bbrr'" in issues[1][1]


def test_a_problem_of_a_combination_lists_the_points_it_affects(tmp_path):
    issues = problems(
        tmp_path,
        """[matrix]
"scenario.duration" = ["1 s", "10 s"]
"flow[0].start" = ["0 s", "5 s"]
""",
    )
    assert issues == [
        (
            "1 of 4 points: point 1 (duration='1 s', start='5 s')",
            (
                "flow[0].start: expected flows to start before the end of the run (1 s), "
                "found a start at 5 s"
            ),
        )
    ]


def test_a_loss_axis_gets_a_numeric_fraction_twin(tmp_path):
    path = write_campaign(
        tmp_path,
        '[campaign]\nscenario = "base.toml"\n[matrix]\n"link[0].loss" = ["0.1%", "0"]',
        BASE,
    )
    (axis,) = spec.load(path).axes
    assert axis.companion == ("frac", [0.001, 0.0])
    assert axis.doc()["numeric_column"] == "link0_loss_frac"


@requires_sim
def test_the_twin_is_a_column_of_the_campaigns_tables(tmp_path):
    path = write_campaign(
        tmp_path,
        '[campaign]\nscenario = "base.toml"\n[matrix]\n"link[0].loss" = ["1%", "0.1%"]\n'
        '"link[0].rate" = ["5 Mbit/s"]',
        BASE.replace('"1 s"', '"0.3 s"'),
    )
    run_campaign(spec.load(path), tmp_path / "out", progress=False)
    with open_store(tmp_path / "out") as store:
        flows = store.query("SELECT link0_loss, link0_loss_frac, link0_rate_bps FROM flows")
        table = point_table(store)
    assert sorted(flows["link0_loss_frac"]) == [0.001, 0.01]
    assert set(flows["link0_rate_bps"]) == {5e6}
    assert "link0_loss_frac" not in table[0] and "link0_loss" in table[0]
