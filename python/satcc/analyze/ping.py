"""ping and nping text output as an RTT table, for RTT-by-time-of-day studies (000, 001).

    r = read_ping("morning.txt")
    r.samples   one row per probe: seq, t_s (from `ping -D` epoch stamps or nping's SENT
                time; else seq × interval is unknown and t_s is NaN), rtt_ms (NaN if lost)
    r.summary   transmitted, received, loss_rate, rtt_min/mean/max_ms, and the tool's own
                summary line values when present (checked against the samples in tests)

Understands iputils `ping` (with or without `-D`), BSD/macOS `ping`, and `nping` in ICMP,
TCP or UDP mode (RTT = RCVD time − the matching SENT time; ICMP replies are matched by
sequence number, TCP/UDP replies to the latest unanswered probe).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

_PING_REPLY = re.compile(
    r"^(?:\[(?P<epoch>\d+(?:\.\d+)?)\]\s*)?\d+ bytes from (?P<host>[^:\s]+):?.*?"
    r"icmp_[sr]eq=(?P<seq>\d+).*?time[=<](?P<rtt>[\d.]+)\s*ms")
_PING_TX = re.compile(r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?:packets )?received")
_PING_RTT = re.compile(r"(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = "
                       r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)")
_NPING_LINE = re.compile(r"^(?P<dir>SENT|RCVD) \((?P<t>[\d.]+)s\) (?P<proto>ICMP|TCP|UDP)\b(?P<rest>.*)$")
_NPING_SEQ = re.compile(r"\bseq=(?P<seq>\d+)")
_NPING_RTT = re.compile(r"Max rtt: (?P<max>[\d.]+|N/A)ms \| Min rtt: (?P<min>[\d.]+|N/A)ms \| "
                        r"Avg rtt: (?P<avg>[\d.]+|N/A)ms")
_NPING_TX = re.compile(r"Raw packets sent: (?P<tx>\d+) .*?\| Rcvd: (?P<rx>\d+)")


@dataclass
class PingResult:
    path: str
    tool: str
    samples: pd.DataFrame
    summary: dict[str, Any]


def looks_like_ping(text: str) -> bool:
    return bool(_PING_TX.search(text) or _NPING_TX.search(text) or _PING_REPLY.search(text)
                or "Starting Nping" in text)


def _stats(rtts: np.ndarray) -> dict[str, float | None]:
    ok = rtts[~np.isnan(rtts)]
    if len(ok) == 0:
        return {"rtt_min_ms": None, "rtt_mean_ms": None, "rtt_max_ms": None, "rtt_p95_ms": None}
    return {"rtt_min_ms": float(ok.min()), "rtt_mean_ms": float(ok.mean()),
            "rtt_max_ms": float(ok.max()), "rtt_p95_ms": float(np.percentile(ok, 95))}


def _parse_ping(text: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        m = _PING_REPLY.search(line.strip())
        if m:
            epoch = float(m["epoch"]) if m["epoch"] else math.nan
            rows.append({"seq": int(m["seq"]), "t_epoch": epoch, "rtt_ms": float(m["rtt"])})
    got = {r["seq"]: r for r in rows}
    tx_m = _PING_TX.search(text)
    tool_summary: dict[str, Any] = {}
    if tx_m:
        tool_summary["tool_transmitted"] = int(tx_m["tx"])
        tool_summary["tool_received"] = int(tx_m["rx"])
    rtt_m = _PING_RTT.search(text)
    if rtt_m:
        tool_summary.update(tool_rtt_min_ms=float(rtt_m["min"]), tool_rtt_avg_ms=float(rtt_m["avg"]),
                            tool_rtt_max_ms=float(rtt_m["max"]))
    # Probes without a reply are lost: fill the sequence from 1 to the number transmitted.
    # iputils numbers probes from 1, BSD ping from 0.
    lo = 0 if got and min(got) == 0 else 1
    n_tx = tool_summary.get("tool_transmitted", 0)
    seqs = range(lo, max(max(got, default=lo - 1), lo + n_tx - 1) + 1)
    samples = pd.DataFrame([got.get(s, {"seq": s, "t_epoch": math.nan, "rtt_ms": math.nan})
                            for s in seqs], columns=["seq", "t_epoch", "rtt_ms"])
    t0 = samples["t_epoch"].min()
    samples["t_s"] = samples["t_epoch"] - t0
    return samples, tool_summary


def _parse_nping(text: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    for line in text.splitlines():
        m = _NPING_LINE.match(line.strip())
        if not m:
            continue
        t = float(m["t"])
        sm = _NPING_SEQ.search(m["rest"]) if m["proto"] == "ICMP" else None
        seq = int(sm["seq"]) if sm else None
        if m["dir"] == "SENT":
            sent.append({"seq": len(sent) + 1, "icmp_seq": seq, "t_s": t, "rtt_ms": math.nan})
            continue
        # RCVD: the oldest unanswered probe with the same ICMP seq; TCP/UDP replies carry no
        # probe number, so the latest unanswered probe (nping's own min/max agree with this).
        candidates = [p for p in sent if math.isnan(p["rtt_ms"])
                      and (seq is None or p["icmp_seq"] in (None, seq))]
        if candidates:
            p = candidates[0] if seq is not None else candidates[-1]
            p["rtt_ms"] = (t - p["t_s"]) * 1000.0
    tool_summary: dict[str, Any] = {}
    tx_m = _NPING_TX.search(text)
    if tx_m:
        tool_summary.update(tool_transmitted=int(tx_m["tx"]), tool_received=int(tx_m["rx"]))
    rtt_m = _NPING_RTT.search(text)
    if rtt_m:
        for k in ("min", "avg", "max"):
            v = rtt_m[k]
            tool_summary[f"tool_rtt_{k}_ms"] = float(v) if v != "N/A" else None
    samples = pd.DataFrame(sent, columns=["seq", "icmp_seq", "t_s", "rtt_ms"])
    return samples, tool_summary


def read_ping(src: str | Path, text: str | None = None) -> PingResult:
    """Parse a ping or nping log (a path; or `text` with `src` as its label)."""
    path = str(src)
    if text is None:
        text = Path(src).read_text(errors="replace")
    tool = "nping" if ("Starting Nping" in text or _NPING_LINE.search(text) or _NPING_TX.search(text)) \
        else "ping"
    samples, tool_summary = _parse_nping(text) if tool == "nping" else _parse_ping(text)
    if samples.empty and not tool_summary:
        raise ValueError(f"{path}: no ping or nping output found")
    rtts = samples["rtt_ms"].to_numpy(dtype=float)
    received = int((~np.isnan(rtts)).sum())
    transmitted = int(tool_summary.get("tool_transmitted", len(samples)))
    summary = {"tool": tool, "transmitted": transmitted, "received": received,
               "loss_rate": (1 - received / transmitted) if transmitted else None,
               **_stats(rtts), **tool_summary}
    return PingResult(path=path, tool=tool, samples=samples, summary=summary)
