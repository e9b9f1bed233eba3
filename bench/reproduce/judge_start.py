"""The CPU of `satcc reproduce all`'s judging process's start-up: spawned (as before) or forked
(`satcc.studies.reproduce._judging_pool`, as now), the child's CPU (RUSAGE_CHILDREN after it
is reaped) from its start to having imported what judging a study needs.

    .venv/bin/python bench/reproduce/judge_start.py spawn|fork
"""

import argparse
import resource
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context


def warm() -> int:
    import importlib

    for m in (
        "satcc.studies.reproduce",
        *(f"satcc.studies.study00{i}" for i in range(5)),
        "duckdb",
        "jinja2",
        "satcc.store.catalog",
    ):
        importlib.import_module(m)
    return 0


def kids() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


if __name__ == "__main__":
    from satcc.campaign.worker import init_pool_worker
    from satcc.studies import reproduce

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("spawn", "fork"))
    mode = ap.parse_args().mode
    k0 = kids()
    if mode == "spawn":
        pool = ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=init_pool_worker)
    else:
        pool = reproduce._judging_pool(list(reproduce.STUDIES))
    pool.submit(warm).result()
    pool.shutdown(wait=True)
    print(mode, f"child CPU {kids() - k0:.2f} s")
