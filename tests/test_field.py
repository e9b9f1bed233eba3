"""`satcc field` without a network: plans, order, the Starlink clock, clock-sync readings,
iperf3 error wording, the store index, the shipped plans. The real loop is
tests/test_field_kernel.py (root)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from satcc.errors import UserError
from satcc.field import clock, shipped_plans
from satcc.field import plan as fp
from satcc.field.measure import classify, iperf3_cmd

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: PLW1510 - the tests read the return code
        [sys.executable, "-c", "from satcc.cli import main; raise SystemExit(main())", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_fixed_order_is_cca_then_direction_and_the_same_in_every_round():
    p = fp.validate(fp.FieldPlan(ccas=["bbr", "cubic"], directions=["up", "down"], rounds=2), "t")
    items = fp.expand(p)
    first = [(i.cca, i.direction) for i in items if i.round == 0]
    second = [(i.cca, i.direction) for i in items if i.round == 1]
    assert first == [("bbr", "up"), ("bbr", "down"), ("cubic", "up"), ("cubic", "down")]
    assert first == second
    assert len({i.run_id for i in items}) == len(items)
    assert [i.point for i in items[:4]] == [i.point for i in items[4:]]


def test_shuffled_order_is_a_seeded_permutation_per_round():
    kw = {"ccas": ["a1", "b2", "c3", "d4", "e5"], "directions": ["up", "down"], "rounds": 3}
    p = fp.validate(fp.FieldPlan(order="shuffled", seed=7, **kw), "t")
    a, b = fp.expand(p), fp.expand(p)
    assert [i.run_id for i in a] == [i.run_id for i in b]  # same plan, same order
    rounds = [[(i.cca, i.direction) for i in a if i.round == r] for r in range(3)]
    fixed = [(i.cca, i.direction) for i in fp.expand(fp.FieldPlan(**kw)) if i.round == 0]
    assert all(sorted(r) == sorted(fixed) for r in rounds)  # a permutation of every combination
    assert len({tuple(r) for r in rounds}) > 1  # not the same permutation each round
    other = fp.expand(fp.validate(fp.FieldPlan(order="shuffled", seed=8, **kw), "t"))
    assert [i.run_id for i in other] != [i.run_id for i in a]


def test_udp_and_mss_runs_and_repetitions_expand():
    p = fp.validate(
        fp.FieldPlan(ccas=["cubic"], mss=[1200, 1300], udp=["10 Mbit/s"], repetitions=2), "t"
    )
    items = fp.expand(p)
    assert [(i.kind, i.mss, i.udp_rate, i.repetition) for i in items] == [
        ("tcp", 1200, None, 0),
        ("tcp", 1200, None, 1),
        ("tcp", 1300, None, 0),
        ("tcp", 1300, None, 1),
        ("udp", None, "10 Mbit/s", 0),
        ("udp", None, "10 Mbit/s", 1),
    ]
    assert items[-1].cca == "udp"
    cmd = iperf3_cmd(p, items[-1], "192.0.2.1", 5201)
    assert cmd[cmd.index("-b") + 1] == "10000000" and "-u" in cmd and "-C" not in cmd
    down = fp.RunItem("x", 0, 0, 0, 0, "tcp", "bbr", "down", 1300, None)
    cmd = iperf3_cmd(p, down, "192.0.2.1", 5202)
    assert cmd[-1] == "-R" and cmd[cmd.index("-C") + 1] == "bbr" and "-M" in cmd


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ('[field]\nccas = "cubic"\n', "field.toml: ccas: expected a list"),
        ('[field]\ndirections = ["sideways"]\n', 'directions: expected a list of "up" / "down"'),
        ('[field]\nduration = "fast"\n', "duration: expected a duration"),
        ('[field]\norder = "random"\n', 'order: expected "fixed" or "shuffled"'),
        ('[field]\nalign_offset = "20 s"\n', "align_offset: expected a duration below 15 s"),
        ('[field]\nat = ["25:00"]\n', "at: expected a list of UTC times"),
        ('[field]\nat = ["09:00"]\ninterval = "1 h"\n', "either `at` or `interval`"),
        ("[field]\nspeed = 1\n", "field.speed: unknown key"),
        ("[scenario]\n", "scenario: unknown table"),
        ('[field]\nserver = "h:99999"\n', "server: expected a port"),
        ('[field]\nudp = ["fast"]\n', "udp: expected a list of rates"),
    ],
)
def test_a_bad_plan_names_the_file_and_the_key(tmp_path, text, expect):
    path = tmp_path / "field.toml"
    path.write_text(text)
    with pytest.raises(UserError) as e:
        fp.load(path)
    assert expect in str(e.value)
    assert str(path) in str(e.value) and "\n" not in str(e.value)


def test_bad_flags_give_one_line_and_exit_2(tmp_path):
    r = _cli("field", "--server", "h", "--direction", "left", "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        'satcc: error: flags: directions: expected a list of "up" / "down", found [\'left\']'
    ]
    r = _cli("field", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "expected PLAN or --server" in r.stderr


def test_server_forms():
    assert fp.split_server("vps.example") == ("vps.example", 5201)
    assert fp.split_server("vps.example:5300") == ("vps.example", 5300)
    assert fp.split_server("[2001:db8::1]:5300") == ("2001:db8::1", 5300)
    assert fp.split_server("2001:db8::1") == ("2001:db8::1", 5201)


def test_starlink_boundaries_are_the_models_12_27_42_57():
    # starlink.rs EpochClock: first boundary at (phase - start) mod period after the start
    minute = 1_700_000_040.0  # a multiple of 60: the top of a UTC minute
    assert minute % 60 == 0
    got = [clock.boundary_at_or_after(minute + s) - minute for s in (0, 12, 12.5, 27, 50, 58)]
    assert got == [12, 12, 27, 27, 57, 72]
    assert clock.aligned_start(minute + 13.5, 1.0) - minute == 28
    assert clock.aligned_start(minute + 13, 1.0) - minute == 13  # exactly on time
    assert clock.aligned_start(minute + 12.5, 0.5) - minute == 12.5  # exactly on time
    assert [b - minute for b in clock.boundaries_between(minute, minute + 60)] == [12, 27, 42, 57]
    for start in (0.0, 5.0, 50.0, 12.0):  # the model's clock.start past the minute
        first_model = (clock.PHASE_S - start) % clock.PERIOD_S
        assert clock.boundary_at_or_after(minute + start) - (minute + start) == first_model


def test_clock_readings():
    tracking = (
        "A29FC87B,ntp.example,3,1700000000.1,-0.000012,0.000002,0.000030,-1.2,0.001,0.02,"
        "0.004,0.0008,64.2,Normal\n"
    )
    st = clock.parse_chrony_tracking(tracking)
    assert st is not None and st.synchronised and st.usable()
    assert st.offset_s == pytest.approx(-12e-6)
    unsynced = tracking.replace("Normal", "Not synchronised").replace(",3,", ",0,")
    assert not clock.parse_chrony_tracking(unsynced).usable()
    assert clock.parse_chrony_tracking("garbage") is None
    assert not clock.from_adjtimex(5, 0x40, 0, 16_000_000).usable()
    ok = clock.from_adjtimex(0, 0x2001, 1500, 20_000)  # STA_NANO: offset in ns
    assert ok.usable() and ok.offset_s == pytest.approx(1.5e-6)
    assert not clock.from_adjtimex(0, 0, 0, 500_000).usable()  # 0.5 s error bound: too loose
    live = clock.check()  # whatever this host says, it says it in the same shape
    assert live.source in ("chrony", "adjtimex", "none")


def test_alignment_refuses_an_unsynchronised_clock_without_force(tmp_path, monkeypatch):
    from satcc.field import loop

    monkeypatch.setattr(
        clock, "check", lambda: clock.ClockStatus("adjtimex", False, 0.0, 16.0, "state 5")
    )
    p = fp.validate(fp.FieldPlan(server="192.0.2.1", align="starlink"), "t")
    with pytest.raises(UserError, match="clock: Starlink alignment needs a synchronised clock"):
        loop.run_plan(p, fp.to_toml(p), tmp_path / "s")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("unable to connect to server: Connection refused", "refused"),
        ("the server is busy running a test. try again later", "server busy"),
        ("unable to connect to server: No route to host", "unreachable"),
        ("unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported", "CCA not available"),
        ("control socket has closed unexpectedly", "lost connection"),
    ],
)  # fmt: skip
def test_iperf3_errors_become_reasons(message, reason):
    assert classify(message).startswith(reason)


def test_the_store_index_is_a_campaign_index_and_reruns_keep_it(tmp_path):
    from satcc.field import loop
    from satcc.store import layout

    p = fp.validate(fp.FieldPlan(name="idx", ccas=["cubic", "bbr"], rounds=2), "t")
    items = loop.prepare(p, fp.to_toml(p), tmp_path / "s")
    doc = layout.read_index(tmp_path / "s")
    assert [r["run_id"] for r in doc["runs"]] == [i.run_id for i in items]
    assert doc["order"] == "fixed" and doc["runs"][0]["engine"] == "field"
    assert doc["runs"][0]["params"]["direction"] == "up"
    again = loop.prepare(p, fp.to_toml(p), tmp_path / "s")
    assert again == items
    other = fp.validate(fp.FieldPlan(name="other"), "t")
    with pytest.raises(UserError, match="holds campaign 'idx'"):
        loop.prepare(other, fp.to_toml(other), tmp_path / "s")
    from satcc import store

    runs = store.query(tmp_path / "s", "SELECT status, cca, direction FROM runs")
    assert set(runs.status) == {"pending"} and set(runs.cca) == {"cubic", "bbr"}


def test_shipped_plans_are_valid_and_print():
    plans = shipped_plans()
    assert set(plans) >= {"study000", "study001", "study003"}
    s001 = fp.load(plans["study001"])[0]
    assert s001.ccas == ["bbr", "cubic", "dctcp", "vegas", "yeah"]
    assert (s001.duration_s, s001.rounds, s001.interval_s, s001.order) == (15, 61, 3600, "fixed")
    s000 = fp.load(plans["study000"])[0]
    assert s000.align == "starlink" and len(s000.at) == 3 and s000.udp
    r = _cli("field", "study001", "--server", "vps.example", "--rounds", "2", "--print")
    assert r.returncode == 0, r.stderr
    ids = [ln[2:] for ln in r.stdout.splitlines() if ln.startswith("# r")]
    assert len(ids) == 20 and ids[0] == "r000-000-bbr-up-0"
    assert 'server = "vps.example"' in r.stdout


def test_print_shows_a_plan_that_loads_back(tmp_path):
    r = _cli("field", "--server", "h:5300", "--cca", "cubic,bbr", "--udp", "5Mbit/s", "--print")
    assert r.returncode == 0, r.stderr
    path = tmp_path / "p.toml"
    path.write_text(r.stdout)
    p = fp.load(path)[0]
    assert p.ccas == ["cubic", "bbr"] and p.udp == ["5Mbit/s"] and p.host_port() == ("h", 5300)
    assert json.loads(json.dumps(p.doc())) == p.doc()


PING_LOG = """PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data.
[1700000000.100000] 64 bytes from 192.0.2.1: icmp_seq=1 ttl=64 time=41.2 ms
[1700000000.300000] 64 bytes from 192.0.2.1: icmp_seq=2 ttl=64 time=40.8 ms

--- 192.0.2.1 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 200ms
rtt min/avg/max/mdev = 40.800/41.000/41.200/0.200 ms
"""


def test_the_loop_retries_a_failure_once_at_the_end_of_its_round_and_the_store_reads_back(
    tmp_path, monkeypatch
):
    """The loop without a network: `measure` is replaced by one that hands over a recorded
    iperf3 report (tests/data, a download) and a ping log, or fails as told."""
    from satcc.field import loop
    from satcc.field.measure import Measured, RunFailed

    calls: list[str] = []

    def fake_measure(p, item, raw_dir, force=False, not_before=None):
        calls.append(item.run_id)
        if item.cca == "cubic" or (item.cca == "bbr" and calls.count(item.run_id) == 1):
            raise RunFailed(f"server busy: iperf3: the server is busy ({item.cca})")
        raw_dir.mkdir(parents=True)
        shutil.copy(ROOT / "tests" / "data" / "iperf3" / "rp2_client.json", raw_dir / "iperf3.json")
        (raw_dir / "ping-idle.txt").write_text(PING_LOG)
        doc = {"warnings": [], "host": {"kernel": "test"}}
        files = {"iperf3": raw_dir / "iperf3.json", "ping_idle": raw_dir / "ping-idle.txt"}
        return Measured(raw_dir, doc, files)

    monkeypatch.setattr(loop, "measure", fake_measure)
    p = fp.validate(
        fp.FieldPlan(name="fake", server="192.0.2.1", ccas=["reno", "bbr", "cubic"], gap="0 s"),
        "t",
    )
    out = tmp_path / "s"
    lines = io.StringIO()
    r = loop.run_plan(p, fp.to_toml(p), out, stream=lines)
    assert [c.split("-")[2] for c in calls] == ["reno", "bbr", "cubic", "bbr", "cubic"]
    assert r.done == 2 and [f[0] for f in r.failed] == ["r000-002-cubic-up-0"]
    text = lines.getvalue().splitlines()
    assert len(text) == 5 and "(retried at the end of the round)" in text[1]
    assert "(retry)" in text[3] and "Mbit/s" in text[3] and "next: cubic up" in text[3]

    from satcc import store

    flows = store.query(out, "SELECT engine, cca, direction, name, goodput_bps FROM flows")
    assert set(flows.engine) == {"field"}
    data = flows[flows.name == "upload"]
    assert sorted(data.cca) == ["bbr", "reno"] and (data.goodput_bps > 0).all()
    assert set(flows.name) == {"upload", "upload.1", "ping idle"}  # iperf3 -P 2: both streams
    runs = store.query(out, "SELECT run_id, status, error FROM runs ORDER BY run_id")
    assert list(runs.status) == ["done", "done", "failed"]
    assert runs.error.iloc[2] == "server busy: iperf3: the server is busy (cubic)"
    assert store.query(out, "SELECT count(*) AS n FROM pings").n.iloc[0] == 4
    # a result names its inputs by their place in the run, not the random scratch directory
    # they were read from (which is gone once the run is stored): same measurement, same bytes
    import pyarrow.parquet as pq

    for run_id in ("r000-000-reno-up-0", "r000-001-bbr-up-0"):
        run = out / "runs" / run_id
        meta = json.loads(pq.read_schema(run / "flows.parquet").metadata[b"satcc"])
        assert meta["inputs"] == ["iperf3.json", "ping-idle.txt"], run_id
        assert not [f.name for f in run.iterdir() if f.is_file() and b".raw-" in f.read_bytes()]

    # a rerun retries only what failed
    calls.clear()
    r = loop.run_plan(p, fp.to_toml(p), out, stream=io.StringIO())
    assert calls == ["r000-002-cubic-up-0", "r000-002-cubic-up-0"] and r.skipped == 2

    from satcc.report import build_report  # `satcc report` reads the store unchanged

    rep = build_report(out, tmp_path / "report", ["html"])
    assert rep.html_path is not None and rep.html_path.is_file()


def test_at_times_are_the_next_listed_utc_time_of_day():
    from satcc.field.loop import _next_at

    day = 1_700_006_400.0  # 2023-11-15 00:00:00 UTC
    assert day % 86400 == 0
    assert _next_at(day + 3600, ["00:00", "03:00", "10:00"]) - day == 3 * 3600
    assert _next_at(day + 3 * 3600, ["00:00", "03:00"]) - day == 3 * 3600  # on time
    assert _next_at(day + 11 * 3600, ["00:00", "03:00", "10:00"]) - day == 86400  # tomorrow


def test_a_runs_children_die_with_satcc_even_on_kill_9():
    """tcpdump or iperf3 must not outlive an interrupted plan (PR_SET_PDEATHSIG)."""
    import os
    import signal
    import time

    code = (
        "import time, sys\n"
        "from satcc.field.measure import _popen\n"
        "p = _popen(['sleep', '30'])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(30)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists():
        status = Path(f"/proc/{child}/status").read_text()
        if "State:\tZ" in status:
            break
        time.sleep(0.05)
    alive = (
        Path(f"/proc/{child}").exists()
        and "State:\tZ" not in Path(f"/proc/{child}/status").read_text()
    )
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive
