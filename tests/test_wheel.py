"""satcc as a user installs it (issue 32; docs/packaging.md): the wheel of `make dist` in a fresh
virtual environment outside the checkout, every command run from an empty directory.

The wheel tests need SATCC_TEST_WHEEL, the directory `make dist` wrote (`make test` sets it);
without it they are skipped. The fresh venv gets the wheel with `pip install --no-deps
--no-index` and satcc's dependencies through a .pth naming the running interpreter's
site-packages (offline and in seconds; that directory holds no satcc itself, the checkout's
satcc is reached only through its own .pth, which Python does not follow from a path entry).
`test_wheel_emu` needs root and the tools of `satcc emu doctor`; by hand run it under
`flock /tmp/satcc-emu.lock` like the other real-kernel tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "python" / "satcc" / "data"
WHEEL_DIR = os.environ.get("SATCC_TEST_WHEEL")
needs_wheel = pytest.mark.skipif(not WHEEL_DIR, reason="SATCC_TEST_WHEEL unset (make dist)")


def _tracked(*patterns: str) -> set[str]:
    out = subprocess.run(
        ["git", "ls-files", *patterns], cwd=REPO, capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def test_package_data_links_match_the_checkout():
    """python/satcc/data mirrors scenarios/, campaigns/ and bpf/'s sources, one link per file."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    want = _tracked("scenarios", "campaigns", "bpf/*.c", "bpf/*.h")
    links = {p.relative_to(DATA).as_posix(): p for p in DATA.rglob("*") if p.is_symlink()}
    assert set(links) == want, "run `make package-data` (python/satcc/data is out of date)"
    for rel, link in links.items():
        assert link.resolve() == (REPO / rel).resolve(), rel
        assert not os.path.isabs(os.readlink(link)), f"{rel}: absolute link"


def _wheel() -> Path:
    wheels = sorted(Path(WHEEL_DIR).glob("satcc-*.whl"))
    assert len(wheels) == 1, f"expected one satcc wheel in {WHEEL_DIR}, found {wheels}"
    return wheels[0]


@needs_wheel
def test_wheel_holds_everything():
    wheel = _wheel()
    assert "-cp311-abi3-" in wheel.name, wheel.name
    assert Path(
        WHEEL_DIR, wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".tar.gz"
    ).is_file()
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert "satcc/_native.abi3.so" in names
        linkd = z.getinfo("satcc/bin/satcc-linkd")
        assert (linkd.external_attr >> 16) & 0o111, "satcc-linkd is not executable"
        assert "satcc/report/templates/report.html.j2" in names
        assert "satcc/studies/data/study004.toml" in names
        assert any(n.startswith("satcc/data/captures/") and n.endswith(".pcap") for n in names)
        # every linked file is in the wheel with the bytes it points to
        for rel in sorted(
            p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_symlink()
        ):
            assert z.read(f"satcc/data/{rel}") == (REPO / rel).read_bytes(), rel
        assert not [n for n in names if n.startswith(("scenarios/", "campaigns/", "bpf/"))]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    if not WHEEL_DIR:
        pytest.skip("SATCC_TEST_WHEEL unset (make dist)")
    root = tmp_path_factory.mktemp("wheel-venv")
    assert not root.resolve().is_relative_to(REPO.resolve())
    env_dir = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # pip from the running interpreter installs into the fresh venv (--python, pip >= 22.3)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(_wheel()),
        ],
        check=True,
    )
    deps = sysconfig.get_paths()["purelib"]
    Path(purelib, "satcc-test-deps.pth").write_text(deps + "\n")
    return env_dir


def _run(venv: Path, cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SATCC_", "VIRTUAL"))}
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env["MPLBACKEND"] = "Agg"
    p = subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert p.returncode == 0, (
        f"{' '.join(args)} -> {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    )
    return p


@pytest.fixture
def empty(tmp_path) -> Path:
    d = tmp_path / "empty"
    d.mkdir()
    return d


@needs_wheel
def test_installed_satcc_is_the_wheel(venv, empty):
    p = _run(
        venv,
        empty,
        str(venv / "bin" / "python"),
        "-c",
        "import satcc, satcc.resources as r; print(satcc.__file__); print(r.linkd_binary())",
    )
    here, linkd = p.stdout.split()
    assert Path(here).is_relative_to(venv), here
    assert Path(linkd).is_file() and os.access(linkd, os.X_OK)
    assert not Path(here).resolve().is_relative_to(REPO.resolve())


@needs_wheel
def test_wheel_demo_scenarios_analyze(venv, empty):
    satcc = str(venv / "bin" / "satcc")
    p = _run(venv, empty, satcc, "demo")
    assert "demo-geo" in p.stdout and (empty / "out" / "demo" / "demo-geo" / "plot.png").is_file()
    listing = _run(venv, empty, satcc, "scenarios").stdout
    assert "demo-geo" in listing and "CUBIC, BBR and Reno" in listing
    _run(venv, empty, satcc, "scenarios", "copy", "demo-geo")
    copied = empty / "demo-geo.toml"
    assert copied.read_bytes() == (REPO / "scenarios" / "demo-geo.toml").read_bytes()
    _run(venv, empty, satcc, "check", "demo-geo.toml")
    # the README's paths work from any directory (a shipped name when no such file is here)
    _run(
        venv,
        empty,
        satcc,
        "sim",
        "scenarios/starlink-residential.toml",
        "--set",
        "scenario.duration=2 s",
        "--out",
        "out/res",
    )
    assert (empty / "out" / "res" / "summary.json").is_file()
    caps = sorted((venv / "lib").glob("python3*/site-packages/satcc/data/captures/*.pcap"))
    assert caps, "no shipped capture"
    p = _run(venv, empty, satcc, "analyze", str(caps[0]), "--out", "out/cap")
    assert "TCP" in p.stdout + p.stderr and (empty / "out" / "cap" / "summary.json").is_file()


@needs_wheel
def test_wheel_reproduce_004_quick(venv, empty):
    p = _run(venv, empty, str(venv / "bin" / "satcc"), "reproduce", "004", "--quick", timeout=900)
    assert "004" in p.stdout


@needs_wheel
@pytest.mark.skipif(
    os.geteuid() != 0 or any(shutil.which(t) is None for t in ("ip", "iperf3", "bpftool", "clang")),
    reason="the emulator with a BPF congestion control needs root, iproute2, iperf3, bpftool, clang",
)
def test_wheel_emu(venv, empty):
    """3 s of the real kernel through the packaged satcc-linkd, with the packaged BPF hybla."""
    satcc = str(venv / "bin" / "satcc")
    doctor = _run(venv, empty, satcc, "emu", "doctor").stdout
    assert "(the installed package) runs" in doctor, doctor
    assert "loaded and removed: " in doctor and "hybla" in doctor.split("loaded and removed: ")[1]
    _run(
        venv,
        empty,
        satcc,
        "try",
        "--engine",
        "emu",
        "--rate",
        "10Mbit/s",
        "--rtt",
        "40ms",
        "--cca",
        "hybla",
        "--duration",
        "3s",
        "--out",
        "out/emu",
        timeout=300,
    )
    flows = json.loads((empty / "out" / "emu" / "summary.json").read_text())["flows"]
    assert [f["cca"] for f in flows] == ["hybla"] and flows[0]["goodput_bps"] > 1e6, flows
