"""Collecting scripts, running them on the engines, and the three outputs (table, JSON
lines, JUnit XML).

A directory may hold `known.toml`, the deviations of its scripts already named (in
docs/drill.md): a table per script stem with `engine` ("sim", "kernel" or "both") and
`reason`. A listed script that fails on that engine is `known` (the exit status stays 0);
every other failure is `fail`."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from satcc.drill.parser import DrillSyntaxError, Unsupported, parse_file
from satcc.drill.runner import Result

ENGINES = ("sim", "kernel")
EMU_LOCK = "/tmp/satcc-emu.lock"
KNOWN_FILE = "known.toml"
VERDICTS = ("pass", "fail", "known", "unsupported", "error")


@dataclass
class Row:
    script: str
    engine: str
    verdict: str  # pass, fail, known (a listed deviation's failure), unsupported, error
    line: int
    reason: str
    printed: list[str] = field(default_factory=list)  # print() output, shell messages
    known: str = ""  # the listed deviation's reason (known.toml), when the script has one

    def as_json(self) -> dict:
        return {
            "script": self.script,
            "engine": self.engine,
            "verdict": self.verdict,
            "line": self.line,
            "reason": self.reason,
            "printed": self.printed,
            "known": self.known,
        }


def collect(paths: list[str]) -> list[Path]:
    """Scripts named, and every *.pkt under the directories named, in sorted order."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(sorted(path.rglob("*.pkt")))
        elif path.is_file():
            out.append(path)
        else:
            raise FileNotFoundError(p)
    return out


def run_one(path: Path, engine: str) -> Row:
    name = str(path)
    known = known_deviations(path.parent).get(path.stem, {})
    because = known.get("reason", "") if known.get("engine") in (engine, "both") else ""
    try:
        script = parse_file(path)
    except DrillSyntaxError as e:
        return Row(name, engine, "error", _line_of(str(e)), str(e), known=because)
    except Unsupported as u:
        return Row(name, engine, "unsupported", u.line, u.reason, known=because)
    r: Result
    if engine == "sim":
        from satcc.drill.sim import run_sim

        r = run_sim(script)
    else:
        from satcc.drill.kernel import run_kernel

        r = run_kernel(script)
    verdict = "known" if r.verdict == "fail" and because else r.verdict
    return Row(name, engine, verdict, r.line, r.reason, list(r.printed), because)


_KNOWN_CACHE: dict[Path, dict[str, dict[str, str]]] = {}


def known_deviations(directory: Path) -> dict[str, dict[str, str]]:
    """The directory's known.toml: {script stem: {"engine", "reason"}} (empty without one).
    A malformed file is a UserError naming the file, the key and what was expected."""
    directory = directory.resolve()
    if directory in _KNOWN_CACHE:
        return _KNOWN_CACHE[directory]
    path = directory / KNOWN_FILE
    out: dict[str, dict[str, str]] = {}
    if path.is_file():
        from satcc.errors import UserError

        try:
            doc = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise UserError(f"{path}: expected TOML ({e})") from None
        for stem, entry in doc.items():
            if not isinstance(entry, dict):
                raise UserError(f"{path}: {stem}: expected a table with engine and reason")
            engine = entry.get("engine")
            if engine not in ("sim", "kernel", "both"):
                raise UserError(f'{path}: {stem}.engine: expected "sim", "kernel" or "both"')
            reason = entry.get("reason")
            if not isinstance(reason, str) or not reason:
                raise UserError(f"{path}: {stem}.reason: expected the deviation's reason")
            extra = sorted(set(entry) - {"engine", "reason"})
            if extra:
                raise UserError(f"{path}: {stem}.{extra[0]}: expected only engine and reason")
            if not (directory / f"{stem}.pkt").is_file():
                raise UserError(f"{path}: {stem}: expected a script {stem}.pkt beside it")
            out[stem] = {"engine": engine, "reason": reason}
    _KNOWN_CACHE[directory] = out
    return out


def _line_of(msg: str) -> int:
    parts = msg.split(":")
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else 0


def lock_holders(path: str) -> list[str]:
    """Who holds a flock on `path`: "pid N (command line)" per /proc/locks entry."""
    try:
        st = os.stat(path)
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == dev:
            pid = parts[4]
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                cmd = "?"
            out.append(f"pid {pid} ({cmd[:120]})")
    return out


def _already_open(path: str) -> bool:
    """This process has the lock file open already (started under `flock FILE ...`)."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == path:
                return True
        except OSError:
            continue
    return False


def take_emu_lock(say=None, path: str = EMU_LOCK) -> int | None:
    """Hold /tmp/satcc-emu.lock (every real-kernel run on this machine takes it). When
    another process has it, say so and who, then wait; say when it came and how long
    it took. Returns the lock's fd (None when this process inherited it)."""
    say = say or (lambda msg: print(msg, file=sys.stderr, flush=True))
    if _already_open(path):
        return None
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        pass
    holders = lock_holders(path) or ["a process /proc/locks does not name"]
    say(f"satcc drill: waiting for {path}, held by {', '.join(holders)}")
    t0 = time.monotonic()
    fcntl.flock(fd, fcntl.LOCK_EX)
    say(f"satcc drill: got {path} after {time.monotonic() - t0:.1f} s")
    return fd


def run_all(paths: list[Path], engines: list[str], on_row=None) -> list[Row]:
    rows: list[Row] = []
    lock_fd = None
    try:
        if "kernel" in engines and os.geteuid() == 0:
            lock_fd = take_emu_lock()
        for p in paths:
            for eng in engines:
                row = run_one(p, eng)
                rows.append(row)
                if on_row is not None:
                    on_row(row)
    finally:
        if lock_fd is not None:
            os.close(lock_fd)
    return rows


def counts(rows: list[Row]) -> dict[str, dict[str, int]]:
    c: dict[str, dict[str, int]] = {}
    for r in rows:
        d = c.setdefault(r.engine, dict.fromkeys(VERDICTS, 0))
        d[r.verdict] = d.get(r.verdict, 0) + 1
    return c


def table(rows: list[Row]) -> str:
    """One line per script and engine, the lines it printed (print(), the shell's
    messages) indented under it, and the counts per engine."""
    lines = [f"{'script':<60} {'engine':<7} verdict      detail"]
    for r in rows:
        detail = "" if r.verdict == "pass" else (f"line {r.line}: " if r.line else "") + r.reason
        lines.append(f"{r.script:<60} {r.engine:<7} {r.verdict:<12} {detail}".rstrip())
        if r.verdict == "known":
            lines.append(f"    known deviation: {r.known}")
        elif r.known and r.verdict == "pass":
            lines.append(f"    listed in {KNOWN_FILE} but passes: {r.known}")
        lines.extend(f"    | {x}" for x in r.printed)
    for eng, d in counts(rows).items():
        lines.append(
            f"{eng}: {d['pass']} pass, {d['fail']} fail, {d['unsupported']} unsupported"
            + (f", {d['known']} known" if d["known"] else "")
            + (f", {d['error']} error" if d["error"] else "")
        )
    return "\n".join(lines)


def json_lines(rows: list[Row]) -> str:
    return "\n".join(json.dumps(r.as_json(), sort_keys=False) for r in rows)


def junit(rows: list[Row]) -> str:
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>"]
    for eng in dict.fromkeys(r.engine for r in rows):
        rs = [r for r in rows if r.engine == eng]
        c = counts(rs)[eng]
        out.append(
            f'  <testsuite name="drill-{eng}" tests="{len(rs)}" failures="{c["fail"]}" '
            f'errors="{c["error"]}" skipped="{c["unsupported"] + c["known"]}">'
        )
        for r in rs:
            out.append(
                f"    <testcase classname={quoteattr('drill.' + eng)} name={quoteattr(r.script)}>"
            )
            msg = quoteattr(f"line {r.line}: {r.reason}" if r.line else r.reason)
            if r.verdict == "fail":
                out.append(f"      <failure message={msg}/>")
            elif r.verdict == "known":
                known = quoteattr(f"known deviation: {r.known} ({r.reason})")
                out.append(f"      <skipped message={known}/>")
            elif r.verdict == "error":
                out.append(f"      <error message={msg}/>")
            elif r.verdict == "unsupported":
                out.append(f"      <skipped message={msg}/>")
            if r.printed:
                out.append(f"      <system-out>{escape(chr(10).join(r.printed))}</system-out>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


__all__ = ["ENGINES", "Row", "collect", "json_lines", "junit", "run_all", "table"]
