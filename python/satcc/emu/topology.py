"""The emulated network: a plan (pure: names, addresses, routes, queues, kernel options) and
the commands that build it.

    node i ── satcc-l<j> ═veth═ satcc-l<j>a ┐                        ┌ satcc-l<j>b ═veth═ satcc-l<j> ── node k
             (10.X.j.1/24)        (emulator namespace: satcc-linkd moves frames between them)   (10.X.j.2/24)

- One namespace per scenario node, `satcc-<run>-n<i>-<name>`, and one for the emulator,
  `satcc-<run>-emu`. Each link j is two veth pairs whose emulator-side ends `satcc-l<j>a`/`b`
  satcc-linkd joins; the node ends carry the addresses (10.X.j.1 at node a, .2 at node b, /24;
  X drawn per run from 64..127). The emulator's ends have no address and no IPv6: nothing but
  satcc-linkd touches their frames.
- Routes are the simulator's (crates/satcc-sim/src/net.rs `route`): shortest paths by one-way
  propagation delay, ties by fewer hops, then by lower link direction index; every node gets a
  /32 host route to every address of every other node through the first hop of that path, so
  a packet follows the simulator's path whichever address it targets.
- Per-flow kernel options go where Linux keeps them: `initcwnd` and `rto_min` on the sender's
  route to the receiver, `quickack` (no delayed ACK) on the receiver's route back; SACK,
  timestamps, window scaling, ECN and (for flows with an `app`) `tcp_slow_start_after_idle`
  are per-namespace sysctls of the sender; the receive
  buffer ceiling (`tcp_rmem[2]` = the flow's `rwnd`) is the receiver's. Flows from one node
  that disagree on a per-namespace option are rejected with the conflicting keys.
- MTU 1500; GSO, GRO, TSO and TX checksum offload are off on every veth end (as study 001
  did; checksum offload would hand satcc-linkd frames with unfinished checksums).
- Every namespace's default congestion control is `reno` (always permitted in a namespace),
  not the host's: iperf3 creates its socket under the namespace default and switches to the
  flow's `-C` only after `connect`, and a socket initialised by BBR stays internally paced
  (`sk_pacing_status` = SK_PACING_NEEDED) under its new algorithm. On a host whose default is
  BBR, "cubic" ran paced, which also changes HyStart (no halved ACK-train threshold, ACK
  gaps above 2 ms): at 100 Mbit/s, 100 ms it left slow start by the delay signal at 2560-2616
  packets (3 BDP) instead of by the ACK train near 1 BDP.

Deviations from the simulator's network:
1. `rwnd` sets the receiver's buffer ceiling (`tcp_rmem[2]`, and `tcp_rmem[1]` = min(131072,
   rwnd)), as the simulator models it (satcc.scenario deviation 2). `rcvbuf_autotune = false`
   sets `tcp_moderate_rcvbuf = 0` and `tcp_rmem[1]` = `tcp_rmem[2]` = the buffer that offers a
   window of `rwnd` (`scenario.fixed_rcvbuf_bytes`); flows into one node must agree on it.
2. The sender's `tcp_wmem[2]` is max(4 MiB, 2 x rwnd) so the send buffer is not the limit.
3. Linux's metrics cache is per namespace, not per flow: `tcp_no_metrics_save = 1` in every
   namespace (each flow starts without cached ssthresh or RTT, as in the simulator) except a
   sender with any `metrics_save` flow, where `tcp_no_metrics_save = 0` and
   `tcp_no_ssthresh_metrics_save = 0` (Linux >= 5.7 caches no ssthresh by default; study 003's
   2.4 kernel did). There every flow of that sender uses the cache, and the kernel also caches
   RTT, RTT variance and cwnd, which the simulator does not model. `build` flushes the cache
   of every node (`ip tcp_metrics flush`; the namespaces are new each run, so it starts empty).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from satcc.emu.host import EmuError, ns_cmd, run_cmd
from satcc.scenario import fixed_rcvbuf_bytes

MTU = 1500
MAX_LINKS = 256  # one /24 per link inside 10.X.0.0/16
LINUX_WMEM_MAX = 4 * 1024 * 1024  # net.ipv4.tcp_wmem[2] default
LINUX_RMEM_MIN = 4096  # net.ipv4.tcp_rmem[0] default
LINUX_RMEM_DEFAULT = 131072  # net.ipv4.tcp_rmem[1] default
LINUX_WMEM_MIN_DEFAULT = "4096 16384"  # net.ipv4.tcp_wmem[0..1] defaults
DEFAULT_INITCWND = 10
DEFAULT_MIN_RTO_NS = 200_000_000
IFNAMSIZ = 16  # including the NUL


def _cwnd_clamp_ccas() -> frozenset[str]:
    """The CCAs whose BPF program compiles the flow's `cwnd_clamp` in (satcc.emu.bpf)."""
    try:
        from satcc.emu.bpf import CWND_CLAMP_DEFINES
    except ImportError:  # a build without BPF struct_ops support
        return frozenset()
    return frozenset(CWND_CLAMP_DEFINES)


@dataclass
class LinkPlan:
    id: int
    a: int
    b: int
    subnet: str  # "10.X.j"
    # emulator-side veth ends and node-side name
    a_if: str
    b_if: str
    node_if: str

    def addr(self, node: int) -> str:
        return f"{self.subnet}.1" if node == self.a else f"{self.subnet}.2"


@dataclass
class Route:
    node: int
    dst: str  # address
    via: str
    dev: str
    attrs: list[str] = field(default_factory=list)


@dataclass
class Plan:
    run_id: str
    nodes: list[str]
    namespaces: list[str]  # per node
    emu_ns: str
    links: list[LinkPlan]
    routes: list[Route]
    sysctls: dict[int, dict[str, str]]  # per node
    primary_addr: list[str]  # per node: the address flows target
    base_delay_ns: list[list[int]]
    path_dirs: dict[tuple[int, int], list[int]]
    # the resolved scenario (scenario.resolve()): satcc-linkd reads each link's directions and
    # queue limits from it
    config: dict[str, Any]

    @property
    def all_namespaces(self) -> list[str]:
        return [*self.namespaces, self.emu_ns]


def _ns_name(run_id: str, i: int, name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:20]
    return f"satcc-{run_id}-n{i}-{safe}"


def plan(config: dict[str, Any], run_id: str, subnet_octet: int | None = None) -> Plan:
    """The whole topology for a resolved scenario config (scenario.resolve())."""
    nodes = list(config["nodes"])
    n = len(nodes)
    links_cfg = config["links"]
    if len(links_cfg) > MAX_LINKS:
        raise EmuError(
            f"the emulator handles at most {MAX_LINKS} links, the scenario has {len(links_cfg)}"
        )
    x = subnet_octet if subnet_octet is not None else 64 + secrets.randbelow(64)
    # routes and "N BDP" queues as the simulator walks them (satcc-core's resolver)
    resolved = config["routes"]
    nxt, delay = resolved["next_hop"], resolved["base_delay_ns"]
    paths: dict[tuple[int, int], list[int]] = {}
    for f, p in zip(config["flows"], resolved["paths"], strict=True):
        paths[(f["src"], f["dst"])] = p["fwd"]
        paths[(f["dst"], f["src"])] = p["rev"]
    links = []
    for j, l in enumerate(links_cfg):
        node_if = f"satcc-l{j}"
        links.append(
            LinkPlan(
                j,
                l["a"],
                l["b"],
                f"10.{x}.{j}",
                f"{node_if}a",
                f"{node_if}b",
                node_if,
            )
        )
        assert len(node_if) + 2 < IFNAMSIZ
    addrs: list[list[str]] = [[] for _ in range(n)]
    for lp in links:
        addrs[lp.a].append(lp.addr(lp.a))
        addrs[lp.b].append(lp.addr(lp.b))
    primary = [a[0] if a else "" for a in addrs]

    # per-flow route attributes: (node, dst address) -> {attr: value}
    attrs: dict[tuple[int, str], dict[str, str]] = {}

    def put(node: int, dst: str, key: str, value: str, flow: int) -> None:
        cur = attrs.setdefault((node, dst), {})
        if cur.get(key, value) != value:
            raise EmuError(
                f"flow[{flow}]: flows between {nodes[node]} and the same peer need "
                f"different `{key}` ({cur[key]} vs {value}); the emulator sets it per "
                "route, so such flows must share it"
            )
        cur[key] = value

    for f in config["flows"]:
        s, d, fid = f["src"], f["dst"], f["id"]
        if f.get("cwnd_clamp") is not None and f["cca"] not in _cwnd_clamp_ccas():
            raise EmuError(
                f"flow[{fid}].cwnd_clamp: the emulator caps the sender's cwnd only in "
                f"{', '.join(sorted(_cwnd_clamp_ccas())) or 'no'} BPF congestion control "
                f"(compiled into the program), not in {f['cca']}; use rwnd with "
                "rcvbuf_autotune = false for a receive window"
            )
        if f.get("initial_cwnd", DEFAULT_INITCWND) != DEFAULT_INITCWND:
            put(s, primary[d], "initcwnd", str(f["initial_cwnd"]), fid)
        if f.get("min_rto_ns", DEFAULT_MIN_RTO_NS) != DEFAULT_MIN_RTO_NS:
            put(s, primary[d], "rto_min", f"{max(1, round(f['min_rto_ns'] / 1e6))}ms", fid)
        if not f.get("delayed_ack", True):
            src_addr = _src_addr(links, nxt, s, d)
            put(d, src_addr, "quickack", "1", fid)

    routes = []
    for u in range(n):
        for v in range(n):
            if u == v or nxt[u][v] is None:
                continue
            k = nxt[u][v]
            lp = links[k // 2]
            gw_node = lp.b if k % 2 == 0 else lp.a
            for dst in addrs[v]:
                extra = attrs.get((u, dst), {})
                routes.append(
                    Route(
                        u,
                        dst,
                        lp.addr(gw_node),
                        lp.node_if,
                        [w for kv in extra.items() for w in kv],
                    )
                )
    return Plan(
        run_id,
        nodes,
        [_ns_name(run_id, i, nm) for i, nm in enumerate(nodes)],
        f"satcc-{run_id}-emu",
        links,
        routes,
        _sysctls(config, n),
        primary,
        delay,
        paths,
        config,
    )


def _src_addr(links: list[LinkPlan], nxt: list[list[int | None]], s: int, d: int) -> str:
    """The source address node s uses towards d (the address of its first-hop interface)."""
    k = nxt[s][d]
    assert k is not None
    return links[k // 2].addr(s)


def _sysctls(config: dict[str, Any], n: int) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for i in range(n):
        out[i] = {
            "net.ipv4.ip_forward": "1",
            "net.ipv4.conf.all.rp_filter": "0",
            "net.ipv4.conf.default.rp_filter": "0",
            "net.ipv4.tcp_no_metrics_save": "1",  # module doc, deviation 3
            # Not the host's default: a socket born under BBR keeps BBR's internal pacing
            # after iperf3 switches it to another algorithm (module doc).
            "net.ipv4.tcp_congestion_control": NETNS_DEFAULT_CCA,
        }
    for f in config["flows"]:
        if f.get("metrics_save", False) and f.get("proto", "tcp") == "tcp":
            out[f["src"]]["net.ipv4.tcp_no_metrics_save"] = "0"  # module doc, deviation 3
            out[f["src"]]["net.ipv4.tcp_no_ssthresh_metrics_save"] = "0"
    owner: dict[tuple[int, str], int] = {}
    rmem: dict[int, tuple[int, int]] = {}
    autotune_of: dict[int, tuple[bool, int]] = {}
    wmem: dict[int, int] = {}
    for f in config["flows"]:
        s, d = f["src"], f["dst"]
        if f.get("proto", "tcp") != "tcp":
            continue
        wanted = {
            "net.ipv4.tcp_sack": "1" if f["sack"] else "0",
            "net.ipv4.tcp_timestamps": "1" if f["timestamps"] else "0",
            "net.ipv4.tcp_window_scaling": "1" if f["window_scaling"] else "0",
            "net.ipv4.tcp_ecn": "1" if f["ecn"] else "2",  # 2 = Linux default: accept if asked
        }
        if (f.get("app") or {"kind": "bulk"})["kind"] != "bulk":
            # only writes after idle check it, so bulk flows (never idle) leave it alone
            wanted[SLOW_START_AFTER_IDLE] = "1" if f.get("slow_start_after_idle", True) else "0"
        for key, value in wanted.items():
            have = out[s].get(key)
            if have is not None and have != value:
                other = owner[(s, key)]
                raise EmuError(
                    f"flow[{f['id']}] and flow[{other}] leave the same node but need "
                    f"different {key.rsplit('.', 1)[1]} ({value} vs {have}); in the "
                    "emulator it is one setting per node"
                )
            out[s][key] = value
            owner.setdefault((s, key), f["id"])
        autotune = bool(f.get("rcvbuf_autotune", True))
        have_tune = autotune_of.setdefault(d, (autotune, f["id"]))
        if have_tune[0] != autotune:
            raise EmuError(
                f"flow[{f['id']}] and flow[{have_tune[1]}] end at the same node but need "
                "different rcvbuf_autotune; in the emulator it is one setting per node"
            )
        rwnd = int(f["rwnd_bytes"])
        buf = rwnd if autotune else fixed_rcvbuf_bytes(rwnd, f["mss"], f["timestamps"])
        r1, r2 = rmem.get(d, (0, 0))
        rmem[d] = (max(r1, min(LINUX_RMEM_DEFAULT, buf) if autotune else buf), max(r2, buf))
        wmem[s] = max(wmem.get(s, 0), 2 * buf)
    for node, (r1, r2) in rmem.items():
        out[node]["net.ipv4.tcp_rmem"] = f"{LINUX_RMEM_MIN} {r1} {r2}"
        if not autotune_of[node][0]:
            out[node]["net.ipv4.tcp_moderate_rcvbuf"] = "0"
    for node, w in wmem.items():
        out[node]["net.ipv4.tcp_wmem"] = f"{LINUX_WMEM_MIN_DEFAULT} {max(LINUX_WMEM_MAX, w)}"
    return out


# -- building ---------------------------------------------------------------------------


# reno: a namespace may only pick an algorithm of the host's allowed list as its default, and
# reno is always allowed; it does not pace (what matters before iperf3 switches to `-C`).
NETNS_DEFAULT_CCA = "reno"
SLOW_START_AFTER_IDLE = "net.ipv4.tcp_slow_start_after_idle"
NO_IPV6 = ("net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
OFFLOADS_OFF = ("tso", "off", "gso", "off", "gro", "off", "tx", "off")


def cpu_mask(cpus: list[int]) -> str:
    """The kernel's CPU-mask syntax for `cpus` (hex, 32-bit groups separated by commas)."""
    bits = 0
    for c in cpus:
        bits |= 1 << c
    digits = f"{bits:x}"
    digits = "0" * (-len(digits) % 8) + digits
    return ",".join(digits[i : i + 8] for i in range(0, len(digits), 8))


def steer_rx(p: Plan, cpus: list[int]) -> list[str]:
    """Receive Packet Steering on every node end of the plan's veths: frames satcc-linkd
    sends are queued to `cpus` (by flow hash) and the node's stack runs there, not in
    satcc-linkd's system call on its own core. Per flow the order is kept (one flow, one CPU)
    and nothing is coalesced (GRO stays off); only where the receive processing runs
    changes. Touches only interfaces of this plan, inside its namespaces. Returns the
    interfaces it could not set (a kernel without RPS), for the caller to report."""
    mask = cpu_mask(cpus)
    failed = []
    for lp in p.links:
        for node in (lp.a, lp.b):
            path = f"/sys/class/net/{lp.node_if}/queues/rx-0/rps_cpus"
            r = run_cmd(
                *ns_cmd(p.namespaces[node], "sh", "-c", f"echo {mask} > {path}"), check=False
            )
            if r.returncode != 0:
                failed.append(f"{p.namespaces[node]}/{lp.node_if}")
    return failed


def _sysctl(ns: str, *assignments: str) -> None:
    run_cmd(*ns_cmd(ns, "sysctl", "-qw", *assignments))


def _require_netns_sysctl(ns: str, key: str, flow_key: str) -> None:
    """A sysctl satcc sets per node must be one of the namespace's own (Linux keeps
    tcp_slow_start_after_idle per network namespace since 4.15); otherwise refuse rather than
    set the host's."""
    path = "/proc/sys/" + key.replace(".", "/")
    if run_cmd(*ns_cmd(ns, "test", "-w", path), check=False).returncode != 0:
        raise EmuError(
            f"{flow_key}: expected a kernel whose {key} is per network namespace "
            f"(Linux >= 4.15), found no {path} inside a namespace; run it with `satcc sim`"
        )


def build(p: Plan) -> None:
    """Create namespaces, veths, addresses, routes and sysctls. The caller has registered the
    run (host.register_run) and removes everything on any failure."""
    for ns in p.all_namespaces:
        run_cmd("ip", "netns", "add", ns)
        run_cmd("ip", "-n", ns, "link", "set", "lo", "up")
        _sysctl(ns, *NO_IPV6)
    for lp in p.links:
        for node, peer in ((lp.a, lp.a_if), (lp.b, lp.b_if)):
            ns = p.namespaces[node]
            # created inside the node's namespace with its peer straight in the emulator's:
            # no interface ever exists in the host's namespace
            run_cmd(
                "ip",
                "-n",
                ns,
                "link",
                "add",
                lp.node_if,
                "mtu",
                str(MTU),
                "type",
                "veth",
                "peer",
                "name",
                peer,
                "mtu",
                str(MTU),
                "netns",
                p.emu_ns,
            )
            run_cmd("ip", "-n", ns, "addr", "add", f"{lp.addr(node)}/24", "dev", lp.node_if)
            run_cmd(*ns_cmd(ns, "ethtool", "-K", lp.node_if, *OFFLOADS_OFF))
            run_cmd(*ns_cmd(p.emu_ns, "ethtool", "-K", peer, *OFFLOADS_OFF))
            run_cmd("ip", "-n", p.emu_ns, "link", "set", peer, "up")
            run_cmd("ip", "-n", ns, "link", "set", lp.node_if, "up")
    for node, values in p.sysctls.items():
        if SLOW_START_AFTER_IDLE in values:
            _require_netns_sysctl(
                p.namespaces[node], SLOW_START_AFTER_IDLE, "flow.slow_start_after_idle"
            )
        _sysctl(p.namespaces[node], *(f"{k}={v}" for k, v in values.items()))
        # module doc, deviation 3: no run inherits another's cached metrics
        run_cmd("ip", "-n", p.namespaces[node], "tcp_metrics", "flush")
    for r in p.routes:
        run_cmd(
            "ip",
            "-n",
            p.namespaces[r.node],
            "route",
            "replace",
            f"{r.dst}/32",
            "via",
            r.via,
            "dev",
            r.dev,
            *r.attrs,
        )
