"""Per-run panels: cwnd/RTT traces (satcc.plot) and `satcc fidelity`'s figure."""

from __future__ import annotations

from satcc import registry
from satcc.report.figures.common import (
    Data,
    Drawn,
    Skip,
    run_label,
)
from satcc.store import layout

MAX_TRACES = 4


def traces(data: Data) -> list[Drawn]:
    from satcc.plot import draw, path_text, plain
    from satcc.results import load

    runs = data.runs[data.runs["engine"].isin(registry.names(packets=True))]
    if runs.empty:
        raise Skip("no sim or emu run (model and analyze runs carry no cwnd)")
    flows = data.flows
    picked: list[str] = []
    seen: set[str] = set()
    for r in runs.itertuples():
        ccas = ",".join(sorted(set(flows[flows["run_id"] == r.run_id]["cca"].dropna())))
        if ccas not in seen:
            seen.add(ccas)
            picked.append(r.run_id)
        if len(picked) >= MAX_TRACES:
            break
    out = []
    for rid in picked:
        result = load(data.store.directory / layout.RUNS_DIR / rid)
        fig = draw(result)
        ccas = [str(c) for c in flows[flows["run_id"] == rid]["cca"].dropna()]
        label = run_label(data.runs, list(data.store.param_columns), rid, ccas)
        path = path_text(result)
        fig.suptitle(plain(label) + (f"\n{plain(path)}" if path else ""))
        out.append(
            Drawn(
                fig,
                f"Goodput, cwnd and smoothed RTT over time of the run {label} (run {rid}; "
                "satcc plot's panels).",
                title=f"cwnd and RTT traces: {label}",
            )
        )
    return out


def fidelity(data: Data) -> Drawn:
    """satcc fidelity's figure (satcc.fidelity.figure), from the store like every figure."""
    if not data.store.index.get("fidelity"):
        raise Skip("not a `satcc fidelity` directory")
    from satcc.fidelity import figure, suite

    doc = suite.evaluate_store(data.store)
    fig = figure.draw(doc)
    if fig is None:
        raise Skip("no finished run in the fidelity directory")
    t = doc["tally"]
    return Drawn(
        fig,
        (
            "Goodput per flow group: the simulator (median of its seeds) beside the "
            "real kernel (median of its runs), error bars min-max, labels the share "
            f"of the total goodput; {t['pass']} checks pass, {t['fail']} fail, "
            f"{t.get('undecided', 0)} undecided "
            "(docs/fidelity.md)."
        ),
    )
