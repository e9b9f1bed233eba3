"""The Dask distributed path: a real scheduler and worker processes on loopback give the same
results as the local pool for the same campaign and seeds."""

from __future__ import annotations

import pandas as pd
import pytest

from satcc.campaign import spec
from satcc.campaign.execute import run_campaign
from satcc.errors import UserError
from tests.campaign_helpers import store_frames, tree_hashes, write_campaign
from tests.helpers import requires_sim

pytestmark = requires_sim

DASK_CAMPAIGN = """
[campaign]
name = "dask"
scenario = "base.toml"
repetitions = 2

[matrix]
"flow.*.cca" = ["reno", "cubic"]
"link[1].delay" = ["5 ms", "20 ms"]
"scenario.engine" = ["sim", "model"]
"""


def test_dask_cluster_gives_the_same_store_as_the_local_pool(tmp_path):
    distributed = pytest.importorskip("distributed")
    c = spec.load(write_campaign(tmp_path, DASK_CAMPAIGN))
    local = run_campaign(c, tmp_path / "local", jobs=2, progress=False)
    assert local.count("done") == 16
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        remote = run_campaign(
            c, tmp_path / "dask", cluster=cluster.scheduler_address, progress=False
        )
        # the workers really ran them: each worker process reports tasks it executed
        with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
            seen = client.run_on_scheduler(
                lambda dask_scheduler: sorted(k for k in dask_scheduler.task_prefixes)
            )
    assert remote.count("done") == 16 and remote.count("failed") == 0
    assert "dask" in remote.backend
    assert any("satcc-run" in k for k in seen)
    assert tree_hashes(tmp_path / "dask") == tree_hashes(tmp_path / "local")
    for a, b in zip(store_frames(tmp_path / "dask"), store_frames(tmp_path / "local"), strict=True):
        pd.testing.assert_frame_equal(a, b)


def test_an_unreachable_cluster_is_a_clear_error(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    from satcc.campaign import execute

    monkeypatch.setattr(execute, "DASK_CONNECT_TIMEOUT_S", 2)
    c = spec.load(write_campaign(tmp_path, DASK_CAMPAIGN))
    # port 9 on loopback: nothing listens there
    with pytest.raises(UserError, match="cannot reach a Dask scheduler"):
        run_campaign(c, tmp_path / "x", cluster="tcp://127.0.0.1:9", progress=False)
