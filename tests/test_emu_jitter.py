"""The emulator refuses link jitter (not applied by satcc-linkd yet) before touching anything."""

import pytest

from satcc import scenario as sc
from satcc.engines import emu
from satcc.errors import UserError

SCENARIO = """
[scenario]
name = "jit"
duration = "2 s"

[[link]]
a = "s"
b = "d"
rate = "10 Mbit/s"
delay = "10 ms"
jitter = "1 ms"

[[flow]]
from = "s"
to = "d"
"""


def test_emulator_refuses_link_jitter_with_the_key_path(tmp_path):
    path = tmp_path / "jit.toml"
    path.write_text(SCENARIO)
    with pytest.raises(UserError) as e:
        emu.run(sc.load(path), out_dir=tmp_path / "out")
    assert "link[0].jitter" in str(e.value) and "1000000 ns" in str(e.value)
    assert not (tmp_path / "out").exists()
