"""Hostile limits, one test per class an audit of hostile input found (each failed before its fix): names, results that
must not be lost, BOM, terminal escapes, internal errors, campaign locking and leftovers,
out-of-memory in the simulator."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from satcc import cli, limits, results
from satcc import scenario as sc
from satcc.commands.output import SAFE_NAME_CHARS, safe_name
from satcc.store import layout
from tests.campaign_helpers import holding_lock
from tests.helpers import MINIMAL, requires_sim

SATCC = [sys.executable, "-m", "satcc.cli"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- names and writing -------------------------------------------------------------------------


def test_a_long_unicode_name_makes_a_short_directory_name_with_its_hash():
    name = "é" * 190 + "/../x"
    out = safe_name(name)
    assert len(out) <= SAFE_NAME_CHARS and "/" not in out and not out.startswith(".")
    assert out != safe_name("é" * 190 + "/../y")  # the hash keeps long names apart


@requires_sim
def test_a_200_character_name_runs_and_writes_to_the_default_directory(
    tmp_path, monkeypatch, capsys
):
    """Before: a 5,000-character name failed with OSError after the simulation ran."""
    name = "n" * limits.MAX_NAME_CHARS
    f = _write(tmp_path / "s.toml", MINIMAL.replace('name = "tiny"', f'name = "{name}"'))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["sim", str(f)]) == 0
    assert (tmp_path / "out" / safe_name(name) / results.SUMMARY_FILE).is_file()


@requires_sim
def test_a_result_that_cannot_be_written_where_asked_is_written_elsewhere(
    tmp_path, monkeypatch, capsys
):
    f = _write(tmp_path / "s.toml", MINIMAL)
    real_write = results.RunResult.write

    def failing_write(self, out_dir):
        if Path(out_dir).name == "here":
            raise OSError(28, "No space left on device")
        return real_write(self, out_dir)

    monkeypatch.setattr(results.RunResult, "write", failing_write)
    assert cli.main(["sim", str(f), "--out", str(tmp_path / "here")]) == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and "they are in" in err
    rescued = Path(err.rsplit("they are in ", 1)[1].strip())
    assert (rescued / results.SUMMARY_FILE).is_file()
    results.load(rescued)
    import shutil

    shutil.rmtree(rescued.parent)


@requires_sim
def test_a_killed_writers_temporary_directory_is_removed_by_the_next_write(tmp_path):
    s = sc.loads(MINIMAL)
    from satcc.engines import sim

    result = sim.run(s)
    dead = tmp_path / ".res.tmp-999999999-abc"  # no such pid
    dead.mkdir()
    (dead / "flows.parquet").write_bytes(b"partial")
    live = tmp_path / f".res.tmp-{os.getpid()}-abc"  # a writer that is still running
    live.mkdir()
    result.write(tmp_path / "res")
    assert not dead.exists() and live.exists()


def test_a_utf8_bom_is_accepted(tmp_path):
    f = tmp_path / "bom.toml"
    f.write_bytes(b"\xef\xbb\xbf" + MINIMAL.encode())
    assert sc.load(f).name == "tiny"


# -- terminal output -------------------------------------------------------------------------


EVIL = "x\x1b]0;pwned\x07\x1b[2J\u202e"


@requires_sim
@pytest.mark.parametrize("command", ["check", "sim"])
def test_names_with_terminal_escapes_are_printed_escaped(command, tmp_path, monkeypatch, capsys):
    text = MINIMAL.replace('name = "tiny"', 'name = "x\\u001b]0;pwned\\u0007\\u001b[2J\\u202e"')
    text = text.replace('cca = "reno"', 'cca = "reno"\nname = "f\\u001b[31m"')
    f = _write(tmp_path / "s.toml", text)
    monkeypatch.chdir(tmp_path)
    argv = [command, str(f)] + (["--out", str(tmp_path / "o")] if command == "sim" else [])
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\x1b" not in err
    assert "\\x1b" in out


def test_printable_keeps_text_newlines_and_tabs():
    assert limits.printable("a\tb\nc é ✓") == "a\tb\nc é ✓"
    assert limits.printable("\x1b[31m\x9b\r") == "\\x1b[31m\\x9b\\x0d"


def test_printable_escapes_exactly_the_control_characters_of_every_code_point():
    # the set as a regular expression's class (what `printable` was before its translate
    # tables), over all of Unicode: nothing more or less is escaped, in either form
    control = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
    text = "".join(map(chr, range(0x110000)))

    def escaped(m: re.Match[str]) -> str:
        c = ord(m.group())
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"

    assert limits.printable(text) == control.sub(escaped, text)
    assert limits.json_printable(text) == control.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# -- internal errors ----------------------------------------------------------------------------


def _boom(args):
    raise RuntimeError("first line\nsecond line")


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_is_one_line_and_the_traceback_only_under_debug(
    debug, monkeypatch, capsys
):
    from satcc.commands import check

    monkeypatch.setattr(check, "run", _boom)
    argv = (["--debug"] if debug else []) + ["check", "x.toml"]
    assert cli.main(argv) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "internal error" in err and "RuntimeError: first line" in err
    assert ("Traceback" in err) is debug
    if not debug:
        assert len(err.splitlines()) == 1 and "--debug" in err


# -- campaigns -----------------------------------------------------------------------------------


def _campaign(tmp_path: Path) -> Path:
    _write(tmp_path / "base.toml", MINIMAL)
    return _write(
        tmp_path / "c.toml",
        '[campaign]\nname = "c"\nscenario = "base.toml"\n[matrix]\n"flow[0].mss" = [1000, 1448]\n',
    )


def test_a_second_campaign_on_the_same_directory_is_refused_with_the_first_ones_pid(tmp_path):
    out = tmp_path / "camp"
    out.mkdir()
    with holding_lock(out, seconds=60) as holder:
        p = subprocess.run(
            [*SATCC, "campaign", str(_campaign(tmp_path)), "--out", str(out), "--no-progress"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert p.returncode == 2, p.stderr
        assert p.stderr.strip() == (
            f"satcc: error: {out}: another satcc campaign (pid "
            f"{holder.pid}) is writing to this directory; wait for it "
            "to finish or choose another --out"
        )
        assert layout.is_locked(out)
    assert not layout.is_locked(out)  # the kernel released it with the process


@requires_sim
def test_stale_temporaries_of_a_killed_campaign_are_removed_on_the_next_run(tmp_path, capsys):
    c = _campaign(tmp_path)
    out = tmp_path / "camp"
    assert cli.main(["campaign", str(c), "--out", str(out), "--no-progress"]) == 0
    run = next((out / "runs").iterdir()).name
    (out / ".campaign.json.tmp-abc").write_text("{")  # a killed atomic_write_text
    for d in (out / "runs" / ".0123.staging", out / "runs" / f".{run}.tmp-999999999-x"):
        d.mkdir()
    leftovers = [
        out / ".campaign.json.tmp-abc",
        out / "runs" / ".0123.staging",
        out / "runs" / f".{run}.tmp-999999999-x",
    ]
    assert cli.main(["campaign", str(c), "--out", str(out), "--no-progress"]) == 0
    assert not any(p.exists() for p in leftovers)
    assert not layout.scan(out).problems


# -- the simulator under a memory limit ----------------------------------------------------------


@requires_sim
def test_running_out_of_memory_in_the_simulator_is_an_error_not_a_hang(tmp_path):
    """Before: under a memory limit, pyo3's list conversion panicked, the panic's backtrace
    failed to allocate and the process hung for good (with RUST_BACKTRACE=1)."""
    f = _write(
        tmp_path / "big.toml",
        MINIMAL.replace('duration = "2 s"', 'duration = "200 s"\nbin = "100 us"').replace(
            'rate = "10 Mbit/s"', 'rate = "100 kbit/s"'
        ),
    )
    limit = 1_400_000_000  # the Rust series fit; the Python lists of 2 M bins do not

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.monotonic()
    p = subprocess.run(
        [*SATCC, "sim", str(f), "--out", str(tmp_path / "o"), "--force"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap,
        env={**os.environ, "RUST_BACKTRACE": "1"},
        check=False,
    )
    assert p.returncode == 1, p.stderr
    lines = [x for x in p.stderr.splitlines() if not x.startswith("satcc: estimate")]
    assert len(lines) == 1 and "out of memory" in lines[0], p.stderr
    assert time.monotonic() - started < 100
    assert not (tmp_path / "o").exists()


def _json_depth_char_by_char(text: str) -> int:
    """satcc.limits.json_depth as it was written first: one character at a time."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def test_json_depth_is_the_char_by_char_count_for_any_text():
    """The regular-expression json_depth (strings and non-brackets dropped first) against the
    character loop it replaced: the same depth for valid JSON and for any text at all
    (unterminated strings, a lone backslash at the end, brackets inside strings)."""
    import random

    rng = random.Random(43)
    texts = ['{"a": ["]", "\\"[", {"b": [1, 2]}]}', '"[[[', '"\\', '[["\\\\"]]', "{[]}]]"]
    texts += [
        "".join(rng.choice('[]{}"\\a\n') for _ in range(rng.randrange(24))) for _ in range(20000)
    ]
    for text in texts:
        assert limits.json_depth(text) == _json_depth_char_by_char(text), repr(text)
