"""satcc's PEP 517 build backend: maturin's, with satcc-linkd built first.

maturin builds the Python extension (crates/satcc-py) only; `satcc emu` and `satcc fidelity`
also need satcc-linkd, a program of its own (crates/satcc-emu). So building a wheel from a
source tree or from the sdist (`pip install satcc-VERSION.tar.gz`, `pip install .`) first
builds it with cargo, in the same release profile, and puts it where `[tool.maturin] include`
takes it into the wheel (python/satcc/bin/satcc-linkd). Everything else is maturin's hook,
unchanged. `make dist` calls maturin itself, with satcc-linkd built by zig for glibc 2.28
(docs/packaging.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import maturin
from maturin import (  # noqa: F401 - the hooks this backend passes through unchanged
    build_editable,
    build_sdist,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parents[1]
LINKD = ROOT / "python" / "satcc" / "bin" / "satcc-linkd"


def build_linkd() -> Path:
    """cargo build --release of satcc-linkd, copied to python/satcc/bin/; its path there."""
    cargo = os.environ.get("CARGO", "cargo")
    cmd = [cargo, "build", "--release", "-p", "satcc-emu", "--bin", "satcc-linkd"]
    out = subprocess.run(
        [*cmd, "--message-format=json-render-diagnostics"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"satcc: building satcc-linkd failed: {' '.join(cmd)} (see above)")
    built = [
        m["executable"]
        for m in map(json.loads, out.stdout.splitlines())
        if m.get("reason") == "compiler-artifact" and m.get("executable")
    ]
    if not built:
        raise SystemExit(f"satcc: {' '.join(cmd)} named no satcc-linkd executable")
    LINKD.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built[-1], LINKD)
    LINKD.chmod(0o755)
    return LINKD


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    build_linkd()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
