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
import re
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


# The oldest glibc the wheel may need (docs/packaging.md): RHEL/Rocky 8, Ubuntu 20.04 has 2.31
MAX_GLIBC = (2, 28)


def _glibc_needed(elf: bytes) -> tuple[int, int]:
    """The newest GLIBC_x.y symbol version an ELF file needs (its version-needs section)."""
    import io

    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerNeedSection

    versions = [(2, 0)]
    for sec in ELFFile(io.BytesIO(elf)).iter_sections():
        if isinstance(sec, GNUVerNeedSection):
            for _, auxes in sec.iter_versions():
                for aux in auxes:
                    if aux.name.startswith("GLIBC_2."):
                        versions.append(tuple(int(x) for x in aux.name[6:].split(".")[:2]))
    return max(versions)


@needs_wheel
def test_wheel_installs_on_glibc_2_28():
    """The platform tag is manylinux_2_28 or older, auditwheel agrees (it reads the symbol
    versions the native module needs), and neither it nor satcc-linkd needs a GLIBC symbol
    newer than 2.28."""
    wheel = _wheel()
    tag = wheel.name.removesuffix(".whl").split("-")[-1]
    assert tag.startswith("manylinux_"), wheel.name
    major, minor, _arch = tag.removeprefix("manylinux_").split("_", 2)
    assert (int(major), int(minor)) <= MAX_GLIBC, wheel.name
    shown = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(wheel)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    policy = " ".join(shown.split())
    assert f'is consistent with the following platform tag: "{tag}"' in policy, shown
    with zipfile.ZipFile(wheel) as z:
        for name in ("satcc/_native.abi3.so", "satcc/bin/satcc-linkd"):
            assert _glibc_needed(z.read(name)) <= MAX_GLIBC, name


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


def _fresh_venv(root: Path, archive: Path, *pip_flags: str, env=None) -> Path:
    """A venv under `root` with `archive` (wheel or sdist) installed and satcc's dependencies
    reached through a .pth naming the running venv's site-packages (offline)."""
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
    deps = sysconfig.get_paths()["purelib"]
    Path(purelib, "satcc-test-deps.pth").write_text(deps + "\n")
    # pip from the running interpreter installs into the fresh venv (--python, pip >= 22.3)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps"]
        + ["--no-index", *pip_flags, str(archive)],
        check=True,
        env=env,
    )
    return env_dir


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    if not WHEEL_DIR:
        pytest.skip("SATCC_TEST_WHEEL unset (make dist)")
    return _fresh_venv(tmp_path_factory.mktemp("wheel-venv"), _wheel())


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
    # the README's other commands, as written there (shorter runs)
    _run(venv, empty, satcc, "plot", "out/res")
    assert (empty / "out" / "res" / "plot.png").is_file()
    q = _run(venv, empty, satcc, "query", "out/res", "SELECT name, cca FROM flows").stdout
    assert "name" in q and "cca" in q
    _run(
        venv,
        empty,
        satcc,
        "try",
        "--rate",
        "20Mbit/s",
        "--rtt",
        "50ms",
        "--loss",
        "0.3%",
        "--cca",
        "cubic,bbr",
        "--duration",
        "2s",
        "--out",
        "out/try",
    )
    assert (empty / "out" / "try" / "summary.json").is_file()
    api = _run(
        venv,
        empty,
        str(venv / "bin" / "python"),
        "-c",
        "import satcc; r = satcc.run('scenarios/demo-geo.toml', duration='2 s'); "
        "print(sorted(r.summary.columns)[:3])",
    )
    assert "[" in api.stdout
    caps = sorted((venv / "lib").glob("python3*/site-packages/satcc/data/captures/*.pcap"))
    assert caps, "no shipped capture"
    p = _run(venv, empty, satcc, "analyze", str(caps[0]), "--out", "out/cap")
    assert "TCP" in p.stdout + p.stderr and (empty / "out" / "cap" / "summary.json").is_file()


@needs_wheel
def test_wheel_reproduce_004_quick(venv, empty):
    p = _run(venv, empty, str(venv / "bin" / "satcc"), "reproduce", "004", "--quick", timeout=900)
    assert "004" in p.stdout


@pytest.mark.kernel
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


@pytest.mark.slow
@needs_wheel
def test_the_sdist_builds_and_installs_satcc_linkd(tmp_path_factory, tmp_path):
    """`pip install satcc-VERSION.tar.gz` compiles the extension and, through the build
    backend (build_backend/satcc_build.py), satcc-linkd into the package. Slow: a release
    compile of both from the sdist's sources (cargo's target directory target/sdist-test, so
    a rerun is incremental); maturin comes from the running venv (--no-build-isolation)."""
    sdists = sorted(Path(WHEEL_DIR).glob("satcc-*.tar.gz"))
    assert len(sdists) == 1, sdists
    env = {
        **os.environ,
        "CARGO_TARGET_DIR": str(REPO / "target" / "sdist-test"),
        # the build backend runs maturin's program, beside the running interpreter
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    env_dir = _fresh_venv(
        tmp_path_factory.mktemp("sdist-venv"), sdists[0], "--no-build-isolation", env=env
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    p = _run(
        env_dir,
        empty,
        str(env_dir / "bin" / "python"),
        "-c",
        "import satcc, satcc.resources as r; print(satcc.__file__); print(r.linkd_binary())",
    )
    here, linkd = p.stdout.split()
    assert Path(here).is_relative_to(env_dir) and Path(linkd).is_relative_to(env_dir), p.stdout
    usage = _run(env_dir, empty, linkd, "--help")
    assert "usage: satcc-linkd" in usage.stdout + usage.stderr
    _run(env_dir, empty, str(env_dir / "bin" / "satcc"), "check", "demo-geo")


@needs_wheel
def test_the_docs_python_examples_run_from_the_wheel(venv, empty):
    """Every Python example of docs/python-api.md (one notebook, in order) and docs/analyze.md
    runs against the installed wheel in an empty directory: nothing read from the checkout."""
    for name, expect in (("python-api.md", "geo-try.png"), ("analyze.md", None)):
        blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / name).read_text(), re.DOTALL)
        assert blocks, name
        # run as a notebook runs them (python -c: no main module file for a campaign's
        # worker processes to import again, as a script without a __main__ guard would have)
        code = "\n\n".join(blocks)
        _run(venv, empty, str(venv / "bin" / "python"), "-c", code, timeout=900)
        if expect:
            assert (empty / expect).is_file(), name
