"""satcc.progress: a bar only on a terminal and only after the first second."""

import io

from satcc.progress import ProgressBar


class Tty(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_nothing_is_drawn_during_the_first_second():
    stream, clock = Tty(), Clock()
    bar = ProgressBar(stream=stream, clock=clock)
    clock.now = 0.9
    bar(0.5)
    bar.close()
    assert stream.getvalue() == ""


def test_a_long_run_draws_the_fraction_and_clears_the_line_at_the_end():
    stream, clock = Tty(), Clock()
    with ProgressBar(label="x", stream=stream, clock=clock) as bar:
        clock.now = 1.5
        bar(0.25)
        assert stream.getvalue().endswith(" 25%") and "x [" in stream.getvalue()
        bar(0.25)                       # unchanged percentage: not redrawn
        assert stream.getvalue().count("\r") == 1
        bar(1.0)
        assert stream.getvalue().endswith("100%")
    assert stream.getvalue().endswith("\r\033[K")


def test_a_pipe_gets_no_bar():
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar(stream=stream, clock=clock)
    clock.now = 10
    bar(0.5)
    bar.close()
    assert stream.getvalue() == ""
