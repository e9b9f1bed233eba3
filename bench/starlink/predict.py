"""Validation by prediction (issue 26): fit the Starlink model on one part of a recording,
then run CUBIC, BBR and Vegas in the simulator over (a) the fitted model and (b) the trace
replay of the other part, and compare goodput and mean RTT per CCA.

    python bench/starlink/predict.py BW_TRACE DELAY_FILE [--split 60] [--seeds 3]
        [--fit first|last] [--replay first|last] [--reverse] [--halves]

BW_TRACE / DELAY_FILE: a LeoReplayer recording (SpaceNetLab/LeoCC
leoreplayer/replayer/example/Cubic/bw_example.txt and delay_example.txt; fetch them, they are
not in this repository). The replay follows LeoReplayer's example run.sh: the same trace and
delay in both directions, uplink loss 0.002 on the data direction, a 500-packet droptail queue.
The fitted model gets the same loss and queue, so only the path's variation differs.

Both the replay (its random loss) and the fitted model (its draws) run with seeds 1..N; each
figure is the seed mean, with the seeds' range. `--fit` / `--replay` pick the parts (the first
part ends at --split): fit first, replay last is the out-of-sample prediction (`--reverse`:
fit last, replay first); the same part for both is the in-sample check. `--halves` prints
each part's statistics and fitted knobs side by side instead of running the CCAs.
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


def parts(bw: Path, delay: Path, at_s: int, out: Path) -> dict[str, tuple[Path, Path, Path]]:
    """Cut the recording at `at_s`: per part its Mahimahi trace, its LeoReplayer delay file
    (for the fit) and its delay CSV (for the replay)."""
    stamps = np.loadtxt(bw, dtype=np.int64)
    d = np.loadtxt(delay)
    cut = at_s * 1000
    cuts = {
        "first": (stamps[stamps <= cut], d[: cut // 10]),
        "last": (stamps[stamps > cut] - cut, d[cut // 10 :]),
    }
    paths = {}
    for name, (st, dd) in cuts.items():
        bw_p, d_p, csv_p = (out / f"{name}{x}" for x in (".mahimahi", "-delay.txt", ".csv"))
        bw_p.write_text("\n".join(map(str, st)) + "\n")
        d_p.write_text("\n".join(f"{x:g}" for x in dd) + "\n")
        rows = ["t_ms,delay_ms"] + [f"{i * 10},{x:g}" for i, x in enumerate(dd)]
        csv_p.write_text("\n".join(rows) + "\n")
        paths[name] = (bw_p, d_p, csv_p)
    return paths


def split(
    bw: Path, delay: Path, at_s: int, out: Path, reverse: bool = False
) -> tuple[Path, Path, Path, Path]:
    """(fit trace, fit delay, replay trace, replay CSV): fit the first part, replay the last
    (`reverse`: the other way round)."""
    p = parts(bw, delay, at_s, out)
    f, r = ("last", "first") if reverse else ("first", "last")
    return p[f][0], p[f][1], p[r][0], p[r][2]


def fit_part(bw: Path, delay: Path) -> tuple[dict, dict]:
    """The fitted `[link.model]` (as `satcc trace fit` gives it, then LeoReplayer's loss on the
    data direction and the same trace both ways) and the part's statistics."""
    rec = tf.read_recording(bw, delay)
    stats = tf.statistics(rec, tf.find_phase(rec))
    # fitted as `satcc trace fit --dir up` does: the flow runs a→b, the dish's side
    fitted, _missing = tf.fit(stats, "up")
    fitted, _ = tf.refine(fitted, stats, side="ab")
    fitted |= {"loss": [LOSS, LOSS], "loss_ba": [0.0, 0.0], "burst_rate": 0.0}
    fitted["capacity_ba"] = fitted["capacity"]
    return fitted, stats


def replay_model(bw: Path, csv: Path) -> dict:
    return {
        "kind": "trace",
        "mahimahi": str(bw),
        "delay_csv": str(csv),
        "loss": LOSS,
        "loss_ba": 0.0,
    }


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


def _spread(xs: list[float], unit: str) -> str:
    return f"{np.mean(xs):.2f} ({min(xs):.2f}–{max(xs):.2f}) {unit}"


HALF_KEYS = (
    "cap100_p10", "cap100_p50", "cap100_p90", "cap_epoch_min", "cap_epoch_max", "cap_cv",
    "cap_corr", "busy_ms_share", "cap_frame_cv", "gap_mean_ms", "gap_p90_ms", "spacing_mean_ms",
    "spacing_sd_ms", "spacing_corr", "rtt_epoch_p0", "rtt_epoch_p50", "rtt_epoch_p100",
    "rtt_sd", "rtt_corr_10ms", "rtt_p01", "rtt_p1", "rtt_p5", "rtt_p99",
    "boundary_outage_min_ms", "boundary_outage_max_ms",
)  # fmt: skip


def halves(p: dict[str, tuple[Path, Path, Path]]) -> None:
    fits = {name: fit_part(bw, d) for name, (bw, d, _csv) in p.items()}
    print("| statistic | first part | last part |\n|---|---|---|")
    for k in HALF_KEYS:
        v = [fits[n][1].get(k) for n in ("first", "last")]
        print(f"| `{k}` | " + " | ".join("-" if x is None else f"{x:.4g}" for x in v) + " |")
    print("| knob | first part | last part |\n|---|---|---|")
    for k in fits["first"][0]:
        print(f"| `{k}` | {json.dumps(fits['first'][0][k])} | {json.dumps(fits['last'][0][k])} |")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--split", type=int, default=60, help="seconds in the first part")
    p.add_argument("--seeds", type=int, default=3, help="seeds 1..N, replay and fitted model")
    p.add_argument("--replay-seeds", type=int, help="seeds 1..N for the replay (default: --seeds)")
    p.add_argument("--fit", choices=("first", "last"), default="first", help="the part fitted")
    p.add_argument(
        "--replay", choices=("first", "last"), help="the part replayed (default: the other)"
    )
    p.add_argument("--reverse", action="store_true", help="fit the last part, replay the first")
    p.add_argument("--halves", action="store_true", help="print each part's statistics and knobs")
    p.add_argument("--replay-from", type=int, default=1, help="first replay seed (default 1)")
    p.add_argument("--replay-only", action="store_true", help="run the replay only")
    p.add_argument(
        "--engine",
        choices=("sim", "emu"),
        default="sim",
        help="emu: through the kernel (satcc-linkd; run under flock /tmp/satcc-emu.lock)",
    )
    p.add_argument("--ccas", default=",".join(CCAS), help="comma-separated (default: all three)")
    a = p.parse_args()
    fit_name = "last" if a.reverse else a.fit
    rep_name = a.replay or ("first" if fit_name == "last" else "last")
    with tempfile.TemporaryDirectory() as tmp:
        ps = parts(a.bw, a.delay, a.split, Path(tmp))
        if a.halves:
            halves(ps)
            return 0
        fitted = {} if a.replay_only else fit_part(ps[fit_name][0], ps[fit_name][1])[0]
        rep_bw, _, rep_csv = ps[rep_name]
        replay_dur = int(np.loadtxt(rep_bw, dtype=np.int64)[-1] // 1000)
        replay = replay_model(rep_bw, rep_csv)
        print("fitted:", json.dumps(fitted), file=sys.stderr)
        seeds = range(1, a.seeds + 1)
        rseeds = range(a.replay_from, a.replay_from + (a.replay_seeds or a.seeds))
        rows = []
        for cca in a.ccas.split(","):
            reps = [measure(scenario(replay, {}, cca, replay_dur, s), a.engine) for s in rseeds]
            if a.replay_only:
                for s, (g, r) in zip(rseeds, reps, strict=True):
                    print(f"replay {cca} seed {s}: {g:.2f} Mbit/s, {r:.2f} ms", flush=True)
                continue
            fits = [measure(scenario(fitted, {}, cca, replay_dur, s), a.engine) for s in seeds]
            rows.append((cca, [r[0] for r in reps], [f[0] for f in fits],
                         [r[1] for r in reps], [f[1] for f in fits]))  # fmt: skip
        if a.replay_only:
            return 0
        print(
            f"engine {a.engine}: fit on the {fit_name} part, replay of the {rep_name} part "
            f"(split at {a.split} s, {replay_dur} s), seeds 1-{a.seeds} "
            f"(replay {rseeds.start}-{rseeds.stop - 1}): mean (range)"
        )
        print(
            "| CCA | goodput replay | goodput fitted | diff | mean RTT replay | mean RTT fitted | diff |"
        )
        print("|---|---|---|---|---|---|---|")
        for cca, g1, g2, r1, r2 in rows:
            print(
                f"| {cca} | {_spread(g1, 'Mbit/s')} | {_spread(g2, 'Mbit/s')} "
                f"| {100 * (np.mean(g2) / np.mean(g1) - 1):+.1f} % "
                f"| {_spread(r1, 'ms')} | {_spread(r2, 'ms')} "
                f"| {100 * (np.mean(r2) / np.mean(r1) - 1):+.1f} % |"
            )
        rank = lambda i: [c for c, *_ in sorted(rows, key=lambda r: -np.mean(r[i]))]
        print(f"goodput ranking: replay {rank(1)}, fitted {rank(2)}")
        print(f"mean-RTT ranking: replay {rank(3)}, fitted {rank(4)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
