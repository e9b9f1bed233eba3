"""The field run's RTT source (issue 42): an upload's capture sits after this host's qdiscs,
so a bottleneck on the measuring host (a 20 Mbit/s tbf on its own interface) is invisible to
it: `satcc field` printed `rtt 0.0 ms` while the ping alongside read 41 ms. The sender's
tcp_info RTT (iperf3's mean_rtt) and the ping see the whole path; when the capture's RTT is
more than 2x apart from them the run says so and takes the whole-path one.

Synthesised inputs, no network: an upload's iperf3 client report (tcp_info 41 ms), a
sender-side capture of the same connection (data->ACK 0.2 ms, or 41 ms when the bottleneck
is past the capture point), the ping during the run (41 ms)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from satcc.analyze import synth
from satcc.field import plan as fp
from satcc.field.measure import (
    CAPTURE_FILE,
    IPERF3_FILE,
    PING_RUN_FILE,
    RTT_IPERF3,
    RTT_PING,
    Measured,
    build_result,
    summary_parts,
)

T0 = 1_700_000_000.0
CLIENT, SERVER, CPORT, SPORT = "192.0.2.1", "198.51.100.2", 40000, 5201
SEGMENTS, MSS = 200, 1448


def _iperf3_upload(mean_rtt_ms: float | None) -> dict:
    """An `iperf3 -c -J` upload report: one stream, 2 s, tcp_info RTTs of `mean_rtt_ms`
    (None: a kernel without them, iperf3 writes zeros)."""
    rtt_us = round(mean_rtt_ms * 1000) if mean_rtt_ms else 0
    per_s = SEGMENTS * MSS // 2
    intervals = [
        {
            "streams": [
                {
                    "socket": 5,
                    "start": i,
                    "end": i + 1,
                    "seconds": 1,
                    "bytes": per_s,
                    "bits_per_second": 8 * per_s,
                    "retransmits": 0,
                    "snd_cwnd": 60000,
                    "rtt": rtt_us,
                    "rttvar": 500,
                    "pmtu": 1500,
                    "omitted": False,
                    "sender": True,
                }
            ],
            "sum": {"start": i, "end": i + 1, "seconds": 1, "bytes": per_s, "sender": True},
        }
        for i in range(2)
    ]
    sender = {
        "socket": 5,
        "start": 0,
        "end": 2,
        "seconds": 2,
        "bytes": 2 * per_s,
        "bits_per_second": 8 * per_s,
        "retransmits": 0,
        "max_snd_cwnd": 60000,
        "max_rtt": rtt_us,
        "min_rtt": rtt_us,
        "mean_rtt": rtt_us,
        "sender": True,
    }
    receiver = {**sender, "sender": True}
    for k in ("retransmits", "max_snd_cwnd", "max_rtt", "min_rtt", "mean_rtt"):
        receiver.pop(k)
    return {
        "start": {
            "connected": [
                {
                    "socket": 5,
                    "local_host": CLIENT,
                    "local_port": CPORT,
                    "remote_host": SERVER,
                    "remote_port": SPORT,
                }
            ],
            "tcp_mss_default": MSS,
            "test_start": {"protocol": "TCP", "num_streams": 1, "reverse": 0, "duration": 2},
        },
        "intervals": intervals,
        "end": {
            "streams": [{"sender": sender, "receiver": receiver}],
            "sender_tcp_congestion": "cubic",
        },
    }


def _capture(path: Path, ack_after_s: float) -> None:
    """The sender's capture: SEGMENTS data segments 10 ms apart, each ACKed `ack_after_s`
    later (the path past the capture point)."""
    c = synth.Conversation(client=CLIENT, server=SERVER, cport=CPORT, sport=SPORT)
    pkts = [c.syn(T0), c.synack(T0 + ack_after_s), c.ack(T0 + ack_after_s)]
    for i in range(SEGMENTS):
        t = T0 + 0.1 + 0.01 * i
        pkts.append(c.data(t, seq=1 + i * MSS, n=MSS))
        pkts.append(c.sack(t + ack_after_s, ack=1 + (i + 1) * MSS))
    pkts.sort(key=lambda p: p.t)
    synth.write_pcap(path, pkts)


def _ping(path: Path, ms: float) -> None:
    lines = [f"PING {SERVER} ({SERVER}) 56(84) bytes of data."]
    lines += [
        f"[{T0 + 0.2 * i:.6f}] 64 bytes from {SERVER}: icmp_seq={i + 1} ttl=64 time={ms:.1f} ms"
        for i in range(10)
    ]
    path.write_text("\n".join(lines) + "\n")


def _run(
    tmp_path: Path, tcp_info_ms: float | None, capture_ack_s: float | None, ping_ms: float | None
):
    raw = tmp_path / "field"
    raw.mkdir()
    (raw / IPERF3_FILE).write_text(json.dumps(_iperf3_upload(tcp_info_ms)))
    files = {"iperf3": raw / IPERF3_FILE}
    if capture_ack_s is not None:
        _capture(raw / CAPTURE_FILE, capture_ack_s)
        files["capture"] = raw / CAPTURE_FILE
    if ping_ms is not None:
        _ping(raw / PING_RUN_FILE, ping_ms)
        files["ping_run"] = raw / PING_RUN_FILE
    p = fp.validate(fp.FieldPlan(name="t", server=SERVER, ccas=["cubic"], gap="0 s"), "t")
    item = next(it for it in fp.expand(p) if it.direction == "up")
    m = Measured(raw, {"warnings": []}, files)
    result, _ = build_result(p, item, m)
    flow = result.flows_data.to_pylist()[0]
    return flow, m.field_doc, ", ".join(summary_parts(result, m.field_doc)), result


def test_a_bottleneck_on_the_sending_host_is_seen_through_tcp_info_not_the_capture(tmp_path):
    """The reported case: the capture reads 0.2 ms, tcp_info and ping 41 ms."""
    flow, doc, line, result = _run(tmp_path, 41.0, 0.0002, 41.0)
    assert doc["rtt_source"] == RTT_IPERF3 == result.meta["stats"]["rtt_source"]
    assert flow["rtt_mean_ms"] == pytest.approx(41.0) and flow["rtt_min_ms"] == pytest.approx(41.0)
    assert doc["rtt_candidates_ms"]["capture"] == pytest.approx(0.2, abs=0.01)
    warned = [w for w in doc["warnings"] if w.startswith("RTT: ")]
    assert len(warned) == 2 and "invisible" in warned[0], doc["warnings"]  # tcp_info and ping
    assert "rtt 41.0 ms (iperf3 tcp_info; capture 0.2 ms: more than 2x apart)" in line, line
    # the capture's own figures stay in run.json
    assert doc["capture_flow"]["rtt_mean_ms"] == pytest.approx(0.2, abs=0.01)


def test_without_tcp_info_the_ping_alongside_is_the_whole_path_rtt(tmp_path):
    flow, doc, line, _ = _run(tmp_path, None, 0.0002, 41.0)
    assert doc["rtt_source"] == RTT_PING and flow["rtt_mean_ms"] == pytest.approx(41.0)
    assert f"rtt 41.0 ms ({RTT_PING}; capture 0.2 ms" in line, line


def test_a_capture_that_agrees_is_kept_and_says_where_it_was_taken(tmp_path):
    """The bottleneck past the capture point: all three see it; the capture's richer figures
    (p95, min from every ACK) stay, with no warning."""
    flow, doc, line, _ = _run(tmp_path, 41.0, 0.041, 43.0)
    assert doc["rtt_source"].startswith("capture (data-ack"), doc["rtt_source"]
    assert flow["rtt_mean_ms"] == pytest.approx(41.0, abs=0.1)
    assert not [w for w in doc["warnings"] if w.startswith("RTT: ")]
    assert f"rtt 41.0 ms ({doc['rtt_source']})" in line, line


def test_a_ping_that_disagrees_alone_is_reported_and_the_agreeing_capture_kept(tmp_path):
    """tcp_info (the preferred whole-path RTT) agrees with the capture; the ping does not (an
    ICMP-deprioritising path): reported, nothing replaced."""
    flow, doc, line, _ = _run(tmp_path, 41.0, 0.041, 300.0)
    assert doc["rtt_source"].startswith("capture") and flow["rtt_mean_ms"] < 42
    assert len([w for w in doc["warnings"] if w.startswith("RTT: ")]) == 1
    assert f"{RTT_PING} 300.0 ms: more than 2x apart" in line, line


def test_without_a_capture_the_source_is_tcp_info_and_printed(tmp_path):
    _, doc, line, _ = _run(tmp_path, 41.0, None, 41.0)
    assert doc["rtt_source"] == RTT_IPERF3 and "rtt 41.0 ms (iperf3 tcp_info)" in line
