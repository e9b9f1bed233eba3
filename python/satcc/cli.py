"""The `satcc` command line.

Each command lives in a module exposing `register(subparsers)`, which adds its parser(s) and
sets `func=handler` with `handler(args) -> int | None` (the exit status; None means 0). Handlers
raise `satcc.errors.SatccError`/`UserError` for problems the user should read; `main` prints
`satcc: error: ...` and exits 1 or 2 without a traceback. A command module that fails to import
is a bug, and says so like any other.
Anything else that escapes a handler is a bug in satcc: one line says so (exit 70, EX_SOFTWARE),
and the traceback is printed only under `satcc --debug` (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import sys

from satcc import _native
from satcc.errors import SatccError, Terminated, catch_termination, restore_handlers
from satcc.textgrid import HelpFormatter

# `satcc --help` and `--version` import neither typing nor satcc.limits (pathlib): ~30 M
# instructions of a start-up of ~100 M (tests/test_cli_imports.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# Command word -> (the module that registers it, its one-line help). Only the module of the
# command being run is imported (the CLI starts in the time Python does); `satcc --help` lists
# the words with their help from this table and imports none of them.
COMMANDS = {
    "check": ("satcc.commands.check", "validate a scenario file"),
    "sim": ("satcc.commands.sim", "run a scenario in the packet simulator"),
    "plot": (
        "satcc.commands.plot",
        "draw goodput, cwnd and srtt over time from a result directory",
    ),
    "cc": ("satcc.commands.cc", "list congestion control algorithms or show one's parameters"),
    "demo": (
        "satcc.commands.demo",
        "run the default comparison: CUBIC vs BBR vs Reno over Starlink and GEO",
    ),
    "emu": (
        "satcc.commands.emu",
        "run a scenario on the real Linux TCP stack (namespaces + satcc-linkd), as root",
    ),
    "run": ("satcc.commands.run", "run a scenario with the engine it names (sim, model or emu)"),
    "validate": (
        "satcc.commands.validate",
        "validate a study's model against the simulator (hybla: study 002)",
    ),
    "trace": ("satcc.commands.trace", "export link models as Mahimahi traces and delay/loss CSVs"),
    "campaign": (
        "satcc.commands.campaign",
        "run a campaign (a scenario x a matrix of keys x seeds), resumably; or its status",
    ),
    "query": (
        "satcc.commands.query",
        "SQL over a campaign directory's results (views runs, flows, flow_series, link_series)",
    ),
    "report": (
        "satcc.commands.report",
        "HTML report and figure files (PNG/PDF/SVG) for a campaign or one result directory",
    ),
    "fidelity": (
        "satcc.commands.fidelity",
        "run a grid of scenarios through the simulator and the real kernel and compare (root)",
    ),
    "reproduce": (
        "satcc.commands.reproduce",
        "run one of the five studies and put satcc's numbers beside the paper's (claims table)",
    ),
    "try": (
        "satcc.commands.try",
        "run a quick scenario built from flags (rate, RTT, loss, CCAs), as with iperf3",
    ),
    "field": (
        "satcc.commands.field",
        "measure your own path: CCAs in rotation against your iperf3 server, into a store",
    ),
    "drill": (
        "satcc.commands.drill",
        "run packetdrill scripts against the simulator's TCP and the kernel's",
    ),
    "scenarios": (
        "satcc.commands.scenarios",
        "list the ready scenarios shipped with satcc, or copy one out to edit",
    ),
    "model": (
        "satcc.commands.model",
        "analytical models: hybla, pftk, cardwell, mathis, window, cubic; or a scenario",
    ),
    "analyze": (
        "satcc.commands.analyze",
        "analyze field measurements: pcap/pcapng captures, iperf3 JSON, ping/nping logs",
    ),
}
COMMAND_HELP = {word: text for word, (_, text) in COMMANDS.items()}
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_INTERNAL = 70  # sysexits.h EX_SOFTWARE: an internal error (a bug in satcc)

DESCRIPTION = """\
satcc: a lab for TCP congestion control over satellite (Starlink, GEO) and long, fat paths.
One TOML scenario describes links and flows; engines run it and write the same results."""

EPILOG = """\
examples:
  satcc demo                          CUBIC vs BBR vs Reno over Starlink and GEO, tables + PNGs
  satcc scenarios                     the ready scenarios (any FILE below may be one's name)
  satcc check scenarios/dumbbell.toml validate a scenario
  satcc sim scenarios/dumbbell.toml --out out/db --seed 2
  satcc plot out/db                   goodput, cwnd and srtt over time -> out/db/plot.png
  satcc cc list                       congestion control algorithms

`satcc COMMAND --help` explains each command. Exit status: 0 ok, 1 failure, 2 bad input,
70 internal error (a bug; `satcc --debug ...` shows the traceback), 130 interrupted,
143 terminated (SIGTERM)."""


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser. Given the command line, only the named command's module is imported; with
    none named (`--help`, `--version`, no word or an unknown one) each command is a stub with
    its one-line help from COMMANDS. Without `argv`: every command's full parser."""
    parser = argparse.ArgumentParser(
        prog="satcc",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"satcc {_native.version()} (native {_native.version()})",  # = satcc.__version__
    )
    parser.add_argument(
        "--debug", action="store_true", help="on an internal error, print the Python traceback"
    )
    modules = _modules_for(argv)
    listed = argv is not None and not modules  # `satcc --help`: the words only
    sub = parser.add_subparsers(
        title="commands", metavar="COMMAND", **({"parser_class": _Listed} if listed else {})
    )
    for name in modules:
        importlib.import_module(name).register(sub)
    if listed:
        for word, (_, text) in COMMANDS.items():
            sub.add_parser(word, help=text)
    return parser


class _Listed:
    """A command as `satcc --help` lists it (its word and help line, which argparse keeps
    beside the parser): no parser is built for it, since none is run (a named command's
    module is imported and builds its own). 21 ArgumentParsers cost `--help` ~30 M
    instructions."""

    def __init__(self, **kwargs: object) -> None:
        pass


def _modules_for(argv: list[str] | None) -> tuple[str, ...]:
    """The command modules to import: the named command's, or (no argv) every one."""
    if argv is None:
        return tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))
    # The only top-level options are flags (--debug, --version, --help): the first word that is
    # not an option is the command.
    word = next((a for a in argv if not a.startswith("-")), None)
    return (COMMANDS[word][0],) if word in COMMANDS else ()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not args.debug:
        # Rust prints a backtrace on an allocation failure when RUST_BACKTRACE is set; under
        # memory pressure that printing can itself fail and hang. std reads the
        # variable at the first failure, so setting it here is in time.
        os.environ["RUST_BACKTRACE"] = "0"
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    from satcc.limits import PrintableStream, printable

    previous = catch_termination()  # exit 143/129, after the cleanup Ctrl-C runs
    stdout = sys.stdout
    if stdout.isatty():  # every command's output to a terminal through limits.printable
        sys.stdout = PrintableStream(stdout)
    try:
        status = func(args)
        sys.stdout.flush()  # a full disk under `> file` is reported here, not at exit
    except SatccError as e:
        print(f"satcc: error: {printable(str(e))}", file=sys.stderr)
        return e.exit_code
    except Terminated as e:
        import signal  # only here: its IntEnums cost every run ~3.5 M instructions

        print(f"satcc: terminated ({signal.Signals(e.signum).name})", file=sys.stderr)
        return 128 + e.signum
    except KeyboardInterrupt:
        print("satcc: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `satcc ... | head`: the reader went away; quietly stop, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as e:
        if e.errno is None:  # from Rust (pyo3): the errno is only in the text
            m = re.search(r"\(os error (\d+)\)$", str(e))
            e.errno = int(m.group(1)) if m else None
            e.strerror = e.strerror or (os.strerror(e.errno) if e.errno else None)
        if e.errno not in WRITE_ERRNOS:
            return _internal_error(e, getattr(args, "debug", False))
        print(f"satcc: error: {_what_failed(e, args)}", file=sys.stderr)
        return 1
    except MemoryError as e:
        # a reader that knows what did not fit (a trace, a delay CSV) says so; otherwise the
        # general advice
        what = printable(str(e)).removeprefix("out of memory: ") if str(e) else ""
        print(
            f"satcc: error: out of memory ({what})"
            if what
            else "satcc: error: out of memory (the run needs more memory than this process may "
            "use; shorten it, use fewer flows or longer bins)",
            file=sys.stderr,
        )
        return 1
    except BaseException as e:
        if isinstance(e, SystemExit):
            raise
        return _internal_error(e, getattr(args, "debug", False))
    finally:
        sys.stdout = stdout
        restore_handlers(previous)
    return 0 if status is None else int(status)


# A write the system refused: a full disk or quota, a file-size limit, a read-only filesystem,
# no permission, an I/O error. Every writer (result directories, plot, report, trace export,
# query output, the campaign catalog) ends here unless it says more itself: one line, exit 1.
WRITE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EFBIG,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.EIO,
        errno.ENAMETOOLONG,
    }
)


def _what_failed(e: OSError, args: argparse.Namespace) -> str:
    """'PATH: cannot write (No space left on device)', naming the file when the error does,
    else the command's --out, else standard output (where `query`, `analyze` ... print)."""
    from satcc.limits import printable

    why = e.strerror or os.strerror(e.errno or 0)
    if e.filename is not None:
        where = os.fsdecode(e.filename)
    elif getattr(args, "out", None) is not None:
        where = f"--out {args.out}"
    else:
        where = "standard output"
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
        return printable(f"{where}: cannot write ({why})")
    return printable(f"{where}: {why}")


# The collector's first-generation threshold while the `satcc` command runs (Python's default is
# 700 allocations): start-up builds ~10^5 objects that live until exit (argparse, pydantic's
# schemas), and collecting them again and again is wasted work. Cycles are still collected.
GC_GEN0_THRESHOLD = 50_000


def entry() -> NoReturn:
    """The `satcc` command: `main()` in a process that ends with it. The collector runs less
    often, and the objects alive at the end are frozen (`gc.freeze`) so that the interpreter's
    shutdown does not traverse them once more; atexit handlers (the emulator's cleanup) still
    run. Together ~15 ms of a short `satcc sim` (bench/cli). Code that calls `main()` itself
    (tests, notebooks) keeps Python's defaults."""
    import gc

    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
    status = main()
    gc.freeze()
    sys.exit(status)


def _internal_error(e: BaseException, debug: bool) -> int:
    from satcc.limits import printable

    if debug:
        import traceback

        traceback.print_exception(e, file=sys.stderr)
    first = printable(str(e).strip().splitlines()[0] if str(e).strip() else "")[:200]
    print(
        f"satcc: internal error (a bug in satcc, please report it): {type(e).__name__}"
        f"{': ' + first if first else ''}"
        f"{'' if debug else '; rerun with `satcc --debug ...` for the traceback'}",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
