"""The result schema is defined once per language and the two agree, column by column.

Rust: satcc-core's record.rs (FlowSummary, FlowSeries, LinkSeries) and satcc-sim's UdpSummary.
Python: satcc.results (FLOWS_SCHEMA, FLOW_SERIES_SCHEMA, LINK_SERIES_SCHEMA). Every Rust field
is a Python column of the matching Arrow type; every Python column that is not a Rust field is
listed below with the reason it exists only on the Python side. The store's own tables are in
satcc.store.schema, and the campaign worker writes those very schemas.
"""

import re
from pathlib import Path

import pyarrow as pa
import pytest

from satcc import _native, results, tables
from satcc import scenario as sc
from satcc.campaign import worker
from satcc.store import catalog, schema
from satcc.tables import arrow_column
from tests.helpers import MINIMAL, requires_sim

REPO = Path(__file__).resolve().parents[1]
RECORD_RS = REPO / "crates" / "satcc-core" / "src" / "record.rs"
UDP_RS = REPO / "crates" / "satcc-sim" / "src" / "udp.rs"

RUST_TO_SATCC = {
    "u32": "int64",
    "u64": "int64",
    "i64": "int64",
    "usize": "int64",
    "f64": "float64",
    "&'static str": "string",
    "String": "string",
    "bool": "bool",
}

# Columns only the Python side has, and why.
PYTHON_ONLY = {
    "flows": {
        # from the resolved scenario (RunResult.from_engine), the same for every engine
        "name",
        "scenario_flow",
        "from",
        "to",
        "cca",
        "proto",
        "start_s",
        "size_bytes",
        # derived: retransmitted / sent
        "retransmission_rate",
        # UDP flows: UdpSummary's fields (checked against udp.rs below)
        "received_packets",
        "lost_packets",
        "loss_fraction",
        "jitter_ms",
    },
    # derived from delivered/received bytes and the bin width; cwnd in bytes is what iperf3
    # measures (emu, analyze), the simulator counts packets
    "flow_series": {"goodput_bps", "received_bps", "cwnd_bytes"},
    # node names of the direction's ends, from the resolved scenario
    "link_series": {"from", "to"},
}


def rust_struct(path: Path, name: str) -> dict[str, str]:
    """`pub field: Type` of `pub struct name { ... }`, in order (Vec<T> and Option<T> unwrapped)."""
    text = path.read_text(encoding="utf-8")
    m = re.search(rf"pub struct {name} \{{(.*?)\n\}}", text, re.DOTALL)
    assert m, f"{path}: no `pub struct {name}`"
    fields = {}
    for fm in re.finditer(r"^\s*pub (\w+): (.+?),\s*$", m.group(1), re.MULTILINE):
        ty = fm.group(2)
        for wrapper in ("Vec", "Option"):
            if ty.startswith(f"{wrapper}<") and ty.endswith(">"):
                ty = ty[len(wrapper) + 1 : -1]
        fields[fm.group(1)] = ty
    assert fields, f"{path}: `{name}` has no public fields"
    return fields


@pytest.mark.parametrize(
    ("struct", "table", "schema"),
    [
        ("FlowSummary", "flows", results.FLOWS_SCHEMA),
        ("FlowSeries", "flow_series", results.FLOW_SERIES_SCHEMA),
        ("LinkSeries", "link_series", results.LINK_SERIES_SCHEMA),
    ],
)
def test_rust_records_and_python_schemas_agree_column_by_column(struct, table, schema):
    rust = rust_struct(RECORD_RS, struct)
    for name, ty in rust.items():
        assert name in schema.names, f"record.rs {struct}.{name} has no column in {table}"
        assert ty in RUST_TO_SATCC, f"record.rs {struct}.{name}: no satcc type known for {ty}"
        assert schema.type_of(name) == RUST_TO_SATCC[ty], (
            f"{table}.{name}: Rust {ty} is {RUST_TO_SATCC[ty]}, Python says {schema.type_of(name)}"
        )
    extra = set(schema.names) - set(rust)
    assert extra == PYTHON_ONLY[table], f"{table}: Python-only columns changed: {sorted(extra)}"


def test_the_udp_columns_are_the_simulators_udp_summary():
    rust = rust_struct(UDP_RS, "UdpSummary")
    udp = {"received_packets", "lost_packets", "loss_fraction", "jitter_ms"}
    assert udp | {"sent_packets"} == set(rust)
    for name in udp:
        assert results.FLOWS_SCHEMA.type_of(name) == RUST_TO_SATCC[rust[name]]


@requires_sim
def test_the_simulators_output_has_exactly_the_rust_record_columns(write_toml):
    raw = _native.run_sim(sc.resolve(sc.load(write_toml(MINIMAL))))
    flow_keys = set(raw["flows"][0])
    rust_flow = set(rust_struct(RECORD_RS, "FlowSummary"))
    udp = set(rust_struct(UDP_RS, "UdpSummary")) - {"sent_packets"}
    assert flow_keys == rust_flow | udp
    assert set(raw["flow_series"]) == set(rust_struct(RECORD_RS, "FlowSeries"))
    assert set(raw["link_series"]) == set(rust_struct(RECORD_RS, "LinkSeries"))


def test_the_store_owns_the_extra_tables_and_the_worker_uses_them():
    assert worker.PINGS_SCHEMA is schema.PINGS_SCHEMA
    assert worker.SEQACK_SCHEMA is schema.SEQACK_SCHEMA
    assert catalog.DATA_VIEWS is schema.DATA_VIEWS
    assert schema.DATA_VIEWS["flows"] == (results.FLOWS_FILE, results.FLOWS_SCHEMA)


@pytest.mark.parametrize(
    ("values", "typ"),
    [
        ([1, None, 3, -(2**62)], "int64"),
        ([0.5, None, float("nan"), float("inf"), -0.0], "float64"),
        (["ab", None, "", "→é", "x" * 300], "string"),
        ([True, None, False, True] * 5, "bool"),
        ([], "float64"),
        ([None, None], "int64"),
    ],
)
def test_arrow_columns_built_from_buffers_equal_pyarrows_own(values, typ):
    # arrow_column skips pa.array (which imports pandas) and must give the same array:
    # nulls where None (and NaN in floats, as from_pandas=True does), values elsewhere.
    built = arrow_column(values, typ)
    built.validate(full=True)
    arrow_type = tables.Schema(("x", typ)).arrow().field("x").type
    assert built.equals(pa.array(values, type=arrow_type, from_pandas=True))
