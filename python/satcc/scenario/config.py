"""The engine config dict: `spec()` (the resolver's input), `resolve()` (satcc-core's resolver
on it, the form every engine runs), host noise's resolved form, the receive window asked of the
simulator's accounting, and the scenario hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from satcc import _native, linkmodels
from satcc.errors import UserError
from satcc.scenario.checks import _app, _rwnd, normalize_cc
from satcc.scenario.messages import ScenarioError
from satcc.scenario.schema import DEFAULT_QUEUE, MAX_SEED, Scenario, expand_flows
from satcc.units import parse_queue

# The receive buffer's accounting is the simulator's (crates/satcc-sim/src/tcp/receiver.rs),
# asked through the native module: the packet's `skb->truesize`, the full-segment
# `scaling_ratio`, the buffer that offers a fixed window, the largest window offered.
rx_truesize = _native.rx_truesize
scaling_ratio = _native.scaling_ratio
fixed_rcvbuf_bytes = _native.fixed_rcvbuf_bytes


def receive_window_bytes(flow: dict[str, Any]) -> int:
    """The largest window a resolved flow's receiver offers (deviation 2)."""
    return _native.receive_window_bytes(
        int(flow["rwnd_bytes"]),
        flow["mss"],
        flow["timestamps"],
        flow.get("rcvbuf_autotune", True),
        flow["window_scaling"],
    )


def _direction(rate: int, delay: int, loss: float, queue: dict, ecn: int | None) -> dict[str, Any]:
    return {
        "rate_bps": rate,
        "delay_ns": delay,
        "loss": loss,
        "queue": dict(queue),
        "ecn_threshold_pkts": ecn,
    }


def resolve(s: Scenario, seed_override: int | None = None) -> dict[str, Any]:
    """The resolved scenario every engine takes (`_native.pyi` RESOLVED): satcc-core's one
    resolver (`_native.resolve`) checks `spec(s)` as the simulator would and adds `routes`
    (paths, queue limits with "N BDP" sized)."""
    return resolved(s, seed_override).config


def resolved(s: Scenario, seed_override: int | None = None) -> _native.Resolved:
    """`resolve`'s result as the native module keeps it: `run_sim` runs it as it is (no second
    resolve), `.config` is the RESOLVED dictionary."""
    return _native_resolve(s, spec(s, seed_override))


def spec(s: Scenario, seed_override: int | None = None) -> dict[str, Any]:
    """The resolver's input (`_native.pyi` SCENARIO): integers in ns, bit/s, bytes; defaults
    filled; `count` expanded; nodes as indices."""
    seed = s.scenario.seed if seed_override is None else seed_override
    if not 0 <= seed <= MAX_SEED:
        raise UserError(f"--seed: expected an integer in 0..2^64-1, found {seed}")
    index = {name: i for i, name in enumerate(s.nodes)}
    links = []
    for link in s.links:
        if link.model is not None:
            ab, ba = linkmodels.resolve_link(
                link, Path(s.source).parent, parse_queue(DEFAULT_QUEUE), s.scenario.duration
            )
        else:
            ab = _direction(link.rate, link.delay, link.loss, link.queue, link.ecn_threshold)
            ba = _direction(
                link.rate if link.rate_ba is None else link.rate_ba,
                link.delay if link.delay_ba is None else link.delay_ba,
                link.loss if link.loss_ba is None else link.loss_ba,
                link.queue if link.queue_ba is None else link.queue_ba,
                link.ecn_threshold if link.ecn_threshold_ba is None else link.ecn_threshold_ba,
            )
        # Optional key: present only when set, so configs without jitter are unchanged.
        for d, j in (
            (ab, link.jitter),
            (ba, link.jitter if link.jitter_ba is None else link.jitter_ba),
        ):
            if j:
                d["jitter_ns"] = j
            if link.service == "tick":
                d["tick_ns"] = 1_000_000_000 // link.hz
        links.append({"a": index[link.a], "b": index[link.b], "ab": ab, "ba": ba})
    flows = []
    for origin in expand_flows(s):
        f = s.flows[origin.scenario_flow]
        flows.append(
            {
                "id": origin.id,
                "src": index[f.from_],
                "dst": index[f.to],
                "cca": f.cca,
                "cc": normalize_cc(f.cc),
                "start_ns": f.start + origin.copy * f.stagger,
                "size_bytes": f.size,
                "mss": f.mss,
                "sack": f.sack,
                "timestamps": f.timestamps,
                "window_scaling": f.window_scaling,
                "rwnd_bytes": _rwnd(f),
                "rcvbuf_autotune": f.rcvbuf_autotune,
                "ecn": f.ecn,
                "initial_cwnd": f.initial_cwnd,
                "pacing": f.pacing,
                "delayed_ack": f.delayed_ack,
                "min_rto_ns": f.min_rto,
                "sndbuf_bytes": f.sndbuf,
                "metrics_save": f.metrics_save,
                **linkmodels.flow_extras(f),
            }
        )
        app, _ = _app(f)
        if app is not None:  # absent = bulk, so existing scenarios keep their hash
            flows[-1]["app"] = app
        if not f.slow_start_after_idle:  # absent = on, Linux's default
            flows[-1]["slow_start_after_idle"] = False
        if f.nodelay:  # absent = Nagle on, Linux's default
            flows[-1]["nodelay"] = True
    config = {
        "name": s.name,
        "seed": seed,
        "duration_ns": s.scenario.duration,
        "bin_ns": s.scenario.bin,
        "nodes": s.nodes,
        "links": links,
        "flows": flows,
    }
    noise = host_noise_quantiles(s.scenario.host_noise)
    if noise is not None:  # absent = hosts answer instantly
        config["host_noise_quantiles_ns"] = noise
    if s.scenario.cc_state:  # absent = not recorded
        config["cc_state"] = True
    if (sa := s.scenario.seqack) is not None:  # absent = no trace
        config["seqack"] = {
            "flow": sa.flow,
            "from_ns": sa.from_,
            "to_ns": s.scenario.duration if sa.to is None else sa.to,
            "max_rows": sa.max_rows,
        }
    return config


def host_noise_quantiles(value: str | int) -> dict[str, list[list[float | int]]] | str | None:
    """`host_noise` as the resolver takes it: {"sender": [[probability, ns], ...], "receiver":
    [...]} (quantile points of each turnaround), "kernel" (the measured turnarounds: the
    resolver writes their points, satcc-core `hostnoise`) or None."""
    if value == "off" or value == 0:
        return None
    if value == "kernel":
        return "kernel"
    uniform = [[0.0, 0], [1.0, int(value)]]
    return {"sender": uniform, "receiver": uniform}


def _native_resolve(s: Scenario, config: dict[str, Any]) -> _native.Resolved:
    """satcc-core's resolver on the scenario layer's dictionary; its refusals become scenario
    errors naming the key (`satcc check` and every engine accept exactly what `satcc sim`
    runs: one validation)."""
    try:
        return _native.resolve(config)
    except (ValueError, OverflowError, KeyError) as e:
        key, sep, why = str(e).strip("'\"").partition(": ")
        issue = (
            (key, f"expected a value the simulator accepts, found one it refuses: {why}")
            if sep and " " not in key
            else ("", f"the simulator refuses the scenario: {e}")
        )
        raise ScenarioError(s.source, [issue]) from None


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, ASCII, no NaN: the same object always gives the same text."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


_PATH_KEYS = ("mahimahi_path", "delay_csv_path")  # files that count by their digests


def scenario_hash(config: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a resolved config, without its seed (replicates of a
    scenario share the hash; the seed is recorded beside it) and without its routes (derived
    from the rest). A trace file counts by its contents (`opportunities_digest`), not by
    where it lies (`mahimahi_path`), and so does a delay CSV (`series_digest`,
    `delay_csv_path`)."""
    unseeded = {k: v for k, v in config.items() if k not in ("seed", "routes")}
    if "links" in unseeded:
        unseeded["links"] = [
            {
                k: (
                    {**d, "model": {m: x for m, x in d["model"].items() if m not in _PATH_KEYS}}
                    if isinstance(d, dict) and isinstance(d.get("model"), dict)
                    else d
                )
                for k, d in link.items()
            }
            for link in unseeded["links"]
        ]
    return hashlib.sha256(canonical_json(unseeded).encode("ascii")).hexdigest()
