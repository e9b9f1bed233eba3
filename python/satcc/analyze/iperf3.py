"""iperf3 JSON (`iperf3 -J`, and `--json-stream` of iperf3 >= 3.17) as DataFrames: TCP or UDP,
client or server side, `-P` streams, `-R` reverse.

    r = read_iperf3("run.json")
    r.meta        protocol, role (client/server), reverse, streams, duration, cca, version
    r.streams     one row per stream: endpoints in the data direction, bytes, bits/s,
                  retransmits, RTT (µs → ms) or UDP packets/lost/jitter, as iperf3 reports them
    r.intervals   one row per stream per interval (usually 1 s): bytes, bits/s, retransmits,
                  snd_cwnd, rtt, rttvar, pmtu (TCP sender side) or packets, lost, jitter (UDP)
    r.flows       the per-flow summary in the simulator's shape (goodput_bps, delivered_bytes,
                  retransmitted_packets, rtt_mean_ms ...)
    r.warnings    what was odd but readable (iperf3's own error after some intervals, ...)

iperf3 reports sender-side TCP numbers (cwnd, rtt) only on the side that sent: the client
normally, the server with `-R`; the other side has zeros there, read as missing. Retransmits
travel with the results exchange: a `-R` client's `end.streams[].sender.retransmits` (with
`sender: false`) are the server's, and are read; a side that lacks them writes no key.
A server's report (`iperf3 -s -J`) lacks the peer's totals: its `end` figures for the remote
side are 0 (TCP: the receiver's bytes when the server sends, with -R; UDP: the bytes). Then
the stream's bytes and bits/s are the sum of its own intervals, and `bytes_source` says
"intervals" (on a sending server these count bytes written to the socket, not delivered).

Malformed documents raise `Iperf3Error` (a ValueError) naming the file and the key path:
`run.json: end.streams[0].sender.bytes: expected a number >= 0, found -5`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

US_PER_MS = 1000.0
MAX_JSON_BYTES = 512 * 1024 * 1024
MAX_NESTING = 64  # iperf3 documents nest 5 deep; deeper is not iperf3 output
MAX_COUNT = 2**63 - 1  # byte and packet counts go into int64 columns


class Iperf3Error(ValueError):
    """An iperf3 document that cannot be read; the message is one line naming file and key."""


@dataclass
class Iperf3Result:
    path: str
    meta: dict[str, Any]
    streams: pd.DataFrame
    intervals: pd.DataFrame
    flows: pd.DataFrame
    warnings: list[str] = field(default_factory=list)


def looks_like_iperf3(doc: Any) -> bool:
    return isinstance(doc, dict) and "start" in doc and "end" in doc and "intervals" in doc


def _role(start: dict[str, Any]) -> str:
    return "client" if "connecting_to" in start else "server"


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    return "an object"


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _nesting(text: str) -> int:
    """Deepest bracket nesting outside strings (checked before json.loads, which recurses)."""
    raw = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8", "replace"), dtype=np.uint8)
    step = np.isin(raw, (ord("["), ord("{"))).astype(np.int64) - np.isin(
        raw, (ord("]"), ord("}"))
    ).astype(np.int64)
    return int(np.cumsum(step).max()) if len(step) else 0


def _reject_constant(name: str) -> Any:
    raise Iperf3Error(f"expected finite numbers, found {name}")


def _loads(text: str, path: str, where: str = "") -> Any:
    if _nesting(text) > MAX_NESTING:
        raise Iperf3Error(
            f"{path}: {where}expected an iperf3 JSON document, found JSON nested "
            f"more than {MAX_NESTING} levels deep"
        )
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except Iperf3Error as e:
        raise Iperf3Error(f"{path}: {where}{e}") from None
    except json.JSONDecodeError as e:
        raise Iperf3Error(f"{path}: {where}not JSON ({e})") from None
    except ValueError as e:  # an integer too long for int()
        raise Iperf3Error(f"{path}: {where}unreadable number ({e})") from None


def _from_stream(lines: list[str], path: str) -> dict[str, Any]:
    """Assemble `--json-stream` events ({"event": ..., "data": ...} per line) into one
    `-J`-shaped document: start, intervals[], end, and error when iperf3 reported one."""
    doc: dict[str, Any] = {"intervals": []}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        ev = _loads(line, path, f"line {n}: ")
        if not isinstance(ev, dict) or not isinstance(ev.get("event"), str):
            raise Iperf3Error(
                f"{path}: line {n}: expected an iperf3 --json-stream event "
                f'{{"event": ..., "data": ...}}, found {_kind(ev)}'
            )
        kind, data = ev["event"], ev.get("data")
        if kind == "interval":
            doc["intervals"].append(data)
        elif kind in ("start", "end", "error"):
            doc[kind] = data
        # other events (server_output_text ...) carry nothing we read
    return doc


def load_document(path: str | Path) -> dict[str, Any]:
    """Read an iperf3 `-J` or `--json-stream` file into a `-J`-shaped dict (no validation)."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_JSON_BYTES:
        raise Iperf3Error(
            f"{path}: expected an iperf3 JSON file under {MAX_JSON_BYTES >> 20} MiB, "
            f"found {size} bytes"
        )
    text = p.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    if first.lstrip().startswith('{"event"') or first.lstrip().startswith('{ "event"'):
        return _from_stream(lines, str(path))
    return _loads(text, str(path))


class _Reader:
    """Typed access to the document with key paths in the error messages."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, where: str, expected: str, found: Any) -> Iperf3Error:
        shown = (
            _kind(found)
            if not isinstance(found, (int, float)) or isinstance(found, bool)
            else (
                f"{found:.6g}"
                if isinstance(found, float)
                else (
                    str(found)
                    if len(str(found)) <= 24
                    else f"an integer of {len(str(found))} digits"
                )
            )
        )
        return Iperf3Error(f"{self.path}: {where}: expected {expected}, found {shown}")

    def obj(self, v: Any, where: str, optional: bool = True) -> dict[str, Any]:
        if v is None and optional:
            return {}
        if not isinstance(v, dict):
            raise self.fail(where, "an object", v)
        return v

    def lst(self, v: Any, where: str) -> list[Any]:
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.fail(where, "a list", v)
        return v

    def count(self, d: dict[str, Any], key: str, where: str) -> int | None:
        """A byte/packet count: an integer 0..2^63-1 (iperf3 writes some as 1.0e6 floats)."""
        v = d.get(key)
        if v is None:
            return None
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not 0 <= v <= MAX_COUNT
            or (isinstance(v, float) and not math.isfinite(v))
        ):
            raise self.fail(f"{where}.{key}", "a number >= 0", v)
        return int(v)

    def num(self, d: dict[str, Any], key: str, where: str, lo: float = 0.0) -> float | None:
        v = d.get(key)
        if v is None:
            return None
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not math.isfinite(float(v))
            or v < lo
            or abs(v) > 1e300
        ):
            raise self.fail(f"{where}.{key}", f"a number >= {lo:g}", v)
        return float(v)


def read_iperf3(src: str | Path | dict[str, Any]) -> Iperf3Result:
    """Parse an iperf3 JSON document (path, or the already-loaded dict)."""
    if isinstance(src, dict):
        doc, path = src, "<dict>"
    else:
        path = str(src)
        doc = load_document(src)
    rd = _Reader(path)
    warnings: list[str] = []
    if isinstance(doc, dict) and doc.get("error") is not None and not doc.get("intervals"):
        msg = doc["error"] if isinstance(doc["error"], str) else json.dumps(doc["error"])[:200]
        raise Iperf3Error(f"{path}: iperf3 reported an error: {msg}")
    if not isinstance(doc, dict) or "start" not in doc or "end" not in doc:
        raise Iperf3Error(f"{path}: not an iperf3 -J document (needs start, intervals, end)")
    if doc.get("error") is not None:
        warnings.append(
            f"iperf3 reported an error after {len(doc['intervals'])} intervals: {doc['error']}"
        )
    if "intervals" not in doc:
        warnings.append("no intervals: per-interval series are empty")
    start = rd.obj(doc["start"], "start")
    end = rd.obj(doc["end"], "end")
    ts = rd.obj(start.get("test_start"), "start.test_start")
    protocol = ts.get("protocol", "TCP")
    if not isinstance(protocol, str) or protocol.upper() not in ("TCP", "UDP", "SCTP"):
        raise rd.fail("start.test_start.protocol", '"TCP" or "UDP"', protocol)
    protocol = protocol.upper()
    role = _role(start)
    reverse = bool(ts.get("reverse", 0))
    # Who sends data: the client unless -R; with --bidir each stream says (its `sender`;
    # iperf3 3.12 writes no `bidir` key: the streams' mixed `sender` flags tell)
    local_sends = (role == "client") != reverse
    senders = {
        bool((s.get("udp") or s.get("sender") or {}).get("sender"))
        for s in (end.get("streams") or [])
        if isinstance(s, dict)
    }
    bidir = bool(ts.get("bidir", 0)) or len(senders) > 1
    connected = rd.lst(start.get("connected"), "start.connected")
    if not connected:
        warnings.append("start.connected is empty or null: stream endpoints unknown")
    meta = {
        "protocol": protocol,
        "role": role,
        "reverse": reverse,
        "streams": rd.count(ts, "num_streams", "start.test_start") or len(connected),
        "duration_s": rd.num(ts, "duration", "start.test_start"),
        "cca": end.get("sender_tcp_congestion"),
        "receiver_cca": end.get("receiver_tcp_congestion"),
        "version": start.get("version"),
        "timesecs": rd.obj(start.get("timestamp"), "start.timestamp").get("timesecs"),
        "local_sends": local_sends,
    }
    conns = {}
    for i, c in enumerate(connected):
        c = rd.obj(c, f"start.connected[{i}]", optional=False)
        conns[c.get("socket")] = c

    def endpoints(sock: Any, this_side_sent: Any = None) -> dict[str, Any]:
        c = conns.get(sock, {})
        lh, lp, rh, rp = (
            c.get("local_host"),
            c.get("local_port"),
            c.get("remote_host"),
            c.get("remote_port"),
        )
        if bool(this_side_sent) if bidir else local_sends:
            return {"src": lh, "sport": lp, "dst": rh, "dport": rp}
        return {"src": rh, "sport": rp, "dst": lh, "dport": lp}

    irows = []
    for k, iv in enumerate(rd.lst(doc.get("intervals"), "intervals")):
        iv = rd.obj(iv, f"intervals[{k}]", optional=False)
        for j, s in enumerate(rd.lst(iv.get("streams"), f"intervals[{k}].streams")):
            w = f"intervals[{k}].streams[{j}]"
            s = rd.obj(s, w, optional=False)
            r = {
                "socket": s.get("socket"),
                "start_s": rd.num(s, "start", w),
                "end_s": rd.num(s, "end", w),
                "seconds": rd.num(s, "seconds", w),
                "bytes": rd.count(s, "bytes", w),
                "bits_per_second": rd.num(s, "bits_per_second", w),
                "omitted": s.get("omitted"),
                "this_side_sent": bool(s.get("sender")),
            }
            if protocol == "UDP":
                r.update(
                    packets=rd.count(s, "packets", w),
                    lost_packets=rd.count(s, "lost_packets", w),
                    jitter_ms=rd.num(s, "jitter_ms", w),
                )
            else:
                tcpinfo = "rtt" in s
                rtt = rd.num(s, "rtt", w) if tcpinfo else None
                rttvar = rd.num(s, "rttvar", w) if tcpinfo else None
                r.update(
                    retransmits=rd.count(s, "retransmits", w) if tcpinfo else None,
                    snd_cwnd=rd.count(s, "snd_cwnd", w) if tcpinfo else None,
                    rtt_ms=rtt / US_PER_MS if rtt is not None else None,
                    rttvar_ms=rttvar / US_PER_MS if rttvar is not None else None,
                    pmtu=rd.count(s, "pmtu", w) if tcpinfo else None,
                )
            irows.append(r)
    columns = [
        "socket",
        "start_s",
        "end_s",
        "seconds",
        "bytes",
        "bits_per_second",
        "omitted",
        "this_side_sent",
    ] + (
        ["packets", "lost_packets", "jitter_ms"]
        if protocol == "UDP"
        else ["retransmits", "snd_cwnd", "rtt_ms", "rttvar_ms", "pmtu"]
    )
    intervals = pd.DataFrame(irows, columns=columns)

    def own_totals(sock: Any) -> tuple[int | None, float | None]:
        """Bytes and bits/s from this side's intervals of one stream (a server's fallback)."""
        if intervals.empty:
            return None, None
        ivs = intervals[intervals["socket"] == sock]
        nbytes = int(ivs["bytes"].fillna(0).sum())
        secs = float(ivs["seconds"].fillna(0).sum())
        return nbytes, (nbytes * 8 / secs if secs > 0 else None)

    rows = []
    for i, s in enumerate(rd.lst(end.get("streams"), "end.streams")):
        w = f"end.streams[{i}]"
        s = rd.obj(s, w, optional=False)
        if "udp" in s:
            u = rd.obj(s["udp"], f"{w}.udp", optional=False)
            w = f"{w}.udp"
            nbytes, bps, source = rd.count(u, "bytes", w), rd.num(u, "bits_per_second", w), "end"
            if not nbytes:
                own_b, own_bps = own_totals(u.get("socket"))
                if own_b:
                    nbytes, bps, source = own_b, own_bps, "intervals"
            rows.append(
                {
                    "stream": i,
                    "socket": u.get("socket"),
                    **endpoints(u.get("socket"), u.get("sender")),
                    "protocol": "udp",
                    "seconds": rd.num(u, "seconds", w),
                    "bytes": nbytes,
                    "bits_per_second": bps,
                    "bytes_source": source,
                    "packets": rd.count(u, "packets", w),
                    "lost_packets": rd.count(u, "lost_packets", w),
                    "lost_percent": rd.num(u, "lost_percent", w),
                    "out_of_order": rd.count(u, "out_of_order", w),
                    "jitter_ms": rd.num(u, "jitter_ms", w),
                    "this_side_sent": bool(u.get("sender")),
                }
            )
            continue
        snd = rd.obj(s.get("sender"), f"{w}.sender")
        rcv = rd.obj(s.get("receiver"), f"{w}.receiver")
        ws, wr = f"{w}.sender", f"{w}.receiver"
        has_tcpinfo = bool(snd.get("sender")) and (rd.num(snd, "mean_rtt", ws) or 0) > 0
        nbytes, bps, source = rd.count(rcv, "bytes", wr), rd.num(rcv, "bits_per_second", wr), "end"
        sock = snd.get("socket", rcv.get("socket"))
        if not nbytes:
            # A server's report: the receiver's totals are the peer's and were not filled in.
            own_b, own_bps = own_totals(sock)
            if own_b:
                nbytes, bps, source = own_b, own_bps, "intervals"
        rtt = {k: rd.num(snd, k, ws) for k in ("mean_rtt", "min_rtt", "max_rtt")}
        rows.append(
            {
                "stream": i,
                "socket": sock,
                **endpoints(sock, snd.get("sender")),
                "protocol": "tcp",
                "seconds": rd.num(rcv, "seconds", wr) or rd.num(snd, "seconds", ws),
                "sent_bytes": rd.count(snd, "bytes", ws),
                "bytes": nbytes,
                "sender_bits_per_second": rd.num(snd, "bits_per_second", ws),
                "bits_per_second": bps,
                "bytes_source": source,
                # A -R client's report carries the server's (the sender's) retransmits with
                # sender: false; a side that does not know them writes no key (3.12: a forward
                # run's server), so the key's presence is what counts.
                "retransmits": rd.count(snd, "retransmits", ws),
                "max_snd_cwnd": rd.count(snd, "max_snd_cwnd", ws) if has_tcpinfo else None,
                "mean_rtt_ms": rtt["mean_rtt"] / US_PER_MS
                if has_tcpinfo and rtt["mean_rtt"]
                else None,
                "min_rtt_ms": rtt["min_rtt"] / US_PER_MS
                if has_tcpinfo and rtt["min_rtt"]
                else None,
                "max_rtt_ms": rtt["max_rtt"] / US_PER_MS
                if has_tcpinfo and rtt["max_rtt"]
                else None,
                "this_side_sent": bool(snd.get("sender")),
            }
        )
    streams = pd.DataFrame(rows)
    if streams.empty:
        raise Iperf3Error(
            f"{path}: end.streams: expected at least one stream, found none"
            + (f" (iperf3 reported: {doc['error']})" if doc.get("error") else "")
        )
    flows = _flows(streams, intervals, protocol)
    return Iperf3Result(
        path=path, meta=meta, streams=streams, intervals=intervals, flows=flows, warnings=warnings
    )


def _flows(streams: pd.DataFrame, intervals: pd.DataFrame, protocol: str) -> pd.DataFrame:
    out = []
    for i, s in enumerate(streams.to_dict("records")):
        ivs = intervals[intervals["socket"] == s["socket"]] if not intervals.empty else intervals
        rtts = ivs["rtt_ms"].dropna() if "rtt_ms" in ivs else pd.Series(dtype=float)
        row = {
            "id": i,
            "proto": protocol.lower(),
            "src": s["src"],
            "dst": s["dst"],
            "sport": s["sport"],
            "dport": s["dport"],
            "goodput_bps": s.get("bits_per_second"),
            "delivered_bytes": s.get("bytes"),
            "sent_packets": s.get("packets") if protocol == "UDP" else None,
            "retransmitted_packets": s.get("retransmits") if protocol == "TCP" else None,
            "retransmission_rate": None,
            "rtt_mean_ms": s.get("mean_rtt_ms") if protocol == "TCP" else None,
            "rtt_p95_ms": float(np.percentile(rtts, 95)) if len(rtts) else None,
            "rtt_min_ms": s.get("min_rtt_ms") if protocol == "TCP" else None,
            "fct_s": None,
        }
        if protocol == "UDP":
            row.update(
                udp_lost=s.get("lost_packets"),
                udp_jitter_ms=s.get("jitter_ms"),
                udp_loss_rate=(s["lost_percent"] / 100.0)
                if s.get("lost_percent") is not None
                else None,
            )
        out.append(row)
    return pd.DataFrame(out)
