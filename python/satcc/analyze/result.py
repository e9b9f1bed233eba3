"""Field measurements into the engines' RunResult (engine "analyze") and the `--json` summary.

Every input file (capture, iperf3 JSON, ping log) becomes flows with ids numbered across the
inputs in order. A capture contributes its flow directions that carried payload (all of them
with `all_flows`); an iperf3 file its streams in the data direction; a ping log one "icmp" flow.
The summary is the simulator's (`satcc sim --json`) with, per flow, the extra keys `file`,
`kind`, `proto`, `src`, `dst`, `sport`, `dport`, `bin_s` and `bins` (payload bytes per bin
from the capture's first packet; iperf3 bytes per report interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from satcc import _native
from satcc.analyze.capture import CaptureAnalysis
from satcc.results import (
    ANALYZE_FLOW,
    FLOW,
    FLOW_SERIES_SCHEMA,
    FLOWS_SCHEMA,
    LINK_SERIES_SCHEMA,
    SUMMARY_FLOW_KEYS,
    RunResult,
)
from satcc.results import FLOW_SERIES as FS
from satcc.tables import Table

if TYPE_CHECKING:  # the iperf3 and ping readers (and pandas) load only for such inputs
    from satcc.analyze.iperf3 import Iperf3Result
    from satcc.analyze.ping import PingResult

    Input = CaptureAnalysis | Iperf3Result | PingResult


# The flows and analyze_flows columns satcc-pcap measures per flow direction (its
# `FlowColumns` and `CaptureColumns` records, checked against columns.rs).
CAPTURE_FLOW_COLUMNS = tuple(_native.pcap_flow_columns())
CAPTURE_ANALYZE_COLUMNS = tuple(_native.pcap_analyze_columns())
# A flow direction's ends, as the analyzer's columns name them.
ENDS = (ANALYZE_FLOW.src, ANALYZE_FLOW.dst, ANALYZE_FLOW.sport, ANALYZE_FLOW.dport)
# iperf3's UDP figures (a report, or a capture of its datagrams).
IPERF_UDP = (ANALYZE_FLOW.udp_lost, ANALYZE_FLOW.udp_loss_rate, ANALYZE_FLOW.udp_jitter_ms)


def _kind(x: Input) -> str:
    if isinstance(x, CaptureAnalysis):
        return "capture"
    return {"Iperf3Result": "iperf3", "PingResult": "ping"}[type(x).__name__]


def _clean(v: Any) -> Any:
    if v is None:
        return None
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@dataclass
class AnalyzeResult:
    result: RunResult
    flows: list[dict[str, Any]]
    inputs: list[dict[str, Any]]

    def summary(self) -> dict[str, Any]:
        doc = self.result.summary()
        doc["inputs"] = self.inputs
        doc["flows"] = self.flows
        return doc


def _named(fid: int, f: dict[str, Any], cca: Any) -> dict[str, Any]:
    """A flow direction's id, name and ends (`src:port>dst:port`) and its algorithm."""
    src = _endpoint(f[ANALYZE_FLOW.src], f[ANALYZE_FLOW.sport])
    dst = _endpoint(f[ANALYZE_FLOW.dst], f[ANALYZE_FLOW.dport])
    return {FLOW.id: fid, FLOW.name: f"{src}>{dst}", FLOW.from_: src, FLOW.to: dst, FLOW.cca: cca}


def _where(path: str, kind: str, f: dict[str, Any]) -> dict[str, Any]:
    """Which input a flow direction came from, and its protocol and addresses."""
    return {
        ANALYZE_FLOW.file: path,
        ANALYZE_FLOW.kind: kind,
        FLOW.proto: f[FLOW.proto],
        **{k: _clean(f[k]) for k in ENDS},
    }


def _endpoint(host: Any, port: Any) -> str:
    if host is None:
        return "?"
    h = f"[{host}]" if ":" in str(host) else str(host)
    return f"{h}:{port}" if port is not None else h


def build(inputs: list[Input], all_flows: bool = False) -> AnalyzeResult:
    flows: list[dict[str, Any]] = []
    series: dict[str, list[Any]] = {n: [] for n in FLOW_SERIES_SCHEMA.names}
    described: list[dict[str, Any]] = []
    bin_s = None
    duration = 0.0
    for inp in inputs:
        kind = _kind(inp)
        desc: dict[str, Any] = {ANALYZE_FLOW.file: inp.path, ANALYZE_FLOW.kind: kind}
        if isinstance(inp, CaptureAnalysis):
            bin_s = inp.bin_s if bin_s is None else bin_s
            desc.update(format=inp.format, stats=inp.stats, warnings=inp.warnings)
            duration = max(duration, inp.duration_s)
            for f in inp.raw_flows:
                if f[ANALYZE_FLOW.payload_bytes] == 0 and not all_flows:
                    continue
                fid = len(flows)
                b = f["bins"]
                bins = [0] * b["first"] + list(b["payload_bytes"])
                flows.append(
                    {
                        **_named(fid, f, None),
                        # the flows columns the capture measured, under their declared names
                        **{k: f[k] for k in CAPTURE_FLOW_COLUMNS},
                        FLOW.retransmission_rate: f[FLOW.retransmission_rate]
                        if f[FLOW.sent_packets]
                        else None,
                        FLOW.rto_count: None,
                        FLOW.recovery_count: None,
                        **_where(inp.path, kind, f),
                        # and the analyze_flows columns it measured (ends, bytes, UDP figures)
                        **{k: f[k] for k in CAPTURE_ANALYZE_COLUMNS},
                        FLOW.start_s: f[FLOW.start_s],
                        ANALYZE_FLOW.capture_point: f.get(ANALYZE_FLOW.capture_point),
                        "flag_counts": f["flag_counts"],
                        ANALYZE_FLOW.bin_s: inp.bin_s,
                        "bins": bins,
                    }
                )
                for i, (pb, nb, rt, rtt_ms) in enumerate(
                    zip(
                        b["payload_bytes"],
                        b["new_bytes"],
                        b["retransmits"],
                        b["rtt_mean_ms"],
                        strict=True,
                    )
                ):
                    t = (b["first"] + i) * inp.bin_s
                    _series_row(
                        series,
                        fid,
                        t,
                        inp.bin_s,
                        delivered=nb,
                        received=pb,
                        srtt=rtt_ms,
                        retx=rt,
                    )
        elif _kind(inp) == "iperf3":
            desc.update(meta=inp.meta)
            duration = max(duration, float(inp.meta.get("duration_s") or 0))
            for s, f in zip(
                inp.streams.to_dict("records"), inp.flows.to_dict("records"), strict=True
            ):
                fid = len(flows)
                ivs = inp.intervals[inp.intervals["socket"] == s["socket"]]
                widths = ivs["seconds"].tolist()
                flows.append(
                    {
                        **{k: _clean(f.get(k)) for k in SUMMARY_FLOW_KEYS if k in f},
                        **_named(fid, f, inp.meta.get("cca")),
                        FLOW.rto_count: None,
                        FLOW.recovery_count: None,
                        **_where(inp.path, kind, f),
                        FLOW.start_s: 0.0,
                        **{k: _clean(f.get(k)) for k in IPERF_UDP},
                        ANALYZE_FLOW.bin_s: float(widths[0]) if widths else None,
                        "bins": [int(x) for x in ivs["bytes"].tolist()],
                    }
                )
                for iv in ivs.to_dict("records"):
                    _series_row(
                        series,
                        fid,
                        iv["start_s"],
                        iv["seconds"],
                        delivered=iv["bytes"],
                        received=None,
                        srtt=iv.get("rtt_ms"),
                        retx=iv.get("retransmits"),
                        cwnd_bytes=iv.get("snd_cwnd"),
                    )
        else:
            desc.update(summary={k: _clean(v) for k, v in inp.summary.items()})
            sm = inp.summary
            # one series row per probe: its RTT as srtt_ms (null when lost), for the ping panel
            probes = inp.samples.dropna(subset=["t_s"]).sort_values("t_s", kind="stable")
            gaps = probes["t_s"].diff().dropna()
            width = float(gaps.median()) if len(gaps) else None
            for t, rtt_ms in zip(probes["t_s"].tolist(), probes["rtt_ms"].tolist(), strict=True):
                _series_row(
                    series,
                    len(flows),
                    t,
                    width,
                    delivered=None,
                    received=None,
                    srtt=rtt_ms,
                    retx=None,
                )
            # a ping log: its probes as sent packets, their RTTs; what it cannot measure null
            ping = {
                FLOW.id: len(flows),
                FLOW.name: f"{inp.tool} {Path(inp.path).name}",
                FLOW.sent_packets: sm["transmitted"],
                **{k: sm[k] for k in (FLOW.rtt_mean_ms, FLOW.rtt_p95_ms, FLOW.rtt_min_ms)},
            }
            flows.append(
                {
                    **{
                        k: ping.get(k)
                        for k in SUMMARY_FLOW_KEYS[: SUMMARY_FLOW_KEYS.index(FLOW.proto)]
                    },
                    ANALYZE_FLOW.file: inp.path,
                    ANALYZE_FLOW.kind: kind,
                    FLOW.proto: "icmp",
                    **dict.fromkeys(ENDS),
                    FLOW.start_s: 0.0,
                    ANALYZE_FLOW.loss_rate: sm[ANALYZE_FLOW.loss_rate],
                    ANALYZE_FLOW.bin_s: None,
                    "bins": None,
                }
            )
        described.append(desc)
    for f in flows:
        # The shared flows columns for UDP (as the simulator writes them); null for TCP/ICMP.
        udp = f.get(FLOW.proto) == "udp"
        for shared, own in (
            (FLOW.lost_packets, ANALYZE_FLOW.udp_lost),
            (FLOW.loss_fraction, ANALYZE_FLOW.udp_loss_rate),
            (FLOW.jitter_ms, ANALYZE_FLOW.udp_jitter_ms),
            (FLOW.received_packets, ANALYZE_FLOW.packets),
        ):
            f.setdefault(shared, f.get(own) if udp else None)
    flows = [
        {k: _clean(v) if not isinstance(v, (list, dict)) else v for k, v in f.items()}
        for f in flows
    ]
    # the scenario's columns (scenario_flow, size_bytes) are null: field data has no scenario
    rows = {n: [f.get(n) for f in flows] for n in FLOWS_SCHEMA.names}
    rows[FLOW.scenario_flow] = [None] * len(flows)
    rows[FLOW.size_bytes] = [None] * len(flows)
    flows_table = Table.from_columns(FLOWS_SCHEMA, rows, "flows")
    series_table = Table.from_columns(FLOW_SERIES_SCHEMA, series, "flow_series")
    link_table = Table.from_columns(
        LINK_SERIES_SCHEMA, {n: [] for n in LINK_SERIES_SCHEMA.names}, "link_series"
    )
    meta = {
        "engine": "analyze",
        "satcc_version": _native.version(),
        "scenario": None,
        "scenario_hash": None,
        "seed": None,
        "duration_s": duration,
        ANALYZE_FLOW.bin_s: bin_s,
        "nodes": [],
        "links": [],
        "stats": {"inputs": len(inputs)},
        "inputs": [d[ANALYZE_FLOW.file] for d in described],
        "fairness": shared_direction(flows),
    }
    result = RunResult(meta, flows_table, series_table, link_table)
    return AnalyzeResult(result=result, flows=flows, inputs=described)


# A flow direction carrying under this share of the largest one's bytes between the same two
# hosts is not a competitor (iperf3's control connection: hundreds of bytes beside megabytes).
MINOR_SHARE = 0.01


def shared_direction(flows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Field data has no topology: flows share a bottleneck when they go the same way between
    the same two hosts (an upload and a download do not). Flows with under 1 % of the largest
    one's bytes are left out; the group with the most flows (then bytes) is chosen."""
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    sent = FLOW.delivered_bytes
    for f in flows:
        if f.get(FLOW.proto) in ("tcp", "udp") and f.get(sent):
            groups.setdefault((f.get(ANALYZE_FLOW.src), f.get(ANALYZE_FLOW.dst)), []).append(f)
    best = None
    for (src, dst), members in groups.items():
        top = max(m[sent] for m in members)
        kept = [m for m in members if m[sent] >= MINOR_SHARE * top]
        key = (len(kept), sum(m[sent] for m in kept))
        if best is None or key > best[0]:
            best = (
                key,
                {"link_id": None, "dir": f"{src}>{dst}", "flows": sorted(m[FLOW.id] for m in kept)},
            )
    return best[1] if best else None


def _series_row(
    series: dict[str, list[Any]],
    fid: int,
    t: float,
    width_s: Any,
    *,
    delivered: Any,
    received: Any,
    srtt: Any,
    retx: Any,
    cwnd_bytes: Any = None,
) -> None:
    """One flow-series row; the bin's width is the capture's bin or the iperf3 interval."""
    width = _clean(width_s)
    row = {
        FS.flow_id: fid,
        FS.t_s: float(t),
        FS.delivered_bytes: _clean(delivered),
        FS.received_bytes: _clean(received),
        FS.srtt_ms: _clean(srtt),
        FS.retransmits: _clean(retx),
        FS.cwnd_bytes: _clean(cwnd_bytes),
    }
    for rate, n in (
        (FS.goodput_bps, row[FS.delivered_bytes]),
        (FS.received_bps, row[FS.received_bytes]),
    ):
        row[rate] = n * 8 / width if n is not None and width else None
    for name, values in series.items():  # what field data cannot know (cwnd in packets, ...): null
        values.append(row.get(name))
