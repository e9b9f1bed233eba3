"""Issue 29's small expectations, each as a user meets it: `satcc query` flags anywhere and an
analyze result's columns in its flows view, `dir(satcc)`, NaN for missing numbers, and help
texts that cite what exists."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

import satcc
from satcc.analyze.synth import Conversation, write_pcap
from satcc.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def analyzed(tmp_path, capsys) -> Path:
    conv = Conversation()
    pkts = [conv.syn(t=0.0), conv.synack(t=0.01), conv.ack(t=0.02)]
    pkts += [conv.data(t=0.02 + 0.01 * k, seq=1 + 1000 * k, n=1000) for k in range(12)]
    pkts += [conv.sack(t=0.2, ack=12_001)]
    write_pcap(tmp_path / "c.pcap", pkts)
    out = tmp_path / "res"
    assert main(["analyze", str(tmp_path / "c.pcap"), "--out", str(out)]) == 0
    capsys.readouterr()
    return out


@pytest.mark.parametrize("where", ["after_dir", "first", "last"])
def test_query_takes_csv_anywhere(analyzed, capsys, where):
    sql = "SELECT id, kind, file, src, dst, sport, dport FROM flows"
    argv = {
        "after_dir": ["query", str(analyzed), "--csv", sql],
        "first": ["query", "--csv", str(analyzed), sql],
        "last": ["query", str(analyzed), sql, "--csv"],
    }[where]
    assert main(argv) == 0
    (row,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert row["kind"] == "capture" and row["file"].endswith("c.pcap")
    assert (row["src"], row["dst"]) == ("192.0.2.1", "198.51.100.2")


def test_querys_flows_view_has_the_columns_of_the_json_summary_and_result_summary(analyzed, capsys):
    summary = json.loads((analyzed / "analyze.json").read_text())["flows"][0]
    scalar = {k for k, v in summary.items() if not isinstance(v, (list, dict))}
    assert main(["query", str(analyzed), "--json", "SELECT * FROM flows"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert scalar <= set(row), scalar - set(row)
    frame = satcc.analyze(str(analyzed.parent / "c.pcap")).summary
    assert scalar <= set(frame.columns)


def test_dir_satcc_lists_the_api():
    assert {"run", "analyze", "Result"} <= set(dir(satcc))


def test_missing_numbers_in_result_summary_are_nan_not_object_none(analyzed):
    frame = satcc.analyze(str(analyzed.parent / "c.pcap"), all_flows=True).summary
    for col in ("goodput_bps", "rtt_mean_ms", "fct_s", "udp_lost", "rto_count"):
        assert frame[col].dtype.kind == "f", (col, frame[col].dtype)
    assert frame["rto_count"].isna().all()


def test_help_texts_cite_what_exists(capsys):
    for argv in (["run", "--help"], ["trace", "export", "--help"], ["query", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        for doc in re.findall(r"(?:docs/)?[\w.-]+\.md", text):
            assert (ROOT / doc).is_file() or (ROOT / "docs" / doc).is_file(), (argv, doc)
        assert 'README\n"Models"' not in text
        # every example's SQL is quoted on both sides
        for line in text.splitlines():
            if line.strip().startswith("satcc query"):
                assert line.count('"') % 2 == 0, line


def test_readme_counts_the_congestion_controls_cc_list_shows():
    from satcc import _native

    n = len(list(_native.cc_names()))
    assert f"{n} congestion controls" in (ROOT / "README.md").read_text()


BAD_SCENARIO = """
[scenario]
name = "bad"
duration = "10"

[[link]]
a = "x"
b = "y"
rate = "fast"
delay = "-5 ms"
loss = 2

[[flow]]
from = "x"
to = "zz"
cca = "cubc"

[[flow]]
from = "x"
to = "y"
mss = "big"
"""


def test_check_reports_every_problem_in_one_pass(tmp_path, capsys):
    # Before: the five key/unit problems, and only after fixing them the unknown node and CCA.
    path = tmp_path / "bad.toml"
    path.write_text(BAD_SCENARIO)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    for key in (
        "scenario.duration",
        "link[0].rate",
        "link[0].delay",
        "link[0].loss",
        "flow[1].mss",
        "flow[0].to",
        "flow[0].cca",
    ):
        assert f"{path}: {key}: expected" in err, key
    assert "required key" not in err  # keys set aside are not reported again as missing
