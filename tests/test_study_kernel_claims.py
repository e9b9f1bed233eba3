"""The kernel column judges only what its design can show, and docs/reproduce.md prints it
beside the simulator's column (satcc/studies/claims.py `[[kernel_cut]]` / `no_kernel`,
satcc/studies/reproduce.py, satcc/studies/doc.py). Pure: claims.json files are built here,
nothing runs."""

from __future__ import annotations

import json

import pytest

from satcc.studies import claims as CL
from satcc.studies import doc as D
from satcc.studies import reproduce as R

ABSOLUTE_RATES = {  # the claims stated as an absolute rate on a path the emulator scales
    "000": ["down-residential-cubic", "down-residential-bbr", "down-business-cubic",
            "down-business-bbr"],
    "001": ["bbr-down-residential", "bbr-down-business"],
}  # fmt: skip
# vegas-max was an absolute rate ("< 70 Mbit/s") until it became what the paper compares, Vegas's
# largest bin over the other CCAs' (a ratio on the same scaled path: judged, weakened)


def judged(study: str, kernel: bool) -> list[CL.Row]:
    spec = CL.load(study)
    m = {c.id: CL.Measured(1.3, per_seed=(1.3,) * 5) for c in spec.claims}
    return CL.judge_all(spec, "emu", m, kernel=kernel)


@pytest.mark.parametrize("study", sorted(ABSOLUTE_RATES))
def test_an_absolute_rate_on_a_scaled_path_is_not_judged_on_the_kernel(study):
    on_kernel = {r.claim.id: r for r in judged(study, kernel=True)}
    for cid in ABSOLUTE_RATES[study]:
        r = on_kernel[cid]
        assert r.verdict == CL.NOT_JUDGED, cid
        assert r.measured.skipped.startswith("not judged on the kernel: ")
    # the ratios between CCAs on the same scaled path are still judged
    paired = [r for r in on_kernel.values() if r.claim.paired]
    assert paired and all(r.verdict in CL.VERDICTS for r in paired)
    # and the simulator's quick design judges the same claims
    assert all(
        r.verdict in CL.VERDICTS
        for r in judged(study, kernel=False)
        if r.claim.id in ABSOLUTE_RATES[study]
    )


def test_a_peak_over_two_mss_points_is_not_judged_on_the_kernel():
    rows = {r.claim.id: r for r in judged("000", kernel=True)}
    assert rows["mss-best"].verdict == CL.NOT_JUDGED
    assert rows["mss-largest-falls"].verdict in CL.VERDICTS  # weakened, judged


def test_study003_has_no_kernel_design_and_says_why():
    spec = CL.load("003")
    assert spec.no_kernel and not spec.kernel_cuts
    assert R.module("003").kernel_plan() == []
    rows = judged("003", kernel=True)
    assert all(r.verdict == CL.NOT_JUDGED for r in rows if r.claim.kind == "finding")
    assert R.kernel_design_lines(spec)[0].startswith("no kernel design: ")


def test_every_cut_of_a_kernel_design_is_printed_with_the_claims_it_touches():
    for study in ("000", "001", "002", "004"):
        spec = CL.load(study)
        assert spec.kernel_cuts, study
        text = " ".join(R.kernel_design_lines(spec, width=10_000))
        for cut in spec.kernel_cuts:
            assert cut.reason in text
            for cid in (*cut.not_judged, *cut.weakens):
                assert cid in text


def test_a_value_on_a_strict_threshold_but_for_rounding_does_not_hold_it():
    """001's input rtt-spread-residential-over-business ('> 1 x') read 1.0000000000000002 on
    the kernel (two equal standard deviations): on the threshold, so the path mismatch holds."""
    c = CL.Claim.model_validate(
        {"id": "s", "what": "w", "cite": "c", "paper": 1.0, "relation": "above",
         "tolerance": 0, "unit": "x", "kind": "input"}
    )  # fmt: skip
    assert not CL.holds_exactly(c, 1.0000000000000002)
    assert CL.holds_exactly(c, 1.001)
    spread = CL.load("001")
    rows = CL.judge_all(
        spread,
        "emu",
        {
            **{c.id: CL.Measured(1.3, per_seed=(1.3,) * 5) for c in spread.claims},
            "rtt-mean": CL.Measured(55.0),
            "rtt-spread-residential-over-business": CL.Measured(1.0000000000000002),
        },
    )
    flagged = {r.claim.id: r.flag for r in rows if r.flag}
    assert flagged["business-over-residential"] == (
        "path mismatch: rtt-spread-residential-over-business"
    )


def write(root, study, rows, run):
    spec = CL.load(study)
    result = R.StudyResult(spec, rows, quick=True)
    result.dirs[rows[0].engine] = {}
    result.run = run
    (root / study).mkdir(parents=True)
    (root / study / "claims.json").write_text(json.dumps(result.doc()))
    (root / study / "claims.txt").write_text("\n".join(R.text_lines(result)))


def test_the_doc_prints_the_kernel_column_beside_the_simulators(tmp_path):
    spec = CL.load("001")
    sim = {c.id: CL.Measured(1.3, per_seed=(1.3,) * 5) for c in spec.claims}
    sim["rtt-mean"] = CL.Measured(55.0)
    ker = dict(sim)
    ker["yeah-spread-rank"] = CL.Measured(4.0)  # the kernel's YeAH spread ranks 4th: not
    quick, kernel = tmp_path / "q", tmp_path / "k"
    write(quick, "001", CL.judge_all(spec, "sim", sim), {"started_utc": "2026-11-30 00:30",
          "wall_s": 9, "load_1min": [0.5, 0.7], "cpus": 2})  # fmt: skip
    late = {"runs": 100, "p99_median_us": 80.0, "p99_max_us": 141.0, "max_us": 10116.0,
            "late_samples": 6}  # fmt: skip
    write(kernel, "001", CL.judge_all(spec, "emu", ker, kernel=True),
          {"started_utc": "2026-11-29 23:45", "wall_s": 937, "load_1min": [8.6, 2.7],
           "cpus": 2, "linkd_lateness": {"emu": late}})  # fmt: skip
    page = D.render({"quick": quick, "kernel": kernel}, "python -m satcc.studies.doc")
    assert "run 2026-11-29 23:45 UTC, 937 s wall, load 8.6-2.7 on 2 CPUs" in page
    assert "p99 median 80 µs, largest p99 141 µs" in page
    assert "**Not the kernel column: loaded machine (load 8.6-2.7 on 2 CPUs)**" in page
    assert "| finding | sim (quick) | verdict | kernel | verdict | engines |" in page
    assert "| bbr-down-residential | 1.3 Mbit/s | not | 1.3 Mbit/s | not judged | - |" in page
    assert "- 001 yeah-spread-rank: sim (quick) reproduced, kernel not" in page
    assert "no kernel run for 000, 002, 004 (a partial column); no kernel design for 003" in page
    assert "| 001 | kernel |" in page
    # a study without a kernel run still states its kernel design and cuts
    assert "no kernel design: at the emulator's 100 Mbit/s" in page  # 003
    assert "- cut: MSS 1300 and 1460 only" in page  # 000
    # a quiet run is the column: no warning
    assert D.loaded({"run": {"load_1min": [0.4, 1.1], "cpus": 2}}) == ""


def test_a_study_without_a_kernel_design_runs_nothing_on_the_emulator(tmp_path, monkeypatch):
    def never(_ctx):
        raise AssertionError("study 003's campaigns ran on the emulator")

    monkeypatch.setattr(R.module("003"), "run", never)
    ran = R.run_study("003", ["emu"], True, None, tmp_path)
    assert ran.dirs == {"emu": {}}
    result = R.judge(ran)
    findings = [r for r in result.rows if r.claim.kind == "finding"]
    assert findings and all(r.verdict == CL.NOT_JUDGED for r in findings)
    text = (tmp_path / "003" / "claims.txt").read_text()
    assert "no kernel design: at the emulator's 100 Mbit/s" in text
    doc = json.loads((tmp_path / "003" / "claims.json").read_text())
    assert doc["no_kernel"] and doc["run"]["linkd_lateness"] == {"emu": None}


def test_the_doc_sets_the_kernel_column_beside_its_twin_on_the_simulator(tmp_path, capsys):
    """`--kernel-sim`: the kernel design run on the simulator. 'Where the engines disagree'
    compares the kernel column with it (same design), not with the quick design, names what
    moves with the design, and the twin is never tallied."""
    spec = CL.load("001")
    base = {c.id: CL.Measured(1.3, per_seed=(1.3,) * 5) for c in spec.claims}
    base["rtt-mean"] = CL.Measured(55.0)
    ker = {**base, "yeah-spread-rank": CL.Measured(4.0)}  # the kernel's YeAH spread ranks 4th
    twin = {**ker, "vegas-max": CL.Measured(0.5, per_seed=(0.5,) * 5)}  # only the twin differs
    run = {"started_utc": "2026-12-01 03:44", "wall_s": 9, "load_1min": [0.5, 0.7], "cpus": 2}
    quick, kernel, sim = tmp_path / "q", tmp_path / "k", tmp_path / "s"
    write(quick, "001", CL.judge_all(spec, "sim", base), run)
    write(kernel, "001", CL.judge_all(spec, "emu", ker, kernel=True), run)
    rows = CL.judge_all(spec, "sim", twin, kernel=True)
    result = R.StudyResult(spec, rows, quick=True, design="kernel")
    result.dirs["sim"] = {}
    result.run = run
    (sim / "001").mkdir(parents=True)
    (sim / "001" / "claims.json").write_text(json.dumps(result.doc()))
    (sim / "001" / "claims.txt").write_text("\n".join(R.text_lines(result)))
    assert result.doc()["designs"] == {"sim": "kernel"}
    assert "(kernel design, engine sim)" in R.text_lines(result)[0]
    page = D.render({"quick": quick, "kernel": kernel}, "cmd", twin=sim)
    disagree = page.split("## Where the engines disagree")[1].split("## ")[0]
    verdicts = {r.claim.id: r.verdict for r in rows}
    assert verdicts["vegas-max"] == CL.REPRODUCED  # Vegas's peak below the others': the twin's
    assert "- 001 vegas-max: kernel 1.3 x: not; sim 0.5 x: reproduced" in disagree
    assert "(sim's quick design: 1.3 x: not)" in disagree
    assert "the kernel above in 5 of 5" in disagree  # and whether the values differ, per seed
    assert "| differ (5 of 5 above) |" in page  # the beside table's column
    assert "they differ in 1: 001 vegas-max (the kernel above in 5 of 5)" in disagree  # of all
    # the kernel and its twin agree on yeah-spread-rank: the quick design differs (the design)
    assert "yeah-spread-rank:" not in disagree
    assert "moves with the design" in disagree and "001 yeah-spread-rank" in disagree
    assert D.TWIN_CAUSES in disagree  # what the disagreements were traced to: BENCHMARKS.md
    assert "sim, kernel design | verdict | kernel (emu), kernel design" in page
    assert "| engines (same design) | values, kernel - sim per seed |" in page
    assert "| kernel-sim | 001 | `" in page  # how the page was made: the twin's run
    tally = page.split("## Tally")[1]
    assert "| 001 | kernel |" in tally and "kernel-sim |" not in tally
    assert "is not tallied" in tally
    # a root that is not the kernel design on the simulator is not set beside the kernel column
    not_twin = D.render({"quick": quick, "kernel": kernel}, "cmd", twin=quick)
    assert "**Not the kernel design on the simulator**" in not_twin
    assert D.TWIN_CAUSES not in not_twin
    # the command line names it; it needs the kernel column it checks
    assert D.main(["--quick", str(quick), "--kernel", str(kernel), "--kernel-sim", str(sim)]) == 0
    assert f"--kernel {kernel} --kernel-sim {sim} > docs/reproduce.md" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        D.main(["--quick", str(quick), "--kernel-sim", str(sim)])


def test_a_disagreement_says_whether_the_engines_values_differ_seed_by_seed():
    """The kernel column and its twin run the same seeds: kernel - sim per seed, the sign test
    on each side at 5 %. Verdicts that part while the seeds fall both ways are within the
    seeds' spread, not a difference of the engines."""
    one_way = D.engines_paired(
        {"per_seed": [1.2, 1.3, 1.25, 1.4, 1.1]}, {"per_seed": [1.0, 1.1, 1.0, 1.2, 1.05]}
    )
    assert "the kernel above in 5 of 5, sign test p = 0.0312" in one_way
    assert "the engines' values differ" in one_way
    both = D.engines_paired(
        {"per_seed": [1.2, 0.9, 1.25, 1.0, 1.1]}, {"per_seed": [1.0, 1.1, 1.0, 1.2, 1.05]}
    )
    assert "the kernel above in 3 of 5" in both and "not shown to differ" in both
    assert "(too few seeds)" in D.engines_paired({"per_seed": [2.0] * 3}, {"per_seed": [1.0] * 3})
    below = D.values_cell({"per_seed": [1, 2, 3, 4, 5]}, {"per_seed": [2, 3, 4, 5, 6]})
    assert below == "differ (5 of 5 below)"
    # nothing to pair: a finding without per-seed values, or of other seeds
    assert D.values_cell({"per_seed": None}, {"per_seed": [1.0] * 5}) == "-"
    assert "not paired" in D.engines_paired({"per_seed": [1.0] * 5}, {"per_seed": [1.0] * 3})
    assert "not compared" in D.engines_paired({}, {"per_seed": [1.0] * 5})
