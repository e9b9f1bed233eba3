"""Link jitter in the emulator: satcc-linkd delays each frame by a uniform draw from
[0, jitter), as the simulator does, so a scenario with jitter runs in both engines alike."""

import os
import shutil

import pytest

from satcc import scenario as sc
from satcc.analyze import read_capture
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


# satcc-linkd's own lateness (frames sent after their due time), p99, above which the host's
# timing noise is as large as what the test measures: iperf3's jitter then reads the host, not
# the link (a VM measured here at 0.8-2.7 ms p99 with the same binary that gave 66 us on a
# quiet one, the jitter without link jitter 0.1-1.2 ms run to run).
NOISY_HOST_P99_US = 300
# RFC 3550's jitter with no link jitter on a quiet host, measured here: 0.004-0.1 ms
FLOOR_MS = 0.3


def _emu_run(jitter, tmp_path):
    # captured: the emulator's jitter is then RFC 3550's on the wire (the receiver's capture
    # against iperf3's send stamps); iperf3's own figure adds its server's scheduling (seen here
    # under load: 2.2 ms with no link jitter, 0.004 ms on the wire)
    s = sc.loads(SCENARIO.format(jitter=jitter))
    return emu.run(s, out_dir=tmp_path / f"emu-{jitter}".replace(" ", ""), capture=True)


def _jitter_ms(engine, jitter, tmp_path):
    r = (
        _emu_run(jitter, tmp_path)
        if engine is emu
        else sim.run(sc.loads(SCENARIO.format(jitter=jitter)))
    )
    return float(r.flows.iloc[0].jitter_ms)


# RFC 3550's estimator is an average with gain 1/16 (about 30 packets), so its value at the
# end of a run scatters around J/3 by about 0.2 ms.
LOW_MS, HIGH_MS = 0.8, 1.9


def test_the_simulator_reports_a_third_of_the_link_jitter_for_spaced_datagrams():
    assert LOW_MS <= _jitter_ms(sim, "4 ms", None) <= HIGH_MS
    assert _jitter_ms(sim, "0 ms", None) < 0.05


@pytest.mark.kernel
@needs_root
def test_linkd_applies_link_jitter_as_the_simulator_does(tmp_path):
    runs = [_emu_run(j, tmp_path) for j in ("4 ms", "0 ms")]
    # the figure reported is the receiver's capture's (RFC 3550 on the wire), not iperf3's own
    # (which adds its server's scheduling): read the kept capture back and compare
    for j, r in zip(("4 ms", "0 ms"), runs):
        raw = tmp_path / f"emu-{j}".replace(" ", "") / emu.RAW_DIR
        (cap,) = raw.glob("capture-*-d.pcap")  # the destination's
        fl = read_capture(cap).flows
        (wire,) = fl[(fl["proto"] == "udp") & fl["udp_iperf"]]["udp_jitter_ms"]
        assert float(r.flows.iloc[0].jitter_ms) == pytest.approx(wire, abs=1e-9), (j, wire)
    late = max(r.meta["stats"].get("linkd_lateness_p99_us") or 0 for r in runs)
    if late > NOISY_HOST_P99_US:
        pytest.skip(f"host timing too noisy to judge 0.3 ms: satcc-linkd's lateness p99 {late} us")
    with_jitter, without = (float(r.flows.iloc[0].jitter_ms) for r in runs)
    # what remains without link jitter: the sender's path from iperf3's stamp to the wire and
    # satcc-linkd's own lateness, tens of microseconds on a quiet host. The sender's part is not
    # measured apart, so the host's timing noise measured in the same runs (satcc-linkd's
    # lateness p99) is allowed on top: a CI machine read 0.308 ms here with the lateness gate
    # passed. A link that applied even 1 ms of jitter when asked for none reads ~0.33 ms more.
    assert without < FLOOR_MS + late / 1000, (without, late)
    assert LOW_MS <= with_jitter <= HIGH_MS, with_jitter
