"""Built-in `satcc` commands; each module exposes `register(subparsers)` (see satcc.cli)."""

from __future__ import annotations

import argparse
import os
import sys


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every satcc parser's formatter: argparse's raw-description one, its width found as
    `shutil.get_terminal_size` finds it (COLUMNS, else the terminal of stdout, else 80) minus
    2, as argparse does, but without importing shutil: argparse builds a formatter for every
    `add_argument` (to check the metavar), and shutil brings bz2, lzma and fnmatch (~7 M
    instructions, issue 40's `satcc sim` share; tests/test_cli_imports.py)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:  # fmt: skip
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def terminal_columns() -> int:
    """shutil.get_terminal_size()'s columns."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80
