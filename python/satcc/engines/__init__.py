"""Engines: each turns a validated `Scenario` into a `RunResult` (satcc.results). `satcc.registry`
lists them (names, capabilities, the one dispatch) and imports their modules on first use.

- `sim`: the deterministic packet simulator (Rust, `satcc._native.run_sim`);
- `model`: the model engine, the analytical models (`satcc.models`) per flow;
- `emu`: the real Linux TCP stack in network namespaces (`satcc.emu`), as root;
- `meta`: the run metadata every engine writes.
"""
