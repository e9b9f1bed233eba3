"""A field plan: what `satcc field` runs against the user's server, and in which order.

    [field]                      (a plan file; the flags of `satcc field` build the same table)
    name = "study001"            the campaign's name (the store refuses another plan's name)
    server = "vps.example:5201"  HOST[:PORT] of the user's `iperf3 -s` (`--server` overrides)
    ccas = ["cubic", "bbr"]      kernel congestion controls (`iperf3 -C`)
    directions = ["up", "down"]  up: this host sends; down: the server sends (`iperf3 -R`)
    repetitions = 1              runs of each combination per round
    duration = "15 s"            each run's length (`iperf3 -t`)
    rounds = 1                   how many times the whole set runs
    interval = "1 h"             from one round's start to the next's (0: back to back)
    at = ["09:00", "12:00"]      instead of `interval`: rounds start at these UTC times of day
    order = "fixed"              fixed: as listed (CCA, then direction, then MSS, then
                                 repetition); shuffled: a permutation per round drawn from `seed`
    seed = 1
    gap = "2 s"                  pause between two runs of a round
    mss = [1460]                 TCP runs at each MSS (`iperf3 -M`); empty: the kernel's
    udp = ["10 Mbit/s"]          UDP runs at these rates, per direction, after the TCP runs
    align = "none"               or "starlink": each run starts `align_offset` after a
                                 reconfiguration boundary (:12/:27/:42/:57 UTC; satcc.field.clock)
    align_offset = "1 s"
    capture = "auto"             tcpdump when root ("auto"), always (true) or never (false)
    ping_count = 10              idle ping before each run
    ping_interval = "0.2 s"      (also the interval of the ping during the run; down to
                                 "10 ms" as root: iputils' floor without root is 0.2 s)
    port = 5201                  the server's port when `server` names none
    parallel = 1                 iperf3 -P: streams per run
    bidir = false                iperf3 --bidir: both directions at once
    bitrate = ""                 iperf3 -b for TCP runs ('50 Mbit/s'; "": unlimited)
    iperf3_args = []             further iperf3 arguments, passed as given ("-w", "4M")

Every run gets a run id that names its round, position, CCA and direction; the expanded plan
(the order included) is the campaign index, so a resumed plan keeps its order. `estimate(p)`
gives what a plan costs before it runs: its time (idle pings, runs, gaps, rounds) and the data
it moves (`satcc field --print`).
"""

from __future__ import annotations

import itertools
import random
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from satcc import _native
from satcc.errors import UserError
from satcc.units import UnitError, parse_duration, parse_rate

DIRECTIONS = ("up", "down")
ORDERS = ("fixed", "shuffled")
ALIGNS = ("none", "starlink")
DEFAULT_PORT = 5201
MAX_RUNS = 100_000
_CCA_RE = re.compile(r"^[a-z][a-z0-9_]{0,15}$")  # TCP_CA_NAME_MAX = 16
# an MSS a field plan may ask for: Linux TCP_MIN_MSS (satcc-core scenario.rs) .. a jumbo frame's
_MIN_MSS = _native.scenario_defaults()["min_mss"]
MAX_FIELD_MSS = 9000
_TOD_RE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
KEYS = {
    "name": "a name",
    "server": "HOST[:PORT]",
    "ccas": "a list of congestion control names",
    "directions": 'a list of "up" / "down"',
    "repetitions": "an integer >= 1",
    "duration": "a duration like '15 s'",
    "rounds": "an integer >= 1",
    "interval": "a duration like '1 h'",
    "at": "a list of UTC times of day 'HH:MM'",
    "order": '"fixed" or "shuffled"',
    "seed": "an integer",
    "gap": "a duration",
    "mss": "a list of MSS values in bytes",
    "udp": "a list of rates like '10 Mbit/s'",
    "align": '"none" or "starlink"',
    "align_offset": "a duration below 15 s",
    "capture": '"auto", true or false',
    "ping_count": "an integer >= 0",
    "ping_interval": "a duration >= 10 ms (below 0.2 s ping needs root)",
    "port": "a port number",
    "parallel": "an integer in 1..128 (iperf3 -P)",
    "bidir": "true or false (iperf3 --bidir)",
    "bitrate": "a rate like '50 Mbit/s' for TCP runs (iperf3 -b), or \"\" for none",
    "iperf3_args": "a list of further iperf3 arguments (strings)",
    "description": "text",
}
MAX_PARALLEL = 128  # iperf3's MAX_STREAMS
PING_FLOOR_S = 0.01  # the plan's floor; iputils' own without root (checked before a run)
PING_USER_FLOOR_S = 0.2
# iperf3 arguments satcc sets itself (iperf3_cmd): a pass-through may not repeat them
IPERF3_OWN_ARGS = frozenset(
    [
        "-c",
        "--client",
        "-s",
        "--server",
        "-p",
        "--port",
        "-t",
        "--time",
        "-i",
        "--interval",
        "-J",
        "--json",
        "-u",
        "--udp",
        "-b",
        "--bitrate",
        "--bandwidth",
        "-C",
        "--congestion",
        "-M",
        "--set-mss",
        "-R",
        "--reverse",
        "-P",
        "--parallel",
        "--bidir",
        "--connect-timeout",
        "--logfile",
        "-n",
        "--bytes",
        "-k",
        "--blockcount",
    ]
)


@dataclass
class FieldPlan:
    name: str = "field"
    server: str | None = None
    ccas: list[str] = field(default_factory=lambda: ["cubic"])
    directions: list[str] = field(default_factory=lambda: ["up"])
    repetitions: int = 1
    duration: str = "15 s"
    rounds: int = 1
    interval: str = "0 s"
    at: list[str] = field(default_factory=list)
    order: str = "fixed"
    seed: int = 1
    gap: str = "2 s"
    mss: list[int] = field(default_factory=list)
    udp: list[str] = field(default_factory=list)
    align: str = "none"
    align_offset: str = "1 s"
    capture: str | bool = "auto"
    ping_count: int = 10
    ping_interval: str = "0.2 s"
    port: int = DEFAULT_PORT
    parallel: int = 1
    bidir: bool = False
    bitrate: str = ""
    iperf3_args: list[str] = field(default_factory=list)
    description: str = ""

    # -- derived -----------------------------------------------------------------------

    @property
    def duration_s(self) -> float:
        return parse_duration(self.duration) / 1e9

    @property
    def interval_s(self) -> float:
        return parse_duration(self.interval) / 1e9

    @property
    def gap_s(self) -> float:
        return parse_duration(self.gap) / 1e9

    @property
    def align_offset_s(self) -> float:
        return parse_duration(self.align_offset) / 1e9

    @property
    def ping_interval_s(self) -> float:
        return parse_duration(self.ping_interval) / 1e9

    def host_port(self) -> tuple[str, int]:
        if not self.server:
            raise UserError("server: expected HOST[:PORT] (the plan's `server` or --server)")
        return split_server(self.server, self.port)

    def doc(self) -> dict[str, Any]:
        return asdict(self)

    def iperf3_options(self, kind: str) -> list[str]:
        """The iperf3 arguments the plan adds to a run of `kind` ("tcp" or "udp"): -P,
        --bidir, a TCP run's -b, then the pass-through arguments."""
        out: list[str] = []
        if self.parallel > 1:
            out += ["-P", str(self.parallel)]
        if self.bidir:
            out.append("--bidir")
        if kind == "tcp" and self.bitrate:
            out += ["-b", str(parse_rate(self.bitrate))]
        return out + list(self.iperf3_args)


def split_server(text: str, default_port: int = DEFAULT_PORT) -> tuple[str, int]:
    """ "host", "host:port", "[v6]:port" or a bare IPv6 address -> (host, port)."""
    t = text.strip()
    m = re.match(r"^\[([0-9A-Fa-f:.]+)\](?::(\d+))?$", t)
    if m:
        host, port = m.group(1), m.group(2)
    elif t.count(":") == 1:
        host, port = t.split(":")
    else:
        host, port = t, None
    if not host or any(c.isspace() for c in host):
        raise UserError(f"server: expected HOST[:PORT], found {text!r}")
    if port is None:
        return host, default_port
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UserError(f"server: expected a port 1..65535 after ':', found {text!r}")
    return host, int(port)


def _fail(where: str, key: str, expected: str, found: Any) -> UserError:
    return UserError(f"{where}: {key}: expected {expected}, found {found!r}")


def validate(p: FieldPlan, where: str) -> FieldPlan:
    """Check every key; raise UserError naming the file (or flag) and the key."""

    def dur(key: str, minimum_s: float = 0.0, maximum_s: float | None = None) -> None:
        v = getattr(p, key)
        try:
            s = parse_duration(v) / 1e9
        except UnitError as e:  # the grammar's words (one rule for bare numbers)
            raise UserError(f"{where}: {key}: {e}") from None
        if s < minimum_s or (maximum_s is not None and s >= maximum_s):
            raise _fail(where, key, KEYS[key], v)

    if not isinstance(p.name, str) or not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", p.name):
        raise _fail(where, "name", "letters, digits, '.', '_' or '-' (up to 64)", p.name)
    if p.server is not None:
        if not isinstance(p.server, str):
            raise _fail(where, "server", KEYS["server"], p.server)
        try:
            split_server(p.server, DEFAULT_PORT)
        except UserError as e:
            raise UserError(f"{where}: {e}") from None
    if (
        not isinstance(p.ccas, list)
        or not p.ccas
        or not all(isinstance(c, str) and _CCA_RE.match(c) for c in p.ccas)
    ):
        raise _fail(where, "ccas", KEYS["ccas"] + " (lower case, up to 15 characters)", p.ccas)
    if len(set(p.ccas)) != len(p.ccas):
        raise _fail(where, "ccas", "each congestion control once", p.ccas)
    if (
        not isinstance(p.directions, list)
        or not p.directions
        or not all(d in DIRECTIONS for d in p.directions)
        or len(set(p.directions)) != len(p.directions)
    ):
        raise _fail(where, "directions", KEYS["directions"], p.directions)
    for key in ("repetitions", "rounds"):
        v = getattr(p, key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise _fail(where, key, KEYS[key], v)
    if not isinstance(p.seed, int) or isinstance(p.seed, bool):
        raise _fail(where, "seed", KEYS["seed"], p.seed)
    if not isinstance(p.ping_count, int) or isinstance(p.ping_count, bool) or p.ping_count < 0:
        raise _fail(where, "ping_count", KEYS["ping_count"], p.ping_count)
    if not isinstance(p.port, int) or isinstance(p.port, bool) or not 0 < p.port < 65536:
        raise _fail(where, "port", KEYS["port"], p.port)
    dur("duration", 1.0)
    dur("interval")
    dur("gap")
    dur("ping_interval", PING_FLOOR_S)
    dur("align_offset", 0.0, 15.0)
    if p.order not in ORDERS:
        raise _fail(where, "order", KEYS["order"], p.order)
    if p.align not in ALIGNS:
        raise _fail(where, "align", KEYS["align"], p.align)
    if p.capture not in ("auto", True, False):
        raise _fail(where, "capture", KEYS["capture"], p.capture)
    if not isinstance(p.at, list) or not all(isinstance(t, str) and _TOD_RE.match(t) for t in p.at):
        raise _fail(where, "at", KEYS["at"], p.at)
    if p.at and parse_duration(p.interval) != 0:
        raise UserError(f"{where}: at: expected either `at` or `interval`, found both")
    if not isinstance(p.mss, list) or not all(
        isinstance(m, int) and not isinstance(m, bool) and _MIN_MSS <= m <= MAX_FIELD_MSS
        for m in p.mss
    ):
        raise _fail(where, "mss", KEYS["mss"] + f" ({_MIN_MSS}..{MAX_FIELD_MSS})", p.mss)
    if not isinstance(p.udp, list):
        raise _fail(where, "udp", KEYS["udp"], p.udp)
    for r in p.udp:
        try:
            if parse_rate(r) <= 0:
                raise ValueError
        except (UnitError, ValueError):
            raise _fail(where, "udp", KEYS["udp"], r) from None
    if (
        not isinstance(p.parallel, int)
        or isinstance(p.parallel, bool)
        or not 1 <= p.parallel <= MAX_PARALLEL
    ):
        raise _fail(where, "parallel", KEYS["parallel"], p.parallel)
    if not isinstance(p.bidir, bool):
        raise _fail(where, "bidir", KEYS["bidir"], p.bidir)
    if p.bidir and p.directions != ["up"]:
        raise UserError(
            f'{where}: bidir: expected directions = ["up"] with bidir (iperf3 --bidir runs '
            f"both directions at once and refuses -R), found {p.directions!r}"
        )
    if not isinstance(p.bitrate, str):
        raise _fail(where, "bitrate", KEYS["bitrate"], p.bitrate)
    if p.bitrate:
        try:
            if parse_rate(p.bitrate) <= 0:
                raise ValueError
        except (UnitError, ValueError):
            raise _fail(where, "bitrate", KEYS["bitrate"], p.bitrate) from None
    if not isinstance(p.iperf3_args, list) or not all(isinstance(a, str) for a in p.iperf3_args):
        raise _fail(where, "iperf3_args", KEYS["iperf3_args"], p.iperf3_args)
    own = [a for a in p.iperf3_args if a.split("=", 1)[0] in IPERF3_OWN_ARGS]
    if own:
        raise _fail(
            where,
            "iperf3_args",
            "arguments satcc does not set itself (use the plan's keys: duration, udp, "
            "bitrate, parallel, bidir, mss, directions, ccas)",
            own[0],
        )
    if not isinstance(p.description, str):
        raise _fail(where, "description", KEYS["description"], p.description)
    n = len(expand(p))
    if n > MAX_RUNS:
        raise UserError(f"{where}: expected at most {MAX_RUNS} runs, the plan makes {n}")
    return p


def load(path: Path) -> tuple[FieldPlan, str]:
    """Read and check a plan file -> (plan, its text)."""
    from satcc import limits

    # through satcc.limits: a FIFO blocked here for good, /dev/zero was read until memory ran out
    text = limits.read_text(path, "a field plan (TOML)")
    why = limits.toml_depth_issue(text)
    if why is not None:
        raise limits.LimitError(f"{path}: {why}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: expected TOML, found a syntax error: {e}") from None
    return from_doc(doc, str(path)), text


def from_doc(doc: dict[str, Any], where: str) -> FieldPlan:
    extra = sorted(set(doc) - {"field"})
    if extra:
        raise UserError(f"{where}: {extra[0]}: unknown table; a plan has one [field] table")
    t = doc.get("field")
    if not isinstance(t, dict):
        raise UserError(f"{where}: field: expected a [field] table, found none")
    unknown = sorted(set(t) - set(KEYS))
    if unknown:
        raise UserError(
            f"{where}: field.{unknown[0]}: unknown key (expected one of {', '.join(KEYS)})"
        )
    return validate(FieldPlan(**t), where)


def to_toml(p: FieldPlan) -> str:
    """The plan as a plan file (what the flags built; stored as campaign.toml)."""
    import json

    lines = ["[field]"]
    for k, v in p.doc().items():
        if isinstance(v, bool):
            lines.append(f"{k} = {'true' if v else 'false'}")
        elif isinstance(v, (int, str)):
            lines.append(f"{k} = {json.dumps(v)}")
        elif isinstance(v, list):
            lines.append(f"{k} = [{', '.join(json.dumps(x) for x in v)}]")
    return "\n".join(lines) + "\n"


# -- expansion -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunItem:
    """One planned run."""

    run_id: str
    round: int
    position: int  # in its round
    point: int  # the combination (same in every round)
    repetition: int  # round * repetitions + rep
    kind: str  # "tcp" | "udp"
    cca: str  # "udp" for UDP runs (the flows table's convention)
    direction: str
    mss: int | None
    udp_rate: str | None

    def params(self) -> dict[str, Any]:
        return {
            "cca": self.cca,
            "direction": self.direction,
            "round": self.round,
            "position": self.position,
            "kind": self.kind,
            "mss": self.mss,
            "udp_rate": self.udp_rate,
        }

    def index_doc(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "engine": "field",
            "seed": None,
            "repetition": self.repetition,
            "point": self.point,
            "params": self.params(),
        }

    def label(self) -> str:
        what = f"udp {self.udp_rate}" if self.kind == "udp" else self.cca
        mss = f" mss {self.mss}" if self.mss else ""
        return f"{what} {self.direction}{mss}"


PARAM_COLUMNS = ["cca", "direction", "round", "position", "kind", "mss", "udp_rate"]


def combinations(p: FieldPlan) -> list[tuple[str, str, str, int | None, str | None]]:
    """(kind, cca, direction, mss, udp_rate) in the fixed order."""
    out: list[tuple[str, str, str, int | None, str | None]] = []
    for cca, d, m in itertools.product(p.ccas, p.directions, p.mss or [None]):
        out.append(("tcp", cca, d, m, None))
    for rate, d in itertools.product(p.udp, p.directions):
        out.append(("udp", "udp", d, None, rate))
    return out


def expand(p: FieldPlan) -> list[RunItem]:
    """Every run, round by round, in the plan's order (shuffled: `random.Random(seed, round)`,
    so the same plan always gives the same order)."""
    combos = combinations(p)
    items: list[RunItem] = []
    for r in range(p.rounds):
        slots = [(point, rep) for point in range(len(combos)) for rep in range(p.repetitions)]
        if p.order == "shuffled":
            random.Random(f"{p.seed}:{r}").shuffle(slots)
        for pos, (point, rep) in enumerate(slots):
            kind, cca, d, mss, rate = combos[point]
            tag = cca if kind == "tcp" else f"udp{_slug(rate or '')}"
            if mss:
                tag += f"-mss{mss}"
            items.append(
                RunItem(
                    run_id=f"r{r:03d}-{pos:03d}-{tag}-{d}-{rep}",
                    round=r,
                    position=pos,
                    point=point,
                    repetition=r * p.repetitions + rep,
                    kind=kind,
                    cca=cca,
                    direction=d,
                    mss=mss,
                    udp_rate=rate,
                )
            )
    return items


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "", text)


# -- what a plan costs -------------------------------------------------------------------------

DAY_S = 86400.0
STARLINK_EPOCH_S = 15.0  # an aligned start waits up to one reconfiguration interval
TCP_REFERENCE_BPS = (20e6, 100e6)  # TCP moves what the path allows: the data at these rates
CAPTURE_RECORD_BYTES = 16  # a pcap record header, before the snapped packet
PACKET_BYTES = 1500  # the capture's packets: a full MTU for the estimate


@dataclass(frozen=True)
class Estimate:
    runs: int
    run_s: float  # one round's length at most (idle pings, alignment waits, runs, gaps)
    total_s: float  # the plan from the first run's start to the last run's end
    udp_bytes: float  # the UDP runs' data (their rates x durations)
    tcp_run_s: float  # seconds of TCP sending (runs x duration x directions at once)
    tcp_bitrate_bytes: float | None  # with a TCP `bitrate`: the data it allows, else None

    def tcp_bytes_at(self, bps: float) -> float:
        return bps / 8 * self.tcp_run_s

    def lines(self, snaplen: int | None = None) -> list[str]:
        """The estimate for people (comments of `satcc field --print`)."""
        out = [
            (
                f"{self.runs} runs; each round at most {format_span(self.run_s)}; "
                f"the plan takes about {format_span(self.total_s)}"
            ),
        ]
        data = []
        if self.tcp_run_s:
            if self.tcp_bitrate_bytes is not None:
                data.append(f"TCP {format_bytes(self.tcp_bitrate_bytes)} (at the bitrate)")
            else:
                at = ", ".join(
                    f"{format_bytes(self.tcp_bytes_at(b))} at {b / 1e6:g} Mbit/s"
                    for b in TCP_REFERENCE_BPS
                )
                data.append(f"TCP {self.tcp_run_s:,.0f} s of sending: {at}")
        if self.udp_bytes:
            data.append(f"UDP {format_bytes(self.udp_bytes)}")
        if data:
            out.append("data: " + "; ".join(data))
        if snaplen and self.tcp_run_s:
            frac = (snaplen + CAPTURE_RECORD_BYTES) / PACKET_BYTES
            ref = (
                self.tcp_bitrate_bytes
                if self.tcp_bitrate_bytes is not None
                else self.tcp_bytes_at(TCP_REFERENCE_BPS[-1])
            )
            out.append(
                f"captures (root, {snaplen}-byte snaplen): about "
                f"{format_bytes((ref + self.udp_bytes) * frac)}"
                + ("" if self.tcp_bitrate_bytes is not None else " at 100 Mbit/s")
            )
        return out


def estimate(p: FieldPlan) -> Estimate:
    """What the plan costs, computed from its keys: per run the idle ping (ping_count x
    ping_interval), the wait for a Starlink boundary (up to 15 s when aligned), the run and
    the gap before the next; rounds start `interval` apart (or at the `at` times, spread over
    the day) unless a round runs longer; the data: UDP rates x durations, TCP at its bitrate
    or per reference rate (the path decides)."""
    items = expand(p)
    per_round = len(items) // max(p.rounds, 1)
    ping_s = p.ping_count * p.ping_interval_s
    align_s = STARLINK_EPOCH_S if p.align == "starlink" else 0.0
    one = ping_s + align_s + p.duration_s
    round_s = per_round * one + max(per_round - 1, 0) * p.gap_s
    if p.at:
        spacing = DAY_S / len(p.at)
    else:
        spacing = p.interval_s
    total = (p.rounds - 1) * max(spacing, round_s) + round_s
    ways = 2 if p.bidir else 1
    udp = sum(
        parse_rate(i.udp_rate) / 8 * p.duration_s * ways * p.parallel for i in items if i.udp_rate
    )
    tcp_s = sum(p.duration_s * ways for i in items if i.kind == "tcp")
    tcp_bytes = parse_rate(p.bitrate) / 8 * p.parallel * tcp_s if p.bitrate else None
    return Estimate(len(items), round_s, total, udp, tcp_s, tcp_bytes)


def format_span(seconds: float) -> str:
    """1 h 5 min, 2 d 12 h, 45 s."""
    s = round(seconds)
    d, rest = divmod(s, 86400)
    h, rest = divmod(rest, 3600)
    m, sec = divmod(rest, 60)
    parts = [f"{d} d"] * bool(d) + [f"{h} h"] * bool(h) + [f"{m} min"] * bool(m)
    if not d and not h:
        parts += [f"{sec} s"] * bool(sec)
    text = " ".join(parts[:2]) or "0 s"
    return text + (f" ({seconds / 3600:.1f} h)" if seconds >= 2 * 3600 else "")


def format_bytes(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"
