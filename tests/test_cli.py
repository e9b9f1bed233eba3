"""satcc.cli: commands, --help everywhere, exit codes, no tracebacks, plug-in command groups."""

import argparse
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from satcc import __version__, _native, cli
from satcc import scenario as sc
from tests.helpers import MINIMAL


def run(argv, capsys):
    """main(argv) -> (status, stdout, stderr); argparse's SystemExit becomes a status."""
    try:
        status = cli.main(argv)
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def _all_commands(parser: argparse.ArgumentParser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from _all_commands(sub, (*prefix, name))


def test_every_command_has_help_that_exits_0(capsys):
    commands = list(_all_commands(cli.build_parser()))
    for expected in [
        ("check",),
        ("sim",),
        ("plot",),
        ("cc",),
        ("cc", "list"),
        ("cc", "show"),
        ("demo",),
    ]:
        assert expected in commands
    for command in [(), *commands]:
        status, out, _ = run([*command, "--help"], capsys)
        assert status == 0, command
        assert out.startswith("usage: satcc"), command
        assert len(out.splitlines()) > 3, command


def test_version_names_the_package_and_native_versions(capsys):
    status, out, _ = run(["--version"], capsys)
    assert status == 0
    assert out.strip() == f"satcc {__version__} (native {_native.version()})"


def test_python_dash_m_satcc_is_the_satcc_command():
    # an environment whose scripts directory is not on PATH runs `python -m satcc`
    def satcc(*argv):
        cmd = [sys.executable, "-m", "satcc", *argv]
        return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)

    ok, bad = satcc("--version"), satcc("frobnicate")
    assert ok.returncode == 0
    assert ok.stdout.strip() == f"satcc {__version__} (native {_native.version()})"
    assert bad.returncode == 2 and "usage: satcc" in bad.stderr


def test_no_command_prints_help_and_exits_2(capsys):
    status, _, err = run([], capsys)
    assert status == 2 and "usage: satcc" in err


def test_an_unknown_command_or_option_exits_2(capsys):
    assert run(["frobnicate"], capsys)[0] == 2
    assert run(["check", "--nope", "x.toml"], capsys)[0] == 2


def test_check_accepts_a_valid_file(write_toml, capsys):
    path = write_toml(MINIMAL)
    status, out, err = run(["check", str(path)], capsys)
    assert status == 0, err
    assert out.startswith(f"{path}: ok: scenario 'tiny', 2 nodes, 1 links, 1 flow")
    assert "flow 0 (flow0) s→d: reno" in out


def test_check_resolved_prints_the_simulator_config(write_toml, capsys):
    path = write_toml(MINIMAL)
    status, out, _ = run(["check", "--resolved", str(path)], capsys)
    assert status == 0
    assert json.loads(out) == sc.resolve(sc.load(path))


def test_check_rejects_a_bad_file_with_exit_2_and_no_traceback(write_toml, capsys):
    path = write_toml(MINIMAL.replace('rate = "10 Mbit/s"', 'rate = "10 MB"'))
    status, out, err = run(["check", str(path)], capsys)
    assert status == 2
    assert out == ""
    assert f"{path}: link[0].rate: expected a rate" in err and "found '10 MB'" in err
    assert "Traceback" not in err


def test_check_of_a_missing_file_exits_2(tmp_path, capsys):
    status, _, err = run(["check", str(tmp_path / "none.toml")], capsys)
    assert status == 2 and "no such file" in err


def test_cc_list_names_every_registered_algorithm(capsys):
    status, out, _ = run(["cc", "list"], capsys)
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == list(_native.cc_names())
    status, out, _ = run(["cc", "list", "--json"], capsys)
    assert [c["name"] for c in json.loads(out)] == list(_native.cc_names())


def test_cc_show_prints_the_registry_entry(capsys):
    name = _native.cc_names()[0]
    info = _native.cc_info(name)
    status, out, _ = run(["cc", "show", name], capsys)
    assert status == 0
    assert out.startswith(f"{name}: {info['summary']}")
    assert info["source"] in out
    for p in info["params"]:
        assert p["name"] in out
    status, out, _ = run(["cc", "show", name, "--json"], capsys)
    assert json.loads(out) == info


def test_cc_show_of_an_unknown_name_exits_2(capsys):
    status, _, err = run(["cc", "show", "vegas-9000"], capsys)
    assert status == 2 and "found 'vegas-9000'" in err


def test_plot_of_a_missing_result_exits_2(tmp_path, capsys):
    status, _, err = run(["plot", str(tmp_path)], capsys)
    assert status == 2 and "summary.json" in err and "Traceback" not in err


def test_demo_without_its_scenarios_exits_2(tmp_path, capsys):
    status, _, err = run(
        ["demo", "--scenarios", str(tmp_path), "--out", str(tmp_path / "o")], capsys
    )
    assert status == 2 and "demo-starlink-uplink.toml" in err


def test_sim_without_the_simulator_says_how_to_build_it(write_toml, tmp_path, capsys, monkeypatch):
    # A stale native module without run_sim (e.g. built from an older checkout).
    monkeypatch.delattr(_native, "run_sim")
    status, _, err = run(["sim", str(write_toml(MINIMAL)), "--out", str(tmp_path / "o")], capsys)
    assert status == 1 and "make build" in err


def test_sim_rejects_a_bad_file_before_running(write_toml, tmp_path, capsys):
    path = write_toml(MINIMAL.replace('cca = "reno"', 'cca = "nope"'))
    status, _, err = run(["sim", str(path), "--out", str(tmp_path / "o")], capsys)
    assert status == 2 and "flow[0].cca" in err
    assert not (tmp_path / "o").exists()


def test_command_groups_register_themselves(monkeypatch, capsys):
    module = types.ModuleType("satcc_fake_cli")

    def register(subparsers):
        p = subparsers.add_parser("fake", help="a plug-in command")
        p.set_defaults(func=lambda args: 7)

    module.register = register
    monkeypatch.setitem(sys.modules, "satcc_fake_cli", module)
    monkeypatch.setitem(cli.COMMANDS, "fake", ("satcc_fake_cli", "a plug-in command"))
    status, _, err = run(["fake"], capsys)
    assert status == 7 and err == ""


def test_a_command_module_that_fails_to_import_is_not_swallowed(monkeypatch, write_toml):
    # A missing or broken command module is a bug in satcc: it must not turn into a note
    # while the other commands carry on.
    monkeypatch.setitem(cli.COMMANDS, "absent", ("satcc_absent.cli", "a missing module"))
    with pytest.raises(ModuleNotFoundError, match="satcc_absent"):
        cli.main(["absent"])
    with pytest.raises(ModuleNotFoundError, match="satcc_absent"):
        cli.build_parser()  # every command's full parser: what the tests of --help read


def test_help_lists_every_command_from_the_table_without_importing_one():
    probe = (
        "import sys; from satcc import cli; "
        "h = cli.build_parser(['--help']).format_help(); "
        "print(sorted(m for m in sys.modules if m.startswith(('satcc.commands.', "
        "'satcc.models', 'satcc.analyze', 'satcc.scenario', 'pydantic', 'numpy')))); print(h)"
    )
    env = {**os.environ, "COLUMNS": "400"}  # one line per command
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    imported, _, text = done.stdout.partition("\n")
    assert imported == "[]"
    for word, (_, line) in cli.COMMANDS.items():
        assert re.search(rf"^ +{word}\s+{re.escape(line)}$", text, re.MULTILINE), word


def test_each_command_registers_under_its_word_with_the_tables_help():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    assert helps == {word: line for word, (_, line) in cli.COMMANDS.items()}


def test_only_the_named_commands_module_is_imported():
    # What keeps the CLI fast: `satcc --version` imports no command, `satcc check` only
    # check's, and neither pulls the heavy libraries (pandas, pyarrow, matplotlib, duckdb, dask).
    heavy = ("pandas", "pyarrow", "matplotlib", "duckdb", "dask", "satcc.commands.sim")
    probe = (
        "import sys; from satcc import cli; cli.build_parser(sys.argv[1:]); "
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))"
    )
    for argv in (["--version"], ["check", "x.toml"], ["cc", "list"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == "", (argv, done.stdout)
    listed = subprocess.run(
        [sys.executable, "-c", probe, "--help"], capture_output=True, text=True, check=True
    )
    assert listed.stdout.strip() == ""  # --help lists the words from cli.COMMANDS


def test_a_whole_sim_run_writes_its_results_without_importing_pandas(write_toml, tmp_path):
    # pandas costs ~0.3 s to import, more than a 60 s 100 Mbit/s simulation; the DataFrame views
    # import it when asked, the CLI's sim never needs it.
    path = write_toml(
        '[scenario]\nduration = "2 s"\n'
        '[[link]]\na = "s"\nb = "r"\nrate = "10 Mbit/s"\ndelay = "10 ms"\n'
        '[[flow]]\nfrom = "s"\nto = "r"\ncca = "cubic"\n'
    )
    out = tmp_path / "res"
    probe = (
        "import sys; from satcc import cli; status = cli.main(sys.argv[1:]); "
        "print('pandas' in sys.modules, status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "sim", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "False 0", done.stdout + done.stderr
    assert (out / "flows.parquet").exists() and (out / "flow_series.parquet").exists()


def test_the_installed_entry_point_runs():
    exe = Path(sys.executable).parent / "satcc"
    if not exe.exists():
        pytest.skip("no satcc console script next to this interpreter")
    done = subprocess.run(
        [str(exe), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and "usage: satcc" in done.stdout


def test_the_satcc_command_exits_with_mains_status_and_frozen_objects(write_toml, tmp_path):
    # the console script runs cli.entry: fewer collections, objects frozen before shutdown,
    # and the exit status is main()'s (0 ok, 2 bad input)
    probe = (
        "import gc, sys; from satcc import cli; sys.argv = ['satcc', *sys.argv[1:]]\n"
        "try:\n    cli.entry()\nexcept SystemExit as e:\n"
        "    print(e.code, gc.get_freeze_count() > 10000, gc.get_threshold()[0])\n"
    )
    good = write_toml(MINIMAL)
    bad = tmp_path / "bad.toml"
    bad.write_text("[scenario]\nduration = 'ten seconds'\n")
    for path, want in ((good, 0), (bad, 2)):
        done = subprocess.run(
            [sys.executable, "-c", probe, "check", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        last = done.stdout.splitlines()[-1].split()
        assert last == [str(want), "True", str(cli.GC_GEN0_THRESHOLD)], done
