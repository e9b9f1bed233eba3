"""Study 003's shared ATM line (§5): test 3's loop carries the other PVCs' bursts, test 4 none,
and the loop's findings are judged across the swept (buffer, burst length) points
(python/satcc/studies/study003.py, campaigns/study003-bursts.toml)."""

from __future__ import annotations

import pandas as pd

from satcc import units
from satcc.campaign import spec
from satcc.studies import claims as CL
from satcc.studies import common
from satcc.studies import study003 as S


def _run(path, queue, bursts, ramp):
    return {"path": path, "queue": queue, "bursts": bursts, "ramp_min": ramp}


def test_the_loop_is_judged_with_its_bursts_and_starlight_without():
    long = pd.DataFrame(
        [
            _run("chicago-loop", "1 BDP", S.NO_BURSTS, 1.0),  # not test 3's path (§5)
            _run("starlight", "1 BDP", S.NO_BURSTS, 6.0),
            _run("starlight", "0.25 BDP", S.NO_BURSTS, 9.0),
        ]
    )
    bursts = pd.DataFrame(
        [
            _run("chicago-loop", "1 BDP", "0.5 s", 3.0),
            _run("chicago-loop", "1 BDP", "2 s", 12.0),
            _run("chicago-loop", "0.25 BDP", "0.5 s", 14.0),
        ]
    )
    every = S.tests34(long, bursts)
    loop = every[every["path"] == "chicago-loop"]
    assert sorted(loop["ramp_min"]) == [3.0, 12.0, 14.0]  # the loop without bursts is dropped
    assert set(loop["point"]) == {
        "1 BDP, bursts 0.5 s",
        "1 BDP, bursts 2 s",
        "0.25 BDP, bursts 0.5 s",
    }
    points = S.sweep_points(every)
    assert set(points) == set(loop["point"])
    # StarLIGHT (no bursts, §5) joins every point of its buffer
    for label, rows in points.items():
        star = rows[rows["path"] == "starlight"]
        assert list(star["queue"]) == [label.split(",")[0]]


def test_a_verdict_that_changes_with_the_burst_length_is_not_judged():
    m = S._over_buffers(
        "loop-ramp-minutes",
        {"1 BDP, bursts 0.5 s": 3.0, "1 BDP, bursts 2 s": 12.0},
        "how",
        "why",
        "src",
        2,
        "",
    )
    assert "shared line's bursts" in m.skipped and "1 BDP, bursts 2 s: 12 min" in m.skipped
    row = CL.judge(next(c for c in CL.load("003").claims if c.id == "loop-ramp-minutes"), "sim", m)
    assert row.verdict == CL.NOT_JUDGED


def test_the_bursts_cross_the_shared_line_only_and_only_on_test_3():
    assert "study003-bursts" in S.CAMPAIGNS
    for quick in (False, True):
        c = spec.load(common.campaign_file("study003-bursts"), quick=quick)
        runs = spec.expand(c)
        assert {r.params["path"] for r in runs} == {"chicago-loop"}
        assert {r.params["bursts"] for r in runs} == {"0.5 s", "2 s"}
        for r in runs:
            links = r.scenario["link"]
            pvc, line = links[1], links[2]
            assert (pvc["a"], pvc["b"], line["a"], line["b"]) == (
                "tokyo-xp",
                "atm",
                "atm",
                "chicago",
            )
            assert units.parse_rate(pvc["rate"]) == 273e6  # §5's shaper
            assert units.parse_rate(line["model"]["rate"]) == 540e6  # the OC-12 (§5)
            assert pvc["queue"] == line["queue"] == r.params["queue"]
            udp = [f for f in r.scenario["flow"] if f.get("proto") == "udp"]
            assert len(udp) == 1 and udp[0]["from"] == "others" and udp[0]["to"] == "chicago"
            # the others join at the line, behind the shaper: no link from them to tokyo-xp
            assert {"others", "atm"} in [{x["a"], x["b"]} for x in links]
            length = units.parse_size(udp[0]["size"]) * 8 / units.parse_rate(udp[0]["rate"])
            assert f"{length:g} s" == r.params["bursts"]
    # test 4 (§5: no congestion with other traffic) carries no bursts
    for run in spec.expand(spec.load(common.campaign_file("study003-long"))):
        assert all(f.get("proto", "tcp") == "tcp" for f in run.scenario["flow"])
