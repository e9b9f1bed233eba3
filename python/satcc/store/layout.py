"""The campaign directory: what lives where, atomic writes, and what a scan finds.

    DIR/
      campaign.json        the plan: every run's id, engine, seed and parameters (the index;
                           rewritten atomically at each start, no timestamps)
      campaign.toml        the campaign file as given
      runs/<id>/           one finished run: summary.json, flows.parquet, flow_series.parquet,
                           link_series.parquet (satcc.results), run.json (spec, scenario,
                           parameters, hashes of the extras), extras (pings.parquet, seqack.parquet,
                           analyze_flows.parquet),
                           emu/ (an emu run's raw files), field/ (a `satcc field` run's)
      failed/<id>.json     a run that failed: its error (removed when it later succeeds)
      catalog.duckdb       the DuckDB catalog (satcc.store; derived, rebuilt at will)
      report/              satcc report's default output
      campaign.lock        held (flock) by the `satcc campaign` writing here; a second one is
                           refused with the first one's pid

A run appears in runs/ all at once: it is written to runs/.<id>.staging (results.write is
itself atomic), completed there, fsynced, and renamed into place. Anything dot-named under
runs/ is an interrupted write: the next `satcc campaign` removes it and redoes the run, as it
removes the `.NAME.tmp-*` files a killed writer leaves at the top level. A run another store
has done (the same run id) is put in place the same way from its files (`copy_run`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from satcc import results
from satcc.errors import UserError
from satcc.limits import json_loads, printable
from satcc.store.schema import RUN_SUMMARY_KEYS

INDEX_FILE = "campaign.json"
CAMPAIGN_COPY = "campaign.toml"
RUNS_DIR = "runs"
FAILED_DIR = "failed"
RUN_FILE = "run.json"
CATALOG_FILE = "catalog.duckdb"
REPORT_DIR = "report"
LOCK_FILE = "campaign.lock"
INDEX_SCHEMA_VERSION = 1
RUN_SCHEMA_VERSION = 1
STAGING_SUFFIX = ".staging"
EMU_RAW_DIR = "emu"
FIELD_RAW_DIR = "field"  # a `satcc field` run's raw files (iperf3 JSON, ping logs, capture)
# files and directories a campaign directory may hold at its top level (anything else is foreign)
# satcc fidelity's outputs beside the runs (satcc.fidelity.suite)
FIDELITY_FILES = {"fidelity.json", "fidelity.txt", "fidelity.png"}
KNOWN_TOP = {
    INDEX_FILE,
    CAMPAIGN_COPY,
    RUNS_DIR,
    FAILED_DIR,
    CATALOG_FILE,
    REPORT_DIR,
    CATALOG_FILE + ".wal",
    LOCK_FILE,
    *FIDELITY_FILES,
}
EXTRA_FILES = ("pings.parquet", "seqack.parquet", "cc_series.parquet", "analyze_flows.parquet")
RUN_FILES = {
    results.SUMMARY_FILE,
    *results.TABLE_FILES,
    RUN_FILE,
    *EXTRA_FILES,
    EMU_RAW_DIR,
    FIELD_RAW_DIR,
    "plot.png",
}


@contextmanager
def locked(d: Path, wait: bool = False) -> Iterator[bool]:
    """Hold DIR/campaign.lock (flock) while writing the campaign directory. When another
    process holds it: wait with `wait`, else raise UserError naming the holder's pid. The
    kernel releases the lock when the process ends, however it ends (SIGKILL too)."""
    d.mkdir(parents=True, exist_ok=True)
    fd = os.open(d / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise UserError(
                f"{d}: another satcc campaign{who} is writing to this directory; "
                "wait for it to finish or choose another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield True
    finally:
        os.close(fd)


def is_locked(d: Path) -> bool:
    """Whether a campaign is writing DIR now (its lock is held)."""
    try:
        fd = os.open(d / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False, sort_keys=False) + "\n"


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, fsync it, rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def read_index(d: Path) -> dict[str, Any]:
    path = d / INDEX_FILE
    if not path.is_file():
        raise UserError(f"{d}: expected a campaign directory (with {INDEX_FILE}), found none")
    try:
        doc = json_loads(path.read_text(encoding="utf-8"), str(path))
    except (OSError, ValueError) as e:
        raise UserError(
            f"{path}: expected the campaign index (JSON), found unreadable data: "
            f"{printable(str(e))[:200]}"
        ) from None
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("runs"), list)
        or not all(isinstance(r, dict) and isinstance(r.get("run_id"), str) for r in doc["runs"])
    ):
        raise UserError(
            f"{path}: expected the campaign index (an object with a list of runs), "
            "found another JSON document"
        )
    version = doc.get("index_schema_version")
    if version != INDEX_SCHEMA_VERSION:
        raise UserError(
            f"{path}: expected index_schema_version {INDEX_SCHEMA_VERSION}, found "
            f"{version!r} (written by another satcc version)"
        )
    return doc


# -- writing one run -----------------------------------------------------------------------


def write_run(
    d: Path,
    spec_doc: dict[str, Any],
    result: Any,
    extras: dict[str, Any],
    raw_dir: Path | None = None,
    raw_name: str = EMU_RAW_DIR,
) -> Path:
    """Put one finished run in place atomically (module doc). `raw_dir/<raw_name>` (emu/ or
    field/), if given, moves in."""
    staging = _staging(d, spec_doc["run_id"])
    # the staging directory is the atomic unit (renamed into place below; a killed writer's
    # is removed by `remove_leftovers`): the result's files go straight into it, without
    # `RunResult.write`'s own temporary directory and its scan of runs/ for stale ones (a
    # listing of every run per run: quadratic in the campaign's runs)
    staging.mkdir()
    result.write_files(staging)
    hashes = {}
    for name, table in sorted(extras.items()):
        path = staging / name
        hashes[name] = table.write_parquet(path)
        results.fsync_file(path)
    if raw_dir is not None and (raw_dir / raw_name).is_dir():
        os.replace(raw_dir / raw_name, staging / raw_name)
    return _put_in_place(d, spec_doc, staging, hashes)


def copy_run(d: Path, spec_doc: dict[str, Any], source: Path) -> Path:
    """Put in place, atomically, the run `spec_doc` names from `source`, a finished run
    directory of the same run id in another store (the same engine, resolved scenario and
    seed: the same result bytes): its result files are copied, run.json is this store's
    (`spec_doc` and the source's file hashes). `source` is checked first (`verify_run`)."""
    old, why = verify_run(source, spec_doc["run_id"])
    if old is None:
        raise OSError(f"{source}: cannot reuse it: {why}")
    staging = _staging(d, spec_doc["run_id"])
    staging.mkdir()
    for entry in sorted(source.iterdir()):
        if entry.name == RUN_FILE:
            continue
        if entry.is_dir():
            import shutil

            shutil.copytree(entry, staging / entry.name)
        else:
            import shutil

            shutil.copyfile(entry, staging / entry.name)
            results.fsync_file(staging / entry.name)
    return _put_in_place(d, spec_doc, staging, old.get("files") or {})


def _staging(d: Path, rid: str) -> Path:
    """runs/.<id>.staging, emptied (what an interrupted write left is removed)."""
    runs = d / RUNS_DIR
    runs.mkdir(parents=True, exist_ok=True)
    staging = runs / f".{rid}{STAGING_SUFFIX}"
    if staging.exists():
        import shutil

        shutil.rmtree(staging)
    return staging


def _put_in_place(d: Path, spec_doc: dict[str, Any], staging: Path, hashes: dict) -> Path:
    """Write run.json into a complete staging directory and rename it to runs/<id>."""
    runs, rid = d / RUNS_DIR, spec_doc["run_id"]
    final = runs / rid
    doc = {"run_schema_version": RUN_SCHEMA_VERSION, **spec_doc, "files": hashes}
    results.write_text_fsync(staging / RUN_FILE, dumps(doc))
    fsync_dir(staging)
    if final.exists():  # a corrupt earlier copy: move it out of the way first
        old = Path(tempfile.mkdtemp(prefix=f".{rid}.old-", dir=runs))
        os.replace(final, old / rid)
        import shutil

        shutil.rmtree(old, ignore_errors=True)
    os.rename(staging, final)
    fsync_dir(runs)
    (d / FAILED_DIR / f"{rid}.json").unlink(missing_ok=True)
    return final


def write_failure(d: Path, spec_doc: dict[str, Any], error: str) -> None:
    atomic_write_text(
        d / FAILED_DIR / f"{spec_doc['run_id']}.json", dumps({**spec_doc, "error": error})
    )


def remove_leftovers(d: Path) -> list[str]:
    """Delete interrupted writes under runs/ and failed/ (dot-named entries) and the
    `.NAME.tmp-*` files of killed writers at the top level; their names. Call it holding the
    lock (`locked`): then no live writer owns any of them."""
    gone = []
    for entry in sorted(d.iterdir()):
        if entry.name.startswith(".") and ".tmp-" in entry.name:
            gone.append(entry.name)
            if entry.is_dir() and not entry.is_symlink():
                import shutil

                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    for sub in (RUNS_DIR, FAILED_DIR):
        base = d / sub
        if not base.is_dir():
            continue
        for entry in sorted(base.iterdir()):
            if entry.name.startswith("."):
                gone.append(f"{sub}/{entry.name}")
                if entry.is_dir() and not entry.is_symlink():
                    import shutil

                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
    return gone


# -- checking what is on disk ----------------------------------------------------------------


@dataclass
class Problem:
    path: str  # relative to the campaign directory
    kind: str  # corrupt | foreign | incomplete | not-in-plan | version
    message: str

    def line(self) -> str:
        return f"{self.path}: {self.kind}: {self.message}"


@dataclass
class Scan:
    """What a campaign directory holds, checked against its plan."""

    index: dict[str, Any]
    directory: Path
    done: dict[str, dict[str, Any]] = field(default_factory=dict)  # run id -> run.json
    # run id -> the keys of its summary.json the catalog's `runs` table takes
    # (RUN_SUMMARY_KEYS), read by the check: the catalog does not read the file again
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # run id -> error
    problems: list[Problem] = field(default_factory=list)

    @property
    def planned(self) -> list[dict[str, Any]]:
        return self.index["runs"]

    @property
    def pending(self) -> list[dict[str, Any]]:
        return [r for r in self.planned if r["run_id"] not in self.done]


# The errors pathlib's is_file takes for "no such file" (pathlib._IGNORED_ERRNOS); any other
# (a permission refused) is raised, as Path.is_file raises it.
_MISSING_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def is_regular_file(path: str) -> bool:
    """Path(path).is_file() on a string (a run's check asks it of every file: pathlib's
    objects cost more than the stat)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as e:
        if e.errno not in _MISSING_ERRNOS:
            raise
        return False
    except ValueError:
        return False


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def verify_run(run_dir: Path, expected_id: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(run.json, None) for a complete, untouched run; (None, why) otherwise. Checks every
    file's sha256 against summary.json / run.json and that nothing else is in the directory."""
    run, _summary, why = _verify_run(run_dir, expected_id)
    return run, why


def _verify_run(
    run_dir: Path, expected_id: str | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
    """`verify_run`, with the run's summary.json (None when the run is not complete)."""
    rid = run_dir.name
    base = os.fspath(run_dir) + os.sep
    summary_path = base + results.SUMMARY_FILE
    run_path = base + RUN_FILE
    if not is_regular_file(summary_path) or not is_regular_file(run_path):
        missing = [n for n in (results.SUMMARY_FILE, RUN_FILE) if not is_regular_file(base + n)]
        return None, None, f"expected {', '.join(missing)}, found none"
    try:
        summary = json_loads(_read_text(summary_path), summary_path)
        run = json_loads(_read_text(run_path), run_path)
    except (OSError, ValueError) as e:
        return (
            None,
            None,
            (
                "expected JSON in summary.json and run.json, found unreadable data "
                f"({printable(str(e))[:200]})"
            ),
        )
    if not isinstance(summary, dict) or not isinstance(run, dict):
        return None, None, "expected JSON objects in summary.json and run.json"
    if summary.get("schema_version") != results.SCHEMA_VERSION:
        return (
            None,
            None,
            (
                f"results schema_version {summary.get('schema_version')!r}, this satcc "
                f"reads {results.SCHEMA_VERSION} (no migration known)"
            ),
        )
    if run.get("run_schema_version") != RUN_SCHEMA_VERSION:
        return (
            None,
            None,
            f"run.json schema {run.get('run_schema_version')!r}, expected {RUN_SCHEMA_VERSION}",
        )
    if run.get("run_id") != rid or (expected_id is not None and rid != expected_id):
        return None, None, f"run.json names run {run.get('run_id')!r}, not {rid!r}"
    want = {
        name: (summary.get("files") or {}).get(name, {}).get("sha256")
        for name in results.TABLE_FILES
    }
    want.update(run.get("files") or {})
    for name, digest in want.items():
        path = os.path.join(base, name)  # run.json's names: an absolute one replaces, as with /
        if not is_regular_file(path):
            return None, None, f"expected {name}, found none"
        if digest is None or results.file_sha256(path) != digest:
            return (
                None,
                None,
                f"{name} does not match its recorded sha256 (modified or mixed with another run)",
            )
    for name in os.listdir(run_dir):
        if name not in RUN_FILES and name not in want:
            return None, None, f"holds a foreign file {name!r}"
    return run, summary, None


def scan(d: Path) -> Scan:
    """Read the plan and check every entry of the directory against it (module doc)."""
    index = read_index(d)
    out = Scan(index, d)
    planned = {r["run_id"] for r in index["runs"]}
    for entry in sorted(d.iterdir()):
        if entry.name not in KNOWN_TOP and not entry.name.startswith(f".{INDEX_FILE}.tmp"):
            out.problems.append(
                Problem(entry.name, "foreign", "not part of a campaign directory; left out")
            )
    runs = d / RUNS_DIR
    if runs.is_dir():
        for entry in sorted(runs.iterdir()):
            rel = f"{RUNS_DIR}/{entry.name}"
            if entry.name.startswith("."):
                out.problems.append(
                    Problem(
                        rel,
                        "incomplete",
                        "an interrupted write; the next "
                        "`satcc campaign` removes it and redoes the run",
                    )
                )
                continue
            if not entry.is_dir():
                out.problems.append(Problem(rel, "foreign", "not a run directory; left out"))
                continue
            if entry.name not in planned:
                out.problems.append(
                    Problem(
                        rel,
                        "not-in-plan",
                        "a run the current campaign "
                        "file does not plan (an earlier version?); left out",
                    )
                )
                continue
            run, summary, why = _verify_run(entry, entry.name)
            if run is None:
                out.problems.append(
                    Problem(
                        rel, "corrupt", f"{why}; left out, and the next `satcc campaign` redoes it"
                    )
                )
                continue
            out.done[entry.name] = run
            out.summaries[entry.name] = {k: summary.get(k) for k in RUN_SUMMARY_KEYS}
    failed = d / FAILED_DIR
    if failed.is_dir():
        for entry in sorted(failed.iterdir()):
            rid = entry.name.removesuffix(".json")
            if entry.name.startswith("."):
                out.problems.append(
                    Problem(
                        f"{FAILED_DIR}/{entry.name}",
                        "incomplete",
                        "an interrupted write; removed by the next run",
                    )
                )
                continue
            if not entry.name.endswith(".json"):
                out.problems.append(
                    Problem(
                        f"{FAILED_DIR}/{entry.name}", "foreign", "not a failure record; left out"
                    )
                )
                continue
            if rid in out.done or rid not in planned:
                continue
            try:
                doc = json_loads(entry.read_text(encoding="utf-8"), str(entry))
                out.failed[rid] = str(doc.get("error", "?")) if isinstance(doc, dict) else "?"
            except (OSError, ValueError):
                out.failed[rid] = "(unreadable failure record)"
    return out
