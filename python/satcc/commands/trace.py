"""`satcc trace export FILE`: write a scenario's link models as Mahimahi traces + delay/loss CSVs.

For every link direction (or the one asked for), two files:

    DIR/link<i>-<ab|ba>.mahimahi   one millisecond timestamp per 1500-byte delivery opportunity
    DIR/link<i>-<ab|ba>.csv        t_ms,delay_ms,loss  (one-way delay; a row per change)

The capacity is the model's mean rate over each millisecond (ms k covers (k-1, k]),
accumulated into opportunities (Mahimahi's trace format, docs/scenario.md: per ms add
R·1 ms / (1500·8 bit), emit the whole part, keep the fraction), so a Mahimahi trace read into a `trace` model and exported
again gives back the same lines. The CSV has a row at 0 and one at each millisecond where the
delay or loss changes. The models are sampled by the simulator's own code (`_native.run_sim`
probe mode), so the files describe exactly what `satcc sim` runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from satcc import _native
from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.linkmodels import MAHIMAHI_BYTES, STARLINK_CAPACITY_MBPS
from satcc.scenario import Scenario, load, resolve
from satcc.textgrid import HelpFormatter
from satcc.units import UnitError, parse_duration

HELP = COMMAND_HELP["trace"]
DESCRIPTION = __doc__.split("\n\n", 1)[1]
MS = 1_000_000
BITS_PER_OPPORTUNITY = MAHIMAHI_BYTES * 8
EPSILON = 1e-9  # keeps whole numbers of opportunities whole despite float sums


def register(subparsers) -> None:
    p = subparsers.add_parser("trace", help=HELP, description="Trace files: satcc ↔ Mahimahi.")
    sub = p.add_subparsers(title="commands", metavar="COMMAND")
    e = sub.add_parser(
        "export",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    e.add_argument("file", metavar="FILE", help="scenario TOML file")
    e.add_argument(
        "--out", metavar="DIR", type=Path, default=Path("."), help="output directory (default .)"
    )
    e.add_argument(
        "--duration", metavar="D", help="length to export (default: the scenario's duration)"
    )
    e.add_argument("--link", metavar="I", type=int, help="only link I (index in the file)")
    e.add_argument("--dir", choices=("ab", "ba"), help="only this direction")
    e.add_argument("--seed", metavar="N", type=int, help="random seed (default: the scenario's)")
    e.set_defaults(func=run)
    f = sub.add_parser(
        "fit",
        help="fit the Starlink model to a recording (prints a [link.model] table)",
        description=FIT_DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    f.add_argument(
        "recording",
        metavar="RECORDING",
        nargs="+",
        help="Mahimahi trace, LeoReplayer delay file, t_ms,delay_ms or t_ms,rtt_ms CSV, "
        "ping -D log, IRTT JSON, dish history CSV, iperf3 JSON (-J or --json-stream) or pcap",
    )
    f.add_argument(
        "--delay",
        metavar="FILE",
        type=Path,
        help="delay series beside a delivery trace: a t_ms,delay_ms CSV, a LeoReplayer delay "
        "file (one value per 10 ms) or a ping -D log (its probe loss too)",
    )
    f.add_argument(
        "--dir",
        choices=("up", "down"),
        help="the direction the delivery series was recorded in (default: an iperf3 JSON's "
        "own, the client taken to be at the dish; otherwise down)",
    )
    f.add_argument(
        "--plan",
        choices=sorted({plan for plan, _ in STARLINK_CAPACITY_MBPS}),
        default="residential",
        help="the plan whose preset capacity the direction not fitted keeps (default residential)",
    )
    f.add_argument(
        "--out", metavar="FILE", type=Path, help="write the table here (default: stdout)"
    )
    f.add_argument(
        "--no-check",
        action="store_true",
        help="first guess only: no simulated-moments refinement, no fit-quality report",
    )
    f.add_argument(
        "--validate",
        action="store_true",
        help="fit each half of the recording in time and replay the other: CUBIC, BBR and "
        "Vegas over the fitted model (on the recording's grid: the verdict; and native) vs "
        "over the replay (goodput, RTT median, p95 and least)",
    )
    f.add_argument(
        "--seeds", metavar="N", type=int, default=3, help="--validate: seeds 1..N (default 3)"
    )
    f.add_argument(
        "--cca",
        metavar="LIST",
        default="cubic,bbr,vegas",
        help="--validate: comma-separated CCAs (default cubic,bbr,vegas)",
    )
    f.set_defaults(func=run_fit)
    p.set_defaults(func=lambda _args: p.print_help() or 2)


FIT_DESCRIPTION = """Fit the Starlink model's within-epoch variation to a recording and print a
[link.model] table to paste under a [[link]] (docs/starlink-fit.md).

Inputs: a Mahimahi or LeoReplayer delivery trace (one ms timestamp per 1500-byte delivery of a
saturating transfer), a delay CSV (t_ms,delay_ms one-way, or t_ms,rtt_ms round trip, as its
header says), a LeoReplayer delay file (one one-way delay per 10 ms), a ping log with -D
stamps, an IRTT client JSON (.json or .json.gz), the dish's history CSV (starlink-grpc-tools
bulk_history: delay levels and loss, no capacity), an iperf3 -J or --json-stream document of
a saturating TCP run or of a UDP run's receiving side, or a pcap capture (its busiest flow). --delay adds a delay series (and a ping
log's probe loss) to a delivery trace or an iperf3 run. A recording must hold one whole 15 s
epoch. What the recording cannot give keeps the preset's value (listed on stderr).

Several RECORDINGs are iperf3 runs of any length (15 s runs included), each placed on the
15 s boundaries by its wall clock (start.timestamp.timesecs) and cut there: each piece of 3
whole seconds or more past a boundary is one epoch's mean capacity; each direction (the runs'
own, or --dir for all) gets the lowest and highest of its pieces. --delay then gives the rest.

The table's link has the dish on side a: the fitted capacity lands on the direction recorded
(--dir; capacity for the uplink, capacity_ba for the downlink), the other keeps the --plan
preset. A ping's round-trip loss p is split over both directions, 1 - sqrt(1 - p) each (an
IRTT log's by the way its probes were lost), and its in-epoch bursts halved between them. jitter_corr needs delay samples at most 10 ms apart.

The first guess from the statistics is refined by simulated moments (five rounds: the
model's own 100 ms bins alias its frames and its 10 ms delays are a grid, so capacity_sigma,
capacity_corr, frame_duty, frame_offset_sd, frame_sigma, jitter, jitter_corr and jitter_floor
are adjusted until the model's statistics meet the recording's; a recording of whole-ms delays
is compared with the model's delay rounded likewise). stderr: each statistic of the recording
beside the same statistic of the fitted model's own output (the simulator's model sampled
every ms, 300 s, seed 1; a round-trip recording is compared with both directions' sum),
marked "miss" outside its tolerance (correlations 0.15, shares 0.1, loss and burst rates a
half or two Poisson sd of their count, the rest 25 %, delays at least 2 ms).

--validate cuts a trace with --delay at its middle, fits each half and runs each CCA over
the other half's replay and over the fitted model twice (seeds 1..N, both splits; same loss
and a 500-packet queue on all): "on grid", the model (each seed) rendered as a trace at the
recording's resolution (whole-ms opportunities, delay at the fitted half's step, whole ms if
its delays are) and replayed exactly as the held-out half is, the verdict; and "native", the
model as the simulator runs it. Goodput, RTT median, p95 and least RTT on stdout, model vs
replay, and how many rows meet 15 % goodput, 5 % RTT median and 10 % RTT p95.
"""


def run_fit(args: argparse.Namespace) -> int:
    import sys

    from satcc import tracefit

    if len(args.recording) > 1:
        if args.validate:
            raise UserError("--validate: expected one recording (a trace with --delay)")
        return run_fit_runs(args)
    args.recording = args.recording[0]
    if args.validate:
        return run_validate(args)
    try:
        rec = tracefit.read_recording(Path(args.recording), args.delay, args.dir)
        phase = tracefit.find_phase(rec)
        tracefit.check_length(rec, phase)
    except tracefit.FitError as e:
        raise UserError(str(e)) from None
    err = sys.stderr
    notes = list(rec.notes)
    direction = args.dir or rec.direction or "down"
    if args.dir is None and rec.direction is None and rec.cap_ms is not None:
        notes.append(f"a {rec.kind} does not say its direction: taken as the downlink (--dir up)")
    elif args.dir is not None and rec.cap_ms is None:
        notes.append(
            f"--dir {args.dir} changes nothing: a {rec.kind} has no delivery series, and its "
            "delay and loss are fitted for both directions"
        )
    elif args.dir is not None and rec.direction not in (None, args.dir):
        notes.append(f"--dir {args.dir} overrides the {rec.kind}'s own direction ({rec.direction})")
    stats = tracefit.statistics(rec, phase)
    model, missing = tracefit.fit(stats, direction, args.plan)
    how = "wall clock" if rec.phase_ms is not None else "fitted"
    if rec.cap_ms is not None:
        what = f"{tracefit.ROLE[direction]} ({'capacity' if direction == 'up' else 'capacity_ba'})"
    else:
        what = "delay and loss only (no delivery series)"
    comment = f"fitted by satcc trace fit from {Path(args.recording).name}: {what}"
    print(f"read as: {rec.kind}", file=err)
    print(f"epoch boundaries: first at {phase / 1000:g} s into the recording ({how})", file=err)
    if rec.cap_ms is not None:
        print(
            f"fitted direction: {tracefit.ROLE[direction]}; the other keeps the {args.plan} "
            "preset (dish on side a)",
            file=err,
        )
    if "loss" in stats:
        p = stats["loss_isolated"]
        if "loss_up_share" in stats:
            up = stats["loss_up_share"]
            print(
                f"in-epoch probe loss: round trip {p:.4g}; {up:.3g} of the lost probes lost on "
                f"the way up (IRTT's true_up/true_down, unknown ones halved): uplink "
                f"{tracefit.split_round_trip_loss(p, up):.4g}, downlink "
                f"{tracefit.split_round_trip_loss(p, 1 - up):.4g}",
                file=err,
            )
        else:
            print(
                f"in-epoch probe loss: round trip {p:.4g} split over both directions, "
                f"1 - sqrt(1 - p) = {tracefit.split_round_trip_loss(p):.4g} each",
                file=err,
            )
    for note in notes:
        print(f"note: {note}", file=err)
    for m in missing:
        print(f"not fitted (preset value kept): {m}", file=err)
    return _finish(args, model, stats, rec, direction, comment)


def run_validate(args: argparse.Namespace) -> int:
    import sys
    import tempfile

    from satcc import tracefit

    if args.seeds < 1:
        raise UserError(f"--seeds: expected 1 or more, found {args.seeds}")
    ccas = tuple(c.strip() for c in args.cca.split(",") if c.strip())
    if args.dir is not None:
        print(
            f"note: --dir {args.dir} changes nothing for --validate: each half's model and its "
            "replay carry the recording both ways",
            file=sys.stderr,
        )
    try:
        rec = tracefit.read_recording(Path(args.recording), args.delay)
        with tempfile.TemporaryDirectory(prefix="satcc-validate-") as tmp:
            rows = tracefit.validate(
                rec,
                Path(tmp),
                seeds=args.seeds,
                ccas=ccas,
                plan=args.plan,
                refined=not args.no_check,
                progress=lambda m: print(f"validate: {m}", file=sys.stderr, flush=True),
            )
    except tracefit.FitError as e:
        raise UserError(str(e)) from None
    head = (
        f"# satcc trace fit --validate {Path(args.recording).name}: each half fitted "
        f"({'first guess' if args.no_check else 'refined'}), the other replayed, "
        f"queue {tracefit.VALIDATE_QUEUE}\n"
    )
    return _write(args, head + tracefit.validate_table(rows, args.seeds))


def _finish(args, model: dict, stats: dict, rec, direction: str, comment: str) -> int:
    """Refine the model against the recording's statistics (unless --no-check, or nothing
    within an epoch to refine: no recording beside the runs), report, and write the table."""
    from satcc import tracefit

    if rec is not None and not args.no_check:
        model, got = tracefit.refine(
            model,
            stats,
            interval_s=rec.probe_interval_s or 0.01,
            side=tracefit.SIDE[direction],
            round_trip=rec.delay_round_trip,
        )
        _compare(stats, got)
    return _write(args, tracefit.toml_table(model, comment))


def _compare(stats: dict, got: dict) -> None:
    """stderr: each statistic of the recording beside the model's, misses marked."""
    import sys

    from satcc import tracefit

    err = sys.stderr
    print(f"{'statistic':<24}{'recording':>12}{'model':>12}", file=err)
    missed = tracefit.misses(stats, got)
    missed_keys = {m.split()[0] for m in missed}
    for k, v in stats.items():
        if k in tracefit.NOT_COMPARED:
            continue
        g = got.get(k)
        shown = "-" if g is None else f"{g:.4g}"
        mark = "  miss" if k in missed_keys else ""
        print(f"{k:<24}{v:>12.4g}{shown:>12}{mark}", file=err)
    if missed:
        print(f"the fit misses {len(missed)}: " + "; ".join(missed), file=err)


def _write(args: argparse.Namespace, text: str) -> int:
    import sys

    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
        print(args.out)
    else:
        sys.stdout.write(text)
    return 0


def run_fit_runs(args: argparse.Namespace) -> int:
    """Several iperf3 runs: the epoch capacities of each direction from their pieces between
    boundaries (tracefit.read_runs); delay and loss from --delay if given."""
    import sys

    from satcc import tracefit

    err = sys.stderr
    paths = [Path(x) for x in args.recording]
    try:
        runs = tracefit.read_runs(paths, args.dir)
        stats: dict[str, float] = {}
        rec = None
        if args.delay is not None:
            rec = tracefit.read_recording(args.delay)
            phase = tracefit.find_phase(rec)
            tracefit.check_length(rec, phase)
            stats = tracefit.statistics(rec, phase)
    except tracefit.FitError as e:
        raise UserError(str(e)) from None
    if not runs.pieces:
        raise UserError(
            f"{paths[0]}: too short to fit: no run holds {tracefit.RUN_PIECE_MIN_S} whole "
            "seconds between two 15 s boundaries"
        )
    main = "down" if "down" in runs.pieces else "up"
    model, missing = tracefit.fit(stats | runs.statistics(main), main, args.plan)
    fitted = [main]
    other = "up" if main == "down" else "down"
    if other in runs.pieces:
        o = runs.statistics(other)
        key = "capacity" if other == "up" else "capacity_ba"
        model[key] = [tracefit.mbit(o["cap_epoch_min"]), tracefit.mbit(o["cap_epoch_max"])]
        fitted.append(other)
    what = ", ".join(
        f"{tracefit.ROLE[d]} ({'capacity' if d == 'up' else 'capacity_ba'}, "
        f"{runs.runs[d]} runs, {len(runs.pieces[d])} epoch pieces)"
        for d in fitted
    )
    comment = f"fitted by satcc trace fit from {len(paths)} iperf3 runs: {what}"
    print(f"read as: {len(paths)} iperf3 runs, placed by their wall clocks", file=err)
    print(f"fitted: {what}", file=err)
    if len(fitted) == 1:
        print(f"the {tracefit.ROLE[other]} keeps the {args.plan} preset", file=err)
    for m in missing:
        if not m.startswith("capacity ("):
            print(f"not fitted (preset value kept): {m}", file=err)
    return _finish(args, model, stats, rec, main, comment)


def mahimahi_lines(rates_bps: list[float], step_ms: int = 1) -> list[int]:
    """Timestamps (ms) from per-step mean rates: sample k covers (k·step, (k+1)·step]."""
    out: list[int] = []
    acc = 0.0
    for k, rate in enumerate(rates_bps):
        acc += rate * step_ms / 1000 / BITS_PER_OPPORTUNITY
        whole = int(acc + EPSILON)
        out.extend([(k + 1) * step_ms] * whole)
        acc -= whole
    return out


def csv_rows(t_ns: list[int], delay_ns: list[int], loss: list[float]) -> list[str]:
    """`t_ms,delay_ms,loss` at 0 and wherever delay or loss changes."""
    rows = ["t_ms,delay_ms,loss"]
    last = None
    for t, d, p in zip(t_ns, delay_ns, loss, strict=True):
        if (d, p) != last:
            rows.append(f"{_ms(t)},{_ms(d)},{p:.17g}")
            last = (d, p)
    return rows


def _ms(ns: int) -> str:
    whole, frac = divmod(ns, MS)
    return str(whole) if frac == 0 else f"{whole}.{frac:06d}".rstrip("0")


def export(
    scenario: Scenario,
    out: Path,
    duration_ns: int | None = None,
    link: int | None = None,
    direction: str | None = None,
    seed: int | None = None,
) -> list[Path]:
    """Write the files; returns their paths."""
    config = resolve(scenario, seed_override=seed)
    if duration_ns is not None:
        config["duration_ns"] = duration_ns
    if link is not None and not 0 <= link < len(config["links"]):
        raise UserError(f"--link: expected 0..{len(config['links']) - 1}, found {link}")
    s = _native.run_sim(config, sample_models_ns=MS)["model_samples"]
    out.mkdir(parents=True, exist_ok=True)
    written = []
    keys = sorted({(i, d) for i, d in zip(s["link_id"], s["dir"], strict=True)})
    for i, d in keys:
        if (link is not None and i != link) or (direction is not None and d != direction):
            continue
        rows = [
            k
            for k, (li, di) in enumerate(zip(s["link_id"], s["dir"], strict=True))
            if (li, di) == (i, d)
        ]
        lines = mahimahi_lines([s["rate_bps"][k] for k in rows])
        if not lines:
            raise UserError(
                f"link[{i}] {d}: the model carries nothing over the export; "
                "a Mahimahi trace needs at least one opportunity"
            )
        base = out / f"link{i}-{d}"
        trace_path, csv_path = base.with_suffix(".mahimahi"), base.with_suffix(".csv")
        trace_path.write_text("\n".join(map(str, lines)) + "\n", encoding="utf-8")
        table = csv_rows(
            [s["t_ns"][k] for k in rows],
            [s["delay_ns"][k] for k in rows],
            [s["loss"][k] for k in rows],
        )
        csv_path.write_text("\n".join(table) + "\n", encoding="utf-8")
        written += [trace_path, csv_path]
    return written


def run(args: argparse.Namespace) -> int:
    from satcc.limits import check_out_dir

    s = load(args.file)
    check_out_dir(args.out)
    duration = None
    if args.duration is not None:
        try:
            duration = parse_duration(args.duration)
        except UnitError as e:
            raise UserError(f"--duration: {e}") from None
        if duration <= 0:
            raise UserError("--duration: expected a positive duration")
    for path in export(s, args.out, duration, args.link, args.dir, args.seed):
        print(path)
    return 0
