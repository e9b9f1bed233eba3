"""`satcc reproduce --design`: which design a study runs on an engine, decided here only.

AUTO, the design the engine runs: the full one, with --quick the quick one, and with --quick on
a real-time engine (the emulator) the kernel one (each campaign's [kernel] table over its
[quick] one, study 002's `kernel_design`, the emulator's paths, the kernel column's claims
judged). KERNEL, the kernel design on whatever engine is chosen (with --quick): on the
simulator the twin of the kernel column (the same campaigns, paths, seeds and claims judged),
which tells the engines' disagreements apart from the designs'. Light (no pandas): the
command's parser imports it.
"""

from __future__ import annotations

from satcc import registry
from satcc.errors import UserError

AUTO, KERNEL = "auto", "kernel"
DESIGNS = (AUTO, KERNEL)


def kernel_design(quick: bool, engine: str, design: str = AUTO) -> bool:
    """Whether a study runs its kernel design (the campaigns' [kernel] tables over --quick,
    study 002's `kernel_design`, the emulator's paths, the kernel column's claims judged):
    `--quick` on a real-time engine (the emulator's kernel column), or `--design kernel`
    (`KERNEL`, with --quick: `check_design`) on any engine. The one place this is decided."""
    return quick and (design == KERNEL or registry.get(engine).real_time)


def design_name(quick: bool, engine: str, design: str = AUTO) -> str:
    """ "kernel", "quick" or "full": the design a study runs on `engine` (printed in its header
    and claims.json, so that the kernel design's twin is never read as the quick design)."""
    return KERNEL if kernel_design(quick, engine, design) else "quick" if quick else "full"


def check_design(quick: bool, design: str) -> None:
    """`--design`: one of DESIGNS, and the kernel design only with --quick (it is the quick
    design cut to the emulator's real time: the campaigns' [kernel] tables over [quick])."""
    if design not in DESIGNS:
        raise UserError(f"--design: expected one of {', '.join(DESIGNS)}, found {design!r}")
    if design == KERNEL and not quick:
        raise UserError(
            "--design kernel: the kernel design is a quick design (each campaign's [kernel] "
            "table laid over its [quick] one): add --quick"
        )
