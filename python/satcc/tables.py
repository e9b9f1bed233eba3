"""Result tables without Arrow: what the engines build and satcc writes, Arrow only when asked.

    Schema(("id", "int64"), ("name", "string"), ...)     a table's columns and their types
    Table.from_columns(schema, {"id": [...], ...})       Python lists in schema order
    table.write_parquet(path, metadata)                  satcc._native.write_parquet (Rust): the sha256
    table.to_arrow() / schema.arrow()                    a pyarrow Table / Schema, built on demand

A run's results are small (a row per flow, a row per flow or link direction per time bin), and
writing them needs no pyarrow: its import alone (~0.14 s) costs more than a 60 s, 100 Mbit/s
simulation. Types: int64, float64, string, bool; every column may be null; a NaN float is
stored as null (no RTT sample yet), as Arrow's `from_pandas` conversion does.
"""

from __future__ import annotations

import math
from pathlib import Path

from satcc.errors import SatccError

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any

    import pyarrow as pa

TYPES = ("int64", "float64", "string", "bool")


class Schema:
    """A table's columns as (name, type) pairs; `arrow()` is the same as a pyarrow Schema."""

    __slots__ = ("_arrow", "_types", "fields", "names")

    def __init__(self, *fields: tuple[str, str]) -> None:
        for name, typ in fields:
            if typ not in TYPES:
                raise ValueError(f"column {name}: type {typ!r} is not one of {', '.join(TYPES)}")
        self.fields: tuple[tuple[str, str], ...] = tuple(fields)
        self.names: list[str] = [n for n, _ in fields]
        self._types = dict(fields)
        self._arrow: pa.Schema | None = None

    def type_of(self, name: str) -> str:
        return self._types[name]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(self.fields)

    def __repr__(self) -> str:
        return f"Schema{self.fields!r}"

    @classmethod
    def from_arrow(cls, schema: pa.Schema, source: object = "table") -> Schema:
        """The satcc schema of a pyarrow Schema whose types are all satcc's."""
        import pyarrow as pa

        kinds = {pa.int64(): "int64", pa.float64(): "float64", pa.string(): "string"}
        kinds[pa.bool_()] = "bool"
        fields = []
        for f in schema:
            if f.type not in kinds:
                raise SatccError(f"{source}: column {f.name} has type {f.type}, not a satcc type")
            fields.append((f.name, kinds[f.type]))
        return cls(*fields)

    def arrow(self) -> pa.Schema:
        """This schema as a pyarrow Schema (imports pyarrow)."""
        if self._arrow is None:
            import pyarrow as pa

            kinds = {
                "int64": pa.int64(),
                "float64": pa.float64(),
                "string": pa.string(),
                "bool": pa.bool_(),
            }
            self._arrow = pa.schema([(n, kinds[t]) for n, t in self.fields])
        return self._arrow


class Table:
    """A table as Python lists, one per column of its schema, all of one length."""

    __slots__ = ("_arrow", "columns", "schema")

    def __init__(self, schema: Schema, columns: dict[str, list[Any]], arrow: Any = None) -> None:
        self.schema = schema
        self.columns = columns
        self._arrow = arrow

    @classmethod
    def from_columns(cls, schema: Schema, columns: dict[str, Any], what: str) -> Table:
        """The schema's columns out of `columns` (extra keys ignored); an engine output that
        lacks a column or whose columns differ in length is satcc's bug (SatccError)."""
        missing = [n for n in schema.names if n not in columns]
        if missing:
            raise SatccError(f"engine output {what} lacks columns: {', '.join(missing)}")
        picked = {n: list(columns[n]) for n in schema.names}
        if len({len(v) for v in picked.values()}) > 1:
            raise SatccError(f"engine output {what} has columns of different lengths")
        return cls(schema, picked)

    @classmethod
    def from_arrow(cls, schema: Schema, table: pa.Table) -> Table:
        """A pyarrow table with exactly `schema`'s columns (as `satcc.results.load` conforms
        it); keeps the Arrow table for `to_arrow`."""
        return cls(schema, table.to_pydict(), arrow=table)

    @property
    def num_rows(self) -> int:
        return len(self.columns[self.schema.names[0]]) if self.schema.names else 0

    def column(self, name: str) -> list[Any]:
        return self.columns[name]

    def to_pylist(self) -> list[dict[str, Any]]:
        """One dict per row, as pyarrow's Table.to_pylist (NaN floats as None)."""
        names = self.schema.names
        cols = [_nan_as_none(self.columns[n], t) for n, t in self.schema.fields]
        return [dict(zip(names, row, strict=True)) for row in zip(*cols, strict=True)]

    def to_arrow(self) -> pa.Table:
        """This table as a pyarrow Table with `schema.arrow()` (imports pyarrow)."""
        if self._arrow is None:
            import pyarrow as pa

            arrays = [arrow_column(self.columns[n], t) for n, t in self.schema.fields]
            self._arrow = pa.Table.from_arrays(arrays, schema=self.schema.arrow())
        return self._arrow

    def write_parquet(self, path: str | Path, metadata: dict[str, str] | None = None) -> str:
        """Write as Parquet with satcc's fixed options (bytes depend only on the data); returns
        the file's sha256 (hex), taken of the bytes written."""
        from satcc import _native

        return _native.write_parquet(
            str(path),
            list(self.schema.fields),
            [self.columns[n] for n in self.schema.names],
            sorted(metadata.items()) if metadata else None,
        )


def _nan_as_none(values: list[Any], typ: str) -> list[Any]:
    if typ != "float64":
        return values
    return [None if v is not None and math.isnan(v) else v for v in values]


def arrow_column(values: list[Any], typ: str) -> pa.Array:
    """An Arrow array of satcc type `typ` from a Python list, None (and NaN in float columns)
    stored as null.

    Built from buffers because `pa.array` on a list (or an ndarray) imports pandas to ask whether
    the list is a pandas object (~0.3 s)."""
    import numpy as np
    import pyarrow as pa

    n = len(values)
    if typ == "string":
        valid = [v is not None for v in values]
        encoded = [v.encode() if v is not None else b"" for v in values]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        if offsets[-1] >= 2**31:
            return pa.array(values, type=pa.string())
        buffers = [
            _validity(np, pa, valid, n),
            pa.py_buffer(offsets.astype(np.int32)),
            pa.py_buffer(b"".join(encoded)),
        ]
        return pa.Array.from_buffers(pa.string(), n, buffers)
    if typ == "bool":
        valid = [v is not None for v in values]
        bits = np.packbits(np.array([bool(v) for v in values], dtype=bool), bitorder="little")
        return pa.Array.from_buffers(
            pa.bool_(), n, [_validity(np, pa, valid, n), pa.py_buffer(bits)]
        )
    if typ == "float64":
        valid = [v is not None and not math.isnan(v) for v in values]
        dtype, arrow_type = "float64", pa.float64()
    else:
        valid = [v is not None for v in values]
        dtype, arrow_type = "int64", pa.int64()
    data = np.fromiter((v if ok else 0 for v, ok in zip(values, valid)), dtype=dtype, count=n)
    return pa.Array.from_buffers(arrow_type, n, [_validity(np, pa, valid, n), pa.py_buffer(data)])


def _validity(np: Any, pa: Any, valid: list[bool], n: int) -> Any:
    """Arrow's validity bitmap (least significant bit first), None when nothing is null."""
    if all(valid):
        return None
    return pa.py_buffer(np.packbits(np.array(valid, dtype=bool), bitorder="little"))
