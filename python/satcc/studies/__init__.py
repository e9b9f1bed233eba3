"""Reproductions of the studies in shared/papers/ (`satcc reproduce`, docs/reproduce.md).

| module     | what |
|------------|------|
| reproduce  | the driver: run a study, judge its claims, write claims.json and report.html |
| claims     | the claims files (data/study00X.toml) and the verdict rule |
| common     | running a study's campaigns, loading results, figure helpers |
| designs    | `--design`: which design (full, quick, kernel) a study runs on an engine |
| study000   | 000: Starlink terminal to terminal through a VPN, CUBIC vs BBR |
| study001   | 001: five congestion controls over Starlink residential and business |
| study002   | 002: the TCP Hybla model against the simulator (wraps `hybla`) |
| study003   | 003: TCP over long fat networks (Table 2, the ramp of Fig. 7) |
| study004   | 004: RTT fairness of CUBIC, stock and K scaled by the cube root of the RTT |
| hybla      | 002's validation design (`satcc validate hybla`) |
"""
