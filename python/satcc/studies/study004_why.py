"""Why study 004's K fix (eq. 6) does or does not move 1v1 fairness: the numbers.

`campaigns/study004-why.toml` runs PC1 (2 ms) against PC2 (16 and 128 ms), 1 vs 1, stock CUBIC
and eq. 6 with the RTT in units of 1/8 ms ... 1 s, around the study's own setup (a 1000-packet
queue on a 1000 Hz tick) one factor at a time (no Reno emulation, 50- and 5000-slot queues,
10 Gbit/s access, exact service, exact service on 50 slots), with
each flow's CUBIC state recorded per bin (`[scenario] cc_state = true`, cc_series.parquet).
Read over the second half of each run, per flow:

| column        | what                                                                        |
|---------------|-----------------------------------------------------------------------------|
| long_share    | PC2's (long RTT) share of the two flows' goodput                            |
| jain          | Jain's index over the two goodputs                                          |
| d_jain        | Jain(this K mode) − Jain(stock), paired by seed: mean, and whether the sign |
|               | test shows it (`holds`: "shown", else "not shown (N seeds)"; needs 5)       |
| retx_short/long | retransmitted / sent segments of each flow, whole run (%)                 |
| reno_short/long | share of the packets acked in congestion avoidance while the Reno estimate |
|               | W_est was above the cubic curve (RFC 9438 §4.3's Reno-friendly region)      |
| k_long_s      | PC2's K (s) averaged over the second half's bins                            |
| wmax_long     | PC2's W_max (packets), same                                                  |

Nothing here is fitted: every figure is a mean over the runs' own series.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from satcc.studies import common

CAMPAIGN = "study004-why"


def per_run(directory: Path) -> pd.DataFrame:
    """One row per run: setup, k, PC2 RTT, seed, each flow's goodput, retransmissions, Reno-region
    share, and PC2's K and W_max over the second half (computed once per `common.reading`)."""
    return common.derived(directory, "study004_why.per_run", lambda: _per_run(directory))


def _per_run(directory: Path) -> pd.DataFrame:
    read = common.frames(directory, flow_series=True)  # done runs only
    runs, flows, fs = read["runs"], read["flows"], read["flow_series"]
    cc = common.query(directory, "SELECT run_id, flow_id, t_s, name, value FROM cc_series")
    runs = runs.set_index("run_id")
    half = runs["duration_s"] / 2
    fs = fs[fs["t_s"] >= fs["run_id"].map(half)]
    late = fs.groupby(["run_id", "flow_id"])["goodput_bps"].mean()
    reno = _reno_shares(cc, half)
    # each run's rows, in the frames' order (as a mask per run picks them, without a pass over
    # every row per run)
    flows_of = dict(tuple(flows.groupby("run_id", sort=False)))
    cc_of = dict(tuple(cc.groupby("run_id", sort=False)))
    rows = []
    for run_id, r in runs.iterrows():
        f = flows_of.get(run_id, flows.iloc[:0]).set_index("id")
        c = cc_of.get(run_id, cc.iloc[:0])
        row = {
            "run_id": run_id,
            "engine": r["engine"],
            "setup": common.param(runs, "setup")[run_id],
            "k": common.param(runs, "k")[run_id],
            "pc2_ms": 2 * float(common.param(runs, "rtt_pc2_ms")[run_id]) + 1.0,
            "seed": int(r["seed"]),
            # the bottleneck's rate: the quick design runs this investigation at 100 Mbit/s
            "rate_mbps": float(r["link2_rate_bps"]) / 1e6 if "link2_rate_bps" in r else np.nan,
        }
        for fid, who in ((0, "short"), (1, "long")):
            row[f"{who}_bps"] = float(late.get((run_id, fid), np.nan))
            row[f"retx_{who}"] = 100.0 * float(f.loc[fid, "retransmission_rate"])
            row[f"reno_{who}"] = reno.get((run_id, fid), np.nan)
        lc = c[(c["flow_id"] == 1) & (c["t_s"] >= half[run_id])]
        row["k_long_s"] = float(lc[lc["name"] == "k_s"]["value"].mean())
        row["wmax_long"] = float(lc[lc["name"] == "w_max"]["value"].mean())
        rows.append(row)
    out = pd.DataFrame(rows)
    total = out["short_bps"] + out["long_bps"]
    out["long_share"] = out["long_bps"] / total
    out["jain"] = total**2 / (2 * (out["short_bps"] ** 2 + out["long_bps"] ** 2))
    return out


def _reno_shares(cc: pd.DataFrame, half: pd.Series) -> dict[tuple[str, int], float]:
    """Per (run, flow): the share of the second half's congestion-avoidance acks under the
    Reno emulation: each counter's last sample minus its last sample before the half (0 when
    it has none; NaN for a flow without the counter), over the runs' durations halved (`half`,
    by run id)."""
    keys = ["run_id", "flow_id", "name"]
    acked = cc[cc["name"].isin(("acked_reno", "acked_cubic"))].sort_values("t_s", kind="stable")
    end = acked.drop_duplicates(keys, keep="last").set_index(keys)["value"]
    early = acked[acked["t_s"] < acked["run_id"].map(half)]
    mid = early.drop_duplicates(keys, keep="last").set_index(keys)["value"]
    out = {}
    for run_id, flow_id in dict.fromkeys(zip(acked["run_id"], acked["flow_id"], strict=True)):

        def gained(name: str, run_id: str = run_id, flow_id: int = flow_id) -> float:
            if (run_id, flow_id, name) not in end.index:
                return np.nan
            return float(end[run_id, flow_id, name]) - float(mid.get((run_id, flow_id, name), 0.0))

        reno, cubic = gained("acked_reno"), gained("acked_cubic")
        out[run_id, int(flow_id)] = reno / (reno + cubic) if reno + cubic > 0 else np.nan
    return out


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per setup, PC2 RTT and K mode: means over seeds, and Jain's change from stock paired by
    seed (mean, and whether the sign test over the seeds shows it)."""
    if "engine" not in runs:
        runs = runs.assign(engine="sim")
    keys = ["engine", "setup", "pc2_ms", "seed"]
    stock = runs[runs["k"] == "stock"].set_index(keys)["jain"]
    runs = runs.assign(
        d=runs["jain"].to_numpy() - stock.reindex(pd.MultiIndex.from_frame(runs[keys])).to_numpy()
    )
    g = runs.groupby(["setup", "pc2_ms", "k", "engine"], sort=False)
    out = g.agg(
        seeds=("seed", "size"),
        short_mbps=("short_bps", lambda x: x.mean() / 1e6),
        long_mbps=("long_bps", lambda x: x.mean() / 1e6),
        long_share=("long_share", "mean"),
        jain=("jain", "mean"),
        d_jain=("d", "mean"),
        d_min=("d", "min"),
        d_max=("d", "max"),
        retx_short=("retx_short", "mean"),
        retx_long=("retx_long", "mean"),
        reno_short=("reno_short", "mean"),
        reno_long=("reno_long", "mean"),
        k_long_s=("k_long_s", "mean"),
        wmax_long=("wmax_long", "mean"),
    ).reset_index()
    # whether the change from stock is shown: the sign test over the seeds (claims.py's rule;
    # every seed agreeing at 2 or 3 seeds is a coin toss, not a result)
    from satcc.studies.claims import paired_test

    held = []
    for (setup, pc2, k, engine), grp in g:
        if k == "stock":
            held.append("")
            continue
        d = [float(x) for x in grp["d"] if np.isfinite(x)]
        t = paired_test(d, 0.0, 1 if np.mean(d or [0.0]) > 0 else -1)
        held.append("shown" if t.shown else f"not shown ({t.n} seeds)")
    out["holds"] = held
    if "rate_mbps" in runs:
        out = out.merge(
            runs.groupby(["setup", "pc2_ms", "k", "engine"], sort=False)["rate_mbps"]
            .first()
            .reset_index(),
            on=["setup", "pc2_ms", "k", "engine"],
            how="left",
        )
    return out


def explain(s: pd.DataFrame) -> str:
    """The investigation in one paragraph, every number from `summary`'s table (the largest
    PC2 RTT; the testbed setup first, then the best K mode of each other setup)."""
    if s.empty:
        return ""
    top = float(s["pc2_ms"].max())
    at = s[np.isclose(s["pc2_ms"], top)]
    parts = []
    for engine, e in at.groupby("engine", sort=False):
        base = e[(e["setup"] == "testbed") & (e["k"] == "stock")]
        if base.empty:
            continue
        b = base.iloc[0]
        ratio = b["retx_long"] / b["retx_short"] if b["retx_short"] > 0 else np.nan
        reno = "" if not np.isfinite(b["reno_long"]) else f", {_pct(b['reno_long'])} of its "
        reno += "" if not reno else "congestion-avoidance growth under the Reno emulation"
        wmax = "" if not np.isfinite(b["wmax_long"]) else f", W_max {b['wmax_long']:.0f} packets"
        rate = b["rate_mbps"] if "rate_mbps" in b and np.isfinite(b["rate_mbps"]) else None
        design = (
            f" (this investigation's runs: {int(b['seeds'])} seeds"
            + (f", the bottleneck at {rate:g} Mbit/s" if rate else "")
            + ")"
        )
        text = (
            f"{engine}{design}, PC2 {top:g} ms, testbed (stock): PC2 retransmits "
            f"{b['retx_long']:.2f} % "
            f"of its segments against PC1's {b['retx_short']:.2f} %"
            + (f" ({ratio:.0f}x)" if np.isfinite(ratio) else "")
            + f"{wmax}{reno}; eq. 6 changes Jain by "
            + ", ".join(
                f"{_unit(r.k)} {r.d_jain:+.3f}{'' if r.holds == 'shown' else f' ({r.holds})'}"
                for r in e[(e["setup"] == "testbed") & (e["k"] != "stock")].itertuples()
            )
        )
        others = []
        for setup, g in e[(e["setup"] != "testbed") & (e["k"] != "stock")].groupby(
            "setup", sort=False
        ):
            best = g.sort_values("d_jain", ascending=False).iloc[0]
            stock = e[(e["setup"] == setup) & (e["k"] == "stock")]["jain"]
            others.append(
                f"{setup}: stock Jain {float(stock.iloc[0]) if len(stock) else np.nan:.2f}, "
                f"best {_unit(best['k'])} {best['d_jain']:+.3f}"
                + ("" if best["holds"] == "shown" else f" ({best['holds']})")
            )
        if others:
            text += "; by setup, " + "; ".join(others)
        parts.append(text)
    return ". ".join(parts)


def phase(directory: Path) -> pd.DataFrame:
    """`study004-phase`: per engine, flow count, PC2 RTT and service, means over seeds of each
    group's goodput, PC2's share and the slowest flow of each group (second half, Mbit/s;
    computed once per `common.reading`)."""
    return common.derived(directory, "study004_why.phase", lambda: _phase(directory))


def _phase(directory: Path) -> pd.DataFrame:
    read = common.frames(directory, flow_series=True)  # done runs only
    runs, flows, fs = read["runs"], read["flows"], read["flow_series"]
    runs = runs.set_index("run_id")
    half = runs["duration_s"] / 2
    fs = fs[fs["t_s"] >= fs["run_id"].map(half)]
    late = fs.groupby(["run_id", "flow_id"])["goodput_bps"].mean().rename("late")
    flows = flows.join(late, on=["run_id", "id"])
    flows["group"] = flows["name"].str.split(".").str[0]
    g = flows.groupby(["run_id", "group"])["late"].agg(["sum", "min"]).unstack("group")
    out = pd.DataFrame(
        {
            "engine": runs["engine"],
            "count": common.param(runs, "count").astype(int),
            "pc2_ms": 2 * common.param(runs, "rtt_pc2_ms").astype(float) + 1.0,
            "service": common.param(runs, "service"),
            "short_mbps": g[("sum", "short-rtt")] / 1e6,
            "long_mbps": g[("sum", "long-rtt")] / 1e6,
            "short_min": g[("min", "short-rtt")] / 1e6,
            "long_min": g[("min", "long-rtt")] / 1e6,
        }
    )
    out["long_share"] = out["long_mbps"] / (out["short_mbps"] + out["long_mbps"])
    return (
        out.groupby(["engine", "count", "pc2_ms", "service"], sort=False)
        .agg(
            seeds=("long_share", "size"),
            short_mbps=("short_mbps", "mean"),
            long_mbps=("long_mbps", "mean"),
            long_share=("long_share", "mean"),
            short_min=("short_min", "min"),
            long_min=("long_min", "min"),
        )
        .reset_index()
        .sort_values(["engine", "count", "pc2_ms", "service"], kind="stable")
    )


def phase_lines(p: pd.DataFrame) -> list[str]:
    from satcc.textgrid import grid

    cols = ["engine", "flows", "PC2 ms", "service", "PC1 Mbit/s", "PC2 Mbit/s", "PC2 share"]
    cols += ["slowest PC1 flow", "slowest PC2 flow"]
    body = [
        [
            r.engine,
            f"{r.count}v{r.count}",
            f"{r.pc2_ms:g}",
            r.service,
            f"{r.short_mbps:.1f}",
            f"{r.long_mbps:.1f}",
            f"{r.long_share:.2f}",
            f"{r.short_min:.2f}",
            f"{r.long_min:.2f}",
        ]
        for r in p.itertuples(index=False)
    ]
    return grid(cols, body, left={0, 3})


def _unit(k: str) -> str:
    return k.replace("eq6-", "unit ") if k.startswith("eq6-") else k


def table_lines(s: pd.DataFrame) -> list[str]:
    from satcc.textgrid import grid

    engines = s["engine"].nunique() > 1
    cols = [
        "setup",
        "PC2 ms",
        "k",
        *(["engine"] if engines else []),
        "PC1 Mbit/s",
        "PC2 Mbit/s",
        "Jain",
        "ΔJain",
        "same sign",
        "retx PC1 %",
        "retx PC2 %",
        "Reno PC1",
        "Reno PC2",
        "K PC2 s",
        "W_max PC2",
    ]
    body = []
    for r in s.itertuples(index=False):
        body.append(
            [
                r.setup,
                f"{r.pc2_ms:g}",
                r.k,
                *([r.engine] if engines else []),
                f"{r.short_mbps:.0f}",
                f"{r.long_mbps:.1f}",
                f"{r.jain:.3f}",
                "" if r.k == "stock" else f"{r.d_jain:+.3f}",
                r.holds,
                f"{r.retx_short:.2f}",
                f"{r.retx_long:.2f}",
                _pct(r.reno_short),
                _pct(r.reno_long),
                _num(r.k_long_s),
                _num(r.wmax_long, 0),
            ]
        )
    return grid(cols, body, left={0, 2, 3, 7, 8} if engines else {0, 2, 7})


def _pct(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{100 * x:.0f} %"


def _num(x: float, digits: int = 2) -> str:
    return "-" if not np.isfinite(x) else f"{x:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    """`python -m satcc.studies.study004_why CAMPAIGN_DIR`: print the table."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    d = Path(args[0])
    from satcc.store import open_store

    with open_store(d) as st:
        phased = "param_service" in st.runs().columns or "service" in st.runs().columns
    if phased:
        print("\n".join(phase_lines(phase(d))))
        return 0
    s = summary(per_run(d))
    print("\n".join(table_lines(s)))
    print()
    print(explain(s))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
