"""Errors the CLI turns into one clear message and an exit code instead of a traceback.

Command modules (ours and other groups' `register(subparsers)` modules) raise these; `satcc.cli`
prints `satcc: error: <message>` on stderr and exits with `exit_code`.
"""

from __future__ import annotations

# `_signal`: the interpreter's own signal functions, of which `signal` is the face. `signal`
# builds IntEnums of every signal and handler at import, ~3.5 M instructions of every command
# (BENCHMARKS.md, issue 40); here handlers are set and given back as they are, and a signal's
# name is asked of `signal` only where one is printed (satcc.cli).
import _signal
import threading

TYPE_CHECKING = False  # typing stays unimported on `satcc --help`'s path
if TYPE_CHECKING:
    from typing import Any, NoReturn


class SatccError(Exception):
    """Something went wrong that the user should read about; exit status 1."""

    exit_code = 1


class UserError(SatccError):
    """Bad input from the user (a file, an argument); exit status 2 like argparse."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a scheduler, `docker stop`, systemd, a closed terminal), raised in the
    main thread as Ctrl-C's KeyboardInterrupt is, so that the same cleanup runs (workers
    stopped, kernel state removed, the result directory left whole); the CLI exits 128 + the
    signal's number (143 for SIGTERM)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


TERMINATING_SIGNALS = (_signal.SIGTERM, _signal.SIGHUP)


# The signals whose Terminated was raised: Python swallows an exception raised where it cannot
# propagate ("Exception ignored in ..."), as when the signal lands in an at-fork callback while
# the main thread spawns a process (logging's _releaseLock), so a long loop checks this too
_raised: list[int] = []


def raise_terminated(signum: int, frame: object) -> NoReturn:
    """The handler of SIGTERM and SIGHUP: `Terminated` in the main thread, recorded."""
    _raised.append(signum)
    raise Terminated(signum)


def raise_if_terminated() -> None:
    """Raise again the Terminated of a signal whose exception was swallowed where it landed (a
    long loop's check: the run stops at the next one)."""
    if _raised:
        signum = _raised[-1]
        _raised.clear()
        raise Terminated(signum)


def forget_termination() -> None:
    """A Terminated that propagated needs no second raise."""
    _raised.clear()


def catch_termination() -> dict[int, Any]:
    """SIGTERM and SIGHUP raise `Terminated` (a KeyboardInterrupt) in the main thread, so what
    runs stops as it does on Ctrl-C: workers stopped, scratch files and kernel state removed.
    Returns the handlers to give back with `restore_handlers` (none off the main thread,
    where Python takes no handler)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: _signal.signal(s, raise_terminated) for s in TERMINATING_SIGNALS}


def restore_handlers(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        _signal.signal(signum, handler)
