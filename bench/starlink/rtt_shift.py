"""How a CCA's goodput answers a shift of the path's RTT level (issue 26): the replay of each
part of a recording with its one-way delay moved by -1 / 0 / +1 / +2 ms, and the model fitted on
that part with its epoch RTT quantiles moved by -2 / 0 / +2 / +4 ms (seeds 1..N, means).

    python bench/starlink/rtt_shift.py BW_TRACE DELAY_FILE [--split 60] [--seeds 5] [--cca vegas]

Recording and paths as predict.py (the same loss, queue and trace both ways).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import predict

REPLAY_SHIFTS_MS = (-1.0, 0.0, 1.0, 2.0)  # one way
MODEL_SHIFTS_MS = (-2.0, 0.0, 2.0, 4.0)  # RTT


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--split", type=int, default=60)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--cca", default="vegas")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ps = predict.parts(a.bw, a.delay, a.split, tmp)

        def run(model: dict, dur: int) -> tuple[float, float]:
            rs = [
                predict.measure(predict.scenario(model, {}, a.cca, dur, s))
                for s in range(1, a.seeds + 1)
            ]
            return float(np.mean([r[0] for r in rs])), float(np.mean([r[1] for r in rs]))

        print(f"| part | path | shift | {a.cca} goodput | mean RTT |\n|---|---|---|---|---|")
        for part, (bw, delay, csv) in ps.items():
            dur = int(np.loadtxt(bw, dtype=np.int64)[-1] // 1000)
            d = np.loadtxt(csv, delimiter=",", skiprows=1)
            for shift in REPLAY_SHIFTS_MS:
                moved = tmp / f"{part}{shift:+g}.csv"
                rows = ["t_ms,delay_ms"] + [f"{int(t)},{x + shift:g}" for t, x in d]
                moved.write_text("\n".join(rows) + "\n")
                g, r = run(predict.replay_model(bw, moved), dur)
                print(f"| {part} | replay | {shift:+g} ms one way | {g:.2f} Mbit/s | {r:.2f} ms |")
            fitted = predict.fit_part(bw, delay)[0]
            q = [float(x.split()[0]) for x in fitted["rtt_quantiles"]]
            for shift in MODEL_SHIFTS_MS:
                m = fitted | {"rtt_quantiles": [f"{x + shift:.3g} ms" for x in q]}
                g, r = run(m, dur)
                print(f"| {part} | fitted | {shift:+g} ms RTT | {g:.2f} Mbit/s | {r:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
