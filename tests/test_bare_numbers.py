"""One rule for bare numbers wherever a value enters (issue 44 item 3): a scenario file,
`--set`, a campaign's matrix, a Python keyword and a command-line flag read a value with the same
grammar (satcc-core units.rs). Before, `--set 'link[0].loss="0.1"'`, a matrix `["0.1"]` and
`{"link[0].loss": "1"}` were silently 10 % and 100 % while `try --loss 0.3` was refused, and
`try -t 10` was 10 s while `field --duration 15` was refused."""

import pytest

from satcc import api
from satcc.cli import main
from satcc.errors import UserError
from satcc.scenario import ScenarioError, load
from satcc.units import parse_rate
from tests.helpers import MINIMAL

AMBIGUOUS = "a bare number in text is ambiguous"
NEEDS_UNIT = "a bare number needs a unit"


def _err(capsys, argv: list[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own exit for a flag's type
        code = e.code
    assert code == 2
    return capsys.readouterr().err


def test_toml_text_loss_needs_a_percent_sign_and_a_toml_number_is_a_fraction(write_toml):
    with pytest.raises(ScenarioError, match=rf"link\[0\]\.loss: .*found '0.1' \({AMBIGUOUS}"):
        load(write_toml(MINIMAL.replace('delay = "10 ms"', 'delay = "10 ms"\nloss = "0.1"')))
    s = load(write_toml(MINIMAL.replace('delay = "10 ms"', 'delay = "10 ms"\nloss = 0.001')))
    assert s.links[0].loss == 0.001
    s = load(write_toml(MINIMAL.replace('delay = "10 ms"', 'delay = "10 ms"\nloss = "0.1 %"')))
    assert s.links[0].loss == 0.001


def test_set_on_the_command_line_refuses_a_quoted_bare_loss(capsys, write_toml):
    path = write_toml(MINIMAL)
    err = _err(capsys, ["check", str(path), "--set", 'link[0].loss="0.1"'])
    assert "link[0].loss" in err and AMBIGUOUS in err
    err = _err(capsys, ["check", str(path), "--set", 'scenario.duration="10"'])
    assert "scenario.duration" in err and NEEDS_UNIT in err


def test_python_keywords_refuse_a_bare_loss_string(write_toml):
    path = write_toml(MINIMAL)
    with pytest.raises(UserError, match=AMBIGUOUS):
        api.load_scenario(path, {"link[0].loss": "1"})
    with pytest.raises(UserError, match=AMBIGUOUS):
        api.load_scenario({**_doc(), "link": [{**_doc()["link"][0], "loss": "0.5"}]})
    assert api.load_scenario(path, {"link[0].loss": 0.01}).links[0].loss == 0.01


def _doc() -> dict:
    import tomllib

    return tomllib.loads(MINIMAL)


def test_a_campaign_matrix_value_is_read_by_the_same_rule(tmp_path, write_toml):
    from satcc.campaign.spec import expand
    from satcc.campaign.spec import load as load_campaign

    write_toml(MINIMAL, name="base.toml")
    for value, why in (('"0.1"', AMBIGUOUS), ('"0.1 %"', None)):
        c = tmp_path / "c.toml"
        c.write_text(
            '[campaign]\nname = "c"\nscenario = "base.toml"\n'
            f'[matrix]\n"link[0].loss" = [{value}]\n',
            encoding="utf-8",
        )
        if why is None:
            assert len(expand(load_campaign(c), progress=False)) == 1
        else:
            with pytest.raises(UserError, match=why):
                expand(load_campaign(c), progress=False)


@pytest.mark.parametrize(
    "argv,why",
    [
        (["try", "--loss", "0.3", "--print"], AMBIGUOUS),
        (["try", "-t", "10", "--print"], NEEDS_UNIT),
        (["try", "--duration", "10", "--print"], NEEDS_UNIT),
        (["try", "--rtt", "50", "--print"], NEEDS_UNIT),
        (["model", "mathis", "--rtt", "100ms", "--loss", "0.01"], AMBIGUOUS),
        (["field", "--server", "h", "--duration", "15", "--print"], NEEDS_UNIT),
    ],
)
def test_every_flag_refuses_a_bare_loss_or_duration_the_same_way(capsys, argv, why):
    assert why in _err(capsys, argv)


def test_the_same_unit_spellings_everywhere(capsys):
    for text in ("20 Mbit/s", "20MBit/s", "20 mbps", "20Mbps", "20 MBIT/S"):
        assert parse_rate(text) == 20_000_000, text
    assert main(["try", "-b", "20MBit/s", "--rtt", "50MS", "-t", "10S", "--print"]) == 0
    printed = capsys.readouterr().out
    assert "20MBit/s" in printed
