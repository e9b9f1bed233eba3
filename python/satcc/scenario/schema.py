"""The scenario's Python face: its defaults and limits as satcc-core declares them, and
`Scenario`, the read-only view of a file satcc-core read (`scenario::file`: the tables, their
types and units, every check). Nothing here checks a value: the Rust reader did."""

from __future__ import annotations

from collections import namedtuple

from satcc import _native

TYPE_CHECKING = False  # typing is for type checkers: ~15 M instructions a run (test_cli_imports)
if TYPE_CHECKING:
    from typing import Any

# The defaults are declared once, in satcc-core (`scenario::build`, where each says where it
# comes from: Linux's tcp_rmem[2], TCP_INIT_CWND, TCP_RTO_MIN, txqueuelen ...); here they are
# written as a scenario file would write them.
_NATIVE_DEFAULTS = _native.scenario_defaults()
DEFAULT_BIN = f"{_NATIVE_DEFAULTS['bin_ns'] // 1_000_000} ms"
DEFAULT_SEED = _NATIVE_DEFAULTS["seed"]
DEFAULT_QUEUE = f"{_NATIVE_DEFAULTS['queue_pkts']} pkt"
DEFAULT_MSS = _NATIVE_DEFAULTS["mss"]
DEFAULT_RWND = f"{_NATIVE_DEFAULTS['rwnd_bytes'] >> 20} MiB"
DEFAULT_INITIAL_CWND = _NATIVE_DEFAULTS["initial_cwnd"]
DEFAULT_MIN_RTO = f"{_NATIVE_DEFAULTS['min_rto_ns'] // 1_000_000} ms"
MIN_MSS = _NATIVE_DEFAULTS["min_mss"]  # Linux TCP_MIN_MSS (satcc-core scenario.rs)
MAX_MSS = _NATIVE_DEFAULTS["max_mss"]  # the largest IPv4 datagram less IP and TCP headers
MAX_SEED = 2**64 - 1  # the simulator's RNG seed is a u64
# The keys each table accepts: the Rust tables' fields (docs/scenario.md lists them).
TABLE_KEYS: dict[str, list[str]] = _native.scenario_keys()


class Table:
    """One table of a read scenario, read-only: its keys as attributes (`from` is `from_`),
    values in base units (ns, bit/s, bytes; a queue as {"packets"|"bytes"|"bdp": n})."""

    __slots__ = ("_d",)

    def __init__(self, d: dict[str, Any]):
        object.__setattr__(self, "_d", d)

    def __getattr__(self, key: str) -> Any:
        d = object.__getattribute__(self, "_d")
        k = key.removesuffix("_")
        if k not in d:
            raise AttributeError(key)
        v = d[k]
        return Table(v) if isinstance(v, dict) and k in ("seqack",) else v

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("a scenario is read-only: edit the document and load it again")

    def __repr__(self) -> str:
        return f"Table({self._d!r})"

    def to_dict(self) -> dict[str, Any]:
        return dict(self._d)


class Scenario:
    """A read, checked scenario (`satcc.scenario.load`/`loads`/`from_dict`), read-only:
    `scenario`, `links`, `flows` (tables in base units), `name`, `nodes` (in order of first
    appearance in the links), `source` (the file, for messages)."""

    __slots__ = ("_file", "flows", "links", "name", "nodes", "scenario", "source")

    def __init__(self, file: _native.ScenarioFile, source: str):
        view = file.view()
        set_ = object.__setattr__
        set_(self, "_file", file)
        set_(self, "source", source)
        set_(self, "name", view["name"])
        set_(self, "nodes", view["nodes"])
        set_(
            self,
            "scenario",
            Table({**view["scenario"], "seed": view["seed"], "name": view["name"]}),
        )
        set_(self, "links", [Table(x) for x in view["links"]])
        set_(self, "flows", [Table(x) for x in view["flows"]])

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("a scenario is read-only: edit the document and load it again")

    def __repr__(self) -> str:
        return f"<Scenario {self.name!r} from {self.source}>"


# Neither a dataclass (`satcc check` imports no inspect, ast, dis) nor a typing.NamedTuple
# (`satcc sim` imports no typing)
class FlowOrigin(namedtuple("FlowOrigin", ("id", "scenario_flow", "copy", "name"))):
    """Where a resolved flow came from: its id (int), the [[flow]] index (int), the copy's
    number (int) and its name (str)."""

    __slots__ = ()


def expand_flows(s: Scenario) -> list[FlowOrigin]:
    """One entry per resolved flow, ids consecutive in file order (copies of a `count` flow
    are adjacent). A flow's name is its `name` key or "flow<i>"; copies get ".<k>"."""
    return [
        FlowOrigin(id=k, scenario_flow=i, copy=c, name=name)
        for k, (i, c, name) in enumerate(s._file.origins())
    ]
