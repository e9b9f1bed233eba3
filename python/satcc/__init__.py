"""satcc — a lab for TCP congestion control over satellite and long, fat paths.

    import satcc
    r = satcc.run("scenario.toml", engine="sim", **{"flow[0].cca": "bbr"})
    r.summary, r.flows, r.flow_series, r.link_series, r.plot()
    a = satcc.analyze("dish.pcap", "iperf3.json")
    df = satcc.sweep("scenario.toml", **{"flow.*.cca": ["cubic", "bbr"]})
    df = satcc.campaign("campaign.toml", out="out/c"); satcc.open_store("out/c")

docs/python-api.md documents the API; the heavy modules load on first use (satcc._face).
"""

import sys

from satcc import _face

__all__ = ["Result", "__version__", "analyze", "campaign", "open_store", "run", "sweep"]

sys.modules[__name__].__class__ = _face.Package
del sys  # dir(satcc) lists the API, not the modules the face needed
