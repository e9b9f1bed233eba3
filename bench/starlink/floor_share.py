"""How often a path's delay sits at its floor (issue 41): per 10 ms slot, the one-way delay's
residual below its epoch median (past the 300 ms disturbance), its lowest value and the share
of slots there; the RTT as two successive slots (out, then back) likewise, and the share within
2 ms of its floor, and the RTT's lowest value in each second (what a delay-based CCA that re-learns
its base RTT about once a second can read: p10 / p50 / p90 over the seconds). For the recording's halves (a LeoReplayer delay file, 10 ms a value) and for
a fitted model (`--model`, a `[link.model]` as JSON, e.g. vegas_probe.py's `fitted:` line),
its delay continuous and rounded to whole ms as the recording's is.

    python bench/starlink/floor_share.py DELAY_FILE --model JSON [--seconds 120]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from satcc import tracefit as tf


def shares(t_ms: np.ndarray, d: np.ndarray, phase_ms: int) -> dict[str, float]:
    grid = np.arange(0, t_ms[-1], tf.DELAY_STEP_MS)
    g = d[np.clip(np.searchsorted(t_ms, grid, side="right") - 1, 0, None)]
    ow, rtt, lows = [], [], []
    for a, b in tf._epochs(len(g) * tf.DELAY_STEP_MS, phase_ms):
        seg = g[(a + tf.SKIP_MS) // tf.DELAY_STEP_MS : b // tf.DELAY_STEP_MS]
        med = np.median(seg)
        ow.append(seg - med)
        rtt.append(seg[:-1] + seg[1:] - 2 * med)
        per_s = 1000 // tf.DELAY_STEP_MS
        lows += [rtt[-1][i : i + per_s].min() for i in range(0, len(rtt[-1]) - per_s + 1, per_s)]
    r, q = np.concatenate(ow), np.concatenate(rtt)
    return {
        "ow_floor_ms": float(r.min()),
        "ow_at_floor": float((r <= r.min() + 1e-6).mean()),
        "rtt_floor_ms": float(q.min()),
        "rtt_at_floor": float((q <= q.min() + 1e-6).mean()),
        "rtt_within_2ms": float((q <= q.min() + 2 + 1e-6).mean()),
        "rtt_low_1s_p10_p50_p90": [round(float(x), 2) for x in np.percentile(lows, [10, 50, 90])],
    }


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("delay", type=Path)
    p.add_argument("--model", required=True)
    p.add_argument("--seconds", type=int, default=120)
    a = p.parse_args()
    d = np.loadtxt(a.delay)
    half = len(d) // 2
    for name, seg in (("recording first half", d[:half]), ("recording second half", d[half:])):
        rec = tf.Recording(name, delay_t_ms=np.arange(len(seg)) * 10.0, delay_ms=seg)
        print(name, json.dumps(shares(rec.delay_t_ms, seg, tf.find_phase(rec))))
    s = tf.model_samples(json.loads(a.model), a.seconds, 1)
    t, dm = s["t_ns"] / 1e6, s["delay_ns"] / 1e6
    print("model continuous", json.dumps(shares(t, dm, tf.PHASE_WALL_MS)))
    print("model whole ms", json.dumps(shares(t, np.round(dm), tf.PHASE_WALL_MS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
