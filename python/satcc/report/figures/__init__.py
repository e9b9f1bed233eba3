"""The studies' figures, drawn from a campaign's store, each only when the campaign has its data.

Each figure function takes a `Data` (the store's frames plus the campaign's axes by role) and
returns a `Drawn` (a matplotlib Figure, a caption) or raises `Skip(reason)`. The axes a figure
uses are found by role (satcc.campaign.spec.role_of: `flow.*.cca` is "cca", `*.mss` "mss",
`link[i].loss` "loss", `link[i].delay` "rtt", `link[i].model.start` "time_of_day", ...; a
campaign axis may set `role` itself).

| id             | study figure        | needs                                                        |
|----------------|---------------------|--------------------------------------------------------------|
| timeseries_cca | 001 Fig. 5-6        | goodput series of a sim/emu/analyze run per CCA             |
| box_throughput | 001 Fig. 7-8        | >= 2 runs for some CCA x direction (mean goodput per run)   |
| box_retx       | 001 Fig. 9-10       | the same, with retransmission rates                          |
| rtt_day        | 000 Fig. 10-11      | ping logs with timestamps (analyze) or a time-of-day axis    |
| mss            | 000 Fig. 6-9        | an MSS axis with >= 2 values                                 |
| rtt_fairness   | 004 Fig. 5-17       | an RTT axis with >= 2 values and >= 2 [[flow]] groups        |
| engines_loss   | 002 Fig. 3-9        | a loss axis with >= 2 values and runs of >= 2 engines        |
| seqack         | 003 Fig. 6          | a seqack trace (simulated run or analysed capture)           |
| ca_ramp        | 003 Fig. 7          | a run >= 30 s with cwnd series and a congestion-avoidance stretch |
| traces         | (every study)       | cwnd/srtt series of sim or emu runs (satcc.plot panels)      |
| fidelity       | (sim vs kernel)     | a `satcc fidelity` directory (sim and kernel runs per scenario) |
| cdfs           | (every study)       | >= 2 flows with a CCA and a goodput                          |
| throughput_delay | Pantheon Fig. 2   | flows with a CCA, goodput and 95th-percentile RTT            |

Goodput is application bytes x 8 per time (the studies' "throughput" from iperf3/tshark
counts the same payload). Error bars are min-max over the runs of a point; boxes are
matplotlib's (median, quartiles, 1.5 IQR whiskers, outliers as dots).

The modules, one per figure family: `common` (Data, Drawn, Skip, styling, panels per condition),
`timeseries`, `boxes`, `rtt_day`, `sweeps` (mss, rtt_fairness, engines_loss), `seqack` (seqack,
ca_ramp), `traces` (traces, fidelity), `distributions` (cdfs, throughput_delay).
"""

from __future__ import annotations

from satcc.report.figures.boxes import box_retx, box_throughput
from satcc.report.figures.common import (
    Data,
    Drawn,
    FigureFn,
    Skip,
    flow_group,
    new_figure,
    run_label,
    value_text,
)
from satcc.report.figures.distributions import _ellipse, cdfs, throughput_delay
from satcc.report.figures.rtt_day import rtt_day
from satcc.report.figures.seqack import SEQACK_WINDOW_SEGMENTS, ca_ramp, draw_seqack, seqack
from satcc.report.figures.sweeps import engines_loss, mss, rtt_fairness
from satcc.report.figures.timeseries import run_summary, timeseries_cca
from satcc.report.figures.traces import fidelity, traces

FIGURES: list[tuple[str, str, FigureFn]] = [
    (
        "timeseries_cca",
        "Goodput over time per congestion control (study 001 Fig. 5-6)",
        timeseries_cca,
    ),
    (
        "box_throughput",
        "Mean goodput per congestion control and condition (study 001 Fig. 7-8)",
        box_throughput,
    ),
    (
        "box_retx",
        "Retransmission rate per congestion control and condition (study 001 Fig. 9-10)",
        box_retx,
    ),
    ("rtt_day", "RTT over the day and its distribution (study 000 Fig. 10-11)", rtt_day),
    ("mss", "Goodput against the MSS (study 000 Fig. 6-9)", mss),
    (
        "rtt_fairness",
        ("Goodput and Jain's index against the RTT of the second flow group (study 004 Fig. 5-17)"),
        rtt_fairness,
    ),
    (
        "engines_loss",
        (
            "Model vs simulation vs emulation: goodput and transfer time against "
            "loss (study 002 Fig. 3-9)"
        ),
        engines_loss,
    ),
    ("seqack", "Sequence / ACK graph (study 003 Fig. 6)", seqack),
    ("ca_ramp", "The linear ramp of congestion avoidance (study 003 Fig. 7)", ca_ramp),
    ("traces", "cwnd and RTT traces", traces),
    ("fidelity", "Simulator vs real kernel per flow group (satcc fidelity)", fidelity),
    ("cdfs", "Distributions of goodput and RTT per congestion control", cdfs),
    (
        "throughput_delay",
        "Goodput against delay per congestion control (Pantheon-style)",
        throughput_delay,
    ),
]

__all__ = [
    "FIGURES",
    "SEQACK_WINDOW_SEGMENTS",
    "Data",
    "Drawn",
    "FigureFn",
    "Skip",
    "_ellipse",
    "box_retx",
    "box_throughput",
    "ca_ramp",
    "cdfs",
    "draw_seqack",
    "engines_loss",
    "fidelity",
    "flow_group",
    "mss",
    "new_figure",
    "rtt_day",
    "rtt_fairness",
    "run_label",
    "run_summary",
    "seqack",
    "throughput_delay",
    "timeseries_cca",
    "traces",
    "value_text",
]
