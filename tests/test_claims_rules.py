"""The claim rules a referee would ask for (satcc/studies/claims.py): inputs apart from findings
and never tallied, no partly on the wrong side of an above/below claim, a difference between
groups reproduced only when every seed agrees, the printed table and the JSON saying the same,
and every study's data file listing its main results (claims or 'not judged') and anomalies."""

from __future__ import annotations

import pytest

from satcc.errors import UserError
from satcc.studies import claims as CL
from satcc.studies import reproduce as R

VAGUE = ("大きく", "著しく", "非常に", "大幅", "わずかに", "安定")


def claim(**kw) -> CL.Claim:
    base = {"id": "x", "what": "a number", "cite": "§4.2", "paper": 1.0, "tolerance": 0}
    base.update(kw)
    return CL.Claim.model_validate(base)


def test_a_noise_level_difference_is_not_reproduced():
    c = claim(relation="above", across_seeds=True)
    # the pooled ratio is on the claim's side but the seeds disagree: not shown
    assert CL.verdict(c, 1.05, [1.2, 0.9])[1] == CL.PARTLY
    assert CL.verdict(c, 1.05, [1.2, float("nan")])[1] == CL.PARTLY
    assert CL.verdict(c, 1.05, [1.05])[1] == CL.PARTLY  # one seed shows no difference
    assert CL.verdict(c, 1.05, None)[1] == CL.PARTLY
    # every seed agrees: shown
    assert CL.verdict(c, 1.05, [1.1, 1.01, 1.04])[1] == CL.REPRODUCED
    # the pooled value on the wrong side is not, whatever the seeds say
    assert CL.verdict(c, 0.99, [1.1, 1.01])[1] == CL.NOT
    with pytest.raises(ValueError, match="across_seeds"):
        claim(relation="near", tolerance="10 %", across_seeds=True)


def test_a_wrong_side_value_is_not_and_strict_claims_take_no_tolerance():
    below = claim(paper=70.0, relation="below")
    assert CL.verdict(below, 69.9)[1] == CL.REPRODUCED
    assert CL.verdict(below, 70.1)[1] == CL.NOT  # once "within 10 %" counted as reproduced
    with pytest.raises(ValueError, match="strict"):
        claim(paper=70.0, relation="below", tolerance="10 %")


def rows_of(*pairs: tuple[CL.Claim, CL.Measured]) -> list[CL.Row]:
    return [CL.judge(c, "sim", m) for c, m in pairs]


def test_inputs_are_shown_beside_the_paper_and_not_tallied():
    inp = claim(id="rtt-mean", paper=230.0, unit="ms", tolerance="20 %", kind="input")
    fnd = claim(id="ratio", paper=2.0, relation="above")
    skip = claim(id="ramp", paper=[10.0, 20.0], relation="within", tolerance=2)
    rows = rows_of(
        (inp, CL.Measured(128.0, "mean", "satcc's path", seeds=1, source="rtt-day")),
        (fnd, CL.Measured(4.2, "ratio", seeds=4, source="t2t")),
        (skip, CL.Measured(None, skipped="not judged in this design: runs of 4 min")),
    )
    assert rows[0].verdict == CL.INPUT and rows[0].distance == pytest.approx(102.0)
    assert rows[2].verdict == CL.NOT_JUDGED
    assert CL.tally(rows) == {CL.REPRODUCED: 1, CL.PARTLY: 0, CL.NOT: 0}
    text = CL.table_lines(rows)
    line = next(x for x in text if x.startswith("rtt-mean "))
    assert "≈ 230 ms" in line and "128 ms" in line and line.endswith("input (from §4.2)")
    assert any(
        "1 reproduced, 0 partly, 0 not, 1 not judged in this design; 1 input" in x for x in text
    )
    # findings are printed before inputs
    assert [x.split()[0] for x in text[1:4]] == ["ratio", "ramp", "rtt-mean"]


def test_the_json_and_the_printed_table_agree():
    spec = CL.load("001")
    m = {
        c.id: CL.Measured(1.3, "h", "w", seeds=2, source="s", per_seed=(1.2, 1.4))
        for c in spec.claims
    }
    result = R.StudyResult(spec, [CL.judge(c, "sim", m[c.id]) for c in spec.claims])
    result.dirs["sim"] = {}
    doc = result.doc()
    lines = R.text_lines(result)
    for row in doc["claims"]:
        line = next(x for x in lines if x.startswith(row["id"] + " "))
        assert row["satcc_text"] in line and line.endswith(row["verdict_text"])
        assert row["seeds"] == 2 and row["source"] == "s" and row["per_seed"] == [1.2, 1.4]
    t = doc["verdicts"]
    assert any(
        x.startswith(f"findings: {t['reproduced']} reproduced, {t['partly']} partly") for x in lines
    )
    judged, total = spec.coverage()
    assert doc["coverage"] == {"judged": judged, "main_results": total}
    assert any(x.startswith(f"coverage: {judged} of the paper's {total}") for x in lines)


@pytest.mark.parametrize("study", R.STUDIES)
def test_every_study_lists_its_main_results_and_anomalies(study):
    s = CL.load(study)
    findings = [c for c in s.claims if c.kind == "finding"]
    assert findings and s.not_judged and all(n.reason for n in s.not_judged)
    assert s.anomalies  # each of the five papers has at least one recorded
    for c in s.claims:  # a vague word in the quote has its number's reasoning in the note
        if c.quote and any(w in c.quote for w in VAGUE):
            assert c.note and any(ch.isdigit() for ch in c.note), c.id


def test_a_bad_not_judged_entry_names_the_file_and_table(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[study]\nid = "9"\ntitle = "t"\npaper = "p"\nreference = "r"\n'
        '[[claim]]\nid = "a"\nwhat = "w"\ncite = "c"\npaper = 1\ntolerance = 0\n'
        '[[not_judged]]\nwhat = "w"\ncite = "c"\n'
    )
    with pytest.raises(UserError, match=r"bad.toml: not_judged\[0\].reason"):
        CL.load("9", bad)
    bad.write_text(bad.read_text().replace("[[not_judged]]", "[[not_judge]]"))
    with pytest.raises(UserError, match="bad.toml: expected tables"):
        CL.load("9", bad)
