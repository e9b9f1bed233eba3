"""The inputs of `satcc analyze`, `satcc.analyze()` and analyze/field campaign runs: a file's kind
from its first bytes, and the file read as a capture, an iperf3 JSON document or a ping log."""

from __future__ import annotations

from pathlib import Path

from satcc.errors import UserError
from satcc.units import parse_duration

PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"


def detect_kind(path: Path) -> str:
    """ "capture", "iperf3" or "ping", from the file's first bytes."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head[:4] in PCAP_MAGICS or head[:4] == PCAPNG_MAGIC:
        return "capture"
    if head.lstrip()[:1] in (b"{", b"["):  # JSON: iperf3 -J or --json-stream
        return "iperf3"
    return "ping"


def bin_seconds(text: str, name: str = "--bin") -> float:
    """`--bin` (a duration) in seconds; errors name it as `name` (the API: its keyword)."""
    try:
        ns = parse_duration(text)
    except ValueError as e:
        raise UserError(f"{name}: {e}") from None
    if ns <= 0:
        raise UserError(f"{name}: expected a duration > 0, found {text!r}")
    return ns / 1e9


def load_input(path: Path, bin_s: float, progress=None):
    """Read one input; raises UserError if nothing could be read from it."""
    if not path.exists():
        raise UserError(f"{path}: no such file")
    if not path.is_file():
        raise UserError(f"{path}: expected a regular file, found a directory or device")
    kind = detect_kind(path)
    try:
        if kind == "capture":
            from satcc.analyze.capture import read_capture

            # the per-sample RTT table lets a receiver-side capture pair both directions'
            # TSval->TSecr halves into path RTTs (satcc.analyze.pathrtt)
            cap = read_capture(path, bin_s=bin_s, rtt=True, progress=progress)
            if cap.stats["frames"] == 0:
                where = "; ".join(
                    f"record {w['record']} at byte {w['offset']}: {w['message']}"
                    for w in cap.warnings
                )
                raise UserError(
                    f"{path}: no packets could be read" + (f" ({where})" if where else "")
                )
            return cap
        if kind == "iperf3":
            from satcc.analyze.iperf3 import read_iperf3

            return read_iperf3(path)
        from satcc.analyze.ping import read_ping

        return read_ping(path)
    except ValueError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}") from None
