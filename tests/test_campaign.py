"""Campaign files, matrix expansion, run naming, the resumable local executor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from satcc.campaign import spec
from satcc.campaign import worker as worker_module
from satcc.campaign.execute import ProgressLine, run_campaign
from satcc.campaign.summary import end_of_run, status
from satcc.cli import main
from satcc.store import layout
from tests.campaign_helpers import (
    SMALL_CAMPAIGN,
    store_frames,
    tree_hashes,
    write_campaign,
)
from tests.helpers import requires_sim

pytestmark = requires_sim


# -- key paths and the matrix ------------------------------------------------------------------


def test_key_paths_set_one_entry_every_entry_and_create_missing_tables():
    doc = {"flow": [{"cca": "reno"}, {"cca": "reno"}], "link": [{"a": "x"}]}
    spec.set_key(doc, "flow.*.mss", 1300)
    spec.set_key(doc, "flow[1].cca", "cubic")
    spec.set_key(doc, "flow[0].cc.beta", 0.5)
    spec.set_key(doc, "link[*].loss", 1e-4)
    assert doc["flow"] == [
        {"cca": "reno", "mss": 1300, "cc": {"beta": 0.5}},
        {"cca": "cubic", "mss": 1300},
    ]
    assert doc["link"] == [{"a": "x", "loss": 1e-4}]


def test_key_path_past_the_end_or_malformed_is_an_error():
    with pytest.raises(ValueError, match=r"index below 2 .*found \[2\]"):
        spec.set_key({"flow": [{}, {}]}, "flow[2].cca", "bbr")
    with pytest.raises(ValueError, match="key path"):
        spec.parse_key_path("flow[0]..cca")


def test_column_names_and_numeric_companions():
    assert spec.default_column("flow.*.cca") == "cca"
    assert spec.default_column("link[1].delay") == "link1_delay"
    assert spec.default_column("link[0].model.plan") == "plan"
    assert spec.numeric_companion(["1 ms", "8 ms"]) == ("ms", [1.0, 8.0])
    assert spec.numeric_companion(["09:00", "13:30:00"]) == ("h", [9.0, 13.5])
    assert spec.numeric_companion(["10 MB"]) == ("bytes", [10_000_000.0])
    assert spec.numeric_companion(["bbr"]) is None


def test_expansion_is_the_cross_product_times_seeds_with_stable_distinct_ids(tmp_path):
    c = spec.load(write_campaign(tmp_path))
    runs = spec.expand(c)
    assert len(runs) == 2 * 2 * 2
    assert len({r.run_id for r in runs}) == len(runs)
    assert [r.run_id for r in spec.expand(spec.load(tmp_path / "campaign.toml"))] == [
        r.run_id for r in runs
    ]
    first = runs[0]
    assert first.params == {"cca": "reno", "link1_delay": "5 ms", "link1_delay_ms": 5.0}
    assert first.scenario["flow"][1]["cca"] == "reno"
    assert first.scenario["link"][1]["delay"] == "5 ms"
    # a changed value changes only the ids of the runs it touches
    other = write_campaign(tmp_path, SMALL_CAMPAIGN.replace('"20 ms"', '"30 ms"'), name="b.toml")
    ids = {r.run_id for r in spec.expand(spec.load(other))}
    same = {r.run_id for r in runs if r.params["link1_delay"] == "5 ms"}
    assert same <= ids and not ({r.run_id for r in runs} - same) & ids


def test_every_invalid_point_is_reported_before_anything_runs(tmp_path):
    path = write_campaign(
        tmp_path,
        """
        [campaign]
        scenario = "base.toml"
        [matrix]
        "flow[0].cca" = ["reno", "no-such-cca"]
        "flow[0].mss" = [1300, 10]
    """,
    )
    with pytest.raises(spec.CampaignError) as e:
        spec.expand(spec.load(path))
    text = str(e.value)
    assert "no-such-cca" in text and "flow[0].mss" in text
    # points (reno, 10), (bad, 1300) and (bad, 10) fail: two distinct problems, each once
    # with the axis value that causes it
    assert [where for where, _ in e.value.issues] == [
        "matrix cca = 'no-such-cca'",
        "matrix mss = 10",
    ]


def test_an_axis_that_changes_nothing_is_an_error(tmp_path):
    path = write_campaign(
        tmp_path,
        """
        [campaign]
        scenario = "base.toml"
        [matrix]
        "flow[0].cca" = ["reno", "cubic"]
        "flow[0].sack" = [true]
        dup = { key = "flow[1].rwnd", values = ["6 MiB", "6291456 B"] }
    """,
    )
    with pytest.raises(spec.CampaignError, match="resolves to the same run as point 0"):
        spec.expand(spec.load(path))


def test_cases_axis_sets_several_keys_per_label(tmp_path):
    path = write_campaign(
        tmp_path,
        """
        [campaign]
        scenario = "base.toml"
        seeds = [3, 9]
        [matrix.direction.cases]
        fwd = { "flow[0].from" = "s1", "flow[0].to" = "d" }
        rev = { "flow[0].from" = "d", "flow[0].to" = "s1" }
    """,
    )
    runs = spec.expand(spec.load(path))
    assert [(r.params["direction"], r.seed) for r in runs] == [
        ("fwd", 3),
        ("fwd", 9),
        ("rev", 3),
        ("rev", 9),
    ]
    assert runs[2].scenario["flow"][0]["from"] == "d"
    c = spec.load(path)
    assert c.axes[0].role == "direction"


# -- running -----------------------------------------------------------------------------------


def test_campaign_runs_every_point_and_a_rerun_skips_them(tmp_path):
    c = spec.load(write_campaign(tmp_path))
    out = tmp_path / "out"
    first = run_campaign(c, out, jobs=2, progress=False)
    assert first.count("done") == 8 and first.count("failed") == 0
    index = json.loads((out / layout.INDEX_FILE).read_text())
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(
        r["run_id"] for r in index["runs"]
    )
    before = tree_hashes(out)
    again = run_campaign(spec.load(tmp_path / "campaign.toml"), out, jobs=2, progress=False)
    assert again.count("skipped") == 8 and again.count("done") == 0
    assert tree_hashes(out) == before
    text = end_of_run(again)
    assert "8 already done" in text and "reno" in text and "cubic" in text


def test_a_failing_run_is_recorded_and_does_not_stop_the_others(tmp_path, monkeypatch):
    c = spec.load(write_campaign(tmp_path))
    victim = spec.expand(c)[3].run_id
    real = worker_module._run

    def flaky(s, out_dir):
        if s.run_id == victim:
            raise RuntimeError("injected failure")
        return real(s, out_dir)

    monkeypatch.setattr(worker_module, "_run", flaky)
    out = tmp_path / "out"
    r = run_campaign(c, out, jobs=1, progress=False)
    assert r.count("done") == 7 and r.count("failed") == 1
    err = json.loads((out / "failed" / f"{victim}.json").read_text())["error"]
    assert "injected failure" in err
    text, code = status(out)
    assert code == 1 and victim in text and "injected failure" in text
    assert "injected failure" in end_of_run(r)
    monkeypatch.setattr(worker_module, "_run", real)
    r2 = run_campaign(c, out, jobs=1, progress=False)
    assert r2.count("done") == 1 and r2.count("skipped") == 7
    assert not (out / "failed" / f"{victim}.json").exists()
    assert status(out)[1] == 0


def test_a_half_written_run_is_removed_and_redone(tmp_path):
    c = spec.load(write_campaign(tmp_path))
    ref, out = tmp_path / "ref", tmp_path / "out"
    run_campaign(c, ref, jobs=2, progress=False)
    run_campaign(c, out, jobs=2, progress=False)
    victim = min((out / "runs").iterdir())
    # what an interrupted write leaves: a staging directory with part of the files, no run
    os.rename(victim, victim.parent / f".{victim.name}{layout.STAGING_SUFFIX}")
    (victim.parent / f".{victim.name}{layout.STAGING_SUFFIX}" / "summary.json").unlink()
    text, code = status(out)
    assert code == 1 and "incomplete" in text
    r = run_campaign(c, out, jobs=2, progress=False)
    assert r.count("done") == 1 and len(r.removed_leftovers) == 1
    assert tree_hashes(out) == tree_hashes(ref)


def test_another_campaign_cannot_reuse_a_directory(tmp_path):
    c = spec.load(write_campaign(tmp_path))
    out = tmp_path / "out"
    run_campaign(c, out, jobs=1, progress=False)
    other = write_campaign(
        tmp_path, SMALL_CAMPAIGN.replace('name = "small"', 'name = "other"'), name="other.toml"
    )
    with pytest.raises(Exception, match="holds campaign 'small'"):
        run_campaign(spec.load(other), out, jobs=1, progress=False)


def test_progress_line_shows_counts_rate_and_eta():
    t = [0.0]
    bar = ProgressLine("c", 10, already=2, enabled=False, clock=lambda: t[0])
    assert bar.text().endswith("2/10 · ETA ?")
    t[0] = 4.0
    bar.advance(ok=True)
    bar.advance(ok=False)
    text = bar.text()
    assert "4/10" in text and "1 failed" in text and "0.50 runs/s" in text and "ETA 12 s" in text


def test_cli_campaign_status_and_dry_run(tmp_path, capsys):
    path = write_campaign(tmp_path)
    out = tmp_path / "o"
    assert main(["campaign", str(path), "--out", str(out), "--dry-run"]) == 0
    assert "8 runs" in capsys.readouterr().out and not out.exists()
    assert main(["campaign", str(path), "--out", str(out), "--jobs", "2", "--no-progress"]) == 0
    assert "8 run now" in capsys.readouterr().out
    assert main(["campaign", "status", str(out)]) == 0
    assert "8 done" in capsys.readouterr().out


# -- SIGKILL and resume ------------------------------------------------------------------------

KILL_CAMPAIGN = SMALL_CAMPAIGN.replace("repetitions = 2", "repetitions = 4").replace(
    '["5 ms", "20 ms"]', '["5 ms", "10 ms", "20 ms"]'
)


def test_sigkill_then_resume_gives_the_store_of_an_uninterrupted_run(tmp_path):
    path = write_campaign(tmp_path, KILL_CAMPAIGN)
    assert len(spec.expand(spec.load(path))) == 24
    ref = tmp_path / "ref"
    run_campaign(spec.load(path), ref, jobs=2, progress=False)

    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "satcc.cli",
        "campaign",
        str(path),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            runs = out / "runs"
            if runs.is_dir() and sum(1 for p in runs.iterdir() if not p.name.startswith(".")) >= 4:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the campaign finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # kill -9 of the campaign and its pool workers
    finally:
        proc.wait(timeout=30)
    done_before = {p.name for p in (out / "runs").iterdir() if not p.name.startswith(".")}
    assert 4 <= len(done_before) < 24
    r = run_campaign(spec.load(path), out, jobs=2, progress=False)
    assert r.count("skipped") == len(done_before)
    assert r.count("done") == 24 - len(done_before) and r.count("failed") == 0
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")]
    assert tree_hashes(out) == tree_hashes(ref)
    assert (out / layout.INDEX_FILE).read_bytes() == (ref / layout.INDEX_FILE).read_bytes()
    for a, b in zip(store_frames(out), store_frames(ref), strict=True):
        pd.testing.assert_frame_equal(a, b)


QUICK_CAMPAIGN = (
    SMALL_CAMPAIGN
    + """
[matrix.delay]
key = "link[0].delay"
values = ["1 ms", "2 ms"]
role = "rtt"

[quick.campaign]
repetitions = 1
description = "reduced"

[quick.matrix]
"flow.*.cca" = ["reno"]
"scenario.duration" = ["1 s"]

[quick.matrix.delay]
values = ["1 ms"]
"""
)


def test_a_quick_table_lays_the_reduced_design_over_the_file(tmp_path):
    path = write_campaign(tmp_path, QUICK_CAMPAIGN)
    full, quick = spec.load(path), spec.load(path, quick=True)
    assert full.name == "small" and quick.name == "small-quick"
    assert quick.description == "reduced" and quick.seeds == [quick.seeds[0]]
    assert len(spec.expand(full)) == 2 * 2 * 2 * 2 and len(spec.expand(quick)) == 2
    # replaced in place, added among the plain axes (before the named ones), a named axis's
    # values replaced and its key and role kept
    assert [a.name for a in quick.axes] == ["cca", "link1_delay", "duration", "delay"]
    delay = quick.axes[-1]
    assert delay.keys == ["link[0].delay"] and delay.role == "rtt" and delay.labels == ["1 ms"]
    # NAME-quick.toml beside NAME.toml names the same variant
    alias = spec.load(tmp_path / "campaign-quick.toml")
    assert [s.run_id for s in spec.expand(alias)] == [s.run_id for s in spec.expand(quick)]
    assert alias.source == f"{path} [quick]"


def test_quick_without_a_quick_table_or_with_a_wrong_one_is_one_line_naming_it(tmp_path):
    path = write_campaign(tmp_path)
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path, quick=True)
    assert str(e.value) == (
        f"{path}: quick: expected a [quick] table (what --quick changes), found none"
    )
    bad = write_campaign(tmp_path, SMALL_CAMPAIGN + '\n[quick]\nscenario = "x.toml"\n', "b.toml")
    with pytest.raises(spec.CampaignError) as e:
        spec.load(bad)  # checked whether or not --quick is given
    assert str(e.value) == (
        f"{bad}: quick.scenario: expected only [quick.campaign] and [quick.matrix] here"
    )


def test_a_kernel_table_lays_its_design_over_the_quick_one(tmp_path):
    text = (
        QUICK_CAMPAIGN
        + '\n[kernel.campaign]\nrepetitions = 3\n[kernel.matrix]\n"scenario.duration" = ["2 s"]\n'
    )
    path = write_campaign(tmp_path, text)
    quick, kernel = spec.load(path, quick=True), spec.load(path, quick=True, kernel=True)
    assert kernel.name == "small-quick-kernel" and kernel.description == "reduced"
    assert len(kernel.seeds) == 3 and len(quick.seeds) == 1
    assert [a.name for a in kernel.axes] == [a.name for a in quick.axes]
    assert kernel.axes[2].labels == ["2 s"] and quick.axes[2].labels == ["1 s"]
    assert kernel.source == f"{path} [quick] [kernel]"
    # the full and quick designs leave [kernel] aside
    assert [r.run_id for r in spec.expand(spec.load(path))] == [
        r.run_id
        for r in spec.expand(spec.load(write_campaign(tmp_path, QUICK_CAMPAIGN, name="q.toml")))
    ]
    with pytest.raises(spec.CampaignError) as e:
        spec.load(write_campaign(tmp_path, QUICK_CAMPAIGN, name="n.toml"), quick=True, kernel=True)
    assert "kernel: expected a [kernel] table" in str(e.value)
    bad = write_campaign(tmp_path, QUICK_CAMPAIGN + "\n[kernel]\nrepetitions = 3\n", name="b.toml")
    with pytest.raises(spec.CampaignError) as e:
        spec.load(bad)  # its shape checked whether or not it is used
    assert str(e.value) == (
        f"{bad}: kernel.repetitions: expected only [kernel.campaign] and [kernel.matrix] here"
    )


def test_every_ready_campaign_file_expands_into_valid_runs():
    files = sorted((Path(__file__).resolve().parent.parent / "campaigns").glob("*.toml"))
    assert len(files) >= 10
    for f in files:
        runs = spec.expand(spec.load(f))
        assert runs, f
        quick = spec.expand(spec.load(f, quick=True))  # every study campaign has a quick design
        # small, yet 5 seeds where a paired claim is judged (the sign test's least, claims.py)
        # and every point of a swept unknown (claims.across): study000-mss's quick design is
        # 4 MSS x 2 CCAs x 2 directions x 3 uplink capacities x 5 = 240 runs (~0.25 CPU s each)
        assert 0 < len(quick) <= 240 and len(quick) < len(runs), f


def test_a_run_done_in_another_campaign_directory_is_copied_not_simulated(tmp_path, monkeypatch):
    # two campaigns sharing half their runs (cca reno at both delays): the second, given the
    # first's directory to reuse, simulates only its own runs and its copies are byte-identical
    first = spec.load(write_campaign(tmp_path))
    other = SMALL_CAMPAIGN.replace('name = "small"', 'name = "other"').replace(
        '["reno", "cubic"]', '["reno", "bbr"]'
    )
    second = spec.load(write_campaign(tmp_path, other, name="other.toml"))
    a, b, ref = tmp_path / "a", tmp_path / "b", tmp_path / "ref"
    run_campaign(first, a, jobs=1, progress=False)
    run_campaign(second, ref, jobs=1, progress=False)  # alone: every run simulated
    shared = {s.run_id for s in spec.expand(first)} & {s.run_id for s in spec.expand(second)}
    assert len(shared) == 4
    simulated = []
    real = worker_module._run

    def counting(s, out_dir):
        simulated.append(s.run_id)
        return real(s, out_dir)

    monkeypatch.setattr(worker_module, "_run", counting)
    r = run_campaign(second, b, jobs=1, progress=False, reuse=[a])
    assert r.count("done") == 8 and r.copied == 4
    assert sorted(simulated) == sorted({s.run_id for s in spec.expand(second)} - shared)
    # the same files, byte for byte, as the campaign run alone; run.json is this campaign's
    assert tree_hashes(b) == tree_hashes(ref)
    for rid in shared:
        assert json.loads((b / "runs" / rid / "run.json").read_text())["campaign"] == "other"
    assert all(f.equals(g) for f, g in zip(store_frames(b), store_frames(ref), strict=True))


def test_a_local_pool_holds_a_window_of_runs_not_the_whole_plan(monkeypatch):
    """A campaign's results wait in their futures until the writer takes them: submitting the
    whole plan at once held every unwritten result (memory growing with the campaign's runs);
    the pool is given a window of `IN_FLIGHT_PER_JOB` runs per job, topped up as each is
    taken, and every run still comes back once."""
    from concurrent.futures import Future

    from satcc.campaign import execute as ex
    from satcc.store.runloop import Outcome

    class Pool:  # runs a submitted call at once; counts what is submitted and not yet taken
        def __init__(self):
            self.submitted = 0

        def submit(self, fn, s):
            self.submitted += 1
            fut = Future()
            fut.set_result(Outcome(s.run_id, True))
            return fut

    pool = Pool()
    monkeypatch.setattr(ex, "_SHARED", {2: pool})
    specs = [spec.RunSpec(f"{i:016x}", "sim", i, i, 0, {}, {}, "x.toml") for i in range(50)]
    taken, most_ahead = [], 0
    for o in ex._local(specs, 2):
        taken.append(o.run_id)
        most_ahead = max(most_ahead, pool.submitted - len(taken))
    assert sorted(taken) == sorted(s.run_id for s in specs)
    assert most_ahead <= 8  # 2 jobs x IN_FLIGHT_PER_JOB (4), not the plan's 50


class _DonePool:
    """A pool whose submitted call is done at once (`_local` tests): records the order runs
    were submitted in."""

    def __init__(self):
        self.order: list[str] = []

    def submit(self, fn, s):
        from concurrent.futures import Future

        from satcc.store.runloop import Outcome

        self.order.append(s.run_id)
        fut = Future()
        fut.set_result(Outcome(s.run_id, True))
        return fut


def _specs(prefix: str, n: int) -> list:
    return [spec.RunSpec(f"{prefix}{i:015x}", "sim", i, i, 0, {}, {}, "x.toml") for i in range(n)]


def test_a_shared_pool_starts_the_next_campaigns_runs_while_a_campaigns_last_are_in_flight(
    monkeypatch,
):
    """`ahead`: once a campaign has submitted its last run, the window's room goes to the
    runs of the campaigns to come (the workers would otherwise idle at each campaign's end);
    their campaign takes those futures instead of submitting them again, every run comes
    back once, to its own campaign, and the window of 2 x IN_FLIGHT_PER_JOB holds."""
    from satcc.campaign import execute as ex

    pool = _DonePool()
    monkeypatch.setattr(ex, "_SHARED", {2: pool})
    a, b, c = _specs("a", 20), _specs("b", 6), _specs("c", 12)
    calls = []

    def plan():  # the campaigns to come; a's first run planned again (its campaign copies it)
        calls.append(len(pool.order))
        return [*a, *b, a[0], *c]

    got: dict[str, list[str]] = {}
    taken, most_ahead = 0, 0
    with ex.ahead(plan):
        for name, specs in (("a", a), ("b", b), ("c", c)):
            got[name] = []
            for o in ex._local(specs, 2):
                got[name].append(o.run_id)
                taken += 1
                most_ahead = max(most_ahead, len(pool.order) - taken)
            if name == "a":
                during_a = [r for r in pool.order if not r.startswith("a")]
        assert not ex._STARTED  # every run started ahead was taken by its campaign
    assert calls == [20]  # planned once, when a had submitted its last run
    for name, specs in (("a", a), ("b", b), ("c", c)):
        assert sorted(got[name]) == sorted(s.run_id for s in specs), name
    assert sorted(pool.order) == sorted(s.run_id for s in (*a, *b, *c))  # each once
    assert during_a == [s.run_id for s in b] + [c[0].run_id, c[1].run_id]
    assert most_ahead <= 8


def test_without_a_plan_ahead_a_campaign_runs_alone(monkeypatch):
    # a plan that fails (its campaign reports the error when it runs), or none (`satcc
    # campaign`): the campaign runs its own runs only
    from satcc.campaign import execute as ex

    pool = _DonePool()
    monkeypatch.setattr(ex, "_SHARED", {2: pool})
    a = _specs("a", 12)
    with ex.ahead(lambda: 1 / 0):
        assert sorted(o.run_id for o in ex._local(a, 2)) == sorted(s.run_id for s in a)
    assert sorted(o.run_id for o in ex._local(a, 2)) == sorted(s.run_id for s in a)
    assert pool.order == [s.run_id for s in a] * 2


@requires_sim
def test_a_pool_worker_runs_a_spec_without_the_campaign_files_pydantic_models(tmp_path):
    # a pool worker (spawned: it imports what it runs) gets a RunSpec and runs it: the
    # campaign file's models (pydantic and satcc.campaign.schema, ~0.3 CPU s to import, twice
    # per `--jobs 2` campaign or reproduce) are the planner's, not the worker's
    import pickle

    specs = spec.expand(spec.load(write_campaign(tmp_path)))
    (tmp_path / "spec.pkl").write_bytes(pickle.dumps(specs[0]))
    child = (
        "import pickle, sys\n"
        "from satcc.campaign.worker import execute\n"
        f"o = execute(pickle.loads(open({str(tmp_path / 'spec.pkl')!r}, 'rb').read()))\n"
        "assert o.ok, o.error\n"
        "print(sorted(m for m in ('pydantic', 'satcc.campaign.schema') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_an_interrupted_reproduce_stops_the_shared_pool_instead_of_draining_its_queue():
    # `satcc reproduce` shares one pool (sharing_workers); study 002's design submits all its
    # runs at once. Ctrl-C or SIGTERM there: the queued runs are dropped and the workers
    # stopped, not run to the end while the command waits (it printed "terminated" and kept
    # two workers busy for minutes)
    from satcc.campaign import execute as E

    with (
        pytest.raises(KeyboardInterrupt),
        E.sharing_workers(),
        E.worker_pool(2) as (pool, shared),
    ):
        assert shared
        futures = [pool.submit(time.sleep, 3) for _ in range(8)]
        futures[0].result()  # the workers are running: 6 runs queued, 1 in flight
        procs = list(pool._processes.values())
        interrupted = time.monotonic()
        raise KeyboardInterrupt
    assert time.monotonic() - interrupted < 5  # draining: 3 more rounds of 3 s
    assert procs and not any(p.is_alive() for p in procs)


def test_the_plans_longest_runs_start_first_the_rest_in_their_campaigns_order(monkeypatch):
    """`ahead`'s queue (`longest_first`): a run above LONG_RUN_SHARE of one worker's share of
    the plan's cost (the quick designs' study003-long, ~15 CPU s of ~60 a worker) starts
    before the others, at most one per job, longest first; it is still taken and written by
    its own campaign when that comes. A plan without such runs keeps its order."""
    from satcc.campaign import execute as ex

    def runs(prefix, costs):
        return [
            spec.RunSpec(f"{prefix}{i:015x}", "sim", i, i, 0, {}, {}, "x.toml", cost=c)
            for i, c in enumerate(costs)
        ]

    a, b, c = runs("a", [1.0] * 20), runs("b", [30.0, 1.0, 40.0]), runs("c", [1.0] * 10)
    plan = [*a, *b, *c]
    order = [s.run_id for s in ex.longest_first(plan, 2)]
    assert order[:2] == [b[2].run_id, b[0].run_id]  # 40 and 30 of 101 / 2 jobs
    assert order[2:] == [s.run_id for s in plan if s not in (b[0], b[2])]
    assert [s.run_id for s in ex.longest_first(plan, 1)] == [s.run_id for s in plan]
    even = runs("e", [1.0] * 30)
    assert ex.longest_first(even, 2) == even
    many = runs("m", [50.0, 60.0, 70.0, *[1.0] * 10])  # at most one per job moves
    assert [s.run_id for s in ex.longest_first(many, 2)] == [
        many[2].run_id,
        many[1].run_id,
        many[0].run_id,
        *(s.run_id for s in many[3:]),
    ]

    pool = _DonePool()
    monkeypatch.setattr(ex, "_SHARED", {2: pool})
    first = runs("f", [1.0] * 12)
    got: dict[str, list[str]] = {}
    with ex.ahead(lambda: plan):
        for name, specs in (("f", first), ("a", a), ("b", b), ("c", c)):
            got[name] = [o.run_id for o in ex._local(specs, 2)]
        assert not ex._STARTED
    for name, specs in (("f", first), ("a", a), ("b", b), ("c", c)):
        assert sorted(got[name]) == sorted(s.run_id for s in specs), name
    # submitted while f's last runs were in flight: b's two long runs, then a's in order
    assert pool.order[12:16] == [b[2].run_id, b[0].run_id, a[0].run_id, a[1].run_id]
    assert len(pool.order) == len(set(pool.order)) == 12 + 33


def _worker_state(_arg: object = None) -> tuple[int, bool, object]:
    """In a pool worker: its pid, whether pandas is imported, its timings recording."""
    from satcc import timings

    return os.getpid(), "pandas" in sys.modules, timings._ACTIVE


@pytest.mark.skipif(sys.platform != "linux", reason="fork: Linux")
def test_the_shared_pool_is_forked_with_the_judging_process_before_either_pools_thread():
    """`fork_shared_workers` (`reproduce`): the shared pool's workers start as copies of this
    process (pandas already imported: a spawned worker imported it at its first study 002 run,
    ~0.45 CPU s), forked with the other fork pool's process before either pool starts its
    thread (CPython asserts no fork after a pool's own thread); they do not record this
    process's timings; a pool already there, or one job, is left as it is."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from satcc import timings
    from satcc.campaign import execute as ex

    assert not ex.fork_shared_workers(2)  # outside `sharing_workers`: nothing to share
    with timings.recording(), ex.sharing_workers():
        other = ProcessPoolExecutor(1, mp_context=get_context("fork"))
        try:
            assert ex.fork_shared_workers(2, then=other)
            pool = ex._SHARED[2]
            assert len(pool._processes) == 2 and len(other._processes) == 1
            assert pool._executor_manager_thread is not None  # started after every fork
            assert other._executor_manager_thread is None
            states = [pool.submit(_worker_state).result() for _ in range(6)]
            assert {pid for pid, _p, _t in states} <= set(pool._processes)
            assert all(pandas and active is None for _pid, pandas, active in states)
            assert other.submit(_worker_state).result()[0] in other._processes
            assert not ex.fork_shared_workers(2)  # one already there
            assert not ex.fork_shared_workers(1)
        finally:
            other.shutdown()
    assert ex._SHARED is None
