"""The emulator's kernel counters and per-namespace TCP defaults: pure functions, no root."""

from __future__ import annotations

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
    assert got["TcpExt"] == {"SyncookiesSent": 0, "TCPTimeouts": 4, "TCPLossUndo": 3,
                             "TCPSpuriousRTOs": 1, "TCPHystartDelayCwnd": 2136}
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
