"""`satcc campaign FILE` and `satcc campaign status DIR`: run a campaign resumably; say where it is."""

from __future__ import annotations

import argparse
from pathlib import Path

from satcc.campaign.spec import SOFT_MAX_RUNS
from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.limits import check_out_dir, printable
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["campaign"]
DESCRIPTION = """\
Run every scenario of a campaign file: a base scenario, a [matrix] over any scenario key
(flow[0].cca, flow.*.mss, link[1].delay, scenario.engine, link[0].model.plan, ...), repetitions
and seeds, and [[analyze]] entries for field measurements. Each run is named by a hash of its
resolved scenario and seed and written atomically under DIR/runs/; rerunning the same command
skips finished runs and redoes interrupted ones. Runs go to a local process pool (one process
per core by default) or, with --cluster, to a Dask distributed scheduler; emulation runs always
run here, one at a time. Failures are listed at the end and do not stop the campaign.

  satcc campaign FILE [--quick] [--out DIR] [--jobs N] [--cluster tcp://HOST:8786]
  satcc campaign status DIR          runs done / failed / pending, corrupt or foreign files
  satcc campaign FILE --dry-run      the plan only: axes and number of runs"""

EPILOG = """\
exit status: 0 every run done, 1 some failed, 2 bad campaign file or directory, 130 interrupted.
Then: satcc query DIR "SELECT ..." and satcc report DIR (docs/campaigns.md)."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "campaign",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "target",
        metavar="FILE | status DIR",
        nargs="+",
        help="a campaign TOML file, or `status` and a campaign directory",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="campaign directory (default: out/campaigns/<campaign name>)",
    )
    p.add_argument(
        "--jobs",
        metavar="N",
        type=int,
        help="local worker processes (default: the number of cores)",
    )
    p.add_argument(
        "--cluster",
        metavar="tcp://HOST:8786",
        help="run sim/model/analyze runs on this Dask distributed scheduler",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="the file's [quick] variant (named NAME-quick; also FILE given as NAME-quick.toml)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument(
        "--force",
        action="store_true",
        help=f"plan and run more than {SOFT_MAX_RUNS:,} runs (the soft limit)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    target = args.target
    if target[0] == "status":
        if len(target) != 2:
            raise UserError("usage: satcc campaign status DIR")
        from satcc.campaign.summary import status

        text, code = status(Path(target[1]))
        print(printable(text))
        return code
    if len(target) != 1:
        raise UserError(f"expected one campaign file (or `status DIR`), found {' '.join(target)}")
    from satcc.campaign import spec
    from satcc.campaign.execute import DEFAULT_OUT_ROOT, run_campaign
    from satcc.campaign.summary import end_of_run
    from satcc.commands.output import safe_name

    c = spec.load(target[0], quick=args.quick)
    out = check_out_dir(args.out if args.out is not None else DEFAULT_OUT_ROOT / safe_name(c.name))
    if args.dry_run:
        specs = spec.expand(c, force=args.force, progress=False if args.no_progress else None)
        print(printable(f"campaign {c.name}: {len(specs)} runs -> {out}"))
        for a in c.axes:
            print(
                printable(
                    f"  {a.name} ({a.role}; {', '.join(a.keys)}): "
                    f"{', '.join(str(v) for v in a.labels)}"
                )
            )
        print(f"  seeds: {', '.join(str(s) for s in c.seeds)}")
        engines: dict[str, int] = {}
        for s in specs:
            engines[s.engine] = engines.get(s.engine, 0) + 1
        print("  engines: " + ", ".join(f"{k} {v}" for k, v in sorted(engines.items())))
        return 0
    done = run_campaign(
        c,
        out,
        jobs=args.jobs,
        cluster=args.cluster,
        progress=False if args.no_progress else None,
        force=args.force,
    )
    print(printable(end_of_run(done)))
    return 1 if done.count("failed") else 0
