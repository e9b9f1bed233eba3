"""Plain-text tables for terminals and logs, laid out in the native module (comfy-table).

    grid(["id", "name"], [["0", "bulk"]], left={1})  ->  ["id  name", " 0  bulk"]

Columns are separated by two spaces, right-aligned unless listed in `left`, as wide as their
widest cell in terminal cells (a wide character counts two); trailing blanks are dropped. The
text is the same on a terminal, in a pipe and in a log: no colour, no markup or emoji codes
interpreted (a `[bold]` in a flow name stays text), no wrapping; a cell's own blanks are kept.
`HelpFormatter` is every satcc parser's argparse formatter (the terminal's width without shutil).
No Python table library is imported (rich's console and table cost a command ~100 M
instructions).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence

from satcc import _native

COLUMN_GAP = 2


def grid(
    columns: Sequence[str], rows: Iterable[Sequence[str]], left: Iterable[int] = ()
) -> list[str]:
    """The header line and one line per row (see the module doc)."""
    return _native.text_grid(
        [str(c) for c in columns],
        [[str(c) for c in r] for r in rows],
        sorted(set(left)),
        COLUMN_GAP,
    )


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
