"""The capture point and the path RTT (satcc.analyze.pathrtt): one synthetic connection with
a 40 ms path seen from the sender, the receiver and the middle. Before, a receiver-side capture
reported the receiver's ACK turnaround (0.05 ms here) as the RTT (`rtt_source: data-ack`)."""

from __future__ import annotations

import json

import pytest

from satcc.analyze import read_capture
from satcc.analyze.synth import Conversation, write_pcap
from satcc.cli import main

ONE_WAY_S = 0.020  # sender -> receiver and back: a 40 ms path
TURN_S = 0.00005  # the receiver ACKs 50 us after a segment arrives
PATH_MS = (2 * ONE_WAY_S + TURN_S) * 1e3


def stop_and_wait(path, at_s: float, rounds: int = 60) -> None:
    """A sender sending one 1000-byte segment per round trip, each answered by an ACK, seen
    from a capture point `at_s` seconds (one way) from the sender."""
    conv = Conversation(timestamps=True)
    pkts = [conv.syn(t=0.0 + at_s), conv.synack(t=2 * ONE_WAY_S - at_s), conv.ack(t=0.041 + at_s)]
    send = 0.041
    r_tsval = 0
    for k in range(rounds):
        s_tsval = 1000 + k
        pkts.append(conv.data(t=send + at_s, seq=1 + 1000 * k, n=1000, ts=(s_tsval, r_tsval)))
        acked = send + ONE_WAY_S + TURN_S
        r_tsval = 5000 + k
        pkts.append(
            conv.sack(t=acked + (ONE_WAY_S - at_s), ack=1 + 1000 * (k + 1), ts=(r_tsval, s_tsval))
        )
        send = acked + ONE_WAY_S
    pkts.sort(key=lambda p: p.t)
    write_pcap(path, pkts)


@pytest.mark.parametrize(
    ("at_s", "point", "source"),
    [
        (0.0, "sender", "data-ack"),
        (ONE_WAY_S, "receiver", "tsval-both"),
        (0.008, "between", "tsval-both"),
    ],
)
@pytest.mark.parametrize("samples", [True, False])
def test_the_path_rtt_is_found_wherever_the_capture_was_taken(
    tmp_path, at_s, point, source, samples
):
    pcap = tmp_path / "c.pcap"
    stop_and_wait(pcap, at_s)
    cap = read_capture(pcap, rtt=samples)
    (f,) = [f for f in cap.raw_flows if f["sent_packets"] > 0]
    assert f["capture_point"] == point
    assert f["rtt_source"] == source
    assert f["rtt_mean_ms"] == pytest.approx(PATH_MS, abs=0.01)
    if samples or point == "sender":
        assert f["rtt_min_ms"] == pytest.approx(PATH_MS, abs=0.01)


def test_analyze_says_which_rtt_estimator_and_capture_point_it_used(tmp_path, capsys):
    pcap = tmp_path / "recv.pcap"
    stop_and_wait(pcap, ONE_WAY_S)
    assert main(["analyze", str(pcap), "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["flows"]
    assert (f["rtt_source"], f["capture_point"]) == ("tsval-both", "receiver")
    assert f["rtt_mean_ms"] == pytest.approx(PATH_MS, abs=0.01)
    assert main(["analyze", str(pcap)]) == 0
    assert "tsval-both @receiver" in capsys.readouterr().out


def test_a_flow_within_the_initial_window_gets_no_rate(tmp_path, capsys):
    # iperf3's cookie connection: one 37-byte segment, reported before at 9.87 Mbit/s
    conv = Conversation()
    pkts = [conv.syn(t=0.0), conv.synack(t=0.01), conv.ack(t=0.02)]
    pkts += [conv.data(t=0.02, seq=1, n=37), conv.sack(t=0.03, ack=38)]
    write_pcap(tmp_path / "cookie.pcap", pkts)
    cap = read_capture(tmp_path / "cookie.pcap")
    assert cap.flows.loc[cap.flows["sent_packets"] == 1, "goodput_bps"].isna().all()
    assert main(["analyze", str(tmp_path / "cookie.pcap"), "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["flows"]
    assert f["goodput_bps"] is None and f["delivered_bytes"] == 37


def test_a_flow_past_the_initial_window_gets_its_rate_from_the_connections_start(tmp_path):
    conv = Conversation()
    pkts = [conv.syn(t=0.0), conv.synack(t=0.01), conv.ack(t=0.02)]
    pkts += [conv.data(t=0.02 + 0.01 * k, seq=1 + 1000 * k, n=1000) for k in range(12)]
    write_pcap(tmp_path / "twelve.pcap", pkts)
    cap = read_capture(tmp_path / "twelve.pcap")
    (rate,) = cap.flows.loc[cap.flows["sent_packets"] == 12, "goodput_bps"]
    assert rate == pytest.approx(12_000 * 8 / 0.13, rel=1e-4)  # µs timestamps
