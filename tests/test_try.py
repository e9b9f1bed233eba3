"""`satcc try` as an iperf3 user types it (issue 29): iperf3's flags, no bare numbers read as
bit/s, bytes or fractions, errors that name the flag, case-forgiving CCA names. Before: `--rate
20` ran at 20 bit/s, `--queue 100` was 100 bytes, `--loss 0.3` 30 %, and errors read
`<string>: link[0].loss`."""

from __future__ import annotations

import json
import tomllib

import pytest

from satcc.cli import main


def built(capsys, *flags: str) -> dict:
    assert main(["try", *flags, "--print"]) == 0
    return tomllib.loads(capsys.readouterr().out)


def refused(capsys, *flags: str) -> str:
    assert main(["try", *flags, "--print"]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "<string>" not in err
    return err


@pytest.mark.parametrize(
    ("flags", "expect"),
    [
        (("--rate", "20"), "--rate/-b: expected a rate with a unit"),
        (("-b", "20"), "--rate/-b: expected a rate with a unit"),
        (("--queue", "100"), "--queue: expected a queue with a unit"),
        (
            ("--loss", "0.3"),
            "--loss: expected a probability in [0, 1] like 1e-4 or '0.3 %', found '0.3' (a bare number in text is ambiguous",
        ),
        (
            ("-t", "10"),
            "--duration/-t: expected a duration like '600 ms' or '1.5 s' (units: ns, us, ms, s, min, h), found '10' (a bare number needs a unit)",
        ),
        (("--rtt", "50"), "--rtt: "),
        (("--rate", "-5M"), "--rate/-b: expected a rate > 0"),
        (("--rtt", "-50ms"), "--rtt: "),
        (("--loss", "-1%"), "--loss: "),
        (("-t", "-3"), "--duration/-t: "),
        (("-t", "0"), "--duration/-t: expected a duration > 0"),
        (("-P", "0"), "--parallel/-P: expected an integer >= 1"),
        (("--loss", "30%%"), "--loss: "),
        (("-t", "10s", "-i", "30s"), "--interval/-i: expected at most the duration"),
        (("--cca", "cubc"), "--cca/-C: unknown congestion control 'cubc'; did you mean cubic?"),
    ],
)
def test_a_bad_value_is_refused_in_one_line_naming_the_flag(capsys, flags, expect):
    err = refused(capsys, *flags)
    assert err.startswith(f"satcc: error: {expect}") and len(err.splitlines()) == 1, err


def test_iperf3_flags_build_the_same_kind_of_scenario(capsys):
    doc = built(
        capsys,
        "-b",
        "20M",
        "-t",
        "10s",
        "-P",
        "2",
        "-R",
        "-C",
        "CUBIC,bbr",
        "-i",
        "0.5s",
        "--loss",
        "1%",
    )
    assert doc["scenario"]["duration"] == "10s" and doc["scenario"]["bin"] == "0.5s"
    (link,) = doc["link"]
    assert link["rate"] == "20 Mbit/s"
    # -R: the server sends, so the loss is on the server->client (ba) direction
    assert (link["loss"], link["loss_ba"]) == ("0", "1%")
    assert [(f["cca"], f["from"], f["count"]) for f in doc["flow"]] == [
        ("cubic", "server", 2),
        ("bbr", "server", 2),
    ]


def test_units_still_work_and_a_zero_loss_needs_none(capsys):
    doc = built(capsys, "--rate", "20Mbit/s", "--rtt", "50ms", "--loss", "0", "--queue", "100pkt")
    assert doc["link"][0]["rate"] == "20Mbit/s" and doc["link"][0]["queue"] == "100pkt"


def test_a_set_override_error_names_the_set_flag(capsys):
    err = refused(capsys, "--set", "link[0].rate=fast")
    assert err.startswith("satcc: error: --set link[0].rate: "), err


def test_try_with_iperf3_flags_runs_parallel_reverse_flows(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["try", "-b", "10M", "-t", "2s", "-P", "2", "-R", "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(f["from"], f["to"]) for f in doc["flows"]] == [("server", "client")] * 2
    assert 5e6 < sum(f["goodput_bps"] for f in doc["flows"]) < 10e6


@pytest.mark.parametrize(("key", "value"), [("rate", "5"), ("rate", '"5"'), ("queue", '"100"')])
def test_a_bare_number_given_with_set_is_refused_as_in_a_scenario_file(
    capsys, tmp_path, key, value
):
    """Before: `--set link[0].rate=5` ran at 5 bit/s and `queue="100"` was 100 bytes."""
    err = refused(capsys, "--rate", "20M", "--set", f"link[0].{key}={value}")
    assert err.startswith(f"satcc: error: --set link[0].{key}: expected a"), err
    assert "a bare number needs a unit" in err
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        '[scenario]\nduration = "1 s"\n[[link]]\na = "s"\nb = "d"\nrate = "10 Mbit/s"\n'
        'delay = "5 ms"\n[[flow]]\nfrom = "s"\nto = "d"\ncca = "reno"\n'
    )
    assert main(["sim", str(scenario), "--set", f"link[0].{key}={value}"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"link[0].{key}: expected a" in err and "a bare number needs a unit" in err, err
