"""Simulator vs real kernel: the same scenario through `satcc sim` and `satcc emu`, goodput ratio
per point of a small grid (CCA x rate x RTT x loss). This is how the simulator's fidelity is
judged: ratio = emu goodput / sim goodput; 1.00 is agreement.

Each point is one dumbbell-free path: client —link— server, one bulk flow from t = 0, queue
1 BDP, MTU 1500. The emulated run uses the kernel's CCA of the same name (reno, cubic, bbr).

    python bench/emu/sim_vs_emu.py [--quick] [--duration S] [--json FILE]

`satcc fidelity` (docs/fidelity.md) supersedes this for the simulator's yardstick: competing
flows, several runs per engine, per flow group metrics and verdicts against targets. This bench
stays for its single-flow goodput grid over rate x RTT x loss.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from satcc import scenario as sc
from satcc.emu import host
from satcc.engines import emu, sim

CCAS = ("cubic", "bbr", "reno")
STEADY_FROM_S = 2.0  # start-up (iperf3's control connection, slow start) is over by then
RATES_MBIT = (10, 50)
RTTS_MS = (20, 100)
LOSSES = (0.0, 0.005)


def scenario(cca: str, rate: int, rtt: int, loss: float, duration: int) -> sc.Scenario:
    return sc.loads(
        textwrap.dedent(f"""
        [scenario]
        name = "svse-{cca}-{rate}-{rtt}-{loss}"
        duration = "{duration} s"
        seed = 1
        [[link]]
        a = "client"
        b = "server"
        rate = "{rate} Mbit/s"
        delay = "{rtt / 2} ms"
        loss = {loss}
        queue = "1 BDP"
        [[flow]]
        from = "client"
        to = "server"
        cca = "{cca}"
    """)
    )


def steady(result) -> float:
    """Mean goodput over the bins from STEADY_FROM_S on (bit/s)."""
    fs = result.flow_series
    s = fs[fs.t_s >= STEADY_FROM_S]
    return float(s.delivered_bytes.sum() * 8 / (len(s) * result.meta["bin_s"])) if len(s) else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="5 s runs instead of 10 s")
    ap.add_argument("--duration", type=int)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    host.require_root()
    duration = args.duration or (5 if args.quick else 10)
    rows = []
    for cca, rate, rtt, loss in itertools.product(CCAS, RATES_MBIT, RTTS_MS, LOSSES):
        s = scenario(cca, rate, rtt, loss, duration)
        t = time.monotonic()
        r_sim = sim.run(s)
        r_emu = emu.run(s, capture=False)
        rs, re_ = r_sim.flows.iloc[0], r_emu.flows.iloc[0]
        ss, se = steady(r_sim), steady(r_emu)
        row = {
            "cca": cca,
            "rate_mbit": rate,
            "rtt_ms": rtt,
            "loss": loss,
            "sim_goodput_mbit": rs.goodput_bps / 1e6,
            "emu_goodput_mbit": re_.goodput_bps / 1e6,
            "ratio": re_.goodput_bps / rs.goodput_bps if rs.goodput_bps else None,
            "sim_steady_mbit": ss / 1e6,
            "emu_steady_mbit": se / 1e6,
            "steady_ratio": se / ss if ss else None,
            "sim_retx": rs.retransmission_rate,
            "emu_retx": re_.retransmission_rate,
            "wall_s": time.monotonic() - t,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print(
        "| CCA | rate | RTT | loss | sim goodput | emu goodput | emu/sim | emu/sim from 2 s | "
        "sim retx | emu retx |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:

        def pct(x):
            return "-" if x is None else f"{100 * x:.2f} %"

        print(
            f"| {r['cca']} | {r['rate_mbit']} Mbit/s | {r['rtt_ms']} ms | {100 * r['loss']:g} % | "
            f"{r['sim_goodput_mbit']:.2f} | {r['emu_goodput_mbit']:.2f} | "
            f"{r['ratio']:.2f} | {r['steady_ratio']:.2f} | {pct(r['sim_retx'])} | "
            f"{pct(r['emu_retx'])} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
