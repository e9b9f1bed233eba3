"""satcc.textgrid: plain-text tables drawn by rich, the same on a terminal, a pipe and a log."""

from satcc.textgrid import grid


def test_columns_are_padded_to_the_widest_cell_and_right_aligned_unless_left():
    lines = grid(["id", "name", "rate"], [["0", "bulk", "1.00 Mbit/s"], ["12", "b", "-"]], {1})
    assert lines == [
        "id  name         rate",
        " 0  bulk  1.00 Mbit/s",
        "12  b               -",
    ]


def test_markup_and_emoji_codes_stay_text_and_nothing_is_coloured():
    lines = grid(["name"], [["[bold]x[/bold] :smile:"]], {0})
    assert lines[1] == "[bold]x[/bold] :smile:"
    assert "\x1b" not in "".join(lines)


def test_wide_characters_count_as_two_cells_and_long_rows_never_wrap():
    lines = grid(["a", "b"], [["漢字", "x"], ["ab", "y" * 500]], {0, 1})
    assert lines[1] == "漢字  x"  # 4 cells wide, as wide as "ab" + 2
    assert lines[2] == "ab    " + "y" * 500
    assert len(lines) == 3


def test_no_rows_gives_the_header_only_and_trailing_blanks_are_dropped():
    assert grid(["id", "name"], [], {1}) == ["id  name"]
    assert grid(["a", "b"], [["x", ""]], {0, 1})[1] == "x"
