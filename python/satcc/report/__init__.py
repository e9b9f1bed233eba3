"""Reports: figures (satcc.report.figures) and the self-contained HTML page (satcc.report.html).

The report builder (matplotlib, pandas, DuckDB) is imported when one of its names is first
asked for, not with the package: `satcc.report.css` alone imports none of them."""

from typing import Any

__all__ = ["Report", "build_report", "build_result_report"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from satcc.report import build

        return getattr(build, name)
    raise AttributeError(f"module 'satcc.report' has no attribute {name!r}")
