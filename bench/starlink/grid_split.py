"""What remains of `satcc trace fit --validate`'s on-grid miss, per mechanism (issue 41).

    python bench/starlink/grid_split.py BW_TRACE DELAY_FILE [--seeds 3] [--cca cubic,bbr,vegas]

The halves and fitted models are --validate's own (tracefit.halves, fit_half: refined). Each
half's model, rendered on the recording's grid (tracefit.on_grid, seeds 1..N), is run
against the replay of the half it was fitted on (in sample: no difference between the
halves, so what is left is the model's form and its epoch draws) and against the replay of
the other half (out of sample: --validate's verdict row). The gap between the two is the
halves' difference, which a fit of one half cannot know; the seeds' spread is the draws.
Per seed and CCA: goodput, smoothed-RTT median, least RTT; then the seed means (and the
RTT p95) and model / replay - 1. First, each half's one-way delay (p1, its level: the 10 % trimmed mean, whole and per epoch).

Nothing here is shifted or tuned toward a half: the figures are measurements of the models
--validate fits.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from satcc import tracefit as tf


def mbps(opportunities: int, ms: int) -> float:
    """Mean rate of `opportunities` 1500-byte deliveries over `ms`."""
    return opportunities * 1500 * 8 / ms / 1e3


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--cca", default="cubic,bbr,vegas")
    a = p.parse_args()
    ccas = a.cca.split(",")
    rec = tf.read_recording(a.bw, a.delay)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hs = tf.halves(rec, tmp)
        for h in hs:
            d = h.rec.delay_ms
            levels = [
                round(tf._level(d[(h.rec.delay_t_ms >= s) & (h.rec.delay_t_ms < e)]), 2)
                for s, e in tf._epochs(len(h.rec.cap_ms), tf.find_phase(h.rec))
            ]
            print(
                f"{h.name} half: one-way delay p1 {np.percentile(d, 1):.2f}, mean {d.mean():.2f}"
                f", level (10 % trimmed mean) {tf._level(d):.2f} ms; whole epochs' levels "
                f"{levels}; delivery {mbps(len(np.loadtxt(h.trace)), h.rec.cap_ms.size):.2f} "
                "Mbit/s",
                flush=True,
            )
        for fit_h in hs:
            other = hs[1] if fit_h is hs[0] else hs[0]
            model = tf.fit_half(fit_h)
            loss = float(np.mean(model["loss"]))
            model = model | {"loss": [loss, loss], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
            for rep_h, what in ((fit_h, "in sample"), (other, "out of sample")):
                replay = tf._trace_model(rep_h.trace, loss)
                for cca in ccas:
                    got: dict[str, list] = {"on grid": [], "replay": []}
                    for seed in range(1, a.seeds + 1):
                        trace = tf.on_grid(model, fit_h, rep_h.seconds, seed, tmp)
                        grid = tf._trace_model(trace, loss)
                        if rep_h is fit_h and cca == ccas[0]:
                            g = np.loadtxt(trace.with_suffix(".csv"), delimiter=",", skiprows=1)
                            print(
                                f"fit {fit_h.name} on grid seed {seed}: one-way delay mean "
                                f"{g[:, 1].mean():.2f} ms, delivery "
                                f"{mbps(len(np.loadtxt(trace)), rep_h.seconds * 1000):.2f} Mbit/s",
                                flush=True,
                            )
                        for kind, m in (("on grid", grid), ("replay", replay)):
                            r = tf._flow_run(m, cca, rep_h.seconds, seed)
                            got[kind].append(r)
                            print(
                                f"fit {fit_h.name} -> {rep_h.name} ({what}) {cca} seed {seed} "
                                f"{kind}: goodput {r[0]:.2f} Mbit/s, RTT median {r[1]:.2f}, "
                                f"least {r[3]:.2f} ms",
                                flush=True,
                            )
                    g, r = (np.asarray(got[k]).mean(axis=0) for k in ("on grid", "replay"))
                    gs = np.asarray(got["on grid"])[:, 0]
                    print(
                        f"== fit {fit_h.name} -> {rep_h.name} ({what}) {cca}: goodput "
                        f"{g[0]:.2f} / {r[0]:.2f} ({100 * (g[0] / r[0] - 1):+.1f} %; on-grid "
                        f"seeds {gs.min():.2f}-{gs.max():.2f}), RTT median {g[1]:.2f} / "
                        f"{r[1]:.2f} ({100 * (g[1] / r[1] - 1):+.1f} %), RTT p95 {g[2]:.2f} / "
                        f"{r[2]:.2f} ({100 * (g[2] / r[2] - 1):+.1f} %), least {g[3]:.2f} / "
                        f"{r[3]:.2f} ms",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
