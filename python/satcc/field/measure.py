"""One field run: idle ping, capture, the iperf3 test with a ping alongside, host metadata,
and the files into a RunResult (engine "field") read by the existing analyzer.

    resolve server ─► host metadata ─► idle ping ─► tcpdump (root) ─► wait for the start
      (Starlink-aligned or now) ─► ping ‖ iperf3 -c (-R for down, -u -b for UDP) ─► stop
      ─► analyze: iperf3 JSON (goodput, flow 0), capture (retransmissions and RTT, from the
         sender's side when the capture is there: uploads), pings (flows 1, 2 + pings table)

A failure raises `RunFailed` with one line naming the run and the reason in words a user
can act on (refused, busy, unreachable, CCA not available, lost connection).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from satcc.errors import SatccError
from satcc.field import clock, hostinfo
from satcc.field.plan import FieldPlan, RunItem
from satcc.results import FLOW

ENGINE = "field"
RAW_DIR = "field"
IPERF3_FILE = "iperf3.json"
PING_IDLE_FILE = "ping-idle.txt"
PING_RUN_FILE = "ping-run.txt"
CAPTURE_FILE = "capture.pcap"
SNAPLEN = 128  # bytes: headers only, as studies 000/001 captured
CONNECT_TIMEOUT_MS = 5000
IPERF3_GRACE_S = 30.0  # beyond the run's duration before the client is killed
FINE_INTERVAL_S = 0.1  # iperf3 report interval for runs up to FINE_MAX_S (plots of one epoch)
FINE_MAX_S = 120.0
TCPDUMP_READY_S = 5.0
TCPDUMP_DRAIN_S = 0.5


PR_SET_PDEATHSIG = 1  # prctl(2)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    import ctypes

    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _popen(cmd: list[str], **kw: Any) -> subprocess.Popen:
    """A child that gets SIGTERM when this process dies, however it dies (kill -9 included):
    no tcpdump or iperf3 outlives an interrupted plan. Started from the main thread only."""
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent, **kw)  # noqa: PLW1509


class RunFailed(SatccError):
    """A run that did not produce a result; str() is the one-line reason."""


@dataclass
class Measured:
    raw_dir: Path
    field_doc: dict[str, Any]  # run.json's "field" section
    files: dict[str, Path] = field(default_factory=dict)


def _module_exists(cca: str) -> bool:
    """Whether the kernel could load tcp_<cca> on demand (root's setsockopt autoloads it)."""
    from satcc.field.preflight import loadable_ccas

    return cca in loadable_ccas()


def resolve(host: str, port: int) -> str:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise RunFailed(f"unreachable: cannot resolve {host!r} ({e.strerror})") from None
    return str(infos[0][4][0])


def classify(text: str) -> str:
    """iperf3's error text -> the reason's first word(s)."""
    t = text.lower()
    if "busy" in t:
        return "server busy"
    if "refused" in t:
        return "refused (no iperf3 -s listening there)"
    if "congestion" in t:
        return "CCA not available"
    if any(
        w in t for w in ("no route", "unreachable", "timed out", "timeout", "unable to connect")
    ):
        return "unreachable"
    if any(w in t for w in ("closed unexpectedly", "reset by peer", "broken pipe", "terminated")):
        return "lost connection"
    return "iperf3 failed"


def _iperf3_error(stdout: str, stderr: str) -> str:
    try:
        doc = json.loads(stdout)
        if isinstance(doc, dict) and doc.get("error"):
            return str(doc["error"])
    except ValueError:
        pass
    lines = [ln.strip() for ln in (stderr or stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


def _json_error(stdout: str) -> bool:
    try:
        doc = json.loads(stdout)
    except ValueError:
        return True
    return not isinstance(doc, dict) or bool(doc.get("error"))


def iperf3_cmd(p: FieldPlan, item: RunItem, ip: str, port: int) -> list[str]:
    interval = FINE_INTERVAL_S if p.duration_s <= FINE_MAX_S else 1.0
    cmd = [
        "iperf3",
        "-c",
        ip,
        "-p",
        str(port),
        "-t",
        f"{p.duration_s:g}",
        "-i",
        f"{interval:g}",
        "-J",
        "--connect-timeout",
        str(CONNECT_TIMEOUT_MS),
    ]
    if item.kind == "udp":
        from satcc.units import parse_rate

        cmd += ["-u", "-b", str(parse_rate(item.udp_rate))]
    else:
        cmd += ["-C", item.cca]
        if item.mss:
            cmd += ["-M", str(item.mss)]
    if item.direction == "down":
        cmd.append("-R")
    return cmd + p.iperf3_options(item.kind)


def ping_cmd(ip: str, interval_s: float, count: int | None = None, deadline_s: float | None = None):
    cmd = ["ping", "-D", "-n", "-i", f"{interval_s:g}"]
    if ":" in ip:
        cmd.append("-6")
    if count is not None:
        cmd += ["-c", str(count)]
    if deadline_s is not None:
        cmd += ["-w", f"{max(1, round(deadline_s)):d}"]
    return [*cmd, ip]


def capture_wanted(p: FieldPlan) -> tuple[bool, str | None]:
    """(capture?, why not) from the plan's `capture` and the host."""
    if p.capture is False:
        return False, "capture = false"
    why = None
    if os.geteuid() != 0:
        why = "not root"
    elif shutil.which("tcpdump") is None:
        why = "tcpdump not installed"
    if why is not None:
        if p.capture is True:
            raise RunFailed(f"capture = true but {why}")
        return False, why
    return True, None


def tcpdump_cmd(dev: str, ip: str, port: int, path: Path) -> list[str]:
    return [
        "tcpdump",
        "-i",
        dev,
        "-s",
        str(SNAPLEN),
        "-n",
        "--immediate-mode",
        "-U",
        "-w",
        str(path),
        f"host {ip} and port {port}",
    ]


def _start_tcpdump(dev: str, ip: str, port: int, path: Path) -> subprocess.Popen:
    cmd = tcpdump_cmd(dev, ip, port, path)
    proc = _popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + TCPDUMP_READY_S
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line or not line:
            break
    if proc.poll() is not None:
        raise RunFailed(f"tcpdump on {dev} failed: {proc.stderr.read().strip()[:200]}")
    return proc


def _stop(proc: subprocess.Popen | None, sig: int = signal.SIGINT, timeout: float = 5.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _sleep_until(t_wall: float) -> None:
    while True:
        left = t_wall - time.time()
        if left <= 0:
            return
        time.sleep(min(left, 0.5))


def measure(
    p: FieldPlan,
    item: RunItem,
    raw_dir: Path,
    force: bool = False,
    not_before: float | None = None,
) -> Measured:
    """Run `item` against the plan's server; files into raw_dir (module doc)."""
    host, port = p.host_port()
    raw_dir.mkdir(parents=True, exist_ok=True)
    ip = resolve(host, port)
    meta = hostinfo.collect(ip)
    doc: dict[str, Any] = {
        "server": {"host": host, "ip": ip, "port": port},
        "host": meta,
        "warnings": [],
    }
    if item.kind == "tcp" and item.direction == "up":
        avail = meta["tcp_available_congestion_control"]
        if avail and item.cca not in avail and not _module_exists(item.cca):
            raise RunFailed(
                f"CCA not available: {item.cca!r} is not in this host's "
                f"tcp_available_congestion_control ({' '.join(avail)}); load its module "
                f"(modprobe tcp_{item.cca}; none found here) or register the BPF CCA"
            )
    clk = clock.check()
    doc["clock"] = clk.doc()
    if p.align == "starlink" and not clk.usable() and not force:
        raise RunFailed(
            f"clock: Starlink alignment needs a synchronised clock, found {clk.source}: "
            f"{clk.detail}"
            + (f", error bound {clk.max_error_s:g} s" if clk.max_error_s else "")
            + "; start chrony or systemd-timesyncd, or pass --force"
        )
    files: dict[str, Path] = {}
    procs: list[subprocess.Popen] = []
    dump = None
    try:
        if p.ping_count > 0 and shutil.which("ping"):
            path = raw_dir / PING_IDLE_FILE
            r = subprocess.run(
                ping_cmd(ip, p.ping_interval_s, count=p.ping_count),
                capture_output=True,
                text=True,
                timeout=p.ping_count * p.ping_interval_s + 15,
                check=False,
            )
            path.write_text(r.stdout)
            if " bytes from " in r.stdout:
                files["ping_idle"] = path
            else:
                doc["warnings"].append(f"idle ping got no reply ({r.stderr.strip()[:120]})")
        elif p.ping_count > 0:
            doc["warnings"].append("ping not installed: no idle ping")
        want, why = capture_wanted(p)
        dev = meta["route"].get("dev")
        if want and not dev:
            want, why = False, f"no route to {ip}"
        doc["capture"] = {"taken": want, "why_not": why, "snaplen": SNAPLEN, "dev": dev}
        if want:
            assert dev is not None
            dump = _start_tcpdump(dev, ip, port, raw_dir / CAPTURE_FILE)
        now = time.time()
        start = max(now, not_before or now)
        if p.align == "starlink":
            start = clock.aligned_start(start, p.align_offset_s)
        _sleep_until(start)
        launched = time.time()
        ping_proc = None
        if shutil.which("ping"):
            ping_out = open(raw_dir / PING_RUN_FILE, "w")  # noqa: SIM115 - closed below
            ping_proc = _popen(
                ping_cmd(ip, p.ping_interval_s, deadline_s=p.duration_s + 1),
                stdout=ping_out,
                stderr=subprocess.DEVNULL,
            )
            procs.append(ping_proc)
        cmd = iperf3_cmd(p, item, ip, port)
        client = _popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(client)
        try:
            out, err = client.communicate(timeout=p.duration_s + IPERF3_GRACE_S)
        except subprocess.TimeoutExpired:
            client.kill()
            out, err = client.communicate()
            raise RunFailed(
                f"lost connection: iperf3 did not finish within {p.duration_s + IPERF3_GRACE_S:g} s"
            ) from None
        ended = time.time()
        _stop(ping_proc)
        if ping_proc is not None:
            ping_out.close()
            if " bytes from " in (raw_dir / PING_RUN_FILE).read_text():
                files["ping_run"] = raw_dir / PING_RUN_FILE
            else:
                doc["warnings"].append("the ping during the run got no reply")
        (raw_dir / IPERF3_FILE).write_text(out)
        if client.returncode != 0 or _json_error(out):
            msg = _iperf3_error(out, err)
            why = classify(msg)
            if why == "CCA not available" and item.direction == "down":
                why += f" at the server (the sender of a download; {item.cca!r})"
            raise RunFailed(f"{why}: iperf3: {msg}")
        files["iperf3"] = raw_dir / IPERF3_FILE
        if item.kind == "tcp":
            try:
                ran = json.loads(out).get("end", {}).get("sender_tcp_congestion")
            except ValueError:
                ran = None
            if ran is not None and ran != item.cca:
                side = "server" if item.direction == "down" else "this host"
                raise RunFailed(
                    f"CCA not available: asked for {item.cca!r}, the sender ({side}) ran {ran!r}"
                )
        time.sleep(TCPDUMP_DRAIN_S)
        _stop(dump)
        if dump is not None and (raw_dir / CAPTURE_FILE).stat().st_size > 24:
            files["capture"] = raw_dir / CAPTURE_FILE
        doc["times"] = {
            "planned_start_unix_s": start,
            "launched_unix_s": launched,
            "ended_unix_s": ended,
        }
        if p.align == "starlink":
            doc["starlink"] = {
                "offset_s": p.align_offset_s,
                "period_s": clock.PERIOD_S,
                "phase_s": clock.PHASE_S,
                "aligned_boundary_unix_s": start - p.align_offset_s,
                "boundaries_unix_s": clock.boundaries_between(launched, ended),
                "boundaries_s": [
                    round(b - launched, 6) for b in clock.boundaries_between(launched, ended)
                ],
            }
        doc["command"] = cmd
        return Measured(raw_dir, doc, files)
    finally:
        for proc in procs:
            _stop(proc, signal.SIGTERM)
        _stop(dump)


# -- into a RunResult ------------------------------------------------------------------------

RTT_KEYS = (FLOW.rtt_mean_ms, FLOW.rtt_p95_ms, FLOW.rtt_min_ms)
# Where flow 0's RTT comes from (run.json `field.rtt_source`, summary.json `stats.rtt_source`)
RTT_IPERF3 = "iperf3 tcp_info"  # the sender's kernel RTT of the connection (mean_rtt)
RTT_PING = "ping during the run"
# The capture's RTT and a whole-path one further apart than this factor: reported, and the
# whole-path one used (a capture sees packets after this host's qdiscs: a shaper there, CAKE on
# a router-host, is invisible to it, as are waits in the sender's own stack).
RTT_DISAGREE = 2.0
_SENDER_KEYS = (FLOW.sent_packets, FLOW.retransmitted_packets, FLOW.retransmission_rate, *RTT_KEYS)


def _iperf3_mss(m: Measured, item: RunItem) -> int | None:
    """The sender's segment size: `-M` when given, else iperf3's `tcp_mss_default`."""
    if item.mss:
        return int(item.mss)
    try:
        doc = json.loads(m.files["iperf3"].read_text(encoding="utf-8"))
        mss = doc.get("start", {}).get("tcp_mss_default")
    except (OSError, ValueError, KeyError, AttributeError):
        return None
    return int(mss) if isinstance(mss, int) and mss > 0 else None


def iperf3_retx_rate(
    retransmits: int | None, delivered_bytes: int | None, mss: int | None
) -> tuple[int, float] | None:
    """(segments sent, retransmission rate) from iperf3's count of the sender's retransmits
    (a download's are the server's, carried in the -R client's report): the sender sent the
    segments the delivered bytes take at the MSS plus its retransmissions, as study 001's
    rate (retransmitted / sent packets) counts them. None when a figure is missing."""
    if retransmits is None or not delivered_bytes or not mss:
        return None
    sent = math.ceil(delivered_bytes / mss) + int(retransmits)
    return sent, int(retransmits) / sent


def _apart(a: float, b: float) -> float:
    """How many times the larger of two RTTs is the smaller (inf when one is 0)."""
    lo, hi = sorted((a, b))
    return 1.0 if hi == 0 else (math.inf if lo <= 0 else hi / lo)


def whole_path_rtt(
    capture_ms: float, whole: list[tuple[str, float]], at: str
) -> tuple[str | None, list[str]]:
    """Check the capture's mean RTT against the whole-path ones (`[(source, mean ms)]`, the
    preferred first: the sender's tcp_info, then the ping that ran alongside). Returns the
    source to use instead of the capture (the preferred whole-path one, when it is more than
    RTT_DISAGREE times apart from the capture; else None) and a warning for each source that
    is. `at` is where the capture was taken ("sender" or "receiver")."""
    warnings = []
    for name, ms in whole:
        if _apart(capture_ms, ms) > RTT_DISAGREE:
            why = (
                "it sees packets after this host's queueing disciplines, so a bottleneck on "
                "this host (a shaper, CAKE on a router-host) is invisible to it"
                if at == "sender" and ms > capture_ms
                else "one of them does not see the path the transfer took"
            )
            warnings.append(
                f"RTT: the capture (at the {at}) read {capture_ms:.1f} ms, {name} {ms:.1f} ms, "
                f"more than {RTT_DISAGREE:g}x apart: {why}"
            )
    use = whole[0][0] if whole and _apart(capture_ms, whole[0][1]) > RTT_DISAGREE else None
    return use, warnings


def _in_run(inp: Any, m: Measured) -> Any:
    """An input named by its place in the run's directory (`iperf3.json`), not by the scratch
    directory it was read from: that name is random and gone once the run is stored, and a
    result is a function of the measurement alone. A file from elsewhere keeps its path."""
    path = Path(inp.path)
    if path.is_relative_to(m.raw_dir):
        inp.path = path.relative_to(m.raw_dir).as_posix()
    return inp


def build_result(p: FieldPlan, item: RunItem, m: Measured) -> tuple[Any, dict[str, Any]]:
    """RunResult (engine "field") and the extra tables (pings) from a measured run."""
    from satcc import _native
    from satcc.analyze.inputs import load_input
    from satcc.analyze.result import build
    from satcc.results import FLOW_SERIES_SCHEMA, FLOWS_SCHEMA, SCHEMA_VERSION, RunResult
    from satcc.store.schema import PINGS_FILE, PINGS_SCHEMA
    from satcc.tables import Table

    bin_s = FINE_INTERVAL_S if p.duration_s <= FINE_MAX_S else 1.0
    order = [k for k in ("iperf3", "ping_idle", "ping_run") if k in m.files]
    inputs = [_in_run(load_input(m.files[k], bin_s), m) for k in order]
    built = build(inputs)
    data = [f for f in built.flows if f["kind"] == "iperf3" and f.get("delivered_bytes")]
    if not data:
        raise RunFailed("iperf3 reported no data stream")
    server_port = p.host_port()[1]

    def way(f: dict[str, Any]) -> str:  # a stream to the server's port is an upload
        return "upload" if f.get("dport") == server_port else "download"

    want = "upload" if item.direction == "up" else "download"
    flow = dict(
        max([f for f in data if way(f) == want] or data, key=lambda f: f["delivered_bytes"])
    )
    flow["cca"] = item.cca
    flow["name"] = want
    other = "download" if want == "upload" else "upload"

    def name(f: dict[str, Any]) -> str:  # flow 0's way is the run's direction
        return want if way(f) == way(flow) else other

    download = item.direction == "down" and item.kind == "tcp"
    iperf3_rtt = {k: flow.get(k) for k in RTT_KEYS}
    rtt_source = RTT_IPERF3 if flow.get("rtt_mean_ms") is not None else None
    retx_source = "iperf3" if flow.get("retransmitted_packets") is not None else None
    capture_doc: dict[str, Any] | None = None
    if "capture" in m.files and item.kind == "tcp":
        try:
            cap = build([_in_run(load_input(m.files["capture"], bin_s), m)])
        except SatccError as e:
            m.field_doc["warnings"].append(f"capture unreadable: {e}")
            cap = None
        if cap is not None:
            match = [
                f
                for f in cap.flows
                if f.get("proto") == "tcp"
                and {f.get("sport"), f.get("dport")} == {flow.get("sport"), flow.get("dport")}
            ]
            if match:
                c = max(match, key=lambda f: f.get("payload_bytes") or 0)
                capture_doc = {
                    k: c.get(k)
                    for k in (*_SENDER_KEYS, "rtt_source", "capture_point", FLOW.goodput_bps)
                }
                capture_doc["at"] = "sender" if item.direction == "up" else "receiver"
                if item.direction == "up":
                    for k in _SENDER_KEYS:
                        if c.get(k) is not None:
                            flow[k] = c[k]
                    rtt_source = f"capture ({c.get('rtt_source')} @{c.get('capture_point')})"
                    retx_source = "capture"
                elif c.get("rtt_source") == "tsval-both" and c.get("rtt_mean_ms") is not None:
                    # at the receiver: the path RTT as the sum of both TSval->TSecr halves
                    # (satcc.analyze.pathrtt), not the data->ACK time (the receiver's ACK delay)
                    for k in RTT_KEYS:
                        flow[k] = c.get(k)
                    rtt_source = "capture (tsval-both @receiver)"
                else:
                    m.field_doc["warnings"].append(
                        "download: the capture gives no path RTT (capture point "
                        f"{c.get('capture_point')!r}, rtt_source {c.get('rtt_source')!r}: "
                        "TCP timestamps off?)"
                    )
    ping_rtt = next(
        (
            {k: f.get(k) for k in RTT_KEYS}
            for f in built.flows
            if f["kind"] == "ping" and Path(f["file"]).name == PING_RUN_FILE
        ),
        {},
    )
    # every whole-path RTT there is, the preferred first, beside the capture's
    whole = [
        (name, r["rtt_mean_ms"])
        for name, r in ((RTT_IPERF3, iperf3_rtt), (RTT_PING, ping_rtt))
        if r.get("rtt_mean_ms") is not None
    ]
    m.field_doc["rtt_candidates_ms"] = {
        **(
            {"capture": flow["rtt_mean_ms"]}
            if rtt_source and rtt_source.startswith("capture")
            else {}
        ),
        **dict(whole),
    }
    if rtt_source and rtt_source.startswith("capture") and flow.get("rtt_mean_ms") is not None:
        at = "sender" if item.direction == "up" else "receiver"
        use, warnings = whole_path_rtt(flow["rtt_mean_ms"], whole, at)
        m.field_doc["warnings"].extend(warnings)
        if use is not None:
            for k, v in (iperf3_rtt if use == RTT_IPERF3 else ping_rtt).items():
                flow[k] = v
            rtt_source = use
    if item.kind == "tcp" and retx_source == "iperf3":
        # iperf3 counts the sender's retransmissions (a download's: the server's, carried in
        # the -R client's report); the rate's denominator is estimated (iperf3_retx_rate)
        rate = iperf3_retx_rate(
            flow.get("retransmitted_packets"), flow.get("delivered_bytes"), _iperf3_mss(m, item)
        )
        if rate is not None:
            flow["sent_packets"], flow["retransmission_rate"] = rate
        if download:
            retx_source = "iperf3 -R (the server's retransmits)"
    m.field_doc["rtt_source"] = rtt_source
    m.field_doc["retx_source"] = retx_source
    m.field_doc["capture_flow"] = capture_doc
    kept = [flow]
    new_ids = {flow["id"]: 0}
    named = {want: 1}
    for f in data:  # -P / --bidir: every other stream, named by its direction
        if f["id"] in new_ids:
            continue
        k = named.get(name(f), 0)
        named[name(f)] = k + 1
        extra = {**f, "id": len(kept), "cca": item.cca, "name": name(f) + (f".{k}" if k else "")}
        if item.kind == "tcp":
            rate = iperf3_retx_rate(
                extra.get("retransmitted_packets"),
                extra.get("delivered_bytes"),
                _iperf3_mss(m, item),
            )
            if rate is not None:
                extra["sent_packets"], extra["retransmission_rate"] = rate
        new_ids[f["id"]] = len(kept)
        kept.append(extra)
    ping_map = {}
    for f in built.flows:
        if f["kind"] == "ping":
            new_id = len(kept)
            ping_map[f["id"]] = new_id
            which = "idle" if Path(f["file"]).name == PING_IDLE_FILE else "during"
            kept.append({**f, "id": new_id, "name": f"ping {which}", "cca": None})
    flow["id"] = 0
    rows = {n: [f.get(n) for f in kept] for n in FLOWS_SCHEMA.names}
    rows["scenario_flow"] = [None] * len(kept)
    rows["size_bytes"] = [None] * len(kept)
    flows_table = Table.from_columns(FLOWS_SCHEMA, rows, "flows")
    series = built.result.flow_series_data.to_pylist()
    srows = {n: [] for n in FLOW_SERIES_SCHEMA.names}
    for r in series:
        if r["flow_id"] in new_ids:
            for n in FLOW_SERIES_SCHEMA.names:
                srows[n].append(new_ids[r["flow_id"]] if n == "flow_id" else r.get(n))
    series_table = Table.from_columns(FLOW_SERIES_SCHEMA, srows, "flow_series")
    meta = dict(built.result.meta)
    meta.update(
        schema_version=SCHEMA_VERSION,
        satcc_version=_native.version(),
        engine=ENGINE,
        scenario=p.name,
        scenario_hash=None,
        seed=None,
        duration_s=p.duration_s,
        bin_s=bin_s,
        stats={
            "inputs": len(order) + (1 if "capture" in m.files else 0),
            # where flow 0's figures come from (run.json's field section says the same)
            "goodput_source": "iperf3",
            "rtt_source": rtt_source,
            "retx_source": retx_source,
            # Starlink boundaries during the run, seconds from iperf3's launch (plots' t = 0
            # is its first report, a few RTTs later); absent without `align = "starlink"`
            **(
                {"starlink_boundaries_s": m.field_doc["starlink"]["boundaries_s"]}
                if "starlink" in m.field_doc
                else {}
            ),
        },
        fairness=None,
    )
    result = RunResult(meta, flows_table, series_table, built.result.link_series_data)
    pings: dict[str, list[Any]] = {n: [] for n in PINGS_SCHEMA.names}
    for inp, key in zip(inputs, order, strict=True):
        if key == "iperf3":
            continue
        fid = next(
            new
            for old, new in ping_map.items()
            if built.flows[old]["file"] == inp.path  # type: ignore[union-attr]
        )
        smp = inp.samples  # type: ignore[union-attr]
        for seq, t, ep, rtt in zip(
            smp["seq"], smp["t_s"], smp["t_epoch"], smp["rtt_ms"], strict=True
        ):
            pings["flow_id"].append(fid)
            pings["seq"].append(int(seq))
            pings["t_s"].append(None if math.isnan(t) else float(t))
            pings["t_epoch_s"].append(None if math.isnan(ep) else float(ep))
            pings["rtt_ms"].append(None if math.isnan(rtt) else float(rtt))
    extras = {PINGS_FILE: Table.from_columns(PINGS_SCHEMA, pings, "pings")} if pings["seq"] else {}
    return result, extras


def summary_parts(result: Any, field_doc: dict[str, Any]) -> list[str]:
    """The figures of a finished run as the loop prints them: goodput, retransmissions and the
    RTT with its source, and the other sources' RTTs that are more than RTT_DISAGREE apart
    from it (run.json's warnings say why)."""
    row = result.flows_data.to_pylist()[0]
    parts = []
    if row.get("goodput_bps") is not None:
        parts.append(f"{row['goodput_bps'] / 1e6:.2f} Mbit/s")
    if row.get("retransmission_rate") is not None:
        parts.append(f"retx {100 * row['retransmission_rate']:.2f} %")
    rtt = row.get("rtt_mean_ms")
    if rtt is not None:
        source = field_doc.get("rtt_source")
        apart = [
            f"{name} {ms:.1f} ms"
            for name, ms in field_doc.get("rtt_candidates_ms", {}).items()
            if not (source or "").startswith(name) and _apart(rtt, ms) > RTT_DISAGREE
        ]
        note = f"; {', '.join(apart)}: more than {RTT_DISAGREE:g}x apart" if apart else ""
        parts.append(f"rtt {rtt:.1f} ms ({source}{note})")
    return parts
