"""Engines: each turns a validated `Scenario` into a `RunResult` (satcc.results).

- `sim`: the deterministic packet simulator (Rust, `satcc._native.run_sim`).
"""
