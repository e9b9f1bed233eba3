"""Errors the CLI turns into one clear message and an exit code instead of a traceback.

Command modules (ours and other groups' `register(subparsers)` modules) raise these; `satcc.cli`
prints `satcc: error: <message>` on stderr and exits with `exit_code`.
"""

from __future__ import annotations


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
