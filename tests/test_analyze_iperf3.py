"""iperf3 reports of every form: client and server side, -R, -P, UDP, --json-stream, iperf3's
own error, and malformed documents (one-line errors, never a traceback or silent acceptance).

tests/data/iperf3/*.json are real iperf3 3.12 outputs of one 2 s run each through a 20 Mbit/s
tbf bottleneck between two namespaces (`-P 2 -R` and `-u -b 5M`), both sides; the real-kernel
test at the end makes them again where root allows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from satcc.analyze import read_iperf3, testbed
from satcc.analyze.iperf3 import Iperf3Error
from satcc.cli import main

DATA = Path(__file__).parent / "data" / "iperf3"


def interval_bytes(doc: dict, socket: int) -> int:
    return sum(
        s["bytes"] for iv in doc["intervals"] for s in iv["streams"] if s["socket"] == socket
    )


def to_json_stream(doc: dict) -> str:
    """The same run as iperf3 >= 3.17 `--json-stream` writes it: one event per line."""
    events = [{"event": "start", "data": doc["start"]}]
    events += [{"event": "interval", "data": iv} for iv in doc["intervals"]]
    events.append({"event": "end", "data": doc["end"]})
    return "\n".join(json.dumps(e) for e in events) + "\n"


def test_server_side_reverse_parallel_report_gives_each_streams_bytes_not_zero():
    # Before: 0 bit/s for both streams (the server's end.streams[].receiver is all zeros).
    doc = json.loads((DATA / "rp2_server.json").read_text())
    r = read_iperf3(DATA / "rp2_server.json")
    assert r.meta["role"] == "server" and r.meta["reverse"] and len(r.flows) == 2
    for s, f in zip(r.streams.to_dict("records"), r.flows.to_dict("records"), strict=True):
        assert s["bytes_source"] == "intervals"
        assert f["delivered_bytes"] == interval_bytes(doc, s["socket"]) > 1_000_000
        assert 1e6 < f["goodput_bps"] < 20e6
        assert s["src"] == "10.77.0.2" and s["sport"] == 5201  # the server sends with -R


def test_server_and_client_reports_of_one_run_agree_within_what_was_in_flight():
    server = read_iperf3(DATA / "rp2_server.json").flows.sort_values("dport")
    client = read_iperf3(DATA / "rp2_client.json").flows.sort_values("dport")
    # server: bytes written; client: bytes received — they differ by what was queued/in flight
    for s, c in zip(server["delivered_bytes"], client["delivered_bytes"], strict=True):
        assert 0 <= s - c < 600_000


def test_udp_server_report_takes_bytes_from_its_intervals():
    r = read_iperf3(DATA / "udp_server.json")
    (f,) = r.flows.to_dict("records")
    client = read_iperf3(DATA / "udp_client.json").flows.iloc[0]
    assert f["delivered_bytes"] == client["delivered_bytes"] == 1_249_624
    assert f["goodput_bps"] == pytest.approx(5e6, rel=0.01)


def test_json_stream_output_reads_as_the_same_run(tmp_path):
    doc = json.loads((DATA / "rp2_client.json").read_text())
    p = tmp_path / "stream.json"
    p.write_text(to_json_stream(doc))
    a, b = read_iperf3(p), read_iperf3(DATA / "rp2_client.json")
    assert a.flows.equals(b.flows) and a.intervals.equals(b.intervals)
    assert main(["analyze", str(p), "--json"]) == 0


def test_a_report_holding_only_irperf3s_error_gives_that_message_and_exit_2(tmp_path, capsys):
    p = tmp_path / "err.json"
    p.write_text(
        json.dumps(
            {
                "start": {},
                "intervals": [],
                "end": {},
                "error": "unable to connect to server: Connection refused",
            }
        )
    )
    assert main(["analyze", str(p)]) == 2
    err = capsys.readouterr().err
    assert "unable to connect to server: Connection refused" in err and "Traceback" not in err
    q = tmp_path / "err_only.json"
    q.write_text(json.dumps({"error": "error - the server is busy running a test"}))
    with pytest.raises(Iperf3Error, match="server is busy"):
        read_iperf3(q)
    s = tmp_path / "err.stream"
    s.write_text(
        '{"event": "error", "data": "unable to connect to server"}\n{"event": "end", "data": {}}\n'
    )
    with pytest.raises(Iperf3Error, match="unable to connect to server"):
        read_iperf3(s)


def test_an_error_after_some_intervals_is_a_warning_and_the_intervals_are_read(tmp_path, capsys):
    doc = json.loads((DATA / "rp2_client.json").read_text())
    doc["error"] = "control socket has closed unexpectedly"
    p = tmp_path / "late.json"
    p.write_text(json.dumps(doc))
    assert main(["analyze", str(p)]) == 0
    assert "warning" in capsys.readouterr().err


def test_a_missing_file_exits_2(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def _mutate(doc, how):
    if how == "connected_null":
        doc["start"]["connected"] = None
    elif how == "intervals_string":
        doc["intervals"] = "oops"
    elif how == "intervals_missing":
        del doc["intervals"]
    elif how == "negative_bytes":
        doc["end"]["streams"][0]["receiver"]["bytes"] = -5
    return doc


@pytest.mark.parametrize(
    "how,expect",
    [
        ("connected_null", "warning: .*start.connected"),
        ("intervals_missing", "warning: .*no intervals"),
        ("intervals_string", r"intervals: expected a list, found a string"),
        ("negative_bytes", r"end.streams\[0\].receiver.bytes: expected a number >= 0, found -5"),
    ],
)
def test_malformed_documents_give_one_line_or_a_warning_never_a_traceback(
    tmp_path, capsys, how, expect
):
    import re

    doc = _mutate(json.loads((DATA / "rp2_client.json").read_text()), how)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    code = main(["analyze", str(p)])
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(expect, err), err
    assert code == (0 if "warning" in expect else 2)
    if code == 2:
        assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "text,expect",
    [
        (
            '{"start": {}, "intervals": [], "end": {"streams": [{"receiver": {"bytes": '
            + "9" * 400
            + "}}]}}",
            "an integer of 400 digits",
        ),
        ("[" * 100_000 + "]" * 100_000, "nested more than"),
        (
            '{"start": {}, "intervals": [], "end": {"streams": [{"receiver": {"bytes": NaN}}]}}',
            "expected finite numbers, found NaN",
        ),
    ],
)
def test_hostile_numbers_and_nesting_are_refused_in_one_line(tmp_path, capsys, text, expect):
    p = tmp_path / "h.json"
    p.write_text(text)
    assert main(["analyze", str(p)]) == 2
    err = capsys.readouterr().err
    assert expect in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_reverse_clients_report_gives_the_servers_retransmits_per_stream(capsys):
    # Before: none shown, though end.sum_sent.retransmits is 1797 (-P 2 -R, client side).
    doc = json.loads((DATA / "rp2_client.json").read_text())
    r = read_iperf3(DATA / "rp2_client.json")
    assert r.meta["role"] == "client" and r.meta["reverse"]
    per_stream = [s["sender"]["retransmits"] for s in doc["end"]["streams"]]
    assert r.flows["retransmitted_packets"].tolist() == per_stream
    assert sum(per_stream) == doc["end"]["sum_sent"]["retransmits"] == 1797
    assert main(["analyze", str(DATA / "rp2_client.json"), "--json"]) == 0
    flows = json.loads(capsys.readouterr().out)["flows"]
    assert [f["retransmitted_packets"] for f in flows] == per_stream


def test_a_receiving_servers_report_has_no_retransmits_rather_than_zero():
    # a forward run's server (the receiver) writes no retransmits key: unknown, not 0
    doc = json.loads((DATA / "rp2_server.json").read_text())
    for s in doc["end"]["streams"]:
        s["sender"].pop("retransmits", None)
        s["sender"]["sender"] = False
    assert read_iperf3(doc).flows["retransmitted_packets"].isna().all()


@pytest.mark.kernel
@pytest.mark.skipif(testbed.available() is not None, reason=str(testbed.available()))
def test_real_server_side_reverse_parallel_report_is_not_zero(tmp_path):
    # real kernel and namespaces: run under `flock /tmp/satcc-emu.lock` like the other real tests
    out = testbed.iperf_capture(tmp_path / "c.pcap", parallel=2, reverse=True, seconds=2)
    p = tmp_path / "server.json"
    p.write_text(json.dumps(out["server"]))
    r = read_iperf3(p)
    assert len(r.flows) == 2 and (r.flows["goodput_bps"] > 1e6).all()
    c = tmp_path / "client.json"
    c.write_text(json.dumps(out["client"]))
    assert (read_iperf3(c).flows["goodput_bps"] > 1e6).all()
