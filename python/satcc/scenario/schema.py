"""The scenario's schema: the pydantic models of a scenario file's tables, their unit-typed
fields, the defaults and limits (the table of keys is the package's docstring, `satcc.scenario`),
and the resolved flows a `count` expands to."""

# No `from __future__ import annotations` here: pydantic would evaluate every field's annotation
# from its string (one `compile` each) when it builds the schema; `satcc check` pays that.
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
)
from pydantic_core import core_schema

from satcc import _native, linkmodels, registry
from satcc.units import (
    UnitError,
    parse_duration,
    parse_packets,
    parse_probability,
    parse_queue,
    parse_rate,
    parse_size,
)

# The defaults are declared once, in satcc-core (`scenario::build`, where each says where it
# comes from: Linux's tcp_rmem[2], TCP_INIT_CWND, TCP_RTO_MIN, txqueuelen ...); here they are
# written as a scenario file would write them.
_NATIVE_DEFAULTS = _native.scenario_defaults()
DEFAULT_BIN = f"{_NATIVE_DEFAULTS['bin_ns'] // 1_000_000} ms"
DEFAULT_SEED = _NATIVE_DEFAULTS["seed"]
DEFAULT_QUEUE = f"{_NATIVE_DEFAULTS['queue_pkts']} pkt"
DEFAULT_CCA = "cubic"  # Linux's default congestion control since 2.6.19
DEFAULT_MSS = _NATIVE_DEFAULTS["mss"]
DEFAULT_RWND = f"{_NATIVE_DEFAULTS['rwnd_bytes'] >> 20} MiB"
DEFAULT_INITIAL_CWND = _NATIVE_DEFAULTS["initial_cwnd"]
DEFAULT_MIN_RTO = f"{_NATIVE_DEFAULTS['min_rto_ns'] // 1_000_000} ms"
MIN_MSS = _NATIVE_DEFAULTS["min_mss"]  # Linux TCP_MIN_MSS (satcc-core scenario.rs)
MAX_MSS = _NATIVE_DEFAULTS["max_mss"]  # the largest IPv4 datagram less IP and TCP headers
MAX_SEED = 2**64 - 1  # the simulator's RNG seed is a u64
MAX_BINS = 10_000_000  # duration / bin: beyond this the series would not fit in memory
MAX_FLOWS = 100_000  # after `count` expansion


class _Parsed:
    """`Annotated[T, _Parsed(parse)]`: the field's value is `parse(value)`, the parser's
    UnitError (a ValueError) reported as pydantic's value_error with the parser's message.
    pydantic's PlainValidator does the same, and also inspects the parser's signature and
    builds a serializer schema for T, per field: `satcc check` paid that (docs: BENCHMARKS.md
    start-up)."""

    __slots__ = ("parse",)

    def __init__(self, parse: Callable[[Any], Any]):
        self.parse = parse

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.parse)


def _unit(parse: Callable[[Any], Any]) -> _Parsed:
    """A pydantic field type backed by one of the unit parsers (errors keep expected/found)."""
    return _Parsed(parse)


Duration = Annotated[int, _unit(parse_duration)]  # ns
Rate = Annotated[int, _unit(parse_rate)]  # bit/s
Size = Annotated[int, _unit(parse_size)]  # bytes
Probability = Annotated[float, _unit(parse_probability)]
Queue = Annotated[dict, _unit(parse_queue)]  # {"packets"|"bytes"|"bdp": n}
Packets = Annotated[int, _unit(parse_packets)]


def _parse_pacing(value: Any) -> str:
    """ "auto" | "on" | "off"; TOML booleans are accepted as on/off."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    if value in ("auto", "on", "off"):
        return value
    raise UnitError("'auto', 'on' or 'off' (or true/false)", value)


Pacing = Annotated[str, _unit(_parse_pacing)]

HOST_NOISE_HINT = "'kernel', 'off' or a duration (uniform turnaround in [0, d))"


def _parse_host_noise(value: Any) -> str | int:
    """ "kernel" (the measured Linux turnaround, the default) | "off" (hosts answer at once) |
    a duration (ns: each turnaround uniform in [0, d))."""
    if value in ("kernel", "off"):
        return value
    if isinstance(value, str) and value.strip()[:1].isdigit():
        try:
            return parse_duration(value)
        except UnitError:
            pass
    raise UnitError(HOST_NOISE_HINT, value)


HostNoise = Annotated[str | int, _unit(_parse_host_noise)]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Most rows a sequence/ACK trace keeps (about 50 MB of columns); the rest are counted.
MAX_SEQACK_ROWS = 2_000_000


class SeqAck(_Table):
    """`[scenario.seqack]`: the simulator records one TCP flow's sequence/ACK trace at its
    sender (seqack.parquet; study 003 Fig. 6)."""

    flow: StrictInt = 0  # resolved flow id (after `count`)
    from_: Duration = Field(default=0, alias="from")
    to: Duration | None = None  # default: the end of the run
    max_rows: StrictInt = 200_000


class ScenarioSection(_Table):
    name: str | None = None
    description: str | None = None
    duration: Duration
    seed: StrictInt = DEFAULT_SEED
    bin: Duration = parse_duration(DEFAULT_BIN)
    engine: Literal[registry.NAMES] = registry.DEFAULT  # satcc.registry
    host_noise: HostNoise = "kernel"  # docs/simulator.md "Host timing noise"
    # node hosting a VPN server (study 000): the emulator runs real OpenVPN through it; the
    # simulator models the tunnel by the flows' `encap` (docs/scenario.md)
    vpn: str | None = None
    seqack: SeqAck | None = None  # docs/scenario.md; the simulator only
    cc_state: StrictBool = False  # cc_series.parquet: each flow's CC state per bin (sim only)


class Link(_Table):
    a: str
    b: str
    rate: Rate | None = None  # required unless `model` is given (linkmodels.link_issues)
    delay: Duration | None = None
    loss: Probability = 0.0
    queue: Queue = parse_queue(DEFAULT_QUEUE)
    ecn_threshold: Packets | None = None
    rate_ba: Rate | None = None
    delay_ba: Duration | None = None
    loss_ba: Probability | None = None
    queue_ba: Queue | None = None
    ecn_threshold_ba: Packets | None = None
    jitter: Duration = 0
    jitter_ba: Duration | None = None
    # "tick": dummynet-like release on a kernel tick of 1/hz (satcc_core::direction)
    service: Literal["exact", "tick"] = "exact"
    hz: StrictInt = 1000
    model: dict[str, Any] | None = None  # [link.model]: satcc.linkmodels


class Flow(_Table):
    from_: str = Field(alias="from")
    to: str
    name: str | None = None
    cca: str = DEFAULT_CCA
    cc: dict[str, Any] = Field(default_factory=dict)
    start: Duration = 0
    size: Size | None = None
    count: StrictInt = 1
    stagger: Duration = 0
    mss: StrictInt = DEFAULT_MSS
    sack: StrictBool = True
    timestamps: StrictBool = True
    window_scaling: StrictBool = True
    rwnd: Size = parse_size(DEFAULT_RWND)
    rcvbuf_autotune: StrictBool = True  # tcp_moderate_rcvbuf (deviation 2)
    ecn: StrictBool = False
    initial_cwnd: StrictInt = DEFAULT_INITIAL_CWND
    pacing: Pacing = "auto"
    delayed_ack: StrictBool = True
    min_rto: Duration = parse_duration(DEFAULT_MIN_RTO)
    sndbuf: Size | None = None
    metrics_save: StrictBool = False  # study 003: Linux's per-destination ssthresh cache
    # UDP constant bit rate, tunnels and path MTU: satcc.linkmodels (docs/scenario.md "Path models")
    proto: Literal["tcp", "udp"] = "tcp"
    rate: Rate | None = None
    packet_size: Size | None = None
    encap: Annotated[int, _unit(linkmodels.parse_encap)] = 0
    mtu: Size = linkmodels.DEFAULT_MTU
    # application traffic (`_app`): bulk, on/off or requests; checked in _semantic_issues
    app: dict[str, Any] | None = None
    slow_start_after_idle: StrictBool = True  # net.ipv4.tcp_slow_start_after_idle
    nodelay: StrictBool = False  # TCP_NODELAY on the sending socket (Nagle off)


class Scenario(_Table):
    """A validated scenario. Build it with `load`, `loads` or `from_dict`, not directly."""

    scenario: ScenarioSection
    links: list[Link] = Field(alias="link", min_length=1)
    flows: list[Flow] = Field(alias="flow", min_length=1)
    _source: str = PrivateAttr(default="<scenario>")

    @property
    def source(self) -> str:
        """The file this scenario came from (for messages)."""
        return self._source

    @property
    def name(self) -> str:
        return self.scenario.name or "scenario"

    @property
    def nodes(self) -> list[str]:
        """Node names in order of first appearance in the links (their index in the config)."""
        seen: dict[str, None] = {}
        for link in self.links:
            seen.setdefault(link.a)
            seen.setdefault(link.b)
        return list(seen)


@dataclass(frozen=True)
class FlowOrigin:
    """Where a resolved flow came from: its id, the [[flow]] index, and its name."""

    id: int
    scenario_flow: int
    copy: int
    name: str


def expand_flows(s: Scenario) -> list[FlowOrigin]:
    """One entry per resolved flow, ids consecutive in file order (copies of a `count` flow
    are adjacent). A flow's name is its `name` key or "flow<i>"; copies get ".<k>"."""
    out: list[FlowOrigin] = []
    for i, flow in enumerate(s.flows):
        base = flow.name or f"flow{i}"
        for k in range(flow.count):
            name = base if flow.count == 1 else f"{base}.{k}"
            out.append(FlowOrigin(id=len(out), scenario_flow=i, copy=k, name=name))
    return out
