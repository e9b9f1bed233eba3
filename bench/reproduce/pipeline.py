"""Where `satcc reproduce` spends its time, whole: one invocation run as a user runs it, with
`--json --timings`, and its process tree's CPU (getrusage of the children: this script's child
and every process it started, pool workers and the judging process included) beside what
`--timings` recorded. `--timings` starts after the command's own imports, so the honest share
outside the simulation is 1 - (the runs' CPU / the tree's CPU), printed here with the table's.

    .venv/bin/python bench/reproduce/pipeline.py OUT [--compare REF.json] [-- ARGS...]
        # default ARGS: all --quick --jobs 2

Writes OUT.json (the claims documents) and OUT.err (the table, the log). `--compare REF.json`
checks that every study's claims document is the same as REF.json's apart from what a rerun
changes (`run`: when and how long; `figures`, `report`: drawn or not; the output root in
paths): the verdicts, values, per-seed values and texts. CPU seconds hold on a loaded
machine (inflated by contention, not by the load's size alone); wall seconds do not: the
1-minute load average before and after is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SATCC = str(Path(sys.executable).parent / "satcc")
RERUN_KEYS = ("run", "figures", "report")  # what a rerun changes by design


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """The document without what a rerun changes, its output root (OUT/<study>/report.html's
    OUT) written as ROOT."""
    root = str(Path(doc["report"]).parent.parent)
    kept = {k: v for k, v in doc.items() if k not in RERUN_KEYS}
    return json.loads(json.dumps(kept).replace(root, "ROOT"))


def compare(docs: list[dict[str, Any]], ref: list[dict[str, Any]]) -> list[str]:
    """The studies whose claims documents differ from the reference's (empty: the same)."""
    theirs = {d["study"]: comparable(d) for d in ref}
    return [d["study"] for d in docs if comparable(d) != theirs.get(d["study"])]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="output root (a new directory)")
    p.add_argument("--compare", type=Path, help="a reference --json output of the same design")
    p.add_argument("args", nargs="*", default=["all", "--quick", "--jobs", "2"])
    a = p.parse_args()
    cmd = [SATCC, "reproduce", *a.args, "--json", "--timings", "--out", str(a.out)]
    load0, t0 = os.getloadavg()[0], time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with (
        open(f"{a.out}.json", "w", encoding="utf-8") as out,
        open(f"{a.out}.err", "w", encoding="utf-8") as err,
    ):
        code = subprocess.run(cmd, stdout=out, stderr=err, check=False).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, load1 = time.monotonic() - t0, os.getloadavg()[0]
    tree = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = Path(f"{a.out}.err").read_text(encoding="utf-8")
    if code != 0:
        print(text[-2000:], file=sys.stderr)
        return code
    recorded = float(re.search(r"wall, ([\d.]+) CPU s", text).group(1))
    runs = float(re.search(r"runs: \d+, ([\d.]+) CPU s", text).group(1))
    table = re.search(r"outside the simulation: .*", text).group(0)
    print(f"{' '.join(cmd[1:])}")
    print(
        f"wall {wall:.1f} s (load {load0:.1f} -> {load1:.1f}); the tree's CPU {tree:.1f} s "
        f"(--timings recorded {recorded:.1f}; before it started: {tree - recorded:.1f}); the runs "
        f"{runs:.1f} CPU s; outside them {tree - runs:.1f} CPU s = {100 * (1 - runs / tree):.1f} %"
    )
    print(f"--timings: {table}")
    if a.compare is not None:
        docs = json.loads(Path(f"{a.out}.json").read_text(encoding="utf-8"))
        docs = docs if isinstance(docs, list) else [docs]
        ref = json.loads(a.compare.read_text(encoding="utf-8"))
        differ = compare(docs, ref if isinstance(ref, list) else [ref])
        print(
            f"claims documents against {a.compare}: "
            + (f"differ for {', '.join(differ)}" if differ else "the same for every study")
        )
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
