"""`--engine sim`: the simulator's own TCP as the system under test, in virtual time.

The socket is `satcc._native.DrillEndpoint` (crates/satcc-sim `tcp/endpoint/`): the
simulator's sender and receiver — the code scenarios run — behind listen/accept/write/
read/close and `TCP_INFO`, with segments in and out on the wire. Time is virtual: `advance`
fires the endpoint's timers up to a time, `next_outbound` returns the next segment with the
virtual time it was sent, so a script runs in milliseconds and the same script gives the
same result every time. No wall clock is read.

The script's shell blocks are read, never run (`shell.py`): their sysctls set the
endpoint's flow settings before the SYN arrives; every line that cannot map is kept in
`ignored` and printed with the result. What the endpoint cannot do makes the script
`unsupported` with the reason (the endpoint module's header lists the deviations).
"""

from __future__ import annotations

import collections
from pathlib import Path

from satcc import _native
from satcc.drill.kernel import CONSTANTS, tcp_info_names, value_of
from satcc.drill.parser import Expr, Script, Syscall, TcpOption
from satcc.drill.runner import Call, Mismatch, NotSupported, Result, Runner, Wire
from satcc.drill.shell import read_block

FLAG_BITS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, "A": 0x10, "U": 0x20, "E": 0x40, "W": 0x80}
NS = 1_000_000_000
# setsockopt(TCP_MAXSEG)'s range, TCP_MIN_MSS..MAX_TCP_WINDOW (satcc-core scenario.rs)
_LIMITS = _native.scenario_defaults()
MOD32 = 1 << 32
GSO_MAX_SIZE = 65536  # the tun device's gso_max_size (`ip -d link`)
# A stock kernel's settings before any shell line: tcp_rmem[2] 6.16+'s 32 MiB, tcp_ecn 2.
DEFAULTS: dict[str, object] = {
    "cca": "cubic",
    "sack": True,
    "timestamps": True,
    "window_scaling": True,
    "rwnd_bytes": 32 << 20,
    "rcvbuf_autotune": True,
    "ecn": 2,
    "initial_cwnd": 10,
    "slow_start_after_idle": True,
    "min_tso_segs": 2,  # tcp_min_tso_segs: the sender's GSO packets and the GSO view
    "tso_win_divisor": 3,  # tcp_tso_win_divisor: the sender's TSO deferral
    "pacing": "auto",  # no fq qdisc: only an algorithm that asks paces (BBR)
}
# Socket options accepted with no effect on the simulator's TCP, and why.
NO_EFFECT_OPTS = {
    "SO_REUSEADDR": "one socket per script",
    "SO_REUSEPORT": "one socket per script",
    "SO_KEEPALIVE": "no keepalive timer within a script's span",
    "SO_SNDBUF": "the simulator's send queue takes every write (no send-buffer limit)",
    "IP_MTU_DISCOVER": "no path MTU discovery: the connection keeps its MSS",
}


def _ns(t: float) -> int:
    return max(0, round(t * NS))


def _opt_in(o: TcpOption) -> tuple[str, list[int]]:
    if o.kind in ("mss", "wscale"):
        return o.kind, [int(o.value)]  # type: ignore[call-overload]
    if o.kind == "TS":
        v, e = o.value  # type: ignore[misc]
        return "TS", [int(v), int(e)]
    if o.kind == "sack":
        return "sack", [int(x) for blk in o.value for x in blk]  # type: ignore[union-attr]
    return o.kind, []


def _opt_out(kind: str, vals: list[int]) -> TcpOption:
    if kind in ("mss", "wscale"):
        return TcpOption(kind, vals[0])
    if kind == "TS":
        return TcpOption("TS", (vals[0], vals[1]))
    if kind == "sack":
        return TcpOption("sack", tuple((vals[i], vals[i + 1]) for i in range(0, len(vals), 2)))
    return TcpOption(kind)


class SimEngine:
    name = "sim"

    def __init__(self, script_path: str):
        self.script_path = script_path
        self.settings: dict[str, object] = dict(DEFAULTS)
        self.ignored: list[str] = []
        self.ep = None  # the DrillEndpoint, made at listen()
        self.t_ns = 0
        self.listen_fd: int | None = None
        self.conn_fd: int | None = None
        self.nonblock: set[int] = set()
        self.user_mss: int | None = None  # TCP_MAXSEG set before the endpoint exists
        self.blocked: list[tuple[str, Call, int]] = []  # ("accept"|"read", call, arg)
        # The GSO view of the simulator's bursts (`gso_view`): segments fetched ahead,
        # the stream's first byte, where writes end, the highest byte sent so far.
        self.ahead: collections.deque[Wire] = collections.deque()
        self.data_start: int | None = None
        self.written = 0
        self.write_ends: set[int] = set()
        self.sent_end = 0

    # -- set-up
    def setup(self, script: Script) -> list[str]:
        if script.options.get("ip_version", "ipv4") != "ipv4":
            raise NotSupported(f"--ip_version={script.options['ip_version']}: IPv4 only")
        if script.init is not None:
            return self.shell(script.init.command, script.init_line)
        return []

    def shell(self, cmd: str, line: int) -> list[str]:
        """Read a backtick block (never run): its settings apply, and the lines that
        cannot come back as `shell: ignored ...` for the result."""
        reading = read_block(cmd, Path(self.script_path).resolve().parent)
        ignored = list(reading.ignored)
        if self.ep is not None and "local_drop" in reading.settings:
            # The host's qdisc changes under the open socket (`tc qdisc replace ...`).
            self.ep.set_local_drop(bool(reading.settings.pop("local_drop")))
        if self.ep is not None and reading.settings:
            ignored.append(
                f"line {line}: settings after listen() do not reach the open socket: "
                + ", ".join(f"{k}={v}" for k, v in reading.settings.items())
            )
        else:
            self.settings.update(reading.settings)
        self.ignored.extend(ignored)
        return [f"shell: ignored {x}" for x in ignored]

    def close(self) -> None:
        self.ep = None

    # -- time and packets
    def now(self) -> float:
        return (self.ep.now_ns() if self.ep is not None else self.t_ns) / NS

    def advance(self, t: float) -> None:
        if self.ep is None:
            self.t_ns = max(self.t_ns, _ns(t))
        else:
            self.ep.advance(_ns(t))
        self._wake()

    def inject(self, w: Wire) -> None:
        if self.ep is None:
            return  # nothing listens: Linux would answer with a RST
        flags = sum(FLAG_BITS[c] for c in set(w.flags))
        try:
            self.ep.inject(
                flags,
                w.seq,
                w.ack,
                w.win,
                w.length,
                [_opt_in(o) for o in w.options],
                w.ecn,
            )
        except ValueError as e:
            raise NotSupported(str(e)) from None
        self._wake()

    def next_outbound(self, deadline: float) -> Wire | None:
        if self.ahead:
            return self.ahead.popleft()
        if self.ep is None:
            self.t_ns = max(self.t_ns, _ns(deadline))
            return None
        first = self._fetch(_ns(deadline))
        if first is None:
            return None
        burst = [first]
        # Everything else the same send decision put on the wire (same instant).
        while (more := self._fetch(_ns(first.t))) is not None:
            burst.append(more)
        self.gso_view(burst)
        self.ahead.extend(burst[1:])
        return first

    def _fetch(self, deadline_ns: int) -> Wire | None:
        got = self.ep.next_outbound(deadline_ns)
        self._wake()
        if got is None:
            return None
        t_ns, flags, seq, ack, win, length, opts, ecn = got
        letters = "".join(c for c, b in FLAG_BITS.items() if flags & b)
        if "S" in letters:
            self.data_start = (seq + 1) % MOD32
        return Wire(
            letters, seq, ack, win, length, [_opt_out(k, v) for k, v in opts], ecn, t_ns / NS
        )

    def gso_view(self, burst: list[Wire]) -> None:
        """The new data one send decision put on the wire, cut as this kernel would cut it
        into TSO/GSO packets, with PSH where the kernel's packets have it.

        The simulator sends MSS-sized segments; Linux sends the same bytes as GSO packets of
        `tcp_tso_autosize` segments (the pacing rate >> 10, plus gso_max_size >>
        (min_rtt_us >> tcp_tso_rtt_log 9), in MSS, at least `tcp_min_tso_segs`), each at
        most half of cwnd and what cwnd leaves (`tcp_cwnd_test`). Measured on this kernel
        (6.18, upstream's scripts): every GSO packet of more than one segment carries PSH, a
        single segment only where a write without MSG_MORE ends (`tcp_push`) or a
        zero-window probe sent it (`tcp_write_wakeup`). The runner
        then gathers the segments as it does the kernel's packets; only PSH moves here.
        Retransmissions keep the simulator's flags (which PSH the kernel's retransmitted
        pieces carry was not worked out: resending a segment's first PSH state made four
        upstream scripts fail that pass without it)."""
        if self.data_start is None or self.ep is None:
            return
        run = []
        for w in burst:
            if w.length == 0 or set(w.flags) & set("SRF"):
                continue
            start = (w.seq - self.data_start) % MOD32
            if start + w.length > self.sent_end:
                run.append(w)
        for w in burst:
            if w.length > 0:
                self.sent_end = max(self.sent_end, (w.seq - self.data_start) % MOD32 + w.length)
        if not run:
            return
        info = self.ep.info()
        mss = max(1, int(info.get("tcpi_snd_mss", 0)) or 1)
        cwnd = int(info.get("tcpi_snd_cwnd", 0))
        in_flight = (
            int(info.get("tcpi_unacked", 0))
            - int(info.get("tcpi_sacked", 0))
            - int(info.get("tcpi_lost", 0))
            + int(info.get("tcpi_retrans", 0))
            - len(run)
        )
        size = int(info.get("tcpi_pacing_rate", 0)) >> 10
        r = int(info.get("tcpi_min_rtt", 0)) >> 9
        if r < 32:
            size += GSO_MAX_SIZE >> r
        segs = max(min(size, GSO_MAX_SIZE) // mss, int(self.settings["min_tso_segs"]))
        # `tcp_write_wakeup` marks the data a zero-window probe sends PSH.
        probe_ends = set(self.ep.probe_push_ends())
        i = 0
        while i < len(run):
            quota = min(max(cwnd >> 1, 1), max(cwnd - in_flight, 1))
            piece = run[i : i + max(1, min(segs, quota))]
            for w in piece:
                w.flags = w.flags.replace("P", "")
            end = (piece[-1].seq - self.data_start) % MOD32 + piece[-1].length
            if len(piece) > 1 or end in self.write_ends or end in probe_ends:
                piece[-1].flags = "P" + piece[-1].flags
            in_flight += len(piece)
            i += len(piece)

    # -- blocking calls
    def _wake(self) -> None:
        """Complete blocked calls whose condition now holds."""
        if self.ep is None:
            return
        still = []
        for kind, call, arg in self.blocked:
            waits = kind == "connect" or (kind == "read" and not self.ep.readable())
            err = self.ep.take_error() if waits else None
            if err is not None:
                call.ret = -1
                call.errno = err
                call.done = True
            elif kind == "connect" and self.ep.established():
                call.ret = 0
                call.done = True
            elif kind == "accept" and self.ep.established():
                call.ret = arg
                call.extra["fd"] = arg
                self.conn_fd = arg
                call.done = True
            elif kind == "read" and self.ep.read_ready():
                call.ret = self.ep.read(arg)
                call.done = True
            else:
                still.append((kind, call, arg))
        self.blocked = still

    def wait_call(self, c: Call, deadline: float) -> None:
        if not c.done:
            self.advance(deadline)

    # -- system calls
    def call(self, sc: Syscall, line: int) -> Call:
        fn = getattr(self, f"sys_{sc.name}", None)
        if fn is None:
            raise NotSupported(
                f"the system call {sc.name}() is not supported by the simulator's endpoint", line
            )
        c = Call()
        try:
            r = fn(sc, c)
        except NotSupported as u:
            raise NotSupported(u.reason, line) from None
        if c.done:
            c.ret = r
        return c

    def val(self, e: Expr):
        return value_of(e)

    def expected_fd(self, sc: Syscall) -> int:
        if sc.result.kind != "int":
            raise NotSupported(f"{sc.name}() needs a literal fd as its expected result")
        return int(sc.result.value)  # type: ignore[arg-type]

    def fd(self, sc: Syscall) -> int:
        fd = int(self.val(sc.args[0]))
        if fd not in (self.listen_fd, self.conn_fd):
            raise NotSupported(f"{sc.name}() on fd {fd}: not a socket of this script")
        return fd

    def conn(self, sc: Syscall):
        fd = self.fd(sc)
        if fd != self.conn_fd or self.ep is None:
            raise NotSupported(f"{sc.name}() on a socket that is not connected")
        return self.ep

    def sys_socket(self, sc: Syscall, c: Call):
        if self.listen_fd is not None:
            raise NotSupported("a second socket: the simulator's engine drives one connection")
        fd = self.expected_fd(sc)
        self.listen_fd = fd
        c.extra["fd"] = fd
        return fd

    def sys_bind(self, sc, c):
        self.fd(sc)
        return 0

    def _endpoint(self):
        """The socket's endpoint, made with the settings the shell lines gave so far."""
        from satcc._native import DrillEndpoint

        s = self.settings
        try:
            self.ep = DrillEndpoint(
                cca=str(s["cca"]),
                sack=bool(s["sack"]),
                timestamps=bool(s["timestamps"]),
                window_scaling=bool(s["window_scaling"]),
                rwnd_bytes=int(s["rwnd_bytes"]),  # type: ignore[call-overload]
                rcvbuf_autotune=bool(s["rcvbuf_autotune"]),
                ecn=int(s["ecn"]),  # type: ignore[call-overload]
                initial_cwnd=int(s["initial_cwnd"]),  # type: ignore[call-overload]
                slow_start_after_idle=bool(s["slow_start_after_idle"]),
                pacing=str(s["pacing"]),
                min_tso_segs=int(s["min_tso_segs"]),  # type: ignore[call-overload]
                tso_win_divisor=int(s["tso_win_divisor"]),  # type: ignore[call-overload]
            )
        except ValueError as e:
            raise NotSupported(f"the simulator cannot take these settings: {e}") from None
        if self.user_mss is not None:
            self.ep.set_maxseg(self.user_mss)
        self.ep.advance(self.t_ns)
        if s.get("TCP_NODELAY"):
            self.ep.set_nodelay(True)
        if s.get("TCP_CORK"):
            self.ep.set_cork(True)
        if s.get("local_drop"):
            self.ep.set_local_drop(True)
        return self.ep

    def sys_listen(self, sc, c):
        self.fd(sc)
        self._endpoint().listen()
        return 0

    def sys_connect(self, sc, c):
        fd = self.fd(sc)
        if self.ep is not None:
            raise NotSupported("connect() on a listening socket")
        self._endpoint().connect()
        self.conn_fd = fd
        c.extra["fd"] = fd
        if fd in self.nonblock:
            c.errno = "EINPROGRESS"
            return -1
        c.done = False
        self.blocked.append(("connect", c, fd))
        return None

    def sys_accept(self, sc, c):
        self.fd(sc)
        fd = self.expected_fd(sc)
        if self.ep is not None and self.ep.established():
            self.conn_fd = fd
            c.extra["fd"] = fd
            return fd
        c.done = False
        self.blocked.append(("accept", c, fd))
        return None

    sys_accept4 = sys_accept

    def sys_setsockopt(self, sc, c):
        self.fd(sc)
        opt = sc.args[2]
        name = opt.value if opt.kind == "word" else str(opt.value)
        if name == "TCP_CONGESTION":
            cca = str(self.val(sc.args[3]))
            if self.ep is None:
                self.settings["cca"] = cca
                from satcc._native import cc_names

                if cca not in cc_names():
                    raise NotSupported(f"TCP_CONGESTION {cca!r}: not a simulator algorithm")
            else:
                try:
                    self.ep.set_cca(cca)
                except ValueError as e:
                    raise NotSupported(f"TCP_CONGESTION: {e}") from None
            return 0
        if name == "TCP_MAXSEG":
            mss = int(self.val(sc.args[3]))
            try:
                if self.ep is not None:
                    self.ep.set_maxseg(mss)
                elif mss and not _LIMITS["min_mss"] <= mss <= _LIMITS["max_user_mss"]:
                    raise ValueError(mss)
            except ValueError:
                c.errno = "EINVAL"
                return -1
            if self.ep is None:
                self.user_mss = mss or None
            return 0
        if name in ("TCP_NODELAY", "TCP_CORK"):
            on = bool(self.val(sc.args[3]))
            if self.ep is None:  # before listen/connect: kept for the endpoint
                self.settings[name] = on
            elif name == "TCP_NODELAY":
                self.ep.set_nodelay(on)
            else:
                self.ep.set_cork(on)
            return 0
        if name in NO_EFFECT_OPTS:
            return 0
        if name == "IP_TOS" and not int(self.val(sc.args[3])) & 3:
            return 0  # the DSCP bits only: the ECN field (the low two bits) is untouched
        raise NotSupported(f"setsockopt {name}: not modelled by the simulator's endpoint")

    def sys_getsockopt(self, sc, c):
        self.fd(sc)
        opt = sc.args[2]
        name = opt.value if opt.kind == "word" else str(opt.value)
        want = sc.args[3]
        if name == "TCP_CONGESTION":
            got = self.ep.cca() if self.ep is not None else str(self.settings["cca"])
            if want.kind == "str" and got != want.value:
                c.extra["mismatch"] = f"getsockopt() value {got!r}, expected {want.value!r}"
            return 0
        if name == "SO_ERROR":
            return 0
        if name == "TCP_MAXSEG":
            if self.ep is not None:
                got = self.ep.maxseg()
            else:
                got = self.user_mss or 536  # TCP_MSS_DEFAULT
            if want.kind != "ellipsis" and got != self.val(want):
                c.extra["mismatch"] = f"getsockopt() value {got}, expected {self.val(want)}"
            return 0
        raise NotSupported(f"getsockopt {name}: not modelled by the simulator's endpoint")

    def sys_fcntl(self, sc, c):
        fd = self.fd(sc)
        cmd = self.val(sc.args[1])
        if cmd == CONSTANTS["F_GETFL"]:
            return CONSTANTS["O_RDWR"] | (CONSTANTS["O_NONBLOCK"] if fd in self.nonblock else 0)
        if cmd == CONSTANTS["F_SETFL"]:
            if self.val(sc.args[2]) & CONSTANTS["O_NONBLOCK"]:
                self.nonblock.add(fd)
            else:
                self.nonblock.discard(fd)
            return 0
        raise NotSupported(f"fcntl command {cmd}: not supported")

    def _write(self, sc, n: int, c: Call, flags: int = 0):
        ep = self.conn(sc)
        err = ep.take_error()
        if err is not None:
            c.errno = err
            return -1
        if ep.write_shut():
            c.errno = "EPIPE"
            return -1
        more = bool(flags & CONSTANTS["MSG_MORE"])
        if flags & ~CONSTANTS["MSG_MORE"]:
            raise NotSupported(f"{sc.name}() flags {flags:#x}: only MSG_MORE is modelled")
        try:
            sent = ep.send(n, more)
        except ValueError as e:
            raise NotSupported(f"{sc.name}(): {e}") from None
        self.written += sent
        if not more:
            self.write_ends.add(self.written)
        return sent

    def sys_write(self, sc, c):
        return self._write(sc, int(self.val(sc.args[2])), c)

    def sys_send(self, sc, c):
        flags = int(self.val(sc.args[3])) if len(sc.args) > 3 else 0
        return self._write(sc, int(self.val(sc.args[2])), c, flags)

    sys_sendto = sys_send

    @staticmethod
    def _iov_total(iov: Expr) -> int:
        return sum(int(x.value[-1].value) for x in iov.value)  # type: ignore[union-attr]

    def sys_writev(self, sc, c):
        return self._write(sc, self._iov_total(sc.args[1]), c)

    def sys_sendmsg(self, sc, c):
        fields = {x.value[0]: x.value[1] for x in sc.args[1].value if x.kind == "assign"}  # type: ignore[union-attr]
        if "msg_iov" not in fields:
            raise NotSupported("sendmsg() without msg_iov is not supported")
        flags = int(self.val(sc.args[2])) if len(sc.args) > 2 else 0
        return self._write(sc, self._iov_total(fields["msg_iov"]), c, flags)

    def sys_read(self, sc, c):
        ep = self.conn(sc)
        n = int(self.val(sc.args[2]))
        if not ep.readable():
            err = ep.take_error()
            if err is not None:
                c.errno = err
                return -1
        if ep.read_ready():
            return ep.read(n)
        if self.conn_fd in self.nonblock:
            c.errno = "EAGAIN"
            return -1
        c.done = False
        self.blocked.append(("read", c, n))
        return None

    sys_recv = sys_read
    sys_recvfrom = sys_read

    def sys_close(self, sc, c):
        fd = self.fd(sc)
        if fd == self.conn_fd and self.ep is not None:
            self.ep.close()
            self.conn_fd = None
        elif fd == self.listen_fd:
            self.listen_fd = None
            if self.ep is not None and not self.ep.established():
                self.ep.close()  # the listener goes: later segments are answered by a RST
        return 0

    def sys_shutdown(self, sc, c):
        ep = self.conn(sc)
        how = self.val(sc.args[1])
        if how in (CONSTANTS["SHUT_WR"], CONSTANTS["SHUT_RDWR"]):
            ep.close_write()
        if how in (CONSTANTS["SHUT_RD"], CONSTANTS["SHUT_RDWR"]):
            ep.shutdown_read()
        return 0

    def tcp_info(self, fd: int) -> dict:
        info = dict.fromkeys(tcp_info_names(), 0)
        if self.ep is None:
            info["tcpi_state"] = 7  # TCP_CLOSE
            return info
        info.update(self.ep.info())
        if fd == self.listen_fd and fd != self.conn_fd:
            info["tcpi_state"] = 10  # TCP_LISTEN
        return info


def run_sim(script: Script, overrides: dict | None = None) -> Result:
    """Run one script against the simulator's endpoint; shell lines it could not map are
    in `printed` as `shell: ignored ...`, where the block was read."""
    return Runner(script, SimEngine(script.path), overrides).run()


__all__ = ["Mismatch", "SimEngine", "run_sim"]
