"""`satcc analyze` and the iperf3 / ping parsers, on files written by the tests."""

from __future__ import annotations

import json

import pytest

from satcc import results
from satcc.analyze import read_iperf3, read_ping, synth
from satcc.analyze.inputs import detect_kind
from satcc.analyze.synth import Conversation
from satcc.cli import main
from satcc.results import SUMMARY_FLOW_KEYS
from tests.test_analyze_capture import T0, handshake, rule_captures


def capture(tmp_path, name="c.pcap"):
    pkts, _ = rule_captures()["fast_retransmission_after_two_dupacks"]
    return synth.write_pcap(tmp_path / name, pkts)


def iperf_doc(reverse=False, role="client", udp=False):
    start = {
        "connected": [
            {
                "socket": 5,
                "local_host": "10.0.0.1",
                "local_port": 40000,
                "remote_host": "10.0.0.2",
                "remote_port": 5201,
            }
        ],
        "version": "iperf 3.12",
        "timestamp": {"timesecs": 1700000000},
        "test_start": {
            "protocol": "UDP" if udp else "TCP",
            "num_streams": 1,
            "duration": 2,
            "reverse": int(reverse),
        },
    }
    if role == "client":
        start["connecting_to"] = {"host": "10.0.0.2", "port": 5201}
    sender = (role == "client") != reverse
    if udp:
        iv = [
            {
                "socket": 5,
                "start": i,
                "end": i + 1,
                "seconds": 1,
                "bytes": 1000,
                "packets": 10,
                "bits_per_second": 8000,
                "lost_packets": i,
                "jitter_ms": 0.1,
                "omitted": False,
                "sender": sender,
            }
            for i in range(2)
        ]
        streams = [
            {
                "udp": {
                    "socket": 5,
                    "seconds": 2,
                    "bytes": 2000,
                    "bits_per_second": 8000,
                    "jitter_ms": 0.12,
                    "lost_packets": 1,
                    "packets": 20,
                    "lost_percent": 5,
                    "out_of_order": 0,
                    "sender": sender,
                }
            }
        ]
    else:
        iv = [
            {
                "socket": 5,
                "start": i,
                "end": i + 1,
                "seconds": 1,
                "bytes": 500_000 * (i + 1),
                "bits_per_second": 4e6 * (i + 1),
                "retransmits": 2,
                "snd_cwnd": 20000,
                "rtt": 10_000 + 1000 * i,
                "rttvar": 500,
                "pmtu": 1500,
                "omitted": False,
                "sender": True,
            }
            for i in range(2)
        ]
        streams = [
            {
                "sender": {
                    "socket": 5,
                    "seconds": 2,
                    "bytes": 1_500_000,
                    "bits_per_second": 6e6,
                    "retransmits": 4,
                    "max_snd_cwnd": 20000,
                    "max_rtt": 11_000,
                    "min_rtt": 9_000,
                    "mean_rtt": 10_500,
                    "sender": True,
                },
                "receiver": {
                    "socket": 5,
                    "seconds": 2,
                    "bytes": 1_490_000,
                    "bits_per_second": 5.96e6,
                    "sender": True,
                },
            }
        ]
    return {
        "start": start,
        "intervals": [{"streams": [s]} for s in iv],
        "end": {"streams": streams, "sender_tcp_congestion": "bbr"},
    }


def test_json_summary_has_the_simulators_keys_plus_endpoints_and_bins(tmp_path, capsys):
    path = capture(tmp_path)
    assert main(["analyze", str(path), "--json", "--bin", "50ms"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"] == "analyze" and doc["bin_s"] == 0.05
    (f,) = doc["flows"]  # only the direction with payload
    for key in (*SUMMARY_FLOW_KEYS, "src", "dst", "sport", "dport", "bins"):
        assert key in f
    assert (f["src"], f["sport"], f["dst"], f["dport"]) == (
        "192.0.2.1",
        40000,
        "198.51.100.2",
        5201,
    )
    assert sum(f["bins"]) == f["payload_bytes"] == 300
    assert f["retransmitted_packets"] == 1 and f["sent_packets"] == 3
    assert f["flag_counts"]["fast_retransmission"] == 1


def test_out_writes_a_result_the_results_loader_reads(tmp_path, capsys):
    path = capture(tmp_path)
    out = tmp_path / "res"
    assert main(["analyze", str(path), "--out", str(out), "--all-flows"]) == 0
    r = results.load(out)
    assert r.meta["engine"] == "analyze"
    assert len(r.flows) == 2 and set(r.flows["from"]) == {"192.0.2.1:40000", "198.51.100.2:5201"}
    assert r.flow_series["delivered_bytes"].sum() == 300
    assert "fast_retransmission" in (out / "analyze.json").read_text()
    table = capsys.readouterr().out
    assert "192.0.2.1:40000" in table


def test_truncated_capture_warns_with_record_and_offset_and_succeeds(tmp_path, capsys):
    path = capture(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:-20])
    assert main(["analyze", str(path), "--json"]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "record 10 at byte offset" in err


@pytest.mark.parametrize(
    "content,msg", [(b"\xd4\xc3\xb2\xa1" + b"\x00" * 3, "no packets"), (None, "no packets")]
)
def test_nothing_readable_exits_2(tmp_path, capsys, content, msg):
    path = tmp_path / "bad.pcap"
    if content is None:  # a valid header and no packets
        content = synth.pcap_bytes([])
    path.write_bytes(content)
    assert main(["analyze", str(path)]) == 2
    assert "error" in capsys.readouterr().err


def test_one_bad_file_among_good_ones_is_reported_and_fails(tmp_path, capsys):
    good = capture(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["analyze", str(good), str(bad), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["flows"]


def test_kind_detection(tmp_path):
    p = capture(tmp_path)
    assert detect_kind(p) == "capture"
    ng = synth.write_pcap(tmp_path / "x.pcapng", [Conversation().syn(T0)], pcapng=True)
    assert detect_kind(ng) == "capture"
    j = tmp_path / "r.json"
    j.write_text(json.dumps(iperf_doc()))
    assert detect_kind(j) == "iperf3"
    t = tmp_path / "p.txt"
    t.write_text("PING x\n")
    assert detect_kind(t) == "ping"


def test_mixed_inputs_number_flows_across_files(tmp_path, capsys):
    cap = capture(tmp_path)
    j = tmp_path / "r.json"
    j.write_text(json.dumps(iperf_doc()))
    p = tmp_path / "p.txt"
    p.write_text(PING_D)
    assert main(["analyze", str(cap), str(j), str(p), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["id"] for f in doc["flows"]] == [0, 1, 2]
    assert [f["kind"] for f in doc["flows"]] == ["capture", "iperf3", "ping"]
    assert doc["flows"][1]["cca"] == "bbr"
    assert doc["flows"][1]["bins"] == [500_000, 1_000_000]


# -- iperf3 -------------------------------------------------------------------------------------


def test_iperf3_tcp_client_sender_side_numbers():
    r = read_iperf3(iperf_doc())
    assert r.meta["role"] == "client" and not r.meta["reverse"] and r.meta["cca"] == "bbr"
    (s,) = r.streams.to_dict("records")
    assert (s["src"], s["dport"]) == ("10.0.0.1", 5201)
    assert s["sent_bytes"] == 1_500_000 and s["bytes"] == 1_490_000 and s["retransmits"] == 4
    assert s["mean_rtt_ms"] == 10.5
    assert r.intervals["rtt_ms"].tolist() == [10.0, 11.0]
    (f,) = r.flows.to_dict("records")
    assert f["goodput_bps"] == 5.96e6 and f["delivered_bytes"] == 1_490_000
    assert f["rtt_p95_ms"] == pytest.approx(10.95)


def test_iperf3_reverse_on_the_client_puts_data_from_the_server():
    r = read_iperf3(iperf_doc(reverse=True))
    (s,) = r.streams.to_dict("records")
    assert (s["src"], s["sport"], s["dst"]) == ("10.0.0.2", 5201, "10.0.0.1")


def test_iperf3_udp_server():
    r = read_iperf3(iperf_doc(role="server", udp=True))
    assert r.meta["role"] == "server"
    (f,) = r.flows.to_dict("records")
    assert f["udp_lost"] == 1 and f["udp_loss_rate"] == pytest.approx(0.05)
    assert f["sent_packets"] == 20
    assert r.intervals["lost_packets"].tolist() == [0, 1]


def test_iperf3_rejects_other_json(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"a": 1}')
    with pytest.raises(ValueError, match="not an iperf3"):
        read_iperf3(p)


# -- ping / nping -------------------------------------------------------------------------------

PING_D = """PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.
[1700000000.100000] 64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=30.1 ms
[1700000001.100000] 64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=50.3 ms
[1700000003.100000] 64 bytes from 10.0.0.2: icmp_seq=4 ttl=64 time=40.0 ms

--- 10.0.0.2 ping statistics ---
4 packets transmitted, 3 received, 25% packet loss, time 3004ms
rtt min/avg/max/mdev = 30.100/40.133/50.300/8.2 ms
"""

BSD_PING = """PING 10.0.0.2 (10.0.0.2): 56 data bytes
64 bytes from 10.0.0.2: icmp_seq=0 ttl=64 time=20.000 ms
64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=22.000 ms

--- 10.0.0.2 ping statistics ---
2 packets transmitted, 2 packets received, 0.0% packet loss
round-trip min/avg/max/stddev = 20.000/21.000/22.000/1.000 ms
"""

NPING_TCP = """Starting Nping 0.7.93 ( https://nmap.org/nping ) at 2026-01-01 00:00 UTC
SENT (0.0300s) TCP 10.0.0.1:5555 > 10.0.0.2:80 S ttl=64 id=1 iplen=40  seq=1 win=1480
RCVD (0.0800s) TCP 10.0.0.2:80 > 10.0.0.1:5555 SA ttl=64 id=0 iplen=44  seq=2 win=64240
SENT (1.0310s) TCP 10.0.0.1:5555 > 10.0.0.2:80 S ttl=64 id=1 iplen=40  seq=1 win=1480
SENT (2.0320s) TCP 10.0.0.1:5555 > 10.0.0.2:80 S ttl=64 id=1 iplen=40  seq=1 win=1480
RCVD (2.0920s) TCP 10.0.0.2:80 > 10.0.0.1:5555 SA ttl=64 id=0 iplen=44  seq=2 win=64240

Max rtt: 60.000ms | Min rtt: 50.000ms | Avg rtt: 55.000ms
Raw packets sent: 3 (120B) | Rcvd: 2 (88B) | Lost: 1 (33.33%)
Nping done: 1 IP address pinged in 2.10 seconds
"""


def test_ping_with_timestamps_and_a_lost_probe():
    r = read_ping("p.txt", text=PING_D)
    s = r.samples
    assert s["seq"].tolist() == [1, 2, 3, 4]
    assert s["rtt_ms"].isna().tolist() == [False, False, True, False]
    assert s["t_s"].dropna().tolist() == [0.0, 1.0, 3.0]
    assert r.summary["loss_rate"] == 0.25
    assert r.summary["rtt_mean_ms"] == pytest.approx(r.summary["tool_rtt_avg_ms"], abs=1e-3)


def test_bsd_ping_counts_from_zero():
    r = read_ping("b.txt", text=BSD_PING)
    assert r.samples["seq"].tolist() == [0, 1] and r.summary["loss_rate"] == 0


def test_nping_tcp_pairs_each_reply_with_the_latest_probe_as_nping_does():
    r = read_ping("n.txt", text=NPING_TCP)
    assert r.tool == "nping"
    rtts = r.samples["rtt_ms"]
    assert rtts.isna().tolist() == [False, True, False]
    assert r.summary["rtt_min_ms"] == pytest.approx(r.summary["tool_rtt_min_ms"])
    assert r.summary["rtt_max_ms"] == pytest.approx(r.summary["tool_rtt_max_ms"])
    assert r.summary["tool_transmitted"] == 3 and r.summary["received"] == 2


def test_text_without_ping_output_is_rejected():
    with pytest.raises(ValueError, match="no ping"):
        read_ping("x.txt", text="hello\nworld\n")


def test_handshake_helper_gives_a_100_ms_first_rtt(tmp_path):
    pkts = handshake(Conversation())
    assert pkts[2].t - pkts[0].t == pytest.approx(0.1)


def test_a_ping_log_with_one_100_kb_line_is_read_in_linear_time(tmp_path, capsys):
    import time

    p = tmp_path / "long.txt"
    p.write_text(
        PING_D + "9" * 100_000 + " packets transmitted\n" + "64 bytes from x: " * 6000 + "\n"
    )
    t0 = time.monotonic()
    assert main(["analyze", str(p)]) == 0
    assert time.monotonic() - t0 < 2  # before: 10 KB took 3 s, 100 KB did not finish
    assert "longer than" in capsys.readouterr().err


def test_a_huge_icmp_seq_does_not_allocate_up_to_it(tmp_path, capsys):
    r = read_ping("big.txt", text=PING_D.replace("icmp_seq=4", "icmp_seq=99999999999999999999999"))
    assert r.samples["seq"].max() < 10 and any("icmp_seq" in w for w in r.warnings)
    gap = read_ping("gap.txt", text=PING_D.replace("icmp_seq=4", "icmp_seq=4000000000"))
    assert len(gap.samples) == 3 and gap.warnings  # replies only, no 4e9 filler rows


def test_nping_icmp_replies_match_the_oldest_probe_with_their_seq():
    text = "Starting Nping 0.7.93\n" + "".join(
        f"SENT ({i}.0000s) ICMP [10.0.0.1 > 10.0.0.2 Echo request (type=8/code=0) "
        f"id=1 seq={i % 3}] IP [ttl=64 id=1 iplen=28 ]\n"
        for i in range(6)
    )
    text += "RCVD (4.0500s) ICMP [10.0.0.2 > 10.0.0.1 Echo reply (type=0/code=0) id=1 seq=1] IP\n"
    r = read_ping("n.txt", text=text)
    assert r.samples["rtt_ms"].notna().tolist() == [False, True, False, False, False, False]
    assert r.samples["rtt_ms"][1] == pytest.approx(3050.0)


def test_a_capture_missing_payload_warns_that_it_is_incomplete(tmp_path, capsys):
    # 1000 B captured, then the capture skips 2000 B (a tcpdump drop), then 1000 B more:
    # sequence numbers advanced 4000 B with 2000 B present. Before: no word about it.
    c = Conversation()
    t = T0 + 0.2
    pkts = handshake(c) + [
        c.data(t, 1, 1000),
        c.sack(t + 0.1, 1001),
        c.sack(t + 0.2, 3001),
        c.data(t + 0.21, 3001, 1000),
        c.sack(t + 0.3, 4001),
    ]
    path = synth.write_pcap(tmp_path / "gap.pcap", pkts)
    assert main(["analyze", str(path)]) == 0
    err = capsys.readouterr().err
    assert "the capture is incomplete" in err and "0.004 MB" in err and "0.002 MB" in err


@pytest.mark.parametrize(
    "content", [b"\xd4\xc3\xb2\xa1\x02\x00", b"\x0a\x0d\x0d\x0a\xff\xff\xff\xff"]
)
def test_capture_errors_name_the_file(tmp_path, capsys, content):
    # Before: "satcc: error: not a pcap or pcapng file (header not recognized)", no file named.
    from satcc.analyze import read_capture

    path = tmp_path / "broken.pcap"
    path.write_bytes(content)
    assert main(["analyze", str(path)]) == 2
    assert f"{path}:" in capsys.readouterr().err
    for target in (path, tmp_path, tmp_path / "missing.pcap"):
        with pytest.raises(ValueError, match=f"^{target}: "):
            read_capture(target)


def test_per_bin_rtt_is_the_mean_of_the_capture_samples_in_that_bin(tmp_path):
    # The flow series' srtt_ms comes from the Rust analyzer's per-bin means; it must be the
    # mean of the per-sample table's RTTs in each bin, and null where a bin has no sample.
    from satcc.analyze import read_capture

    path = capture(tmp_path)
    cap = read_capture(path, bin_s=0.01, rtt=True)
    r = cap.rtt
    checked = 0
    for f in cap.raw_flows:
        b = f["bins"]
        mine = r[r["flow_id"] == f["id"]]
        by_bin = mine.groupby(mine["t_ns"] // 10_000_000)["rtt_ms"].mean()
        assert len(b["rtt_mean_ms"]) == len(b["payload_bytes"])
        for i, got in enumerate(b["rtt_mean_ms"]):
            want = by_bin.get(b["first"] + i)
            if want is None:
                assert got is None
            else:
                assert got == pytest.approx(want, rel=1e-12)
                checked += 1
    assert checked > 0


def test_analyzing_a_capture_from_the_cli_imports_no_pandas_numpy_or_pyarrow(tmp_path):
    # pandas costs ~0.5 s to import, more than analysing a 1.5 M-packet capture, pyarrow
    # ~0.14 s and numpy ~0.05 s; the capture path builds its results from the analyzer's lists
    # and satcc's Parquet writer writes them (DataFrames and Arrow load only when asked for).
    import subprocess
    import sys

    path = capture(tmp_path)
    probe = (
        "import sys; from satcc import cli; status = cli.main(sys.argv[1:]); "
        "print(any(m in sys.modules for m in ('pandas', 'numpy', 'pyarrow')), status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "analyze", str(path), "--out", str(tmp_path / "res")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "False 0", done.stdout + done.stderr
    assert (tmp_path / "res" / "flow_series.parquet").exists()
