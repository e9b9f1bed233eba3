"""How much a CCA's figures spread across windows of one path, by window length (issue 41).

    python bench/starlink/window_spread.py BW_TRACE DELAY_FILE [--windows 30,60,120,240]
        [--count 12] [--cca cubic,bbr,vegas]

The recording's own non-overlapping windows of each length (as many as fit; each replayed as
`satcc trace fit --validate` replays a half: its Mahimahi opportunities and delay rows, the
validate's loss and 500-packet queue, seeds 1-3 averaged), and windows of the whole
recording's fitted model (refined, as --validate fits a half; a stationary path by
construction) rendered on the recording's grid (`tracefit.on_grid`), one independent window
per seed 1..count. Per CCA and length: the windows' goodput and smoothed-RTT median, their
mean, sd / mean and the largest ratio between two windows.

A held-out window of length L can differ from a perfect model of a stationary path by about
the model's spread at L; where that spread shrinks with L, a longer held-out window tells the
model's bias from the path's own sampling. Where the recording's windows spread more than the
model's at the same L, the path changed between them more than the stationary model does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from satcc import tracefit as tf


def spread(v: list[float]) -> str:
    a = np.asarray(v)
    return (
        f"mean {a.mean():.2f}, sd/mean {100 * a.std(ddof=1) / a.mean():.1f} %, "
        f"max/min {a.max() / a.min():.2f}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--windows", default="30,60,120,240")
    p.add_argument("--count", type=int, default=12)
    p.add_argument("--cca", default="cubic,bbr,vegas")
    a = p.parse_args()
    ccas = a.cca.split(",")
    rec = tf.read_recording(a.bw, a.delay)
    n = len(rec.cap_ms)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trace, csv = tf._write_replay(tmp / "whole", rec.cap_ms, rec.delay_t_ms, rec.delay_ms)
        whole = tf.Half("whole", rec, trace, csv, n // 1000)
        model = tf.fit_half(whole)
        loss = float(np.mean(model["loss"]))
        model = model | {"loss": [loss, loss], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
        print(f"whole recording's model: {model}", flush=True)
        for w in (int(x) for x in a.windows.split(",")):
            rec_paths = []
            for k in range(n // (w * 1000)):
                lo, hi = k * w * 1000, (k + 1) * w * 1000
                keep = (rec.delay_t_ms >= lo) & (rec.delay_t_ms < hi)
                t, _ = tf._write_replay(
                    tmp / f"rec-{w}-{k}",
                    rec.cap_ms[lo:hi],
                    rec.delay_t_ms[keep] - lo,
                    rec.delay_ms[keep],
                )
                rec_paths.append(tf._trace_model(t, loss))
            count = a.count if w <= 60 else max(4, a.count * 60 // w)
            mod_paths = [
                tf._trace_model(tf.on_grid(model, whole, w, seed, tmp), loss)
                for seed in range(1, count + 1)
            ]
            for cca in ccas:
                rg, rr = [], []
                for path in rec_paths:
                    runs = np.asarray([tf._flow_run(path, cca, w, s) for s in (1, 2, 3)])
                    rg.append(runs[:, 0].mean())
                    rr.append(runs[:, 1].mean())
                mg, mr = [], []
                for seed, path in enumerate(mod_paths, 1):
                    r = tf._flow_run(path, cca, w, seed)
                    mg.append(r[0])
                    mr.append(r[1])
                line = f"{w} s {cca}: model ({count} windows) goodput {spread(mg)}; RTT median "
                line += spread(mr)
                if len(rg) >= 2:
                    line += (
                        f" | recording ({len(rg)} windows) goodput {spread(rg)} "
                        f"{[round(x, 2) for x in rg]}; RTT median {spread(rr)}"
                    )
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
