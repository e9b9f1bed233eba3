"""Flows through tunnels (encap, mtu) and UDP constant-bit-rate flows, schema to simulator."""

from pathlib import Path

import pytest

from satcc import _native, linkmodels
from satcc import scenario as sc
from satcc.errors import UserError
from tests.helpers import requires_sim

REPO = Path(__file__).resolve().parents[1]

BASE = """
[scenario]
duration = "{duration}"
seed = {seed}
[[link]]
a = "a"
b = "b"
rate = "20 Mbit/s"
delay = "25 ms"
loss = {loss}
queue = "1 BDP"
[[flow]]
from = "a"
to = "b"
{flow}
"""


def config(write_toml, flow, duration="10 s", loss=0, seed=1, name="s.toml"):
    text = BASE.format(flow=flow, duration=duration, loss=loss, seed=seed)
    return sc.resolve(sc.load(write_toml(text, name=name)))


@pytest.mark.parametrize(
    "value, expected",
    [
        ("wireguard", 60),
        ("openvpn", 43),
        ("ipsec", 60),
        ("softether", 43),
        ("60 B", 60),
        (0, 0),
    ],
)
def test_encap_names_and_sizes(write_toml, value, expected):
    encap = f"encap = {value!r}" if isinstance(value, str) else f"encap = {value}"
    assert config(write_toml, encap)["flows"][0].get("encap_bytes", 0) == expected


def test_flow_extras_appear_only_when_used(write_toml):
    plain = config(write_toml, 'cca = "reno"')["flows"][0]
    assert not {"proto", "encap_bytes", "mtu"} & set(plain)
    f = config(
        write_toml, 'proto = "udp"\nrate = "10 Mbit/s"\nencap = "wireguard"\nmtu = "1400 B"'
    )["flows"][0]
    assert (f["proto"], f["udp_rate_bps"], f["udp_payload_bytes"]) == ("udp", 10_000_000, 1460)
    assert (f["encap_bytes"], f["mtu"]) == (60, 1400)


@pytest.mark.parametrize(
    "flow, path, expected",
    [
        ('proto = "udp"', "flow[0].rate", "positive rate for a UDP flow"),
        ('rate = "1 Mbit/s"', "flow[0].rate", "only with proto = 'udp'"),
        ('encap = "l2tp"', "flow[0].encap", "a tunnel (wireguard, openvpn, ipsec, softether)"),
        ('mtu = "40 B"', "flow[0].mtu", "68..65535"),
    ],
)
def test_bad_flow_keys_are_named(write_toml, flow, path, expected):
    with pytest.raises(UserError) as e:
        config(write_toml, flow)
    assert f"{path}: " in str(e.value) and expected in str(e.value), str(e.value)


def test_the_fragmentation_rule_of_study_000():
    # 60 B of tunnel: MSS 1460 (+52 B of headers) exceeds 1500, MSS 1300 does not.
    assert linkmodels.fragments(1460, 60) and not linkmodels.fragments(1300, 60)
    assert linkmodels.fragments(1448, 43) and not linkmodels.fragments(1405, 43)


@requires_sim
def test_mss_1460_through_a_60_byte_tunnel_fragments_and_costs_goodput(write_toml):
    runs = {}
    for mss in (1300, 1460):
        c = config(write_toml, f'cca = "reno"\nmss = {mss}\nencap = "60 B"', name=f"m{mss}.toml")
        runs[mss] = _native.run_sim(c)
    assert runs[1300]["stats"]["fragmented_packets"] == 0
    assert runs[1460]["stats"]["fragmented_packets"] == runs[1460]["flows"][0]["sent_packets"]
    # Lossless: goodput = capacity x payload share of the wire, extra IP header included.
    for mss, wire in ((1300, 1300 + 52 + 60), (1460, 1460 + 52 + 60 + 20)):
        share = 20e6 * mss / wire
        assert 0.9 * share < runs[mss]["flows"][0]["goodput_bps"] <= share * 1.001, mss


@requires_sim
def test_udp_reports_iperf3_style_throughput_loss_and_jitter(write_toml):
    c = config(write_toml, 'proto = "udp"\nrate = "30 Mbit/s"\npacket_size = "1000 B"', loss=0.01)
    f = _native.run_sim(c)["flows"][0]
    assert f["sent_packets"] == pytest.approx(30e6 * 10 / 8000, abs=1)
    # 20 Mbit/s of 1028-byte datagrams carry 19.46 Mbit/s of payload; 1 % random loss on top.
    assert f["goodput_bps"] == pytest.approx(20e6 * 1000 / 1028 * 0.99, rel=0.01)
    assert f["loss_fraction"] == pytest.approx(1 - 20e6 * 1000 / 1028 * 0.99 / 30e6, abs=0.01)
    assert f["lost_packets"] > 0 and f["jitter_ms"] >= 0
    tcp = _native.run_sim(config(write_toml, 'cca = "reno"', name="t.toml"))["flows"][0]
    assert tcp["jitter_ms"] is None and tcp["lost_packets"] is None


@requires_sim
def test_a_limited_udp_flow_reports_its_rate_over_its_sending_time(write_toml):
    # 10 Mbit/s for 5 s of a 10 s run: received ≈ 10 Mbit/s, not 5, even with a loss.
    c = config(write_toml, 'proto = "udp"\nrate = "10 Mbit/s"\nsize = "6250 kB"', loss=0.001)
    f = _native.run_sim(c)["flows"][0]
    assert f["goodput_bps"] == pytest.approx(10e6 * 0.999, rel=0.01)


@requires_sim
@pytest.mark.parametrize("name", ["starlink-t2t-vpn", "starlink-t2t-udp"])
def test_the_terminal_to_terminal_scenarios_run(name):
    out = _native.run_sim(sc.resolve(sc.load(REPO / "scenarios" / f"{name}.toml")))
    for f in out["flows"]:
        # End-to-end throughput is bounded by the uplinks (business ≤ 30, residential ≤ 25 Mbit/s).
        assert 0 < f["goodput_bps"] <= 30e6, f
