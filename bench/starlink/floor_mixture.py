"""Hypothesis (issue 41): the path's delay floor is not one scalar but changes from epoch to
epoch; a model drawing it per epoch from a fitted law matches the recording's spread of
per-epoch low parts, and says how far apart two 60 s halves of one stationary path fall for
Vegas. Path statistics only for the fit; Vegas is run only to judge.

    python bench/starlink/floor_mixture.py BW_TRACE DELAY_FILE [--windows 12] [--seconds 600]
    python bench/starlink/floor_mixture.py BW_TRACE DELAY_FILE --split [--seeds 3]

1. The whole recording's refined fit (tracefit.fit_half of the whole, as --validate fits a
   half). Its delay is rendered on the recording's grid (10 ms rows, whole ms: as
   tracefit.on_grid) with jitter_floor set to each of FLOORS, seeds 1-3, --seconds each. The
   jitter's z are drawn from streams keyed by (seed, epoch) whatever the floor (the clip is
   applied to each sample), so a model whose floor is drawn per epoch is exactly these
   renderings spliced epoch by epoch.
2. The depth (level - mean of the lowest 20 %, one way, past the disturbance) of every whole
   epoch: the recording's against the scalar model's and against a per-epoch floor
   F x exp(s z - s^2 / 2), z a unit normal per (seed, epoch), rounded to the nearest of
   FLOORS; (F, s) chosen on a grid so that the epochs' depth mean and sd meet the
   recording's whole epochs'.
3. Vegas over --windows independent 60 s windows of each model (seeds 1..N, rendered on the
   grid, replayed as --validate replays a half: its loss and queue): the windows' mean, sd,
   range, and the share of window pairs whose goodput ratio is at least the halves' (LeoCC:
   5.32 / 4.29 = 1.24).

`--split`: --validate's test with the per-epoch floor. Each half's refined fit
(tracefit.fit_half), its (F, s) chosen as in 2 on the depths of the half's own pieces (whole
and partial epochs: a half holds three whole ones), rendered on the grid for the other half's
length with the floor drawn per epoch (seeds 1..N), replayed as --validate replays; CUBIC, BBR
and Vegas against the replay of the other half (out of sample) and of the half fitted (in
sample), beside the scalar floor's on-grid model (--validate's verdict rows: its floor fitted
to `rtt_low20`, whole epochs only) and a scalar floor meeting the pieces' mean depth (so the
per-epoch law's spread is told from its mean).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np

from satcc import tracefit as tf

sys.path.insert(0, str(Path(__file__).parent))
from depth_spread import piece_depths, render

FLOORS = (0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.3, 2.6, 3.0, 3.5)


def epoch_depths(t: np.ndarray, d: np.ndarray, n_ms: int, phase: int) -> list[float]:
    """The depth of each whole epoch past its disturbance."""
    return list(piece_depths(t, d, [(a, b, tf.SKIP_MS) for a, b in tf._epochs(n_ms, phase)])[0])


def floor_choice(f0: float, s: float, seed: int, n_epochs: int) -> np.ndarray:
    """Index into FLOORS of each epoch's floor (epoch 0: the piece before the first boundary)."""
    z = np.random.default_rng([seed, 4141]).standard_normal(n_epochs)
    f = f0 * np.exp(s * z - s * s / 2)
    return np.abs(np.log(np.asarray(FLOORS))[None, :] - np.log(f)[:, None]).argmin(axis=1)


def splice(t: np.ndarray, renders: list[np.ndarray], choice: np.ndarray) -> np.ndarray:
    """Each 10 ms row from the rendering of its epoch's floor."""
    k = np.clip((t - tf.PHASE_WALL_MS) // tf.PERIOD_MS + 1, 0, None).astype(int)
    return np.stack(renders)[choice[k], np.arange(len(t))]


def fit_law(model: dict, depths: np.ndarray, seconds: int, seeds=(1, 2, 3), spreads=None):
    """(F, s) on the grid whose per-epoch depths' mean and sd meet `depths`' (s among
    `spreads`: s = 0 is a scalar floor meeting the mean only)."""
    t = np.arange(0.0, seconds * 1000, 10.0)
    n_ep = seconds * 1000 // tf.PERIOD_MS + 2
    dep = {}
    for sd in seeds:
        ren = [render(model | {"jitter_floor": f"{f} ms"}, seconds, sd)[2] for f in FLOORS]
        dep[sd] = np.asarray([epoch_depths(t, d, seconds * 1000, tf.PHASE_WALL_MS) for d in ren])

    def law(f0: float, s: float) -> np.ndarray:
        return np.concatenate(
            [
                dep[sd][
                    floor_choice(f0, s, sd, n_ep)[1 : dep[sd].shape[1] + 1],
                    np.arange(dep[sd].shape[1]),
                ]
                for sd in seeds
            ]
        )

    best = None
    spreads = np.arange(0.0, 1.21, 0.1) if spreads is None else spreads
    for f0, s in itertools.product(np.arange(0.6, 3.01, 0.05), spreads):
        v = law(f0, s)
        err = (v.mean() - depths.mean()) ** 2
        if len(spreads) > 1:
            err += (v.std(ddof=1) - depths.std(ddof=1)) ** 2
        if best is None or err < best[0]:
            best = (err, f0, s, v)
    return best[1], best[2], best[3]


def mixture_grid(model: dict, f0: float, s: float, seconds: int, seed: int, base: Path) -> Path:
    cap, t, _ = render(model, seconds, seed)
    rs = [render(model | {"jitter_floor": f"{f} ms"}, seconds, seed)[2] for f in FLOORS]
    d = splice(t, rs, floor_choice(f0, s, seed, seconds * 1000 // tf.PERIOD_MS + 2))
    return tf._write_replay(base, cap, t, d)[0]


def split(rec: tf.Recording, seeds: int, tmp: Path) -> None:
    hs = tf.halves(rec, tmp)
    replays: dict = {}
    for fit_h in hs:
        other = hs[1] if fit_h is hs[0] else hs[0]
        m = tf.fit_half(fit_h)
        loss = float(np.mean(m["loss"]))
        m |= {"loss": [loss, loss], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
        hp = tf._pieces(len(fit_h.rec.cap_ms), tf.find_phase(fit_h.rec))
        hd, _ = piece_depths(fit_h.rec.delay_t_ms, fit_h.rec.delay_ms, hp)
        f0, s, v = fit_law(m, hd, 600)
        g0, _, v0 = fit_law(m, hd, 600, spreads=[0.0])
        print(
            f"fit {fit_h.name}: jitter {m['jitter']}, scalar jitter_floor {m['jitter_floor']}; "
            f"pieces' depths {' '.join(f'{x:.2f}' for x in hd)} (mean {hd.mean():.3f}, sd "
            f"{hd.std(ddof=1):.3f}); per-epoch floor {f0:.2f} ms x exp({s:.1f} z - ...): "
            f"depth mean {v.mean():.3f}, sd {v.std(ddof=1):.3f} ms; scalar floor at the pieces' "
            f"mean {g0:.2f} ms: depth mean {v0.mean():.3f}, sd {v0.std(ddof=1):.3f} ms",
            flush=True,
        )
        kinds = {"per-epoch": (f0, s), "pieces' scalar": (g0, 0.0)}
        for cca in ("cubic", "bbr", "vegas"):
            got = {k: [] for k in ("scalar", *kinds, "in", "out")}
            for seed in range(1, seeds + 1):
                sc = tf._trace_model(tf.on_grid(m, fit_h, other.seconds, seed, tmp), loss)
                got["scalar"].append(tf._flow_run(sc, cca, other.seconds, seed))
                for kind, (ff, ss) in kinds.items():
                    mx = mixture_grid(m, ff, ss, other.seconds, seed, tmp / f"mix-{seed}")
                    got[kind].append(
                        tf._flow_run(tf._trace_model(mx, loss), cca, other.seconds, seed)
                    )
                for rep, h in (("out", other), ("in", fit_h)):
                    key = (h.name, cca, seed)
                    if key not in replays:
                        replays[key] = tf._flow_run(
                            tf._trace_model(h.trace, loss), cca, h.seconds, seed
                        )
                    got[rep].append(replays[key])
            g = {k: np.mean(v, axis=0) for k, v in got.items()}
            for kind in ("scalar", *kinds):
                for rep in ("out", "in"):
                    x, r = g[kind], g[rep]
                    print(
                        f"fit {fit_h.name} -> {(other if rep == 'out' else fit_h).name} "
                        f"({rep} of sample) {cca} {kind}: goodput {x[0]:.2f} / {r[0]:.2f} "
                        f"({100 * (x[0] / r[0] - 1):+.1f} %), RTT median {x[1]:.2f} / {r[1]:.2f} "
                        f"({100 * (x[1] / r[1] - 1):+.1f} %), p95 {x[2]:.2f} / {r[2]:.2f} "
                        f"({100 * (x[2] / r[2] - 1):+.1f} %), least {x[3]:.2f} / {r[3]:.2f} ms",
                        flush=True,
                    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--seconds", type=int, default=600)
    p.add_argument("--windows", type=int, default=12)
    p.add_argument("--split", action="store_true")
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args()
    rec = tf.read_recording(a.bw, a.delay)
    if a.split:
        with tempfile.TemporaryDirectory() as tmp:
            split(rec, a.seeds, Path(tmp))
        return 0
    n_ms = len(rec.cap_ms)
    rd = np.asarray(epoch_depths(rec.delay_t_ms, rec.delay_ms, n_ms, tf.find_phase(rec)))
    print(
        f"recording, whole epochs: depths {' '.join(f'{x:.2f}' for x in rd)}; mean "
        f"{rd.mean():.3f}, sd {rd.std(ddof=1):.3f} ms",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        whole = tf.Half("whole", rec, tmp / "u", tmp / "u", n_ms // 1000)
        m = tf.fit_half(whole)
        loss = float(np.mean(m["loss"]))
        m |= {"loss": [loss, loss], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
        f_fit = float(m["jitter_floor"].split()[0])
        print(f"whole fit: jitter {m['jitter']}, jitter_floor {m['jitter_floor']}, loss {loss:.4g}")
        seeds = (1, 2, 3)
        n_ep = a.seconds * 1000 // tf.PERIOD_MS + 2
        ren = {
            sd: [render(m | {"jitter_floor": f"{f} ms"}, a.seconds, sd)[2] for f in FLOORS]
            for sd in seeds
        }
        t = np.arange(0.0, a.seconds * 1000, 10.0)
        dep = {
            sd: np.asarray(
                [epoch_depths(t, d, a.seconds * 1000, tf.PHASE_WALL_MS) for d in ren[sd]]
            )
            for sd in seeds
        }  # [floor, epoch]

        def law(f0: float, s: float) -> np.ndarray:
            out = []
            for sd in seeds:
                c = floor_choice(f0, s, sd, n_ep)[1 : dep[sd].shape[1] + 1]
                out.append(dep[sd][c, np.arange(dep[sd].shape[1])])
            return np.concatenate(out)

        scalar = law(f_fit, 0.0)
        print(
            f"scalar floor {f_fit} ms: epochs {len(scalar)}, depth mean {scalar.mean():.3f}, "
            f"sd {scalar.std(ddof=1):.3f}, range {scalar.min():.2f}-{scalar.max():.2f} ms; "
            f"recording's epochs outside that range: "
            f"{int(np.sum((rd < scalar.min()) | (rd > scalar.max())))} of {len(rd)}"
        )
        best = None
        for f0, s in itertools.product(np.arange(0.6, 3.01, 0.1), np.arange(0.0, 1.21, 0.1)):
            v = law(f0, s)
            err = (v.mean() - rd.mean()) ** 2 + (v.std(ddof=1) - rd.std(ddof=1)) ** 2
            if best is None or err < best[0]:
                best = (err, f0, s, v)
        _, f0, s, mix = best
        print(
            f"per-epoch floor {f0:.2f} ms x exp({s:.1f} z - {s:.1f}^2 / 2): depth mean "
            f"{mix.mean():.3f}, sd {mix.std(ddof=1):.3f}, range {mix.min():.2f}-"
            f"{mix.max():.2f} ms; recording's epochs outside that range: "
            f"{int(np.sum((rd < mix.min()) | (rd > mix.max())))} of {len(rd)}",
            flush=True,
        )
        for name, (ff, ss) in (("scalar", (f_fit, 0.0)), ("per-epoch", (f0, s))):
            g = []
            for w in range(1, a.windows + 1):
                cap, tw, _ = render(m, 60, w)
                rs = [render(m | {"jitter_floor": f"{f} ms"}, 60, w)[2] for f in FLOORS]
                d = splice(tw, rs, floor_choice(ff, ss, w, 60_000 // tf.PERIOD_MS + 2))
                trace, _ = tf._write_replay(tmp / f"win-{name}-{w}", cap, tw, d)
                g.append(tf._flow_run(tf._trace_model(trace, loss), "vegas", 60, w)[0])
            g = np.asarray(g)
            ratios = [max(x, y) / min(x, y) for x, y in itertools.combinations(g, 2)]
            print(
                f"{name} model, Vegas over {len(g)} 60 s windows: {' '.join(f'{x:.2f}' for x in g)}"
                f"; mean {g.mean():.2f}, sd {g.std(ddof=1):.2f} ({100 * g.std(ddof=1) / g.mean():.1f} %)"
                f", pairs with ratio >= 1.24: {np.mean(np.asarray(ratios) >= 1.24):.3f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
