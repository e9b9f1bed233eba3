"""Scenario files: TOML in, a validated `Scenario` out, then the resolved config the engines run.

    path.toml ──tomllib──► dict ──pydantic──► Scenario ──semantic checks──► resolve() ──► dict
                                   (types, units,             (nodes exist and are        (the exact
                                    unknown keys)              connected, cca known,       `run_sim`
                                                               cc params valid)            config)

Every problem becomes one line `FILE: KEY.PATH: expected WHAT, found WHAT` in a
`ScenarioError` (a `UserError`, so the CLI exits 2 without a traceback); all problems in a file
are reported at once, not only the first.

Keys and defaults (docs/scenario.md is the user-facing copy of this table; a test keeps
them in step):

| key                       | default      | unit / values        | source of the default            |
|---------------------------|--------------|----------------------|----------------------------------|
| scenario.name             | file stem    | text                 |                                  |
| scenario.description      | none         | text                 |                                  |
| scenario.duration         | required     | duration             |                                  |
| scenario.seed             | 1            | integer 0..2^64-1    |                                  |
| scenario.bin              | 100 ms       | duration             | DESIGN.md (0.1 s bins)           |
| scenario.engine           | "sim"        | sim, model, emu      |                                  |
| link.a, link.b            | required     | node names           |                                  |
| link.rate (rate_ba)       | required     | rate                 | b->a copies a->b unless given    |
| link.delay (delay_ba)     | required     | duration, one way    |                                  |
| link.loss (loss_ba)       | 0            | probability          |                                  |
| link.queue (queue_ba)     | 1000 pkt     | pkt / size / BDP     | Linux txqueuelen 1000            |
| link.ecn_threshold (_ba)  | none         | packets              | DCTCP-style step marking         |
| link.model                | none         | table, `kind = ...`  | satcc.linkmodels (docs/scenario.md "Path models") |
| flow.from, flow.to        | required     | node names           |                                  |
| flow.name                 | "flow<i>"    | text                 |                                  |
| flow.cca                  | "cubic"      | registry name        | Linux default since 2.6.19       |
| flow.cc                   | {}           | table                | per algorithm (`satcc cc show`)  |
| flow.start                | 0 s          | duration             |                                  |
| flow.size                 | none (bulk)  | size                 |                                  |
| flow.count, flow.stagger  | 1, 0 s       | integer, duration    | copy k starts at start + k*stagger |
| flow.mss                  | 1448         | bytes                | 1500 MTU - 20 IP - 20 TCP - 12 TS |
| flow.sack                 | true         | bool                 | net.ipv4.tcp_sack = 1            |
| flow.timestamps           | true         | bool                 | net.ipv4.tcp_timestamps = 1      |
| flow.window_scaling       | true         | bool                 | net.ipv4.tcp_window_scaling = 1  |
| flow.rwnd                 | 6 MiB        | size                 | net.ipv4.tcp_rmem[2] = 6291456: the receive buffer's ceiling |
| flow.rcvbuf_autotune      | true         | bool                 | net.ipv4.tcp_moderate_rcvbuf = 1; false = a fixed window of `rwnd` |
| flow.ecn                  | false        | bool                 | Linux negotiates ECN only if asked (tcp_ecn = 2) |
| flow.initial_cwnd         | 10           | packets              | RFC 6928, Linux TCP_INIT_CWND    |
| flow.pacing               | "auto"       | auto, on, off        | auto = Linux: pace when the CCA asks (BBR) |
| flow.delayed_ack          | true         | bool                 | Linux quick-ack then delayed ACK |
| flow.min_rto              | 200 ms       | duration             | Linux TCP_RTO_MIN                |
| flow.sndbuf               | none         | size                 | cap on unacknowledged bytes; Linux bounds them by tcp_wmem[2] |
| flow.metrics_save         | false        | bool                 | false = tcp_no_metrics_save = 1; true = Linux's default cache of ssthresh per destination (study 003) |
| flow.proto, rate, packet_size | tcp, -, 1460 B | udp: CBR rate, payload | iperf3 -u -b -l (satcc.linkmodels) |
| flow.encap, flow.mtu      | 0 B, 1500 B  | VPN name or "N B"; size | satcc.linkmodels (study 000)   |
| flow.app                  | bulk         | `{ kind = ... }`     | bulk, onoff (on, off), requests (size, every or at) |
| flow.slow_start_after_idle | true        | bool                 | net.ipv4.tcp_slow_start_after_idle = 1 |
| flow.nodelay              | false        | bool                 | TCP_NODELAY off: Nagle on, Linux's default |

Deviations from what a user might assume:
1. With `window_scaling = false` the receive window is capped at 65535 B whatever `rwnd` says
   (the 16-bit window field, RFC 7323 §2), silently, as the kernel does.
2. `rwnd` is the receive buffer's ceiling (`tcp_rmem[2]`), not a window: autotuning grows the
   buffer per RTT up to it and the window offered is the buffer's share `scaling_ratio`/256
   (160/256 for full 1448 B segments on satcc's links, `receive_window_bytes`), so a 6 MiB
   ceiling opens at most 3.9 MB. `rcvbuf_autotune = false` gives a fixed window of `rwnd`
   instead (Linux with `tcp_moderate_rcvbuf = 0` and a buffer sized to offer `rwnd`).
3. The scenario hash leaves the seed out, so replicates of one scenario share a hash; the seed is
   recorded next to it in every result.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    StrictBool,
    StrictInt,
    ValidationError,
)

from satcc import _native, limits, linkmodels, resources
from satcc.engines import registry
from satcc.errors import UserError
from satcc.units import (
    UnitError,
    describe,
    format_duration,
    parse_duration,
    parse_packets,
    parse_probability,
    parse_queue,
    parse_rate,
    parse_size,
)

DEFAULT_BIN = "100 ms"  # DESIGN.md: time series in 0.1 s bins
DEFAULT_SEED = 1
DEFAULT_QUEUE = "1000 pkt"  # Linux default txqueuelen of an Ethernet device
DEFAULT_CCA = "cubic"  # Linux's default congestion control since 2.6.19
DEFAULT_MSS = 1448  # 1500 B MTU - 20 IP - 20 TCP - 12 timestamp option
DEFAULT_RWND = "6 MiB"  # net.ipv4.tcp_rmem[2] = 6291456, the default receive-buffer ceiling
DEFAULT_INITIAL_CWND = 10  # RFC 6928; Linux TCP_INIT_CWND
DEFAULT_MIN_RTO = "200 ms"  # Linux TCP_RTO_MIN (HZ / 5)
MIN_MSS = 88  # Linux TCP_MIN_MSS
MAX_MSS = 65495  # 65535 max IPv4 datagram - 20 IP - 20 TCP
MAX_SEED = 2**64 - 1  # the simulator's RNG seed is a u64
MAX_BINS = 10_000_000  # duration / bin: beyond this the series would not fit in memory
MAX_FLOWS = 100_000  # after `count` expansion


class ScenarioError(UserError):
    """A scenario file that cannot be used; `issues` holds one (path, message) per problem."""

    def __init__(self, source: str, issues: list[tuple[str, str]]):
        self.source = source
        self.issues = issues
        lines = [f"{source}: {path}: {msg}" if path else f"{source}: {msg}" for path, msg in issues]
        super().__init__("\n".join(lines))


def _unit(parse):
    """A pydantic field type backed by one of the unit parsers (errors keep expected/found)."""
    return PlainValidator(parse)


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


Pacing = Annotated[str, PlainValidator(_parse_pacing)]

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


HostNoise = Annotated[str | int, PlainValidator(_parse_host_noise)]


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
    engine: Literal[registry.NAMES] = registry.DEFAULT  # satcc.engines.registry
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
    encap: Annotated[int, PlainValidator(linkmodels.parse_encap)] = 0
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


# -- loading -------------------------------------------------------------------------------


def load(path: str | Path) -> Scenario:
    """Read, parse and validate a scenario file. Raises ScenarioError (or a UserError for a
    file that is not a readable regular file within satcc.limits)."""
    p = resources.scenario_path(path)
    source = str(path) if p == Path(path) else str(p)
    try:
        text = limits.read_text(p, "a scenario file")
    except UserError as e:
        raise ScenarioError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    return loads(text, source=source, default_name=p.stem)


def loads(text: str, source: str = "<string>", default_name: str = "scenario") -> Scenario:
    """Parse and validate scenario TOML text; `source` names it in error messages."""
    try:
        data = limits.toml_loads(text.removeprefix("\ufeff"), source)
    except UserError as e:
        raise ScenarioError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    return from_dict(data, source=source, default_name=default_name)


def from_dict(
    data: dict[str, Any], source: str = "<dict>", default_name: str = "scenario"
) -> Scenario:
    """Validate an already-parsed TOML document."""
    why = limits.value_depth_issue(data)
    if why is not None:  # a dict from the Python API is not checked as TOML text is
        raise ScenarioError(source, [("", why)])
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(source, [_pydantic_issue(err) for err in e.errors()]) from None
    if scenario.scenario.name is None:
        section = scenario.scenario.model_copy(update={"name": default_name})
        scenario = scenario.model_copy(update={"scenario": section})
    scenario._source = source
    issues = _semantic_issues(scenario)
    if issues:
        raise ScenarioError(source, issues)
    return scenario


def key_path(loc: tuple[Any, ...]) -> str:
    """('flow', 2, 'rate') -> 'flow[2].rate'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_TYPE_EXPECTED = {
    "bool_type": "true or false",
    "int_type": "an integer",
    "string_type": "a string",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "list_type": "an array",
    "float_type": "a number",
}


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model class that holds the last key of `loc` (for listing valid keys)."""
    model: type[BaseModel] = Scenario
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = _field_by_alias(model, part)
        if field is None:
            return None
        inner = _item_model(field.annotation)
        if inner is None:
            return None
        model = inner
    return model


def _field_by_alias(model: type[BaseModel], key: str):
    for name, field in model.model_fields.items():
        if (field.alias or name) == key:
            return field
    return None


def _item_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _item_model(arg)
        if found is not None:
            return found
    return None


def table_keys(model: type[BaseModel]) -> list[str]:
    """The TOML keys a table accepts."""
    return [field.alias or name for name, field in model.model_fields.items()]


def _pydantic_issue(err: dict[str, Any]) -> tuple[str, str]:
    loc = tuple(err["loc"])
    path = key_path(loc)
    kind = err["type"]
    found = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "value_error" and isinstance(ctx.get("error"), UnitError):
        return path, str(ctx["error"])
    if kind == "extra_forbidden":
        model = _model_at(loc)
        keys = ", ".join(table_keys(model)) if model else "a known key"
        return path, f"expected one of the keys {keys}; found an unknown key {loc[-1]!r}"
    if kind == "missing":
        if loc == ("scenario",):
            return path, "expected a [scenario] table with at least `duration`, found none"
        if loc in (("link",), ("flow",)):
            return path, f"expected at least one [[{loc[0]}]] table, found none"
        return path, f"expected the required key {loc[-1]!r}, found nothing"
    if kind == "too_short" and loc in (("link",), ("flow",)):
        return path, f"expected at least one [[{loc[0]}]] table, found none"
    if kind == "list_type" and loc in (("link",), ("flow",)):
        return path, f"expected an array of tables written [[{loc[0]}]], found {describe(found)}"
    if kind == "literal_error":
        return path, f"expected one of {ctx.get('expected')}, found {describe(found)}"
    if kind in ("model_type", "model_attributes_type") and loc == ("scenario",):
        return path, f"expected a [scenario] table, found {describe(found)}"
    expected = _TYPE_EXPECTED.get(kind)
    if expected is None:
        msg = err.get("msg", kind)
        expected = msg.removeprefix("Input should be ").removeprefix("Value error, ")
    return path, f"expected {expected}, found {describe(found)}"


# -- semantic checks -----------------------------------------------------------------------


def _semantic_issues(s: Scenario) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    sec = s.scenario
    for key, name in (
        ("scenario.name", sec.name),
        *((f"flow[{i}].name", f.name) for i, f in enumerate(s.flows)),
    ):
        why = None if name is None else limits.check_name(name)
        if why is not None:
            issues.append((key, why))
    duration_text = format_duration(sec.duration)
    if sec.duration <= 0:
        issues.append(("scenario.duration", f"expected a positive duration, found {duration_text}"))
    if not 0 <= sec.seed <= MAX_SEED:
        issues.append(("scenario.seed", f"expected an integer in 0..2^64-1, found {sec.seed}"))
    if sec.bin <= 0:
        issues.append(("scenario.bin", "expected a positive duration, found 0"))
    elif sec.duration > 0 and sec.bin > sec.duration:
        issues.append(
            (
                "scenario.bin",
                (
                    f"expected at most the duration ({duration_text}), found {format_duration(sec.bin)}"
                ),
            )
        )
    elif sec.duration > 0 and math.ceil(sec.duration / sec.bin) > MAX_BINS:
        issues.append(
            (
                "scenario.bin",
                (
                    f"expected at most {MAX_BINS} bins over the duration, found "
                    f"{math.ceil(sec.duration / sec.bin)} bins of {format_duration(sec.bin)}"
                ),
            )
        )

    pairs: dict[frozenset[str], int] = {}
    for i, link in enumerate(s.links):
        if link.a == link.b:
            issues.append(
                (f"link[{i}].b", f"expected a node other than a ({link.a!r}), found {link.b!r}")
            )
            continue
        issues.extend(linkmodels.link_issues(i, link, Path(s.source).parent))
        pair = frozenset((link.a, link.b))
        if pair in pairs:
            issues.append(
                (
                    f"link[{i}]",
                    (
                        f"expected at most one link between {link.a!r} and {link.b!r}, "
                        f"found a second one (the first is link[{pairs[pair]}])"
                    ),
                )
            )
        else:
            pairs[pair] = i
        for key in ("rate", "rate_ba"):
            if getattr(link, key) == 0:
                issues.append((f"link[{i}].{key}", "expected a positive rate, found 0 bit/s"))
        for key in ("ecn_threshold", "ecn_threshold_ba"):
            if getattr(link, key) == 0:
                issues.append((f"link[{i}].{key}", "expected at least 1 packet, found 0"))
        if not 1 <= link.hz <= 1_000_000:
            issues.append((f"link[{i}].hz", f"expected a tick rate in 1..1000000, found {link.hz}"))
        if link.service == "tick" and link.model is not None:
            issues.append(
                (
                    f"link[{i}].service",
                    'expected "exact" on a link with [link.model] (tick service serves constant links only), found "tick"',
                )
            )

    nodes = set(s.nodes)
    adjacency: dict[str, set[str]] = {n: set() for n in nodes}
    for link in s.links:
        adjacency[link.a].add(link.b)
        adjacency[link.b].add(link.a)
    names = sorted(nodes)
    if s.scenario.vpn is not None and s.scenario.vpn not in nodes:
        issues.append(
            (
                "scenario.vpn",
                f"expected a node named in a link ({', '.join(names)}), found {s.scenario.vpn!r}",
            )
        )
    known_ccas = list(_native.cc_names())
    total = 0
    for i, flow in enumerate(s.flows):
        p = f"flow[{i}]"
        for key, node in (("from", flow.from_), ("to", flow.to)):
            if node not in nodes:
                issues.append(
                    (
                        f"{p}.{key}",
                        (f"expected a node named in a link ({', '.join(names)}), found {node!r}"),
                    )
                )
        if flow.from_ in nodes and flow.to in nodes:
            if flow.from_ == flow.to:
                issues.append(
                    (
                        f"{p}.to",
                        (f"expected a node other than from ({flow.from_!r}), found {flow.to!r}"),
                    )
                )
            elif flow.to not in _reachable(adjacency, flow.from_):
                issues.append(
                    (
                        f"{p}.to",
                        (
                            f"expected a node connected to {flow.from_!r} by links, "
                            f"found {flow.to!r}, which is not"
                        ),
                    )
                )
        if flow.cca not in known_ccas:
            issues.append(
                (f"{p}.cca", f"expected one of {', '.join(known_ccas)}, found {flow.cca!r}")
            )
        else:
            try:
                _native.cc_check(flow.cca, normalize_cc(flow.cc))
            except ValueError as e:
                issues.append(_cc_issue(p, flow.cca, str(e), flow.cc))
        if flow.count < 1:
            issues.append((f"{p}.count", f"expected an integer >= 1, found {flow.count}"))
        total += max(flow.count, 0)
        last_start = flow.start + max(flow.count - 1, 0) * flow.stagger
        if sec.duration > 0 and last_start >= sec.duration:
            key = "start" if flow.count <= 1 or flow.stagger == 0 else "stagger"
            issues.append(
                (
                    f"{p}.{key}",
                    (
                        f"expected flows to start before the end of the run "
                        f"({duration_text}), found a start at {format_duration(last_start)}"
                    ),
                )
            )
        if flow.size is not None and flow.size < 1:
            issues.append((f"{p}.size", "expected at least 1 byte, found 0 B"))
        if not MIN_MSS <= flow.mss <= MAX_MSS:
            issues.append(
                (
                    f"{p}.mss",
                    (f"expected an integer in {MIN_MSS}..{MAX_MSS} bytes, found {flow.mss}"),
                )
            )
        elif _rwnd(flow) < flow.mss:
            issues.append(
                (
                    f"{p}.rwnd",
                    (f"expected at least one segment (mss = {flow.mss} B), found {flow.rwnd} B"),
                )
            )
        if flow.initial_cwnd < 1:
            issues.append(
                (f"{p}.initial_cwnd", f"expected an integer >= 1, found {flow.initial_cwnd}")
            )
        if flow.min_rto <= 0:
            issues.append((f"{p}.min_rto", "expected a positive duration, found 0"))
        issues.extend(linkmodels.flow_issues(p, flow))
        issues.extend(_app_issues(p, flow))
    if total > MAX_FLOWS:
        issues.append(("flow", f"expected at most {MAX_FLOWS} flows after count, found {total}"))
    issues.extend(_seqack_issues(s, total))
    return issues


APP_KINDS = ("bulk", "onoff", "requests")
_APP_KEYS = {
    "bulk": ("kind",),
    "onoff": ("kind", "on", "off"),
    "requests": ("kind", "size", "every", "at"),
}


def _app(flow: Flow) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    """A flow's `app` table as the resolver takes it (None: bulk, today's default) and the
    problems found, as (key under `app`, message)."""
    t = flow.app
    if t is None:
        return None, []
    kind = t.get("kind")
    if kind not in APP_KINDS:
        found = "nothing" if kind is None else describe(kind)
        return None, [("kind", f"expected one of {', '.join(map(repr, APP_KINDS))}, found {found}")]
    issues = [
        (
            k,
            f"expected one of the keys {', '.join(_APP_KEYS[kind])} for kind {kind!r}; found an unknown key {k!r}",
        )
        for k in t
        if k not in _APP_KEYS[kind]
    ]

    def get(key: str, parse, positive: bool = True):
        if key not in t:
            return None
        try:
            v = parse(t[key])
        except UnitError as e:
            issues.append((key, str(e)))
            return None
        if positive and v <= 0:
            issues.append((key, f"expected a positive value, found {describe(t[key])}"))
            return None
        return v

    if kind == "bulk":
        return None, issues
    if kind == "onoff":
        on, off = get("on", parse_duration), get("off", parse_duration)
        for key, v in (("on", on), ("off", off)):
            if key not in t:
                issues.append((key, 'expected a duration (e.g. "1 s"), found nothing'))
        if issues:
            return None, issues
        return {"kind": "onoff", "on_ns": on, "off_ns": off}, []
    size = get("size", parse_size)
    if "size" not in t:
        issues.append(("size", 'expected a size (e.g. "100 kB"), found nothing'))
    out: dict[str, Any] = {"kind": "requests", "bytes": size}
    if ("every" in t) == ("at" in t):
        issues.append(
            (
                "every",
                "expected exactly one of every and at, found "
                + ("both" if "every" in t else "neither"),
            )
        )
    elif "every" in t:
        out["every_ns"] = get("every", parse_duration)
    else:
        at = t["at"]
        if not isinstance(at, list) or not at:
            issues.append(("at", f"expected a non-empty array of durations, found {describe(at)}"))
        else:
            times = []
            for k, v in enumerate(at):
                try:
                    times.append(parse_duration(v))
                except UnitError as e:
                    issues.append((f"at[{k}]", str(e)))
            if len(times) == len(at) and times != sorted(times):
                issues.append(("at", "expected ascending times, found them out of order"))
            out["at_ns"] = times
    return (None, issues) if issues else (out, [])


def _app_issues(p: str, flow: Flow) -> list[tuple[str, str]]:
    """Problems of a flow's `app` and how it combines with its other keys."""
    app, issues = _app(flow)
    out = [(f"{p}.app.{k}", m) for k, m in issues]
    if app is not None:
        kind = app["kind"]
        for key, bad, what in (
            ("proto", flow.proto != "tcp", "a TCP flow"),
            ("size", flow.size is not None, "no size (the application decides what is written)"),
            (
                "metrics_save",
                flow.metrics_save,
                "false (the cache is written when a transfer closes)",
            ),
        ):
            if bad:
                out.append((f"{p}.{key}", f"expected {what} with app kind {kind!r}"))
    return out


def _reachable(adjacency: dict[str, set[str]], start: str) -> set[str]:
    seen = {start}
    todo = deque([start])
    while todo:
        for nxt in adjacency[todo.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _cc_issue(prefix: str, cca: str, message: str, params: dict[str, Any]) -> tuple[str, str]:
    """Turn the registry's "cc.beta: expected ..., found ..." into a key path and a message."""
    head, sep, rest = message.partition(": ")
    if sep and (head == "cc" or head.startswith("cc.")):
        path, text = f"{prefix}.{head}", rest
    else:
        head, path, text = "cc", f"{prefix}.cc", message
    if "expected" not in text:
        text = f"expected parameters valid for {cca}, found: {text}"
    elif "found" not in text:
        key = head.removeprefix("cc").removeprefix(".")
        value = params.get(key, params) if key else params
        text = f"{text}, found {describe(value)}"
    return path, text


def normalize_cc(params: dict[str, Any]) -> dict[str, Any]:
    """CCA parameters in the contract's types: integers become floats (TOML `3` == `3.0`),
    arrays of pairs become lists of [float, float]; anything else is passed on for the
    registry to reject with its own message."""
    out: dict[str, Any] = {}
    for key in sorted(params):
        value = params[key]
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        elif isinstance(value, list):
            value = [
                [float(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in pair]
                if isinstance(pair, list)
                else pair
                for pair in value
            ]
        out[key] = value
    return out


# The receive buffer's accounting is the simulator's (crates/satcc-sim/src/tcp/receiver.rs),
# asked through the native module: the packet's `skb->truesize`, the full-segment
# `scaling_ratio`, the buffer that offers a fixed window, the largest window offered.
rx_truesize = _native.rx_truesize
scaling_ratio = _native.scaling_ratio
fixed_rcvbuf_bytes = _native.fixed_rcvbuf_bytes


def receive_window_bytes(flow: dict[str, Any]) -> int:
    """The largest window a resolved flow's receiver offers (deviation 2)."""
    return _native.receive_window_bytes(
        int(flow["rwnd_bytes"]),
        flow["mss"],
        flow["timestamps"],
        flow.get("rcvbuf_autotune", True),
        flow["window_scaling"],
    )


def _rwnd(flow: Flow) -> int:
    return flow.rwnd


# -- resolution ----------------------------------------------------------------------------


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


def _direction(rate: int, delay: int, loss: float, queue: dict, ecn: int | None) -> dict[str, Any]:
    return {
        "rate_bps": rate,
        "delay_ns": delay,
        "loss": loss,
        "queue": dict(queue),
        "ecn_threshold_pkts": ecn,
    }


def _seqack_issues(s: Scenario, total: int) -> list[tuple[str, str]]:
    sa = s.scenario.seqack
    if sa is None:
        return []
    out = []
    if not 0 <= sa.flow < total:
        out.append(
            ("scenario.seqack.flow", f"expected a flow id in 0..{total - 1}, found {sa.flow}")
        )
    else:
        origin = expand_flows(s)[sa.flow]
        if s.flows[origin.scenario_flow].proto != "tcp":
            out.append(("scenario.seqack.flow", f"expected a TCP flow, flow {sa.flow} is UDP"))
    to = s.scenario.duration if sa.to is None else sa.to
    if not 0 <= sa.from_ < to <= s.scenario.duration:
        out.append(
            (
                "scenario.seqack.to",
                (
                    f"expected 0 <= from < to <= the run's "
                    f"{format_duration(s.scenario.duration)}, found from "
                    f"{format_duration(sa.from_)}, to {format_duration(to)}"
                ),
            )
        )
    if not 1 <= sa.max_rows <= MAX_SEQACK_ROWS:
        out.append(
            (
                "scenario.seqack.max_rows",
                f"expected an integer in 1..{MAX_SEQACK_ROWS}, found {sa.max_rows}",
            )
        )
    return out


def resolve(s: Scenario, seed_override: int | None = None) -> dict[str, Any]:
    """The resolved scenario every engine takes (`_native.pyi` RESOLVED): satcc-core's one
    resolver (`_native.resolve`) checks `spec(s)` as the simulator would and adds `routes`
    (paths, queue limits with "N BDP" sized)."""
    return _native_resolve(s, spec(s, seed_override))


def spec(s: Scenario, seed_override: int | None = None) -> dict[str, Any]:
    """The resolver's input (`_native.pyi` SCENARIO): integers in ns, bit/s, bytes; defaults
    filled; `count` expanded; nodes as indices."""
    seed = s.scenario.seed if seed_override is None else seed_override
    if not 0 <= seed <= MAX_SEED:
        raise UserError(f"--seed: expected an integer in 0..2^64-1, found {seed}")
    index = {name: i for i, name in enumerate(s.nodes)}
    links = []
    for link in s.links:
        if link.model is not None:
            ab, ba = linkmodels.resolve_link(
                link, Path(s.source).parent, parse_queue(DEFAULT_QUEUE), s.scenario.duration
            )
        else:
            ab = _direction(link.rate, link.delay, link.loss, link.queue, link.ecn_threshold)
            ba = _direction(
                link.rate if link.rate_ba is None else link.rate_ba,
                link.delay if link.delay_ba is None else link.delay_ba,
                link.loss if link.loss_ba is None else link.loss_ba,
                link.queue if link.queue_ba is None else link.queue_ba,
                link.ecn_threshold if link.ecn_threshold_ba is None else link.ecn_threshold_ba,
            )
        # Optional key: present only when set, so configs without jitter are unchanged.
        for d, j in (
            (ab, link.jitter),
            (ba, link.jitter if link.jitter_ba is None else link.jitter_ba),
        ):
            if j:
                d["jitter_ns"] = j
            if link.service == "tick":
                d["tick_ns"] = 1_000_000_000 // link.hz
        links.append({"a": index[link.a], "b": index[link.b], "ab": ab, "ba": ba})
    flows = []
    for origin in expand_flows(s):
        f = s.flows[origin.scenario_flow]
        flows.append(
            {
                "id": origin.id,
                "src": index[f.from_],
                "dst": index[f.to],
                "cca": f.cca,
                "cc": normalize_cc(f.cc),
                "start_ns": f.start + origin.copy * f.stagger,
                "size_bytes": f.size,
                "mss": f.mss,
                "sack": f.sack,
                "timestamps": f.timestamps,
                "window_scaling": f.window_scaling,
                "rwnd_bytes": _rwnd(f),
                "rcvbuf_autotune": f.rcvbuf_autotune,
                "ecn": f.ecn,
                "initial_cwnd": f.initial_cwnd,
                "pacing": f.pacing,
                "delayed_ack": f.delayed_ack,
                "min_rto_ns": f.min_rto,
                "sndbuf_bytes": f.sndbuf,
                "metrics_save": f.metrics_save,
                **linkmodels.flow_extras(f),
            }
        )
        app, _ = _app(f)
        if app is not None:  # absent = bulk, so existing scenarios keep their hash
            flows[-1]["app"] = app
        if not f.slow_start_after_idle:  # absent = on, Linux's default
            flows[-1]["slow_start_after_idle"] = False
        if f.nodelay:  # absent = Nagle on, Linux's default
            flows[-1]["nodelay"] = True
    config = {
        "name": s.name,
        "seed": seed,
        "duration_ns": s.scenario.duration,
        "bin_ns": s.scenario.bin,
        "nodes": s.nodes,
        "links": links,
        "flows": flows,
    }
    noise = host_noise_quantiles(s.scenario.host_noise)
    if noise is not None:  # absent = hosts answer instantly
        config["host_noise_quantiles_ns"] = noise
    if s.scenario.cc_state:  # absent = not recorded
        config["cc_state"] = True
    if (sa := s.scenario.seqack) is not None:  # absent = no trace
        config["seqack"] = {
            "flow": sa.flow,
            "from_ns": sa.from_,
            "to_ns": s.scenario.duration if sa.to is None else sa.to,
            "max_rows": sa.max_rows,
        }
    return config


def host_noise_quantiles(value: str | int) -> dict[str, list[list[float | int]]] | None:
    """The resolved form of `host_noise`: {"sender": [[probability, ns], ...], "receiver":
    [...]} (quantile points of each turnaround) or None."""
    if value == "off" or value == 0:
        return None
    if value == "kernel":
        k = _native.host_noise_kernel()
        return {side: [[float(p), int(ns)] for p, ns in k[side]] for side in ("sender", "receiver")}
    uniform = [[0.0, 0], [1.0, int(value)]]
    return {"sender": uniform, "receiver": uniform}


def _native_resolve(s: Scenario, config: dict[str, Any]) -> dict[str, Any]:
    """satcc-core's resolver on the scenario layer's dictionary; its refusals become scenario
    errors naming the key (`satcc check` and every engine accept exactly what `satcc sim`
    runs: one validation)."""
    try:
        return _native.resolve(config)
    except (ValueError, OverflowError, KeyError) as e:
        key, sep, why = str(e).strip("'\"").partition(": ")
        issue = (
            (key, f"expected a value the simulator accepts, found one it refuses: {why}")
            if sep and " " not in key
            else ("", f"the simulator refuses the scenario: {e}")
        )
        raise ScenarioError(s.source, [issue]) from None


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, ASCII, no NaN: the same object always gives the same text."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


_PATH_KEYS = ("mahimahi_path", "delay_csv_path")  # files that count by their digests


def scenario_hash(config: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a resolved config, without its seed (replicates of a
    scenario share the hash; the seed is recorded beside it) and without its routes (derived
    from the rest). A trace file counts by its contents (`opportunities_digest`), not by
    where it lies (`mahimahi_path`), and so does a delay CSV (`series_digest`,
    `delay_csv_path`)."""
    unseeded = {k: v for k, v in config.items() if k not in ("seed", "routes")}
    if "links" in unseeded:
        unseeded["links"] = [
            {
                k: (
                    {**d, "model": {m: x for m, x in d["model"].items() if m not in _PATH_KEYS}}
                    if isinstance(d, dict) and isinstance(d.get("model"), dict)
                    else d
                )
                for k, d in link.items()
            }
            for link in unseeded["links"]
        ]
    return hashlib.sha256(canonical_json(unseeded).encode("ascii")).hexdigest()
