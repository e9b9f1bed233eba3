"""Reports: figures (satcc.report.figures) and the self-contained HTML page (satcc.report.html)."""

from satcc.report.build import Report, build_report, build_result_report

__all__ = ["Report", "build_report", "build_result_report"]
