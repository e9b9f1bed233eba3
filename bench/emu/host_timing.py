"""How long a real Linux host takes to answer a packet, seen from the wire (the simulator's host
timing noise is calibrated from it).

The simulator's hosts answer instantly unless told otherwise; real hosts do not, and that
timing noise is what keeps competing flows from phase-locking. This measures it on the real
kernel: a scenario runs in the emulator while tcpdump, inside the emulator's namespace, records
every frame on the emulator-side veth end of each host (nanosecond stamps, one clock), so the
capture point is where the link hands frames to the host and takes them back.

    sender turnaround   = first data segment the sender puts on the wire after an ACK reached it
                          (no other data in between) - when that ACK reached it
    receiver turnaround = ACK the receiver puts on the wire - the newest data segment that
                          reached it before (no other ACK in between)

With `--router` the path is snd -- r -- rcv (two links at `--rate`, the RTT split between
them) and the script measures the router's forwarding time instead: a frame satcc-linkd hands
to the router namespace on one link's emulator-side veth end, until the same frame (IPv4 ID,
TCP sequence and acknowledgement numbers) comes back out of the router on the other link's,
for data (snd -> rcv) and ACKs (rcv -> snd) alike. The capture points are those of the host
turnarounds, so both include the veth crossings; `--table` prints its quantile table from
the pooled `router_ns` samples too. The simulator's routers forward at once: the kernel's take
about a microsecond (BENCHMARKS.md "Router forwarding time"), far below the packet times.

Pairs longer than `--max-us` are not turnarounds (a delayed-ACK timer, a window that did not
open) and are counted apart. Prints quantiles of both (µs) and, with --json, writes them with
the raw samples; `--table FILE...` pools the samples of several such files and prints the
quantile tables for `crates/satcc-core/src/hostnoise.rs`.

    python bench/emu/host_timing.py [--rate 100Mbit/s] [--rtt 20ms] [--flows 1] [--seconds 10]
        [--cca cubic] [--json FILE]     (root; one emulator run)
    python bench/emu/host_timing.py --router [...]   (root; the router's forwarding time)
    python bench/emu/host_timing.py --table run1.json run2.json ...
"""

from __future__ import annotations

import argparse
import itertools
import json
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from satcc.emu import traffic
from satcc.emu.host import ns_cmd
from satcc.emu.runner import Run
from satcc.scenario import loads, resolve

PCAP_NS_MAGIC = 0xA1B23C4D
QUANTILES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0)


class WireRun(Run):
    """An emulator run that also captures on the emulator side of every link (satcc-linkd
    sends through the qdisc layer for it, so the capture sees both directions)."""

    def _start_linkd(self) -> None:
        from satcc.emu import linkd

        real = linkd.config

        def config(*a, **kw):
            doc = real(*a, **kw)
            doc["qdisc_bypass"] = False
            return doc

        linkd.config = config
        try:
            super()._start_linkd()
        finally:
            linkd.config = real

    def _start_captures(self) -> None:
        super()._start_captures()
        assert self.plan is not None
        for lp in self.plan.links:
            for side, iface in (("a", lp.a_if), ("b", lp.b_if)):
                path = self.workdir / f"wire-{lp.id}{side}.pcap"
                err_path = self.workdir / f"wire-{lp.id}{side}.stderr"
                with open(err_path, "w") as err:
                    cmd = ns_cmd(
                        self.plan.emu_ns,
                        "tcpdump",
                        "-i",
                        iface,
                        "-s",
                        "96",
                        "-n",
                        "-U",
                        "--time-stamp-precision=nano",
                        "-w",
                        str(path),
                        "tcp",
                    )
                    self.dumps.append(traffic.spawn(cmd, stderr=err))
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline and "listening on" not in err_path.read_text():
                    time.sleep(0.02)


def tcp_frames(path: Path):
    """(t_ns, src ip, dst ip, IPv4 ID, TCP seq, TCP ack, TCP payload bytes) of every IPv4/TCP
    frame of a nanosecond pcap."""
    data = path.read_bytes()
    if struct.unpack("<I", data[:4])[0] != PCAP_NS_MAGIC:
        raise SystemExit(f"{path}: expected a nanosecond pcap")
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off : off + 16])
        frame = data[off + 16 : off + 16 + incl]
        off += 16 + incl
        if len(frame) < 54 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
            continue
        ihl = (frame[14] & 0x0F) * 4
        total, ip_id = struct.unpack("!HH", frame[16:20])
        tcp = 14 + ihl
        seq, ack = struct.unpack("!II", frame[tcp + 4 : tcp + 12])
        doff = (frame[tcp + 12] >> 4) * 4
        src = ".".join(map(str, frame[26:30]))
        dst = ".".join(map(str, frame[30:34]))
        yield sec * 1_000_000_000 + frac, src, dst, ip_id, seq, ack, total - ihl - doff


def read_frames(path: Path) -> list[tuple[int, str, str, int]]:
    """(t_ns, src ip, dst ip, TCP payload bytes) of every IPv4/TCP frame of a pcap."""
    return [(t, src, dst, payload) for t, src, dst, _, _, _, payload in tcp_frames(path)]


def read_segments(path: Path) -> list[tuple[int, tuple[str, str, int, int, int, int]]]:
    """(t_ns, (src ip, dst ip, IPv4 ID, TCP seq, TCP ack, payload bytes)) of every IPv4/TCP
    frame of a nanosecond pcap: the key names one frame on both sides of a router."""
    return [(f[0], tuple(f[1:])) for f in tcp_frames(path)]


def forwarding(into: list, out_of: list, src_ip: str, max_ns: int) -> tuple[list[int], int, int]:
    """Delays from a frame from `src_ip` entering the router (seen on `into`: the veth end
    satcc-linkd sends it through) to the same frame leaving it (seen on `out_of`). A key seen
    twice on one side (an IPv4 ID wrapped onto the same sequence numbers) is left out.
    Returns (delays, frames not seen leaving, pairs over max_ns)."""
    sent: dict = {}
    dup = set()
    for t, k in into:
        if k[0] != src_ip:
            continue
        if k in sent:
            dup.add(k)
        sent[k] = t
    got, too_long, seen = [], 0, set()
    for t, k in out_of:
        if k[0] != src_ip or k not in sent or k in dup or k in seen:
            continue
        seen.add(k)
        d = t - sent[k]
        if d < 0:
            continue  # the capture saw it leave before it entered: not this frame
        if d <= max_ns:
            got.append(d)
        else:
            too_long += 1
    return got, len(sent) - len(dup) - len(seen), too_long


def turnarounds(frames, host_ip: str, trigger_is_data: bool, max_ns: int):
    """Delays from a frame reaching `host_ip` to the host's next answer on the wire.

    trigger_is_data: the receiver (trigger = data in, answer = pure ACK out);
    otherwise the sender (trigger = ACK in, answer = data out)."""
    got, too_long = [], 0
    last_trigger = None
    for t, src, dst, payload in frames:
        if dst == host_ip:
            is_trigger = (payload > 0) if trigger_is_data else (payload == 0)
            if is_trigger:
                last_trigger = t
        elif src == host_ip:
            is_answer = (payload == 0) if trigger_is_data else (payload > 0)
            if is_answer and last_trigger is not None:
                d = t - last_trigger
                if d <= max_ns:
                    got.append(d)
                else:
                    too_long += 1
                last_trigger = None
    return got, too_long


def quantiles(xs: list[int]) -> dict[str, float]:
    xs = sorted(xs)
    if not xs:
        return {}
    out = {}
    for q in QUANTILES:
        i = min(len(xs) - 1, round(q * (len(xs) - 1)))
        out[f"p{q * 100:g}"] = xs[i] / 1000.0
    out["mean"] = sum(xs) / len(xs) / 1000.0
    return out


def scenario_text(
    rate: str, rtt_ms: float, flows: int, seconds: float, cca: str, router: bool = False
) -> str:
    """snd -- rcv (the host turnarounds), or snd -- r -- rcv with `router`, the RTT split
    evenly over the links."""
    nodes = ["snd", "r", "rcv"] if router else ["snd", "rcv"]
    one_way = rtt_ms / 2 / (len(nodes) - 1)
    links = "".join(
        f"""[[link]]
a = "{a}"
b = "{b}"
rate = "{rate}"
delay = "{one_way} ms"
queue = "1 BDP"
"""
        for a, b in itertools.pairwise(nodes)
    )
    return f"""
[scenario]
name = "{"router-timing" if router else "host-timing"}"
duration = "{seconds} s"
{links}[[flow]]
name = "bulk"
from = "snd"
to = "rcv"
cca = "{cca}"
count = {flows}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", default="100 Mbit/s")
    ap.add_argument("--rtt", type=float, default=20.0, help="ms")
    ap.add_argument("--flows", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--cca", default="cubic")
    ap.add_argument("--max-us", type=float, default=2000.0)
    ap.add_argument("--router", action="store_true", help="measure a router's forwarding time")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="keep the captures in this directory")
    ap.add_argument(
        "--no-cpu-latency",
        action="store_true",
        help="satcc-linkd holds no PM QoS request (idle CPUs may halt, as before 2026-12-02)",
    )
    ap.add_argument(
        "--table",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="pool these --json files and print the quantile tables",
    )
    args = ap.parse_args()
    if args.table:
        return table(args.table)
    scn = loads(
        scenario_text(args.rate, args.rtt, args.flows, args.seconds, args.cca, args.router),
        source="<host-timing>",
    )
    config = resolve(scn)
    work = args.keep or Path(tempfile.mkdtemp(prefix="satcc-host-timing-"))
    work.mkdir(parents=True, exist_ok=True)
    run = WireRun(config, work, capture=True, cpu_latency_us=None if args.no_cpu_latency else 0)
    run.execute()
    max_ns = int(args.max_us * 1000)
    if args.router:
        return router_report(args, run, work, max_ns)
    lp = run.plan.links[0]
    snd_ip, rcv_ip = lp.addr(lp.a), lp.addr(lp.b)
    snd, snd_long = turnarounds(read_frames(work / "wire-0a.pcap"), snd_ip, False, max_ns)
    rcv, rcv_long = turnarounds(read_frames(work / "wire-0b.pcap"), rcv_ip, True, max_ns)
    report = {
        "setup": setup(args),
        "sender_us": quantiles(snd),
        "sender_pairs": len(snd),
        "sender_over_max": snd_long,
        "receiver_us": quantiles(rcv),
        "receiver_pairs": len(rcv),
        "receiver_over_max": rcv_long,
    }
    print(json.dumps(report, indent=1))
    if args.json:
        report["sender_ns"], report["receiver_ns"] = snd, rcv
        args.json.write_text(json.dumps(report) + "\n")
    return 0


def setup(args, extra: dict | None = None) -> dict:
    return {
        "rate": args.rate,
        "rtt_ms": args.rtt,
        "flows": args.flows,
        "seconds": args.seconds,
        "cca": args.cca,
        "cpu_latency_us": None if args.no_cpu_latency else 0,
        "kernel": subprocess.run(
            ["uname", "-r"], check=False, capture_output=True, text=True
        ).stdout.strip(),
        **(extra or {}),
    }


def router_report(args, run, work: Path, max_ns: int) -> int:
    """The router's forwarding time, data (snd -> rcv) and ACKs (rcv -> snd) pooled."""
    l0, l1 = run.plan.links[0], run.plan.links[1]
    snd_ip, rcv_ip = l0.addr(l0.a), l1.addr(l1.b)
    at_r0 = read_segments(work / "wire-0b.pcap")  # link 0's veth end towards the router
    at_r1 = read_segments(work / "wire-1a.pcap")  # link 1's
    data, data_lost, data_long = forwarding(at_r0, at_r1, snd_ip, max_ns)
    acks, acks_lost, acks_long = forwarding(at_r1, at_r0, rcv_ip, max_ns)
    both = data + acks
    report = {
        "setup": setup(args, {"router": True}),
        "router_us": quantiles(both),
        "data_us": quantiles(data),
        "ack_us": quantiles(acks),
        "router_pairs": len(both),
        "router_unmatched": data_lost + acks_lost,
        "router_over_max": data_long + acks_long,
    }
    print(json.dumps(report, indent=1))
    if args.json:
        report["router_ns"] = both
        args.json.write_text(json.dumps(report) + "\n")
    return 0


def table(paths: list[Path]) -> int:
    """Pool the raw samples of several runs; print the Rust quantile tables."""
    docs = [json.loads(p.read_text()) for p in paths]
    for side in ("sender", "receiver", "router"):
        if not any(f"{side}_ns" in d for d in docs):
            continue
        xs = sorted(x for d in docs for x in d.get(f"{side}_ns", []))
        points = []
        for q in QUANTILES:
            i = min(len(xs) - 1, round(q * (len(xs) - 1)))
            points.append(f"({float(q)!r}, {xs[i]})")
        name = f"KERNEL_{side.upper()}_QUANTILES_NS"
        print(f"// {len(xs)} samples; mean {sum(xs) / len(xs) / 1000:.1f} us")
        print(f"pub const {name}: &[(f64, u64)] = &[{', '.join(points)}];")
    return 0


if __name__ == "__main__":
    sys.exit(main())
