"""satcc — a lab for TCP congestion control over satellite and long, fat paths."""

__version__ = "0.1.0"
