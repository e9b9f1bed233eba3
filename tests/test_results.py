"""satcc.results: the RunResult schema, atomic and byte-deterministic writing, loading."""

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from satcc import _native
from satcc import results as rs
from satcc import scenario as sc
from satcc.tables import Table
from tests.helpers import MINIMAL, engine_output

THREE_FLOWS = (
    MINIMAL.replace('duration = "2 s"', 'duration = "1.05 s"')
    + """
[[flow]]
name = "bulk"
from = "d"
to = "s"
cca = "reno"
size = "1 MB"
count = 2
"""
)


def _result(write_toml, text=THREE_FLOWS) -> rs.RunResult:
    s = sc.load(write_toml(text))
    config = sc.resolve(s)
    meta = {
        "engine": "sim",
        "scenario": s.name,
        "scenario_hash": sc.scenario_hash(config),
        "seed": config["seed"],
        "satcc_version": "test",
    }
    return rs.RunResult.from_engine(engine_output(config), config, sc.expand_flows(s), meta)


def _files(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_two_writes_of_one_result_are_identical_bytes(write_toml, tmp_path):
    r = _result(write_toml)
    a, b = r.write(tmp_path / "a"), r.write(tmp_path / "b")
    fa, fb = _files(a), _files(b)
    assert sorted(fa) == sorted([rs.SUMMARY_FILE, *rs.TABLE_FILES])
    assert fa == fb


def test_a_loaded_result_writes_back_the_same_bytes(write_toml, tmp_path):
    first = _result(write_toml).write(tmp_path / "a")
    rs.load(first).write(tmp_path / "b")
    assert _files(first) == _files(tmp_path / "b")


def test_two_results_built_separately_write_identical_bytes(write_toml, tmp_path):
    _result(write_toml).write(tmp_path / "a")
    _result(write_toml).write(tmp_path / "b")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_the_summary_has_the_contract_keys_and_derived_values(write_toml):
    doc = _result(write_toml).summary()
    for key in (
        "engine",
        "scenario",
        "seed",
        "jain_index",
        "flows",
        "scenario_hash",
        "schema_version",
        "satcc_version",
    ):
        assert key in doc
    assert [f["id"] for f in doc["flows"]] == [0, 1, 2]
    for f in doc["flows"]:
        for key in (
            "id",
            "from",
            "to",
            "cca",
            "goodput_bps",
            "delivered_bytes",
            "sent_packets",
            "retransmitted_packets",
            "retransmission_rate",
            "rtt_mean_ms",
            "rtt_p95_ms",
            "fct_s",
        ):
            assert key in f
    f0, f1, f2 = doc["flows"]
    assert (f0["from"], f0["to"], f1["from"], f1["to"]) == ("s", "d", "d", "s")
    assert f0["fct_s"] is None and f1["fct_s"] == 1.25  # bulk vs limited
    assert f0["retransmission_rate"] == pytest.approx(3 / 100)
    assert f2["retransmission_rate"] is None  # nothing sent
    # Jain's index is over the flows sharing a bottleneck: the two d→s flows, not the s→d one
    # (before: over all three, an upload beside two downloads).
    assert doc["jain_flows"] == [1, 2]
    goodputs = [f["goodput_bps"] for f in doc["flows"][1:]]
    expected = sum(goodputs) ** 2 / (2 * sum(g * g for g in goodputs))
    assert doc["jain_index"] == pytest.approx(expected)
    assert [f["name"] for f in doc["flows"]] == ["flow0", "bulk.0", "bulk.1"]
    json.dumps(doc, allow_nan=False)


def test_jain_index_is_null_for_a_single_flow_not_one(write_toml, tmp_path):
    """Before: a lone flow had Jain's index 1.0 in summary.json, `Result.jain_index` and the
    store's runs table, as if it were a perfectly fair share of something."""
    r = _result(write_toml, MINIMAL)
    assert r.jain_flows == [0] and r.flows_data.column("goodput_bps")[0] > 0
    assert r.jain_index is None and r.summary()["jain_index"] is None
    doc = json.loads((r.write(tmp_path / "one") / rs.SUMMARY_FILE).read_text())
    assert doc["jain_index"] is None and doc["jain_flows"] == [0]
    # two flows sharing the bottleneck keep their index
    two = _result(write_toml, MINIMAL.replace('cca = "reno"', 'cca = "reno"\ncount = 2'))
    assert two.jain_flows == [0, 1] and 0 < two.jain_index <= 1


def test_series_goodput_is_bin_bytes_over_bin_width_with_a_short_last_bin(write_toml):
    r = _result(write_toml)  # 1.05 s in 100 ms bins: ten full bins and one of 50 ms
    s = r.flow_series
    s0 = s[s["flow_id"] == 0].sort_values("t_s")
    assert len(s0) == 11
    widths = [0.1] * 10 + [0.05]
    for (_, row), w in zip(s0.iterrows(), widths, strict=True):
        assert row["goodput_bps"] == pytest.approx(row["delivered_bytes"] * 8 / w)


def test_tables_have_the_documented_columns(write_toml, tmp_path):
    r = rs.load(_result(write_toml).write(tmp_path / "r"))
    assert list(r.flows.columns) == rs.FLOWS_SCHEMA.names
    assert list(r.flow_series.columns) == rs.FLOW_SERIES_SCHEMA.names
    assert list(r.link_series.columns) == rs.LINK_SERIES_SCHEMA.names
    ls = r.link_series
    ab = ls[(ls["link_id"] == 0) & (ls["dir"] == "ab")].iloc[0]
    ba = ls[(ls["link_id"] == 0) & (ls["dir"] == "ba")].iloc[0]
    assert (ab["from"], ab["to"], ba["from"], ba["to"]) == ("s", "d", "d", "s")
    assert math.isnan(r.flow_series["srtt_ms"].iloc[0])  # missing stays missing
    assert r.meta["stats"]["events"] == 1234
    assert pq.read_schema(tmp_path / "r" / rs.FLOWS_FILE).metadata[b"satcc"]


def test_the_results_reference_lists_every_column():
    from tests.test_scenario import _doc_section

    section = _doc_section("Results", "results.md")
    for schema in (rs.FLOWS_SCHEMA, rs.FLOW_SERIES_SCHEMA, rs.LINK_SERIES_SCHEMA):
        for name in schema.names:
            assert f"`{name}`" in section, name


def test_jain_index_is_one_when_equal_and_one_over_n_when_one_flow_takes_all():
    assert rs.jain_index([5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert rs.jain_index([9.0, 0.0, 0.0]) == pytest.approx(1 / 3)
    assert rs.jain_index([0.0, 0.0]) is None
    assert rs.jain_index([]) is None


def test_a_failed_write_leaves_no_new_directory(write_toml, tmp_path, monkeypatch):
    r = _result(write_toml)
    calls = []

    def failing(table, path, metadata=None):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(table, path, metadata)

    real = Table.write_parquet
    monkeypatch.setattr(Table, "write_parquet", failing)
    with pytest.raises(OSError):
        r.write(tmp_path / "res" / "out")
    assert list((tmp_path / "res").iterdir()) == []  # neither the result nor temporary files


def test_a_failed_rewrite_keeps_the_previous_result_loadable(write_toml, tmp_path, monkeypatch):
    r = _result(write_toml)
    out = r.write(tmp_path / "res" / "out")
    before = _files(out)

    def failing(*a, **kw):
        raise OSError("disk full")

    monkeypatch.setattr(Table, "write_parquet", failing)
    with pytest.raises(OSError):
        r.write(out)
    assert _files(out) == before
    rs.load(out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


def test_rewriting_a_directory_replaces_the_result(write_toml, tmp_path):
    out = _result(write_toml).write(tmp_path / "res" / "out")
    other = _result(write_toml, THREE_FLOWS.replace("10 Mbit/s", "20 Mbit/s"))
    other.write(out)
    assert rs.load(out).meta["scenario_hash"] == other.meta["scenario_hash"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


def test_loading_notices_a_table_that_does_not_match_the_summary(write_toml, tmp_path):
    a = _result(write_toml).write(tmp_path / "a")
    b = _result(write_toml, THREE_FLOWS.replace("10 Mbit/s", "20 Mbit/s")).write(tmp_path / "b")
    (a / rs.LINK_SERIES_FILE).write_bytes((b / rs.LINK_SERIES_FILE).read_bytes())
    with pytest.raises(rs.ResultError, match="sha256"):
        rs.load(a)


def test_loading_a_directory_without_a_summary_is_an_error(tmp_path):
    with pytest.raises(rs.ResultError, match="summary.json"):
        rs.load(tmp_path)
    with pytest.raises(rs.ResultError, match="expected a result directory"):
        rs.load(tmp_path / "missing")


def test_the_text_table_has_a_row_per_flow_and_the_jain_index(write_toml):
    text = _result(write_toml).table()
    lines = text.splitlines()
    assert "tiny" in lines[0] and "seed 1" in lines[0]
    assert len(lines) == 1 + 1 + 3 + 1
    assert "bulk.1" in lines[4] and "d→s" in lines[4] and "1.25 s" in lines[3]
    assert lines[-1].startswith(
        "Jain's fairness index over goodputs of the 2 flows sharing bottleneck link[0] ba: 0."
    )


def test_the_table_can_leave_out_the_fairness_line(write_toml):
    r = _result(write_toml)
    assert r.table(fairness=False).splitlines() == r.table().splitlines()[:-1]


def test_a_result_directory_gets_ordinary_permissions(write_toml, tmp_path):
    import os

    mask = os.umask(0o022)
    try:
        out = _result(write_toml).write(tmp_path / "r")
    finally:
        os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o755


def test_the_write_makes_its_temporary_directory_new_private_and_named_by_its_pid(
    tmp_path, monkeypatch
):
    """results._new_temporary makes the directory tempfile.mkdtemp made before (satcc sim
    imports no tempfile): os.mkdir, mode 0700, `.NAME.tmp-PID-XXXX`; a name taken is skipped,
    and after TMP_TRIES taken names it gives up as mkdtemp does."""
    import os
    import re

    mask = os.umask(0o022)
    try:
        tmp = rs._new_temporary(tmp_path / "r")
    finally:
        os.umask(mask)
    assert re.fullmatch(rf"\.r\.tmp-{os.getpid()}-[0-9a-f]{{16}}", tmp.name), tmp.name
    assert tmp.parent == tmp_path and list(tmp.iterdir()) == []
    assert tmp.stat().st_mode & 0o777 == 0o700
    draws = iter([b"\0" * 8, b"\1" * 8])
    monkeypatch.setattr(rs.os, "urandom", lambda n: next(draws))
    taken = tmp_path / f".r.tmp-{os.getpid()}-{'00' * 8}"
    taken.mkdir()
    assert rs._new_temporary(tmp_path / "r").name == f".r.tmp-{os.getpid()}-{'01' * 8}"
    monkeypatch.setattr(rs.os, "urandom", lambda n: b"\0" * 8)
    with pytest.raises(FileExistsError):
        rs._new_temporary(tmp_path / "r")


def test_transfer_sizes_load_as_nullable_integers(write_toml, tmp_path):
    r = rs.load(_result(write_toml).write(tmp_path / "r"))
    sizes = r.flows["size_bytes"]
    assert str(sizes.dtype) == "Int64"
    assert sizes.isna().tolist() == [True, False, False]
    assert sizes.iloc[1] == 1_000_000


def test_a_result_written_before_the_received_columns_existed_still_loads(write_toml, tmp_path):
    # regression: `satcc plot` on a result directory from before received_bytes/received_bps/
    # cwnd_bytes were added stopped with an internal KeyError
    result = _result(write_toml)
    out = tmp_path / "old"
    result.write(out)
    path = out / rs.FLOW_SERIES_FILE
    table = pq.read_table(path)
    old = table.drop_columns([c for c in rs.ADDED_COLUMNS if c in table.column_names])
    pq.write_table(old, path)
    summary = json.loads((out / rs.SUMMARY_FILE).read_text())
    summary["files"][rs.FLOW_SERIES_FILE]["sha256"] = rs.file_sha256(path)
    (out / rs.SUMMARY_FILE).write_text(json.dumps(summary))
    loaded = rs.load(out)
    assert loaded.flow_series["received_bytes"].isna().all()
    assert len(loaded.flow_series) == len(result.flow_series)


def test_a_sha256_is_computed_by_the_two_helpers_only():
    # a file's bytes (results.file_sha256, or what Table.write_parquet returns of the file it
    # wrote) and an object's canonical JSON (scenario.config.json_sha256): every digest satcc
    # records or names things by is one of them, all by the native module's one sha256, so
    # none is computed a second way (bpf.py's kernel names and cache keys, a long scenario
    # name's directory) and hashlib (OpenSSL) stays out of every command
    package = Path(rs.__file__).parent
    texts = {
        p.relative_to(package).as_posix(): p.read_text(encoding="utf-8")
        for p in package.rglob("*.py")
    }
    assert [name for name, text in texts.items() if "import hashlib" in text] == []
    users = {name for name, text in texts.items() if "Sha256" in text}
    assert users == {"results.py", "scenario/config.py"}


@pytest.mark.parametrize("size", [0, 3, 2047, 2048, (1 << 18) + 5, 3 << 18])
def test_the_native_sha256_is_sha256(tmp_path, size):
    import hashlib  # the oracle: the standard library's digest of the same bytes

    data = bytes((i * 7 + i // 251) % 256 for i in range(size))
    want = hashlib.sha256(data).hexdigest()
    path = tmp_path / "f"
    path.write_bytes(data)
    assert rs.file_sha256(path) == want  # read in SHA256_CHUNK pieces
    h = _native.Sha256(data[:5])
    h.update(data[5:])
    assert h.hexdigest() == want
    assert h.hexdigest() == want  # hexdigest does not end the digest
    h.update(b"x")
    assert h.hexdigest() == hashlib.sha256(data + b"x").hexdigest()


def test_the_digest_write_parquet_returns_is_the_files(write_toml, tmp_path):
    r = _result(write_toml)
    digest = r.flow_series_data.write_parquet(tmp_path / "fs.parquet")
    assert digest == rs.file_sha256(tmp_path / "fs.parquet")
    out = r.write(tmp_path / "res")
    summary = json.loads((out / rs.SUMMARY_FILE).read_text(encoding="utf-8"))
    for name in rs.TABLE_FILES:
        assert summary["files"][name]["sha256"] == rs.file_sha256(out / name)
