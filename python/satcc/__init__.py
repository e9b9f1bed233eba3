"""satcc — a lab for TCP congestion control over satellite and long, fat paths.

    import satcc
    r = satcc.run("scenario.toml", engine="sim", **{"flow[0].cca": "bbr"})
    r.summary, r.flows, r.flow_series, r.link_series, r.plot()
    a = satcc.analyze("dish.pcap", "iperf3.json")

docs/python-api.md documents the API; the heavy modules load on first use.
"""

__all__ = ["Result", "__version__", "analyze", "run"]


def __getattr__(name: str):
    # `import satcc` stays light (the CLI imports it first); the API loads when used.
    if name == "__version__":  # one place: Cargo.toml's workspace version (docs/packaging.md)
        from satcc import _native

        return _native.version()
    if name in ("run", "analyze", "Result"):
        from satcc import api

        return getattr(api, name)
    raise AttributeError(f"module 'satcc' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the lazily loaded API shows in dir(satcc) and tab completion
    return sorted(set(globals()) | set(__all__))
