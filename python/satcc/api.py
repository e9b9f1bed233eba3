"""The Python API for notebooks: `satcc.run(...)`, `satcc.analyze(...)`, `satcc.sweep(...)`,
`satcc.campaign(...)` and `satcc.open_store(...)` (docs/python-api.md).

    import satcc
    r = satcc.run("scenarios/geo.toml", seed=2, **{"flow[0].cca": "bbr"})
    r.summary        one row per flow (the `--json` summary's flows) as a DataFrame
    r.flows, r.flow_series, r.link_series   the result's tables as DataFrames
    r.plot()         the `satcc plot` figure (a matplotlib Figure)
    satcc.sweep("geo.toml", **{"flow.*.cca": ["cubic", "bbr"]})   one row per flow per run,
                     the parameter columns first (named as a campaign's)
    satcc.campaign("c.toml", out="out/c")   a campaign file run (resumably) into a store: its
                     flows table; satcc.open_store("out/c").runs() ... the store as DataFrames

A scenario is a path, TOML text or a dict (the parsed TOML). Overrides are campaign key paths
(`flow[0].cca`, `link[0].rate`, `flow.*.mss`, `scenario.duration`), the same paths and the same
code as `--set KEY.PATH=VALUE` on the command line and a campaign's matrix
(satcc.scenario.keypath `set_key`). Values are Python values or, from the command line, TOML values
(`--set link[0].rate='"20 Mbit/s"'`, or unquoted: text that is not TOML is taken as a string).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from satcc.errors import UserError

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any


def parse_set(items: Iterable[str] | None) -> dict[str, Any]:
    """`KEY.PATH=VALUE` strings (from `--set`) → {path: value}. VALUE is read as a TOML value
    (`0.01`, `true`, `"20 Mbit/s"`, `[1, 2]`); anything else is the string itself."""
    out: dict[str, Any] = {}
    if not items:
        return out  # no tomllib: a run without --set has its TOML parsed by satcc-core
    import tomllib

    from satcc import limits
    from satcc.units import describe

    for n, item in enumerate(items, 1):
        where = f"--set (argument {n})"
        why = limits.not_utf8_issue(item)
        if why is not None:
            raise UserError(f"{where}: {why}")
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--set: expected KEY.PATH=VALUE, found {describe(item)}")
        why = limits.key_path_issue(key.strip()) or limits.toml_depth_issue(text)
        if why is not None:
            raise limits.LimitError(
                f"--set {describe(key.strip())}: {why.removeprefix('line 1: ')}"
            )
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        out[key.strip()] = value
    return out


SET_FLAG = "--set {path}"  # how an override is named in an error: the command line's flag
KEYWORD = "keyword {path!r}"  # ... or the API's keyword argument


def apply_overrides(
    doc: dict[str, Any], overrides: Mapping[str, Any], source: str, via: str = SET_FLAG
) -> dict[str, Any]:
    """A copy of a scenario document with each key path set (campaign key-path semantics);
    errors name an override as `via` does (`--set flow[3].cca`, `keyword 'flow[3].cca'`)."""
    import copy

    from satcc import limits
    from satcc.scenario.keypath import set_key
    from satcc.units import describe

    why = limits.value_depth_issue(doc)
    if why is not None:
        raise limits.LimitError(f"{source}: {why}")
    out = copy.deepcopy(doc)
    for path, value in overrides.items():
        why = (
            limits.key_path_issue(path) if isinstance(path, str) else None
        ) or limits.value_depth_issue(value)
        if why is not None:
            raise limits.LimitError(f"{source}: {via.format(path=describe(path))}: {why}")
        try:
            set_key(out, path, value)
        except ValueError as e:
            raise UserError(f"{source}: {via.format(path=path)}: {e}") from None
    return out


def load_scenario(
    src: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    via: str = SET_FLAG,
):
    """A validated Scenario from a path, TOML text or a dict, with key-path overrides (named
    in errors as `via` says)."""
    from satcc import limits
    from satcc.scenario import ScenarioError, from_dict, load, loads

    overrides = dict(overrides or {})
    if isinstance(src, Mapping):
        return from_dict(apply_overrides(dict(src), overrides, "<dict>", via), source="<dict>")
    text = str(src)
    is_text = not isinstance(src, Path) and ("\n" in text or "[" in text.split("/")[-1][:1])
    if is_text:
        source, name = "<string>", "scenario"
        if not overrides:
            return loads(text, source, name)
    else:
        if not overrides:
            return load(src)
        from satcc import resources

        found = resources.scenario_path(text)
        if found != Path(text):
            src = text = str(found)
        source, name = text, Path(text).stem
        try:
            text = limits.read_text(Path(src), "a scenario file")
        except UserError as e:
            raise ScenarioError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    try:
        doc = limits.toml_loads(text.removeprefix("\ufeff"), source)
    except UserError as e:
        raise ScenarioError(source, [("", str(e).removeprefix(f"{source}: "))]) from None
    return from_dict(apply_overrides(doc, overrides, source, via), source=source, default_name=name)


def _is_number_or_none(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


class Result:
    """A run or an analysis, for notebooks. `result` is the underlying `RunResult`."""

    # a plain class, not a dataclass: `satcc check` and `satcc sim` import this module, and
    # dataclasses costs them inspect, ast, dis and tokenize (tests/test_cli_imports.py)
    def __init__(self, result: Any, extra: dict[str, Any] | None = None):
        self.result = result
        self.extra = {} if extra is None else extra

    @property
    def summary(self):
        """One row per flow: the `--json` summary's flows (plus analyze's endpoint columns),
        units in the names as in `flows` (_bps bit/s, _ms ms, _s s, _bytes B); numeric columns
        are float64/int64 with NaN where a value is missing. Run metadata in `.attrs`."""
        import pandas as pd

        doc = self.extra.get("summary") or self.result.summary()
        rows = [
            {k: v for k, v in f.items() if not isinstance(v, (list, dict))} for f in doc["flows"]
        ]
        frame = pd.DataFrame(rows)
        for c in frame.columns:
            # a numeric column with missing values is float64 with NaN, not object with None
            if frame[c].dtype == object and frame[c].map(_is_number_or_none).all():
                frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("float64")
        frame.attrs.update(
            {
                k: doc.get(k)
                for k in (
                    "engine",
                    "scenario",
                    "seed",
                    "jain_index",
                    "jain_flows",
                    "duration_s",
                    "bin_s",
                )
            }
        )
        return frame

    @property
    def meta(self) -> dict[str, Any]:
        """Run metadata: engine, scenario, seed, duration_s (s), bin_s (s), nodes, links."""
        return self.result.meta

    @property
    def jain_index(self) -> float | None:
        """Jain's fairness index (1/n..1, no unit) over the goodputs of the flows sharing the
        bottleneck (`meta["fairness"]`); None when fewer than two flows share it or none has
        a goodput."""
        return self.result.jain_index

    @property
    def flows(self):
        """flows.parquet as a DataFrame, one row per flow; units in the names: goodput_bps
        (bit/s), delivered_bytes (B), rtt_mean_ms / rtt_p95_ms / rtt_min_ms (ms), start_s and
        fct_s (s), retransmission_rate and loss_fraction (0..1), jitter_ms (ms); missing: NaN."""
        return self.result.flows

    @property
    def flow_series(self):
        """Per flow per bin: t_s (bin start, s), goodput_bps and received_bps (bit/s),
        delivered_bytes and received_bytes (B in the bin), cwnd_pkts and ssthresh_pkts (packets),
        cwnd_bytes (B), srtt_ms (ms), inflight_pkts, pacing_rate_bps (bit/s), retransmits."""
        return self.result.flow_series

    @property
    def link_series(self):
        """Per link direction per bin: t_s (s), queue_pkts, queue_bytes (B), drops_queue,
        drops_random, ecn_marks (counts in the bin), tx_bytes (B), capacity_bps (bit/s),
        delay_ms (ms)."""
        return self.result.link_series

    def plot(self, **options):
        """The `satcc plot` figure as a matplotlib Figure (options as `satcc.plot.figure`)."""
        from satcc.plot import figure

        return figure(self.result, **options)

    def write(self, out_dir: str | Path) -> Path:
        return self.result.write(out_dir)

    def _repr_html_(self) -> str:
        return self.summary._repr_html_()

    def __repr__(self) -> str:
        return self.result.table()


def run(
    scenario: str | Path | Mapping[str, Any],
    engine: str | None = None,
    seed: int | None = None,
    *,
    capture: str | Sequence[str] = (),
    out: str | Path | None = None,
    **overrides: Any,
) -> Result:
    """Run a scenario (path, TOML text or dict) with `engine` ("sim", "model" or "emu"; default:
    the scenario's `engine` key, "sim" when absent). Keyword overrides are key paths:
    `satcc.run("a.toml", duration="10 s")` sets `scenario.duration`; paths with dots or
    brackets go through a dict: `satcc.run("a.toml", **{"flow[0].cca": "bbr"})`.
    `capture` (the simulator: "d", "r1:r2" or a list of them, as `satcc sim --capture`) writes
    pcapng captures into `out`/sim/; `result.write(out)` puts the tables beside them."""
    s = load_scenario(scenario, _key_paths(overrides), KEYWORD)
    from satcc import registry

    points = tuple(p.strip() for p in ([capture] if isinstance(capture, str) else capture))
    points = tuple(q for p in points for q in p.split(",") if q)
    name = engine or s.scenario.engine or registry.DEFAULT
    opts = registry.RunOptions(seed=seed, raw_dir=out, capture_points=points)
    return Result(registry.run(name, s, opts))


def _key_paths(keywords: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments as key paths: a bare name is a `[scenario]` key."""
    return {(k if ("." in k or "[" in k) else f"scenario.{k}"): v for k, v in keywords.items()}


def sweep(
    scenario: str | Path | Mapping[str, Any],
    engine: str | None = None,
    seeds: Iterable[int] | None = None,
    **axes: Iterable[Any],
):
    """Run `scenario` at every combination of the axes' values (each a key path, as `run`'s
    keywords, with a list of values) and each seed (default: the scenario's); returns a tidy
    DataFrame: one row per flow per run, the parameter columns first, named as a campaign's
    (`flow.*.cca` -> `cca`, `link[0].rate` -> `link0_rate`, plus numeric twins of unit
    strings: `link0_rate_bps`, `link0_loss_frac`, ...; `param_<name>` where a flow column has
    the name, as `cca` has), then `seed`, then `run.summary`'s columns. Runs one after another in this process; `satcc.campaign` runs in parallel,
    resumably, into a store."""
    import itertools

    import pandas as pd

    from satcc.campaign.spec import default_column, numeric_companion, role_of

    columns: list[tuple[str, str, list[Any], tuple[str, list[float]] | None]] = []
    for path, given in _key_paths(axes).items():
        values = list(given) if isinstance(given, (list, tuple, range)) else []
        if not values:
            raise UserError(
                f"satcc.sweep: keyword {path!r}: expected a non-empty list of values, "
                f"found {given!r}"
            )
        twin = numeric_companion(values, role_of(path))
        columns.append((path, default_column(path), values, twin))
    names = [name for _, name, _, _ in columns]
    if len(set(names)) != len(names):  # two axes, one column name: use the paths
        columns = [(p, p, v, t) for p, _, v, t in columns]
    frames = []
    for combo in itertools.product(*[range(len(v)) for _, _, v, _ in columns]):
        overrides = {p: v[k] for (p, _, v, _), k in zip(columns, combo, strict=True)}
        s = load_scenario(scenario, overrides, KEYWORD)
        for seed in list(seeds) if seeds is not None else [s.scenario.seed]:
            frame = run(scenario, engine=engine, seed=seed, **overrides).summary
            params: dict[str, Any] = {}
            for (_, name, values, twin), k in zip(columns, combo, strict=True):
                params[name] = values[k]
                if twin is not None:
                    params[f"{name}_{twin[0]}"] = twin[1][k]
            params["seed"] = seed
            for i, (col, value) in enumerate(params.items()):
                # a parameter named as a flow column (cca) is param_cca, as in a store's flows
                name = f"param_{col}" if col in frame.columns and col != "seed" else col
                frame.insert(i, name, [value] * len(frame))
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def campaign(
    file: str | Path,
    out: str | Path | None = None,
    jobs: int | None = None,
    force: bool = False,
):
    """Run (or resume) a campaign file into the store `out` (default: a new temporary
    directory) as `satcc campaign` does, in parallel; returns its flows table as a tidy
    DataFrame: one row per flow per run with the run's columns (run_id, engine, seed,
    repetition, point) and the parameter columns. The store stays readable with
    `satcc.open_store(out)`; the DataFrame's `.attrs["store"]` is its directory."""
    import tempfile

    from satcc.campaign import spec
    from satcc.campaign.execute import run_campaign

    c = spec.load(file)
    where = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="satcc-campaign-"))
    run_campaign(c, where, jobs=jobs, progress=False, force=force)
    with open_store(where) as store:
        flows = store.flows()
    flows.attrs["store"] = str(where)
    return flows


def open_store(directory: str | Path):
    """A campaign directory's store: `.runs()`, `.flows()`, `.flow_series(where)`,
    `.link_series(where)` as DataFrames, `.query(sql)`, `.problems`; use it in a `with`."""
    from satcc.store.catalog import open_store as open_catalog

    return open_catalog(directory)


def analyze(*files: str | Path, bin: str = "100ms", all_flows: bool = False) -> Result:
    """Analyze captures, iperf3 JSON and ping logs (as `satcc analyze`); raises UserError with
    the CLI's one-line message for a file that cannot be read. Warnings are in
    `.extra["warnings"]`."""
    from satcc.analyze.inputs import bin_seconds, load_input
    from satcc.analyze.result import build

    bin_s = bin_seconds(bin, "satcc.analyze: keyword 'bin'")
    inputs, warnings = [], []
    for f in files:
        inp = load_input(Path(f), bin_s)
        warnings += [f"{f}: {w}" for w in getattr(inp, "warnings", [])]
        inputs.append(inp)
    if not inputs:
        raise UserError("analyze: expected at least one file")
    res = build(inputs, all_flows=all_flows)
    return Result(
        res.result, {"summary": res.summary(), "warnings": warnings, "inputs": res.inputs}
    )
