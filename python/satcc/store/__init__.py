"""The results store: a DuckDB catalog over a campaign directory (see `catalog`).

from satcc import store
with store.open_store("out/campaigns/study001-quick") as s:
    df = s.query("SELECT cca, avg(goodput_bps) / 1e6 AS mbps FROM flows GROUP BY cca")
    s.problems     # files left out, and why
"""

from satcc.store.catalog import Store, StoreError, open_store
from satcc.store.schema import STORE_SCHEMA_VERSION, VIEWS


def query(directory, sql: str):
    """One query on a campaign directory -> pandas DataFrame."""
    with open_store(directory) as s:
        return s.query(sql)


__all__ = ["STORE_SCHEMA_VERSION", "VIEWS", "Store", "StoreError", "open_store", "query"]
