"""The emulator's kernel counters and per-namespace TCP defaults: pure functions, no root."""

from __future__ import annotations

import json
import textwrap

from satcc import scenario as sc
from satcc.emu import topology
from satcc.emu.runner import parse_proc_net

NETSTAT = textwrap.dedent("""\
    TcpExt: SyncookiesSent TCPTimeouts TCPLossUndo TCPSpuriousRTOs TCPHystartDelayCwnd
    TcpExt: 0 4 3 1 2136
    IpExt: InNoRoutes InOctets
    IpExt: 0 123456
""")


def test_proc_net_netstat_name_and_value_lines_become_one_table_per_group():
    got = parse_proc_net(NETSTAT)
    assert got["TcpExt"] == {
        "SyncookiesSent": 0,
        "TCPTimeouts": 4,
        "TCPLossUndo": 3,
        "TCPSpuriousRTOs": 1,
        "TCPHystartDelayCwnd": 2136,
    }
    assert got["IpExt"]["InOctets"] == 123456


def test_a_truncated_or_mismatched_pair_is_skipped_not_misread():
    got = parse_proc_net("TcpExt: A B\nIpExt: 1 2\nTcp: X\nTcp: 7\n")
    assert "TcpExt" not in got and "IpExt" not in got
    assert got["Tcp"] == {"X": 7}


def test_every_namespace_defaults_to_reno_so_a_host_bbr_default_cannot_pace_cubic():
    # A socket born under the host's default (BBR here) stays paced after iperf3 switches it
    # to cubic; reno is the one default a namespace may always take, and it does not pace.
    text = textwrap.dedent("""
        [scenario]
        name = "t"
        duration = "5 s"
        [[link]]
        a = "client"
        b = "server"
        rate = "20 Mbit/s"
        delay = "25 ms"
        [[flow]]
        from = "client"
        to = "server"
        cca = "cubic"
    """)
    p = topology.plan(sc.resolve(sc.loads(text)), "e000009", subnet_octet=81)
    assert all(s["net.ipv4.tcp_congestion_control"] == "reno" for s in p.sysctls.values())


def _two_senders() -> dict:
    return sc.resolve(
        sc.loads(
            textwrap.dedent("""
        [scenario]
        name = "t"
        duration = "5 s"
        [[link]]
        a = "a"
        b = "r"
        rate = "20 Mbit/s"
        delay = "5 ms"
        [[link]]
        a = "b"
        b = "r"
        rate = "20 Mbit/s"
        delay = "5 ms"
        [[flow]]
        from = "a"
        to = "r"
        [[flow]]
        from = "b"
        to = "r"
        count = 2
    """)
        )
    )


def test_a_nodes_only_flow_gets_rto_and_recovery_counts_from_its_namespace(tmp_path):
    from satcc.emu.runner import Run

    config = _two_senders()
    run = Run(config, tmp_path)
    run.plan = topology.plan(config, "e00000a", subnet_octet=82)
    counters = {"TcpExt": {"TCPTimeouts": 4, "TCPSackRecovery": 78, "TCPRenoRecovery": 0}}
    for node in (0, 1):
        name = run.plan.nodes[node]
        (tmp_path / f"netstat-{node}-{name}.json").write_text(json.dumps(counters))
    flows = [{"rto_count": None, "recovery_count": None} for _ in config["flows"]]
    run._kernel_counts(flows)
    assert flows[0] == {"rto_count": 4, "recovery_count": 78}
    # Two flows leave node b: its counters cannot be split between them.
    assert flows[1] == flows[2] == {"rto_count": None, "recovery_count": None}


def test_each_flows_first_syn_and_data_come_from_satcc_linkd_by_its_ports():
    from satcc.emu.runner import first_on_wire

    flows = [{"id": 0}, {"id": 1, "proto": "udp"}, {"id": 2}]
    firsts = [
        {"sport": 40000, "dport": 5201, "syn_ns": 350_000, "data_ns": 40_400_000},
        {"sport": 40002, "dport": 5203, "syn_ns": 410_000, "data_ns": None},
        {"sport": 5201, "dport": 40000, "syn_ns": None, "data_ns": 20_000_000},  # the reverse
        {"sport": 40001, "dport": 5202, "syn_ns": 1, "data_ns": 2},  # not a TCP flow's ports
    ]
    assert first_on_wire(flows, firsts) == {
        "first_syn_ns": [350_000, None, 410_000],
        "first_data_ns": [40_400_000, None, None],
    }
    assert first_on_wire(flows, []) == {
        "first_syn_ns": [None, None, None],
        "first_data_ns": [None, None, None],
    }
