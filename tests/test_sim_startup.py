"""What `satcc sim` imports: the result writer (satcc.results, in a thread beside the run:
satcc.commands.output.prefetch), never rich (~100 M instructions): its per-flow table is laid
out natively (satcc.textgrid)."""

import json
import subprocess
import sys

SCENARIO = (
    '[scenario]\nduration = "1 s"\n'
    '[[link]]\na = "s"\nb = "r"\nrate = "10 Mbit/s"\ndelay = "10 ms"\n'
    '[[flow]]\nfrom = "s"\nto = "r"\ncca = "cubic"\n'
)
# after the command, every other thread (the prefetch) finished, then: was rich imported?
PROBE = (
    "import sys, threading; from satcc import cli; status = cli.main(sys.argv[1:]); "
    "[t.join() for t in threading.enumerate() if t is not threading.main_thread()]; "
    "print('rich' in sys.modules, 'satcc.results' in sys.modules, status)"
)


def _sim(path, out, *flags) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "sim", str(path), "--out", str(out), *flags],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_a_json_run_does_not_import_the_table_printer(write_toml, tmp_path):
    lines = _sim(write_toml(SCENARIO), tmp_path / "res", "--json")
    assert lines[-1] == "False True 0", lines
    assert json.loads("\n".join(lines[:-1]))["flows"][0]["cca"] == "cubic"


def test_a_table_run_does_not_import_it_either(write_toml, tmp_path):
    lines = _sim(write_toml(SCENARIO), tmp_path / "res")
    assert lines[-1] == "False True 0", lines
    assert lines[1].split()[:4] == ["id", "name", "path", "cca"]  # the table
    assert "cubic" in lines[2]
