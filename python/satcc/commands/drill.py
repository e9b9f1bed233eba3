"""`satcc drill SCRIPT|DIR...`: packetdrill scripts against the simulator and the kernel."""

from __future__ import annotations

import argparse
from pathlib import Path

from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["drill"]
DESCRIPTION = """\
Run scripts in packetdrill's language (google/packetdrill syntax.md): each one is parsed once
and run on the chosen engines. `--engine kernel` (root) drives this machine's TCP in a
throwaway network namespace through a TUN device with TSO/GSO offloads, as packetdrill does,
holding /tmp/satcc-emu.lock (and saying who has it while it waits). Outbound packets are
gathered into the one the script names as packetdrill does (off: --strict_segments). Each
script ends pass, fail (the first mismatch: line, expected, got), known (a failure listed in
the directory's known.toml), unsupported (the reason) or error (a malformed script: file,
line, what was expected); what it printed (print(), shell messages) follows it. Directories
are searched for *.pkt. Exit status: 0 when nothing failed but known deviations, 1 on a new
failure, 2 on a malformed script or bad argument. See docs/drill.md."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "drill",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "paths", metavar="SCRIPT|DIR", nargs="+", help="packetdrill scripts or directories"
    )
    p.add_argument(
        "--engine",
        choices=["sim", "kernel", "both"],
        default="both",
        help="system under test (default both; kernel needs root)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON object per script and engine"
    )
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from satcc.drill import suite

    try:
        paths = suite.collect(args.paths)
    except FileNotFoundError as e:
        raise UserError(
            f"{e.args[0]}: expected a packetdrill script or a directory of *.pkt"
        ) from None
    if not paths:
        raise UserError(f"{' '.join(args.paths)}: expected *.pkt scripts, found none")
    engines = ["sim", "kernel"] if args.engine == "both" else [args.engine]
    on_row = (
        (lambda r: print(__import__("json").dumps(r.as_json()), flush=True)) if args.json else None
    )
    rows = suite.run_all(paths, engines, on_row)
    if not args.json:
        print(suite.table(rows))
    if args.junit:
        try:
            Path(args.junit).write_text(suite.junit(rows))
        except OSError as e:
            raise UserError(
                f"--junit {args.junit}: expected a writable file ({e.strerror})"
            ) from None
    if any(r.verdict == "error" for r in rows):
        return 2
    return 1 if any(r.verdict == "fail" for r in rows) else 0
