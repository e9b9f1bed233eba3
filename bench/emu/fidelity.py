"""satcc-linkd's fidelity and limits on this machine, against the targets below, as
root.

1. Added one-way delay: timestamped UDP probes (sender stamps CLOCK_REALTIME just before
   sendto, the receiver takes the kernel's receive stamp, SO_TIMESTAMPNS, same clock) through
   the emulator with a configured one-way delay D, against the same probes over a plain veth
   pair (the stack's own latency). Error = (emulated one-way - D) - plain one-way median;
   p50/p99 of |error|. Target: p99 within 0.1 ms. Idle and with a TCP bulk flow alongside.
2. Delivered rate: iperf3 UDP offered at 1.2 x the configured rate; the receiver's rate (IP
   bytes: 1472-byte payloads are 1500-byte packets) over the steady seconds vs the configured
   rate. Target: within 1 %.
3. Maximum clean throughput: iperf3 TCP over a plain veth pair (GSO/GRO/TSO and checksum
   offload off, MTU 1500: the machine's limit for this setup) vs through satcc-linkd with an
   unlimited (100 Gbit/s), zero-delay link: the ratio. Plus UDP offered at 1 Gbit/s through a
   1 Gbit/s link: frames the emulator's sockets dropped (emulator-induced loss). Target: none.

    python bench/emu/fidelity.py [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from satcc.emu import host, linkd, topology
from satcc.scenario import loads, resolve

MS = 1_000_000
PROBE_PORT = 9000
PAYLOAD_UDP = 1472  # 1500 MTU - 20 IP - 8 UDP
IP_PER_PAYLOAD = 1500 / 1472
# satcc-linkd pinned to one CPU, the nodes' receive processing steered to the others (the
# runner's default); --no-steer measures the emulator without it
STEER_RX = True
BIN_NS = 100 * MS  # satcc-linkd's series bins in the bed

RECEIVER = r"""
import socket, struct, sys, json
n, port, timeout = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
SO_TIMESTAMPNS = 35  # asm-generic/socket.h (SCM_TIMESTAMPNS is the same number)
s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
s.bind(("0.0.0.0", port)); s.settimeout(timeout)
print("ready", flush=True)
out = []
try:
    while len(out) < n:
        data, anc, _, _ = s.recvmsg(2048, 64)
        rx = None
        for lvl, typ, d in anc:
            if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", d[:16]); rx = sec * 10**9 + nsec
        seq, tx = struct.unpack("!QQ", data[:16])
        out.append((seq, tx, rx))
except socket.timeout:
    pass
print(json.dumps(out))
"""

SENDER = r"""
import socket, struct, sys, time
dst, port, n, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
nxt = time.monotonic()
for i in range(n):
    nxt += gap
    while time.monotonic() < nxt:
        pass
    s.sendto(struct.pack("!QQ", i, time.time_ns()) + b"x" * 48, (dst, port))
"""


def bed_scenario(rate_bps: int, delay_ns: int, queue_pkts: int) -> dict:
    """One link a–b, both directions alike, resolved by the scenario layer as for any run (the
    topology and satcc-linkd read the resolved form). The bed runs its own traffic; the
    scenario's flow, which a valid scenario needs, is never started."""
    return resolve(
        loads(
            f"""
            [scenario]
            name = "bench-emu-bed"
            duration = "1 h"
            seed = 1
            [[link]]
            a = "a"
            b = "b"
            rate = "{rate_bps} bit/s"
            delay = "{delay_ns} ns"
            queue = "{queue_pkts} pkt"
            [[flow]]
            from = "a"
            to = "b"
            """
        )
    )


class Bed:
    """Two namespaces joined by one link: through satcc-linkd, or by a plain veth pair."""

    def __init__(
        self,
        emulated: bool,
        rate_bps: int = 100_000_000_000,
        delay_ns: int = 0,
        queue_pkts: int = 10_000,
        workdir: Path = Path("/tmp"),
    ):
        steer = STEER_RX
        self.run_id = host.new_run_id()
        self.record = host.register_run(self.run_id)
        self.emulated = emulated
        self.linkd = None
        self.rows: list[dict] = []
        cfg = bed_scenario(rate_bps, delay_ns, queue_pkts)
        self.plan = topology.plan(cfg, self.run_id)
        try:
            if emulated:
                topology.build(self.plan)
                place = linkd.placement(self.plan.config) if steer else None
                if place is not None and topology.steer_rx(self.plan, place[1]):
                    raise RuntimeError("no receive packet steering on the node interfaces")
                lcfg = linkd.config(
                    self.plan,
                    1,
                    BIN_NS,
                    3600 * 10**9,
                    workdir / f"{self.run_id}.jsonl",
                    cpu=place[0] if place is not None else None,
                )
                self.linkd = linkd.Linkd(lcfg, workdir)
                self.linkd.start(time.monotonic_ns())
            else:
                self._plain()
        except BaseException:
            self.close()
            raise
        self.a, self.b = self.plan.namespaces
        self.addr_b = self.plan.links[0].addr(1)
        self._ping()

    def _plain(self) -> None:
        p = self.plan
        lp = p.links[0]
        for ns in p.namespaces:
            host.run_cmd("ip", "netns", "add", ns)
            host.run_cmd("ip", "-n", ns, "link", "set", "lo", "up")
        a, b = p.namespaces
        host.run_cmd(
            "ip",
            "-n",
            a,
            "link",
            "add",
            lp.node_if,
            "mtu",
            "1500",
            "type",
            "veth",
            "peer",
            "name",
            lp.node_if,
            "mtu",
            "1500",
            "netns",
            b,
        )
        for node, ns in enumerate(p.namespaces):
            host.run_cmd("ip", "-n", ns, "addr", "add", f"{lp.addr(node)}/24", "dev", lp.node_if)
            host.run_cmd(*host.ns_cmd(ns, "ethtool", "-K", lp.node_if, *topology.OFFLOADS_OFF))
            host.run_cmd("ip", "-n", ns, "link", "set", lp.node_if, "up")

    def _ping(self) -> None:
        host.run_cmd(
            *host.ns_cmd(self.a, "ping", "-c", "2", "-i", "0.2", "-W", "2", self.addr_b), timeout=10
        )

    def stats(self) -> dict | None:
        if self.linkd is None:
            return None
        self.linkd.stop()
        self.rows, st = linkd.read_series(self.linkd.series_path)
        return st

    def linkd_rate_bps(self, skip_s: float = 1.0) -> float:
        """The rate satcc-linkd itself sent a->b (IP bytes), over its full bins after the first
        `skip_s`: the emulator's own delivered rate, before the receiver's socket buffer."""
        rows = [r for r in self.rows if r["dir"] == "ab" and r["t_s"] >= skip_s]
        rows = [r for r in rows if r["tx_bytes"] > 0][1:-1]  # whole bins of the flow only
        if not rows:
            return float("nan")
        return sum(r["tx_bytes"] for r in rows) * 8 / (len(rows) * BIN_NS / 1e9)

    def close(self) -> None:
        if self.linkd is not None:
            self.linkd.stop()
        host.delete_namespaces(self.plan.all_namespaces)
        self.record.remove()


def probes(bed: Bed, n: int, gap_s: float) -> list[int]:
    """One-way delays (ns) of n probes sent gap_s apart."""
    rx = subprocess.Popen(
        host.ns_cmd(bed.b, sys.executable, "-c", RECEIVER, str(n), str(PROBE_PORT), "3"),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert rx.stdout is not None
    rx.stdout.readline()
    subprocess.run(
        host.ns_cmd(
            bed.a, sys.executable, "-c", SENDER, bed.addr_b, str(PROBE_PORT), str(n), str(gap_s)
        ),
        check=True,
    )
    out, _ = rx.communicate(timeout=30)
    rows = json.loads(out.strip().splitlines()[-1])
    return [r[2] - r[1] for r in rows if r[2] is not None]


def udp_rcvbuf_errors(ns: str) -> int:
    """The receiving stack's UDP buffer overflows (RcvbufErrors) in namespace `ns`: loss that
    is neither the emulator's nor the link's (the receiver did not keep up)."""
    text = host.run_cmd(*host.ns_cmd(ns, "cat", "/proc/net/snmp")).stdout
    rows = [line.split() for line in text.splitlines() if line.startswith("Udp:")]
    return int(dict(zip(rows[0][1:], rows[1][1:], strict=True))["RcvbufErrors"])


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def iperf(bed: Bed, args: list[str], seconds: int) -> dict:
    srv = subprocess.Popen(
        host.ns_cmd(bed.b, "iperf3", "-s", "-1", "-J", "-p", "5999"),
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)
    cli = subprocess.run(
        host.ns_cmd(
            bed.a, "iperf3", "-c", bed.addr_b, "-p", "5999", "-J", "-t", str(seconds), *args
        ),
        capture_output=True,
        text=True,
        check=False,
    )
    out, _ = srv.communicate(timeout=seconds + 20)
    return {"client": json.loads(cli.stdout or "{}"), "server": json.loads(out or "{}")}


def steady_rate_bps(server: dict) -> float:
    """Receiver's payload rate over the intervals after the first, as IP bits per second."""
    iv = [i["sum"] for i in server.get("intervals", [])][1:]
    if not iv:
        return float("nan")
    bits = sum(i["bytes"] * 8 for i in iv)
    secs = sum(i["seconds"] for i in iv)
    return bits / secs * IP_PER_PAYLOAD


def delay_bench(quick: bool) -> dict:
    n = 1000 if quick else 3000
    gap = 0.002
    res = {}
    bed = Bed(False)
    try:
        plain = probes(bed, n, gap)
    finally:
        bed.close()
    base = statistics.median(plain)
    res["plain_owd_us"] = {"p50": base / 1e3, "p99": quantile(plain, 0.99) / 1e3}
    for d_ms in (10, 100):
        for load in (False, True):
            bed = Bed(True, rate_bps=100_000_000, delay_ns=d_ms * MS, queue_pkts=1000)
            try:
                bulk = None
                if load:
                    srv = subprocess.Popen(
                        host.ns_cmd(bed.b, "iperf3", "-s", "-1", "-p", "5998"),
                        stdout=subprocess.DEVNULL,
                    )
                    time.sleep(0.3)
                    bulk = subprocess.Popen(
                        host.ns_cmd(
                            bed.a,
                            "iperf3",
                            "-c",
                            bed.addr_b,
                            "-p",
                            "5998",
                            "-t",
                            str(int(n * gap) + 3),
                        ),
                        stdout=subprocess.DEVNULL,
                    )
                    time.sleep(1.0)
                owd = probes(bed, n, gap)
                if bulk is not None:
                    bulk.terminate()
                    bulk.wait()
                    srv.terminate()
                    srv.wait()
                stats = bed.stats()
            finally:
                bed.close()
            if load:
                # under load the probes queue behind the bulk flow: only the idle case measures
                # the emulator's timing; loaded runs report the emulator's own lateness
                err = None
            else:
                err = [abs(x - d_ms * MS - base) for x in owd]
            key = f"delay_{d_ms}ms_{'loaded' if load else 'idle'}"
            res[key] = {
                "probes": len(owd),
                "err_p50_us": None if err is None else quantile(err, 0.5) / 1e3,
                "err_p99_us": None if err is None else quantile(err, 0.99) / 1e3,
                "linkd_lateness_p50_us": stats["lateness"]["p50_us"] if stats else None,
                "linkd_lateness_p99_us": stats["lateness"]["p99_us"] if stats else None,
                "linkd_lateness_max_us": stats["lateness"]["max_us"] if stats else None,
            }
    return res


def rate_bench(quick: bool) -> dict:
    res = {}
    secs = 4 if quick else 6
    for rate in (10_000_000, 100_000_000, 500_000_000):
        bed = Bed(True, rate_bps=rate, delay_ns=5 * MS, queue_pkts=1000)
        try:
            r = iperf(bed, ["-u", "-b", str(int(rate * 1.2)), "-l", str(PAYLOAD_UDP)], secs)
            rcvbuf = udp_rcvbuf_errors(bed.b)
            stats = bed.stats()
        finally:
            bed.close()
        got = steady_rate_bps(r["server"])
        res[f"rate_{rate // 1_000_000}mbit"] = {
            "configured_bps": rate,
            "delivered_bps": got,
            "ratio": got / rate,
            "socket_drops": sum(d["socket_drops"] for d in stats["dirs"]) if stats else None,
            "receiver_udp_rcvbuf_errors": rcvbuf,
            # what the emulator sent, before the receiving iperf3's socket buffer drops any
            "linkd_sent_ratio": bed.linkd_rate_bps() / rate,
        }
    return res


def cpu_busy_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs so far (/proc/stat; iowait counts as idle)."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]
    return sum(f) - idle, sum(f)


def timed_iperf(bed: Bed, args: list[str], secs: int) -> tuple[dict, float]:
    """iperf(...) and the machine's busy CPU-seconds per second over the run (2.0 = both
    cores of a 2-core machine busy throughout)."""
    b0, t0 = cpu_busy_jiffies()
    r = iperf(bed, args, secs)
    b1, t1 = cpu_busy_jiffies()
    return r, (b1 - b0) / max(t1 - t0, 1) * os.cpu_count()


def throughput_bench(quick: bool) -> dict:
    secs = 4 if quick else 8
    out = {}
    bed = Bed(False)
    try:
        plain, plain_cpus = timed_iperf(bed, [], secs)
    finally:
        bed.close()
    plain_bps = plain["server"]["end"]["sum_received"]["bits_per_second"]
    bed = Bed(True)
    try:
        emu, emu_cpus = timed_iperf(bed, [], secs)
        stats = bed.stats()
    finally:
        bed.close()
    emu_bps = emu["server"]["end"]["sum_received"]["bits_per_second"]
    out["tcp_plain_veth_bps"] = plain_bps
    out["tcp_through_linkd_bps"] = emu_bps
    out["tcp_ratio"] = emu_bps / plain_bps
    # Where the ratio comes from: busy CPUs over each run, and CPU-seconds per Gbit carried.
    # When the plain pair already keeps every core busy, the path through satcc-linkd can reach
    # at most plain_cpu_s_per_gbit / emu_cpu_s_per_gbit of its rate.
    out["cpus"] = os.cpu_count()
    out["tcp_plain_busy_cpus"] = plain_cpus
    out["tcp_linkd_busy_cpus"] = emu_cpus
    out["tcp_plain_cpu_s_per_gbit"] = plain_cpus / (plain_bps / 1e9)
    out["tcp_linkd_cpu_s_per_gbit"] = emu_cpus / (emu_bps / 1e9)
    out["tcp_linkd_socket_drops"] = sum(d["socket_drops"] for d in stats["dirs"]) if stats else None
    # UDP offered at 1 Gbit/s through a 1 Gbit/s link
    bed = Bed(True, rate_bps=1_000_000_000, delay_ns=1 * MS, queue_pkts=1000)
    try:
        u = iperf(bed, ["-u", "-b", "1000M", "-l", str(PAYLOAD_UDP)], secs)
        out["udp_1g_receiver_rcvbuf_errors"] = udp_rcvbuf_errors(bed.b)
        stats = bed.stats()
    finally:
        bed.close()
    end = u["server"].get("end", {}).get("sum", {})
    ab = stats["dirs"][0] if stats else {}
    out["udp_1g_offered_sent_bps"] = (
        u["client"].get("end", {}).get("sum", {}).get("bits_per_second")
    )
    out["udp_1g_received_bps"] = steady_rate_bps(u["server"]) / IP_PER_PAYLOAD
    out["udp_1g_lost_percent"] = end.get("lost_percent")
    out["udp_1g_linkd_socket_drops"] = ab.get("socket_drops")
    out["udp_1g_linkd_queue_drops"] = ab.get("drops_queue")
    out["udp_1g_linkd_rx_frames"] = ab.get("rx_frames")
    out["udp_1g_linkd_tx_frames"] = ab.get("tx_frames")
    out["udp_1g_linkd_send_failures"] = ab.get("send_failures")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--only",
        choices=("delay", "rate", "throughput"),
        action="append",
        help="run only these parts (repeatable; default: all three)",
    )
    ap.add_argument(
        "--no-steer",
        action="store_true",
        help="leave satcc-linkd unpinned and the nodes' receive processing on its core",
    )
    args = ap.parse_args()
    global STEER_RX
    STEER_RX = not args.no_steer
    parts = args.only or ["delay", "rate", "throughput"]
    host.require_root()
    host.cleanup()
    res = {
        "kernel": subprocess.run(
            ["uname", "-r"], capture_output=True, text=True, check=False
        ).stdout.strip()
    }
    for part, bench in (
        ("delay", delay_bench),
        ("rate", rate_bench),
        ("throughput", throughput_bench),
    ):
        if part in parts:
            res.update(bench(args.quick))
    text = json.dumps(res, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
