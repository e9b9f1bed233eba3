"""`satcc field PLAN.toml` / `satcc field --server HOST --cca cubic,bbr ...`: measure the user's
own path against their `iperf3 -s`, into a campaign store (satcc.field)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.textgrid import HelpFormatter

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
  satcc field plan.toml --align starlink     runs start 1 s after :12/:27/:42/:57
  satcc field study001 --server vps.example --print   every command, the time and the data
  satcc field study001 --server vps.example --check   the preflight alone

Before a plan starts, the preflight checks the server (reachable), the CCAs (here for
uploads; at the server for downloads, by a 1 s iperf3 run each), the clock, ping and tcpdump
(--no-check skips it). iperf3's -P, --bidir and -b (TCP) work as in iperf3; --iperf3-args
passes further arguments ('-w 4M --zerocopy')."""

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
    "parallel",
    "bidir",
    "bitrate",
    "iperf3_args",
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "field",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
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
    p.add_argument(
        "--udp", help="UDP runs at these rates, comma-separated ('10Mbit/s,50M', iperf3's K/M/G)"
    )
    p.add_argument(
        "-P", "--parallel", type=int, help="iperf3 -P: parallel streams per run (default: 1)"
    )
    p.add_argument(
        "--bidir",
        action="store_const",
        const=True,
        help="iperf3 --bidir: both directions at once (with --direction up)",
    )
    p.add_argument(
        "-b", "--bitrate", help="iperf3 -b for TCP runs: 50M or '50 Mbit/s' (default: unlimited)"
    )
    p.add_argument(
        "--iperf3-args",
        dest="iperf3_args",
        metavar="ARGS",
        help="further iperf3 arguments, as one string ('-w 4M --zerocopy')",
    )
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
    p.add_argument(
        "--print",
        action="store_true",
        help="print the plan TOML, every command in run order, the time and the data",
    )
    p.add_argument(
        "--check", action="store_true", help="run the preflight checks only (module doc above)"
    )
    p.add_argument(
        "--no-check", dest="no_check", action="store_true", help="start without the preflight"
    )
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
            if key == "udp":
                v = [flag_rate(x, "--udp") for x in v]
        elif key == "bitrate":
            v = flag_rate(v, "--bitrate/-b")
        elif key == "iperf3_args":
            import shlex

            try:
                v = shlex.split(v)
            except ValueError as e:
                raise UserError(f"--iperf3-args: {e}, found {args.iperf3_args!r}") from None
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
    from satcc.field.preflight import check_cca_names

    check_cca_names(p.ccas, where)
    return p, to_toml(p)


def flag_rate(text: str, flag: str) -> str:
    """A rate flag as `satcc try` reads one (units.py's units, or iperf3's 10M)."""
    import importlib

    return importlib.import_module("satcc.commands.try").flag_rate(text, flag)


def print_plan(p, text: str) -> None:
    """The plan file, then each run's id and the commands it runs (as comments: the output
    is a plan file still), then what the plan costs."""
    from satcc.field.measure import (
        CAPTURE_FILE,
        RAW_DIR,
        SNAPLEN,
        iperf3_cmd,
        ping_cmd,
        tcpdump_cmd,
    )
    from satcc.field.plan import estimate
    from satcc.store.layout import RUNS_DIR

    host, port = p.host_port() if p.server else ("SERVER", p.port)
    capture = p.capture is not False
    sys.stdout.write(text)
    for it in expand_plan(p):
        print(f"# {it.run_id}")
        lines = []
        if p.ping_count > 0:
            lines.append(ping_cmd(host, p.ping_interval_s, count=p.ping_count))
        if capture:
            path = Path(RUNS_DIR) / it.run_id / RAW_DIR / CAPTURE_FILE
            lines.append(tcpdump_cmd("DEV", host, port, path))
        lines.append(iperf3_cmd(p, it, host, port))
        lines.append(ping_cmd(host, p.ping_interval_s, deadline_s=p.duration_s + 1))
        for cmd in lines:
            note = ""
            if cmd[0] == "tcpdump":
                note = "   (as root; DEV: the route's device)"
            elif cmd[0] == "ping" and "-w" in cmd:
                note = "   (alongside iperf3)"
            print(f"#   $ {shlex_join(cmd)}{note}")
    for line in estimate(p).lines(SNAPLEN if capture else None):
        print(f"# {line}")


def expand_plan(p):
    from satcc.field.plan import expand

    return expand(p)


def shlex_join(cmd: list[str]) -> str:
    import shlex

    return shlex.join(cmd)


def preflight(p, force: bool = False) -> int:
    """Run the checks, print them (stderr); 0 when none that the plan needs failed."""
    from satcc.field.preflight import failed, run_checks

    checks = run_checks(p, force=force)
    for c in checks:
        print(f"field: check {c.line()}", file=sys.stderr)
    bad = failed(checks)
    if bad:
        print(
            f"field: {len(bad)} check(s) failed: {', '.join(c.what for c in bad)}",
            file=sys.stderr,
        )
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    from satcc.field.loop import run_plan
    from satcc.field.plan import expand
    from satcc.limits import check_out_dir

    p, text = build_plan(args)
    if args.print:
        print_plan(p, text)
        return 0
    p.host_port()  # a server is named
    if args.check:
        return preflight(p, args.force)
    if not args.no_check and preflight(p, args.force) != 0:
        print("field: not started (fix the above, or --no-check)", file=sys.stderr)
        return 1
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
