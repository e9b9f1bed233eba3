"""Plain-text tables for terminals and logs, laid out in the native module (comfy-table).

    grid(["id", "name"], [["0", "bulk"]], left={1})  ->  ["id  name", " 0  bulk"]

Columns are separated by two spaces, right-aligned unless listed in `left`, as wide as their
widest cell in terminal cells (a wide character counts two); trailing blanks are dropped. The
text is the same on a terminal, in a pipe and in a log: no colour, no markup or emoji codes
interpreted (a `[bold]` in a flow name stays text), no wrapping; a cell's own blanks are kept.
No Python table library is imported (rich's console and table cost a command ~100 M
instructions).
"""

from __future__ import annotations

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
