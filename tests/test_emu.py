"""The emulator: pure planning (no root) and short real runs (root, iperf3, tcpdump; a few
seconds each). Real runs use a 20 Mbit/s, 50 ms RTT path: its BDP (about 85 packets) is filled within a
second, so runs of a few seconds show the steady state."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from satcc import _native
from satcc import scenario as sc
from satcc.emu import host, topology, traffic
from satcc.emu.host import EmuError

CAPACITY_BPS = 20_000_000
RTT_MS = 50.0
# Payload per 1500-byte IP packet with timestamps: 1448 B (satcc.scenario DEFAULT_MSS).
PAYLOAD_FRACTION = 1448 / 1500
STARTUP_S = 1.5  # slow start and the first loss recovery are over by then at 50 ms RTT


def scenario_text(duration="5 s", cca="cubic", loss=0.0, queue="1 BDP", extra=""):
    return textwrap.dedent(f"""
        [scenario]
        name = "emu-test"
        duration = "{duration}"

        [[link]]
        a = "client"
        b = "server"
        rate = "20 Mbit/s"
        delay = "25 ms"
        loss = {loss}
        queue = "{queue}"

        [[flow]]
        from = "client"
        to = "server"
        cca = "{cca}"
        {extra}
    """)


def config_of(text: str) -> dict:
    return sc.resolve(sc.loads(text))


# -- planning (no root) ------------------------------------------------------------------


TRIANGLE = """
[scenario]
duration = "1 s"
[[link]]
a = "x"
b = "y"
rate = "10 Mbit/s"
delay = "100 ms"
[[link]]
a = "x"
b = "z"
rate = "10 Mbit/s"
delay = "10 ms"
[[link]]
a = "z"
b = "y"
rate = "10 Mbit/s"
delay = "10 ms"
queue = "2 BDP"
[[flow]]
from = "x"
to = "y"
cca = "cubic"
"""


def test_routes_follow_the_shortest_delay_path_like_the_simulator():
    p = topology.plan(config_of(TRIANGLE), "e000001", subnet_octet=70)
    # x -> y: the 20 ms path through z beats the direct 100 ms link, for both of y's addresses
    to_y = [r for r in p.routes if r.node == 0 and r.dst in ("10.70.0.2", "10.70.2.2")]
    assert len(to_y) == 2
    assert all(r.dev == "satcc-l1" and r.via == "10.70.1.2" for r in to_y)
    assert p.base_delay_ns[0][1] == 20_000_000
    assert p.path_dirs[(0, 1)] == [2, 4]  # x->z (link 1 ab), z->y (link 2 ab)


def test_bdp_queues_resolve_to_rate_times_the_largest_crossing_rtt():
    p = topology.plan(config_of(TRIANGLE), "e000001", subnet_octet=70)
    # link 2 (z-y), 2 BDP at 10 Mbit/s x 40 ms RTT = 100 kB, in the resolved scenario that
    # satcc-linkd reads
    links, max_rtt = p.config["links"], p.config["routes"]["max_rtt_ns"]
    sized = [
        _native.sized_queue(links[k // 2][d]["queue"], links[k // 2][d]["rate_bps"], max_rtt[k])
        for k, d in ((4, "ab"), (0, "ab"))
    ]
    assert sized[0] == {"bytes": 100_000}
    assert sized[1] == {"packets": 1000}  # the default stays in packets


def test_names_fit_interface_limits_and_carry_the_run_prefix():
    p = topology.plan(config_of(TRIANGLE), "e0a1b2c")
    assert all(ns.startswith("satcc-e0a1b2c-") for ns in p.all_namespaces)
    assert all(host.NS_RE.match(ns) for ns in p.all_namespaces)
    assert all(len(lp.a_if) < topology.IFNAMSIZ for lp in p.links)
    assert not host.NS_RE.match("satcc-test-123-a")  # the analyzer's testbed is not ours


def test_flow_options_land_in_sysctls_and_routes():
    text = scenario_text(
        extra='sack = false\nrwnd = "1 MiB"\ninitial_cwnd = 4\ndelayed_ack = false'
    )
    p = topology.plan(config_of(text), "e000002", subnet_octet=80)
    assert p.sysctls[0]["net.ipv4.tcp_sack"] == "0"
    assert p.sysctls[1]["net.ipv4.tcp_rmem"].endswith(" 1048576")
    sender = [r for r in p.routes if r.node == 0]
    receiver = [r for r in p.routes if r.node == 1]
    assert sender[0].attrs == ["initcwnd", "4"]
    assert receiver[0].attrs == ["quickack", "1"]


def test_rwnd_is_the_receivers_tcp_rmem_and_a_fixed_window_turns_autotuning_off():
    p = topology.plan(config_of(scenario_text(extra='rwnd = "1 MiB"')), "e000004", subnet_octet=81)
    assert p.sysctls[1]["net.ipv4.tcp_rmem"] == "4096 131072 1048576"
    assert "net.ipv4.tcp_moderate_rcvbuf" not in p.sysctls[1]
    fixed = scenario_text(extra='rwnd = "1 MiB"\nrcvbuf_autotune = false')
    p = topology.plan(config_of(fixed), "e000005", subnet_octet=82)
    buf = sc.fixed_rcvbuf_bytes(1 << 20, 1448)
    assert buf == 1_677_722  # offers 1 MiB at scaling_ratio 160, as the kernel measured
    assert p.sysctls[1]["net.ipv4.tcp_rmem"] == f"4096 {buf} {buf}"
    assert p.sysctls[1]["net.ipv4.tcp_moderate_rcvbuf"] == "0"
    both = fixed + textwrap.dedent("""
        [[flow]]
        from = "client"
        to = "server"
    """)
    with pytest.raises(EmuError, match="rcvbuf_autotune"):
        topology.plan(config_of(both), "e000006")


def test_flows_from_one_node_that_disagree_on_a_namespace_option_are_rejected():
    text = scenario_text() + textwrap.dedent("""
        [[flow]]
        from = "client"
        to = "server"
        timestamps = false
    """)
    with pytest.raises(EmuError, match="timestamps"):
        topology.plan(config_of(text), "e000003")


def test_ss_lines_parse_into_kernel_fields():
    line = (
        "0      0    10.77.0.1:40000 10.77.0.2:5201 cubic wscale:7,7 rto:252 rtt:51.2/0.4 "
        "mss:1448 cwnd:42 ssthresh:30 bytes_acked:1000 bytes_received:5 data_segs_out:77 "
        "pacing_rate 4.5Mbps delivery_rate 2Mbps unacked:12 retrans:0/5 minrtt:50.1\n"
        "0 0 [::ffff:10.77.0.2]:5201 [::ffff:10.77.0.1]:40000 cubic bytes_received:123"
    )
    got = traffic.parse_ss(line)
    f = got[(40000, 5201)]
    assert (f["cwnd"], f["ssthresh"], f["rtt"], f["unacked"]) == (42, 30, 51.2, 12)
    assert f["pacing_rate"] == 4.5e6
    assert f["retrans_total"] == 5 and f["minrtt"] == 50.1
    assert got[(5201, 40000)]["bytes_received"] == 123


def test_ss_lines_give_bbr_state_under_the_simulators_names():
    from satcc.emu.runner import _cc_state

    line = (
        "0 0 10.77.0.1:40000 10.77.0.2:5201 bbr wscale:7,7 rto:244 rtt:43.1/1.2 mss:1448 "
        "cwnd:310 bytes_acked:1000 bbr:(bw:46.3Mbps,mrtt:40.12,pacing_gain:1.25,cwnd_gain:2) "
        "pacing_rate 57.3Mbps delivered:900 minrtt:40.1"
    )
    f = traffic.parse_ss(line)[(40000, 5201)]
    assert f["pacing_rate"] == 57.3e6 and f["minrtt"] == 40.1 and f["mss"] == 1448
    assert dict(_cc_state(f, ecn=False)) == {
        "bw_pps": 46.3e6 / 8 / 1448,
        "min_rtt_ms": 40.12,
        "pacing_gain": 1.25,
        "cwnd_gain": 2.0,
    }
    assert _cc_state(traffic.parse_ss(line.replace("bbr:(", "x:("))[(40000, 5201)], False) == []


def test_an_ecn_flows_ss_line_gives_its_delivered_and_ce_marked_segments():
    # `ss` prints delivered_ce only once it is nonzero: before that the count is 0
    line = (
        "0 0 10.77.0.1:40000 10.77.0.2:5201 ecn ecnseen dctcp wscale:7,7 rto:204 "
        "rtt:12.1/0.3 mss:1448 cwnd:52 delivered:5000 delivered_ce:321 minrtt:10.1"
    )
    f = traffic.parse_ss(line)[(40000, 5201)]
    assert dict(_cc_state_of(f)) == {"delivered": 5000.0, "delivered_ce": 321.0}
    g = traffic.parse_ss(line.replace(" delivered_ce:321", ""))[(40000, 5201)]
    assert dict(_cc_state_of(g)) == {"delivered": 5000.0, "delivered_ce": 0.0}


def _cc_state_of(f):
    from satcc.emu.runner import _cc_state

    return _cc_state(f, ecn=True)


def test_the_mss_clamp_adds_back_the_timestamps_option():
    assert traffic.mss_option({"mss": 1448, "timestamps": True}) == []
    assert traffic.mss_option({"mss": 1300, "timestamps": True}) == ["-M", "1312"]
    assert traffic.mss_option({"mss": 1300, "timestamps": False}) == ["-M", "1300"]


def test_cpu_masks_are_hex_in_32_bit_groups_as_sysfs_reads_them():
    assert topology.cpu_mask([0]) == "00000001"
    assert topology.cpu_mask([1]) == "00000002"
    assert topology.cpu_mask([0, 2, 3]) == "0000000d"
    assert topology.cpu_mask([32, 1]) == "00000001,00000002"


def test_above_1_gbit_linkd_gets_the_last_cpu_and_the_nodes_receive_on_the_others(monkeypatch):
    from satcc.emu import linkd

    plan = topology.plan(config_of(scenario_text()), "e0a1b2c")
    fast = copy.deepcopy(plan.config)
    fast["links"][0]["ba"]["rate_bps"] = 10_000_000_000
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 0, 1})
    assert linkd.placement(fast) == (3, [0, 1])
    # a link slow enough for satcc-linkd's core to carry the nodes' stacks: nothing moves
    assert linkd.placement(plan.config) is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5})
    assert linkd.placement(fast) is None
    assert linkd.config(plan, 1, 1, 1, Path("/x"), cpu=3)["cpu"] == 3
    assert "cpu" not in linkd.config(plan, 1, 1, 1, Path("/x"))


def test_satcc_linkd_asks_for_polling_idle_cpus_unless_told_not_to():
    from satcc.emu import linkd

    plan = topology.plan(config_of(scenario_text()), "e0a1b2c")
    assert linkd.config(plan, 1, 1, 1, Path("/x"))["cpu_latency_us"] == 0
    assert linkd.config(plan, 1, 1, 1, Path("/x"), cpu_latency_us=None)["cpu_latency_us"] is None


def test_openvpn_runs_real_time_below_satcc_linkd():
    # the VPN hub is a forwarder of the emulated network: in the normal class its pauses on
    # this host (p50 9 ms, max 107 ms per packet at load 18-21) built fid-vpn's standing queue
    from satcc.emu import vpn

    argv = vpn.openvpn_cmd("satcc-x-n1", ["--dev", "satcc-vpn"])
    assert argv[:4] == ["ip", "netns", "exec", "satcc-x-n1"]
    assert argv[4:6] == ["chrt", "--fifo"] and argv[7:] == ["openvpn", "--dev", "satcc-vpn"]
    linkd_priority = 10  # crates/satcc-emu config.rs DEFAULT_RT_PRIORITY
    assert 1 <= int(argv[6]) < linkd_priority


# -- real runs (root) --------------------------------------------------------------------

needs_root = pytest.mark.skipif(
    os.geteuid() != 0
    or any(shutil.which(t) is None for t in ("ip", "iperf3", "ethtool", "tcpdump")),
    reason="needs root with iproute2, iperf3, ethtool and tcpdump",
)


def _emu(text: str, tmp_path: Path, **kw):
    from satcc.engines import emu

    return emu.run(sc.loads(text), out_dir=tmp_path / "out", **kw)


def _steady_goodput(result) -> float:
    fs = result.flow_series
    s = fs[(fs.flow_id == 0) & (fs.t_s >= STARTUP_S)]
    return s.delivered_bytes.sum() * 8 / (len(s) * result.meta["bin_s"])


def _assert_path_is_filled(result):
    goodput = _steady_goodput(result)
    payload_capacity = CAPACITY_BPS * PAYLOAD_FRACTION
    assert 0.9 * payload_capacity <= goodput <= 1.02 * payload_capacity, goodput
    f = result.flows.iloc[0]
    assert RTT_MS - 0.5 <= f.rtt_min_ms <= RTT_MS + 3.0, f.rtt_min_ms
    srtt = result.flow_series.srtt_ms.dropna()
    assert srtt.median() >= RTT_MS - 0.5
    ls = result.link_series
    assert ls[ls.dir == "ab"].tx_bytes.sum() > 0
    assert result.meta["stats"]["linkd_socket_drops"] == 0
    # the PM QoS request for polling idle CPUs was held through the run wherever it can be
    held = result.meta["stats"]["linkd_cpu_latency_held_us"]
    assert held == (0 if os.access("/dev/cpu_dma_latency", os.W_OK) else None)
    assert host.list_namespaces() == [] or all(
        not ns.startswith(f"satcc-{result.meta['emu']['run_id']}-") for ns in host.list_namespaces()
    )


@pytest.mark.kernel
@needs_root
def test_cubic_fills_a_20_mbit_50_ms_path(tmp_path):
    r = _emu(scenario_text(cca="cubic"), tmp_path)
    assert r.meta["engine"] == "emu"
    _assert_path_is_filled(r)
    assert (tmp_path / "out" / "emu" / "capture-1-server.pcap").stat().st_size > 100_000


def _on_time(run_once, what: str):
    """A kernel run judged on its dynamics, counted only when satcc-linkd kept the link's timing:
    the fidelity suite's rule (`satcc fidelity`: p99 lateness at most its default bound, up to its
    number of attempts; above it on every attempt, the host was too busy and the test fails
    saying so). On a VM whose CPUs stall for milliseconds, frames held up in satcc-linkd leave
    back to back and their ACKs arrive bunched: the kernel's BBR then measures more bandwidth
    than the link has and holds a standing queue (2026-12-02, 36 runs of this path on one host,
    17 of them above 1 ms p99: the four with a median srtt over 69 ms, up to 88.1, all among
    those 17; under the bound, 54.3-68.1 ms)."""
    from satcc.fidelity import suite

    bound = suite.DEFAULT_MAX_LATENESS_P99_US
    refused: list[float] = []
    for attempt in range(suite.LATENESS_ATTEMPTS):
        r = run_once(attempt)
        p99 = suite.linkd_p99_us(r)
        assert p99 is not None, "a kernel run records satcc-linkd's lateness"
        if p99 <= bound:
            return r
        refused.append(p99)
    pytest.fail(
        f"{what}: satcc-linkd's p99 lateness was above {bound:.0f} µs in all "
        f"{len(refused)} attempts ({', '.join(f'{x:.0f} µs' for x in refused)}): "
        "the host was too busy to judge the path's dynamics"
    )


class _Stats:
    def __init__(self, p99):
        self.meta = {"stats": {"linkd_lateness_p99_us": p99}}


def test_a_late_kernel_run_is_rerun_and_a_host_late_every_time_fails():
    from satcc.fidelity import suite

    bound, n = suite.DEFAULT_MAX_LATENESS_P99_US, suite.LATENESS_ATTEMPTS
    seen: list[int] = []

    def late_then_on_time(attempt):
        seen.append(attempt)
        return _Stats(bound * 4 if attempt == 0 else bound)

    assert _on_time(late_then_on_time, "x").meta["stats"]["linkd_lateness_p99_us"] == bound
    assert seen == [0, 1]
    with pytest.raises(pytest.fail.Exception, match=f"all {n} attempts .*too busy"):
        _on_time(lambda attempt: _Stats(bound + 1), "x")


@pytest.mark.kernel
@needs_root
def test_bbr_fills_a_20_mbit_50_ms_path(tmp_path):
    if "bbr" not in Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split():
        pytest.skip("this kernel has no bbr")
    r = _on_time(
        lambda attempt: _emu(scenario_text(cca="bbr"), tmp_path / str(attempt), capture=False),
        "bbr on 20 Mbit/s, 50 ms",
    )
    _assert_path_is_filled(r)
    # BBR keeps the queue short: median srtt well under the 1-BDP-queue's 100 ms
    srtt = r.flow_series.srtt_ms.dropna().median()
    assert srtt < 80, (srtt, r.meta["stats"])


@pytest.mark.kernel
@needs_root
def test_a_lossy_path_shows_retransmissions(tmp_path):
    r = _emu(scenario_text(duration="3 s", loss=0.01), tmp_path, capture=False)
    f = r.flows.iloc[0]
    assert f.retransmitted_packets > 0
    assert r.flow_series.retransmits.sum() > 0
    assert r.link_series.drops_random.sum() > 0


UDP_LIMITED = """
[scenario]
duration = "6 s"
[[link]]
a = "s"
b = "r"
rate = "20 Mbit/s"
delay = "10 ms"
loss = 0.01
[[flow]]
from = "s"
to = "r"
proto = "udp"
rate = "8 Mbit/s"
size = "3 MB"
"""


UDP_LATE = """
[scenario]
name = "udp-late"
duration = "5 s"
[[link]]
a = "s"
b = "r"
rate = "20 Mbit/s"
delay = "100 ms"
[[flow]]
from = "s"
to = "r"
proto = "udp"
rate = "8 Mbit/s"
start = "1 s"
"""


@pytest.mark.kernel
@needs_root
@pytest.mark.parametrize("text", [UDP_LIMITED, UDP_LATE], ids=["limited-lossy", "late-start"])
def test_a_udp_flow_is_timed_over_its_sending_not_the_planned_window(tmp_path, text):
    # limited-lossy: 3 MB at 8 Mbit/s take 3 s of a 6 s run; with 1 % loss not every datagram
    # arrives, so there is no completion time (timed over the rest of the run it read half).
    # late-start: iperf3's first datagram leaves about three round trips (here 200 ms each)
    # after the flow's start and the run's end cuts the client (timed over the planned 4 s it
    # read ~15 % low: study 000's udp-20 input failed on the kernel only for this). Either way
    # the goodput is over the time iperf3's server measured, as the simulator's over its
    # sending.
    from satcc.engines import sim

    r = _emu(text, tmp_path, capture=False)
    s = sim.run(sc.loads(text))
    emu_bps, sim_bps = r.flows.iloc[0].goodput_bps, s.flows.iloc[0].goodput_bps
    assert abs(emu_bps - sim_bps) <= 0.05 * sim_bps, (emu_bps, sim_bps)


def _satcc(*args: str) -> list[str]:
    return [sys.executable, "-m", "satcc.cli", *args]


def _wait_for(pred, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def _run_keys(before: set[str]) -> tuple[list[str], set[tuple[int, int]]]:
    mine = [ns for ns in host.list_namespaces() if ns not in before]
    keys = set()
    for ns in mine:
        st = os.stat(host.NETNS_DIR / ns)
        keys.add((st.st_dev, st.st_ino))
    return mine, keys


def _procs_in(keys: set[tuple[int, int]]) -> list[int]:
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                st = os.stat(f"/proc/{e}/ns/net")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in keys:
                out.append(int(e))
    return out


def _start_long_run(tmp_path: Path) -> tuple[subprocess.Popen, list[str], set[tuple[int, int]]]:
    path = tmp_path / "long.toml"
    path.write_text(scenario_text(duration="30 s"))
    before = set(host.list_namespaces())
    err = tmp_path / "stderr.txt"
    with open(err, "w") as fh:
        p = subprocess.Popen(
            _satcc("emu", str(path), "--out", str(tmp_path / "out")),
            stdout=subprocess.DEVNULL,
            stderr=fh,
        )
    # wait until the run is under way: its namespaces exist, satcc-linkd and the flow's sender
    # (satcc.emu.xfer send) run in them
    found: dict[str, object] = {}

    def cmdline(pid: int) -> bytes:
        try:
            return Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:  # gone meanwhile
            return b""

    def running() -> bool:
        mine, keys = _run_keys(before)
        if len(mine) < 3:
            return False
        lines = [cmdline(pid) for pid in _procs_in(keys)]
        found.update(mine=mine, keys=keys)
        return any(b"satcc-linkd" in c for c in lines) and any(
            b"satcc.emu.xfer\0send" in c for c in lines
        )

    assert _wait_for(running, 30), err.read_text() if p.poll() is not None else "timeout"
    time.sleep(1.0)
    return p, found["mine"], found["keys"]  # type: ignore[return-value]


@pytest.mark.kernel
@needs_root
def test_killing_a_run_then_cleaning_up_leaves_nothing_behind(tmp_path):
    p, mine, keys = _start_long_run(tmp_path)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert any((host.NETNS_DIR / ns).exists() for ns in mine)  # the crash left them
    c = subprocess.run(
        _satcc("emu", "--cleanup"), capture_output=True, text=True, timeout=60, check=False
    )
    assert c.returncode == 0, c.stderr
    assert not any((host.NETNS_DIR / ns).exists() for ns in mine)
    assert _wait_for(lambda: not _procs_in(keys), 5), _procs_in(keys)
    run_id = host.NS_RE.match(mine[0]).group(1)
    assert not (host.REGISTRY_DIR / f"{run_id}.json").exists()


@pytest.mark.kernel
@needs_root
def test_sigterm_mid_run_tears_everything_down_by_itself(tmp_path):
    p, mine, keys = _start_long_run(tmp_path)
    p.send_signal(signal.SIGTERM)
    p.wait(30)
    assert p.returncode != 0
    assert not any((host.NETNS_DIR / ns).exists() for ns in mine)
    assert _wait_for(lambda: not _procs_in(keys), 5), _procs_in(keys)


def test_emu_without_root_fails_before_touching_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    before = set(host.list_namespaces())
    with pytest.raises(EmuError, match="root"):
        _emu(scenario_text(), tmp_path)
    assert set(host.list_namespaces()) == before
    assert not (tmp_path / "out").exists()


def _starlink_text(duration: str) -> str:
    # phase 2 s: epoch boundaries at 2 s, 17 s, 32 s...; every boundary is a 150 ms outage
    return textwrap.dedent(f"""
        [scenario]
        name = "emu-starlink"
        duration = "{duration}"

        [[link]]
        a = "dish"
        b = "pop"
        [link.model]
        kind = "starlink"
        plan = "residential"
        phase = "2 s"
        disturbance = ["150 ms", "150 ms"]
        outage_probability = 1.0

        [[flow]]
        from = "dish"
        to = "pop"
        cca = "cubic"
    """)


def _assert_dip_at(result, boundary_s: float) -> None:
    ls = result.link_series
    ab = ls[ls.dir == "ab"].set_index(ls[ls.dir == "ab"].t_s.round(1))
    before = ab.loc[round(boundary_s - 0.2, 1)]
    at = ab.loc[round(boundary_s, 1)]
    assert at.capacity_bps < 0.5 * before.capacity_bps  # the outage is in the link series
    assert at.tx_bytes < 0.5 * before.tx_bytes  # and the emulator carried nothing through it
    fs = result.flow_series.set_index(result.flow_series.t_s.round(1))
    steady = fs.loc[round(boundary_s - 1.0, 1) : round(boundary_s - 0.1, 1)].goodput_bps.median()
    dip = fs.loc[round(boundary_s, 1) : round(boundary_s + 0.1, 1)].goodput_bps.min()
    assert dip < 0.5 * steady, (dip, steady)


@pytest.mark.kernel
@needs_root
def test_a_starlink_epoch_boundary_shows_as_a_dip(tmp_path):
    r = _emu(_starlink_text("4 s"), tmp_path, capture=False)
    _assert_dip_at(r, 2.0)


@pytest.mark.kernel
@needs_root
@pytest.mark.slow
def test_starlink_epochs_give_periodic_dips_every_15_s(tmp_path):
    r = _emu(_starlink_text("34 s"), tmp_path, capture=False)
    for boundary in (2.0, 17.0, 32.0):
        _assert_dip_at(r, boundary)


def _bpf_ready() -> bool:
    try:
        from satcc.emu import bpf

        return os.geteuid() == 0 and "hybla" in bpf.available()["algorithms"]
    except Exception:  # noqa: BLE001 - any failure means: not available here
        return False


@pytest.mark.kernel
@needs_root
def test_a_bpf_cca_registers_carries_a_flow_and_is_unregistered(tmp_path):
    if not _bpf_ready():
        pytest.skip("BPF struct_ops hybla cannot be built on this host (satcc emu doctor)")
    from satcc.emu import bpf

    name = bpf.kernel_name("hybla")
    if name in bpf.registered():
        pytest.skip(f"{name} is registered by someone else; the run would leave it alone")
    r = _emu(scenario_text(duration="3 s", cca="hybla"), tmp_path, capture=False)
    assert r.flows.iloc[0].goodput_bps > 0.5 * CAPACITY_BPS
    client = json.loads((tmp_path / "out" / "emu" / "client0.json").read_text())
    assert client["cc"] == name  # the kernel ran the BPF program
    # the kernel frees the struct_ops once the deleted namespaces' sockets are gone
    assert _wait_for(lambda: name not in bpf.registered(), 10), bpf.registered()


VPN_SCENARIO = """
[scenario]
name = "emu-vpn"
duration = "4 s"
[[link]]
a = "dish-a"
b = "vpn"
rate = "20 Mbit/s"
delay = "15 ms"
[[link]]
a = "vpn"
b = "dish-b"
rate = "50 Mbit/s"
delay = "10 ms"
[[flow]]
from = "dish-a"
to = "dish-b"
cca = "cubic"
mss = 1300
"""
# Per 1300-byte segment on the first link: 1352 B of TCP/IP (timestamps) without a tunnel;
# + 20 IP + 8 UDP + 24 OpenVPN (opcode/peer-id, packet id, GCM tag) = ~1404 B through it.
PLAIN_BYTES_PER_PAYLOAD = 1352 / 1300
TUNNEL_BYTES_PER_PAYLOAD = 1404 / 1300


@pytest.mark.kernel
@needs_root
def test_flows_cross_a_real_openvpn_tunnel_with_its_overhead(tmp_path):
    if shutil.which("openvpn") is None or shutil.which("openssl") is None:
        pytest.skip("needs openvpn and openssl (apt-get install openvpn)")
    r = _emu(VPN_SCENARIO, tmp_path, capture=False, vpn_server="vpn")
    f = r.flows.iloc[0]
    assert f.goodput_bps > 0.5 * CAPACITY_BPS
    ls = r.link_series
    on_wire = ls[(ls.link_id == 0) & (ls.dir == "ab")].tx_bytes.sum() / f.delivered_bytes
    # halfway between the plain and the tunnelled per-segment cost: the tunnel is really there
    assert on_wire > (PLAIN_BYTES_PER_PAYLOAD + TUNNEL_BYTES_PER_PAYLOAD) / 2, on_wire
    client = json.loads((tmp_path / "out" / "emu" / "client0.json").read_text())
    assert client["peer"].startswith("10.250.0.")


@pytest.mark.kernel
@needs_root
def test_openvpn_leaves_the_flows_mss_alone_so_full_segments_fragment(tmp_path):
    # OpenVPN 2.6 clamps a SYN's MSS option to fit 1492 B once encapsulated unless told
    # `--mssfix 0`; the simulator's `encap` (and study 000's sweep) keep the flow's MSS
    if shutil.which("openvpn") is None or shutil.which("openssl") is None:
        pytest.skip("needs openvpn and openssl (apt-get install openvpn)")
    text = VPN_SCENARIO.replace("mss = 1300", "mss = 1448").replace('"4 s"', '"3 s"')
    r = _emu(text, tmp_path, capture=False, vpn_server="vpn")
    f = r.flows.iloc[0]
    lines = (tmp_path / "out" / "emu" / "link_series.jsonl").read_text().splitlines()
    stats = next(d for d in map(json.loads, lines) if d["kind"] == "stats")
    frames = next(d["rx_frames"] for d in stats["dirs"] if (d["link_id"], d["dir"]) == (0, "ab"))
    # 1448 + 52 + 52 B > 1500: every full segment leaves as two IP fragments (clamped to fit
    # 1492 B, each left as one frame: fid-vpn, 50,281 frames for 50,151 segments)
    assert frames > 1.8 * f.sent_packets, (frames, f.sent_packets)


@pytest.mark.kernel
@needs_root
def test_cleanup_removes_runs_whose_runner_is_gone_and_leaves_live_ones(tmp_path):
    live_id, dead_id = host.new_run_id(), host.new_run_id()
    live_ns, dead_ns = f"satcc-{live_id}-n0-x", f"satcc-{dead_id}-n0-x"
    live = host.register_run(live_id)  # this test process: alive
    dead = host.RunRecord(dead_id, 2**22 + 12345, None)  # no such pid
    dead.write()
    try:
        for ns in (live_ns, dead_ns):
            host.run_cmd("ip", "netns", "add", ns)
        res = host.cleanup()
        assert dead_ns in res["removed"] and live_id in res["kept_live"]
        assert (host.NETNS_DIR / live_ns).exists() and not (host.NETNS_DIR / dead_ns).exists()
        assert not dead.path.exists() and live.path.exists()
    finally:
        host.delete_namespaces([live_ns, dead_ns])
        live.remove()
        dead.remove()


@pytest.mark.kernel
@needs_root
def test_ecn_marking_above_the_threshold_reaches_an_ecn_flow_intact(tmp_path):
    text = scenario_text(duration="3 s", extra="ecn = true").replace(
        'queue = "1 BDP"', 'queue = "1 BDP"\necn_threshold = 20'
    )
    r = _emu(text, tmp_path, capture=False)
    marks = r.link_series[r.link_series.dir == "ab"].ecn_marks.sum()
    assert marks > 0
    # marked packets keep a valid IP checksum: were they dropped by the receiver, each would be
    # retransmitted (CUBIC halves less than the queue needs, so goodput alone would not tell)
    assert r.flows.iloc[0].retransmitted_packets < 0.5 * marks
    assert _steady_goodput(r) > 0.5 * CAPACITY_BPS
    # the sender reacted to the marks before the 1-BDP queue overflowed: fewer drops than marks
    assert r.link_series.drops_queue.sum() < marks


@pytest.mark.kernel
@needs_root
def test_receive_steering_lands_on_the_node_ends_and_nowhere_else():
    run_id = host.new_run_id()
    record = host.register_run(run_id)
    plan = topology.plan(config_of(scenario_text()), run_id)
    try:
        topology.build(plan)
        assert topology.steer_rx(plan, [0]) == []

        def rps(ns: str, dev: str) -> int:
            path = f"/sys/class/net/{dev}/queues/rx-0/rps_cpus"
            text = host.run_cmd(*host.ns_cmd(ns, "cat", path)).stdout
            return int(text.strip().replace(",", ""), 16)

        for lp in plan.links:
            assert rps(plan.namespaces[lp.a], lp.node_if) == 1
            assert rps(plan.namespaces[lp.b], lp.node_if) == 1
            # the emulator's own ends keep receiving where the sender runs
            assert rps(plan.emu_ns, lp.a_if) == 0
            assert rps(plan.emu_ns, lp.b_if) == 0
    finally:
        host.delete_namespaces(plan.all_namespaces)
        record.remove()


def test_xfer_delivers_exactly_the_size_and_times_the_last_byte():
    # loopback only, no root: the limited-TCP pair the emulator starts in its namespaces
    import io
    import socket
    import threading

    from satcc.emu import xfer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server_out = io.StringIO()
    t = threading.Thread(target=xfer.serve, args=(port, server_out, "127.0.0.1"))
    t.start()
    size = 3_000_001  # not a multiple of the 128 KiB block
    client_out = io.StringIO()
    for _ in range(100):  # until the server listens
        try:
            xfer.send("127.0.0.1", port, size, 0, None, None, out=client_out)
            break
        except ConnectionRefusedError:
            threading.Event().wait(0.02)
    t.join(10)
    got = json.loads(server_out.getvalue())
    sent = json.loads(client_out.getvalue())
    assert got["bytes"] == size and sent["bytes"] == size
    assert isinstance(sent["total_retrans"], int)
    assert 0 < got["first_ns"] <= got["last_ns"]


LIMITED_TCP = """
[scenario]
duration = "8 s"
[[link]]
a = "s"
b = "r"
rate = "20 Mbit/s"
delay = "50 ms"
queue = "1 bdp"
[[flow]]
from = "s"
to = "r"
cca = "cubic"
size = "4 MB"
"""


@pytest.mark.kernel
@needs_root
def test_a_limited_tcp_flow_delivers_every_byte_and_ends_at_the_last(tmp_path):
    # iperf3 -n ended the test when the sender had written the bytes and dropped the send
    # buffer's tail (4 MB gave about 2 MB here); xfer ends when the receiver has the last one
    from satcc.engines import sim

    r = _emu(LIMITED_TCP, tmp_path, capture=False)
    f = r.flows.iloc[0]
    assert f.delivered_bytes == 4_000_000
    s = sim.run(sc.loads(LIMITED_TCP)).flows.iloc[0]
    # 4 MB at 20 Mbit/s is 1.6 s of payload plus slow start over a 100 ms RTT
    assert 1.6 < f.fct_s < 8.0
    assert abs(f.fct_s - s.fct_s) / s.fct_s < 0.25, (f.fct_s, s.fct_s)


LONG_RTT_BULK = """
[scenario]
duration = "2 s"
[[link]]
a = "s"
b = "r"
rate = "20 Mbit/s"
delay = "200 ms"
queue = "1 bdp"
[[flow]]
from = "s"
to = "r"
cca = "cubic"
"""


@pytest.mark.kernel
@needs_root
def test_a_bulk_flow_opens_its_connection_at_its_start_as_the_simulator_does(tmp_path):
    # iperf3's data connection opened after its control connection's three round trips and
    # sent after one more half (over 400 ms: established at about 1.6 s, data from 1.8 s; over
    # GEO 2.2 s of a 30 s run lost: fid-geo-hybla 7.4 vs 8.6 Mbit/s). xfer's SYN leaves at the
    # flow's start, so the connection is established one RTT in, as in the simulator.
    from satcc.engines import sim

    def established(result) -> float:
        fs = result.flow_series
        return float(fs[(fs.flow_id == 0) & fs.cwnd_pkts.notna()].t_s.min())

    kernel = established(_emu(LONG_RTT_BULK, tmp_path, capture=False))
    s = sim.run(sc.loads(LONG_RTT_BULK))
    fs = s.flow_series
    simulated = float(fs[(fs.flow_id == 0) & (fs.inflight_pkts > 0)].t_s.min())
    assert simulated == pytest.approx(0.4)
    # one bin of sampling slack (an `ss` call under load)
    assert kernel <= simulated + 0.15, (kernel, simulated)


def test_a_tcp_receiver_runs_the_flows_congestion_control():
    # iperf3's server set the client's -C on its socket; DCTCP's ECN echo and the SYN-ACK's
    # ECN acceptance are the receiver's, so xfer's receiver must set it too (without it
    # fid-dctcp-ecn ran without ECN: RTT 98 ms instead of 12)
    f = config_of(scenario_text(cca="dctcp"))["flows"][0]
    cmd = traffic.server_cmd("ns", f, "dctcp")
    assert "satcc.emu.xfer" in cmd and cmd[cmd.index("--cc") + 1] == "dctcp"
    assert "--cc" not in traffic.server_cmd("ns", f)
