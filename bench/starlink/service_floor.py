"""What a flow's minimum RTT holds beside the path's delay (issue 41): Vegas (seed 1, 60 s, as
predict.py runs it) over paths whose one-way delay is constant, so any RTT above twice that
delay is the service's (waiting for a delivery):

- the replay of a part of the LeoReplayer recording (its Mahimahi opportunities), delay
  `--delay` each way, no delay series;
- the model fitted to the other part (vegas_probe.py's fit, or `--model`), without jitter and
  with every epoch's RTT at twice `--delay`;
- a Mahimahi trace with `--per-ms` opportunities every millisecond (no frames, no gaps);
- a constant rate of the same mean (no millisecond ticks).

With `--series`, each path keeps its own delay instead: the replay part's delay rows on the
three replay services, the fitted model's jitter and epoch RTTs on its own frames and on a
flat service (the model at a constant rate: no frames, no capacity variation, no outage).

For each path and seed: the per-round minimum RTT's p1/p10/p50 and the base RTT's
p10/p50/p90 (ms), mean cwnd and goodput.

    python bench/starlink/service_floor.py BW_TRACE DELAY_FILE [--reverse] [--delay-ms 10]
        [--series] [--model JSON] [--per-ms 4] [--seeds 1]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import predict
import vegas_probe


def main() -> int:
    p = vegas_probe.split_parser(__doc__)
    p.add_argument("--delay-ms", type=int, default=10, help="one-way delay of every path")
    p.add_argument("--per-ms", type=int, default=4, help="opportunities a ms of the flat trace")
    p.add_argument("--series", action="store_true", help="each path's own delay")
    p.add_argument("--seeds", type=int, default=1)
    a = p.parse_args()
    d = a.delay_ms
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        fitted, rep_bw, rep_csv, dur = vegas_probe.split_and_fit(a, tmp)
        flat = tmp / "flat.txt"
        np.savetxt(flat, np.repeat(np.arange(1, dur * 1000 + 1), a.per_ms), fmt="%d")
        rate = f"{a.per_ms * 12} Mbit/s"
        if a.series:
            common = {"kind": "trace", "delay_csv": str(rep_csv)}
            model = fitted
            flat_model = fitted | {
                "capacity": [rate, rate],
                "capacity_ba": [rate, rate],
                "capacity_sigma": 0.0,
                "frame": "0 ms",
                "frame_sigma": 0.0,
                "outage_probability": 0.0,
            }
            print(f"each path's own delay, vegas, seeds 1-{a.seeds}")
        else:
            common = {"kind": "trace", "delay": f"{d} ms"}
            model = fitted | {"jitter": "0 ms", "rtt_quantiles": [f"{2 * d} ms"] * 5}
            flat_model = None
            print(f"one-way delay {d} ms each way (RTT {2 * d} ms), vegas, seeds 1-{a.seeds}")
        common |= {"loss": predict.LOSS, "loss_ba": 0.0}
        paths = {
            "replay": common | {"mahimahi": str(rep_bw)},
            f"replay, flat trace {a.per_ms}/ms": common | {"mahimahi": str(flat)},
            f"replay, rate {rate}": common | {"rate": rate},
            "fitted": model,
        }
        if flat_model:
            paths[f"fitted, rate {rate}"] = flat_model
        k = 0
        for name, m in paths.items():
            for seed in range(1, a.seeds + 1):
                k += 1
                (tmp / str(k)).mkdir()
                doc = predict.scenario(m, {}, "vegas", dur, seed)
                cc, fs, _ = vegas_probe.run(doc, tmp / str(k))
                lo = cc["min_rtt_us"].dropna() / 1000
                base = cc["base_rtt_us"].dropna() / 1000
                print(
                    f"{name:28s} seed {seed}"
                    f"  round min p1/p10/p50 {np.percentile(lo, [1, 10, 50]).round(2)}"
                    f"  base p10/p50/p90 {np.percentile(base, [10, 50, 90]).round(2)}"
                    f"  cwnd {fs['cwnd_pkts'].mean():.1f}"
                    f"  goodput {fs['goodput_bps'].mean() / 1e6:.2f} Mbit/s"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
