"""Campaign files: a base scenario, a matrix over any scenario key, repetitions and seeds.

    campaign.toml ──tomllib──► dict ──schema.validate()──► CampaignFile ──from_dict()──► Campaign
                                      (pydantic: types, key      (base scenario read,
                                       paths, unknown keys)       globs matched, columns named)
                  Campaign ──expand()──► [RunSpec] (one per run, named by a stable hash, validated)

A campaign file (docs/campaigns.md is the user-facing copy; satcc.campaign.schema its models):

    [campaign]
    name = "study001-quick"            # default: the file stem; also the default --out name
    description = "..."
    scenario = "../scenarios/starlink-residential.toml"   # base scenario, relative to this file
    repetitions = 3                    # seeds per matrix point (default 1)
    seed = 1                           # first seed (default: the scenario's); seeds seed..seed+n-1
    # seeds = [1, 7, 42]               # or the seeds themselves (then no `repetitions`)

    [matrix]                           # the cross product of every axis
    "flow.*.cca" = ["bbr", "cubic"]    # KEY.PATH = [values]: column "cca"
    "link[1].delay" = ["1 ms", "8 ms"] # column "link1_delay" (+ "link1_delay_ms", numeric)
    rtt2 = { key = "link[1].delay", values = ["1 ms", "8 ms"], role = "rtt" }  # named column

    [matrix.direction.cases]           # a named axis whose values set several keys each
    up = { "flow[0].from" = "dish", "flow[0].to" = "server" }
    down = { "flow[0].from" = "server", "flow[0].to" = "dish" }

    [[analyze]]                        # field measurements: `satcc analyze` runs
    files = ["logs/*.txt"]             # globs, relative to this file
    each = true                        # one run per file (default); false: one run for all
    bin = "100 ms"
    params = { site = "roof" }         # extra columns for these runs

    [quick]                            # what `--quick` changes (the reduced design)
    campaign = { repetitions = 1 }     # [campaign] keys replaced; name: "NAME-quick"
    [quick.matrix]
    "scenario.duration" = ["30 s"]     # an axis replaced, or added
    [quick.matrix.direction]
    cases = { up = { "flow[0].from" = "dish", "flow[0].to" = "server" } }  # a named axis's keys

The quick variant (`load(path, quick=True)`, `satcc campaign FILE --quick`, or the name
`NAME-quick.toml` beside NAME.toml) is the file with [quick] laid over it: `[quick.campaign]`
keys replace those of [campaign] (the name becomes NAME-quick unless given); in
`[quick.matrix]` an axis that [matrix] has is replaced (a named axis key by key: its `values`
or `cases` whole), a new one is added, and the axes stand as TOML writes them (plain `"KEY" =
[...]` axes first, then the named tables), each in the file's order, the added ones after.
The kernel variant (`load(path, quick=True, kernel=True)`) lays a [kernel] table of the same
shape over the quick variant (name NAME-quick-kernel): the quick design sized for a real-time
engine (the emulator; satcc.studies runs it with --quick --engine emu).

Key paths: `scenario.engine`, `flow[0].cca`, `flow.*.mss` or `flow[*].mss` (every [[flow]]),
`link[1].loss`, `link[0].model.plan`, `flow[1].cc.beta`; a missing table on the way is created,
an index past the end is an error. Each matrix point is validated like a scenario file
(`satcc check`), all problems reported at once before anything runs.

Run identity: sha256 of the canonical JSON of {engine, scenario_hash(resolved config), seed}
(analyze runs: {inputs' sha256, bin}); the run directory is the first RUN_ID_HEX hex digits.
Parameters are not part of the name: two points that resolve to the same scenario are one run,
and that is reported as an error (an axis that changes nothing is a mistake).

Deviations from what a user might assume:
1. Repetitions apply to every engine; the model engine is deterministic, so its repetitions
   agree exactly (they still count as runs).
2. The satcc version is not part of a run's name: a campaign resumed after an upgrade keeps the
   runs already done; `satcc campaign status` and the report list the versions present.
"""

from __future__ import annotations

import copy
import glob
import math
import os
import re
import stat
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

from satcc import limits
from satcc.errors import UserError
from satcc.results import file_sha256
from satcc.scenario import (
    DEFAULT_SEED,
    MAX_SEED,
    ScenarioError,
    canonical_json,
    resolve,
    scenario_hash,
)
from satcc.scenario import from_dict as scenario_from_dict
from satcc.scenario.config import json_sha256
from satcc.scenario.keypath import parse_key_path, set_key
from satcc.units import UnitError, parse_duration, parse_probability, parse_rate, parse_size

if TYPE_CHECKING:
    from satcc.campaign import schema

RUN_ID_HEX = 16  # 64 bits of sha256: a collision needs ~4e9 runs
ANALYZE = "analyze"
RESERVED_COLUMNS = {
    "run_id",
    "engine",
    "seed",
    "repetition",
    "point",
    "scenario",
    "scenario_hash",
    "status",
}
MAX_RUNS = 1_000_000  # hard limit on a campaign's runs
SOFT_MAX_RUNS = (
    10_000  # above this, `satcc campaign` needs --force (planning alone takes ~1 s per 1,000)
)
PLAN_PROGRESS_RUNS = 2_000  # planning this many runs or more shows a progress bar


class CampaignError(UserError):
    """A campaign file that cannot be used; one line per problem, like ScenarioError."""

    def __init__(self, source: str, issues: list[tuple[str, str]]):
        self.source = source
        self.issues = issues
        super().__init__(
            "\n".join(f"{source}: {p}: {m}" if p else f"{source}: {m}" for p, m in issues)
        )


# -- key paths -----------------------------------------------------------------------------


def default_column(path: str) -> str:
    """'flow.*.cca' -> 'cca'; 'link[1].delay' -> 'link1_delay' (a link's own keys carry the
    link); 'link[0].model.plan' -> 'plan'. Two axes with one name get their full paths."""
    parts = parse_key_path(path)
    last = parts[-1][0] or "value"
    indexed = [f"{n}{i}" for n, i in parts[:-1] if isinstance(i, int)]
    if parts[0][0] == "link" and indexed and len(parts) == 2:
        return _identifier(f"{indexed[0]}_{last}")
    return _identifier(last)


def _identifier(text: str) -> str:
    out = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return out if not out[:1].isdigit() else f"c_{out}"


def role_of(path: str) -> str:
    """The figure role of a key path (the report picks its axes by role)."""
    parts = parse_key_path(path)
    last = parts[-1][0]
    if path == "scenario.engine":
        return "engine"
    if last == "cca":
        return "cca"
    if last == "mss":
        return "mss"
    if last in ("loss", "loss_ba"):
        return "loss"
    if last in ("delay", "delay_ba", "rtt", "extra_delay"):
        return "rtt"
    if last == "start" and len(parts) >= 2 and parts[-2][0] == "model":
        return "time_of_day"
    if last == "size":
        return "size"
    if last == "plan":
        return "plan"
    if last == "count":
        return "count"
    return "other"


def numeric_companion(values: list[Any], role: str = "other") -> tuple[str, list[float]] | None:
    """If every value is a unit string of one quantity: (suffix, numbers), e.g.
    ('ms', [1.0, 8.0]) for ['1 ms', '8 ms']; ('bps', ...) for rates, ('bytes', ...) for sizes,
    ('frac', ...) for a loss axis's probabilities ('0.1 %' -> 0.001); clock times
    'HH:MM[:SS]' give ('h', hours of the day)."""
    if not values or not all(isinstance(v, str) for v in values):
        return None
    clock = [_clock_hours(v) for v in values]
    if all(c is not None for c in clock):
        return "h", [float(c) for c in clock]  # type: ignore[arg-type]
    parsers = [
        ("ms", parse_duration, 1e-6),
        ("bps", parse_rate, 1.0),
        ("bytes", parse_size, 1.0),
    ]
    if role == "loss":  # a loss is a probability ("0" is not 0 ms)
        parsers = [("frac", parse_probability, 1.0)]
    for suffix, parse, scale in parsers:
        try:
            return suffix, [parse(v) * scale for v in values]
        except (UnitError, ValueError):
            continue
    return None


_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*$")


def _clock_hours(text: str) -> float | None:
    m = _CLOCK.match(text)
    if m is None:
        return None
    h, mi, s = int(m.group(1)), int(m.group(2)), float(m.group(3) or 0)
    return h + mi / 60 + s / 3600


# -- the campaign --------------------------------------------------------------------------


@dataclass
class Axis:
    """One matrix axis: a column name, and per value the key paths it sets."""

    name: str
    role: str
    labels: list[Any]  # the column's values, in order
    overrides: list[dict[str, Any]]  # per label: {key path: value}
    keys: list[str]  # the key paths this axis sets (for documentation)
    companion: tuple[str, list[float]] | None = None

    def doc(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "keys": self.keys,
            "values": self.labels,
        }
        if self.companion is not None:
            d["numeric_column"] = f"{self.name}_{self.companion[0]}"
            d["numeric_values"] = self.companion[1]
        return d


@dataclass
class AnalyzeEntry:
    files: list[Path]
    bin: str
    params: dict[str, Any]


@dataclass
class Campaign:
    source: str
    text: str
    name: str
    description: str | None
    scenario_path: Path | None
    base: dict[str, Any] | None  # the base scenario's TOML document
    axes: list[Axis]
    seeds: list[int]
    analyze: list[AnalyzeEntry] = field(default_factory=list)

    def doc(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "scenario": str(self.scenario_path) if self.scenario_path else None,
            "seeds": self.seeds,
            "axes": [a.doc() for a in self.axes],
        }


@dataclass(frozen=True)
class RunSpec:
    """One run: what the executor needs (picklable; sent to pool and Dask workers)."""

    run_id: str
    engine: str
    seed: int | None
    repetition: int
    point: int
    params: dict[str, Any]
    scenario: dict[str, Any] | None  # the TOML document after the overrides
    source: str  # path the scenario's relative references resolve against
    inputs: tuple[tuple[str, str], ...] = ()  # analyze: (path, sha256)
    bin: str | None = None  # analyze
    cost: float = 1.0  # relative run time estimate (longest first)

    def index_doc(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "run_id": self.run_id,
            "engine": self.engine,
            "seed": self.seed,
            "repetition": self.repetition,
            "point": self.point,
            "params": self.params,
        }
        if self.inputs:
            d["inputs"] = [{"path": p, "sha256": h} for p, h in self.inputs]
            d["bin"] = self.bin
        return d


QUICK = "quick"
QUICK_SUFFIX = "-quick"
KERNEL = "kernel"  # the quick design sized for a real-time engine (the emulator)
KERNEL_SUFFIX = "-kernel"
VARIANTS = ((QUICK, QUICK_SUFFIX), (KERNEL, KERNEL_SUFFIX))  # laid over in this order


def load(path: str | Path, quick: bool = False, kernel: bool = False) -> Campaign:
    """The campaign file at `path`, or its quick variant (module doc), or with `kernel` its
    kernel variant (the [kernel] table laid over the quick variant). A `NAME-quick.toml`
    that does not exist, beside a NAME.toml that does, is NAME.toml's quick variant."""
    p = Path(path)
    twin = p.with_name(p.name.removesuffix(f"{QUICK_SUFFIX}.toml") + ".toml")
    if p.name.endswith(f"{QUICK_SUFFIX}.toml") and not p.exists() and twin.is_file():
        p, quick = twin, True
    source = str(p)
    try:
        text = limits.read_text(p, "a campaign file")
        data = limits.toml_loads(text.removeprefix("\ufeff"), source)
    except UserError as e:
        raise CampaignError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    return from_dict(
        data,
        source=source,
        text=text,
        default_name=p.stem,
        base_dir=p.parent,
        quick=quick,
        kernel=kernel,
    )


WHAT = {QUICK: "what --quick changes", KERNEL: "the quick design for a real-time engine"}


def quick_variant(
    data: dict[str, Any], source: str, default_name: str, table: str = QUICK, suffix: str = ""
) -> dict[str, Any]:
    """The document with its [quick] table (or `table`: [kernel]) laid over it (module doc)."""
    suffix = suffix or dict(VARIANTS)[table]
    quick = data.get(table)
    if not isinstance(quick, dict):
        raise CampaignError(
            source, [(table, f"expected a [{table}] table ({WHAT[table]}), found none")]
        )
    issues = [
        (f"{table}.{k}", f"expected only [{table}.campaign] and [{table}.matrix] here")
        for k in quick
        if k not in ("campaign", "matrix")
    ]
    issues += [
        (f"{table}.{k}", f"expected a table, found {type(quick[k]).__name__}")
        for k in ("campaign", "matrix")
        if not isinstance(quick.get(k, {}), dict)
    ]
    if issues:
        raise CampaignError(source, issues)
    out = copy.deepcopy({k: v for k, v in data.items() if k != table})
    head = out.get("campaign")
    if not isinstance(head, dict):
        return out  # the schema reports it
    name = head.get("name", default_name)
    head.update(copy.deepcopy(quick.get("campaign", {})))
    if "name" not in quick.get("campaign", {}) and isinstance(name, str):
        head["name"] = f"{name}{suffix}"
    base, changes = out.get("matrix", {}), quick.get("matrix", {})
    if changes and isinstance(base, dict):
        merged = {}
        for k, v in [*base.items(), *((k, v) for k, v in changes.items() if k not in base)]:
            w = copy.deepcopy(changes.get(k, v))
            merged[k] = {**v, **w} if isinstance(v, dict) and isinstance(w, dict) else w
        # as TOML writes a table: plain keys first, then the sub-tables
        out["matrix"] = dict(sorted(merged.items(), key=lambda kv: isinstance(kv[1], dict)))
    return out


def from_dict(
    data: dict[str, Any],
    source: str = "<campaign>",
    text: str = "",
    default_name: str = "campaign",
    base_dir: Path = Path("."),
    quick: bool = False,
    kernel: bool = False,
) -> Campaign:
    """Check a parsed campaign file (satcc.campaign.schema), read its base scenario and its
    [[analyze]] files, and name its columns; every problem is reported at once. `quick`: its
    quick variant (the [quick] table laid over it); otherwise [quick] is left aside. `kernel`:
    its [kernel] table laid over the quick variant (the quick design a real-time engine runs)."""
    why = limits.value_depth_issue(data)
    if why is not None:  # a dict from the Python API is not checked as TOML text is
        raise CampaignError(source, [("", why)])
    if kernel and not quick:
        raise CampaignError(source, [(KERNEL, "the [kernel] variant is laid over --quick's")])
    for table, on in ((QUICK, quick), (KERNEL, kernel)):
        if on:
            data = quick_variant(data, source, default_name, table)
            source = f"{source} [{table}]"
        elif isinstance(data, dict) and table in data:  # not a table: the schema says so
            quick_variant(data, source, default_name, table)  # its shape checked, as the rest
            data = {k: v for k, v in data.items() if k != table}
    # the file's pydantic models, imported here: a worker running a RunSpec needs none of them
    from satcc.campaign import schema

    f, issues, dropped = schema.validate(data)
    head = f.campaign
    name = head.name if head.name is not None else default_name
    if head.name is None and limits.check_name(default_name) is not None:
        issues.append(("campaign.name", limits.check_name(default_name)))

    scenario_path = None
    base = None
    seeds_default = DEFAULT_SEED
    if head.scenario is not None:
        scenario_path = base_dir / head.scenario
        try:
            base = limits.toml_loads(
                limits.read_text(scenario_path, "a scenario file").removeprefix("\ufeff"),
                str(scenario_path),
            )
            s = scenario_from_dict(
                copy.deepcopy(base), source=str(scenario_path), default_name=scenario_path.stem
            )
            seeds_default = s.scenario.seed
            base.setdefault("scenario", {}).setdefault("name", s.name)
        except ScenarioError as e:
            issues.extend(("campaign.scenario", line) for line in str(e).splitlines())
        except UserError as e:
            issues.append(("campaign.scenario", str(e)))
    elif "matrix" in f.model_fields_set and not dropped & {("campaign",), ("campaign", "scenario")}:
        issues.append(
            ("campaign.scenario", "expected a base scenario file for the [matrix], found none")
        )

    if head.seeds is not None:
        seeds = list(head.seeds)
    else:
        reps = head.repetitions if head.repetitions is not None else 1
        first = head.seed if head.seed is not None else seeds_default
        if first > MAX_SEED - (reps - 1):  # the scenario's seed: [campaign] seed is checked
            issues.append(
                (
                    "campaign.repetitions",
                    (
                        f"expected at most {MAX_SEED - first + 1} repetitions counting up "
                        f"from the scenario's seed {first}, found {reps}"
                    ),
                )
            )
        seeds = [first + k for k in range(reps)]

    axes = _axes(f.matrix, issues)
    entries = _analyze_entries(f.analyze, base_dir, issues)
    if head.scenario is None and not f.analyze and not dropped:
        issues.append(
            (
                "",
                (
                    "expected a base scenario ([campaign] scenario) or [[analyze]] "
                    "entries, found neither"
                ),
            )
        )
    if issues:
        raise CampaignError(source, issues)
    return Campaign(source, text, name, head.description, scenario_path, base, axes, seeds, entries)


def _axes(
    matrix: dict[str, list[Any] | schema.AxisTable], issues: list[tuple[str, str]]
) -> list[Axis]:
    """The matrix's axes from its validated entries: column names (unique, not reserved),
    roles, labels and the overrides per label."""
    from satcc.campaign import schema

    axes: list[Axis] = []
    for key, entry in matrix.items():
        where = f"matrix.{schema.entry_name(key)}"
        if isinstance(entry, schema.AxisTable) and entry.cases is not None:
            labels = list(entry.cases)
            overrides = [dict(entry.cases[label]) for label in labels]
            keys = sorted({k for o in overrides for k in o})
            name = _identifier(entry.name or key)
            role = entry.role or ("direction" if name == "direction" else "other")
            axes.append(Axis(name, role, labels, overrides, keys))
            continue
        if isinstance(entry, schema.AxisTable):
            assert entry.key is not None and entry.values is not None  # AxisTable._one_form
            paths, values, role = entry.key, entry.values, entry.role
            explicit_name = entry.name if entry.name is not None else key
        else:  # "KEY.PATH" = [values]
            try:
                parse_key_path(key)
            except ValueError as e:
                issues.append((where, str(e)))
                continue
            paths, values, role, explicit_name = [key], entry, None, None
        name = _identifier(explicit_name) if explicit_name else default_column(paths[0])
        overrides = [{p: v for p in paths} for v in values]
        labels = [
            v if isinstance(v, (str, int, float, bool)) else canonical_json(v) for v in values
        ]
        role = role or role_of(paths[0])
        axes.append(
            Axis(name, role, labels, overrides, list(paths), numeric_companion(values, role))
        )
    # column names: unique and not reserved; a clash gets the full path as its name
    seen: dict[str, int] = {}
    for a in axes:
        seen[a.name] = seen.get(a.name, 0) + 1
    for a in axes:
        if seen[a.name] > 1 and len(a.keys) == 1 and a.keys[0] in matrix:
            a.name = _identifier(a.keys[0].replace("[", "").replace("]", "").replace("*", "all"))
    names = [a.name for a in axes]
    for name in dict.fromkeys(n for n in names if names.count(n) > 1):  # once per name
        issues.append(
            (
                "matrix",
                f"expected distinct column names, found {name!r} twice (give one axis a `name`)",
            )
        )
    for a in axes:
        if a.name in RESERVED_COLUMNS and not (
            a.name == "engine" and a.keys == ["scenario.engine"]
        ):
            issues.append(
                (
                    "matrix",
                    (
                        f"expected a column name other than {a.name!r} (reserved); "
                        "give the axis a `name`"
                    ),
                )
            )
    return axes


def _analyze_entries(
    raw: list[schema.AnalyzeTable], base_dir: Path, issues: list[tuple[str, str]]
) -> list[AnalyzeEntry]:
    """The [[analyze]] runs: each entry's globs matched (regular files only), one run per file
    or one for all."""
    out = []
    for i, entry in enumerate(raw):
        where = f"analyze[{i}]"
        files: list[Path] = []
        for pat in entry.files:
            matched = sorted(glob.glob(str(base_dir / pat)))
            if not matched:
                issues.append((f"{where}.files", f"expected files matching {pat!r}, found none"))
            for m in matched:
                try:
                    regular = stat.S_ISREG(os.stat(m).st_mode)
                except OSError:
                    regular = False
                if not regular:
                    issues.append(
                        (
                            f"{where}.files",
                            (
                                f"expected regular files, found {m!r}, "
                                "which is not one (a directory, device or FIFO)"
                            ),
                        )
                    )
                    continue
                files.append(Path(m))
        groups = [[f] for f in files] if entry.each else [files]
        for g in groups:
            p = dict(entry.params)
            if entry.each:
                p.setdefault("file", g[0].name)
            out.append(AnalyzeEntry(g, entry.bin, p))
    return out


# -- expansion -----------------------------------------------------------------------------


def run_id(doc: dict[str, Any]) -> str:
    return json_sha256(doc)[:RUN_ID_HEX]


def planned_runs(c: Campaign) -> int:
    """How many runs the matrix and seeds make (before expanding anything)."""
    return math.prod(len(a.labels) for a in c.axes) * len(c.seeds) if c.base is not None else 0


def expand(c: Campaign, force: bool = False, progress: bool | None = None) -> list[RunSpec]:
    """Every run of the campaign, in plan order (points in matrix order, then seeds; analyze
    entries last). Validates every point; raises CampaignError listing every problem. Above
    SOFT_MAX_RUNS runs it refuses unless `force`; a big plan shows a progress bar."""
    issues: list[tuple[str, str]] = []
    failed: dict[str, list[tuple[int, str]]] = {}  # a point's problem -> [(point, its label)]
    specs: list[RunSpec] = []
    owners: dict[str, str] = {}
    total = planned_runs(c)
    if total > MAX_RUNS:
        raise CampaignError(
            c.source, [("matrix", (f"expected at most {MAX_RUNS:,} runs, found {total:,}"))]
        )
    if total > SOFT_MAX_RUNS and not force:
        raise CampaignError(
            c.source,
            [
                (
                    "matrix",
                    (
                        f"expected at most {SOFT_MAX_RUNS:,} runs without --force, found {total:,} (planning "
                        f"them alone takes minutes; --force plans and runs them anyway)"
                    ),
                )
            ],
        )
    points = total // max(len(c.seeds), 1)
    if c.base is not None:
        combos = product(*[range(len(a.labels)) for a in c.axes]) if c.axes else [()]
        bar = None
        if total >= PLAN_PROGRESS_RUNS and progress is not False:
            from satcc.progress import ProgressBar

            bar = ProgressBar(label=f"planning {total:,} runs", delay_s=0.0, enabled=progress)
        for point, combo in enumerate(combos):
            if bar is not None and point % 50 == 0:
                bar(point / points)
            params = {a.name: a.labels[k] for a, k in zip(c.axes, combo, strict=True)}
            for a, k in zip(c.axes, combo, strict=True):
                if a.companion is not None:
                    params[f"{a.name}_{a.companion[0]}"] = a.companion[1][k]
            label = ", ".join(
                f"{a.name}={a.labels[k]!r}" for a, k in zip(c.axes, combo, strict=True)
            )
            doc = copy.deepcopy(c.base)
            for a, k in zip(c.axes, combo, strict=True):
                for path, value in a.overrides[k].items():
                    set_key(doc, path, value)
            s, config, problems = _check_point(c, doc)
            for problem in problems:
                failed.setdefault(problem, []).append((point, label))
            if s is None:
                continue
            engine = s.scenario.engine
            h = scenario_hash(config)
            cost = config["duration_ns"] / 1e9 * max(len(config["flows"]), 1)
            for rep, seed in enumerate(c.seeds):
                rid = run_id({"engine": engine, "scenario_hash": h, "seed": seed})
                where = f"point {point} ({label}), seed {seed}"
                if rid in owners:
                    issues.append(
                        (
                            "matrix",
                            (
                                f"{where} resolves to the same run as {owners[rid]}: "
                                "an axis changes nothing"
                            ),
                        )
                    )
                    continue
                owners[rid] = where
                specs.append(
                    RunSpec(
                        rid, engine, seed, rep, point, params, doc, str(c.scenario_path), cost=cost
                    )
                )
        if bar is not None:
            bar.close()
    if failed:
        issues[:0] = _point_issues(c, failed, points)
    for i, entry in enumerate(c.analyze):
        inputs = tuple((str(f), file_sha256(f)) for f in entry.files)
        rid = run_id(
            {
                "engine": ANALYZE,
                "inputs": [h for _, h in inputs],
                "bin_ns": parse_duration(entry.bin),
            }
        )
        where = f"analyze[{i}] ({', '.join(f.name for f in entry.files)})"
        if rid in owners:
            issues.append(("analyze", f"{where} repeats {owners[rid]}"))
            continue
        owners[rid] = where
        size = sum(f.stat().st_size for f in entry.files)
        specs.append(
            RunSpec(
                rid,
                ANALYZE,
                None,
                0,
                -1 - i,
                dict(entry.params),
                None,
                c.source,
                inputs=inputs,
                bin=entry.bin,
                cost=size / 1e7,
            )
        )
    if issues:
        raise CampaignError(c.source, issues)
    return specs


def _check_point(c: Campaign, doc: dict[str, Any]) -> tuple[Any, Any, list[str]]:
    """A point's scenario document validated and resolved: (scenario, resolved, []) or
    (None, None, its problems as "key.path: message" lines)."""
    try:
        s = scenario_from_dict(
            copy.deepcopy(doc),
            source=str(c.scenario_path),
            default_name=str(doc.get("scenario", {}).get("name", "scenario")),
        )
        return s, resolve(s), []
    except ScenarioError as e:
        return None, None, [f"{path}: {msg}" if path else msg for path, msg in e.issues]
    except ValueError as e:
        return None, None, [str(e)]


MAX_POINTS_NAMED = 8  # a problem lists this many of its points, then "and N more"


def _point_issues(
    c: Campaign, failed: dict[str, list[tuple[int, str]]], points: int
) -> list[tuple[str, str]]:
    """Each distinct problem of the matrix once: with the axis value that causes it (each
    value checked on its own against the base scenario, so that one bad key does not hide
    another value's problem, `bbrr` behind an unknown key) or with the points it affects."""
    by_value: dict[str, list[tuple[int, int]]] = {}  # problem -> [(axis index, value index)]
    for i, a in enumerate(c.axes):
        for k in range(len(a.labels)):
            doc = copy.deepcopy(c.base)
            try:
                for path, value in a.overrides[k].items():
                    set_key(doc, path, value)
            except ValueError as e:
                by_value.setdefault(str(e), []).append((i, k))
                continue
            for problem in _check_point(c, doc)[2]:
                by_value.setdefault(problem, []).append((i, k))
    combos = list(product(*[range(len(a.labels)) for a in c.axes]))
    failed_points = {p for pts in failed.values() for p, _ in pts}

    def every_point_failed(i: int, k: int) -> bool:
        return all(p in failed_points for p, combo in enumerate(combos) if combo[i] == k)

    out: list[tuple[str, str]] = []
    for problem, values in by_value.items():
        # a value's own problem when every point with the value failed (there it may hide
        # behind another problem); else the points that show it are listed below
        if not all(every_point_failed(i, k) for i, k in values):
            by_value[problem] = []
            continue
        where = []
        for i in dict.fromkeys(i for i, _ in values):
            a = c.axes[i]
            ks = [k for j, k in values if j == i]
            if len(ks) == len(a.labels) > 1:
                where.append(f"matrix {a.name} (every value)")
            else:
                where.append(f"matrix {a.name} = " + ", ".join(repr(a.labels[k]) for k in ks))
        out.append(("; ".join(where), problem))
    for problem, pts in failed.items():
        if by_value.get(problem):
            continue
        named = ", ".join(f"point {p} ({label})" for p, label in pts[:MAX_POINTS_NAMED])
        more = f" and {len(pts) - MAX_POINTS_NAMED} more" if len(pts) > MAX_POINTS_NAMED else ""
        out.append((f"{len(pts)} of {points} points: {named}{more}", problem))
    return out


def columns(c: Campaign, specs: list[RunSpec]) -> list[str]:
    """Every parameter column, in order: the axes (with numeric companions), then analyze
    params."""
    out: list[str] = []
    for a in c.axes:
        out.append(a.name)
        if a.companion is not None:
            out.append(f"{a.name}_{a.companion[0]}")
    for s in specs:
        for k in s.params:
            if k not in out:
                out.append(k)
    return out
