"""satcc.results: a result directory's files reach the disk before it is moved into place
(`fsync_files` syncs them at once, one thread each)."""

import os

import pytest

from satcc import results as rs
from tests.test_results import _result


def test_every_file_of_a_new_result_is_synced_before_the_directory_moves_in(
    write_toml, tmp_path, monkeypatch
):
    r = _result(write_toml)
    synced: list[str] = []
    real_fsync_file, real_rename = rs.fsync_file, os.rename
    moved_after: list[list[str]] = []

    def record(path):
        real_fsync_file(path)
        synced.append(os.path.basename(path))

    def rename(src, dst):
        moved_after.append(list(synced))
        real_rename(src, dst)

    monkeypatch.setattr(rs, "fsync_file", record)
    monkeypatch.setattr(rs.os, "rename", rename)
    r.write(tmp_path / "out")
    files = sorted([rs.SUMMARY_FILE, *rs.TABLE_FILES])
    assert len(moved_after) == 1
    assert sorted(moved_after[0]) == files  # each file once, all before the rename
    assert synced[len(files) :] == [tmp_path.name]  # then the parent directory


def test_every_file_of_a_replaced_result_is_synced_before_it_replaces_the_old(
    write_toml, tmp_path, monkeypatch
):
    r = _result(write_toml)
    out = r.write(tmp_path / "out")
    synced: list[str] = []
    real_fsync_file, real_replace = rs.fsync_file, os.replace
    before_replace: list[list[str]] = []

    def record(path):
        real_fsync_file(path)
        synced.append(os.path.basename(path))

    def replace(src, dst):
        before_replace.append(list(synced))
        real_replace(src, dst)

    monkeypatch.setattr(rs, "fsync_file", record)
    monkeypatch.setattr(rs.os, "replace", replace)
    r.write(out)
    files = sorted([rs.SUMMARY_FILE, *rs.TABLE_FILES])
    assert len(before_replace) == len(files)
    assert all(sorted(seen) == files for seen in before_replace)
    assert synced[len(files) :] == ["out"]  # the directory, once its entries are in


def test_fsync_files_raises_the_failure_after_syncing_the_rest(tmp_path, monkeypatch):
    good = [tmp_path / f"f{i}" for i in range(3)]
    for p in good:
        p.write_text("x")
    missing = tmp_path / "missing"
    synced: list[str] = []
    real = rs.fsync_file

    def record(path):
        real(path)
        synced.append(path.name)

    monkeypatch.setattr(rs, "fsync_file", record)
    with pytest.raises(FileNotFoundError):
        rs.fsync_files([good[0], missing, *good[1:]])
    assert sorted(synced) == ["f0", "f1", "f2"]
