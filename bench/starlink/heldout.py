"""Held-out path statistics of a recording, and how they spread with the window's length (issue 41).

    python bench/starlink/heldout.py RECORDING [--delay FILE] [--seeds 3] [--windows 15,30,60]

Works on any recording `satcc trace fit` reads with a delay series (a LeoReplayer trace with
its delay file, a `ping -D` log, ...), so also on those `--validate` cannot replay (no 1 ms
delivery series: a ping log). Two parts:

1. The split: the recording cut at its middle in time; each half fitted as `satcc trace fit
   --dir up` does (refined), its model sampled (seeds 1..N) for the other half's length and
   compared with both halves: the path's RTT median and p95 (2 x the one-way delay; a ping's:
   its round trip), its probe loss (when it has probes) and its mean delivery (when it has a
   delivery series). The model's delay is rounded to whole ms when the fitted half's is.
2. The window spread: the recording's own non-overlapping windows of each length (as many as
   fit), and the whole recording's fitted model (a stationary path by construction) sampled
   for 1200 s and cut the same way: sd / mean of each measure across windows. A held-out window
   of length L differs from a model of the same path by about the stationary model's spread at
   L (sampling alone); where the recording's windows spread more than its stationary model's,
   the path moved between windows in a way the model does not carry.

Nothing is fitted to the held-out half; the figures are measurements of `satcc trace fit`'s
models.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from satcc import tracefit as tf


def cut(rec: tf.Recording, a_ms: float, b_ms: float, name: str) -> tf.Recording:
    """The recording's part in [a_ms, b_ms), every series shifted to start at 0."""
    h = replace(rec, source=f"{rec.source} ({name})", notes=[])
    if rec.cap_ms is not None:
        h.cap_ms = rec.cap_ms[int(a_ms) : int(b_ms)]
    if rec.delay_t_ms is not None:
        k = (rec.delay_t_ms >= a_ms) & (rec.delay_t_ms < b_ms)
        h.delay_t_ms, h.delay_ms = rec.delay_t_ms[k] - a_ms, rec.delay_ms[k]
    if rec.probe_t_ms is not None:
        k = (rec.probe_t_ms >= a_ms) & (rec.probe_t_ms < b_ms)
        h.probe_t_ms, h.lost = rec.probe_t_ms[k] - a_ms, rec.lost[k]
        if rec.lost_where is not None:
            h.lost_where = rec.lost_where[k]
    if rec.phase_ms is not None:
        h.phase_ms = round((rec.phase_ms - a_ms) % tf.PERIOD_MS)
    return h


def measures(rec: tf.Recording) -> dict[str, float]:
    """RTT median and p95 (ms), probe loss, mean delivery (Mbit/s) of a recording."""
    rtt = 2 * rec.delay_ms
    out = {"rtt_p50": float(np.median(rtt)), "rtt_p95": float(np.percentile(rtt, 95))}
    if rec.lost is not None and len(rec.lost):
        out["loss"] = float(np.mean(rec.lost))
    if rec.cap_ms is not None and rec.cap_step_ms == 1:
        out["mbps"] = float(rec.cap_ms.mean() * 8 / 1e3)
    return out


def model_recording(model: dict, like: tf.Recording, seconds: int, seed: int) -> tf.Recording:
    """The model sampled as `like` was recorded: its delay at `like`'s delay step (a round
    trip's half when `like`'s is), whole ms when `like`'s are; probes at `like`'s interval,
    lost on the way out or back (a round trip) as `tracefit.model_statistics` draws them."""
    both = tf.model_samples_both(model, seconds, seed)
    s = both["ab"]
    delay = s["delay_ns"] / 1e6
    if like.delay_round_trip:
        delay = (s["delay_ns"] + both["ba"]["delay_ns"]) / 2e6
    step = float(np.median(np.diff(like.delay_t_ms)))
    t = np.arange(0.0, seconds * 1000, step)
    idx = np.clip(np.searchsorted(s["t_ns"] / 1e6, t, side="right") - 1, 0, len(delay) - 1)
    d = delay[idx]
    if tf._whole_ms(like.delay_ms):
        d = np.round(d)
    m = tf.Recording("model", delay_t_ms=t, delay_ms=d)
    if like.cap_ms is not None:
        m.cap_ms = s["rate_bps"] * 0.001 / 8
    if like.lost is not None and len(like.lost):
        rng = np.random.default_rng(seed)
        idle = (s["rate_bps"] <= 0) | (both["ba"]["rate_bps"] <= 0)
        lost = rng.random(len(t)) < s["loss"][idx]
        if like.delay_round_trip:
            lost |= rng.random(len(t)) < both["ba"]["loss"][idx]
        # an outage (idle OUTAGE_MIN_MS or more) loses the probes in it
        run = np.zeros(len(idle), int)
        for k in range(1, len(idle)):
            run[k] = run[k - 1] + 1 if idle[k] else 0
        out = np.zeros(len(idle), bool)
        k = len(idle) - 1
        while k >= 0:
            if run[k] >= tf.OUTAGE_MIN_MS:
                out[k - run[k] + 1 : k + 1] = True
                k -= run[k]
            else:
                k -= 1
        m.lost = lost | out[np.clip(t.astype(int), 0, len(out) - 1)]
        m.probe_t_ms = t
    return m


def fit(rec: tf.Recording) -> dict:
    """The recording's refined model, as `satcc trace fit --dir up` fits it."""
    stats = tf.statistics(rec, tf.find_phase(rec))
    model, _ = tf.fit(stats, "up")
    step = float(np.median(np.diff(rec.delay_t_ms))) / 1000
    model, _ = tf.refine(
        model, stats, side="ab", round_trip=rec.delay_round_trip, interval_s=min(step, 0.01)
    )
    if "capacity" in model:
        model["capacity_ba"] = model["capacity"]
    return model


def pct(a: float, b: float) -> str:
    return f"{100 * (a / b - 1):+.1f} %" if b else "n/a"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("recording", type=Path)
    p.add_argument("--delay", type=Path)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--windows", default="15,30,60")
    a = p.parse_args()
    rec = tf.read_recording(a.recording, a.delay)
    span = rec.span_ms()
    mid = span / 2
    hs = [cut(rec, 0, mid, "first half"), cut(rec, mid, span + 1, "second half")]
    truth = [measures(h) for h in hs]
    secs = int(mid // 1000)
    print(f"{rec.source}: {span / 1000:.1f} s, read as {rec.kind}")
    for name, t in zip(("first", "second"), truth, strict=True):
        print(f"{name} half: " + ", ".join(f"{k} {v:.4g}" for k, v in t.items()))
    print("\n| fit → compared with | measure | model (seed mean) | half | diff |")
    print("|---|---|---|---|---|")
    for i, h in enumerate(hs):
        model = fit(h)
        got = [measures(model_recording(model, h, secs, s)) for s in range(1, a.seeds + 1)]
        mean = {k: float(np.mean([g[k] for g in got])) for k in got[0]}
        for j, what in ((i, "in sample"), (1 - i, "held out")):
            for k, v in mean.items():
                split = f"{('first', 'second')[i]} → {('first', 'second')[j]} ({what})"
                print(f"| {split} | {k} | {v:.4g} | {truth[j][k]:.4g} | {pct(v, truth[j][k])} |")
    whole = fit(rec)
    long_s = 1200
    runs = [model_recording(whole, rec, long_s, s) for s in range(1, a.seeds + 1)]
    print(
        "\n| window | windows (recording / model) | measure | recording sd/mean | model sd/mean |"
    )
    print("|---|---|---|---|---|")
    for w in (int(x) for x in a.windows.split(",")):
        n = int(span // (w * 1000))
        if n < 2:
            continue
        r = [measures(cut(rec, k * w * 1000, (k + 1) * w * 1000, "w")) for k in range(n)]
        m = [
            measures(cut(run, k * w * 1000, (k + 1) * w * 1000, "w"))
            for run in runs
            for k in range(long_s // w)
        ]
        for key in r[0]:
            rv = np.array([x[key] for x in r])
            mv = np.array([x[key] for x in m])
            print(
                f"| {w} s | {n} / {len(m)} | {key} | {rv.std(ddof=1) / rv.mean():.3f} | "
                f"{mv.std(ddof=1) / mv.mean():.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
