"""Study 000's VPN in the emulator: real OpenVPN (Debian's) between the flows' end nodes and a
"VPN server" node, so terminal-to-terminal flows cross a real tunnel with its real overhead.

    client A ══ OpenVPN/UDP ══► server S ══ OpenVPN/UDP ══► client B     (over the emulated links)
       tun satcc-vpn 10.250.0.(10+i)    tun satcc-vpn 10.250.0.1

- TLS mode as a user would run it: a throw-away CA and certificates (ECDSA P-256, made with the
  openssl CLI in the run's directory, valid 2 days), `--dh none` (ECDHE), AES-256-GCM data
  channel, UDP port 1194, `--topology subnet`; each client gets a fixed address from a
  client-config-dir entry. Client-to-client packets go up the server's tun device and back down
  it through the server namespace's kernel routing (`ip_forward`), as through SoftEther's
  server in study 000, not short-cut inside OpenVPN (`client-to-client` is off).
- Tunnel MTU 1500 (OpenVPN's default); encapsulated packets larger than the path MTU are
  fragmented by the kernel (OpenVPN's `mtu-disc` default), which is what study 000's MSS sweep
  measures. `--mssfix 0`: the flow's `mss` is what TCP uses. OpenVPN 2.6 otherwise clamps the
  MSS option of every SYN crossing the tunnel so that an encapsulated segment fits 1492 B
  (MSSFIX_DEFAULT 1492, `mtu` semantics): measured on fid-vpn before this option, every
  segment left as one 1492 B frame carrying ~1388 B instead of the flow's 1448 in two fragments.

- OpenVPN runs in the real-time class (`chrt --fifo`, priority OPENVPN_RT_PRIORITY, below
  satcc-linkd's 10): in the emulator it is a forwarder of the emulated network, like
  satcc-linkd, and its pauses are this host's, not the hub's. fid-vpn's two 20 Mbit/s links in
  series keep whatever a pause backs up on the second link (it drains only when the first
  idles), so a standing queue there is the longest pause. Measured per packet (the VPN node's
  capture, encrypted datagram in on link 1 to re-encrypted datagram out on link 2, 10 s of
  fid-vpn at load 18-21): in the normal class p50 9.1 ms, p99 91 ms, max 107 ms; in the FIFO
  class p50 0.09 ms, p99 0.23 ms, max 8.7 ms (docs/fidelity.md, "Misses looked into").

Deviations from study 000: OpenVPN instead of SoftEther (different per-packet overhead: OpenVPN
UDP + AES-256-GCM ≈ 20 IP + 8 UDP + 1 opcode/peer-id 3 + 4 packet id + 16 tag = ~52 B per packet
versus SoftEther's TCP-over-TLS framing).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from satcc.emu import traffic
from satcc.emu.host import EmuError, ns_cmd, run_cmd
from satcc.emu.topology import Plan

DEV = "satcc-vpn"
PORT = 1194
SUBNET = "10.250.0"
SERVER_ADDR = f"{SUBNET}.1"
CLIENT_BASE = 10  # client i gets 10.250.0.(10 + i)
READY_TIMEOUT_S = 20.0
# SCHED_FIFO priority of the OpenVPN processes: real-time, as satcc-linkd (its default 10,
# crates/satcc-emu config.rs DEFAULT_RT_PRIORITY), and below it, so that the emulator's link
# timing keeps precedence. OpenVPN blocks between packets (about 10 % of a core at 20 Mbit/s);
# the kernel's RT throttling caps the class at 95 % of a core in any case.
OPENVPN_RT_PRIORITY = 5
CIPHER = "AES-256-GCM"
CERT_DAYS = "2"


def client_addr(node: int) -> str:
    return f"{SUBNET}.{CLIENT_BASE + node}"


def _openssl(*args: str, cwd: Path) -> None:
    p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise EmuError(f"openssl {' '.join(args[:2])} failed: {p.stderr.strip()[-400:]}")


def make_pki(d: Path, names: list[str]) -> None:
    """A CA and one certificate per name (ECDSA P-256), all in `d`."""
    d.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        CERT_DAYS,
        "-subj",
        "/CN=satcc-emu-ca",
        cwd=d,
    )
    for name in names:
        _openssl(
            "req",
            *ec,
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
            cwd=d,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.crt",
            "-days",
            CERT_DAYS,
            cwd=d,
        )


def openvpn_cmd(ns: str, args: list[str]) -> list[str]:
    """The command line of one OpenVPN process in namespace `ns`: in the real-time class at
    OPENVPN_RT_PRIORITY (module docstring)."""
    return ns_cmd(ns, "chrt", "--fifo", str(OPENVPN_RT_PRIORITY), "openvpn", *args)


class Vpn:
    """OpenVPN server in `server`'s namespace, one client in each of `clients`' namespaces."""

    def __init__(self, plan: Plan, server: int, clients: list[int], workdir: Path):
        if server in clients:
            raise EmuError(f"the VPN server node {plan.nodes[server]!r} cannot also be a client")
        self.plan = plan
        self.server = server
        self.clients = clients
        self.dir = workdir / "vpn"
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        names = ["server"] + [f"client{c}" for c in self.clients]
        make_pki(self.dir, names)
        ccd = self.dir / "ccd"
        ccd.mkdir(exist_ok=True)
        for c in self.clients:
            (ccd / f"client{c}").write_text(f"ifconfig-push {client_addr(c)} 255.255.255.0\n")
        server_ns = self.plan.namespaces[self.server]
        common = [
            "--dev",
            DEV,
            "--dev-type",
            "tun",
            "--proto",
            "udp",
            "--data-ciphers",
            CIPHER,
            "--ca",
            str(self.dir / "ca.crt"),
            "--verb",
            "3",
            "--persist-key",
            # no MSS clamping (2.6 clamps to 1492 B by default): the scenario's mss is TCP's
            "--mssfix",
            "0",
        ]
        self._spawn(
            server_ns,
            "server",
            [
                "--mode",
                "server",
                "--tls-server",
                "--topology",
                "subnet",
                "--ifconfig",
                SERVER_ADDR,
                "255.255.255.0",
                "--port",
                str(PORT),
                # bound to the address the clients dial, so replies never leave from another one
                "--local",
                self.plan.primary_addr[self.server],
                "--cert",
                str(self.dir / "server.crt"),
                "--key",
                str(self.dir / "server.key"),
                "--dh",
                "none",
                "--client-config-dir",
                str(ccd),
                "--ccd-exclusive",
                "--keepalive",
                "10",
                "60",
                *common,
            ],
        )
        server_addr = self.plan.primary_addr[self.server]
        for c in self.clients:
            self._spawn(
                self.plan.namespaces[c],
                f"client{c}",
                [
                    "--client",
                    "--remote",
                    server_addr,
                    str(PORT),
                    "--nobind",
                    "--topology",
                    "subnet",
                    "--cert",
                    str(self.dir / f"client{c}.crt"),
                    "--key",
                    str(self.dir / f"client{c}.key"),
                    *common,
                ],
            )
        self._wait_up()

    def _spawn(self, ns: str, name: str, args: list[str]) -> None:
        with open(self.dir / f"{name}.log", "w") as log:
            self.procs.append(traffic.spawn(openvpn_cmd(ns, args), stdout=log, stderr=log))

    def _wait_up(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        waiting = set(self.clients)
        while waiting and time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise EmuError(f"openvpn exited: see {self.dir}/*.log")
            for c in list(waiting):
                out = run_cmd(
                    "ip",
                    "-n",
                    self.plan.namespaces[c],
                    "-4",
                    "addr",
                    "show",
                    "dev",
                    DEV,
                    check=False,
                ).stdout
                if client_addr(c) in out:
                    waiting.discard(c)
            time.sleep(0.1)
        if waiting:
            names = ", ".join(self.plan.nodes[c] for c in sorted(waiting))
            raise EmuError(
                f"the VPN did not come up for {names} within {READY_TIMEOUT_S:g} s; "
                f"see {self.dir}/*.log"
            )
        # one ping through every tunnel, so the first flow does not pay for the handshake's end
        for c in self.clients:
            run_cmd(
                *ns_cmd(self.plan.namespaces[c], "ping", "-c", "1", "-W", "5", "-q", SERVER_ADDR),
                check=False,
                timeout=10,
            )

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(3.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
