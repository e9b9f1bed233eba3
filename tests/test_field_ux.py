"""Issue 44 item 5: `satcc field --print` showed the plan and the run ids only (not the
iperf3/ping/tcpdump command lines, the total time, study 001's 60 h, or the data); `--cca
cubci` was accepted and failed hours later; there was no preflight; iperf3's -P, --bidir, a
TCP -b and further arguments had no flags; `--udp 10M` was refused; pings stopped at 0.2 s.
No network is used: the preflight's host is replaced where a test needs a server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from satcc.errors import UserError
from satcc.field import plan as fp
from satcc.field import preflight, shipped_plans
from satcc.field.measure import Measured, build_result, iperf3_cmd
from tests.test_field import _cli

DATA = Path(__file__).parent / "data" / "iperf3"


def test_print_gives_every_command_the_time_and_the_data(tmp_path):
    r = _cli("field", "study001", "--server", "vps.example", "--rounds", "2", "--print")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    first = lines.index("# r000-000-bbr-up-0")
    assert lines[first + 1 : first + 5] == [
        "#   $ ping -D -n -i 1 -c 50 vps.example",
        (
            "#   $ tcpdump -i DEV -s 128 -n --immediate-mode -U -w "
            "runs/r000-000-bbr-up-0/field/capture.pcap 'host vps.example and port 5201'"
            "   (as root; DEV: the route's device)"
        ),
        "#   $ iperf3 -c vps.example -p 5201 -t 15 -i 0.1 -J --connect-timeout 5000 -C bbr",
        "#   $ ping -D -n -i 1 -w 16 vps.example   (alongside iperf3)",
    ]
    assert sum(ln.startswith("#   $ iperf3") for ln in lines) == 20
    assert "# 20 runs; each round at most 10 min 59 s; the plan takes about 1 h 10 min" in lines
    assert any(ln.startswith("# data: TCP 300 s of sending: 750 MB at 20 Mbit/s") for ln in lines)
    (tmp_path / "p.toml").write_text(r.stdout)  # still a plan file
    assert fp.load(tmp_path / "p.toml")[0].rounds == 2


def test_study001s_plan_takes_sixty_hours_and_says_so():
    p = fp.load(shipped_plans()["study001"])[0]
    e = fp.estimate(p)
    # 60 hourly starts after the first, then one round: 10 x (50 idle pings at 1 s + 15 s) + 9 gaps
    assert e.total_s == 60 * 3600 + 10 * (50 + 15) + 9 * 1
    assert e.lines()[0] == (
        "610 runs; each round at most 10 min 59 s; the plan takes about 2 d 12 h (60.2 h)"
    )
    assert e.tcp_bytes_at(100e6) == 100e6 / 8 * 610 * 15


def test_a_misspelt_cca_is_refused_at_once_with_the_available_ones():
    r = _cli("field", "--server", "h", "--cca", "cubci", "--print")
    assert r.returncode == 2
    err = r.stderr.strip()
    assert err.startswith("satcc: error: flags: ccas: unknown congestion control 'cubci'")
    assert "(did you mean cubic?)" in err and "available here: " in err and "\n" not in err


def test_iperf3s_parallel_bidir_bitrate_and_pass_through_reach_its_command_line():
    r = _cli(
        "field", "--server", "h", "--cca", "cubic", "-P", "4", "--bidir", "-b", "50M",
        "--iperf3-args", "-w 4M --zerocopy", "--udp", "10M,20 Mbit/s", "--print",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    cmds = [ln[6:] for ln in r.stdout.splitlines() if ln.startswith("#   $ iperf3")]
    assert cmds[0].endswith("-C cubic -P 4 --bidir -b 50000000 -w 4M --zerocopy")
    assert cmds[1].endswith("-u -b 10000000 -P 4 --bidir -w 4M --zerocopy")
    assert "-u -b 20000000 " in cmds[2]
    assert 'udp = ["10 Mbit/s", "20 Mbit/s"]' in r.stdout and 'bitrate = "50 Mbit/s"' in r.stdout


@pytest.mark.parametrize(
    ("doc", "expect"),
    [
        ({"iperf3_args": ["-t", "60"]}, "iperf3_args: expected arguments satcc does not set"),
        ({"parallel": 0}, "parallel: expected an integer in 1..128"),
        ({"bitrate": "fast"}, "bitrate: expected a rate"),
        ({"bidir": True, "directions": ["up", "down"]}, 'bidir: expected directions = ["up"]'),
        ({"ping_interval": "5 ms"}, "ping_interval: expected a duration >= 10 ms"),
    ],
)
def test_bad_iperf3_keys_name_the_key(doc, expect):
    with pytest.raises(UserError, match=expect.replace("[", r"\[").replace("(", r"\(")):
        fp.validate(fp.FieldPlan(server="h", **doc), "plan.toml")


def test_pings_go_down_to_10_ms_where_root_may():
    p = fp.validate(fp.FieldPlan(server="h", ping_interval="10 ms"), "t")
    assert p.ping_interval_s == 0.01
    assert iperf3_cmd(p, fp.expand(p)[0], "192.0.2.1", 5201)[:3] == ["iperf3", "-c", "192.0.2.1"]

    def checks(root):
        return {
            c.what: c
            for c in preflight.run_checks(
                p, run=lambda cmd: (0, "{}"), connect=lambda h, port: None, is_root=root
            )
        }

    assert checks(True)["ping interval"].ok
    user = checks(False)["ping interval"]
    assert not user.ok and "needs root (iputils' floor is 0.2 s)" in user.detail


def test_the_preflight_finds_an_unreachable_server_and_ccas_missing_here_or_there(monkeypatch):
    monkeypatch.setattr(preflight.hostinfo, "available_ccas", lambda: ["reno", "cubic"])
    monkeypatch.setattr(preflight, "loadable_ccas", list)
    p = fp.validate(
        fp.FieldPlan(server="h:5300", ccas=["cubic", "vegas"], directions=["up", "down"]), "t"
    )
    probes = []

    def run(cmd):
        probes.append(cmd)
        if cmd[cmd.index("-C") + 1] == "vegas":
            return 1, json.dumps({"error": "unable to set TCP_CONGESTION: not supported"})
        return 0, json.dumps({"end": {}})

    def refused(host, port):
        raise ConnectionRefusedError(111, "Connection refused")

    down = {c.what: c for c in preflight.run_checks(p, run=run, connect=refused, is_root=False)}
    assert down["server"].line() == "FAIL server: h port 5300: Connection refused"
    assert not probes  # no download probe without a server
    checks = preflight.run_checks(p, run=run, connect=lambda h, port: None, is_root=False)
    by = {c.what: c for c in checks}
    assert by["cca cubic here"].ok and not by["cca vegas here"].ok
    assert by["cca cubic at the server"].ok
    assert by["cca vegas at the server"].detail.startswith("the server lacks it")
    assert [c.what for c in preflight.failed(checks)] == [
        "cca vegas here",
        "cca vegas at the server",
    ]
    assert probes[0] == preflight.iperf3_probe_cmd("h", 5300, "cubic")


def test_an_unsynchronised_clock_stops_an_aligned_plan_unless_forced(monkeypatch):
    monkeypatch.setattr(
        preflight.clock,
        "check",
        lambda: preflight.clock.ClockStatus("adjtimex", False, 0.0, 16.0, "state 5"),
    )
    p = fp.validate(fp.FieldPlan(server="h", align="starlink"), "t")

    def clock_check(force):
        checks = preflight.run_checks(
            p, run=lambda cmd: (0, "{}"), connect=lambda h, port: None, is_root=True, force=force
        )
        return next(c for c in checks if c.what == "clock")

    assert clock_check(False).line() == "FAIL clock: adjtimex: state 5"
    assert clock_check(True).line() == "warn clock: adjtimex: state 5"


def test_a_plan_does_not_start_when_the_preflight_fails(tmp_path):
    out = tmp_path / "store"
    r = _cli("field", "--server", "127.0.0.1:9", "--ping-count", "0", "--out", str(out))
    assert r.returncode == 1
    assert "field: check FAIL server: 127.0.0.1 port 9" in r.stderr
    assert "field: not started (fix the above, or --no-check)" in r.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "direction", "names"),
    [
        ("bidir_p2_client.json", "up", ["upload", "upload.1", "download", "download.1"]),
        ("p2_reverse_client.json", "down", ["download", "download.1"]),
    ],
)
def test_every_stream_of_a_parallel_or_bidir_run_is_a_flow(tmp_path, name, direction, names):
    p = fp.validate(fp.FieldPlan(server="127.0.0.1:5299", parallel=2), "t")
    item = fp.RunItem("x", 0, 0, 0, 0, "tcp", "cubic", direction, None, None)
    m = Measured(tmp_path, {"warnings": []}, {"iperf3": DATA / name})
    result, _ = build_result(p, item, m)
    flows = result.flows
    assert flows["name"].tolist() == names and flows["id"].tolist() == list(range(len(names)))
    doc = json.loads((DATA / name).read_text())
    sent = sorted(s["receiver"]["bytes"] for s in doc["end"]["streams"])
    assert sorted(flows["delivered_bytes"]) == sent
    assert set(result.flow_series["flow_id"]) == set(range(len(names)))
