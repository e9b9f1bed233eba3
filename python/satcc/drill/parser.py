"""A parser for packetdrill's script language (google/packetdrill `syntax.md`).

One parser serves both engines. It reads the TCP subset of the language: `--option=value`
header lines, relative/absolute/ranged/any event times, inbound `<` and outbound `>` TCP
packets (flags, sequence range, ack, win, options incl. SACK blocks and timestamps, ECN
marks), system calls with arguments, expected result, errno and note, backtick shell
commands and `%{ }%` code blocks. UDP/ICMP packets, IPv6/GRE/MPLS encapsulations and
TCP Fast Open cookies raise `Unsupported` (the runner reports the script as unsupported);
anything malformed raises `DrillSyntaxError`, whose message names the file, the line and
what was expected there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


class DrillSyntaxError(Exception):
    """A malformed script: `FILE:LINE: expected ..., found ...`."""


class Unsupported(Exception):
    """Valid packetdrill that satcc's runner does not implement (the reason is the message)."""

    def __init__(self, reason: str, line: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.line = line


# ---------------------------------------------------------------- the script's structure


@dataclass(frozen=True)
class Time:
    """When an event happens. `kind`: "abs", "rel" (after the previous event) or "any" (`*`).
    `start`/`end` in seconds; `end` is set for a range `a~b` (same kind as start)."""

    kind: str
    start: float = 0.0
    end: float | None = None


@dataclass(frozen=True)
class TcpOption:
    """One TCP option: kind is mss, wscale, sackOK, sack, TS, nop, eol. `value` is the MSS
    or shift count, the SACK blocks ((left, right), ...) or (val, ecr)."""

    kind: str
    value: object = None


@dataclass
class PacketSpec:
    direction: str  # "<" inbound (injected), ">" outbound (expected from the system)
    flags: str  # letters of F S R P U E W A ("." in the script is A)
    seq: int
    end_seq: int
    length: int
    ack: int | None = None
    win: int | None = None
    options: list[TcpOption] | None = None  # None: no option list given
    options_any: bool = False  # `<...>`: options not checked
    ecn: str | None = None  # noecn, ect0, ect1, ect01, ce; None: not given


@dataclass
class Expr:
    """A syscall argument or result: kind is int, word, str, ellipsis, list, struct, call,
    or (left `|` right), assign (word = value)."""

    kind: str
    value: object = None


@dataclass
class Syscall:
    name: str
    args: list[Expr]
    result: Expr
    errno: str | None = None
    note: str | None = None
    end_time: float | None = None  # `...T`: the call blocks until T (seconds)


@dataclass
class Shell:
    command: str


@dataclass
class Code:
    text: str


@dataclass
class Event:
    line: int
    time: Time
    action: PacketSpec | Syscall | Shell | Code


@dataclass
class Script:
    path: str
    options: dict[str, str] = field(default_factory=dict)
    init: Shell | None = None
    events: list[Event] = field(default_factory=list)
    init_line: int = 0


# ---------------------------------------------------------------- tokens


@dataclass
class Tok:
    kind: str  # num, word, str, opt, shell, code, ellipsis, punct, end
    text: str
    line: int
    value: object = None


_NUM = re.compile(r"0[xX][0-9a-fA-F]+|\d+\.(?!\.)\d*|\.\d+|\d+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PUNCT = set("+-~*<>:()[]{},=.|!/&;'?@#$^")


def tokenize(text: str, path: str) -> list[Tok]:
    toks: list[Tok] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in " \t\r\f\v":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise DrillSyntaxError(f"{path}:{line}: expected `*/` closing the comment")
            line += text.count("\n", i, j)
            i = j + 2
        elif c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise DrillSyntaxError(f"{path}:{line}: expected a closing backtick")
            toks.append(Tok("shell", text[i + 1 : j], line))
            line += text.count("\n", i, j)
            i = j + 1
        elif text.startswith("%{", i):
            j = text.find("}%", i + 2)
            if j < 0:
                raise DrillSyntaxError(f"{path}:{line}: expected `}}%` closing the code block")
            toks.append(Tok("code", text[i + 2 : j], line))
            line += text.count("\n", i, j)
            i = j + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise DrillSyntaxError(f"{path}:{line}: expected a closing double quote")
            toks.append(Tok("str", text[i + 1 : j], line, text[i + 1 : j]))
            i = j + 1
        elif text.startswith("...", i):
            toks.append(Tok("ellipsis", "...", line))
            i += 3
        elif text.startswith("--", i) and (i == 0 or text[i - 1] in " \t\n"):
            m = re.compile(r"--[A-Za-z0-9_]+(=\S*)?").match(text, i)
            if not m:
                raise DrillSyntaxError(f"{path}:{line}: expected --name or --name=value")
            toks.append(Tok("opt", m.group(0), line))
            i = m.end()
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            m = _NUM.match(text, i)
            assert m is not None
            s = m.group(0)
            if s[:2].lower() == "0x":
                v: object = int(s, 16)
            elif "." in s:
                v = float(s)
            else:
                v = int(s)
            toks.append(Tok("num", s, line, v))
            i = m.end()
        elif c.isalpha() or c == "_":
            m = _WORD.match(text, i)
            assert m is not None
            toks.append(Tok("word", m.group(0), line))
            i = m.end()
        else:
            toks.append(Tok("punct", c, line))
            i += 1
    toks.append(Tok("end", "end of file", toks[-1].line if toks else line))
    return toks


# ---------------------------------------------------------------- the parser

# Header options that take a number (google/packetdrill config.c reads them with atoi/atof),
# and the unit each is in.
NUMERIC_OPTIONS = {
    "tolerance_usecs": "int",
    "tolerance_percent": "float",
    "tcp_ts_tick_usecs": "int",
    "mss": "int",
    "mtu": "int",
}
NUMERIC_UNITS = {
    "tolerance_usecs": "microseconds",
    "tolerance_percent": "percent of the gap to the previous event",
    "tcp_ts_tick_usecs": "microseconds per TS val tick",
    "mss": "bytes",
    "mtu": "bytes",
}

_FLAG_LETTERS = set("FSRPUEWA")
_ECN = {"noecn", "ect0", "ect1", "ect01", "ce"}


class _Parser:
    def __init__(self, text: str, path: str):
        self.path = path
        self.toks = tokenize(text, path)
        self.i = 0

    # helpers
    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def fail(self, expected: str, tok: Tok | None = None) -> DrillSyntaxError:
        t = tok or self.tok
        found = t.text if t.kind != "shell" else "a backtick command"
        if t.kind == "code":
            found = "a %{ }% block"
        return DrillSyntaxError(f"{self.path}:{t.line}: expected {expected}, found `{found}`")

    def is_p(self, ch: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == ch

    def expect_p(self, ch: str, what: str | None = None) -> Tok:
        if not self.is_p(ch):
            raise self.fail(what or f"`{ch}`")
        return self.take()

    def expect_int(self, what: str) -> int:
        t = self.tok
        if t.kind != "num" or not isinstance(t.value, int):
            raise self.fail(what)
        self.take()
        return int(t.value)  # type: ignore[arg-type]

    def is_word(self, *words: str) -> bool:
        return self.tok.kind == "word" and self.tok.text in words

    # script
    def script(self) -> Script:
        s = Script(self.path)
        while self.tok.kind == "opt":
            t = self.take()
            name, _, value = t.text[2:].partition("=")
            self.check_option(name, value, t.line)
            s.options[name] = value
        if self.tok.kind == "shell":
            s.init_line = self.tok.line
            s.init = Shell(self.take().text)
        while self.tok.kind != "end":
            if self.tok.kind == "shell":
                # A final cleanup command has no time: it runs after the events.
                t = self.take()
                s.events.append(Event(t.line, Time("rel", 0.0), Shell(t.text)))
                continue
            s.events.append(self.event())
        if not s.events:
            # Nothing to run is nothing tested: not a pass.
            raise DrillSyntaxError(
                f"{self.path}: expected at least one event (a packet, a system call or a "
                "%{ }% block), found none"
            )
        return s

    def check_option(self, name: str, value: str, line: int) -> None:
        """The header options the runner reads take plain numbers; anything else there is a
        malformed script (packetdrill's atol would read `5ms` as 5 microseconds silently)."""
        kind = NUMERIC_OPTIONS.get(name)
        if kind is None:
            return
        ok = re.fullmatch(r"\d+" if kind == "int" else r"\d+(\.\d*)?|\.\d+", value)
        if not ok:
            what = "a whole number" if kind == "int" else "a number"
            raise DrillSyntaxError(
                f"{self.path}:{line}: expected {what} for --{name} "
                f"({NUMERIC_UNITS[name]}), found `{value or '(nothing)'}`"
            )

    def number(self, what: str) -> float:
        t = self.tok
        if t.kind != "num":
            raise self.fail(what)
        self.take()
        return float(t.value)  # type: ignore[arg-type]

    def event_time(self) -> Time:
        if self.is_p("*"):
            self.take()
            return Time("any")
        rel = False
        if self.is_p("+"):
            self.take()
            rel = True
        start = self.number("an event time (`0.100`, `+.1`, `*` or `a~b`)")
        end = None
        if self.is_p("~"):
            self.take()
            if rel:
                self.expect_p("+", "`+` after `~` in a relative time range")
            end = self.number("the end of the time range")
            if end < start:
                raise DrillSyntaxError(
                    f"{self.path}:{self.tok.line}: expected a time range start <= end, "
                    f"found {start}~{end}"
                )
        return Time("rel" if rel else "abs", start, end)

    def event(self) -> Event:
        line = self.tok.line
        time = self.event_time()
        t = self.tok
        if t.kind == "punct" and t.text in "<>":
            return Event(line, time, self.packet())
        if t.kind == "shell":
            self.take()
            return Event(line, time, Shell(t.text))
        if t.kind == "code":
            self.take()
            return Event(line, time, Code(t.text))
        if t.kind == "ellipsis" or (t.kind == "word" and self.peek().text == "("):
            return Event(line, time, self.syscall())
        raise self.fail("a packet (`<`, `>`), a system call, a `command` or a %{ }% block")

    # packets
    def packet(self) -> PacketSpec:
        direction = self.take().text
        line = self.tok.line
        ecn = None
        if self.is_word("udp", "icmp", "UDP", "ICMP"):
            raise Unsupported(f"{self.tok.text} packets are not supported", line)
        if self.is_word("ipv4", "ipv6", "gre", "mpls", "GRE", "MPLS"):
            raise Unsupported(f"{self.tok.text} encapsulation is not supported", line)
        if self.is_p("[") or self.is_p("("):
            close = "]" if self.take().text == "[" else ")"
            if not (self.tok.kind == "word" and self.tok.text.lower() in _ECN):
                if self.is_word("tos", "flowlabel", "ttl"):
                    raise Unsupported(f"the IP field `{self.tok.text}` is not supported", line)
                raise self.fail("an ECN mark (noecn, ect0, ect1, ect01, ce)")
            ecn = self.take().text.lower()
            self.expect_p(close)
        if self.tok.kind == "num" and self.peek().text == ">":
            raise Unsupported("explicit port numbers are not supported", line)
        flags = self.flags()
        start = self.expect_int("a sequence number (`1:1001(1000)`)")
        self.expect_p(":", "`:` in the sequence range")
        end = self.expect_int("the end of the sequence range")
        self.expect_p("(", "`(length)` after the sequence range")
        length = self.expect_int("the payload length")
        self.expect_p(")")
        if (end - start) % (1 << 32) != length % (1 << 32):
            raise DrillSyntaxError(
                f"{self.path}:{line}: expected a sequence range as long as its payload, "
                f"found {start}:{end}({length})"
            )
        spec = PacketSpec(direction, flags, start, end, length, ecn=ecn)
        while self.is_word("ack", "win", "urg"):
            w = self.take().text
            v = self.expect_int(f"a number after `{w}`")
            if w == "ack":
                spec.ack = v
            elif w == "win":
                spec.win = v
            else:
                raise Unsupported("urgent pointers are not supported", line)
        if self.is_p("<"):
            self.take()
            if self.tok.kind == "ellipsis":
                self.take()
                spec.options_any = True
            else:
                spec.options = self.tcp_options()
            self.expect_p(">", "`>` closing the option list or `,` before the next option")
        if direction == "<" and spec.win is None:
            raise DrillSyntaxError(f"{self.path}:{line}: expected `win N` on an inbound packet")
        return spec

    def flags(self) -> str:
        if self.is_p("."):
            self.take()
            return "A"
        if self.is_p("-"):
            self.take()
            return ""
        if self.tok.kind != "word" or not set(self.tok.text) <= _FLAG_LETTERS - {"A"}:
            raise self.fail("TCP flags (S, S., ., P., F., R, R., SEW, -)")
        letters = self.take().text
        if self.is_p("."):
            self.take()
            letters += "A"
        return letters

    def tcp_options(self) -> list[TcpOption]:
        opts = [self.tcp_option()]
        while self.is_p(","):
            self.take()
            opts.append(self.tcp_option())
        return opts

    def tcp_option(self) -> TcpOption:
        t = self.tok
        if t.kind != "word":
            raise self.fail("a TCP option (mss, sackOK, sack, TS, nop, eol, wscale)")
        w = self.take().text
        if w == "nop":
            return TcpOption("nop")
        if w == "eol":
            return TcpOption("eol")
        if w == "sackOK":
            return TcpOption("sackOK")
        if w == "mss":
            return TcpOption("mss", self.expect_int("the MSS after `mss`"))
        if w == "wscale":
            return TcpOption("wscale", self.expect_int("the shift after `wscale`"))
        if w == "sack":
            blocks = []
            while self.tok.kind == "num":
                a = self.expect_int("a SACK block start")
                self.expect_p(":", "`:` in the SACK block")
                blocks.append((a, self.expect_int("a SACK block end")))
            if not blocks:
                raise self.fail("SACK blocks (`sack 1001:2001`)")
            return TcpOption("sack", tuple(blocks))
        if w == "TS":
            if not self.is_word("val"):
                raise self.fail("`val` after `TS`")
            self.take()
            val = self.expect_int("the TS value")
            if not self.is_word("ecr"):
                raise self.fail("`ecr` after the TS value")
            self.take()
            return TcpOption("TS", (val, self.expect_int("the TS echo reply")))
        if w in ("FO", "FOEXP", "md5", "exp", "AccECN0", "AccECN1", "AccECN"):
            raise Unsupported(f"the TCP option `{w}` is not supported", t.line)
        raise self.fail("a TCP option (mss, sackOK, sack, TS, nop, eol, wscale)", t)

    # syscalls
    def syscall(self) -> Syscall:
        end_time = None
        if self.tok.kind == "ellipsis":
            self.take()
            end_time = self.number("the time a blocking call returns (`...0.1`)")
        if self.tok.kind != "word":
            raise self.fail("a system call name")
        name = self.take().text
        self.expect_p("(", f"`(` after {name}")
        args: list[Expr] = []
        if not self.is_p(")"):
            args.append(self.expr())
            while self.is_p(","):
                self.take()
                args.append(self.expr())
        self.expect_p(")", f"`,` or `)` in the arguments of {name}")
        self.expect_p("=", f"`= result` after {name}(...)")
        result = self.expr()
        errno = note = None
        if self.tok.kind == "word" and self.tok.text.startswith("E"):
            errno = self.take().text
        if self.is_p("("):
            # A free-text note such as (Operation now in progress): skip to the `)`.
            start = self.take().line
            words = []
            while not self.is_p(")"):
                if self.tok.kind == "end":
                    raise DrillSyntaxError(f"{self.path}:{start}: expected `)` closing the note")
                words.append(self.take().text)
            self.take()
            note = " ".join(words)
        return Syscall(name, args, result, errno, note, end_time)

    def expr(self) -> Expr:
        left = self.primary()
        while self.is_p("|"):
            self.take()
            left = Expr("or", (left, self.primary()))
        return left

    def primary(self) -> Expr:
        t = self.tok
        if t.kind == "ellipsis":
            self.take()
            return Expr("ellipsis")
        if t.kind == "num":
            self.take()
            return Expr("int", t.value)
        if self.is_p("-") and self.peek().kind == "num":
            self.take()
            return Expr("int", -self.take().value)  # type: ignore[operator]
        if t.kind == "str":
            self.take()
            if self.tok.kind == "ellipsis":
                self.take()
            return Expr("str", t.value)
        if t.kind == "word":
            self.take()
            if self.is_p("("):
                self.take()
                args = []
                if not self.is_p(")"):
                    args.append(self.expr())
                    while self.is_p(","):
                        self.take()
                        args.append(self.expr())
                self.expect_p(")", f"`)` closing {t.text}(...)")
                if self.is_p("="):
                    self.take()
                    return Expr("assign", (t.text, self.expr()))
                return Expr("call", (t.text, args))
            if self.is_p("="):
                self.take()
                return Expr("assign", (t.text, self.expr()))
            return Expr("word", t.text)
        if self.is_p("[") or self.is_p("{"):
            close = "]" if self.take().text == "[" else "}"
            items = []
            if not self.is_p(close):
                items.append(self.expr())
                while self.is_p(","):
                    self.take()
                    items.append(self.expr())
            self.expect_p(close, f"`,` or `{close}`")
            return Expr("list" if close == "]" else "struct", items)
        raise self.fail('an argument (number, NAME, "string", ..., [..], {..})')


def parse(text: str, path: str = "<script>") -> Script:
    """Parse a script's text. Raises DrillSyntaxError or Unsupported."""
    return _Parser(text, path).script()


def parse_file(path: str | Path) -> Script:
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise DrillSyntaxError(f"{p}: expected a readable packetdrill script ({e})") from None
    return parse(text, str(p))
