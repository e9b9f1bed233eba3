"""satcc.timings: exclusive phases, sections, a no-op when not recording."""

from __future__ import annotations

import time

import pytest

from satcc import timings


def spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_an_inner_phase_is_charged_its_own_time_not_its_parents_too():
    with timings.recording() as t:
        with timings.section("001"), timings.phase(timings.SIMULATION):
            spin(0.05)
            with timings.phase(timings.WRITING):
                spin(0.1)
        spin(0.02)
    cost = {(s, p): c for s, p, c in t.rows()}
    sim, wri = cost["001", timings.SIMULATION], cost["001", timings.WRITING]
    assert 0.05 <= sim.cpu_s < 0.1 and 0.1 <= wri.cpu_s < 0.15
    assert cost["", timings.OTHER].cpu_s >= 0.02  # outside any section and phase
    assert sum(c.wall_s for c in cost.values()) >= 0.17


def test_runs_in_a_shared_pool_are_charged_where_reported_and_not_again_when_reaped(
    monkeypatch,
):
    children = [0.0]
    monkeypatch.setattr(timings, "_now", lambda: (time.monotonic(), 0.0, children[0]))
    with timings.recording() as t:
        with timings.section("004"), timings.phase(timings.SIMULATION):
            timings.runs(2, 3.0, in_child=True)
        with timings.section("002"), timings.phase(timings.SIMULATION):
            children[0] += 1.0  # a study's own pool, reaped inside its phase: its own
        with timings.phase(timings.WORKERS):
            children[0] += 3.5  # the shared pool reaped: 3 s of it were the runs
    cost = {(s, p): c for s, p, c in t.rows()}
    assert cost["004", timings.SIMULATION].child_cpu_s == 3.0
    assert cost["002", timings.SIMULATION].child_cpu_s == 1.0
    assert cost["", timings.WORKERS].child_cpu_s == pytest.approx(0.5)
    assert t.run_count == {"004": 2} and t.run_cpu_s == {"004": 3.0}


def test_nothing_is_recorded_outside_recording():
    with timings.section("000"), timings.phase(timings.STORE):
        timings.runs(1, 1.0, in_child=True)
    with timings.recording() as t:
        pass
    assert [p for _s, p, _c in t.rows()] == [timings.OTHER]


def test_what_another_process_recorded_is_merged_as_childrens_cpu_and_not_charged_again(
    monkeypatch,
):
    # a study judged in a process of its own: its phases join this recording's rows (CPU as
    # children's), and its CPU is deducted when that process is reaped in the WORKERS phase
    with timings.recording() as other, timings.section("004"), timings.phase(timings.FIGURES):
        spin(0.05)
    children = [0.0]
    monkeypatch.setattr(timings, "_now", lambda: (time.monotonic(), 0.0, children[0]))
    with timings.recording() as t:
        with timings.section("000"), timings.phase(timings.SIMULATION):
            timings.merge(other)
        with timings.phase(timings.WORKERS):
            recorded = sum(c.total_cpu_s for c in other.costs.values())
            children[0] += recorded + 0.25  # and its start-up
    cost = {(s, p): c for s, p, c in t.rows()}
    figures = cost["004", timings.FIGURES]
    assert figures.cpu_s == 0.0 and figures.child_cpu_s >= 0.05 and figures.wall_s > 0
    assert cost["", timings.WORKERS].child_cpu_s == pytest.approx(0.25)
    assert t.elapsed_s > 0
