"""Run tshark on a capture and read the same per-packet fields satcc computes, for
cross-checks (tests) and the speed comparison (bench/analyze).

`tshark_fields(path)` runs `tshark -n -r FILE -T fields` with frame number, epoch time,
tcp.stream, the ports and addresses, tcp.len and every tcp.analysis flag satcc-pcap computes; returns
a DataFrame with one row per TCP packet, flags as booleans, time as integer ns.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd

from satcc import _native

# The tcp.analysis flags compared with tshark: every one satcc-pcap computes, by its names
# (crates/satcc-pcap/src/tshark.rs `flags::NAMES`, tshark's field names without the prefix).
FLAGS = tuple(_native.pcap_flag_names())
FIELDS = (
    "frame.number",
    "frame.time_epoch",
    "tcp.stream",
    "ip.src",
    "ipv6.src",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.len",
    *(f"tcp.analysis.{f}" for f in FLAGS),
)


def available() -> bool:
    return shutil.which("tshark") is not None


def command(path: str | Path) -> list[str]:
    cmd = [
        "tshark",
        "-n",
        "-r",
        str(path),
        "-Y",
        "tcp && !icmp && !icmpv6",
        "-T",
        "fields",
        "-E",
        "separator=\t",
        "-E",
        "occurrence=f",
    ]
    for f in FIELDS:
        cmd += ["-e", f]
    return cmd


def _epoch_ns(text: str) -> int:
    sec, _, frac = text.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


def tshark_fields(path: str | Path) -> pd.DataFrame:
    out = subprocess.run(command(path), capture_output=True, text=True, check=True).stdout
    return parse_fields(out)


def parse_fields(out: str) -> pd.DataFrame:
    """Parse the output of `command(path)`."""
    rows = []
    for line in out.splitlines():
        c = line.split("\t")
        if len(c) < len(FIELDS):
            c += [""] * (len(FIELDS) - len(c))
        row = {
            "frame": int(c[0]),
            "ts_ns": _epoch_ns(c[1]),
            "stream": int(c[2]),
            "src": c[3] or c[4],
            "sport": int(c[5]),
            "dport": int(c[6]),
            "len": int(c[7] or 0),
        }
        for i, f in enumerate(FLAGS):
            row[f] = c[8 + i] != ""
        rows.append(row)
    return pd.DataFrame(
        rows, columns=["frame", "ts_ns", "stream", "src", "sport", "dport", "len", *FLAGS]
    )
