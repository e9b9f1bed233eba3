"""satcc.tables and the one Parquet writer (satcc._native.write_parquet): what it writes reads
back in pyarrow as the table Arrow would have built, the bytes depend only on the data, bad
columns are named, and writing a run's results needs no pyarrow at all."""

import math
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from satcc import results
from satcc.errors import SatccError
from satcc.tables import Schema, Table

SCHEMA = Schema(("i", "int64"), ("x", "float64"), ("s", "string"), ("b", "bool"))
COLUMNS = {
    "i": [1, None, -(2**62), 0],
    "x": [0.5, float("nan"), float("inf"), -0.0],
    "s": ["ab", None, "", "→é"],
    "b": [True, None, False, True],
}


def test_a_written_table_reads_back_as_the_arrow_table_of_its_columns(tmp_path):
    table = Table.from_columns(SCHEMA, COLUMNS, "test")
    table.write_parquet(tmp_path / "t.parquet", {"satcc": '{"k": 1}'})
    back = pq.read_table(tmp_path / "t.parquet")
    assert back.schema.metadata == {b"satcc": b'{"k": 1}'}
    back = back.replace_schema_metadata(None)
    assert back.schema == SCHEMA.arrow()
    assert back.equals(table.to_arrow())
    assert back.column("x").to_pylist()[1] is None  # NaN is a missing value
    assert math.copysign(1, back.column("x").to_pylist()[3]) == -1  # -0.0 kept


def test_the_same_table_gives_the_same_bytes_and_another_table_other_bytes(tmp_path):
    a, b, c = (tmp_path / n for n in ("a.parquet", "b.parquet", "c.parquet"))
    Table.from_columns(SCHEMA, COLUMNS, "test").write_parquet(a)
    Table.from_columns(SCHEMA, COLUMNS, "test").write_parquet(b)
    other = dict(COLUMNS, i=[1, None, -(2**62), 1])
    Table.from_columns(SCHEMA, other, "test").write_parquet(c)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_an_empty_table_keeps_its_columns(tmp_path):
    Table.from_columns(SCHEMA, {n: [] for n in SCHEMA.names}, "test").write_parquet(
        tmp_path / "e.parquet"
    )
    back = pq.read_table(tmp_path / "e.parquet")
    assert back.num_rows == 0 and back.schema.names == SCHEMA.names


def test_a_value_of_the_wrong_type_is_named_by_column_and_row(tmp_path):
    bad = dict(COLUMNS, i=[1, 2, "three", 4])
    with pytest.raises(TypeError, match=r"column i, row 2: expected int64 or None, found str"):
        Table.from_columns(SCHEMA, bad, "test").write_parquet(tmp_path / "t.parquet")
    assert not (tmp_path / "t.parquet").exists()


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(SatccError, match="different lengths"):
        Table.from_columns(SCHEMA, dict(COLUMNS, b=[True]), "test")
    with pytest.raises(SatccError, match="lacks columns: s"):
        Table.from_columns(SCHEMA, {k: v for k, v in COLUMNS.items() if k != "s"}, "test")


def test_an_unwritable_path_is_an_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        Table.from_columns(SCHEMA, COLUMNS, "test").write_parquet(tmp_path / "no" / "t.parquet")


def test_a_table_round_trips_through_arrow():
    table = Table.from_columns(SCHEMA, COLUMNS, "test")
    again = Table.from_arrow(SCHEMA, table.to_arrow())
    assert again.to_pylist() == table.to_pylist()
    assert Schema.from_arrow(table.to_arrow().schema) == SCHEMA
    with pytest.raises(SatccError, match="not a satcc type"):
        Schema.from_arrow(pa.schema([("u", pa.uint8())]))


def test_a_schema_refuses_an_unknown_type():
    with pytest.raises(ValueError, match="not one of"):
        Schema(("u", "uint8"))


def test_simulating_and_writing_a_run_imports_neither_pyarrow_nor_numpy(tmp_path):
    # pyarrow's import (~0.14 s) once cost more than the simulation of a 60 s 100 Mbit/s run
    code = (
        "import sys, satcc.cli; "
        f"rc = satcc.cli.main(['try', '--rate', '10Mbit/s', '--rtt', '20ms', '--duration', '1s', "
        f"'--out', {str(tmp_path / 'r')!r}]); "
        "print(rc, 'pyarrow' in sys.modules, 'numpy' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[-2] == "0 False False False", out
    loaded = results.load(tmp_path / "r")
    assert loaded.flows_table.num_rows == 1 and loaded.flows["goodput_bps"].iloc[0] > 0
