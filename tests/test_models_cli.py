"""`satcc model ...` via satcc.commands.model.main (the same parser satcc.cli registers)."""

from __future__ import annotations

import argparse
import json

import pytest

from satcc.commands import model as model_cli
from satcc.models import cardwell, cubic, hybla, mathis, pftk, window


def run(capsys, *argv):
    code = model_cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_hybla_json_steady_state_matches_the_library(capsys):
    code, out, _ = run(
        capsys, "hybla", "--rtt", "550ms", "--loss", "0.01%", "--wmax", "550", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["model"] == "hybla"
    assert data["transfer_time_s"] is None
    direct = hybla.steady_state(1e-4, 0.55, wmax_pkts=550, packet_bytes=1000)
    assert data["throughput_bps"] == pytest.approx(direct.throughput_bps, rel=1e-15)
    for key in ("W", "regime", "X", "L", "D", "Y", "A"):
        assert data["intermediate"][key] == direct.intermediate[key]
    assert data["inputs"]["rtt_s"] == pytest.approx(0.55)
    assert data["inputs"]["rho"] == pytest.approx(22.0)


def test_hybla_transfer_with_units_and_several_losses(capsys):
    code, out, _ = run(
        capsys,
        "hybla", "--rtt", "550 ms", "--loss", "0.0001%", "0.1 %", "--wmax", "550 pkt",
        "--packet", "1000B", "--size", "10MB", "--t0", "1s", "--json",
    )  # fmt: skip
    assert code == 0
    records = json.loads(out)
    assert [r["inputs"]["p"] for r in records] == [1e-6, 1e-3]
    for r in records:
        direct = hybla.transfer(r["inputs"]["p"], 0.55, 10**7, wmax_pkts=550)
        assert r["transfer_time_s"] == pytest.approx(direct.transfer_time_s, rel=1e-15)
        assert r["intermediate"]["d"] == 10_000


def test_human_output_names_the_prediction(capsys):
    code, out, _ = run(capsys, "hybla", "--rtt", "550ms", "--loss", "0.01%", "--wmax", "550",
                       "--size", "10MB")  # fmt: skip
    assert code == 0
    assert "hybla" in out and "Mbit/s" in out and "10.00 MB in" in out and "regime" in out


@pytest.mark.parametrize(
    "argv,model,direct",
    [
        (["pftk", "--rtt", "200ms", "--loss", "1%", "--b", "2", "--wmax", "20"], "pftk",
         lambda: pftk.send_rate(0.01, 0.2, b=2, wmax_pkts=20)),
        (["pftk", "--rtt", "200ms", "--loss", "1%", "--approx"], "pftk-approx",
         lambda: pftk.approximate(0.01, 0.2)),
        (["cardwell", "--rtt", "100ms", "--loss", "1%", "--size", "100kB"], "cardwell",
         lambda: cardwell.transfer(0.01, 0.1, 100_000)),
        (["mathis", "--rtt", "100ms", "--loss", "0.01%", "--packet", "1460B"], "mathis",
         lambda: mathis.model(1e-4, 0.1, packet_bytes=1460)),
        (["cubic", "--rtt", "100ms", "--loss", "0.0001%", "--packet", "1500B"], "cubic",
         lambda: cubic.model(1e-6, 0.1, packet_bytes=1500)),
        (["window", "--rtt", "189ms", "--wscale", "14", "--target-rate", "193Mbit/s",
          "--delayed-ack"], "window",
         lambda: window.model(0.189, window_bytes=65535 << 14, target_rate_bps=193e6,
                              rtts_per_mss=2)),
    ],
)  # fmt: skip
def test_every_model_subcommand_prints_json(capsys, argv, model, direct):
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    data = json.loads(out)
    expected = direct()
    assert data["model"] == model
    assert data["throughput_bps"] == pytest.approx(expected.throughput_bps, rel=1e-15)
    assert (data["transfer_time_s"] is None) == (expected.transfer_time_s is None)


def test_invalid_model_inputs_exit_2_with_the_message(capsys):
    code, out, err = run(capsys, "hybla", "--rtt", "550ms", "--loss", "60%", "--wmax", "550")
    assert code == 2 and out == ""
    assert "loss probability p must be in (0, 0.5)" in err
    code, _, err = run(capsys, "pftk", "--rtt", "550ms", "--loss", "0.1%", "--wmax", "3")
    assert code == 2 and "wmax_pkts (W_max) must be >= 4" in err


def test_malformed_units_are_argparse_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        model_cli.main(["hybla", "--rtt", "550", "--loss", "0.01%", "--wmax", "550"])
    assert exc.value.code == 2
    assert "a bare number needs a unit" in capsys.readouterr().err


def test_register_adds_the_model_command_to_a_parent_parser():
    parser = argparse.ArgumentParser(prog="satcc")
    model_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["model", "mathis", "--rtt", "10ms", "--loss", "0.1%"])
    assert args.func is model_cli.run_mathis and args.rtt == pytest.approx(0.01)
