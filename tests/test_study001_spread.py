"""Study 001's business RTT (§5.1, Fig. 4: both plans average 50-60 ms, residential's RTT varies
more; no size given): the input holds on every design's path, and the full design sweeps the
ratio and judges every finding across it (campaigns/study001-cca.toml, study001-spread.toml,
python/satcc/studies/study001.py)."""

from __future__ import annotations

import json
import re
import tomllib

from satcc.cli import main
from satcc.studies import common, reproduce, study001

PRESET_MS = [20.0, 40.0, 50.0, 60.0, 85.0]  # the Starlink presets' RTT quantiles
KEY = "link[0].model.rtt_quantiles"


def _campaign(name: str) -> dict:
    return tomllib.loads((common.campaigns_dir() / f"{name}.toml").read_text(encoding="utf-8"))


def test_business_rtt_is_the_presets_narrowed_about_their_median():
    main_c, spread = _campaign(study001.MAIN), _campaign(study001.SPREAD)
    plans = main_c["matrix"]["plan"]["cases"]
    assert KEY not in plans["residential"]  # residential keeps the presets'
    cases = {study001.SPREAD_HEADLINE: plans["business"], **spread["matrix"]["spread"]["cases"]}
    assert set(cases) == {"1.25", "1.5", "2"}  # the ratios swept: a case named N divides by N
    for name, case in cases.items():
        got = [float(q.split()[0]) for q in case[KEY]]
        want = [50.0 + (p - 50.0) / float(name) for p in PRESET_MS]
        assert max(abs(g - w) for g, w in zip(got, want, strict=True)) < 0.001, name
    # the sweep runs business alone, otherwise as study001-cca's business case and uplink point
    business = {k: v for k, v in plans["business"].items() if k != KEY}
    assert spread["matrix"]["plan"]["cases"] == {"business": business}
    up = spread["matrix"]["uplink"]["cases"]
    assert up == {
        study001.SPREAD_UPLINK: main_c["matrix"]["uplink"]["cases"][study001.SPREAD_UPLINK]
    }
    assert spread["campaign"]["seed"] == main_c["campaign"]["seed"]
    assert spread["campaign"]["repetitions"] == main_c["campaign"]["repetitions"]


def test_only_the_full_design_sweeps_the_spread(tmp_path):
    def names(ctx):
        return [d.name for d, _ in common.planned(ctx, reproduce.module("001").run)]

    assert names(common.Context("sim", False, None, tmp_path / "f")) == [
        "study001-cca",
        "study001-spread",
    ]
    assert names(common.Context("sim", True, None, tmp_path / "q")) == ["study001-cca-quick"]
    assert [p.name for p in study001.kernel_plan()] == ["study001-cca-quick-kernel-emu"]


def test_the_plans_are_compared_on_a_path_whose_inputs_hold_across_the_spread(tmp_path, capsys):
    # before: both plans drew one set of RTT quantiles, the input read 1.0 and the two findings
    # that compare the plans were a path mismatch in every design
    out = tmp_path / "out"
    # five rounds (the --quick design's count): one round's RTT mean is one draw of the epochs
    assert main(["reproduce", "001", "--json", "--seeds", "5", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    c = {x["id"]: x for x in doc["claims"]}
    assert 50 <= c["rtt-mean"]["satcc"] <= 60, c["rtt-mean"]
    labels = [
        study001.point_label(u, study001.SPREAD_HEADLINE) for u in ("20-25", "20-30", "20-40")
    ] + [study001.point_label(study001.SPREAD_UPLINK, s) for s in ("1.25", "2")]
    # the input holds at every point, each near the ratio it was drawn at (the bins' std)
    why = c["rtt-spread-residential-over-business"]["why"]
    for label, ratio in zip(labels, (1.5, 1.5, 1.5, 1.25, 2.0)):
        got = re.search(re.escape(label) + r": ([0-9.]+) x \(input\)", why)
        assert got, (label, why)
        assert abs(float(got.group(1)) - ratio) < 0.1 * ratio, (label, got.group(0))
    for cid in ("business-over-residential", "retx-up-residential-over-business"):
        assert "path mismatch" not in (c[cid]["flag"] or ""), c[cid]
        assert all(f"{label}:" in c[cid]["why"] for label in labels), c[cid]["why"]
    # a finding about one plan is judged across the spread too (business's runs differ by it)
    assert all(f"{label}:" in c["yeah-start-peak-business"]["why"] for label in labels)


def test_study000s_paths_draw_the_same_dishes_business_rtt():
    # study 000 ran the same two dishes in the same week: its paths draw business's RTT as
    # study 001's headline does, residential the presets'
    headline = _campaign(study001.MAIN)["matrix"]["plan"]["cases"]["business"][KEY]
    base = _campaign("study000-baseline")["matrix"]["plan"]["cases"]
    assert base["business"][KEY] == headline and KEY not in base["residential"]
    for name in ("study000-t2t", "study000-t2t-probe", "starlink-t2t-udp"):
        doc = tomllib.loads((common.scenarios_dir() / f"{name}.toml").read_text(encoding="utf-8"))
        models = [link["model"] for link in doc["link"] if "model" in link]
        by_plan = {m["plan"]: m.get("rtt_quantiles") for m in models if m["kind"] == "starlink"}
        assert by_plan == {"business": headline, "residential": None}, name
