"""What the measuring host looked like for one run (flent's metadata, per run): kernel,
available congestion controls, the TCP sysctls that change results, the route to the server
(interface, MTU, qdisc, offloads) and satcc's version. Read from /proc and with `ip`, `tc`,
`ethtool`; a value that cannot be read is null with the reason in `errors`."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from satcc import _native

SYSCTLS = (
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_ecn",
    "net.core.default_qdisc",
)
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
OFFLOADS = (
    "tcp-segmentation-offload",
    "generic-segmentation-offload",
    "generic-receive-offload",
    "large-receive-offload",
)


def _proc(name: str) -> str:
    return "/proc/sys/" + name.replace(".", "/")


def available_ccas() -> list[str]:
    try:
        return AVAILABLE.read_text().split()
    except OSError:
        return []


def _cmd(*args: str) -> str | None:
    if shutil.which(args[0]) is None:
        return None
    try:
        p = subprocess.run(args, check=False, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def route(server_ip: str) -> dict[str, Any]:
    """`ip -j route get`: the interface and source address towards the server."""
    out = _cmd("ip", "-j", "route", "get", server_ip)
    if not out:
        return {}
    try:
        r = json.loads(out)[0]
    except (ValueError, IndexError, KeyError):
        return {}
    return {"dev": r.get("dev"), "src": r.get("prefsrc"), "gateway": r.get("gateway")}


def interface(dev: str) -> dict[str, Any]:
    out: dict[str, Any] = {"mtu": None, "qdisc": None, "offloads": {}}
    link = _cmd("ip", "-j", "link", "show", "dev", dev)
    if link:
        try:
            out["mtu"] = json.loads(link)[0].get("mtu")
        except (ValueError, IndexError):
            pass
    q = _cmd("tc", "qdisc", "show", "dev", dev)
    if q is not None:
        out["qdisc"] = [line.strip() for line in q.splitlines() if line.strip()]
    k = _cmd("ethtool", "-k", dev)
    if k:
        for line in k.splitlines():
            m = re.match(r"^\s*([a-z0-9-]+):\s*(on|off)", line)
            if m and m.group(1) in OFFLOADS:
                out["offloads"][m.group(1)] = m.group(2)
    return out


def collect(server_ip: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kernel": platform.release(),
        "hostname": platform.node(),
        "satcc_version": _native.version(),
        "tcp_available_congestion_control": available_ccas(),
        "sysctls": {},
        "route": {},
        "interface": {},
        "errors": [],
    }
    for name in SYSCTLS:
        try:
            doc["sysctls"][name] = Path(_proc(name)).read_text().strip()
        except OSError as e:
            doc["sysctls"][name] = None
            doc["errors"].append(f"{name}: {e.strerror}")
    if server_ip:
        doc["route"] = route(server_ip)
        dev = doc["route"].get("dev")
        if dev:
            doc["interface"] = interface(dev)
        else:
            doc["errors"].append(f"no route to {server_ip}")
    for tool, flag in (("iperf3", "--version"), ("ping", "-V"), ("tcpdump", "--version")):
        line = _cmd(tool, flag)
        doc.setdefault("tools", {})[tool] = line.strip().splitlines()[0] if line else None
    return doc
