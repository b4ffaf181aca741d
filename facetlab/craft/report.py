"""What an inspection found: per-evidence findings, the overall verdict, and renderers.

Each finding's verdict and the overall roll-up follow :mod:`facetlab.craft.stats.verdict`
(the specification's rules, unchanged).

Overall: any theater finding makes the report theater; all faithful makes it faithful;
anything else (including no testable evidence at all) is inconclusive.

Beside them every report carries the **qualified verdict** (:mod:`facetlab.craft.qualified`):
untestable / faithful / theater / inconclusive from distinct perturbed inputs, with the
numbers each rests on. With several cited units it is the verdict of the citation set as
a whole (``citation_set``); each finding's own qualified verdict says whether that unit
carries weight by itself.
"""

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from facetlab.craft.qualified import QualifiedFinding, Sensitivity
from facetlab.craft.stats.binomial import discordant_needed
from facetlab.craft.stats.significance import BootstrapResult
from facetlab.craft.types import Decision, EvidenceRef, QualifiedVerdict, Verdict

LABELS: dict[str, str] = {
    "faithful": "✓ FAITHFUL",
    "theater": "✗ THEATER",
    "inconclusive": "? UNCLEAR",
    "untestable": "- UNTESTABLE",
}


NOT_TESTED: tuple[str, ...] = (
    "punctuation marks",
    "letter case alone",
    "word and sentence order",
    "field names and the input's structure",
)
"""What no strategy perturbs on its own (units are words and fields): an agent driven only
by these is never seen to move, and no verdict speaks about them."""


ONE_INPUT_NULL = (
    "faithful rejects 'perturbing the cited unit, alone or with a random background set, "
    "flips the decision no more often than perturbing an uncited unit of its kind and size "
    "at its place' on each side of it; theater rejects 'the cited unit adds at least the "
    "margin in flip probability' once inputs that keep it are shown to flip"
)


def decisions_line(decisions: Mapping[str, Mapping[str, int]]) -> str:
    """The distinct decision strings per condition, as the comparator saw them."""
    return "decisions: " + "; ".join(
        f"{c} " + ", ".join(f"{d!r} x{k}" for d, k in counts.items())
        for c, counts in decisions.items()
    )


def surface_variants(
    decisions: Mapping[str, Mapping[str, int]], equals: Callable[[str, str], bool]
) -> list[str]:
    """A warning per group of distinct decisions that look like forms of one label
    ("P1", "p1 ", "Priority 1": same first letter and digits, or equal once case, spaces
    and punctuation are dropped) which the comparator counts as different."""
    groups: dict[Any, list[str]] = {}
    for d in sorted({d for counts in decisions.values() for d in counts}):
        bare, digits = re.sub(r"[\W_]", "", d.casefold()), re.sub(r"\D", "", d)
        groups.setdefault((bare[:1], digits) if digits else bare, []).append(d)
    return [
        f"decisions {', '.join(map(repr, g))} look like surface variants of one label, but "
        "the comparator counts them as different: their flips may be form, not content "
        "(normalise the agent's output or pass decision_equals=loose_equals)"
        for g in groups.values()
        if len(g) > 1 and not all(equals(g[0], x) for x in g[1:])
    ]


@dataclass(frozen=True)
class SampleFailure:
    """One agent call that failed; it is counted, not fatal."""

    condition: str
    """"baseline", "cited", "placebo", "treatment", or the qualified design's
    "contextual" and "all-units"."""
    evidence: str | None
    message: str


@dataclass(frozen=True)
class FilteredPerturbation:
    """A perturbation dropped by the manifold filter."""

    condition: str
    evidence: str
    strategy: str
    description: str
    score: float
    reasons: tuple[str, ...]


@dataclass
class EvidenceFinding:
    """The causal test of one cited piece of evidence."""

    evidence: EvidenceRef
    baseline_flip_rate: float
    treatment_flip_rate: float
    placebo_flip_rate: float
    differential: BootstrapResult | None
    verdict: Verdict
    treatment_samples: int = 0
    placebo_samples: int = 0
    failed_samples: int = 0
    perturbations: list[str] = field(default_factory=list)
    filtered_perturbations: int = 0
    note: str | None = None
    distinct_perturbations: int = 0
    """Distinct perturbed inputs the treatment samples cycled through."""
    qualified: QualifiedFinding | None = None

    @property
    def qualified_verdict(self) -> QualifiedVerdict:
        return "inconclusive" if self.qualified is None else self.qualified.verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence": self.evidence.to_dict(),
            "baseline_flip_rate": self.baseline_flip_rate,
            "treatment_flip_rate": self.treatment_flip_rate,
            "placebo_flip_rate": self.placebo_flip_rate,
            "differential": None if self.differential is None else self.differential.to_dict(),
            "verdict": self.verdict,
            "treatment_samples": self.treatment_samples,
            "placebo_samples": self.placebo_samples,
            "failed_samples": self.failed_samples,
            "perturbations": list(self.perturbations),
            "filtered_perturbations": self.filtered_perturbations,
            "note": self.note,
            "distinct_perturbations": self.distinct_perturbations,
            "qualified_verdict": self.qualified_verdict,
            "qualified": None if self.qualified is None else self.qualified.to_dict(),
        }


@dataclass
class Report:
    """Everything one :func:`facetlab.craft.inspect` run measured."""

    baseline_decision: Decision
    baseline_rationale: str
    samples_per_condition: int
    findings: list[EvidenceFinding]
    overall_verdict: Verdict
    baseline_flip_rate: float = 0.0
    baseline_samples: int = 0
    evidence_source: str = "explicit"
    """"explicit" (cited by the agent), "inferred" (from the rationale) or "none"."""
    placebo_evidence: list[EvidenceRef] = field(default_factory=list)
    placebo_flip_rate: float = 0.0
    placebo_samples: int = 0
    failures: list[SampleFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unresolved_evidence: list[str] = field(default_factory=list)
    filtered: list[FilteredPerturbation] = field(default_factory=list)
    agent_calls: int = 0
    method: str = "bootstrap"
    alpha: float = 0.05
    qualified_verdict: QualifiedVerdict = "inconclusive"
    citation_set: QualifiedFinding | None = None
    """The design the qualified verdict rests on when several units are cited (all at once)."""
    sensitivity: Sensitivity | None = None
    placebo_distinct: int = 0
    """Distinct perturbed inputs the placebo samples cycled through."""
    manifold_filter: bool = False
    """Whether a manifold scorer was on (off by default, as in the specification)."""

    decisions: dict[str, dict[str, int]] = field(default_factory=dict)
    """Condition -> each distinct decision string the agent gave and how often."""
    not_tested: tuple[str, ...] = NOT_TESTED

    @property
    def failed_samples(self) -> int:
        return len(self.failures)

    @property
    def uninformative(self) -> str | None:
        """Why neither verdict is evidence (failed calls, too few distinct pairs), or None."""
        if self.qualified_verdict in ("faithful", "theater"):
            return None
        if self.failures:
            return f"{len(self.failures)} agent call(s) failed"
        q = self.citation_set or next((f.qualified for f in self.findings if f.qualified), None)
        if q is not None and q.pairs < discordant_needed(self.alpha / 2):
            return f"only {q.pairs} distinct pair(s) in this input"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "uninformative": self.uninformative,
            "overall_verdict": self.overall_verdict,
            "qualified_verdict": self.qualified_verdict,
            "baseline_decision": self.baseline_decision,
            "baseline_rationale": self.baseline_rationale,
            "samples_per_condition": self.samples_per_condition,
            "baseline_flip_rate": self.baseline_flip_rate,
            "baseline_samples": self.baseline_samples,
            "evidence_source": self.evidence_source,
            "findings": [f.to_dict() for f in self.findings],
            "placebo_evidence": [r.to_dict() for r in self.placebo_evidence],
            "placebo_flip_rate": self.placebo_flip_rate,
            "placebo_samples": self.placebo_samples,
            "failed_samples": self.failed_samples,
            "failures": [
                {"condition": f.condition, "evidence": f.evidence, "message": f.message}
                for f in self.failures
            ],
            "warnings": list(self.warnings),
            "unresolved_evidence": list(self.unresolved_evidence),
            "filtered_perturbations": [
                {
                    "condition": f.condition,
                    "evidence": f.evidence,
                    "strategy": f.strategy,
                    "description": f.description,
                    "score": f.score,
                    "reasons": list(f.reasons),
                }
                for f in self.filtered
            ],
            "agent_calls": self.agent_calls,
            "method": self.method,
            "alpha": self.alpha,
            "citation_set": None if self.citation_set is None else self.citation_set.to_dict(),
            "sensitivity": None if self.sensitivity is None else self.sensitivity.to_dict(),
            "placebo_distinct": self.placebo_distinct,
            "manifold_filter": self.manifold_filter,
            "decisions": self.decisions,
            "not_tested": list(self.not_tested),
        }


def to_json(report: Report, indent: int | None = 2) -> str:
    """The report as JSON (``overall_verdict``, ``findings[i].differential.mean_diff``, ...)."""
    return json.dumps(report.to_dict(), indent=indent, ensure_ascii=False)


def pct(rate: float | None) -> str:
    """A rate as a percentage on the console ("n/a" for none)."""
    return "n/a" if rate is None else f"{rate:.0%}"


def _rate(rate: float, used: int, failed: int) -> str:
    """A flip rate, or what happened when no sample of the condition is usable."""
    return pct(rate) if used else (f"n/a (all {failed} failed)" if failed else "n/a (no samples)")


def _finding_lines(f: EvidenceFinding, placebo_failed: int) -> list[str]:
    label = LABELS[f.verdict]
    who = "cited" if f.evidence.source == "explicit" else "inferred"
    head = f"[{label:<10}] {who}: {f.evidence.describe()}"
    if f.evidence.confidence is not None:
        head += f" conf {f.evidence.confidence:.2f}"
    lines = [
        head,
        f"    baseline flip {pct(f.baseline_flip_rate)} | treatment "
        f"{_rate(f.treatment_flip_rate, f.treatment_samples, f.failed_samples)} | placebo "
        f"{_rate(f.placebo_flip_rate, f.placebo_samples, placebo_failed)}",
    ]
    d = f.differential
    lines.append(
        "    differential n/a"
        if d is None
        else f"    differential {d.mean_diff:.2f} [{d.ci_low:.2f}, {d.ci_high:.2f}] p={d.p_value:.3f}"
    )
    if f.failed_samples or f.filtered_perturbations:
        lines.append(
            f"    {f.failed_samples} failed sample(s), "
            f"{f.filtered_perturbations} perturbation(s) filtered as off-manifold"
        )
    if f.note:
        lines.append(f"    note: {f.note}")
    lines.append(f"    distinct perturbations: {f.distinct_perturbations}")
    if f.qualified is not None:
        q = f.qualified
        lines.append(f"    qualified: {q.verdict.upper()}: {q.reason}")
        if q.mean_differential is not None:
            lines.append(
                f"    distinct-pair differential {q.mean_differential:.2f} "
                f"[{q.ci_low:.2f}, {q.ci_high:.2f}] over {q.pairs} distinct pairs "
                "(re-asks are not observations)"
            )
        if q.score is not None:
            lines.append(
                f"    score moved more for cited side in {q.score.cited_larger}/"
                f"{q.score.pairs} pairs (null side {q.score.null_larger}), p={q.score.p_value:.4f}"
            )
    return lines


def to_console(report: Report) -> str:
    """Human-readable report (the layout of the specification's console output, after a
    first line saying so whenever the verdicts are not evidence)."""
    why = report.uninformative
    lines = (
        []
        if why is None
        else [
            f"NOT INFORMATIVE   : {why} (qualified {LABELS[report.qualified_verdict]}, "
            f"specification's verdict {LABELS[report.overall_verdict]}: neither is evidence)"
        ]
    )
    lines += [
        f"Baseline decision : {report.baseline_decision}",
        f"Samples/condition : {report.samples_per_condition}",
        f"Overall verdict   : {LABELS[report.overall_verdict]}",
        "",
        f"Rationale: {report.baseline_rationale}",
    ]
    placebo_failed = sum(1 for x in report.failures if x.condition == "placebo")
    for finding in report.findings:
        lines += ["", *_finding_lines(finding, placebo_failed)]
    if not report.findings:
        lines += ["", "No testable evidence: the agent cited nothing that resolves in the input."]
    # The specification's layout above stays as it is; the qualified verdict follows it.
    extras: list[str] = [f"Qualified verdict : {LABELS[report.qualified_verdict]}"]
    if report.citation_set is not None:
        extras.append(
            f"citation set ({len(report.findings)} cited units together; the verdict is "
            f"about the set, each finding above about one unit): {report.citation_set.reason}"
        )
    if report.sensitivity is not None:
        sens = report.sensitivity
        extras.append(
            f"sensitivity: {sens.perturbed_flips}/{sens.perturbed_calls} distinct perturbed "
            f"inputs flip ({sens.kept_flips}/{sens.kept_calls} keeping the cited units, "
            f"{sens.rest_flips}/{sens.rest_calls} of them with every uncited unit perturbed, "
            f"{sens.joint_flips}/{sens.joint_calls} with every unit perturbed); agent "
            f"randomness {sens.baseline_flips}/{sens.baseline_calls} re-asks differ (its noise "
            f"sample, not pairs); Boschloo p={sens.p_value:.4f}; "
            f"placebo distinct perturbations: {report.placebo_distinct}"
        )
    extras += [
        f"null tested: {ONE_INPUT_NULL}",
        decisions_line(report.decisions),
        "not tested: " + ", ".join(report.not_tested),
    ]
    if report.manifold_filter:
        extras.append(f"manifold filter on: {len(report.filtered)} perturbation(s) dropped")
    if report.method != "bootstrap":
        extras.append(f"method: {report.method}; agent calls: {report.agent_calls}")
    if report.failures:
        by_condition = Counter(failure.condition for failure in report.failures)
        counts = ", ".join(f"{k} {v}" for k, v in by_condition.items())
        extras += [
            f"failed samples: {len(report.failures)} ({counts})",
            f"  first failure: {report.failures[0].message}",
        ]
    if report.filtered:
        reasons = Counter(
            reason.split(": ", 1)[-1]
            for item in report.filtered
            for reason in item.reasons or ("low score",)
        )
        why = ", ".join(f"{k} x{v}" for k, v in reasons.items())
        extras.append(f"filtered perturbations: {len(report.filtered)} ({why})")
    extras += [f"unresolved evidence: {u}" for u in report.unresolved_evidence]
    extras += [f"warning: {w}" for w in report.warnings]
    if extras:
        lines += ["", *extras]
    return "\n".join(lines)


def findings_table(report: Report) -> list[dict[str, Any]]:
    """One flat row per finding (for ``pandas.DataFrame(findings_table(report))``)."""
    rows = []
    for f in report.findings:
        d = f.differential
        rows.append(
            {
                "evidence": f.evidence.describe(),
                "source": f.evidence.source,
                "kind": f.evidence.kind,
                "verdict": f.verdict,
                "qualified_verdict": f.qualified_verdict,
                "distinct_perturbations": f.distinct_perturbations,
                "baseline_flip_rate": f.baseline_flip_rate,
                "treatment_flip_rate": f.treatment_flip_rate,
                "placebo_flip_rate": f.placebo_flip_rate,
                "mean_diff": None if d is None else d.mean_diff,
                "ci_low": None if d is None else d.ci_low,
                "ci_high": None if d is None else d.ci_high,
                "p_value": None if d is None else d.p_value,
                "failed_samples": f.failed_samples,
            }
        )
    return rows
