"""satcc.progress: a bar only on a terminal, only after the first second, and one that moves."""

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


def test_a_long_run_draws_its_label_and_the_fraction_then_clears_the_line():
    stream, clock = Tty(), Clock()
    with ProgressBar(label="x", stream=stream, clock=clock) as bar:
        clock.now = 1.5
        bar(0.25)
        assert " 25.00%" in stream.getvalue() and "x" in stream.getvalue()
        clock.now = 2.0
        bar(1.0)
        assert "100.00%" in stream.getvalue()
    assert stream.getvalue().endswith("\x1b[2K")  # transient: the bar's line is erased


def test_a_very_slow_run_still_moves_the_bar():
    """A 1e9 s simulation once sat at "0 %" forever; two decimals and the elapsed time
    show it is running."""
    stream, clock = Tty(), Clock()
    with ProgressBar(label="long", stream=stream, clock=clock) as bar:
        clock.now = 1.5
        bar(0.0001)
        first = stream.getvalue()
        clock.now = 3.0
        bar(0.0002)
        second = stream.getvalue()[len(first) :]
    assert "0.01%" in first and "0.02%" in second
    assert "0:00:01" in first and "0:00:03" in second  # elapsed time counts


def test_a_pipe_gets_no_bar():
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar(stream=stream, clock=clock)
    clock.now = 10
    bar(0.5)
    bar.close()
    assert stream.getvalue() == ""


def test_a_label_with_terminal_escapes_is_drawn_escaped():
    stream, clock = Tty(), Clock()
    with ProgressBar(label="evil\x1b]0;pwned\x07", stream=stream, clock=clock) as bar:
        clock.now = 1.5
        bar(0.5)
    assert "\x1b]0;pwned" not in stream.getvalue() and "\\x1b]0;pwned" in stream.getvalue()


def test_the_campaign_line_draws_on_a_terminal_and_erases_itself():
    from satcc.campaign.execute import ProgressLine

    stream, clock = Tty(), Clock()
    with ProgressLine("camp\x1b[31m", 4, already=1, stream=stream, clock=clock) as line:
        clock.now = 2.0
        line.advance(ok=False)
        drawn = stream.getvalue()
    assert "2/4" in drawn and "1 failed" in drawn and "0.50 runs/s" in drawn
    assert "\x1b[31m" not in drawn  # the name is printed escaped
    assert stream.getvalue().endswith("\x1b[2K")  # transient: erased at the end


def test_the_campaign_writes_a_plain_line_per_finished_run_to_a_pipe():
    from satcc.campaign.execute import ProgressLine

    stream, clock = io.StringIO(), Clock()
    with ProgressLine("camp", 4, already=1, stream=stream, clock=clock) as line:
        clock.now = 2.0
        line.advance(run_id="3f2a")
        clock.now = 4.0
        line.advance(ok=False, run_id="77bc")
    lines = stream.getvalue().splitlines()
    assert lines == [
        "camp: 2/4 · run 3f2a done · 0.50 runs/s · ETA 4 s",
        "camp: 3/4 · run 77bc failed · 1 failed · 0.50 runs/s · ETA 2 s",
    ]
    assert "\x1b" not in stream.getvalue()


def test_no_progress_writes_nothing_to_a_pipe():
    from satcc.campaign.execute import ProgressLine

    stream, clock = io.StringIO(), Clock()
    with ProgressLine("camp", 4, stream=stream, clock=clock, enabled=False) as line:
        clock.now = 2.0
        line.advance(run_id="3f2a")
    assert stream.getvalue() == ""
