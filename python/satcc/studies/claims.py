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
judged findings / (judged findings + not judged).

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

A difference between two groups (`across_seeds = true`, above/below only) is shown only when it
holds in every seed: the study module gives one value per seed (`Measured.per_seed`, each the
same statistic computed from that seed's runs alone); the pooled value on the claim's side with
every seed agreeing is `reproduced`; the pooled value on the claim's side with some seed
disagreeing (or a single seed) is `partly` ("not shown across seeds"); otherwise `not`.
No value (satcc cannot measure it, or the run was too short): not.
"""

from __future__ import annotations

import math
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

Relation = Literal["near", "above", "below", "within"]
Kind = Literal["input", "finding"]


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
    across_seeds: bool = False  # a difference between groups: shown only when every seed agrees

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
        if self.relation in ("above", "below"):
            if self.tolerance.amount != 0 or (self.partly is not None and self.partly.amount != 0):
                raise ValueError(
                    f"relation {self.relation!r} is strict: expected tolerance = 0 and no partly "
                    "(write a vague word as its threshold in paper)"
                )
        elif self.across_seeds:
            raise ValueError("across_seeds applies to relation 'above' or 'below' only")

    def cite_section(self) -> str:
        """The citation as printed beside an input: 'input (from §4.2)'."""
        return self.cite

    def paper_text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if isinstance(self.paper, tuple):
            return f"{_num(self.paper[0])}-{_num(self.paper[1])}{unit}"
        sign = {"near": "≈", "above": ">", "below": "<"}[self.relation]
        return f"{sign} {_num(self.paper)}{unit}"

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

    def coverage(self) -> tuple[int, int]:
        """(main results judged as findings, main results listed: findings + not judged)."""
        n = sum(1 for c in self.claims if c.kind == "finding")
        return n, n + len(self.not_judged)


@dataclass(frozen=True)
class Measured:
    """satcc's value for one claim: the number (None: not measured), how it was measured, and
    why it differs from the paper's (with numbers; shown when the verdict is not reproduced)."""

    value: float | None
    how: str = ""
    why: str = ""
    seeds: int | None = None  # how many seeds (independent runs per point) the value pools
    source: str = ""  # which campaign, runs and columns the number comes from
    per_seed: tuple[float, ...] | None = None  # the same statistic per seed (across_seeds)
    skipped: str = ""  # why this design cannot judge the claim (e.g. --quick runs too short)


@dataclass(frozen=True)
class Row:
    claim: Claim
    engine: str
    measured: Measured
    distance: float | None
    verdict: str

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
            "across_seeds": c.across_seeds,
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
    verdict is `input`; its distance is still given (how far the scenario is from the study)."""
    if value is None or not math.isfinite(value):
        return None, INPUT if claim.kind == "input" else NOT
    d = distance(claim, value)
    if claim.kind == "input":
        return d, INPUT
    holds = holds_exactly(claim, value)
    if claim.relation in ("above", "below"):
        if not holds:
            return d, NOT  # the wrong side (or the threshold itself): never partly
        if claim.across_seeds and not shown_across_seeds(claim, per_seed):
            return d, PARTLY
        return d, REPRODUCED
    ref = _reference(claim, value)

    def within(limit: float) -> bool:
        # "more than x" is not met by x itself: a zero tolerance needs the strict relation
        return holds or (limit > 0 and d <= limit + 1e-12)

    if within(claim.tolerance.absolute(ref)):
        return d, REPRODUCED
    if within(claim.partly_tolerance().absolute(ref)):
        return d, PARTLY
    return d, NOT


def shown_across_seeds(claim: Claim, per_seed: tuple[float, ...] | list[float] | None) -> bool:
    """A difference is shown when at least two seeds give a value and every one holds."""
    values = [x for x in (per_seed or ()) if x is not None]
    if len(values) < 2:
        return False
    return all(math.isfinite(x) and holds_exactly(claim, x) for x in values)


def holds_exactly(claim: Claim, value: float) -> bool:
    """The claim as stated, no tolerance: strict for above/below, inclusive otherwise."""
    p = claim.paper
    if claim.relation == "above":
        return value > p  # type: ignore[operator]
    if claim.relation == "below":
        return value < p  # type: ignore[operator]
    return distance(claim, value) == 0.0


def judge(claim: Claim, engine: str, measured: Measured) -> Row:
    if measured.skipped and claim.kind == "finding":
        return Row(claim, engine, measured, None, NOT_JUDGED)
    d, v = verdict(claim, measured.value, measured.per_seed)
    return Row(claim, engine, measured, d, v)


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
    extra = sorted(set(doc) - {"study", "claim", "not_judged", "anomaly"})
    if extra:
        raise UserError(
            f"{path}: expected tables study, claim, not_judged, anomaly; found {', '.join(extra)}"
        )
    try:
        out = StudyClaims.model_validate(body)
    except ValidationError as e:
        lines = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"])
            parts = [str(x) for x in err["loc"]]
            tables = {"claims": "claim", "not_judged": "not_judged", "anomalies": "anomaly"}
            if len(parts) >= 2 and parts[0] in tables:
                loc = f"{tables[parts[0]]}[{parts[1]}]" + "".join(f".{x}" for x in parts[2:])
            lines.append(f"{path}: {loc}: {err['msg']}")
        raise UserError("\n".join(lines)) from None
    ids = [c.id for c in out.claims]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UserError(f"{path}: claim.id: expected distinct ids, found {', '.join(dupes)} twice")
    return out


# -- formatting ----------------------------------------------------------------------------------


def _num(x: float | None) -> str:
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
    return "-" if v is None else f"{_num(v)}{' ' + row.claim.unit if row.claim.unit else ''}"


def verdict_text(row: Row) -> str:
    """The verdict column: an input says where the study measured it."""
    return f"input (from {row.claim.cite})" if row.claim.kind == "input" else row.verdict


def tolerance_text(claim: Claim) -> str:
    if claim.relation in ("above", "below"):
        return "strict, every seed" if claim.across_seeds else "strict"
    return f"{claim.tolerance.text()} / {claim.partly_tolerance().text()}"


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
            if r.claim.across_seeds and r.measured.per_seed is not None:
                text += "; per seed: " + ", ".join(_num(x) for x in r.measured.per_seed)
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
        + " (near/within: tolerance / partly; above/below: strict)"
    )
    if study is not None:
        judged, total = study.coverage()
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
