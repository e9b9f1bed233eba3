"""BPF struct_ops congestion controls: build against the running kernel, register, unregister.

The C programs live in `bpf/` (one per algorithm, each naming its Rust twin in
crates/satcc-cc/src/algos/). A program is compiled once per (kernel, source, parameter set):
parameters become `-D` defines, so every parameter set is its own object and its own kernel
congestion control; so does a flow's sender cap `cwnd_clamp` (Linux's snd_cwnd_clamp) in the
programs that apply it (`CWND_CLAMP_DEFINES`: Hybla). Objects are cached under `cache_dir()/<release>-<btf hash>/`, next to a
`vmlinux.h` dumped from /sys/kernel/btf/vmlinux by bpftool.

| function                          | what it does                                                   |
|-----------------------------------|----------------------------------------------------------------|
| `available()`                     | what this host supports, with the fix for each gap (doctor)    |
| `kernel_name(name, params)`       | the kernel name a parameter set registers under (no side effect)|
| `build(name, params)`             | compile (or find in the cache) the object; returns its path    |
| `ensure_registered(name, params)` | build + `bpftool struct_ops register` unless already there     |
| `unregister(kernel_name)`         | remove one satcc_ congestion control                            |
| `unregister_all()`                | remove every satcc_ struct_ops on this host (crash-safe)       |
| `registered()`                    | satcc_ congestion controls registered now                      |
| `lingering()`                     | unregistered satcc_ maps still held by sockets                 |

Kernel names: `satcc_<algo>` for the default parameters, `satcc_<algo>_<h>` otherwise, where
`<h>` is a base-32 digest of the compiled defines filling the name to 15 characters
(TCP_CA_NAME_MAX is 16 with the NUL). The same name is the struct_ops map's name, so
`bpftool struct_ops list` and /proc/sys/net/ipv4/tcp_available_congestion_control agree.
Which object a name was registered from is recorded in `/run/satcc/bpf/<name>.json` (gone
at reboot, as the registration is): a name registered from another source or parameter set
is replaced, never silently reused.

Pitfalls: registering needs root (CAP_BPF + CAP_NET_ADMIN); the kernel's HZ is needed by
CUBIC (read from /proc/config.gz or /boot/config-<release>, else measured from
/proc/timer_list); congestion controls are global to the host, not per namespace.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from satcc import resources
from satcc.errors import SatccError
from satcc.results import file_sha256
from satcc.scenario.config import json_sha256

ALGORITHMS = ("cubic", "dctcp", "hybla", "vegas", "yeah")
PREFIX = "satcc_"
TCP_CA_NAME_MAX = 16  # include/net/tcp.h, with the terminating NUL
BTF_PATH = Path("/sys/kernel/btf/vmlinux")
AVAILABLE_CCAS = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
RECORD_DIR = Path("/run/satcc/bpf")
KFUNCS = (
    "tcp_slow_start",
    "tcp_cong_avoid_ai",
    "tcp_reno_cong_avoid",
    "tcp_reno_ssthresh",
    "tcp_reno_undo_cwnd",
)
KFUNC_MIN_KERNEL = (5, 13)  # bpf_tcp_ca kfuncs (tcp_slow_start & co.) arrived in 5.13
STRUCT_OPS_BTF_TYPE = b"bpf_struct_ops_tcp_congestion_ops"
APT = "apt-get install -y"
_B32 = "0123456789abcdefghijklmnopqrstuv"
_TOOL_TIMEOUT_S = 120

# The sender's cap on cwnd (the flow's `cwnd_clamp`, packets), compiled into the programs that
# apply it: Linux's `snd_cwnd_clamp`, which a BPF congestion control may not write
# (bpf_tcp_ca_btf_struct_access), so the program caps cwnd where the kernel's algorithm does
# (hybla.bpf.c: the end of hybla_cong_avoid, as tcp_hybla.c). Not TCP_WINDOW_CLAMP (it bounds
# the window the socket advertises, the receive side) nor a locked route `cwnd` (it reaches
# snd_cwnd_clamp only through the metrics cache, and hybla_init overwrites it with 65535).
CWND_CLAMP_DEFINES = {"hybla": "HYBLA_CWND_CLAMP"}
CWND_CLAMP_MAX = (1 << 32) - 1  # tp->snd_cwnd_clamp is a u32

# cubic.bpf.c's fixed point (see its header).
K_TABLE_MAX = 16
K_FACTOR_SHIFT = 20
K_NUM_SHIFT = 43


class BpfError(SatccError):
    """A BPF congestion control could not be built, registered or removed; says how to fix it."""


# -- where things are --------------------------------------------------------------------------


def source_dir() -> Path:
    """The C sources: $SATCC_BPF_DIR, else the ones shipped in the package (satcc.resources)."""
    env = os.environ.get("SATCC_BPF_DIR")
    return Path(env) if env else resources.bpf_dir()


def cache_dir() -> Path:
    """$SATCC_BPF_CACHE, else $XDG_CACHE_HOME/satcc/bpf, else ~/.cache/satcc/bpf."""
    env = os.environ.get("SATCC_BPF_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "satcc" / "bpf"


def kernel_release() -> str:
    return os.uname().release


def _kernel_version() -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", kernel_release())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


# -- kernel facts ------------------------------------------------------------------------------


def _no_btf(e: OSError) -> BpfError:
    return BpfError(
        f"cannot read {BTF_PATH} ({e.strerror}): BPF congestion controls need a "
        "kernel built with CONFIG_DEBUG_INFO_BTF=y"
    )


def _btf_bytes() -> bytes:
    try:
        return BTF_PATH.read_bytes()
    except OSError as e:
        raise _no_btf(e) from None


_HZ: int | None = None


def kernel_hz() -> int | None:
    """The running kernel's CONFIG_HZ: from its config, else measured; None if neither works."""
    global _HZ
    if _HZ is None:
        _HZ = _hz_from_config() or _hz_measured()
    return _HZ


def _hz_from_config() -> int | None:
    texts = []
    with contextlib.suppress(OSError):
        texts.append(gzip.decompress(Path("/proc/config.gz").read_bytes()).decode())
    with contextlib.suppress(OSError):
        texts.append(Path(f"/boot/config-{kernel_release()}").read_text())
    for text in texts:
        m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.MULTILINE)
        if m:
            return int(m.group(1))
    return None


def _hz_measured() -> int | None:
    """jiffies advanced over a measured interval, from /proc/timer_list (root only), rounded to
    the nearest HZ Kconfig offers."""

    def sample() -> tuple[int, int] | None:
        try:
            text = Path("/proc/timer_list").read_text()
        except OSError:
            return None
        now = re.search(r"^now at (\d+) nsecs", text, re.MULTILINE)
        jif = re.search(r"^jiffies: (\d+)", text, re.MULTILINE)
        return (int(now.group(1)), int(jif.group(1))) if now and jif else None

    a = sample()
    time.sleep(0.2)
    b = sample()
    if not a or not b or b[0] <= a[0]:
        return None
    hz = (b[1] - a[1]) * 1e9 / (b[0] - a[0])
    return min((100, 250, 300, 1000), key=lambda h: abs(h - hz))


def _tool_version(cmd: list[str]) -> str | None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = (p.stdout or p.stderr).strip().splitlines()
    return out[0] if p.returncode == 0 and out else None


def available() -> dict[str, Any]:
    """What this host supports for BPF congestion controls, for `satcc emu doctor`.

    Returns {"ok": bool, "algorithms": [names buildable here], "kernel": release,
    "hz": int | None, "kfuncs": {name: bool}, "registered": [kernel names],
    "checks": [{"name", "ok", "detail", "fix"}]}. Reads only; changes nothing.
    """
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str, fix: str = "") -> bool:
        checks.append({"name": name, "ok": ok, "detail": detail, "fix": "" if ok else fix})
        return ok

    root = check(
        "root",
        os.geteuid() == 0,
        "root" if os.geteuid() == 0 else "not root",
        "run as root: registering a BPF congestion control needs CAP_BPF and CAP_NET_ADMIN",
    )
    try:
        btf = _btf_bytes()
    except BpfError:
        btf = b""
    has_btf = check(
        "kernel BTF",
        bool(btf),
        str(BTF_PATH) if btf else "missing",
        "a kernel built with CONFIG_DEBUG_INFO_BTF=y",
    )
    has_struct_ops = check(
        "BPF struct_ops for TCP",
        STRUCT_OPS_BTF_TYPE in btf,
        "tcp_congestion_ops can be implemented in BPF"
        if STRUCT_OPS_BTF_TYPE in btf
        else "the kernel's BTF has no bpf_struct_ops_tcp_congestion_ops",
        "Linux >= 5.6 with CONFIG_BPF_SYSCALL, CONFIG_BPF_JIT and CONFIG_DEBUG_INFO_BTF",
    )
    kfuncs = {
        k: bool(btf)
        and (b"\0" + k.encode() + b"\0") in btf
        and _kernel_version() >= KFUNC_MIN_KERNEL
        for k in KFUNCS
    }
    missing = [k for k, ok in kfuncs.items() if not ok]
    has_kfuncs = check(
        "congestion-control kfuncs",
        not missing,
        "all of " + ", ".join(KFUNCS) if not missing else "missing: " + ", ".join(missing),
        f"Linux >= {KFUNC_MIN_KERNEL[0]}.{KFUNC_MIN_KERNEL[1]} (kfuncs for BPF "
        "congestion controls)",
    )
    clang = shutil.which("clang")
    clang_v = _tool_version([clang, "--version"]) if clang else None
    has_clang = check("clang", bool(clang_v), clang_v or "not found", f"{APT} clang llvm")
    bpftool = shutil.which("bpftool")
    bpftool_v = _tool_version([bpftool, "version"]) if bpftool else None
    has_bpftool = check("bpftool", bool(bpftool_v), bpftool_v or "not found", f"{APT} bpftool")
    headers = Path("/usr/include/bpf/bpf_helpers.h").exists()
    has_headers = check(
        "libbpf headers",
        headers,
        "/usr/include/bpf" if headers else "bpf/bpf_helpers.h not found",
        f"{APT} libbpf-dev",
    )
    src = source_dir()
    sources = [a for a in ALGORITHMS if (src / f"{a}.bpf.c").exists()]
    has_src = check(
        "BPF sources",
        bool(sources),
        f"{src}: {', '.join(sources) or 'none'}",
        "reinstall satcc (its package data satcc/data/bpf is missing), or set SATCC_BPF_DIR "
        "to a directory of satcc's BPF sources",
    )
    hz = kernel_hz()
    check(
        "kernel HZ",
        hz is not None,
        f"CONFIG_HZ={hz}" if hz else "unknown",
        "expose the kernel config (CONFIG_IKCONFIG_PROC=y, or /boot/config-<release>) or run "
        "as root so /proc/timer_list can be read; CUBIC needs it",
    )
    ok = all(
        (root, has_btf, has_struct_ops, has_kfuncs, has_clang, has_bpftool, has_headers, has_src)
    )
    algorithms = [a for a in sources if a != "cubic" or hz is not None] if ok else []
    return {
        "ok": ok,
        "algorithms": algorithms,
        "kernel": kernel_release(),
        "hz": hz,
        "kfuncs": kfuncs,
        "registered": registered() if root and has_bpftool else [],
        "checks": checks,
    }


# -- parameters -> defines ---------------------------------------------------------------------


def _kernel_values(name: str, params: Mapping[str, Any]) -> dict[str, str]:
    """The Rust twin's checks, then the integer each parameter declaring a BPF define is
    compiled with (satcc-cc's `ParamSpec`: its define, scale and kernel codes)."""
    from satcc import _native

    # The binding reads [x, y] pairs only as tuples; TOML and JSON give lists.
    as_tuples = {
        k: [tuple(pt) if isinstance(pt, list) else pt for pt in v] if isinstance(v, list) else v
        for k, v in params.items()
    }
    try:
        values = _native.cc_kernel_values(name, as_tuples)
    except ValueError as e:
        raise BpfError(f"{name}: {e}") from None
    return {define: str(v) for define, v in values}


def _value(name: str, params: Mapping[str, Any], key: str) -> Any:
    """`params[key]`, else the default the Rust twin declares for it."""
    from satcc import _native

    if key in params:
        return params[key]
    return next(p["default"] for p in _native.cc_info(name)["params"] if p["name"] == key)


def _k_table(p: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    table = p.get("k_table")
    expected = (
        "[[rtt_ms, factor], ...] with rtt_ms increasing, factors >= 0 and at most "
        f'{K_TABLE_MAX} points (required by k_mode = "table")'
    )
    try:
        points = [(float(x), float(y)) for x, y in table]  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise BpfError(f"cc.k_table: expected {expected}, found {table!r}") from None
    rtts = [round(x * 1000.0) for x, _ in points]
    factors = [round(y * (1 << K_FACTOR_SHIFT)) for _, y in points]
    if (
        not points
        or len(points) > K_TABLE_MAX
        or not all(math.isfinite(v) for pt in points for v in pt)
        or any(y < 0 for _, y in points)
        or rtts[0] < 0
        or rtts[-1] >= 1 << 32
        or any(b <= a for a, b in itertools.pairwise(rtts))
        or max(factors) >= 1 << 63
    ):
        raise BpfError(f"cc.k_table: expected {expected}, found {table!r}")
    return rtts, factors


def _defines_cubic(p: Mapping[str, Any]) -> dict[str, str]:
    d = _kernel_values("cubic", p)
    host_hz = kernel_hz()
    if host_hz is None:
        raise BpfError(
            "cubic: the kernel's CONFIG_HZ is unknown; expose the kernel config "
            "(CONFIG_IKCONFIG_PROC=y or /boot/config-<release>) or run as root so "
            "/proc/timer_list can be read"
        )
    if "hz" not in p:
        d["CUBIC_HZ"] = str(host_hz)  # this kernel's, not cubic.rs's 1000
    d["CUBIC_KERNEL_HZ"] = str(host_hz)
    mode = _value("cubic", p, "k_mode")
    if mode == "table":
        rtts, factors = _k_table(p)
        d["CUBIC_K_TABLE_N"] = str(len(rtts))
        d["CUBIC_K_TABLE_RTT_US"] = "{" + ",".join(f"{r}U" for r in rtts) + "}"
        d["CUBIC_K_TABLE_F_Q20"] = "{" + ",".join(f"{f}ULL" for f in factors) + "}"
    elif "k_table" in p:
        _k_table(p)  # what the BPF program can hold, checked even when unused
    if mode in ("cbrt_rtt", "scaled"):
        scale = float(_value("cubic", p, "a")) if mode == "scaled" else 1.0
        rtt_unit_ms = float(_value("cubic", p, "rtt_unit"))
        num = round(scale * (rtt_unit_ms * 1000.0) ** (1 / 3) * (1 << K_NUM_SHIFT))
        d["CUBIC_K_NUM_Q43"] = f"{num}ULL"
    return d


def _cwnd_clamp_define(name: str, cwnd_clamp: Any) -> dict[str, str]:
    define = CWND_CLAMP_DEFINES.get(name)
    if define is None:
        raise BpfError(
            f"cwnd_clamp: the emulator caps the sender's cwnd only in "
            f"{', '.join(sorted(CWND_CLAMP_DEFINES))} (compiled into its BPF program), "
            f"not in {name}"
        )
    if isinstance(cwnd_clamp, bool) or not isinstance(cwnd_clamp, int):
        raise BpfError(f"cwnd_clamp: expected whole packets, found {cwnd_clamp!r}")
    if not 1 <= cwnd_clamp <= CWND_CLAMP_MAX:
        raise BpfError(f"cwnd_clamp: expected 1..{CWND_CLAMP_MAX} packets, found {cwnd_clamp}")
    return {define: f"{cwnd_clamp}U"}


def defines(
    name: str, params: Mapping[str, Any] | None = None, cwnd_clamp: int | None = None
) -> dict[str, str]:
    """The -D defines a parameter set (and the flow's sender cap `cwnd_clamp`, packets)
    compiles to (without the kernel name)."""
    if name not in ALGORITHMS:
        raise BpfError(
            f"no BPF program for {name!r}; BPF congestion controls: {', '.join(ALGORITHMS)}"
        )
    params = dict(params or {})
    d = _defines_cubic(params) if name == "cubic" else _kernel_values(name, params)
    if cwnd_clamp is not None:
        d.update(_cwnd_clamp_define(name, cwnd_clamp))
    return d


def kernel_name(
    name: str, params: Mapping[str, Any] | None = None, cwnd_clamp: int | None = None
) -> str:
    """The kernel congestion-control name of `name` with `params` and `cwnd_clamp` (see the
    module header)."""
    d = defines(name, params, cwnd_clamp)
    base = f"{PREFIX}{name}"
    if d == defines(name, None):
        return base
    room = TCP_CA_NAME_MAX - 1 - len(base) - 1
    digest = int(json_sha256(d), 16)
    suffix = "".join(_B32[(digest >> (5 * i)) & 31] for i in range(room))
    return f"{base}_{suffix}"


# -- build -------------------------------------------------------------------------------------


def _run(cmd: list[str], what: str, fix: str) -> subprocess.CompletedProcess[str]:
    try:
        p = subprocess.run(
            cmd, capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise BpfError(f"{what}: {cmd[0]} not found; {fix}") from None
    except subprocess.TimeoutExpired:
        raise BpfError(f"{what}: {cmd[0]} took longer than {_TOOL_TIMEOUT_S} s") from None
    return p


def _kernel_cache_dir() -> Path:
    try:
        btf_hash = file_sha256(BTF_PATH)[:12]
    except OSError as e:
        raise _no_btf(e) from None
    return cache_dir() / f"{kernel_release()}-{btf_hash}"


def vmlinux_h() -> Path:
    """vmlinux.h of the running kernel (bpftool btf dump), generated once per kernel."""
    out = _kernel_cache_dir() / "vmlinux.h"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    p = _run(
        ["bpftool", "btf", "dump", "file", str(BTF_PATH), "format", "c"],
        "vmlinux.h",
        f"{APT} bpftool",
    )
    if p.returncode != 0 or "struct tcp_congestion_ops {" not in p.stdout:
        raise BpfError(f"bpftool could not dump the kernel's BTF: {p.stderr.strip()[-500:]}")
    tmp = out.with_suffix(f".h.{os.getpid()}")
    tmp.write_text(p.stdout)
    os.replace(tmp, out)
    return out


def _sources(name: str) -> list[Path]:
    src = source_dir()
    main = src / f"{name}.bpf.c"
    if not main.exists():
        raise BpfError(f"{main} not found: run from a satcc checkout or set SATCC_BPF_DIR")
    return [main, *sorted(h for h in src.glob("*.h") if h.name != "vmlinux.h")]


_CLANG_VERSION: str | None = None


def _clang_version() -> str:
    global _CLANG_VERSION
    if _CLANG_VERSION is None:
        v = _tool_version(["clang", "--version"])
        if v is None:
            raise BpfError(f"clang not found; {APT} clang llvm libbpf-dev")
        _CLANG_VERSION = v
    return _CLANG_VERSION


def build(
    name: str, params: Mapping[str, Any] | None = None, cwnd_clamp: int | None = None
) -> Path:
    """Compile `name` with `params` (and the sender cap `cwnd_clamp`) against the running
    kernel's BTF, or return the cached object. The object registers as
    `kernel_name(name, params, cwnd_clamp)`."""
    kname = kernel_name(name, params, cwnd_clamp)
    d = defines(name, params, cwnd_clamp)
    d["SATCC_CA_NAME"] = kname
    sources = _sources(name)
    key_material = {
        "sources": {p.name: file_sha256(p) for p in sources},
        "defines": d,
        "clang": _clang_version(),
    }
    key = json_sha256(key_material)[:16]
    kdir = _kernel_cache_dir()
    out = kdir / f"{kname}-{key}.o"
    if out.exists():
        return out
    if not Path("/usr/include/bpf/bpf_helpers.h").exists():
        raise BpfError(f"libbpf headers not found (bpf/bpf_helpers.h); {APT} libbpf-dev")
    vmlinux_h()
    tmp = out.with_suffix(f".o.{os.getpid()}")
    cmd = [
        "clang",
        "-g",
        "-O2",
        "-target",
        "bpf",
        "-Wall",
        "-I",
        str(kdir),
        "-I",
        str(source_dir()),
        *[f"-D{k}={v}" for k, v in sorted(d.items())],
        "-c",
        str(sources[0]),
        "-o",
        str(tmp),
    ]
    p = _run(cmd, f"compiling {sources[0].name}", f"{APT} clang llvm libbpf-dev")
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BpfError(
            f"clang could not compile {sources[0].name} for kernel "
            f"{kernel_release()}:\n{p.stderr.strip()[-2000:]}"
        )
    os.replace(tmp, out)
    return out


# -- register / unregister ---------------------------------------------------------------------


def _require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise BpfError(f"{what} needs root (CAP_BPF and CAP_NET_ADMIN); run as root")


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    RECORD_DIR.mkdir(parents=True, exist_ok=True)
    with open(RECORD_DIR / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _struct_ops_list() -> list[dict[str, Any]]:
    p = _run(["bpftool", "-j", "struct_ops", "list"], "listing struct_ops", f"{APT} bpftool")
    if p.returncode != 0:
        raise BpfError(f"bpftool struct_ops list failed: {p.stderr.strip()[-500:]}")
    try:
        entries = json.loads(p.stdout or "[]")
    except json.JSONDecodeError:
        raise BpfError(f"bpftool struct_ops list printed no JSON: {p.stdout[:200]!r}") from None
    return [e for e in entries if isinstance(e, dict)]


def registered() -> list[str]:
    """satcc_ congestion controls registered now (the kernel's own list is the truth)."""
    return sorted(c for c in available_ccas() if c.startswith(PREFIX))


def _map_state(map_id: int) -> str:
    """A struct_ops map's state (INUSE, TOBEFREE, READY; "" if gone or unreadable)."""
    p = _run(
        ["bpftool", "-j", "struct_ops", "dump", "id", str(map_id)],
        "reading struct_ops state",
        f"{APT} bpftool",
    )
    m = re.search(r'"state"\s*:\s*"BPF_STRUCT_OPS_STATE_(\w+)"', p.stdout)
    return m.group(1) if p.returncode == 0 and m else ""


def lingering() -> list[dict[str, Any]]:
    """satcc_ struct_ops maps that are unregistered but not yet freed: sockets that used them
    still exist (e.g. orphans in a namespace being torn down); the kernel frees each when its
    last socket closes. [{"id", "name"}]."""
    return [
        {"id": e["id"], "name": e["name"]}
        for e in _struct_ops_list()
        if str(e.get("name", "")).startswith(PREFIX) and _map_state(e["id"]) == "TOBEFREE"
    ]


def available_ccas() -> list[str]:
    try:
        return AVAILABLE_CCAS.read_text().split()
    except OSError:
        return []


def ensure_registered(
    name: str, params: Mapping[str, Any] | None = None, cwnd_clamp: int | None = None
) -> str:
    """Make `name` with `params` (and the sender cap `cwnd_clamp`) a kernel congestion control
    and return its kernel name (usable with setsockopt(TCP_CONGESTION), `iperf3 -C`, `ss`).
    Builds at first use; a no-op when the same object is already registered."""
    _require_root(f"registering BPF congestion control {name!r}")
    obj = build(name, params, cwnd_clamp)
    kname = kernel_name(name, params, cwnd_clamp)
    record = RECORD_DIR / f"{kname}.json"
    with _lock():
        present = kname in registered()
        if present and _read_record(record).get("object") == obj.name:
            return kname
        if present:
            _unregister_locked(kname)
        p = _run(
            ["bpftool", "struct_ops", "register", str(obj)],
            f"registering {kname}",
            f"{APT} bpftool",
        )
        if p.returncode != 0 or kname not in available_ccas():
            raise BpfError(_register_failure(kname, p))
        record.write_text(
            json.dumps(
                {
                    "algorithm": name,
                    "params": dict(params or {}),
                    "cwnd_clamp": cwnd_clamp,
                    "object": obj.name,
                    "path": str(obj),
                },
                sort_keys=True,
            )
        )
    return kname


def _read_record(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def _register_failure(kname: str, p: subprocess.CompletedProcess[str]) -> str:
    err = (p.stderr or p.stdout).strip()
    hint = ""
    if "struct_ops" in err and ("not found" in err.lower() or "find" in err.lower()):
        hint = " (the kernel lacks BPF struct_ops for tcp_congestion_ops: Linux >= 5.6 with BTF)"
    elif "ksym" in err or "kfunc" in err or "extern" in err:
        hint = (
            f" (a kfunc is missing: BPF congestion controls need Linux >= "
            f"{KFUNC_MIN_KERNEL[0]}.{KFUNC_MIN_KERNEL[1]})"
        )
    elif "File exists" in err or "-17" in err:
        hint = f" (a congestion control named {kname} exists and is not satcc's)"
    return f"bpftool struct_ops register {kname} failed{hint}:\n{err[-2000:]}"


def _unregister_locked(kname: str) -> bool:
    was = kname in available_ccas()
    for map_id in [e["id"] for e in _struct_ops_list() if e.get("name") == kname]:
        p = _run(
            ["bpftool", "struct_ops", "unregister", "id", str(map_id)],
            f"unregistering {kname}",
            f"{APT} bpftool",
        )
        # EINPROGRESS: unregistered already, freed when its last socket closes (lingering()).
        if (
            p.returncode != 0
            and "in progress" not in (p.stderr + p.stdout)
            and map_id in {e["id"] for e in _struct_ops_list()}
        ):
            raise BpfError(
                f"bpftool struct_ops unregister {kname} failed: "
                f"{(p.stderr or p.stdout).strip()[-500:]}"
            )
    (RECORD_DIR / f"{kname}.json").unlink(missing_ok=True)
    if kname in available_ccas():
        raise BpfError(f"{kname} is still registered after bpftool struct_ops unregister")
    return was


def unregister(kernel_name: str) -> bool:
    """Remove one satcc congestion control; True if it was registered. Sockets still using it
    keep it until they close (the kernel holds a reference)."""
    if not kernel_name.startswith(PREFIX):
        raise BpfError(f"refusing to unregister {kernel_name!r}: not a satcc congestion control")
    _require_root(f"unregistering {kernel_name}")
    with _lock():
        return _unregister_locked(kernel_name)


def unregister_all() -> list[str]:
    """Remove every satcc_ struct_ops on this host and its records; returns the names that
    were registered. Safe on every exit path and after a crash: with nothing registered (or no
    bpftool, or no root) it does nothing; one failure does not stop the others (the first is
    raised at the end). Maps still held by sockets stay listed until those close
    (`lingering()`), but no longer accept new sockets."""
    if os.geteuid() != 0 or shutil.which("bpftool") is None:
        return []
    removed: list[str] = []
    errors: list[BpfError] = []
    with _lock():
        names = set(registered()) | {
            str(e["name"]) for e in _struct_ops_list() if str(e.get("name", "")).startswith(PREFIX)
        }
        for kname in sorted(names):
            try:
                if _unregister_locked(kname):
                    removed.append(kname)
            except BpfError as e:
                errors.append(e)
        for stale in RECORD_DIR.glob(f"{PREFIX}*.json"):
            stale.unlink(missing_ok=True)
    if errors:
        raise errors[0]
    return removed
