"""Small campaigns and comparisons shared by the campaign, store and report tests."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Two flows of two [[flow]] groups over a shared bottleneck; short so each run is ~0.1 s.
BASE_SCENARIO = """
[scenario]
name = "tiny-dumbbell"
duration = "2 s"
seed = 1

[[link]]
a = "s1"
b = "r"
rate = "100 Mbit/s"
delay = "1 ms"

[[link]]
a = "s2"
b = "r"
rate = "100 Mbit/s"
delay = "5 ms"

[[link]]
a = "r"
b = "d"
rate = "10 Mbit/s"
delay = "5 ms"
queue = "50 pkt"

[[flow]]
name = "short"
from = "s1"
to = "d"
cca = "reno"

[[flow]]
name = "long"
from = "s2"
to = "d"
cca = "reno"
"""

SMALL_CAMPAIGN = """
[campaign]
name = "small"
scenario = "base.toml"
repetitions = 2

[matrix]
"flow.*.cca" = ["reno", "cubic"]
"link[1].delay" = ["5 ms", "20 ms"]
"""


def write_campaign(
    tmp: Path,
    campaign: str = SMALL_CAMPAIGN,
    base: str = BASE_SCENARIO,
    name: str = "campaign.toml",
) -> Path:
    (tmp / "base.toml").write_text(textwrap.dedent(base), encoding="utf-8")
    path = tmp / name
    path.write_text(textwrap.dedent(campaign), encoding="utf-8")
    return path


def tree_hashes(d: Path, sub: str = "runs") -> dict[str, str]:
    """sha256 of every file under d/sub, by relative path."""
    out = {}
    base = d / sub
    for p in sorted(base.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(d))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


STORE_QUERIES = (
    "SELECT * FROM runs ORDER BY run_id",
    "SELECT * FROM flows ORDER BY run_id, id",
    "SELECT * FROM flow_series ORDER BY run_id, flow_id, t_s",
    "SELECT * FROM link_series ORDER BY run_id, link_id, dir, t_s",
)


def store_frames(d: Path) -> list:
    from satcc.store import open_store

    with open_store(d) as s:
        return [s.query(q) for q in STORE_QUERIES]


@contextmanager
def holding_lock(out: Path, seconds: int = 120) -> Iterator[subprocess.Popen]:
    """Another process holding DIR/campaign.lock (satcc.store.layout.locked) while the block
    runs; it is killed at the end, which releases the lock."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time\nfrom pathlib import Path\nfrom satcc.store import layout\n"
                f"with layout.locked(Path({str(out)!r})):\n    print('held', flush=True)\n"
                f"    time.sleep({seconds})\n"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.communicate()
