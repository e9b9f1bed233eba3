"""Plain-text tables for terminals and logs, drawn by rich.

    grid(["id", "name"], [["0", "bulk"]], left={1})  ->  ["id  name", " 0  bulk"]

Columns are separated by two spaces, right-aligned unless listed in `left`, as wide as their
widest cell in terminal cells (a wide character counts two); trailing blanks are dropped. The
text is the same on a terminal, in a pipe and in a log: no colour, no markup or emoji codes
interpreted (a `[bold]` in a flow name stays text), no wrapping.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

COLUMN_GAP = 2
MAX_WIDTH = 1 << 16  # never wrap: a table is as wide as its cells


def grid(
    columns: Sequence[str], rows: Iterable[Sequence[str]], left: Iterable[int] = ()
) -> list[str]:
    """The header line and one line per row (see the module doc)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    left = set(left)
    table = Table(
        box=None,
        show_edge=False,
        pad_edge=False,
        padding=(0, COLUMN_GAP // 2),
        header_style="",
        expand=False,
    )
    for i, c in enumerate(columns):
        table.add_column(Text(c), justify="left" if i in left else "right", no_wrap=True)
    for r in rows:
        table.add_row(*(Text(c) for c in r))
    out = io.StringIO()
    console = Console(
        file=out,
        width=MAX_WIDTH,
        color_system=None,
        markup=False,
        emoji=False,
        highlight=False,
        force_terminal=False,
        legacy_windows=False,
    )
    console.print(table)
    return [line.rstrip() for line in out.getvalue().split("\n")[:-1]]
