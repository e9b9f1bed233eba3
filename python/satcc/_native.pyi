"""Private native module (Rust, crates/satcc-py). Use the public API in `satcc`, not this.

Contract between the Python scenario layer and the Rust simulator
-----------------------------------------------------------------
A SCENARIO is the serde form (JSON, or the same Python dictionary) of satcc-core's
`scenario::Scenario` (crates/satcc-core/src/scenario.rs, each key documented at its field
there, the true/false switches in scenario/switches.rs, a link direction in dirspec.rs, a
MODEL in models/): every unit already parsed to integers (ns, bit/s, bytes; the unit is in
the key's name), every default filled, `count` expanded into separate flows, node names
mapped to indices. The scenario file's reader (`read_scenario`/`read_scenario_text`, satcc-core
`scenario::file`) makes it; this stub spells none of its keys, so a key is declared in Rust
alone. `resolve(SCENARIO)` (satcc-core `scenario::resolve`, the one resolve step) checks it as
the simulator would and returns a `Resolved`: kept in Rust for `run_sim` (which runs it as it
is: one resolve per run), its `config` the dictionary RESOLVED = SCENARIO plus "routes"
(`scenario::Routes`: each node's next hop and base delay towards each destination, each
direction's largest crossing RTT, what sizes an "N BDP" queue, each flow's path), which every
engine reads: `run_sim(Resolved or RESOLVED)`, the emulator's topology and satcc-linkd (which
reads its links and routes as they are, without resolving again), the model engine. A
direction's queue is held once, in its direction as written; `sized_queue` sizes it as the
links are built. `run_sim` refuses a RESOLVED whose routes are not its scenario's.

It returns
    {"flows": [{"id", "delivered_bytes", "goodput_bps", "sent_packets",
                "retransmitted_packets", "rtt_mean_ms", "rtt_p95_ms", "rtt_min_ms",
                "fct_s", "rto_count", "recovery_count",
                "received_packets", "lost_packets", "loss_fraction", "jitter_ms"}],
                # the last four: UDP flows only (None for TCP): datagrams received, lost
                # (highest sequence + 1 - received), their fraction, RFC 3550 jitter in ms;
                # for UDP, delivered_bytes/goodput_bps are received payload, sent_packets the
                # datagrams sent, and the TCP fields are 0/None
     "flow_series": {column: list},   # flow_id, t_s, delivered_bytes, received_bytes, cwnd_pkts, ssthresh_pkts,
                                      # srtt_ms, inflight_pkts, pacing_rate_bps, retransmits
     "link_series": {column: list},   # link_id, dir, t_s, queue_pkts, queue_bytes, drops_queue,
                                      # drops_random, ecn_marks, tx_bytes, capacity_bps, delay_ms
                                      # (capacity_bps, delay_ms: the model's time-weighted
                                      # means over the bin)
     "stats": {"events": int, "packets": int, "sim_time_s": float,
               "fragmented_packets": int (packets sent as IP fragments)}}
Probe mode: with `sample_models_ns=int`, nothing is simulated; it returns
    {"model_samples": {"link_id", "dir", "t_ns", "rate_bps", "delay_ns", "loss"}}
one row per link direction per step over [0, duration): the model's mean capacity over
[t, t + step) (bit/s, float) and the delay and loss in force at t (`satcc trace export`).
`progress`, if given, is called with the fraction of simulated time done (0..1), at most
a few times per second of wall time. Raises ValueError naming the bad key on bad input.
"""

from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

class Resolved:
    """`resolve`'s result: the resolved scenario as satcc-core holds it."""

    @property
    def config(self) -> dict[str, Any]:
        """RESOLVED (the same dictionary every time: for reading; `run_sim` runs the scenario
        as resolved, whatever is changed in it)."""

def run_sim(
    config: Resolved | dict[str, Any],
    progress: Callable[[float], None] | None = None,
    sample_models_ns: int | None = None,
    capture: tuple[str, list[str]] | None = None,
) -> dict[str, Any]:
    """`config` is `resolve`'s result (run as it is) or a RESOLVED dictionary (read, and its
    routes checked by resolving it again). Raises ValueError for a config the simulator refuses,
    MemoryError when the run's time series do not fit in memory (checked before the run
    starts) or Python runs out of memory while the result is converted. `capture` = (DIR,
    POINTS): a pcapng file per point ("NODE" or "FROM:TO"; satcc-sim capture.rs) written into
    DIR as the run goes, their names in the result's "captures" (a point the scenario does not
    have: ValueError; a file that cannot be written: OSError naming it)."""

def result_columns() -> dict[str, list[tuple[str, str, str, bool, str, str, bool, bool]]]:
    """Every result table's columns in file order, as satcc-core declares them
    (crates/satcc-core/src/columns.rs, the one declaration; docs/results.md):
    {"flows" | "flow_series" | "link_series" | "cc_series" | "seqack": [(name, type, unit,
    nullable, source, doc, tcp_state, added), ...]}; type is int64, float64, string or bool;
    source who writes it: "engine", "engine-optional", "udp", "scenario" or "derived";
    tcp_state: the sender's TCP state (null for UDP flows); added: added to schema version 1
    after its first results (loads as null from those). `run_sim`'s "flows",
    "flow_series", "link_series" and "cc_series" hold these tables' engine columns, written by
    iterating satcc-core's records (record.rs), which the compiler checks against it."""

def summary_flow_keys() -> list[str]:
    """The keys of each flow in the `--json` summary and summary.json, in order (columns of
    "flows"; columns.rs `SUMMARY_FLOW_KEYS`: add keys, never rename or reorder them)."""

def write_parquet(
    path: str,
    fields: list[tuple[str, str]],
    columns: list[list[Any]],
    metadata: list[tuple[str, str]] | None = None,
) -> str:
    """Write `columns` (one list per field; (name, type) with type int64, float64, string or
    bool; None and float NaN are null) as the Parquet file `path` with satcc's fixed options
    (satcc.tables.Table.write_parquet); returns the sha256 (hex) of the bytes written (as
    `Sha256`). TypeError names the column and row of a value of the wrong type; ValueError for
    columns of different lengths; OSError when `path` cannot be written."""

class Sha256:
    """satcc's one sha256 (the sha2 crate), fed as hashlib's is: `Sha256(b"...")`,
    `.update(data)`, `.hexdigest()` (satcc.results.file_sha256,
    satcc.scenario.config.json_sha256). Updates of 2 KiB or more release the GIL."""

    def __init__(self, data: bytes | None = None) -> None: ...
    def update(self, data: bytes) -> None: ...
    def hexdigest(self) -> str: ...

def resolve(scenario: dict[str, Any]) -> Resolved:
    """SCENARIO in, the resolved scenario out (every flow's algorithm and parameters checked
    too); ValueError naming the key ("link[0].ab.loss: ...") for a scenario the simulator
    refuses."""

class ScenarioFile:
    """A scenario file read and checked by satcc-core (`scenario::file`)."""

    def view(self) -> dict[str, Any]:
        """{"scenario", "links", "flows": the tables in base units, defaults filled; "name",
        "nodes", "seed"}."""
    def spec(self, seed: int | None = None) -> dict[str, Any]:
        """The resolver's input (SCENARIO above)."""
    def resolve(self, seed: int | None = None) -> Resolved: ...
    def origins(self) -> list[tuple[int, int, str]]:
        """Per resolved flow: ([[flow]] index, copy, name)."""

def read_scenario(
    doc: dict[str, Any], default_name: str, engines: list[str], base: Path, files: Any
) -> ScenarioFile:
    """A scenario document (the TOML tables) read: types, units, defaults, the [link.model]
    tables with their presets and every check in satcc-core; a link model's files are named
    from `base` and read through `files` (satcc.linkmodels: mahimahi_info, delay_csv_info,
    tle_geometry). Raises ValueError([(key path, message)])."""

def read_scenario_text(
    text: str, default_name: str, engines: list[str], base: Path, files: Any
) -> ScenarioFile:
    """`read_scenario` of a scenario file's TOML text, parsed by satcc-core (TOML 1.0, the
    `toml` crate): a syntax error is ("", "invalid TOML: ... (at line L, column C)"), a float
    that is not finite is named by its key path, a date or time is read as its text."""

def link_model_presets() -> dict[str, Any]:
    """The link models' kinds, keys and the presets other commands show (satcc-core
    models/table.rs): {"kinds", "keys", "starlink_capacity_mbps", "starlink_loss",
    "starlink_intra", "starlink_period_ns", "mahimahi_bytes"}."""

def sized_queue(queue: dict[str, Any], rate_bps: int, max_rtt_ns: int) -> dict[str, int]:
    """A direction's queue as its link holds it: {"bdp": x} as {"bytes": x * rate * RTT / 8}
    (at least the smallest BDP queue), {"packets"|"bytes": n} as it is (satcc-core
    `QueueSpec::sized`, what the simulator and satcc-linkd build)."""

def text_grid(columns: list[str], rows: list[list[str]], left: list[int], gap: int) -> list[str]:
    """A plain-text table's lines (satcc.textgrid.grid): the header, then a line per row;
    columns `gap` spaces apart, right-aligned unless their index is in `left`, as wide as
    their widest cell in terminal cells; no wrapping, trailing blanks dropped."""

def scenario_keys() -> dict[str, list[str]]:
    """The keys of [scenario], [[link]] and [[flow]]."""

def parse_unit(kind: str, value: Any) -> Any:
    """`value` read by the unit grammar (satcc-core units.rs): kind "duration" (ns), "rate"
    (bit/s), "size" (bytes), "probability", "packets" or "queue". Raises
    ValueError(expected, why)."""

def describe(value: Any) -> str:
    """A found value as messages show it."""

def unit_constants() -> dict[str, Any]:
    """The grammar's hints and bounds."""

def cc_names() -> list[str]: ...
def cc_info(name: str) -> dict[str, Any]:
    """{"name", "summary", "source", "params": [PARAM], "deviations": [str]}: each PARAM as
    satcc-cc declares it (`ParamSpec`): {"name", "kind" ("number" | "integer" | "bool" |
    "choice" | "pairs"), "default" (typed; None for pairs), "range" ((lo, hi) for numbers,
    [word, ...] for choices, else None), "unit", "scale" ((factor, min): the kernel keeps
    max(min, round(value * factor)); or None), "kernel" (Linux module parameter or None),
    "bpf" (the BPF twin's -D define or None), "doc"}."""

def cc_check(name: str, params: dict[str, Any]) -> None:
    """Raises ValueError if `name` is unknown or `params` are invalid for it."""

def cc_kernel_values(name: str, params: dict[str, Any] | None) -> list[tuple[str, int]]:
    """[(bpf define, integer), ...] for every parameter declaring a BPF define, after the
    algorithm's own checks (ValueError as cc_check)."""

def version() -> str: ...
def scenario_defaults() -> dict[str, int]:
    """The scenario's defaults, declared once in satcc-core (`scenario::build`): {"mss",
    "rwnd_bytes", "initial_cwnd", "min_rto_ns", "bin_ns", "seed", "queue_pkts"}; the TOML schema
    fills a scenario file's missing keys with them. And the limits, declared once beside the
    checks that use them (`scenario.rs`): {"min_mss", "max_mss", "min_mtu", "max_mtu",
    "max_user_mss" (setsockopt TCP_MAXSEG's upper bound, Linux MAX_TCP_WINDOW)}."""

def host_noise_kernel() -> dict[str, list[tuple[float, int]]]:
    """The measured kernel turnarounds (docs/simulator.md "Host timing noise"):
    {"sender": [(probability, ns), ...], "receiver": [...]}."""

# ---------------------------------------------------------------------------------------------
# Capture analyzer (crates/satcc-pcap, bindings in crates/satcc-py/src/pcap.rs).
#
# `pcap_analyze(path, bin_ns, packets, rtt_samples, progress)` reads a pcap/pcapng file and
# returns
#     {"format": "pcap" | "pcapng" | None, "bin_ns": int, "first_ts_ns": int | None,
#      "last_ts_ns": int | None, "bytes_read": int,
#      "stats": {"frames", "tcp_packets", "udp_packets", "other_ip_packets", "non_ip_frames",
#                "fragments", "malformed_frames", "unsupported_link_frames",
#                "truncated_transport", "unbinned_packets": int},
#      "warnings": [{"record": int, "offset": int, "message": str}],
#      "flows": [{"id", "proto": "tcp" | "udp", "dir", "ip_version", "start_s", "end_s",
#                 *pcap_flow_columns() (goodput_bps, delivered_bytes, sent_packets, ... fct_s:
#                 the "flows" result columns a capture measures),
#                 *pcap_analyze_columns() (src, dst, sport, dport, conn, packets,
#                 payload_bytes, rtt_source, udp_lost, udp_loss_rate, udp_jitter_ms: the
#                 "analyze_flows" columns it measures), "flag_counts": {name: int},
#                 "rtt_samples", "ts_rtt_mean_ms", "ts_rtt_samples", "syn", "fin", "rst",
#                 "iperf_udp": {"packets", "lost", "expected", "out_of_order", "jitter_ms",
#                               "counter64"} | None,
#                 "bins": {"first": int, "payload_bytes": [int], "new_bytes": [int],
#                          "packets": [int], "retransmits": [int]}}],
#      "packets": {column: (numpy dtype str, bytes)} | None,      # when packets=True
#      "rtt_samples": {column: (numpy dtype str, bytes)} | None}  # when rtt_samples=True
# Packet columns: frame, t_ns, flow_id, conn, proto, dir, len, seq_rel, ack_rel, tcp_flags,
# analysis (bit i = pcap_flag_names()[i]), window, tsval, tsecr. RTT sample columns: flow_id,
# t_ns, rtt_ns, kind (0 data->ACK, 1 TSval->TSecr). Times are ns from the capture's first packet.
# Raises ValueError if the file is not a capture (or empty), OSError if it cannot be opened;
# a file damaged later gives what could be read plus `warnings`.
# `progress(done_bytes, total_bytes)` is called every few MiB.
# ---------------------------------------------------------------------------------------------

def pcap_analyze(
    path: str,
    bin_ns: int = 100_000_000,
    packets: bool = False,
    rtt_samples: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]: ...
def pcap_analyze_bytes(
    data: bytes, bin_ns: int = 100_000_000, packets: bool = False, rtt_samples: bool = False
) -> dict[str, Any]: ...
def pcap_flag_names() -> list[str]: ...
def pcap_flow_columns() -> list[str]:
    """The "flows" result columns each of `pcap_analyze`'s flows holds (satcc-pcap's
    `FlowColumns`, checked against columns.rs), in order."""

def pcap_analyze_columns() -> list[str]:
    """The "analyze_flows" result columns each of `pcap_analyze`'s flows holds (satcc-pcap's
    `CaptureColumns`, checked against columns.rs), in order."""

# The simulator's receive-buffer accounting (crates/satcc-py/src/calc.rs -> satcc-sim tcp/receiver/)
def rx_truesize(payload: int, timestamps: bool = True) -> int:
    """Bytes of receive buffer one packet with `payload` bytes costs (`skb->truesize`)."""

def scaling_ratio(mss: int, timestamps: bool = True) -> int:
    """Linux's `scaling_ratio` for full segments: window bytes per 256 bytes of buffer."""

def fixed_rcvbuf_bytes(window: int, mss: int, timestamps: bool = True) -> int:
    """The buffer that offers a window of `window` bytes (`rcvbuf_autotune = false`)."""

def receive_window_bytes(
    rwnd: int, mss: int, timestamps: bool, autotune: bool, window_scaling: bool
) -> int:
    """The largest window a receiver with buffer ceiling `rwnd` offers."""

def mahimahi_info(path: str | PathLike[str], budget_bytes: int | None = None) -> dict[str, Any]:
    """{"lines": int, "last_ms": int, "digest": str} of the Mahimahi trace at `path`, read by
    satcc-core's one reader (mm-link's rules, 8 B a line, parsed once per process while the
    file is unchanged). ValueError naming the line for a bad trace (the file is never quoted)
    or, before parsing, for one whose lines need more than `budget_bytes`; MemoryError when
    it does not fit."""

def mahimahi_stamps(path: str | PathLike[str]) -> bytes:
    """The trace's timestamps (ms) as little-endian u64s, read as `mahimahi_info` reads it."""

def delay_csv_info(
    path: str | PathLike[str],
    default_loss: float,
    duration_ns: int | None = None,
    budget_bytes: int | None = None,
) -> dict[str, Any]:
    """{"rows": int, "mean_delay_ns": float, "mean_loss": float, "digest": str} of the
    delay/loss CSV at `path` (rows `t_ms,delay_ms[,loss]`, read once per process by
    satcc-core, 24 B a row); the means are weighted by time over [0, duration_ns) as the
    model applies the rows (over [0, the last row's time) without a duration). ValueError
    naming the line or, before parsing, for rows needing more than `budget_bytes`;
    MemoryError when it does not fit."""

def delay_csv_rows(path: str | PathLike[str], default_loss: float) -> bytes:
    """The CSV's rows as little-endian (t_ns u64, delay_ns u64, loss f64), 24 B a row."""

# ---------------------------------------------------------------------------------------------
# Drill endpoint (crates/satcc-sim tcp/endpoint/, bindings in crates/satcc-py/src/drill.rs):
# the simulator's TCP as one passive-open socket in virtual time, for `satcc drill --engine
# sim` (python/satcc/drill/sim.py). Times are integer ns of virtual time. Segments out are
# `(t_ns, flags, seq, ack, win, len, options, ecn)`: flags the TCP header's bits, options a
# list of `(kind, values)` with kind mss/wscale/sackOK/TS/sack/nop/eol (TS: [val, ecr]; sack:
# [left, right, ...]), ecn "noecn" | "ect0" | "ect1" | "ce". Our ISN is 0.
# ---------------------------------------------------------------------------------------------

class DrillEndpoint:
    def __init__(
        self,
        cca: str = "cubic",
        sack: bool = True,
        timestamps: bool = True,
        window_scaling: bool = True,
        rwnd_bytes: int = 33_554_432,
        rcvbuf_autotune: bool = True,
        ecn: int = 2,
        initial_cwnd: int = 10,
        sndbuf_bytes: int | None = None,
        slow_start_after_idle: bool = False,
        pacing: str = "auto",
        min_tso_segs: int = 2,
        tso_win_divisor: int = 3,
    ) -> None: ...
    def listen(self) -> None: ...
    def connect(self) -> None: ...
    def set_cca(self, name: str) -> None: ...
    def cca(self) -> str: ...
    def now_ns(self) -> int: ...
    def advance(self, t_ns: int) -> None: ...
    def inject(
        self,
        flags: int,
        seq: int,
        ack: int,
        win: int,
        len: int,
        options: list[tuple[str, list[int]]],
        ecn: str,
    ) -> None: ...
    def next_outbound(
        self, deadline_ns: int
    ) -> tuple[int, int, int, int, int, int, list[tuple[str, list[int]]], str] | None: ...
    def write(self, n: int) -> int:
        """Queue n bytes; ValueError before the handshake or after shutdown(SHUT_WR)."""
    def send(self, n: int, more: bool = False) -> int:
        """`write` with MSG_MORE when `more` (a short last segment waits, no PSH)."""
    def set_nodelay(self, on: bool) -> None: ...
    def set_cork(self, on: bool) -> None: ...
    def write_shut(self) -> bool: ...
    def read(self, n: int) -> int: ...
    def readable(self) -> int: ...
    def fin_received(self) -> bool: ...
    def close_write(self) -> None: ...
    def close(self) -> None:
        """`close()`: a FIN after the data, or a RST when received data was never read."""
    def shutdown_read(self) -> None: ...
    def read_ready(self) -> bool: ...
    def take_error(self) -> str | None:
        """The pending socket error's errno name, reported once."""
    def maxseg(self) -> int: ...
    def set_maxseg(self, mss: int) -> None:
        """`TCP_MAXSEG`; ValueError is EINVAL."""
    def established(self) -> bool: ...
    def info(self) -> dict[str, int]:
        """`tcpi_*` fields the endpoint knows (the sender's once established)."""
