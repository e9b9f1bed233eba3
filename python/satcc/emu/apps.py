"""Application traffic measured the same way in both engines: per on-period bytes and goodput,
per-request completion time, and cwnd at each write after idle.

    kernel_record(flow, client, server, origin_ns)  the emulator's raw xfer JSON -> a record
    sim_record(result, flow)                        a simulator RunResult -> the same record

A record is `{"kind", "periods": [...], "requests": [...], "events": [...]}` with times in
seconds from the flow's start:

- periods (on/off): per "on" switch at `t_s`: `bytes` the receiver got in [t_s, next switch
  on) and `goodput_bps` = bytes × 8 / the on duration (what was still in flight when the
  source went off arrives during the off period and counts for its own period).
- requests: per write at `t_s`: `done_s`, when the receiver had the request's last byte (the
  stream's byte (k+1) × size), and `completion_s` = done_s − t_s (null if it never arrived);
  the kernel's also `from_write_s`, from the write as it actually happened.
- events: per application event at `t_s` (an "on" switch or a write): `cwnd_after` (segments),
  the window the write started with — after `tcp_slow_start_after_idle_check` in both engines.

How each engine measures them (the deviations between the two):
1. Kernel: the receiver's clock at the read that completed the bytes (xfer `serve`), and
   `tcpi_snd_cwnd` read just after the event's first write (xfer `app`). The receiver's
   reads are grouped into bursts separated by half an off period; a burst counts for the
   period in which it began.
2. Simulator: from `flow_series` (delivered_bytes per bin, cwnd_pkts at the end of each bin),
   so its resolution is the scenario's bin: a request is done at the end of the first bin in
   which the in-order bytes reach its last byte (an upper bound, at most one bin late), and
   the cwnd after an event is the sample at the event's instant (the sample at a bin's end
   comes after an application event at the same time). Run the simulator with a bin of a few
   ms (`--set scenario.bin="1 ms"`) for completion times.
"""

from __future__ import annotations

import math
from typing import Any

NS = 1_000_000_000


def _periods(app: dict[str, Any], until_s: float) -> list[tuple[float, float]]:
    """(start, end) of every on-period's accounting window, in seconds from the flow's start."""
    from satcc.emu.xfer import schedule

    ons = [t / NS for t, kind, _ in schedule(app, int(until_s * NS)) if kind == "on"]
    ons = [t for t in ons if t < until_s]
    return [(t, ons[k + 1] if k + 1 < len(ons) else until_s) for k, t in enumerate(ons)]


def _writes(app: dict[str, Any], until_s: float) -> list[float]:
    from satcc.emu.xfer import schedule

    times = [t / NS for t, kind, _ in schedule(app, int(until_s * NS)) if kind != "off"]
    return [t for t in times if t < until_s]  # one at the very end has no time to act


def kernel_record(
    flow: dict[str, Any],
    client: dict[str, Any],
    server: dict[str, Any],
    origin_ns: int,
    until_ns: int,
) -> dict[str, Any]:
    """The emulator's record for `flow` from satcc.emu.xfer's JSON (client = `app`, server =
    `serve`), origin_ns being the flow's start on CLOCK_MONOTONIC and until_ns the run's end
    after it (an event at the very end is left out, as the simulator's)."""
    app = flow["app"]
    events = []
    for e in client.get("events") or []:
        if e["t_ns"] >= until_ns:
            continue
        events.append(
            {
                "t_s": e["t_ns"] / NS,
                "late_s": e["late_ns"] / NS,
                "kind": e["kind"],
                "written_bytes": e["written"],
                "cwnd_before": e.get("cwnd_before"),
                "ssthresh_before": e.get("ssthresh_before"),
                "cwnd_after": e.get("cwnd_after"),
                "ssthresh_after": e.get("ssthresh_after"),
            }
        )
    doc: dict[str, Any] = {"kind": app["kind"], "events": events, "periods": [], "requests": []}
    if app["kind"] == "onoff":
        on_s, off_s = app["on_ns"] / NS, app["off_ns"] / NS
        starts = [e for e in events if e["kind"] == "on"]
        windows = [(e["t_s"], e["t_s"] + on_s + off_s) for e in starts]
        got = [0] * len(windows)
        for first, _last, n in server.get("bursts") or []:
            t = (first - origin_ns) / NS
            if t >= until_ns / NS:
                continue  # after the run's end (the runner stops the flow then)
            k = max((i for i, (a, _) in enumerate(windows) if a <= t), default=0)
            if windows:
                got[k] += n
        written: list[int] = []
        for e in events:
            if e["kind"] == "on":
                written.append(e["written_bytes"])
            elif written:
                written[-1] += e["written_bytes"]
        for (a, _b), n, w in zip(windows, got, written):
            doc["periods"].append(
                {"t_s": a, "written_bytes": w, "bytes": n, "goodput_bps": n * 8 / on_s}
            )
    else:
        done = [(t - origin_ns) / NS for t in server.get("requests") or []]
        for k, e in enumerate(x for x in events if x["kind"] == "write"):
            d = done[k] if k < len(done) else None
            doc["requests"].append(
                {
                    "t_s": e["t_s"],
                    "done_s": d,
                    "completion_s": None if d is None else d - e["t_s"],
                    # from the write as it happened (the writer's lateness taken out; for the
                    # first request that also takes out the handshake, done before it)
                    "from_write_s": None if d is None else d - e["t_s"] - e["late_s"],
                }
            )
    return doc


def sim_record(result: Any, flow: dict[str, Any]) -> dict[str, Any]:
    """The simulator's record for `flow` (a resolved flow with an `app`) from `result`."""
    import pandas as pd

    app = flow["app"]
    bin_s = float(result.meta["bin_s"])
    start_s = flow["start_ns"] / NS
    fs = result.flow_series
    fs = fs[fs.flow_id == flow["id"]].sort_values("t_s")
    t_end = [round(float(t) + bin_s - start_s, 9) for t in fs.t_s]  # bin ends, flow time
    delivered = [0 if pd.isna(x) else int(x) for x in fs.delivered_bytes]
    cwnd = list(fs.cwnd_pkts)
    until_s = float(result.meta.get("duration_s") or (t_end[-1] if t_end else 0.0))
    until_s -= start_s
    doc: dict[str, Any] = {"kind": app["kind"], "events": [], "periods": [], "requests": []}
    for t in _writes(app, until_s):
        # the sample at the event's instant (the bin ending there); none for an event at 0
        k = next((i for i, e in enumerate(t_end) if math.isclose(e, t, abs_tol=1e-9)), None)
        c = cwnd[k] if k is not None else None
        ev = {"t_s": t, "kind": "on" if app["kind"] == "onoff" else "write"}
        ev["cwnd_after"] = None if c is None or pd.isna(c) else int(c)
        doc["events"].append(ev)
    if app["kind"] == "onoff":
        on_s = app["on_ns"] / NS
        for a, b in _periods(app, until_s):
            n = sum(d for e, d in zip(t_end, delivered) if a < e <= b + 1e-9)
            doc["periods"].append({"t_s": a, "bytes": n, "goodput_bps": n * 8 / on_s})
    else:
        size = int(app["bytes"])
        cum, total = [], 0
        for d in delivered:
            total += d
            cum.append(total)
        for k, t in enumerate(_writes(app, until_s)):
            need = (k + 1) * size
            i = next((i for i, c in enumerate(cum) if c >= need), None)
            d = t_end[i] if i is not None else None
            doc["requests"].append(
                {"t_s": t, "done_s": d, "completion_s": None if d is None else d - t}
            )
    return doc
