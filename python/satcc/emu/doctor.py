"""`satcc emu doctor`: what this host supports for the emulator, and the fix for each gap.

Every check only reads (files under /proc and /sys, `--version` of tools, a throw-away
namespace and socket probe only when root), with one exception: as root it compiles each BPF
congestion control shipped with satcc (into the BPF cache, satcc.emu.bpf) and registers it, then
removes it at once, to show it loads; one already registered is left as it is. satcc-linkd is
run with --help, from where `satcc emu` would take it (the installed package, or a checkout's
target/release/ in development).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from satcc.emu import host

APT = "apt-get install -y"


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _version(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr).strip() else ""


def _tool(
    name: str, package: str, version_args: list[str], required: bool = True, why: str = ""
) -> Check:
    path = shutil.which(name)
    if path is None:
        return Check(name, False, f"not found{why}", f"{APT} {package}", required)
    return Check(name, True, _version([path, *version_args]) or path, "", required)


def _af_packet() -> Check:
    if os.geteuid() != 0:
        return Check("AF_PACKET", False, "cannot probe without root", "run the doctor as root")
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        s.close()
        return Check("AF_PACKET", True, "raw packet sockets work (satcc-linkd's I/O)")
    except OSError as e:
        return Check("AF_PACKET", False, str(e), "a kernel with CONFIG_PACKET=y")


def _af_xdp() -> Check:
    try:
        s = socket.socket(44, socket.SOCK_RAW, 0)  # AF_XDP = 44
        s.close()
        return Check(
            "AF_XDP", True, "available (not used: see crates/satcc-emu/README.md)", required=False
        )
    except OSError as e:
        return Check("AF_XDP", False, f"{e} (not needed)", "CONFIG_XDP_SOCKETS=y", required=False)


def _netns_veth() -> list[Check]:
    out = []
    ns_ok = Path("/proc/self/ns/net").exists()
    out.append(
        Check(
            "network namespaces",
            ns_ok,
            "supported" if ns_ok else "missing",
            "a kernel with CONFIG_NET_NS=y",
        )
    )
    veth = (
        Path("/sys/module/veth").exists()
        or _in_modules("veth")
        or " veth_xmit" in _read("/proc/kallsyms", limit=0)
    )
    out.append(
        Check(
            "veth", veth, "available" if veth else "module not found", "modprobe veth (CONFIG_VETH)"
        )
    )
    return out


def _in_modules(name: str) -> bool:
    release = os.uname().release
    for f in (f"/lib/modules/{release}/modules.builtin", f"/lib/modules/{release}/modules.dep"):
        try:
            if f"/{name}.ko" in Path(f).read_text():
                return True
        except OSError:
            pass
    return False


def _ccas() -> Check:
    try:
        names = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return Check("congestion controls", False, "cannot read", "a Linux kernel with TCP")
    return Check("congestion controls", True, " ".join(names) + " (built in; others via BPF)")


def _qdiscs() -> Check:
    found = []
    for q in ("netem", "fq", "fq_codel", "tbf", "htb"):
        if Path(f"/sys/module/sch_{q}").exists() or _in_modules(f"sch_{q}"):
            found.append(q)
    return Check(
        "qdiscs",
        True,
        (" ".join(found) or "none found") + " (not needed: satcc-linkd emulates links itself)",
        required=False,
    )


def _bpf() -> list[Check]:
    """The BPF struct_ops checks of satcc.emu.bpf (clang, bpftool, BTF, kfuncs...)."""
    try:
        from satcc.emu import bpf

        info = bpf.available()
    except Exception as e:  # noqa: BLE001 - the doctor reports, it does not fail
        return [Check("BPF congestion controls", False, f"unavailable: {e}", "", required=False)]
    out = [
        Check(f"BPF: {c['name']}", c["ok"], c["detail"], c.get("fix", ""), required=False)
        for c in info["checks"]
    ]
    algos = ", ".join(info.get("algorithms") or []) or "none"
    out.append(
        Check(
            "BPF congestion controls",
            info["ok"],
            f"buildable here: {algos}",
            "see the BPF lines above",
            required=False,
        )
    )
    if info["ok"]:
        out.append(_bpf_load(list(info.get("algorithms") or [])))
    return out


def _bpf_load(algorithms: list[str]) -> Check:
    """Compile and register each shipped BPF congestion control (root), then remove it."""
    from satcc.emu import bpf

    name = "BPF: packaged CCAs load"
    if os.geteuid() != 0:
        return Check(name, False, "not tried without root", "run the doctor as root", False)
    if not algorithms:
        return Check(name, False, "none buildable here", "see the BPF lines above", False)
    loaded, failed = [], []
    for a in algorithms:
        try:
            before = bpf.registered()
            kname = bpf.ensure_registered(a)
            if kname not in before:
                bpf.unregister(kname)
            loaded.append(a)
        except Exception as e:  # noqa: BLE001 - the doctor reports, it does not fail
            failed.append(f"{a}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    detail = f"loaded and removed: {', '.join(loaded) or 'none'}"
    if failed:
        detail += "; failed: " + "; ".join(failed)
    return Check(name, not failed, f"{detail} (from {bpf.source_dir()})", "see the error", False)


def _linkd() -> Check:
    """satcc-linkd where `satcc emu` would take it, run with --help."""
    fix = "cargo build -p satcc-emu --release"
    try:
        from satcc.emu import linkd

        path, origin = linkd.locate()
    except Exception as e:  # noqa: BLE001
        return Check("satcc-linkd", False, str(e), fix)
    if origin == "the installed package":
        fix = linkd.REINSTALL
    if not path.is_file():
        if origin == "the development checkout" and shutil.which("cargo"):
            return Check("satcc-linkd", True, f"{path}: built on first use with cargo")
        return Check("satcc-linkd", False, f"{path} ({origin}): no such file", fix)
    try:
        p = subprocess.run(
            [str(path), "--help"], capture_output=True, text=True, timeout=5, check=False
        )
        runs = p.returncode == 0 and p.stdout.startswith("usage: satcc-linkd")
        why = (p.stderr or p.stdout).strip()[-200:]
    except (OSError, subprocess.TimeoutExpired) as e:
        runs, why = False, str(e)
    if not runs:
        return Check("satcc-linkd", False, f"{path} ({origin}) does not run: {why}", fix)
    return Check("satcc-linkd", True, f"{path} ({origin}) runs")


def _read(path: str, limit: int = 1 << 20) -> str:
    try:
        with open(path) as fh:
            return fh.read() if limit == 0 else fh.read(limit)
    except OSError:
        return ""


def checks() -> list[Check]:
    root = os.geteuid() == 0
    out = [
        Check(
            "root",
            root,
            "yes" if root else f"running as uid {os.geteuid()}",
            "run as root: sudo .venv/bin/satcc emu ...",
        )
    ]
    out += _netns_veth()
    out.append(_af_packet())
    out.append(_af_xdp())
    out += [
        _tool("ip", "iproute2", ["-V"]),
        _tool("ss", "iproute2", ["--version"]),
        _tool("ethtool", "ethtool", ["--version"]),
        _tool("iperf3", "iperf3", ["--version"]),
        _tool("tcpdump", "tcpdump", ["--version"]),
        _tool("ping", "iputils-ping", ["-V"]),
        _tool("openvpn", "openvpn", ["--version"], required=False, why=" (study 000's VPN, --vpn)"),
        _tool("openssl", "openssl", ["version"], required=False, why=" (the VPN's certificates)"),
    ]
    out.append(_ccas())
    out.append(_qdiscs())
    out += _bpf()
    out.append(_linkd())
    live = set(host.live_runs())
    stale = [ns for ns in host.list_namespaces() if host.NS_RE.match(ns).group(1) not in live]
    detail = ", ".join(stale) if stale else "none"
    if live:
        detail += f" (runs in progress: {', '.join(sorted(live))})"
    out.append(
        Check("leftover namespaces", not stale, detail, "satcc emu --cleanup", required=False)
    )
    return out


def report(items: list[Check]) -> str:
    width = max(len(c.name) for c in items)
    lines = []
    for c in items:
        mark = "ok " if c.ok else ("MISSING" if c.required else "no ")
        line = f"{mark:7} {c.name.ljust(width)}  {c.detail}"
        if not c.ok and c.fix:
            line += f"\n        {' ' * width}  fix: {c.fix}"
        lines.append(line)
    bad = [c.name for c in items if c.required and not c.ok]
    lines.append("ready to emulate" if not bad else f"not ready: {', '.join(bad)}")
    return "\n".join(lines)
