"""Shared helpers for the Python tests."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def write_toml(tmp_path: Path):
    """Write TOML text to a file in tmp_path and return its path."""

    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


# `make test-python` runs the suite in two phases: every test without the `kernel` mark on two
# workers (pytest-xdist), then the `kernel` tests alone, so the real-kernel tests (namespaces,
# satcc-linkd, the emulator's lock) never share the two cores with the others and satcc-linkd's
# timing is judged on a quiet machine. The mark is per test: a test that reaches the kernel
# without it would run beside the others, so it is refused at collection. A test reaches the
# kernel when a sign below is in its text (decorators included), in a module-level name it uses
# (the module's `pytestmark`, a `needs_root = pytest.mark.skipif(...)`, a helper function, a
# name imported from another tests module; followed through, name by name) or in a fixture it
# requests. The few tests that judge real time on loopback (a write's lateness, a signal while
# workers start) carry the mark by hand.
_KERNEL_SIGNS = re.compile(r"os\.geteuid\(\)|satcc-emu\.lock|emu_lock|testbed\.available\(\)")


class _Module:
    """A tests module's top-level names, each with whether it reaches the kernel."""

    def __init__(self, path: Path):
        text = path.read_text(encoding="utf-8")
        self.lines = text.splitlines()
        self.tree = ast.parse(text)
        self.tops: dict[str, ast.AST] = {}
        self.imports: dict[str, tuple[str, str]] = {}  # name: (tests module, its name there)
        for node in self.tree.body:
            for name in _defined(node):
                self.tops[name] = node
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests."):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)
        self.reaches: dict[str, bool] = {}

    def text(self, node: ast.AST) -> str:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(d.lineno for d in decorators)])
        return "\n".join(self.lines[first - 1 : node.end_lineno])

    def node_reaches(self, node: ast.AST, seen: set[str]) -> bool:
        if _KERNEL_SIGNS.search(self.text(node)):
            return True
        local = _local(node)
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Name)
                and sub.id not in local
                and self.name_reaches(sub.id, seen)
            ):
                return True
            if (
                isinstance(sub, ast.ImportFrom)
                and (sub.module or "").startswith("tests.")
                and any(_imported(sub.module, a.name) for a in sub.names)
            ):
                return True
        return False

    def name_reaches(self, name: str, seen: set[str]) -> bool:
        if name in self.imports:
            return _imported(*self.imports[name])
        if name not in self.reaches:
            if name not in self.tops or name in seen:
                return False  # a cycle adds nothing the other names do not
            self.reaches[name] = self.node_reaches(self.tops[name], seen | {name})
        return self.reaches[name]

    def test_reaches(self, item: pytest.Item) -> bool:
        name = getattr(item, "originalname", item.name)
        cls = getattr(item, "cls", None)
        node = self.tops.get(cls.__name__ if cls else name)
        if cls is not None and node is not None:
            node = next((n for n in node.body if name in _defined(n)), node)
        if node is None:  # not a plain function (generated): judge the whole module
            return any(self.name_reaches(n, set()) for n in self.tops)
        return self.name_reaches("pytestmark", set()) or self.node_reaches(node, set())


def _defined(node: ast.AST) -> list[str]:
    """The names a top-level statement binds (imports aside: see `_Module.imports`)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return []
    targets = {
        ast.Assign: lambda n: n.targets,
        ast.AnnAssign: lambda n: [n.target],
        ast.AugAssign: lambda n: [n.target],
    }.get(type(node), lambda n: [n])(node)
    return [
        n.id
        for t in targets
        for n in _walk_scope(t)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]


def _walk_scope(node: ast.AST):
    """ast.walk, not entering comprehensions, lambdas or nested functions (their own scopes)."""
    scopes = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)
    scopes += (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, scopes)]


def _local(node: ast.AST) -> set[str]:
    """A function's own names (arguments and assignments), which shadow the module's."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    args = node.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for stmt in node.body:
        for n in _walk_scope(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


_MODULES: dict[Path, _Module] = {}


def _module(path: Path) -> _Module:
    if path not in _MODULES:
        _MODULES[path] = _Module(path)
    return _MODULES[path]


def _imported(module: str, name: str) -> bool:
    """Whether `name` of tests module `module` ("tests.test_x") reaches the kernel."""
    path = Path(__file__).parent.joinpath(*module.split(".")[1:]).with_suffix(".py")
    return path.is_file() and _module(path).name_reaches(name, set())


def _fixtures_reach(item: pytest.Item) -> bool:
    here = Path(__file__).parent
    for defs in item._fixtureinfo.name2fixturedefs.values():
        for fixturedef in defs:
            func = inspect.unwrap(fixturedef.func)
            path = Path(inspect.getfile(func))
            if path.parent == here and _module(path).name_reaches(func.__name__, set()):
                return True
    return False


def pytest_collection_modifyitems(config, items):
    unmarked = [
        item.nodeid
        for item in items
        if item.get_closest_marker("kernel") is None
        and (_module(Path(item.path)).test_reaches(item) or _fixtures_reach(item))
    ]
    if unmarked:
        raise pytest.UsageError(
            f"{', '.join(unmarked)}: reaches the real kernel (root, namespaces or the emulator's "
            "lock) but is not marked `@pytest.mark.kernel`, so it would run beside the parallel "
            "tests (tests/conftest.py)"
        )
