"""Host timing noise (docs/simulator.md "Host timing noise"): by default every simulated host answers
after a turnaround drawn from the one measured on the real kernel, so competing flows do not
phase-lock; `host_noise = "off"` keeps the ideal network."""

from __future__ import annotations

import pytest

from satcc import _native
from satcc import scenario as sc
from satcc.engines import sim
from satcc.errors import UserError

# Study 004's testbed as the emulator runs it (the fidelity suite's CUBIC pair): two senders whose access links run
# at the bottleneck rate, RTTs 2 ms and 128 ms, stock CUBIC, a 1-BDP drop-tail queue.
TESTBED = """
[scenario]
name = "study004-testbed"
duration = "{duration}"
seed = {seed}
{noise}

[[link]]
a = "pc1"
b = "dummynet"
rate = "{rate}"
delay = "0.5 ms"

[[link]]
a = "pc2"
b = "dummynet"
rate = "{rate}"
delay = "63.5 ms"

[[link]]
a = "dummynet"
b = "pc3"
rate = "{rate}"
delay = "0.5 ms"
queue = "1 BDP"

[[flow]]
name = "short-rtt"
from = "pc1"
to = "pc3"
rwnd = "16 MB"

[[flow]]
name = "long-rtt"
from = "pc2"
to = "pc3"
rwnd = "16 MB"
"""


def _goodputs(rate: str, seed: int, duration: str = "60 s", noise: str = "") -> tuple[float, float]:
    r = sim.run(sc.loads(TESTBED.format(rate=rate, seed=seed, duration=duration, noise=noise)))
    g = r.flows.set_index("name").goodput_bps
    return float(g["short-rtt"]), float(g["long-rtt"])


@pytest.mark.parametrize("rate", ["100 Mbit/s", "1 Gbit/s"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_short_rtt_flow_wins_on_study_004s_testbed_by_default(rate, seed):
    short, long = _goodputs(rate, seed)
    assert short > long, (short, long)


@pytest.mark.parametrize("side", ["sender", "receiver"])
def test_the_kernel_preset_is_a_measured_distribution(side):
    points = _native.host_noise_kernel()[side]
    assert points[0][0] == 0.0 and points[-1][0] == 1.0
    delays = [ns for _, ns in points]
    assert delays == sorted(delays)
    assert 1_000 <= delays[len(delays) // 2] <= 1_000_000  # a median of microseconds, not 0


def test_host_noise_resolves_to_quantile_points_or_nothing():
    def resolved(noise):
        return sc.resolve(
            sc.loads(TESTBED.format(rate="10 Mbit/s", seed=1, duration="1 s", noise=noise))
        )

    kernel = _native.host_noise_kernel()
    assert resolved("").get("host_noise_quantiles_ns") == {
        side: [[p, ns] for p, ns in kernel[side]] for side in ("sender", "receiver")
    }
    assert "host_noise_quantiles_ns" not in resolved('host_noise = "off"')
    uniform = [[0.0, 0], [1.0, 30_000]]
    assert resolved('host_noise = "30 us"')["host_noise_quantiles_ns"] == {
        "sender": uniform,
        "receiver": uniform,
    }


def test_a_bad_host_noise_names_the_key_and_what_was_expected():
    with pytest.raises(UserError) as e:
        sc.loads(
            TESTBED.format(rate="10 Mbit/s", seed=1, duration="1 s", noise='host_noise = "loud"'),
            source="x.toml",
        )
    assert "x.toml: scenario.host_noise: expected 'kernel', 'off' or a duration" in str(e.value)


def test_noise_changes_timing_but_runs_stay_deterministic():
    a = _goodputs("100 Mbit/s", 7, "5 s")
    b = _goodputs("100 Mbit/s", 7, "5 s")
    off = _goodputs("100 Mbit/s", 7, "5 s", 'host_noise = "off"')
    assert a == b
    assert a != off
