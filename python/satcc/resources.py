"""The files satcc ships inside its package, found beside this module.

Every command that reads a file satcc provides (a ready scenario, a study's campaign file, the
fidelity grid, the BPF sources, the example capture, satcc-linkd) asks this module, so the same
code works from a wheel installed anywhere and from the development checkout:

    satcc/data/scenarios/   the ready scenarios (the checkout's scenarios/, one link per file)
    satcc/data/campaigns/   the studies' campaign files (the checkout's campaigns/)
    satcc/data/bpf/         the BPF congestion controls' C sources (compiled on first use)
    satcc/data/captures/    an example capture for `satcc analyze`
    satcc/bin/satcc-linkd   the link emulator (put there by `make dist`; docs/packaging.md)

In the checkout the data entries are symbolic links to the top-level files (scenarios/,
campaigns/, bpf/ stay where they are); maturin copies the files they point to into the wheel.
The study reference data and the report templates live in their own subpackages
(satcc/studies/data, satcc/report/templates) and are read there the same way.
"""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

LINKD_NAME = "satcc-linkd"
# The package's directory. What importlib.resources.files("satcc") answers for a package
# installed unpacked (a wheel, an editable install), without the ~20 M instructions of
# importing it on every command; satcc's native module cannot be imported from a zip anyway.
PACKAGE_DIR = Path(__file__).parent


def _package_path(*parts: str) -> Path:
    """A directory or file of the installed package as a real path."""
    return PACKAGE_DIR.joinpath(*parts)


def data_dir() -> Path:
    return _package_path("data")


def scenarios_dir() -> Path:
    return data_dir() / "scenarios"


def campaigns_dir() -> Path:
    return data_dir() / "campaigns"


def fidelity_grid() -> Path:
    return scenarios_dir() / "fidelity" / "grid.toml"


def bpf_dir() -> Path:
    return data_dir() / "bpf"


def captures_dir() -> Path:
    return data_dir() / "captures"


def checkout() -> Path | None:
    """The development checkout this package runs from (python/satcc/ beside crates/), or None
    for an installed package."""
    root = _package_path().parent.parent
    return root if (root / "crates" / "satcc-emu" / "Cargo.toml").is_file() else None


def linkd_binary() -> Path:
    """Where the package keeps satcc-linkd (it may be absent: an sdist or a checkout)."""
    return _package_path("bin", LINKD_NAME)


# collections.namedtuple, not typing.NamedTuple: `satcc sim` imports no typing
class Shipped(namedtuple("Shipped", ("name", "description", "path"))):
    """One ready scenario: its name (str, the file name without .toml), description (str) and
    file (Path)."""

    __slots__ = ()


def _description(path: Path) -> str:
    """`scenario.description`, else the file's first comment line."""
    import tomllib

    try:
        text = path.read_text()
        doc = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return f"(unreadable: {e})"
    desc = doc.get("scenario", {}).get("description") or next(
        (line.lstrip("# ") for line in text.splitlines() if line.startswith("#")), ""
    )
    return " ".join(str(desc).split())


def shipped_scenarios() -> list[Shipped]:
    """The ready scenarios at the top of scenarios/ (the fidelity grid's are listed as
    `fidelity/NAME`), sorted by name."""
    root = scenarios_dir()
    files = sorted(root.glob("*.toml")) + sorted((root / "fidelity").glob("*.toml"))
    out = []
    for p in files:
        name = p.relative_to(root).with_suffix("").as_posix()
        if name == "fidelity/grid":
            continue  # the grid is a list of scenarios, not one
        out.append(Shipped(name, _description(p), p))
    return sorted(out, key=lambda s: ("/" in s.name, s.name))


def shipped_scenario(name: str) -> Shipped | None:
    """The shipped scenario called NAME (with or without .toml, or scenarios/NAME.toml)."""
    key = name.removesuffix(".toml").removeprefix("scenarios/")
    for s in shipped_scenarios():
        if s.name == key:
            return s
    return None


def scenario_path(arg: str | Path) -> Path:
    """ARG as given when it names a file; else the shipped scenario of that name (`demo-geo`,
    `demo-geo.toml` or `scenarios/demo-geo.toml`, so the README's paths work from any
    directory); else ARG unchanged (the caller reports the missing file)."""
    p = Path(arg)
    if p.exists():
        return p
    s = shipped_scenario(str(arg))
    return s.path if s is not None else p
