"""satcc.store.runloop: the one loop of campaign, fidelity and field; a run executed here
(`Writer.attempt`, what the three share for a run with raw files) fails, succeeds or is
interrupted with nothing left behind."""

from __future__ import annotations

import pytest

from satcc.errors import SatccError
from satcc.store import layout, runloop


def _writer(tmp_path) -> runloop.Writer:
    (tmp_path / layout.RUNS_DIR).mkdir()
    return runloop.Writer(tmp_path, set(), [])


def _left(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / layout.RUNS_DIR).iterdir())


def test_a_run_that_fails_is_a_failure_with_its_reason_and_its_raw_files_are_removed(tmp_path):
    w = _writer(tmp_path)

    def body(raw):
        (raw / "capture.pcap").write_bytes(b"x")
        raise SatccError("the link went down")

    o = w.attempt("r1", body, failures=(SatccError,))
    assert not o.ok and o.error == "the link went down" and o.raw_dir is None
    assert _left(tmp_path) == []


def test_a_run_that_succeeds_keeps_its_raw_files_for_the_run_directory(tmp_path):
    w = _writer(tmp_path)

    def body(raw):
        (raw / "field").mkdir()
        return runloop.Outcome("r2", True, raw_name="field")

    o = w.attempt("r2", body)
    assert o.ok and o.raw_dir is not None and (o.raw_dir / "field").is_dir()
    assert o.raw_dir.parent == tmp_path / layout.RUNS_DIR and o.wall_s > 0


@pytest.mark.parametrize("exc", [KeyboardInterrupt, ValueError])
def test_an_interrupt_or_an_exception_not_listed_propagates_and_leaves_nothing(tmp_path, exc):
    w = _writer(tmp_path)

    def body(raw):
        (raw / "half").write_bytes(b"x")
        raise exc()

    with pytest.raises(exc):
        w.attempt("r3", body, failures=(SatccError,))
    assert _left(tmp_path) == []


def test_writing_a_run_does_not_list_the_runs_already_written(write_toml, tmp_path, monkeypatch):
    """A campaign writes each run without listing runs/ (a listing per run is quadratic in
    the campaign's runs); the run directory holds the same files as a result written alone."""
    from pathlib import Path

    from tests.test_results import _files, _result

    r = _result(write_toml)
    runs = tmp_path / "store" / layout.RUNS_DIR
    runs.mkdir(parents=True)
    for k in range(3):
        (runs / f"earlier-{k}").mkdir()
    listed: list[Path] = []
    real_iterdir, real_scandir = Path.iterdir, layout.os.scandir

    def iterdir(self):
        listed.append(self)
        return real_iterdir(self)

    def scandir(path="."):
        listed.append(Path(path))
        return real_scandir(path)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(layout.os, "scandir", scandir)
    final = layout.write_run(tmp_path / "store", {"run_id": "r1"}, r, {})
    monkeypatch.undo()
    assert runs not in listed
    alone = r.write(tmp_path / "alone")
    assert {n: b for n, b in _files(final).items() if n != layout.RUN_FILE} == _files(alone)
    assert sorted(p.name for p in runs.iterdir()) == ["earlier-0", "earlier-1", "earlier-2", "r1"]


# a loop run from the API (no CLI handler): its one run writes a raw file, then waits
SIGTERM_CHILD = """
import sys, time
from pathlib import Path
from satcc.errors import Terminated
from satcc.store import layout, runloop

out = Path(sys.argv[1])

def body(raw):
    (raw / "capture.pcap").write_bytes(b"x")
    time.sleep(60)

def execute(todo):
    for rid in todo:
        yield store.attempt(rid, body)

loop = runloop.Loop[str](run_id=lambda r: r, spec_doc=lambda r: {"run_id": r})
try:
    index = {"index_schema_version": layout.INDEX_SCHEMA_VERSION, "name": "t", "runs": []}
    with runloop.writing(out, index, "campaign", lambda old: True) as store:
        loop.run(store, ["r1"], execute)
except Terminated as e:
    print("terminated", e.signum)
    sys.exit(143)
"""


def test_sigterm_stops_a_loop_run_from_the_api_as_ctrl_c_does(tmp_path):
    """The loop takes SIGTERM as Ctrl-C whoever runs it: the run in flight is abandoned and
    its scratch directory removed. Before, only the CLI (and `satcc field` for itself) caught
    SIGTERM: a campaign or suite run from the API died at once, leaving its scratch files."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "store"
    child = subprocess.Popen(
        [sys.executable, "-c", SIGTERM_CHILD, str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((out / layout.RUNS_DIR).glob("*/capture.pcap")):
        time.sleep(0.05)
    assert list((out / layout.RUNS_DIR).glob("*/capture.pcap")), "the run never started"
    child.send_signal(signal.SIGTERM)
    stdout, stderr = child.communicate(timeout=30)
    assert (child.returncode, stdout.strip()) == (143, f"terminated {int(signal.SIGTERM)}"), stderr
    assert _left(out) == []


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_sigterm_swallowed_where_it_landed_is_raised_at_the_next_check():
    """A SIGTERM landing where Python swallows exceptions (an at-fork callback while the
    emulator spawns `ss`: "Exception ignored in: <function _releaseLock>", then the run went on
    and exited 0) is raised again by the loop's next check (satcc.emu.runner's timeline)."""
    import signal

    from satcc import errors

    class Lands:
        def __del__(self):
            errors.raise_terminated(signal.SIGTERM, None)  # the handler, where it is swallowed

    Lands()  # nothing propagates from __del__
    with pytest.raises(errors.Terminated) as e:
        errors.raise_if_terminated()
    assert e.value.signum == signal.SIGTERM
    errors.raise_if_terminated()  # raised once: the next check passes

    # the run loop checks after each recorded run: the run in hand is kept, the next not run
    class Store:
        def __init__(self):
            self.done: set[str] = set()
            self.recorded: list[str] = []

        def record(self, spec, doc, o):
            self.recorded.append(o.run_id)
            return runloop.Report(o.run_id, "done")

    def execute(todo):
        for run_id in todo:
            if run_id == "r2":
                Lands()  # the signal lands while r2 runs, swallowed
            yield runloop.Outcome(run_id, True)

    store = Store()
    loop = runloop.Loop(run_id=lambda p: p, spec_doc=lambda p: {})
    with pytest.raises(errors.Terminated):
        loop.run(store, ["r1", "r2", "r3"], execute)
    assert store.recorded == ["r1", "r2"]
