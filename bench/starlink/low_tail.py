"""How deep the delay's low part reaches, and what Vegas does with it (issue 41).

    python bench/starlink/low_tail.py BW_TRACE DELAY_FILE                  # the statistic per piece
    python bench/starlink/low_tail.py BW_TRACE DELAY_FILE --replay second --move 0,0.5,1
    python bench/starlink/low_tail.py BW_TRACE DELAY_FILE --model second --floor 1.4,2,2.6

The halves are --validate's (tracefit.halves). Per piece of each half (whole and partial
epochs, past the disturbance): its level (10 % trimmed mean of the one-way delay), the mean of
its lowest 20 % below that level (`rtt_low20` / 2: what sets a delay-based CCA's base RTT),
the share of delays 1.5 ms or more below the level, and the sd.

`--replay HALF --move F,...`: Vegas (seeds 1-3, --validate's loss and queue) over that half's
replay with only its low part moved, nothing else: in every piece a share F of the delay rows
at or below the level - 1.5 ms raised by 1 ms (the second half: toward the first half's
shape) or, for `first`, a share F of the rows between level - 1.5 and level - 0.5 ms lowered
by 1 ms (toward the second's). The rows moved are drawn once (seed 7).

`--model HALF --floor F,...`: Vegas over that half's fitted model rendered on the grid
(tracefit.on_grid, seeds 1-3) with its `jitter_floor` set to F ms, the rest as fitted.

`--whole`: the whole recording's fit (in sample: not a held-out test), rendered on the grid for
60 s (seeds 1-3), against each half's replay, per CCA: what one model between the halves gives.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from satcc import tracefit as tf

SEEDS = (1, 2, 3)


def depth(t: np.ndarray, d: np.ndarray, pieces: list[tuple[int, int, int]]) -> float:
    """Level minus the mean of the lowest 20 %, one way, pieces weighted by length."""
    vals, w = [], []
    for a, b, skip in pieces:
        s = np.sort(d[(t >= a + skip) & (t < b)])
        vals.append(tf._level(s) - s[: max(len(s) // 5, 1)].mean())
        w.append(b - a)
    return float(np.average(vals, weights=w))


def vegas(model: dict, seconds: int) -> list[float]:
    return [tf._flow_run(model, "vegas", seconds, s)[0] for s in SEEDS]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--replay", choices=("first", "second"))
    p.add_argument("--move", default="0,0.5,1")
    p.add_argument("--model", choices=("first", "second"))
    p.add_argument("--floor", default="1.4,2,2.6")
    p.add_argument("--whole", action="store_true")
    a = p.parse_args()
    rec = tf.read_recording(a.bw, a.delay)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hs = {h.name: h for h in tf.halves(rec, tmp)}
        for h in hs.values():
            t, d = h.rec.delay_t_ms, h.rec.delay_ms
            pieces = tf._pieces(len(h.rec.cap_ms), tf.find_phase(h.rec))
            for a0, b0, skip in pieces:
                s = d[(t >= a0 + skip) & (t < b0)]
                lv = tf._level(s)
                low = np.sort(s)[: max(len(s) // 5, 1)].mean()
                print(
                    f"{h.name} {a0 / 1000:5.1f}-{b0 / 1000:5.1f} s: level {lv:.2f} ms, "
                    f"level - lowest 20 % {lv - low:.2f} ms, share <= level - 1.5 ms "
                    f"{np.mean(s <= lv - 1.5):.3f}, sd {s.std():.2f} ms"
                )
            print(f"{h.name}: level - lowest 20 %, pieces weighted {depth(t, d, pieces):.3f} ms")
        if a.replay:
            h = hs[a.replay]
            loss = float(np.mean(tf.fit_half(h, refined=False)["loss"]))
            t, d0 = h.rec.delay_t_ms, h.rec.delay_ms
            pieces = tf._pieces(len(h.rec.cap_ms), tf.find_phase(h.rec))
            u = np.random.default_rng(7).random(len(d0))
            for f in (float(x) for x in a.move.split(",")):
                d = d0.copy()
                for a0, b0, skip in pieces:
                    sel = (t >= a0) & (t < b0)
                    lv = tf._level(d0[sel & (t >= a0 + skip)])
                    if a.replay == "second":
                        d[sel & (d0 <= lv - 1.5) & (u < f)] += 1
                    else:
                        d[sel & (d0 > lv - 1.5) & (d0 <= lv - 0.5) & (u < f)] -= 1
                trace, _ = tf._write_replay(tmp / f"moved-{f}", h.rec.cap_ms, t, d)
                g = vegas(tf._trace_model(trace, loss), h.seconds)
                print(
                    f"{h.name} replay, share moved {f}: level - lowest 20 % "
                    f"{depth(t, d, pieces):.3f} ms, one-way mean {d.mean():.2f} ms; Vegas "
                    f"{[round(x, 2) for x in g]} mean {np.mean(g):.2f} Mbit/s",
                    flush=True,
                )
        if a.model:
            h = hs[a.model]
            m0 = tf.fit_half(h)
            loss = float(np.mean(m0["loss"]))
            m0 |= {"loss": [loss, loss], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
            print(f"{h.name} model: jitter {m0['jitter']}, jitter_floor {m0['jitter_floor']}")
            grid = tf._pieces(h.seconds * 1000, tf.PHASE_WALL_MS)
            for f in (float(x) for x in a.floor.split(",")):
                m = m0 | {"jitter_floor": f"{f:.3g} ms"}
                g, dep = [], []
                for seed in SEEDS:
                    trace = tf.on_grid(m, h, h.seconds, seed, tmp)
                    x = np.loadtxt(trace.with_suffix(".csv"), delimiter=",", skiprows=1)
                    dep.append(depth(x[:, 0], x[:, 1], grid))
                    g.append(
                        tf._flow_run(tf._trace_model(trace, loss), "vegas", h.seconds, seed)[0]
                    )
                seeds = ", ".join(f"{x:.2f}" for x in g)
                what = f"level - lowest 20 % {np.mean(dep):.3f} ms"
                mean = f"{np.mean(g):.2f} Mbit/s"
                print(f"{h.name} model, jitter_floor {f} ms: {what}; Vegas [{seeds}] {mean}")
        if a.whole:
            whole(rec, list(hs.values()), tmp)
    return 0


def whole(rec: tf.Recording, hs: list[tf.Half], tmp: Path) -> None:
    """The whole recording's fit on the grid against each half's replay, per CCA."""
    w = tf.Half("whole", rec, tmp / "unused", tmp / "unused", len(rec.cap_ms) // 1000)
    m = tf.fit_half(w)
    loss = float(np.mean(m["loss"]))
    m |= {"loss": [loss, loss], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
    print(f"whole fit: jitter {m['jitter']}, jitter_floor {m['jitter_floor']}")
    secs = hs[0].seconds
    for cca in ("vegas", "cubic", "bbr"):
        grid = [tf._trace_model(tf.on_grid(m, w, secs, s, tmp), loss) for s in SEEDS]
        g = np.mean([tf._flow_run(x, cca, secs, s) for x, s in zip(grid, SEEDS)], axis=0)
        for h in hs:
            rep = tf._trace_model(h.trace, loss)
            r = np.mean([tf._flow_run(rep, cca, secs, s) for s in SEEDS], axis=0)
            print(
                f"whole-recording model vs {h.name} half, {cca}: goodput {g[0]:.2f} / "
                f"{r[0]:.2f} ({100 * (g[0] / r[0] - 1):+.1f} %), RTT median {g[1]:.2f} / "
                f"{r[1]:.2f} ({100 * (g[1] / r[1] - 1):+.1f} %)"
            )


if __name__ == "__main__":
    sys.exit(main())
