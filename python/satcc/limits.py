"""Limits on what satcc reads and runs, checked before any work starts (docs/reliability.md).

Every input a user names goes through here first:

    read_text(path, what)     a regular file (no device, FIFO, directory), at most a size cap,
                              UTF-8 (a BOM is accepted) -> text; errors never quote the file
    toml_loads(text, source)  TOML with nesting and dotted-key depth checked before tomllib
    json_loads(text, source)  JSON whose nesting cannot overflow the interpreter's stack
    check_out_dir(path)       an output directory that can exist: no regular file on its way,
                              no path component longer than the filesystem allows
    check_name(name)          a name (scenario, flow, campaign) of at most MAX_NAME_CHARS
    printable(text)           control characters (ANSI escapes) shown as \\x1b, never sent raw
    json_printable(text)      JSON text with the ones JSON leaves raw (C1, bidi) as \\uNNNN

Hard limits (above them satcc refuses) guard the interpreter and the simulator's integer
arithmetic; soft limits (`--force` goes past them) guard the machine: memory and run time.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

from satcc.errors import UserError

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    import re
    from typing import Any

MAX_SCENARIO_BYTES = 1 << 20  # a scenario or campaign file: 1 MiB is ~10,000 flows written out
MAX_TRACE_BYTES = 256 << 20  # a Mahimahi trace, delay CSV or TLE file
MAX_TOML_DEPTH = 32  # nested arrays/inline tables ([[[...]]]); satcc's schema needs 4
MAX_KEY_PARTS = 32  # parts of one dotted key (a.b.c = 1); satcc's schema needs 3
MAX_JSON_DEPTH = 64  # nesting of a JSON document satcc reads (campaign.json, summary.json)
MAX_NAME_CHARS = 200  # a scenario, flow or campaign name
NAME_MAX_BYTES = 255  # one path component (Linux NAME_MAX)


class LimitError(UserError):
    """An input beyond one of the limits above; exit status 2."""


# -- files -------------------------------------------------------------------------------------


def check_file(path: str | Path, what: str, max_bytes: int) -> None:
    """What `read_bytes` checks before reading (a regular file of at most `max_bytes`, opened
    without blocking), for a file another reader then reads (a Mahimahi trace: Rust)."""
    os.close(_open_checked(Path(path), what, max_bytes))


def read_bytes(path: str | Path, what: str, max_bytes: int) -> bytes:
    """The contents of a regular file of at most `max_bytes`, checked before it is read."""
    p = Path(path)
    fd = _open_checked(p, what, max_bytes)
    try:
        chunks = []
        left = max_bytes + 1
        while left > 0:  # the file may grow while we read it: never past the cap
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise LimitError(
                f"{p}: expected {what} of at most {_size(max_bytes)}, found more "
                "(the file grew while being read)"
            )
        return data
    except OSError as e:
        raise UserError(f"{p}: expected {what}, found an unreadable file ({e.strerror})") from None
    finally:
        os.close(fd)


def _open_checked(p: Path, what: str, max_bytes: int) -> int:
    """A descriptor of `p` once it is known to be a regular file of at most `max_bytes`."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise UserError(f"{p}: expected {what}, found no such file") from None
    except IsADirectoryError:
        raise UserError(f"{p}: expected {what}, found a directory") from None
    except PermissionError:
        raise UserError(f"{p}: expected {what}, found a file satcc may not read") from None
    except OSError as e:
        raise UserError(f"{p}: expected {what}, found an unreadable path ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise UserError(f"{p}: expected {what}, found a directory")
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"{p}: expected {what} (a regular file), found {_kind(st.st_mode)}")
        if st.st_size > max_bytes:
            raise LimitError(
                f"{p}: expected {what} of at most {_size(max_bytes)}, found {_size(st.st_size)}"
            )
        return fd
    except OSError as e:
        os.close(fd)
        raise UserError(f"{p}: expected {what}, found an unreadable file ({e.strerror})") from None
    except BaseException:
        os.close(fd)
        raise


def read_text(path: str | Path, what: str, max_bytes: int = MAX_SCENARIO_BYTES) -> str:
    """`read_bytes` decoded as UTF-8 (a leading BOM is dropped); a bad byte is named by its
    offset, never quoted."""
    data = read_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise UserError(
            f"{path}: expected {what} in UTF-8, found a byte that is not UTF-8 "
            f"(line {line}, offset {e.start})"
        ) from None


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


# -- documents ---------------------------------------------------------------------------------


def toml_depth_issue(text: str) -> str | None:
    """Why `text` is too deep for tomllib (nesting or dotted keys), or None. A lexical pass:
    brackets and dots inside strings and comments do not count."""
    depth = 0
    parts = 1
    line = 1
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            parts = 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n:
                if c == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(quote, j):
                    break
                if len(quote) == 1 and text[j] == "\n":
                    break
                j += 1
            line += text.count("\n", i, j)
            i = j + len(quote)
            continue
        elif c in "[{":
            depth += 1
            parts = 1
            if depth > MAX_TOML_DEPTH:
                return f"line {line}: expected at most {MAX_TOML_DEPTH} nested arrays or tables, found more"
        elif c in "]}":
            depth = max(depth - 1, 0)
        elif c in "=,":
            parts = 1
        elif c == ".":
            parts += 1
            if parts > MAX_KEY_PARTS:
                return f"line {line}: expected a dotted key of at most {MAX_KEY_PARTS} parts, found more"
        i += 1
    return None


def toml_loads(text: str, source: str) -> dict[str, Any]:
    """tomllib.loads with the depth limits checked first; raises UserError naming `source`."""
    import tomllib

    why = toml_depth_issue(text)
    if why is not None:
        raise LimitError(f"{source}: {why}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{source}: invalid TOML: {e}") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise LimitError(
            f"{source}: expected at most {MAX_TOML_DEPTH} nested tables, found more"
        ) from None


def value_depth_issue(value: Any, limit: int = MAX_TOML_DEPTH) -> str | None:
    """Why a Python value (a `--set` value, a dict handed to `satcc.run`, a campaign matrix)
    nests deeper than `limit` lists and dicts, or None. Iterative, so a value of any depth (or
    one that contains itself) is measured without recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        if depth + 1 > limit:
            return f"expected at most {limit} nested arrays or tables, found more"
        stack.extend((child, depth + 1) for child in children)
    return None


def key_path_issue(path: str) -> str | None:
    """Why a key path (`--set KEY.PATH`, an override, a matrix key) is too long, or None."""
    parts = path.count(".") + 1
    if parts > MAX_KEY_PARTS:
        return f"expected a key path of at most {MAX_KEY_PARTS} parts, found {parts}"
    return None


def not_utf8_issue(text: str) -> str | None:
    """Why a command-line string is not text: bytes that are not UTF-8 reach Python as lone
    surrogates (PEP 383); named by offset, never quoted."""
    for i, c in enumerate(text):
        if "\ud800" <= c <= "\udfff":
            return f"expected UTF-8 text, found a byte that is not UTF-8 (at character {i})"
    return None


# a JSON string (escapes inside it skipped), or one left open to the end of the text; and any
# character that is not a bracket: compiled at json_depth's first call, not at import (a
# command that reads no JSON, `satcc sim`, compiles no regular expression here)
@functools.cache
def _json_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    import re

    return re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?\Z)'), re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """Bracket nesting of a JSON text (strings skipped). The strings and everything but the
    brackets are dropped by the regular expression engine first, so the loop visits the
    brackets alone: a campaign.json of 3,660 runs (0.63 MB) 25 ms, 52 ms a character at a
    time (json.loads: 9.5 ms); the same depth for any text, valid JSON or not
    (tests/test_hostile_limits.py)."""
    string, not_bracket = _json_patterns()
    depth = deepest = 0
    for c in not_bracket.sub("", string.sub("", text)):
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def json_loads(text: str, source: str) -> Any:
    """json.loads that refuses documents nested deeper than MAX_JSON_DEPTH (ValueError)."""
    import json

    if json_depth(text) > MAX_JSON_DEPTH:
        raise ValueError(f"expected JSON nested at most {MAX_JSON_DEPTH} deep, found more")
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(
            f"expected JSON nested at most {MAX_JSON_DEPTH} deep, found more"
        ) from None


# -- outputs and names -------------------------------------------------------------------------


def check_out_dir(path: str | Path, flag: str = "--out") -> Path:
    """An output directory satcc can create: raises UserError before any work if a component
    is too long or something on the way is not a directory."""
    p = Path(path)
    for part in p.parts:
        if len(os.fsencode(part)) > NAME_MAX_BYTES:
            raise LimitError(
                f"{flag} {_short(str(p))}: expected path components of at most "
                f"{NAME_MAX_BYTES} bytes, found one of {len(os.fsencode(part))}"
            )
    for q in (p, *p.parents):
        try:
            st = q.stat()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as e:
            raise UserError(f"{flag} {_short(str(p))}: cannot use {q} ({e.strerror})") from None
        if not stat.S_ISDIR(st.st_mode):
            what = "a regular file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode)
            where = "" if q == p else f" on the way ({q})"
            raise UserError(f"{flag} {_short(str(p))}: expected a directory, found {what}{where}")
        break
    return p


def check_name(name: str) -> str | None:
    """Why a name is unusable, or None."""
    if len(name) > MAX_NAME_CHARS:
        return f"expected a name of at most {MAX_NAME_CHARS} characters, found {len(name)}"
    return None


# The characters `printable` escapes: C0 but newline and tab, DEL and C1, the line and
# paragraph separators, the bidi embeddings and overrides (U+202A-E) and isolates (U+2066-9).
# Escaped through str.translate tables: a regular expression compiled at import cost every
# command ~2.8 M instructions (BENCHMARKS.md, issue 40).
CONTROL_CHARACTERS = (
    *range(0x09),  # 0x00-0x08
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)
_ESCAPES = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in CONTROL_CHARACTERS}
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in CONTROL_CHARACTERS}


def printable(text: str) -> str:
    """`text` safe for a terminal: control characters (ESC, CR, bidi overrides) escaped as
    \\xNN / \\uNNNN; newlines and tabs kept."""
    return text.translate(_ESCAPES)


def json_printable(text: str) -> str:
    """JSON text (`json.dumps(..., ensure_ascii=False)`) safe for a terminal, a log or a pager:
    the control characters JSON leaves raw (DEL, C1 such as the one-byte CSI, bidi overrides,
    line separators) written as JSON's `\\uNNNN` escapes, so a reader gets the text back whole.
    They can only stand inside strings: JSON's own syntax is ASCII."""
    return text.translate(_JSON_ESCAPES)


class PrintableStream:
    """A text stream whose writes go through `printable`: what `satcc` puts on a terminal's
    standard output cannot carry a control sequence from an input file (a host name in iperf3
    JSON, a flow name in a capture's metadata), whichever command printed it. `raw` is the
    stream underneath, for output that draws its own colours (rich)."""

    def __init__(self, raw: Any):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(printable(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, buffer ...
        return getattr(self.raw, name)


def _short(text: str, keep: int = 80) -> str:
    return text if len(text) <= keep else text[: keep - 1] + "…"


# -- memory ------------------------------------------------------------------------------------


def available_memory_bytes() -> int | None:
    """Memory this process may still use: the smallest of MemAvailable, the cgroup's free
    budget and the address-space rlimit's free part (None when none is known)."""
    import resource

    candidates = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                candidates.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (("memory.max", "memory.current"),):
        try:
            cg = Path("/proc/self/cgroup").read_text().strip().split("\n")[0].split("::", 1)[1]
            base = Path("/sys/fs/cgroup") / cg.lstrip("/")
            limit = (base / limit_file).read_text().strip()
            if limit != "max":
                candidates.append(int(limit) - int((base / usage_file).read_text()))
        except (OSError, ValueError, IndexError):
            pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        try:
            vm = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            candidates.append(soft - vm)
        except (OSError, ValueError):
            candidates.append(soft)
    return max(min(candidates), 0) if candidates else None
