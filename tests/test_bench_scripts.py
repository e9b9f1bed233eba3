"""The benchmark scripts are not run by the tests (they need root, minutes and quiet cores), so
a change elsewhere can break them unnoticed (bench/emu/fidelity.py kept building the topology
from the dictionary the scenario layer had stopped producing). These checks run what can run
anywhere: every script's --help (imports, argument parsing), the emulator bed's scenario
through the topology planner, and the simulator benchmark's report on recorded lines."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from satcc.emu import topology
from tests.helpers import requires_sim

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "bench").rglob("*.py") if p.name != "report.py")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_benchmark_script_imports_and_parses_its_arguments(script):
    r = subprocess.run(
        [sys.executable, str(script), "--help"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "usage" in r.stdout.lower()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_emulator_bed_is_a_resolved_scenario_the_topology_plans():
    fidelity = _load(ROOT / "bench/emu/fidelity.py")
    cfg = fidelity.bed_scenario(100_000_000, 10_000_000, 1000)
    plan = topology.plan(cfg, "t0bench", subnet_octet=90)
    assert len(plan.links) == 1 and len(plan.namespaces) == 2
    link = cfg["links"][0]
    for d in ("ab", "ba"):
        assert link[d]["rate_bps"] == 100_000_000 and link[d]["delay_ns"] == 10_000_000


def test_the_simulator_report_puts_the_cli_beside_ns3(tmp_path):
    def line(tool, wall, segs=500_000):
        return {
            "tool": tool,
            "cca": "cubic",
            "groups": [[50, 1]],
            "wall_s": wall,
            "cpu_s": wall,
            "events": 3 * segs,
            "packets": 3 * segs,
            "data_segments": segs,
            "retransmissions": 10,
            "goodput_total_bps": 96e6,
            "goodput_bps": [96e6],
        }

    rows = [
        {"case": "a", "rep": 1, "load1_before": 0.1, "load1_after": 0.1, "result": line(t, w)}
        for t, w in (("satcc", 0.13), ("ns-3.37", 14.5))
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "cases.txt").write_text("a|1 cubic, 100 Mbit/s|\n")
    (tmp_path / "cli.jsonl").write_text(
        json.dumps({"case": "a", "rep": 1, "wall_s": 0.29, "cpu_s": 0.3}) + "\n"
    )
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench/sim/report.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "ns-3 112x longer" in r.stdout  # 14.5 / 0.13
    assert "`satcc sim` end to end" in r.stdout and "ns-3 50.0x longer" in r.stdout


def test_the_cli_case_a_is_the_network_ns3_and_bench_sim_simulate():
    """bench/sim/run.sh times `satcc sim bench/cli/case-a.toml` beside ns-3 and bench_sim on case
    a: the file must be their network (flags in run.sh, access link and bottleneck delay in bench_sim.rs),
    with no host noise (they model none), or the ratio compares different work."""
    from satcc import scenario

    run_sh = (ROOT / "bench/sim/run.sh").read_text()
    flags = re.search(r'add_case a "[^"]*" \\\n\s*"([^"]*)"', run_sh).group(1)
    flags = flags.replace("$CCA", "cubic").replace("$(secs 60)", "60").split()  # CUBIC, full
    opt = dict(zip(flags[::2], flags[1::2], strict=True))
    rust = (ROOT / "crates/satcc-sim/examples/bench_sim.rs").read_text()

    def const(name: str) -> int:
        return int(re.search(rf"const {name}: u64 = ([0-9_]+);", rust).group(1).replace("_", ""))

    assert re.search(r'satcc, "sim", "bench/cli/case-a.toml"', run_sh)
    s = scenario.load(ROOT / "bench/cli/case-a.toml")
    rtt_ms, count = opt["--group"].split(":")
    bneck_ns = const("DEFAULT_BNECK_DELAY_US") * 1000
    access, bneck = s.links
    assert (s.scenario.host_noise, s.scenario.seed) == ("off", 1)
    assert s.scenario.duration == int(opt["--secs"]) * 10**9
    assert (access.rate, access.queue) == (
        const("ACCESS_RATE_BPS"),
        {"packets": const("ACCESS_QUEUE_PKTS")},
    )
    assert access.delay + bneck_ns == int(rtt_ms) * 10**6 // 2
    assert (bneck.rate, bneck.delay) == (float(opt["--rate-bps"]), bneck_ns)
    assert bneck.queue == {"bytes": int(opt["--queue-bytes"])}
    assert [(f.cca, f.count) for f in s.flows] == [(opt["--cca"], int(count))]
    mss = int(re.search(r"mss: (\d+),", rust).group(1))  # bench_sim's default --mss
    rwnd = re.search(r"const RWND_BYTES: u64 = (\d+) << (\d+);", rust).groups()
    assert (s.flows[0].mss, s.flows[0].rwnd) == (mss, int(rwnd[0]) << int(rwnd[1]))


def test_receiver_stalls_counts_an_in_order_stretch_ack_and_not_a_hole_fill():
    stalls = _load(ROOT / "bench" / "emu" / "receiver_stalls.py")
    mss = 1448
    # Ten in-order segments 0.1 ms apart; then segment 10 lost and segments 11-17 arriving
    # before its retransmission at 0.1 s.
    data = [(i * 1e-4, i * mss, (i + 1) * mss) for i in range(10)]
    data += [(2e-3 + i * 1e-4, i * mss, (i + 1) * mss) for i in range(11, 18)]
    data.append((0.1, 10 * mss, 11 * mss))
    acks = [
        (2 * 1e-4, 2 * mss),  # two segments: a delayed ACK
        (1.5e-3, 10 * mss),  # eight in-order segments held 0.7-1.3 ms: a stall
        (0.1001, 18 * mss),  # the hole filled: eight segments, one of them retransmitted
    ]
    sizes, n, stalled, total, waits = stalls.flow_stalls(data, acks, 0.0, 1.0, 5)
    assert total == 18 and sizes == {2: 1, 6: 2}
    assert n == 1 and stalled == 8
    assert waits == pytest.approx([1.3])


def _kernel_run(campaign: Path, run_id: str, seed: int, syn: list, data: list) -> Path:
    """A kernel campaign's run as `satcc reproduce --engine emu` leaves it, as far as the
    replay reads it: run.json (the scenario as run, seed, parameters) and summary.json's
    start instants. The path: one 10 Mbit/s link, 10 ms each way (a 20 ms base RTT)."""
    doc = {
        "scenario": {"name": "two", "duration": "500 ms", "bin": "100 ms", "engine": "emu"},
        "link": [{"a": "s", "b": "d", "rate": "10 Mbit/s", "delay": "10 ms"}],
        "flow": [{"name": "short-rtt", "from": "s", "to": "d", "count": 2}],
    }
    d = campaign / "runs" / run_id
    d.mkdir(parents=True)
    run = {"run_id": run_id, "engine": "emu", "seed": seed, "params": {"k": "x"}, "scenario": doc}
    (d / "run.json").write_text(json.dumps(run))
    stats = {"first_syn_ns": syn, "first_data_ns": data}
    (d / "summary.json").write_text(json.dumps({"stats": stats}))
    return d / "run.json"


@requires_sim
def test_kernel_twins_replays_a_kernel_run_from_its_data_instants_its_syns_or_another_runs(
    tmp_path,
):
    twins = _load(ROOT / "bench/reproduce/kernel_twins.py")
    offsets = _load(ROOT / "bench/reproduce/start_offsets.py")
    camp = tmp_path / "kernel"
    a = _kernel_run(camp, "a", 1, [300_000, 100_000], [21_300_000, 29_000_000])
    b = _kernel_run(camp, "b", 2, [50_000, 60_000], [20_500_000, 20_070_000])
    out = tmp_path / "twins"

    def starts(doc):
        return [f.get("start") for f in doc["scenario"]["flow"]]

    # fidelity's rule: one base RTT (20 ms) before the first data, never before the SYN
    d, doc = twins.replay(a, out, "kernel")
    assert starts(doc) == ["1300000 ns", "9000000 ns"]
    assert doc["engine"] == "sim" and doc["starts_from"]["run_id"] == "a"
    assert [round(x, 4) for x in pd.read_parquet(d / "flows.parquet")["start_s"]] == [0.0013, 0.009]
    d, doc = twins.replay(b, out, "kernel")
    assert starts(doc) == ["500000 ns", "70000 ns"]
    # at the SYNs; and another run's instants on this run's seed
    assert starts(twins.replay(a, out, "syn")[1]) == ["300000 ns", "100000 ns"]
    d, doc = twins.replay(a, out, "kernel", starts_of=b)
    assert starts(doc) == ["500000 ns", "70000 ns"] and doc["seed"] == 1
    assert d.name == "a-kstarts-of-b" and doc["starts_from"]["run_id"] == "b"
    # nominal: the scenario's own starts
    assert starts(twins.replay(a, out)[1]) == [None]
    # the offsets: spreads of the data instants, the SYNs and the starts (ms)
    got = offsets.run_offsets(a.parent)
    assert got["data"] == pytest.approx(7.7) and got["syn"] == pytest.approx(0.2)
    assert got["start"] == pytest.approx(7.7) and got["latest"] == pytest.approx(9.0)
    assert got["hs"] == pytest.approx([1.0, 8.9])
    assert offsets.quantiles([3.0, 1.0, 2.0, 10.0]) == (2.5, 10.0, 10.0)
