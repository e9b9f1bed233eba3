"""`satcc reproduce`: verdicts computed from the numbers, the claims files, and every study's
--quick design end to end in a shortened form (durations and rounds cut further so all five run
in about two minutes; the real --quick designs are the slow test)."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from satcc.cli import main
from satcc.errors import UserError
from satcc.studies import claims as CL
from satcc.studies import common
from satcc.studies import reproduce as R

REPO = Path(__file__).resolve().parents[1]


def claim(**kw) -> CL.Claim:
    base = {
        "id": "x",
        "what": "a number",
        "cite": "Fig. 1",
        "paper": 10.0,
        "unit": "Mbit/s",
        "tolerance": "10 %",
    }
    base.update(kw)
    return CL.Claim.model_validate(base)


def test_a_value_crossing_the_tolerance_flips_the_verdict():
    c = claim()  # near 10, 10 % -> reproduced within 1, partly within 2
    assert CL.verdict(c, 10.9)[1] == CL.REPRODUCED
    assert CL.verdict(c, 11.1)[1] == CL.PARTLY
    assert CL.verdict(c, 9.1)[1] == CL.REPRODUCED
    assert CL.verdict(c, 8.1)[1] == CL.PARTLY
    assert CL.verdict(c, 7.9)[1] == CL.NOT
    assert CL.verdict(c, None) == (None, CL.NOT)
    assert CL.verdict(c, float("nan")) == (None, CL.NOT)


def test_above_and_below_are_strict_and_the_wrong_side_is_not():
    c = claim(paper=1.0, relation="above", tolerance=0)
    assert CL.verdict(c, 1.01)[1] == CL.REPRODUCED
    assert CL.verdict(c, 1.0)[1] == CL.NOT  # equal is not "more than"
    assert CL.verdict(c, 0.999)[1] == CL.NOT  # just on the wrong side: never partly
    strict = claim(paper=0.5, relation="below", tolerance=0)
    assert CL.verdict(strict, 0.49)[1] == CL.REPRODUCED
    assert CL.verdict(strict, 0.5)[1] == CL.NOT
    with pytest.raises(ValueError, match="strict"):  # no tolerance or partly on a side claim
        claim(paper=1.0, relation="above", tolerance=0, partly=0.1)
    with pytest.raises(ValueError, match="strict"):
        claim(paper=1.0, relation="below", tolerance="10 %")


def test_within_measures_the_distance_to_the_interval():
    c = claim(paper=[50, 60], relation="within", tolerance=5, partly=15)
    assert CL.verdict(c, 55) == (0.0, CL.REPRODUCED)
    assert CL.verdict(c, 64)[1] == CL.REPRODUCED
    assert CL.verdict(c, 40)[1] == CL.PARTLY
    assert CL.verdict(c, 80)[1] == CL.NOT


def test_a_bad_claim_is_refused():
    with pytest.raises(ValueError):
        claim(relation="within")  # needs [lo, hi]
    with pytest.raises(ValueError):
        claim(tolerance="ten")


def test_every_study_has_a_claims_file_with_citations(tmp_path):
    for study in R.STUDIES:
        s = CL.load(study)
        assert s.id == study and s.claims
        assert all(c.cite for c in s.claims)
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[study]\nid = "9"\ntitle = "t"\npaper = "p"\nreference = "r"\n'
        '[[claim]]\nid = "a"\nwhat = "w"\ncite = "c"\npaper = 1\ntolerance = "x"\n'
    )
    with pytest.raises(UserError, match="bad.toml"):
        CL.load("9", bad)


SHORTER = {  # per quick campaign: (pattern, replacement) so all five run in about two minutes
    "study003-long": [(r'"1560 s"', '"120 s"')],
    "study004-1v1": [(r'"30 s"', '"10 s"')],
    "study004-many": [(r'"30 s"', '"10 s"')],
    "study004-why": [(r'"30 s"', '"6 s"')],
    "study004-phase": [(r'"30 s"', '"6 s"')],
    "study004-sens": [(r'"30 s"', '"6 s"'), (r', "250 pkt", "1000 pkt"', "")],
    "study000-mss": [
        (r"\[1200, 1300, 1400, 1460\]", "[1300, 1400, 1460]"),
        (r"repetitions = 5", "repetitions = 1"),
    ],
    "study000-t2t": [(r"repetitions = 5", "repetitions = 2")],
    "study000-baseline": [(r"repetitions = 5", "repetitions = 2")],
}


@pytest.fixture()
def short_campaigns(tmp_path, monkeypatch):
    """campaigns/*.toml with shorter quick variants, beside the real scenarios."""
    d = tmp_path / "repo"
    (d / "campaigns").mkdir(parents=True)
    (d / "scenarios").symlink_to(REPO / "scenarios")
    for f in (REPO / "campaigns").glob("*.toml"):
        text = f.read_text(encoding="utf-8")
        for pattern, repl in SHORTER.get(f.stem, []):
            text, n = re.subn(pattern, repl, text)
            assert n, (f.stem, pattern)
        (d / "campaigns" / f.name).write_text(text, encoding="utf-8")
    # the scenario the long-path quick design shortens: a smaller previous transfer
    scen = (REPO / "scenarios" / "study003-long.toml").read_text(encoding="utf-8")
    (d / "scen").mkdir()
    (d / "scen" / "study003-long.toml").write_text(scen.replace('"1 GB"', '"300 MB"'))
    text = (d / "campaigns" / "study003-long.toml").read_text()
    (d / "campaigns" / "study003-long.toml").write_text(
        text.replace("../scenarios/study003-long.toml", "../scen/study003-long.toml")
    )
    monkeypatch.setattr(common, "campaigns_dir", lambda: d / "campaigns")
    return d


@pytest.mark.parametrize("study", R.STUDIES)
def test_reproduce_quick_json_gives_a_claims_table(study, short_campaigns, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["reproduce", study, "--quick", "--json", "--seeds", "1", "--out", str(out)]
    assert main([*argv, "--figures"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["study"] == study and doc["quick"] and doc["engines"] == ["sim"]
    spec = CL.load(study)
    # every claim has a number, or says why this design cannot judge it
    missing = [c["id"] for c in doc["claims"] if c["satcc"] is None and not c["skipped"]]
    assert not missing, missing
    assert sorted(c["id"] for c in doc["claims"]) == sorted(c.id for c in spec.claims)
    text = (out / study / "claims.txt").read_text(encoding="utf-8").splitlines()
    for row in doc["claims"]:
        assert row["paper"] is not None and row["cite"]
        assert row["kind"] in ("input", "finding") and "seeds" in row and "source" in row
        c = next(x for x in spec.claims if x.id == row["id"])
        if row["verdict"] == CL.NOT_JUDGED:
            assert row["skipped"]
        else:  # the verdict is the rule applied to the printed numbers
            assert row["verdict"] in (*CL.VERDICTS, CL.INPUT)
            if row["flag"]:  # a tie, floor, lockout or path mismatch never counts
                assert row["verdict"] == CL.NOT and row["flag"] in row["verdict_text"]
            else:
                assert CL.verdict(c, row["satcc"], row["per_seed"])[1] == row["verdict"]
        if row["satcc"] is not None and row["verdict"] != CL.NOT_JUDGED:
            assert row["source"] and row["seeds"], row["id"]
        # the printed table says what the JSON says
        line = next(x for x in text if x.startswith(row["id"] + " "))
        assert row["satcc_text"] in line and line.rstrip().endswith(row["verdict_text"]), line
    assert doc["verdicts"] == {
        v: sum(1 for r in doc["claims"] if r["kind"] == "finding" and r["verdict"] == v)
        for v in CL.VERDICTS
    }
    html = (out / study / "report.html").read_text(encoding="utf-8")
    assert (
        "<table>" in html
        and html.count("data:image/png;base64,") == sum(len(v) for v in doc["figures"].values()) > 0
    )
    assert (out / study / "claims.json").exists() and (out / study / "claims.txt").exists()
    if study == "004":  # the many-vs-many runs' climb: the window judged and PC2's windows
        why = next(r["why"] for r in doc["claims"] if r["id"] == "eq6-like-stock-large-gap-many")
        climb = re.search(
            r"judged on 5-10 s of 10 s runs, .* of stock (\d+) packets \(K ([\d.]+) s\)", why
        )
        assert climb, why
        w, k = int(climb[1]), float(climb[2])
        assert w > 0 and abs(k - (0.3 * w / 0.4) ** (1 / 3)) < 0.06, why


def test_figures_are_drawn_only_when_asked_and_then_from_the_finished_runs(
    short_campaigns, tmp_path, capsys
):
    # the figures are most of a study's judging (matplotlib, ~0.3 CPU s each) and no verdict
    # reads them: drawn with --figures only, which on a finished output root runs nothing again
    import sys

    out = tmp_path / "out"
    argv = ["reproduce", "001", "--quick", "--json", "--seeds", "1", "--out", str(out)]
    drawn_before = "matplotlib.figure" in sys.modules
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    html = (out / "001" / "report.html").read_text(encoding="utf-8")
    assert plain["figures"] == {} and "data:image/png" not in html
    assert "satcc reproduce 001 --quick --seeds 1 --figures" in html
    assert not (out / "001" / "figures").exists()
    assert drawn_before or "matplotlib.figure" not in sys.modules  # not even imported
    runs = sorted((out / "001" / "sim").glob("*/runs/*/run.json"))
    stamps = [p.stat().st_mtime_ns for p in runs]
    assert main([*argv, "--figures", "--timings"]) == 0
    captured = capsys.readouterr()
    drawn = json.loads(captured.out)
    assert drawn["figures"]["sim"] and drawn["claims"] == plain["claims"]
    html = (out / "001" / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == len(drawn["figures"]["sim"])
    assert [p.stat().st_mtime_ns for p in runs] == stamps  # no run written again
    sim = next(
        x.split() for x in captured.err.splitlines() if x.startswith("001 ") and " simulation " in x
    )
    assert float(sim[6]) == 0.0  # nothing simulated: CPU s of the pool's workers


def test_an_unknown_study_is_a_clear_error(capsys):
    assert main(["reproduce", "007"]) == 2
    assert "STUDY: expected one of 000, 001, 002, 003, 004 or all" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("study", R.STUDIES)
def test_reproduce_quick_as_shipped(study, tmp_path, capsys):
    assert main(["reproduce", study, "--quick", "--json", "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    # a finding: a verdict, or "not judged" with its reason (a sensitivity whose points differ,
    # a design too short for the claim); an input (the path) is never judged
    assert doc["claims"] and all(
        r["verdict"] == CL.INPUT
        if r["kind"] == "input"
        else r["verdict"] in CL.VERDICTS or (r["verdict"] == CL.NOT_JUDGED and r["skipped"])
        for r in doc["claims"]
    )


def test_the_emulator_version_caps_rates_even_where_an_axis_sets_them():
    from satcc.campaign import spec
    from satcc.studies import study003

    c = common.load(
        "study003-long", True, "emu", seeds=2, engine_changes=study003.EMU_CHANGES["study003-long"]
    )
    assert c.name == "study003-long-quick-emu" and c.seeds == [1, 2]
    runs = spec.expand(c)
    assert runs and {r.engine for r in runs} == {"emu"}
    for r in runs:
        link = r.scenario["link"][1]
        assert link["model"]["rate"] == "100 Mbit/s", r.params
    sim = common.load("study003-long", True)
    # §5: tests 3 and 4 crossed the same ATM PVC with its 273 Mbit/s shaper
    assert {r.scenario["link"][1]["model"]["rate"] for r in spec.expand(sim)} == {"273 Mbit/s"}


def test_study002s_simulator_column_caps_the_senders_window_and_acks_every_segment(
    tmp_path, monkeypatch
):
    """ns-2's window_ caps the sender (W_m = 550 packets), its sink ACKs every segment, and its
    steady runs last Table 1's 1000 s in --quick too; the dummynet column runs on its own
    testbed's path: Table 2's 100 s, the stock receiver's delayed ACKs, the sender capped."""
    from satcc.studies import hybla, study002

    seen: list[hybla.Design] = []
    monkeypatch.setattr(
        hybla, "validate_many", lambda todo, *a, **k: seen.extend(d for d, _out in todo)
    )
    ctx = common.Context("sim", True, None, tmp_path)
    names = ("validate-hybla", study002.DUMMYNET)
    # both columns at every swept link rate (the paper gives none; --quick: the two ends), run
    # through one pool
    quick = study002.RATES_BPS_QUICK
    assert (
        set(study002.run(ctx))
        == {study002.rate_dir(n, r) for r in quick for n in names}
        >= set(names)
    )
    assert [d.rate_bps for d in seen] == [r for r in quick for _n in names]
    assert quick == (10_000_000, 1_000_000_000)
    ns2, dummynet = seen[:2]
    assert ns2.rate_bps == dummynet.rate_bps == hybla.RATE_BPS  # the headline's own names
    assert seen[2:4] == [  # off the headline, the steady runs untraced
        d.replace(rate_bps=1_000_000_000, trace_steady=False) for d in (ns2, dummynet)
    ]
    assert ns2.sender_clamp and not ns2.delayed_ack and ns2.steady_duration_s == 1000.0
    assert dummynet.sender_clamp and dummynet.delayed_ack and dummynet.steady_duration_s == 100.0
    assert ns2.seeds >= 3 and dummynet.seeds >= 3  # Table 3's figures are means over runs
    spec = hybla.run_specs(ns2)[0]
    flow = hybla.scenario_dict(spec)["flow"][0]
    assert flow["cwnd_clamp"] == hybla.WMAX_PKTS and flow["delayed_ack"] is False
    assert flow["rwnd"] == hybla.SENDER_CLAMP_RWND  # the receive window out of the way


def test_study002s_kernel_column_caps_the_senders_window_not_the_receive_window(
    tmp_path, monkeypatch
):
    """The dummynet column through the kernel (--engine emu) caps the sender at W_m as the
    study's rebuilt kernel did: the flow's cwnd_clamp, which the emulator compiles into its BPF
    Hybla (a kernel hybla built in is not used then), and no 550-packet receive window."""
    from satcc import scenario as sc
    from satcc.emu import bpf, runner, topology
    from satcc.studies import hybla, study002

    seen: list[hybla.Design] = []
    monkeypatch.setattr(hybla, "validate", lambda design, *a, **k: seen.append(design))
    ctx = common.Context("emu", True, None, tmp_path)
    assert set(study002.run(ctx)) == {"validate-hybla"}
    (kernel,) = seen
    assert kernel.engine == "emu" and kernel.sender_clamp and kernel.delayed_ack
    specs = hybla.run_specs(kernel)
    assert {s.sender_clamp for s in specs} == {True}
    flow = hybla.scenario_dict(specs[0])["flow"][0]
    assert flow["cwnd_clamp"] == hybla.WMAX_PKTS == 550
    assert flow["rwnd"] == hybla.SENDER_CLAMP_RWND  # no receive-window cap at W_m
    cfg = sc.resolve(sc.from_dict(hybla.scenario_dict(specs[0]), source="<002 kernel>"))
    topology.plan(cfg, "t", subnet_octet=71)  # the emulator takes the sender cap
    loaded: list[tuple] = []
    monkeypatch.setattr(runner, "available_ccas", lambda: ["reno", "cubic", "hybla"])
    monkeypatch.setattr(bpf, "registered", list)
    monkeypatch.setattr(
        bpf, "ensure_registered", lambda *a: loaded.append(a) or bpf.kernel_name(*a)
    )
    names = runner.resolve_ccas(cfg, [])
    assert loaded == [("hybla", {"rtt0": 25.0}, 550)]
    assert names[0] == bpf.kernel_name("hybla", {"rtt0": 25.0}, 550) != "hybla"


def test_timings_prints_wall_and_cpu_per_study_and_phase(short_campaigns, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["reproduce", "004", "--quick", "--seeds", "1", "--out", str(out), "--timings"]
    assert main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["study"] == "004"  # stdout stays the JSON alone
    lines = captured.err.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("Where the time went"))
    cols = lines[head + 1].split()
    assert cols[:3] == ["study", "phase", "wall"]
    rows = {tuple(x.split()[:2]): x.split() for x in lines[head + 2 :] if x[:4] in ("004 ", "all ")}
    from satcc import timings

    for phase in (timings.RESOLVE, timings.SIMULATION, timings.WRITING, timings.STORE):
        assert ("004", phase) in rows and ("all", phase) in rows, phase
    assert ("004", "figures/docs") in rows and ("004", "claims") in rows
    wall = {k: float(v[2]) for k, v in rows.items() if k[0] == "004"}
    assert wall["004", timings.SIMULATION] > 0 and all(w >= 0 for w in wall.values())
    assert any(x.startswith("outside the simulation: ") for x in lines)
    # a rerun resumes: nothing simulated, the pool's workers took no CPU
    assert main(argv) == 0
    text = capsys.readouterr().out.splitlines()
    sim = next(x.split() for x in text if x.startswith("004") and " simulation " in x)
    assert float(sim[6]) == 0.0  # CPU s workers (the shares print as "12.3 %")


def test_timings_record_from_the_commands_start_its_imports_included(monkeypatch, capsys):
    # the studies' imports (pandas, numpy, pydantic: ~1 CPU s in the command's process) are
    # part of what `--timings` reports: the recording is on before the command reads its
    # arguments (an unknown study is refused inside it)
    from satcc import timings

    entered = []
    real = timings.recording

    @contextlib.contextmanager
    def watched():
        entered.append(1)
        with real() as t:
            yield t

    monkeypatch.setattr(timings, "recording", watched)
    assert main(["reproduce", "007", "--timings"]) == 2
    assert "STUDY: expected one of" in capsys.readouterr().err
    assert entered == [1]


def test_a_study_opens_each_campaign_store_once(short_campaigns, tmp_path, monkeypatch):
    from satcc.store import catalog

    out = tmp_path / "out"
    assert main(["reproduce", "000", "--quick", "--seeds", "1", "--out", str(out)]) == 0
    opened = []
    real = catalog.open_store

    def counting(directory, *a, **kw):
        opened.append(Path(directory).resolve())
        return real(directory, *a, **kw)

    monkeypatch.setattr(catalog, "open_store", counting)
    before = json.loads((out / "000" / "claims.json").read_text())
    assert main(["reproduce", "000", "--quick", "--seeds", "1", "--out", str(out)]) == 0
    after = json.loads((out / "000" / "claims.json").read_text())
    campaigns = {Path(p).resolve() for p in before["campaigns"]["sim"].values()}
    assert sorted(set(opened)) == sorted(campaigns)
    # each store once while the study judges and draws (the campaign runs open none)
    assert len(opened) == len(campaigns), sorted(opened)
    assert before["claims"] == after["claims"] and before["figures"] == after["figures"]


def test_reading_opens_a_store_once_for_its_tables_and_queries(tmp_path, monkeypatch):
    # a study asks for runs and flows, later the series, and queries (study 003's trace,
    # study 004's cc_series): one open of the store (each open hashes every file and builds
    # the catalog), each table and query read once
    from satcc.campaign import spec
    from satcc.campaign.execute import run_campaign
    from satcc.store import catalog
    from tests.campaign_helpers import write_campaign

    d = tmp_path / "out"
    run_campaign(spec.load(write_campaign(tmp_path)), d, jobs=1, progress=False)
    opened = []
    real = catalog.open_store
    monkeypatch.setattr(catalog, "open_store", lambda *a, **k: opened.append(1) or real(*a, **k))
    sql = "SELECT count(*) AS n FROM flow_series"
    with common.reading():
        assert len(common.frames(d)["flows"]) == 16
        assert len(common.frames(d, flow_series=True)["flow_series"]) == 8 * 2 * 20
        assert common.query(d, sql)["n"][0] == 8 * 2 * 20
        assert common.query(d, sql)["n"][0] == 8 * 2 * 20
        assert len(common.frames(d, link_series=True)["link_series"]) == 8 * 3 * 2 * 20
    assert len(opened) == 1
    assert common.query(d, sql)["n"][0] == 8 * 2 * 20  # outside `reading`: opened for the call
    assert len(opened) == 2


def test_a_run_another_study_has_done_is_copied_not_simulated(short_campaigns, tmp_path):
    # two studies of one output root running the same campaign: the second copies every run
    from satcc.campaign import spec
    from tests.campaign_helpers import tree_hashes

    root = tmp_path / "out"
    first = common.run(common.Context("sim", True, 1, root / "900"), "study004-1v1")
    logged: list[str] = []
    ctx = common.Context("sim", True, 1, root / "901", log=logged.append)
    second = common.run(ctx, "study004-1v1")
    n = len(spec.expand(common.load("study004-1v1", True, seeds=1)))
    assert any(f"{n} run(s) done in another campaign, copied" in m for m in logged), logged
    assert tree_hashes(first) and tree_hashes(second) == tree_hashes(first)  # byte for byte
    assert common.siblings(ctx, second) == [first]


def test_planned_runs_are_the_campaigns_runs_in_the_order_reproduce_submits_them(
    tmp_path, monkeypatch
):
    # `execute.ahead`'s plan: each campaign's runs longest first, the campaigns in the
    # studies' run order, none done already; study 002's design (not campaigns) is not run
    # to plan it; nothing is written. A campaign run afterwards takes its plan, not expanded
    # again.
    from satcc.campaign import execute, spec

    out = tmp_path / "out"
    short, long_ = (spec.expand(common.load(n, True)) for n in ("study003-short", "study003-long"))
    ordered = [s.run_id for c in (short, long_) for s in sorted(c, key=lambda s: -s.cost)]
    assert [s.run_id for s in R.planned_runs(["002", "003"], ["sim"], True, None, out)] == ordered
    assert not out.exists()
    done = out / "003" / "sim" / "study003-short-quick" / "runs" / short[2].run_id
    done.mkdir(parents=True)
    (done / "run.json").write_text("{}")
    planned = R.planned_runs(["003"], ["sim"], True, None, out)
    assert [s.run_id for s in planned] == [r for r in ordered if r != short[2].run_id]
    given, expanded = [], []
    monkeypatch.setattr(spec, "expand", lambda *a, **k: expanded.append(a) or [])

    class Ran:
        copied = 0

        def count(self, _status):
            return 0

    monkeypatch.setattr(
        execute, "run_campaign", lambda c, d, plan=None, **_k: given.append(plan) or Ran()
    )
    common.run(common.Context("sim", True, None, out / "003"), "study003-long")
    assert not expanded and [s.run_id for s in given[0]] == [s.run_id for s in long_]


def test_study002s_design_runs_in_the_reproduce_pool_not_a_pool_of_its_own(monkeypatch):
    # inside `satcc reproduce` (sharing_workers) the hybla design's runs go to the campaigns'
    # pool (a pool of its own: 2 spawned workers importing satcc again), their CPU charged
    from satcc import timings
    from satcc.campaign import execute as E
    from satcc.studies import hybla

    made = []
    real = E._new_pool
    monkeypatch.setattr(E, "_new_pool", lambda jobs: made.append(jobs) or real(jobs))
    specs = hybla.run_specs(hybla.Design.quick(seeds=1))[:3]
    with timings.recording() as t, E.sharing_workers():
        first = hybla.run_all(specs, jobs=2)
        again = hybla.run_all(specs, jobs=2)
    assert made == [2]  # one pool, for both
    assert first == again == [hybla.simulate(s) for s in specs]
    assert t.run_count == {"": 6} and t.run_cpu_s[""] > 0


def test_a_table_derived_from_a_store_is_computed_once_inside_reading(tmp_path):
    # study 004's investigation table feeds both a claim's text and its figures
    import pandas as pd

    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"x": [1.0, 2.0]})

    with common.reading():
        first = common.derived(tmp_path, "t", compute)
        first["y"] = 0.0  # a caller's change stays its own
        again = common.derived(tmp_path, "t", compute)
    assert len(calls) == 1 and list(again.columns) == ["x"]
    common.derived(tmp_path, "t", compute)
    assert len(calls) == 2  # outside `reading`: computed at every call


def test_reproduce_all_judges_each_study_in_a_process_beside_the_next_studys_runs(
    short_campaigns, tmp_path, capsys
):
    # the claims and figures of a study (one core, seconds) are done in a process of their own
    # while this one runs the next study's campaigns: the pool no longer waits for them
    out = tmp_path / "out"
    argv = ["reproduce", "all", "--quick", "--seeds", "1", "--out", str(out), "--json"]
    assert main([*argv, "--timings", "--figures"]) == 0
    captured = capsys.readouterr()
    docs = json.loads(captured.out)
    assert [d["study"] for d in docs] == list(R.STUDIES)  # printed in the studies' order
    rows = [x.split() for x in captured.err.splitlines()]
    judged = {(r[0], r[1]): r for r in rows if len(r) > 6 and r[1] in ("claims", "figures/docs")}
    for study in R.STUDIES:
        here, elsewhere = (float(judged[study, "figures/docs"][i]) for i in (5, 6))  # "12.3 %": 2
        assert here == 0.0 and elsewhere > 0, judged[study, "figures/docs"]
    assert any(r[:2] == ["-", "tail"] for r in rows)
    # judged elsewhere or here, the same claims, figures and files
    first = {s: (out / s / "claims.txt").read_bytes() for s in R.STUDIES}
    for study in ("002", "004"):
        again = ["reproduce", study, "--quick", "--seeds", "1", "--out", str(out), "--json"]
        assert main([*again, "--figures"]) == 0
        again = json.loads(capsys.readouterr().out)
        doc = next(d for d in docs if d["study"] == study)
        assert {k: v for k, v in again.items() if k != "run"} == {
            k: v for k, v in doc.items() if k != "run"
        }
        assert (out / study / "claims.txt").read_bytes() == first[study]


def test_study004_runs_eq6_rtt_unit_10ms_only_where_its_sensitivity_row_reads_it():
    # the row "16v16, PC2 128 ms: eq6-unit10ms" (study004.sensitivity) is the only reader: the
    # unit is a campaign of those 5 runs, not a case of study004-many's 40 (both counts, 4 RTTs)
    from satcc.campaign import spec

    many = spec.expand(common.load("study004-many", False))
    assert not [r for r in many if r.params["k"] == "eq6-unit10ms"]
    unit = spec.expand(common.load("study004-many-unit", False))
    top = max(r.params["rtt_pc2_ms"] for r in many)
    assert len(unit) == 5 and {(r.params["count"], r.params["rtt_pc2_ms"]) for r in unit} == {
        (16, top)
    }


def test_a_run_another_output_root_has_done_is_copied_not_simulated(short_campaigns, tmp_path):
    # the quick designs plan most of their runs in the full ones too: a design run after the
    # other copies them from the other's output root (`Context.reuse`, `--reuse`)
    from tests.campaign_helpers import tree_hashes

    first = common.run(
        common.Context("sim", True, 1, tmp_path / "full" / "000"), "study000-rtt-day"
    )
    logged: list[str] = []
    ctx = common.Context(
        "sim", True, 1, tmp_path / "quick" / "000", log=logged.append, reuse=(tmp_path / "full",)
    )
    second = common.run(ctx, "study000-rtt-day")
    assert common.siblings(ctx, second) == [first]
    assert any("done in another campaign, copied" in m for m in logged), logged
    assert tree_hashes(first) and tree_hashes(second) == tree_hashes(first)  # byte for byte


@pytest.mark.parametrize(
    ("argv", "reuse"),
    [
        (["--quick"], (Path("out/reproduce"),)),
        ([], (Path("out/reproduce-quick"),)),
        (["--quick", "--out", "x"], ()),
        (["--out", "x", "--reuse", "a", "--reuse", "b"], (Path("a"), Path("b"))),
    ],
)
def test_reproduce_reuses_the_other_designs_default_root(monkeypatch, argv, reuse):
    asked = []
    monkeypatch.setattr(R, "run_study", lambda *a, **k: asked.append(a[-1]))
    monkeypatch.setattr(
        R, "reproduce_many", lambda studies, run, **k: [run(s) for s in studies][:0]
    )
    assert main(["reproduce", "003", *argv]) == 0
    assert asked == [reuse]


def test_design_kernel_without_quick_is_a_clear_error(capsys):
    assert main(["reproduce", "000", "--design", "kernel"]) == 2
    assert "--design kernel: the kernel design is a quick design" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse's choices
        main(["reproduce", "000", "--quick", "--design", "tiny"])


@pytest.mark.parametrize(
    ("argv", "design", "out"),
    [
        (["--quick"], "auto", Path("out/reproduce-quick")),
        (["--quick", "--design", "kernel"], "kernel", Path("out/reproduce-kernel")),
        (["--quick", "--design", "kernel", "--out", "x"], "kernel", Path("x")),
    ],
)
def test_design_kernel_reaches_the_studies_and_writes_apart(monkeypatch, argv, design, out):
    # the kernel design's twin never overwrites the quick design's claims (its own root)
    asked = []
    monkeypatch.setattr(R, "run_study", lambda *a, **k: asked.append((a[4], k["design"])))
    monkeypatch.setattr(
        R, "reproduce_many", lambda studies, run, **k: [run(s) for s in studies][:0]
    )
    assert main(["reproduce", "003", *argv]) == 0
    assert asked == [(out, design)]
