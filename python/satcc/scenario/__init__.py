"""Scenario files: TOML in, a checked `Scenario` out, then the resolved config the engines run.

    path.toml ──tomllib──► dict ──satcc-core scenario::file──► Scenario ──resolve()──► Resolved
      (--set, campaign      (serde: types, units, defaults;      (read-only     (routes, BDP queues;
       matrices and API      every check once; [link.model]        view)         once per run: sim,
       keywords edit it)     resolved first by satcc.linkmodels)                 linkd, model engine)

Every problem becomes one line `FILE: KEY.PATH: expected WHAT, found WHAT` in a
`ScenarioError` (a `UserError`, so the CLI exits 2 without a traceback); all problems in a file
are reported at once, not only the first.

Keys and defaults (docs/scenario.md is the user-facing copy of this table; a test keeps
them in step):

| key                       | default      | unit / values        | source of the default            |
|---------------------------|--------------|----------------------|----------------------------------|
| scenario.name             | file stem    | text                 |                                  |
| scenario.description      | none         | text                 |                                  |
| scenario.duration         | required     | duration             |                                  |
| scenario.seed             | 1            | integer 0..2^64-1    |                                  |
| scenario.bin              | 100 ms       | duration             | DESIGN.md (0.1 s bins)           |
| scenario.engine           | "sim"        | sim, model, emu      |                                  |
| link.a, link.b            | required     | node names           |                                  |
| link.rate (rate_ba)       | required     | rate                 | b->a copies a->b unless given    |
| link.delay (delay_ba)     | required     | duration, one way    |                                  |
| link.loss (loss_ba)       | 0            | probability          |                                  |
| link.queue (queue_ba)     | 1000 pkt     | pkt / size / BDP     | Linux txqueuelen 1000            |
| link.ecn_threshold (_ba)  | none         | packets              | DCTCP-style step marking         |
| link.model                | none         | table, `kind = ...`  | satcc.linkmodels (docs/scenario.md "Path models") |
| flow.from, flow.to        | required     | node names           |                                  |
| flow.name                 | "flow<i>"    | text                 |                                  |
| flow.cca                  | "cubic"      | registry name        | Linux default since 2.6.19       |
| flow.cc                   | {}           | table                | per algorithm (`satcc cc show`)  |
| flow.start                | 0 s          | duration             |                                  |
| flow.size                 | none (bulk)  | size                 |                                  |
| flow.count, flow.stagger  | 1, 0 s       | integer, duration    | copy k starts at start + k*stagger |
| flow.mss                  | 1448         | bytes                | 1500 MTU - 20 IP - 20 TCP - 12 TS |
| flow.sack                 | true         | bool                 | net.ipv4.tcp_sack = 1            |
| flow.timestamps           | true         | bool                 | net.ipv4.tcp_timestamps = 1      |
| flow.window_scaling       | true         | bool                 | net.ipv4.tcp_window_scaling = 1  |
| flow.rwnd                 | 6 MiB        | size                 | net.ipv4.tcp_rmem[2] = 6291456: the receive buffer's ceiling |
| flow.rcvbuf_autotune      | true         | bool                 | net.ipv4.tcp_moderate_rcvbuf = 1; false = a fixed window of `rwnd` |
| flow.ecn                  | false        | bool                 | Linux negotiates ECN only if asked (tcp_ecn = 2) |
| flow.initial_cwnd         | 10           | packets              | RFC 6928, Linux TCP_INIT_CWND    |
| flow.pacing               | "auto"       | auto, on, off        | auto = Linux: pace when the CCA asks (BBR) |
| flow.delayed_ack          | true         | bool                 | Linux quick-ack then delayed ACK |
| flow.min_rto              | 200 ms       | duration             | Linux TCP_RTO_MIN                |
| flow.sndbuf               | none         | size                 | cap on unacknowledged bytes; Linux bounds them by tcp_wmem[2] |
| flow.metrics_save         | false        | bool                 | false = tcp_no_metrics_save = 1; true = Linux's default cache of ssthresh per destination (study 003) |
| flow.proto, rate, packet_size | tcp, -, 1460 B | udp: CBR rate, payload | iperf3 -u -b -l (satcc.linkmodels) |
| flow.encap, flow.mtu      | 0 B, 1500 B  | VPN name or "N B"; size | satcc.linkmodels (study 000)   |
| flow.app                  | bulk         | `{ kind = ... }`     | bulk, onoff (on, off), requests (size, every or at) |
| flow.slow_start_after_idle | true        | bool                 | net.ipv4.tcp_slow_start_after_idle = 1 |
| flow.nodelay              | false        | bool                 | TCP_NODELAY off: Nagle on, Linux's default |

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
