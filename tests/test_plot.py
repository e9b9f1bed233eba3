"""satcc.plot: one PNG with goodput, cwnd and srtt panels per flow."""

import math

import pytest

from satcc import plot
from satcc import results as rs
from satcc import scenario as sc
from tests.helpers import MINIMAL, engine_output

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _result(write_toml, text=MINIMAL):
    s = sc.load(write_toml(text))
    config = sc.resolve(s)
    meta = {"engine": "sim", "scenario": s.name, "seed": config["seed"]}
    return rs.RunResult.from_engine(engine_output(config), config, sc.expand_flows(s), meta)


def test_the_figure_has_three_labelled_panels_and_a_legend_per_flow(write_toml):
    text = MINIMAL + '\n[[flow]]\nfrom = "d"\nto = "s"\ncca = "reno"\nstart = "1 s"\n'
    fig = plot.draw(_result(write_toml, text))
    axes = fig.get_axes()
    assert [ax.get_ylabel() for ax in axes] == ["goodput (Mbit/s)", "cwnd (packets)", "srtt (ms)"]
    assert axes[-1].get_xlabel() == "time (s)"
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == ["flow0 (reno)", "flow1 (reno)"]  # flow names, not ids


def test_bins_before_a_flow_starts_are_left_blank(write_toml):
    text = MINIMAL + '\n[[flow]]\nfrom = "d"\nto = "s"\ncca = "reno"\nstart = "1 s"\n'
    fig = plot.draw(_result(write_toml, text))
    cwnd_late = fig.get_axes()[1].get_lines()[1]
    x, y = cwnd_late.get_xdata(), cwnd_late.get_ydata()
    before = [v for t, v in zip(x, y, strict=True) if t <= 1.0]
    after = [v for t, v in zip(x, y, strict=True) if t > 1.0]
    assert before and all(math.isnan(v) for v in before)  # NaN: not drawn
    assert after and not any(math.isnan(v) for v in after)


def test_plot_dir_writes_a_png_into_the_result_directory(write_toml, tmp_path):
    out = _result(write_toml).write(tmp_path / "r")
    path = plot.plot_dir(out)
    assert path == out / plot.DEFAULT_PNG
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    other = plot.plot_dir(out, tmp_path / "elsewhere" / "x.png")
    assert other.read_bytes().startswith(PNG_MAGIC)


def test_plotting_a_missing_result_raises_a_result_error(tmp_path):
    with pytest.raises(rs.ResultError):
        plot.plot_dir(tmp_path)


def test_panels_and_flows_can_be_chosen_and_the_queue_panel_shows_queueing_delay(write_toml):
    text = (
        MINIMAL + '\n[[flow]]\nname = "late"\nfrom = "d"\nto = "s"\ncca = "reno"\nstart = "1 s"\n'
    )
    r = _result(write_toml, text)
    fig = plot.draw(r, flows=["late"], panels=["goodput", "queue"])
    axes = fig.get_axes()
    assert [ax.get_ylabel() for ax in axes] == [
        "goodput (Mbit/s)",
        "queueing delay (ms at median rate)",
    ]
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["late (reno)"]
    with pytest.raises(ValueError, match="panels"):
        plot.draw(r, panels=["nope"])


def test_names_with_mathtext_dollars_are_drawn_as_plain_text(write_toml, tmp_path):
    # Before: a name like "$\frac{a" made matplotlib's mathtext parser raise while saving.
    text = (
        MINIMAL.replace('name = "tiny"', "name = '$\\foo$'")
        + "\n[[flow]]\nname = 'cost $^$'\nfrom = 'd'\nto = 's'\ncca = 'reno'\n"
    )
    r = _result(write_toml, text)
    path = plot.save(r, tmp_path / "p.png")
    assert path.read_bytes().startswith(PNG_MAGIC)
