"""The emulator's teardown leaves no BPF congestion control held by orphaned sockets:
a crashed run must not leave the kernel holding satcc's BPF programs.

Runs as root with BPF struct_ops available, under the machine's emulator lock:
`flock /tmp/satcc-emu.lock .venv/bin/python -m pytest tests/test_hostile_emu.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from satcc.emu import bpf, host
from tests.test_bpf import REASON

NS_A = f"satcc-hostile-{os.getpid()}-a"
NS_B = f"satcc-hostile-{os.getpid()}-b"
ADDR_A, ADDR_B = "10.251.0.1", "10.251.0.2"
PORT = 5299

# Fills the send buffer towards a peer that never reads, then waits to be killed: its socket
# then becomes an orphan in FIN-WAIT-1 with data queued, holding the congestion control.
CLIENT = textwrap.dedent("""
    import socket, sys, time
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, sys.argv[1].encode())
    s.connect((sys.argv[2], int(sys.argv[3])))
    s.setblocking(False)
    try:
        while True:
            s.send(b"x" * 65536)
    except BlockingIOError:
        pass
    print("full", flush=True)
    time.sleep(600)
""")
SERVER = textwrap.dedent("""
    import socket, sys, time
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    l.bind((sys.argv[1], int(sys.argv[2])))
    l.listen()
    print("listening", flush=True)
    c, _ = l.accept()
    time.sleep(600)
""")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.mark.kernel
@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_teardown_destroys_orphaned_sockets_so_no_bpf_congestion_control_lingers():
    kname = bpf.ensure_registered("hybla", {"rtt0": 37.0})
    procs = []
    try:
        _ip("netns", "add", NS_A)
        _ip("netns", "add", NS_B)
        _ip("-n", NS_A, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", NS_B)
        for ns, dev, addr in ((NS_A, "va", ADDR_A), (NS_B, "vb", ADDR_B)):
            _ip("-n", ns, "addr", "add", f"{addr}/30", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        server = subprocess.Popen(
            host.ns_cmd(NS_B, sys.executable, "-c", SERVER, ADDR_B, str(PORT)),
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(server)
        assert server.stdout.readline().strip() == "listening"
        client = subprocess.Popen(
            host.ns_cmd(NS_A, sys.executable, "-c", CLIENT, kname, ADDR_B, str(PORT)),
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(client)
        assert client.stdout.readline().strip() == "full"
        # The path goes away before the processes (as when satcc-linkd stops first): the
        # client's FIN and the server's RST never arrive.
        _ip("-n", NS_B, "link", "set", "vb", "down")

        left = host.delete_namespaces([NS_A, NS_B])
        assert left == []
        bpf.unregister(kname)
        deadline = time.monotonic() + 10  # the map is freed after an RCU grace period
        while any(e["name"] == kname for e in bpf.lingering()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(e["name"] == kname for e in bpf.lingering()), bpf.lingering()
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=10)
            p.stdout.close()
        for ns in (NS_A, NS_B):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10, check=False)
        bpf.unregister(kname)
