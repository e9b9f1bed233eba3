"""The progress bar on stderr for long runs (rich.progress).

It draws only when the stream is a terminal and only once the run has taken longer than
`delay_s` of wall time, so quick runs, pipes and CI logs stay clean. It moves even when the
fraction barely does (a very long simulation): the percentage has two decimals, a spinner turns
and the elapsed time counts at every update. The simulator calls it a few times a second while
holding the interpreter, so it refreshes on those calls, not from a thread. Wall time is read
here, in the user interface, never in model code.
"""

from __future__ import annotations

import sys
import time

from satcc.limits import printable

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Self, TextIO

DEFAULT_DELAY_S = 1.0  # a quick run draws nothing; a bar appears once a run takes > 1 s
REFRESH_S = 0.1
LABEL_CHARS = 40


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
        label = printable(label)
        self.label = label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"
        self.stream = stream if stream is not None else sys.stderr
        self.delay_s = delay_s
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.clock = clock
        self.started = clock()
        self.last_refresh = float("-inf")
        self._progress = None
        self._task = None

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(file=self.stream, force_terminal=True, highlight=False)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn("{task.percentage:>6.2f}%"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
            auto_refresh=False,
            transient=True,
            get_time=self.clock,
        )
        self._progress.start()
        self._task = self._progress.add_task(self.label, total=1.0)
        self._progress.tasks[-1].start_time = self.started  # elapsed counts from the run's start

    @property
    def drawn(self) -> bool:
        return self._progress is not None

    def __call__(self, fraction: float) -> None:
        now = self.clock()
        if not self.enabled or now - self.started < self.delay_s:
            return
        if self._progress is None:
            self._start()
        fraction = min(max(float(fraction), 0.0), 1.0)
        self._progress.update(self._task, completed=fraction)
        if now - self.last_refresh >= REFRESH_S or fraction >= 1.0:
            self.last_refresh = now
            self._progress.refresh()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
