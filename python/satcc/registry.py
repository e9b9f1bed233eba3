"""The engines behind one interface, and the one place that knows them.

    get("sim") ──► Engine(name, capabilities) ──.run(scenario, RunOptions) ──► RunResult

Every command, the notebook API (`satcc.run`), the campaign worker, `satcc fidelity` and the
studies find an engine here by name and decide by its capabilities, not by its name
(`get(name).real_time`, `names(packets=True)`): tests/test_engines_registry.py fails on a
comparison with an engine's name or a list of engine names outside engines/, and on a root
check outside the registry, the emulator and the tools that are no engine (packetdrill's kernel
side, field captures, the analyzer's test bed). The engine's module is imported on the
first `run` (or budget check), not when the registry is read, so `satcc --help` and `satcc
check` do not pay for NumPy, the emulator or the native simulator. The registry sits below the
scenario (docs/architecture.md): it names engine modules by their dotted path, a plugin table.

Capabilities are what callers used to hard-code per name:
| field          | meaning                                                                  |
|----------------|--------------------------------------------------------------------------|
| needs_root     | runs only as root (namespaces, real kernel)                              |
| exclusive      | uses this host's kernel and clock: a campaign runs it alone, here        |
| deterministic  | same scenario and seed give the same bytes                               |
| real_time      | runs at wall-clock speed: link rates are bounded by this machine         |
| kernel_tcp     | its TCP is this host's Linux kernel (BPF CCAs, sysctls)                  |
| packets        | moves every packet over the links: cwnd, RTT and queue over time, what   |
|                | the studies and `satcc fidelity` measure (the model engine: closed forms) |
| budget         | what the engine module's `check_budget` counts: "packets", "memory", None |
| out_suffix     | the default result directory is out/<scenario name><out_suffix>           |
| keeps_raw      | writes raw material (captures, reports) into RunOptions.raw_dir           |
| captures       | writes packet captures at RunOptions.capture_points into raw_dir/<name>/  |

`satcc analyze` (captures, iperf3 JSON, ping logs) answers files, not scenarios; it is not an
`Engine` here, and campaigns name it with `campaign.spec.ANALYZE`.
"""

from __future__ import annotations

import importlib
import os
from collections import namedtuple

from satcc.errors import UserError

# typing is for type checkers only: the scenario reader imports this module, and typing costs
# every command ~15 M instructions (tests/test_cli_imports.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from satcc.results import RunResult

    class ScenarioLike(Protocol):
        """What the registry hands an engine: a validated `satcc.scenario.Scenario`. The
        scenario sits above the registry (it checks its `engine` key against `NAMES`), and the
        registry reads nothing of it, so it names the type by this protocol instead of
        importing it."""

    class Engine(Protocol):
        """What a caller may rely on; `EngineSpec` below is the one implementation."""

        name: str
        needs_root: bool
        deterministic: bool

        def run(self, scenario: ScenarioLike, opts: RunOptions | None = None) -> RunResult: ...


# RunOptions and EngineSpec are collections.namedtuples (read-only as frozen dataclasses were):
# dataclasses would cost `satcc check` inspect, ast and dis, typing.NamedTuple `satcc sim` typing.
# RunOptions' fields, each with its default, and what they hold:
_RUN_OPTIONS = {
    "seed": None,  # int | None: instead of the scenario's own
    "progress": None,  # Callable[[float], None] | None: called with the fraction done
    "raw_dir": None,  # str | Path | None: keeps_raw engines' result directory (raw in DIR/emu)
    "capture": True,  # emu: run tcpdump
    # `captures` engines: the points to capture at ("NODE" or "FROM:TO"), into raw_dir/<engine>
    "capture_points": (),
    "vpn_server": None,  # str | None; emu: carry every flow through OpenVPN via this node
    "spin_ns": None,  # int | None; emu: satcc-linkd's busy-wait before a deadline
    "rt_priority": None,  # int | None; emu: satcc-linkd's SCHED_FIFO priority
    # int | None; emu: the CPU wake-up latency (µs) satcc-linkd asks the kernel's PM QoS for
    # while it runs (0: idle CPUs poll; None: no request)
    "cpu_latency_us": 0,
}


class RunOptions(namedtuple("RunOptions", _RUN_OPTIONS, defaults=_RUN_OPTIONS.values())):
    """How to run: what every engine accepts (an engine ignores what it has no use for)."""

    __slots__ = ()


_ENGINE_SPEC = ("name", "summary", "module")  # str each; the module is imported on first use
# The capabilities (the table above) and their defaults
_ENGINE_CAPABILITIES = {
    "needs_root": False,
    "deterministic": True,
    "exclusive": False,
    "real_time": False,
    "kernel_tcp": False,
    "packets": False,
    "budget": None,  # "packets" | "memory" | None
    "out_suffix": "",
    "keeps_raw": False,
    "captures": False,
    "preflight": None,  # "module:function" called before a run (root checks)
}


class EngineSpec(
    namedtuple(
        "EngineSpec",
        (*_ENGINE_SPEC, *_ENGINE_CAPABILITIES),
        defaults=_ENGINE_CAPABILITIES.values(),
    )
):
    """An engine: its name, a one-line summary, its module and its capabilities."""

    __slots__ = ()

    def load(self) -> Any:
        return importlib.import_module(self.module)

    def run(self, scenario: ScenarioLike, opts: RunOptions | None = None) -> RunResult:
        """Run `scenario`; errors are the engine's (UserError for bad input), or this host's
        (`check_host`) before anything is touched."""
        opts = opts if opts is not None else RunOptions()
        self.check_host()
        mod = self.load()
        kwargs: dict[str, Any] = {"seed": opts.seed, "progress": opts.progress}
        if self.keeps_raw:
            kwargs |= {
                "out_dir": opts.raw_dir,
                "capture": opts.capture,
                "vpn_server": opts.vpn_server,
                "spin_ns": opts.spin_ns,
                "rt_priority": opts.rt_priority,
                "cpu_latency_us": opts.cpu_latency_us,
            }
        if self.captures:  # the points given, else the scenario's own `capture` key
            kwargs |= {"out_dir": opts.raw_dir, "capture_points": opts.capture_points}
        elif opts.capture_points:
            raise UserError(
                f"capture: the {self.name} engine writes no packet captures (engines that do: "
                f"{', '.join(names(captures=True))})"
            )
        return mod.run(scenario, **kwargs)

    def check_budget(self, scenario: ScenarioLike, seed: int | None, force: bool) -> None:
        """Refuse a run above a soft limit unless `force`: the engine module's `check_budget`
        (satcc.engines.sim.check_budget counts `budget`)."""
        if self.budget is None:
            return
        self.load().check_budget(scenario, seed=seed, force=force)

    def runnable_here(self) -> bool:
        """Whether this host can run the engine as this user (root for `needs_root`)."""
        return not self.needs_root or os.geteuid() == 0

    def check_host(self) -> None:
        """Raise before anything is touched when this host cannot run the engine (root)."""
        if self.preflight is not None:
            module, _, func = self.preflight.partition(":")
            getattr(importlib.import_module(module), func)()


ENGINES: dict[str, EngineSpec] = {
    e.name: e
    for e in (
        EngineSpec(
            "sim",
            "the deterministic packet simulator",
            "satcc.engines.sim",
            packets=True,
            budget="packets",
            captures=True,
        ),
        EngineSpec(
            "model",
            "the analytical models (closed forms per flow)",
            "satcc.engines.model",
            budget="memory",
            out_suffix="-model",
        ),
        EngineSpec(
            "emu",
            "the real Linux TCP stack in network namespaces (root)",
            "satcc.engines.emu",
            needs_root=True,
            deterministic=False,
            exclusive=True,
            real_time=True,
            kernel_tcp=True,
            packets=True,
            out_suffix="-emu",
            keeps_raw=True,
            preflight="satcc.emu.host:require_root",
        ),
    )
}
NAMES: tuple[str, ...] = tuple(ENGINES)
DEFAULT = "sim"


CAPABILITIES = frozenset(EngineSpec._fields) - {
    "name",
    "summary",
    "module",
    "preflight",
}


def names(**capabilities: object) -> tuple[str, ...]:
    """The engines' names in registry order; with capabilities, those that have these values:
    `names(needs_root=False)`, `names(packets=True, kernel_tcp=False)`."""
    unknown = sorted(set(capabilities) - CAPABILITIES)
    if unknown:
        raise TypeError(f"names(): no capability {', '.join(unknown)}")
    return tuple(
        n
        for n, e in ENGINES.items()
        if all(getattr(e, key) == value for key, value in capabilities.items())
    )


def get(name: str, where: str = "engine") -> EngineSpec:
    """The engine called `name`; an unknown name is a UserError listing the known ones."""
    try:
        return ENGINES[name]
    except (KeyError, TypeError):
        raise UserError(f"{where}: expected one of {', '.join(NAMES)}, found {name!r}") from None


def run(name: str, scenario: ScenarioLike, opts: RunOptions | None = None) -> RunResult:
    """`get(name).run(scenario, opts)`: the one dispatch."""
    return get(name).run(scenario, opts)
