"""Sweeps that survive (docs/reliability.md "Campaign directories"): a Dask worker killed with a
run in flight, `satcc campaign` killed with SIGKILL at random moments and resumed, and a second
writer on the same store. Each ends with the store compared, file by file, with the store of one
uninterrupted run of the same campaign (the lock file and DuckDB's catalog cache aside).
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from satcc.store import layout
from tests.campaign_helpers import holding_lock
from tests.helpers import requires_sim

pytestmark = requires_sim

SATCC = [sys.executable, "-c", "import sys; from satcc.cli import main; sys.exit(main())"]
DASK = str(Path(sys.executable).parent / "dask")

# One flow long enough (about a second of CPU per run) that a run is caught in flight.
LONG_BASE = """\
[scenario]
name = "sweep"
duration = "60 s"
seed = 1

[[link]]
a = "s"
b = "d"
rate = "1 Gbit/s"
delay = "10 ms"

[[flow]]
from = "s"
to = "d"
cca = "cubic"
"""

# Short runs (a tenth of a second each): a kill lands anywhere in planning, running or writing.
SHORT_BASE = LONG_BASE.replace('duration = "60 s"', 'duration = "3 s"').replace(
    'rate = "1 Gbit/s"', 'rate = "50 Mbit/s"'
)


def _campaign(tmp: Path, base: str, repetitions: int, name: str = "sweep") -> Path:
    (tmp / "base.toml").write_text(base, encoding="utf-8")
    c = tmp / "c.toml"
    c.write_text(
        f'[campaign]\nname = "{name}"\nscenario = "base.toml"\nrepetitions = {repetitions}\n\n'
        '[matrix]\n"flow.*.cca" = ["cubic", "reno"]\n',
        encoding="utf-8",
    )
    return c


def store_files(d: Path) -> dict[str, str]:
    """sha256 of every file of a store by relative path, but the lock file (the pid of the last
    writer) and DuckDB's catalog (a cache of the views, rebuilt when the runs change; it records
    when it was built), as bench/sim/golden.sh leaves them out."""
    return {
        str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(d.rglob("*"))
        if p.is_file() and p.name != layout.LOCK_FILE and not p.name.startswith("catalog.duckdb")
    }


def _run(cmd: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _reference(tmp: Path, c: Path) -> dict[str, str]:
    ref = tmp / "reference"
    done = _run([*SATCC, "campaign", str(c), "--out", str(ref), "--jobs", "2", "--no-progress"])
    assert done.returncode == 0, done.stderr
    return store_files(ref)


# -- a Dask worker dies with a run in flight ---------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _executing(dask_worker) -> tuple[int, list[str]]:  # runs on a worker (client.run)
    import os

    return os.getpid(), [str(ts.key) for ts in dask_worker.state.executing]


_executing.__module__ = "__main__"  # cloudpickle sends it by value: workers have no tests/


def test_a_dask_worker_killed_mid_run_the_run_is_redone_and_the_store_is_identical(tmp_path):
    """Scheduler and workers as separate processes, started as docs/campaigns.md starts them;
    a worker executing a satcc run gets SIGKILL. The scheduler gives the run to a worker again,
    the campaign ends with every run done and none failed, and its directory is byte for byte
    the directory of an uninterrupted campaign."""
    distributed = pytest.importorskip("distributed")
    c = _campaign(tmp_path, LONG_BASE, repetitions=2)
    want = _reference(tmp_path, c)
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    procs = [
        subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    ]
    out = tmp_path / "dask"
    try:
        time.sleep(1.0)
        procs.append(
            subprocess.Popen(
                [DASK, "worker", address, "--host", "127.0.0.1", "--nworkers", "2"]
                + ["--nthreads", "1", "--no-dashboard"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
        with distributed.Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
            campaign = subprocess.Popen(
                [*SATCC, "campaign", str(c), "--out", str(out), "--cluster", address]
                + ["--no-progress"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            killed = None
            deadline = time.monotonic() + 300
            while killed is None and campaign.poll() is None and time.monotonic() < deadline:
                for pid, keys in client.run(_executing).values():
                    runs = [k for k in keys if "satcc-run-" in k]
                    if runs:
                        os.kill(pid, signal.SIGKILL)
                        killed = runs[0]
                        break
                else:
                    time.sleep(0.05)
            assert killed is not None, "no satcc run was caught executing on a worker"
            stdout, stderr = campaign.communicate(timeout=600)
    finally:
        for p in procs:  # the scheduler, and the nanny that started the workers
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    assert campaign.returncode == 0, stderr + stdout
    run_id = killed.removeprefix("satcc-run-")
    assert (out / "runs" / run_id / "run.json").is_file(), "the killed worker's run was not redone"
    assert not (out / "failed").exists() or not list((out / "failed").iterdir())
    assert store_files(out) == want


# -- SIGKILL at random moments -----------------------------------------------------------------


def _kill_and_resume(tmp_path: Path, kills: int, seed: int) -> None:
    c = _campaign(tmp_path, SHORT_BASE, repetitions=3)
    t0 = time.monotonic()
    want = _reference(tmp_path, c)
    span = time.monotonic() - t0  # an uninterrupted campaign's wall time, start to end
    rng = random.Random(seed)
    out = tmp_path / "killed"
    cmd = [*SATCC, "campaign", str(c), "--out", str(out), "--jobs", "2", "--no-progress"]
    moments = []
    for _ in range(kills):
        at = rng.uniform(0.0, span)
        moments.append(round(at, 2))
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout=at)
        except subprocess.TimeoutExpired:
            p.kill()  # SIGKILL: no handler, no clean-up; the pool's workers die with it
            p.wait()
    done = _run(cmd)
    assert done.returncode == 0, f"kills at {moments} s: {done.stderr}"
    assert store_files(out) == want, f"kills at {moments} s (seed {seed})"


def test_a_campaign_killed_at_5_random_moments_resumes_to_the_same_store(tmp_path):
    _kill_and_resume(tmp_path, kills=5, seed=20261129)


@pytest.mark.slow
def test_a_campaign_killed_at_20_random_moments_resumes_to_the_same_store(tmp_path):
    _kill_and_resume(tmp_path, kills=20, seed=42)


# -- one writer per store ----------------------------------------------------------------------


def test_a_second_campaign_on_the_same_store_is_refused_while_the_first_runs(tmp_path):
    c = _campaign(tmp_path, LONG_BASE, repetitions=2)
    out = tmp_path / "out"
    cmd = [*SATCC, "campaign", str(c), "--out", str(out), "--jobs", "1", "--no-progress"]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not layout.is_locked(out) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert layout.is_locked(out), "the first campaign never took the lock"
        second = _run(cmd, timeout=120)
        assert second.returncode == 2, second.stderr
        assert second.stderr.strip() == (
            f"satcc: error: {out}: another satcc campaign (pid {first.pid}) is writing to this "
            "directory; wait for it to finish or choose another --out"
        )
    finally:
        first.kill()
        first.communicate()


def test_a_fidelity_suite_on_a_store_another_writer_holds_is_refused(tmp_path):
    """`satcc fidelity` writes its store through the same loop, so it takes the same lock: a
    suite resumed into a directory another process is writing is refused, and writes nothing."""
    out = tmp_path / "fid"
    cmd = [*SATCC, "fidelity", "--quick", "--engine", "sim", "--runs", "1", "--out", str(out)]
    first = _run(cmd, timeout=300)
    assert first.returncode == 0, first.stderr
    before = store_files(out)
    with holding_lock(out) as holder:
        second = _run(cmd, timeout=300)
        assert second.returncode == 2, second.stderr
        assert second.stderr.strip() == (
            f"satcc: error: {out}: another satcc campaign (pid {holder.pid}) is writing to this "
            "directory; wait for it to finish or choose another --out"
        )
        assert store_files(out) == before
