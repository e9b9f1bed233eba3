"""docs/reproduce.md, generated in full from dated `satcc reproduce` runs (one command).

    python -m satcc.studies.doc --quick out/reproduce-quick [--full out/reproduce] \
        [--kernel EMU_ROOT] [--kernel-sim out/reproduce-kernel] > docs/reproduce.md

Each directory is a `satcc reproduce all` output root (OUT/<study>/claims.json and claims.txt).
`--kernel-sim`: the kernel design run on the simulator (`--quick --design kernel --engine sim`,
the kernel column's twin: the same campaigns, paths, seeds and claims judged), against which
"Where the engines disagree" sets the kernel column finding by finding; a check of the kernel
column, not a design: not tallied.
The page is the fixed text below (how to run, the verdict rules, the statistics rule stated
once), how it was made (the command and every dated run it reads, each checked against
today's claims files: `stale`), then per study its path with the paper's sources (`[[path]]`
of the data files), the results it does not judge and its anomalies (once, from today's data
file) and, per design given, the run's date, wall time and machine load beside the claims table
as the run printed it (a run judged under an older claims file, or a miss printed without a
reason, is marked); then the tally of every design, with the cap the listed results put on
coverage. Nothing here holds a measured number: a table comes from its run or is absent.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from satcc import registry
from satcc.studies import claims
from satcc.studies.designs import KERNEL
from satcc.studies.reproduce import STUDIES, WHOLE, kernel_design_lines

# `--kernel-sim`: the kernel design run on the simulator (the kernel column's twin), the label of
# its rows; a check of the kernel column, not a design: never tallied
TWIN = "kernel-sim"
# What the disagreements against the twin were traced to, measured once (a dated pointer, no
# number: the figures are in BENCHMARKS.md); printed under "Where the engines disagree" when the
# twin is given
TWIN_CAUSES = (
    "Why the kernel column and its twin differ was measured run by run for the columns of "
    "2026-12-01 (BENCHMARKS.md, \"The kernel column's 7 disagreements with its twin, run by "
    'run"; `bench/reproduce/start_offsets.py`). The simulator starts every flow at once while '
    "the kernel's flows start when their senders wake (in the 4v4 runs several milliseconds "
    "apart), but the twin rerun on each kernel run's own start instants (its SYNs on the "
    "Starlink paths of 000 and 001, its first data less the base RTT on 004's) moved none of "
    "those seven verdicts. One (004 eq6-like-stock-large-gap-many) moves with the start draw "
    "in the twin itself. The others were located in one or two runs or one point each: what a CCA "
    "does after its first losses (000, 001), HyStart's slow-start exits (004 1v1) and eq. 6's "
    "effect (004 4v4). None was traced to code. The list above may come from later columns, on "
    "later paths (000's and 001's business RTT since 2026-12-02): a disagreement in it that is "
    "not among those seven was not traced run by run; each paired one says whether its values "
    "differ seed by seed. Run again on another machine on 2026-12-02 (the same design, seeds and "
    "paths; the twin identical), the kernel column changed about as many of its own verdicts as "
    'separate it from its twin (BENCHMARKS.md, "The kernel column against its twin, value by '
    'value, and against itself"): at 5 seeds a kernel verdict near a threshold moves with the '
    "kernel's own timing, so the paired values, not the verdicts, are what the twin is held to."
)

INTRO = """# Reproducing the five studies: `satcc reproduce`

This page is generated: `{command}` (python/satcc/studies/doc.py) from the dated runs named
under each table. Do not edit it by hand; rerun the studies and the command.

```
satcc reproduce STUDY [--quick] [--engine sim|emu|both] [--design auto|kernel] [--seeds N]
                [--out DIR] [--jobs N] [--json] [--timings] [--figures] [--reuse DIR]
```

STUDY is `000`, `001`, `002`, `003`, `004` or `all`. For each study the command runs what the
study ran (its campaigns `campaigns/study00X-*.toml`, with `--quick` their `[quick]` tables;
study 002 runs `satcc validate hybla`'s design) into `OUT/<study>/<engine>/<campaign>/` (ordinary campaign
directories: `satcc query`, `satcc report` and `satcc campaign status` work on them, and a rerun
resumes them), measures satcc's value for every claim of the paper
(`python/satcc/studies/study00X.py`), judges it against the paper's value, citation and
tolerance (`python/satcc/studies/data/study00X.toml`, rules in
`python/satcc/studies/claims.py`), and writes `OUT/<study>/claims.json`, `claims.txt` and
`report.html`. `--figures` draws the paper's figures from satcc's runs into `report.html`
(matplotlib, ~0.3 CPU s a figure, most of a study's judging; no verdict reads them): on an
output root already run it runs nothing again, only judges and draws. Defaults: `--out out/reproduce`
(`out/reproduce-quick` with `--quick`), `--engine sim`, each campaign's own repetitions.
`--engine emu` (root) runs the same campaigns through the real kernel with the study's
emulator changes (rates capped at 100 Mbit/s, what a 2-core machine's emulator carries); take
the lock by hand (`flock /tmp/satcc-emu.lock satcc reproduce 004 --quick --engine emu`).
`--quick` on the emulator runs each study's kernel design (below, "The kernel column");
`--design kernel` (with `--quick`) runs that design on whichever engine is chosen: with the
simulator it is the kernel column's twin (the same campaigns' `[kernel]` variants, the same
emulator paths and seeds, study 002's dummynet column on the kernel design's settings with the
simulator's Hybla, the same claims judged and not judged), default output root
`out/reproduce-kernel`, its header and `claims.json` (`designs`) saying "kernel design, engine
sim" (`--design auto`, the default, runs the engine's own design; `--design kernel` without
`--quick` is refused: the kernel design is a quick design).
A run that another study's campaign (same output root and engine) has already done (the same
run id: engine, resolved scenario and seed) is copied from there, not simulated again.
Every campaign of one `reproduce` and study 002's design run in one pool of `--jobs` worker
processes, and a study opens each campaign's store once for all its measures and figures.
When a campaign's last runs are in flight, the pool starts the next campaigns' runs (planned
from the campaign files, each still written by its own campaign) rather than idle until the
next campaign starts; of those, a run whose flow-seconds (its flows times its duration) are
above a tenth of one worker's share of the whole plan's (at most one a job: the quick designs'
two study003-long runs) starts first, beside the first study's runs, so that no worker is left
alone on a long run at the end.
`reproduce all` runs the studies with the costliest runs first (004, 000, 003, 001, 002) and
judges each (measures, claims, figures when asked, claims.json, report.html) in a process of
its own while the next study's campaigns run, so the pool does not wait for a study's judging; the
tables print as each study is judged, the JSON in the studies' order. The judging process and
the pool's workers are forked from the command at its start, with what they run imported.
With `--engine emu` nothing runs beside the emulator: the studies run and are judged one
after another.
`--timings` prints, after the tables (on stderr with `--json`), where the time went: wall and
CPU seconds per study and phase (resolve: campaign files expanded, scenarios resolved;
simulation; writing: run directories; store: stores opened, hashes checked, catalogs built;
claims; figures/docs; workers: the shared pool's and the judging process's start-up beyond
what they recorded; tail: waiting for the last studies' judging after the last runs; other:
the rest, the command's own imports included: it records from its start), CPU
counted in this process, its pool's workers and the judging process, and the share outside
the simulation. The total wall is the elapsed time: a study judged beside the runs has its
wall overlap theirs.

## Verdicts

- **Inputs apart from findings.** `kind = "input"` is a property of the study's path that the
  study measured itself (ping, UDP, the testbed's description): satcc's scenario is set from
  the study's description (the path tables below, with their sources), never from its TCP
  results; an input is printed beside satcc's value and never tallied. A finding names the
  inputs that describe its runs (`inputs`); when one of them misses its tolerance on this run,
  the finding prints **path mismatch: INPUT** and does not count as reproduced.
- **near / within**: d = |value - paper| or the distance to the interval; d <= tolerance:
  **reproduced**; d <= partly (default twice the tolerance): **partly**; otherwise **not**.
- **above / below are strict** and take no tolerance: a value on the wrong side of the
  threshold, or on it, is **not**. A vague word is written as its threshold in `paper` with the
  reasoning in `note`.
- **Differences, ratios and shares between groups are paired** (`paired = "ratio"`,
  `"difference"` or `"share"`, one group's share of the two's total: "the short-RTT flow
  wins", "BBR ranks first"): each seed gives the same statistic from its own runs (e.g. BBR's
  run over CUBIC's run of the same round). **The statistics rule: the one-sided sign test at
  5 %, written as an interval**: the distribution-free 95 % bound on the median of the
  per-seed values (an order statistic) must exclude "no difference" (1 for a ratio, 0 for a
  difference, 0.5 for a share) on the side the paper claims. It needs at least 5 seeds
  (2^-5 = 3.1 %); every design that judges a paired claim runs at least 5 (the `--quick`
  designs included). Not shown: **partly** when the pooled value meets the claim, **not**
  otherwise. A paired claim that two groups are **alike** ("eq. 6 is close to stock":
  `relation = "near"`, `paper` on "no difference") is an equivalence: the sign test on each
  side, both at 5 % (a 90 % interval on the median), must put the median inside the
  tolerance; failing to show a difference never passes it. (000's terminal-to-terminal over
  dish-to-server ratios compare two campaigns' means, as the paper compares two experiments'
  on different days: not paired.)
- **No paired claim's band holds "no difference"** (1.0 for a ratio, 0 for a difference, 0.5
  for a share) but a claim of no difference itself (above): the data file is refused. A
  ratio within 5 % of 1 (a share whose ratio to the other group's is) is a **tie** and never
  reproduced; a **floor** or a **lockout** (Jain at its floor on both sides compared, a
  group's share above 0.99 in every seed) is reported as such and never reproduced.
- **Per-run statistics only**: a peak is each run's largest bin, never the largest over a
  campaign.
- A finding this design cannot judge (a 16v16 finding in a design that runs 4v4 only, the other
  engine's column) is **not judged in this design**, with the reason. **Coverage** counts the
  findings judged on the run over every finding plus the paper's results listed as not judged
  (`[[not_judged]]`, each with its reason); no result is both a claim and not judged (the data
  file is refused). A claim id the study module does not measure is an error, not a verdict.
- The unknowns a paper does not give are **swept and printed as sensitivities** under the
  study's table, never picked by which value reproduces (000's and 001's uplink capacity
  above 000's measured 20 Mbit/s bound; 001's business RTT spread; 002's link rate; 003's PVC buffer and shared-line bursts; 004's output queue, eq. 6's RTT unit and eq.
  7's a). A finding that depends on such an unknown is judged across its plausible range
  (`claims.across`: every 000 and 001 finding over uplink draws up to 25, 30 and 40 Mbit/s, Starlink's
  published uplink figures, every 001 finding also over business's RTT spread at 1/1.25, 1/1.5
  and 1/2 of residential's (the full design); every 002 finding over 10, 100 and 1000 Mbit/s (`--quick`: the two
  ends), from the rate that carries W_m / R to a dummynet host's Fast Ethernet or GbE NIC; 003's swept PVC buffers, burst lengths and periods; 004's eq. 6 gain also at each swept
  output queue FreeBSD 8.2's GbE drivers allow, 768-2047 packets): when the points' verdicts
  differ it is **not judged**, the sweep printed.
- The papers' own **anomalies** (a conclusion its own measurement does not support, two numbers
  that contradict each other) are listed once per study, above its tables, and not judged;
  so are the paper's results satcc does not judge, each with its reason.

Seeds: `--quick` runs 5 seeds (rounds) wherever a paired claim is judged (000's baseline, MSS
sweep and terminal-to-terminal runs, 001, 004's 1v1, many-vs-many and sensitivity runs), 3
for 000's UDP runs, 003's short paths and 002's two columns at each swept link rate (no paired
claim; Table 3's bounds are means over runs), 1 for 000's idle probes and 003's StarLIGHT runs (003's shared-line sweep runs in the full design only); the full designs run each study's own repetitions (5 at least where a
paired claim is judged). The seeds column of each table says how many seeds a value pools.
"""

LIMITS = """## Not done, and where satcc's path still differs from the study's

- **002, W_m on the sender**: the study capped the sender's window (ns-2's window_, a rebuilt
  kernel). The simulator does in both its columns (`sender_clamp`: cwnd_clamp = 550): the ns-2
  column with one ACK per segment as ns-2's sink and Table 1's 1000 s steady runs, the dummynet
  column on Table 2's path (100 s steady runs, the stock receiver's delayed ACKs). The kernel's
  dummynet column (`--engine emu`) caps the sender too: a BPF congestion control may not write
  `snd_cwnd_clamp`, so satcc's BPF Hybla is compiled with W_m as the clamp it applies at the end
  of each `hybla_cong_avoid` where Linux's applies `snd_cwnd_clamp` (bpf/hybla.bpf.c,
  `HYBLA_CWND_CLAMP`; its own program name), with a receive window that stays out of the way.
- **002, what remains between the model and satcc's sender** (measured, not fixed): the
  transfers end about 2-3 RTT after eq. 39's time at p <= 1e-5 at every size at 10 Mbit/s (satcc's
  slow start sends whole rounds, 22 segments then 550; eq. 27-32 count fractional ones; about 2
  RTT at 100 and 1000 Mbit/s), so the 10 MB bounds miss at every swept rate and the 50 and 100 MB
  bounds at 10 Mbit/s only (not judged: the link rate, above); with one ACK per segment satcc's sender is faster
  than the model from p = 1e-4 up (0.6 % at 1e-4, 11 % at 1e-3). Measured (one 200 s run at
  1e-3 with its sequence trace; data/study002.toml's header): not the model's halving once per
  lost packet (eq. 4 with D = 1/2 instead moves the model by 0.04 % at 1e-4, 2.0 % at 1e-3:
  Hybla refills W_m within one RTT), nor the recovery (satcc's last 1.00-1.82 RTT against eq.
  9's 1 + (1 - 1/L), 1.58 segments lost each against L = 1.55): satcc's loss cycle carries 431
  segments per RTT against the model's 398 (eq. 5 over eq. 20), outside recovery; with delayed
  ACKs (the dummynet column) the halved growth offsets it and the steady state agrees within
  1.7 % up to 2e-3.
- **002, the link rate**: the paper gives none (Fig. 1-2 are images; Tables 1-2 give the
  packet, W_m, the buffer and the RTT). satcc sweeps it in both simulator columns over 10
  Mbit/s (the rate that carries W_m / R = 8 Mbit/s of payload: the headline, its figures and
  printed mechanism), 100 and 1000 Mbit/s (a dummynet pipe set with a delay and a loss rate
  runs at its host's NIC), every finding judged across the three (`--quick`: the two ends).
  The rate moves verdicts: the line serialising the first window is +0.81 RTT of start-up at
  10 Mbit/s, +0.08 at 100,
  +0.01 at 1000, and Table 3's 50 and 100 MB bounds hold at 100 and 1000 Mbit/s but not at 10,
  so they are not judged. The kernel design runs 10 Mbit/s only (its cut says so).
- **003, the shared ATM line**: §5 puts test 3's frequent losses on the ATM line shared by about
  ten PVCs; the paper gives neither their rate, nor their burst size, nor how often ("frequent"),
  so satcc models their aggregate as bursts at the line's 540 Mbit/s
  (campaigns/study003-bursts.toml) and sweeps the length (0.5 s, 2 s) and the period (10 s, 60 s)
  with the ATM buffers, in the full design only (--quick leaves the loop's findings not judged);
  the rate is assumed, not swept. Test 4 runs without them, as §5 rules them out there, and its
  shortfall (181-193 Mbit/s) stays unexplained, as in the paper.
- **000 and 001, the dishes' loss**: one setting for both studies (the same two dishes in the
  same week), from study 000's idle loss (§4.2, 0.24-0.32 % of round trips): satcc's boundary
  outages and in-epoch bursts (the presets', fitted to other dishes' recordings) take 0.24 % of
  it, so the random loss is small (uplink 0-0.03 %, downlink 0.01 %); the split between the two
  is satcc's model, not a measurement of these dishes.
- **000, the uplinks' capacity**: the study measured only a lower bound (20 Mbit/s of UDP
  carried, §4.4); satcc sweeps the upper end over Starlink's published uplink figures (25, 30,
  40 Mbit/s) and judges every finding across them, so a finding whose verdict moves with it
  is not judged. The downlinks keep the presets' ranges (DE Residential 50-150, Priority
  40-220 Mbit/s): the study measured no downlink capacity, and the plan table with early
  2024's plan names (ES: Standard 25-100) gives a lower residential range; not swept.
- **001, the same dishes' uplinks**: 001 measured no capacity; its uplinks take study 000's
  UDP bound (20 Mbit/s, same dishes, same week) and the same swept upper end (25, 30, 40
  Mbit/s), every finding judged across the three points in the full design; `--quick` runs the
  middle point (20-30 Mbit/s) only, to stay at 100 runs. The downlinks keep the presets' ranges
  in both studies: neither study bounds them apart from TCP, so there is nothing to sweep from.
- **001, business's RTT**: §5.1 (Fig. 4) gives both plans a mean idle RTT of 50-60 ms and
  residential the larger spread, with no size. Residential keeps the presets' quantiles;
  business draws about the same median with each quantile's distance from it divided by 1.5
  (the headline), and by 1.25 and 2 in the full design (campaigns/study001-spread.toml:
  business only, at the middle uplink point, paired with the same rounds' residential runs),
  every finding judged across the points; `--quick` and the kernel column run the headline.
  Study 000's paths (the same dishes) draw business's at the headline ratio only; measured
  with `satcc reproduce 000 --quick` at 1 (one set for both plans), 1.25, 1.5 and 2, 000's
  verdicts at 1.25 and 1.5 equal those at 1, and at 2 its two MSS findings (the two-dish path)
  move: mss-best from partly to not judged, mss-largest-falls from not judged to reproduced.
- **The kernel column** (`--engine emu`) is listed only when a dated emulator run is given to
  this page's command (`--kernel DIR`, a `satcc reproduce all --quick --engine emu` output):
  beside the simulator's quick column, finding by finding, with the run's date, the machine's
  load and satcc-linkd's lateness, and every finding the two engines judge differently listed
  under "Where the engines disagree": against the simulator's run of the same kernel design when
  one is given (`--kernel-sim DIR`, a `satcc reproduce all --quick --design kernel --engine sim`
  output: the same paths and seeds, so a disagreement there is the engines'; a check of the
  kernel column, not tallied), else against the simulator's quick design (another path too).
  Against the twin, each paired finding also says whether the engines' values differ, seed by
  seed: kernel - sim on the same seed and path, the sign test on each side at 5 % (at 5 seeds,
  all five one way); verdicts that part while the values are not shown to differ part at the
  claim's threshold, within the seeds' spread, not by a difference the seeds show. A
  run on a machine whose load exceeds its CPUs is marked as not the column. The emulator runs in
  real time, so `--quick --engine emu` runs each campaign's `[kernel]` design (its quick design
  cut to fit about 75 minutes for the five studies, `satcc.studies.common.KERNEL_BUDGET_S`): the
  quick design's 5 seeds kept wherever a paired claim is judged, the cuts in sweep points and
  run lengths, and rates above 100 Mbit/s scaled down to what satcc-linkd carries on 2 cores.
  Each cut is decided claim by claim (`[[kernel_cut]]` in the data files, printed above each
  kernel table): a finding a run of the cut design cannot show (an absolute rate on a scaled
  path, a peak over two points, a retransmission rate over a shortened run) is not judged on the
  kernel; one it weakens is judged, with how. Study 003 has no kernel design (its data file's
  `no_kernel` says why): at 100 Mbit/s none of its claims has a value a run within the budget
  can show.
"""


def _load(root: Path | None, study: str) -> tuple[dict[str, Any], str] | None:
    if root is None:
        return None
    d = root / study
    if not (d / "claims.json").exists():
        return None
    doc = json.loads((d / "claims.json").read_text(encoding="utf-8"))
    return doc, (d / "claims.txt").read_text(encoding="utf-8")


def _run_line(label: str, root: Path, doc: dict[str, Any]) -> str:
    r = doc.get("run") or {}
    load = r.get("load_1min")
    if not load:
        return f"**{label}** (`{root}/{doc['study']}`): undated run (older satcc)"
    line = (
        f"**{label}** (`{root}/{doc['study']}`): run {r.get('started_utc', '?')} UTC, "
        f"{r.get('wall_s', '?')} s wall, load {load[0]}-{load[1]} on {r.get('cpus')} CPUs, "
        f"jobs {r.get('jobs') or 'all'}, satcc {doc.get('satcc_version', '?')}, engines "
        f"{', '.join(doc.get('engines', []))}"
    )
    for engine, late in (r.get("linkd_lateness") or {}).items():
        line += f"; {engine}: " + _lateness_text(late)
    return line


def _lateness_text(late: dict[str, Any] | None) -> str:
    if not late:
        return "satcc-linkd's lateness not recorded by these runs"
    return (
        f"satcc-linkd's lateness over {late['runs']} runs: p99 median {late['p99_median_us']:g} µs, "
        f"largest p99 {late['p99_max_us']:g} µs, largest {late['max_us']:g} µs, "
        f"{late['late_samples']} late samples"
    )


def loaded(doc: dict[str, Any]) -> str:
    """Why a kernel run's figures are not the column's: the machine's 1-minute load above its
    CPUs at the start or the end (the emulator runs in real time; other work delays it), or an
    undated run. Empty for a quiet run."""
    r = doc.get("run") or {}
    load, cpus = r.get("load_1min"), r.get("cpus") or 1
    if not load:
        return "undated run"
    if max(load) > cpus:
        return f"loaded machine (load {load[0]}-{load[1]} on {cpus} CPUs)"
    return ""


def _verdicts(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The findings of a claims.json by id (one engine's run)."""
    return {c["id"]: c for c in doc["claims"] if c["verdict"] != claims.INPUT}


def differ(sim: dict[str, Any], kernel: dict[str, Any]) -> list[str]:
    """The ids of the findings both runs judge (a verdict) with different verdicts."""
    a, b = _verdicts(sim), _verdicts(kernel)
    return [
        cid
        for cid in a
        if cid in b
        and a[cid]["verdict"] in claims.VERDICTS
        and b[cid]["verdict"] in claims.VERDICTS
        and a[cid]["verdict"] != b[cid]["verdict"]
    ]


def disagreements(sim: dict[str, Any], kernel: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The findings both engines judge with different verdicts: (id, sim's, kernel's)."""
    a, b = _verdicts(sim), _verdicts(kernel)
    return [(cid, a[cid]["verdict_text"], b[cid]["verdict_text"]) for cid in differ(sim, kernel)]


def _engine_test(
    kernel: dict[str, Any] | None, twin: dict[str, Any] | None
) -> tuple[list[float], claims.Paired, str] | str:
    """One finding's per-seed values on the kernel column and its twin (the same paths and
    seeds), paired seed by seed: kernel - sim, the sign test on the side the seeds lean to
    and that side's name; or why they cannot be paired."""
    a = (kernel or {}).get("per_seed")
    b = (twin or {}).get("per_seed")
    if not a or not b:
        return "no per-seed values (not a paired finding)"
    if len(a) != len(b):
        return f"per-seed values of {len(a)} and {len(b)} seeds: not paired"
    diffs = [
        x - y
        for x, y in zip(a, b, strict=True)
        if x is not None and y is not None and all(map(math.isfinite, (x, y)))
    ]
    up, down = claims.paired_test(diffs, 0.0, 1), claims.paired_test(diffs, 0.0, -1)
    return (diffs, up, "above") if up.p <= down.p else (diffs, down, "below")


def engines_paired(kernel: dict[str, Any], twin: dict[str, Any]) -> str:
    """Whether the engines' values of one finding differ, paired seed by seed: the kernel
    column and its twin run the same paths and seeds, so each seed gives kernel - sim; the
    sign test on each side at 5 % (the page's statistics rule, as an equivalence's two sides)
    shows a difference only when the seeds fall one way. Verdicts that part while the seeds
    fall both ways part at the claim's threshold, within the seeds' spread."""
    got = _engine_test(kernel, twin)
    if isinstance(got, str):
        return got + ": the engines' values not compared"
    diffs, test, way = got
    said = (
        f"kernel - sim per seed {', '.join(claims.num(d) for d in diffs)}: the kernel "
        f"{way} in {test.k} of {test.n}, sign test p = {test.p:.3g}"
    )
    if test.shown:
        return said + ": the engines' values differ (sign test at 5 % on each side)"
    why = "too few seeds" if test.n < claims.MIN_PAIRED_SEEDS else "the seeds fall both ways"
    return said + f": the engines' values not shown to differ ({why})"


def values_cell(kernel: dict[str, Any] | None, twin: dict[str, Any] | None) -> str:
    """The beside table's cell comparing the engines' per-seed values of a finding (kernel -
    sim on the same seeds): "differ (5 of 5 above)", "not shown to differ (3 of 5 above)", "-"."""
    got = _engine_test(kernel, twin)
    if isinstance(got, str):
        return "-"
    _, test, way = got
    return f"{'differ' if test.shown else 'not shown to differ'} ({test.k} of {test.n} {way})"


def values_compared(docs: dict[tuple[str, str], dict[str, Any]], studies: list[str]) -> str:
    """The engines' values compared seed by seed over every paired finding both the kernel
    column and its twin judge (not only those whose verdicts part): how many, and which show
    a difference."""
    shown: list[str] = []
    n = 0
    for study in studies:
        if ("kernel", study) not in docs:
            continue
        k, t = _verdicts(docs["kernel", study]), _verdicts(docs[TWIN, study])
        for cid, c in k.items():
            if c["verdict"] not in claims.VERDICTS or t.get(cid, {}).get("verdict") not in (
                claims.VERDICTS
            ):
                continue
            got = _engine_test(c, t[cid])
            if isinstance(got, str):
                continue
            n += 1
            _, test, way = got
            if test.shown:
                shown.append(f"{study} {cid} (the kernel {way} in {test.k} of {test.n})")
    return (
        f"The engines' values, seed by seed, over every paired finding both judge ({n}, "
        "whatever their verdicts): "
        + (
            f"they differ in {len(shown)}: {', '.join(shown)}"
            if shown
            else "none shows a difference"
        )
        + " (kernel - sim on the same seed and path, the sign test on each side at 5 %; at 5 "
        'seeds it shows a difference only when all five fall one way, so "not shown to '
        "differ\" means within the seeds' spread, not alike)."
    )


def is_twin(doc: dict[str, Any]) -> bool:
    """Whether a claims.json is the kernel design run on an engine whose TCP is not the
    kernel's (`satcc reproduce --quick --design kernel --engine sim`: its `designs`)."""
    return any(
        d == KERNEL and not registry.get(e).kernel_tcp
        for e, d in (doc.get("designs") or {}).items()
        if e in registry.names()
    )


def _value(c: dict[str, Any] | None) -> str:
    """A finding's value and verdict as the disagreement list prints them."""
    return "-" if c is None else f"{c['satcc_text']}: {c['verdict_text']}"


def beside(
    sim_label: str | None,
    sim: dict[str, Any] | None,
    kernel: dict[str, Any],
    twin: dict[str, Any] | None = None,
) -> list[str]:
    """The kernel column beside the simulator's (`sim`: its `sim_label` design, quick or full),
    one row a finding; with `twin` (the simulator on the kernel design: `--kernel-sim`) also
    beside that, and the engines compared on the same design (the kernel column and the twin)."""
    a, b, t = (_verdicts(d) if d else {} for d in (sim, kernel, twin))
    other = t if twin is not None else a  # what the kernel column is compared with

    def cells(c: dict[str, Any] | None) -> str:
        return f"{c['satcc_text'] if c else '-'} | {c['verdict_text'] if c else '-'}"

    if twin is None:
        head = f"| finding | sim ({sim_label}) | verdict | kernel | verdict | engines |"
    else:
        head = (
            (f"| finding | sim, {sim_label} design | verdict " if sim is not None else "| finding ")
            + "| sim, kernel design | verdict | kernel (emu), kernel design | verdict | "
            "engines (same design) | values, kernel - sim per seed |"
        )
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for cid in dict.fromkeys([*a, *t, *b]):
        x, y = other.get(cid), b.get(cid)
        both = x and y and x["verdict"] in claims.VERDICTS and y["verdict"] in claims.VERDICTS
        agree = ("agree" if x["verdict"] == y["verdict"] else "**disagree**") if both else "-"
        row = [cells(a.get(cid))] if sim is not None else []
        row += [cells(t.get(cid))] if twin is not None else []
        tail = [agree] + ([values_cell(y, t.get(cid))] if twin is not None else [])
        out.append(f"| {cid} | " + " | ".join([*row, cells(y), *tail]) + " |")
    return out + [""]


def _twin_of(
    out: list[str],
    study: str,
    spec: claims.StudyClaims,
    doc: dict[str, Any] | None,
    root: Path | None,
) -> dict[str, Any] | None:
    """A study's run of the kernel design on the simulator (`--kernel-sim`), its run line and
    what makes it no twin (not the kernel design on the simulator) or an old one (an older
    claims file) said in `out`; the document when it is the kernel column's twin."""
    if doc is None or root is None:
        return None
    out.append(_run_line(TWIN, root, doc) + "\n")
    if not is_twin(doc):
        out.append(
            f"**Not the kernel design on the simulator** (`{root}/{study}`: its claims.json "
            f"names {doc.get('designs') or 'no kernel design'}): not set beside the kernel "
            "column.\n"
        )
        return None
    diff = stale(doc, spec)
    if diff:
        out.append(
            f"**{TWIN} judged under an older claims file** (today's differs: "
            + "; ".join(diff)
            + "): rerun it.\n"
        )
    return doc


def _tally(doc: dict[str, Any]) -> tuple[int, int, int, int]:
    """(reproduced, judged findings, findings judged, findings + not judged listed)."""
    t = doc["verdicts"]
    judged = sum(t.values())
    cov = doc["coverage"]
    return t[claims.REPRODUCED], judged, cov["judged"], cov["main_results"]


def _span(runs: list[dict[str, Any]]) -> str:
    """Without a record of the design as one command (`_whole`): from the first study's start
    to the last one's end, over the studies whose runs follow one another (the studies of one
    `reproduce all` overlap: each is judged while the next one runs); a study whose run
    started more than a minute after the others ended (run again later) is named apart. To
    the minute the runs record their starts."""
    from datetime import datetime, timedelta

    try:
        when = sorted(
            (datetime.strptime(r["started_utc"], "%Y-%m-%d %H:%M"), float(r["wall_s"]), r)
            for r in runs
        )
    except (KeyError, TypeError, ValueError):
        return ""
    if not when:
        return ""
    groups: list[list[tuple[datetime, float, dict[str, Any]]]] = []
    for item in when:
        last_end = (
            max((t + timedelta(seconds=w) for t, w, _ in groups[-1]), default=None)
            if groups
            else None
        )
        if last_end is not None and item[0] <= last_end + timedelta(minutes=1):
            groups[-1].append(item)
        else:
            groups.append([item])
    main = max(groups, key=len)
    start = main[0][0]
    end = max(t + timedelta(seconds=w) for t, w, _ in main)
    minutes = (end - start).total_seconds() / 60
    apart = [
        f"{r.get('study', '?')} {r['started_utc']}"
        for g in groups
        if g is not main
        for _, _, r in g
    ]
    return (
        f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}: {minutes:.0f} min, first start to last end"
        + (f"; run apart: {', '.join(apart)}" if apart else "")
    )


def _whole(root: Path, runs: list[dict[str, Any]]) -> str:
    """The design as one command (`OUT/reproduce-all.json`, written by `satcc reproduce` of
    several studies): its start, wall and load, and the studies whose tables come from a run
    outside it (run again later, or earlier); empty without the record."""
    from datetime import datetime, timedelta

    try:
        whole = json.loads((Path(root) / WHOLE).read_text(encoding="utf-8"))
        start = datetime.strptime(whole["started_utc"], "%Y-%m-%d %H:%M")
        wall = float(whole["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    end = start + timedelta(seconds=wall + 60)  # the start is to the minute
    apart = []
    for r in runs:
        try:
            t = datetime.strptime(r["started_utc"], "%Y-%m-%d %H:%M")
        except (KeyError, TypeError, ValueError):
            continue
        if not start <= t <= end:
            apart.append(f"{r.get('study', '?')} {r['started_utc']}")
    load = whole.get("load_1min") or ["?", "?"]
    text = (
        f"one command, {whole['started_utc']}: {wall / 60:.1f} min wall, load {load[0]}-{load[1]} "
        f"on {whole.get('cpus', '?')} CPUs, jobs {whole.get('jobs') or 'all'}"
    )
    return text + (f"; run apart from it: {', '.join(apart)}" if apart else "")


def stale(doc: dict[str, Any], spec: claims.StudyClaims) -> list[str]:
    """How the claims file a run was judged under differs from today's (`spec`) in what bears
    on a verdict or the coverage: claims added or removed, a claim's threshold, tolerance,
    pairing or inputs changed, results added to or removed from the list of those not judged
    (that list and the anomalies are printed from today's file, their text is today's). Empty
    when the run's table is today's rules."""
    then = {c["id"]: c for c in doc["claims"]}
    now = {c.id: c for c in spec.claims}
    out = [f"{cid} added" for cid in now if cid not in then]
    out += [f"{cid} removed" for cid in then if cid not in now]
    for cid, c in now.items():
        old = then.get(cid)
        if old is None:
            continue
        today = {
            "kind": c.kind,
            "paper": list(c.paper) if isinstance(c.paper, tuple) else c.paper,
            "relation": c.relation,
            "tolerance": c.tolerance.text(),
            "partly": c.partly_tolerance().text(),
            "paired": c.paired,
            "inputs": list(c.inputs),
        }
        changed = [k for k, v in today.items() if k in old and old[k] != v]
        if changed:
            out.append(f"{cid}: {', '.join(changed)}")
    # the lists are printed from today's file: only which results the coverage counts matters
    if [x.get("what") for x in doc.get("not_judged") or []] != [x.what for x in spec.not_judged]:
        out.append("the results listed as not judged")
    return out


def unexplained(doc: dict[str, Any]) -> list[str]:
    """The findings a run judged partly or not with no reason printed (neither why nor how,
    nor a flag: a tie, a floor, a lockout, a path mismatch)."""
    return [
        c["id"]
        for c in doc["claims"]
        if c["kind"] == "finding"
        and c["verdict"] in (claims.PARTLY, claims.NOT)
        and not (c.get("why") or c.get("flag"))
    ]


def _listed_text(text: str) -> str:
    """A run's claims.txt without its lists of the paper's results not judged and its
    anomalies (printed once per study, from today's data file, above the tables)."""
    out, skipping = [], False
    for line in text.rstrip("\n").split("\n"):
        if line in ("not judged:", "the paper's own anomalies:"):
            skipping = True
            continue
        if skipping and line.startswith(("- ", "  ")):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out)


def made_lines(
    roots: dict[str, Path], docs: dict[tuple[str, str], dict[str, Any]], command: str
) -> list[str]:
    """How the page was made, in one place: the command, every dated run it reads (design,
    directory, when, how long, the machine's load, whether today's claims files judged it),
    and where the paths' sources, the statistics rule and the anomalies are."""
    head = (
        f"Command: `{command}`. The runs it reads (one `satcc reproduce` output root per "
        "design; a table comes from its run's claims.txt, judged when the run ended"
        + (
            f"; {TWIN}: the kernel design on the simulator, set beside the kernel column, "
            "not a design and not tallied"
            if TWIN in roots
            else ""
        )
        + "):\n"
    )
    cols = "| design | study | run directory | run (UTC) | wall | load (1 min, start-end) | "
    out = ["## How this page was made\n", head, cols + "claims files |", "|" + "---|" * 7]
    for label, root in roots.items():
        for study in STUDIES:
            doc = docs.get((label, study))
            if doc is None:
                out.append(f"| {label} | {study} | `{root}/{study}` | no run | | | |")
                continue
            r = doc.get("run") or {}
            load = r.get("load_1min")
            diff = stale(doc, claims.load(study))
            out.append(
                f"| {label} | {study} | `{root}/{study}` | {r.get('started_utc', 'undated')} | "
                f"{r.get('wall_s', '?')} s | "
                + (f"{load[0]}-{load[1]} on {r.get('cpus')} CPUs" if load else "-")
                + " | "
                + ("today's" if not diff else "**older** (" + "; ".join(diff) + ")")
                + " |"
            )
    sources = (
        "The paths' sources: each study's path table below (`[[path]]` in "
        "python/satcc/studies/data/study00X.toml: what satcc sets, and the paper's words or the "
        "measurement it comes from). The statistics rule (the paired sign test, written as an "
        "interval) is stated once, under Verdicts. The papers' results satcc does not judge and "
        "their own anomalies are listed once per study, from today's data files, above its "
        "tables.\n"
    )
    return [*out, "", sources]


def render(roots: dict[str, Path], command: str, twin: Path | None = None) -> str:
    """The page from the designs' output roots (label -> root: quick, full, kernel) and, with
    `twin`, the kernel design's run on the simulator (`--kernel-sim`), which "Where the
    engines disagree" sets beside the kernel column (not tallied)."""
    docs: dict[tuple[str, str], dict[str, Any]] = {}
    texts: dict[tuple[str, str], str] = {}
    read = {**roots, **({TWIN: twin} if twin is not None else {})}
    for label, root in read.items():
        for study in STUDIES:
            got = _load(root, study)
            if got is not None:
                docs[label, study], texts[label, study] = got
    out = [INTRO.format(command=command), *made_lines(read, docs, command)]
    totals: dict[str, list[int]] = {label: [0, 0, 0, 0] for label in roots}
    ran: dict[str, list[str]] = {label: [] for label in roots}  # the studies each design ran
    spans: dict[str, list[dict[str, Any]]] = {label: [] for label in roots}
    rows: list[str] = []
    disagree: list[str] = []
    by_design: list[str] = []  # kernel column vs the quick design, where the twin agrees
    for study in STUDIES:
        spec = claims.load(study)
        out.append(f"## {spec.id}: {spec.title}\n")
        out.append(f"{spec.reference} (shared/papers/{spec.paper}).\n")
        if spec.path:
            out.append(f"The path, from the paper (python/satcc/studies/data/study{study}.toml):\n")
            out.append("| what | satcc | source |\n|---|---|---|")
            for p in spec.path:
                out.append(f"| {p.what} | {p.satcc} | {p.source} |")
            out.append("")
        if spec.not_judged:
            out.append("The paper's results satcc does not judge, and why:\n")
            out.extend(f"- {n.what} ({n.cite}): {n.reason}" for n in spec.not_judged)
            out.append("")
        if spec.anomalies:
            out.append("The paper's own anomalies (listed, not judged):\n")
            out.extend(f"- {a.what} ({a.cite}): {a.note}" for a in spec.anomalies)
            out.append("")
        for label, root in roots.items():
            doc = docs.get((label, study))
            if doc is None:
                out.append(f"**{label}**: no run in `{root}/{study}`.\n")
                continue
            rep, judged, cov, listed = _tally(doc)
            ran[label].append(study)
            spans[label].append({**(doc.get("run") or {}), "study": study})
            for k, v in enumerate((rep, judged, cov, listed)):
                totals[label][k] += v
            rows.append(
                f"| {study} | {label} | {rep} / {judged} | {cov} / {listed} | "
                f"{doc['run'].get('started_utc', '?') if doc.get('run') else '?'} |"
            )
            out.append(_run_line(label, root, doc) + "\n")
            diff = stale(doc, spec)
            if diff:
                out.append(
                    "**Judged under an older claims file** (today's differs: "
                    + "; ".join(diff)
                    + "): this table is not today's rules; rerun the study.\n"
                )
            bare = unexplained(doc)
            if bare:
                out.append(f"**Misses printed without a reason**: {', '.join(bare)}.\n")
            if label == "kernel":
                why = loaded(doc)
                if why:
                    out.append(
                        f"**Not the kernel column: {why}**; its figures show the form only.\n"
                    )
                sim = next(((k, d) for k in ("quick", "full") if (d := docs.get((k, study)))), None)
                mine = _twin_of(out, study, spec, docs.get((TWIN, study)), read.get(TWIN))
                if mine is not None:
                    out.append(
                        "The kernel column beside the simulator's, on the kernel design (the "
                        "same paths and seeds: `--kernel-sim`)"
                        + (f" and on its {sim[0]} design" if sim is not None else "")
                        + ":\n"
                    )
                    out.extend(beside(sim[0] if sim else None, sim[1] if sim else None, doc, mine))
                    same = differ(mine, doc)
                    k, t = _verdicts(doc), _verdicts(mine)
                    for cid in same:
                        q = _verdicts(sim[1]).get(cid) if sim is not None else None
                        disagree.append(
                            f"- {study} {cid}: kernel {_value(k[cid])}; sim {_value(t[cid])}"
                            + (f" (sim's {sim[0]} design: {_value(q)})" if sim is not None else "")
                            + f"; {engines_paired(k[cid], t[cid])}"
                        )
                    if sim is not None:
                        by_design += [
                            f"{study} {c}"
                            for c in differ(sim[1], doc)
                            if c in t and t[c]["verdict"] == k[c]["verdict"]
                        ]
                elif sim is not None:
                    out.append("The kernel column beside the simulator's:\n")
                    out.extend(beside(sim[0], sim[1], doc))
                    for cid, x, y in disagreements(sim[1], doc):
                        disagree.append(f"- {study} {cid}: sim ({sim[0]}) {x}, kernel {y}")
            out.append("```\n" + _listed_text(texts[label, study]) + "\n```\n")
        if ("kernel", study) not in docs:  # the design and its cuts, stated without a run
            out.append(
                "Kernel design (`--quick --engine emu`; no kernel run given to this page), "
                "each cut with the claims it leaves not judged or weakens:\n"
            )
            out.append("```\n" + "\n".join(kernel_design_lines(spec)) + "\n```\n")
    if "kernel" in roots:
        none = [st for st in STUDIES if claims.load(st).no_kernel]
        missing = [st for st in STUDIES if ("kernel", st) not in docs and st not in none]
        out.append("## Where the engines disagree\n")
        twinned = [st for st in STUDIES if (TWIN, st) in docs and is_twin(docs[TWIN, st])]
        against = (
            "the simulator's run of the same kernel design (`--kernel-sim`: `--quick --design "
            "kernel --engine sim`, the same campaigns, paths, seeds and claims judged, so a "
            "verdict here differs by engine alone; satcc's value, then its verdict)"
            if twinned
            else "the simulator's quick design, else its full one"
        )
        out.append(
            f"Findings both engines judge, with different verdicts (the kernel's `--quick "
            f"--engine emu` run against {against})"
            + (f"; no kernel run for {', '.join(missing)} (a partial column)" if missing else "")
            + (f"; no kernel design for {', '.join(none)} (its section says why)" if none else "")
            + ":\n"
        )
        out.extend(disagree or ["- none"])
        if twinned:
            out.append(
                "\nThe kernel design's twin on the simulator checks the kernel column: it is "
                "not a design of its own, and the tally below does not count it. Where the "
                "kernel column and the simulator's own quick design judge a finding "
                "differently but the twin agrees with the kernel, the verdict moves with the "
                "design (the kernel design's scaled paths and shorter runs), not the engine: "
                + (", ".join(by_design) if by_design else "none")
                + "."
            )
            out.append("\n" + values_compared(docs, twinned))
            out.append("\n" + TWIN_CAUSES)
        else:
            out.append(
                "\nThe two columns run different designs: the kernel's is its quick design cut "
                "to what satcc-linkd carries (each study's kernel design, printed above its "
                "kernel table: rates scaled to 100 Mbit/s, shorter runs), so a verdict here can "
                "differ by path as well as by engine. `satcc reproduce all --quick --design "
                "kernel --engine sim` runs the kernel design on the simulator (the same paths "
                "and seeds), and this page's `--kernel-sim` sets it beside the kernel column."
            )
        out.append("")
    out.append(LIMITS)
    out.append("## Tally\n")
    specs = [claims.load(st) for st in STUDIES]
    findings = sum(1 for sp in specs for c in sp.claims if c.kind == "finding")
    listed_nj = sum(len(sp.not_judged) for sp in specs)
    out.append(
        "Reproduced / judged findings, and findings judged / every finding and result listed "
        "(claims + not judged), per study and design. Coverage counts the findings a design "
        f"judged (a verdict) only: the {listed_nj} results listed as not judged cap it at "
        f"{findings} / {findings + listed_nj} ({100 * findings / (findings + listed_nj):.0f} %), "
        "and a finding a design cannot judge (`not judged in this design`, a sensitivity whose "
        "verdicts differ) lowers it further:\n"
    )
    if any(label == TWIN for label, _st in docs):
        out.append(
            "The kernel design's run on the simulator (`--kernel-sim`) is not tallied: it "
            "checks the kernel column (the same design on the other engine), it is not a design "
            "of its own.\n"
        )
    out.append("| study | design | reproduced / judged | judged / listed | run (UTC) |")
    out.append("|---|---|---|---|---|")
    out.extend(rows)
    for label, (rep, judged, cov, listed) in totals.items():
        share = f" ({100 * rep / judged:.0f} %)" if judged else ""
        cshare = f" ({100 * cov / listed:.0f} %)" if listed else ""
        which = "all" if len(ran[label]) == len(STUDIES) else " + ".join(ran[label]) or "none"
        out.append(
            f"| {which} | {label} | {rep} / {judged}{share} | {cov} / {listed}{cshare} | "
            f"{_whole(roots[label], spans[label]) or _span(spans[label])} |"
        )
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m satcc.studies.doc", description=__doc__)
    ap.add_argument("--quick", type=Path, help="a `satcc reproduce all --quick` output root")
    ap.add_argument("--full", type=Path, help="a `satcc reproduce all` output root")
    ap.add_argument(
        "--kernel", type=Path, help="a `satcc reproduce all --quick --engine emu` output root"
    )
    ap.add_argument(
        "--kernel-sim",
        type=Path,
        help="a `satcc reproduce all --quick --design kernel --engine sim` output root: the "
        "kernel design on the simulator, set beside the kernel column (not tallied)",
    )
    args = ap.parse_args(argv)
    roots = {
        label: root
        for label, root in (("quick", args.quick), ("full", args.full), ("kernel", args.kernel))
        if root is not None
    }
    if not roots:
        ap.error("expected at least one of --quick, --full, --kernel")
    if args.kernel_sim is not None and args.kernel is None:
        ap.error("--kernel-sim: expected --kernel too (the twin is set beside the kernel column)")
    parts = ["python -m satcc.studies.doc"] + [f"--{k} {v}" for k, v in roots.items()]
    parts += [f"--{TWIN} {args.kernel_sim}"] if args.kernel_sim is not None else []
    sys.stdout.write(render(roots, " ".join(parts) + " > docs/reproduce.md", args.kernel_sim))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
