"""Pydantic models of the three file kinds: instances, C2 perturbation sets, C3 compliance sets.

Factors are labelled by position (:func:`label_of`): the i-th factor is ``F<i>``.
The models keep every field they do not declare, so a file read and written back
loses nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr

from facetlab.errors import InstanceError
from facetlab.instances.directionality import NEUTRALIZED, VOCABULARY_HINT, Favours, favours

FileKind = Literal["instance", "perturbations", "compliance"]

_ADVERSARIAL_ID = re.compile(r"-adv\d*$")
_FACTOR_ID_PREFIX = re.compile(r"^\s*([A-Za-z]+\d+)\b")


def _non_empty(value: str) -> str:
    # Whitespace-only text would give an empty line in a prompt; reject it early.
    if not value.strip():
        raise ValueError("expected non-empty text")
    return value


# The schema says what the validator enforces, so editors flag blank text too.
Text = Annotated[
    str, AfterValidator(_non_empty), Field(json_schema_extra={"minLength": 1, "pattern": r"\S"})
]


class _Document(BaseModel):
    """Base of every model here: unknown fields are kept, assignment re-validates."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)


class Factor(_Document):
    """One consideration of an instance.

    ``directionality`` says which way the factor points (FACET uses e.g.
    ``toward_liability``, ``against_duty``, ``split``, ``neutral`` and
    ``neutralized``); any non-empty string is accepted so new domains can use
    their own vocabulary.
    """

    factor_id: Text = Field(description="Identifier of the factor inside its instance, e.g. 'f3'.")
    text: Text = Field(description="The factor as shown to the model.")
    directionality: Text = Field(
        description="Which way the factor points; 'neutralized' marks the counterfactual's neutralized factor."
    )
    in_case_weight_estimate: float | None = Field(
        default=None,
        description="Constructor's estimate of the factor's weight (a fraction, all factors summing to about 1, or a percent).",
    )


class GroundTruth(_Document):
    """The correct answer to the instance's question and why."""

    answer: Text = Field(description="The correct answer, 'yes' or 'no' for instances.")
    rationale: Text = Field(description="Why that answer is correct.")


def label_of(position: int) -> str:
    """Label of the factor at 0-based ``position``.

    >>> label_of(2)
    'F3'
    """
    return f"F{position + 1}"


def _position_of(label: str, n: int) -> int:
    match = re.fullmatch(r"[Ff](\d+)", label.strip())
    if match is None:
        raise InstanceError(f"factor label {label!r}: expected 'F<i>' with i in 1..{n}")
    index = int(match.group(1)) - 1
    if not 0 <= index < n:
        raise InstanceError(f"factor label {label!r}: expected 'F<i>' with i in 1..{n}")
    return index


class Instance(_Document):
    """One multi-factor decision case.

    Example:
        >>> inst = Instance.model_validate(
        ...     {
        ...         "instance_id": "demo-0001",
        ...         "doctrine": "demo",
        ...         "case_background": "A short story.",
        ...         "factors": [
        ...             {"factor_id": "f1", "text": "First.", "directionality": "toward_yes"},
        ...             {"factor_id": "f2", "text": "Second.", "directionality": "toward_no"},
        ...         ],
        ...         "question": "Yes or no?",
        ...         "ground_truth": {"answer": "no", "rationale": "Because."},
        ...     }
        ... )
        >>> inst.labels
        ['F1', 'F2']
    """

    instance_id: Text = Field(description="Unique id, e.g. 'facet-neg-0002' or 'triage-0001'.")
    doctrine: Text = Field(description="Domain or doctrine the decision belongs to.")
    case_background: Text = Field(description="The facts of the case, shown before the factors.")
    factors: list[Factor] = Field(
        description="Ordered factors; the i-th is labelled F<i> in prompts and weight vectors.",
        json_schema_extra={"minItems": 2},
    )
    question: Text = Field(description="The yes/no question the model answers.")
    ground_truth: GroundTruth = Field(description="Correct answer and rationale.")
    title: str | None = Field(default=None, description="Short human-readable title.")
    source_case: str | None = Field(
        default=None, description="Case or source named in weighted-rank prompts ('CASE: ...')."
    )
    doctrinal_framework: str | None = Field(
        default=None, description="The balancing test the factors come from."
    )
    jurisdiction: str | None = Field(default=None, description="Jurisdiction, if any.")
    instance_type: str | None = Field(
        default=None, description="'counterfactual' for a counterfactual variant, else absent."
    )
    base_instance_id: str | None = Field(
        default=None, description="For a counterfactual: the instance it was derived from."
    )
    directionality_vocabulary: dict[str, Favours] | None = Field(
        default=None,
        description="Direction words this instance uses, each mapped to the answer it favours "
        "('yes', 'no' or 'neither'), e.g. {'toward_denial': 'no'}; adds to the built-in words.",
    )
    # Not content: where the instance was read from, and (C2 variants) the perturbation
    # entry applied to it; records fingerprint them (facetlab.instances.fingerprint).
    _source_file: Path | None = PrivateAttr(default=None)
    _perturbation: Perturbation | None = PrivateAttr(default=None)
    _compliance: ComplianceSet | None = PrivateAttr(default=None)

    def favours(self, label: str) -> Favours:
        """Which answer factor ``label`` points to; :class:`InstanceError` if its word is unknown.

        >>> inst = Instance.model_validate({"instance_id": "x", "doctrine": "d",
        ...     "case_background": "B.", "question": "Pay the claim?",
        ...     "ground_truth": {"answer": "no", "rationale": "R."},
        ...     "directionality_vocabulary": {"toward_denial": "no"},
        ...     "factors": [{"factor_id": "f1", "text": "A.", "directionality": "toward_denial"},
        ...                 {"factor_id": "f2", "text": "B.", "directionality": "toward_yes"}]})
        >>> inst.favours("F1"), inst.favours("F2")
        ('no', 'yes')
        """
        word = self.factor(label).directionality
        found = favours(word, self.directionality_vocabulary)
        if found is None:
            raise InstanceError(
                f"{self.instance_id}: {label} has directionality {word!r}, which maps to no answer; "
                f"{VOCABULARY_HINT}"
            )
        return found

    # -- factor labels ---------------------------------------------------

    @property
    def n_factors(self) -> int:
        """Number of factors (the N of the weighted-rank prompt)."""
        return len(self.factors)

    @property
    def labels(self) -> list[str]:
        """Positional labels ``["F1", ..., "FN"]``."""
        return [label_of(i) for i in range(len(self.factors))]

    def factor(self, label: str) -> Factor:
        """The factor labelled ``label`` (``"F3"``; case-insensitive)."""
        return self.factors[_position_of(label, len(self.factors))]

    def label_for_factor_id(self, factor_id: str) -> str:
        """Positional label of the factor whose ``factor_id`` is ``factor_id``.

        Example: in FACET ``"f3"`` → ``"F3"`` (ids and positions agree there).
        """
        for i, factor in enumerate(self.factors):
            if factor.factor_id == factor_id:
                return label_of(i)
        known = ", ".join(f.factor_id for f in self.factors)
        raise InstanceError(
            f"{self.instance_id}: no factor with factor_id {factor_id!r} (expected one of {known})"
        )

    # -- counterfactual structure -----------------------------------------

    @property
    def neutralized_labels(self) -> list[str]:
        """Labels of every factor whose directionality is ``neutralized``."""
        return [
            label_of(i)
            for i, f in enumerate(self.factors)
            if f.directionality.strip().lower() == NEUTRALIZED
        ]

    @property
    def neutralized_label(self) -> str | None:
        """Label of the neutralized factor, or None when there is not exactly one."""
        labels = self.neutralized_labels
        return labels[0] if len(labels) == 1 else None

    @property
    def is_counterfactual(self) -> bool:
        """True for a counterfactual variant (marked by type or by a base instance)."""
        return (self.instance_type or "").strip().lower() == "counterfactual" or bool(
            self.base_instance_id
        )

    @property
    def is_adversarial(self) -> bool:
        """True for an adversarial rewrite (P3 material).

        FACET marks these by id suffix (``-adv``, ``-adv2``); some also carry
        ``metadata.adversarial_variant_of``. ``instance_type: adversarial`` or
        ``adversarial: true`` are honoured for new instances.
        """
        if _ADVERSARIAL_ID.search(self.instance_id):
            return True
        if (self.instance_type or "").strip().lower() == "adversarial":
            return True
        extra = self.model_extra or {}
        if extra.get("adversarial") is True:
            return True
        metadata = extra.get("metadata")
        return isinstance(metadata, dict) and bool(metadata.get("adversarial_variant_of"))

    # -- weights ----------------------------------------------------------

    def weight_estimates(self) -> dict[str, float] | None:
        """Constructor weight estimates as percents keyed by label, or None if any is missing.

        Fractions (summing to about 1) are scaled to percents; values already
        in percent are returned as they are.
        """
        values = [f.in_case_weight_estimate for f in self.factors]
        if not values or any(v is None for v in values):
            return None
        numbers = [float(v) for v in values if v is not None]
        scale = 100.0 if sum(numbers) <= 1.5 else 1.0
        return {label_of(i): round(v * scale, 9) for i, v in enumerate(numbers)}

    # -- variants -----------------------------------------------------------

    def with_factor_text(self, label: str, text: str) -> Instance:
        """A copy of this instance with factor ``label``'s text replaced (C2 rewrites)."""
        index = _position_of(label, len(self.factors))
        factors = list(self.factors)
        factors[index] = factors[index].model_copy(update={"text": _non_empty(text)})
        return self.model_copy(update={"factors": factors})


class Perturbation(_Document):
    """One C2 variant: factor ``perturbed_factor_id`` rewritten as neutral."""

    variant_id: Text = Field(description="Id of the variant, e.g. 'facet-neg-0002-c2-f3'.")
    perturbed_factor_id: Text = Field(description="factor_id of the rewritten factor, e.g. 'f3'.")
    neutral_rewrite: Text = Field(description="Replacement text that no longer points either way.")
    original_text: str | None = Field(
        default=None, description="The factor's text before rewriting."
    )
    base_weight: float | None = Field(default=None, description="The factor's weight estimate.")
    base_directionality: str | None = Field(
        default=None, description="The factor's directionality before rewriting."
    )
    expected_answer: Literal["yes", "no"] | None = Field(
        default=None,
        description="The rewritten case's own correct answer, when dropping the factor changes "
        "the decision. Without it C2 answers are compared with the base instance's answer "
        "and reported as a decision change, not as accuracy.",
    )

    def apply(self, base: Instance) -> Instance:
        """The base instance with this factor's text replaced by the neutral rewrite
        (and its ground truth by :attr:`expected_answer`, when the entry states one)."""
        variant = base.with_factor_text(
            base.label_for_factor_id(self.perturbed_factor_id), self.neutral_rewrite
        )
        if self.expected_answer is not None:
            truth = variant.ground_truth.model_copy(update={"answer": self.expected_answer})
            variant = variant.model_copy(update={"ground_truth": truth})
        variant._perturbation = self  # what the record fingerprints (not content)
        return variant


class PerturbationSet(_Document):
    """A C2 file: the neutral rewrites of one base instance, one per factor."""

    base_instance_id: Text = Field(description="instance_id of the instance these rewrite.")
    perturbations: list[Perturbation] = Field(description="One neutral rewrite per factor.")
    perturbation_type: str | None = Field(default=None, description="Kind of perturbation.")

    def for_factor_id(self, factor_id: str) -> Perturbation:
        """The rewrite of factor ``factor_id`` (``"f3"``)."""
        for p in self.perturbations:
            if p.perturbed_factor_id == factor_id:
                return p
        raise InstanceError(
            f"perturbation set of {self.base_instance_id}: no rewrite for factor {factor_id!r}"
        )

    def variants(self, base: Instance) -> dict[str, Instance]:
        """Every perturbed instance keyed by the label of the rewritten factor."""
        return {
            base.label_for_factor_id(p.perturbed_factor_id): p.apply(base)
            for p in self.perturbations
        }


class ComplianceRequirement(_Document):
    """One C3 requirement, mapped to one base factor."""

    requirement_id: Text = Field(description="Id of the requirement, e.g. 'R1'.")
    requirement_text: Text = Field(description="The bright-line requirement shown to the model.")
    maps_to_base_factor: str | None = Field(
        default=None, description="The base factor it replaces, e.g. 'f1 (gravity_of_loss)'."
    )
    expected_answer: str | None = Field(
        default=None, description="Expected answer for this requirement."
    )
    independently_checkable: bool | None = Field(
        default=None, description="Whether the requirement can be checked on its own."
    )

    @property
    def base_factor_id(self) -> str | None:
        """Leading factor id of ``maps_to_base_factor`` (``"f1 (gravity)"`` → ``"f1"``)."""
        if not self.maps_to_base_factor:
            return None
        match = _FACTOR_ID_PREFIX.match(self.maps_to_base_factor)
        return match.group(1) if match else None


class ComplianceSet(_Document):
    """A C3 file: the instance restated as independently checkable requirements."""

    instance_id: Text = Field(description="Id of the compliance variant, e.g. 'facet-neg-0002-c3'.")
    base_instance_id: Text = Field(description="instance_id of the base instance.")
    case_background: Text = Field(description="Case background shown with the requirements.")
    compliance_requirements: list[ComplianceRequirement] = Field(
        description="One requirement per base factor."
    )
    question: Text = Field(description="The compliance question.")
    ground_truth: GroundTruth = Field(description="Expected answer and rationale.")
