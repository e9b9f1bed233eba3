"""Scenario files: TOML in, a checked `Scenario` out, then the resolved config the engines run.

    path.toml ──tomllib──► dict ──satcc-core scenario::file──► Scenario ──resolve()──► Resolved
      (--set, campaign      (serde: types, units, defaults;      (read-only     (routes, max RTTs;
       matrices and API      every check once; [link.model]        view)         once per run: sim,
       keywords edit it)     read by models::table)                              linkd, model engine)

Every problem becomes one line `FILE: KEY.PATH: expected WHAT, found WHAT` in a
`ScenarioError` (a `UserError`, so the CLI exits 2 without a traceback); all problems in a file
are reported at once, not only the first.

Keys, defaults and units are declared once, in satcc-core (`scenario/file.rs`, the serde
tables; `scenario/build.rs`, the defaults with their sources); docs/scenario.md "Scenario
format" lists them for users (tests/test_scenario.py keeps it in step with the native keys).

Deviations from what a user might assume:
1. With `window_scaling = false` the receive window is capped at 65535 B whatever `rwnd` says
   (the 16-bit window field, RFC 7323 §2), silently, as the kernel does.
2. `rwnd` is the receive buffer's ceiling (`tcp_rmem[2]`), not a window: autotuning grows the
   buffer per RTT up to it and the window offered is the buffer's share `scaling_ratio`/256
   (160/256 for full 1448 B segments on satcc's links, `receive_window_bytes`), so a 6 MiB
   ceiling opens at most 3.9 MB. `rcvbuf_autotune = false` gives a fixed window of `rwnd`
   instead (Linux with `tcp_moderate_rcvbuf = 0` and a buffer sized to offer `rwnd`).
3. The scenario hash leaves the seed out, so replicates of one scenario share a hash; the seed is
   recorded next to it in every result.
"""

# The package's modules, by concern: `schema` (the defaults and the read-only view),
# `messages` (ScenarioError), `config` (resolve, the hash), `loading` (file/text/dict ->
# Scenario through satcc-core's reader). The names below are the public API
# (docs/python-api.md).
from satcc.scenario.config import (
    canonical_json,
    fixed_rcvbuf_bytes,
    receive_window_bytes,
    resolve,
    resolved,
    rx_truesize,
    scaling_ratio,
    scenario_hash,
    spec,
)
from satcc.scenario.loading import (
    from_dict,
    load,
    loads,
)
from satcc.scenario.messages import ScenarioError
from satcc.scenario.schema import (
    DEFAULT_BIN,
    DEFAULT_INITIAL_CWND,
    DEFAULT_MIN_RTO,
    DEFAULT_MSS,
    DEFAULT_QUEUE,
    DEFAULT_RWND,
    DEFAULT_SEED,
    MAX_MSS,
    MAX_SEED,
    MIN_MSS,
    TABLE_KEYS,
    FlowOrigin,
    Scenario,
    Table,
    expand_flows,
)

__all__ = [
    "DEFAULT_BIN",
    "DEFAULT_INITIAL_CWND",
    "DEFAULT_MIN_RTO",
    "DEFAULT_MSS",
    "DEFAULT_QUEUE",
    "DEFAULT_RWND",
    "DEFAULT_SEED",
    "MAX_MSS",
    "MAX_SEED",
    "MIN_MSS",
    "TABLE_KEYS",
    "FlowOrigin",
    "Scenario",
    "ScenarioError",
    "Table",
    "canonical_json",
    "expand_flows",
    "fixed_rcvbuf_bytes",
    "from_dict",
    "load",
    "loads",
    "receive_window_bytes",
    "resolve",
    "resolved",
    "rx_truesize",
    "scaling_ratio",
    "scenario_hash",
    "spec",
]
