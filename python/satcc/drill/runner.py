"""Running one parsed script against an engine (the system under test).

The runner owns what packetdrill's own core does, the same for both engines: the timeline
(relative times follow the previous event, an outbound packet's actual time moves the
events after it, packetdrill's tolerance rule: `--tolerance_usecs` (default 4000) or
`--tolerance_percent` (default 12.5) of the gap to the previous event, whichever is
larger), the mapping between the script's relative sequence numbers and the live ones
(the remote ISN is fixed here, the local one learned from the system's SYN or SYN-ACK; TS
ecr of injected packets mapped to the live TS val the script named), the comparison of
each outbound packet with the script's, the system calls' results and errno, and the
`%{ }%` assertions over `tcp_info`.

An engine provides: `setup(script)`, `now()` (seconds since the script's start),
`advance(t)` (let time pass to t), `inject(Wire)`, `next_outbound(deadline)` (the next
packet the system sent, or None by the deadline), `call(Syscall, args)` (a `Call` that may
complete later), `tcp_info(fd)` (dict of tcpi_* values), `shell(cmd, line)`, `close()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from satcc.drill.code import AssertFailed, CodeError, run_code
from satcc.drill.parser import Code, Event, PacketSpec, Script, Shell, Syscall, TcpOption

REMOTE_ISN = 1_000_000  # the injected side's initial sequence number (packetdrill: random)
MOD32 = 1 << 32
LATE_GRACE = 1.0  # seconds: how long after its window an expected packet is waited for


class Mismatch(Exception):
    """The system did not do what the script says: (line, expected, got)."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


class NotSupported(Exception):
    """The engine cannot run this script (the reason is the message)."""

    def __init__(self, reason: str, line: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass
class Wire:
    """A TCP/IPv4 segment as seen on the wire (live sequence numbers)."""

    flags: str
    seq: int
    ack: int
    win: int
    length: int
    options: list[TcpOption] = field(default_factory=list)
    ecn: str = "noecn"
    t: float = 0.0  # seconds since the script's start

    def describe(self, local_isn: int = 0, remote_isn: int = 0) -> str:
        return describe(
            self.flags,
            (self.seq - local_isn) % MOD32,
            self.length,
            (self.ack - remote_isn) % MOD32 if "A" in self.flags else None,
            self.win,
            self.options,
            self.ecn,
        )


def describe(flags, seq, length, ack, win, options, ecn=None) -> str:
    f = "".join(c for c in "SFRPUEW" if c in flags) + ("." if "A" in flags else "")
    s = f"{ecn and ecn != 'noecn' and f'[{ecn}] ' or ''}{f or '-'} {seq}:{(seq + length) % MOD32}({length})"
    if ack is not None:
        s += f" ack {ack}"
    if win is not None:
        s += f" win {win}"
    if options:
        s += " <" + ",".join(format_option(o) for o in options) + ">"
    return s


def format_option(o: TcpOption) -> str:
    if o.kind in ("mss", "wscale"):
        return f"{o.kind} {o.value}"
    if o.kind == "sack":
        return "sack " + " ".join(f"{a}:{b}" for a, b in o.value)  # type: ignore[union-attr]
    if o.kind == "TS":
        return f"TS val {o.value[0]} ecr {o.value[1]}"  # type: ignore[index]
    return o.kind


@dataclass
class Result:
    verdict: str  # pass, fail, unsupported, error
    line: int = 0
    reason: str = ""
    printed: list[str] = field(default_factory=list)


class Call:
    """A system call in progress: `done` once it returned; `ret`, `errno` (name or None)."""

    def __init__(self, ret: object = None, errno: str | None = None, done: bool = True):
        self.ret = ret
        self.errno = errno
        self.done = done
        self.extra: dict = {}


def option_value(opts: list[TcpOption], kind: str):
    for o in opts:
        if o.kind == kind:
            return o.value
    return None


class Runner:
    def __init__(self, script: Script, engine, option_overrides: dict | None = None):
        self.script = script
        self.engine = engine
        opts = dict(script.options)
        opts.update(option_overrides or {})
        try:
            self.tol_us = int(opts.get("tolerance_usecs", 4000))
            self.tol_pct = float(opts.get("tolerance_percent", 12.5))
        except ValueError:
            raise Mismatch(
                0, "expected a number in --tolerance_usecs/--tolerance_percent"
            ) from None
        # satcc's extension (packetdrill has no such option): `--ignore_psh` leaves PSH out
        # of the comparison; Linux sets it per send-queue buffer, which depends on how a
        # write was split while earlier data was being sent (timing), not on the CC.
        self.ignore_psh = "ignore_psh" in opts
        self.local_isn: int | None = None
        self.ts_map: dict[int, int] = {}
        self.ts_first: tuple[int, int] | None = None
        self.last_t = 0.0
        self.pending: tuple[Event, Call] | None = None
        self.env: dict[str, object] = {}
        self.printed: list[str] = []
        self.current_fd: int | None = None

    # -- the timeline
    def when(self, ev: Event) -> tuple[float | None, float | None]:
        t = ev.time
        if t.kind == "any":
            return None, None
        base = self.last_t if t.kind == "rel" else 0.0
        start = base + t.start
        end = base + t.end if t.end is not None else start
        return start, end

    def tolerance(self, expected: float) -> float:
        gap = max(0.0, expected - self.last_t)
        return max(self.tol_us / 1e6, self.tol_pct / 100.0 * gap)

    def run(self) -> Result:
        eng = self.engine
        try:
            eng.setup(self.script)
            for ev in self.script.events:
                self.event(ev)
            if self.pending is not None:
                self.finish_pending(self.pending[0].line + 1)
            return Result("pass", printed=self.printed)
        except Mismatch as m:
            return Result("fail", m.line, m.reason, self.printed)
        except NotSupported as u:
            return Result("unsupported", u.line, u.reason, self.printed)
        finally:
            eng.close()

    def event(self, ev: Event) -> None:
        a = ev.action
        start, end = self.when(ev)
        if isinstance(a, PacketSpec) and a.direction == ">":
            self.outbound(ev, a, start, end)
            return
        if start is not None:
            self.engine.advance(start)
            # An event performed late (a loaded machine) moves the ones after it, as the
            # actual time of an outbound packet does.
            self.last_t = max(start, self.engine.now())
        if self.pending is not None and self.pending[1].done:
            self.check_call(self.pending[0], self.pending[1])
            self.pending = None
        if isinstance(a, PacketSpec):
            self.engine.inject(self.inbound(ev, a))
        elif isinstance(a, Syscall):
            self.syscall(ev, a)
        elif isinstance(a, Shell):
            self.engine.shell(a.command, ev.line)
        elif isinstance(a, Code):
            self.code(ev, a)

    # -- packets
    def inbound(self, ev: Event, p: PacketSpec) -> Wire:
        li = self.local_isn
        if "A" in p.flags and li is None:
            raise Mismatch(
                ev.line, "expected the system's SYN before an inbound ACK (its ISN is unknown)"
            )
        opts = []
        for o in p.options or []:
            if o.kind == "sack":
                assert li is not None or not o.value
                blocks = tuple(
                    ((a + (li or 0)) % MOD32, (b + (li or 0)) % MOD32) for a, b in o.value
                )  # type: ignore[union-attr]
                opts.append(TcpOption("sack", blocks))
            elif o.kind == "TS":
                val, ecr = o.value  # type: ignore[misc]
                if ecr in self.ts_map:
                    ecr = self.ts_map[ecr]
                elif self.ts_first is not None:
                    ecr = (ecr - self.ts_first[0] + self.ts_first[1]) % MOD32
                opts.append(TcpOption("TS", (val, ecr)))
            else:
                opts.append(o)
        ack = ((p.ack or 0) + (li or 0)) % MOD32 if "A" in p.flags else 0
        return Wire(
            p.flags,
            (p.seq + REMOTE_ISN) % MOD32,
            ack,
            p.win or 0,
            p.length,
            opts,
            p.ecn or "noecn",
        )

    def outbound(self, ev: Event, p: PacketSpec, start, end) -> None:
        if start is None:
            deadline = self.engine.now() + 10.0
        else:
            # Wait past the tolerance for a late packet, so a late one is reported as late.
            deadline = end + self.tolerance(end) + LATE_GRACE
        got = self.engine.next_outbound(deadline)
        if got is None:
            raise Mismatch(
                ev.line,
                f"expected outbound `{self.expected_text(p)}`, got no packet by t={deadline:.6f}s",
            )
        if self.local_isn is None:
            if "S" not in got.flags:
                raise Mismatch(ev.line, f"expected a SYN first, got `{got.describe()}`")
            self.local_isn = got.seq
        self.compare(ev, p, got)
        if start is not None:
            tol = self.tolerance(start)
            if got.t < start - tol or got.t > end + tol:
                raise Mismatch(
                    ev.line,
                    f"expected `{self.expected_text(p)}` at t={start:.6f}s"
                    + (f"~{end:.6f}s" if end != start else "")
                    + f" (tolerance {tol * 1e6:.0f} us), got it at t={got.t:.6f}s",
                )
        self.last_t = got.t
        if self.pending is not None and self.pending[1].done:
            self.check_call(self.pending[0], self.pending[1])
            self.pending = None

    def expected_text(self, p: PacketSpec) -> str:
        opts = "<...>" if p.options_any else None
        s = describe(
            p.flags, p.seq, p.length, p.ack if "A" in p.flags else None, p.win, p.options, p.ecn
        )
        return s + (" " + opts if opts else "")

    def compare(self, ev: Event, p: PacketSpec, got: Wire) -> None:
        li = self.local_isn or 0
        g_seq = (got.seq - li) % MOD32
        g_ack = (got.ack - REMOTE_ISN) % MOD32
        problems = []
        want_flags = set(p.flags)
        got_flags = set(got.flags)
        if self.ignore_psh:
            want_flags.discard("P")
            got_flags.discard("P")
        if want_flags != got_flags:
            problems.append("flags")
        if g_seq != p.seq % MOD32 or got.length != p.length:
            problems.append("sequence range")
        if "A" in p.flags and "A" in got.flags and g_ack != (p.ack or 0) % MOD32:
            problems.append("ack")
        if p.win is not None and got.win != p.win:
            problems.append("window")
        if p.ecn is not None and p.ecn != "ect01" and got.ecn != p.ecn:
            problems.append("ECN mark")
        if p.ecn == "ect01" and got.ecn not in ("ect0", "ect1"):
            problems.append("ECN mark")
        shown = list(got.options)
        if not p.options_any:
            want = p.options or []
            if len(want) != len(got.options):
                problems.append("TCP options")
            else:
                for w, g in zip(want, got.options, strict=True):
                    if w.kind != g.kind:
                        problems.append("TCP options")
                        break
                    if w.kind == "TS":
                        wval, wecr = w.value  # type: ignore[misc]
                        gval, gecr = g.value  # type: ignore[misc]
                        self.ts_map[wval] = gval
                        if self.ts_first is None:
                            self.ts_first = (wval, gval)
                        if gecr != wecr:
                            problems.append("TS ecr")
                    elif w.kind == "sack":
                        gb = tuple(
                            ((a - REMOTE_ISN) % MOD32, (b - REMOTE_ISN) % MOD32) for a, b in g.value
                        )  # type: ignore[union-attr]
                        if gb != tuple(w.value):  # type: ignore[arg-type]
                            problems.append("SACK blocks")
                    elif w.value != g.value:
                        problems.append(f"{w.kind} option")
        # Show the live packet in the script's terms (TS val as the live one).
        shown = []
        for o in got.options:
            if o.kind == "sack":
                shown.append(
                    TcpOption(
                        "sack",
                        tuple(
                            ((a - REMOTE_ISN) % MOD32, (b - REMOTE_ISN) % MOD32) for a, b in o.value
                        ),
                    )
                )  # type: ignore[union-attr]
            else:
                shown.append(o)
        if problems:
            got_text = describe(
                got.flags,
                g_seq,
                got.length,
                g_ack if "A" in got.flags else None,
                got.win,
                shown,
                got.ecn,
            )
            raise Mismatch(
                ev.line,
                f"{', '.join(dict.fromkeys(problems))} differ: expected `{self.expected_text(p)}`, "
                f"got `{got_text}`",
            )

    # -- system calls
    def syscall(self, ev: Event, sc: Syscall) -> None:
        if self.pending is not None:
            self.finish_pending(ev.line)
        call = self.engine.call(sc, ev.line)
        if call.done:
            self.check_call(ev, call)
        else:
            self.pending = (ev, call)

    def finish_pending(self, line: int) -> None:
        ev, call = self.pending  # type: ignore[misc]
        self.engine.wait_call(call, self.engine.now() + 10.0)
        if not call.done:
            raise Mismatch(ev.line, f"expected {ev.action.name}() to return, it still blocks")  # type: ignore[union-attr]
        self.pending = None
        self.check_call(ev, call)

    def check_call(self, ev: Event, call: Call) -> None:
        sc: Syscall = ev.action  # type: ignore[assignment]
        if call.extra.get("unsupported"):
            raise NotSupported(f"{sc.name}(): {call.extra['unsupported']}", ev.line)
        want = sc.result
        got = f"{call.ret}" + (f" {call.errno}" if call.errno else "")
        if want.kind == "int" and call.ret != want.value:
            exp = f"{want.value}" + (f" {sc.errno}" if sc.errno else "")
            raise Mismatch(ev.line, f"{sc.name}() returned {got}, expected {exp}")
        if sc.errno is not None and call.errno != sc.errno:
            raise Mismatch(ev.line, f"{sc.name}() returned {got}, expected errno {sc.errno}")
        if want.kind == "int" and want.value != -1 and call.errno is not None and sc.errno is None:
            raise Mismatch(ev.line, f"{sc.name}() returned {got}")
        if "fd" in call.extra:
            self.current_fd = call.extra["fd"]
        if call.extra.get("mismatch"):
            raise Mismatch(ev.line, call.extra["mismatch"])

    # -- code
    def code(self, ev: Event, c: Code) -> None:
        if self.current_fd is None:
            raise Mismatch(ev.line, "expected a socket before a %{ }% block (no tcp_info to read)")
        info = self.engine.tcp_info(self.current_fd)
        self.env.update(info)
        try:
            run_code(c.text, self.env, self.printed)
        except AssertFailed as e:
            raise Mismatch(ev.line, f"{e}") from None
        except CodeError as e:
            raise NotSupported(f"%{{ }}% block: {e}", ev.line) from None
