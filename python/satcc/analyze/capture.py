"""Capture (pcap/pcapng) analysis as pandas DataFrames, on top of the Rust analyzer.

    cap = read_capture("dish.pcap", bin_s=0.1, packets=True, rtt=True)
    cap.flows      one row per flow direction (5-tuple, bytes, goodput, tshark flag counts, RTT)
    cap.series     per flow per bin: payload bytes, new bytes, goodput, packets, retransmits
    cap.packets    per TCP/UDP packet (when packets=True): time, flow, seq/ack, flags,
                   tshark's bytes_in_flight (NaN where tshark shows none)
    cap.rtt        per RTT sample (when rtt=True): data→ACK and TSval→TSecr
    seq_ack_graph(cap, flow_id)  time/sequence/ACK data for a tcptrace-style plot

Times `t_s` are seconds from the capture's first packet (tshark's `frame.time_relative`);
bins start there too. Column meanings: docs/analyze.md.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from satcc import _native

if TYPE_CHECKING:  # numpy and pandas load only for the DataFrames (satcc analyze needs neither)
    import pandas as pd

DEFAULT_BIN_S = 0.1  # studies 000/001: throughput in 0.1 s bins

FLAG_NAMES: list[str] = list(_native.pcap_flag_names())
# tshark's `tcp.analysis.retransmission` matches all three (see crates/satcc-pcap/src/tshark.rs)
RETRANSMITTED_ANY = 0b111


class CaptureAnalysis:
    """One capture's analysis. `raw_flows` are the analyzer's per-direction dicts; the
    DataFrames (`flows`, `series`, `packets`, `rtt`) are built, and pandas imported, on first
    use: `satcc analyze` writes its results from `raw_flows` alone."""

    def __init__(
        self,
        path: str,
        format: str | None,
        bin_s: float,
        first_ts_ns: int | None,
        stats: dict[str, int],
        warnings: list[dict[str, Any] | str],
        raw_flows: list[dict[str, Any]],
        raw_packets: dict[str, tuple[str, bytes]] | None = None,
        raw_rtt: dict[str, tuple[str, bytes]] | None = None,
    ) -> None:
        self.path = path
        self.format = format
        self.bin_s = bin_s
        self.first_ts_ns = first_ts_ns
        self.stats = stats
        self.warnings = warnings
        self.raw_flows = raw_flows
        self._raw_packets = raw_packets
        self._raw_rtt = raw_rtt

    def __repr__(self) -> str:
        return f"CaptureAnalysis({self.path!r}, {len(self.raw_flows)} flow directions)"

    @property
    def duration_s(self) -> float:
        return max((float(f["end_s"]) for f in self.raw_flows), default=0.0)

    @cached_property
    def flows(self) -> pd.DataFrame:
        return _flows_frame(self.raw_flows)

    @cached_property
    def series(self) -> pd.DataFrame:
        return _series_frame(self.raw_flows, self.bin_s)

    @cached_property
    def packets(self) -> pd.DataFrame | None:
        packets = _columns(self._raw_packets)
        if packets is not None:
            packets.insert(1, "t_s", packets["t_ns"] / 1e9)
            packets["proto"] = packets["proto"].map({6: "tcp", 17: "udp"})
        return packets

    @cached_property
    def rtt(self) -> pd.DataFrame | None:
        rtt = _columns(self._raw_rtt)
        if rtt is not None:
            rtt["t_s"] = rtt["t_ns"] / 1e9
            rtt["rtt_ms"] = rtt["rtt_ns"] / 1e6
            rtt["kind"] = rtt["kind"].map({0: "data-ack", 1: "tsval"})
        return rtt


def _columns(raw: dict[str, tuple[str, bytes]] | None) -> pd.DataFrame | None:
    if raw is None:
        return None
    import numpy as np
    import pandas as pd

    return pd.DataFrame(
        {name: np.frombuffer(buf, dtype=np.dtype(dt)) for name, (dt, buf) in raw.items()}
    )


def _flows_frame(flows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for f in flows:
        row = {k: v for k, v in f.items() if k not in ("bins", "flag_counts", "iperf_udp")}
        for name, n in f["flag_counts"].items():
            row[f"n_{name}"] = n
        u = f.get("iperf_udp")  # udp_lost, udp_loss_rate, udp_jitter_ms: the analyzer's columns
        row["udp_iperf"] = u is not None
        row["udp_expected"] = u["expected"] if u else None
        row["udp_out_of_order"] = u["out_of_order"] if u else None
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=["id", "conn", "proto", "dir", "src", "dst", "sport", "dport"])
    return df


def _series_frame(flows: list[dict[str, Any]], bin_s: float) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    parts = []
    for f in flows:
        b = f["bins"]
        n = len(b["payload_bytes"])
        if n == 0:
            continue
        idx = np.arange(b["first"], b["first"] + n, dtype=np.int64)
        payload = np.asarray(b["payload_bytes"], dtype=np.int64)
        new = np.asarray(b["new_bytes"], dtype=np.int64)
        parts.append(
            pd.DataFrame(
                {
                    "flow_id": np.full(n, f["id"], dtype=np.int64),
                    "bin": idx,
                    "t_s": idx * bin_s,
                    "payload_bytes": payload,
                    "delivered_bytes": new,
                    "throughput_bps": payload * 8 / bin_s,
                    "goodput_bps": new * 8 / bin_s,
                    "packets": np.asarray(b["packets"], dtype=np.int64),
                    "retransmits": np.asarray(b["retransmits"], dtype=np.int64),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            columns=[
                "flow_id",
                "bin",
                "t_s",
                "payload_bytes",
                "delivered_bytes",
                "throughput_bps",
                "goodput_bps",
                "packets",
                "retransmits",
            ]
        )
    return pd.concat(parts, ignore_index=True)


# A direction that carried fewer data packets than Linux's initial window (RFC 6928: 10
# segments) was never clocked by the network: the time from the connection's start to its last
# new data is the handshake and the application's pauses (iperf3's 37-byte cookie connection),
# so it gets no goodput rate (None) instead of a number nobody should quote.
MIN_RATE_PACKETS = 10


def _finish(path: str, raw: dict[str, Any], bin_s: float) -> CaptureAnalysis:
    for f in raw["flows"]:
        if 0 < f["sent_packets"] < MIN_RATE_PACKETS and f["proto"] == "tcp":
            f["goodput_bps"] = None
    cap = CaptureAnalysis(
        path=path,
        format=raw["format"],
        bin_s=bin_s,
        first_ts_ns=raw["first_ts_ns"],
        stats=dict(raw["stats"]),
        warnings=list(raw["warnings"]) + incomplete_warnings(raw["flows"]),
        raw_flows=raw["flows"],
        raw_packets=raw.get("packets"),
        raw_rtt=raw.get("rtt_samples"),
    )
    _locate(cap)
    return cap


def _locate(cap: CaptureAnalysis) -> None:
    """Detect the capture point of each TCP data direction (`capture_point`) and, away from
    the sender, replace the data→ACK RTT (the receiver's ACK delay there) by the sum of both
    directions' TSval→TSecr halves (`rtt_source` "tsval-both"); see satcc.analyze.pathrtt.
    Without the per-sample table (rtt=False) the halves' means decide, and p95/min go null."""
    from satcc.analyze import pathrtt

    if cap._raw_rtt is not None:
        for fid, e in pathrtt.path_rtt(cap.raw_flows, cap._raw_rtt, cap.bin_s).items():
            f = cap.raw_flows[fid]
            bins = e.pop("bin_rtt_mean_ms", None)
            f.update(e)
            if bins is not None:
                f["bins"] = {**f["bins"], "rtt_mean_ms": bins}
        return
    by_conn = {(f["proto"], f["conn"], f["dir"]): f for f in cap.raw_flows}
    for f in cap.raw_flows:
        if f["proto"] != "tcp" or not f["sent_packets"]:
            continue
        rev = by_conn.get(("tcp", f["conn"], 1 - f["dir"]))
        down = f["ts_rtt_mean_ms"]
        up = rev["ts_rtt_mean_ms"] if rev is not None else None
        if up is None or down is None:
            f["capture_point"] = "unknown"
            continue
        f["capture_point"] = point = pathrtt.capture_point([up], [down])
        if point != "sender":
            f.update(
                rtt_mean_ms=up + down,
                rtt_p95_ms=None,
                rtt_min_ms=None,
                rtt_source="tsval-both",
            )


def incomplete_warnings(flows: list[dict[str, Any]]) -> list[str]:
    """A TCP direction whose sequence numbers advanced further than the payload the capture
    holds (tcpdump dropped packets, or the capture point missed some): its byte and goodput
    figures come from sequence numbers, its flags from what was captured."""
    out = []
    for f in flows:
        advanced, present = f.get("delivered_bytes") or 0, f.get("payload_bytes") or 0
        if f.get("proto") == "tcp" and advanced > present:
            out.append(
                f"the capture is incomplete: flow {f['id']} ({f['src']}:{f['sport']} > "
                f"{f['dst']}:{f['dport']}) advanced {advanced / 1e6:.3f} MB in sequence "
                f"numbers but only {present / 1e6:.3f} MB of payload were captured "
                "(dropped by the capture tool, or lost before the capture point and never "
                "repaired); bytes and goodput count sequence numbers, "
                "the analysis flags only what was captured"
            )
    return out


def read_capture(
    path: str | Path,
    bin_s: float = DEFAULT_BIN_S,
    packets: bool = False,
    rtt: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> CaptureAnalysis:
    """Analyse a pcap/pcapng file. `packets`/`rtt` also return the per-packet and per-sample
    tables (memory grows with the capture). Raises ValueError if nothing could be read."""
    bin_ns = round(bin_s * 1e9)
    try:
        raw = _native.pcap_analyze(
            str(path), bin_ns=bin_ns, packets=packets, rtt_samples=rtt, progress=progress
        )
    except (ValueError, OSError) as e:
        # every capture error names the file (the native layer does not always)
        text = str(e).removeprefix(f"{path}: ")
        if isinstance(e, OSError) and Path(path).is_dir():
            text = "expected a capture file, found a directory"
        raise ValueError(f"{path}: {text}") from None
    return _finish(str(path), raw, bin_s)


def analyze_capture_bytes(
    data: bytes, bin_s: float = DEFAULT_BIN_S, packets: bool = False, rtt: bool = False
) -> CaptureAnalysis:
    """Like `read_capture` for a capture held in memory."""
    raw = _native.pcap_analyze_bytes(
        data, bin_ns=round(bin_s * 1e9), packets=packets, rtt_samples=rtt
    )
    return _finish("<bytes>", raw, bin_s)


def flag_mask(*names: str) -> int:
    """Bit mask of analysis flags by name (tshark's names without `tcp.analysis.`)."""
    return sum(1 << FLAG_NAMES.index(n) for n in names)


def seq_ack_graph(cap: CaptureAnalysis, flow_id: int) -> pd.DataFrame:
    """Sequence/ACK-number graph data for one TCP flow direction (study 003, Fig. 6): the
    flow's data segments (t_s, seq_rel, end_rel, retransmission) and the reverse direction's
    ACKs (t_s, ack_rel), one frame with `kind` = "data" or "ack"."""
    if cap.packets is None:
        raise ValueError("seq_ack_graph needs read_capture(..., packets=True)")
    import numpy as np
    import pandas as pd

    p = cap.packets
    f = cap.flows.set_index("id").loc[flow_id]
    rev = cap.flows[
        (cap.flows["conn"] == f["conn"])
        & (cap.flows["proto"] == f["proto"])
        & (cap.flows["dir"] != f["dir"])
    ]
    data = p[(p["flow_id"] == flow_id) & (p["len"] > 0)]
    out = [
        pd.DataFrame(
            {
                "kind": "data",
                "t_s": data["t_s"],
                "seq_rel": data["seq_rel"].astype(np.int64),
                "end_rel": data["seq_rel"].astype(np.int64) + data["len"],
                "retransmission": (data["analysis"] & RETRANSMITTED_ANY) != 0,
            }
        )
    ]
    if not rev.empty:
        acks = p[(p["flow_id"] == rev["id"].iloc[0]) & ((p["tcp_flags"] & 0x10) != 0)]
        out.append(
            pd.DataFrame(
                {"kind": "ack", "t_s": acks["t_s"], "ack_rel": acks["ack_rel"].astype(np.int64)}
            )
        )
    return (
        pd.concat(out, ignore_index=True).sort_values("t_s", kind="stable").reset_index(drop=True)
    )
