"""satcc-linkd from Python: find (or build) the binary, write its configuration, run it.

The binary is, in this order: the one `SATCC_LINKD` names; in a development checkout (the
package imported from python/satcc/ beside crates/satcc-emu) `target/release/satcc-linkd`,
rebuilt with cargo when a source file is newer than it; else the one installed inside the
package (satcc/bin/satcc-linkd, put there by `make dist`; satcc.resources). The process enters
the emulator namespace itself, dies with its parent (PR_SET_PDEATHSIG), prints `ready`, then
takes `start <CLOCK_MONOTONIC ns>` and `stop` on stdin (crates/satcc-emu/README.md).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from satcc import resources
from satcc.emu.host import EmuError
from satcc.emu.topology import Plan

CRATE_SOURCES = ("crates/satcc-emu", "crates/satcc-core")
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
BUILD_TIMEOUT_S = 1200.0
REINSTALL = (
    "this satcc has no satcc-linkd inside (installed from a source tree or sdist?); install the "
    "wheel `make dist` builds, or set SATCC_LINKD to a satcc-linkd binary"
)


def _newest_source_mtime(root: Path) -> float:
    newest = 0.0
    for d in CRATE_SOURCES:
        for p in (root / d).rglob("*"):
            if p.suffix in (".rs", ".toml") and p.is_file():
                newest = max(newest, p.stat().st_mtime)
    return newest


def in_checkout() -> bool:
    """Whether this package runs from a development checkout (satcc.resources.checkout)."""
    return resources.checkout() is not None


def locate() -> tuple[Path, str]:
    """(the satcc-linkd `binary()` would run, where it comes from), building nothing."""
    env = os.environ.get("SATCC_LINKD")
    if env:
        return Path(env), "SATCC_LINKD"
    root = resources.checkout()
    if in_checkout() and root is not None:
        return root / "target" / "release" / "satcc-linkd", "the development checkout"
    return resources.linkd_binary(), "the installed package"


def binary() -> Path:
    """The satcc-linkd to run (module docstring), building it in a checkout if it is missing or
    older than its sources."""
    env = os.environ.get("SATCC_LINKD")
    if env:
        p = Path(env)
        if not p.is_file():
            raise EmuError(f"SATCC_LINKD={env}: no such file")
        return p
    if not in_checkout():
        packaged = resources.linkd_binary()
        if not packaged.is_file():
            raise EmuError(f"{packaged}: no such file; {REINSTALL}")
        return packaged
    root = resources.checkout()
    assert root is not None  # in_checkout()
    path = root / "target" / "release" / "satcc-linkd"
    if path.is_file() and path.stat().st_mtime >= _newest_source_mtime(root):
        return path
    cargo = shutil.which("cargo")
    if cargo is None:
        if path.is_file():
            return path
        raise EmuError(
            "satcc-linkd is not built and cargo is not available; build it with "
            f"`cargo build -p satcc-emu --release` in {root}"
        )
    p = subprocess.run(
        [cargo, "build", "-q", "-p", "satcc-emu", "--release"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    if p.returncode != 0 or not path.is_file():
        raise EmuError(f"building satcc-linkd failed:\n{p.stderr[-3000:]}")
    return path


# The CPU wake-up latency (µs) satcc-linkd asks the kernel's PM QoS for while it runs
# (crates/satcc-emu/README.md "Idle CPUs": 0, idle CPUs poll); None in a run's options: no
# request. satcc-linkd's own default for a document without the key is the same.
DEFAULT_CPU_LATENCY_US = 0


def config(
    p: Plan,
    seed: int,
    bin_ns: int,
    duration_ns: int,
    series_path: Path,
    spin_ns: int | None = None,
    rt_priority: int | None = None,
    cpu: int | None = None,
    cpu_latency_us: int | None = DEFAULT_CPU_LATENCY_US,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "netns": p.emu_ns,
        "seed": seed,
        "bin_ns": bin_ns,
        "duration_ns": duration_ns,
        "series_path": str(series_path),
        # the resolved scenario the run resolved once: satcc-linkd reads each link's
        # directions and routes from it as they are (the simulator's input; not resolved again)
        "scenario": p.config,
        "links": [{"id": lp.id, "a_if": lp.a_if, "b_if": lp.b_if} for lp in p.links],
        "cpu_latency_us": cpu_latency_us,  # None: no PM QoS request
    }
    if spin_ns is not None:
        doc["spin_ns"] = spin_ns
    if rt_priority is not None:
        doc["rt_priority"] = rt_priority
    if cpu is not None:
        doc["cpu"] = cpu
    return doc


# Steer only where satcc-linkd's core could not carry the nodes' stacks itself: without
# steering it carried 2.1-2.4 Gbit/s of TCP on the 2-core VM, and steering moves the receiving
# softirq onto the cores the applications run on (there, a UDP receiver at 1 Gbit/s dropped
# 3-7 x more in its socket buffer: 73-130 k datagrams against 11-26 k in 8 s).
STEER_ABOVE_BPS = 1_000_000_000


def placement(config: dict[str, Any]) -> tuple[int, list[int]] | None:
    """(the CPU satcc-linkd is pinned to, the CPUs the node namespaces' receive processing is
    steered to), or None: with a single CPU, or when no link of the resolved scenario `config`
    is faster than STEER_ABOVE_BPS. A frame satcc-linkd sends on a veth is received by the
    node's stack in satcc-linkd's own system call (veth delivers in the sender's context): on
    its core, the receiver's whole TCP input. RPS on the node ends (topology.steer_rx) hands
    that work to the other CPUs; the emulator keeps its core for moving frames (README
    "Timing": 2.1-2.4 -> 4-4.6 Gbit/s of TCP on 2 cores)."""
    fastest = max(
        (link[d].get("rate_bps") or 0 for link in config["links"] for d in ("ab", "ba")), default=0
    )
    if fastest <= STEER_ABOVE_BPS:
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return cpus[-1], cpus[:-1]


class Linkd:
    """One running satcc-linkd."""

    def __init__(self, cfg: dict[str, Any], workdir: Path):
        self.cfg_path = workdir / "linkd.json"
        self.cfg_path.write_text(json.dumps(cfg))
        self.series_path = Path(cfg["series_path"])
        self.stderr_path = workdir / "linkd.stderr"
        self._stderr = open(self.stderr_path, "w")  # noqa: SIM115 - the child writes it for its life
        self.proc = subprocess.Popen(
            [str(binary()), "--config", str(self.cfg_path), "--parent-pid", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self._wait_for("ready", READY_TIMEOUT_S)

    def _wait_for(self, word: str, timeout: float) -> None:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if r:
                line = self.proc.stdout.readline()
                if line.strip() == word:
                    return
                if line == "":
                    break
            if self.proc.poll() is not None:
                break
        self.kill()
        raise EmuError(f"satcc-linkd did not become {word}: {self.stderr()}")

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text().strip()
        except OSError:
            return ""

    def start(self, origin_ns: int) -> None:
        self._send(f"start {origin_ns}")

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise EmuError(f"satcc-linkd exited early: {self.stderr()}") from None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Ask it to finish (it writes its stats), then make sure it is gone."""
        if self.proc.poll() is None:
            try:
                self._send("stop")
            except EmuError:
                pass
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        self._stderr.close()


def read_series(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(bin rows, the final stats document or None) from satcc-linkd's JSON lines."""
    rows: list[dict[str, Any]] = []
    stats = None
    try:
        text = path.read_text()
    except OSError:
        return rows, stats
    for line in text.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("kind") == "bin":
            rows.append(d)
        elif d.get("kind") == "stats":
            stats = d
    return rows, stats
