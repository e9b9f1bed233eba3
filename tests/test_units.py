"""satcc.units: every unit string parsed once, exactly, with clear errors."""

import pytest

from satcc.units import (
    UnitError,
    format_duration,
    format_rate,
    format_size,
    parse_duration,
    parse_packets,
    parse_probability,
    parse_queue,
    parse_rate,
    parse_size,
)


@pytest.mark.parametrize(
    "text,ns",
    [
        ("600 ms", 600_000_000),
        ("1.5 s", 1_500_000_000),
        ("250us", 250_000),
        ("250 µs", 250_000),
        ("2 min", 120_000_000_000),
        ("1 h", 3_600_000_000_000),
        ("10 ns", 10),
        ("1.1 s", 1_100_000_000),  # exact: decimals, not binary floats
        ("1e3 ms", 1_000_000_000),
        ("0", 0),
        (0, 0),
        ("0 s", 0),
    ],
)
def test_durations_parse_to_exact_nanoseconds(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    "bad,why",
    [
        ("600", "needs a unit"),
        (5, "needs a unit"),
        ("1 mss", "unknown unit"),
        ("-1 s", "negative"),
        ("0.5 ns", "whole number"),
        (True, None),
        ([1], None),
        ("", None),
        ("ms", None),
    ],
)
def test_bad_durations_say_what_was_expected_and_found(bad, why):
    with pytest.raises(UnitError) as e:
        parse_duration(bad)
    msg = str(e.value)
    assert msg.startswith("expected a duration")
    assert "found" in msg
    if why:
        assert why in msg
    if isinstance(bad, str) and bad:
        assert repr(bad) in msg


@pytest.mark.parametrize(
    "text,bps",
    [
        ("20 Mbit/s", 20_000_000),
        ("1 Gbit/s", 1_000_000_000),
        ("20Mbps", 20_000_000),
        ("20 mbps", 20_000_000),
        ("500 kbit/s", 500_000),
        ("1.5 Mb/s", 1_500_000),
        ("2 MB/s", 16_000_000),  # bytes per second
        ("1 Kibit/s", 1024),
        (0, 0),  # zero needs no unit, as for durations
    ],
)
def test_rates_parse_to_bits_per_second(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize("bad", ["20 MB", "fast", "-1 Mbit/s", "0.5 bit/s", "10 Mbit", None])
def test_bad_rates_are_errors(bad):
    with pytest.raises(UnitError, match="expected a rate"):
        parse_rate(bad)


@pytest.mark.parametrize("bare", [5, 1e6, "2500", " 20 ", "1e6"])
def test_a_bare_rate_is_refused_not_read_as_bit_per_second(bare):
    """Before: 5 and "2500" were 5 and 2500 bit/s, silently (issue 29)."""
    with pytest.raises(UnitError, match="expected a rate.*a bare number needs a unit"):
        parse_rate(bare)


@pytest.mark.parametrize(
    "text,nbytes",
    [
        ("1448 B", 1448),
        ("1.5 MB", 1_500_000),  # SI: MB = 10^6
        ("16 MB", 16_000_000),
        ("64 KB", 64_000),  # KB = kB = 10^3
        ("64 kB", 64_000),
        ("1 MiB", 1_048_576),  # binary: MiB = 2^20
        ("64 KiB", 65_536),
        ("1 GB", 10**9),
        (65535, 65535),
        ("65535", 65535),
    ],
)
def test_sizes_use_decimal_and_binary_prefixes_as_written(text, nbytes):
    assert parse_size(text) == nbytes


def test_a_lowercase_b_size_is_rejected_with_a_hint_about_bits():
    with pytest.raises(UnitError, match="write B, not b"):
        parse_size("16 mb")


@pytest.mark.parametrize("bad", ["1.5", "0.1 KiB", "10 pkt", "-1 B", 1.5, "big"])
def test_bad_sizes_are_errors(bad):
    with pytest.raises(UnitError, match="expected a size"):
        parse_size(bad)


@pytest.mark.parametrize(
    "text,p",
    [
        (1e-4, 1e-4),
        (0.003, 0.003),
        ("0.3 %", 0.003),
        ("0.3%", 0.003),
        (0, 0.0),
        (1, 1.0),
        ("100 %", 1.0),
    ],
)
def test_probabilities_accept_fractions_and_percentages(text, p):
    assert parse_probability(text) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("bad", [2, "-0.1", "5 ppm", "abc", "101 %", True])
def test_bad_probabilities_are_errors(bad):
    with pytest.raises(UnitError, match="expected a probability"):
        parse_probability(bad)


@pytest.mark.parametrize(
    "text,queue",
    [
        ("1000 pkt", {"packets": 1000}),
        ("20 packets", {"packets": 20}),
        ("1.5 MB", {"bytes": 1_500_000}),
        ("64 KiB", {"bytes": 65_536}),
        ("1 BDP", {"bdp": 1.0}),
        ("0.5 bdp", {"bdp": 0.5}),
    ],
)
def test_queue_limits_are_packets_bytes_or_bdp(text, queue):
    assert parse_queue(text) == queue


@pytest.mark.parametrize(
    "bad,why",
    [
        (1000, "needs a unit"),
        ("100", "needs a unit"),  # before: 100 bytes, silently (issue 29)
        (" 1e3 ", "needs a unit"),
        ("0 pkt", "at least 1"),
        ("1.5 pkt", "whole number"),
        ("0 BDP", "positive"),
        ("x", None),
        ("10 furlongs", "unknown unit"),
    ],
)
def test_bad_queue_limits_are_errors(bad, why):
    with pytest.raises(UnitError, match="expected a queue limit") as e:
        parse_queue(bad)
    if why:
        assert why in str(e.value)


def test_packet_counts_accept_bare_integers_and_pkt():
    assert parse_packets(20) == 20
    assert parse_packets("20 pkt") == 20
    with pytest.raises(UnitError):
        parse_packets("20 ms")


def test_formatting_picks_a_readable_unit():
    assert format_rate(20_000_000) == "20.00 Mbit/s"
    assert format_duration(600_000_000) == "600 ms"
    assert format_duration(1_500_000_000) == "1.5 s"
    assert format_duration(0) == "0 s"
    assert format_size(1_500_000) == "1.50 MB"
