"""Study 001: five congestion controls over Starlink residential and business dishes.

The study (shared/papers/001_0842741f9095ff4b.txt §4.2): each hour, BBR, CUBIC, DCTCP, Vegas,
YeAH in turn, a 15 s iperf3 run per direction (upload, download), business at :00 and
residential at :05, 61 rounds; tshark captures binned per 0.1 s; nping before each run.
satcc: campaigns/study001-cca.toml (one flow per run, plan x direction x cca x 61 seeds).

Measured as the study measured, where satcc can:
- throughput per run: the flow's mean goodput over the 15 s (iperf3's figure);
- the 0.1 s series (Fig. 5-6): bytes put on the wire of the link direction that enters the
  receiver, per 0.1 s bin (link_series.tx_bytes: IP bytes, retransmissions included, as a
  capture at the receiver counts them; not the in-order goodput);
- retransmission rate: retransmitted / sent data segments; for retx-down-low the study's own
  rate, tshark's, whose denominator is every captured packet, ACKs included (the receiver's
  ACKs counted from the ACK direction's bytes, 52 B each);
- idle RTT (Fig. 4): the path's propagation delays per bin summed both ways (no queueing),
  what nping sees a minute before the run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from satcc.studies import common
from satcc.studies.claims import Measured, distance
from satcc.studies.claims import load as claims_of

CAMPAIGNS = ("study001-cca", "study001-spread")
MAIN = "study001-cca"
# the business dish's RTT spread swept (the full design only: `--quick` runs the headline ratio)
SPREAD = "study001-spread"
# the emulator: downlink capacity draws scaled to what this machine carries (100 Mbit/s)
# (one factor for both plans, so that business's 220 Mbit/s tops at 100: residential 50-150 ->
# 22.7-68.2, business 40-220 -> 18.2-100 Mbit/s; capped at one range the plans would be one
# scenario)
DOWNLINK_TOP_BPS = 220e6
EMU_CHANGES = {
    "link[0].model.capacity_ba": common.scaled_rates(common.EMU_MAX_RATE_BPS / DOWNLINK_TOP_BPS)
}
CCAS = ("bbr", "cubic", "dctcp", "vegas", "yeah")  # the study's order
PLANS = ("residential", "business")
START_S = 3.0  # "at flow start" (Fig. 6e): the first 3 s of a 15 s run


def run(ctx: common.Context) -> dict[str, Path]:
    names = [n for n in CAMPAIGNS if not (n == SPREAD and (ctx.quick or ctx.kernel_design))]
    return {
        name: common.run(ctx, name, EMU_CHANGES if ctx.emulator_paths else None) for name in names
    }


def kernel_plan() -> list[common.Planned]:
    """What the kernel design (`--quick --engine emu`, or `--design kernel`) runs: the main
    campaign's [kernel] design (business's RTT spread at its headline ratio), the emulator's
    paths."""
    return common.kernel_plan({MAIN: EMU_CHANGES})


def _load(d: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    f = common.frames(d, link_series=True)
    flows = f["flows"].assign(
        plan=lambda x: common.param(x, "plan"), direction=lambda x: common.param(x, "direction")
    )
    ls = f["link_series"].assign(
        plan=lambda x: common.param(x, "plan"),
        direction=lambda x: common.param(x, "direction"),
        cca=lambda x: common.param(x, "cca"),
    )
    rtt = ls.groupby(["run_id", "t_s"], as_index=False).agg(
        rtt_ms=("delay_ms", "sum"), plan=("plan", "first"), repetition=("repetition", "first")
    )
    # the link direction entering the receiver: pop->server (link 1 ab) for uploads,
    # pop->dish (link 0 ba) for downloads
    into = ls[
        ((ls["direction"] == "up") & (ls["link_id"] == 1) & (ls["dir"] == "ab"))
        | ((ls["direction"] == "down") & (ls["link_id"] == 0) & (ls["dir"] == "ba"))
    ]
    bin_s = float(f["runs"]["bin_s"].iloc[0]) if len(f["runs"]) else 0.1
    into = into.assign(rx_mbps=into["tx_bytes"] * 8 / bin_s / 1e6)
    return flows, into, rtt, ls


ACK_BYTES = 52  # an ACK's IP + TCP headers with timestamps (20 + 20 + 12 B); SACK blocks add bytes


def _acks_per_run(ls: pd.DataFrame) -> pd.Series | None:
    """The receiver's ACKs per run, from the bytes on the link direction leaving it (dish->pop,
    link 0 ab, for downloads; server->pop, link 1 ba, for uploads; one flow per run) over an
    ACK's 52 B: a slight over-count in recovery, where SACK blocks lengthen the ACKs."""
    if not {"tx_bytes", "dir", "link_id", "direction"} <= set(ls.columns):
        return None
    out = ls[
        ((ls["direction"] == "down") & (ls["link_id"] == 0) & (ls["dir"] == "ab"))
        | ((ls["direction"] == "up") & (ls["link_id"] == 1) & (ls["dir"] == "ba"))
    ]
    return out.groupby("run_id")["tx_bytes"].sum() / ACK_BYTES


def _retx_at_start(dirs: list[Path], flows: pd.DataFrame) -> str:
    """Where each CCA's downlink retransmissions fall: the share in the first START_S s (the
    slow start's overshoot), computed from the runs' per-bin retransmissions."""
    got = [common.frames(d, flow_series=True).get("flow_series") for d in dirs]
    got = [f for f in got if f is not None and len(f)]
    if not got:
        return ""
    fs = pd.concat(got, ignore_index=True)
    keys = flows[["run_id", "id", "cca", "direction"]].rename(columns={"id": "flow_id"})
    fs = fs[["run_id", "flow_id", "t_s", "retransmits"]].merge(keys, on=["run_id", "flow_id"])
    fs = fs[fs["direction"] == "down"]
    total = fs.groupby("cca")["retransmits"].sum()
    early = fs[fs["t_s"] < START_S].groupby("cca")["retransmits"].sum()
    share = (early / total.where(total > 0)).dropna().sort_values(ascending=False)
    if not len(share):
        return ""
    return (
        f"; share of each CCA's downlink retransmissions in its first {START_S:g} s: "
        + ", ".join(f"{c} {v * 100:.0f} %" for c, v in share.items())
        + " (Linux's Reno-style slow start, which DCTCP and YeAH use, has no HyStart: "
        "tcp_cubic.c alone has it, so their first loss comes after a whole overshoot)"
    )


def _own_spread(flows: pd.DataFrame, into: pd.DataFrame) -> str:
    """What the run means' spread is made of: every CCA of a round runs on the same capacity
    draws, so a CCA that fills the link spreads as the draws do; each run's goodput over its
    own mean capacity draw (downlink) takes the draw out, and its std ranks the CCAs by their
    own variability."""
    if "capacity_bps" not in into.columns:
        return ""
    down = into[into["direction"] == "down"]
    cap = down.groupby("run_id")["capacity_bps"].mean()
    f = flows[flows["direction"] == "down"]
    f = f.assign(util=f["goodput_bps"] / f["run_id"].map(cap))
    parts = []
    for plan in PLANS:
        sd = f[f["plan"] == plan].groupby("cca")["util"].std().dropna()
        sd = sd.sort_values(ascending=False)
        if len(sd):
            parts.append(f"{plan}: " + ", ".join(f"{c} {v:.3f}" for c, v in sd.items()))
    if not parts:
        return ""
    return (
        ". The run means' spread is mostly the capacity draw: every CCA of a round runs on the "
        "same draws (the study ran the five one after another, §4.2, each on its own epochs), "
        "so the CCAs that fill the link spread as the draws do; each run's goodput over its own "
        "mean capacity draw takes the draw out, its std by CCA: " + "; ".join(parts)
    )


# The uplink's capacity has only study 000's lower bound (20 Mbit/s of UDP on the same dishes,
# 000 §4.4): campaigns/study001-cca.toml sweeps its upper end. Business's RTT spread has only
# its side (§5.1: residential's varies more): study001-cca.toml draws it at 1/1.5 of the
# presets', study001-spread.toml at 1/1.25 and 1/2 (the full design). Every finding is judged
# across the points (common.over_points): not judged where their verdicts differ.
UPLINK = "the uplink's capacity above study 000's 20 Mbit/s UDP bound"
UNKNOWNS = (
    f"{UPLINK}, and how much less business's RTT varies than residential's (§5.1 gives the "
    "side, not the size)"
)
SPREAD_HEADLINE = "1.5"  # study001-cca.toml's business RTT: each quantile's distance / 1.5
SPREAD_UPLINK = "20-30"  # the uplink point study001-spread.toml runs at


def point_label(uplink: str, spread: str) -> str:
    """A swept point's name: the uplink's capacity range and business's RTT spread."""
    return f"uplink {uplink} Mbit/s, business RTT spread 1/{spread}"


def _over_best(rows: pd.DataFrame, cca: str, others: list[str]) -> float | None:
    """`cca`'s mean run goodput over the best of `others`' (the same rows: a plan's downlink
    runs, all rounds or one)."""
    by = rows.groupby("cca")["goodput_bps"].mean()
    rest = by.reindex(others).dropna()
    return common.ratio(
        common.finite(by.get(cca)), common.finite(rest.max()) if len(rest) else None
    )


def _loaded(dirs: dict[str, Path]) -> tuple[pd.DataFrame, ...]:
    """Both campaigns' frames in one (flows, into, rtt, ls), each row with its `uplink` and
    business's RTT `spread` (study001-cca's runs at the headline ratio)."""
    parts = []
    for name in (MAIN, SPREAD):
        if name not in dirs:
            continue
        frames = _load(dirs[name])
        flows = frames[0]
        up = common.param(flows, "uplink").astype(str) if len(flows) else None
        sp = (
            common.param(flows, "spread").astype(str)
            if name == SPREAD and len(flows)
            else SPREAD_HEADLINE
        )
        tags = flows[["run_id"]].assign(uplink=up, spread=sp).drop_duplicates("run_id")
        parts.append(
            tuple(
                f.drop(columns=[c for c in ("uplink", "spread") if c in f.columns]).merge(
                    tags, on="run_id", how="left"
                )
                if "run_id" in f.columns
                else f
                for f in frames
            )
        )
    return tuple(pd.concat([p[i] for p in parts], ignore_index=True) for i in range(4))


def measure(dirs: dict[str, Path]) -> dict[str, Measured]:
    flows, into, rtt, ls = _loaded(dirs)
    series_dirs = [dirs[n] for n in (MAIN, SPREAD) if n in dirs]
    main = flows[flows["spread"] == SPREAD_HEADLINE]
    chosen = {
        point_label(pt, SPREAD_HEADLINE): set(f["run_id"])
        for pt, f in common.points(main, "uplink").items()
    }
    # each swept ratio: that ratio's business runs beside the same rounds' residential runs at
    # the uplink point they were run at
    others = flows[flows["spread"] != SPREAD_HEADLINE]
    res = set(main[(main["plan"] == "residential") & (main["uplink"] == SPREAD_UPLINK)]["run_id"])
    for sp, f in sorted(common.points(others, "spread").items()) if len(others) else []:
        chosen[point_label(SPREAD_UPLINK, sp)] = set(f["run_id"]) | res
    per_point = {
        pt: _measure(
            series_dirs,
            flows[flows["run_id"].isin(ids)],
            into[into["run_id"].isin(ids)],
            rtt[rtt["run_id"].isin(ids)],
            ls[ls["run_id"].isin(ids)],
        )
        for pt, ids in chosen.items()
    }
    return common.over_points("001", per_point, UNKNOWNS, "{}")


def _measure(
    d: list[Path], flows: pd.DataFrame, into: pd.DataFrame, rtt: pd.DataFrame, ls: pd.DataFrame
) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    by_plan = {p: common.finite(rtt[rtt["plan"] == p]["rtt_ms"].mean()) for p in PLANS}
    sd = {p: common.finite(rtt[rtt["plan"] == p]["rtt_ms"].std()) for p in PLANS}
    claim = {c.id: c for c in claims_of("001").claims}["rtt-mean"]
    known = {p: v for p, v in by_plan.items() if v is not None}
    worst = max(known, key=lambda p: distance(claim, known[p])) if known else None
    spread_of = (
        {str(x) for x in rtt.loc[rtt["plan"] == "business", "spread"].dropna().unique()}
        if "spread" in rtt.columns
        else set()
    )
    ratio = float(next(iter(spread_of))) if len(spread_of) == 1 else None
    drawn = (
        f"residential draws the presets' quantiles (20/40/50/60/85 ms), business the same "
        f"median with each quantile's distance from it divided by {ratio:g}"
        if ratio
        else "each plan draws its own quantiles"
    )
    out["rtt-mean"] = Measured(
        known[worst] if worst else None,
        "mean of the idle path's RTT per 0.1 s bin, each plan: the one farther from the paper",
        f"{drawn}, plus 4 ms to the server: mean "
        + ", ".join(f"{p} {common.fmt(v)}" for p, v in by_plan.items())
        + " ms",
    )
    out["rtt-spread-residential-over-business"] = Measured(
        common.ratio(sd["residential"], sd["business"]),
        "std of the idle RTT per 0.1 s bin, residential / business",
        f"{drawn} (§5.1 gives the side, not the size: swept over 1.25, 1.5 and 2 in the full "
        f"design): std {common.fmt(sd['residential'])} vs {common.fmt(sd['business'])} ms",
    )
    means = flows.groupby(["plan", "direction", "cca"])["goodput_bps"].mean() / 1e6
    for plan in PLANS:
        down = means.xs((plan, "down"), level=("plan", "direction")).sort_values(ascending=False)
        ranking = ", ".join(f"{c} {v:.1f}" for c, v in down.items())
        med = (
            flows[
                (flows["plan"] == plan) & (flows["direction"] == "down") & (flows["cca"] == "bbr")
            ]["goodput_bps"].median()
            / 1e6
        )
        cap = f"downlink capacity draws {'50-150' if plan == 'residential' else '40-220'} Mbit/s"
        drawn = ls[(ls["plan"] == plan) & (ls["direction"] == "down") & (ls["link_id"] == 0)]
        drawn = drawn[drawn["dir"] == "ba"]["capacity_bps"] if "capacity_bps" in drawn else None
        mean_cap = common.finite(drawn.mean() / 1e6) if drawn is not None and len(drawn) else None
        share = (
            f" ({100 * med / mean_cap:.0f} % of the mean draw, {common.fmt(mean_cap)} Mbit/s; the "
            f"study's 120 Mbit/s would be {100 * 120 / mean_cap:.0f} % of it: the preset's range, "
            "a published plan figure the study did not measure, bounds what any CCA gets)"
            if mean_cap and common.finite(med)
            else ""
        )
        out[f"bbr-down-{plan}"] = Measured(
            common.finite(med),
            "median over rounds of the run mean",
            f"satcc's {plan} {cap}; BBR median {common.fmt(med)}{share}",
        )
        why = f"mean downlink Mbit/s: {ranking}"
        rows = flows[(flows["plan"] == plan) & (flows["direction"] == "down")]
        for cid, cca, others in (
            (f"bbr-rank-down-{plan}", "bbr", [c for c in CCAS if c != "bbr"]),
            (f"yeah-rank-down-{plan}", "yeah", [c for c in CCAS if c not in ("bbr", "yeah")]),
        ):
            out[cid] = Measured(
                _over_best(rows, cca, others),
                f"{cca}'s mean downlink / the best of {', '.join(others)}'s, per round",
                why,
                per_seed=common.per_seed(rows, lambda g, a=cca, o=others: _over_best(g, a, o)),
            )
    spread = []
    for plan in PLANS:
        sd_down = (
            flows[(flows["plan"] == plan) & (flows["direction"] == "down")]
            .groupby("cca")["goodput_bps"]
            .std()
            .sort_values(ascending=False)
        )
        rank = {c: i + 1 for i, c in enumerate(sd_down.index)}
        spread.append((plan, rank.get("yeah"), sd_down / 1e6))
    ranks = [r for _, r, _ in spread if r is not None]
    out["yeah-spread-rank"] = Measured(
        float(np.mean(ranks)) if ranks else None,
        "mean over the plans of YeAH's rank by the std of downlink run means",
        "; ".join(
            f"{plan}: " + ", ".join(f"{c} {v:.1f}" for c, v in sd.items()) + " Mbit/s std"
            for plan, _, sd in spread
        )
        + _own_spread(flows, into),
    )
    # per-run statistics only: each run's largest 0.1 s bin (never the largest over the campaign)
    run_peak = into.groupby(["run_id", "cca", "direction", "plan", "repetition"], as_index=False)[
        "rx_mbps"
    ].max()
    down_peak = run_peak[run_peak["direction"] == "down"]

    def vegas_over_best(g: pd.DataFrame) -> float | None:
        """Vegas's largest downlink bin over the largest of the other four's, per plan: the
        higher (the plan where Vegas comes nearer the others)."""
        ratios = []
        for _, gp in g.groupby("plan"):
            by = gp.groupby("cca")["rx_mbps"].median()
            others = by.drop("vegas", errors="ignore")
            r = common.ratio(
                common.finite(by.get("vegas")), common.finite(others.max()) if len(others) else None
            )
            if r is not None:
                ratios.append(r)
        return max(ratios) if ratios else None

    peak_med = down_peak.groupby(["plan", "cca"])["rx_mbps"].median()
    # the cap a 0.1 s bin cannot exceed: the downlink's capacity draw in the run (link_series)
    cap_txt = ""
    if "capacity_bps" in into.columns:
        cap = into[into["direction"] == "down"].groupby(["run_id", "plan"])["capacity_bps"].max()
        cap = cap.groupby(level="plan").median() / 1e6
        cap_txt = (
            "; the largest capacity draw in a run, median: "
            + ", ".join(f"{p} {v:.1f}" for p, v in cap.items())
            + " Mbit/s"
        )
    out["vegas-max"] = Measured(
        vegas_over_best(down_peak),
        "downlink runs: Vegas's largest 0.1 s bin / the largest of the other four's, per round",
        "each run's largest downlink 0.1 s bin, median over the rounds (Mbit/s): "
        + "; ".join(
            f"{plan}: " + ", ".join(f"{c} {v:.1f}" for c, v in peak_med.xs(plan).items())
            for plan in PLANS
            if plan in peak_med.index.get_level_values(0)
        )
        + cap_txt,
        per_seed=common.per_seed(down_peak, vegas_over_best),
    )
    bd = into[(into["plan"] == "business") & (into["direction"] == "down")]

    yb = bd[bd["cca"] == "yeah"]

    def start_ratio(g: pd.DataFrame) -> float | None:
        y = g[g["cca"] == "yeah"]
        return common.ratio(
            common.finite(y[y["t_s"] < START_S]["rx_mbps"].mean()),
            common.finite(y[y["t_s"] >= START_S]["rx_mbps"].mean()),
        )

    def cap_mean(g: pd.DataFrame) -> float | None:
        if "capacity_bps" not in g.columns or not len(g):
            return None
        return common.finite(g["capacity_bps"].mean() / 1e6)

    y0, y1 = yb[yb["t_s"] < START_S], yb[yb["t_s"] >= START_S]
    r0, r1 = common.finite(y0["rx_mbps"].mean()), common.finite(y1["rx_mbps"].mean())
    c0, c1 = cap_mean(y0), cap_mean(y1)
    use = (
        f"; the capacity draw averaged {common.fmt(c0)} then {common.fmt(c1)} Mbit/s, so YeAH "
        f"received {100 * r0 / c0:.0f} % of it in its first {START_S:g} s and {100 * r1 / c1:.0f} "
        "% after"
        if r0 and r1 and c0 and c1
        else ""
    )
    out["yeah-start-peak-business"] = Measured(
        start_ratio(bd),
        f"YeAH's received Mbit/s in its first {START_S:g} s / in the rest of its run",
        f"YeAH on the business downlink: mean {common.fmt(r0)} Mbit/s in the first {START_S:g} s, "
        f"{common.fmt(r1)} after" + use,
        per_seed=common.per_seed(bd, start_ratio),
    )

    def plan_ratio(g: pd.DataFrame) -> float | None:
        by = g.groupby("plan")["goodput_bps"].mean()
        return common.ratio(common.finite(by.get("business")), common.finite(by.get("residential")))

    by_plan = flows.groupby("plan")["goodput_bps"].mean() / 1e6
    out["business-over-residential"] = Measured(
        plan_ratio(flows),
        "mean of every run, business / residential",
        f"means: business {common.fmt(common.finite(by_plan.get('business')))}, residential "
        f"{common.fmt(common.finite(by_plan.get('residential')))} Mbit/s",
        per_seed=common.per_seed(flows, plan_ratio),
    )
    retx = flows.assign(retx_pct=flows["retransmission_rate"] * 100)
    start_share = _retx_at_start(d, flows)
    ys = out["yeah-start-peak-business"]
    out["yeah-start-peak-business"] = dataclasses.replace(ys, why=ys.why + start_share)
    # the study's rate (§5.4): tshark's retransmission-flagged packets over every captured
    # packet, the receiver's ACKs included; the ACKs counted from the ACK direction's bytes
    acks = _acks_per_run(ls)
    down = retx[retx["direction"] == "down"]
    if acks is not None and {"sent_packets", "retransmitted_packets"} <= set(down.columns):
        sent = down["sent_packets"].astype(float)
        tshark = down["retransmitted_packets"].astype(float) / (sent + down["run_id"].map(acks))
        down = down.assign(tshark_pct=tshark * 100)
        col, unit = "tshark_pct", "tshark's rate, ACKs in the denominator"
    else:
        col, unit = "retx_pct", "retransmitted / sent data segments (no ACK count in these runs)"
    down_med = down.groupby(["plan", "cca"])[col].median()
    seg_med = down.groupby(["plan", "cca"])["retx_pct"].median()
    worst = down_med.idxmax() if len(down_med) else None
    acks_per_seg = (
        common.finite((down["run_id"].map(acks) / down["sent_packets"]).median())
        if col == "tshark_pct"
        else None
    )
    out["retx-down-low"] = Measured(
        common.finite(down_med.max()) if len(down_med) else None,
        f"the largest per-CCA median of the downlink's retransmission rate ({unit}), per plan",
        f"downlink medians (%, {unit}): "
        + ", ".join(f"{p} {c} {v:.3f}" for (p, c), v in down_med.items())
        + (
            f"; worst {worst[1]} ({worst[0]}, {seg_med[worst]:.3f} % per data segment)"
            if worst
            else ""
        )
        + (
            f"; the receiver sent {acks_per_seg:.2f} ACKs per data segment (median run), so "
            f"tshark's rate is {100 / (1 + acks_per_seg):.0f} % of the per-segment one"
            if acks_per_seg
            else ""
        )
        + start_share,
    )
    panels = retx.groupby(["plan", "direction", "cca"])["retx_pct"].mean()
    spread_by_panel = {}
    for (plan, direction), g in panels.groupby(level=["plan", "direction"]):
        lo, hi = float(g.min()), float(g.max())
        spread_by_panel[(plan, direction)] = hi / lo if lo > 0 else float("inf")
    worst_panel = max(spread_by_panel, key=spread_by_panel.get) if spread_by_panel else None
    out["retx-similar-across-ccas"] = Measured(
        spread_by_panel[worst_panel] if worst_panel else None,
        "largest / smallest CCA mean retransmission rate, the worst of plan x direction",
        "mean retransmission rate (%) per CCA: "
        + "; ".join(
            f"{p} {d}: " + ", ".join(f"{c} {v:.3f}" for c, v in panels.xs((p, d)).items())
            for p, d in spread_by_panel
        )
        + start_share,
    )
    up_rows = retx[retx["direction"] == "up"]

    def up_ratio(g: pd.DataFrame) -> float | None:
        up = g.groupby("plan")["retx_pct"].median()
        return common.ratio(common.finite(up.get("residential")), common.finite(up.get("business")))

    up_cca = up_rows.groupby(["cca", "plan"])["retx_pct"].median().unstack()
    out["retx-up-residential-over-business"] = Measured(
        up_ratio(up_rows),
        "median uplink retransmission rate, residential / business",
        "both dishes' uplinks draw the same capacity (from study 000's 20 Mbit/s UDP bound, "
        "both dishes alike, as 000 measured them) and the same random loss (0-0.03 %, from 000 "
        "§4.2's idle loss); what tells them apart is business's narrower RTT (§5.1), drawn from "
        "the same round's epochs: per CCA residential / business medians (%): "
        + ", ".join(
            f"{c} {r.get('residential', float('nan')):.3f}/{r.get('business', float('nan')):.3f}"
            for c, r in up_cca.iterrows()
        ),
        per_seed=common.per_seed(up_rows, up_ratio),
    )
    common.tag(
        out,
        ["rtt-mean", "rtt-spread-residential-over-business"],
        "study001-cca: link_series.delay_ms summed per 0.1 s bin",
        common.seeds_of(flows),
    )
    common.tag(
        out,
        ["vegas-max", "yeah-start-peak-business"],
        "study001-cca: link_series.tx_bytes into the receiver per 0.1 s bin, per run",
        common.seeds_of(flows),
    )
    common.tag(
        out,
        ["retx-down-low", "retx-similar-across-ccas", "retx-up-residential-over-business"],
        "study001-cca: flows.retransmission_rate per run",
        common.seeds_of(flows),
    )
    common.tag(
        out,
        list(out),
        "study001-cca: flows.goodput_bps per run (the 15 s mean)",
        common.seeds_of(flows),
    )
    return out


def figures(dirs: dict[str, Path], out: Path) -> list[common.Figure]:
    flows, into, rtt, _ls = _load(dirs[MAIN])
    figs = []
    # Fig. 4 (平均遅延時間): per plan, the mean idle RTT of each run (nping's 50 pings a minute
    # before the run average to one value per run), over the rounds, beside the box of those means
    per_run = rtt.groupby(["plan", "run_id"], as_index=False).agg(
        rtt_ms=("rtt_ms", "mean"), repetition=("repetition", "first")
    )
    fig, axes = common.new_figure(1, 2, width=4.2)
    ax, bx = axes[0]
    for plan in PLANS:
        sel = per_run[per_run["plan"] == plan].groupby("repetition")["rtt_ms"].mean()
        ax.plot(sel.index + 1, sel.to_numpy(), "o-", ms=3, lw=0.8, label=plan)
    ax.axhspan(50, 60, color="red", alpha=0.15, label="paper: mean 50-60 ms")
    ax.set_xlabel("round")
    ax.set_ylabel("mean idle RTT of the run (ms)")
    ax.legend(fontsize="small")
    ax.set_title("Fig. 4: mean RTT per round, by plan", fontsize="medium")
    common.box(bx, [per_run[per_run["plan"] == p]["rtt_ms"].to_numpy() for p in PLANS], list(PLANS))
    bx.axhspan(50, 60, color="red", alpha=0.15)
    bx.set_ylabel("mean idle RTT of the run (ms)")
    bx.set_title("spread by plan", fontsize="medium")
    figs.append(
        common.save(
            fig,
            out,
            "fig4_rtt",
            "Fig. 4",
            "Idle RTT per plan: each run's mean (the path's delays per 0.1 s bin, summed both "
            "ways), over the rounds and as a box per plan (business's RTT drawn about the "
            "presets' median at 1/1.5 of their spread, §5.1)",
        )
    )

    for number, plan in ((5, "residential"), (6, "business")):
        fig, axes = common.new_figure(2, 1, height=2.6)
        first = into[(into["plan"] == plan) & (into["repetition"] == 0)]
        for ax, direction in zip(axes[:, 0], ("up", "down"), strict=True):
            for cca in CCAS:
                s = first[(first["direction"] == direction) & (first["cca"] == cca)]
                ax.plot(s["t_s"], s["rx_mbps"], lw=0.8, label=cca)
            ax.set_ylabel(f"{direction} (Mbit/s)")
        axes[1, 0].axhline(70, color="grey", ls=":", lw=1, label="paper: Vegas ≤ 70")
        axes[1, 0].set_xlabel("time (s)")
        axes[1, 0].legend(fontsize="x-small", ncol=3)
        axes[0, 0].set_title(
            f"Fig. {number}: {plan}, received bytes per 0.1 s (first round)", fontsize="medium"
        )
        figs.append(
            common.save(
                fig,
                out,
                f"fig{number}_{plan}_series",
                f"Fig. {number}",
                "Bytes entering the receiver per 0.1 s (tshark-like), one run per CCA",
            )
        )
    for number, plan, value, scale, label, fid in (
        (7, "residential", "goodput_bps", 1e-6, "throughput (Mbit/s)", "throughput"),
        (8, "business", "goodput_bps", 1e-6, "throughput (Mbit/s)", "throughput"),
        (9, "residential", "retransmission_rate", 100, "retransmission rate (%)", "retx"),
        (10, "business", "retransmission_rate", 100, "retransmission rate (%)", "retx"),
    ):
        fig, axes = common.new_figure(1, 2, width=4.0)
        for ax, direction, sub in zip(axes[0], ("up", "down"), "ab", strict=True):
            sel = flows[(flows["plan"] == plan) & (flows["direction"] == direction)]
            common.box(
                ax,
                [sel[sel["cca"] == c][value].dropna().to_numpy() * scale for c in CCAS],
                list(CCAS),
            )
            if fid == "throughput" and direction == "down":
                common.paper_line(ax, 120, "paper: BBR ≈ 120", "red")
                ax.legend(fontsize="small")
            ax.set_ylabel(label)
            ax.set_title(f"Fig. {number}{sub}: {plan} {direction}link", fontsize="medium")
        figs.append(
            common.save(
                fig,
                out,
                f"fig{number}_{plan}_{fid}",
                f"Fig. {number}",
                f"{label} per 15 s run, boxes over the rounds",
            )
        )
    return figs
