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

An engine provides: `setup(script)` and `shell(cmd, line)` (each returns lines for the
result's `printed`, such as the shell's messages), `now()` (seconds since the script's start),
`advance(t)` (let time pass to t), `inject(Wire)`, `next_outbound(deadline)` (the next
packet the system sent, or None by the deadline), `call(Syscall, args)` (a `Call` that may
complete later), `tcp_info(fd)` (dict of tcpi_* values), `close()`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace

from satcc.drill.code import NAMES as CODE_NAMES
from satcc.drill.code import AssertFailed, CodeError, UndefinedName, run_code
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


class ScriptError(Exception):
    """The script itself is wrong in a way only running it shows (a `tcp_info` field that
    does not exist): `FILE:LINE: expected ..., found ...`, verdict error."""

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
    gso_size: int = 0  # the kernel's TSO/GSO packet: its segment size (virtio_net_hdr)
    parts: int = 1  # packets gathered into this one (packetdrill's aggregation)

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

    def how_sent(self) -> str:
        """How the packet left: one GSO packet of N segments, or gathered from N packets."""
        if self.parts > 1:
            return f" (gathered from {self.parts} packets)"
        if self.gso_size and self.length > self.gso_size:
            n = -(-self.length // self.gso_size)
            return f" (one GSO packet: {n} segments of up to {self.gso_size})"
        return ""


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


def option_bytes(opts: list[TcpOption]) -> int:
    """The TCP header's option space the options take (padded to 4 bytes)."""
    n = 0
    for o in opts:
        if o.kind in ("nop", "eol"):
            n += 1
        elif o.kind == "mss":
            n += 4
        elif o.kind == "wscale":
            n += 3
        elif o.kind == "sackOK":
            n += 2
        elif o.kind == "sack":
            n += 2 + 8 * len(o.value)  # type: ignore[arg-type]
        elif o.kind == "TS":
            n += 10
        else:
            n += 2 + len(o.value or b"")  # type: ignore[arg-type]
    return -(-n // 4) * 4


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
        # The parser has checked these are numbers (parser.NUMERIC_OPTIONS).
        self.tol_us = int(opts.get("tolerance_usecs", 4000))
        self.tol_pct = float(opts.get("tolerance_percent", 12.5))
        # packetdrill gathers consecutive outbound packets until they add up to the
        # script's payload (run_packet.c, do_outbound_script_packet), unless
        # --strict_segments: a TSO/GSO packet the kernel cut smaller, or the simulator's
        # MSS-sized segments of one burst, compare as the one packet the script names.
        self.aggregate = "strict_segments" not in opts
        # satcc's extension (packetdrill has no such option): `--ignore_psh` leaves PSH out
        # of the comparison; Linux sets it per send-queue buffer, which depends on how a
        # write was split while earlier data was being sent (timing), not on the CC.
        self.ignore_psh = "ignore_psh" in opts
        self.local_isn: int | None = None
        self.ts_map: dict[int, int] = {}
        self.ts_first: tuple[int, int] | None = None
        self.last_t = 0.0
        self.pending: tuple[Event, Call] | None = None
        self.env: dict[str, object] = dict(CODE_NAMES)
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
            self.printed.extend(eng.setup(self.script) or [])
            for ev in self.script.events:
                self.event(ev)
            if self.pending is not None:
                self.finish_pending(self.pending[0].line + 1)
            return Result("pass", printed=self.printed)
        except Mismatch as m:
            return Result("fail", m.line, m.reason, self.printed)
        except ScriptError as e:
            return Result("error", e.line, e.reason, self.printed)
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
            self.printed.extend(self.engine.shell(a.command, ev.line) or [])
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
        if self.aggregate and got.length < p.length:
            got = self.gather(ev, p, got, deadline)
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

    def gather(self, ev: Event, p: PacketSpec, first: Wire, deadline: float) -> Wire:
        """packetdrill's aggregation: the packets after `first` are taken while their
        payload adds up to less than the script's. Each must follow the previous one in
        sequence with the same SYN/RST/ACK/URG/ECE flags, ack, window and header length,
        and each but the last be as long as the one before. The result has the first
        packet's sequence number and CWR, the last one's other header fields and time."""
        parts = [first]
        total = first.length
        while total < p.length:
            nxt = self.engine.next_outbound(deadline)
            prev = parts[-1]
            if nxt is None:
                got = (
                    f"`{self.shown_text(prev)}`"
                    if len(parts) == 1
                    else f"{len(parts)} packets, the last `{self.shown_text(prev)}`"
                )
                raise Mismatch(
                    ev.line,
                    f"expected `{self.expected_text(p)}`, got {got} ({total} of its "
                    f"{p.length} bytes) and no more by t={deadline:.6f}s",
                )
            why = []
            if set(nxt.flags) - set("FPW") != set(prev.flags) - set("FPW"):
                why.append("flags")
            if nxt.seq != (prev.seq + prev.length) % MOD32:
                why.append("sequence (not the next byte)")
            if nxt.ack != prev.ack or nxt.win != prev.win:
                why.append("ack/window")
            if option_bytes(nxt.options) != option_bytes(prev.options):
                why.append("header length")
            if total + nxt.length < p.length and nxt.length != prev.length:
                why.append(f"payload {nxt.length} after {prev.length}")
            if why:
                raise Mismatch(
                    ev.line,
                    f"expected `{self.expected_text(p)}`, got `{self.shown_text(prev)}` then "
                    f"`{self.shown_text(nxt)}`, which cannot be gathered into it "
                    f"({', '.join(why)} differ)",
                )
            parts.append(nxt)
            total += nxt.length
        last = parts[-1]
        cwr = "W" in first.flags
        flags = "".join(c for c in last.flags if c != "W") + ("W" if cwr else "")
        return Wire(
            flags,
            first.seq,
            last.ack,
            last.win,
            total,
            last.options,
            last.ecn,
            last.t,
            last.gso_size,
            len(parts),
        )

    def shown_text(self, w: Wire) -> str:
        """A live packet in the script's terms (relative sequence numbers, SACK blocks)."""
        shown = [
            TcpOption(
                "sack",
                tuple(((a - REMOTE_ISN) % MOD32, (b - REMOTE_ISN) % MOD32) for a, b in o.value),  # type: ignore[union-attr]
            )
            if o.kind == "sack"
            else o
            for o in w.options
        ]
        return replace(w, options=shown).describe(self.local_isn or 0, REMOTE_ISN)

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
        if problems:
            raise Mismatch(
                ev.line,
                f"{', '.join(dict.fromkeys(problems))} differ: expected `{self.expected_text(p)}`, "
                f"got `{self.shown_text(got)}`{got.how_sent()}",
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
        except UndefinedName as e:
            # packetdrill's Python would stop with a NameError: the script is wrong.
            near = difflib.get_close_matches(
                e.name, [k for k in self.env if k.startswith("tcpi_")], 1
            )
            raise ScriptError(
                ev.line,
                f"{self.script.path}:{ev.line}: expected a tcp_info field or a name set "
                f"earlier, found `{e.name}`" + (f" (did you mean `{near[0]}`?)" if near else ""),
            ) from None
        except CodeError as e:
            raise NotSupported(f"%{{ }}% block: {e}", ev.line) from None
