"""The result columns are declared once, in satcc-core (crates/satcc-core/src/columns.rs), and
every producer writes from that declaration.

Rust: the records (record.rs) are checked against it at compile time (`record!`); the bindings
(satcc-py columns.rs) iterate them and hand the declaration to Python
(`_native.result_columns()`). Python: satcc.results builds its Columns, Parquet schemas and the
names the Python engines write (`results.FLOW`, ...) from it. The store's own tables are in
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
UDP_RS = REPO / "crates" / "satcc-sim" / "src" / "udp.rs"

# The files as schema version 1 wrote them: a column that moves or changes type changes every
# result file (and needs a new schema version), so the order and types are pinned here.
SCHEMA_V1 = {
    "flows": "id:int64 name:string scenario_flow:int64 from:string to:string cca:string "
    "proto:string start_s:float64 size_bytes:int64 goodput_bps:float64 delivered_bytes:int64 "
    "sent_packets:int64 retransmitted_packets:int64 retransmission_rate:float64 "
    "rtt_mean_ms:float64 rtt_p95_ms:float64 rtt_min_ms:float64 fct_s:float64 rto_count:int64 "
    "recovery_count:int64 received_packets:int64 lost_packets:int64 loss_fraction:float64 "
    "jitter_ms:float64",
    "flow_series": "flow_id:int64 t_s:float64 delivered_bytes:int64 goodput_bps:float64 "
    "received_bytes:int64 received_bps:float64 cwnd_bytes:int64 cwnd_pkts:int64 "
    "ssthresh_pkts:int64 srtt_ms:float64 inflight_pkts:int64 pacing_rate_bps:float64 "
    "retransmits:int64",
    "link_series": "link_id:int64 dir:string from:string to:string t_s:float64 queue_pkts:int64 "
    "queue_bytes:int64 drops_queue:int64 drops_random:int64 ecn_marks:int64 tx_bytes:int64 "
    "capacity_bps:int64 delay_ms:float64",
    "cc_series": "flow_id:int64 t_s:float64 name:string value:float64",
    "seqack": "flow_id:int64 kind:string t_s:float64 seq_rel:int64 end_rel:int64 ack_rel:int64 "
    "retransmission:bool",
    "analyze_flows": "flow_id:int64 file:string kind:string src:string dst:string sport:int64 "
    "dport:int64 conn:int64 packets:int64 payload_bytes:int64 rtt_source:string "
    "capture_point:string udp_lost:int64 udp_loss_rate:float64 udp_jitter_ms:float64 "
    "loss_rate:float64 bin_s:float64",
    "pings": "flow_id:int64 seq:int64 t_s:float64 t_epoch_s:float64 rtt_ms:float64",
}


def test_python_reads_the_rust_declaration_and_the_files_keep_their_columns():
    native = _native.result_columns()
    assert list(native) == list(SCHEMA_V1)
    for table, columns in native.items():
        assert results.DECLARED[table] == tuple(results.Column(*c) for c in columns)
        have = " ".join(f"{c.name}:{c.type}" for c in results.DECLARED[table])
        assert have == SCHEMA_V1[table], table
    for table, table_schema in (
        ("cc_series", results.CC_SERIES_SCHEMA),
        ("seqack", results.SEQACK_SCHEMA),
    ):
        assert table_schema.fields == tuple((c.name, c.type) for c in results.DECLARED[table])


def test_the_names_the_python_engines_write_are_the_declared_ones():
    assert results.FLOW.goodput_bps == "goodput_bps"
    assert results.LINK_SERIES.delay_ms == "delay_ms"
    assert results.FLOW.from_ == "from"  # a Python keyword: a trailing underscore
    with pytest.raises(AttributeError, match="flow_series declares no column 'goodput'"):
        _ = results.FLOW_SERIES.goodput


def test_the_udp_columns_are_the_simulators_udp_summary():
    # the bindings copy UdpSummary's fields into satcc-core's UdpColumns field by field (checked
    # by the compiler); here: the simulator counts what the declaration's UDP columns hold
    text = UDP_RS.read_text(encoding="utf-8")
    m = re.search(r"pub struct UdpSummary \{(.*?)\n\}", text, re.DOTALL)
    assert m, f"{UDP_RS}: no `pub struct UdpSummary`"
    fields = set(re.findall(r"^\s*pub (\w+):", m.group(1), re.MULTILINE))
    assert fields == set(results.UDP_FLOW_COLUMNS) | {"sent_packets"}


@requires_sim
def test_the_simulators_output_has_exactly_the_declared_engine_columns(write_toml):
    toml = MINIMAL.replace("[scenario]", "[scenario]\ncc_state = true\nseqack = { flow = 0 }", 1)
    raw = _native.run_sim(sc.resolve(sc.load(write_toml(toml))))
    for f in raw["flows"]:
        assert list(f) == [*results.ENGINE_FLOW_COLUMNS, *results.UDP_FLOW_COLUMNS]
    assert list(raw["flow_series"]) == [
        c.name
        for c in results.FLOW_SERIES_COLUMNS
        if c.source == results.ENGINE or c.name == "received_bytes"  # the simulator measures it
    ]
    assert list(raw["link_series"]) == list(results.ENGINE_LINK_SERIES_COLUMNS)
    assert list(raw["cc_series"]) == list(results.CC_SERIES_SCHEMA.names)
    assert list(raw["seqack"]) == [*results.SEQACK_SCHEMA.names, "dropped_rows"]


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


def _rust_fn(text: str, fn: str) -> str:
    m = re.search(rf"fn {fn}<'py>\(.*?\n\}}\n", text, re.DOTALL)
    assert m, f"sim.rs: no fn {fn}"
    return m.group(0)


def _declared_names() -> set[str]:
    """The columns engines' results hold (the analyzer's own tables aside: the simulator writes
    none of them, and their `packets` is not the `packets` of the simulator's statistics)."""
    return {
        c.name
        for columns in results.DECLARED.values()
        for c in columns
        if c.source != results.ANALYZER
    }


def test_the_bindings_write_the_records_without_naming_a_column():
    # summary_to_py, the series conversions and run_sim (UDP columns, cc_series, seqack)
    # iterate the records' declared columns
    text = SIM_RS.read_text(encoding="utf-8")
    for fn in ("summary_to_py", "flow_series_to_py", "link_series_to_py", "run_sim"):
        body = _rust_fn(text, fn)
        assert "set_cells" in body, fn
        literals = set(re.findall(r'"(\w+)"', body))
        assert not literals & _declared_names(), (fn, literals & _declared_names())


def test_the_emulators_series_rows_are_the_declared_link_columns():
    # satcc-linkd writes satcc-core's LinkSeriesRow (serde, flattened) beside its frame counts;
    # LinkSeriesRow is the LINK_SERIES record (record.rs), checked against the declaration
    # when it compiles
    assert "row: LinkSeriesRow" in EMULATOR_RS.read_text(encoding="utf-8")
    assert "rows LinkSeriesRow" in (REPO / "crates/satcc-core/src/record.rs").read_text()


def _column_names_used(path: Path) -> dict[str, set[str]]:
    """`results.FLOW.x`-style names a module uses, per alias (FLOW, FS, LS), and the string
    literals of declared result columns used as keys of the dictionaries it appends."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "satcc.results":
            for a in node.names:
                if a.name in ("FLOW", "FLOW_SERIES", "LINK_SERIES"):
                    aliases[a.asname or a.name] = a.name
    used: dict[str, set[str]] = {name: set() for name in aliases.values()}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            used[aliases[node.value.id]].add(node.attr)
    return used


@pytest.mark.parametrize(
    ("module", "target"),
    [("engines/model.py", "summaries"), ("emu/runner.py", "flows")],
)
def test_the_python_engines_write_the_declared_flow_columns(module, target):
    import ast

    used = _column_names_used(PACKAGE / module)
    for alias, table in (
        ("FLOW", "flows"),
        ("FLOW_SERIES", "flow_series"),
        ("LINK_SERIES", "link_series"),
    ):
        declared = {c.name for c in DECLARED[table]}
        assert used.get(alias, set()) <= declared, (module, alias, used[alias] - declared)
    # the flow summaries: exactly the columns every engine writes, each named through FLOW
    found = []
    for node in ast.walk(ast.parse((PACKAGE / module).read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == target
            and node.args
            and isinstance(node.args[0], ast.Dict)
        ):
            keys = node.args[0].keys
            assert all(
                isinstance(k, ast.Attribute)
                and isinstance(k.value, ast.Name)
                and k.value.id == "FLOW"
                for k in keys
                if k is not None  # ** of the UDP columns
            ), module
            found.append({k.attr for k in keys if isinstance(k, ast.Attribute)})
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


def test_the_python_lists_of_columns_are_derived_from_the_declaration():
    # the lists satcc.results keeps are the declaration's flags, not lists of their own
    flows = results.FLOWS_COLUMNS
    series = results.FLOW_SERIES_COLUMNS
    assert results.NULLABLE_INT_COLUMNS == {
        c.name for c in flows if c.type == "int64" and c.nullable
    }
    assert results.TCP_STATE_COLUMNS == tuple(c.name for c in series if c.tcp_state)
    assert results.ADDED_COLUMNS == {c.name for c in series if c.added}
    assert results.SUMMARY_FLOW_KEYS == tuple(_native.summary_flow_keys())
    assert len(results.TCP_STATE_COLUMNS) == 6 and "srtt_ms" in results.TCP_STATE_COLUMNS
    assert results.ADDED_COLUMNS == {"received_bytes", "received_bps", "cwnd_bytes"}


def _made_up_sender() -> dict:
    """The sending direction of a capture made up in memory: handshake, two segments."""
    from satcc.analyze.synth import Conversation, pcap_bytes

    c = Conversation()
    packets = [c.syn(1.0), c.synack(1.01), c.ack(1.02)]
    packets += [c.data(1.03, 1, 100), c.data(1.04, 101, 100)]
    flows = _native.pcap_analyze_bytes(pcap_bytes(packets))["flows"]
    return next(f for f in flows if f["payload_bytes"])


@pytest.mark.parametrize(
    ("record", "table", "measured"),
    [
        # satcc-pcap's FlowColumns: the flows columns a capture measures
        ("pcap_flow_columns", "flows", {"delivered_bytes": 200, "sent_packets": 2}),
        # its CaptureColumns: the analyze_flows columns (SYN, ACK, 2 segments; no ACK of the
        # data, so no RTT sample; no iperf3 datagram)
        (
            "pcap_analyze_columns",
            "analyze_flows",
            {"payload_bytes": 200, "packets": 4, "rtt_source": "none", "udp_lost": None},
        ),
    ],
)
def test_the_capture_analyzers_records_are_declared_columns_written_by_those_names(
    record, table, measured
):
    names = getattr(_native, record)()
    assert names and set(names) <= {c.name for c in results.DECLARED[table]}
    sender = _made_up_sender()
    assert [k for k in sender if k in names] == names  # by the declared names, in order
    assert {k: sender[k] for k in measured} == measured


def _flow_keys_spelled(path: Path) -> set[str]:
    """String literals a module uses as a flow's key: dict-display keys, and the subscripts and
    `.get`/`.setdefault` arguments of the names `f` and `m` (a flow record)."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        keys = []
        if isinstance(node, ast.Dict):
            keys = node.keys
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", None) in ("f", "m"):
            keys = [node.slice]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "setdefault")
            and getattr(node.func.value, "id", None) in ("f", "m")
        ):
            keys = node.args[:1]
        out |= {k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return out


def test_the_analyzer_names_the_result_columns_it_writes_by_the_declaration():
    # satcc.analyze.result builds the analyzer's flows from the capture's records and the names
    # satcc.results derives from columns.rs (FLOW, ANALYZE_FLOW): it spells no column itself
    columns = {c.name for c in (*results.FLOWS_COLUMNS, *results.ANALYZE_FLOWS_COLUMNS)}
    spelled = _flow_keys_spelled(REPO / "python" / "satcc" / "analyze" / "result.py")
    assert spelled & columns == set()
    assert {"bins", "flag_counts"} <= spelled  # the summary's extra keys: not columns


def test_the_python_lists_of_columns_name_declared_columns():
    # what satcc.results says about some columns (pandas dtypes, UDP nulls, the --json keys,
    # columns added within schema version 1) names columns of the declaration, never new ones
    flows = {c.name: c for c in results.FLOWS_COLUMNS}
    series = {c.name: c for c in results.FLOW_SERIES_COLUMNS}
    assert set(results.SUMMARY_FLOW_KEYS) <= set(flows)
    for name in results.NULLABLE_INT_COLUMNS:
        assert flows[name].type == "int64" and flows[name].nullable, name
    for name in results.TCP_STATE_COLUMNS:
        assert series[name].source == results.ENGINE and series[name].nullable, name
    assert results.ADDED_COLUMNS <= set(series)
