"""Real-kernel capture testbed: three network namespaces (client, router, server) joined by veth pairs, a tbf
bottleneck, iperf3 with a chosen congestion control, tcpdump at the sender side.

Used by the analyzer's tests and benchmark to make real captures (needs root, iproute2,
iperf3, tcpdump; ethtool to turn segmentation offloads off so the capture shows wire-sized
segments, as studies 000/001 did). Everything lives in namespaces named ``satcc-test-*`` that
are deleted in ``finally`` blocks; no traffic leaves them.

| parameter | default | unit | meaning |
|---|---|---|---|
| ``rate`` | ``"20mbit"`` | tc rate | tbf rate, both directions |
| ``queue_bytes`` | 30000 | bytes | tbf ``limit``: the bottleneck buffer |
| ``snaplen`` | 128 | bytes | tcpdump ``-s`` |
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PREFIX = "satcc-test-"
_counter = itertools.count()

V4_A, V4_B = "10.213.1.1", "10.213.2.2"
V6_A, V6_B = "fd00:5a7c:1::1", "fd00:5a7c:2::2"
_R4 = ("10.213.1.254", "10.213.2.254")
_R6 = ("fd00:5a7c:1::fe", "fd00:5a7c:2::fe")


def available() -> str | None:
    """None if the testbed can run here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "tc", "iperf3", "tcpdump"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    return None


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=check, capture_output=True, text=True)


@dataclass
class Pair:
    ns_a: str
    ns_b: str
    ns_r: str
    if_a: str
    if_b: str

    def exec_a(self, *cmd: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns_a, *cmd]

    def exec_b(self, *cmd: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns_b, *cmd]


@contextmanager
def netns_pair(rate: str = "20mbit", queue_bytes: int = 30000, burst_bytes: int = 15000):
    """Namespaces A - R - B joined by veth pairs; R forwards and has a tbf bottleneck on both
    egresses (so drops happen in the network, not in the sender's own qdisc, where TCP Small
    Queues would hide them). All three are deleted on exit."""
    n = f"{os.getpid()}-{next(_counter)}"
    pair = Pair(
        f"{PREFIX}{n}-a", f"{PREFIX}{n}-b", f"{PREFIX}{n}-r", f"sct{n}a"[-15:], f"sct{n}b"[-15:]
    )
    ra, rb = f"sct{n}ra"[-15:], f"sct{n}rb"[-15:]
    try:
        for ns in (pair.ns_a, pair.ns_b, pair.ns_r):
            _run("ip", "netns", "add", ns)
            _run("ip", "-n", ns, "link", "set", "lo", "up")
        _run(
            "ip",
            "link",
            "add",
            "name",
            pair.if_a,
            "netns",
            pair.ns_a,
            "type",
            "veth",
            "peer",
            "name",
            ra,
            "netns",
            pair.ns_r,
        )
        _run(
            "ip",
            "link",
            "add",
            "name",
            pair.if_b,
            "netns",
            pair.ns_b,
            "type",
            "veth",
            "peer",
            "name",
            rb,
            "netns",
            pair.ns_r,
        )
        _run("ip", "netns", "exec", pair.ns_r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        _run("ip", "netns", "exec", pair.ns_r, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
        for ns, ifname, v4, v6, r4, r6 in (
            (pair.ns_a, pair.if_a, V4_A, V6_A, _R4[0], _R6[0]),
            (pair.ns_b, pair.if_b, V4_B, V6_B, _R4[1], _R6[1]),
        ):
            _run("ip", "-n", ns, "addr", "add", f"{v4}/24", "dev", ifname)
            _run("ip", "-n", ns, "addr", "add", f"{v6}/64", "dev", ifname, "nodad")
            _run("ip", "-n", ns, "link", "set", ifname, "up")
            _run("ip", "-n", ns, "route", "add", "default", "via", r4)
            _run("ip", "-n", ns, "-6", "route", "add", "default", "via", r6)
        for ifname, r4, r6 in ((ra, *_R4[:1], _R6[0]), (rb, _R4[1], _R6[1])):
            _run("ip", "-n", pair.ns_r, "addr", "add", f"{r4}/24", "dev", ifname)
            _run("ip", "-n", pair.ns_r, "addr", "add", f"{r6}/64", "dev", ifname, "nodad")
            _run("ip", "-n", pair.ns_r, "link", "set", ifname, "up")
            _run(
                "tc",
                "-n",
                pair.ns_r,
                "qdisc",
                "add",
                "dev",
                ifname,
                "root",
                "tbf",
                "rate",
                rate,
                "burst",
                str(burst_bytes),
                "limit",
                str(queue_bytes),
            )
        if shutil.which("ethtool"):
            for ns, ifname in (
                (pair.ns_a, pair.if_a),
                (pair.ns_b, pair.if_b),
                (pair.ns_r, ra),
                (pair.ns_r, rb),
            ):
                _run(
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "ethtool",
                    "-K",
                    ifname,
                    "tso",
                    "off",
                    "gso",
                    "off",
                    "gro",
                    "off",
                    check=False,
                )
        yield pair
    finally:
        for ns in (pair.ns_a, pair.ns_b, pair.ns_r):
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def cleanup_stale() -> None:
    """Delete namespaces left by a crashed run of this process's tests (same prefix)."""
    out = subprocess.run(
        ["ip", "netns", "list"], check=False, capture_output=True, text=True
    ).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.strip() else ""
        if name.startswith(PREFIX):
            pid = name[len(PREFIX) :].split("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def _start_tcpdump(cmd: list[str]) -> subprocess.Popen:
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert p.stderr is not None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if "listening on" in line or not line:
            break
    return p


def iperf_capture(
    pcap: Path,
    *,
    cca: str = "cubic",
    seconds: float = 3,
    udp_bitrate: str | None = None,
    parallel: int = 1,
    reverse: bool = False,
    ipv6: bool = False,
    rate: str = "20mbit",
    queue_bytes: int = 30000,
    snaplen: int = 128,
    mss: int | None = None,
    capture_at: str = "a",
    pcapng: bool = False,
    buffer_kib: int = 32768,
    burst_bytes: int = 15000,
    window: str | None = None,
) -> dict:
    """Run one iperf3 test A->B (B->A with ``reverse``) through the bottleneck, capturing at
    ``capture_at`` ("a" = client side). Returns {"client": json, "server": json,
    "tcpdump_dropped": packets tcpdump reported dropped by the kernel (a loaded machine)}.
    ``window`` is iperf3's ``-w`` (socket buffer sizes, so the receive window, e.g. "16K")."""
    with netns_pair(rate=rate, queue_bytes=queue_bytes, burst_bytes=burst_bytes) as pair:
        server_ip = V6_B if ipv6 else V4_B
        server = subprocess.Popen(
            pair.exec_b("iperf3", "-s", "-1", "-J"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        ns_cap, if_cap = (pair.ns_a, pair.if_a) if capture_at == "a" else (pair.ns_b, pair.if_b)
        # tcpdump writes pcap; for pcapng (nanosecond stamps) editcap converts it afterwards.
        raw = pcap.with_name(pcap.name + ".raw") if pcapng else pcap
        dump_cmd = [
            "ip",
            "netns",
            "exec",
            ns_cap,
            "tcpdump",
            "-i",
            if_cap,
            "-s",
            str(snaplen),
            "-B",
            str(buffer_kib),
            "-n",
            "-w",
            str(raw),
        ]
        if pcapng:
            dump_cmd[-2:-2] = ["--time-stamp-precision", "nano"]
        dump = _start_tcpdump(dump_cmd)
        try:
            time.sleep(0.3)  # let the server bind
            cmd = ["iperf3", "-c", server_ip, "-t", str(seconds), "-J", "-C", cca]
            if udp_bitrate:
                cmd += ["-u", "-b", udp_bitrate]
            if parallel > 1:
                cmd += ["-P", str(parallel)]
            if reverse:
                cmd += ["-R"]
            if mss:
                cmd += ["-M", str(mss)]
            if window:
                cmd += ["-w", window]
            client = subprocess.run(
                pair.exec_a(*cmd), check=False, capture_output=True, text=True, timeout=seconds + 30
            )
            server_out, _ = server.communicate(timeout=15)
            # tcpdump hands packets over in blocks with a 1 s timeout; stopping earlier would
            # drop the last partial block.
            time.sleep(1.2)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
            dump.send_signal(signal.SIGINT)
            try:
                dump.wait(timeout=10)
            except subprocess.TimeoutExpired:
                dump.kill()
                dump.wait()
            dump_err = ""
            if dump.stderr is not None:
                dump_err = dump.stderr.read()
                dump.stderr.close()
        if pcapng:
            _run("editcap", "-F", "pcapng", str(raw), str(pcap))
            raw.unlink()
        if client.returncode != 0:
            raise RuntimeError(
                f"iperf3 client failed: {client.stdout[-500:]} {client.stderr[-500:]}"
            )
        m = re.search(r"(\d+) packets? dropped by kernel", dump_err)
        return {
            "client": json.loads(client.stdout),
            "server": json.loads(server_out),
            "tcpdump_dropped": int(m.group(1)) if m else None,
        }


def ping_log(count: int = 5, interval: float = 0.2, tool: str = "ping") -> str:
    """Ping (or nping) B from A through the testbed; returns the tool's text output."""
    with netns_pair() as pair:
        if tool == "ping":
            cmd = ["ping", "-c", str(count), "-i", str(interval), V4_B]
        else:
            cmd = ["nping", "--icmp", "-c", str(count), "--delay", f"{interval}s", V4_B]
        return subprocess.run(
            pair.exec_a(*cmd), check=False, capture_output=True, text=True, timeout=60
        ).stdout
