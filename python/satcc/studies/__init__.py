"""Reproductions of the studies in shared/papers/ (README "Models").

| module | study |
|--------|-------|
| hybla  | 002: the TCP Hybla model validated against a simulator (`satcc validate hybla`) |
"""
