"""The paper-claims audit: every number the FACET paper states, re-derived from the data.

A :class:`Claim` is one number (or count, set, yes/no statement) the paper prints,
with where it appears, the paper's wording, the paper's value, a tolerance that
matches the paper's rounding, and a *recipe*: a function of :class:`ClaimInputs`
(the ``load_trials`` frame plus the data directory for instance files) that
computes the value from the raw data. The entries live in
:mod:`facetlab.paper.registry`.

:func:`facetlab.paper.audit.run_audit` evaluates every claim and compares it with the paper:

* ``PASS`` — the computed value matches within the tolerance;
* ``MISMATCH`` — it does not. A mismatch is evidence about the paper, not a bug:
  the registry records the expected status and the evidence (``explanation``);
* ``NOT_DERIVABLE`` — the number is not in the data (a claim without recipe);
* ``ERROR`` — the recipe raised (the audit never crashes on one claim).

Every claim has a ``kind``, so a reader can tell evidence from echo:

* ``data`` — derived from the raw files (only these count in the headline);
* ``metadata`` — transcribed facts (licence, DOI) and facetlab's own model table
  (labs, open/closed weights), which was written from the paper's Table 1;
* ``setting`` — an analysis parameter the audit was run with (PASS exactly at the paper's setting);
* ``convention`` — a property of the data the paper does not state (CONVENTIONS.md).

An explanation may name computed values: ``{name}`` placeholders are filled from
the claim's ``evidence`` function, so its numbers come from the data, not from
hand-typed text.

>>> from facetlab.paper.claims import Claim, ClaimInputs, evaluate
>>> import pandas as pd
>>> c = Claim("demo", "Abstract", "eight models", 8, lambda x: len(x.trials))
>>> evaluate(c, ClaimInputs(pd.DataFrame({"a": range(8)}))).status
'PASS'
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pandas as pd

from facetlab.analysis import rules
from facetlab.errors import DataError, FacetlabError
from facetlab.paper.models import with_paper_cases

__all__ = [
    "AUDIT_COLUMNS",
    "KINDS",
    "AuditSummary",
    "Claim",
    "ClaimInputs",
    "ClaimResult",
    "Evidence",
    "Kind",
    "Relation",
    "Status",
    "Value",
    "evaluate",
    "format_report",
    "format_value",
    "render_explanation",
    "summarize_audit",
]

Value = bool | int | float | str
"""What a claim states: a number, a count, a yes/no statement, or a canonical string."""

Status = Literal["PASS", "MISMATCH", "NOT_DERIVABLE", "ERROR"]
Relation = Literal["==", ">=", "<="]
Kind = Literal["data", "metadata", "setting", "convention"]
KINDS: tuple[Kind, ...] = ("data", "metadata", "setting", "convention")

AUDIT_COLUMNS: tuple[str, ...] = (
    "id",
    "kind",
    "location",
    "wording",
    "paper_value",
    "computed_value",
    "tolerance",
    "status",
    "expected_status",
    "explanation",
)
"""Columns of the audit frame and of ``paper/claims.csv``, in order."""

# Float noise allowance on top of the rounding tolerance (e.g. 0.05 + 1e-9).
_EPS = 1e-9


@dataclass(frozen=True)
class ClaimInputs:
    """What a recipe may read: the trials frame, the data root, and the analysis settings.

    ``data_dir`` is the root of a FACET data tree (holds ``instances/``); recipes
    about instance files raise :class:`DataError` when it is ``None``.
    """

    trials: pd.DataFrame
    data_dir: Path | None = None
    threshold: float = rules.DEFAULT_THRESHOLD
    split_point: float = rules.DEFAULT_SPLIT_POINT

    def __post_init__(self) -> None:
        # The paper groups by its own case labels, not by what the instance files name.
        object.__setattr__(self, "trials", with_paper_cases(self.trials))

    def require_data_dir(self) -> Path:
        """The data root: ``data_dir``, else :func:`facetlab.datasets.data_dir` (may fetch)."""
        if self.data_dir is not None:
            return self.data_dir
        from facetlab import datasets

        return datasets.data_dir()


Recipe = Callable[[ClaimInputs], Value]
Evidence = Callable[[ClaimInputs], Mapping[str, Value]]
"""Named values an explanation quotes (``{name}`` or ``{name:.1f}`` in its text)."""


@dataclass(frozen=True)
class Claim:
    """One number the paper states, and how to re-derive it.

    ``relation`` is ``"=="`` for an ordinary value, ``">="`` / ``"<="`` for a bound
    such as "350+ raw outputs". ``recipe=None`` marks a claim the data cannot
    decide (status ``NOT_DERIVABLE``; ``explanation`` says why).
    """

    id: str
    location: str
    wording: str
    paper_value: Value
    recipe: Recipe | None
    tolerance: float = 0.0
    expected_status: Status = "PASS"
    explanation: str = ""
    relation: Relation = "=="
    kind: Kind = "data"
    evidence: Evidence | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} is not one of {KINDS}")
        if self.expected_status in ("MISMATCH", "NOT_DERIVABLE") and not self.explanation:
            raise ValueError(f"claim {self.id}: {self.expected_status} needs an explanation")
        if (self.recipe is None) != (self.expected_status == "NOT_DERIVABLE"):
            raise ValueError(f"claim {self.id}: NOT_DERIVABLE exactly when recipe is None")


@dataclass(frozen=True)
class ClaimResult:
    """A claim with its computed value and status."""

    claim: Claim
    computed_value: Value | None
    status: Status
    error: str = ""
    explanation: str = ""
    """The claim's explanation with its ``{name}`` placeholders filled from the evidence."""

    def as_row(self) -> dict[str, object]:
        """One row of the audit frame (columns :data:`AUDIT_COLUMNS`)."""
        c = self.claim
        explanation = self.explanation or c.explanation
        if self.error:
            explanation = f"{explanation} [recipe error: {self.error}]".strip()
        return {
            "id": c.id,
            "kind": c.kind,
            "location": c.location,
            "wording": c.wording,
            "paper_value": format_value(c.paper_value, c.relation),
            "computed_value": ""
            if self.computed_value is None
            else format_value(self.computed_value),
            "tolerance": format_value(c.tolerance),
            "status": self.status,
            "expected_status": c.expected_status,
            "explanation": explanation,
        }


def format_value(value: Value, relation: Relation = "==") -> str:
    """Stable text form of a value (so the committed CSV is deterministic).

    Integers print without a decimal point, floats with at most 6 significant digits,
    booleans as ``true`` / ``false``.

    >>> format_value(10.333333333), format_value(7), format_value(True), format_value(350, ">=")
    ('10.3333', '7', 'true', '>=350')
    """
    real = isinstance(value, float) and not math.isnan(value)
    text = (
        ("true" if value else "false")
        if isinstance(value, bool)
        else "nan"
        if isinstance(value, float) and not real
        else str(int(value))
        if real and value == int(value) and abs(value) < 1e15
        else f"{value:.6g}"
        if real
        else str(value)
    )
    return text if relation == "==" else f"{relation}{text}"


def _matches(claim: Claim, computed: Value) -> bool:
    paper = claim.paper_value
    if isinstance(paper, bool) or isinstance(computed, bool):
        return bool(paper) == bool(computed) and isinstance(computed, bool) == isinstance(
            paper, bool
        )
    if isinstance(paper, str) or isinstance(computed, str):
        return str(paper) == str(computed)
    got, want = float(computed), float(paper)
    if math.isnan(got):
        return False
    if claim.relation == ">=":
        return got >= want - claim.tolerance - _EPS
    if claim.relation == "<=":
        return got <= want + claim.tolerance + _EPS
    return abs(got - want) <= claim.tolerance + _EPS


def _normalise(value: object) -> Value:
    # numpy scalars and pandas NA → plain Python values, so formatting is stable.
    if isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):
        item = value.item()
        if isinstance(item, (bool, int, float, str)):
            return item
    if value is None or value is pd.NA:
        return float("nan")
    raise DataError(f"recipe returned {type(value).__name__}, expected bool, int, float or str")


_RECIPE_ERRORS = (FacetlabError, KeyError, ValueError, IndexError, TypeError, ZeroDivisionError)


def render_explanation(claim: Claim, inputs: ClaimInputs) -> str:
    """The explanation with ``{name}`` filled from ``claim.evidence(inputs)``.

    >>> c = Claim("d", "Abstract", "w", 1, lambda x: 2, expected_status="MISMATCH",
    ...     explanation="{n} trials", evidence=lambda x: {"n": len(x.trials)})
    >>> render_explanation(c, ClaimInputs(pd.DataFrame({"a": range(3)})))
    '3 trials'
    """
    if claim.evidence is None:
        return claim.explanation
    values = {k: _normalise(v) for k, v in claim.evidence(inputs).items()}
    return claim.explanation.format(**values)


def evaluate(claim: Claim, inputs: ClaimInputs) -> ClaimResult:
    """Run one claim's recipe and compare it with the paper's value."""
    if claim.recipe is None:
        return ClaimResult(claim, None, "NOT_DERIVABLE", explanation=claim.explanation)
    try:
        computed = _normalise(claim.recipe(inputs))
        explanation = render_explanation(claim, inputs)
    except _RECIPE_ERRORS as exc:
        return ClaimResult(claim, None, "ERROR", f"{type(exc).__name__}: {exc}")
    status: Status = "PASS" if _matches(claim, computed) else "MISMATCH"
    return ClaimResult(claim, computed, status, explanation=explanation)


@dataclass(frozen=True)
class AuditSummary:
    """Counts of an audit by status, and the claims whose status differs from expected."""

    counts: dict[str, int] = field(default_factory=dict)
    unexpected: tuple[str, ...] = ()


def summarize_audit(audit: pd.DataFrame) -> AuditSummary:
    """Status counts and the ids whose status is not the registry's expected status.

    >>> df = pd.DataFrame({"id": ["a"], "status": ["PASS"], "expected_status": ["PASS"]})
    >>> summarize_audit(df).unexpected
    ()
    """
    counts = {str(k): int(v) for k, v in audit["status"].value_counts().sort_index().items()}
    bad = audit.loc[audit["status"] != audit["expected_status"], "id"]
    return AuditSummary(counts, tuple(str(x) for x in bad))


def format_report(audit: pd.DataFrame, *, only_unexpected: bool = False) -> str:
    """One line per claim: status, id, paper vs computed value, and the evidence of mismatches.

    >>> df = pd.DataFrame([{"id": "a", "location": "Abstract", "wording": "eight models",
    ...     "paper_value": "8", "computed_value": "8", "tolerance": "0", "status": "PASS",
    ...     "expected_status": "PASS", "explanation": ""}])
    >>> print(format_report(df))
    PASS           a  paper=8  computed=8  [Abstract]
    1 claims: 1 PASS; all statuses as expected
    """
    lines: list[str] = []
    for rec in audit.to_dict("records"):
        row = {k: "" if pd.isna(v) else str(v) for k, v in rec.items()}
        status, expected = row["status"], row["expected_status"]
        if only_unexpected and status == expected:
            continue
        flag = "" if status == expected else f"  (expected {expected})"
        line = (
            f"{status:<14} {row['id']}  paper={row['paper_value']}  "
            f"computed={row['computed_value']}  [{row['location']}]{flag}"
        )
        if status != "PASS" and row["explanation"]:
            line += f"\n{'':<15}evidence: {row['explanation']}"
        lines.append(line)
    summary = summarize_audit(audit)
    counts = ", ".join(f"{n} {status}" for status, n in summary.counts.items())
    tail = (
        "all statuses as expected"
        if not summary.unexpected
        else f"UNEXPECTED status for {len(summary.unexpected)}: {', '.join(summary.unexpected)}"
    )
    lines.append(f"{len(audit)} claims: {counts}; {tail}")
    return "\n".join(lines)
