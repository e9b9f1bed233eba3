"""`satcc field`: the studies' measurement loop on the user's own path.

    plan.py      the plan (TOML `[field]` table or flags), its expansion into runs and order
    clock.py     Starlink's 15 s reconfiguration clock on the wall clock; clock-sync check
    hostinfo.py  host metadata per run (kernel, CCAs, sysctls, route, MTU, qdisc, offloads)
    measure.py   one run: idle ping, tcpdump, iperf3 with a ping alongside -> RunResult "field"
    loop.py      rounds, retries, resume, progress lines, into a campaign store
    compare.py   measured runs beside the simulator's prediction (`satcc report --scenario`)
    plans/       study plans (000, 001, 003) to run against the user's server

docs/field.md is the user's guide.
"""

from __future__ import annotations

from pathlib import Path

PLANS_DIR = Path(__file__).parent / "plans"


def shipped_plans() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PLANS_DIR.glob("*.toml"))}
