"""The backtick shell blocks, read for the simulator: which lines set what.

The kernel engine runs a block with bash inside its namespace. The simulator cannot, so the
block is read instead: `sysctl` lines (and the files they come from: a line naming an
executable file beside the script, such as `../common/defaults.sh` or `./defaults.sh`, is
read in its place) become settings of the simulator's flow (the resolved scenario's `Flow`,
crates/satcc-core/src/scenario.rs); `ip route ... initcwnd N` sets the initial window; every
other line, and every sysctl the simulator has no setting for, is listed as ignored with
its reason. Nothing is executed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

# sysctl -> (the scenario Flow's field, how the value maps). A value the simulator cannot honour is
# reported as ignored with the reason.
SETTINGS: dict[str, str] = {
    "net.ipv4.tcp_sack": "sack",
    "net.ipv4.tcp_timestamps": "timestamps",
    "net.ipv4.tcp_window_scaling": "window_scaling",
    "net.ipv4.tcp_congestion_control": "cca",
    "net.ipv4.tcp_ecn": "ecn",
    "net.ipv4.tcp_rmem": "rwnd_bytes",
    "net.ipv4.tcp_moderate_rcvbuf": "rcvbuf_autotune",
    "net.ipv4.tcp_slow_start_after_idle": "slow_start_after_idle",
    # Not Flow fields: host sysctls the simulator's sender reads (its GSO packets and
    # `tcp_tso_should_defer`; the GSO view, sim.py, cuts the bursts by the first too).
    "net.ipv4.tcp_min_tso_segs": "min_tso_segs",
    "net.ipv4.tcp_tso_win_divisor": "tso_win_divisor",
}
# sysctls whose value the simulator's TCP has built in: fine at these values, ignored (with
# the reason) at any other.
BUILT_IN: dict[str, str | tuple[str, ...]] = {
    "net.ipv4.tcp_dsack": "1",
    "net.ipv4.tcp_frto": "2",
    "net.ipv4.tcp_reordering": "3",
    "net.ipv4.tcp_recovery": "1",
    "net.ipv4.tcp_early_retrans": ("3", "4"),  # TLP on (RACK replaced early retransmit)
    "net.ipv4.tcp_fack": "0",
    "net.ipv4.tcp_pacing_ss_ratio": "200",
    "net.ipv4.tcp_pacing_ca_ratio": "120",
    "net.ipv4.tcp_syn_retries": "6",
}
# Not about the sender's congestion control, or about segmentation the simulator does not
# model (no TSO/GSO): accepted without effect.
NO_EFFECT = {
    "net.ipv4.tcp_syncookies": "SYN cookies: no SYN flood in a script",
    "net.ipv4.tcp_synack_retries": "SYN-ACK retries: the simulator's endpoint never retransmits its SYN-ACK",
    "net.ipv4.tcp_wmem": "the simulator's send queue takes every write (no send-buffer limit)",
    "net.ipv4.tcp_notsent_lowat": "not-sent low-water mark: no poll() in the simulator",
    "net.ipv4.tcp_fastopen": "TCP Fast Open is not modelled",
    "net.ipv4.tcp_fastopen_key": "TCP Fast Open is not modelled",
    "net.ipv4.tcp_ecn_option": "AccECN option is not modelled",
    "net.ipv6.conf.all.disable_ipv6": "IPv6 settings",
}


@dataclass
class ShellReading:
    settings: dict[str, object] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)  # "line: reason"


def read_block(command: str, script_dir: Path, depth: int = 0) -> ShellReading:
    out = ShellReading()
    _read(command, script_dir, out, depth)
    return out


def _read(command: str, script_dir: Path, out: ShellReading, depth: int) -> None:
    text = re.sub(r"\\\n", " ", command)
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            out.ignored.append(f"{line}: not a shell line satcc can read")
            continue
        words = [w for w in words if w not in (">", "2>&1", "/dev/null")]
        prog = words[0]
        if prog == "sysctl":
            _sysctl(line, words[1:], out)
        elif prog in ("ip",) and "initcwnd" in words:
            n = words[words.index("initcwnd") + 1]
            if n.isdigit():
                out.settings["initial_cwnd"] = int(n)
            else:
                out.ignored.append(f"{line}: expected a number after initcwnd")
        elif prog.endswith("set_sysctls.py"):
            for w in words[1:]:
                m = re.fullmatch(r"/proc/sys/(.+)=(.*)", w)
                if m:
                    _set(line, m.group(1).replace("/", "."), m.group(2), out)
        elif prog.endswith(".sh") and (script_dir / prog).is_file() and depth < 4:
            path = script_dir / prog
            _read(path.read_text(), path.resolve().parent, out, depth + 1)
        elif prog.endswith((".sh", ".py")) and not (script_dir / prog).is_file():
            out.ignored.append(f"{line}: no such file ({script_dir / prog})")
        elif prog == "ethtool":
            out.ignored.append(f"{line}: no effect (the simulator has no TSO/GSO)")
        elif prog == "tc" and _root_qdisc(words):
            # The sender's host qdisc: fq paces every socket (the Flow's `pacing = "on"`),
            # any other leaves pacing to the algorithm ("auto", Linux's internal pacing).
            qdisc = _root_qdisc(words)
            out.settings["pacing"] = "on" if qdisc == "fq" else "auto"
            # `pfifo limit 0` holds no packet: every one the host sends is dropped there.
            rest = words[words.index(qdisc) + 1 :]
            out.settings["local_drop"] = qdisc in ("pfifo", "bfifo") and rest == ["limit", "0"]
            if out.settings["local_drop"]:
                pass
            elif qdisc not in ("fq", "pfifo", "pfifo_fast") or rest:
                out.ignored.append(
                    f"{line}: only whether {qdisc} paces is taken (the simulator's sender "
                    "host has no queue of its own)"
                )
        elif prog == "tc":
            out.ignored.append(f"{line}: no effect (the simulator's hosts have no qdisc)")
        else:
            out.ignored.append(f"{line}: not a sysctl (the simulator has no such setting)")


def _root_qdisc(words: list[str]) -> str | None:
    """The qdisc a `tc qdisc add|replace|change dev tun0 root KIND ...` line installs."""
    if (
        len(words) > 5
        and words[1] == "qdisc"
        and words[2] in ("add", "replace", "change")
        and "root" in words
        and words.index("root") + 1 < len(words)
    ):
        return words[words.index("root") + 1]
    return None


def _sysctl(line: str, args: list[str], out: ShellReading) -> None:
    for a in args:
        if a.startswith("-"):
            continue
        key, eq, value = a.partition("=")
        if not eq:
            out.ignored.append(f"{line}: expected key=value")
            continue
        _set(line, key, value, out)


def _set(line: str, key: str, value: str, out: ShellReading) -> None:
    value = re.sub(r"\$\(\(([0-9*+ ]+)\)\)", lambda m: str(_arith(m.group(1))), value)
    value = value.strip().strip('"')
    if key in SETTINGS:
        name = SETTINGS[key]
        if name in (
            "sack",
            "timestamps",
            "window_scaling",
            "rcvbuf_autotune",
            "slow_start_after_idle",
        ):
            out.settings[name] = value != "0"
        elif name == "min_tso_segs":
            if value.isdigit() and int(value) >= 1:
                out.settings[name] = int(value)
            else:
                out.ignored.append(f"{line}: expected a whole number for {key}")
        elif name == "tso_win_divisor":
            if value.isdigit():
                out.settings[name] = int(value)
            else:
                out.ignored.append(f"{line}: expected a whole number for {key}")
        elif name == "ecn":
            # 1: request and accept; 2 (the default): accept when requested. The simulator's
            # flag is "this flow negotiates ECN"; a passive side honours a request with 1 or 2.
            out.settings["ecn"] = int(value) if value.isdigit() else value
        elif name == "rwnd_bytes":
            # tcp_rmem[2]: the autotuning ceiling, and what the SYN-ACK's window scale covers
            # (tcp_select_initial_window); tcp_rmem[1] is the simulator's built-in 131072.
            parts = value.split()
            if len(parts) == 3 and all(p.isdigit() for p in parts):
                out.settings[name] = int(parts[2])
                if parts[1] != "131072":
                    out.ignored.append(
                        f"{line}: tcp_rmem[1]={parts[1]}: the simulator starts at 131072"
                    )
            else:
                out.ignored.append(f"{line}: expected three numbers for {key}")
        else:
            out.settings[name] = value
    elif key in BUILT_IN:
        have = BUILT_IN[key]
        ok = have if isinstance(have, tuple) else (have,)
        if value not in ok:
            out.ignored.append(f"{key}={value}: the simulator's TCP has {ok[0]} built in")
    elif key in NO_EFFECT:
        out.ignored.append(f"{key}={value}: {NO_EFFECT[key]}")
    else:
        out.ignored.append(f"{key}={value}: no simulator setting")


def _arith(expr: str) -> int:
    """`$((15*1024*1024))`: products and sums of integers."""
    return sum(_product(t) for t in expr.split("+"))


def _product(term: str) -> int:
    n = 1
    for f in term.split("*"):
        n *= int(f)
    return n
