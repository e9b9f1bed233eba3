"""`satcc plot` as issue 29 found it: --out p.svg/p.pdf wrote PNG bytes, the legend read "cubic
(cubic)", an analysis was titled "None · analyze · seed None" with "(nan)" entries and no ping
panel, the cwnd panel was linear without a capacity line, and one DIR only."""

from __future__ import annotations

import pytest

from satcc import plot
from satcc.analyze.synth import Conversation, write_pcap
from satcc.cli import main
from satcc.results import load
from tests.helpers import requires_sim

PING = """PING 192.0.2.9 (192.0.2.9) 56(84) bytes of data.
[1700000000.000000] 64 bytes from 192.0.2.9: icmp_seq=1 ttl=64 time=20.1 ms
[1700000000.200000] 64 bytes from 192.0.2.9: icmp_seq=2 ttl=64 time=22.4 ms
[1700000000.400000] 64 bytes from 192.0.2.9: icmp_seq=3 ttl=64 time=21.0 ms

--- 192.0.2.9 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 400ms
rtt min/avg/max/mdev = 20.100/21.167/22.400/0.950 ms
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("runs")
    for name, cca in (("a", "cubic,bbr"), ("b", "reno")):
        argv = ["try", "-b", "10M", "--rtt", "40ms", "--loss", "0.5%", "-C", cca, "-t", "3s"]
        assert main([*argv, "--out", str(d / name)]) == 0
    return d


@requires_sim
@pytest.mark.parametrize(
    ("suffix", "magic"), [("svg", b"<?xml"), ("pdf", b"%PDF"), ("png", b"\x89PNG")]
)
def test_out_writes_the_format_its_suffix_names_and_the_same_bytes_twice(
    runs, tmp_path, suffix, magic
):
    one, two = tmp_path / f"p.{suffix}", tmp_path / f"q.{suffix}"
    assert main(["plot", str(runs / "a"), "--out", str(one)]) == 0
    assert main(["plot", str(runs / "a"), "--out", str(two)]) == 0
    assert one.read_bytes().startswith(magic) and one.read_bytes() == two.read_bytes()


@requires_sim
def test_an_unknown_suffix_is_refused_naming_out(runs, tmp_path, capsys):
    assert main(["plot", str(runs / "a"), "--out", str(tmp_path / "p.jpg")]) == 2
    assert capsys.readouterr().err.startswith("satcc: error: --out: expected a file ending in .png")


@requires_sim
def test_legend_names_a_flow_once_and_cwnd_is_log_with_the_bdp(runs):
    fig = plot.draw(load(runs / "a"))
    goodput, cwnd, _ = fig.get_axes()
    assert [t.get_text() for t in goodput.get_legend().get_texts()] == ["cubic", "bbr"]
    assert cwnd.get_yscale() == "log"
    fig.canvas.draw()
    ticks = [t.get_text() for t in cwnd.get_yticklabels()]
    assert ticks and not any("$" in t or "mathdefault" in t for t in ticks)
    bdp = [ln for ln in cwnd.get_lines() if ln.get_label().startswith("BDP")]
    # 10 Mbit/s x ~40 ms over 1448-byte packets: about 35 packets
    assert len(bdp) == 1 and 30 < float(bdp[0].get_ydata()[-1]) < 40


@requires_sim
def test_a_named_flow_keeps_its_cca_in_the_legend():
    assert plot.flow_label({"name": "down", "cca": "cubic"}) == "down (cubic)"
    assert plot.flow_label({"name": "cubic.1", "cca": "cubic"}) == "cubic.1"
    assert plot.flow_label({"name": "x>y", "cca": float("nan")}) == "x>y"


@requires_sim
def test_several_directories_are_overlaid(runs, tmp_path):
    out = tmp_path / "ov.png"
    assert main(["plot", str(runs / "a"), str(runs / "b"), "--out", str(out)]) == 0
    fig = plot.draw_overlay([("a", load(runs / "a")), ("b", load(runs / "b"))])
    labels = [t.get_text() for t in fig.get_axes()[0].get_legend().get_texts()]
    assert labels == ["a: cubic", "a: bbr", "b: reno"]
    assert fig._suptitle.get_text() == "overlay: a | b"


def test_an_analysis_is_titled_by_its_inputs_with_a_ping_panel(tmp_path, capsys):
    conv = Conversation()
    pkts = [conv.syn(t=0.0), conv.synack(t=0.01), conv.ack(t=0.02)]
    pkts += [conv.data(t=0.02 + 0.01 * k, seq=1 + 1000 * k, n=1000) for k in range(12)]
    write_pcap(tmp_path / "dish.pcap", pkts)
    (tmp_path / "ping.txt").write_text(PING)
    out = tmp_path / "res"
    assert (
        main(
            ["analyze", str(tmp_path / "dish.pcap"), str(tmp_path / "ping.txt"), "--out", str(out)]
        )
        == 0
    )
    capsys.readouterr()
    fig = plot.draw(load(out))
    title = fig._suptitle.get_text()
    assert title == "analyze · dish.pcap, ping.txt" and "None" not in title
    axes = fig.get_axes()
    assert axes[-1].get_ylabel() == "ping RTT (ms)"
    (probes,) = axes[-1].get_lines()
    assert list(probes.get_ydata()) == [20.1, 22.4, 21.0]
    legend = [t.get_text() for a in axes if a.get_legend() for t in a.get_legend().get_texts()]
    assert legend and not any("nan" in t for t in legend)
