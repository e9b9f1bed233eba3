"""Field measurements: captures, iperf3 JSON and ping/nping logs as DataFrames and RunResults.

    from satcc.analyze import read_capture, read_iperf3, read_ping, seq_ack_graph
    cap = read_capture("dish.pcap", bin_s=0.1, packets=True, rtt=True)
    cap.flows, cap.series, cap.packets, cap.rtt

Map: `capture` (pcap/pcapng via the Rust analyzer in crates/satcc-pcap), `iperf3`, `ping`,
`inputs` (a file's kind, read as one of the three), `result` (all three into one RunResult and
the `--json` summary), `testbed` (namespaces + tbf + iperf3 + tcpdump, for tests and the
benchmark). The `satcc analyze` command is `satcc.commands.analyze`.
"""

import importlib
from typing import Any

# Names and the submodule that defines them, imported when first used: the capture path of
# `satcc analyze` needs neither pandas nor the iperf3/ping readers (pandas costs ~0.5 s).
_EXPORTS = {
    "CaptureAnalysis": "capture",
    "analyze_capture_bytes": "capture",
    "flag_mask": "capture",
    "read_capture": "capture",
    "seq_ack_graph": "capture",
    "Iperf3Result": "iperf3",
    "read_iperf3": "iperf3",
    "PingResult": "ping",
    "read_ping": "ping",
}

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


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
