"""`satcc field --check`: what a plan needs from this host and the server, checked before any
run (and by default before a plan starts), so that a misspelt CCA or a missing tool fails in
seconds rather than hours into a plan.

    tools      iperf3 and ping here; tcpdump when the plan captures (root, `capture`)
    ping       an interval below 0.2 s needs root (iputils' floor for other users)
    server     the name resolves and its iperf3 port accepts a TCP connection
    ccas       each CCA of an upload is available here (tcp_available_congestion_control,
               or a module the kernel can load); each CCA of a download, at the server: a 1 s
               `iperf3 -R -C cca` run, which iperf3 refuses when the server lacks it
    clock      synchronised (needed for `align = "starlink"` unless --force, reported otherwise)

`known_ccas()` is what the flags accept at once: a name this host offers or can load, or one
satcc knows (a download's sender is the server, which may have more).
"""

from __future__ import annotations

import difflib
import os
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from satcc.errors import UserError
from satcc.field import clock, hostinfo
from satcc.field.plan import PING_USER_FLOOR_S, FieldPlan

CONNECT_TIMEOUT_S = 5.0
PROBE_S = 1  # the length of a download probe run (iperf3 -t)
PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Check:
    what: str
    ok: bool
    detail: str
    needed: bool = True  # a failed needed check stops the plan; others are reported

    def line(self) -> str:
        mark = "ok  " if self.ok else ("FAIL" if self.needed else "warn")
        return f"{mark} {self.what}: {self.detail}"


def loadable_ccas() -> list[str]:
    """CCAs whose module this kernel could load on demand (tcp_<name>.ko*)."""
    import platform
    from pathlib import Path

    base = Path("/lib/modules") / platform.release() / "kernel" / "net" / "ipv4"
    return sorted({p.name.split(".")[0].removeprefix("tcp_") for p in base.glob("tcp_*.ko*")})


def known_ccas() -> list[str]:
    """The names `--cca` accepts: available here, loadable here, or known to satcc."""
    from satcc import _native

    names = [*hostinfo.available_ccas(), *loadable_ccas(), *_native.cc_names()]
    return list(dict.fromkeys(names))


def check_cca_names(ccas: list[str], where: str) -> None:
    """Refuse a CCA name nobody here knows, at once, with the ones this host has."""
    known = known_ccas()
    for name in ccas:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        here = hostinfo.available_ccas() or loadable_ccas()
        raise UserError(
            f"{where}: ccas: unknown congestion control {name!r}"
            + (f" (did you mean {close[0]}?)" if close else "")
            + f"; available here: {', '.join(here) if here else 'none readable'}"
            + "; satcc knows: "
            + ", ".join(_native_names())
        )


def _native_names() -> list[str]:
    from satcc import _native

    return list(_native.cc_names())


def iperf3_probe_cmd(host: str, port: int, cca: str) -> list[str]:
    """A 1 s download with `cca` at the server: iperf3 fails with "unable to set
    TCP_CONGESTION" when the server lacks it."""
    return [
        "iperf3",
        "-c",
        host,
        "-p",
        str(port),
        "-t",
        str(PROBE_S),
        "-R",
        "-C",
        cca,
        "-J",
        "--connect-timeout",
        str(int(CONNECT_TIMEOUT_S * 1000)),
    ]


Runner = Callable[[list[str]], tuple[int, str]]


def _run(cmd: list[str]) -> tuple[int, str]:
    try:
        r = subprocess.run(
            cmd, check=False, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, str(e)
    return r.returncode, r.stdout + r.stderr


def _server_ccas(host: str, port: int, ccas: list[str], run: Runner) -> list[Check]:
    import json

    out = []
    for cca in ccas:
        code, text = run(iperf3_probe_cmd(host, port, cca))
        try:
            error = json.loads(text.split("\n\n")[0]).get("error") if text.strip() else None
        except ValueError:
            error = None
        if code == 0 and not error:
            out.append(Check(f"cca {cca} at the server", True, "a 1 s download ran with it"))
            continue
        why = error or text.strip().splitlines()[-1:] or ["iperf3 failed"]
        why = why if isinstance(why, str) else why[0]
        unavailable = "TCP_CONGESTION" in why or "congestion" in why.lower()
        out.append(
            Check(
                f"cca {cca} at the server",
                False,
                ("the server lacks it" if unavailable else "iperf3 could not tell")
                + f" (iperf3: {why[:160]})",
                needed=unavailable,
            )
        )
    return out


def run_checks(
    p: FieldPlan,
    run: Runner = _run,
    connect: Callable[[str, int], None] | None = None,
    is_root: bool | None = None,
    force: bool = False,
) -> list[Check]:
    """Every check of the module doc for plan `p`; `run`, `connect` and `is_root` stand in
    for the host in tests. `force` (as `satcc field --force`): an unsynchronised clock does
    not stop a Starlink-aligned plan."""
    root = os.geteuid() == 0 if is_root is None else is_root
    checks: list[Check] = []
    for tool in ("iperf3", "ping"):
        found = shutil.which(tool)
        checks.append(
            Check(f"{tool} here", found is not None, found or "not installed", tool == "iperf3")
        )
    wants_capture = p.capture is True or (p.capture == "auto" and root)
    if p.capture is not False:
        found = shutil.which("tcpdump")
        checks.append(
            Check(
                "tcpdump here",
                found is not None or not wants_capture,
                found
                or ("not installed" if wants_capture else "not installed (not root: no capture)"),
                needed=p.capture is True,
            )
        )
    if p.ping_interval_s < PING_USER_FLOOR_S:
        checks.append(
            Check(
                "ping interval",
                root,
                f"{p.ping_interval} "
                + ("(root)" if root else f"needs root (iputils' floor is {PING_USER_FLOOR_S:g} s)"),
            )
        )
    host, port = p.host_port()
    try:
        (connect or _connect)(host, port)
        checks.append(Check("server", True, f"{host} port {port} accepts a connection"))
        reachable = True
    except OSError as e:
        checks.append(Check("server", False, f"{host} port {port}: {e.strerror or e}"))
        reachable = False
    here = hostinfo.available_ccas()
    loadable = loadable_ccas()
    if "up" in p.directions or p.bidir:
        for cca in p.ccas:
            ok = cca in here or cca in loadable or not here
            detail = (
                "available"
                if cca in here
                else "its module can be loaded"
                if cca in loadable
                else "cannot read tcp_available_congestion_control"
                if not here
                else f"not available here ({' '.join(here)}); modprobe tcp_{cca}"
            )
            checks.append(Check(f"cca {cca} here", ok, detail))
    if "down" in p.directions or p.bidir:
        if reachable and shutil.which("iperf3"):
            checks += _server_ccas(host, port, p.ccas, run)
        else:
            checks.append(
                Check("ccas at the server", False, "not checked (no server or no iperf3)", False)
            )
    st = clock.check()
    checks.append(
        Check(
            "clock",
            st.usable(),
            f"{st.source}: {st.detail}",
            needed=p.align == "starlink" and not force,
        )
    )
    return checks


def _connect(host: str, port: int) -> None:
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
        pass


def failed(checks: list[Check]) -> list[Check]:
    return [c for c in checks if not c.ok and c.needed]
