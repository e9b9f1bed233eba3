"""Test data and markers shared by several test modules."""

import pytest

from satcc import _native
from satcc.results import ENGINE_FLOW_SERIES_COLUMNS, ENGINE_LINK_SERIES_COLUMNS

# A small valid scenario using only "reno", which every build registers.
MINIMAL = """
[scenario]
name = "tiny"
duration = "2 s"

[[link]]
a = "s"
b = "d"
rate = "10 Mbit/s"
delay = "10 ms"

[[flow]]
from = "s"
to = "d"
cca = "reno"
"""


requires_sim = pytest.mark.skipif(
    not hasattr(_native, "run_sim"),
    reason="this build of satcc._native has no run_sim (rebuild with `make build`)",
)


def engine_output(config: dict) -> dict:
    """Data in the shape `_native.run_sim` returns, made up from the config with simple
    arithmetic: for testing the result writer/loader/plotter, not a simulation of anything."""
    import math

    nbins = math.ceil(config["duration_ns"] / config["bin_ns"])
    bin_s = config["bin_ns"] / 1e9
    flows, fs = (
        [],
        {k: [] for k in ENGINE_FLOW_SERIES_COLUMNS},
    )
    for f in config["flows"]:
        i = f["id"]
        per_bin = [1000 * (i + 1) * (k % 4) for k in range(nbins)]
        for k in range(nbins):
            fs["flow_id"].append(i)
            fs["t_s"].append(k * bin_s)
            fs["delivered_bytes"].append(per_bin[k])
            fs["cwnd_pkts"].append(10 + k + i)
            fs["ssthresh_pkts"].append(2147483647 if k < 3 else 20)
            fs["srtt_ms"].append(float("nan") if k == 0 else 20.0 + k)
            fs["inflight_pkts"].append(5 + k)
            fs["pacing_rate_bps"].append(1e6 * (k + 1))
            fs["retransmits"].append(k % 2)
        sent = 0 if i == 2 else 100 * (i + 1)
        flows.append(
            {
                "id": i,
                "delivered_bytes": sum(per_bin),
                "goodput_bps": sum(per_bin) * 8 / (config["duration_ns"] / 1e9),
                "sent_packets": sent,
                "retransmitted_packets": 3 if sent else 0,
                "rtt_mean_ms": 21.5 + i,
                "rtt_p95_ms": 30.25,
                "rtt_min_ms": None if i == 2 else 20.0,
                "fct_s": 1.25 if f["size_bytes"] else None,
                "rto_count": i,
                "recovery_count": 2,
            }
        )
    ls = {k: [] for k in ENGINE_LINK_SERIES_COLUMNS}
    for li, link in enumerate(config["links"]):
        for d in ("ab", "ba"):
            for k in range(nbins):
                ls["link_id"].append(li)
                ls["dir"].append(d)
                ls["t_s"].append(k * bin_s)
                ls["queue_pkts"].append(k)
                ls["queue_bytes"].append(1500 * k)
                ls["drops_queue"].append(k % 3)
                ls["drops_random"].append(k % 5)
                ls["ecn_marks"].append(0)
                ls["tx_bytes"].append(10_000 * k)
                ls["capacity_bps"].append(link[d]["rate_bps"])
                ls["delay_ms"].append(link[d]["delay_ns"] / 1e6)
    return {
        "flows": flows,
        "flow_series": fs,
        "link_series": ls,
        "stats": {"events": 1234, "packets": 567, "sim_time_s": config["duration_ns"] / 1e9},
    }
