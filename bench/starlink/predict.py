"""Validation by prediction (issue 26): fit the Starlink model on one part of a recording,
then run CUBIC, BBR and Vegas in the simulator over (a) the fitted model and (b) the trace
replay of the other part, and compare goodput and mean RTT per CCA.

    python bench/starlink/predict.py BW_TRACE DELAY_FILE [--split 60] [--seeds 3]

BW_TRACE / DELAY_FILE: a LeoReplayer recording (SpaceNetLab/LeoCC
leoreplayer/replayer/example/Cubic/bw_example.txt and delay_example.txt; fetch them, they are
not in this repository). The replay follows LeoReplayer's example run.sh: the same trace and
delay in both directions, uplink loss 0.002 on the data direction, a 500-packet droptail queue.
The fitted model gets the same loss and queue, so only the path's variation differs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from satcc import api
from satcc import tracefit as tf

CCAS = ("cubic", "bbr", "vegas")
LOSS = 0.002  # LeoReplayer example run.sh UPLINK_LOSS_RATE
QUEUE = "500 pkt"  # LeoReplayer example run.sh PACKET_LENGTH


def split(
    bw: Path, delay: Path, at_s: int, out: Path, reverse: bool = False
) -> tuple[Path, Path, Path, Path]:
    stamps = np.loadtxt(bw, dtype=np.int64)
    d = np.loadtxt(delay)
    cut = at_s * 1000
    parts = [(stamps[stamps <= cut], d[: cut // 10]), (stamps[stamps > cut] - cut, d[cut // 10 :])]
    (fit_s, fit_d), (rep_s, rep_d) = parts[::-1] if reverse else parts
    paths = [out / n for n in ("fit.mahimahi", "fit-delay.txt", "replay.mahimahi", "replay.csv")]
    paths[0].write_text("\n".join(map(str, fit_s)) + "\n")
    paths[1].write_text("\n".join(f"{x:g}" for x in fit_d) + "\n")
    paths[2].write_text("\n".join(map(str, rep_s)) + "\n")
    rows = ["t_ms,delay_ms"] + [f"{i * 10},{x:g}" for i, x in enumerate(rep_d)]
    paths[3].write_text("\n".join(rows) + "\n")
    return tuple(paths)  # type: ignore[return-value]


def scenario(model_ab: dict, model_ba: dict, cca: str, duration_s: int, seed: int) -> dict:
    return {
        "scenario": {"name": f"predict-{cca}", "duration": f"{duration_s} s", "seed": seed},
        "link": [{"a": "a", "b": "b", "model": model_ab | model_ba, "queue": QUEUE}],
        "flow": [{"name": cca, "from": "a", "to": "b", "cca": cca}],
    }


def measure(doc: dict, engine: str = "sim") -> tuple[float, float]:
    r = api.run(doc, engine=engine)
    row = r.summary.iloc[0]
    return float(row["goodput_bps"]) / 1e6, float(row["rtt_mean_ms"])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--split", type=int, default=60, help="seconds fitted (the rest is replayed)")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--reverse", action="store_true", help="fit the part after --split instead")
    p.add_argument(
        "--engine",
        choices=("sim", "emu"),
        default="sim",
        help="emu: through the kernel (satcc-linkd; run under flock /tmp/satcc-emu.lock)",
    )
    p.add_argument("--ccas", default=",".join(CCAS), help="comma-separated (default: all three)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fit_bw, fit_delay, rep_bw, rep_csv = split(a.bw, a.delay, a.split, Path(tmp), a.reverse)
        rec = tf.read_recording(fit_bw, fit_delay)
        stats = tf.statistics(rec, tf.find_phase(rec))
        fitted, _missing = tf.fit(stats)
        fitted, _ = tf.refine(fitted, stats)  # as `satcc trace fit` does
        fitted |= {"loss": [LOSS, LOSS], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
        fitted["capacity_ba"] = fitted["capacity"]
        replay_dur = int(np.loadtxt(rep_bw, dtype=np.int64)[-1] // 1000)
        replay = {
            "kind": "trace",
            "mahimahi": str(rep_bw),
            "delay_csv": str(rep_csv),
            "loss": LOSS,
            "loss_ba": 0.0,
        }
        print("fitted:", json.dumps(fitted), file=sys.stderr)
        rows = []
        for cca in a.ccas.split(","):
            g_rep, r_rep = measure(scenario(replay, {}, cca, replay_dur, 1), a.engine)
            fits = [
                measure(scenario(fitted, {}, cca, replay_dur, s), a.engine)
                for s in range(1, a.seeds + 1)
            ]
            g_fit = float(np.mean([f[0] for f in fits]))
            r_fit = float(np.mean([f[1] for f in fits]))
            rows.append((cca, g_rep, g_fit, r_rep, r_fit))
        which = ("last", "first") if a.reverse else ("first", "remaining")
        print(
            f"engine {a.engine}: fit on the {which[0]} part (split at {a.split} s), "
            f"replay of the {which[1]} {replay_dur} s"
        )
        print(
            "| CCA | goodput replay | goodput fitted | diff | mean RTT replay | mean RTT fitted | diff |"
        )
        print("|---|---|---|---|---|---|---|")
        for cca, g1, g2, r1, r2 in rows:
            print(
                f"| {cca} | {g1:.2f} Mbit/s | {g2:.2f} Mbit/s | {100 * (g2 / g1 - 1):+.1f} % "
                f"| {r1:.1f} ms | {r2:.1f} ms | {100 * (r2 / r1 - 1):+.1f} % |"
            )
        rank = lambda i: [c for c, *_ in sorted(rows, key=lambda r: -r[i])]
        print(f"goodput ranking: replay {rank(1)}, fitted {rank(2)}")
        print(f"mean-RTT ranking: replay {rank(3)}, fitted {rank(4)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
