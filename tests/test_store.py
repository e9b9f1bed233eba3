"""The DuckDB results store: views with the matrix parameters, corrupt and foreign files
reported and left out, schema versions, `satcc query`."""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest

from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
from satcc.campaign.summary import status
from satcc.cli import main
from satcc.store import STORE_SCHEMA_VERSION, StoreError, layout, open_store, query
from tests.campaign_helpers import write_campaign
from tests.helpers import requires_sim

pytestmark = requires_sim


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("store")
    c = spec.load(write_campaign(tmp))
    run_campaign(c, tmp / "out", jobs=2, progress=False)
    return tmp / "out"


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    (dst / layout.CATALOG_FILE).unlink(missing_ok=True)
    return dst


def test_views_carry_the_matrix_parameters_as_columns(done):
    with open_store(done) as s:
        runs = s.runs()
        assert len(runs) == 8 and set(runs["status"]) == {"done"}
        assert {"cca", "link1_delay", "link1_delay_ms", "jain_index", "scenario_hash"} <= set(runs)
        flows = s.flows()
        assert len(flows) == 16
        # `cca` is both an axis and a flows column: the axis is param_cca there, and agrees
        assert (flows["param_cca"] == flows["cca"]).all()
        assert sorted(flows["link1_delay_ms"].unique()) == [5.0, 20.0]
        # each row's parameter is the one its run had: link 1's delay in the link series
        pairs = s.query(
            "SELECT DISTINCT link1_delay_ms, delay_ms FROM link_series WHERE link_id = 1 ORDER BY 1"
        )
        assert pairs.values.tolist() == [[5.0, 5.0], [20.0, 20.0]]
        n_series = s.query("SELECT count(*) AS n FROM flow_series")["n"][0]
        assert n_series == 8 * 2 * 20  # runs x flows x (2 s / 100 ms)
        assert s.query("SELECT count(*) AS n FROM link_series")["n"][0] == 8 * 3 * 2 * 20
        assert s.problems == []


def test_python_api_query_and_saved_catalog_for_other_tools(done):
    frame = query(done, "SELECT cca, count(*) AS n FROM runs GROUP BY cca ORDER BY cca")
    assert frame.to_dict("list") == {"cca": ["cubic", "reno"], "n": [4, 4]}
    con = duckdb.connect(str(done / layout.CATALOG_FILE), read_only=True)
    try:
        n = con.execute("SELECT count(*) FROM flows").fetchone()[0]
        version = con.execute(
            "SELECT value FROM catalog_info WHERE key = 'store_schema_version'"
        ).fetchone()[0]
    finally:
        con.close()
    assert n == 16 and int(version) == STORE_SCHEMA_VERSION


def test_the_catalog_is_built_once_and_copied_to_the_saved_file(done, tmp_path, monkeypatch):
    # building reads every Parquet file's footer: the saved catalog.duckdb is a copy of the
    # one built in memory, not a second build
    from satcc.store import catalog

    d = _copy(done, tmp_path / "once")
    built = []
    real = catalog._build
    monkeypatch.setattr(catalog, "_build", lambda *a: built.append(1) or real(*a))
    with open_store(d) as s:
        flows = s.query("SELECT run_id, id, goodput_bps FROM flows ORDER BY run_id, id")
    assert len(built) == 1
    con = duckdb.connect(str(d / layout.CATALOG_FILE), read_only=True)
    try:
        saved = con.execute("SELECT run_id, id, goodput_bps FROM flows ORDER BY run_id, id").df()
        n = con.execute("SELECT count(*) FROM flow_series").fetchone()[0]
    finally:
        con.close()
    pd.testing.assert_frame_equal(saved, flows)
    assert n == 8 * 2 * 20
    assert not [p.name for p in d.iterdir() if p.name.startswith(".")]  # no temporary left


def test_corrupt_and_foreign_files_are_reported_and_left_out(done, tmp_path):
    d = _copy(done, tmp_path / "c")
    runs = sorted(p for p in (d / "runs").iterdir())
    # 1. a flipped byte in one run's flows.parquet
    target = runs[0] / "flows.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    # 2. a foreign Parquet file dropped into another run
    (runs[1] / "extra.parquet").write_bytes((runs[2] / "flows.parquet").read_bytes())
    # 3. a run of another results schema version
    summary = json.loads((runs[3] / "summary.json").read_text())
    summary["schema_version"] = 99
    (runs[3] / "summary.json").write_text(json.dumps(summary))
    # 4. foreign things at the top and under runs/
    (d / "notes.txt").write_text("hello")
    (d / "runs" / "not-a-run").mkdir()
    (d / "runs" / "stray.parquet").write_bytes(b"PAR1")
    with open_store(d) as s:
        kinds = {p.path: p.kind for p in s.problems}
        assert kinds[f"runs/{runs[0].name}"] == "corrupt"
        assert kinds[f"runs/{runs[1].name}"] == "corrupt"
        assert kinds[f"runs/{runs[3].name}"] == "corrupt"
        assert kinds["notes.txt"] == "foreign"
        assert kinds["runs/not-a-run"] == "not-in-plan"
        assert kinds["runs/stray.parquet"] == "foreign"
        messages = " ".join(p.message for p in s.problems)
        assert "sha256" in messages and "extra.parquet" in messages and "99" in messages
        left = s.query("SELECT DISTINCT run_id FROM flows")["run_id"].tolist()
        assert len(left) == 5 and runs[0].name not in left
        assert s.query("SELECT count(*) AS n FROM problems")["n"][0] == 6
        assert set(s.runs()["status"]) == {"done", "pending"}
    text, code = status(d)
    assert code == 1 and "corrupt" in text and "notes.txt" in text


def test_query_cli_warns_about_left_out_files_and_prints_table_json_csv(done, tmp_path, capsys):
    d = _copy(done, tmp_path / "q")
    (d / "junk.bin").write_bytes(b"\0")
    sql = "SELECT cca, count(*) AS runs FROM runs GROUP BY cca ORDER BY cca"
    assert main(["query", str(d), sql]) == 0
    out, err = capsys.readouterr()
    assert "cubic" in out and "(2 rows)" in out and "junk.bin: foreign" in err
    assert main(["query", str(d), sql, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"cca": "cubic", "runs": 4},
        {"cca": "reno", "runs": 4},
    ]
    assert main(["query", str(d), sql, "--csv"]) == 0
    assert capsys.readouterr().out == "cca,runs\ncubic,4\nreno,4\n"
    assert main(["query", str(d), "--schema"]) == 0
    schema = capsys.readouterr().out
    assert "flow_series:" in schema and "goodput_bps" in schema and "link1_delay_ms" in schema
    assert main(["query", str(d), "SELECT nope FROM runs"]) == 2
    assert "query failed" in capsys.readouterr().err


def test_a_newer_saved_catalog_is_refused_and_an_older_one_rebuilt(done, tmp_path):
    d = _copy(done, tmp_path / "v")
    con = duckdb.connect(str(d / layout.CATALOG_FILE))
    con.execute("CREATE TABLE catalog_info (key VARCHAR, value VARCHAR)")
    con.execute(
        "INSERT INTO catalog_info VALUES ('store_schema_version', ?)",
        [str(STORE_SCHEMA_VERSION + 1)],
    )
    con.close()
    with pytest.raises(StoreError, match="newer than this satcc"):
        open_store(d)
    con = duckdb.connect(str(d / layout.CATALOG_FILE))
    con.execute("UPDATE catalog_info SET value = '0'")
    con.close()
    with open_store(d) as s:
        assert len(s.runs()) == 8
    con = duckdb.connect(str(d / layout.CATALOG_FILE), read_only=True)
    assert con.execute(
        "SELECT value FROM catalog_info WHERE key = 'store_schema_version'"
    ).fetchone()[0] == str(STORE_SCHEMA_VERSION)
    con.close()


def test_a_directory_that_is_not_a_campaign_is_refused(tmp_path):
    with pytest.raises(Exception, match="campaign directory"):
        open_store(tmp_path)


ANALYZE_ONLY = """
[campaign]
name = "field"

[[analyze]]
files = ["field/*.pcap", "field/*.txt"]
"""


def test_flows_of_analyze_runs_have_the_columns_of_a_result_directorys_query(tmp_path, capsys):
    """Before: the store's flows view of an [[analyze]] run had only flows.parquet's columns
    (no kind, file, src, dst, ports, rtt_source, capture_point), unlike `satcc query` on a
    result directory and `satcc analyze --json`."""
    from satcc.analyze.synth import Conversation, write_pcap
    from tests.test_report import ping_log

    field = tmp_path / "field"
    field.mkdir()
    conv = Conversation()
    pkts = [conv.syn(t=0.0), conv.synack(t=0.01), conv.ack(t=0.02)]
    pkts += [conv.data(t=0.02 + 0.01 * k, seq=1 + 1000 * k, n=1000) for k in range(12)]
    pkts += [conv.sack(t=0.2, ack=12_001)]
    write_pcap(field / "c.pcap", pkts)
    (field / "p.txt").write_text(ping_log(1_700_000_000, [30.1, None, 31.5]))
    c = spec.load(write_campaign(tmp_path, ANALYZE_ONLY))
    r = run_campaign(c, tmp_path / "out", jobs=1, progress=False)
    assert r.count("failed") == 0
    for name in ("c.pcap", "p.txt"):
        assert main(["analyze", str(field / name), "--json"]) == 0
        (want,) = json.loads(capsys.readouterr().out)["flows"]
        with open_store(tmp_path / "out") as s:
            (got,) = s.query(
                "SELECT * FROM flows WHERE file = ?", [str((field / name).resolve())]
            ).to_dict("records")
            assert s.problems == []
        # `bins` is a list (null for a ping log): a series, not a flows column
        scalar = {k for k, v in want.items() if not isinstance(v, (list, dict))} - {"bins"}
        assert scalar <= set(got), scalar - set(got)
        for k in sorted(scalar - {"file"}):
            w, g = want[k], got[k]
            if w is None:
                assert g is None or pd.isna(g), (name, k, g)
            elif isinstance(w, float):
                assert g == pytest.approx(w), (name, k)
            else:
                assert g == w, (name, k, g, w)
    with open_store(tmp_path / "out") as s:
        kinds = s.query("SELECT kind, capture_point, rtt_source FROM flows ORDER BY kind")
    assert kinds["kind"].tolist() == ["capture", "ping"]
    assert kinds["rtt_source"][0] is not None


def test_flows_of_a_campaign_without_analyze_runs_keep_their_columns(done):
    with open_store(done) as s:
        cols = [c for c, _ in s.columns("flows")]
    assert "capture_point" not in cols and "file" not in cols


def test_the_views_files_are_the_resolved_paths_a_symbolic_link_included(done, tmp_path):
    """The catalog's file lists (`_done_files`: the runs directory resolved once) hold each
    file's own resolved path, as `Path.resolve()` gives it, also for a run directory or a
    file that is a symbolic link; the `runs` table takes the summaries the check read."""
    from pathlib import Path

    from satcc.store import catalog

    d = _copy(done, tmp_path / "c")
    rids = sorted(p.name for p in (d / layout.RUNS_DIR).iterdir())
    # one run directory moved aside and linked back, one file of another the same way
    moved = tmp_path / "elsewhere"
    (d / layout.RUNS_DIR / rids[0]).rename(moved)
    (d / layout.RUNS_DIR / rids[0]).symlink_to(moved)
    f = d / layout.RUNS_DIR / rids[1] / "flows.parquet"
    f.rename(tmp_path / "flows.parquet")
    f.symlink_to(tmp_path / "flows.parquet")
    linked = tmp_path / "linked"
    linked.symlink_to(d)  # the campaign directory itself reached through a link
    scan = layout.scan(linked)
    assert sorted(scan.done) == rids and sorted(scan.summaries) == rids
    for name in ("flows.parquet", "flow_series.parquet", "link_series.parquet"):
        want = [
            (rid, str(p.resolve()))
            for rid in rids
            if (p := linked / layout.RUNS_DIR / rid / name).is_file()
        ]
        assert catalog._done_files(linked, scan, name) == want
    got = catalog._done_files(linked, scan, "flows.parquet")
    assert got[0][1] == str(moved.resolve() / "flows.parquet")
    assert got[1][1] == str((tmp_path / "flows.parquet").resolve())
    assert Path(got[2][1]).parent.parent == (d / layout.RUNS_DIR).resolve()
    assert all(scan.summaries[r]["scenario_hash"] for r in rids)
