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


# -- one declaration, every producer ----------------------------------------------------------

SIM_RS = REPO / "crates" / "satcc-py" / "src" / "sim.rs"
EMULATOR_RS = REPO / "crates" / "satcc-emu" / "src" / "emulator.rs"
PACKAGE = REPO / "python" / "satcc"
DECLARED = {
    "flows": results.FLOWS_COLUMNS,
    "flow_series": results.FLOW_SERIES_COLUMNS,
    "link_series": results.LINK_SERIES_COLUMNS,
}


def test_the_schemas_are_the_declarations():
    for table, table_schema in (
        ("flows", results.FLOWS_SCHEMA),
        ("flow_series", results.FLOW_SERIES_SCHEMA),
        ("link_series", results.LINK_SERIES_SCHEMA),
    ):
        assert table_schema.fields == tuple((c.name, c.type) for c in DECLARED[table])
        for c in DECLARED[table]:
            assert c.source in results.SOURCES, (table, c)
            assert c.unit and c.doc, (table, c)


def _rust_fn_keys(text: str, fn: str) -> list[str]:
    m = re.search(rf"fn {fn}<'py>\(.*?\n\}}\n", text, re.DOTALL)
    assert m, f"sim.rs: no fn {fn}"
    return re.findall(r'd\.set_item\("(\w+)"', m.group(0))


def test_the_bindings_write_exactly_the_declared_engine_columns():
    text = SIM_RS.read_text(encoding="utf-8")
    summary = _rust_fn_keys(text, "summary_to_py")
    assert sorted(summary) == sorted(results.ENGINE_FLOW_COLUMNS)
    udp = re.findall(r'd\.set_item\("(\w+)", udp\.map', text)
    assert sorted(udp) == sorted(results.UDP_FLOW_COLUMNS)
    flow_series = _rust_fn_keys(text, "flow_series_to_py")
    assert set(flow_series) - set(results.ENGINE_FLOW_SERIES_COLUMNS) <= set(
        results.OPTIONAL_ENGINE_SERIES_COLUMNS
    )
    assert set(results.ENGINE_FLOW_SERIES_COLUMNS) <= set(flow_series)
    link = _rust_fn_keys(text, "link_series_to_py")
    assert sorted(link) == sorted(results.ENGINE_LINK_SERIES_COLUMNS)


def test_the_emulators_series_rows_are_the_declared_link_columns():
    # satcc-linkd writes satcc-core's LinkSeriesRow (serde, flattened) beside its frame counts
    assert "row: LinkSeriesRow" in EMULATOR_RS.read_text(encoding="utf-8")
    assert list(rust_struct(RECORD_RS, "LinkSeriesRow")) == list(results.ENGINE_LINK_SERIES_COLUMNS)


def _dict_keys_appended(path: Path, target: str) -> list[set[str]]:
    """The literal keys of every dict passed to `<target>.append({...})` in a module."""
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == target
            and node.args
            and isinstance(node.args[0], ast.Dict)
        ):
            keys = {k.value for k in node.args[0].keys if isinstance(k, ast.Constant)}
            out.append(keys)
    return out


@pytest.mark.parametrize(
    ("module", "target"),
    [("engines/model.py", "summaries"), ("emu/runner.py", "flows")],
)
def test_the_python_engines_write_the_declared_flow_columns(module, target):
    found = _dict_keys_appended(PACKAGE / module, target)
    assert found, f"{module}: no {target}.append({{...}})"
    for keys in found:
        assert keys == set(results.ENGINE_FLOW_COLUMNS), (module, keys)


def test_a_producer_column_outside_the_declaration_is_refused(write_toml):
    from satcc.errors import SatccError
    from tests.helpers import engine_output

    s = sc.load(write_toml(MINIMAL))
    config = sc.resolve(s)
    raw = engine_output(config)
    results.check_engine_columns(raw, "fake")  # the helper's output is well formed
    bad = {**raw, "flows": [{**f, "proto": "tcp"} for f in raw["flows"]]}
    with pytest.raises(SatccError, match="fake: flows: column 'proto' not in"):
        results.RunResult.from_engine(bad, config, sc.expand_flows(s), {"engine": "fake"})
    short = {**raw, "link_series": {k: v for k, v in raw["link_series"].items() if k != "tx_bytes"}}
    with pytest.raises(SatccError, match="link_series: declared column 'tx_bytes' not written"):
        results.check_engine_columns(short, "fake")


@requires_sim
def test_the_simulator_and_the_model_engine_pass_the_check_and_fill_non_nullable_columns(
    write_toml,
):
    from satcc import registry

    s = sc.load(write_toml(MINIMAL))
    for engine in ("sim", "model"):
        r = registry.get(engine).run(s)  # from_engine ran check_engine_columns
        for data, columns in (
            (r.flows_data, results.FLOWS_COLUMNS),
            (r.flow_series_data, results.FLOW_SERIES_COLUMNS),
            (r.link_series_data, results.LINK_SERIES_COLUMNS),
        ):
            for c in columns:
                if not c.nullable:
                    values = data.column(c.name)
                    assert values and None not in values, (engine, c.name)


def _doc_tables() -> dict[str, list[tuple[str, str, str]]]:
    """(name, type, unit) rows of docs/results.md's `### \\`X.parquet\\`` tables, a row naming
    two columns (`from`, `to`) split into both."""
    text = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    out: dict[str, list[tuple[str, str, str]]] = {}
    for m in re.finditer(
        r"^### `(\w+)\.parquet`\n(.*?)(?=^### |\Z)", text, re.DOTALL | re.MULTILINE
    ):
        rows = []
        for line in m.group(2).splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 4 or cells[0] in ("column", "") or set(cells[0]) <= {"-"}:
                continue
            names = re.findall(r"`(\w+)`", cells[0])
            units = [u.strip() for u in cells[2].split(",")]
            for i, name in enumerate(names):
                rows.append((name, cells[1], units[i] if len(units) == len(names) else cells[2]))
        out[m.group(1)] = rows
    return out


def test_the_results_reference_tables_are_the_declarations():
    docs = _doc_tables()
    for table, columns in DECLARED.items():
        assert docs[table] == [(c.name, c.type, c.unit) for c in columns], table
