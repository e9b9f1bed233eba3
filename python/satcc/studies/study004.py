"""Study 004: RTT fairness of CUBIC, stock and with K scaled by the cube root of the RTT.

The study (shared/papers/004_04d0de6d372a58c2.txt §3-5): PC1 and PC2 send netperf bulk flows
to PC3 through a dummynet emulator (GbE, 16 MB windows); PC1-PC3 RTT 2, 4, 16, 64 ms, PC2-PC3
2 ... 128 ms; throughput of each and Jain's fairness index.
| figures    | what                               | satcc (campaigns/)                      |
|------------|------------------------------------|-----------------------------------------|
| Fig. 5-8   | stock CUBIC, 1v1, per PC1 RTT      | study004-1v1, k = stock                 |
| Fig. 10-13 | eq. 6, 1v1, per PC1 RTT            | study004-1v1, k = eq6                   |
| Fig. 14-15 | eq. 6, 4v4 and 16v16, PC1 2 ms     | study004-many, k = eq6 (rtt_unit swept) |
| Fig. 16-17 | eq. 7, 4v4 and 16v16, PC1 2 ms     | study004-many, k = eq7-a* (a swept)     |
| (why)      | eq. 6 taken apart (not a paper fig.) | study004-why: RTT unit × setup, CC state |
| (phase)    | many vs many at small gaps          | study004-phase: exact vs tick service   |

The two investigation campaigns (`satcc.studies.study004_why`) feed no verdict: they run in the
full design, with the simulator and with the kernel (`--engine emu` without `--quick`: their
quick tables at 100 Mbit/s, about 40 real-time minutes more); the simulator's `--quick` runs
study004-why (the explanation printed with eq6-improves-1v1) and study004-sens of WHY.

Measured per run: each flow's goodput over the second half of the run (after start-up), summed
per group (PC1's "short-rtt", PC2's "long-rtt"); PC1's share = short / (short + long); Jain's
index over the two groups' sums. Points average the seeds. The x axis is the configured RTT,
2 (access delay + 0.5 ms). The claims are the paper's statements (it prints no numbers).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from satcc import registry
from satcc.studies import common
from satcc.studies.claims import TIE, Measured, paired_test

CAMPAIGNS = ("study004-1v1", "study004-many")
# the investigation (satcc.studies.study004_why) and the sensitivities (study004-sens): the
# emulator runs them only in the full study (real time: 60 more runs of 30 s in --quick)
WHY = ("study004-why", "study004-phase", "study004-sens")
# of them, what the simulator's --quick design runs: study004-sens (the output queues
# eq6-improves-1v1 is judged across, `_across_queues`) and study004-why (the measured
# explanation printed with that finding's miss: every miss is explained in the quick design
# too); study004-phase feeds only a figure (4 runs): the full design runs it
QUICK_WHY = ("study004-why", "study004-sens")
# eq. 6's RTT unit at 16v16 (the sensitivity table's row): the full design only, the quick one
# runs 4v4
MANY_UNIT = "study004-many-unit"
EMU_CHANGES = {
    "link[0].rate": "100 Mbit/s",
    "link[1].rate": "100 Mbit/s",
    "link[2].rate": "100 Mbit/s",
}  # what this machine's emulator carries
# the emulator's GbE output queue FreeBSD 8.2's drivers give (re(4) 768 ... em(4) 2047 packets,
# scenarios/study004-testbed.toml): a finding is judged across the swept queues in this range
PLAUSIBLE_QUEUE_PKTS = (768, 2047)
SMALL_GAP_MS = 8.0  # "RTT 差が小さい": PC2 at 8 ms or less against PC1's 2 ms
LOCKOUT_SHARE = 0.99  # one group with more than 99 % of the throughput: the other is locked out
JAIN_FLOOR = 0.5  # Jain's index over two groups when one gets nothing
FLOOR_MARGIN = 0.01
A_TIE = (
    0.01  # eq. 7's a values within 0.01 Jain of the best at the largest gap: a is not determined
)


def lockout(shares: pd.Series | list[float]) -> str:
    """A lockout when PC1's share (per seed) is above LOCKOUT_SHARE, or below 1 - it, in every
    seed: one group starves the other, which is not a fairness result."""
    v = [float(x) for x in shares if x is not None and np.isfinite(x)]
    if v and min(v) > LOCKOUT_SHARE:
        return f"lockout: PC1's share above {LOCKOUT_SHARE:g} in every seed ({min(v):.3f}-{max(v):.3f}: PC2 starved)"
    if v and max(v) < 1 - LOCKOUT_SHARE:
        return f"lockout: PC1's share below {1 - LOCKOUT_SHARE:g} in every seed (PC1 starved)"
    return ""


def floor(*jains: float | None) -> str:
    """Jain at its floor (one group starved) on every side compared."""
    v = [j for j in jains if j is not None]
    if v and all(j <= JAIN_FLOOR + FLOOR_MARGIN for j in v):
        return (
            "floor: Jain at its floor of 0.5 on both sides ("
            + ", ".join(f"{j:.3f}" for j in v)
            + ")"
        )
    return ""


def run(ctx: common.Context) -> dict[str, Path]:
    # the kernel design (--quick on the emulator, or --design kernel) leaves the investigation
    # out: the paper's campaigns only
    names = CAMPAIGNS + (WHY if not ctx.quick else () if ctx.kernel_design else QUICK_WHY)
    names += () if ctx.quick else (MANY_UNIT,)
    changes = EMU_CHANGES if ctx.emulator_paths else None
    # the emulator runs the investigation's quick designs (100 Mbit/s: real time) even in the
    # full study
    return {
        name: common.run(ctx, name, changes, quick_variant=True)
        if ctx.real_time and name in WHY
        else common.run(ctx, name, changes)
        for name in names
    }


def kernel_plan() -> list[common.Planned]:
    """What the kernel design (`--quick --engine emu`, or `--design kernel`) runs (it leaves
    out the investigation, WHY): each campaign's [kernel] design, the emulator's paths."""
    return common.kernel_plan(dict.fromkeys(CAMPAIGNS, EMU_CHANGES))


def _rtt_seen(base1: float, base2: float, srtt1: float, srtt2: float) -> str:
    """The RTTs two groups saw (their smoothed RTT: base plus the queue's delay) beside the
    base RTTs the point sets: a common queue delay shrinks the ratio CUBIC's RTT-unfairness
    acts on. Empty when a run recorded no RTT."""
    if not (srtt1 > 0 and srtt2 > 0):
        return ""
    return (
        f"; smoothed RTT {srtt1:.1f} / {srtt2:.1f} ms, a ratio of {srtt2 / srtt1:.2f} against "
        f"the base RTTs' {base2 / base1:.2f}"
    )


def _climb(d: Path, count: int, pc2_ms: float) -> str:
    """How far PC2's flows had climbed in the window a many-vs-many point is judged on: the
    runs' length, the window (their second half) and the median over PC2's flows of each one's
    largest window, stock and eq. 6, with CUBIC's epoch at that window (K = cbrt(W (1 - 0.7) /
    0.4) s, tcp_cubic.c's beta and C). A short design judges the climb, where eq. 6's shorter K
    on the long-RTT flows shows, rather than the state the full design's longer runs reach."""
    f = common.frames(d, flow_series=True)
    r = f["runs"].set_index("run_id")
    flows, fs = f["flows"], f["flow_series"]
    sel = r[
        np.isclose(2 * common.param(r, "rtt_pc2_ms") + 1.0, pc2_ms)
        & (common.param(r, "count") == count)
    ]
    if not len(sel):
        return ""
    long_ids = flows[flows["name"].str.startswith("long-rtt")][["run_id", "id"]]
    x = fs[fs["run_id"].isin(sel.index)].merge(
        long_ids, left_on=["run_id", "flow_id"], right_on=["run_id", "id"]
    )
    w = x.groupby(["run_id", "k", "flow_id"])["cwnd_pkts"].max().groupby(level="k").median()
    dur = float(sel["duration_s"].median())
    parts = [
        f"{label} {w[k]:.0f} packets (K {np.cbrt(0.3 * w[k] / 0.4):.1f} s)"
        for k, label in (("stock", "stock"), ("eq6", "eq. 6"))
        if k in w.index and np.isfinite(w[k])
    ]
    return (
        f"; judged on {dur / 2:g}-{dur:g} s of {dur:g} s runs, where PC2's flows reached a "
        f"largest window (median over its flows) of {', '.join(parts)}"
        if parts
        else ""
    )


def jain2(a: float, b: float) -> float | None:
    """Jain's index over two throughputs."""
    den = 2 * (a * a + b * b)
    return None if den == 0 else (a + b) ** 2 / den


def points(d: Path, by_seed: bool = False, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per matrix point: PC1/PC2 RTT (ms), k, count, PC1 share, Jain, group Mbit/s
    (averaged over the seeds; with by_seed, one row per point and seed, column `repetition`)."""
    f = common.frames(d, flow_series=True)
    runs, flows, fs = f["runs"], f["flows"], f["flow_series"]
    half = runs.set_index("run_id")["duration_s"] / 2
    fs = fs[fs["t_s"] >= fs["run_id"].map(half)]
    late = fs.groupby(["run_id", "flow_id"])
    flows = flows.join(late["goodput_bps"].mean().rename("late_bps"), on=["run_id", "id"])
    # each flow's smoothed RTT over the same half (the queue's delay included): what CUBIC's
    # RTT-unfairness acts on, against the base RTTs the matrix sets
    flows = flows.join(late["srtt_ms"].mean().rename("late_srtt_ms"), on=["run_id", "id"])
    flows["group"] = flows["name"].str.split(".").str[0]
    g = flows.pivot_table(index="run_id", columns="group", values="late_bps", aggfunc="sum")
    rtt = flows.pivot_table(index="run_id", columns="group", values="late_srtt_ms", aggfunc="mean")
    r = runs.set_index("run_id")
    out = pd.DataFrame(
        {
            "short_bps": g.get("short-rtt"),
            "long_bps": g.get("long-rtt"),
            "short_srtt_ms": rtt.get("short-rtt"),
            "long_srtt_ms": rtt.get("long-rtt"),
            "pc1_ms": 2 * (common.param(r, "link0_delay_ms") if "link0_delay_ms" in r else 0.5)
            + 1.0,
            "pc2_ms": 2 * common.param(r, "rtt_pc2_ms") + 1.0,
            "k": common.param(r, "k"),
            "count": common.param(r, "count") if "count" in r else 1,
        }
    )
    if "rtt_pc1_ms" in r:
        out["pc1_ms"] = 2 * r["rtt_pc1_ms"] + 1.0
    else:
        out["pc1_ms"] = 2.0
    out["share"] = out["short_bps"] / (out["short_bps"] + out["long_bps"])
    out["jain"] = [jain2(a, b) for a, b in zip(out["short_bps"], out["long_bps"], strict=True)]
    out["repetition"] = r["repetition"]
    for name in extra:  # other campaign parameters to keep apart (e.g. the queue)
        out[name] = common.param(r, name)
    keys = ["k", "count", "pc1_ms", "pc2_ms", *extra] + (["repetition"] if by_seed else [])
    return out.groupby(keys, as_index=False).agg(
        share=("share", "mean"),
        jain=("jain", "mean"),
        short_mbps=("short_bps", lambda x: x.mean() / 1e6),
        long_mbps=("long_bps", lambda x: x.mean() / 1e6),
        short_srtt_ms=("short_srtt_ms", "mean"),
        long_srtt_ms=("long_srtt_ms", "mean"),
        seeds=("share", "size"),
    )


def _at(p: pd.DataFrame, **where: object) -> pd.DataFrame:
    sel = p
    for k, v in where.items():
        sel = sel[np.isclose(sel[k], v)] if isinstance(v, float) else sel[sel[k] == v]
    return sel


def measure(dirs: dict[str, Path]) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    note = (
        "(real kernel)" if registry.get(common.engine_of(dirs["study004-1v1"])).kernel_tcp else ""
    )
    one = points(dirs["study004-1v1"])
    stock = one[one["k"] == "stock"]
    pc2_max = float(one["pc2_ms"].max())
    pc1_min = float(one["pc1_ms"].min())
    big = _at(stock, pc1_ms=pc1_min, pc2_ms=pc2_max)
    share = common.finite(big["share"].mean()) if len(big) else None
    one_seed = points(dirs["study004-1v1"], by_seed=True)
    big_seeds = _at(one_seed[one_seed["k"] == "stock"], pc1_ms=pc1_min, pc2_ms=pc2_max)["share"]

    def share_at(k: str, pc1: float, pc2: float, count: int | None = None):
        """PC1's share per seed at one point (a paired share: each seed's own runs)."""

        def stat(g: pd.DataFrame) -> float | None:
            sel = g[g["k"] == k] if count is None else g[(g["k"] == k) & (g["count"] == count)]
            v = _at(sel, pc1_ms=pc1, pc2_ms=pc2)["share"]
            return common.finite(v.mean()) if len(v) else None

        return stat

    out["stock-short-wins"] = Measured(
        share,
        f"PC1 {pc1_min:g} ms vs PC2 {pc2_max:g} ms, stock, second half",
        f"PC1 {common.fmt(common.finite(big['short_mbps'].mean()))}, PC2 "
        f"{common.fmt(common.finite(big['long_mbps'].mean()))} Mbit/s {note}",
        per_seed=common.per_seed(one_seed, share_at("stock", pc1_min, pc2_max)),
        degenerate=lockout(big_seeds),
    )
    # every point with a gap, each PC1 win shown by the sign test over its seeds (never a tie
    # nor a lockout): the points' pooled shares alone would count a coin toss as a win
    gap = stock[stock["pc2_ms"] > stock["pc1_ms"]]
    stock_seed = one_seed[one_seed["k"] == "stock"]
    won, lost = 0, []
    cols = ["pc1_ms", "pc2_ms", "share", "short_srtt_ms", "long_srtt_ms"]
    for a, b, sh, r1, r2 in gap[cols].itertuples(index=False):
        seeds_ab = _at(stock_seed, pc1_ms=float(a), pc2_ms=float(b))["share"]
        t = paired_test(tuple(float(x) for x in seeds_ab), 0.5, 1)
        flag = lockout(seeds_ab)
        tie = sh < 1 and abs(sh / (1 - sh) - 1) <= TIE
        if t.shown and not tie and not flag:
            won += 1
        else:
            why = "lockout" if flag else "tie" if tie else f"{t.k} of {t.n} seeds"
            lost.append(f"{a:g}/{b:g} ms (share {sh:.3f}, {why}{_rtt_seen(a, b, r1, r2)})")
    frac = won / len(gap) if len(gap) else None
    out["stock-short-wins-everywhere"] = Measured(
        frac,
        f"{len(gap)} stock 1v1 points with PC2 RTT > PC1 RTT, PC1's win at each shown by the "
        "sign test over its seeds",
        f"PC1's win is not shown at PC1/PC2 = {'; '.join(lost) or 'none'} {note}",
    )
    small = _at(stock, pc1_ms=pc1_min, pc2_ms=float(stock["pc2_ms"].min()))
    jf = (
        (common.finite(big["jain"].mean()) or 0) - (common.finite(small["jain"].mean()) or 0)
        if (len(big) and len(small))
        else None
    )

    def fairness_falls(g: pd.DataFrame) -> float | None:
        st = g[g["k"] == "stock"]
        hi = _at(st, pc1_ms=pc1_min, pc2_ms=pc2_max)["jain"]
        lo = _at(st, pc1_ms=pc1_min, pc2_ms=float(stock["pc2_ms"].min()))["jain"]
        return float(hi.mean() - lo.mean()) if len(hi) and len(lo) else None

    def eq6_gain(g: pd.DataFrame) -> float | None:
        pr = g.pivot_table(index=["pc1_ms", "pc2_ms"], columns="k", values="jain")
        if not {"stock", "eq6"} <= set(pr.columns):
            return None
        return common.finite((pr["eq6"] - pr["stock"]).dropna().mean())

    out["stock-fairness-falls"] = Measured(
        jf,
        "Jain at the largest PC2 RTT minus Jain at the smallest, PC1 at its smallest",
        f"Jain {common.fmt(common.finite(small['jain'].mean()))} at PC2 {stock['pc2_ms'].min():g} ms, "
        f"{common.fmt(common.finite(big['jain'].mean()))} at {pc2_max:g} ms {note}",
        per_seed=common.per_seed(one_seed, fairness_falls),
    )
    pair = one.pivot_table(index=["pc1_ms", "pc2_ms"], columns="k", values="jain")
    if {"stock", "eq6"} <= set(pair.columns):
        diff = (pair["eq6"] - pair["stock"]).dropna()
        why = _why_text(dirs)
        out["eq6-improves-1v1"] = Measured(
            common.finite(diff.mean()),
            f"mean over {len(diff)} 1v1 points",
            f"eq. 6 (rtt_unit 100 ms) changes Jain by {common.fmt(common.finite(diff.min()))} to "
            f"{common.fmt(common.finite(diff.max()))} across the points {note}"
            + (f". Why, measured (study004-why): {why}" if why else ""),
            per_seed=common.per_seed(one_seed, eq6_gain),
        )
    if "eq6-improves-1v1" in out and dirs.get("study004-sens") is not None:
        out["eq6-improves-1v1"] = _across_queues(out["eq6-improves-1v1"], dirs["study004-sens"])
    many = points(dirs["study004-many"])
    many_seed = points(dirs["study004-many"], by_seed=True)
    n = int(many["count"].max())
    m = many[many["count"] == n]
    top = float(m["pc2_ms"].max())
    eq6 = m[m["k"] == "eq6"]
    small6 = eq6[eq6["pc2_ms"] <= SMALL_GAP_MS]
    out["eq6-fair-small-gap-many"] = Measured(
        common.finite(small6["jain"].min()) if len(small6) else None,
        f"{n}v{n}, eq. 6, PC2 <= {SMALL_GAP_MS:g} ms: lowest Jain",
        f"Jain by PC2 RTT: {', '.join(f'{a:g} ms {b:.3f}' for a, b in zip(small6['pc2_ms'], small6['jain'], strict=True))}",
    )
    j6 = common.finite(_at(eq6, pc2_ms=top)["jain"].mean())
    js = common.finite(_at(m[m["k"] == "stock"], pc2_ms=top)["jain"].mean())

    def like_stock(g: pd.DataFrame) -> float | None:
        gm = g[g["count"] == n]
        a = _at(gm[gm["k"] == "eq6"], pc2_ms=top)["jain"]
        b = _at(gm[gm["k"] == "stock"], pc2_ms=top)["jain"]
        return float(a.mean() - b.mean()) if len(a) and len(b) else None

    out["eq6-like-stock-large-gap-many"] = Measured(
        None if j6 is None or js is None else j6 - js,
        f"{n}v{n}, PC2 {top:g} ms, per seed",
        f"Jain eq. 6 {common.fmt(j6)}, stock {common.fmt(js)}; PC1's share eq. 6 "
        f"{common.fmt(_share_at(m, 'eq6', top))}, stock {common.fmt(_share_at(m, 'stock', top))}"
        + _climb(dirs["study004-many"], n, top),
        per_seed=common.per_seed(many_seed, like_stock),
        degenerate=floor(j6, js),
    )
    ms = many_seed[many_seed["count"] == n]
    for cid, k, label in (
        ("eq6-long-loses-large-gap-many", "eq6", "eq. 6"),
        ("stock-many-short-wins", "stock", "stock"),
    ):
        sh = common.finite(_at(m[m["k"] == k], pc2_ms=top)["share"].mean())
        out[cid] = Measured(
            sh,
            f"{n}v{n}, {label}, PC2 {top:g} ms: PC1's share",
            f"PC1 (short RTT) gets {common.fmt(sh)} of the throughput {note}",
            per_seed=common.per_seed(many_seed, share_at(k, pc1_min, top, n)),
            degenerate=lockout(_at(ms[ms["k"] == k], pc2_ms=top)["share"]),
        )
    eq7 = m[m["k"].str.startswith("eq7")]
    large7 = eq7[np.isclose(eq7["pc2_ms"], top)].sort_values("jain", ascending=False)
    if len(large7) and j6 is not None:
        best = large7.iloc[0]

        def eq7_gain(g: pd.DataFrame, k7: str = str(best["k"])) -> float | None:
            gm = g[g["count"] == n]
            a = _at(gm[gm["k"] == k7], pc2_ms=top)["jain"]
            b = _at(gm[gm["k"] == "eq6"], pc2_ms=top)["jain"]
            return float(a.mean() - b.mean()) if len(a) and len(b) else None

        out["eq7-improves-large-gap-many"] = Measured(
            float(best["jain"]) - j6,
            f"{n}v{n}, PC2 {top:g} ms, best of {sorted(eq7['k'].unique())}",
            f"Jain with {best['k']} {best['jain']:.3f} against eq. 6's {j6:.3f}; by a: "
            + ", ".join(f"{k} {v:.3f}" for k, v in zip(large7["k"], large7["jain"], strict=True))
            + f"; PC1's (short-RTT) share there: stock {common.fmt(_share_at(m, 'stock', top))}, "
            f"eq. 6 {common.fmt(_share_at(m, 'eq6', top))}, {best['k']} "
            f"{common.fmt(_share_at(m, str(best['k']), top))}: eq. 7 moves the share by "
            f"{common.fmt(_delta(_share_at(m, str(best['k']), top), _share_at(m, 'eq6', top)))} "
            "from eq. 6's, short of the +0.1 Jain the paper reads (the output queue, the "
            "deciding unknown, is swept in the sensitivity table below)"
            + _eq7_uniform(pc1_min, top),
            per_seed=common.per_seed(many_seed, eq7_gain),
        )
        # a small gap, not none: at PC2 = PC1 there is no long-RTT group to favour
        near = eq7[
            (eq7["k"] == best["k"])
            & (eq7["pc2_ms"] <= SMALL_GAP_MS)
            & (eq7["pc2_ms"] > eq7["pc1_ms"])
        ]
        low = near.sort_values("share").iloc[0] if len(near) else None
        tied = [
            str(k)
            for k, j in zip(large7["k"], large7["jain"], strict=True)
            if j >= best["jain"] - A_TIE
        ]
        out["eq7-overfavours-long-small-gap"] = Measured(
            common.finite(near["share"].min()) if len(near) else None,
            f"{best['k']}, {n}v{n}, {pc1_min:g} ms < PC2 <= {SMALL_GAP_MS:g} ms: the lowest "
            "PC1 share, per seed at that point",
            f"PC1's share by PC2 RTT: {', '.join(f'{a:g} ms {b:.3f}' for a, b in zip(near['pc2_ms'], near['share'], strict=True))}"
            + "; eq. 6's at the same RTTs: "
            + ", ".join(
                f"{a:g} ms {common.fmt(_share_at(m, 'eq6', float(a)))}" for a in near["pc2_ms"]
            )
            + (
                f": with {best['k']} the short-RTT group still takes the larger share, so the "
                "long group's window growth does not overtake it at a small gap as the paper's did"
                if len(near) and float(near["share"].min()) >= 0.5
                else ""
            )
            + (_eq7_uniform(pc1_min, float(near["pc2_ms"].max())) if len(near) else ""),
            per_seed=None
            if low is None
            else common.per_seed(
                many_seed, share_at(str(best["k"]), float(low["pc1_ms"]), float(low["pc2_ms"]), n)
            ),
            degenerate=(
                f"a not determined: {', '.join(tied)} tie within {A_TIE:g} Jain at PC2 {top:g} ms"
                if len(tied) > 1
                else ""
            ),
        )
    counts = sorted(int(c) for c in many["count"].unique())
    if 4 in counts and 16 in counts:

        def worst_16(g: pd.DataFrame) -> float | None:
            e = g[g["k"] == "eq6"]
            a = _at(e[e["count"] == 16], pc2_ms=top)["jain"]
            b = _at(e[e["count"] == 4], pc2_ms=top)["jain"]
            return float(a.mean() - b.mean()) if len(a) and len(b) else None

        e6 = many[many["k"] == "eq6"]
        j16 = common.finite(_at(e6[e6["count"] == 16], pc2_ms=top)["jain"].mean())
        j4 = common.finite(_at(e6[e6["count"] == 4], pc2_ms=top)["jain"].mean())
        out["eq6-16v16-worst"] = Measured(
            worst_16(many),
            f"eq. 6, PC2 {top:g} ms: Jain 16v16 - Jain 4v4",
            f"Jain eq. 6 at PC2 {top:g} ms: 16v16 {common.fmt(j16)}, 4v4 {common.fmt(j4)}",
            per_seed=common.per_seed(many_seed, worst_16),
        )
    else:
        out["eq6-16v16-worst"] = Measured(
            None,
            skipped="not judged in this design: it runs "
            + ", ".join(f"{c}v{c}" for c in counts)
            + " only (the full design runs 4v4 and 16v16)",
        )
    runs1 = common.frames(dirs["study004-1v1"])["runs"]
    runs_many = common.frames(dirs["study004-many"])["runs"]
    one_ids = [
        "stock-short-wins",
        "stock-short-wins-everywhere",
        "stock-fairness-falls",
        "eq6-improves-1v1",
    ]
    common.tag(
        out,
        one_ids,
        "study004-1v1: flow_series.goodput_bps, second half of each run, summed per group",
        common.seeds_of(runs1),
    )
    common.tag(
        out,
        [k for k in out if k not in one_ids],
        "study004-many: flow_series.goodput_bps, second half of each run, summed per group",
        common.seeds_of(runs_many),
    )
    return out


def _eq7_uniform(pc1_ms: float, pc2_ms: float) -> str:
    """What eq. 7 as printed can change: it multiplies every connection's K by one a, so the
    two groups' K ratio stays eq. 6's, the cube root of their RTT ratio; a moves both groups'
    recovery alike. How the paper gave the large-RTT group more (a on that group only?) is not
    in its text: the unknown eq. 7's findings hang on (the data file's anomalies)."""
    if pc1_ms <= 0 or pc2_ms <= 0:
        return ""
    return (
        f". Eq. 7 as printed (K = a x cbrt(W_max beta / c) / cbrt(RTT), §5.2) multiplies both "
        f"groups' K by the same a, so the factor on PC1's K over the factor on PC2's stays "
        f"eq. 6's cbrt({pc2_ms:g} / {pc1_ms:g}) = {(pc2_ms / pc1_ms) ** (1 / 3):.2f} at every a, and a "
        "moves both groups' recovery alike; the 'further advantage' §5.2 describes for the "
        "large-RTT connections needs an a on them alone, which the text does not say (the "
        "paper's anomaly): satcc runs eq. 7 as printed"
    )


def _share_at(m: pd.DataFrame, k: str, pc2_ms: float) -> float | None:
    """PC1's mean share for variant k at one PC2 RTT (the many-vs-many table)."""
    return common.finite(_at(m[m["k"] == k], pc2_ms=pc2_ms)["share"].mean())


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _across_queues(m: Measured, sens: Path) -> Measured:
    """eq. 6's gain over stock (rtt_unit 100 ms) at the sensitivity point (1v1, PC2 128 ms) for
    every swept output queue in the plausible range (PLAUSIBLE_QUEUE_PKTS): the headline is
    judged only when each gives its verdict; otherwise "not judged", the sweep printed."""
    from satcc.studies.claims import across, load

    claim = next(c for c in load("004").claims if c.id == "eq6-improves-1v1")
    seeds = points(sens, by_seed=True, extra=("queue",))
    lo, hi = PLAUSIBLE_QUEUE_PKTS
    by_queue: dict[str, tuple[float | None, tuple[float, ...] | None]] = {}
    for queue in sorted(set(seeds["queue"]), key=lambda q: float(str(q).split()[0])):
        if not lo <= float(str(queue).split()[0]) <= hi:
            continue
        pv = seeds[seeds["queue"] == queue].pivot_table(
            index="repetition", columns="k", values="jain"
        )
        if {"stock", "eq6"} <= set(pv.columns):
            diff = (pv["eq6"] - pv["stock"]).dropna()
            by_queue[str(queue)] = (common.finite(diff.mean()), tuple(float(x) for x in diff))
    if not by_queue:
        return m
    sweep, depends = across(claim, by_queue, "the emulator's output queue")
    return dataclasses.replace(
        m,
        why=f"{m.why}. At 1v1, PC2 128 ms over the plausible output queue ({lo}-{hi} packets, "
        f"study004-sens): {sweep}. The headline: 1000 packets, every 1v1 point",
        skipped=m.skipped or depends,
    )


def sensitivity(dirs: dict[str, Path]) -> list[str]:
    """The unknowns the paper does not give, swept (never picked by the result): the output
    queue and eq. 6's RTT unit at 1v1, PC2 128 ms (study004-sens), and eq. 7's a at many vs
    many (study004-many). Per point: PC1's share, Jain, and eq. 6 - stock in Jain with its
    sign test across seeds."""
    from satcc.studies.claims import paired_test
    from satcc.textgrid import grid

    lines: list[str] = []
    d = dirs.get("study004-sens")
    if d is not None:
        pts = points(d, extra=("queue",))
        seeds = points(d, by_seed=True, extra=("queue",))
        body = []
        pts = pts.assign(_q=pts["queue"].astype(str).str.split().str[0].astype(float))
        for (_q, queue, k), g in pts.groupby(["_q", "queue", "k"], sort=True):
            row = [str(queue), str(k), f"{g['share'].mean():.3f}", f"{g['jain'].mean():.3f}"]
            if k == "stock":
                row.append("-")
            else:
                sq = seeds[seeds["queue"] == queue]
                pv = sq.pivot_table(index="repetition", columns="k", values="jain")
                if {"stock", k} <= set(pv.columns):
                    diff = (pv[k] - pv["stock"]).dropna()
                    t = paired_test(tuple(diff), 0.0, 1)
                    row.append(
                        f"{diff.mean():+.3f} ({t.k} of {t.n} seeds up, "
                        f"{'shown' if t.shown else 'not shown'})"
                    )
                else:
                    row.append("-")
            body.append(row)
        lines.append(
            "1v1, PC1 2 ms vs PC2 128 ms: the emulator's output queue and eq. 6's RTT unit "
            "(study004-sens; the headline uses 1000 packets and 100 ms)"
        )
        lines.extend(
            grid(["queue", "k", "PC1 share", "Jain", "Jain - stock (sign test)"], body, left={0, 1})
        )
    many = points(dirs["study004-many"])
    n = int(many["count"].max()) if len(many) else 0
    top = float(many["pc2_ms"].max()) if len(many) else 0.0
    if dirs.get(MANY_UNIT) is not None:
        many = pd.concat([many, points(dirs[MANY_UNIT])], ignore_index=True)
    m = many[(many["count"] == n) & np.isclose(many["pc2_ms"], top)]
    if len(m):
        lines.append("")
        lines.append(
            f"{n}v{n}, PC2 {top:g} ms: eq. 7's a (and eq. 6's RTT unit) against stock "
            f"(study004-many; eq6-unit10ms from {MANY_UNIT}, full design)"
        )
        lines.extend(
            grid(
                ["k", "PC1 share", "Jain"],
                [
                    [str(k), f"{sh:.3f}", f"{j:.3f}"]
                    for k, sh, j in zip(m["k"], m["share"], m["jain"], strict=True)
                ],
                left={0},
            )
        )
    return lines


def _why_text(dirs: dict[str, Path]) -> str:
    """The investigation's paragraph when this run has the study004-why campaign."""
    from satcc.studies import study004_why as why

    d = dirs.get("study004-why")
    if d is None:
        return ""
    return why.explain(why.summary(why.per_run(d)))


def _panel(ax, p: pd.DataFrame, title: str, stock: pd.DataFrame | None = None) -> None:
    """Throughput per group and Jain's index by PC2 RTT; `stock` adds stock CUBIC's Jain at the
    same points, so a K mode's figure shows what it changed."""
    p = p.sort_values("pc2_ms")
    ax.plot(p["pc2_ms"], p["short_mbps"], "o-", label="PC1 (short RTT group)")
    ax.plot(p["pc2_ms"], p["long_mbps"], "s-", label="PC2 (long RTT group)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("PC2-PC3 RTT (ms, configured)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax2 = ax.twinx()
    ax2.plot(p["pc2_ms"], p["jain"], "k^--", label="Jain's index")
    if stock is not None and len(stock):
        s = stock.sort_values("pc2_ms")
        ax2.plot(s["pc2_ms"], s["jain"], ":", color="0.55", marker="v", label="Jain, stock CUBIC")
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("fairness index")
    ax.set_title(title, fontsize="medium")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize="x-small", loc="center left")


def figures(dirs: dict[str, Path], out: Path) -> list[common.Figure]:
    figs = []
    one = points(dirs["study004-1v1"])
    for base, k, what in ((5, "stock", "stock CUBIC"), (10, "eq6", "eq. 6")):
        for i, pc1 in enumerate((2.0, 4.0, 16.0, 64.0)):
            p = _at(one[one["k"] == k], pc1_ms=pc1)
            if p.empty:
                continue
            fig, ax = common.new_figure()
            number = base + i
            ref = _at(one[one["k"] == "stock"], pc1_ms=pc1) if k != "stock" else None
            _panel(ax[0][0], p, f"Fig. {number}: {what}, 1v1, PC1-PC3 RTT {pc1:g} ms", ref)
            figs.append(
                common.save(
                    fig,
                    out,
                    f"fig{number}_{k}_pc1_{pc1:g}ms",
                    f"Fig. {number}",
                    "Second-half throughput per group and Jain's index, mean of "
                    "seeds (the paper prints no numbers to overlay)",
                )
            )
    figs.extend(_fig9(dirs["study004-1v1"], out))
    many = points(dirs["study004-many"])
    for count, numbers in ((4, (14, 16)), (16, (15, 17))):
        m = many[many["count"] == count]
        if m.empty:
            continue
        fig, ax = common.new_figure()
        _panel(
            ax[0][0],
            m[m["k"] == "eq6"],
            f"Fig. {numbers[0]}: eq. 6, {count}v{count}, PC1 2 ms",
            m[m["k"] == "stock"],
        )
        figs.append(
            common.save(
                fig,
                out,
                f"fig{numbers[0]}_eq6_{count}v{count}",
                f"Fig. {numbers[0]}",
                "Eq. 6 (rtt_unit 100 ms); group sums",
            )
        )
        ks = sorted(k for k in m["k"].unique() if k.startswith("eq7"))
        if ks:
            fig, axes = common.new_figure(1, len(ks), width=4.6)
            for ax, k in zip(axes[0], ks, strict=True):
                _panel(
                    ax,
                    m[m["k"] == k],
                    f"Fig. {numbers[1]}: {k}, {count}v{count}",
                    m[m["k"] == "stock"],
                )
            figs.append(
                common.save(
                    fig,
                    out,
                    f"fig{numbers[1]}_eq7_{count}v{count}",
                    f"Fig. {numbers[1]}",
                    "Eq. 7 for each swept a (rtt_unit 100 ms)",
                )
            )
    figs.extend(_why_figures(dirs, out))
    return figs


def _why_figures(dirs: dict[str, Path], out: Path) -> list[common.Figure]:
    """Eq. 6 taken apart (study004-why) and the many-vs-many phase check (study004-phase)."""
    from satcc.studies import study004_why as why

    figs = []
    if "study004-why" in dirs:
        s = why.summary(why.per_run(dirs["study004-why"]))
        rtts = sorted(s["pc2_ms"].unique())
        fig, axes = common.new_figure(1, len(rtts), width=5.2)
        units = [k for k in s["k"].unique() if k != "stock"]
        for ax, rtt in zip(axes[0], rtts, strict=True):
            at = s[np.isclose(s["pc2_ms"], rtt) & (s["k"] != "stock")]
            setups = list(dict.fromkeys(at["setup"]))
            width = 0.8 / max(len(units), 1)
            for j, k in enumerate(units):
                sel = at[at["k"] == k].set_index("setup").reindex(setups)
                x = np.arange(len(setups)) + j * width
                bars = ax.bar(x, sel["d_jain"], width, label=k, color=f"C{j}")
                for b, holds in zip(bars, sel["holds"], strict=True):
                    if holds != "shown":
                        b.set_hatch("//")
                        b.set_alpha(0.5)
            ax.axhline(0, color="k", lw=0.6)
            ax.set_xticks(np.arange(len(setups)) + 0.4 - width / 2, setups, rotation=30, ha="right")
            ax.set_ylabel("Jain(eq. 6) − Jain(stock)")
            ax.set_title(f"PC1 2 ms vs PC2 {rtt:g} ms, 1v1", fontsize="medium")
        from matplotlib.patches import Patch

        colours = [f"C{j}" for j in range(len(units))]
        axes[0][0].legend(
            handles=[Patch(facecolor=c, label=k) for c, k in zip(colours, units, strict=True)],
            fontsize="x-small",
            title="RTT unit of eq. 6",
            title_fontsize="x-small",
        )
        figs.append(
            common.save(
                fig,
                out,
                "why_eq6",
                "Eq. 6 taken apart",
                "Change of Jain's index from stock CUBIC by eq. 6's RTT unit, per setup (the "
                "testbed: a 1000-packet queue on a 1000 Hz tick; no Reno emulation; 50/5000-slot "
                "queues; 10 Gbit/s access; exact service; exact service on 50 slots); hatched: "
                "the change is not shown by the sign test over the seeds (it needs 5 on one side)",
            )
        )
    if "study004-phase" in dirs:
        p = why.phase(dirs["study004-phase"])
        fig, axes = common.new_figure(1, 2, width=5.2)
        for ax, col, what in (
            (axes[0][0], "long_share", "PC2's (long RTT) share"),
            (axes[0][1], "long_min", "slowest PC2 flow (Mbit/s)"),
        ):
            labels = [f"{r.count}v{r.count}, {r.pc2_ms:g} ms" for r in p.itertuples()]
            order = list(dict.fromkeys(labels))
            services = list(dict.fromkeys(p["service"]))
            width = 0.8 / max(len(services), 1)
            for j, svc in enumerate(services):
                sel = p[p["service"] == svc]
                lab = [f"{r.count}v{r.count}, {r.pc2_ms:g} ms" for r in sel.itertuples()]
                x = [order.index(label) + j * width for label in lab]
                ax.bar(x, sel[col], width, label=svc)
            ax.set_xticks(np.arange(len(order)) + 0.4 - width / 2, order, rotation=30, ha="right")
            ax.set_ylabel(what)
        axes[0][0].axhline(0.5, color="k", lw=0.6, ls=":")
        axes[0][0].legend(fontsize="x-small", title="bottleneck service", title_fontsize="x-small")
        figs.append(
            common.save(
                fig,
                out,
                "phase_tick",
                "Phase starvation and the tick service",
                "Many vs many at small RTT gaps (PC1 2 ms, the study's 1000-packet queue): PC2's "
                "share and its slowest flow, with the bottleneck serving exactly or on a "
                "dummynet-like tick",
            )
        )
    return figs


def _fig9(d: Path, out: Path) -> list[common.Figure]:
    """Fig. 9: the two connections' congestion windows (stock, the largest RTT gap, seed 1)."""
    f = common.frames(d, flow_series=True)
    runs = f["runs"]
    runs = runs[(common.param(runs, "k") == "stock") & (runs["repetition"] == 0)]
    if runs.empty:
        return []
    pick = (
        runs.assign(
            gap=common.param(runs, "rtt_pc2_ms")
            - (common.param(runs, "rtt_pc1_ms") if "rtt_pc1_ms" in runs else 0.0)
        )
        .sort_values("gap")
        .iloc[-1]
    )
    fs = f["flow_series"]
    fs = fs[fs["run_id"] == pick["run_id"]]
    flows = f["flows"][f["flows"]["run_id"] == pick["run_id"]]
    fig, ax = common.new_figure()
    ax = ax[0][0]
    for _, fl in flows.iterrows():
        s = fs[fs["flow_id"] == fl["id"]]
        ax.plot(s["t_s"], s["cwnd_pkts"], lw=0.8, label=f"{fl['name']} ({fl['rtt_min_ms']:.0f} ms)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd at the end of each 1 s bin (packets)")
    ax.legend(fontsize="small")
    ax.set_title("Fig. 9: congestion windows, stock CUBIC, largest RTT gap", fontsize="medium")
    return [
        common.save(
            fig,
            out,
            "fig9_cwnd",
            "Fig. 9",
            "The two connections' windows in one run (the paper's Fig. 9 is a sketch of "
            "synchronised losses; this is satcc's run)",
        )
    ]
