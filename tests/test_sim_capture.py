"""Packet captures from the simulator (`satcc sim --capture`, satcc-sim capture.rs): the files
open in tshark without complaint, carry exactly the TCP analysis flags satcc's own analyzer
finds (which count the simulator's own retransmissions), give back the simulator's flows table
through `satcc analyze`, and are the same bytes from run to run."""

from __future__ import annotations

import hashlib
import re
import subprocess

import pytest

import satcc
from satcc.analyze import read_capture
from satcc.analyze import tshark as ts
from satcc.cli import main
from satcc.errors import UserError
from satcc.results import load
from tests.helpers import requires_sim
from tests.test_analyze_capture import compare_with_tshark

pytestmark = requires_sim

# Two senders, three flows (cubic, then two reno) over a 50 Mbit/s bottleneck with random loss
# beside the drop-tail queue's, and a UDP flow beside them: the dumbbell of scenarios/ cut short.
COMPETING = """
[scenario]
name = "capture-competing"
duration = "6 s"
seed = 7

[[link]]
a = "s1"
b = "r1"
rate = "1 Gbit/s"
delay = "1 ms"

[[link]]
a = "s2"
b = "r1"
rate = "1 Gbit/s"
delay = "2 ms"

[[link]]
a = "r1"
b = "r2"
rate = "50 Mbit/s"
delay = "10 ms"
queue = "1 BDP"
loss = 0.002

[[link]]
a = "r2"
b = "d"
rate = "1 Gbit/s"
delay = "0 ms"

[[flow]]
name = "cubic"
from = "s1"
to = "d"
cca = "cubic"

[[flow]]
name = "reno"
from = "s2"
to = "d"
cca = "reno"
start = "1 s"
count = 2
stagger = "0.5 s"

[[flow]]
name = "udp"
from = "s2"
to = "d"
proto = "udp"
rate = "2 Mbit/s"
start = "0.5 s"
"""

ONE = """
[scenario]
name = "capture-one"
duration = "5 s"
seed = 3

[[link]]
a = "s"
b = "d"
rate = "20 Mbit/s"
delay = "15 ms"
queue = "1 BDP"
loss = 0.003

[[flow]]
from = "s"
to = "d"
cca = "cubic"
"""

# What tshark may say about these captures: the analysis flags of traffic that loses packets
# (the loss happens between the capture points), nothing about the files or the headers.
EXPECTED_EXPERT = {
    "Previous segment(s) not captured (common at capture start)",
    "This frame is a (suspected) out-of-order segment",
    "This frame is a (suspected) retransmission",
    "This frame is a (suspected) fast retransmission",
    "This frame is a (suspected) spurious retransmission",
    "D-SACK Sequence",
    "Duplicate ACK",
    "TCP window update",
    "Connection establish request (SYN): server port",
    "Connection establish acknowledge (SYN+ACK): server port",
    "ACKed segment that wasn't captured (common at capture start)",
}


def simulate(tmp_path, text: str, points: str, name: str = "run"):
    """`satcc sim` of `text` capturing at `points`: the result directory."""
    src = tmp_path / f"{name}.toml"
    src.write_text(text)
    out = tmp_path / name
    assert main(["sim", str(src), "--out", str(out), "--capture", points]) == 0
    return out


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def competing(tmp_path_factory):
    return simulate(tmp_path_factory.mktemp("competing"), COMPETING, "s1,s2,d,r1:r2")


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    return simulate(tmp_path_factory.mktemp("one"), ONE, "s,d")


def test_the_captures_are_named_and_laid_out_as_the_emulators(competing):
    names = sorted(p.name for p in (competing / "sim").iterdir())
    assert names == [
        "capture-0-s1.pcapng",
        "capture-2-s2.pcapng",
        "capture-4-d.pcapng",
        "capture-l2ab-r1-r2.pcapng",
    ]
    meta = load(competing).meta
    assert meta["sim"] == {"raw_dir": "sim", "captures": names}  # in the order given


@pytest.mark.skipif(not ts.available(), reason="tshark is not installed")
def test_tshark_reads_every_capture_without_warnings_and_its_flags_are_satccs(competing):
    for path in sorted((competing / "sim").iterdir()):
        p = subprocess.run(
            [
                "tshark",
                "-n",
                "-o",
                "tcp.check_checksum:TRUE",
                "-o",
                "udp.check_checksum:TRUE",
                "-o",
                "ip.check_checksum:TRUE",
                "-r",
                str(path),
                "-q",
                "-z",
                "expert",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        stderr = [line for line in p.stderr.splitlines() if "Running as user" not in line]
        assert stderr == [], f"{path.name}: {stderr}"
        groups = re.findall(r"^(Errors|Warns|Notes|Chats) \(\d+\)", p.stdout, re.MULTILINE)
        assert "Errors" not in groups, f"{path.name}: {p.stdout}"
        summaries = {
            re.sub(r" \(#\d+\)$", "", m.strip())
            for m in re.findall(r"^\s+\d+\s+\S+\s+\S+\s+(.*)$", p.stdout, re.MULTILINE)
        }
        summaries = {re.sub(r"server port \d+$", "server port", s) for s in summaries}
        assert summaries <= EXPECTED_EXPERT, f"{path.name}: {summaries - EXPECTED_EXPERT}"
        bad_frames = "tcp.checksum.status == 0 || ip.checksum.status == 0"
        bad_frames += " || udp.checksum.status == 0 || _ws.malformed"
        bad = subprocess.run(
            ["tshark", "-n", "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
            + ["-o", "udp.check_checksum:TRUE", "-r", str(path), "-Y", bad_frames],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert bad == "", f"{path.name}: bad checksums or malformed frames:\n{bad[:500]}"
        # the flags tshark sets are the ones satcc's analyzer finds, packet by packet
        assert compare_with_tshark(path) > 1000


def test_satcc_analyze_of_the_senders_capture_gives_the_simulators_flows(one):
    """One flow: the sender's capture (before the lossy link) sees every packet sent."""
    sim = load(one).flows.set_index("id")
    cap = read_capture(one / "sim" / "capture-0-s.pcapng", bin_s=0.1).flows
    data = cap[cap["payload_bytes"] > 0]
    assert len(data) == 1
    _same_flow(sim.loc[0], data.iloc[0], 20e6)


def test_satcc_analyze_gives_each_competing_flows_numbers(competing):
    """Competing flows with loss: each TCP flow from its sender's capture, the UDP flow from
    the receiver's."""
    sim = load(competing).flows.set_index("id")
    s1 = read_capture(competing / "sim" / "capture-0-s1.pcapng", bin_s=0.1).flows
    s2 = read_capture(competing / "sim" / "capture-2-s2.pcapng", bin_s=0.1).flows
    tcp = {int(r.sport) - 40000: r for f in (s1, s2) for r in f.itertuples() if r.proto == "tcp"}
    tcp = {k: r for k, r in tcp.items() if r.payload_bytes > 0}
    assert sorted(tcp) == [0, 1, 2]
    for i, r in tcp.items():
        assert sim.loc[i, "retransmitted_packets"] > 0, "the loss reaches every flow"
        _same_flow(sim.loc[i], r._asdict(), 50e6)
    d = read_capture(competing / "sim" / "capture-4-d.pcapng", bin_s=0.1).flows
    udp = d[(d["proto"] == "udp")].iloc[0]
    assert udp["sport"] == 40003 and udp["dport"] == 5204
    assert udp["udp_iperf"], "iperf3's sequence header is in the captured payload"
    assert udp["udp_lost"] == sim.loc[3, "lost_packets"]
    assert udp["packets"] == sim.loc[3, "received_packets"]


def _same_flow(sim, cap, bottleneck_bps: float) -> None:
    """The analyzer's reading of a sender-side capture against the simulator's own counters.

    - data segments sent and retransmitted: exactly equal, counting as retransmitted every data
      segment below the highest sequence number sent (tshark calls a retransmission sent within
      its out-of-order threshold of new data "out-of-order", and `retransmitted_packets` of
      `satcc analyze` leaves those out);
    - goodput: within 1 % (the simulator counts bytes delivered to the receiver over the flow's
      time, the capture the advance of the highest sequence number sent, which leads by the
      data in flight at the end);
    - RTT: the two count different samples. The simulator's are its sender's estimator inputs
      (Linux: the handshake's, then per ACK from the oldest segment it newly acknowledges, so
      an ACK that closes a hole after a loss measures the whole recovery); the analyzer's are
      tshark's data-to-ACK pairs (the segment whose end the ACK names, Karn's rule). So the
      capture's minimum is a data segment's, above the handshake's by at most one 1500-byte
      serialisation at the bottleneck (+ 0.1 ms); the means agree within 5 %; the 95th
      percentiles within 25 % (measured: 2-4 % with loss spread over competing flows, 19 % on
      one lossy flow, whose recoveries dominate its tail).
    """
    g = cap if isinstance(cap, dict) else cap.to_dict()
    retx = (
        g["n_retransmission"]
        + g["n_fast_retransmission"]
        + g["n_spurious_retransmission"]
        + g["n_out_of_order"]
    )
    assert retx == sim["retransmitted_packets"]
    assert g["sent_packets"] == sim["sent_packets"]
    assert g["goodput_bps"] == pytest.approx(sim["goodput_bps"], rel=0.01)
    serialisation_ms = 1500 * 8 / bottleneck_bps * 1e3
    assert 0 <= g["rtt_min_ms"] - sim["rtt_min_ms"] <= serialisation_ms + 0.1
    assert g["rtt_mean_ms"] == pytest.approx(sim["rtt_mean_ms"], rel=0.05)
    assert g["rtt_p95_ms"] == pytest.approx(sim["rtt_p95_ms"], rel=0.25)


def test_the_same_scenario_and_seed_give_the_same_capture_bytes(tmp_path, one):
    again = simulate(tmp_path, ONE, "s,d", "again")
    for name in ("capture-0-s.pcapng", "capture-1-d.pcapng"):
        assert sha(again / "sim" / name) == sha(one / "sim" / name)
    other = simulate(tmp_path, ONE.replace("seed = 3", "seed = 4"), "s,d", "other")
    assert sha(other / "sim" / "capture-0-s.pcapng") != sha(one / "sim" / "capture-0-s.pcapng")


def test_a_capture_changes_nothing_in_the_results(tmp_path, one):
    src = tmp_path / "one.toml"
    src.write_text(ONE)
    plain = tmp_path / "plain"
    assert main(["sim", str(src), "--out", str(plain)]) == 0
    assert not (plain / "sim").exists()
    a, b = load(plain), load(one)
    assert a.flows.equals(b.flows) and a.flow_series.equals(b.flow_series)
    assert a.link_series.equals(b.link_series)
    assert "sim" not in a.meta


def test_a_point_the_scenario_lacks_is_one_clear_error(tmp_path, capsys):
    src = tmp_path / "one.toml"
    src.write_text(ONE)
    assert main(["sim", str(src), "--out", str(tmp_path / "x"), "--capture", "s,z"]) == 2
    err = capsys.readouterr().err
    assert 'capture: expected a node (s, d) or FROM:TO, found "z"' in err
    assert len(err.strip().splitlines()) == 1


def test_the_scenario_key_captures_as_the_flag_does(tmp_path, one):
    """`[scenario] capture` is the flag's list in the file: the same files, the same bytes."""
    keyed = ONE.replace("seed = 3\n", 'seed = 3\ncapture = ["s", "d"]\n')
    src = tmp_path / "keyed.toml"
    src.write_text(keyed)
    out = tmp_path / "keyed"
    assert main(["sim", str(src), "--out", str(out)]) == 0
    for name in ("capture-0-s.pcapng", "capture-1-d.pcapng"):
        assert sha(out / "sim" / name) == sha(one / "sim" / name)
    assert load(out).meta["sim"]["captures"] == ["capture-0-s.pcapng", "capture-1-d.pcapng"]


def test_a_bad_point_in_the_scenario_key_is_refused_by_check(tmp_path, capsys):
    src = tmp_path / "bad.toml"
    src.write_text(ONE.replace("seed = 3\n", 'seed = 3\ncapture = ["s:z"]\n'))
    assert main(["check", str(src)]) == 2
    err = capsys.readouterr().err
    assert "scenario.capture: expected a node (s, d) or FROM:TO" in err and str(src) in err


def test_the_api_writes_the_captures_into_its_out_directory(tmp_path):
    r = satcc.run(ONE, capture="d", out=tmp_path / "api")
    assert (tmp_path / "api" / "sim" / "capture-1-d.pcapng").stat().st_size > 10_000
    assert r.result.meta["sim"]["captures"] == ["capture-1-d.pcapng"]
    with pytest.raises(UserError, match="capture: the model engine writes no packet captures"):
        satcc.run(ONE, engine="model", capture="d", out=tmp_path / "m")


# The emulator's scenario behind python/satcc/data/captures/emu-cubic-2mbit-40ms.pcap (one
# CUBIC flow, client port 40000, over a 2 Mbit/s link): the simulator's run of it is set beside
# that real kernel capture as a `satcc emu` result directory would hold it.
KERNEL_PAIR = """
[scenario]
name = "capture-vs-kernel"
duration = "3 s"
seed = 1

[[link]]
a = "s"
b = "d"
rate = "2 Mbit/s"
delay = "20 ms"

[[flow]]
from = "s"
to = "d"
cca = "cubic"
"""


def test_report_sets_a_simulated_and_a_kernel_capture_side_by_side(tmp_path):
    from importlib import resources

    from satcc.report.captures import draw

    sim = simulate(tmp_path, KERNEL_PAIR, "d", "sim")
    emu = tmp_path / "emu-run"
    (emu / "emu").mkdir(parents=True)
    real = resources.files("satcc") / "data" / "captures" / "emu-cubic-2mbit-40ms.pcap"
    (emu / "emu" / "capture-1-d.pcap").write_bytes(real.read_bytes())
    out = tmp_path / "report"
    cmd = ["report", str(sim), "--kernel", str(emu), "--out", str(out), "--format", "html,png"]
    assert main(cmd) == 0
    png = out / "fig_seqack_capture-1-d_flow0.png"
    assert png.stat().st_size > 10_000
    html = (out / "report.html").read_text()
    assert "Sequence/ACK, flow 0" in html and html.count("data:image/png") == 2
    ((fid, _, caption, fig),) = draw(sim, emu)
    assert fid == "seqack_capture-1-d_flow0"
    assert "capture-1-d.pcapng and capture-1-d.pcap" in caption
    left, right = fig.axes
    for ax in (left, right):  # each side drew its flow's data and ACKs
        assert sum(len(line.get_xdata()) for line in ax.get_lines()) > 100


def test_report_says_which_captures_it_cannot_pair(tmp_path, capsys):
    sim = simulate(tmp_path, KERNEL_PAIR, "s", "sim")
    emu = tmp_path / "emu-run"
    (emu / "emu").mkdir(parents=True)
    (emu / "emu" / "capture-1-d.pcap").write_bytes(b"")
    assert main(["report", str(sim), "--kernel", str(emu), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--kernel: expected a capture point both runs captured, found capture-0-s" in err
