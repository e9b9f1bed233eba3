"""`satcc field PLAN.toml` / `satcc field --server HOST --cca cubic,bbr ...`: measure the user's
own path against their `iperf3 -s`, into a campaign store (satcc.field)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from satcc.cli import COMMAND_HELP
from satcc.errors import UserError

HELP = COMMAND_HELP["field"]
DESCRIPTION = """\
Run every congestion control x direction x repetition against an `iperf3 -s` you run (a VPS,
a host behind a dish), round after round, with an idle ping before and a ping during each
run, a tcpdump capture when root, and the host's metadata; each run is a result (engine
"field") in a campaign store that `satcc query` and `report` read (`plot` its runs/ID). Interrupted plans
resume with the same command. PLAN is a plan file or a shipped plan (study000, study001,
study003); without PLAN the flags build one:

  satcc field --server vps.example --cca cubic,bbr --direction up,down --duration 15s \\
      --rounds 4 --interval 1h --out out/field
  satcc field study001 --server vps.example --out out/s001
  satcc field plan.toml --align starlink     runs start 1 s after :12/:27/:42/:57"""

FLAG_KEYS = (
    "server",
    "cca",
    "direction",
    "duration",
    "rounds",
    "interval",
    "repetitions",
    "order",
    "align",
    "align_offset",
    "udp",
    "mss",
    "gap",
    "name",
    "ping_count",
    "ping_interval",
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "field",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("plan", metavar="PLAN", nargs="?", help="plan file or shipped plan name")
    p.add_argument("--server", metavar="HOST[:PORT]", help="your iperf3 server")
    p.add_argument("--cca", help="congestion controls, comma-separated (default: cubic)")
    p.add_argument("--direction", help="up, down or up,down (default: up)")
    p.add_argument("--duration", help="each run's length (default: 15 s)")
    p.add_argument("--rounds", type=int, help="rounds (default: 1)")
    p.add_argument("--interval", help="from a round's start to the next's (default: 0 s)")
    p.add_argument("--repetitions", type=int, help="runs per combination per round (default: 1)")
    p.add_argument("--order", choices=("fixed", "shuffled"), help="run order (default: fixed)")
    p.add_argument("--align", choices=("none", "starlink"), help="Starlink-aligned starts")
    p.add_argument("--align-offset", dest="align_offset", help="after the boundary (default: 1 s)")
    p.add_argument("--udp", help="UDP runs at these rates, comma-separated ('10Mbit/s,50Mbit/s')")
    p.add_argument("--mss", help="MSS values for TCP runs, comma-separated")
    p.add_argument("--gap", help="pause between runs (default: 2 s)")
    p.add_argument(
        "--ping-count", dest="ping_count", type=int, help="idle pings before each run (default: 10)"
    )
    p.add_argument(
        "--ping-interval",
        dest="ping_interval",
        help="ping interval, idle and during (default: 0.2 s)",
    )
    p.add_argument("--name", help="the store's campaign name (default: the plan's, or 'field')")
    p.add_argument("--no-capture", action="store_true", help="no tcpdump even as root")
    p.add_argument(
        "--force", action="store_true", help="align even when the clock is not synchronised"
    )
    p.add_argument("--print", action="store_true", help="print the plan TOML and the run order")
    p.add_argument("--out", metavar="DIR", type=Path, help="the store (default: out/field/NAME)")
    p.set_defaults(func=run)


def build_plan(args: argparse.Namespace):
    """(plan, text) from PLAN and the flags (flags override the file's keys)."""
    from satcc.field import shipped_plans
    from satcc.field.plan import FieldPlan, load, to_toml, validate

    doc: dict = {}
    where = "flags"
    if args.plan:
        path = Path(args.plan)
        shipped = shipped_plans()
        if not path.exists() and args.plan in shipped:
            path = shipped[args.plan]
        p, _ = load(path)
        doc = p.doc()
        where = str(path)
    lists = {"cca": "ccas", "direction": "directions", "udp": "udp", "mss": "mss"}
    for key in FLAG_KEYS:
        v = getattr(args, key)
        if v is None:
            continue
        target = lists.get(key, key)
        if key in lists:
            v = [x.strip() for x in v.split(",") if x.strip()]
            if key == "mss":
                try:
                    v = [int(x) for x in v]
                except ValueError:
                    raise UserError(f"--mss: expected integers, found {args.mss!r}") from None
        doc[target] = v
        where = f"{where} + flags" if args.plan else "flags"
    if args.no_capture:
        doc["capture"] = False
    if not args.plan and not args.server:
        raise UserError("field: expected PLAN or --server HOST[:PORT]")
    try:
        p = validate(FieldPlan(**doc), where)
    except TypeError as e:
        raise UserError(f"{where}: {e}") from None
    return p, to_toml(p)


def run(args: argparse.Namespace) -> int:
    from satcc.field.loop import run_plan
    from satcc.field.plan import expand
    from satcc.limits import check_out_dir

    p, text = build_plan(args)
    if args.print:
        sys.stdout.write(text)
        for it in expand(p):
            print(f"# {it.run_id}")
        return 0
    p.host_port()  # a server is named
    out = check_out_dir(args.out if args.out is not None else Path("out") / "field" / p.name)
    order = "shuffled per round" if p.order == "shuffled" else "fixed (as listed)"
    print(
        f"field: plan {p.name!r}, {len(expand(p))} runs, order {order}, store {out}",
        file=sys.stderr,
    )
    r = run_plan(p, text, out, force=args.force)
    if r.interrupted:
        print(
            f"field: interrupted after {r.done} new runs; rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    print(
        f"field: {r.done} runs done, {r.skipped} done before, {len(r.failed)} failed; "
        f'satcc query {out} "SELECT cca, direction, goodput_bps FROM flows WHERE id = 0"',
        file=sys.stderr,
    )
    for rid, why in r.failed:
        print(f"field: failed {rid}: {why}", file=sys.stderr)
    return 1 if r.failed else 0
