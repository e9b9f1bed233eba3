"""`satcc reproduce STUDY`: run a study's design and print its claims table (docs/reproduce.md).

The work is in satcc.studies.reproduce (driver) and satcc.studies.study00X (one per study).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from satcc import registry, timings
from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.studies.designs import AUTO, DESIGNS, KERNEL, check_design
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["reproduce"]
DESCRIPTION = """\
Run what a study ran (its campaigns under campaigns/, or study 002's validation design), then
print a claims table: each claim the paper makes, the paper's value and citation, satcc's
value, the tolerance and a verdict (reproduced / partly / not) computed from the numbers, with
the reason where they differ. Writes OUT/<study>/claims.json, claims.txt, report.html (with
--figures, the paper's figures drawn from satcc's runs) and the campaign directories
(resumable: a rerun skips finished runs, so --figures after a run draws from its runs).

  satcc reproduce 000 --quick          one study, the reduced design (about a minute or two)
  satcc reproduce all                  the five studies, full designs
  satcc reproduce 004 --engine emu     the kernel version (root; rates up to 100 Mbit/s)
  satcc reproduce all --quick --design kernel
                                       the kernel column's design on the simulator: its twin
                                       (same campaigns, paths, seeds and claims judged)

STUDY: 000 (Starlink terminal to terminal), 001 (five CCAs over Starlink), 002 (Hybla model),
003 (long fat networks), 004 (CUBIC RTT fairness), or all. docs/reproduce.md has the detail."""
DEFAULT_OUT = Path("out/reproduce")
DEFAULT_OUT_QUICK = Path("out/reproduce-quick")
DEFAULT_OUT_KERNEL = Path("out/reproduce-kernel")  # --design kernel: apart from the quick design


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "reproduce",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument("study", metavar="STUDY", help="000, 001, 002, 003, 004 or all")
    p.add_argument("--quick", action="store_true", help="the reduced designs (minutes, not hours)")
    p.add_argument(
        "--engine",
        choices=(*registry.names(packets=True), "both"),
        default=registry.DEFAULT,
        help="sim (default), emu (the real kernel, root) or both",
    )
    p.add_argument(
        "--design",
        choices=DESIGNS,
        default=AUTO,
        help="auto (default): the full design, --quick the quick one, and --quick on the "
        "emulator the kernel design; kernel (with --quick): the kernel design on the chosen "
        "engine, with --engine sim the simulator's twin of the kernel column (the same "
        "campaigns' [kernel] variants, emulator paths, seeds and claims judged)",
    )
    p.add_argument(
        "--seeds",
        metavar="N",
        type=int,
        help="seeds per point instead of each campaign's repetitions",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help=f"output root (default {DEFAULT_OUT}, or {DEFAULT_OUT_QUICK}, or with --design "
        f"kernel {DEFAULT_OUT_KERNEL})",
    )
    p.add_argument(
        "--reuse",
        metavar="DIR",
        type=Path,
        action="append",
        help="another output root of satcc reproduce (repeatable): a run done there (the same "
        "run id: engine, resolved scenario, seed; this satcc version) is copied, not simulated "
        f"(default, without --out: the other design's default root, {DEFAULT_OUT} or "
        f"{DEFAULT_OUT_QUICK})",
    )
    p.add_argument(
        "--jobs",
        metavar="N",
        type=int,
        help=f"simulator processes (default: the CPU count, {os.cpu_count()})",
    )
    p.add_argument(
        "--figures",
        action="store_true",
        help="draw the paper's figures from satcc's runs into report.html (matplotlib, ~0.3 CPU "
        "s each; no verdict reads them); on an output root already run, nothing is run again",
    )
    p.add_argument("--json", action="store_true", help="print the claims documents as JSON")
    p.add_argument(
        "--timings",
        action="store_true",
        help="print where the time went: wall and CPU per study and phase (on stderr with --json)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not getattr(args, "timings", False):
        return _run(args)
    # recorded from here on: the studies' imports (pandas, numpy, pydantic: ~1 CPU s) are the
    # command's cost too ("other")
    with timings.recording() as recorded:
        _run(args)
    from satcc.studies import reproduce

    lines = reproduce.timing_lines(recorded)
    print("\n".join(lines), file=sys.stderr if args.json else sys.stdout)
    return 0


def _run(args: argparse.Namespace) -> int:
    from satcc.studies import reproduce

    studies = list(reproduce.STUDIES) if args.study == "all" else [args.study]
    if not set(studies) <= set(reproduce.STUDIES):
        raise UserError(
            f"STUDY: expected one of {', '.join(reproduce.STUDIES)} or all, found {args.study!r}"
        )
    if args.seeds is not None and args.seeds < 1:
        raise UserError(f"--seeds: expected an integer >= 1, found {args.seeds}")
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs: expected an integer >= 1, found {args.jobs}")
    args.design = getattr(args, "design", AUTO)
    check_design(args.quick, args.design)
    engines = list(reproduce.ENGINES) if args.engine == "both" else [args.engine]
    for name in engines:
        if not registry.get(name).runnable_here():
            raise UserError(f"--engine {name}: the {name} engine needs root (network namespaces)")
    kernel = args.design == KERNEL
    out = args.out or (
        DEFAULT_OUT_KERNEL if kernel else DEFAULT_OUT_QUICK if args.quick else DEFAULT_OUT
    )
    # the quick designs plan most of their runs in the full ones too (482 of 572 campaign
    # runs: studies 000, 001, 003): without --out, each design copies what the other has done
    # (the kernel design, what the quick one has: the same run id only)
    other = DEFAULT_OUT_QUICK if kernel else DEFAULT_OUT if args.quick else DEFAULT_OUT_QUICK
    args.reuse = tuple(getattr(args, "reuse", None) or (() if args.out else (other,)))

    def log(message: str) -> None:
        print(f"satcc reproduce: {message}", file=sys.stderr)

    from satcc.campaign.execute import sharing_workers

    with sharing_workers():  # one pool for every campaign of every study
        _run_studies(args, studies, engines, out, log)
    return 0


def _run_studies(args: argparse.Namespace, studies, engines, out: Path, log) -> None:
    from satcc.studies import reproduce

    def done(result: reproduce.StudyResult) -> None:
        if not args.json:
            print("\n".join(reproduce.text_lines(result)))
            print()
        log(f"wrote {result.out}/: claims.json, claims.txt, report.html")

    def run_one(study: str) -> reproduce.Ran:
        progress = False if args.json else None
        return reproduce.run_study(
            study,
            engines,
            args.quick,
            args.seeds,
            out,
            args.jobs,
            progress,
            log,
            args.reuse,
            figures=getattr(args, "figures", False),
            design=args.design,
        )

    alone = any(registry.get(e).exclusive for e in engines)  # the emulator: nothing beside it
    from satcc.campaign.execute import ahead

    def planned() -> list:
        """The campaigns to come: the pool starts their runs while a campaign's last ones
        leave workers idle (scheduling only)."""
        if alone:
            return []
        return reproduce.planned_runs(
            studies, engines, args.quick, args.seeds, out, args.jobs, args.reuse, args.design
        )

    began = reproduce.whole_start()
    with ahead(planned):
        results = reproduce.reproduce_many(studies, run_one, alone=alone, done=done, jobs=args.jobs)
    if len(studies) > 1:
        reproduce.write_whole(out, began, studies, engines, args.quick, args.jobs, args.design)
    if len(results) > 1 and not args.json:
        print("\n".join(reproduce.summary_lines(results)))
    if args.json:
        from satcc.limits import json_printable

        docs = [r.doc() for r in results]
        text = json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, ensure_ascii=False)
        print(json_printable(text))
