"""What Vegas (or BBR, `--cca bbr`) sees on the replay and on the fitted model, epoch by epoch (issue 26): its base
RTT (the minimum ever), the per-round minimum RTT, its `diff` (packets it believes queued),
cwnd and goodput, beside the path's own idle RTT floor and median in that epoch.

    python bench/starlink/vegas_probe.py BW_TRACE DELAY_FILE [--split 60] [--reverse]
        [--model JSON] [--seed 1] [--cca vegas]

As predict.py: fit on one part of the LeoReplayer recording (or take `--model`, a fitted
`[link.model]` as JSON), replay the other part. Epochs are each path's own (the replay's
boundaries are the recording's, the model's at its clock phase).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
import itertools

import predict

from satcc import api
from satcc import tracefit as tf


def run(doc: dict, out: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    doc["scenario"] |= {"cc_state": True, "bin": "100 ms"}
    r = api.run(doc, engine="sim")
    r.write(out)
    cc = pd.read_parquet(out / "cc_series.parquet")
    cc = cc.pivot_table(index="t_s", columns="name", values="value", aggfunc="last")
    fs = pd.read_parquet(out / "flow_series.parquet").set_index("t_s")
    ls = pd.read_parquet(out / "link_series.parquet")
    ls = ls[ls["dir"] == "ab"].set_index("t_s")
    return cc, fs, ls


def per_epoch(cc, fs, ls, bounds_s, floor_rtt, med_rtt) -> list[dict]:
    rows = []
    for k, (a, b) in enumerate(itertools.pairwise(bounds_s)):
        c = cc[(cc.index >= a + 0.3) & (cc.index < b)]
        f = fs[(fs.index >= a) & (fs.index < b)]
        q = ls[(ls.index >= a) & (ls.index < b)]
        if len(c) < 5:
            continue
        row = {
            "epoch": k,
            "from_s": round(a, 1),
            "path_rtt_floor_ms": floor_rtt[k],
            "path_rtt_median_ms": med_rtt[k],
            "srtt_mean_ms": float(f["srtt_ms"].mean()),
            "queue_mean_pkts": float(q["queue_pkts"].mean()),
            "capacity_mbps": float(q["capacity_bps"].mean()) / 1e6,
        }
        if "base_rtt_us" in c:  # Vegas
            row |= {
                "base_rtt_ms": float(c["base_rtt_us"].iloc[-1]) / 1000,
                "round_min_rtt_p50_ms": float(np.nanmedian(c["min_rtt_us"])) / 1000,
                "diff_p50_pkts": float(np.nanmedian(c["diff"])),
            }
        if "max_bw_pps" in c:  # BBR: its bandwidth estimate (1500 B packets) and min RTT
            row |= {
                "bbr_bw_mbps": float(np.nanmedian(c["max_bw_pps"])) * 1500 * 8 / 1e6,
                "bbr_min_rtt_ms": float(np.nanmedian(c["min_rtt_ms"])),
            }
        row |= {
            "cwnd_mean_pkts": float(f["cwnd_pkts"].mean()),
            "goodput_mbps": float(f["goodput_bps"].mean()) / 1e6,
        }
        rows.append(row)
    return rows


def split_parser(doc: str | None) -> argparse.ArgumentParser:
    """The arguments every split probe takes: the recording, where to cut it, which part to
    fit, and a fitted model instead of fitting one."""
    p = argparse.ArgumentParser(description=doc)
    p.add_argument("bw", type=Path)
    p.add_argument("delay", type=Path)
    p.add_argument("--split", type=int, default=60)
    p.add_argument("--reverse", action="store_true")
    p.add_argument("--model", help="the fitted [link.model] as JSON (default: fit it)")
    return p


def split_and_fit(a: argparse.Namespace, tmp: Path) -> tuple[dict, Path, Path, int]:
    """(fitted model, replay trace, replay CSV, replay seconds) for `split_parser`'s arguments;
    the fitted model on stderr."""
    fit_bw, fit_delay, rep_bw, rep_csv = predict.split(a.bw, a.delay, a.split, tmp, a.reverse)
    fitted = json.loads(a.model) if a.model else predict.fit_part(fit_bw, fit_delay)[0]
    print("fitted:", json.dumps(fitted), file=sys.stderr)
    return fitted, rep_bw, rep_csv, int(np.loadtxt(rep_bw, dtype=np.int64)[-1] // 1000)


def main() -> int:
    p = split_parser(__doc__)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cca", default="vegas")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        fitted, rep_bw, rep_csv, dur = split_and_fit(a, tmp)
        replay = {
            "kind": "trace",
            "mahimahi": str(rep_bw),
            "delay_csv": str(rep_csv),
            "loss": predict.LOSS,
            "loss_ba": 0.0,
        }
        # the replay's epochs: the recording's boundaries; its RTT: twice the one-way delay
        rrec = tf.read_recording(rep_bw, rep_csv)
        ph = tf.find_phase(rrec) / 1000
        rb = [0.0] + [ph + 15 * k for k in range(10) if ph + 15 * k < dur] + [float(dur)]
        d = np.loadtxt(rep_csv, delimiter=",", skiprows=1)
        rfl, rmed = [], []
        for x, y in itertools.pairwise(rb):
            seg = d[(d[:, 0] >= (x + 0.3) * 1000) & (d[:, 0] < y * 1000), 1]
            rfl.append(2 * float(seg.min()) if len(seg) else np.nan)
            rmed.append(2 * float(np.median(seg)) if len(seg) else np.nan)
        # the model's epochs at its phase; its RTT from its own one-way delay samples
        s = tf.model_samples(fitted, dur, a.seed)
        mb = [0.0] + [12 + 15 * k for k in range(10) if 12 + 15 * k < dur] + [float(dur)]
        mt, md = s["t_ns"] / 1e9, s["delay_ns"] / 1e6
        mfl, mmed = [], []
        for x, y in itertools.pairwise(mb):
            seg = md[(mt >= x + 0.3) & (mt < y)]
            mfl.append(2 * float(seg.min()) if len(seg) else np.nan)
            mmed.append(2 * float(np.median(seg)) if len(seg) else np.nan)
        out = {}
        for name, model, bounds, fl, med in (
            ("replay", replay, rb, rfl, rmed),
            ("fitted", fitted, mb, mfl, mmed),
        ):
            (tmp / name).mkdir()
            doc = predict.scenario(model, {}, a.cca, dur, a.seed)
            cc, fs, ls = run(doc, tmp / name)
            out[name] = per_epoch(cc, fs, ls, bounds, fl, med)
        for name, rows in out.items():
            print(f"\n{name} ({a.cca}, seed {a.seed}):")
            print(pd.DataFrame(rows).round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
