"""Real traffic and real measurement: iperf3 servers and clients, `ss -tin` samples, tcpdump.

- One iperf3 server per flow (port 5201 + flow id) in the receiver's namespace: an iperf3
  server runs one test at a time, so concurrent flows to one node need one each.
- Each flow is one iperf3 client in the sender's namespace with its data connection bound to
  client port 40000 + flow id (`--cport`), so `ss` and tcpdump can tell its data connection
  from iperf3's control connection. TCP: `-C cca -M mss`, `-t` past the run's end (the runner
  stops it at the end); UDP: `-u -b rate -l size`, `-n size` for limited ones.
- A limited TCP flow (`size`) is satcc.emu.xfer's sender and receiver instead, on the same
  ports: iperf3 -n ends the test when the sender has written the bytes and drops what is still
  buffered or in flight (xfer.py says why); xfer ends when the receiver has read the last byte.
- A flow with application traffic (`app` onoff or requests) is satcc.emu.xfer's `app` sender
  (started before the run's origin, connecting at the flow's start and writing on the
  scenario's clock) and its receiver, which times each request's last byte and groups reads
  into bursts (xfer.py).
- `ss -tinHO` in every namespace with a flow end, once per bin: cwnd, ssthresh, srtt,
  pacing rate, unacked, total retransmissions, data segments out, bytes acked/received.
- tcpdump (snaplen 128) on each receiver namespace's interfaces into the result directory.

Every child is started with PR_SET_PDEATHSIG (it survives `ip netns exec`'s exec), so a killed
runner takes its children with it; `host.cleanup` catches whatever still escapes.
"""

from __future__ import annotations

import ctypes
import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from satcc.emu.host import ns_cmd

SERVER_PORT_BASE = 5201
CLIENT_PORT_BASE = 40000
SNAPLEN = 128  # headers only: Ethernet + IPv4 + TCP with options fit; payload is not kept
PR_SET_PDEATHSIG = 1
TS_OPTION_BYTES = 12  # Linux's timestamps option as sent: NOP NOP kind len TSval TSecr
MSS_CLAMP_NO_TS = 1460  # 1500 MTU - 20 IP - 20 TCP
UDP_PAYLOAD_MAX = 1472  # 1500 MTU - 20 IP - 8 UDP

_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def spawn(
    cmd: list[str],
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
    stdin: Any = subprocess.DEVNULL,
) -> subprocess.Popen:
    # spawned from the main thread only (runner.py), so preexec_fn is safe here
    return subprocess.Popen(
        cmd,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        preexec_fn=_die_with_parent,  # noqa: PLW1509
    )


def kernel_cca(name: str) -> str:
    """satcc registry name -> the kernel's (`newreno` is the kernel's `reno`)."""
    return {"newreno": "reno"}.get(name, name)


def mss_option(flow: dict[str, Any]) -> list[str]:
    """iperf3 -M sets TCP_MAXSEG, the MSS before the timestamps option is taken off; the
    scenario's `mss` is payload per segment (Linux mss_cache), so add the option back. At the
    MTU's limit no clamp is needed."""
    clamp = flow["mss"] + (TS_OPTION_BYTES if flow["timestamps"] else 0)
    if clamp >= MSS_CLAMP_NO_TS:
        return []
    return ["-M", str(clamp)]


def tcp_flow(flow: dict[str, Any]) -> bool:
    """A TCP flow: carried by satcc.emu.xfer (its sender started before the run's origin,
    connecting at the flow's start), not iperf3 (xfer.py says why)."""
    return flow.get("proto", "tcp") == "tcp"


def limited_tcp(flow: dict[str, Any]) -> bool:
    """A TCP flow of a given size: its receiver's last byte ends it."""
    return bool(flow.get("size_bytes")) and tcp_flow(flow)


def app_flow(flow: dict[str, Any]) -> bool:
    """A TCP flow whose application is not bulk (on/off, requests): satcc.emu.xfer's `app`."""
    return (flow.get("app") or {"kind": "bulk"})["kind"] != "bulk"


def _xfer(*args: str) -> list[str]:
    return [sys.executable, "-m", "satcc.emu.xfer", *args]


def server_cmd(ns: str, flow: dict[str, Any], cca: str = "") -> list[str]:
    """The flow's receiver. A TCP receiver runs the flow's congestion control, as iperf3's
    server did (`-C` reaches it in the test's parameters): DCTCP's ECN echo is the receiver's
    (`dctcp_cwnd_event`), and a listener that needs ECN accepts it in the SYN-ACK."""
    port = str(SERVER_PORT_BASE + flow["id"])
    cc = ["--cc", cca] if cca else []
    if app_flow(flow):
        app, args = flow["app"], ["serve", port, *cc]
        if app["kind"] == "requests":
            args += ["--request-bytes", str(int(app["bytes"]))]
        else:  # onoff: an idle gap of half the off period separates two on-periods' data
            args += ["--gap-ns", str(int(app["off_ns"]) // 2)]
        return ns_cmd(ns, *_xfer(*args))
    if tcp_flow(flow):
        return ns_cmd(ns, *_xfer("serve", port, *cc))
    return ns_cmd(ns, "iperf3", "-s", "-1", "-J", "-p", port)


def tcp_client_cmd(
    ns: str, flow: dict[str, Any], dst_addr: str, cca: str, origin_ns: int | str, until_ns: int
) -> list[str]:
    """The sender of a TCP flow: connects at CLOCK_MONOTONIC `origin_ns` (the flow's start;
    `"stdin"`: read once it is up, xfer.py); writes its `size`, without end (bulk), or as its
    `app` says up to `until_ns` after it."""
    port, cport = SERVER_PORT_BASE + flow["id"], CLIENT_PORT_BASE + flow["id"]
    if app_flow(flow):
        args = ["app", dst_addr, str(port), json.dumps(flow["app"], sort_keys=True)]
        args += ["--until-ns", str(until_ns)]
    else:
        args = ["send", dst_addr, str(port)]
        if limited_tcp(flow):
            args.append(str(int(flow["size_bytes"])))
    args += ["--origin-ns", str(origin_ns)]
    return ns_cmd(ns, *_xfer(*args, *_socket_args(flow, cport, cca)))


def _socket_args(flow: dict[str, Any], cport: int, cca: str) -> list[str]:
    """`xfer`'s options for the sending socket: its port, algorithm, MSS and TCP_NODELAY."""
    args = ["--cport", str(cport), "--cc", cca]
    mss = mss_option(flow)
    if mss:
        args += ["--mss", mss[1]]
    if flow.get("nodelay"):
        args += ["--nodelay"]
    return args


def client_cmd(ns: str, flow: dict[str, Any], dst_addr: str, seconds: int) -> list[str]:
    """The iperf3 client of a UDP flow (TCP flows: `tcp_client_cmd`)."""
    cmd = [
        "iperf3",
        "-c",
        dst_addr,
        "-p",
        str(SERVER_PORT_BASE + flow["id"]),
        "-J",
        "--cport",
        str(CLIENT_PORT_BASE + flow["id"]),
    ]
    # the resolved flow's keys (satcc-core scenario::Flow: payload bit rate and size, as iperf3 -b / -l)
    size = min(int(flow.get("udp_payload_bytes") or UDP_PAYLOAD_MAX), UDP_PAYLOAD_MAX)
    cmd += ["-u", "-b", str(int(flow["udp_rate_bps"])), "-l", str(size)]
    if flow.get("size_bytes"):
        cmd += ["-n", str(int(flow["size_bytes"]))]
    else:
        cmd += ["-t", str(seconds)]
    return ns_cmd(ns, *cmd)


def tcpdump_cmd(ns: str, ifaces: list[str], path: Path) -> list[str]:
    iface = ifaces[0] if len(ifaces) == 1 else "any"
    return ns_cmd(
        ns, "tcpdump", "-i", iface, "-s", str(SNAPLEN), "-n", "-U", "-w", str(path), "tcp or udp"
    )


# -- ss ------------------------------------------------------------------------------------

_ENDPOINT = r"(?:\[?(?:::ffff:)?)([0-9.]+)\]?:(\d+)"
_LINE = re.compile(
    r"^(?:[A-Z][A-Z-]*\s+)?\d+\s+\d+\s+" + _ENDPOINT + r"\s+" + _ENDPOINT + r"\s+(.*)$"
)
_NUM = r"([0-9.]+)"
_FIELDS = {
    "cwnd": re.compile(r"\bcwnd:(\d+)"),
    "ssthresh": re.compile(r"\bssthresh:(\d+)"),
    "rtt": re.compile(r"\brtt:" + _NUM + "/"),
    "minrtt": re.compile(r"\bminrtt:" + _NUM),
    "pacing_rate": re.compile(r"\bpacing_rate " + _NUM + r"([KMG]?)bps"),
    "unacked": re.compile(r"\bunacked:(\d+)"),
    "retrans_total": re.compile(r"\bretrans:\d+/(\d+)"),
    "data_segs_out": re.compile(r"\bdata_segs_out:(\d+)"),
    "bytes_acked": re.compile(r"\bbytes_acked:(\d+)"),
    "bytes_received": re.compile(r"\bbytes_received:(\d+)"),
    "delivered": re.compile(r"\bdelivered:(\d+)"),
    "delivered_ce": re.compile(r"\bdelivered_ce:(\d+)"),
    "mss": re.compile(r"\bmss:(\d+)"),
}
# BBR's own state as `ss` prints it from `tcp_bbr_info` (`bbr:(bw:…bps,mrtt:…,pacing_gain:…,
# cwnd_gain:…)`): the bandwidth estimate (`bbr_bw` × mss, in bit/s), the min RTT (ms) and the
# two gains, which name the mode (2.89 STARTUP, 0.35 DRAIN, 1.25 / 0.75 / 1 PROBE_BW).
_BBR = re.compile(r"\bbbr:\(([^)]*)\)")
_BBR_FIELDS = {
    "bbr_bw": re.compile(r"\bbw:" + _NUM + r"([KMG]?)bps"),
    "bbr_mrtt": re.compile(r"\bmrtt:" + _NUM),
    "bbr_pacing_gain": re.compile(r"\bpacing_gain:" + _NUM),
    "bbr_cwnd_gain": re.compile(r"\bcwnd_gain:" + _NUM),
}
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_ss(text: str) -> dict[tuple[int, int], dict[str, float]]:
    """`ss -tinHO` output -> {(local port, peer port): fields} (IPv4 and v4-mapped IPv6)."""
    out: dict[tuple[int, int], dict[str, float]] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        lport, pport, rest = int(m.group(2)), int(m.group(4)), m.group(5)
        fields: dict[str, float] = {}
        for key, rx in _FIELDS.items():
            f = rx.search(rest)
            if not f:
                continue
            if key == "pacing_rate":
                fields[key] = float(f.group(1)) * _SCALE[f.group(2)]
            else:
                fields[key] = float(f.group(1))
        bbr = _BBR.search(rest)
        for key, rx in _BBR_FIELDS.items() if bbr else ():
            f = rx.search(bbr.group(1))
            if f:
                scale = _SCALE[f.group(2)] if key == "bbr_bw" else 1.0
                fields[key] = float(f.group(1)) * scale
        out[(lport, pport)] = fields
    return out


def ss_cmd(ns: str) -> list[str]:
    return ns_cmd(ns, "ss", "-tinHO", "state", "established")
