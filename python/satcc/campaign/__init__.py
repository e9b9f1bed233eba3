"""Campaigns: a base scenario x a matrix over any scenario key x seeds, run resumably on a local
process pool or a Dask cluster, every run kept as a result directory.

Map: `schema` (the campaign file's pydantic models, the wording of its errors; the key paths
are satcc.scenario.keypath's, shared with `--set`),
`spec` (base scenario, axes and columns, matrix expansion, run ids), `worker` (one run on
any engine, where a worker is), `execute` (plan, skip done runs, pool / Dask / serial emu,
progress), `summary` (the end-of-campaign table and `satcc campaign status`). The directory a
campaign writes is `satcc.store.layout`'s.
"""

from satcc.campaign.spec import Campaign, CampaignError, RunSpec, expand, load

__all__ = ["Campaign", "CampaignError", "RunSpec", "expand", "load"]
