"""One resolve per run (issue 28): `satcc sim FILE` hands the scenario to satcc-core's resolver
once and the simulator runs that resolved scenario as it is (`_native.Resolved`), with no
second resolve and no JSON round trip; the file is read once (satcc-core's reader) and
`host_noise = "kernel"` is read in Rust."""

from __future__ import annotations

from collections import Counter

import pytest

from satcc import _native
from satcc import scenario as sc
from satcc.cli import main

SCENARIO = """
[scenario]
name = "once"
duration = "1 s"
{noise}

[[link]]
a = "s"
b = "d"
rate = "10 Mbit/s"
delay = "10 ms"
queue = "1 BDP"

[[flow]]
from = "s"
to = "d"
"""


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls into the native module's reader and resolvers (a read file's `resolve` too),
    simulator and kernel host-noise table."""
    counts: Counter[str] = Counter()
    for name in ("resolve", "run_sim", "host_noise_kernel"):
        real = getattr(_native, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(_native, name, counted)

    class CountedFile:
        def __init__(self, file):
            self._file = file

        def resolve(self, *args):
            counts["resolve"] += 1
            return self._file.resolve(*args)

        def __getattr__(self, name):
            return getattr(self._file, name)

    for name in ("read_scenario", "read_scenario_text"):  # a document, a file's TOML text
        real_read = getattr(_native, name)

        def read(*args, _real=real_read):
            counts["read"] += 1
            return CountedFile(_real(*args))

        monkeypatch.setattr(_native, name, read)
    return counts


def test_satcc_sim_resolves_the_scenario_once(write_toml, tmp_path, calls, capsys):
    path = write_toml(SCENARIO.format(noise=""))
    assert main(["sim", str(path), "--out", str(tmp_path / "out")]) == 0
    assert calls == Counter({"read": 1, "resolve": 1, "run_sim": 1}), calls


def test_satcc_check_resolves_once(write_toml, calls, capsys):
    assert main(["check", str(write_toml(SCENARIO.format(noise="")))]) == 0
    assert calls == Counter({"read": 1, "resolve": 1}), calls


def test_the_simulator_runs_the_handle_and_its_dictionary_alike():
    handle = sc.resolved(sc.loads(SCENARIO.format(noise="")))
    config = handle.config
    assert isinstance(config, dict) and "routes" in config
    from_handle = _native.run_sim(handle)
    from_dict = _native.run_sim(config)
    assert from_handle["flows"] == from_dict["flows"]
    assert from_handle["flow_series"] == from_dict["flow_series"]


def test_a_dictionary_with_forged_routes_is_refused_the_handle_cannot_carry_them():
    config = sc.resolve(sc.loads(SCENARIO.format(noise="")))
    config["routes"]["max_rtt_ns"][0] = 1
    with pytest.raises(ValueError, match="not the routes of this scenario"):
        _native.run_sim(config)


def test_kernel_host_noise_is_read_by_the_resolver_as_the_measured_points():
    s = sc.loads(SCENARIO.format(noise='host_noise = "kernel"'))
    kernel = _native.host_noise_kernel()
    points = {
        side: [[float(p), int(ns)] for p, ns in kernel[side]] for side in ("sender", "receiver")
    }
    assert sc.spec(s)["host_noise_quantiles_ns"] == points  # read at the edge, in Rust
    assert sc.resolve(s)["host_noise_quantiles_ns"] == {
        side: [[float(p), int(ns)] for p, ns in kernel[side]] for side in ("sender", "receiver")
    }


def test_a_word_other_than_kernel_is_refused_naming_the_key():
    config = sc.spec(sc.loads(SCENARIO.format(noise="")))
    config["host_noise_quantiles_ns"] = "loud"
    with pytest.raises(ValueError, match=r"^config\.host_noise_quantiles_ns: expected \"kernel\""):
        _native.resolve(config)
