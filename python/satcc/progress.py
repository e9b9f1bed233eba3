"""A tiny progress bar on stderr for long runs (no dependency).

It draws only when the stream is a terminal and only once the run has taken longer than
`delay_s` of wall time, so quick runs, pipes and CI logs stay clean. Wall time is read here, in
the user interface, never in model code.
"""

from __future__ import annotations

import sys
import time
from typing import Self, TextIO

DEFAULT_DELAY_S = 1.0  # issue 2: "a progress bar while a run takes more than a second"
BAR_WIDTH = 30


class ProgressBar:
    """Callable with the fraction done (0..1); use as a context manager to finish the line."""

    def __init__(
        self,
        label: str = "",
        stream: TextIO | None = None,
        delay_s: float = DEFAULT_DELAY_S,
        enabled: bool | None = None,
        clock=time.monotonic,
    ):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay_s = delay_s
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.clock = clock
        self.started = clock()
        self.drawn = False
        self.last = -1

    def __call__(self, fraction: float) -> None:
        if not self.enabled or self.clock() - self.started < self.delay_s:
            return
        fraction = min(max(float(fraction), 0.0), 1.0)
        percent = int(fraction * 100)
        if percent == self.last:
            return
        self.last = percent
        filled = int(fraction * BAR_WIDTH)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        label = f"{self.label} " if self.label else ""
        self.stream.write(f"\r{label}[{bar}] {percent:3d}%")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")  # clear the bar's line
            self.stream.flush()
            self.drawn = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
