"""`satcc fidelity`: the simulator against the real kernel on a grid of scenarios, with pass/fail targets
(fidelity.metrics.TARGETS).

    grid.py     the grid file (scenarios/fidelity/grid.toml): scenarios, --quick subset, VPN node
    suite.py    plan, run (sim seeds + kernel runs into a campaign directory), evaluate, write
    metrics.py  per flow group metrics, cwnd distance, verdicts against the targets
    table.py    the agreement table (rich, text, HTML)
    figure.py   the figure (goodput per group, sim vs kernel, min-max error bars)

docs/fidelity.md is the reference: grid, metrics, targets, how to read the table.
"""
