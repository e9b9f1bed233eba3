"""Capture analysis on hand-built captures: one per tshark classification rule and per link
type, each also cross-checked against tshark itself when it is installed; bins, RTT, UDP
iperf3 loss/jitter, bad input."""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd
import pytest

from satcc.analyze import analyze_capture_bytes, read_capture, seq_ack_graph, synth
from satcc.analyze import tshark as ts
from satcc.analyze.capture import FLAG_NAMES, RETRANSMITTED_ANY
from satcc.analyze.synth import ACK, Conversation, Packet

T0 = 1_700_000_000.0  # an ordinary epoch time (tshark treats time 0 as "unset")


def flags_of(cap, frame: int) -> set[str]:
    p = cap.packets.set_index("frame")
    a = int(p.loc[frame, "analysis"])
    return {name for i, name in enumerate(FLAG_NAMES) if a >> i & 1}


def compare_with_tshark(path, cap=None) -> int:
    """Per-packet equality with tshark: tcp.len, tcp.stream and every analysis flag. Returns rows."""
    cap = cap or read_capture(path, packets=True)
    ours = cap.packets[cap.packets["proto"] == "tcp"].set_index("frame")
    theirs = ts.tshark_fields(path).set_index("frame")
    assert list(ours.index) == list(theirs.index)
    assert (ours["len"].to_numpy() == theirs["len"].to_numpy()).all()
    assert (ours["conn"].to_numpy() == theirs["stream"].to_numpy()).all()
    for name in ts.FLAGS:
        bit = RETRANSMITTED_ANY if name == "retransmission" else 1 << FLAG_NAMES.index(name)
        mine = (ours["analysis"].to_numpy() & bit) != 0
        diff = np.flatnonzero(mine != theirs[name].to_numpy())
        assert len(diff) == 0, f"{name} differs at frames {list(ours.index[diff][:10])}"
    return len(ours)


def handshake(c: Conversation, t: float = T0) -> list[Packet]:
    """SYN, SYN/ACK, ACK: a 100 ms handshake RTT (the out-of-order threshold)."""
    return [c.syn(t), c.synack(t + 0.05), c.ack(t + 0.1)]


def analyze(pkts, tmp_path, name="x.pcap", **kw):
    path = synth.write_pcap(tmp_path / name, pkts, **kw)
    return path, read_capture(path, packets=True, rtt=True)


# -- one capture per rule -----------------------------------------------------------------------


def rule_captures():
    c = Conversation()
    h = handshake(c)
    t = T0 + 0.1
    return {
        # frame numbers are 1-based: the handshake is frames 1-3
        "in_order": (
            h + [c.data(t + 0.001, 1, 100), c.data(t + 0.002, 101, 100)],
            {4: set(), 5: set()},
        ),
        "lost_then_retransmission": (
            h + [c.data(t + 0.001, 1, 100), c.data(t + 0.002, 201, 100), c.data(t + 0.3, 101, 100)],
            {5: {"lost_segment"}, 6: {"retransmission"}},
        ),
        "out_of_order_within_handshake_rtt": (
            h
            + [c.data(t + 0.001, 1, 100), c.data(t + 0.002, 201, 100), c.data(t + 0.05, 101, 100)],
            {5: {"lost_segment"}, 6: {"out_of_order"}},
        ),
        "fast_retransmission_after_two_dupacks": (
            h
            + [
                c.data(t + 0.001, 1, 100),
                c.data(t + 0.002, 201, 100),
                c.sack(t + 0.120, 101),
                c.sack(t + 0.121, 101),
                c.sack(t + 0.122, 101),
                c.data(t + 0.130, 101, 100),
            ],
            {7: {"duplicate_ack"}, 8: {"duplicate_ack"}, 9: {"fast_retransmission"}},
        ),
        "late_fast_retransmission_is_plain": (
            h
            + [
                c.data(t + 0.001, 1, 100),
                c.data(t + 0.002, 201, 100),
                c.sack(t + 0.120, 101),
                c.sack(t + 0.121, 101),
                c.sack(t + 0.122, 101),
                c.data(t + 0.143, 101, 100),
            ],
            {9: {"retransmission"}},
        ),
        "spurious_retransmission": (
            h + [c.data(t + 0.001, 1, 100), c.sack(t + 0.05, 101), c.data(t + 0.4, 1, 100)],
            {6: {"spurious_retransmission"}},
        ),
        "keep_alive_is_not_a_retransmission": (
            h + [c.data(t + 0.001, 1, 100), c.sack(t + 0.05, 101), c.data(t + 5, 100, 1)],
            {6: {"keep_alive"}},
        ),
        "window_update_is_not_a_dup_ack": (
            h
            + [
                c.sack(t + 0.01, 1),
                c.sack(t + 0.02, 1, window=2000),
                c.sack(t + 0.03, 1, window=2000),
            ],
            {5: {"window_update"}, 6: {"duplicate_ack"}},
        ),
        "retransmitted_syn": (
            [c.syn(T0), c.syn(T0 + 1), c.synack(T0 + 1.05)],
            {2: {"retransmission"}},
        ),
        # seen on a real IPv6 capture: a SYN/ACK repeated within the handshake RTT
        "syn_ack_repeated_at_once_is_a_retransmission": (
            [c.syn(T0), c.synack(T0 + 0.05), c.ack(T0 + 0.1), c.synack(T0 + 0.1001)],
            {4: {"retransmission"}},
        ),
    }


@pytest.mark.parametrize("name", list(rule_captures()))
def test_each_rule_flags_the_expected_frames(name, tmp_path):
    pkts, expected = rule_captures()[name]
    path, cap = analyze(pkts, tmp_path)
    for frame, want in expected.items():
        assert flags_of(cap, frame) == want, f"frame {frame}"
    if ts.available():
        compare_with_tshark(path, cap)


def test_out_of_order_threshold_is_3_ms_without_a_handshake(tmp_path):
    c = Conversation()
    pkts = [
        c.data(T0, 1, 100),
        c.data(T0 + 0.001, 201, 100),
        c.data(T0 + 0.0029, 101, 100),
        c.data(T0 + 0.010, 301, 100),
        c.data(T0 + 0.011, 501, 100),
        c.data(T0 + 0.0145, 401, 100),
    ]
    path, cap = analyze(pkts, tmp_path)
    assert flags_of(cap, 3) == {"out_of_order"}
    assert flags_of(cap, 6) == {"retransmission"}  # 3.5 ms after the segment that advanced
    if ts.available():
        compare_with_tshark(path, cap)


def test_a_new_syn_on_the_same_ports_starts_a_new_connection(tmp_path):
    a = Conversation()
    b = Conversation(cbase=5_000_000, sbase=9_000_000)
    pkts = handshake(a) + [a.data(T0 + 0.2, 1, 500), a.fin(T0 + 0.3, 501)] + handshake(b, T0 + 2)
    path, cap = analyze(pkts, tmp_path)
    tcp = cap.flows[cap.flows["proto"] == "tcp"]
    assert sorted(tcp["conn"].unique()) == [0, 1]
    assert flags_of(cap, 6) == {"reused_ports"}  # not a "retransmission"
    if ts.available():
        compare_with_tshark(path, cap)


# -- link types ---------------------------------------------------------------------------------

LINKS = [
    ("ethernet", {}),
    ("ethernet", {"vlan": 42}),
    ("sll", {}),
    ("sll2", {}),
    ("raw", {}),
    ("null", {}),
    ("ethernet", {"pcapng": True}),
    ("sll2", {"pcapng": True}),
    ("ethernet", {"nanosecond": True}),
]


def _link_case(v6: bool):
    c = Conversation(v6=v6)
    pkts, _ = rule_captures()["fast_retransmission_after_two_dupacks"]
    if v6:
        pkts = handshake(c) + [
            c.data(T0 + 0.101, 1, 100),
            c.data(T0 + 0.102, 201, 100),
            c.sack(T0 + 0.22, 101),
            c.sack(T0 + 0.221, 101),
            c.sack(T0 + 0.222, 101),
            c.data(T0 + 0.23, 101, 100),
        ]
    return pkts


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("link,kw", LINKS, ids=[f"{a}-{'-'.join(b) or 'plain'}" for a, b in LINKS])
def test_every_link_type_gives_the_same_flows(link, kw, v6, tmp_path):
    pkts = _link_case(v6)
    _, ref = analyze(pkts, tmp_path, "ref.pcap")
    path, cap = analyze(pkts, tmp_path, "x.pcap", linktype=link, **kw)
    cols = [
        "src",
        "dst",
        "sport",
        "dport",
        "packets",
        "payload_bytes",
        "delivered_bytes",
        "retransmitted_packets",
        "n_fast_retransmission",
        "n_duplicate_ack",
        "n_lost_segment",
    ]
    assert cap.flows[cols].to_dict("records") == ref.flows[cols].to_dict("records")
    assert cap.flows["ip_version"].iloc[0] == (6 if v6 else 4)
    assert cap.flows["n_fast_retransmission"].sum() == 1
    if ts.available():
        compare_with_tshark(path, cap)


def test_raw_ip_link_types_228_and_229(tmp_path):
    for v6, lt in ((False, "ipv4"), (True, "ipv6")):
        pkts = _link_case(v6)
        _, cap = analyze(pkts, tmp_path, f"{lt}.pcap", linktype=lt)
        assert cap.flows["n_fast_retransmission"].sum() == 1
        assert cap.stats["tcp_packets"] == len(pkts)


def test_snaplen_cut_packets_keep_their_payload_length(tmp_path):
    c = Conversation(timestamps=True)
    pkts = handshake(c) + [c.data(T0 + 0.2, 1, 1448), c.data(T0 + 0.21, 1449, 1448)]
    for p in pkts:
        p.snap = 68
    path, cap = analyze(pkts, tmp_path)
    data = cap.flows[cap.flows["payload_bytes"] > 0]
    assert data["payload_bytes"].tolist() == [2896]
    if ts.available():
        compare_with_tshark(path, cap)


# -- bins, goodput, RTT ---------------------------------------------------------------------------


def test_bins_start_at_the_captures_first_packet_and_sum_payload(tmp_path):
    c = Conversation()
    noise = Packet(
        T0 - 0.05,
        synth.ip_packet("192.0.2.9", "192.0.2.10", 17, synth.udp_datagram(53, 53, b"x" * 10)),
    )
    pkts = (
        [noise]
        + handshake(c)
        + [
            c.data(T0 + 0.12, 1, 100),
            c.data(T0 + 0.17, 101, 200),
            c.data(T0 + 0.30, 1, 100),
            c.data(T0 + 0.33, 301, 50),
        ]
    )
    _, cap = analyze(pkts, tmp_path)
    fid = int(cap.flows[(cap.flows["proto"] == "tcp") & (cap.flows["dir"] == 0)]["id"].iloc[0])
    s = cap.series[cap.series["flow_id"] == fid].set_index("bin")
    # 100 ms bins from T0-0.05: data at T0+.12 -> bin 1, +.17 -> 2, +.30 (retransmission, 130 ms
    # after the highest segment: not out-of-order) -> 3, +.33 -> 3
    assert s["payload_bytes"].to_dict() == {0: 0, 1: 100, 2: 200, 3: 150}
    assert s["delivered_bytes"].to_dict() == {0: 0, 1: 100, 2: 200, 3: 50}
    assert s["retransmits"].to_dict() == {0: 0, 1: 0, 2: 0, 3: 1}
    f = cap.flows.set_index("id").loc[fid]
    assert f["delivered_bytes"] == 350 and f["payload_bytes"] == 450
    assert f["sent_packets"] == 4 and f["retransmitted_packets"] == 1
    assert f["retransmission_rate"] == pytest.approx(0.25)
    # 4 data packets, inside the initial window: no rate (MIN_RATE_PACKETS; the formula is
    # checked on a longer flow in tests/test_analyze_pathrtt.py)
    assert pd.isna(f["goodput_bps"])


def test_rtt_samples_follow_karn_and_timestamps(tmp_path):
    c = Conversation()
    h = handshake(c)
    t = T0 + 0.2
    pkts = h + [
        c.data(t, 1, 100, ts=(1000, 950)),
        c.sack(t + 0.040, 101, ts=(2000, 1000)),  # 40 ms data->ACK and TS sample
        # the sender answers the ACK at once (a 10 ms pause would read as a capture point
        # 5 ms from the sender: satcc.analyze.pathrtt)
        c.data(t + 0.0401, 101, 100, ts=(1001, 2000)),
        c.data(t + 0.400, 101, 100, ts=(1002, 2000)),  # retransmission
        c.sack(t + 0.420, 201, ts=(2001, 1002)),  # Karn: no data->ACK sample
    ]
    _, cap = analyze(pkts, tmp_path)
    r = cap.rtt
    fid = int(cap.flows[cap.flows["dir"] == 0]["id"].iloc[0])
    seq = r[(r["flow_id"] == fid) & (r["kind"] == "data-ack")]["rtt_ms"].tolist()
    tsr = r[(r["flow_id"] == fid) & (r["kind"] == "tsval")]["rtt_ms"].tolist()
    assert seq == pytest.approx([40.0])
    assert tsr == pytest.approx([40.0, 20.0])
    f = cap.flows.set_index("id").loc[fid]
    assert f["rtt_mean_ms"] == pytest.approx(40.0) and f["rtt_source"] == "data-ack"


def test_seq_ack_graph_pairs_data_with_the_reverse_acks(tmp_path):
    pkts, _ = rule_captures()["fast_retransmission_after_two_dupacks"]
    _, cap = analyze(pkts, tmp_path)
    g = seq_ack_graph(cap, int(cap.flows[cap.flows["dir"] == 0]["id"].iloc[0]))
    data, acks = g[g["kind"] == "data"], g[g["kind"] == "ack"]
    assert data["seq_rel"].tolist() == [1, 201, 101]
    assert data["retransmission"].tolist() == [False, False, True]
    assert acks["ack_rel"].tolist() == [1, 101, 101, 101]
    assert g["t_s"].is_monotonic_increasing


# -- UDP ----------------------------------------------------------------------------------------


def iperf_udp(t: float, count: int, sent: float, n: int = 1448) -> Packet:
    sec = int(sent)
    payload = struct.pack("!III", sec, round((sent - sec) * 1e6), count) + b"\x00" * (n - 12)
    return Packet(
        t,
        synth.ip_packet("192.0.2.1", "198.51.100.2", 17, synth.udp_datagram(40000, 5201, payload)),
    )


def test_udp_iperf3_loss_reordering_and_rfc3550_jitter(tmp_path):
    sends = [T0 + 0.01 * i for i in range(10)]
    delays = [0.020, 0.021, 0.025, 0.035, 0.020, 0.022, 0.020, 0.021, 0.020, 0.024]
    order = [1, 2, 3, 5, 4, 6, 9, 10]  # 7, 8 lost; 5 before 4
    pkts = [iperf_udp(sends[k - 1] + delays[k - 1], k, sends[k - 1]) for k in order]
    pkts.sort(key=lambda p: p.t)
    _, cap = analyze(pkts, tmp_path)
    f = cap.flows.iloc[0]
    assert bool(f["udp_iperf"])
    assert f["udp_lost"] == 2 and f["udp_out_of_order"] == 1 and f["udp_expected"] == 10
    # RFC 3550 A.8 computed independently, in arrival order
    j, prev = 0.0, None
    for p in pkts:
        sec, usec, _ = struct.unpack("!III", p.ip[28:40])
        arrival_us = round(p.t * 1e9) // 1000  # as stored in the (microsecond) pcap
        transit = (arrival_us - (sec * 1_000_000 + usec)) / 1e6
        if prev is not None:
            j += (abs(transit - prev) - j) / 16
        prev = transit
    assert f["udp_jitter_ms"] == pytest.approx(j * 1e3, rel=1e-6)
    assert f["payload_bytes"] == 8 * 1448


def test_udp_that_is_not_iperf3_has_no_loss_figures(tmp_path):
    pkts = [
        Packet(
            T0 + i,
            synth.ip_packet("192.0.2.1", "192.0.2.2", 17, synth.udp_datagram(53, 53, b"\xff" * 40)),
        )
        for i in range(3)
    ]
    _, cap = analyze(pkts, tmp_path)
    assert not bool(cap.flows.iloc[0]["udp_iperf"])
    assert cap.flows.iloc[0]["payload_bytes"] == 120


# -- bad input ----------------------------------------------------------------------------------


def test_truncated_file_keeps_what_was_read_and_says_where_it_stopped(tmp_path):
    pkts, _ = rule_captures()["fast_retransmission_after_two_dupacks"]
    data = synth.pcap_bytes(pkts)
    cap = analyze_capture_bytes(data[:-30], packets=True)
    assert cap.stats["frames"] == len(pkts) - 1
    (w,) = [w for w in cap.warnings if isinstance(w, dict)]  # beside "incomplete" notes
    assert w["record"] == len(pkts) + 1  # the file header is record 1
    assert 24 < w["offset"] < len(data) and "truncated" in w["message"]


def test_corrupt_record_length_stops_with_a_warning(tmp_path):
    pkts, _ = rule_captures()["in_order"]
    data = bytearray(synth.pcap_bytes(pkts))
    first_len = struct.unpack_from("<I", data, 24 + 8)[0]
    third = 24 + 2 * 16 + first_len + struct.unpack_from("<I", data, 24 + 16 + first_len + 8)[0]
    struct.pack_into("<II", data, third + 8, 0x7FFFFFF0, 0x7FFFFFF0)
    cap = analyze_capture_bytes(bytes(data))
    assert cap.stats["frames"] == 2
    assert len(cap.warnings) == 1 and cap.warnings[0]["offset"] == third


def test_not_a_capture_raises():
    with pytest.raises(ValueError, match="not a pcap"):
        analyze_capture_bytes(b"hello, this is plain text and not a capture")


def test_noise_is_counted_not_analyzed(tmp_path):
    c = Conversation()
    tcp_hdr = synth.tcp_segment(5201, 40000, 1, 2, ACK)[:8]
    inner = synth.ip_packet("198.51.100.2", "192.0.2.1", 6, tcp_hdr)
    icmp = Packet(
        T0 + 0.5,
        synth.ip_packet("192.0.2.254", "192.0.2.1", 1, b"\x03\x03\x00\x00\x00\x00\x00\x00" + inner),
    )
    gre = Packet(T0 + 0.6, synth.ip_packet("192.0.2.1", "192.0.2.2", 47, b"\x00" * 20))
    pkts = handshake(c) + [icmp, gre]
    path, cap = analyze(pkts, tmp_path)
    assert cap.stats["tcp_packets"] == 3 and cap.stats["other_ip_packets"] == 2
    assert cap.flows["packets"].sum() == 3
    if ts.available():
        compare_with_tshark(path, cap)


def test_unknown_link_type_is_a_warning(tmp_path):
    data = bytearray(synth.pcap_bytes(rule_captures()["in_order"][0]))
    struct.pack_into("<I", data, 20, 147)  # LINKTYPE_USER0
    cap = analyze_capture_bytes(bytes(data))
    assert cap.stats["unsupported_link_frames"] == 5
    assert "unsupported link type 147" in cap.warnings[0]["message"]
