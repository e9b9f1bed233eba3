"""One emulated run, start to finish, on the main thread:

    root? ─► clean stale runs ─► record the run ─► build the topology ─► satcc-linkd ready
      ─► receivers listening, ARP warmed, tcpdump capturing, TCP senders waiting ─► `start`
      at t0 ─► TCP senders connect at t0 + start, UDP clients start then, `ss` every bin ─► t0 + duration: stop everything
      ─► tear down (always: normal end, exception, Ctrl-C, SIGTERM) ─► the engine's raw output

Children are started from this thread only: their PR_SET_PDEATHSIG fires when the thread that
forked them dies, so a sampler thread must not start them.

Raw output has the shape of `_native.run_sim`'s (flows, flow_series, link_series, stats), so
`RunResult.from_engine` maps both engines the same way. Figures come from the kernel: the
per-bin series from `ss` (sender: cwnd, ssthresh, srtt, unacked, pacing rate, retransmissions;
receiver: bytes received), link series from satcc-linkd; totals from the last samples and the
receivers' and senders' JSON reports (satcc.emu.xfer for TCP, iperf3 for UDP; kept in DIR/emu/).

Deviations from the simulator's figures:
1. rtt_mean_ms / rtt_p95_ms are over the per-bin `ss` srtt samples, not over every RTT sample;
   rtt_min_ms is the kernel's `minrtt`.
2. fct_s of a limited TCP flow is the receiver's clock at its last byte (satcc.emu.xfer),
   minus the flow's start; of a limited UDP flow, the end of the first bin whose sample shows
   the whole size received (bin resolution), or the iperf3 server's receive time.
3. rto_count and recovery_count come from the sender namespace's kernel counters (TcpExt
   TCPTimeouts; TCPSackRecovery + TCPRenoRecovery), so only for a flow that is the only TCP flow
   leaving its node (null otherwise: the counters are per namespace). iproute2 6.1's ss does
   not print per-socket counts.
4. delivered_bytes per bin is the receiver's in-order byte count (`bytes_received`) interpolated
   at the bin edges from the instants the samples were actually taken (an `ss` call takes a few
   ms, more on a loaded machine); cwnd, srtt and the other state are as sampled.
5. Every TCP flow is satcc.emu.xfer's sender, started before t0 and connecting (SYN) at the
   flow's start as the simulator's does (not iperf3, whose data connection opens after its
   control connection's three round trips: 2.2 s late over GEO, xfer.py). A limited transfer (`size`) ends when the receiver has read the last byte (iperf3
   -n ends when the sender has *written* it and drops the rest: xfer.py).
6. Flows with an `app` (on/off, requests) use satcc.emu.xfer `app`: as in the simulator they
   have no fct_s and their goodput is over the rest of the run; DIR/emu/app<id>.json holds
   per on-period and per request what was written and received, and cwnd around each write
   (satcc.emu.apps). An "on" period's writer keeps up to 32 KiB unsent in the socket
   (xfer.ONOFF_LOWAT), which is still sent after it goes off; the simulator keeps none.
7. A sender connects when its process wakes after t0 + start, so its SYN leaves a little late
   (0.2-64 ms after t0 on this VM at load 18-26, 2026-11-29) and flows "starting together"
   never do. satcc-linkd records each connection's first SYN and first data segment on the
   wire (crates/satcc-emu firsts.rs);
   the summary's `stats.first_syn_ns` / `first_data_ns` give them per flow (ns from t0,
   `first_on_wire`), and `satcc fidelity` starts each simulator twin's flows at those SYNs.
8. A UDP flow is iperf3's, whose first datagram leaves after its control connection's
   exchange (about three round trips after the flow's start: ~0.9 s at 230 ms, study 000's
   UDP test, measured by the server's 14.2 s of a 15 s window): its goodput is over the time
   iperf3's server measured (as the simulator's, over the flow's sending), and it sends that
   much less in the run.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from satcc.emu import host, linkd, topology, traffic
from satcc.emu.host import EmuError
from satcc.errors import Terminated, forget_termination, raise_if_terminated, raise_terminated
from satcc.results import ENGINE_FLOW_SERIES_COLUMNS, ENGINE_LINK_SERIES_COLUMNS, FLOW
from satcc.results import FLOW_SERIES as FS

START_MARGIN_NS = 200_000_000  # between `start` and t0: lets every process see the origin
# TCP senders (satcc.emu.xfer) are waited for before the origin is fixed: Python's start-up
# inside `ip netns exec` took 130-230 ms on a loaded 2-core machine, 1.4-2.0 s for 8 at once at
# load average 20
SENDER_READY_TIMEOUT_S = 60.0
READY_TIMEOUT_S = 5.0
CLIENT_STOP_GRACE_S = 1.0
AVAILABLE_CCAS = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
REQUIRED_TOOLS = ("ip", "ethtool", "iperf3", "ss", "ping")


def available_ccas() -> list[str]:
    try:
        return AVAILABLE_CCAS.read_text().split()
    except OSError:
        return []


def resolve_ccas(config: dict[str, Any], registered: list[str]) -> dict[int, str]:
    """Kernel CCA name per TCP flow: a built-in (reno, cubic, bbr here) as it is when the flow
    sets no `cc` parameters and no `cwnd_clamp`, anything else a BPF struct_ops program
    registered through satcc.emu.bpf, the sender cap compiled in (its kernel names are
    appended to `registered`, for teardown)."""
    builtins = set(available_ccas())
    out: dict[int, str] = {}
    for f in config["flows"]:
        if f.get("proto", "tcp") != "tcp":
            continue
        name = traffic.kernel_cca(f["cca"])
        clamp = f.get("cwnd_clamp")  # the sender's cap: compiled into the BPF program
        if name in builtins and not f.get("cc") and clamp is None:
            out[f["id"]] = name
            continue
        try:
            from satcc.emu import bpf
        except ImportError:
            why = (
                f"the kernel's {name} takes no per-flow parameters (cc = {f['cc']})"
                if name in builtins
                else f"this kernel has no {name!r}"
            )
            raise EmuError(
                f"flow[{f['id']}].cca: {why}; available here: "
                f"{', '.join(sorted(builtins))} (BPF struct_ops CCAs are not "
                "available in this build)"
            ) from None
        try:
            before = set(bpf.registered())
            kname = bpf.ensure_registered(f["cca"], f.get("cc") or None, clamp)
        except Exception as e:  # noqa: BLE001 - any loader failure is the user's to read
            raise EmuError(
                f"flow[{f['id']}].cca: cannot load {f['cca']!r} as a BPF congestion control: {e}"
            ) from None
        if kname not in before and kname not in registered:
            registered.append(kname)  # ours to unregister; one registered before is left alone
        out[f["id"]] = kname
    return out


APP_KINDS = ("bulk", "onoff", "requests")


def check_apps(config: dict[str, Any]) -> None:
    """Application traffic the emulator can carry: bulk (iperf3, satcc.emu.xfer `send`), on/off
    and requests (satcc.emu.xfer `app`); any other kind is refused before anything starts."""
    for f in config["flows"]:
        app = f.get("app") or {"kind": "bulk"}
        if app["kind"] not in APP_KINDS:
            raise EmuError(
                f"flow[{f['id']}].app.kind: expected one of {', '.join(map(repr, APP_KINDS))} "
                f"in the emulator, found {app['kind']!r}; run it with `satcc sim`"
            )


def check_tools(capture: bool) -> None:
    missing = [
        t for t in REQUIRED_TOOLS + (("tcpdump",) if capture else ()) if shutil.which(t) is None
    ]
    if missing:
        raise EmuError(
            f"missing tools: {', '.join(missing)}; `satcc emu doctor` says how to "
            "install them (Debian: apt-get install iproute2 ethtool iperf3 tcpdump "
            "iputils-ping)"
        )


class Run:
    """State of one run, so teardown can find everything whatever happened."""

    def __init__(
        self,
        config: dict[str, Any],
        workdir: Path,
        capture: bool = True,
        spin_ns: int | None = None,
        rt_priority: int | None = None,
        vpn_server: str | None = None,
        steer_rx: bool = True,
        cpu_latency_us: int | None = linkd.DEFAULT_CPU_LATENCY_US,
    ):
        self.config = config
        self.steer_rx = steer_rx
        self.workdir = workdir
        self.capture = capture
        self.spin_ns = spin_ns
        self.rt_priority = rt_priority
        self.cpu_latency_us = cpu_latency_us
        self.run_id = host.new_run_id()
        self.record: host.RunRecord | None = None
        self.plan: topology.Plan | None = None
        self.linkd: linkd.Linkd | None = None
        self.procs: list[subprocess.Popen] = []
        self.servers: dict[int, subprocess.Popen] = {}
        self.clients: dict[int, subprocess.Popen] = {}
        self.dumps: list[subprocess.Popen] = []
        # (bin index, {namespace: (seconds since t0 when ss returned, {ports: fields})})
        self.samples: list[
            tuple[int, dict[str, tuple[float, dict[tuple[int, int], dict[str, float]]]]]
        ] = []
        self.late_samples = 0
        self.linkd_stats: dict[str, Any] | None = None
        self.warnings: list[str] = []
        self.bpf_registered: list[str] = []  # BPF CCAs this run registered
        self.vpn_server = vpn_server
        self.vpn = None

    # -- lifecycle -----------------------------------------------------------------------

    def execute(self, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
        check_apps(self.config)
        host.require_root()
        check_tools(self.capture)
        host.cleanup()  # stale runs of crashed runners (live runs are left alone)
        self.workdir.mkdir(parents=True, exist_ok=True)
        old = signal.signal(signal.SIGTERM, raise_terminated)  # the teardown below runs
        try:
            ccas = resolve_ccas(self.config, self.bpf_registered)
            for f in self.config["flows"]:
                if f.get("pacing", "auto") != "auto":
                    self.warnings.append(
                        f"flow[{f['id']}].pacing = {f['pacing']!r} is not applied in the emulator: "
                        "the kernel paces as Linux does without fq (when the CCA asks, e.g. BBR)"
                    )
            self.record = host.register_run(self.run_id)
            self.plan = topology.plan(self.config, self.run_id)
            topology.build(self.plan)
            self._start_linkd()
            self._warm_arp()
            if self.vpn_server is not None:
                self._start_vpn()
            self._start_servers(ccas)
            if self.capture:
                self._start_captures()
            self._timeline(ccas, progress)
            self._stop_traffic()
            self._record_netstat()
            raise_if_terminated()  # a SIGTERM whose exception was swallowed where it landed
            return self._raw()
        except Terminated:
            forget_termination()
            raise
        finally:
            self.teardown()
            signal.signal(signal.SIGTERM, old)

    def teardown(self) -> None:
        """Stop every process and remove every namespace of this run; idempotent."""
        if self.vpn is not None:
            self.vpn.stop()
        for p in [*self.clients.values(), *self.servers.values(), *self.dumps, *self.procs]:
            if p.poll() is None:
                p.terminate()
        for p in [*self.clients.values(), *self.servers.values(), *self.dumps, *self.procs]:
            try:
                p.wait(2.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.linkd is not None:
            self.linkd.stop()
        if self.plan is not None:
            left = host.delete_namespaces(self.plan.all_namespaces)
            if left:
                self.warnings.append(f"could not delete namespaces: {', '.join(left)}")
        if self.bpf_registered:
            from satcc.emu import bpf

            for kname in self.bpf_registered:
                try:
                    bpf.unregister(kname)
                except Exception as e:  # noqa: BLE001 - teardown goes on whatever happens
                    self.warnings.append(f"could not unregister {kname}: {e}")
            self.bpf_registered = []
        if self.record is not None and not (
            self.plan and any((host.NETNS_DIR / ns).exists() for ns in self.plan.all_namespaces)
        ):
            self.record.remove()

    # -- set-up --------------------------------------------------------------------------

    def _start_linkd(self) -> None:
        assert self.plan is not None
        place = linkd.placement(self.plan.config) if self.steer_rx else None
        if place is not None:
            failed = topology.steer_rx(self.plan, place[1])
            if failed:
                self.warnings.append(
                    f"no receive packet steering on {', '.join(failed)}: the receiving stack "
                    "runs on satcc-linkd's core (lower maximum throughput)"
                )
        cfg = linkd.config(
            self.plan,
            self.config["seed"],
            self.config["bin_ns"],
            self.config["duration_ns"],
            self.workdir / "link_series.jsonl",
            self.spin_ns,
            self.rt_priority,
            place[0] if place is not None else None,
            self.cpu_latency_us,
        )
        self.linkd = linkd.Linkd(cfg, self.workdir)

    def _start_vpn(self) -> None:
        """Study 000's tunnel: every flow end reaches the other through OpenVPN (satcc.emu.vpn)."""
        from satcc.emu import vpn

        assert self.plan is not None
        nodes = self.plan.nodes
        if self.vpn_server not in nodes:
            raise EmuError(
                f"--vpn: expected a node of the scenario ({', '.join(nodes)}), "
                f"found {self.vpn_server!r}"
            )
        server = nodes.index(self.vpn_server)
        clients = sorted(
            {f["src"] for f in self.config["flows"]} | {f["dst"] for f in self.config["flows"]}
        )
        self.vpn = vpn.Vpn(self.plan, server, clients, self.workdir)
        self.vpn.start()

    def _dst_addr(self, f: dict[str, Any]) -> str:
        assert self.plan is not None
        if self.vpn is not None:
            from satcc.emu import vpn

            return vpn.client_addr(f["dst"])
        return self.plan.primary_addr[f["dst"]]

    def _start_servers(self, ccas: dict[int, str]) -> None:
        assert self.plan is not None
        for f in self.config["flows"]:
            ns = self.plan.namespaces[f["dst"]]
            cmd = traffic.server_cmd(ns, f, ccas.get(f["id"], ""))
            with open(self.workdir / f"server{f['id']}.json", "w") as out:
                self.servers[f["id"]] = traffic.spawn(cmd, stdout=out)
        deadline = time.monotonic() + READY_TIMEOUT_S
        waiting = {f["id"]: f for f in self.config["flows"]}
        while waiting and time.monotonic() < deadline:
            for fid, f in list(waiting.items()):
                ns = self.plan.namespaces[f["dst"]]
                port = traffic.SERVER_PORT_BASE + fid
                p = host.run_cmd(*host.ns_cmd(ns, "ss", "-Hlnt", f"sport = :{port}"), check=False)
                q = host.run_cmd(*host.ns_cmd(ns, "ss", "-Hlnu", f"sport = :{port}"), check=False)
                if p.stdout.strip() or q.stdout.strip():
                    del waiting[fid]
            if waiting:
                time.sleep(0.02)
        if waiting:
            raise EmuError(f"iperf3 servers did not start for flows {sorted(waiting)}")

    def _warm_arp(self) -> None:
        """One ping across every link in each direction, so no flow pays for ARP."""
        assert self.plan is not None
        pings = []
        for lp in self.plan.links:
            for node, peer in ((lp.a, lp.b), (lp.b, lp.a)):
                pings.append(
                    traffic.spawn(
                        host.ns_cmd(
                            self.plan.namespaces[node],
                            "ping",
                            "-c",
                            "1",
                            "-W",
                            "3",
                            "-q",
                            lp.addr(peer),
                        )
                    )
                )
        for p in pings:
            try:
                p.wait(5.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def _start_captures(self) -> None:
        assert self.plan is not None
        nodes = sorted({f["dst"] for f in self.config["flows"]})
        for node in nodes:
            ifaces = [lp.node_if for lp in self.plan.links if node in (lp.a, lp.b)]
            if self.vpn is not None:
                ifaces.append("any")  # the tunnel's TCP and the links' encrypted UDP
            name = self.plan.nodes[node]
            path = self.workdir / f"capture-{node}-{_safe(name)}.pcap"
            err_path = self.workdir / f"tcpdump-{node}.stderr"
            with open(err_path, "w") as err:
                self.dumps.append(
                    traffic.spawn(
                        traffic.tcpdump_cmd(self.plan.namespaces[node], ifaces, path), stderr=err
                    )
                )
            deadline = time.monotonic() + READY_TIMEOUT_S
            while time.monotonic() < deadline and "listening on" not in err_path.read_text():
                if self.dumps[-1].poll() is not None:
                    raise EmuError(f"tcpdump failed: {err_path.read_text().strip()}")
                time.sleep(0.02)

    # -- the run -------------------------------------------------------------------------

    def _timeline(self, ccas: dict[int, str], progress: Callable[[float], None] | None) -> None:
        assert self.plan is not None and self.linkd is not None
        cfg = self.config
        duration_ns, bin_ns = cfg["duration_ns"], cfg["bin_ns"]
        # TCP senders (satcc.emu.xfer, Python) start first and say when they are up; the origin
        # is fixed after the last, and each connects at its flow's start on its own (Python's
        # start-up, up to 2 s for 8 senders at load 20, would otherwise delay the SYN)
        tcp = [f for f in cfg["flows"] if traffic.tcp_flow(f)]
        for f in tcp:
            self._start_tcp_client(f, ccas.get(f["id"], ""))
        self._await_ready(tcp)
        t0 = time.monotonic_ns() + START_MARGIN_NS
        self.t0 = t0
        self.linkd.start(t0)
        for f in tcp:
            stdin = self.clients[f["id"]].stdin
            assert stdin is not None
            stdin.write(f"{t0 + f['start_ns']}\n".encode())
            stdin.close()
        by_id = {f["id"]: f for f in cfg["flows"]}
        starts = sorted((f["start_ns"], f["id"]) for f in cfg["flows"] if not traffic.tcp_flow(f))
        n_bins = math.ceil(duration_ns / bin_ns)
        sample_ns = [min((k + 1) * bin_ns, duration_ns) for k in range(n_bins)]
        spaces = sorted({f["src"] for f in cfg["flows"]} | {f["dst"] for f in cfg["flows"]})
        si = 0
        while True:
            raise_if_terminated()  # spawning (`ss`, clients) forks: a SIGTERM may land there
            now = time.monotonic_ns() - t0
            while starts and starts[0][0] <= now:
                _, fid = starts.pop(0)
                self._start_client(by_id[fid], ccas.get(fid, ""))
            while si < len(sample_ns) and sample_ns[si] <= now:
                if now - sample_ns[si] > bin_ns // 2:
                    self.late_samples += 1
                self._sample(si, spaces)
                si += 1
                now = time.monotonic_ns() - t0
            if progress is not None:
                progress(min(1.0, max(0.0, now / duration_ns)))
            if si >= len(sample_ns):
                break
            if self.linkd is not None and not self.linkd.alive():
                raise EmuError(f"satcc-linkd stopped during the run: {self.linkd.stderr()}")
            nxt = sample_ns[si]
            if starts:
                nxt = min(nxt, starts[0][0])
            wait = (nxt - (time.monotonic_ns() - t0)) / 1e9
            if wait > 0:
                time.sleep(wait)

    def _start_client(self, f: dict[str, Any], cca: str) -> None:
        assert self.plan is not None
        ns = self.plan.namespaces[f["src"]]
        remaining_s = math.ceil((self.config["duration_ns"] - f["start_ns"]) / 1e9) + 1
        cmd = traffic.client_cmd(ns, f, self._dst_addr(f), remaining_s)
        with open(self.workdir / f"client{f['id']}.json", "w") as out:
            self.clients[f["id"]] = traffic.spawn(cmd, stdout=out)

    def _start_tcp_client(self, f: dict[str, Any], cca: str) -> None:
        """The flow's sender, waiting for its origin on stdin (`_timeline`)."""
        assert self.plan is not None
        ns = self.plan.namespaces[f["src"]]
        until = self.config["duration_ns"] - f["start_ns"]
        cmd = traffic.tcp_client_cmd(ns, f, self._dst_addr(f), cca, "stdin", until)
        with open(self.workdir / f"client{f['id']}.json", "w") as out:
            self.clients[f["id"]] = traffic.spawn(
                cmd, stdout=out, stderr=subprocess.PIPE, stdin=subprocess.PIPE
            )

    def _await_ready(self, flows: list[dict[str, Any]]) -> None:
        """Until every TCP sender has said "ready" on stderr (xfer `--origin-ns stdin`)."""
        waiting = {self.clients[f["id"]].stderr: f["id"] for f in flows}
        deadline = time.monotonic() + SENDER_READY_TIMEOUT_S
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EmuError(
                    f"the TCP senders of flows {sorted(waiting.values())} did not start within "
                    f"{SENDER_READY_TIMEOUT_S:.0f} s"
                )
            ready, _, _ = select.select(list(waiting), [], [], left)
            for pipe in ready:
                fid = waiting.pop(pipe)
                line = pipe.readline()
                if line.strip() != b"ready":
                    rest = (line + pipe.read()).decode(errors="replace").strip()
                    pipe.close()
                    raise EmuError(f"the TCP sender of flow {fid} failed: {rest}")
                pipe.close()  # nothing more is read (its stderr was /dev/null before)

    def _sample(self, k: int, spaces: list[int]) -> None:
        assert self.plan is not None
        snap = {}
        for node in spaces:
            ns = self.plan.namespaces[node]
            p = host.run_cmd(*traffic.ss_cmd(ns), check=False)
            snap[ns] = ((time.monotonic_ns() - self.t0) / 1e9, traffic.parse_ss(p.stdout))
        self.samples.append((k, snap))

    def _stop_traffic(self) -> None:
        """The run's end: clients still sending are interrupted (iperf3 then writes its JSON),
        servers follow, captures flush, satcc-linkd writes its last bin and its stats."""
        for p in self.clients.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        _wait_all(list(self.clients.values()), CLIENT_STOP_GRACE_S)
        for p in self.servers.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        _wait_all(list(self.servers.values()), CLIENT_STOP_GRACE_S)
        for p in self.dumps:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        _wait_all(self.dumps, CLIENT_STOP_GRACE_S)
        if self.linkd is not None:
            self.linkd.stop()
            _, self.linkd_stats = linkd.read_series(self.linkd.series_path)

    def _record_netstat(self) -> None:
        """Each sender namespace's kernel TCP counters at the end of the run (`nstat`'s source:
        /proc/net/netstat TcpExt, /proc/net/snmp Tcp) into DIR/emu/netstat-<node>-<name>.json:
        RTOs (TCPTimeouts), recoveries (TCPSackRecovery), undos (TCPFullUndo, TCPPartialUndo,
        TCPDSACKUndo, TCPLossUndo), TCPSpuriousRTOs, ... The namespaces are new each run, so
        the counters are this run's (all flows of that node together)."""
        assert self.plan is not None
        for node in sorted({f["src"] for f in self.config["flows"]}):
            ns = self.plan.namespaces[node]
            counters: dict[str, dict[str, int]] = {}
            for path in ("/proc/net/netstat", "/proc/net/snmp"):
                p = host.run_cmd(*host.ns_cmd(ns, "cat", path), check=False)
                counters.update(parse_proc_net(p.stdout))
            name = self.plan.nodes[node]
            out = self.workdir / f"netstat-{node}-{_safe(name)}.json"
            out.write_text(
                json.dumps(
                    {k: counters[k] for k in ("TcpExt", "Tcp") if k in counters},
                    indent=1,
                    sort_keys=True,
                )
                + "\n"
            )

    # -- results -------------------------------------------------------------------------

    def _raw(self) -> dict[str, Any]:
        assert self.plan is not None
        cfg = self.config
        bin_s = cfg["bin_ns"] / 1e9
        duration_s = cfg["duration_ns"] / 1e9
        fs: dict[str, list[Any]] = {k: [] for k in ENGINE_FLOW_SERIES_COLUMNS}
        cc: dict[str, list[Any]] | None = (
            {"flow_id": [], "t_s": [], "name": [], "value": []} if cfg.get("cc_state") else None
        )
        flows = []
        wire_jitter = self._wire_jitter()
        for f in cfg["flows"]:
            fid = f["id"]
            src_ns, dst_ns = self.plan.namespaces[f["src"]], self.plan.namespaces[f["dst"]]
            ckey = (traffic.CLIENT_PORT_BASE + fid, traffic.SERVER_PORT_BASE + fid)
            skey = (ckey[1], ckey[0])
            last_rx = 0.0
            last_retx = 0.0
            srtts: list[float] = []
            minrtt = None
            sent = 0.0
            fct = None
            received = _cumulative(self.samples, dst_ns, skey, "bytes_received")
            prev_edge = 0.0
            for k, snap in self.samples:
                tx = snap.get(src_ns, (0.0, {}))[1].get(ckey, {})
                rx = snap.get(dst_ns, (0.0, {}))[1].get(skey, {})
                got = rx.get("bytes_received", last_rx)
                retx = tx.get("retrans_total", last_retx)
                # delivered in the bin: the receiver's in-order byte count interpolated at the
                # bin's edges from the actual instants of the samples
                edge = _at(received, min((k + 1) * bin_s, duration_s))
                fs[FS.flow_id].append(fid)
                fs[FS.t_s].append(k * bin_s)
                fs[FS.delivered_bytes].append(int(max(0.0, edge - prev_edge)))
                prev_edge = max(prev_edge, edge)
                fs[FS.cwnd_pkts].append(_int(tx.get("cwnd")))
                fs[FS.ssthresh_pkts].append(_int(tx.get("ssthresh")))
                fs[FS.srtt_ms].append(tx.get("rtt"))
                fs[FS.inflight_pkts].append(_int(tx.get("unacked")))
                fs[FS.pacing_rate_bps].append(tx.get("pacing_rate"))
                fs[FS.retransmits].append(int(max(0.0, retx - last_retx)))
                if cc is not None:
                    for name, value in _cc_state(tx, bool(f.get("ecn"))):
                        cc["flow_id"].append(fid)
                        cc["t_s"].append(k * bin_s)
                        cc["name"].append(name)
                        cc["value"].append(value)
                if "rtt" in tx:
                    srtts.append(tx["rtt"])
                if "minrtt" in tx:
                    minrtt = tx["minrtt"] if minrtt is None else min(minrtt, tx["minrtt"])
                sent = max(sent, tx.get("data_segs_out", 0.0))
                size = f.get("size_bytes")
                if size and fct is None and got >= size:
                    fct = min((k + 1) * bin_s, duration_s) - f["start_ns"] / 1e9
                last_rx, last_retx = max(last_rx, got), max(last_retx, retx)
            client = _read_json(self.workdir / f"client{fid}.json")
            server = _read_json(self.workdir / f"server{fid}.json")
            delivered = int(_at(received, duration_s))
            srv_bytes = _dig(server, "end", "sum_received", "bytes")
            if srv_bytes is None:
                srv_bytes = _dig(server, "end", "sum", "bytes")
            if f.get("proto", "tcp") == "udp" or (f.get("size_bytes") and srv_bytes is not None):
                delivered = max(delivered, int(srv_bytes or 0))
            size = f.get("size_bytes")
            client_retx = _dig(client, "end", "sum_sent", "retransmits")
            if traffic.limited_tcp(f):
                # satcc.emu.xfer: exact bytes and the clock at the receiver's last byte
                delivered = max(delivered, int(_dig(server, "bytes") or 0))
                last_ns = _dig(server, "last_ns")
                if delivered >= size and isinstance(last_ns, int):
                    fct = (last_ns - self.t0) / 1e9 - f["start_ns"] / 1e9
                client_retx = _dig(client, "total_retrans")
            elif traffic.app_flow(f):
                # satcc.emu.xfer `app`: exact bytes; no fct (the simulator's app flows never
                # complete), goodput over the rest of the run as the simulator's
                delivered = max(delivered, int(_dig(server, "bytes") or 0))
                client_retx = _dig(client, "total_retrans")
                self._write_app_record(f, client, server)
            elif traffic.tcp_flow(f):
                # satcc.emu.xfer, bulk: delivered as sampled at the run's end (above)
                client_retx = _dig(client, "total_retrans")
            elif size and fct is None and delivered >= size:
                secs = _dig(server, "end", "sum_received", "seconds")
                if secs is not None:
                    fct = float(secs)
            retx_total = max(last_retx, float(client_retx or 0))
            start_s = f["start_ns"] / 1e9
            active = fct if fct is not None else duration_s - start_s
            udp_secs = _dig(server, "end", "sum", "seconds")
            if (
                f.get("proto", "tcp") == "udp"
                and fct is None
                and isinstance(udp_secs, (int, float))
                and 0 < udp_secs < active
            ):
                # a UDP flow's active time is what iperf3's server measured, not the rest of
                # the run: a limited flow that lost datagrams (the simulator's
                # `UdpFlow::active_end`: the last arrival) and any flow whose datagrams began
                # late (iperf3's control connection takes about three round trips before the
                # first datagram: ~0.9 s at study 000's 230 ms, where the simulator's flow
                # sends at its start) are timed over their sending, not the planned window
                active = float(udp_secs)
            flows.append(
                {
                    FLOW.id: fid,
                    FLOW.delivered_bytes: delivered,
                    FLOW.goodput_bps: delivered * 8 / active if active > 0 else 0.0,
                    FLOW.sent_packets: int(sent),
                    FLOW.retransmitted_packets: int(retx_total),
                    FLOW.rtt_mean_ms: sum(srtts) / len(srtts) if srtts else None,
                    FLOW.rtt_p95_ms: _quantile(srtts, 0.95),
                    FLOW.rtt_min_ms: minrtt,
                    FLOW.fct_s: fct,
                    FLOW.rto_count: None,
                    FLOW.recovery_count: None,
                    **_udp_columns(f, server, wire_jitter.get(fid)),
                }
            )
        rows, stats = linkd.read_series(self.workdir / "link_series.jsonl")
        ls: dict[str, list[Any]] = {k: [r[k] for r in rows] for k in ENGINE_LINK_SERIES_COLUMNS}
        self._kernel_counts(flows)
        raw = {"flows": flows, "flow_series": fs, "link_series": ls, "stats": self._stats(stats)}
        if cc is not None:
            raw["cc_series"] = cc
        return raw

    def _write_app_record(
        self, f: dict[str, Any], client: dict[str, Any], server: dict[str, Any]
    ) -> None:
        """DIR/emu/app<id>.json: the flow's application events and what the receiver saw, in
        seconds from the flow's start (apps.kernel_record)."""
        from satcc.emu import apps

        until = self.config["duration_ns"] - f["start_ns"]
        doc = apps.kernel_record(f, client, server, self.t0 + f["start_ns"], until)
        (self.workdir / f"app{f['id']}.json").write_text(json.dumps(doc, indent=1) + "\n")

    def _wire_jitter(self) -> dict[int, float]:
        """Each captured UDP flow's RFC 3550 jitter on the wire: the destination's capture
        (kernel arrival stamps) against the send times iperf3 writes into each datagram, found
        by the flow's fixed ports. Flows not in a capture (no capture, a tunnel) are left out."""
        assert self.plan is not None
        udp = [f for f in self.config["flows"] if f.get("proto", "tcp") == "udp"]
        if not self.capture or not udp:
            return {}
        from satcc.analyze import read_capture

        out: dict[int, float] = {}
        for node in sorted({f["dst"] for f in udp}):
            path = self.workdir / f"capture-{node}-{_safe(self.plan.nodes[node])}.pcap"
            if not path.exists():
                continue
            fl = read_capture(path).flows
            fl = fl[(fl["proto"] == "udp") & fl["udp_iperf"]]
            for f in (f for f in udp if f["dst"] == node):
                sport = traffic.CLIENT_PORT_BASE + f["id"]
                dport = traffic.SERVER_PORT_BASE + f["id"]
                hit = fl[(fl["sport"] == sport) & (fl["dport"] == dport)]["udp_jitter_ms"]
                if len(hit) == 1 and hit.iloc[0] is not None:
                    out[f["id"]] = float(hit.iloc[0])
        return out

    def _kernel_counts(self, flows: list[dict[str, Any]]) -> None:
        """rto_count / recovery_count from the netstat files, for a node's only TCP flow."""
        assert self.plan is not None
        tcp = [f for f in self.config["flows"] if f.get("proto", "tcp") == "tcp"]
        for f, out in zip(self.config["flows"], flows):
            if f.get("proto", "tcp") != "tcp" or sum(g["src"] == f["src"] for g in tcp) != 1:
                continue
            path = self.workdir / f"netstat-{f['src']}-{_safe(self.plan.nodes[f['src']])}.json"
            ext = _read_json(path).get("TcpExt") if path.exists() else None
            if ext:
                out[FLOW.rto_count] = ext.get("TCPTimeouts")
                out[FLOW.recovery_count] = ext.get("TCPSackRecovery", 0) + ext.get(
                    "TCPRenoRecovery", 0
                )

    def _stats(self, s: dict[str, Any] | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kernel": os.uname().release,
            "samples": len(self.samples),
            "late_samples": self.late_samples,
            "warnings": len(self.warnings),
        }
        if s:
            dirs = s.get("dirs", [])
            out.update(
                {
                    "linkd_lateness_p50_us": s["lateness"]["p50_us"],
                    "linkd_lateness_p99_us": s["lateness"]["p99_us"],
                    "linkd_lateness_max_us": s["lateness"]["max_us"],
                    "linkd_frames": sum(d["tx_frames"] for d in dirs),
                    "linkd_socket_drops": sum(d["socket_drops"] for d in dirs),
                    "linkd_send_failures": sum(d["send_failures"] for d in dirs),
                    "linkd_oversize": sum(d["oversize"] for d in dirs),
                    "linkd_cpu_latency_held_us": s.get("cpu_latency_held_us"),
                }
            )
            out.update(first_on_wire(self.config["flows"], s.get("tcp_firsts", [])))
        return out


def first_on_wire(flows: list[dict[str, Any]], firsts: list[dict[str, Any]]) -> dict[str, Any]:
    """Each flow's first SYN and first data segment as satcc-linkd saw them (its
    `tcp_firsts`: ns from t0, the earliest arrival on any link, so on the sender's own link), as
    `first_syn_ns` / `first_data_ns` lists indexed by flow id; null for a flow it did not see
    (UDP, a tunnelled flow: the tunnel's ports hide the connection). The simulator's SYN leaves
    at the flow's `start`; `satcc fidelity` starts its twin at these instants."""
    by_ports = {(c["sport"], c["dport"]): c for c in firsts}
    syn: list[int | None] = []
    data: list[int | None] = []
    for f in sorted(flows, key=lambda f: f["id"]):
        c = {}
        if f.get("proto", "tcp") == "tcp":
            ports = (traffic.CLIENT_PORT_BASE + f["id"], traffic.SERVER_PORT_BASE + f["id"])
            c = by_ports.get(ports, {})
        syn.append(c.get("syn_ns"))
        data.append(c.get("data_ns"))
    return {"first_syn_ns": syn, "first_data_ns": data}


def _cc_state(tx: dict[str, Any], ecn: bool) -> list[tuple[str, float]]:
    """The kernel's congestion-control state in one `ss` sample (`traffic.parse_ss`), under
    the names the simulator reports in `cc_series`: BBR's (`debug_state`) `bw_pps` (the
    bandwidth estimate `ss` prints in bit/s, over 8 × mss), `min_rtt_ms`, `pacing_gain`,
    `cwnd_gain`; for a flow with ECN, `delivered` and `delivered_ce` (`tcpi_delivered`,
    `tcpi_delivered_ce`: `ss` prints the second only once nonzero). Other algorithms' own
    state: nothing (`tcp_info` has none of theirs)."""
    out = []
    if ecn and "delivered" in tx:
        out.append(("delivered", tx["delivered"]))
        out.append(("delivered_ce", tx.get("delivered_ce", 0.0)))
    if "bbr_bw" in tx and tx.get("mss"):
        out.append(("bw_pps", tx["bbr_bw"] / 8 / tx["mss"]))
    for key, name in (
        ("bbr_mrtt", "min_rtt_ms"),
        ("bbr_pacing_gain", "pacing_gain"),
        ("bbr_cwnd_gain", "cwnd_gain"),
    ):
        if key in tx:
            out.append((name, tx[key]))
    return out


def _udp_columns(
    flow: dict[str, Any], server: dict[str, Any], wire_jitter_ms: float | None = None
) -> dict[str, Any]:
    """A UDP flow's loss and RFC 3550 jitter as the iperf3 server counted them (`end.sum`:
    `packets` sent per the sequence numbers seen, `lost_packets`, `jitter_ms`). The jitter is
    the receiver's capture's when the run captured (`wire_jitter_ms`): iperf3 stamps an arrival
    when its server gets to read the datagram, so its figure adds that process's scheduling
    (measured under load: 2.2 ms from iperf3 with no link jitter, 0.004 ms on the wire), while
    the simulator's is the link's alone."""
    if flow.get("proto", "tcp") != "udp":
        return {}
    out: dict[str, Any] = {}  # proto comes from the resolved flow (RunResult.from_engine)
    total, lost = _dig(server, "end", "sum", "packets"), _dig(server, "end", "sum", "lost_packets")
    if isinstance(total, int) and isinstance(lost, int) and total >= lost >= 0:
        out[FLOW.received_packets] = total - lost
        out[FLOW.lost_packets] = lost
        out[FLOW.loss_fraction] = lost / total if total else None
    jitter = _dig(server, "end", "sum", "jitter_ms")  # iperf3's key
    if wire_jitter_ms is not None:
        jitter = wire_jitter_ms
    if isinstance(jitter, (int, float)):
        out[FLOW.jitter_ms] = float(jitter)
    return out


def _cumulative(samples, ns: str, key: tuple[int, int], field: str) -> list[tuple[float, float]]:
    """(seconds since t0, value) of one socket's counter wherever a sample saw it, starting from
    (0, 0) and never decreasing."""
    out = [(0.0, 0.0)]
    for _, snap in samples:
        t, socks = snap.get(ns, (0.0, {}))
        v = socks.get(key, {}).get(field)
        if v is not None and t > out[-1][0]:
            out.append((t, max(v, out[-1][1])))
    return out


def _at(points: list[tuple[float, float]], t: float) -> float:
    """Linear interpolation of a non-decreasing counter at `t` (flat after the last point)."""
    if t <= points[0][0]:
        return points[0][1]
    for (t0, v0), (t1, v1) in itertools.pairwise(points):
        if t <= t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return points[-1][1]


def _wait_all(procs: list[subprocess.Popen], grace_s: float) -> None:
    deadline = time.monotonic() + grace_s
    for p in procs:
        try:
            p.wait(max(0.05, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.terminate()
            try:
                p.wait(1.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def parse_proc_net(text: str) -> dict[str, dict[str, int]]:
    """/proc/net/netstat or /proc/net/snmp: pairs of `Group: names…` / `Group: values…` lines."""
    out: dict[str, dict[str, int]] = {}
    lines = text.splitlines()
    for head, vals in zip(lines[::2], lines[1::2]):
        group, _, names = head.partition(":")
        group2, _, values = vals.partition(":")
        if group != group2:
            continue
        out[group] = {k: int(v) for k, v in zip(names.split(), values.split())}
    return out


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _dig(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def _int(x: float | None) -> int | None:
    return None if x is None else int(x)


def _quantile(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:40]
