"""Which of the halves' differences moves a CCA's goodput on the fitted model (issue 26): fit
the Starlink model on each part of a recording, then run the CCA over the model fitted on one
part with one group of knobs taken from the other part's fit, seeds 1..N.

    python bench/starlink/attribute.py BW_TRACE DELAY_FILE [--split 60] [--seeds 5]
        [--cca vegas] [--base last]

Each row: the group, its knobs on the base part and on the other, and the CCA's goodput and mean
RTT (seed mean and range) with that group swapped in. The first and last rows are the two fits
unchanged. Recording and paths as predict.py (the same loss, queue and trace both ways).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import predict

GROUPS = {
    "epoch capacity": ("capacity", "capacity_ba"),
    "capacity process": ("capacity_sigma", "capacity_corr"),
    "frame windows": ("frame_offset_sd", "frame_offset_corr", "frame_duty"),
    "frame sizes": ("frame_sigma",),
    "epoch RTT": ("rtt_quantiles",),
    "jitter": ("jitter", "jitter_corr", "jitter_floor"),
    "boundary outage": ("disturbance",),
}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--split", type=int, default=60)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--cca", default="vegas")
    p.add_argument("--base", choices=("first", "last"), default="last", help="the part whose fit")
    a = p.parse_args()
    other = "first" if a.base == "last" else "last"
    with tempfile.TemporaryDirectory() as tmp:
        ps = predict.parts(a.bw, a.delay, a.split, Path(tmp))
        fits = {n: predict.fit_part(ps[n][0], ps[n][1])[0] for n in ("first", "last")}
        dur = int(np.loadtxt(ps[a.base][0], dtype=np.int64)[-1] // 1000)

        def run(model: dict) -> tuple[list[float], list[float]]:
            rs = [
                predict.measure(predict.scenario(model, {}, a.cca, dur, s))
                for s in range(1, a.seeds + 1)
            ]
            return [r[0] for r in rs], [r[1] for r in rs]

        rows = [(f"{a.base} fit", "", "", run(fits[a.base]))]
        for name, keys in GROUPS.items():
            m = dict(fits[a.base]) | {k: fits[other][k] for k in keys if k in fits[other]}
            b = {k: fits[a.base].get(k) for k in keys}
            o = {k: fits[other].get(k) for k in keys}
            rows.append((f"+ {other}'s {name}", json.dumps(b), json.dumps(o), run(m)))
        rows.append((f"{other} fit", "", "", run(fits[other])))
        print(f"{a.cca} over the model fitted on the {a.base} part ({dur} s, seeds 1-{a.seeds})")
        print(f"| model | knobs ({a.base}) | knobs ({other}) | goodput | mean RTT |")
        print("|---|---|---|---|---|")
        for name, b, o, (g, r) in rows:
            print(
                f"| {name} | {b} | {o} | {predict._spread(g, 'Mbit/s')} "
                f"| {predict._spread(r, 'ms')} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
