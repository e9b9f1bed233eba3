"""Collecting scripts, running them on the engines, and the three outputs (table, JSON
lines, JUnit XML)."""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from satcc.drill.parser import DrillSyntaxError, Unsupported, parse_file
from satcc.drill.runner import Result

ENGINES = ("sim", "kernel")
EMU_LOCK = "/tmp/satcc-emu.lock"


@dataclass
class Row:
    script: str
    engine: str
    verdict: str  # pass, fail, unsupported, error
    line: int
    reason: str

    def as_json(self) -> dict:
        return {
            "script": self.script,
            "engine": self.engine,
            "verdict": self.verdict,
            "line": self.line,
            "reason": self.reason,
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
    try:
        script = parse_file(path)
    except DrillSyntaxError as e:
        return Row(name, engine, "error", _line_of(str(e)), str(e))
    except Unsupported as u:
        return Row(name, engine, "unsupported", u.line, u.reason)
    r: Result
    if engine == "sim":
        from satcc.drill.sim import run_sim

        r = run_sim(script)
    else:
        from satcc.drill.kernel import run_kernel

        r = run_kernel(script)
    return Row(name, engine, r.verdict, r.line, r.reason)


def _line_of(msg: str) -> int:
    parts = msg.split(":")
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else 0


def run_all(paths: list[Path], engines: list[str], on_row=None) -> list[Row]:
    rows: list[Row] = []
    lock_fd = None
    try:
        if "kernel" in engines and os.geteuid() == 0:
            lock_fd = os.open(EMU_LOCK, os.O_CREAT | os.O_RDWR, 0o644)
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
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
        d = c.setdefault(r.engine, {"pass": 0, "fail": 0, "unsupported": 0, "error": 0})
        d[r.verdict] = d.get(r.verdict, 0) + 1
    return c


def table(rows: list[Row]) -> str:
    lines = [f"{'script':<60} {'engine':<7} verdict      detail"]
    for r in rows:
        detail = "" if r.verdict == "pass" else (f"line {r.line}: " if r.line else "") + r.reason
        lines.append(f"{r.script:<60} {r.engine:<7} {r.verdict:<12} {detail}")
    for eng, d in counts(rows).items():
        lines.append(
            f"{eng}: {d['pass']} pass, {d['fail']} fail, {d['unsupported']} unsupported"
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
            f'errors="{c["error"]}" skipped="{c["unsupported"]}">'
        )
        for r in rs:
            out.append(
                f"    <testcase classname={quoteattr('drill.' + eng)} name={quoteattr(r.script)}>"
            )
            msg = quoteattr(f"line {r.line}: {r.reason}" if r.line else r.reason)
            if r.verdict == "fail":
                out.append(f"      <failure message={msg}/>")
            elif r.verdict == "error":
                out.append(f"      <error message={msg}/>")
            elif r.verdict == "unsupported":
                out.append(f"      <skipped message={msg}/>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


__all__ = ["ENGINES", "Row", "collect", "json_lines", "junit", "run_all", "table"]
