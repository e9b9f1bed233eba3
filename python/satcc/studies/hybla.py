"""Study 002's validation of the TCP Hybla model, with satcc's simulator in ns-2's place.

The study (shared/papers/002_47f5289dd50a2f26.txt §4, Tables 1-3, Fig. 3-9) compares its
Hybla model (satcc.models.hybla) with ns-2 and dummynet over one path, sweeping the random loss
rate, for unlimited transfers ("steady state", 1000 s ns-2 runs) and transfers of 10, 50 and
100 MB, 10 runs each, and tabulates max (model - measured) / model for p <= 1e-4 (Table 3).
`satcc validate hybla` runs the same design through satcc's simulator and prints that table
beside the study's own values, plots the equivalents of Fig. 3-9 and writes every point.

    design ──► runs (p x data x seed) ──► simulator (process pool) ──► runs.csv
                                                         │
    hybla.model(p, R, W_m, size) ─────────────────────── ┴──► points.csv ──► Table 3, Fig. 3-9

Design (Table 1 and §4; `Design`)
| item          | value                      | source / reading                                        |
|---------------|----------------------------|---------------------------------------------------------|
| packet        | mss = 1000 B of payload    | Table 1 "Packet Size 1,000 bytes", read as ns-2's packetSize_ (TCP payload; ns-2 adds 40 B of headers). In satcc the IP packet is 1000 + 40 + 12 (timestamps) = 1052 B; the model counts 1000-byte segments and the simulator's goodput counts payload, so both sides use 1000 B |
| W_m           | rwnd = 550 x 1000 B, rcvbuf_autotune = false; `sender_clamp`: cwnd_clamp = 550 and an 8 MiB fixed rwnd | Table 1 "W_m 550 packets". The study capped the sender's window (ns-2's window_, a rebuilt kernel, §4): `satcc reproduce 002` sets `sender_clamp` (in the emulator too: compiled into the BPF Hybla's snd_cwnd_clamp); `satcc validate hybla` keeps the receive window |
| buffer        | 1000 packets, both ways    | Table 1                                                 |
| RTT           | 275 ms one way, each way   | §4 RTT = 550 ms (plus 0.9 ms of serialisation in satcc) |
| rate          | 10 Mbit/s both ways        | not in the text (Fig. 1 is an image): the floor, so that W_m/R = 8.0 Mbit/s of payload (8.4 on the wire) is not limited by the link; `satcc reproduce 002` sweeps 10, 100 and 1000 Mbit/s (study002.RATES_BPS; --quick 10 and 1000) |
| loss          | p on the data direction only | "link errors"; ACKs are not lost                      |
| cca           | hybla, rtt0 = 25 ms        | rho = 22                                                |
| T_0           | 1 s                        | §4; the simulator's initial RTO is Linux's 1 s          |
| data          | steady state, 10, 50, 100 MB (MB = 10^6 B) | §4                                      |
| steady run    | 1000 s (quick: 200 s)      | Table 1 "Simulation Time 1,000 sec"                     |
| transfer run  | until done: max(3 T_model, T_model + 60 s) | so that every transfer completes        |
| losses        | 1e-6 ... 1e-2, 1-2-5 steps (quick: 1e-6, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2) | §4, Fig. 3-9 |
| seeds         | 10 (quick: 1)              | §4 "10 measurements", averaged                          |
| delayed ACKs  | on (Linux default)         | the model assumes one ACK per segment; `--no-delayed-ack` runs that instead |

Measured: steady state = the flow's goodput over the whole run (start-up included, as a
1000 s ns-2 average); transfers = size x 8 / fct and fct (SYN to the last byte at the
receiver, which is what eq. 39 computes). Both are averaged over seeds per loss rate; the
difference is (model - sim) / model x 100, the study's sign (positive: the simulator is slower).

Model side: hybla.model with the study's inputs (R = 550 ms, rho = 22, W_m = 550, T_0 = 1 s,
T_s = 3 s, 1000 B), not the model engine's path-derived ones (which would use R = 550.9 ms,
T_0 = R + 200 ms and T_s = 1 s: 0.2 % apart here).

Not implemented: the dummynet column (that is the emu engine's job), the study's exact loss
grid (the figures are images; 1-2-5 steps are used).
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from satcc import registry, timings
from satcc.models import hybla
from satcc.results import SEQACK_FILE

PAYLOAD_BYTES = 1000  # Table 1 packet size, as TCP payload (mss)
WMAX_PKTS = 550  # Table 1 W_m
# With W_m as the sender's cap, the receive window stays out of the way (ns-2's sink has none)
SENDER_CLAMP_RWND = "8 MiB"
BUFFER_PKTS = 1000  # Table 1 buffer size
RTT_S = 0.550  # §4: RTT = 550 ms
ONE_WAY_DELAY = "275 ms"  # RTT_S / 2 each way
RTT0_S = 0.025  # tcp_hybla.c rtt0; study §3 "RTT0 = 25 ms" -> rho = 22
T0_S = 1.0  # §4: T_0 = 1 s
SYN_TIMEOUT_S = 3.0  # study eq. 22: T_s = 3 s
RATE_BPS = 10_000_000  # not given by the study; > W_m/R on the wire (8.4); study002 sweeps it
SIZES_BYTES = (10_000_000, 50_000_000, 100_000_000)  # §4: 10, 50, 100 MB
STEADY_S_FULL = 1000.0  # Table 1 simulation time
STEADY_S_QUICK = 200.0
SEEDS_FULL = 10  # §4: 10 runs per point
SEEDS_QUICK = 1
LOSSES_FULL = (1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2)
LOSSES_QUICK = (1e-6, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2)
LOW_LOSS_MAX = 1e-4  # Table 3: "p <= 0.0001"
HIGH_LOSS_MIN = 5e-3  # §4: the high-loss figures ("0.005 and above" for the steady state)
TRANSFER_TIME_FACTOR = 3.0  # transfer runs last max(3 T_model, T_model + 60 s)
TRANSFER_SLACK_S = 60.0
BIN = "1 s"  # the series are not used; coarse bins keep the runs light
MODEL_CURVE_POINTS = 161  # model curves on the plots: log-spaced p over the sweep
STEADY = "steady"
# satcc-linkd's lateness as the emulator's run records it (the summary's `stats`), kept per run
# in runs.csv / validation.json (satcc.studies.reproduce.linkd_lateness reads them)
LATENESS_KEYS = ("linkd_lateness_p99_us", "linkd_lateness_max_us", "late_samples")
# `Design.trace`: the simulator records each run's sender sequence/ACK trace (seqack) and the
# row keeps what it measures (`trace_measures`, TRACE_KEYS); the trace itself is not kept. A
# steady run is traced over its first TRACE_STEADY_S (its start-up and tens to hundreds of
# loss cycles at p >= 1e-4; a 1000 s run traced whole costs 3 times its simulation), a
# transfer over its first TRACE_TRANSFER_S (its start-up; its recoveries are the summary's).
TRACE_STEADY_S = 100.0
TRACE_TRANSFER_S = 5.0  # a transfer's start-up (W_m acknowledged by 3.1 s at most here)
TRACE_MAX_ROWS = 2_000_000  # the simulator's largest seqack (a 200 s window holds ~0.6 M)
TRACE_KEYS = (
    "trace_s",  # the traced window: [0, trace_s) of the run (s)
    "trace_dropped_rows",  # rows past TRACE_MAX_ROWS (then the window ends at the last row)
    "first_round_segments",  # data segments sent before the first ACK arrived
    "first_ack_s",  # the first ACK's arrival at the sender (s from the SYN)
    "wm_acked_s",  # the cumulative ACK first covers W_m segments (s from the SYN)
    "episodes",  # loss-recovery episodes: a retransmission .. the ACK of the recovery point
    "recovery_s",  # their total duration (s)
    "recovery_segments",  # data segments sent during them (new and retransmitted)
    "retransmitted_segments",  # retransmissions in the window
    "cycles",  # complete loss cycles: from one episode's start to the next (episodes - 1)
    "cycle_s",  # their total duration (s)
    "cycle_segments",  # data segments sent in them
    "cycle_recovery_s",  # the recovery time inside them (each cycle opens with its episode)
    "cycle_recovery_segments",  # segments sent in that recovery
    "cycle_lost",  # segments retransmitted in them
)

# Table 3 of the study, max (model - measured)/model in % for p <= 1e-4: (ns-2, dummynet).
PAPER_TABLE3 = {
    STEADY: {"throughput": (0.33, 2.70), "time": (None, None)},
    "10MB": {"throughput": (10.12, 8.81), "time": (11.26, 9.98)},
    "50MB": {"throughput": (2.43, 2.97), "time": (2.49, 3.01)},
    "100MB": {"throughput": (1.30, 1.54), "time": (1.31, 1.56)},
}
# §4 text: the largest differences at high loss, (ns-2, dummynet), and the range they cover.
PAPER_HIGH_LOSS = {
    STEADY: "throughput ~21 / ~19 (p >= 0.005)",
    "10MB": "throughput ~16 / ~16, time ~19 / ~19 (p >= 0.0002)",
    "50MB": "throughput ~21 / ~18, time ~26 / ~22 (p >= 0.002 / 0.001)",
    "100MB": "throughput ~22 / ~20, time ~28 / ~24 (p >= 0.0005)",
}
FIGURES = (  # (study figure, data kind, quantity)
    (3, STEADY, "throughput"),
    (4, "10MB", "throughput"),
    (5, "10MB", "time"),
    (6, "50MB", "throughput"),
    (7, "50MB", "time"),
    (8, "100MB", "throughput"),
    (9, "100MB", "time"),
)


@dataclass(frozen=True)
class Design:
    """What to run; `full()` is the study's design, `quick()` a reduced grid."""

    losses: tuple[float, ...]
    sizes_bytes: tuple[int, ...]
    seeds: int
    steady_duration_s: float
    rate_bps: int = RATE_BPS
    delayed_ack: bool = True
    steady: bool = True
    sender_clamp: bool = False  # W_m as a sender cwnd cap (cwnd_clamp), not a receive window
    engine: str = "sim"  # "emu": the real kernel's Hybla (BPF) over satcc-linkd, real time
    transfer_factor: float = TRANSFER_TIME_FACTOR
    transfer_slack_s: float = TRANSFER_SLACK_S
    trace: bool = False  # the simulator's runs keep TRACE_KEYS (their sender trace measured)
    # with `trace`, the steady runs traced too (their loss cycles); off, the transfers only
    # (their start-up): study 002's swept link rates print the steady runs' mechanism at the
    # headline rate alone, and a steady run's trace costs half its simulation again
    trace_steady: bool = True

    @classmethod
    def full(cls, **changes: Any) -> Design:
        return cls(LOSSES_FULL, SIZES_BYTES, SEEDS_FULL, STEADY_S_FULL).replace(**changes)

    @classmethod
    def quick(cls, **changes: Any) -> Design:
        return cls(LOSSES_QUICK, SIZES_BYTES, SEEDS_QUICK, STEADY_S_QUICK).replace(**changes)

    @classmethod
    def emulator(cls, quick: bool, **changes: Any) -> Design:
        """The dummynet column's design in the emulator (real time, so small): quick, steady
        state (60 s) and 10 MB at p = 1e-5 and 1e-4, one seed (about 4 minutes); full, steady
        state (100 s, the study's dummynet runs) and 10/50/100 MB at p = 1e-6, 1e-5, 1e-4, three
        seeds (about 45 minutes). Transfer runs last 1.5 x the model's time + 10 s."""
        if quick:
            base = cls((1e-5, 1e-4), (10_000_000,), 1, 60.0)
        else:
            base = cls((1e-6, 1e-5, 1e-4), SIZES_BYTES, 3, 100.0)
        return base.replace(engine="emu", transfer_factor=1.5, transfer_slack_s=10.0, **changes)

    def replace(self, **changes: Any) -> Design:
        values = asdict(self)
        values.update({k: v for k, v in changes.items() if v is not None})
        values["losses"] = tuple(values["losses"])
        values["sizes_bytes"] = tuple(values["sizes_bytes"])
        return Design(**values)

    def kinds(self) -> list[tuple[str, int | None]]:
        out: list[tuple[str, int | None]] = [(STEADY, None)] if self.steady else []
        return out + [(kind_label(s), s) for s in self.sizes_bytes]


def kind_label(size_bytes: int | None) -> str:
    """ "steady" or "10MB" (MB = 10^6 B)."""
    if size_bytes is None:
        return STEADY
    mb = size_bytes / 1e6
    return f"{mb:g}MB"


# -- the model side ------------------------------------------------------------------------


def model(p: Any, size_bytes: int | None):
    """The study's model with the study's inputs (module docstring)."""
    return hybla.model(
        p,
        RTT_S,
        wmax_pkts=WMAX_PKTS,
        size_bytes=size_bytes,
        rtt0_s=RTT0_S,
        t0_s=T0_S,
        packet_bytes=PAYLOAD_BYTES,
        syn_timeout_s=SYN_TIMEOUT_S,
    )


# -- the simulator side --------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    kind: str
    size_bytes: int | None
    p: float
    seed: int
    duration_s: int
    rate_bps: int
    delayed_ack: bool
    engine: str = "sim"
    sender_clamp: bool = False
    trace: bool = False  # the simulator records the sender's trace (seqack): TRACE_KEYS


def scenario_dict(spec: RunSpec) -> dict[str, Any]:
    """The scenario of one run (the design table in TOML terms)."""
    flow: dict[str, Any] = {
        "from": "sender",
        "to": "receiver",
        "cca": "hybla",
        "mss": PAYLOAD_BYTES,
        "rwnd": SENDER_CLAMP_RWND if spec.sender_clamp else f"{WMAX_PKTS * PAYLOAD_BYTES} B",
        "rcvbuf_autotune": False,
        "delayed_ack": spec.delayed_ack,
        "cc": {"rtt0": RTT0_S * 1e3},
    }
    if spec.sender_clamp:
        flow["cwnd_clamp"] = WMAX_PKTS
    if spec.size_bytes is not None:
        flow["size"] = f"{spec.size_bytes} B"
    scenario: dict[str, Any] = {
        "name": f"hybla-{spec.kind}-p{spec.p:g}-s{spec.seed}",
        "duration": f"{spec.duration_s} s",
        "seed": spec.seed,
        "bin": BIN,
        "engine": spec.engine,
    }
    if spec.trace and not registry.get(spec.engine).real_time:
        scenario["seqack"] = {"flow": 0, "to": f"{_trace_end_s(spec):g} s"}
        scenario["seqack"]["max_rows"] = TRACE_MAX_ROWS
    return {
        "scenario": scenario,
        "link": [
            {
                "a": "sender",
                "b": "receiver",
                "rate": f"{spec.rate_bps} bit/s",
                "delay": ONE_WAY_DELAY,
                "loss": spec.p,
                "loss_ba": 0.0,
                "queue": f"{BUFFER_PKTS} pkt",
            }
        ],
        "flow": [flow],
    }


def simulate(spec: RunSpec) -> dict[str, Any]:
    """One simulator run -> one row of runs.csv (a process-pool worker)."""
    from satcc.scenario import from_dict

    s = from_dict(scenario_dict(spec), source=f"<{spec.kind} p={spec.p:g}>")
    result = registry.run(spec.engine, s)
    f = result.flows_table.to_pylist()[0]
    finished = spec.size_bytes is None or f["fct_s"] is not None
    row = {
        "kind": spec.kind,
        "size_bytes": spec.size_bytes,
        "p": spec.p,
        "seed": spec.seed,
        "duration_s": spec.duration_s,
        "finished": finished,
        "sim_throughput_bps": f["goodput_bps"],
        "sim_time_s": f["fct_s"],
        "delivered_bytes": f["delivered_bytes"],
        "retransmission_rate": f["retransmission_rate"],
        "rto_count": f["rto_count"],
        "recovery_count": f["recovery_count"],
        "rtt_mean_ms": f["rtt_mean_ms"],
    }
    if registry.get(spec.engine).real_time:
        # satcc-linkd's lateness, under the names of a campaign run's summary `stats` (this
        # design keeps no run directories); null when the run did not record it. A
        # simulator's row is left as it was.
        stats = result.meta.get("stats") or {}
        row.update({k: stats.get(k) for k in LATENESS_KEYS})
        # The sender's largest cwnd (packets, as `ss` sampled it once per bin): at most W_m
        # when W_m caps the sender (`sender_clamp`), whatever the receive window offers.
        cwnd = result.flow_series_table.column("cwnd_pkts").to_pylist()
        row["cwnd_max_pkts"] = max((c for c in cwnd if c is not None), default=None)
    elif spec.trace:
        trace = result.extras.get(SEQACK_FILE)
        end = _trace_end_s(spec)
        dropped = int((result.meta.get("seqack") or {}).get("dropped_rows") or 0)
        row.update(trace_measures(trace.columns if trace is not None else {}, end, dropped))
    return row


def _trace_end_s(spec: RunSpec) -> float:
    """The end of a run's traced window: a steady run's first TRACE_STEADY_S, a transfer's
    first TRACE_TRANSFER_S."""
    window = TRACE_STEADY_S if spec.size_bytes is None else TRACE_TRANSFER_S
    return float(min(spec.duration_s, window))


def trace_measures(
    columns: dict[str, list[Any]], end_s: float, dropped_rows: int = 0
) -> dict[str, Any]:
    """What one run's sender trace (the seqack columns) shows, for the model's terms:

    - the start-up (eq. 22, 29-30): how many segments the first round carried, when the first
      ACK came back, and when the cumulative ACK first covered W_m segments (the model's d_1,
      eq. 29, sent in r_1 rounds, eq. 30);
    - loss recovery: an episode opens with a retransmission while none is open, its recovery
      point the highest byte sent so far (snd_nxt), and closes with the first ACK at or past
      that point (the window's end if none); its duration and the segments sent in it;
    - loss cycles (eq. 5 / 13 and 9 / 20): from one episode's start to the next, the segments
      sent and the time, and the recovery inside.

    Sums over the run (`TRACE_KEYS`), so that the seeds of a point pool their cycles. A window
    whose trace was cut at TRACE_MAX_ROWS ends at its last row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out: dict[str, Any] = dict.fromkeys(TRACE_KEYS)

    def col(name: str, kind: Any, where: Any = None) -> np.ndarray:
        a = pa.array(columns.get(name) or [], type=kind)  # C-speed from the lists
        a = a if where is None else a.filter(where)
        return a.fill_null(False if kind == pa.bool_() else 0).to_numpy(zero_copy_only=False)

    kinds = pa.array(columns.get("kind") or [], type=pa.string())
    data, ack = pc.equal(kinds, "data"), pc.equal(kinds, "ack")
    td, ta = col("t_s", pa.float64(), data), col("t_s", pa.float64(), ack)
    if dropped_rows and (len(td) or len(ta)):  # the trace was cut: its window ends there
        end_s = float(max(td[-1] if len(td) else 0.0, ta[-1] if len(ta) else 0.0))
    out["trace_s"], out["trace_dropped_rows"] = end_s, dropped_rows
    ends = col("end_rel", pa.float64(), data)
    retx = col("retransmission", pa.bool_(), data).astype(bool)
    acked = col("ack_rel", pa.float64(), ack)
    acked = np.maximum.accumulate(acked) if len(acked) else acked
    if len(ta):
        out["first_ack_s"] = float(ta[0])
        out["first_round_segments"] = int(np.searchsorted(td, ta[0], "left"))
        j = int(np.searchsorted(acked, WMAX_PKTS * PAYLOAD_BYTES, "left"))
        out["wm_acked_s"] = float(ta[j]) if j < len(ta) else None
    nxt = np.maximum.accumulate(ends) if len(ends) else ends
    first = np.flatnonzero(retx)
    episodes: list[tuple[float, float, int, int, int]] = []  # (t0, t1, row0, row1, resent)
    k = 0
    while k < len(first):
        i0 = int(first[k])
        j = int(np.searchsorted(acked, nxt[i0], "left"))  # the ACK of the recovery point
        t1 = float(ta[j]) if j < len(ta) else end_s
        i1 = max(int(np.searchsorted(td, t1, "left")), i0 + 1)
        episodes.append((float(td[i0]), t1, i0, i1, int(retx[i0:i1].sum())))
        k = int(np.searchsorted(first, i1, "left"))
    out["episodes"] = len(episodes)
    out["recovery_s"] = float(sum(e[1] - e[0] for e in episodes))
    out["recovery_segments"] = int(sum(e[3] - e[2] for e in episodes))
    out["retransmitted_segments"] = int(retx.sum())
    closed = episodes[:-1]  # the cycles: each episode to the next one's start
    out["cycles"] = len(closed)
    out["cycle_s"] = float(episodes[-1][0] - episodes[0][0]) if closed else 0.0
    out["cycle_segments"] = int(episodes[-1][2] - episodes[0][2]) if closed else 0
    out["cycle_recovery_s"] = float(sum(e[1] - e[0] for e in closed))
    out["cycle_recovery_segments"] = int(sum(e[3] - e[2] for e in closed))
    out["cycle_lost"] = int(sum(e[4] for e in closed))
    return out


def run_specs(design: Design) -> list[RunSpec]:
    specs = []
    for kind, size in design.kinds():
        for p in design.losses:
            if size is None:
                duration = math.ceil(design.steady_duration_s)
            else:
                t = float(model(p, size).transfer_time_s)
                duration = math.ceil(max(design.transfer_factor * t, t + design.transfer_slack_s))
            for seed in range(1, design.seeds + 1):
                specs.append(
                    RunSpec(
                        kind,
                        size,
                        p,
                        seed,
                        duration,
                        design.rate_bps,
                        design.delayed_ack,
                        design.engine,
                        design.sender_clamp,
                        design.trace and (size is not None or design.trace_steady),
                    )
                )
    return specs


def run_all(
    specs: list[RunSpec], jobs: int = 1, progress: Callable[[float], None] | None = None
) -> list[dict[str, Any]]:
    """Simulate every spec (in `jobs` processes); rows in spec order whatever the pool does."""
    rows: list[dict[str, Any] | None] = [None] * len(specs)
    if jobs <= 1 or len(specs) <= 1:
        for i, spec in enumerate(specs):
            rows[i] = simulate(spec)
            if progress:
                progress((i + 1) / len(specs))
    else:
        from satcc.campaign.execute import timed, worker_pool

        # longest first (steady runs, low loss) so the pool ends together; inside `satcc
        # reproduce` the campaigns' shared pool (no start-up of a pool of its own)
        order = sorted(range(len(specs)), key=lambda i: -specs[i].duration_s)
        with worker_pool(jobs) as (pool, shared):
            futures = {pool.submit(timed, simulate, specs[i]): i for i in order}
            for done, future in enumerate(as_completed(futures), start=1):
                rows[futures[future]], cpu_s = future.result()
                if shared:  # its CPU charged now (an own pool's when it is reaped)
                    timings.runs(1, cpu_s, in_child=True)
                if progress:
                    progress(done / len(specs))
    return [r for r in rows if r is not None]


# -- comparison ----------------------------------------------------------------------------


def diff_pct(model_value: float | None, measured: float | None) -> float | None:
    """(model - measured) / model x 100: the study's definition (Table 3 footnote)."""
    if model_value is None or measured is None or model_value == 0:
        return None
    return (model_value - measured) / model_value * 100.0


def aggregate(runs: list[dict[str, Any]], design: Design) -> list[dict[str, Any]]:
    """One point per (data, p): the model, the seeds' mean/min/max, the differences."""
    points = []
    for kind, size in design.kinds():
        for p in design.losses:
            rows = [r for r in runs if r["kind"] == kind and r["p"] == p]
            if not rows:
                continue
            m = model(p, size)
            finished = all(r["finished"] for r in rows)
            thr = [r["sim_throughput_bps"] for r in rows]
            times = [r["sim_time_s"] for r in rows if r["sim_time_s"] is not None]
            point: dict[str, Any] = {
                "kind": kind,
                "size_bytes": size,
                "p": p,
                "seeds": len(rows),
                "finished": finished,
                "regime": m.intermediate["regime"],
                "model_throughput_bps": float(m.throughput_bps),
                "sim_throughput_mean_bps": float(np.mean(thr)) if finished else None,
                "sim_throughput_min_bps": float(np.min(thr)) if finished else None,
                "sim_throughput_max_bps": float(np.max(thr)) if finished else None,
                "model_time_s": _float(m.transfer_time_s),
                "sim_time_mean_s": float(np.mean(times)) if size and finished else None,
                "sim_time_min_s": float(np.min(times)) if size and finished else None,
                "sim_time_max_s": float(np.max(times)) if size and finished else None,
                "eq39_case": m.intermediate.get("eq39_case"),
                "sim_rto_mean": float(np.mean([r["rto_count"] for r in rows])),
                "sim_recoveries_mean": float(np.mean([r["recovery_count"] for r in rows])),
                "sim_retransmission_rate_mean": _mean_or_none(
                    [r["retransmission_rate"] for r in rows]
                ),
            }
            point["throughput_diff_pct"] = diff_pct(
                point["model_throughput_bps"], point["sim_throughput_mean_bps"]
            )
            point["time_diff_pct"] = diff_pct(point["model_time_s"], point["sim_time_mean_s"])
            points.append(point)
    return points


def _worst(points: list[dict[str, Any]], key: str) -> tuple[float | None, float | None]:
    """(signed difference with the largest magnitude, its p), or (None, None)."""
    values = [(pt[key], pt["p"]) for pt in points if pt[key] is not None]
    if not values:
        return None, None
    return max(values, key=lambda v: (abs(v[0]), -v[1]))


def table3(points: list[dict[str, Any]], design: Design) -> list[dict[str, Any]]:
    """Table 3 rows: per data kind, the worst difference for p <= 1e-4 and p >= 5e-3."""
    rows = []
    for kind, _ in design.kinds():
        mine = [pt for pt in points if pt["kind"] == kind]
        low = [pt for pt in mine if pt["p"] <= LOW_LOSS_MAX * (1 + 1e-9)]
        high = [pt for pt in mine if pt["p"] >= HIGH_LOSS_MIN * (1 - 1e-9)]
        row: dict[str, Any] = {
            "kind": kind,
            "low_loss_ps": [pt["p"] for pt in low],
            "high_loss_ps": [pt["p"] for pt in high],
        }
        for scope, subset in (("low", low), ("high", high)):
            for quantity in ("throughput", "time"):
                value, at = _worst(subset, f"{quantity}_diff_pct")
                row[f"{scope}_{quantity}_diff_pct"] = value
                row[f"{scope}_{quantity}_at_p"] = at
        paper = PAPER_TABLE3.get(kind, {"throughput": (None, None), "time": (None, None)})
        row["paper_throughput_ns2_pct"], row["paper_throughput_dummynet_pct"] = paper["throughput"]
        row["paper_time_ns2_pct"], row["paper_time_dummynet_pct"] = paper["time"]
        row["paper_high_loss"] = PAPER_HIGH_LOSS.get(kind)
        rows.append(row)
    return rows


def format_table(rows: list[dict[str, Any]], design: Design) -> str:
    """Study 002 Table 3 beside satcc's figures, then the high-loss figures."""

    def cell(value: float | None, at: float | None) -> str:
        return "-" if value is None else f"{abs(value):.2f} ({'+' if value >= 0 else '-'}, {at:g})"

    def paper(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    head = (
        f"Study 002 Table 3: max |model - sim| / model (%) for p <= 1e-4 "
        f"(satcc: {design.seeds} seed{'s' if design.seeds > 1 else ''} per point, "
        f"{'delayed ACKs' if design.delayed_ack else 'an ACK per segment'}, "
        f"W_m as {'a sender cwnd cap' if design.sender_clamp else 'a receive window'}, "
        f"{design.rate_bps / 1e6:g} Mbit/s)"
    )
    cols = [
        "data",
        "throughput: satcc (sign, at p)",
        "ns-2",
        "dummynet",
        "transfer time: satcc (sign, at p)",
        "ns-2",
        "dummynet",
    ]
    body = [
        [
            r["kind"],
            cell(r["low_throughput_diff_pct"], r["low_throughput_at_p"]),
            paper(r["paper_throughput_ns2_pct"]),
            paper(r["paper_throughput_dummynet_pct"]),
            cell(r["low_time_diff_pct"], r["low_time_at_p"]),
            paper(r["paper_time_ns2_pct"]),
            paper(r["paper_time_dummynet_pct"]),
        ]
        for r in rows
    ]
    lines = [head, *_grid(cols, body)]
    lines.append(
        "sign of (model - sim) / model, the study's difference: + the simulator's "
        "value is below the model's (lower throughput or shorter time), - above"
    )
    lines.append("")
    lines.append("High loss, p >= 5e-3: max |model - sim| / model (%)")
    cols = ["data", "throughput: satcc", "transfer time: satcc", "study §4 text (ns-2 / dummynet)"]
    body = [
        [
            r["kind"],
            cell(r["high_throughput_diff_pct"], r["high_throughput_at_p"]),
            cell(r["high_time_diff_pct"], r["high_time_at_p"]),
            r["paper_high_loss"] or "-",
        ]
        for r in rows
    ]
    lines.extend(_grid(cols, body))
    return "\n".join(lines)


def _grid(cols: list[str], body: list[list[str]]) -> list[str]:
    from satcc.textgrid import grid

    return grid(cols, body, left={0})


def format_points(points: list[dict[str, Any]]) -> str:
    """Every point: model vs simulator mean, throughput (Mbit/s) and time (s)."""
    cols = [
        "data",
        "p",
        "regime",
        "model Mbit/s",
        "sim Mbit/s",
        "diff %",
        "model s",
        "sim s",
        "diff %",
        "recoveries",
        "RTOs",
    ]
    body = []
    for pt in points:
        body.append(
            [
                pt["kind"],
                f"{pt['p']:g}",
                pt["regime"],
                _fmt(pt["model_throughput_bps"], 1e-6),
                _fmt(pt["sim_throughput_mean_bps"], 1e-6),
                _fmt(pt["throughput_diff_pct"], 1, "+.2f"),
                _fmt(pt["model_time_s"], 1, ".2f"),
                _fmt(pt["sim_time_mean_s"], 1, ".2f"),
                _fmt(pt["time_diff_pct"], 1, "+.2f"),
                f"{pt['sim_recoveries_mean']:g}",
                f"{pt['sim_rto_mean']:g}",
            ]
        )
    return "\n".join(_grid(cols, body))


def _fmt(value: float | None, scale: float, spec: str = ".3f") -> str:
    return "-" if value is None else format(value * scale, spec)


# -- figures -------------------------------------------------------------------------------


def regime_switch(p: np.ndarray, m: Any, quantity: str) -> tuple[float, float] | None:
    """Where the model's curve changes branch (peak window at W_m, eq. 11-21, to below it, eq.
    2-10) and the relative step of the quantity there: the two branches do not meet at the
    boundary (V of eq. 18 is not 0 where W reaches W_m), which is the jump in the model curve."""
    regime = np.asarray(m.intermediate["regime"])
    values = np.asarray(
        m.throughput_bps if quantity == "throughput" else m.transfer_time_s, dtype=float
    )
    if values.ndim != 1 or len(values) != len(regime):
        return None
    change = np.nonzero(regime[1:] != regime[:-1])[0]
    if not len(change):
        return None
    k = int(change[0])
    if not (np.isfinite(values[k]) and np.isfinite(values[k + 1])) or values[k] == 0:
        return None
    return float(np.sqrt(p[k] * p[k + 1])), float(values[k + 1] / values[k] - 1)


def plot_figures(points: list[dict[str, Any]], design: Design, out_dir: Path) -> list[Path]:
    """Fig. 3-9 equivalents: model curve (log-spaced p) and simulator means with min-max bars."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    sizes = dict(design.kinds())
    lo, hi = min(design.losses), max(design.losses)
    curve_p = np.logspace(math.log10(lo), math.log10(hi), MODEL_CURVE_POINTS)
    paths = []
    for number, kind, quantity in FIGURES:
        if kind not in sizes:
            continue
        mine = [pt for pt in points if pt["kind"] == kind and pt["finished"]]
        m = model(curve_p, sizes[kind])
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        if quantity == "throughput":
            ax.plot(
                curve_p,
                np.asarray(m.throughput_bps) / 1e6,
                color="tab:blue",
                label="model (study 002)",
            )
            mean = np.array([pt["sim_throughput_mean_bps"] for pt in mine]) / 1e6
            low = np.array([pt["sim_throughput_min_bps"] for pt in mine]) / 1e6
            high = np.array([pt["sim_throughput_max_bps"] for pt in mine]) / 1e6
            ax.axhline(
                WMAX_PKTS * PAYLOAD_BYTES * 8 / RTT_S / 1e6,
                color="grey",
                ls=":",
                lw=1,
                label="W_m / R",
            )
            ax.set_ylabel("throughput (Mbit/s)")
            ax.set_ylim(bottom=0)
        else:
            ax.plot(
                curve_p, np.asarray(m.transfer_time_s), color="tab:blue", label="model (study 002)"
            )
            mean = np.array([pt["sim_time_mean_s"] for pt in mine], dtype=float)
            low = np.array([pt["sim_time_min_s"] for pt in mine], dtype=float)
            high = np.array([pt["sim_time_max_s"] for pt in mine], dtype=float)
            ax.set_ylabel("transfer time (s)")
            ax.set_ylim(bottom=0)
        ps = np.array([pt["p"] for pt in mine])
        if len(ps):
            ax.errorbar(
                ps,
                mean,
                yerr=[np.maximum(mean - low, 0.0), np.maximum(high - mean, 0.0)],
                fmt="o",
                color="tab:red",
                ms=4,
                capsize=2,
                label=f"satcc sim ({design.seeds} seed{'s' if design.seeds > 1 else ''}: "
                "mean, min-max)",
            )
        ax.set_xscale("log")
        ax.set_xlabel("packet loss rate p")
        switch = regime_switch(curve_p, m, quantity)
        if switch is not None:
            p_switch, step = switch
            ax.axvline(
                p_switch,
                color="tab:blue",
                ls=":",
                lw=1,
                label=f"model's branch switch, p = {p_switch:.2g} (step {step:+.0%})",
            )
        what = "steady state" if kind == STEADY else f"{kind[:-2]} MB"
        ax.set_title(
            f"Fig. {number}: {quantity.replace('time', 'transfer time')}, {what}, RTT 550 ms",
            fontsize="medium",
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
        path = out_dir / f"fig{number}_{kind}_{quantity}.png"
        tmp = path.with_name(f".{path.name}.tmp")
        fig.savefig(tmp, dpi=100, format="png", metadata={"Software": None})
        tmp.replace(path)
        paths.append(path)
    return paths


# -- the whole validation ------------------------------------------------------------------


@dataclass
class Validation:
    design: Design
    runs: list[dict[str, Any]]
    points: list[dict[str, Any]]
    table: list[dict[str, Any]]
    figures: list[Path]
    out_dir: Path

    def text(self) -> str:
        return format_table(self.table, self.design)


def validate(
    design: Design,
    out_dir: Path,
    jobs: int | None = None,
    progress: Callable[[float], None] | None = None,
    plots: bool = True,
) -> Validation:
    """Run the design, compare, write runs.csv, points.csv, validation.json and the PNGs."""
    return validate_many([(design, out_dir)], jobs=jobs, progress=progress, plots=plots)[0]


def validate_many(
    todo: list[tuple[Design, Path]],
    jobs: int | None = None,
    progress: Callable[[float], None] | None = None,
    plots: bool = True,
) -> list[Validation]:
    """`validate` for several designs (study 002's columns and swept link rates) whose runs go
    through one pool together, longest first over them all (no pool idling at each design's
    tail); each design's files are written as `validate` writes them."""
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if any(registry.get(design.engine).exclusive for design, _out in todo):
        jobs = 1  # the emulator runs in real time, one run at a time
    with timings.phase(timings.RESOLVE):
        each = [run_specs(design) for design, _out in todo]
    with timings.phase(timings.SIMULATION):
        every = run_all([s for specs in each for s in specs], jobs=jobs, progress=progress)
    out: list[Validation] = []
    start = 0
    for (design, out_dir), specs in zip(todo, each, strict=True):
        runs, start = every[start : start + len(specs)], start + len(specs)
        with timings.phase(timings.CLAIMS):
            points = aggregate(runs, design)
            rows = table3(points, design)
        with timings.phase(timings.WRITING):
            _write_out(out_dir, design, runs, points, rows)
        figures = plot_figures(points, design, out_dir) if plots else []
        out.append(Validation(design, runs, points, rows, figures, out_dir))
    return out


def _write_out(
    out_dir: Path,
    design: Design,
    runs: list[dict[str, Any]],
    points: list[dict[str, Any]],
    rows: list[dict[str, Any]],
) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_csv(out_dir / "runs.csv", runs)
    _write_csv(out_dir / "points.csv", points)
    doc = {
        "study": "002",
        "design": _design_doc(design),
        "table3": rows,
        "points": points,
        "runs": runs,
    }
    _write_text(
        out_dir / "validation.json",
        json.dumps(_clean(doc), indent=2, ensure_ascii=False, allow_nan=False) + "\n",
    )


def _design_doc(design: Design) -> dict[str, Any]:
    doc = asdict(design)
    if design.trace_steady:  # the default: written only when off (the older files unchanged)
        del doc["trace_steady"]
    doc.update(
        {
            "payload_bytes": PAYLOAD_BYTES,
            "ip_packet_bytes_with_timestamps": PAYLOAD_BYTES + 52,
            "wmax_pkts": WMAX_PKTS,
            "buffer_pkts": BUFFER_PKTS,
            "rtt_s": RTT_S,
            "rtt0_s": RTT0_S,
            "t0_s": T0_S,
            "syn_timeout_s": SYN_TIMEOUT_S,
            "loss_direction": "data only",
        }
    )
    return doc


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        if rows:
            # every row's keys in first-seen order (an untraced steady run has no trace keys:
            # Design.trace_steady), a key a row lacks written empty
            fields = list(dict.fromkeys(k for row in rows for k in row))
            writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow(
                    {
                        k: ("" if v is None else repr(v) if isinstance(v, float) else v)
                        for k, v in row.items()
                    }
                )
    tmp.replace(path)


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _mean_or_none(values: list[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return float(np.mean(xs)) if xs else None
