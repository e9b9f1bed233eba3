"""`satcc emu FILE`, `satcc emu doctor`, `satcc emu --cleanup`: the real-kernel emulator."""

from __future__ import annotations

import argparse
import json
import sys

from satcc.api import load_scenario, parse_set
from satcc.cli import COMMAND_HELP
from satcc.commands import options
from satcc.commands.output import run_and_write
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["emu"]
DESCRIPTION = """\
Run a scenario with real iperf3 over the kernel's TCP in network namespaces, its links
emulated in real time by satcc-linkd (rate, delay, loss, drop-tail or drop-front queue, ECN
marking and the time-varying link models shared with the simulator). Writes the same result
directory as `satcc sim` (summary.json, flows/flow_series/link_series.parquet) plus DIR/emu/
with the iperf3 reports, tcpdump captures (snaplen 128) and satcc-linkd's timing report. Needs
root.

  satcc emu FILE [--out DIR] [--json] [--vpn NODE]   run (through OpenVPN via NODE)
  satcc emu doctor                      what this host supports, with fixes
  satcc emu --cleanup                   remove what crashed runs left behind"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "emu",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument("file", metavar="FILE", nargs="?", help="scenario TOML file, or `doctor`")
    options.add_out(p, "out/<scenario name>-emu")
    options.add_json(p, "print the JSON summary (or the doctor's checks) on stdout")
    p.add_argument(
        "--seed",
        metavar="N",
        type=int,
        help="seed for the links' random loss and models (default: the scenario's)",
    )
    options.add_set(p)
    p.add_argument("--no-capture", action="store_true", help="do not run tcpdump")
    p.add_argument(
        "--vpn",
        metavar="NODE",
        help="carry every flow through a real OpenVPN tunnel to NODE and back "
        "(study 000's VPN server); the flows' end nodes are its clients",
    )
    p.add_argument(
        "--cleanup",
        action="store_true",
        help="remove namespaces and processes of runs whose runner is gone",
    )
    p.add_argument(
        "--force", action="store_true", help="with --cleanup: also remove runs that are still going"
    )
    options.add_plot(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from satcc.emu import host

    if args.cleanup:
        host.require_root()
        res = host.cleanup(include_live=args.force)
        if args.json:
            sys.stdout.write(json.dumps(res, indent=2) + "\n")
        else:
            print(
                f"removed {len(res['removed'])} namespace(s)"
                + (f": {', '.join(res['removed'])}" if res["removed"] else "")
            )
            if res["kept_live"]:
                print(f"left running: {', '.join(res['kept_live'])} (use --force to remove)")
            if res["failed"]:
                print(f"could not remove: {', '.join(res['failed'])}", file=sys.stderr)
        return 1 if res["failed"] else 0
    if args.file == "doctor":
        from satcc.emu import doctor

        items = doctor.checks()
        if args.json:
            sys.stdout.write(json.dumps([i.__dict__ for i in items], indent=2) + "\n")
        else:
            print(doctor.report(items))
        return 0 if all(i.ok or not i.required for i in items) else 1
    if args.file is None:
        from satcc.errors import UserError

        raise UserError("emu: expected a scenario FILE, `doctor` or --cleanup")
    s = load_scenario(args.file, parse_set(args.set))
    return run_and_write(
        "emu",
        s,
        args.out,
        seed=args.seed,
        as_json=args.json,
        plot=args.plot,
        capture=not args.no_capture,
        vpn_server=args.vpn,
    )
