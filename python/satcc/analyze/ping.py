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
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

_PING_REPLY = re.compile(
    r"^(?:\[(?P<epoch>\d+(?:\.\d+)?)\]\s*)?\d+ bytes from (?P<host>[^:\s]+):?.*?"
    r"icmp_[sr]eq=(?P<seq>\d+).*?time[=<](?P<rtt>[\d.]+)\s*ms"
)
_PING_TX = re.compile(r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?:packets )?received")
_PING_RTT = re.compile(
    r"(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = "
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)"
)
_NPING_LINE = re.compile(
    r"^(?P<dir>SENT|RCVD) \((?P<t>[\d.]+)s\) (?P<proto>ICMP|TCP|UDP)\b(?P<rest>.*)$"
)
_NPING_SEQ = re.compile(r"\bseq=(?P<seq>\d+)")
_NPING_RTT = re.compile(
    r"Max rtt: (?P<max>[\d.]+|N/A)ms \| Min rtt: (?P<min>[\d.]+|N/A)ms \| "
    r"Avg rtt: (?P<avg>[\d.]+|N/A)ms"
)
_NPING_TX = re.compile(r"Raw packets sent: (?P<tx>\d+) .*?\| Rcvd: (?P<rx>\d+)")
# ping and nping lines are under 200 characters; longer lines are not their output and are
# skipped before any pattern runs (a regex over one 100 KB line can take quadratic time).
MAX_LINE_CHARS = 1024
# ICMP sequence numbers are 16 bits (iputils counts on past 65535 in its own numbering, but not
# by billions); a larger number is not ping output.
MAX_SEQ = 2**32
# Lost probes are filled in between the replies; never more than this many beyond the probes
# the log accounts for (a gap of 10^20 would otherwise allocate 10^20 rows).
MAX_FILL = 1_000_000


@dataclass
class PingResult:
    path: str
    tool: str
    samples: pd.DataFrame
    summary: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def looks_like_ping(text: str) -> bool:
    return bool(
        _PING_TX.search(text)
        or _NPING_TX.search(text)
        or _PING_REPLY.search(text)
        or "Starting Nping" in text
    )


def _stats(rtts: np.ndarray) -> dict[str, float | None]:
    ok = rtts[~np.isnan(rtts)]
    if len(ok) == 0:
        return {"rtt_min_ms": None, "rtt_mean_ms": None, "rtt_max_ms": None, "rtt_p95_ms": None}
    return {
        "rtt_min_ms": float(ok.min()),
        "rtt_mean_ms": float(ok.mean()),
        "rtt_max_ms": float(ok.max()),
        "rtt_p95_ms": float(np.percentile(ok, 95)),
    }


def _parse_ping(text: str, warnings: list[str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _PING_REPLY.search(line.strip())
        if m:
            if len(m["seq"]) > 10 or int(m["seq"]) > MAX_SEQ:
                warnings.append(f"line {n}: icmp_seq above {MAX_SEQ}, line skipped")
                continue
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
        tool_summary.update(
            tool_rtt_min_ms=float(rtt_m["min"]),
            tool_rtt_avg_ms=float(rtt_m["avg"]),
            tool_rtt_max_ms=float(rtt_m["max"]),
        )
    # Probes without a reply are lost: fill the sequence from 1 to the number transmitted.
    # iputils numbers probes from 1, BSD ping from 0.
    lo = 0 if got and min(got) == 0 else 1
    n_tx = tool_summary.get("tool_transmitted", 0)
    seqs = range(lo, max(max(got, default=lo - 1), lo + n_tx - 1) + 1)
    if len(seqs) > len(got) + n_tx + MAX_FILL:
        warnings.append(
            f"sequence numbers jump by more than {MAX_FILL}; lost probes are not "
            "filled in, only replies are listed"
        )
        seqs = range(0)
        samples = pd.DataFrame(
            sorted(rows, key=lambda r: r["seq"]), columns=["seq", "t_epoch", "rtt_ms"]
        )
        samples["t_s"] = samples["t_epoch"] - samples["t_epoch"].min()
        return samples, tool_summary
    samples = pd.DataFrame(
        [got.get(s, {"seq": s, "t_epoch": math.nan, "rtt_ms": math.nan}) for s in seqs],
        columns=["seq", "t_epoch", "rtt_ms"],
    )
    t0 = samples["t_epoch"].min()
    samples["t_s"] = samples["t_epoch"] - t0
    return samples, tool_summary


def _parse_nping(text: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    # Unanswered probes, oldest first, per ICMP seq (None: probes without one); answered ones
    # are skipped lazily, so matching stays linear in the number of lines.
    waiting: dict[int | None, deque[int]] = defaultdict(deque)
    latest: list[int] = []
    for line in text.splitlines():
        m = _NPING_LINE.match(line.strip())
        if not m:
            continue
        t = float(m["t"])
        sm = _NPING_SEQ.search(m["rest"]) if m["proto"] == "ICMP" else None
        seq = int(sm["seq"]) if sm else None
        if m["dir"] == "SENT":
            waiting[seq].append(len(sent))
            latest.append(len(sent))
            sent.append({"seq": len(sent) + 1, "icmp_seq": seq, "t_s": t, "rtt_ms": math.nan})
            continue
        # RCVD: the oldest unanswered probe with the same ICMP seq; TCP/UDP replies carry no
        # probe number, so the latest unanswered probe (nping's own min/max agree with this).
        if seq is not None:
            heads = []
            for key in (seq, None):
                q = waiting.get(key)
                while q and not math.isnan(sent[q[0]]["rtt_ms"]):
                    q.popleft()
                if q:
                    heads.append(q[0])
            pick = min(heads) if heads else None
        else:
            while latest and not math.isnan(sent[latest[-1]]["rtt_ms"]):
                latest.pop()
            pick = latest[-1] if latest else None
        if pick is not None:
            sent[pick]["rtt_ms"] = (t - sent[pick]["t_s"]) * 1000.0
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


def _short_lines(text: str, warnings: list[str]) -> str:
    kept, long = [], 0
    for line in text.splitlines():
        if len(line) > MAX_LINE_CHARS:
            long += 1
        else:
            kept.append(line)
    if long:
        warnings.append(
            f"{long} line(s) longer than {MAX_LINE_CHARS} characters skipped "
            "(not ping/nping output)"
        )
    return "\n".join(kept)


def read_ping(src: str | Path, text: str | None = None) -> PingResult:
    """Parse a ping or nping log (a path; or `text` with `src` as its label)."""
    path = str(src)
    if text is None:
        text = Path(src).read_text(errors="replace")
    warnings: list[str] = []
    text = _short_lines(text, warnings)
    tool = (
        "nping"
        if ("Starting Nping" in text or _NPING_LINE.search(text) or _NPING_TX.search(text))
        else "ping"
    )
    samples, tool_summary = _parse_nping(text) if tool == "nping" else _parse_ping(text, warnings)
    if samples.empty and not tool_summary:
        raise ValueError(f"{path}: no ping or nping output found")
    rtts = samples["rtt_ms"].to_numpy(dtype=float)
    received = int((~np.isnan(rtts)).sum())
    transmitted = int(tool_summary.get("tool_transmitted", len(samples)))
    summary = {
        "tool": tool,
        "transmitted": transmitted,
        "received": received,
        "loss_rate": (1 - received / transmitted) if transmitted else None,
        **_stats(rtts),
        **tool_summary,
    }
    return PingResult(path=path, tool=tool, samples=samples, summary=summary, warnings=warnings)
