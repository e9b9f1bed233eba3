"""Per flow group metrics of sim and kernel runs, their agreement, and the verdicts.

    flows + flow_series of every run (store views, or frames built the same way)
        ──► run_groups(): one row per run x flow group (+ "all" when a scenario has >= 2 groups)
        ──► compare():    per scenario x group: sim and kernel median/min/max per metric,
                          the cwnd distance, and a verdict per target (docs/fidelity.md)

A flow group is a [[flow]] table of the scenario (its `name`; `count` copies `name.k` belong to
it). Engines: SIM, the simulator ("sim", one run per seed), and KERNEL, the real kernel ("emu",
one run per repetition); the kernel is the reference.

Metrics per run and group
| metric       | definition                                                                   |
|--------------|------------------------------------------------------------------------------|
| share        | the group's delivered bytes / those of all flows of the run                  |
| goodput_bps  | the group's delivered (application) bytes x 8 / (the run's duration - the     |
|              | earliest start among the group's flows): for flows that all start at 0, the   |
|              | sum of their goodput_bps; for staggered starts, the rate over the time the    |
|              | group was active (a plain sum of goodput_bps would exceed the link)           |
| retx_rate    | sum of retransmitted_packets / sum of sent_packets (null when nothing was sent) |
| rtt_mean_ms  | mean of the per-bin srtt samples of the group's flows (flow_series.srtt_ms > 0, |
|              | bins from the one the flow starts in)                                          |
| rtt_p95_ms   | their 95th percentile (linear interpolation)                                  |
RTT comes from the per-bin series in both engines because the kernel side can only sample srtt
once per bin (`ss`); the simulator's flows.rtt_mean_ms is over every ACK and is not used.

Aggregation over runs: the median (and mean, min, max) of the per-run values, per engine; the
verdicts compare medians, but for retransmissions the means (below).

cwnd distance (per scenario and group): c_e(t) = the mean cwnd_pkts of the group's flows at
bin t in one run, then the median over the runs of engine e at each bin;
    D = sum_t |c_sim(t) - c_kernel(t)| / sum_t c_kernel(t)
over the bins where both are present (0 = the same curve; 1 = the error is as large as the
kernel's window). Its kernel reference D_kernel is the median over kernel runs of the same
distance between one run's curve and the kernel median (null with fewer than 2 kernel runs):
CUBIC's sawtooth in two runs is not phase-aligned, so D is read against D_kernel, and it has
no pass/fail target.

Verdicts (the agreement the simulator is held to; `TARGETS` below holds the numbers):
| metric      | rows                         | pass when                                           |
|-------------|------------------------------|-----------------------------------------------------|
| share       | groups of >= 2-group scenarios | abs(sim - kernel) <= 0.10                         |
| goodput_bps | the scenario total ("all", or the only group) | abs(sim - kernel) <= 10 % of kernel |
| retx_rate   | every row                    | the means over runs: both below 0.1 %, or the 90 %  |
|             |                              | interval of sim/kernel inside [1/2, 2] (see below)  |
| rtt_mean_ms | every row                    | abs(sim - kernel) <= 10 % of kernel                 |
A verdict is null (n/a) when either side has no value (no kernel run, no RTT sample).

Retransmissions are judged on the mean over runs, with an interval, because a run's rate is
often one slow start's overshoot or none: the per-run rates of a row fall into two modes (about
0.01 % and about 1 % in fid-vegas-vs-cubic) and their median is decided by single runs. The mean
is the expected rate, what a study averages. With m_e, s_e, n_e the mean, standard deviation and
number of runs of engine e, the ratio r = m_sim / m_kernel has the interval

    r * exp(-/+ t * se),   se^2 = s_sim^2 / (n_sim m_sim^2) + s_kernel^2 / (n_kernel m_kernel^2)

(the delta method on log r; t the Student quantile at 95 % one-sided, Welch-Satterthwaite
degrees of freedom): a two one-sided tests equivalence check at 5 % each side. The verdict is
pass when the interval lies inside [1/retx_ratio, retx_ratio], fail when it lies wholly outside,
and "undecided" (not a pass) when it straddles a bound: the row needs more runs (grid.toml
`min_runs`), decided before the runs, not by adding runs until a verdict appears. Both means
below retx_floor pass (noise near zero); one mean at 0 and the other at or above the floor fails
when that side's one-sided 95 % lower bound is at or above the floor, else is undecided. Fewer
than 2 runs on a side give no interval: undecided unless the floor rule decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from satcc import registry

# The two sides, by their capabilities (satcc.registry): the simulator moves packets in its own
# TCP; the kernel side's TCP is this host's. Exactly one engine plays each.
(SIM,) = registry.names(packets=True, kernel_tcp=False)
(KERNEL,) = registry.names(kernel_tcp=True)
ALL = "all"
PASS = "pass"
FAIL = "fail"
UNDECIDED = "undecided"  # an interval that straddles a target's bound: more runs needed
VERDICTS = (PASS, FAIL, UNDECIDED)
METRICS = ("share", "goodput_bps", "retx_rate", "rtt_mean_ms", "rtt_p95_ms")
RTT_QUANTILE = 0.95
BIN_EPSILON_S = 1e-9  # bin starts are float seconds


@dataclass(frozen=True)
class Targets:
    """How close the simulator must come to the kernel; every verdict is computed from these
    numbers."""

    share_abs: float = 0.10  # share within 0.10 of the kernel's median
    goodput_rel: float = 0.10  # total goodput within 10 %
    retx_ratio: float = 2.0  # mean retransmission rate within 2x (its 90 % interval) ...
    retx_floor: float = 0.001  # ... unless both are below 0.1 % (noise around zero)
    retx_alpha: float = 0.05  # each one-sided test of the equivalence check
    rtt_rel: float = 0.10  # mean RTT within 10 %

    def doc(self) -> dict[str, float]:
        return dict(self.__dict__)


TARGETS = Targets()


def flow_group(name: Any) -> str:
    """A flow's [[flow]] name without the `.k` of count copies."""
    text = str(name)
    head, dot, tail = text.rpartition(".")
    return head if dot and tail.isdigit() else text


def _finite(x: Any) -> float | None:
    if x is None or x is pd.NA:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# -- per run ---------------------------------------------------------------------------------


def run_groups(flows: pd.DataFrame, series: pd.DataFrame) -> pd.DataFrame:
    """One row per run x group (and "all" where a scenario has two groups or more).

    `flows` needs run_id, scenario, engine, seed, id, name, start_s, delivered_bytes,
    duration_s (the run's), sent_packets, retransmitted_packets; `series` needs run_id, flow_id, srtt_ms (the store's views have
    them). Columns out: scenario, engine, run_id, seed, group, flows and METRICS."""
    columns = ["scenario", "engine", "run_id", "seed", "group", "flows", *METRICS]
    if flows.empty:
        return pd.DataFrame(columns=columns)
    f = flows.assign(group=flows["name"].map(flow_group))
    srtt = active_bins(series[["run_id", "flow_id", "t_s", "srtt_ms"]], f)
    srtt = srtt.assign(srtt_ms=pd.to_numeric(srtt["srtt_ms"], errors="coerce").astype(float))
    srtt = srtt[srtt["srtt_ms"] > 0]  # null or 0: no RTT sample yet
    rtts = {k: g["srtt_ms"].to_numpy(dtype=float) for k, g in srtt.groupby(["run_id", "group"])}
    rows = []
    for run_id, run in f.groupby("run_id", sort=False):
        first = run.iloc[0]
        duration_s = float(first["duration_s"])
        total = float(run["delivered_bytes"].fillna(0).sum())
        groups = list(dict.fromkeys(run["group"]))
        parts = [(g, run[run["group"] == g]) for g in groups]
        if len(groups) >= 2:
            parts.append((ALL, run))
        for g, mine in parts:
            delivered = float(mine["delivered_bytes"].fillna(0).sum())
            active_s = duration_s - float(mine["start_s"].min())
            sent = int(mine["sent_packets"].fillna(0).sum())
            retx = int(mine["retransmitted_packets"].fillna(0).sum())
            if g == ALL:
                samples = np.concatenate([rtts.get((run_id, x), np.empty(0)) for x in groups])
            else:
                samples = rtts.get((run_id, g), np.empty(0))
            rows.append(
                {
                    "scenario": first["scenario"],
                    "engine": first["engine"],
                    "run_id": run_id,
                    "seed": first["seed"],
                    "group": g,
                    "flows": len(mine),
                    "share": delivered / total if total > 0 and g != ALL else None,
                    "goodput_bps": delivered * 8 / active_s if active_s > 0 else None,
                    "retx_rate": retx / sent if sent else None,
                    "rtt_mean_ms": float(samples.mean()) if samples.size else None,
                    "rtt_p95_ms": float(np.quantile(samples, RTT_QUANTILE))
                    if samples.size
                    else None,
                }
            )
    return pd.DataFrame(rows, columns=columns)


def active_bins(series: pd.DataFrame, flows: pd.DataFrame) -> pd.DataFrame:
    """The series rows of bins that end after their flow's start, with the flow's group,
    scenario and engine (the simulator fills bins before a flow starts with srtt 0 and the
    initial cwnd; the kernel leaves them empty). A bin the flow starts in counts: a paired
    simulator twin starts a few ms into its first bin (suite, "Start instants"), its kernel
    run's flows at their nominal `start`. Without `bin_s` in `flows`: bins that start at or
    after the flow's start."""
    cols = ["run_id", "id", "group", "scenario", "engine", "start_s"]
    width = "bin_s" in flows.columns
    s = series.merge(
        flows[cols + (["bin_s"] if width else [])].rename(columns={"id": "flow_id"}),
        on=["run_id", "flow_id"],
    )
    end = s["t_s"] + (s["bin_s"].astype(float) if width else 0.0)
    keep = end > s["start_s"] + BIN_EPSILON_S if width else end >= s["start_s"] - BIN_EPSILON_S
    return s[keep].drop(columns=["start_s"] + (["bin_s"] if width else []))


def cwnd_curves(flows: pd.DataFrame, series: pd.DataFrame) -> pd.DataFrame:
    """Per run x group x bin: the mean cwnd_pkts of the group's flows (groups and "all")."""
    f = flows.assign(group=flows["name"].map(flow_group))
    s = active_bins(series[["run_id", "flow_id", "t_s", "cwnd_pkts"]], f)
    s = s.assign(cwnd_pkts=pd.to_numeric(s["cwnd_pkts"], errors="coerce").astype(float))
    s = s[s["cwnd_pkts"].notna()]
    keys = ["scenario", "engine", "run_id", "group", "t_s"]
    per_group = s.groupby(keys, as_index=False)["cwnd_pkts"].mean()
    ngroups = f.groupby("scenario")["group"].nunique()
    multi = s[s["scenario"].map(ngroups) >= 2]
    if not multi.empty:
        whole = multi.assign(group=ALL).groupby(keys, as_index=False)["cwnd_pkts"].mean()
        per_group = pd.concat([per_group, whole], ignore_index=True)
    return per_group


def curve_distance(a: pd.Series, ref: pd.Series) -> float | None:
    """sum |a - ref| / sum ref over the bins (index t_s) where both are present."""
    both = pd.concat([a.rename("a"), ref.rename("r")], axis=1, join="inner").dropna()
    denom = float(both["r"].sum())
    if both.empty or denom <= 0:
        return None
    return float((both["a"] - both["r"]).abs().sum() / denom)


def cwnd_distances(curves: pd.DataFrame) -> dict[tuple[str, str], dict[str, float | None]]:
    """(scenario, group) -> {"distance": D, "kernel_self": D_kernel} (module doc)."""
    out: dict[tuple[str, str], dict[str, float | None]] = {}
    for (scenario, group), g in curves.groupby(["scenario", "group"], sort=False):
        med = {}
        for engine in (SIM, KERNEL):
            mine = g[g["engine"] == engine]
            if not mine.empty:
                med[engine] = mine.groupby("t_s")["cwnd_pkts"].median()
        if KERNEL not in med:
            out[(scenario, group)] = {"distance": None, "kernel_self": None}
            continue
        selves = []
        for _, run in g[g["engine"] == KERNEL].groupby("run_id"):
            d = curve_distance(run.set_index("t_s")["cwnd_pkts"], med[KERNEL])
            if d is not None:
                selves.append(d)
        out[(scenario, group)] = {
            "distance": curve_distance(med[SIM], med[KERNEL]) if SIM in med else None,
            "kernel_self": float(np.median(selves)) if len(selves) >= 2 else None,
        }
    return out


# -- verdicts --------------------------------------------------------------------------------


def verdict_share(sim: float | None, kernel: float | None, t: Targets = TARGETS) -> str | None:
    if sim is None or kernel is None:
        return None
    return PASS if abs(sim - kernel) <= t.share_abs + 1e-12 else FAIL


def verdict_relative(sim: float | None, kernel: float | None, tolerance: float) -> str | None:
    """|sim - kernel| <= tolerance x kernel (kernel > 0); with kernel 0 only sim 0 passes."""
    if sim is None or kernel is None:
        return None
    if kernel <= 0:
        return PASS if sim == 0 else FAIL
    return PASS if abs(sim - kernel) <= tolerance * kernel * (1 + 1e-12) else FAIL


def retx_test(sim: list[float], kernel: list[float], t: Targets = TARGETS) -> dict[str, Any] | None:
    """The retransmission check on the per-run rates of both engines (module doc): {"verdict",
    "ratio", "low", "high", "df", "rule"}; None when a side has no run. `rule` says what decided:
    "floor", "zero" (one mean at 0), "interval", or "runs" (a side with fewer than 2 runs)."""
    if not sim or not kernel:
        return None
    ms, mk = float(np.mean(sim)), float(np.mean(kernel))
    out: dict[str, Any] = {"ratio": None, "low": None, "high": None, "df": None}
    if ms < t.retx_floor and mk < t.retx_floor:
        return {**out, "verdict": PASS, "rule": "floor"}
    if ms <= 0 or mk <= 0:
        other = kernel if ms <= 0 else sim
        low = _lower_bound(other, t.retx_alpha)
        verdict = UNDECIDED if low is None or low < t.retx_floor else FAIL
        return {**out, "verdict": verdict, "rule": "zero", "low": low}
    ratio = ms / mk
    if len(sim) < 2 or len(kernel) < 2:
        return {**out, "ratio": ratio, "verdict": UNDECIDED, "rule": "runs"}
    a = float(np.var(sim, ddof=1)) / (len(sim) * ms * ms)
    b = float(np.var(kernel, ddof=1)) / (len(kernel) * mk * mk)
    se = math.sqrt(a + b)
    df = (a + b) ** 2 / (a * a / (len(sim) - 1) + b * b / (len(kernel) - 1)) if se > 0 else None
    q = _t_quantile(1 - t.retx_alpha, df) if df is not None else 0.0
    low, high = ratio * math.exp(-q * se), ratio * math.exp(q * se)
    lo_bound, hi_bound = 1 / t.retx_ratio, t.retx_ratio
    eps = 1e-12
    if low >= lo_bound * (1 - eps) and high <= hi_bound * (1 + eps):
        verdict = PASS
    elif high < lo_bound or low > hi_bound:
        verdict = FAIL
    else:
        verdict = UNDECIDED
    return {
        "verdict": verdict,
        "ratio": ratio,
        "low": low,
        "high": high,
        "df": df,
        "rule": "interval",
    }


def _t_quantile(p: float, df: float) -> float:
    from scipy import stats  # only the verdicts need it

    return float(stats.t.ppf(p, df))


def _lower_bound(values: list[float], alpha: float) -> float | None:
    """The one-sided (1 - alpha) lower bound of the mean (Student); None with fewer than 2."""
    if len(values) < 2:
        return None
    m = float(np.mean(values))
    se = float(np.std(values, ddof=1)) / math.sqrt(len(values))
    return m - _t_quantile(1 - alpha, len(values) - 1) * se if se > 0 else m


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"median": None, "mean": None, "min": None, "max": None, "n": 0}
    return {
        "median": float(np.median(values)),
        "mean": float(np.mean(values)),
        "min": float(min(values)),
        "max": float(max(values)),
        "n": len(values),
    }


def compare(
    per_run: pd.DataFrame,
    distances: dict[tuple[str, str], dict[str, float | None]],
    targets: Targets = TARGETS,
    order: list[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per scenario x group: both engines' statistics per metric and the verdicts.

    Rows are in `order` of scenarios (else first appearance), groups in order, "all" last."""
    rows: list[dict[str, Any]] = []
    scenarios = list(dict.fromkeys(per_run["scenario"]))
    if order is not None:
        scenarios = [s for s in order if s in set(scenarios)] + [
            s for s in scenarios if s not in set(order)
        ]
    for scenario in scenarios:
        mine = per_run[per_run["scenario"] == scenario]
        groups = list(dict.fromkeys(g for g in mine["group"] if g != ALL))
        multi = len(groups) >= 2
        for group in [*groups, *([ALL] if multi else [])]:
            g = mine[mine["group"] == group]
            metrics: dict[str, Any] = {}
            values: dict[str, dict[str, list[float]]] = {}
            for m in METRICS:
                sides = {}
                for engine in (SIM, KERNEL):
                    side = "sim" if engine == SIM else "kernel"
                    vals = [
                        v
                        for v in (_finite(x) for x in g[g["engine"] == engine][m])
                        if v is not None
                    ]
                    values.setdefault(m, {})[side] = vals
                    sides[side] = _stats(vals)
                metrics[m] = {**sides, "verdict": None}
            s = {m: metrics[m]["sim"]["median"] for m in METRICS}
            k = {m: metrics[m]["kernel"]["median"] for m in METRICS}
            if multi and group != ALL:
                metrics["share"]["verdict"] = verdict_share(s["share"], k["share"], targets)
            if group == ALL or not multi:
                metrics["goodput_bps"]["verdict"] = verdict_relative(
                    s["goodput_bps"], k["goodput_bps"], targets.goodput_rel
                )
            test = retx_test(values["retx_rate"]["sim"], values["retx_rate"]["kernel"], targets)
            metrics["retx_rate"]["test"] = test
            metrics["retx_rate"]["verdict"] = None if test is None else test["verdict"]
            metrics["rtt_mean_ms"]["verdict"] = verdict_relative(
                s["rtt_mean_ms"], k["rtt_mean_ms"], targets.rtt_rel
            )
            flows = g["flows"].iloc[0] if len(g) else 0
            rows.append(
                {
                    "scenario": scenario,
                    "group": group,
                    "flows": int(flows),
                    "metrics": metrics,
                    "cwnd": distances.get(
                        (scenario, group), {"distance": None, "kernel_self": None}
                    ),
                }
            )
    return rows


def statistic(metric: str) -> str:
    """What a metric's verdict compares per engine: the mean over runs for retransmissions
    (module doc), the median for the others."""
    return "mean" if metric == "retx_rate" else "median"


def tally(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of pass / fail / undecided per metric, and the checks that did not pass (failures
    and undecided rows, each with its verdict)."""
    counts = {m: {v: 0 for v in VERDICTS} for m in METRICS}
    failures = []
    for r in rows:
        for m, v in r["metrics"].items():
            if v["verdict"] in VERDICTS:
                counts[m][v["verdict"]] += 1
            if v["verdict"] in (FAIL, UNDECIDED):
                stat = statistic(m)
                failures.append(
                    {
                        "scenario": r["scenario"],
                        "group": r["group"],
                        "metric": m,
                        "verdict": v["verdict"],
                        "statistic": stat,
                        "sim": v["sim"][stat],
                        "kernel": v["kernel"][stat],
                        "test": v.get("test"),
                    }
                )
    total = {v: sum(c[v] for c in counts.values()) for v in VERDICTS}
    return {
        "pass": total[PASS],
        "fail": total[FAIL],
        "undecided": total[UNDECIDED],
        "by_metric": counts,
        "failures": failures,
    }


def evaluate(
    flows: pd.DataFrame,
    series: pd.DataFrame,
    targets: Targets = TARGETS,
    order: list[str] | None = None,
) -> dict[str, Any]:
    """Everything above from the two frames: {"rows", "tally", "per_run"}."""
    per_run = run_groups(flows, series)
    distances = cwnd_distances(cwnd_curves(flows, series)) if not flows.empty else {}
    rows = compare(per_run, distances, targets, order)
    return {"rows": rows, "tally": tally(rows), "per_run": per_run}


def frames_from_results(results: list[tuple[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(flows, series) as the store's views give them, from (run_id, RunResult) pairs held in
    memory (notebooks, tests): the engine, seed and scenario come from each result's meta."""
    flows, series = [], []
    for rid, r in results:
        f = r.flows.assign(
            run_id=rid,
            engine=r.meta["engine"],
            seed=r.meta.get("seed"),
            scenario=r.meta["scenario"],
            duration_s=r.meta["duration_s"],
            bin_s=r.meta["bin_s"],
        )
        flows.append(f)
        series.append(r.flow_series.assign(run_id=rid))
    if not flows:
        return pd.DataFrame(), pd.DataFrame()
    return pd.concat(flows, ignore_index=True), pd.concat(series, ignore_index=True)
