"""Analytical models of TCP throughput and transfer time (the `model` engine's kernels).

| module      | model                                                              |
|-------------|--------------------------------------------------------------------|
| hybla       | TCP Hybla steady state and transfer time (study 002, eq. 2-39)     |
| pftk        | Padhye et al. (PFTK) full model with timeouts and W_max, and approx |
| cardwell    | Cardwell et al. 2000 transfer latency (slow start, loss, CA)       |
| mathis      | Mathis et al. 1997 macroscopic model                               |
| window      | window/RTT bound (study 003 eq. 1) and time to a rate in CA        |
| cubic       | CUBIC response function and K (RFC 9438 §4-5)                       |

All take numbers or numpy arrays and return `common.ModelResult`; invalid inputs raise
`common.ModelInputError`. `satcc model ...` is `satcc.commands.model`.
"""

from satcc.models.common import ModelInputError, ModelResult

__all__ = ["ModelInputError", "ModelResult"]
