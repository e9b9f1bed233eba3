"""Field measurements: captures, iperf3 JSON and ping/nping logs as DataFrames and RunResults.

    from satcc.analyze import read_capture, read_iperf3, read_ping, seq_ack_graph
    cap = read_capture("dish.pcap", bin_s=0.1, packets=True, rtt=True)
    cap.flows, cap.series, cap.packets, cap.rtt

Map: `capture` (pcap/pcapng via the Rust analyzer in crates/satcc-pcap), `iperf3`, `ping`,
`result` (all three into one RunResult and the `--json` summary), `cli` (`satcc analyze`),
`testbed` (namespaces + tbf + iperf3 + tcpdump, for tests and the benchmark).
"""

import sys
import types

from satcc.analyze.capture import (
    CaptureAnalysis,
    analyze_capture_bytes,
    flag_mask,
    read_capture,
    seq_ack_graph,
)
from satcc.analyze.iperf3 import Iperf3Result, read_iperf3
from satcc.analyze.ping import PingResult, read_ping

__all__ = [
    "CaptureAnalysis",
    "Iperf3Result",
    "PingResult",
    "analyze_capture_bytes",
    "flag_mask",
    "read_capture",
    "read_iperf3",
    "read_ping",
    "seq_ack_graph",
]


class _CallableModule(types.ModuleType):
    """`satcc.analyze(...)` is the API function (satcc.api.analyze) even after this package was
    imported (importing `satcc.analyze` binds the package to that name on `satcc`)."""

    def __call__(self, *files, **options):
        from satcc.api import analyze

        return analyze(*files, **options)


sys.modules[__name__].__class__ = _CallableModule
