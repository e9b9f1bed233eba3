"""The results store: a campaign directory (`layout`: what lives where, atomic writes, the scan
that finds corrupt and foreign files), the loop that writes one (`runloop`: campaign, fidelity
and field runs into it) and a DuckDB catalog over it (`catalog`).

from satcc import store
with store.open_store("out/campaigns/study001-quick") as s:
    df = s.query("SELECT cca, avg(goodput_bps) / 1e6 AS mbps FROM flows GROUP BY cca")
    s.problems     # files left out, and why

The table schemas are in `satcc.store.schema`, which imports only pyarrow: campaign workers
import it to build their extra tables without loading the catalog (pandas, DuckDB).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from satcc.store.schema import STORE_SCHEMA_VERSION, VIEWS

if TYPE_CHECKING:
    from satcc.store.catalog import Store, StoreError, open_store

_CATALOG_NAMES = ("Store", "StoreError", "open_store")


def __getattr__(name: str):
    if name in _CATALOG_NAMES:
        from satcc.store import catalog

        return getattr(catalog, name)
    raise AttributeError(f"module 'satcc.store' has no attribute {name!r}")


def query(directory, sql: str):
    """One query on a campaign directory -> pandas DataFrame."""
    from satcc.store.catalog import open_store

    with open_store(directory) as s:
        return s.query(sql)


__all__ = ["STORE_SCHEMA_VERSION", "VIEWS", "Store", "StoreError", "open_store", "query"]
