"""Shared helpers for the Python tests."""

from __future__ import annotations

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
