"""The quick designs (`satcc reproduce all --quick`, goal <= 60 s on 2 cores) run what their
judged claims read: a quick run no verdict reads is time the goal cannot spare."""

from __future__ import annotations

from satcc.campaign import spec
from satcc.studies import common, study004


def test_study004_sens_quick_runs_only_what_eq6_improves_1v1_reads():
    # study004._across_queues judges eq6-improves-1v1 over the queues in PLAUSIBLE_QUEUE_PKTS,
    # stock against eq. 6 (100 ms); the other queues and RTT units feed only the printed
    # sensitivity table (the full design runs them)
    sens = spec.expand(common.load("study004-sens", True), force=True, progress=False)
    lo, hi = study004.PLAUSIBLE_QUEUE_PKTS
    queues = {r.params["queue"] for r in sens}
    assert queues and all(lo <= float(q.split()[0]) <= hi for q in queues), queues
    assert {r.params["k"] for r in sens} == {"stock", "eq6"}
    assert len(sens) == 2 * len(queues) * 5  # 5 seeds: the sign test's minimum
    # eq. 6 at 100 ms is study004-1v1's eq6: its 1000-packet runs are copied, not simulated
    one = {r.run_id for r in spec.expand(common.load("study004-1v1", True), force=True)}
    shared = [r for r in sens if r.run_id in one]
    assert {(r.params["queue"], r.params["k"]) for r in shared} == {
        ("1000 pkt", "stock"),
        ("1000 pkt", "eq6"),
    }
    assert len(shared) == 10


def test_study004_sens_full_design_keeps_every_sensitivity():
    full = spec.expand(common.load("study004-sens", False), force=True, progress=False)
    assert {r.params["queue"] for r in full} == {
        "50 pkt",
        "250 pkt",
        "1000 pkt",
        "2000 pkt",
        "5000 pkt",
    }
    assert {r.params["k"] for r in full} == {"stock", "eq6-1ms", "eq6-10ms", "eq6"}
    # its 1000-packet stock and eq. 6 (100 ms) runs are study004-1v1's at PC2 128 ms: copied,
    # not simulated (before, eq6 named rtt_unit = 100, the default, and so had other run ids
    # for the same simulation)
    one = spec.expand(common.load("study004-1v1", False), force=True, progress=False)
    shared = {
        (r.params["queue"], r.params["k"]) for r in full if r.run_id in {o.run_id for o in one}
    }
    assert shared == {("1000 pkt", "stock"), ("1000 pkt", "eq6")}


def _campaigns_run(monkeypatch, tmp_path, quick: bool, engine: str) -> list[str]:
    """The campaigns study004.run asks common.run for (none is run)."""
    asked: list[str] = []

    def fake_run(ctx, name, emu_changes=None, quick_variant=False):
        asked.append(name)
        return tmp_path / name

    monkeypatch.setattr(common, "run", fake_run)
    study004.run(common.Context(engine, quick, None, tmp_path))
    return asked


def test_study004_quick_runs_no_campaign_that_feeds_only_a_figure(monkeypatch, tmp_path):
    # study004-phase feeds a figure only: --quick leaves it out; study004-why stays (the
    # measured explanation printed with eq6-improves-1v1's miss), study004-sens (a verdict)
    quick = _campaigns_run(monkeypatch, tmp_path, True, "sim")
    assert quick == ["study004-1v1", "study004-many", "study004-why", "study004-sens"]
    # the full design runs the investigation (and eq. 6's unit at 16v16) with either engine
    full = _campaigns_run(monkeypatch, tmp_path, False, "sim")
    assert set(full) == {*study004.CAMPAIGNS, *study004.WHY, study004.MANY_UNIT}
    # the kernel's quick column: the paper's campaigns only (their [kernel] designs)
    assert _campaigns_run(monkeypatch, tmp_path, True, "emu") == list(study004.CAMPAIGNS)
