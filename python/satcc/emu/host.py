"""What the emulator does to the host, and how it undoes it: commands, namespaces, processes.

The host is sacred (DESIGN.md): everything satcc's `emu` creates is a network namespace named
`satcc-e<6 hex>-...` (interfaces live inside them, named `satcc-...`), plus one record file per
run in `/run/satcc/emu/`, written *before* anything is created. A run's record names the runner's
pid (and its start time, against pid reuse); a run whose runner is gone is stale, and
`cleanup()` removes it: every process inside its namespaces (started by the run: iperf3,
tcpdump, satcc-linkd), then the namespaces (which takes their veths with them), then the record.
Namespaces of other tools (the analyzer's `satcc-test-*`) never match the pattern.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from satcc.errors import SatccError

NETNS_DIR = Path("/run/netns")
REGISTRY_DIR = Path("/run/satcc/emu")
RUN_ID_RE = re.compile(r"^e[0-9a-f]{6}$")
NS_RE = re.compile(r"^satcc-(e[0-9a-f]{6})-")
KILL_GRACE_S = 2.0  # SIGTERM, then SIGKILL after this


class EmuError(SatccError):
    """The emulator could not set up, run or clean up; the message says what to do."""


def require_root() -> None:
    """Raise before anything is touched if we are not root."""
    if os.geteuid() != 0:
        raise EmuError(
            "the emulator needs root (network namespaces, veth pairs, AF_PACKET); "
            "run it with sudo, e.g. `sudo .venv/bin/satcc emu FILE`"
        )


def new_run_id() -> str:
    """`e` + 6 random hex digits (not model randomness: only a name)."""
    return "e" + secrets.token_hex(3)


def run_cmd(*args: str, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess:
    """Run a command, capture its output; a failure raises EmuError with its stderr."""
    try:
        p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise EmuError(f"{args[0]}: not found; `satcc emu doctor` lists what to install") from None
    except subprocess.TimeoutExpired:
        raise EmuError(f"{' '.join(args)}: timed out after {timeout:g} s") from None
    if check and p.returncode != 0:
        raise EmuError(f"`{' '.join(args)}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return p


def ns_cmd(ns: str, *args: str) -> list[str]:
    """A command line that runs `args` inside namespace `ns`."""
    return ["ip", "netns", "exec", ns, *args]


# -- namespaces and processes -------------------------------------------------------------


def list_namespaces() -> list[str]:
    """Every satcc emulator namespace on the host (any run)."""
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if NS_RE.match(n))


def _ns_key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def pids_in(namespaces: list[str]) -> list[int]:
    """Pids of processes whose network namespace is one of `namespaces`."""
    keys = {k for k in (_ns_key(NETNS_DIR / n) for n in namespaces) if k is not None}
    if not keys:
        return []
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        k = _ns_key(Path("/proc") / entry / "ns" / "net")
        if k in keys:
            out.append(int(entry))
    return out


def kill_pids(pids: list[int], grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM each pid, SIGKILL what is left after `grace_s`."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if _alive(p)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False


def _start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (clock ticks since boot): a pid's identity with its number."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def kill_sockets(namespaces: list[str]) -> None:
    """Destroy every TCP socket left in the namespaces (`ss -K`, SOCK_DESTROY). Killing the
    processes leaves orphaned sockets (FIN-WAIT, LAST-ACK) that live on after the namespace
    is deleted, each holding its congestion control: a BPF one then cannot be freed (it
    stays TOBEFREE, `satcc.emu.bpf.lingering()`) until they time out, minutes later."""
    for ns in namespaces:
        if (NETNS_DIR / ns).exists():
            subprocess.run(
                ns_cmd(ns, "ss", "-K", "-t", "-a"), capture_output=True, check=False, timeout=10
            )


def delete_namespaces(namespaces: list[str]) -> list[str]:
    """Kill what runs inside, destroy the sockets left, then delete; returns the namespaces
    that could not be deleted."""
    kill_pids(pids_in(namespaces))
    kill_sockets(namespaces)
    left = []
    for ns in namespaces:
        if not (NETNS_DIR / ns).exists():
            continue
        p = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True, check=False)
        if p.returncode != 0 and (NETNS_DIR / ns).exists():
            left.append(ns)
    return left


# -- run records ------------------------------------------------------------------------


@dataclass
class RunRecord:
    run_id: str
    pid: int
    pid_start: int | None

    @property
    def path(self) -> Path:
        return REGISTRY_DIR / f"{self.run_id}.json"

    def write(self) -> None:
        REGISTRY_DIR.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps({"run_id": self.run_id, "pid": self.pid, "pid_start": self.pid_start})
        )
        os.replace(tmp, self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def live(self) -> bool:
        """Whether the runner that made this run is still running."""
        return _alive(self.pid) and _start_time(self.pid) == self.pid_start


def register_run(run_id: str) -> RunRecord:
    rec = RunRecord(run_id, os.getpid(), _start_time(os.getpid()))
    rec.write()
    return rec


def _records() -> dict[str, RunRecord]:
    out = {}
    try:
        files = list(REGISTRY_DIR.glob("e*.json"))
    except OSError:
        return out
    for f in files:
        try:
            d = json.loads(f.read_text())
            rec = RunRecord(str(d["run_id"]), int(d["pid"]), d.get("pid_start"))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if RUN_ID_RE.match(rec.run_id):
            out[rec.run_id] = rec
    return out


def live_runs() -> list[str]:
    """Run ids whose runner is still running."""
    return [r for r, rec in _records().items() if rec.live()]


def cleanup(include_live: bool = False) -> dict[str, list[str]]:
    """Remove every stale run (and live ones too with `include_live`). Returns
    {"removed": namespaces, "kept_live": run ids, "failed": namespaces}."""
    records = _records()
    by_run: dict[str, list[str]] = {}
    for ns in list_namespaces():
        m = NS_RE.match(ns)
        assert m is not None
        by_run.setdefault(m.group(1), []).append(ns)
    removed: list[str] = []
    failed: list[str] = []
    kept: list[str] = []
    for run_id in sorted(set(by_run) | set(records)):
        rec = records.get(run_id)
        if rec is not None and rec.live() and not include_live:
            kept.append(run_id)
            continue
        namespaces = by_run.get(run_id, [])
        left = delete_namespaces(namespaces)
        failed.extend(left)
        removed.extend(n for n in namespaces if n not in left)
        if rec is not None and not left:
            rec.remove()
    return {"removed": removed, "kept_live": kept, "failed": failed}
