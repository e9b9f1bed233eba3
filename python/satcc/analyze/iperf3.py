"""iperf3 JSON (`iperf3 -J`) as DataFrames: TCP or UDP, client or server side, `-P` streams,
`-R` reverse.

    r = read_iperf3("run.json")
    r.meta        protocol, role (client/server), reverse, streams, duration, cca, version
    r.streams     one row per stream: endpoints in the data direction, bytes, bits/s,
                  retransmits, RTT (µs → ms) or UDP packets/lost/jitter, as iperf3 reports them
    r.intervals   one row per stream per interval (usually 1 s): bytes, bits/s, retransmits,
                  snd_cwnd, rtt, rttvar, pmtu (TCP sender side) or packets, lost, jitter (UDP)
    r.flows       the per-flow summary in the simulator's shape (goodput_bps, delivered_bytes,
                  retransmitted_packets, rtt_mean_ms ...)

iperf3 reports sender-side TCP numbers (retransmits, cwnd, rtt) only on the side that sent:
the client normally, the server with `-R`; the other side has zeros there, read as missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

US_PER_MS = 1000.0


@dataclass
class Iperf3Result:
    path: str
    meta: dict[str, Any]
    streams: pd.DataFrame
    intervals: pd.DataFrame
    flows: pd.DataFrame


def looks_like_iperf3(doc: Any) -> bool:
    return isinstance(doc, dict) and "start" in doc and "end" in doc and "intervals" in doc


def _role(start: dict[str, Any]) -> str:
    return "client" if "connecting_to" in start else "server"


def read_iperf3(src: str | Path | dict[str, Any]) -> Iperf3Result:
    """Parse an iperf3 JSON document (path, or the already-loaded dict)."""
    if isinstance(src, dict):
        doc, path = src, "<dict>"
    else:
        path = str(src)
        text = Path(src).read_text()
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
    if not looks_like_iperf3(doc):
        raise ValueError(f"{path}: not an iperf3 -J document (needs start, intervals, end)")
    if "error" in doc and not doc.get("intervals"):
        raise ValueError(f"{path}: iperf3 reported an error: {doc['error']}")
    start, end = doc["start"], doc["end"]
    ts = start.get("test_start", {})
    protocol = ts.get("protocol", "TCP").upper()
    role = _role(start)
    reverse = bool(ts.get("reverse", 0))
    # Who sends data: the client unless -R.
    local_sends = (role == "client") != reverse
    meta = {
        "protocol": protocol,
        "role": role,
        "reverse": reverse,
        "streams": ts.get("num_streams", len(start.get("connected", []))),
        "duration_s": ts.get("duration"),
        "cca": end.get("sender_tcp_congestion"),
        "receiver_cca": end.get("receiver_tcp_congestion"),
        "version": start.get("version"),
        "timesecs": start.get("timestamp", {}).get("timesecs"),
        "local_sends": local_sends,
    }
    conns = {c["socket"]: c for c in start.get("connected", [])}

    def endpoints(sock: int) -> dict[str, Any]:
        c = conns.get(sock, {})
        lh, lp, rh, rp = c.get("local_host"), c.get("local_port"), c.get("remote_host"), c.get("remote_port")
        if local_sends:
            return {"src": lh, "sport": lp, "dst": rh, "dport": rp}
        return {"src": rh, "sport": rp, "dst": lh, "dport": lp}

    rows = []
    for i, s in enumerate(end.get("streams", [])):
        if "udp" in s:
            u = s["udp"]
            rows.append({"stream": i, "socket": u["socket"], **endpoints(u["socket"]),
                         "protocol": "udp", "seconds": u.get("seconds"), "bytes": u.get("bytes"),
                         "bits_per_second": u.get("bits_per_second"), "packets": u.get("packets"),
                         "lost_packets": u.get("lost_packets"), "lost_percent": u.get("lost_percent"),
                         "out_of_order": u.get("out_of_order"), "jitter_ms": u.get("jitter_ms"),
                         "this_side_sent": bool(u.get("sender"))})
            continue
        snd, rcv = s.get("sender", {}), s.get("receiver", {})
        has_tcpinfo = bool(snd.get("sender")) and snd.get("mean_rtt", 0) > 0
        rows.append({
            "stream": i, "socket": snd.get("socket"), **endpoints(snd.get("socket")),
            "protocol": "tcp", "seconds": rcv.get("seconds") or snd.get("seconds"),
            "sent_bytes": snd.get("bytes"), "bytes": rcv.get("bytes"),
            "sender_bits_per_second": snd.get("bits_per_second"),
            "bits_per_second": rcv.get("bits_per_second"),
            "retransmits": snd.get("retransmits") if snd.get("sender") else None,
            "max_snd_cwnd": snd.get("max_snd_cwnd") if has_tcpinfo else None,
            "mean_rtt_ms": snd["mean_rtt"] / US_PER_MS if has_tcpinfo else None,
            "min_rtt_ms": snd["min_rtt"] / US_PER_MS if has_tcpinfo else None,
            "max_rtt_ms": snd["max_rtt"] / US_PER_MS if has_tcpinfo else None,
            "this_side_sent": bool(snd.get("sender")),
        })
    streams = pd.DataFrame(rows)

    irows = []
    for iv in doc.get("intervals", []):
        for s in iv.get("streams", []):
            r = {"socket": s.get("socket"), "start_s": s.get("start"), "end_s": s.get("end"),
                 "seconds": s.get("seconds"), "bytes": s.get("bytes"),
                 "bits_per_second": s.get("bits_per_second"), "omitted": s.get("omitted"),
                 "this_side_sent": bool(s.get("sender"))}
            if protocol == "UDP":
                r.update(packets=s.get("packets"), lost_packets=s.get("lost_packets"),
                         jitter_ms=s.get("jitter_ms"))
            else:
                tcpinfo = "rtt" in s
                r.update(retransmits=s.get("retransmits") if tcpinfo else None,
                         snd_cwnd=s.get("snd_cwnd") if tcpinfo else None,
                         rtt_ms=s["rtt"] / US_PER_MS if tcpinfo else None,
                         rttvar_ms=s["rttvar"] / US_PER_MS if tcpinfo else None,
                         pmtu=s.get("pmtu") if tcpinfo else None)
            irows.append(r)
    intervals = pd.DataFrame(irows)
    flows = _flows(streams, intervals, protocol)
    return Iperf3Result(path=path, meta=meta, streams=streams, intervals=intervals, flows=flows)


def _flows(streams: pd.DataFrame, intervals: pd.DataFrame, protocol: str) -> pd.DataFrame:
    out = []
    for i, s in enumerate(streams.to_dict("records")):
        ivs = intervals[intervals["socket"] == s["socket"]] if not intervals.empty else intervals
        rtts = ivs["rtt_ms"].dropna() if "rtt_ms" in ivs else pd.Series(dtype=float)
        row = {"id": i, "proto": protocol.lower(), "src": s["src"], "dst": s["dst"],
               "sport": s["sport"], "dport": s["dport"],
               "goodput_bps": s.get("bits_per_second"), "delivered_bytes": s.get("bytes"),
               "sent_packets": s.get("packets") if protocol == "UDP" else None,
               "retransmitted_packets": s.get("retransmits") if protocol == "TCP" else None,
               "retransmission_rate": None,
               "rtt_mean_ms": s.get("mean_rtt_ms") if protocol == "TCP" else None,
               "rtt_p95_ms": float(np.percentile(rtts, 95)) if len(rtts) else None,
               "rtt_min_ms": s.get("min_rtt_ms") if protocol == "TCP" else None,
               "fct_s": None}
        if protocol == "UDP":
            row.update(udp_lost=s.get("lost_packets"), udp_jitter_ms=s.get("jitter_ms"),
                       udp_loss_rate=(s["lost_percent"] / 100.0) if s.get("lost_percent") is not None else None)
        out.append(row)
    return pd.DataFrame(out)
