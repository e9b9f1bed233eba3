"""Is the halves' difference in how deep the delay's low part reaches (LeoCC: 1.22 / 1.63 ms
one way) something a stationary model of the whole recording produces by chance, or does the
path change its low part from epoch to epoch more than the model does? (issue 41)

    python bench/starlink/depth_spread.py BW_TRACE DELAY_FILE [--seconds 900] [--seeds 3]

Path statistics only (no TCP run). Per piece (whole and partial epochs past the disturbance,
as tracefit._pieces cuts them) the depth: the level (10 % trimmed mean of the one-way delay)
minus the mean of its lowest 20 % (`rtt_low20` / 2). Printed for the recording's pieces, and
for the whole recording's refined fit (and each half's) sampled for --seconds at the
recording's grid (10 ms rows, rounded to whole ms, as tracefit.on_grid renders it), seeds
1..N: the per-epoch depths' mean, sd, range and quantiles; and the depth of 60 s windows cut
as the recording's halves are (pieces weighted by length), to compare with the halves' own.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from satcc import tracefit as tf


def piece_depths(t: np.ndarray, d: np.ndarray, pieces) -> tuple[np.ndarray, np.ndarray]:
    vals, w = [], []
    for a, b, skip in pieces:
        s = np.sort(d[(t >= a + skip) & (t < b)])
        if len(s) < 50:
            continue
        vals.append(tf._level(s) - s[: max(len(s) // 5, 1)].mean())
        w.append(b - a)
    return np.asarray(vals), np.asarray(w, dtype=float)


def describe(name: str, v: np.ndarray) -> str:
    q = np.quantile(v, [0.1, 0.5, 0.9])
    return (
        f"{name}: n {len(v)}, mean {v.mean():.3f}, sd {v.std(ddof=1):.3f}, "
        f"min {v.min():.2f}, p10/p50/p90 {q[0]:.2f}/{q[1]:.2f}/{q[2]:.2f}, max {v.max():.2f} ms"
    )


def render(model: dict, seconds: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bytes per ms, t_ms, whole-ms one-way delay every 10 ms), as tracefit.on_grid renders
    the model for the LeoCC recording's grid."""
    s = tf.model_samples(model, seconds, seed)
    t = np.arange(0.0, seconds * 1000, 10.0)
    idx = np.searchsorted(s["t_ns"] / 1e6, t, side="right") - 1
    return s["rate_bps"] / 8 / 1000, t, np.round(s["delay_ns"][np.clip(idx, 0, None)] / 1e6)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--seconds", type=int, default=900)
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args()
    rec = tf.read_recording(a.bw, a.delay)
    phase = tf.find_phase(rec)
    n_ms = len(rec.cap_ms)
    v, _ = piece_depths(rec.delay_t_ms, rec.delay_ms, tf._pieces(n_ms, phase))
    print("recording pieces:", " ".join(f"{x:.2f}" for x in v))
    print(describe("recording, per piece", v))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hs = tf.halves(rec, tmp)
        for h in hs:
            hp = tf._pieces(len(h.rec.cap_ms), tf.find_phase(h.rec))
            hv, hw = piece_depths(h.rec.delay_t_ms, h.rec.delay_ms, hp)
            print(
                f"{h.name} half: pieces {' '.join(f'{x:.2f}' for x in hv)}, "
                f"weighted {np.average(hv, weights=hw):.3f} ms"
            )
        whole = tf.Half("whole", rec, tmp / "u", tmp / "u", n_ms // 1000)
        fits = {"whole": tf.fit_half(whole)} | {h.name: tf.fit_half(h) for h in hs}
        t = np.arange(0.0, a.seconds * 1000, 10.0)
        for name, m in fits.items():
            print(
                f"{name} fit: jitter {m['jitter']}, jitter_floor {m['jitter_floor']}, "
                f"jitter_corr {m.get('jitter_corr')}"
            )
            per, win = [], []
            for seed in range(1, a.seeds + 1):
                d = render(m, a.seconds, seed)[2]
                pieces = tf._pieces(a.seconds * 1000, tf.PHASE_WALL_MS)
                pv, _ = piece_depths(t, d, pieces)
                per.append(pv[1:-1])  # whole epochs
                # 60 s windows cut at the recording's own phase in them (8.7 s to the first boundary)
                off = tf.PHASE_WALL_MS - phase
                for w0 in range(off, a.seconds * 1000 - 60_000 + 1, 60_000):
                    sel = (t >= w0) & (t < w0 + 60_000)
                    wp = tf._pieces(60_000, phase)
                    wv, ww = piece_depths(t[sel] - w0, d[sel], wp)
                    win.append(np.average(wv, weights=ww))
            per_a, win_a = np.concatenate(per), np.asarray(win)
            print(describe(f"  {name} model, per epoch", per_a))
            print(describe(f"  {name} model, 60 s windows", win_a))
            lo, hi = 1.22, 1.63
            print(
                f"  {name} model: 60 s windows <= {lo} ms {np.mean(win_a <= lo):.3f}, >= {hi} ms "
                f"{np.mean(win_a >= hi):.3f}; window pairs differing by >= {hi - lo:.2f} ms "
                f"{np.mean(np.abs(np.diff(win_a)) >= hi - lo):.3f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
