"""When a `satcc reproduce` invocation's processes work and when they wait, sampled from outside:
every INTERVAL s (0.05), each descendant process of ROOT (its pool workers, the judging process)
with its scheduler state (/proc/PID/stat: R running or runnable, S/D waiting) and its CPU
ticks, until ROOT ends or SIGTERM; written to OUT as JSON. A separate process, so that
sampling takes no CPU from the invocation's own process (its writer); run at nice 19.

    python bench/reproduce/busy.py ROOT_PID OUT.json [--interval 0.02]

`runcost.py --busy` starts it beside the invocation and prints, per pool worker, its idle
time (sampled waiting for work: state S) at the start, between runs and at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from pathlib import Path


def children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def stat(pid: int) -> tuple[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[11]) + int(fields[12])  # state, utime + stime (ticks)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", type=int)
    p.add_argument("out", type=Path)
    p.add_argument("--interval", type=float, default=0.05)
    a = p.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    samples: dict[int, list[tuple[float, str, int]]] = {}
    cmdlines: dict[int, str] = {}
    while not stop and os.path.exists(f"/proc/{a.root}"):
        now = time.monotonic()
        todo, seen = [a.root], []
        while todo:
            pid = todo.pop()
            seen.append(pid)
            todo += children(pid)
        for pid in seen:
            st = stat(pid)
            if st is None:
                continue
            if pid not in cmdlines:
                try:
                    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
                    cmdlines[pid] = raw.replace(b"\0", b" ").decode(errors="replace")[:200]
                except OSError:
                    cmdlines[pid] = "?"
            samples.setdefault(pid, []).append((now, st[0], st[1]))
        time.sleep(a.interval)
    a.out.write_text(
        json.dumps(
            {
                "root": a.root,
                "tck": os.sysconf("SC_CLK_TCK"),
                "cmdlines": cmdlines,
                "samples": samples,
            }
        ),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
