"""A paper's claims, satcc's measured values and the verdict computed from both.

Each study's claims live in `data/study00X.toml` (one `[[claim]]` per number or statement the
paper makes, with its citation and the tolerance fixed before any run); the study module
(`satcc.studies.study00X`) measures satcc's value for each claim id at run time. Nothing here or
in the data files is tuned to a result: the tolerance says how close counts as "reproduced".

    data/study00X.toml ──► Claim (paper value, relation, tolerance, partly)
    study00X.measure() ──► Measured (satcc value, how, why they differ) ──► verdict()

Two kinds of claim: a `finding` is what the study found about TCP (judged and tallied); an
`input` is a property of the study's path that satcc's scenario is set from (idle RTT, loss,
UDP capacity...): it is printed as "input (from §...)" with satcc's value beside the paper's,
and never tallied. A data file also lists the paper's main results satcc does not judge
(`[[not_judged]]`, with the reason) and the paper's own anomalies (`[[anomaly]]`); coverage is
the findings judged on this run / (every finding + not judged): a finding this design cannot
judge (`Measured.skipped`) is not covered. The kernel column's design (`--quick --engine emu`)
states its cuts (`[[kernel_cut]]`: the findings a run of the cut design cannot show, not judged
on the kernel, and those it weakens, judged), or why the study has none (`no_kernel`).

Verdict of a finding, from the distance d between satcc's value and the set the paper's claim
describes (d = 0 when the claim holds exactly):
| relation | the paper says       | d                          |
|----------|----------------------|----------------------------|
| near     | about `paper`        | abs(value - paper)         |
| above    | more than `paper`    | max(0, paper - value)      |
| below    | less than `paper`    | max(0, value - paper)      |
| within   | in [lo, hi]          | distance to the interval   |
`near` / `within`: d <= tolerance: reproduced; d <= partly (default 2 x tolerance): partly; else
not. A tolerance written "25 %" is relative to abs(paper) (to the nearer bound for `within`); a
number is in the claim's unit. `above` / `below` are strict and take no tolerance: a value on
the wrong side (or equal to the threshold) is `not`, never `partly`; a vague word ("greatly
exceeds") is a stated threshold in `paper`, with its reasoning in `note`.

A difference or ratio between two groups (`paired = "difference"`, `"ratio"` or `"share"`,
one group's share of the two's total) is judged on per-run values paired by seed
(`Measured.per_seed`: the same statistic from each seed's runs alone, e.g. BBR's run / CUBIC's
run of the same round). The statistic is the one-sided sign test at 5 %, written as an
interval: the distribution-free 95 % bound on the median of the per-seed values (an order
statistic) must exclude "no difference" (1 for a ratio, 0 for a difference, 0.5 for a share)
on the side the paper claims; it needs at least 5 seeds (2^-5 = 3.1 % < 5 %), and with fewer,
or with the bound on "no difference", the difference is not shown: `partly` when the pooled
value meets the claim, `not` otherwise. A paired claim's band (tolerance and partly) may never
hold "no difference": the data file is refused, but for a claim of no difference itself
(`relation = "near"` with `paper` on "no difference", e.g. "eq. 6 is close to stock"), which
is an equivalence: both one-sided 95 % bounds on the median (the sign test on each side, a
90 % interval) must lie within the tolerance, never shown by failing to find a difference. A
ratio within 5 % of 1 (a share whose ratio to the rest is) is a tie and never reproduced; a
study module reports a floor or a lockout (`Measured.degenerate`:
a share of 1.0, Jain at its floor on both sides) and it is never reproduced either; both print
as such. A finding names the inputs that describe its runs (`inputs`); when one of them misses
its tolerance on this run, the finding prints "path mismatch: INPUT" and does not count as
reproduced. No value (satcc cannot measure it, or the run was too short): not.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from satcc.errors import UserError

DATA_DIR = Path(__file__).with_name("data")
REPRODUCED, PARTLY, NOT = "reproduced", "partly", "not"
VERDICTS = (REPRODUCED, PARTLY, NOT)
INPUT = "input"  # the verdict column of an input: not judged, not tallied
NOT_JUDGED = "not judged"  # a finding this design cannot judge (Measured.skipped says why)
PARTLY_FACTOR = 2.0  # partly = 2 x tolerance unless the claim says otherwise
SIGN_ALPHA = 0.05  # the one-sided sign test's level (a paired claim's 95 % bound)
MIN_PAIRED_SEEDS = 5  # the fewest seeds at which the sign test can reach 5 % (2^-5)
TIE = 0.05  # a ratio within 5 % of 1 is a tie
EQUAL_REL = 1e-9  # a value within this (relative) of a strict threshold is on it
# "no difference" per kind of paired claim (a share: one group's of the two groups' total)
NULL = {"ratio": 1.0, "difference": 0.0, "share": 0.5}

Relation = Literal["near", "above", "below", "within"]
Kind = Literal["input", "finding"]
PairedKind = Literal["ratio", "difference", "share"]


class Tolerance(BaseModel):
    """An absolute amount in the claim's unit, or a fraction of the paper's value."""

    model_config = ConfigDict(frozen=True)
    amount: float
    relative: bool

    @classmethod
    def parse(cls, raw: Any) -> Tolerance:
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            if raw < 0:
                raise ValueError(f"expected a tolerance >= 0, found {raw!r}")
            return cls(amount=float(raw), relative=False)
        if isinstance(raw, str) and raw.strip().endswith("%"):
            try:
                pct = float(raw.strip()[:-1])
            except ValueError:
                raise ValueError(f'expected a percentage such as "25 %", found {raw!r}') from None
            if pct < 0:
                raise ValueError(f"expected a tolerance >= 0, found {raw!r}")
            return cls(amount=pct / 100.0, relative=True)
        raise ValueError(f'expected a number or a percentage such as "25 %", found {raw!r}')

    def absolute(self, reference: float) -> float:
        return self.amount * abs(reference) if self.relative else self.amount

    def text(self) -> str:
        return f"{self.amount * 100:g} %" if self.relative else f"{self.amount:g}"

    def scaled(self, factor: float) -> Tolerance:
        return Tolerance(amount=self.amount * factor, relative=self.relative)


class Claim(BaseModel):
    """One claim of a paper, as `[[claim]]` in a study's data file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    what: str  # the quantity, in words, with its unit
    cite: str  # figure / table / section (and page when the text has page numbers)
    quote: str | None = None  # the paper's own words (Japanese), for checking the reading
    paper: float | tuple[float, float]
    relation: Relation = "near"
    unit: str = ""
    tolerance: Tolerance
    partly: Tolerance | None = None
    note: str | None = None  # how satcc reads the claim (e.g. an unstated threshold)
    kind: Kind = "finding"
    paired: PairedKind | None = None  # a ratio or difference between groups, judged per seed
    inputs: tuple[str, ...] = ()  # the input claims that describe this finding's runs

    @field_validator("tolerance", "partly", mode="before")
    @classmethod
    def _tolerance(cls, v: Any) -> Any:
        return v if v is None or isinstance(v, Tolerance) else Tolerance.parse(v)

    @field_validator("paper", mode="before")
    @classmethod
    def _paper(cls, v: Any) -> Any:
        if isinstance(v, list):
            if len(v) != 2 or not all(isinstance(x, (int, float)) for x in v) or v[0] > v[1]:
                raise ValueError(f"expected a number or [low, high], found {v!r}")
            return (float(v[0]), float(v[1]))
        return v

    def model_post_init(self, _context: Any) -> None:
        if (self.relation == "within") != isinstance(self.paper, tuple):
            raise ValueError("relation 'within' takes paper = [low, high]; the others a number")
        if self.relation in ("above", "below") and (
            self.tolerance.amount != 0 or (self.partly is not None and self.partly.amount != 0)
        ):
            raise ValueError(
                f"relation {self.relation!r} is strict: expected tolerance = 0 and no partly "
                "(write a vague word as its threshold in paper)"
            )
        if self.paired is not None:
            if self.kind == "input":
                raise ValueError("paired applies to findings only")
            null = NULL[self.paired]
            lo, hi = self.band()
            if lo <= null <= hi and not self.equivalence():
                raise ValueError(
                    f"a {self.paired} claim's band [{lo:g}, {hi:g}] holds {null:g} "
                    "(no difference): narrow the tolerance or the threshold (only a claim of no "
                    "difference, relation near with paper on it, may hold it)"
                )
        if self.inputs and self.kind == "input":
            raise ValueError("inputs applies to findings only")

    def band(self) -> tuple[float, float]:
        """The values the claim accepts at its partly tolerance (strict sides open-ended)."""
        if self.relation == "above":
            return float(self.paper) + 1e-12, math.inf  # type: ignore[arg-type]
        if self.relation == "below":
            return -math.inf, float(self.paper) - 1e-12  # type: ignore[arg-type]
        lo, hi = self.paper if isinstance(self.paper, tuple) else (self.paper, self.paper)
        return (
            lo - self.partly_tolerance().absolute(lo),
            hi + self.partly_tolerance().absolute(hi),
        )

    def equivalence(self) -> bool:
        """A paired claim of no difference ("close to"): judged by both sides' sign tests."""
        return (
            self.paired is not None
            and self.relation == "near"
            and not isinstance(self.paper, tuple)
            and float(self.paper) == NULL[self.paired]
        )

    def claimed_side(self) -> int:
        """+1 when the paper claims more than "no difference", -1 less (paired claims)."""
        assert self.paired is not None and not self.equivalence()
        lo, _hi = self.band()
        return 1 if lo > NULL[self.paired] else -1

    def cite_section(self) -> str:
        """The citation as printed beside an input: 'input (from §4.2)'."""
        return self.cite

    def paper_text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if isinstance(self.paper, tuple):
            return f"{num(self.paper[0])}-{num(self.paper[1])}{unit}"
        sign = {"near": "≈", "above": ">", "below": "<"}[self.relation]
        return f"{sign} {num(self.paper)}{unit}"

    def partly_tolerance(self) -> Tolerance:
        return self.partly if self.partly is not None else self.tolerance.scaled(PARTLY_FACTOR)


class NotJudged(BaseModel):
    """A main result of the paper that satcc does not judge, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    what: str
    cite: str
    reason: str


class Anomaly(BaseModel):
    """Something in the paper itself that does not add up (recorded, not judged)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    what: str
    cite: str
    note: str


class PathItem(BaseModel):
    """One property of the study's path as satcc sets it, and the paper's words it comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    what: str
    satcc: str  # the value in satcc's scenario or campaign
    source: str  # the paper's section and what it says (or why satcc assumes it)


class KernelCut(BaseModel):
    """One way the kernel column's design (`--quick --engine emu`: the campaigns' [kernel]
    tables, the study's emulator changes) differs from the quick design, decided claim by claim:
    `not_judged`, the findings a run of the cut design cannot show (not judged on the kernel,
    the reason printed); `weakens`, the claims it weakens but a run can still show (judged,
    with how the cut bears on them in `reason`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    what: str  # the cut, and where it is made (campaign file, key)
    not_judged: tuple[str, ...] = ()
    weakens: tuple[str, ...] = ()
    reason: str


class StudyClaims(BaseModel):
    """A study's data file: what the paper is, every claim, what is not judged, its anomalies."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    title: str
    paper: str  # the original beside shared/papers/README.md
    reference: str  # authors, title in English
    claims: list[Claim] = Field(min_length=1)
    not_judged: list[NotJudged] = Field(default_factory=list)
    anomalies: list[Anomaly] = Field(default_factory=list)
    path: list[PathItem] = Field(default_factory=list)  # the path and its sources
    # the kernel column's design (`--quick --engine emu`): what it runs and what it scales down
    # beside the quick design (the campaign files' [kernel] tables say why per campaign)
    kernel: str = ""
    kernel_cuts: list[KernelCut] = Field(default_factory=list)  # [[kernel_cut]]
    # why the study has no kernel design (nothing a run of it at the emulator's rates can show)
    no_kernel: str = ""

    def kernel_skipped(self) -> dict[str, str]:
        """claim id -> why the kernel design does not judge it (the cuts' `not_judged`, or every
        finding when the study has no kernel design)."""
        if self.no_kernel:
            return {
                c.id: "not judged on the kernel: the study has no kernel design (why: above "
                "the table, the data file's study.no_kernel)"
                for c in self.claims
                if c.kind == "finding"
            }
        out: dict[str, str] = {}
        for cut in self.kernel_cuts:
            for cid in cut.not_judged:
                out.setdefault(
                    cid, f"not judged on the kernel: {cut.what} (why: the cut, above the table)"
                )
        return out

    def coverage(self, rows: list[Row]) -> tuple[int, int]:
        """(findings judged in `rows`, main results listed: every finding + not judged). A
        finding counts as judged when some engine's row gives it a verdict."""
        judged = {r.claim.id for r in rows if r.claim.kind == "finding" and r.verdict in VERDICTS}
        n = sum(1 for c in self.claims if c.kind == "finding")
        return len(judged), n + len(self.not_judged)


@dataclass(frozen=True)
class Measured:
    """satcc's value for one claim: the number (None: not measured), how it was measured, and
    why it differs from the paper's (with numbers; shown when the verdict is not reproduced)."""

    value: float | None
    how: str = ""
    why: str = ""
    seeds: int | None = None  # how many seeds (independent runs per point) the value pools
    source: str = ""  # which campaign, runs and columns the number comes from
    per_seed: tuple[float, ...] | None = None  # the same statistic per seed (paired claims)
    skipped: str = ""  # why this design cannot judge the claim (e.g. --quick runs too short)
    degenerate: str = ""  # a floor or a lockout the value sits on (never a pass), with numbers


@dataclass(frozen=True)
class Paired:
    """The sign test of a paired claim: n seeds, k on the claimed side, the one-sided p and
    the 95 % distribution-free bound on the median (None below MIN_PAIRED_SEEDS seeds)."""

    n: int
    k: int
    p: float
    bound: float | None
    side: int  # +1 / -1: the claimed side; 0: an equivalence (both sides within a margin)
    upper: float | None = None  # an equivalence's upper bound (bound is then its lower one)
    margin: tuple[float, float] | None = None  # an equivalence's accepted band

    @property
    def shown(self) -> bool:
        return self.n >= MIN_PAIRED_SEEDS and self.p <= SIGN_ALPHA

    def text(self) -> str:
        if self.n < MIN_PAIRED_SEEDS:
            return (
                f"{self.k} of {self.n} seeds on the claimed side: too few seeds for the sign "
                f"test (at least {MIN_PAIRED_SEEDS})"
            )
        if self.side == 0 and self.margin is not None:
            lo, hi = self.margin
            need = "" if self.shown else f" (at {self.n} seeds it needs {sign_needed(self.n)})"
            return (
                f"{self.k} of {self.n} seeds within [{num(lo)}, {num(hi)}] on the side "
                f"that fails worse, sign test on each side p = {self.p:.3g}{need}; 90 % "
                f"interval on the median: [{num(self.bound)}, {num(self.upper)}]"
            )
        rel = ">" if self.side > 0 else "<"
        bound = "-" if self.bound is None else num(self.bound)
        need = "" if self.shown else f" (at {self.n} seeds it needs {sign_needed(self.n)})"
        return (
            f"{self.k} of {self.n} seeds on the claimed side, sign test p = {self.p:.3g}"
            f"{need}; 95 % bound on the median: {rel} {bound}"
        )


def sign_needed(n: int) -> int:
    """The fewest of n seeds on the claimed side that the one-sided sign test at SIGN_ALPHA
    shows (n + 1 when none does: fewer than MIN_PAIRED_SEEDS seeds)."""
    tail = 0.0
    for k in range(n, -1, -1):
        tail += math.comb(n, k) / 2**n
        if tail > SIGN_ALPHA:
            return k + 1
    return n + 1  # not reached: the whole tail (k = 0) is 1


def sign_test(claim: Claim, per_seed: tuple[float, ...] | list[float] | None) -> Paired:
    """One-sided sign test of the per-seed values against "no difference" on the claim's side;
    a value on "no difference" (or not finite) counts against the claim."""
    assert claim.paired is not None
    if claim.equivalence():
        null = NULL[claim.paired]
        return equivalence_test(per_seed or (), null, claim.tolerance.absolute(null))
    return paired_test(per_seed or (), NULL[claim.paired], claim.claimed_side())


def equivalence_test(
    per_seed: tuple[float, ...] | list[float], null: float, margin: float
) -> Paired:
    """A claim of no difference: the sign test on each side (the per-seed values above
    null - margin, and below null + margin), both at 5 %; shown when both are (the median's 90 %
    interval inside the band). k and p are the worse side's."""
    lo = paired_test(per_seed, null - margin, 1)
    hi = paired_test(per_seed, null + margin, -1)
    worse = lo if lo.p >= hi.p else hi
    return Paired(
        worse.n,
        worse.k,
        worse.p,
        lo.bound,
        0,
        upper=hi.bound,
        margin=(null - margin, null + margin),
    )


def tie(claim: Claim, value: float) -> bool:
    """A paired ratio within TIE of 1, or a share whose ratio to the other group's is."""
    if claim.equivalence():
        return False  # no difference is what such a claim says
    if claim.paired == "ratio":
        return abs(value - 1.0) <= TIE
    if claim.paired == "share":
        return value < 1.0 and abs(value / (1.0 - value) - 1.0) <= TIE
    return False


def paired_test(per_seed: tuple[float, ...] | list[float], null: float, side: int) -> Paired:
    """The sign test of per-seed values against `null` on `side` (+1 above, -1 below)."""
    values = [float(x) for x in per_seed if x is not None]
    n = len(values)
    k = sum(1 for x in values if math.isfinite(x) and (x - null) * side > 0)
    p = sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n if n else 1.0
    # the bound: the j-th value from the claimed side's far end with P(Bin(n, 1/2) <= j-1) <= a
    finite = sorted((x for x in values if math.isfinite(x)), key=lambda x: x * side)
    bound, cum = None, 0.0
    for j in range(1, n + 1):
        cum += math.comb(n, j - 1) / 2**n
        if cum > SIGN_ALPHA:
            break
        if j <= len(finite):
            bound = finite[j - 1]
    return Paired(n, k, p, bound, side)


@dataclass(frozen=True)
class Row:
    claim: Claim
    engine: str
    measured: Measured
    distance: float | None
    verdict: str
    flag: str = ""  # tie, floor/lockout, path mismatch: why a finding cannot be reproduced
    paired: Paired | None = None

    def doc(self) -> dict[str, Any]:
        c = self.claim
        m = self.measured
        return {
            "id": c.id,
            "kind": c.kind,
            "what": c.what,
            "cite": c.cite,
            "engine": self.engine,
            "paper": list(c.paper) if isinstance(c.paper, tuple) else c.paper,
            "relation": c.relation,
            "unit": c.unit,
            "paper_text": c.paper_text(),
            "tolerance": c.tolerance.text(),
            "partly": c.partly_tolerance().text(),
            "satcc": _finite_or_none(m.value),
            "satcc_text": value_text(self),
            "distance": self.distance,
            "verdict": self.verdict,
            "verdict_text": verdict_text(self),
            "holds": input_holds(self) if c.kind == "input" else None,  # an input on this run
            "flag": self.flag or None,
            "paired": c.paired,
            "sign_test": None
            if self.paired is None
            else {
                "n": self.paired.n,
                "k": self.paired.k,
                "p": self.paired.p,
                "bound": _finite_or_none(self.paired.bound),
                "upper": _finite_or_none(self.paired.upper),  # an equivalence's upper bound
                "shown": self.paired.shown,
            },
            "inputs": list(c.inputs),
            "per_seed": None if m.per_seed is None else [_finite_or_none(x) for x in m.per_seed],
            "seeds": m.seeds,
            "source": m.source,
            "skipped": m.skipped or None,
            "how": m.how,
            "why": m.why,
            "quote": c.quote,
            "note": c.note,
        }


def distance(claim: Claim, value: float) -> float:
    """How far `value` is from what the claim says (0 when it holds)."""
    p = claim.paper
    if claim.relation == "within":
        lo, hi = p  # type: ignore[misc]
        return max(0.0, lo - value, value - hi)
    assert isinstance(p, (int, float))
    if claim.relation == "near":
        return abs(value - p)
    if claim.relation == "above":
        return max(0.0, p - value)
    return max(0.0, value - p)


def _reference(claim: Claim, value: float) -> float:
    """What a relative tolerance is a fraction of: the paper's value (the nearer bound)."""
    if isinstance(claim.paper, tuple):
        lo, hi = claim.paper
        return lo if abs(value - lo) <= abs(value - hi) else hi
    return claim.paper


def verdict(
    claim: Claim, value: float | None, per_seed: tuple[float, ...] | list[float] | None = None
) -> tuple[float | None, str]:
    """(distance, verdict) of satcc's value against the claim; no value is `not`. An input's
    verdict is `input`; its distance is still given (how far the scenario is from the study).
    A paired claim also needs its sign test and is never reproduced on a tie."""
    d, v, _flag, _p = _judge_value(claim, value, per_seed)
    return d, v


def across(
    claim: Claim,
    points: dict[str, tuple[float | None, tuple[float, ...] | None]],
    unknown: str,
) -> tuple[str, str]:
    """A finding across a swept unknown the paper does not give (a buffer): judged only when
    every plausible point gives the same verdict. Returns the sweep as text (value and verdict
    per point) and, when the points' verdicts differ, why the finding is not judged."""
    verdicts = {q: verdict(claim, v, s)[1] for q, (v, s) in points.items()}
    sweep = "; ".join(
        f"{q}: {'-' if v is None else f'{v:.3g}'} {claim.unit} ({verdicts[q]})".replace("  ", " ")
        for q, (v, _s) in points.items()
    )
    if len(set(verdicts.values())) > 1:
        return sweep, (
            f"not judged: the verdict depends on {unknown}, which the paper does not give "
            f"(sweep: {sweep})"
        )
    return sweep, ""


def _judge_value(
    claim: Claim, value: float | None, per_seed: tuple[float, ...] | list[float] | None
) -> tuple[float | None, str, str, Paired | None]:
    if value is None or not math.isfinite(value):
        return None, INPUT if claim.kind == "input" else NOT, "", None
    d = distance(claim, value)
    if claim.kind == "input":
        return d, INPUT, "", None
    holds = holds_exactly(claim, value)
    if claim.relation in ("above", "below"):
        v = REPRODUCED if holds else NOT  # the wrong side (or the threshold): never partly
    else:
        ref = _reference(claim, value)

        def within(limit: float) -> bool:
            # "more than x" is not met by x itself: a zero tolerance needs the strict relation
            return holds or (limit > 0 and d <= limit + 1e-12)

        if within(claim.tolerance.absolute(ref)):
            v = REPRODUCED
        elif within(claim.partly_tolerance().absolute(ref)):
            v = PARTLY
        else:
            v = NOT
    if claim.paired is None:
        return d, v, "", None
    test = sign_test(claim, per_seed)
    if tie(claim, value):
        what = (
            f"{num(value)} is within {TIE * 100:g} % of 1"
            if claim.paired == "ratio"
            else f"a share of {num(value)} is within {TIE * 100:g} % of the other group's"
        )
        return d, NOT, f"tie: {what}", test
    if v != NOT and not test.shown:
        return d, PARTLY, "", test  # on the claim's side but not shown across seeds
    return d, v, "", test


def input_holds(row: Row) -> bool:
    """An input's value is within its tolerance of the study's (strict for above/below)."""
    c, v = row.claim, row.measured.value
    if v is None or not math.isfinite(v):
        return False
    if c.relation in ("above", "below"):
        return holds_exactly(c, v)
    return distance(c, v) <= c.tolerance.absolute(_reference(c, v)) + 1e-12


def holds_exactly(claim: Claim, value: float) -> bool:
    """The claim as stated, no tolerance: strict for above/below, inclusive otherwise."""
    p = claim.paper
    # strict, and a value on the threshold but for floating-point rounding is on it (a ratio
    # of two equal standard deviations summed in another order reads 1.0000000000000002)
    eps = EQUAL_REL * max(1.0, abs(float(p))) if claim.relation in ("above", "below") else 0.0
    if claim.relation == "above":
        return value > p + eps  # type: ignore[operator]
    if claim.relation == "below":
        return value < p - eps  # type: ignore[operator]
    return distance(claim, value) == 0.0


def judge(
    claim: Claim, engine: str, measured: Measured, failed_inputs: tuple[str, ...] = ()
) -> Row:
    """One claim's row: the verdict from the value, then what keeps a finding from counting
    (a floor or lockout, a path whose inputs fail on this run)."""
    if measured.skipped and claim.kind == "finding":
        return Row(claim, engine, measured, None, NOT_JUDGED)
    d, v, flag, test = _judge_value(claim, measured.value, measured.per_seed)
    if claim.kind == "finding":
        if measured.degenerate:
            flag = measured.degenerate
        mismatch = [i for i in claim.inputs if i in failed_inputs]
        if mismatch:
            flag = "path mismatch: " + ", ".join(mismatch)
        if flag:
            v = NOT
    return Row(claim, engine, measured, d, v, flag, test)


def judge_all(
    spec: StudyClaims, engine: str, measured: dict[str, Measured], kernel: bool = False
) -> list[Row]:
    """Every claim of a study on one engine: inputs first, then the findings, each finding
    flagged when an input it names fails on this run. A claim id the study module did not
    measure is an error (a claims file and its module out of step), never a verdict.
    `kernel`: the runs are the kernel design's, whose cuts leave some findings not judged
    (`StudyClaims.kernel_skipped`)."""
    missing = [c.id for c in spec.claims if c.id not in measured]
    if missing:
        raise UserError(
            f"study {spec.id}: the claims file names {', '.join(missing)}, which "
            f"satcc.studies.study{spec.id}.measure() does not produce"
        )
    if kernel:
        from dataclasses import replace

        measured = dict(measured)
        for cid, why in spec.kernel_skipped().items():
            measured[cid] = replace(measured[cid], skipped=why)
    inputs = [judge(c, engine, measured[c.id]) for c in spec.claims if c.kind == "input"]
    failed = tuple(r.claim.id for r in inputs if not input_holds(r))
    rows = {r.claim.id: r for r in inputs}
    for c in spec.claims:
        if c.kind == "finding":
            rows[c.id] = judge(c, engine, measured[c.id], failed)
    return [rows[c.id] for c in spec.claims]


def load(study: str, path: Path | None = None) -> StudyClaims:
    """Read data/study<ID>.toml (or `path`); a bad file is a one-line-per-problem UserError."""
    path = path or DATA_DIR / f"study{study}.toml"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: expected the study's claims file, found no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: invalid TOML: {e}") from None
    body = dict(doc.get("study", {}))
    body["claims"] = doc.get("claim", [])
    body["not_judged"] = doc.get("not_judged", [])
    body["anomalies"] = doc.get("anomaly", [])
    body["path"] = doc.get("path", [])
    body["kernel_cuts"] = doc.get("kernel_cut", [])
    tables = ("study", "claim", "not_judged", "anomaly", "path", "kernel_cut")
    extra = sorted(set(doc) - set(tables))
    if extra:
        raise UserError(f"{path}: expected tables {', '.join(tables)}; found {', '.join(extra)}")
    try:
        out = StudyClaims.model_validate(body)
    except ValidationError as e:
        lines = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"])
            parts = [str(x) for x in err["loc"]]
            tables = {
                "claims": "claim",
                "not_judged": "not_judged",
                "anomalies": "anomaly",
                "path": "path",
                "kernel_cuts": "kernel_cut",
            }
            if len(parts) >= 2 and parts[0] in tables:
                loc = f"{tables[parts[0]]}[{parts[1]}]" + "".join(f".{x}" for x in parts[2:])
            lines.append(f"{path}: {loc}: {err['msg']}")
        raise UserError("\n".join(lines)) from None
    ids = [c.id for c in out.claims]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UserError(f"{path}: claim.id: expected distinct ids, found {', '.join(dupes)} twice")
    inputs = {c.id for c in out.claims if c.kind == "input"}
    for c in out.claims:
        unknown = [i for i in c.inputs if i not in inputs]
        if unknown:
            raise UserError(
                f"{path}: claim {c.id}: inputs: expected ids of input claims, found "
                f"{', '.join(unknown)}"
            )
    findings = {c.id for c in out.claims if c.kind == "finding"}
    for k, cut in enumerate(out.kernel_cuts):
        unknown = [i for i in cut.not_judged if i not in findings]
        unknown += [i for i in cut.weakens if i not in ids]
        if unknown:
            raise UserError(
                f"{path}: kernel_cut[{k}]: expected ids of this file's claims (not_judged: "
                f"findings), found {', '.join(unknown)}"
            )
    if out.no_kernel and out.kernel_cuts:
        raise UserError(f"{path}: study.no_kernel: a study without a kernel design has no cuts")
    for k, n in enumerate(out.not_judged):
        text = f"{n.what} {n.reason}"
        named = [
            c.id
            for c in out.claims
            if c.kind == "finding" and re.search(rf"(?<![\w-]){re.escape(c.id)}(?![\w-])", text)
        ]
        if named:
            raise UserError(
                f"{path}: not_judged[{k}]: names claim {', '.join(named)}: a result is either "
                "judged (a claim) or not judged, never both"
            )
    return out


# -- formatting ----------------------------------------------------------------------------------


def num(x: float | None) -> str:
    """A number as the claim tables print it (3 significant digits below 10, "-" for none)."""
    if x is None or not math.isfinite(x):
        return "-"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 0.01:
        return f"{x:.3g}"
    return f"{x:.2g}"


def value_text(row: Row) -> str:
    v = row.measured.value
    return "-" if v is None else f"{num(v)}{' ' + row.claim.unit if row.claim.unit else ''}"


def verdict_text(row: Row) -> str:
    """The verdict column: an input says where the study measured it; a flagged finding
    (tie, floor, lockout, path mismatch) says why it does not count."""
    if row.claim.kind == "input":
        return f"input (from {row.claim.cite}{input_state(row)})"
    return f"{row.verdict} ({row.flag})" if row.flag else row.verdict


def input_state(row: Row) -> str:
    """Whether an input holds on this run, as printed after its citation: nothing when it
    holds, "; misses" beyond its tolerance, "; not measured" without a value."""
    v = row.measured.value
    if v is None or not math.isfinite(v):
        return "; not measured"
    return "" if input_holds(row) else "; misses"


def tolerance_text(claim: Claim) -> str:
    if claim.relation in ("above", "below"):
        return "strict, sign test" if claim.paired else "strict"
    test = ", sign test" if claim.paired else ""
    return f"{claim.tolerance.text()} / {claim.partly_tolerance().text()}{test}"


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def tally(rows: list[Row]) -> dict[str, int]:
    """Verdict counts over the findings (inputs are not tallied)."""
    return {
        v: sum(1 for r in rows if r.claim.kind == "finding" and r.verdict == v) for v in VERDICTS
    }


def ordered(rows: list[Row]) -> list[Row]:
    """Findings first, then inputs (the order of the printed table)."""
    return [r for r in rows if r.claim.kind == "finding"] + [
        r for r in rows if r.claim.kind == "input"
    ]


def table_lines(rows: list[Row], width: int = 100, study: StudyClaims | None = None) -> list[str]:
    """The claims table as plain text: one line per claim (findings, then inputs), the reasons
    underneath, the tally of findings, the coverage, what is not judged and the anomalies."""
    from satcc.textgrid import grid

    engines = {r.engine for r in rows}
    cols = ["claim", "cite", "paper", "satcc", "seeds", "tolerance", "verdict"]
    if len(engines) > 1:
        cols.insert(3, "engine")
    body = []
    for r in ordered(rows):
        cells = [
            r.claim.id,
            r.claim.cite,
            r.claim.paper_text(),
            value_text(r),
            "-" if r.measured.seeds is None else str(r.measured.seeds),
            tolerance_text(r.claim),
            verdict_text(r),
        ]
        if len(engines) > 1:
            cells.insert(3, r.engine)
        body.append(cells)
    lines = grid(cols, body, left={0, 1, len(cols) - 1})
    reasons = [
        r for r in ordered(rows) if r.verdict != REPRODUCED and (r.measured.why or r.measured.how)
    ]
    if reasons:
        lines.append("")
        lines.append("where satcc differs, and why (inputs: satcc's path beside the study's):")
        for r in reasons:
            text = r.measured.skipped or r.measured.why or r.measured.how
            if r.paired is not None:
                text += "; " + r.paired.text()
            if r.measured.per_seed is not None:
                text += "; per seed: " + ", ".join(num(x) for x in r.measured.per_seed)
            lines.extend(_wrap(f"- {r.claim.id} ({r.engine}, {verdict_text(r)}): {text}", width))
    counts = tally(rows)
    n_inputs = sum(1 for r in rows if r.claim.kind == "input")
    skipped = sum(1 for r in rows if r.verdict == NOT_JUDGED)
    lines.append("")
    lines.append(
        "findings: "
        + ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
        + (f", {skipped} not judged in this design" if skipped else "")
        + f"; {n_inputs} input(s), not tallied"
        + " (near/within: tolerance / partly; above/below: strict; paired: sign test)"
    )
    missing = [r for r in rows if r.claim.kind == "input" and input_state(r)]
    if missing:
        parts = []
        for r in missing:
            named = sorted({f.claim.id for f in rows if r.claim.id in f.claim.inputs})
            parts.append(
                f"{r.claim.id} ({r.engine}{input_state(r)}: "
                + (f"the path of {', '.join(named)})" if named else "no finding's path)")
            )
        lines.extend(
            _wrap("inputs that miss the study's path on this run: " + "; ".join(parts), width)
        )
    flagged = [r for r in rows if r.flag]
    if flagged:
        lines.append(
            "not counted as reproduced: "
            + "; ".join(f"{r.claim.id} ({r.engine}): {r.flag}" for r in flagged)
        )
    if study is not None:
        judged, total = study.coverage(rows)
        share = f" ({100 * judged / total:.0f} %)" if total else ""
        lines.append(
            f"coverage: {judged} of the paper's {total} main results judged as findings{share}"
        )
        if study.not_judged:
            lines.append("not judged:")
            for n in study.not_judged:
                lines.extend(_wrap(f"- {n.what} ({n.cite}): {n.reason}", width))
        if study.anomalies:
            lines.append("the paper's own anomalies:")
            for a in study.anomalies:
                lines.extend(_wrap(f"- {a.what} ({a.cite}): {a.note}", width))
    return lines


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent="  ") or [text]
