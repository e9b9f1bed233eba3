"""Shared helpers for the Python tests."""

from __future__ import annotations

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


# `make test-python` runs the suite in two phases: every module without the `kernel` mark on
# two workers (pytest-xdist), then the `kernel` modules alone, so the real-kernel tests
# (namespaces, satcc-linkd, the emulator's lock) never share the two cores with the others
# and satcc-linkd's timing is judged on a quiet machine. A module that reaches the kernel
# without the mark would run beside the others: it is refused at collection.
_KERNEL_SIGNS = re.compile(r"os\.geteuid\(\)|satcc-emu\.lock|emu_lock|testbed\.available\(\)")


def pytest_collection_modifyitems(config, items):
    signs: dict[Path, bool] = {}
    unmarked = set()
    for item in items:
        path = Path(item.path)
        if path not in signs:
            signs[path] = bool(_KERNEL_SIGNS.search(path.read_text(encoding="utf-8")))
        if signs[path] and item.get_closest_marker("kernel") is None:
            unmarked.add(path.name)
    if unmarked:
        raise pytest.UsageError(
            f"{', '.join(sorted(unmarked))}: reaches the real kernel (root, namespaces or the "
            "emulator's lock) but is not marked `pytestmark = pytest.mark.kernel`, so it would "
            "run beside the parallel tests (tests/conftest.py)"
        )
