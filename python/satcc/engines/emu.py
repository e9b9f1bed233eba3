"""The `emu` engine: a scenario run by the real Linux TCP stack in network namespaces, its links
emulated in real time by satcc-linkd (see satcc.emu). Same RunResult as the simulator, plus the
run's raw material (iperf3 JSON reports, tcpdump captures, the link series as JSON lines,
satcc-linkd's timing report) in DIR/emu/.

Not deterministic: a real kernel on a real clock. The seed drives satcc-linkd's random loss and
the link models, so the channel is the same from run to run; TCP's timing is not.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from satcc.emu import linkd
from satcc.emu.runner import Run
from satcc.engines.meta import run_meta
from satcc.results import RunResult
from satcc.scenario import Scenario, expand_flows, resolve

ENGINE = "emu"
RAW_DIR = "emu"


def run(
    scenario: Scenario,
    out_dir: str | Path | None = None,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
    capture: bool = True,
    spin_ns: int | None = None,
    rt_priority: int | None = None,
    vpn_server: str | None = None,
    cpu_latency_us: int | None = linkd.DEFAULT_CPU_LATENCY_US,
) -> RunResult:
    """Emulate `scenario`; its raw files go to `out_dir`/emu (a temporary directory, removed
    afterwards, when `out_dir` is None)."""
    config = resolve(scenario, seed_override=seed)
    vpn_server = vpn_server or scenario.scenario.vpn  # `satcc emu --vpn` wins over the key
    tmp = None
    if out_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="satcc-emu-"))
        workdir = tmp / RAW_DIR
    else:
        workdir = Path(out_dir) / RAW_DIR
        if workdir.exists():
            shutil.rmtree(workdir)
    try:
        r = Run(
            config,
            workdir,
            capture=capture,
            spin_ns=spin_ns,
            rt_priority=rt_priority,
            vpn_server=vpn_server,
            cpu_latency_us=cpu_latency_us,
        )
        raw = r.execute(progress)
        meta = run_meta(
            ENGINE,
            config,
            native_version=False,
            emu={
                "run_id": r.run_id,
                "raw_dir": RAW_DIR if tmp is None else None,
                "vpn_server": vpn_server,
                "warnings": r.warnings,
                "linkd": r.linkd_stats,
            },
        )
        return RunResult.from_engine(raw, config, expand_flows(scenario), meta)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP: no half-written raw directory
        if tmp is None:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
