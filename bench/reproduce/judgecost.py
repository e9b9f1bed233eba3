"""The CPU of what the judging process does with a `satcc reproduce` output root's runs, measured
alone in this process: opening the stores, or one study's measures.

    PYTHONPATH=<code> .venv/bin/python bench/reproduce/judgecost.py stores ROOT     # CPU s
    PYTHONPATH=<code> .venv/bin/python bench/reproduce/judgecost.py hash ROOT       # sha256
    PYTHONPATH=<code> .venv/bin/python bench/reproduce/judgecost.py judge ROOT STUDY

The campaign directories of ROOT (ROOT/<study>/<engine>/<campaign>/) are copied to a temporary
directory first, without their saved catalog.duckdb, as the judging process of a fresh run finds
them; ROOT is not written. `stores`: `open_store(d, save=False)` of each, after one opening
to warm up, the process's CPU (getrusage: DuckDB's threads included). `hash`: one sha256 of
every catalog's tables and views (rows sorted, columns, dtypes), each view's SQL and its file
table: two codes' catalogs are the same when their hashes are. `judge`: the study's
`measure` (and `sensitivity`) inside `common.reading()`, the stores opened as the judging
process opens them. Interleave the codes' runs (a fresh process each) on a loaded machine.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib
import resource
import shutil
import sys
import tempfile
from pathlib import Path

VIEWS = ("runs", "flows", "flow_series", "link_series", "pings", "seqack", "cc_series")
TABLES = (*VIEWS, "catalog_info", "problems")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def copy_campaigns(root: Path, into: Path, study: str = "*") -> list[Path]:
    out = []
    for d in sorted(glob.glob(str(root / study / "*" / "*" / "campaign.json"))):
        src = Path(d).parent
        dst = into / src.parent.parent.name / src.name
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("catalog.duckdb*"))
        out.append(dst)
    return out


def catalog_hash(dirs: list[Path], tmp: str) -> str:
    """The catalogs' tables and views, with the copies' temporary directory written TMP."""
    import duckdb

    from satcc.store import catalog

    h = hashlib.sha256()

    def put(text: str) -> None:
        h.update(text.replace(tmp, "TMP").encode())

    for d in dirs:
        with catalog.open_store(d, save=False) as s:
            for t in TABLES:
                df = s.con.execute(f"SELECT * FROM {t}").df()
                put(f"{t} {list(df.columns)} {[str(x) for x in df.dtypes]}")
                df = df.astype(str)
                put(df.sort_values(list(df.columns)).to_csv(index=False))
            for v in VIEWS[1:]:
                sql = f"SELECT sql FROM duckdb_views() WHERE view_name = '{v}'"
                put(repr(s.con.execute(sql).fetchall()))
                try:
                    rows = s.con.execute(f"SELECT * FROM _files_{v} ORDER BY run_id").fetchall()
                except duckdb.Error as e:  # a view over no files has no file table
                    rows = type(e).__name__
                put(repr(rows))
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("mode", choices=("stores", "hash", "judge"))
    ap.add_argument("root", type=Path, help="a `satcc reproduce` output root")
    ap.add_argument("study", nargs="?", help="with judge: the study (000-004)")
    args = ap.parse_args()
    mode, root = args.mode, args.root
    if mode == "judge" and not args.study:
        ap.error("judge needs STUDY")
    import duckdb  # noqa: F401 - imported before the clock starts, as in the judging process
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="judgecost-") as tmp:
        if mode in ("stores", "hash"):
            dirs = copy_campaigns(root, Path(tmp))
            from satcc.store import catalog

            if mode == "hash":
                print(catalog_hash(dirs, tmp))
                return 0
            catalog.open_store(dirs[0], save=False).close()
            t = cpu()
            for d in dirs:
                catalog.open_store(d, save=False).close()
            print(f"{cpu() - t:.3f} CPU s, {len(dirs)} stores")
            return 0
        study = args.study
        dirs = {d.name.removesuffix("-quick"): d for d in copy_campaigns(root, Path(tmp), study)}
        from satcc.studies import common

        mod = importlib.import_module(f"satcc.studies.study{study}")
        t = cpu()
        with common.reading():
            mod.measure(dirs)
            if hasattr(mod, "sensitivity"):
                mod.sensitivity(dirs)
        print(f"{cpu() - t:.3f} CPU s, study {study}, {len(dirs)} campaigns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
