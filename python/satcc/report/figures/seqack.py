"""Study 003 Fig. 6-7: the sequence/ACK graph around a retransmission, and congestion avoidance's
linear ramp."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from satcc.report.figures.common import (
    MODEL,
    Data,
    Drawn,
    Skip,
    new_figure,
)

SSTHRESH_UNSET = 2147483647  # results README: ssthresh not yet set, as Linux
MIN_RAMP_RUN_S = 30.0
MIN_RAMP_BINS = 10
SEQACK_WINDOW_SEGMENTS = 60  # segments either side of the first retransmission


def seqack(data: Data) -> Drawn:
    sa = data.store.query(
        "SELECT run_id, flow_id, kind, t_s, seq_rel, end_rel, ack_rel, "
        "retransmission FROM seqack ORDER BY run_id, flow_id, t_s"
    )
    if sa.empty:
        raise Skip(
            "no sequence/ACK trace: a simulated run with `[scenario.seqack]` or a capture "
            "analysed with its packets (an [[analyze]] entry with a pcap/pcapng file) gives one"
        )
    run_id, flow_id = sa.iloc[0]["run_id"], sa.iloc[0]["flow_id"]
    fig, where = draw_seqack(sa[(sa["run_id"] == run_id) & (sa["flow_id"] == flow_id)])
    return Drawn(
        fig,
        f"Study 003 Fig. 6: time-sequence graph at the sender (a simulated run's trace or "
        f"a capture's largest flow), {2 * SEQACK_WINDOW_SEGMENTS} data segments {where}; "
        f"run {run_id}. The paper shows test 1 (Osaka): one lost segment, reported by SACK "
        f"and retransmitted at 0.25 s.",
    )


def draw_seqack(g: pd.DataFrame) -> tuple[Any, str]:
    """One flow's sequence/ACK rows (the seqack schema) drawn tcptrace-style around its first
    retransmission: the figure and where the window is ("around the first retransmission")."""
    g = g.sort_values("t_s", kind="stable")
    data_pk = g[g["kind"] == "data"].reset_index(drop=True)
    acks = g[g["kind"] == "ack"]
    retx = data_pk.index[data_pk["retransmission"].fillna(False).astype(bool)]
    centre = int(retx[0]) if len(retx) else len(data_pk) // 2
    lo, hi = max(centre - SEQACK_WINDOW_SEGMENTS, 0), centre + SEQACK_WINDOW_SEGMENTS
    win = data_pk.iloc[lo:hi]
    t0, t1 = float(win["t_s"].min()), float(win["t_s"].max())
    fig, axs = new_figure(1, 1, height=4.0)
    ax = axs[0][0]
    retransmitted = win["retransmission"].fillna(False).astype(bool)
    sacks = g[(g["kind"] == "sack") & (g["t_s"] >= t0) & (g["t_s"] <= t1)]
    for rows, colour, width, label in (
        (win[~retransmitted], "tab:blue", 1.5, "data segment"),
        (win[retransmitted], "tab:red", 2.5, "retransmission"),
        (sacks, "tab:orange", 1.0, "SACK block"),
    ):
        if not rows.empty:  # a byte range per row, drawn as a vertical bar at its time
            ax.vlines(
                rows["t_s"],
                rows["seq_rel"] / 1e3,
                rows["end_rel"] / 1e3,
                color=colour,
                lw=width,
                label=label,
            )
    a = acks[(acks["t_s"] >= t0) & (acks["t_s"] <= t1)]
    if not a.empty:
        ax.step(
            a["t_s"],
            a["ack_rel"] / 1e3,
            where="post",
            color="tab:green",
            lw=1,
            label="cumulative ACK",
        )
    ax.set_xlabel("time (s)")
    ax.set_ylabel("relative sequence number (kB)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig, "around the first retransmission" if len(retx) else "(no retransmission)"


def _ca_stretch(s: pd.DataFrame) -> tuple[int, int] | None:
    """The longest run of bins with one ssthresh (set), cwnd >= ssthresh and cwnd never falling
    (a drop is a loss response even when the new ssthresh equals the old), as (start, end)."""
    ss = s["ssthresh_pkts"].to_numpy()
    cw = s["cwnd_pkts"].to_numpy()
    ok = [
        (not pd.isna(a)) and (not pd.isna(b)) and a < SSTHRESH_UNSET and b >= a
        for a, b in zip(ss, cw, strict=True)
    ]
    best, start = None, None
    for i in range(len(ok) + 1):
        same = (
            i < len(ok)
            and ok[i]
            and start is not None
            and ss[i] == ss[start]
            and cw[i] >= cw[i - 1]
        )
        if i < len(ok) and ok[i] and start is None:
            start = i
            continue
        if not same and start is not None:
            if best is None or i - start > best[1] - best[0]:
                best = (start, i)
            start = i if i < len(ok) and ok[i] else None
    return best


def ca_ramp(data: Data) -> Drawn:
    runs = data.runs[(data.runs["engine"] != MODEL) & (data.runs["duration_s"] >= MIN_RAMP_RUN_S)]
    if runs.empty:
        raise Skip(
            f"no sim/emu run of {MIN_RAMP_RUN_S:g} s or more (study 003's ramp took "
            "10-20 minutes: scenarios/lfn-chicago.toml)"
        )
    longest = runs.sort_values(["duration_s", "point"], ascending=[False, True]).iloc[0]
    s = data.store.query(
        f"SELECT flow_id, t_s, goodput_bps, cwnd_pkts, ssthresh_pkts, srtt_ms "
        f"FROM flow_series WHERE run_id = '{longest['run_id']}' "
        "ORDER BY flow_id, t_s"
    )
    s = s[s["flow_id"] == s["flow_id"].min()].reset_index(drop=True)
    if s["cwnd_pkts"].notna().sum() == 0:
        raise Skip("the longest run has no cwnd series")
    stretch = _ca_stretch(s)
    if stretch is None or stretch[1] - stretch[0] < MIN_RAMP_BINS:
        raise Skip(
            f"the longest run ({longest['duration_s']:g} s) has no congestion-avoidance "
            f"stretch of {MIN_RAMP_BINS} bins (no loss set ssthresh, or it stayed short)"
        )
    fig, axs = new_figure(2, 1, height=2.6, sharex=True)
    top, bottom = axs[0][0], axs[1][0]
    top.plot(s["t_s"], s["goodput_bps"] / 1e6, lw=0.8, color="tab:blue")
    top.set_ylabel("goodput (Mbit/s)")
    top.set_ylim(bottom=0)
    bottom.plot(s["t_s"], s["cwnd_pkts"], lw=0.8, color="tab:blue", label="cwnd")
    i, j = stretch
    t = s["t_s"].to_numpy(dtype=float)[i:j]
    w = s["cwnd_pkts"].to_numpy(dtype=float)[i:j]
    slope, icept = np.polyfit(t, w, 1)
    rtt_s = float(np.nanmedian(s["srtt_ms"].to_numpy(dtype=float)[i:j])) / 1e3
    bottom.plot(
        t,
        slope * t + icept,
        color="tab:red",
        lw=1.5,
        ls="--",
        label=f"fit: {slope:.2f} pkt/s = {slope * rtt_s:.2f} pkt per RTT "
        f"(RTT {rtt_s * 1e3:.0f} ms)",
    )
    bottom.set_ylabel("cwnd (packets)")
    bottom.set_xlabel("time (s)")
    bottom.legend(fontsize="small")
    for a in (top, bottom):
        a.grid(True, alpha=0.3)
    return Drawn(
        fig,
        f"Study 003 Fig. 7: the linear ramp of congestion avoidance in the "
        f"longest run ({longest['scenario']}, {longest['duration_s']:g} s, run "
        f"{longest['run_id']}, first flow); the dashed line is a least-squares fit "
        "over the longest stretch with one ssthresh (Reno adds about one packet "
        "per RTT there).",
    )
