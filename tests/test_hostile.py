"""Hostile input against every command: exit status 2, one line on stderr, no
traceback, no quoted secret, nothing written outside --out, and no hang.

The corpus is tests/hostile/ (README.md there says what each file is); directories and special
files (FIFOs, deep JSON stores) are built here. Commands run in-process through
`satcc.cli.main` under an alarm, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest

from satcc import cli

CORPUS = Path(__file__).parent / "hostile"
SECRET = "SECRET-HASH-DO-NOT-PRINT"
TIMEOUT_S = 30

# Scenario files that every scenario command must refuse.
REFUSED_EVERYWHERE = sorted(
    p.name
    for p in CORPUS.glob("*.toml")
    if p.name
    not in {
        "bins-memory.toml",  # valid; refused by sim/run/model (memory), accepted by check
    }
)
SCENARIO_COMMANDS = {
    "check": lambda f, out: ["check", f],
    "sim": lambda f, out: ["sim", f, "--out", out],
    "run": lambda f, out: ["run", f, "--out", out],
    "model": lambda f, out: ["model", f, "--out", out],
    "trace-export": lambda f, out: ["trace", "export", f, "--out", out],
}


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: int):
    def on_alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def refuse(argv: list[str], workdir: Path, capsys, monkeypatch) -> str:
    """Run `satcc ARGV` in `workdir`; check the refusal; return the stderr line."""
    monkeypatch.chdir(workdir)
    before = listing(workdir)
    corpus_before = listing(CORPUS)
    capsys.readouterr()
    with deadline(TIMEOUT_S):
        code = cli.main(argv)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert code == 2, (argv, code, err)
    assert len(lines) == 1 and lines[0].startswith("satcc: error: "), (argv, err)
    assert "Traceback" not in err and SECRET not in err
    assert listing(workdir) == before, f"{argv} wrote {listing(workdir) - before}"
    assert listing(CORPUS) == corpus_before
    return lines[0]


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    """A scratch directory holding a copy of the corpus (traces are named relative to it)."""
    d = tmp_path / "work"
    d.mkdir()
    for p in CORPUS.iterdir():
        (d / p.name).write_bytes(p.read_bytes())
    return d


@pytest.mark.parametrize("command", sorted(SCENARIO_COMMANDS))
@pytest.mark.parametrize("name", REFUSED_EVERYWHERE)
def test_every_scenario_command_refuses_each_hostile_scenario_in_one_line(
    name, command, work, capsys, monkeypatch
):
    refuse(SCENARIO_COMMANDS[command](name, "out"), work, capsys, monkeypatch)


@pytest.mark.parametrize("command", ["sim", "run", "model"])
def test_a_run_too_big_for_memory_is_refused_before_it_starts(command, work, capsys, monkeypatch):
    line = refuse(SCENARIO_COMMANDS[command]("bins-memory.toml", "out"), work, capsys, monkeypatch)
    assert "fits in memory" in line and "--force" in line


def test_a_run_estimated_at_years_is_refused_with_its_estimate(work, capsys, monkeypatch):
    """Duration "1e9 s" was once accepted with no estimate and a bar stuck at 0 %."""
    (work / "long.toml").write_text(
        (CORPUS / "rate-1e30.toml")
        .read_text()
        .replace('duration = "2 s"', 'duration = "7000 h"\nbin = "1 h"')
        .replace('"1e30 bit/s"', '"10 Gbit/s"')
    )
    line = refuse(["sim", "long.toml", "--out", "out"], work, capsys, monkeypatch)
    assert "estimated at" in line and "simulated packets" in line and "--force" in line


@pytest.mark.parametrize("name", ["fifo", "/dev/zero", "/dev/urandom", "."])
def test_a_scenario_path_that_is_not_a_regular_file_is_refused(name, work, capsys, monkeypatch):
    if name == "fifo":
        os.mkfifo(work / "fifo")  # a reader would block forever
    line = refuse(["check", name], work, capsys, monkeypatch)
    assert "found a" in line


def test_a_fifo_as_a_trace_is_refused(work, capsys, monkeypatch):
    os.mkfifo(work / "trace.fifo")
    (work / "fifo.toml").write_text(
        (CORPUS / "trace-dev-zero.toml").read_text().replace("/dev/zero", "trace.fifo")
    )
    assert "FIFO" in refuse(["sim", "fifo.toml", "--out", "out"], work, capsys, monkeypatch)


BUDGET_BYTES = 100_000_000  # what the process may still use, in these tests


@pytest.mark.parametrize("command", ["check", "sim"])
@pytest.mark.parametrize("kind", ["mahimahi", "delay_csv"])
def test_a_trace_too_big_for_memory_is_refused_before_it_is_parsed(
    kind, command, work, capsys, monkeypatch
):
    """2-byte trace lines cost 8 B each once parsed and 4-byte CSV rows 24 B (256 MiB of them:
    1.07 and 1.6 GB). The lines are counted first and refused against what the process may
    still use before one is kept: the bad last line is never reached (before, the file was
    parsed up to it, and a good one whole, before any budget was looked at)."""
    from satcc import limits

    monkeypatch.setattr(limits, "available_memory_bytes", lambda: BUDGET_BYTES)
    if kind == "mahimahi":
        line, each, base = b"1\n", 8, "trace-secret.toml"
    else:
        line, each, base = b"0,1\n", 24, "delay-csv-secret.toml"
    (work / "big.txt").write_bytes(line * (BUDGET_BYTES // each + 1) + b"x\n")
    (work / "big.toml").write_text((CORPUS / base).read_text().replace("secret.txt", "big.txt"))
    argv = ["check", "big.toml"] if command == "check" else ["sim", "big.toml", "--out", "out"]
    line_out = refuse(argv, work, capsys, monkeypatch)
    assert f"{kind}: " in line_out and "fits in memory" in line_out, line_out
    assert "line " not in line_out, line_out


def _campaign(work: Path, scenario: str) -> str:
    (work / "c.toml").write_text(
        f'[campaign]\nname = "c"\nscenario = "{scenario}"\n[matrix]\n"flow[0].cca" = ["reno"]\n'
    )
    return "c.toml"


@pytest.mark.parametrize("name", REFUSED_EVERYWHERE)
def test_a_campaign_over_each_hostile_scenario_is_refused(name, work, capsys, monkeypatch):
    refuse(["campaign", _campaign(work, name), "--out", "camp"], work, capsys, monkeypatch)


@pytest.mark.parametrize(
    "name", ["deep-nesting.toml", "dotted-key.toml", "not-utf8.toml", "not-toml.toml"]
)
def test_a_hostile_campaign_file_is_refused(name, work, capsys, monkeypatch):
    refuse(["campaign", name, "--out", "camp"], work, capsys, monkeypatch)


def test_a_million_point_matrix_is_refused_at_once_without_force(work, capsys, monkeypatch):
    values = ", ".join(f'"{k} B"' for k in range(1000, 2000))
    (work / "big.toml").write_text(
        '[campaign]\nname = "big"\nscenario = "base.toml"\n[matrix]\n'
        f'"flow[0].size" = [{values}]\n"link[0].delay" = [{", ".join(f"{chr(34)}{k} ms{chr(34)}" for k in range(1, 1001))}]\n'
    )
    (work / "base.toml").write_text(
        (CORPUS / "bins-memory.toml")
        .read_text()
        .replace('bin = "100 us"', "")
        .replace("count = 100", "")
    )
    line = refuse(["campaign", "big.toml", "--out", "camp"], work, capsys, monkeypatch)
    assert "1,000,000" in line and "--force" in line


# -- --out below a regular file ----------------------------------------------------------------


def _store(work: Path) -> Path:
    """A small finished campaign directory to point report/query/plot at."""
    (work / "base.toml").write_text(
        (CORPUS / "bins-memory.toml")
        .read_text()
        .replace('duration = "1000 s"', 'duration = "1 s"')
        .replace('bin = "100 us"', "")
        .replace("count = 100", "")
    )
    (work / "c.toml").write_text('[campaign]\nname = "c"\nscenario = "base.toml"\n')
    assert (
        cli.main(["campaign", str(work / "c.toml"), "--out", str(work / "store"), "--no-progress"])
        == 0
    )
    return work / "store"


@pytest.mark.parametrize(
    "argv",
    [
        ["sim", "ok.toml", "--out", "afile/sub"],
        ["run", "ok.toml", "--out", "afile/sub"],
        ["model", "ok.toml", "--out", "afile/sub"],
        ["trace", "export", "ok.toml", "--out", "afile/sub"],
        ["campaign", "c.toml", "--out", "afile/sub"],
        ["analyze", "missing.json", "--out", "afile/sub"],
        ["report", "store", "--out", "afile/sub"],
    ],
)
def test_out_below_a_regular_file_is_one_line_before_any_work(argv, work, capsys, monkeypatch):
    store = _store(work)
    (work / "ok.toml").write_text((work / "base.toml").read_text())
    (work / "afile").write_text("not a directory\n")
    assert store.is_dir()
    line = refuse(argv, work, capsys, monkeypatch)
    assert "regular file" in line


# -- a store or result with deep or foreign JSON -----------------------------------------------


def _deep(n: int = 100_000) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "store", "SELECT 1"],
        ["report", "store"],
        ["campaign", "status", "store"],
        ["campaign", "c.toml", "--out", "store"],
    ],
)
def test_a_deeply_nested_campaign_index_is_one_line(argv, work, capsys, monkeypatch):
    store = _store(work)
    (store / "campaign.json").write_text(_deep())
    refuse(argv, work, capsys, monkeypatch)


def test_a_result_with_a_deeply_nested_summary_is_one_line(work, capsys, monkeypatch):
    store = _store(work)
    run = next((store / "runs").iterdir())
    (run / "summary.json").write_text(
        json.dumps({"schema_version": 1, "x": 0})[:-1] + ', "deep": ' + _deep() + "}"
    )
    refuse(["plot", str(run)], work, capsys, monkeypatch)


# -- the store is read-only --------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "COPY (SELECT 1) TO '{victim}'",
        "COPY flows TO '{store}/runs/x.csv'",
        "SELECT * FROM read_text('{secret}')",
        "SELECT * FROM read_csv('{secret}')",
        "ATTACH '{work}/new.duckdb' AS x",
        "SET enable_external_access = true",
        "INSTALL httpfs",
        "SELECT 1; COPY (SELECT 1) TO '{victim}'",
        "SELECT * FROM query('COPY (SELECT 1) TO ''{victim}''')",
    ],
)
def test_query_cannot_write_read_or_attach_files(sql, work, capsys, monkeypatch):
    store = _store(work)
    victim = work / "victim.csv"
    sql = sql.format(victim=victim, store=store, secret=work / "secret.txt", work=work)
    before = listing(store)
    refuse(["query", "store", sql], work, capsys, monkeypatch)
    assert not victim.exists() and listing(store) == before


def test_query_still_reads_the_store(work, capsys, monkeypatch):
    _store(work)
    monkeypatch.chdir(work)
    capsys.readouterr()
    assert cli.main(["query", "store", "SELECT count(*) AS n FROM flow_series", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["n"] > 0


# -- field data: iperf3 JSON and ping logs (built here; their parsers are in satcc.analyze) ------

_IPERF3 = {
    "start": {
        "connected": [
            {
                "socket": 5,
                "local_host": "10.0.0.1",
                "local_port": 40000,
                "remote_host": "10.0.0.2",
                "remote_port": 5201,
            }
        ],
        "test_start": {"protocol": "TCP", "num_streams": 1},
    },
    "intervals": [
        {
            "streams": [
                {
                    "socket": 5,
                    "start": 0,
                    "end": 1,
                    "seconds": 1,
                    "bytes": 1000,
                    "bits_per_second": 8000,
                }
            ],
            "sum": {"start": 0, "end": 1, "seconds": 1, "bytes": 1000, "bits_per_second": 8000},
        }
    ],
    "end": {},
}


def _iperf3_case(name: str) -> str:
    doc = json.loads(json.dumps(_IPERF3))
    if name == "connected-null":
        doc["start"]["connected"] = None
    elif name == "intervals-string":
        doc["intervals"] = "x"
    elif name == "intervals-missing":
        del doc["intervals"]
    elif name == "error":
        doc = {"error": "unable to connect to server: Connection refused"}
    text = json.dumps(doc)
    if name == "bytes-400-digits":
        text = text.replace('"bytes": 1000', '"bytes": ' + "9" * 400, 1)
    elif name == "bytes-nan":
        text = text.replace('"bytes": 1000', '"bytes": NaN', 1)
    elif name == "bytes-negative":
        text = text.replace('"bytes": 1000', '"bytes": -5', 1)
    elif name == "nested-100000":
        text = "[" * 100_000 + "]" * 100_000
    return text


@pytest.mark.parametrize(
    "name",
    [
        "connected-null",
        "intervals-string",
        "intervals-missing",
        "error",
        "bytes-400-digits",
        "bytes-nan",
        "bytes-negative",
        "nested-100000",
    ],
)
def test_a_hostile_iperf3_report_is_refused_in_one_line(name, work, capsys, monkeypatch):
    (work / f"{name}.json").write_text(_iperf3_case(name))
    line = refuse(["analyze", f"{name}.json", "--out", "out"], work, capsys, monkeypatch)
    assert f"{name}.json" in line


# What a terminal would obey (OSC title, clear screen, CSI as one C1 byte, bidi override, CR):
# text from an input file must reach a pipe or a log escaped, as it reaches a terminal.
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


@pytest.mark.parametrize("flags", [[], ["--out", "out"], ["--json"]])
def test_terminal_escapes_in_iperf3_host_fields_reach_a_pipe_escaped(
    flags, work, capsys, monkeypatch
):
    """tests/hostile/iperf3-escapes.json: host fields holding an OSC title, a clear-screen, a C1
    CSI and a bidi override. Output that is not a terminal (capsys) carries none of them raw."""
    monkeypatch.chdir(work)
    with deadline(TIMEOUT_S):
        code = cli.main(["analyze", "iperf3-escapes.json", *flags])
    out = capsys.readouterr()
    assert code == 0, out.err
    printed = out.out + out.err
    assert not [c for c in RAW_CONTROLS if c in printed], printed
    if not flags:  # the table shows the host, escaped
        assert "\\x1b]0;owned" in out.out and "\\u202e10.0.0.2" in out.out


def test_terminal_escapes_from_a_stored_iperf3_report_reach_a_pipe_escaped(
    work, capsys, monkeypatch
):
    """The store keeps the text as read (nothing lost); every way `query` prints it escapes it."""
    monkeypatch.chdir(work)
    assert cli.main(["analyze", "iperf3-escapes.json", "--out", "out"]) == 0
    capsys.readouterr()
    for flags in ([], ["--json"], ["--csv"]):
        with deadline(TIMEOUT_S):
            code = cli.main(["query", "out", "SELECT src, dst FROM flows", *flags])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert not [c for c in RAW_CONTROLS if c in out.out + out.err], (flags, out.out)
    # JSON escapes them as JSON does: a reader gets the text back whole
    assert cli.main(["query", "out", "SELECT src, dst FROM flows", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    hosts = {rows[0]["src"], rows[0]["dst"]}
    assert hosts == {"\x1b]0;owned\x07\x1b[2J10.0.0.1", "\u202e10.0.0.2\x9b31m\r"}, rows


def test_a_ping_log_with_one_huge_line_is_answered_at_once(work, capsys, monkeypatch):
    (work / "ping.txt").write_text(
        "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.1 ms" + " x" * 50_000 + "\n"
    )
    refuse(["analyze", "ping.txt", "--out", "out"], work, capsys, monkeypatch)


def test_a_ping_sequence_number_beyond_32_bits_is_skipped_not_allocated(work, capsys, monkeypatch):
    (work / "ping.txt").write_text(
        "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.1 ms\n"
        "64 bytes from 10.0.0.2: icmp_seq=99999999999999999999999 ttl=64 time=0.1 ms\n"
    )
    monkeypatch.chdir(work)
    with deadline(TIMEOUT_S):
        code = cli.main(["analyze", "ping.txt", "--out", "out"])
    err = capsys.readouterr().err
    assert code == 0 and "icmp_seq above" in err and "Traceback" not in err


def test_a_scenario_file_over_the_size_cap_is_refused_before_it_is_parsed(
    work, capsys, monkeypatch
):
    from satcc.limits import MAX_SCENARIO_BYTES

    text = (CORPUS / "rate-1e30.toml").read_text().replace('"1e30 bit/s"', '"10 Mbit/s"')
    (work / "big.toml").write_text("#" * (MAX_SCENARIO_BYTES + 1) + "\n" + text)
    line = refuse(["check", "big.toml"], work, capsys, monkeypatch)
    assert "big.toml" in line


def test_plot_out_below_a_regular_file_is_refused_before_drawing(work, capsys, monkeypatch):
    (work / "ok.toml").write_text(
        (CORPUS / "bins-memory.toml")
        .read_text()
        .replace('duration = "1000 s"', 'duration = "1 s"')
        .replace('bin = "100 us"', "")
        .replace("count = 100", "")
    )
    assert cli.main(["sim", str(work / "ok.toml"), "--out", str(work / "res")]) == 0
    (work / "afile").write_text("not a directory\n")
    line = refuse(["plot", "res", "--out", "afile/x.png"], work, capsys, monkeypatch)
    assert "regular file" in line
