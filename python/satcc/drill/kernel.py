"""`--engine kernel`: the machine's own TCP as the system under test, as packetdrill runs it.

Each script runs in a forked child that enters a new network namespace and a mount
namespace (unshare CLONE_NEWNET | CLONE_NEWNS: nothing on the host is touched, /proc/sys is
read-only there but for /proc/sys/net, and everything disappears with the child), creates
`tun0` with the offloads packetdrill sets (IFF_VNET_HDR; TUN_F_CSUM, TSO4, TSO6, TSO_ECN, so
the kernel hands over TSO/GSO packets as it does to packetdrill; each read starts with a
virtio_net_hdr giving the GSO segment size, each injected packet is written behind one),
addresses it (local 192.168.0.1/16, remote 192.0.2.1/32 routed through tun0 as upstream's
run_all.py sets packetdrill up), runs the script's shell block with bash in the script's
directory (its sysctls then apply to the namespace only; a `tc` shim puts pfifo where this
kernel has no fq, and the sockets then pace themselves), and drives real sockets: system
calls run on a worker thread, so a blocking call lets the script go on (at once when the
script marks it blocking and the worker sleeps in the kernel); packets the kernel writes to
tun0 are timestamped as they are read. Root is required (the caller holds
/tmp/satcc-emu.lock).

The namespace's default congestion control: outside the initial namespace Linux lets a
`sysctl net.ipv4.tcp_congestion_control=X` through only for a congestion control listed in
the host's `tcp_allowed_congestion_control` (`tcp_set_default_congestion_control`: EPERM
otherwise). On a host whose allowed list lacks CUBIC (measured here: default bbr, allowed
"reno bbr") the line of a script's shell block fails, bash goes on, and the script silently
runs with the host's default. So the shell block runs with a `sysctl` on PATH that takes
that setting out of the command line and records it, and the engine gives every socket the
script creates that congestion control with setsockopt(TCP_CONGESTION) (root may set any
loaded one); a child of a listener keeps its listener's.
"""

from __future__ import annotations

import collections
import ctypes
import errno as errno_mod
import fcntl
import json
import os
import queue
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from satcc.drill.parser import Expr, Script, Syscall, TcpOption
from satcc.drill.runner import Call, Mismatch, NotSupported, Result, Runner, Wire

CLONE_NEWNET, CLONE_NEWNS = 0x40000000, 0x00020000
TUNSETIFF = 0x400454CA
TUNSETOFFLOAD = 0x400454D0
IFF_TUN, IFF_NO_PI, IFF_VNET_HDR = 0x0001, 0x1000, 0x4000
TUN_F_CSUM, TUN_F_TSO4, TUN_F_TSO6, TUN_F_TSO_ECN = 1, 2, 4, 8
# struct virtio_net_hdr (include/uapi/linux/virtio_net.h), in the host's byte order on a
# tun device: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
VNET_HDR_FMT = "=BBHHHH"
VNET_HDR = struct.calcsize(VNET_HDR_FMT)
GSO_NONE, GSO_TCPV4, GSO_TCPV6, GSO_ECN = 0, 1, 4, 0x80
# The addresses upstream's run_all.py gives packetdrill for IPv4: local and gateway
# 192.168.0.1 (netmask 255.255.0.0), remote 192.0.2.1, and packetdrill's route for the
# remote (netdev.c: `ip route add 192.0.2.1/32 dev tun0 via 192.168.0.1`), which scripts
# change with `ip route change 192.0.2.1 ...` (mtu_probe: advmss, mtu, initcwnd).
LOCAL_IP, GATEWAY_IP, REMOTE_IP = "192.168.0.1", "192.168.0.1", "192.0.2.1"
PORT, REMOTE_PORT = 8080, 45000
# SO_MAX_PACING_RATE below ~0 turns on TCP's own pacing (sk_pacing_status NEEDED), the
# stand-in for fq on a kernel without it.
NO_PACING_LIMIT = (1 << 64) - 2
ECN_NAMES = {0: "noecn", 1: "ect1", 2: "ect0", 3: "ce"}
ECN_BITS = {"noecn": 0, "ect1": 1, "ect0": 2, "ce": 3, "ect01": 2}

# Names the TCP scripts use, beyond the socket module's.
CONSTANTS: dict[str, int] = {
    "SOCK_STREAM": socket.SOCK_STREAM,
    "AF_INET": socket.AF_INET,
    "AF_INET6": socket.AF_INET6,
    "IPPROTO_TCP": socket.IPPROTO_TCP,
    "IPPROTO_IP": socket.IPPROTO_IP,
    "SOL_IP": socket.IPPROTO_IP,
    "SOL_SOCKET": socket.SOL_SOCKET,
    "SOL_TCP": socket.IPPROTO_TCP,
    "F_GETFL": fcntl.F_GETFL,
    "F_SETFL": fcntl.F_SETFL,
    "O_RDWR": os.O_RDWR,
    "O_NONBLOCK": os.O_NONBLOCK,
    "SHUT_RD": socket.SHUT_RD,
    "SHUT_WR": socket.SHUT_WR,
    "SHUT_RDWR": socket.SHUT_RDWR,
    "POLLIN": select.POLLIN,
    "POLLOUT": select.POLLOUT,
    "POLLERR": select.POLLERR,
    "POLLHUP": select.POLLHUP,
    "POLLRDHUP": 0x2000,
    "POLLRDNORM": select.POLLRDNORM,
    "POLLWRNORM": select.POLLWRNORM,
    "MSG_MORE": 0x8000,
    "MSG_DONTWAIT": socket.MSG_DONTWAIT,
    "MSG_PEEK": socket.MSG_PEEK,
    "MSG_EOR": 0x80,
    "TCP_NODELAY": 1,
    "TCP_MAXSEG": 2,
    "TCP_CORK": 3,
    "TCP_KEEPIDLE": 4,
    "TCP_KEEPINTVL": 5,
    "TCP_KEEPCNT": 6,
    "TCP_INFO": 11,
    "TCP_QUICKACK": 12,
    "TCP_CONGESTION": 13,
    "TCP_USER_TIMEOUT": 18,
    "TCP_NOTSENT_LOWAT": 25,
    "SO_REUSEADDR": socket.SO_REUSEADDR,
    "SO_REUSEPORT": 15,
    "SO_SNDBUF": socket.SO_SNDBUF,
    "SO_RCVBUF": socket.SO_RCVBUF,
    "SO_LINGER": socket.SO_LINGER,
    "SO_KEEPALIVE": socket.SO_KEEPALIVE,
    "SO_MAX_PACING_RATE": 47,
    "SO_ERROR": socket.SO_ERROR,
    "IP_TOS": 1,
    "IP_MTU_DISCOVER": 10,
    "IP_PMTUDISC_DONT": 0,
    "IP_PMTUDISC_WANT": 1,
    "IP_PMTUDISC_DO": 2,
}

# struct tcp_info (include/uapi/linux/tcp.h), in order: (name, struct format).
TCP_INFO_FIELDS = (
    [(n, "B") for n in ("state", "ca_state", "retransmits", "probes", "backoff", "options")]
    + [("wscale", "B"), ("flags8", "B")]
    + [
        (n, "I")
        for n in [
            "rto",
            "ato",
            "snd_mss",
            "rcv_mss",
            "unacked",
            "sacked",
            "lost",
            "retrans",
            "fackets",
            "last_data_sent",
            "last_ack_sent",
            "last_data_recv",
            "last_ack_recv",
            "pmtu",
            "rcv_ssthresh",
            "rtt",
            "rttvar",
            "snd_ssthresh",
            "snd_cwnd",
            "advmss",
            "reordering",
            "rcv_rtt",
            "rcv_space",
            "total_retrans",
        ]
    ]
    + [(n, "Q") for n in ("pacing_rate", "max_pacing_rate", "bytes_acked", "bytes_received")]
    + [
        (n, "I")
        for n in [
            "segs_out",
            "segs_in",
            "notsent_bytes",
            "min_rtt",
            "data_segs_in",
            "data_segs_out",
        ]
    ]
    + [(n, "Q") for n in ["delivery_rate", "busy_time", "rwnd_limited", "sndbuf_limited"]]
    + [("delivered", "I"), ("delivered_ce", "I")]
    + [("bytes_sent", "Q"), ("bytes_retrans", "Q")]
    + [
        (n, "I")
        for n in ["dsack_dups", "reord_seen", "rcv_ooopack", "snd_wnd", "rcv_wnd", "rehash"]
    ]
    + [("total_rto", "H"), ("total_rto_recoveries", "H"), ("total_rto_time", "I")]
    + [
        (n, "I")
        for n in [
            "received_ce",
            "delivered_e1_bytes",
            "delivered_e0_bytes",
            "delivered_ce_bytes",
            "received_e1_bytes",
            "received_e0_bytes",
            "received_ce_bytes",
            "ecn_bits",
        ]
    ]
)
# Bit fields (name, the byte or word holding them, shift, width).
TCP_INFO_BITS = (
    ("snd_wscale", "wscale", 0, 4),
    ("rcv_wscale", "wscale", 4, 4),
    ("delivery_rate_app_limited", "flags8", 0, 1),
    ("fastopen_client_fail", "flags8", 1, 2),
    ("ecn_mode", "ecn_bits", 0, 2),
    ("accecn_opt_seen", "ecn_bits", 2, 2),
    ("accecn_fail_mode", "ecn_bits", 4, 4),
    ("options2", "ecn_bits", 8, 24),
)


def tcp_info_names() -> list[str]:
    """Every `tcpi_*` name a `%{ }%` block may read."""
    words = {"wscale", "flags8", "ecn_bits"}
    return [f"tcpi_{n}" for n, _ in TCP_INFO_FIELDS if n not in words] + [
        f"tcpi_{n}" for n, *_ in TCP_INFO_BITS
    ]


TCP_INFO_FMT = "=" + "".join(f for _, f in TCP_INFO_FIELDS)


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def encode_options(opts: list[TcpOption]) -> bytes:
    b = bytearray()
    for o in opts:
        if o.kind == "nop":
            b += b"\x01"
        elif o.kind == "eol":
            b += b"\x00"
        elif o.kind == "mss":
            b += struct.pack("!BBH", 2, 4, o.value)
        elif o.kind == "wscale":
            b += struct.pack("!BBB", 3, 3, o.value)
        elif o.kind == "sackOK":
            b += b"\x04\x02"
        elif o.kind == "sack":
            blocks = o.value
            b += struct.pack("!BB", 5, 2 + 8 * len(blocks))  # type: ignore[arg-type]
            for lo, hi in blocks:  # type: ignore[union-attr]
                b += struct.pack("!II", lo, hi)
        elif o.kind == "TS":
            b += struct.pack("!BBII", 8, 10, *o.value)  # type: ignore[misc]
    while len(b) % 4:
        b += b"\x00"  # packetdrill pads with EOL the same way
    return bytes(b)


def decode_options(b: bytes) -> list[TcpOption]:
    opts, i = [], 0
    while i < len(b):
        k = b[i]
        if k == 0:
            opts.append(TcpOption("eol"))
            break
        if k == 1:
            opts.append(TcpOption("nop"))
            i += 1
            continue
        if i + 1 >= len(b):
            break
        ln = b[i + 1]
        body = b[i + 2 : i + ln]
        if k == 2 and ln == 4:
            opts.append(TcpOption("mss", struct.unpack("!H", body)[0]))
        elif k == 3 and ln == 3:
            opts.append(TcpOption("wscale", body[0]))
        elif k == 4:
            opts.append(TcpOption("sackOK"))
        elif k == 5:
            n = (ln - 2) // 8
            opts.append(
                TcpOption(
                    "sack", tuple(struct.unpack("!II", body[8 * j : 8 * j + 8]) for j in range(n))
                )
            )
        elif k == 8 and ln == 10:
            opts.append(TcpOption("TS", struct.unpack("!II", body)))
        else:
            opts.append(TcpOption(f"kind{k}", bytes(body)))
        i += max(ln, 2)
    # Trailing EOL padding is not an option the script names.
    while opts and opts[-1].kind == "eol":
        opts.pop()
    return opts


FLAG_BITS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, "A": 0x10, "U": 0x20, "E": 0x40, "W": 0x80}


def parse_packet(data: bytes, t: float, gso_size: int = 0) -> tuple[Wire, int, int] | None:
    """An IPv4/TCP packet as read from the tun device (after the virtio_net_hdr). A TSO/GSO
    packet is one packet here, as packetdrill sees it: its payload is all the bytes after
    the headers (the IP total length of a GSO packet may be a placeholder)."""
    if len(data) < 40 or data[0] >> 4 != 4 or data[9] != 6:
        return None
    ihl = (data[0] & 0xF) * 4
    tot = struct.unpack("!H", data[2:4])[0]
    tcp = data[ihl:]
    sport, dport, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", tcp[:16])
    doff = (off >> 4) * 4
    letters = "".join(c for c, b in FLAG_BITS.items() if flags & b)
    end = len(data) if gso_size else min(len(data), tot)
    payload = max(0, end - ihl - doff)
    w = Wire(
        letters,
        seq,
        ack,
        win,
        payload,
        decode_options(tcp[20:doff]),
        ECN_NAMES[data[1] & 3],
        t,
        gso_size,
    )
    return w, sport, dport


def vnet_header(gso_size: int = 0) -> bytes:
    """The virtio_net_hdr written before an injected packet: GSO TCPv4 with the script's
    `--mss` as the segment size when it names one (packetdrill's linux_tun_write), else
    none."""
    if gso_size:
        return struct.pack(VNET_HDR_FMT, 0, GSO_TCPV4, 0, gso_size, 0, 0)
    return struct.pack(VNET_HDR_FMT, 0, GSO_NONE, 0, 0, 0, 0)


def read_vnet_header(data: bytes) -> int:
    """The GSO segment size of a packet the kernel wrote (0: not a GSO packet)."""
    _flags, gso_type, _hdr_len, gso_size, _cs, _co = struct.unpack_from(VNET_HDR_FMT, data)
    return gso_size if gso_type & ~GSO_ECN in (GSO_TCPV4, GSO_TCPV6) else 0


def value_of(e: Expr):
    """A system call's argument as a value (ints, named constants, `A|B`, a one-item list,
    strings); both engines read arguments through it."""
    if e.kind == "int":
        return e.value
    if e.kind == "word":
        if e.value in CONSTANTS:
            return CONSTANTS[e.value]
        raise NotSupported(f"the constant {e.value} is not supported")
    if e.kind == "or":
        a, b = e.value  # type: ignore[misc]
        return value_of(a) | value_of(b)
    if e.kind == "list" and len(e.value) == 1:  # type: ignore[arg-type]
        return value_of(e.value[0])  # type: ignore[index]
    if e.kind == "str":
        return e.value
    raise NotSupported(f"the argument kind {e.kind} is not supported")


class KernelEngine:
    name = "kernel"

    def __init__(self, script_path: str):
        self.script_path = script_path
        self.socks: dict[int, socket.socket] = {}
        self.out: collections.deque = collections.deque()
        self.t0 = 0.0
        self.remote_port = REMOTE_PORT
        self.local_port = PORT
        self.worker_q: queue.Queue = queue.Queue()
        self.shim_dir: str | None = None
        # The congestion control the script's shell block made the default (see above).
        self.default_cc: str | None = None
        # The shell block asked for fq, which this kernel lacks: TCP paces by itself.
        self.own_pacing = False
        self.inject_mss = 0  # the script's --mss: injected packets go as GSO of that size
        self.worker_tid = 0

    # -- set-up
    def setup(self, script: Script) -> list[str]:
        if script.options.get("ip_version", "ipv4") != "ipv4":
            raise NotSupported(f"--ip_version={script.options['ip_version']}: IPv4 only")
        self.inject_mss = int(script.options.get("mss", 0))
        sys.setswitchinterval(0.0002)
        # Timing: scripts allow 4 ms, and a loaded machine delays a normal process's wake-ups
        # by more. The child sleeps in select() between events, so a real-time priority
        # (the lowest, 1) costs the machine nothing and makes the wake-ups prompt.
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        except OSError:
            os.nice(-10)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET | CLONE_NEWNS) != 0:
            raise NotSupported(
                f"cannot create a network namespace ({os.strerror(ctypes.get_errno())}); run as root"
            )
        guard_proc_sys(libc)
        self.tun = os.open("/dev/net/tun", os.O_RDWR)
        ifr = struct.pack("16sH", b"tun0", IFF_TUN | IFF_NO_PI | IFF_VNET_HDR)
        fcntl.ioctl(self.tun, TUNSETIFF, ifr)
        fcntl.ioctl(self.tun, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN)
        for cmd in (
            "sysctl -q -w net.ipv6.conf.all.disable_ipv6=1",
            "ip link set lo up",
            "ip link set tun0 up",
            f"ip addr add {LOCAL_IP}/16 dev tun0",
            f"ip route add {REMOTE_IP}/32 dev tun0 via {GATEWAY_IP}",
        ):
            r = subprocess.run(cmd.split(), check=False, capture_output=True, text=True)
            if r.returncode != 0:
                raise NotSupported(f"`{cmd}` failed: {r.stderr.strip()}")
        notes = []
        if script.init is not None:
            notes = self.shell(script.init.command, script.init_line)
        threading.Thread(target=self.worker, daemon=True).start()
        # Drain anything the interface sent on coming up, then start the clock.
        self.t0 = time.monotonic()
        self.pump(0.01)
        self.out.clear()
        self.t0 = time.monotonic()
        return notes

    def shell(self, cmd: str, line: int) -> list[str]:
        """Run a backtick block with bash in the script's directory (packetdrill's
        PACKETDRILL_PID set); what it writes to stderr, and what the shims changed, come
        back as `shell: ...` lines for the result."""
        cwd = os.path.dirname(os.path.abspath(self.script_path))
        env = dict(os.environ, PACKETDRILL_PID=str(os.getpid()))
        shim = self.shims()
        env["PATH"] = f"{shim}:{env.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}"
        env["SATCC_DRILL_CC"] = os.path.join(shim, "cc")
        env["SATCC_DRILL_FQ"] = os.path.join(shim, "fq")
        r = subprocess.run(
            ["bash", "-c", cmd], check=False, cwd=cwd, env=env, capture_output=True, text=True
        )
        try:
            with open(env["SATCC_DRILL_CC"]) as f:
                self.default_cc = f.read().split()[-1]
        except (OSError, IndexError):
            pass
        notes = [f"shell: line {line}: {x}" for x in r.stderr.strip().splitlines() if x.strip()]
        if os.path.exists(env["SATCC_DRILL_FQ"]) and not self.own_pacing:
            self.own_pacing = True
            notes.append(
                f"shell: line {line}: this kernel has no fq qdisc (CONFIG_NET_SCH_FQ unset): "
                "pfifo instead, and TCP paces each socket itself (SO_MAX_PACING_RATE set, "
                "as fq's pacing would)"
            )
            for s in self.socks.values():
                self.pace(s)
        if r.returncode != 0:
            err = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise NotSupported(f"shell command failed on this machine: {err}", line)
        return notes

    def pace(self, s: socket.socket) -> None:
        s.setsockopt(
            socket.SOL_SOCKET, CONSTANTS["SO_MAX_PACING_RATE"], struct.pack("=Q", NO_PACING_LIMIT)
        )

    def pump(self, until: float) -> bool:
        """Read what the kernel writes to tun0 until `until` (seconds since the start), or
        until a packet is read when `until` is None... returns whether a packet was read."""
        got = False
        while True:
            timeout = until - self.now()
            r, _, _ = select.select([self.tun], [], [], max(0.0, timeout))
            if not r:
                return got
            data = os.read(self.tun, 70000)
            t = self.now()
            p = parse_packet(data[VNET_HDR:], t, read_vnet_header(data))
            if p is not None:
                self.out.append(p)
                got = True
                return got

    def worker(self) -> None:
        self.worker_tid = threading.get_native_id()
        while True:
            fn = self.worker_q.get()
            if fn is None:
                return
            fn()

    def shims(self) -> str:
        """A directory holding a `sysctl` that records `net.ipv4.tcp_congestion_control=X`
        (in $SATCC_DRILL_CC) and passes every other argument to the real sysctl, and a `tc`
        that puts pfifo where this kernel refuses fq (recorded in $SATCC_DRILL_FQ)."""
        if self.shim_dir is None:
            self.shim_dir = tempfile.mkdtemp(prefix="satcc-drill-")
            for name, text in (("sysctl", SYSCTL_SHIM), ("tc", TC_SHIM)):
                real = shutil.which(name) or f"/usr/sbin/{name}"
                path = os.path.join(self.shim_dir, name)
                with open(path, "w") as f:
                    f.write(text.replace("@REAL@", real))
                os.chmod(path, 0o755)
        return self.shim_dir

    def close(self) -> None:
        if self.shim_dir is not None:
            shutil.rmtree(self.shim_dir, ignore_errors=True)
        # upstream's set_sysctls.py leaves a restore script for this PID; the namespace it
        # would restore goes with this process.
        restore = f"/tmp/sysctl_restore_{os.getpid()}.sh"
        if os.path.exists(restore):
            os.unlink(restore)
        self.worker_q.put(None)
        for s in self.socks.values():
            try:
                s.close()
            except OSError:
                pass

    # -- time and packets
    def now(self) -> float:
        return time.monotonic() - self.t0

    def advance(self, t: float) -> None:
        while self.now() < t:
            self.pump(t)

    def inject(self, w: Wire) -> None:
        pkt = build_packet_ports(w, self.remote_port, self.local_port)
        os.write(self.tun, vnet_header(self.inject_mss) + pkt)

    def next_outbound(self, deadline: float) -> Wire | None:
        while True:
            if not self.out:
                self.pump(deadline)
            if not self.out:
                return None
            w, sport, dport = self.out.popleft()
            if "S" in w.flags and "A" not in w.flags:
                self.local_port, self.remote_port = sport, dport
            return w

    # -- system calls
    def call(self, sc: Syscall, line: int) -> Call:
        c = Call(done=False)
        fn = getattr(self, f"sys_{sc.name}", None)
        if fn is None:
            raise NotSupported(f"the system call {sc.name}() is not supported", line)

        def run():
            c.extra["started"] = True
            try:
                c.ret = fn(sc, c)
            except OSError as e:
                c.ret = -1
                c.errno = errno_mod.errorcode.get(e.errno or 0, str(e.errno))
            except Mismatch as m:
                c.ret = -1
                c.extra["mismatch"] = m.reason
            except NotSupported as u:
                c.ret = -1
                c.extra["unsupported"] = u.reason
            except Exception as e:  # noqa: BLE001 - reported as the script's failure
                c.ret = -1
                c.extra["mismatch"] = f"{sc.name}(): {e}"
            c.done = True

        self.worker_q.put(run)
        # A call that has not returned within 20 ms is blocked: the script goes on. One the
        # script says blocks (`...T`) goes on as soon as the worker sleeps in the kernel, as
        # packetdrill does: waiting the 20 ms would move every later event by them.
        end = self.now() + 0.02
        while not c.done and self.now() < end:
            self.pump(min(end, self.now() + 0.0005))
            if sc.end_time is not None and c.extra.get("started") and self.worker_blocked():
                break
        return c

    def worker_blocked(self) -> bool:
        """The worker thread sleeps in a system call (not waiting for Python's GIL)."""
        task = f"/proc/self/task/{self.worker_tid}"
        try:
            with open(f"{task}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"{task}/wchan") as f:
                wchan = f.read()
        except (OSError, IndexError, AttributeError):
            return False
        return state in ("S", "D") and "futex" not in wchan

    def wait_call(self, c: Call, deadline: float) -> None:
        while not c.done and self.now() < deadline:
            self.pump(min(deadline, self.now() + 0.001))

    def val(self, e: Expr):
        return value_of(e)

    def sock(self, e: Expr) -> socket.socket:
        fd = self.val(e)
        if fd not in self.socks:
            raise OSError(errno_mod.EBADF, "bad fd")
        return self.socks[fd]

    def expected_fd(self, sc: Syscall) -> int:
        if sc.result.kind != "int":
            raise NotSupported(f"{sc.name}() needs a literal fd as its expected result")
        return int(sc.result.value)  # type: ignore[arg-type]

    def sys_socket(self, sc: Syscall, c: Call):
        fam = socket.AF_INET
        typ = self.val(sc.args[1])
        s = socket.socket(fam, typ, socket.IPPROTO_TCP)
        if self.default_cc is not None:
            s.setsockopt(socket.IPPROTO_TCP, CONSTANTS["TCP_CONGESTION"], self.default_cc.encode())
        if self.own_pacing:
            self.pace(s)
        fd = self.expected_fd(sc)
        self.socks[fd] = s
        c.extra["fd"] = fd
        return fd

    def sys_bind(self, sc, c):
        self.sock(sc.args[0]).bind((LOCAL_IP, PORT))
        return 0

    def sys_listen(self, sc, c):
        self.sock(sc.args[0]).listen(self.val(sc.args[1]))
        return 0

    def sys_accept(self, sc, c):
        conn, _ = self.sock(sc.args[0]).accept()
        fd = self.expected_fd(sc)
        self.socks[fd] = conn
        c.extra["fd"] = fd
        return fd

    sys_accept4 = sys_accept

    def sys_connect(self, sc, c):
        s = self.sock(sc.args[0])
        c.extra["fd"] = self.val(sc.args[0])
        r = s.connect_ex((REMOTE_IP, PORT))
        if r:
            raise OSError(r, os.strerror(r))
        return 0

    def sys_setsockopt(self, sc, c):
        s = self.sock(sc.args[0])
        level, opt = self.val(sc.args[1]), self.val(sc.args[2])
        v = sc.args[3]
        if v.kind == "str":
            s.setsockopt(level, opt, str(v.value).encode())
        elif v.kind == "struct":
            vals = [self.val(x.value[1]) if x.kind == "assign" else self.val(x) for x in v.value]  # type: ignore[union-attr]
            s.setsockopt(level, opt, struct.pack(f"{len(vals)}i", *vals))
        else:
            s.setsockopt(level, opt, int(self.val(v)))
        return 0

    def sys_getsockopt(self, sc, c):
        s = self.sock(sc.args[0])
        level, opt = self.val(sc.args[1]), self.val(sc.args[2])
        want = sc.args[3]
        if want.kind == "str":
            got = s.getsockopt(level, opt, 64).split(b"\0")[0].decode()
            if got != want.value:
                raise Mismatch(0, f"getsockopt() value {got!r}, expected {want.value!r}")
            return 0
        got = s.getsockopt(level, opt)
        if want.kind == "list" and want.value and want.value[0].kind == "int":  # type: ignore[index,union-attr]
            exp = want.value[0].value  # type: ignore[index,union-attr]
            if got != exp:
                raise Mismatch(0, f"getsockopt() value [{got}], expected [{exp}]")
        return 0

    def sys_fcntl(self, sc, c):
        s = self.sock(sc.args[0])
        cmd = self.val(sc.args[1])
        if cmd == fcntl.F_GETFL:
            return fcntl.fcntl(s.fileno(), cmd)
        return fcntl.fcntl(s.fileno(), cmd, self.val(sc.args[2]))

    def _size(self, e: Expr) -> int:
        return int(self.val(e))

    def sys_write(self, sc, c):
        return self.sock(sc.args[0]).send(b"\0" * self._size(sc.args[2]))

    def sys_send(self, sc, c):
        flags = self.val(sc.args[3]) if len(sc.args) > 3 else 0
        return self.sock(sc.args[0]).send(b"\0" * self._size(sc.args[2]), flags)

    def sys_sendto(self, sc, c):
        return self.sys_send(sc, c)

    def sys_writev(self, sc, c):
        return self.sock(sc.args[0]).send(b"\0" * self._iov_total(sc.args[1]))

    def _iov_total(self, iov: Expr) -> int:
        total = 0
        for x in iov.value:  # type: ignore[union-attr]
            total += int(x.value[-1].value)  # {..., N}
        return total

    def sys_sendmsg(self, sc, c):
        fields = {x.value[0]: x.value[1] for x in sc.args[1].value if x.kind == "assign"}  # type: ignore[union-attr]
        if "msg_iov" not in fields:
            raise NotSupported("sendmsg() without msg_iov is not supported")
        flags = self.val(sc.args[2]) if len(sc.args) > 2 else 0
        return self.sock(sc.args[0]).send(b"\0" * self._iov_total(fields["msg_iov"]), flags)

    def sys_read(self, sc, c):
        return len(self.sock(sc.args[0]).recv(self._size(sc.args[2])))

    def sys_recv(self, sc, c):
        flags = self.val(sc.args[3]) if len(sc.args) > 3 else 0
        return len(self.sock(sc.args[0]).recv(self._size(sc.args[2]), flags))

    sys_recvfrom = sys_recv

    def sys_close(self, sc, c):
        fd = self.val(sc.args[0])
        s = self.socks.pop(fd, None)
        if s is None:
            raise OSError(errno_mod.EBADF, "bad fd")
        s.close()
        return 0

    def sys_shutdown(self, sc, c):
        self.sock(sc.args[0]).shutdown(self.val(sc.args[1]))
        return 0

    def sys_poll(self, sc, c):
        p = select.poll()
        fds = []
        for pf in sc.args[0].value:  # type: ignore[union-attr]
            fields = {x.value[0]: x.value[1] for x in pf.value}  # type: ignore[union-attr]
            fd = self.val(fields["fd"])
            p.register(self.socks[fd].fileno(), self.val(fields["events"]))
            fds.append((self.socks[fd].fileno(), fields.get("revents")))
        ready = dict(p.poll(self.val(sc.args[2])))
        for real, rev in fds:
            if rev is not None and ready.get(real, 0) != self.val(rev):
                raise Mismatch(
                    0, f"poll() revents {ready.get(real, 0):#x}, expected {self.val(rev):#x}"
                )
        return len(ready)

    def tcp_info(self, fd: int) -> dict:
        s = self.socks.get(fd)
        if s is None:
            raise Mismatch(0, f"no socket {fd} for tcp_info")
        size = struct.calcsize(TCP_INFO_FMT)
        raw = s.getsockopt(socket.IPPROTO_TCP, 11, size)
        raw = raw + b"\0" * (size - len(raw))
        vals = struct.unpack(TCP_INFO_FMT, raw)
        raw_info = {n: v for (n, _), v in zip(TCP_INFO_FIELDS, vals, strict=True)}
        info = {name: raw_info[name[5:]] for name in tcp_info_names() if name[5:] in raw_info}
        for n, word, shift, width in TCP_INFO_BITS:
            info["tcpi_" + n] = (raw_info[word] >> shift) & ((1 << width) - 1)
        return info


# The shell block's `sysctl` (KernelEngine.sysctl_shim): the default congestion control is
# recorded and left out (the engine sets it per socket); the rest goes to the real sysctl.
SYSCTL_SHIM = """#!/bin/bash
args=()
for a in "$@"; do
  case "$a" in
    net.ipv4.tcp_congestion_control=*|net/ipv4/tcp_congestion_control=*)
      echo "${a#*=}" >> "$SATCC_DRILL_CC" ;;
    *) args+=("$a") ;;
  esac
done
only_flags=1
for a in "${args[@]}"; do
  case "$a" in -*) ;; *) only_flags=0 ;; esac
done
if [ "$only_flags" = 1 ] && [ "$#" -gt "${#args[@]}" ]; then exit 0; fi
exec @REAL@ "${args[@]}"
"""


# The shell block's `tc` (KernelEngine.shims): a qdisc command this kernel refuses for want of
# fq is run again with pfifo in fq's place (fq's own parameters dropped), and recorded.
TC_SHIM = """#!/bin/bash
err=$(@REAL@ "$@" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 0 ] && [ "$1" = qdisc ]; then
  args=(); fq=0
  for a in "$@"; do
    if [ "$fq" = 1 ]; then continue; fi
    if [ "$a" = fq ]; then fq=1; args+=(pfifo); else args+=("$a"); fi
  done
  if [ "$fq" = 1 ] && [[ "$err" == *"qdisc kind is unknown"* || "$err" == *"Unknown qdisc"* ]]; then
    echo fq >> "$SATCC_DRILL_FQ"
    exec @REAL@ "${args[@]}"
  fi
fi
[ -n "$err" ] && echo "$err" >&2
exit "$rc"
"""


def guard_proc_sys(libc) -> None:
    """In this process's own mount namespace, /proc/sys read-only but for /proc/sys/net
    (the network namespace's own settings): a script's shell block may set what
    packetdrill's scripts set, and nothing of the host's."""
    ms_rdonly, ms_remount, ms_bind, ms_rec, ms_private = 1, 32, 4096, 16384, 1 << 18
    steps = (
        (None, b"/", ms_rec | ms_private),
        (b"/proc/sys", b"/proc/sys", ms_bind),
        (b"/proc/sys/net", b"/proc/sys/net", ms_bind),
        (None, b"/proc/sys", ms_remount | ms_bind | ms_rdonly),
    )
    for src, target, flags in steps:
        if libc.mount(src, target, None, flags, None) != 0:
            raise NotSupported(
                f"cannot make /proc/sys read-only outside /proc/sys/net "
                f"({os.strerror(ctypes.get_errno())}); nothing was run"
            )


def build_packet_ports(w: Wire, sport: int, dport: int) -> bytes:
    opts = encode_options(w.options)
    flags = sum(FLAG_BITS[c] for c in set(w.flags))
    doff = (20 + len(opts)) // 4
    tcp = struct.pack(
        "!HHIIBBHHH", sport, dport, w.seq, w.ack, doff << 4, flags, w.win & 0xFFFF, 0, 0
    )
    tcp += opts + b"\0" * w.length
    src, dst = socket.inet_aton(REMOTE_IP), socket.inet_aton(LOCAL_IP)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, ECN_BITS[w.ecn], 20 + len(tcp), 0, 0x4000, 64, 6, 0, src, dst
    )
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + tcp


def run_kernel(script: Script, overrides: dict | None = None) -> Result:
    """Run one script in a forked child inside a new network namespace."""
    if os.geteuid() != 0:
        return Result("unsupported", 0, "the kernel engine needs root (network namespace, TUN)")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(r)
        try:
            res = Runner(script, KernelEngine(script.path), overrides).run()
            out = {
                "verdict": res.verdict,
                "line": res.line,
                "reason": res.reason,
                "printed": res.printed,
            }
        except BaseException as e:  # noqa: BLE001 - the parent reports it
            out = {
                "verdict": "error",
                "line": 0,
                "reason": f"{type(e).__name__}: {e}",
                "tb": traceback.format_exc(),
            }
        os.write(w, json.dumps(out).encode())
        os.close(w)
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    try:
        d = json.loads(b"".join(chunks) or b"{}")
    except json.JSONDecodeError:
        d = {}
    if not d:
        return Result("error", 0, "the kernel engine's child process died")
    return Result(d["verdict"], d["line"], d["reason"], d.get("printed", []))
