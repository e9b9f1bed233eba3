"""The `model` engine: a scenario answered by the analytical models, as the same RunResult.

Each resolved flow is reduced to the inputs of a closed-form model, taken from the links on its
route (the simulator's routes: shortest by propagation delay, then hops, then link index), and
the model chosen by the flow's congestion control:

    flow ──► route (fwd, rev) ──► p, R, T_0, W_m, bottleneck share ──► model by cca ──► cap
                                                                                         │
             hybla        Hybla steady state / transfer (study 002 eq. 2-39)             ▼
             reno         PFTK (bulk) / Cardwell (size)                      goodput, fct, rows
             cubic        RFC 9438 §5 response function (+ loss-free slow start for size)
             bbr*         bottleneck share x (1 - p), window bound
             other        window bound, said so in the flow's note

Inputs derived from the path (per flow)
| quantity | how | unit |
|----------|-----|------|
| p        | 1 - prod(1 - loss) over the forward link directions (data); ACK loss is ignored | 1 |
| base RTT | sum of one-way propagation delays forward and back + serialisation of one data packet on each forward hop and one ACK (40 B + 12 B timestamps) on each reverse hop | s |
| R        | base RTT + assumed queueing delay, which is 0 (no standing queue; see assumption 2) | s |
| share    | min over forward hops of rate / (number of flows whose forward route crosses it) | bit/s on the wire |
| buffer   | drop-tail limit of that bottleneck hop in bytes (N pkt x data packet, bytes, x BDP as the simulator resolves it) | B |
| W_m      | min(window / mss, (share x base RTT / 8 + buffer) / data packet): the receive window (`scenario.receive_window_bytes`: the share of the `rwnd` buffer Linux offers, or `rwnd` itself without autotuning) or what the pipe plus the buffer can hold | segments |
| T_0      | R + min_rto: Linux's RTO once the RTT is stable (tcp_set_rto: srtt + rttvar, rttvar >= rto_min) | s |
| T_s      | 1 s: Linux TCP_TIMEOUT_INIT, the SYN retransmission timeout (the papers use 3 s) | s |
| segment  | a segment carries mss payload bytes (goodput counts these); on the wire it is mss + 40 (IP + TCP) + 12 with timestamps, as in the simulator (crates/satcc-sim/src/packet.rs) | B |

Assumptions (numbered; docs/models.md repeats them)
1. Independent random loss on the forward path only; queue drops are not modelled, they are
   kept away by W_m <= BDP + buffer.
2. No standing queue: R is the base RTT. A flow whose window exceeds the BDP fills the buffer
   in the simulator, so the simulator's RTTs are larger; such a flow is capped at the
   bottleneck share anyway (assumption 4).
3. All flows are active together and share every hop equally (no start times, no RTT bias).
4. Every prediction is capped at the bottleneck share in goodput terms
   (share x mss / data packet); the flow's note says when the cap applied.
5. p = 0: bulk flows get the window bound min(W_m mss 8 / R, share) exactly; limited transfers
   use the algorithm's transfer model at p = LOSS_LIMIT (the limit p -> 0+).
6. Hybla: rho = max(R / rtt0, 1) as Linux (tcp_hybla.c hybla_recalc_param) and the simulator;
   the model counts one ACK per segment, while Linux's Hybla (and the simulator's) grows per
   ACK, so with delayed ACKs the real congestion avoidance is up to twice as slow.
7. Reno: b = 1 (Linux's Reno counts acknowledged segments, so delayed ACKs do not slow it),
   w_1 = initial_cwnd, no delayed-ACK wait for the first segment (Linux quick-ACKs it).
8. CUBIC and the others have no transfer model: a limited transfer is the handshake, a
   loss-free slow start (doubling per RTT from initial_cwnd) up to the predicted mean window,
   then the rest at the predicted rate, minus R/2 (the last window's half RTT, as study 002
   eq. 39). No first-loss recovery, no HyStart.
9. A transfer that would end after the run: delivered = the mean rate x the active time,
   fct null.

What a model run fills (docs/results.md lists the columns; everything else is null)
- flows: goodput_bps (the prediction; delivered_bytes = floor(goodput x active time / 8)),
  delivered_bytes, sent_packets and retransmitted_packets (expected values
  when each lost transmission is resent once: sent = segments / (1 - p)), retransmission_rate,
  rtt_mean_ms = R, rtt_min_ms = base RTT, fct_s (transfers that end within the run). Null:
  rtt_p95_ms, rto_count, recovery_count.
- flow_series: every (flow, bin) row the simulator writes; delivered_bytes / goodput_bps are
  the model's mean rate spread over the flow's active time (start to start + T, or to the end
  of the run), not a trajectory. Null: cwnd, ssthresh, srtt, inflight, pacing, retransmits.
- link_series: every (direction, bin) row; capacity_bps and delay_ms (the configuration).
  Null: queue, drops, ECN marks, tx_bytes.
- meta["models"]: per flow the model, its inputs, intermediate values and the derived path
  quantities above (in the Parquet metadata; `satcc.results.load(DIR).meta["models"]`).
- stats: {"flows_modelled": n}.

Not implemented: multi-flow dynamics (RTT unfairness, synchronised losses), time-varying links,
ECN, queue-drop loss, reverse-path (ACK) loss, BBR's own model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from satcc import _native
from satcc.engines.meta import run_meta
from satcc.errors import UserError
from satcc.models import cardwell, cubic, hybla, pftk
from satcc.models.common import BITS_PER_BYTE, ModelInputError, ModelResult, jsonable
from satcc.results import (
    ENGINE_FLOW_SERIES_COLUMNS,
    ENGINE_LINK_SERIES_COLUMNS,
    FLOW,
    RunResult,
)
from satcc.results import FLOW_SERIES as FS
from satcc.results import LINK_SERIES as LS
from satcc.scenario import Scenario, expand_flows, receive_window_bytes, resolve

ENGINE = "model"

IP_TCP_HEADER_BYTES = 40  # packet.rs: IP_HEADER 20 + TCP_HEADER 20
TIMESTAMP_OPTION_BYTES = 12  # packet.rs TS_OPTION: NOP, NOP, kind 8 (10 B)
SYN_TIMEOUT_S = 1.0  # Linux TCP_TIMEOUT_INIT (RFC 6298 §2.1); the simulator's RTO_INIT
LOSS_LIMIT = 1e-12  # assumption 5: transfers at p = 0 are evaluated at this p
SLOW_START_GROWTH = 2.0  # RFC 5681 §3.1: cwnd doubles per RTT in slow start
HYBLA_RTT0_MS = 25.0  # tcp_hybla.c rtt0 (the flow's [flow.cc] rtt0 overrides it)
CUBIC_C = 0.4  # RFC 9438 §5.1; tcp_cubic.c bic_scale 41 ~ 0.4
CUBIC_BETA = 717 / 1024  # tcp_cubic.c beta (the flow's [flow.cc] beta overrides it)
NS_PER_S = 1e9
BBR_PREFIX = "bbr"

MODEL_HYBLA = "hybla"
MODEL_PFTK = "pftk"
MODEL_CARDWELL = "cardwell"
MODEL_CUBIC = "cubic"
MODEL_BBR = "bbr-bound"
MODEL_WINDOW = "window"


# -- per-flow path quantities --------------------------------------------------------------


@dataclass
class PathInputs:
    """What the models need from a flow's route (module table)."""

    p: float
    ack_loss: float
    prop_rtt_s: float
    base_rtt_s: float
    rtt_s: float
    share_wire_bps: float
    share_goodput_bps: float
    bottleneck: dict[str, Any]
    buffer_bytes: float
    bdp_bytes: float
    wmax_pkts: float
    wmax_limited_by: str
    t0_s: float
    data_packet_bytes: int
    ack_packet_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {k: _json_safe(v) for k, v in self.__dict__.items()}


def _combined_loss(losses: list[float]) -> float:
    """1 - prod(1 - loss_i), accumulated as p + l - p l so that one lossy hop gives its own
    loss exactly (no 1 - (1 - x) rounding)."""
    p = 0.0
    for loss in losses:
        p = p + loss - p * loss
    return p


def _queue_bytes(queue: dict[str, Any], packet: int) -> float:
    """A sized drop-tail limit in bytes: packets x data packet, or bytes ("N BDP" queues
    sized by `_native.sized_queue` against the routes' largest RTT, as the simulator's links)."""
    if "packets" in queue:
        return float(queue["packets"] * packet)
    return float(queue["bytes"])


def path_inputs(config: dict[str, Any]) -> list[PathInputs]:
    """PathInputs of every resolved flow, in id order."""
    resolved = config["routes"]  # satcc-core's routes, as the simulator's
    links = config["links"]
    flows = config["flows"]

    def hops(dirs: list[int]) -> list[tuple[int, str]]:
        return [(k // 2, "ab" if k % 2 == 0 else "ba") for k in dirs]

    fwd = {f["id"]: hops(p["fwd"]) for f, p in zip(flows, resolved["paths"], strict=True)}
    rev = {f["id"]: hops(p["rev"]) for f, p in zip(flows, resolved["paths"], strict=True)}
    users: dict[tuple[int, str], int] = {}
    for f in flows:
        for hop in fwd[f["id"]]:
            users[hop] = users.get(hop, 0) + 1

    def prop_s(hops: list[tuple[int, str]]) -> float:
        return sum(links[i][d]["delay_ns"] for i, d in hops) / NS_PER_S

    out = []
    for f in flows:
        options = TIMESTAMP_OPTION_BYTES if f["timestamps"] else 0
        data = f["mss"] + IP_TCP_HEADER_BYTES + options
        ack = IP_TCP_HEADER_BYTES + options
        forward, back = fwd[f["id"]], rev[f["id"]]
        p = _combined_loss([links[i][d]["loss"] for i, d in forward])
        ack_loss = _combined_loss([links[i][d]["loss"] for i, d in back])
        serialise = sum(data * 8 / links[i][d]["rate_bps"] for i, d in forward)
        serialise += sum(ack * 8 / links[i][d]["rate_bps"] for i, d in back)
        prop = prop_s(forward) + prop_s(back)
        base = prop + serialise
        hop = min(forward, key=lambda h: (links[h[0]][h[1]]["rate_bps"] / users[h], h))
        direction = links[hop[0]][hop[1]]
        share = direction["rate_bps"] / users[hop]
        k = 2 * hop[0] + (hop[1] == "ba")
        queue = _native.sized_queue(
            direction["queue"], direction["rate_bps"], resolved["max_rtt_ns"][k]
        )
        buffer = _queue_bytes(queue, data)
        bdp = share * base / BITS_PER_BYTE
        by_rwnd = receive_window_bytes(f) / f["mss"]
        by_pipe = (bdp + buffer) / data
        rtt = base  # assumption 2: no standing queue
        out.append(
            PathInputs(
                p=p,
                ack_loss=ack_loss,
                prop_rtt_s=prop,
                base_rtt_s=base,
                rtt_s=rtt,
                share_wire_bps=share,
                share_goodput_bps=share * f["mss"] / data,
                bottleneck={
                    "link": hop[0],
                    "dir": hop[1],
                    "rate_bps": direction["rate_bps"],
                    "flows": users[hop],
                },
                buffer_bytes=buffer,
                bdp_bytes=bdp,
                wmax_pkts=min(by_rwnd, by_pipe),
                wmax_limited_by="rwnd" if by_rwnd <= by_pipe else "bdp+buffer",
                t0_s=rtt + f["min_rto_ns"] / NS_PER_S,  # tcp_set_rto: srtt + max(rttvar, rto_min)
                data_packet_bytes=data,
                ack_packet_bytes=ack,
            )
        )
    return out


# -- per-flow prediction -------------------------------------------------------------------


@dataclass
class FlowPrediction:
    """One flow's prediction: goodput over its active time, and T for limited transfers."""

    model: str
    throughput_bps: float
    transfer_time_s: float | None
    uncapped_bps: float
    capped: bool
    notes: list[str] = field(default_factory=list)
    result: ModelResult | None = None


def loss_free_transfer_s(
    d: float, w1: float, growth: float, wcap: float, rtt: float, rate_seg_s: float
) -> float:
    """Handshake (R) + slow start from w1, x growth per round, to wcap + the rest at
    rate_seg_s - R/2 (assumption 8; slow-start rounds as Cardwell eq. 15)."""
    w1 = min(w1, wcap)
    if wcap <= w1:
        return rtt + d / rate_seg_s + rtt / 2.0
    d_cap = (growth * wcap - w1) / (growth - 1.0)  # Cardwell eq. 15: sent until cwnd = wcap
    if d <= d_cap:
        rounds = math.log(d * (growth - 1.0) / w1 + 1.0) / math.log(growth)  # Cardwell eq. 15
        return rtt + rounds * rtt - rtt / 2.0
    rounds = math.log(wcap / w1) / math.log(growth) + 1.0
    return rtt + rounds * rtt + (d - d_cap) / rate_seg_s - rtt / 2.0


def _window_bound_bps(path: PathInputs, mss: int) -> float:
    return path.wmax_pkts * mss * BITS_PER_BYTE / path.rtt_s  # study 003 eq. 1


def predict_flow(flow: dict[str, Any], path: PathInputs) -> FlowPrediction:
    """The model for one resolved flow (module docstring: which model for which cca)."""
    cca = flow["cca"]
    mss = flow["mss"]
    size = flow["size_bytes"]
    p = path.p
    notes: list[str] = []
    if p >= hybla.MAX_LOSS:
        raise ModelInputError(f"path loss p = {p:g} is outside every model's domain (p < 0.5)")
    window_bps = _window_bound_bps(path, mss)
    cap_bps = path.share_goodput_bps

    result: ModelResult | None = None
    transfer_s: float | None = None
    if cca == "hybla":
        if path.wmax_pkts < hybla.MIN_WMAX_PKTS:
            raise ModelInputError(
                f"W_m = {path.wmax_pkts:.3g} segments; the Hybla model needs "
                f">= {hybla.MIN_WMAX_PKTS:g}"
            )
        rtt0_s = float(flow["cc"].get("rtt0", HYBLA_RTT0_MS)) / 1e3
        rho = max(path.rtt_s / rtt0_s, 1.0)  # assumption 6: Linux hybla_recalc_param
        model_name = MODEL_HYBLA
        if size is None and p == 0.0:
            model_name, uncapped = MODEL_WINDOW, window_bps
        else:
            result = hybla.model(
                max(p, LOSS_LIMIT),
                path.rtt_s,
                wmax_pkts=path.wmax_pkts,
                size_bytes=size,
                rho=rho,
                rtt0_s=rtt0_s,
                t0_s=path.t0_s,
                packet_bytes=mss,
                syn_timeout_s=SYN_TIMEOUT_S,
            )
            uncapped = float(result.throughput_bps)
            transfer_s = _float_or_none(result.transfer_time_s)
    elif cca in ("reno", "newreno"):
        wmax = path.wmax_pkts
        if wmax < pftk.MIN_WMAX_PKTS:
            raise ModelInputError(f"W_m = {wmax:.3g} segments; PFTK/Cardwell need >= 4")
        if size is None:
            if p == 0.0:
                model_name, uncapped = MODEL_WINDOW, window_bps
            else:
                model_name = MODEL_PFTK
                result = pftk.send_rate(
                    p, path.rtt_s, t0_s=path.t0_s, wmax_pkts=wmax, b=1, packet_bytes=mss
                )
                uncapped = float(result.throughput_bps)
        else:
            model_name = MODEL_CARDWELL
            result = cardwell.transfer(
                max(p, LOSS_LIMIT),
                path.rtt_s,
                size,
                t0_s=path.t0_s,
                wmax_pkts=wmax,
                b=1,
                w1_pkts=min(flow["initial_cwnd"], wmax),
                t_delack_s=0.0,
                syn_timeout_s=SYN_TIMEOUT_S,
                packet_bytes=mss,
            )
            uncapped = float(result.throughput_bps)
            transfer_s = float(result.transfer_time_s)
    elif cca == "cubic":
        if p == 0.0:
            model_name, uncapped = MODEL_WINDOW, window_bps
        else:
            model_name = MODEL_CUBIC
            result = cubic.model(
                p,
                path.rtt_s,
                c=float(flow["cc"].get("c", CUBIC_C)),
                beta=float(flow["cc"].get("beta", CUBIC_BETA)),
                packet_bytes=mss,
                wmax_pkts=path.wmax_pkts,
            )
            uncapped = float(result.throughput_bps)
        if size is not None:
            notes.append("transfer time: loss-free slow start + the CUBIC rate (assumption 8)")
    elif cca.startswith(BBR_PREFIX):
        model_name = MODEL_BBR
        uncapped = min(cap_bps * (1.0 - p), window_bps)
        notes.append("BBR: bottleneck share x (1 - p), at most the window bound")
        if size is not None:
            notes.append("transfer time: loss-free slow start + that rate (assumption 8)")
    else:
        model_name = MODEL_WINDOW
        uncapped = window_bps
        notes.append(
            f"no loss model for {cca}: the window bound W_m/R" + (", loss ignored" if p > 0 else "")
        )
        if size is not None:
            notes.append("transfer time: loss-free slow start + the window bound (assumption 8)")

    capped = uncapped > cap_bps
    rate_bps = min(uncapped, cap_bps)
    if capped:
        notes.append("capped at the bottleneck share (assumption 4)")
    if size is not None:
        if transfer_s is None or capped:
            rate_seg_s = rate_bps / (mss * BITS_PER_BYTE)
            transfer_s = loss_free_transfer_s(
                math.ceil(size / mss),
                float(flow["initial_cwnd"]),
                SLOW_START_GROWTH,
                max(rate_seg_s * path.rtt_s, 1.0),
                path.rtt_s,
                rate_seg_s,
            )
            if capped and model_name in (MODEL_HYBLA, MODEL_CARDWELL):
                notes.append("transfer time: loss-free slow start + the bottleneck share")
        rate_bps = size * BITS_PER_BYTE / transfer_s
    return FlowPrediction(model_name, rate_bps, transfer_s, uncapped, capped, notes, result)


# -- the engine ----------------------------------------------------------------------------


def check_budget(scenario: Scenario, seed: int | None = None, force: bool = False) -> None:
    """The registry's budget check (budget "memory"): the series are as large as the
    simulator's, no packets are simulated (satcc.engines.sim.check_budget)."""
    from satcc.engines import sim

    sim.check_budget(scenario, seed=seed, force=force, simulate=False)


def run(
    scenario: Scenario, seed: int | None = None, progress: Callable[[float], None] | None = None
) -> RunResult:
    """Answer `scenario` with the models; the RunResult has the simulator's shape (module doc).
    `seed` is recorded only (the models are deterministic); `progress` is called with 1.0."""
    config = resolve(scenario, seed_override=seed)
    origins = expand_flows(scenario)
    paths = path_inputs(config)
    duration_s = config["duration_ns"] / NS_PER_S
    bin_s = config["bin_ns"] / NS_PER_S
    nbins = math.ceil(config["duration_ns"] / config["bin_ns"])
    starts = [k * config["bin_ns"] / NS_PER_S for k in range(nbins)]

    summaries, models, per_bin = [], [], []
    for f, origin, path in zip(config["flows"], origins, paths, strict=True):
        if (f.get("app") or {"kind": "bulk"})["kind"] != "bulk":
            raise UserError(
                f"{scenario.source}: flow {origin.name!r} (id {f['id']}): app: the model "
                f"engine predicts bulk and limited transfers only, found kind "
                f"{f['app']['kind']!r}; run it with `satcc sim`"
            )
        if f.get("nodelay"):
            raise UserError(
                f"{scenario.source}: flow {origin.name!r} (id {f['id']}): nodelay: the model "
                "engine has no Nagle algorithm to turn off, found true; run it with `satcc sim`"
            )
        try:
            pred = predict_flow(f, path)
        except ModelInputError as e:
            raise UserError(
                f"{scenario.source}: flow {origin.name!r} (id {f['id']}): {e}"
            ) from None
        start_s = f["start_ns"] / NS_PER_S
        end_s = duration_s
        fct = None
        if pred.transfer_time_s is not None and start_s + pred.transfer_time_s <= duration_s:
            fct = pred.transfer_time_s
            end_s = start_s + fct
        active = max(end_s - start_s, 0.0)
        delivered = math.floor(pred.throughput_bps * active / BITS_PER_BYTE)
        if f["size_bytes"] is not None:
            delivered = f["size_bytes"] if fct is not None else min(delivered, f["size_bytes"])
        segments = math.ceil(delivered / f["mss"])
        sent = round(segments / (1.0 - path.p))  # each lost transmission resent once
        summaries.append(
            {
                FLOW.id: f["id"],
                FLOW.delivered_bytes: delivered,
                FLOW.goodput_bps: pred.throughput_bps if active > 0 else 0.0,
                FLOW.sent_packets: sent,
                FLOW.retransmitted_packets: sent - segments,
                FLOW.rtt_mean_ms: path.rtt_s * 1e3,
                FLOW.rtt_p95_ms: None,
                FLOW.rtt_min_ms: path.base_rtt_s * 1e3,
                FLOW.fct_s: fct,
                FLOW.rto_count: None,
                FLOW.recovery_count: None,
            }
        )
        per_bin.append(_spread(delivered, start_s, end_s, starts, bin_s, duration_s))
        models.append(_model_record(f, origin.name, pred, path))

    raw = {
        "flows": summaries,
        "flow_series": _flow_series(config, starts, per_bin),
        "link_series": _link_series(config, starts),
        "stats": {"flows_modelled": len(paths)},
    }
    meta = run_meta(ENGINE, config, models=models)
    if progress is not None:
        progress(1.0)
    return RunResult.from_engine(raw, config, origins, meta)


def _spread(
    total: int, start: float, end: float, starts: list[float], bin_s: float, duration: float
) -> list[int]:
    """`total` bytes spread evenly over [start, end), in whole bytes per bin: cumulative
    rounding, so that the bins add up to `total`."""
    span = end - start

    def delivered_by(x: float) -> int:
        if span <= 0:
            return total if x >= start else 0
        return round(total * min(max((x - start) / span, 0.0), 1.0))

    out = []
    done = 0
    for t in starts:
        upto = delivered_by(min(t + bin_s, duration))
        out.append(upto - done)
        done = upto
    return out


def _flow_series(
    config: dict[str, Any], starts: list[float], per_bin: list[list[int]]
) -> dict[str, list[Any]]:
    """Rows ordered as the simulator's: per bin, every flow."""
    cols: dict[str, list[Any]] = {k: [] for k in ENGINE_FLOW_SERIES_COLUMNS}
    for k, t in enumerate(starts):
        for f, bins in zip(config["flows"], per_bin, strict=True):
            row = {FS.flow_id: f["id"], FS.t_s: t, FS.delivered_bytes: bins[k]}
            for key, values in cols.items():
                values.append(row.get(key))  # the model knows only the bytes per bin
    return cols


def _link_series(config: dict[str, Any], starts: list[float]) -> dict[str, list[Any]]:
    """Rows ordered as the simulator's: per bin, every link direction (ab then ba)."""
    cols: dict[str, list[Any]] = {k: [] for k in ENGINE_LINK_SERIES_COLUMNS}
    for t in starts:
        for i, link in enumerate(config["links"]):
            for d in ("ab", "ba"):
                row = {
                    LS.link_id: i,
                    LS.dir: d,
                    LS.t_s: t,
                    LS.capacity_bps: link[d]["rate_bps"],
                    LS.delay_ms: link[d]["delay_ns"] / 1e6,
                }
                for key, values in cols.items():
                    values.append(row.get(key))  # no queue, no drops: null
    return cols


def _model_record(
    flow: dict[str, Any], name: str, pred: FlowPrediction, path: PathInputs
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": flow["id"],
        "name": name,
        "cca": flow["cca"],
        "model": pred.model,
        "throughput_bps": _json_safe(pred.throughput_bps),
        "transfer_time_s": _json_safe(pred.transfer_time_s),
        "uncapped_bps": _json_safe(pred.uncapped_bps),
        "capped_by_bottleneck": pred.capped,
        "notes": list(pred.notes),
        "path": path.to_json(),
    }
    if pred.result is not None:
        doc = pred.result.to_json_dict()
        record["inputs"] = _json_safe(doc["inputs"])
        record["intermediate"] = _json_safe(doc["intermediate"])
    return record


def _float_or_none(x: Any) -> float | None:
    return None if x is None else float(x)


def _json_safe(value: Any) -> Any:
    """numpy -> Python, non-finite floats -> None, recursively (results JSON has no NaN)."""
    value = jsonable(value)
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
