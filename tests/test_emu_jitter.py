"""Link jitter in the emulator: satcc-linkd delays each frame by a uniform draw from
[0, jitter), as the simulator does, so a scenario with jitter runs in both engines alike."""

import os
import shutil

import pytest

from satcc import scenario as sc
from satcc.engines import emu, sim

# 1 Mbit/s of 1470-byte datagrams: 12 ms apart, far more than the jitter, so the FIFO wire
# rarely bunches them and RFC 3550's estimator sees |D| of two independent U[0, J) draws,
# whose mean is J/3 (J = 4 ms -> 1.33 ms).
SCENARIO = """
[scenario]
name = "jit"
duration = "6 s"

[[link]]
a = "s"
b = "d"
rate = "10 Mbit/s"
delay = "10 ms"
jitter = "{jitter}"

[[flow]]
from = "s"
to = "d"
proto = "udp"
rate = "1 Mbit/s"
"""

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or any(shutil.which(t) is None for t in ("ip", "iperf3", "ethtool")),
    reason="needs root with iproute2, iperf3 and ethtool",
)


def _jitter_ms(engine, jitter, tmp_path):
    s = sc.loads(SCENARIO.format(jitter=jitter))
    if engine is emu:
        r = emu.run(s, out_dir=tmp_path / f"emu-{jitter}".replace(" ", ""), capture=False)
    else:
        r = sim.run(s)
    return float(r.flows.iloc[0].jitter_ms)


# RFC 3550's estimator is an average with gain 1/16 (about 30 packets), so its value at the
# end of a run scatters around J/3 by about 0.2 ms.
LOW_MS, HIGH_MS = 0.8, 1.9


def test_the_simulator_reports_a_third_of_the_link_jitter_for_spaced_datagrams():
    assert LOW_MS <= _jitter_ms(sim, "4 ms", None) <= HIGH_MS
    assert _jitter_ms(sim, "0 ms", None) < 0.05


@needs_root
def test_linkd_applies_link_jitter_as_the_simulator_does(tmp_path):
    with_jitter = _jitter_ms(emu, "4 ms", tmp_path)
    without = _jitter_ms(emu, "0 ms", tmp_path)
    # the kernel and iperf3 add their own few tens of microseconds
    assert without < 0.3, without
    assert LOW_MS <= with_jitter <= HIGH_MS, with_jitter
