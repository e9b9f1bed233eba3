"""The `sim` engine: a resolved scenario through the Rust packet simulator (`_native.run_sim`).

The simulator is deterministic: the same scenario and seed give the same RunResult, and so the
same bytes on disk (satcc.results). Progress, if asked for, goes to a callback; the CLI passes a
`satcc.progress.ProgressBar`.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from satcc import _native, limits
from satcc.engines.meta import run_meta
from satcc.errors import SatccError, UserError
from satcc.scenario import Scenario, expand_flows, resolved

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from satcc.results import RunResult

ENGINE = "sim"
RAW_DIR = "sim"  # packet captures go to DIR/sim/, as the emulator's go to DIR/emu/

# Cost model of a run (docs/reliability.md "Estimates"), calibrated with
# `bench/reliability/estimates.py --in-process` on the 2-core development machine: the CPU time
# of `_native.run_sim` on the resolved scenario, the least of three (what
# tests/test_reliability.py measures; BENCHMARKS.md "Reliability at scale"). A packet costs
# per link direction it crosses: a 60 s 1 Gbit/s CUBIC flow over one link (7.5 M estimated
# packets, data + one ACK per two) took 0.97 s, 129 ns a packet-hop; two and four TCP flows
# sharing 1 Gbit/s over three hops 102-108 ns a packet-hop; over a Mahimahi trace link
# (opportunity search per packet, per-ms capacity) 275 ns. UDP, solved from two runs: a
# datagram sent costs ~37 ns even when the link drops it (75 M datagrams of 1 B at 200
# Mbit/s, 83 % dropped: 4.23 s), one delivered ~113 ns more a hop (3.75 M of 100 B at 1
# Gbit/s: 0.47 s). Measured on a loaded machine (CPU inflated by contention, not deflated);
# rounded up, so that the estimate errs high.
NS_PER_PACKET_HOP = 130  # per estimated TCP packet (data or ACK) and link direction crossed
NS_PER_TRACE_HOP = 280  # the same over a Mahimahi trace direction
NS_PER_UDP_SENT = 40  # per UDP datagram sent
NS_PER_UDP_HOP = 120  # per UDP datagram delivered over a link direction
UDP_HEADER_BYTES = 28  # 20 IP + 8 UDP, as the simulator puts a datagram on the wire
# A constellation link looks for its serving satellite among the whole shell once an epoch
# (its model's `period_ns`, Starlink's 15 s), per direction: a 120 s run over a shell of
# 100,000 satellites took 0.28 s more than over Starlink shell 1 (1,584): 160 ns a satellite
# looked at.
NS_PER_SATELLITE_SCAN = 200
BYTES_PER_ROW = 420  # peak memory per series row (flow x bin or link direction x bin):
#                      Rust vectors + Python lists + Arrow table + Parquet writer
# A Mahimahi trace line: 8 B kept (u64), up to twice that reserved while the vector grows;
# parsed once at 43 ns a line (`satcc check` over 10^7 lines: 0.43 s more user CPU, 75 MB
# more peak RSS than over a short trace).
BYTES_PER_TRACE_LINE = 16
NS_PER_TRACE_LINE = 50
# A delay/loss CSV row: 24 B kept, up to twice that reserved; parsed at 380 ns a row
# (`satcc check` over 10^6 rows: 0.38 s more user CPU, 47 MB more peak RSS).
BYTES_PER_CSV_ROW = 48
NS_PER_CSV_ROW = 400
BASE_BYTES = 150 << 20  # the interpreter, pandas, pyarrow, the extension
HEADER_BYTES = 52  # 20 IP + 20 TCP + 12 timestamps option
SOFT_TIME_S = 3600.0  # a run estimated longer than this needs --force
SOFT_MEMORY_SHARE = 0.8  # of what this process may use (RAM, cgroup, ulimit -v)
SHOW_ESTIMATE_S = 10.0  # print the estimate when a run should take longer than this
SHOW_ESTIMATE_BYTES = 1 << 30


class Estimate:
    """What a run will cost, from the resolved config alone (no simulation). A plain class:
    dataclasses costs `satcc sim` ~30 M instructions of imports (inspect, ast, dis, tokenize)."""

    __slots__ = ("memory_bytes", "packets", "rows", "seconds")

    def __init__(self, packets: int, seconds: float, memory_bytes: int, rows: int) -> None:
        self.packets = packets
        self.seconds = seconds
        self.memory_bytes = memory_bytes
        self.rows = rows

    def __repr__(self) -> str:
        return (
            f"Estimate(packets={self.packets}, seconds={self.seconds}, "
            f"memory_bytes={self.memory_bytes}, rows={self.rows})"
        )

    def text(self) -> str:
        return (
            f"about {self.packets:,} simulated packets, {format_seconds(self.seconds)} on "
            f"one core, {self.memory_bytes / 1e9:.2f} GB of memory ({self.rows:,} series rows)"
        )


def estimate(config: dict[str, Any]) -> Estimate:
    """Packets: each TCP flow at its fair share of the link directions on its path (or, without
    routes, at the fastest rate its end nodes' links allow), bounded by its size, one ACK per
    two data packets; a UDP flow's datagrams at its rate. Time: per packet and link direction
    crossed (data on the forward path, ACKs on the reverse one; UDP datagrams cross only as
    far as the path's slowest direction carries them), plus each constellation link's search of
    its shell once an epoch and the trace files' parsing. Memory: one series row per flow and
    link direction per bin, and the trace and delay CSV files."""
    duration_ns = config["duration_ns"]
    bins = -(-duration_ns // config["bin_ns"])
    links = config["links"]
    rates: dict[int, int] = {}
    for link in links:
        for node in (link["a"], link["b"]):
            best = max(link["ab"]["rate_bps"], link["ba"]["rate_bps"])
            rates[node] = max(rates.get(node, 0), best)
    paths = (config.get("routes") or {}).get("paths") or []
    if len(paths) != len(config["flows"]):
        paths = [None] * len(config["flows"])

    def direction(d: int) -> dict[str, Any]:
        return links[d // 2]["ab" if d % 2 == 0 else "ba"]

    def hop_ns(dirs: list[int] | None, trace_ns: int, plain_ns: int) -> int:
        if dirs is None:
            return plain_ns  # one hop
        return sum(
            trace_ns if (direction(d).get("model") or {}).get("kind") == "trace" else plain_ns
            for d in dirs
        )

    tcp = udp = 0
    ns = 0.0
    shared = _shared_seconds(config)
    for i, f in enumerate(config["flows"]):
        rate = min(rates.get(f["src"], 0), rates.get(f["dst"], 0))
        active_s = max(duration_ns - f["start_ns"], 0) / 1e9
        fwd = paths[i]["fwd"] if paths[i] else None
        rev = paths[i]["rev"] if paths[i] else None
        if f.get("proto") == "udp" and f.get("udp_rate_bps"):
            # the rate is of payload, as iperf3 -b counts it (1 B datagrams: 1 datagram a byte)
            sent = int(f["udp_rate_bps"] * active_s / (8 * f["udp_payload_bytes"]))
            if f.get("size_bytes") is not None:  # a sized stream stops once it has sent it
                sent = min(sent, -(-f["size_bytes"] // f["udp_payload_bytes"]))
            wire_bits = 8 * (f["udp_payload_bytes"] + UDP_HEADER_BYTES)
            slowest = min((direction(d)["rate_bps"] for d in fwd), default=rate) if fwd else rate
            delivered = min(sent, slowest * active_s / wire_bits)
            udp += sent
            ns += sent * NS_PER_UDP_SENT + delivered * hop_ns(fwd, NS_PER_TRACE_HOP, NS_PER_UDP_HOP)
            continue
        # bit-seconds: the fair share of every link on its path, when the routes are known
        bits = shared[i] if shared is not None else rate * active_s
        data = bits / (8 * (f["mss"] + HEADER_BYTES))
        if f["size_bytes"] is not None:
            data = min(data, f["size_bytes"] / f["mss"] + 1)
        tcp += int(data * 1.5)
        ns += data * hop_ns(fwd, NS_PER_TRACE_HOP, NS_PER_PACKET_HOP)
        ns += 0.5 * data * hop_ns(rev, NS_PER_TRACE_HOP, NS_PER_PACKET_HOP)
    scans = 0  # satellites looked at by constellation links: epochs x shell size
    for link in links:
        for d in ("ab", "ba"):
            model = link[d].get("model") or {}
            if model.get("kind") == "constellation":
                epochs = duration_ns // model["period_ns"] + 1  # the model's own clock
                scans += epochs * model["planes"] * model["per_plane"]
    # Mahimahi traces: each file is read once (satcc-core's reader), 8 B a line kept
    traces = {
        model["mahimahi_path"]: model.get("opportunities_lines") or 0
        for link in links
        for d in ("ab", "ba")
        if (model := link[d].get("model") or {}).get("mahimahi_path")
    }
    trace_lines = sum(traces.values())
    csvs = {
        model["delay_csv_path"]: model.get("series_rows") or 0
        for link in links
        for d in ("ab", "ba")
        if (model := link[d].get("model") or {}).get("delay_csv_path")
    }
    csv_rows = sum(csvs.values())
    rows = bins * (len(config["flows"]) + 2 * len(links))
    seconds = (
        ns
        + scans * NS_PER_SATELLITE_SCAN
        + trace_lines * NS_PER_TRACE_LINE
        + csv_rows * NS_PER_CSV_ROW
    ) / 1e9
    memory = (
        BASE_BYTES
        + rows * BYTES_PER_ROW
        + trace_lines * BYTES_PER_TRACE_LINE
        + csv_rows * BYTES_PER_CSV_ROW
    )
    return Estimate(tcp + udp, seconds, memory, rows)


def _shared_seconds(config: dict[str, Any]) -> list[float] | None:
    """Bits each TCP flow can send over the run when TCP flows crossing a link direction
    share it equally: between consecutive start times, a flow's rate is the least, over the
    link directions of its path (the resolver's routes), of the direction's rate divided by
    the TCP flows then running through it. None without per-flow paths (a flow's bound is
    then its end nodes' fastest link, as before)."""
    flows = config["flows"]
    paths = (config.get("routes") or {}).get("paths") or []
    if len(paths) != len(flows):
        return None
    tcp = [i for i, f in enumerate(flows) if f.get("proto") != "udp"]
    links = config["links"]

    def dir_rate(d: int) -> int:
        return links[d // 2]["ab" if d % 2 == 0 else "ba"]["rate_bps"]

    duration_ns = config["duration_ns"]
    starts = sorted({min(flows[i]["start_ns"], duration_ns) for i in tcp} | {duration_ns})
    bits = [0.0] * len(flows)
    for t0, t1 in itertools.pairwise(starts):
        running = [i for i in tcp if flows[i]["start_ns"] <= t0]
        crossing: dict[int, int] = {}
        for i in running:
            for d in set(paths[i]["fwd"]):
                crossing[d] = crossing.get(d, 0) + 1
        for i in running:
            fwd = paths[i]["fwd"]
            rate = min((dir_rate(d) / crossing[d] for d in fwd), default=0.0)
            bits[i] += rate * (t1 - t0) / 1e9
    return bits


def check_budget(
    scenario: Scenario,
    seed: int | None = None,
    force: bool = False,
    stream: TextIO | None = None,
    simulate: bool = True,
) -> Estimate:
    """Refuse (UserError) a run above a soft limit unless `force`; print the estimate of a
    long run on `stream` (stderr). With `simulate=False` (the model engine) only memory
    counts: the series are as large, the packets are not simulated."""
    handle = resolved(scenario, seed_override=seed)
    if simulate:  # the run that follows takes it (`_resolved_once`)
        _checked[:] = [(scenario, seed, handle)]
    est = estimate(handle.config)
    if not simulate:
        est = Estimate(0, 0.0, est.memory_bytes, est.rows)
    stream = stream if stream is not None else sys.stderr
    available = limits.available_memory_bytes()
    problems = []
    if available is not None and est.memory_bytes > SOFT_MEMORY_SHARE * available:
        problems.append(
            f"expected a run that fits in memory ({available / 1e9:.2f} GB "
            f"available), found one needing about {est.memory_bytes / 1e9:.2f} GB: "
            "use longer bins (scenario.bin), fewer flows or a shorter duration"
        )
    if est.seconds > SOFT_TIME_S:
        problems.append(
            f"expected a run of at most {format_seconds(SOFT_TIME_S)}, found one "
            f"estimated at {format_seconds(est.seconds)}"
        )
    if problems and not force:
        raise limits.LimitError(
            f"{scenario.source}: {problems[0]} ({est.text()}); --force runs it anyway"
        )
    if problems or est.seconds > SHOW_ESTIMATE_S or est.memory_bytes > SHOW_ESTIMATE_BYTES:
        print(f"satcc: estimate for {limits.printable(scenario.name)}: {est.text()}", file=stream)
    return est


def format_seconds(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:,.0f} days"


# The scenario, seed and resolved scenario of the last `check_budget`: the run of that
# scenario that follows takes it, so a `satcc sim` resolves once.
_checked: list[tuple[Scenario, int | None, _native.Resolved]] = []


def _resolved_once(scenario: Scenario, seed: int | None) -> _native.Resolved:
    """The resolved scenario `check_budget` made for this very scenario object and seed (taken,
    so it serves one run), else a new one."""
    last = _checked.pop() if _checked else None
    if last is not None and last[0] is scenario and last[1] == seed:
        return last[2]
    return resolved(scenario, seed_override=seed)


def available() -> bool:
    """Whether this build of the native module carries the simulator."""
    return hasattr(_native, "run_sim")


def run(
    scenario: Scenario,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
    out_dir: str | Path | None = None,
    capture_points: Sequence[str] = (),
) -> RunResult:
    """Simulate `scenario` (with `seed` instead of its own, if given) and return the result.
    With `capture_points` ("NODE" or "FROM:TO", satcc-sim capture.rs; default: the scenario's
    `capture` key), pcapng captures of them are written to `out_dir`/sim (docs/simulator.md
    "Packet captures")."""
    handle = _resolved_once(scenario, seed)
    config = handle.config
    if not available():
        raise SatccError(
            "this build of satcc has no simulator (satcc._native.run_sim is "
            "missing); rebuild it with `make build`"
        )
    capture = None
    capture_points = tuple(capture_points) or tuple(config.get("capture", ()))
    if capture_points:
        if out_dir is None:
            raise UserError("capture: expected a result directory to write the captures into")
        raw_dir = Path(out_dir) / RAW_DIR
        if raw_dir.exists():
            import shutil

            shutil.rmtree(raw_dir)
        raw_dir.mkdir(parents=True)
        capture = (str(raw_dir), list(capture_points))
    try:
        raw = _native.run_sim(handle, progress, None, capture)
    except OSError as e:
        raise SatccError(f"{scenario.source}: {e}") from None
    except MemoryError as e:
        raise SatccError(
            f"{scenario.source}: {str(e) or 'out of memory'} (satcc's estimate: "
            f"{estimate(config).text()})"
        ) from None
    except ValueError as e:
        raise UserError(f"{scenario.source}: the simulator rejected the scenario: {e}") from None
    # imported only now: the CLI imports it in a thread while the simulation runs
    # (satcc.commands.output.prefetch)
    from satcc.results import RunResult

    extra = {"sim": {"raw_dir": RAW_DIR, "captures": raw["captures"]}} if capture else {}
    meta = run_meta(ENGINE, config, **extra)
    return RunResult.from_engine(raw, config, expand_flows(scenario), meta)
