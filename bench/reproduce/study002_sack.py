"""Study 002's ns-2 column with and without SACK: which TCP agent ns-2 ran is not in the paper,
and §4's high-loss maxima ("about 21 %" at p >= 0.005) hang on it. Runs the column's steady
design (1000 s, one ACK per segment, the sender capped at W_m = 550) at p = 0.005 and 0.01,
seeds 1-3, with the flow's `sack` on (the column's setting) and off (NewReno), and prints how
far each lands from the model (data/study002.toml's header quotes its output).

    PYTHONPATH=python .venv/bin/python bench/reproduce/study002_sack.py    # ~1 CPU min
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from satcc import registry
from satcc.scenario import from_dict
from satcc.studies import hybla, study002

LOSSES = (0.005, 0.01)
SEEDS = (1, 2, 3)


def one(args: tuple[float, int, bool]) -> tuple[float, int, bool, float, int, int, float]:
    p, seed, sack = args
    d = study002.designs(quick=True)["validate-hybla"]
    spec = hybla.RunSpec(
        "steady", None, p, seed, int(d.steady_duration_s), d.rate_bps, d.delayed_ack, "sim",
        d.sender_clamp,
    )  # fmt: skip
    sc = hybla.scenario_dict(spec)
    sc["flow"][0]["sack"] = sack
    f = registry.run("sim", from_dict(sc, source="study002_sack")).flows_table.to_pylist()[0]
    return (p, seed, sack, f["goodput_bps"], f["rto_count"], f["recovery_count"],
            f["retransmission_rate"])  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    args = ap.parse_args()
    jobs = [(p, s, sack) for p in LOSSES for s in SEEDS for sack in (True, False)]
    with ProcessPoolExecutor(args.jobs) as ex:
        rows = list(ex.map(one, jobs))
    by: dict[tuple[float, bool], list[tuple[float, int, int, float]]] = {}
    for p, _seed, sack, g, rto, rec, rr in rows:
        by.setdefault((p, sack), []).append((g, rto, rec, rr))
    for (p, sack), v in sorted(by.items()):
        m = float(hybla.model(p, None).throughput_bps)
        n = len(v)
        g = sum(x[0] for x in v) / n
        print(
            f"p={p:g} sack={sack}: model {m / 1e6:.3f} sim {g / 1e6:.3f} Mbit/s, "
            f"diff {(m - g) / m * 100:+.1f} %, RTOs/run {sum(x[1] for x in v) / n:.1f}, "
            f"recoveries/run {sum(x[2] for x in v) / n:.1f}, "
            f"resent {sum(x[3] for x in v) / n * 100:.2f} %"
        )


if __name__ == "__main__":
    main()
