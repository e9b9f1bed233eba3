"""Private native module (Rust, crates/satcc-py). Use the public API in `satcc`, not this.

Contract between the Python scenario layer and the Rust simulator
-----------------------------------------------------------------
`run_sim(config, progress)` takes a *resolved* scenario: every unit already parsed to
integers (ns, bit/s, bytes), every default filled, `count` expanded into separate flows,
node names mapped to indices. Keys:

    config = {
      "name": str, "seed": int, "duration_ns": int, "bin_ns": int,
      "nodes": [str, ...],
      "links": [{
          "a": int, "b": int,                      # node indices
          "ab": DIR, "ba": DIR,                    # per direction
      }],
      "flows": [{
          "id": int, "src": int, "dst": int,       # node indices
          "cca": str, "cc": {str: float|bool|str|[[x, y], ...]},
          "start_ns": int, "size_bytes": int | None,
          "mss": int, "sack": bool, "timestamps": bool, "window_scaling": bool,
          "rwnd_bytes": int, "ecn": bool, "initial_cwnd": int,
          "pacing": "auto" | "on" | "off", "delayed_ack": bool, "min_rto_ns": int,
      }],
    }
    DIR = {"rate_bps": int, "delay_ns": int, "loss": float,
           "queue": {"packets": int} | {"bytes": int} | {"bdp": float},
           "ecn_threshold_pkts": int | None,
           "drop_packets": [int] (optional: 1-based ordinals of packets this direction drops)}

It returns
    {"flows": [{"id", "delivered_bytes", "goodput_bps", "sent_packets",
                "retransmitted_packets", "rtt_mean_ms", "rtt_p95_ms", "rtt_min_ms",
                "fct_s", "rto_count", "recovery_count"}],
     "flow_series": {column: list},   # flow_id, t_s, delivered_bytes, cwnd_pkts, ssthresh_pkts,
                                      # srtt_ms, inflight_pkts, pacing_rate_bps, retransmits
     "link_series": {column: list},   # link_id, dir, t_s, queue_pkts, queue_bytes, drops_queue,
                                      # drops_random, ecn_marks, tx_bytes, capacity_bps, delay_ms
     "stats": {"events": int, "packets": int, "sim_time_s": float}}
`progress`, if given, is called with the fraction of simulated time done (0..1), at most
a few times per second of wall time. Raises ValueError naming the bad key on bad input.
"""

from typing import Any, Callable

def run_sim(config: dict[str, Any], progress: Callable[[float], None] | None = None) -> dict[str, Any]: ...
def cc_names() -> list[str]: ...
def cc_info(name: str) -> dict[str, Any]:
    """{"name", "summary", "source", "params": [{"name", "default", "unit", "doc"}], "deviations": [str]}"""
def cc_check(name: str, params: dict[str, Any]) -> None:
    """Raises ValueError if `name` is unknown or `params` are invalid for it."""
def version() -> str: ...
