"""python/satcc imports downward only: every module has a layer, no import runs from a lower
layer to a higher one, no modules import each other in a circle, and no packages do either
(a package, `satcc.scenario` or `satcc.report` with `report.figures`, taken as one node).

The layers are LAYERS below (docs/architecture.md shows the same table and why). How imports are read:
- every `import` and `from ... import` statement in a module, at any depth (module level,
  inside functions, inside `try`), is an edge; relative imports are resolved;
- `from satcc.pkg import name` is an edge to `satcc.pkg.name` when that is a module (a file or
  `_native`), else to `satcc.pkg` (the package's `__init__`); `from satcc import _native` is
  an edge to `satcc._native`, `from satcc import __version__` one to `satcc` (the package face);
- importing `satcc.a.b` runs `satcc/__init__` and `satcc/a/__init__` first: that is Python's
  doing and is not counted as an edge to them (the face of a package may sit above its modules);
- imports under `if TYPE_CHECKING:` count like any other: a type named from a layer above is
  a dependency on it all the same (a layer that passes along what the layer above made names
  it by a Protocol, as `satcc.registry.ScenarioLike` does).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "satcc"

# Bottom first. An entry names a module exactly, or with ".*" the package and every module in it;
# the most specific entry wins. Within a layer imports may go either way, but not in a circle.
LAYERS: list[tuple[str, list[str]]] = [
    (
        "core",
        [
            "satcc._native",
            "satcc.errors",
            "satcc.units",
            "satcc.limits",
            "satcc.resources",
            "satcc.textgrid",
            "satcc.progress",
            "satcc.timings",
            "satcc.tables",
            "satcc.physics",
        ],
    ),
    (
        "schema",  # the result columns, the scenario, the link models, the engines' declaration
        [
            "satcc.results",
            "satcc.store.schema",
            "satcc.tle",
            "satcc.linkmodels",
            "satcc.registry",
            "satcc.scenario.*",
        ],
    ),
    (
        "engines",  # the engines and what they are built from (models, emulator, analyzer, drill)
        [
            "satcc.engines.*",
            "satcc.models.*",
            "satcc.emu.*",
            "satcc.analyze.*",
            "satcc.drill.*",
        ],
    ),
    ("analysis", ["satcc.store.*", "satcc.plot", "satcc.tracefit"]),
    ("campaign", ["satcc.campaign.*"]),
    ("studies", ["satcc.fidelity.*", "satcc.field.*", "satcc.studies.*", "satcc.report.*"]),
    ("api", ["satcc.api", "satcc", "satcc._face"]),  # the notebook API and the package's face
    ("commands", ["satcc.commands.*", "satcc.cli", "satcc.__main__"]),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    mods = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    assert "satcc.scenario" in mods, PACKAGE
    return mods


def known(mods: dict[str, Path]) -> set[str]:
    return set(mods) | {"satcc._native"}


def layer_of(mod: str) -> int:
    best: tuple[int, int] | None = None  # (specificity, layer)
    for rank, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            if entry.endswith(".*"):
                pkg = entry[:-2]
                hit = mod == pkg or mod.startswith(pkg + ".")
                score = 2 * len(pkg)
            else:
                hit = mod == entry
                score = 2 * len(entry) + 1
            if hit and (best is None or score > best[0]):
                best = (score, rank)
    assert best is not None, f"{mod}: not in LAYERS (tests/test_layers.py); give it a layer"
    return best[1]


def imports_of(mod: str, path: Path, names: set[str]) -> list[tuple[str, int]]:
    """(imported satcc module, line) for every import statement in `path` (see the docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                targets.append(full if full in names else base)
        for t in targets:
            if t != "satcc" and not t.startswith("satcc."):
                continue
            while t not in names:  # `import satcc.a.b.c` where c is a name: the module a.b
                t = t.rpartition(".")[0]
            if t != mod:
                found.append((t, node.lineno))
    return found


def graph() -> dict[str, list[tuple[str, int]]]:
    mods = package_modules()
    names = known(mods)
    return {m: imports_of(m, p, names) for m, p in mods.items()}


def test_every_module_has_a_layer():
    for mod in package_modules():
        layer_of(mod)


def test_no_import_runs_from_a_lower_layer_to_a_higher_one():
    upward = []
    for mod, edges in graph().items():
        for target, line in edges:
            if layer_of(target) > layer_of(mod):
                upward.append(
                    f"{mod}:{line} ({LAYERS[layer_of(mod)][0]}) imports {target} "
                    f"({LAYERS[layer_of(target)][0]})"
                )
    assert upward == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_modules_import_each_other_in_a_circle():
    edges = {m: {t for t, _ in e} for m, e in graph().items()}
    assert cycles(edges) == []


def package_of(mod: str) -> str:
    """The node a module is in the package graph: `satcc.a` for every module under the package
    satcc/a/, else the module itself (`satcc.units`, `satcc` the face)."""
    parts = mod.split(".")
    if len(parts) > 1 and (PACKAGE / parts[1]).is_dir():
        return ".".join(parts[:2])
    return mod


def package_graph(
    modules: dict[str, list[tuple[str, int]]],
) -> tuple[dict[str, set[str]], dict[tuple[str, str], list[str]]]:
    """Edges between packages (and top-level modules), with the imports behind each edge."""
    edges: dict[str, set[str]] = {}
    why: dict[tuple[str, str], list[str]] = {}
    for mod, imports in modules.items():
        for target, line in imports:
            a, b = package_of(mod), package_of(target)
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), []).append(f"{mod}:{line} imports {target}")
    return edges, why


def test_no_packages_import_each_other_in_a_circle():
    """Modules may keep to their layers while their packages loop (scenario.schema -> registry
    in engines/, engines.sim -> scenario): a package is one node here, and no circle may pass
    through two of them."""
    edges, why = package_graph(graph())
    circles = cycles(edges)
    ties = [
        f"{a} -> {b}: {why[(a, b)][0]}"
        for circle in circles
        for a in circle
        for b in sorted(edges.get(a, ()))
        if b in circle
    ]
    assert circles == [], ties


def test_the_checker_sees_what_it_must(tmp_path):
    """The reader and the circle finders on small inputs: a function-level import counts, so
    does a TYPE_CHECKING one, `from satcc import x` names the module x when x is one, and a
    loop between two packages is a circle though no two modules form one."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    names = {"satcc", "satcc.x", "satcc.y", "satcc.pkg", "satcc.pkg.z", "satcc._native"}
    src = (
        "from typing import TYPE_CHECKING\n"
        "from satcc import _native, __version__\n"
        "if TYPE_CHECKING:\n    from satcc.y import T\n"
        "def f():\n    from satcc.pkg import z\n    from . import y\n"
        "import satcc.pkg.z.attr\n"
    )
    probe = tmp_path / "x.py"
    probe.write_text(src, encoding="utf-8")
    got = imports_of("satcc.x", probe, names)
    assert sorted(got) == [
        ("satcc", 2),
        ("satcc._native", 2),
        ("satcc.pkg.z", 6),
        ("satcc.pkg.z", 8),
        ("satcc.y", 4),
        ("satcc.y", 7),
    ]
    # schema -> engines.registry and engines.sim -> config -> schema: no circle of modules
    looping = {
        "satcc.scenario.schema": [("satcc.engines.registry", 1)],
        "satcc.engines.registry": [],
        "satcc.engines.sim": [("satcc.scenario.config", 2)],
        "satcc.scenario.config": [("satcc.scenario.schema", 3)],
    }
    assert cycles({m: {t for t, _ in e} for m, e in looping.items()}) == []
    edges, why = package_graph(looping)
    assert cycles(edges) == [["satcc.engines", "satcc.scenario"]]
    assert why[("satcc.scenario", "satcc.engines")] == [
        "satcc.scenario.schema:1 imports satcc.engines.registry"
    ]
