"""The fitted model replayed at the recording's resolution (issue 41): `satcc trace export`
writes the model as a Mahimahi trace (whole-ms delivery opportunities) and its one-way delay;
this replays that as the recording's part is replayed (the a→b trace both ways, the same
loss and queue), once with the model's delay as it is and once rounded to whole ms as the
recording's (plus `--shift-ms` one way, to put the model's RTT level on the replayed part's).
Beside it, the replay of the other part. Per seed: goodput, smoothed-RTT median and, for
Vegas, its per-round minimum and base RTT (p50) and mean cwnd.

    python bench/starlink/at_resolution.py BW_TRACE DELAY_FILE [--reverse] [--model JSON]
        [--cca vegas] [--seeds 3] [--shift-ms 0]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import predict
import vegas_probe

from satcc.commands.trace import export
from satcc.scenario import from_dict


def line(name: str, seed: int, cc, fs) -> str:
    out = (
        f"{name:32s} seed {seed}  goodput {fs['goodput_bps'].mean() / 1e6:.2f} Mbit/s"
        f"  srtt p50 {fs['srtt_ms'].median():.2f} ms"
    )
    if "base_rtt_us" in cc:
        out += (
            f"  round min p50 {np.nanmedian(cc['min_rtt_us']) / 1000:.2f}"
            f"  base p50 {np.nanmedian(cc['base_rtt_us']) / 1000:.2f}"
            f"  cwnd {fs['cwnd_pkts'].mean():.1f}"
        )
    return out


def main() -> int:
    p = vegas_probe.split_parser(__doc__)
    p.add_argument("--cca", default="vegas")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--shift-ms", type=float, default=0.0, help="added to the whole-ms delay")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        fitted, rep_bw, rep_csv, dur = vegas_probe.split_and_fit(a, tmp)
        for seed in range(1, a.seeds + 1):
            doc = predict.scenario(fitted, {}, "cubic", dur, seed)
            out = tmp / f"export{seed}"
            export(from_dict(doc), out, direction="ab")
            rows = np.loadtxt(out / "link0-ab.csv", delimiter=",", skiprows=1)[:, :2]
            whole = rows.copy()
            whole[:, 1] = np.round(whole[:, 1]) + a.shift_ms
            paths = {"replay of the other part": rep_csv}
            for name, table in (
                ("model at whole-ms delivery", rows),
                ("  and whole-ms delay", whole),
            ):
                csv = out / f"{len(paths)}.csv"
                np.savetxt(csv, table, delimiter=",", header="t_ms,delay_ms", comments="")
                paths[name] = csv
            for k, (name, csv) in enumerate(paths.items()):
                bw = rep_bw if k == 0 else out / "link0-ab.mahimahi"
                run_dir = tmp / f"run{seed}-{k}"
                run_dir.mkdir()
                cc, fs, _ = vegas_probe.run(
                    predict.scenario(predict.replay_model(bw, csv), {}, a.cca, dur, seed), run_dir
                )
                print(line(name, seed, cc, fs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
