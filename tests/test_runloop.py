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
