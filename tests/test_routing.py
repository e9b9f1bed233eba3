"""Routes and "N BDP" queues are computed once, in Rust (satcc-core `scenario::resolve`): the
simulator, the emulator's topology, satcc-linkd and the model engine all read them from the
resolved scenario's `routes`."""

from __future__ import annotations

import pytest

from satcc import _native
from satcc import scenario as sc
from satcc.emu import linkd, topology
from satcc.engines import model
from tests.helpers import MINIMAL

DUMBBELL = """
[scenario]
name = "routes"
duration = "5 s"

[[link]]
a = "s0"
b = "r"
rate = "1 Gbit/s"
delay = "5 ms"

[[link]]
a = "s1"
b = "r"
rate = "1 Gbit/s"
delay = "50 ms"

[[link]]
a = "r"
b = "d"
rate = "100 Mbit/s"
delay = "20 ms"
queue = "1 BDP"

[[flow]]
from = "s0"
to = "d"

[[flow]]
from = "s1"
to = "d"
"""


def test_bdp_queues_use_the_longest_rtt_crossing_them(write_toml):
    cfg = sc.resolve(sc.load(write_toml(DUMBBELL)))
    r = cfg["routes"]
    assert r["paths"][0] == {"fwd": [0, 4], "rev": [5, 1]}
    assert r["paths"][1] == {"fwd": [2, 4], "rev": [5, 3]}
    # 100 Mbit/s x the 140 ms RTT of the s1 flow: the queue is held once, as written ("1 BDP"),
    # and sized against the routes' largest RTT through the direction as the links are built
    assert r["max_rtt_ns"][4] == 140_000_000
    assert cfg["links"][2]["ab"]["queue"] == {"bdp": 1.0}
    assert _native.sized_queue({"bdp": 1.0}, 100_000_000, r["max_rtt_ns"][4]) == {
        "bytes": 1_750_000
    }
    assert _native.sized_queue({"packets": 9}, 1, 1) == {"packets": 9}
    assert cfg["nodes"] == ["s0", "r", "s1", "d"]
    assert r["base_delay_ns"][2][3] == 70_000_000


def test_every_engine_reads_the_same_routes(write_toml):
    cfg = sc.resolve(sc.load(write_toml(DUMBBELL)))
    r = cfg["routes"]
    plan = topology.plan(cfg, "t", subnet_octet=70)
    assert plan.path_dirs[(2, 3)] == r["paths"][1]["fwd"]
    doc = linkd.config(plan, 1, cfg["bin_ns"], cfg["duration_ns"], "/nonexistent")
    assert doc["scenario"] is cfg  # satcc-linkd sizes its queues from these routes
    inputs = model.path_inputs(cfg)
    assert inputs[1].buffer_bytes == 1_750_000
    assert inputs[1].prop_rtt_s == 0.14


def test_an_unreachable_destination_has_an_empty_path(write_toml):
    cfg = sc.resolve(sc.load(write_toml(MINIMAL)))
    spec = {k: v for k, v in cfg.items() if k != "routes"}
    spec["nodes"] = [*cfg["nodes"], "island"]
    r = _native.resolve(spec).config["routes"]
    assert r["next_hop"][0][len(spec["nodes"]) - 1] is None
    assert r["paths"] == cfg["routes"]["paths"]


def test_a_resolved_scenario_with_routes_not_its_own_is_refused(write_toml):
    cfg = sc.resolve(sc.load(write_toml(DUMBBELL)))
    forged = {**cfg, "routes": {**cfg["routes"], "max_rtt_ns": [1] * 6}}
    with pytest.raises(ValueError, match="not the routes of this scenario"):
        _native.run_sim(forged)
    bare = {k: v for k, v in cfg.items() if k != "routes"}
    with pytest.raises(ValueError, match="not yet resolved"):
        _native.run_sim(bare)


def test_the_emulator_refuses_a_sender_cwnd_clamp_it_cannot_apply(write_toml):
    # reno has no BPF program compiling the cap: refused before anything starts
    cfg = sc.resolve(sc.load(write_toml(MINIMAL + "cwnd_clamp = 550\n")))
    assert cfg["flows"][0]["cwnd_clamp"] == 550
    with pytest.raises(
        topology.EmuError, match=r"flow\[0\]\.cwnd_clamp: .*only in hybla .*not in reno"
    ):
        topology.plan(cfg, "t", subnet_octet=70)


def test_the_emulator_plans_hyblas_sender_cwnd_clamp(write_toml):
    # Hybla's BPF program compiles the cap in (satcc.emu.bpf), so the plan takes it
    toml = MINIMAL.replace('cca = "reno"', 'cca = "hybla"') + "cwnd_clamp = 550\n"
    cfg = sc.resolve(sc.load(write_toml(toml)))
    assert cfg["flows"][0]["cwnd_clamp"] == 550
    topology.plan(cfg, "t", subnet_octet=70)
