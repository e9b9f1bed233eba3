"""The emulator's `metrics_save` key: Linux's per-destination metrics cache (study 003).
Root only; two sequential 2 MB transfers over a shallow-buffer 20 Mbit/s, 50 ms path, a few
seconds each."""

from __future__ import annotations

import os
import re
import shutil
import textwrap

import pytest

from satcc import scenario as sc
from satcc.emu import host, topology
from satcc.emu.runner import Run

needs_root = pytest.mark.skipif(
    os.geteuid() != 0
    or any(shutil.which(t) is None for t in ("ip", "iperf3", "ethtool", "tcpdump")),
    reason="needs root with iproute2, iperf3, ethtool and tcpdump",
)
SECOND_START_S = 4.0  # the first 2 MB take about 2.4 s through the 10-packet queue
# The second transfer's socket is sampled from its SYN on (satcc.emu.xfer has no control
# connection before it, as iperf3 had), and the cache is applied once it is established: its
# state is read from the first sample that shows an RTT (the connection is established), which
# comes before its first loss (slow start needs several RTTs to fill the 10-packet queue).


def two_transfers(metrics_save: bool) -> dict:
    flow = """
        [[flow]]
        from = "client"
        to = "server"
        size = "2 MB"
        metrics_save = {save}
        start = "{start}"
    """
    text = textwrap.dedent("""
        [scenario]
        name = "emu-metrics"
        duration = "5.5 s"

        [[link]]
        a = "client"
        b = "server"
        rate = "20 Mbit/s"
        delay = "25 ms"
        queue = "10 pkt"
    """) + "".join(
        textwrap.dedent(flow.format(save=str(metrics_save).lower(), start=start))
        for start in ("0 s", f"{SECOND_START_S} s")
    )
    return sc.resolve(sc.loads(text))


def test_metrics_save_sets_the_senders_cache_sysctls_only():
    for save, want in ((True, "0"), (False, "1")):
        p = topology.plan(two_transfers(save), "t0", subnet_octet=64)
        assert p.sysctls[0]["net.ipv4.tcp_no_metrics_save"] == want
        assert p.sysctls[1]["net.ipv4.tcp_no_metrics_save"] == "1"  # the receiver's
        assert p.sysctls[0].get("net.ipv4.tcp_no_ssthresh_metrics_save", "1") == want


class _SnapshotRun(Run):
    """Records the sender's `ip tcp_metrics show` at the last sample before the second transfer
    starts (its sender is up from the run's start and connects at its `start` on its own)."""

    cache_before_second: str | None = None

    def _sample(self, k, spaces):
        super()._sample(k, spaces)
        t_s = (k + 1) * self.config["bin_ns"] / 1e9
        if SECOND_START_S - 1.0 <= t_s < SECOND_START_S:  # the first transfer is long done
            assert self.plan is not None
            p = host.run_cmd("ip", "-n", self.plan.namespaces[0], "tcp_metrics", "show")
            self.cache_before_second = p.stdout


def _run(save: bool, tmp_path):
    run = _SnapshotRun(two_transfers(save), tmp_path / f"emu-{save}", capture=False)
    raw = run.execute()
    fs = raw["flow_series"]
    second = [
        s
        for fid, t, s, rtt in zip(
            fs["flow_id"], fs["t_s"], fs["ssthresh_pkts"], fs["srtt_ms"], strict=True
        )
        if fid == 1 and t >= SECOND_START_S and rtt is not None
    ]
    return run.cache_before_second, second, raw


@pytest.mark.kernel
@needs_root
def test_with_metrics_save_the_second_transfer_starts_from_the_cache(tmp_path):
    cache, second, _ = _run(True, tmp_path)
    print(f"cache: {cache!r}; second flow's ssthresh samples: {second[:5]}")
    # the first transfer left an entry for the destination (RTT, cwnd at least)
    assert cache and re.search(r"\brtt \d+us", cache), cache
    assert second
    # tcp_update_metrics creates an ssthresh entry only when the connection closes in
    # congestion avoidance (cwnd >= ssthresh, Open); an iperf3 transfer that ends
    # application-limited (cwnd validation shrank cwnd below ssthresh) leaves none, and the
    # next connection then starts from infinite ssthresh, as without the cache.
    m = re.search(r"\bssthresh (\d+)", cache)
    assert second[0] == (int(m.group(1)) if m else None)


@pytest.mark.kernel
@needs_root
def test_without_metrics_save_nothing_is_cached_and_ssthresh_starts_infinite(tmp_path):
    cache, second, _ = _run(False, tmp_path)
    assert cache is not None and "ssthresh" not in cache
    assert second and second[0] is None
