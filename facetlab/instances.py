"""Instances: the multi-factor decision cases every probe is run on.

An *instance* is one decision (a legal case, a triage call, a loan file) with
its background, an ordered list of *factors*, a yes/no question and the ground
truth. Factors are labelled by position: the i-th factor is ``F<i>`` in every
prompt and weight vector, whatever its ``factor_id`` says.

The models keep every field they do not declare (FACET files carry many), so a
file read and written back loses nothing. Two companion file kinds hang off an
instance: a C2 :class:`PerturbationSet` (one neutral rewrite per factor) and a
C3 :class:`ComplianceSet` (one compliance requirement per factor).

Example:
    >>> from facetlab.instances import load_instances
    >>> instances = load_instances()  # the FACET v3 instances  # doctest: +SKIP
    >>> cf = instances["facet-neg-cf-002"]  # doctest: +SKIP
    >>> cf.labels, cf.neutralized_label  # doctest: +SKIP
    (['F1', 'F2', 'F3', 'F4', 'F5'], 'F3')
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from facetlab.errors import InstanceError
from facetlab.jsonio import read_json_file

__all__ = [
    "CUE_PHRASES",
    "DIRECTION_WORDS",
    "NEUTRALIZED",
    "SIGNAL_WORDS",
    "ComplianceRequirement",
    "ComplianceSet",
    "Factor",
    "Favours",
    "FileKind",
    "GroundTruth",
    "Instance",
    "Issue",
    "Perturbation",
    "PerturbationSet",
    "compliance_issues",
    "detect_kind",
    "favours",
    "find_perturbation_set",
    "instance_issues",
    "json_type",
    "label_of",
    "load_compliance_set",
    "load_instance",
    "load_instances",
    "load_perturbation_set",
    "parse_issues",
    "perturbation_issues",
    "read_json",
    "read_json_file",
]

NEUTRALIZED = "neutralized"
"""The ``directionality`` that marks the factor a counterfactual neutralizes."""

FileKind = Literal["instance", "perturbations", "compliance"]

Favours = Literal["yes", "no", "neither"]
"""Which answer a factor points to: the question's ``yes``, its ``no``, or ``neither``."""

DIRECTION_WORDS: dict[str, Favours] = {
    # generic words: usable in any domain whose question is yes/no
    "toward_yes": "yes",
    "against_no": "yes",
    "toward_no": "no",
    "against_yes": "no",
    # FACET v3: every question asks whether the defendant is liable / owes a duty
    "toward_liability": "yes",
    "against_liability": "no",
    "toward_duty": "yes",
    "against_duty": "no",
    # no direction
    "neutral": "neither",
    "split": "neither",
    "mixed": "neither",
    NEUTRALIZED: "neither",
}
"""The built-in directionality vocabulary. Any other word must be declared by the
instance in ``directionality_vocabulary``; nothing is guessed from a prefix."""

SIGNAL_WORDS: tuple[str, ...] = (
    "unresolved",
    "neither clearly",
    "treated as",
    "not load-bearing",
    "diffuse",
)
"""The neutrality signal words FACET removed to build its adversarial rewrites
(their ``metadata.removed_signal_words``); the ``cue`` reasoner reacts to these."""

CUE_PHRASES: tuple[str, ...] = (
    *SIGNAL_WORDS,
    "load-bearing",
    "dispositive",
    "decisive",
    "clearly controlling",
    "open question",
    "not developed as",
)
"""Phrases that tell a reader a factor was neutralized: the signal words plus the
recurring wording of FACET's counterfactual and C2 rewrites. ``facetlab validate``
warns when one appears where the text should be cue-free (adversarial and C2 texts)."""

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
                f"{_VOCABULARY_HINT}"
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
        kind = (self.instance_type or "").strip().lower()
        return kind == "counterfactual" or bool(self.base_instance_id)

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


_VOCABULARY_HINT = (
    "expected one of " + ", ".join(DIRECTION_WORDS) + ", or a word declared in "
    "directionality_vocabulary (mapping it to 'yes', 'no' or 'neither')"
)


def favours(directionality: str, vocabulary: Mapping[str, Favours] | None = None) -> Favours | None:
    """The answer a direction word points to, or None when the word is unknown.

    The instance's declared ``vocabulary`` is read first, then :data:`DIRECTION_WORDS`;
    case and surrounding spaces are ignored, prefixes never are. This is the one
    mapping behind ``facetlab validate`` and the simulated reasoners.

    >>> favours("toward_liability"), favours("Neutral"), favours("toward_denial")
    ('yes', 'neither', None)
    >>> favours("toward_denial", {"toward_denial": "no"})
    'no'
    """
    word = directionality.strip().lower()
    if word == NEUTRALIZED:  # structural: a neutralized factor never points anywhere
        return "neither"
    declared = {k.strip().lower(): v for k, v in (vocabulary or {}).items()}
    return declared.get(word, DIRECTION_WORDS.get(word))


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

    def apply(self, base: Instance) -> Instance:
        """The base instance with this factor's text replaced by the neutral rewrite."""
        return base.with_factor_text(
            base.label_for_factor_id(self.perturbed_factor_id), self.neutral_rewrite
        )


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


# ---------------------------------------------------------------------------
# Issues: every problem a document can have, with its JSON pointer.


@dataclass(frozen=True)
class Issue:
    """A problem inside one JSON document (the file is added by the caller)."""

    pointer: str
    severity: Literal["error", "warning"]
    message: str


_JSON_TYPE = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
    list: "an array",
    dict: "an object",
}


def json_type(value: object) -> str:
    """JSON name of a parsed value's type, with its article.

    >>> json_type([1]), json_type("x"), json_type(None)
    ('an array', 'a string', 'null')
    """
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _pointer(loc: Sequence[int | str]) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in loc)


def _expected(model: type[BaseModel], loc: Sequence[int | str]) -> str | None:
    """'a string: what it is' for the field at ``loc``, walking the model tree."""
    current: type[BaseModel] | None = model
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        if current is None or part not in current.model_fields:
            return None
        info = current.model_fields[part]
        annotation = info.annotation
        args = getattr(annotation, "__args__", ())
        nested = [
            a for a in (annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        current = nested[0] if nested else None
    if info is None:
        return None
    origin = getattr(info.annotation, "__origin__", None)
    if origin is list:
        kind = "an array"
    elif current is not None:
        kind = "an object"
    elif info.annotation is str:
        kind = "a string"
    else:
        kind = "a value"
    description = (info.description or "").rstrip(".")
    return f"{kind}: {description[:1].lower()}{description[1:]}" if description else kind


def parse_issues(error: ValidationError, model: type[BaseModel]) -> list[Issue]:
    """Turn a pydantic ``ValidationError`` into :class:`Issue` lines that say what was expected."""
    issues = []
    for err in error.errors(include_url=False):
        loc = tuple(err["loc"])
        kind = err["type"]
        value = err.get("input")
        name = str(loc[-1]) if loc else "value"
        if kind == "missing":
            what = _expected(model, loc)
            message = f"missing required field '{name}'" + (f" (expected {what})" if what else "")
        elif kind == "string_type":
            message = f"expected a string, got {json_type(value)}"
        elif kind in ("float_type", "float_parsing", "int_type", "int_parsing"):
            message = f"expected a number, got {json_type(value)}"
        elif kind in ("bool_type", "bool_parsing"):
            message = f"expected true or false, got {json_type(value)}"
        elif kind == "list_type":
            message = f"expected an array, got {json_type(value)}"
        elif kind in ("model_type", "dict_type", "model_attributes_type"):
            message = f"expected an object, got {json_type(value)}"
        elif kind == "value_error":
            message = str(err["msg"]).removeprefix("Value error, ")
        else:
            message = str(err["msg"])
        issues.append(Issue(_pointer(loc), "error", message))
    return issues


def instance_issues(instance: Instance) -> list[Issue]:
    """Checks beyond the field types: factor count, ids, counterfactual structure, weights.

    Example:
        >>> factors = [{"factor_id": "f1", "text": "A.", "directionality": "toward_yes"}] * 2
        >>> inst = Instance.model_validate({"instance_id": "x", "doctrine": "d",
        ...     "case_background": "B.", "factors": factors, "question": "Q?",
        ...     "ground_truth": {"answer": "no", "rationale": "R."}})
        >>> [(i.pointer, i.severity) for i in instance_issues(inst)]
        [('/factors', 'warning'), ('/factors/1/factor_id', 'error')]
    """
    issues: list[Issue] = []
    n = instance.n_factors
    if n < 2:
        issues.append(Issue("/factors", "error", f"expected at least 2 factors, found {n}"))
    elif n < 5:
        issues.append(
            Issue(
                "/factors",
                "warning",
                f"expected at least 5 factors for a multi-factor probe, found {n}",
            )
        )
    seen: dict[str, int] = {}
    for i, factor in enumerate(instance.factors):
        if factor.factor_id in seen:
            issues.append(
                Issue(
                    f"/factors/{i}/factor_id",
                    "error",
                    f"duplicate factor_id {factor.factor_id!r} (also at /factors/{seen[factor.factor_id]}); expected unique ids",
                )
            )
        else:
            seen[factor.factor_id] = i
    issues.extend(_direction_issues(instance))
    neutralized = instance.neutralized_labels
    if instance.is_counterfactual and len(neutralized) != 1:
        found = ", ".join(neutralized) if neutralized else "none"
        issues.append(
            Issue(
                "/factors",
                "error",
                f"a counterfactual needs exactly one factor with directionality 'neutralized', found {len(neutralized)} ({found})",
            )
        )
    elif not instance.is_counterfactual and neutralized:
        issues.append(
            Issue(
                f"/factors/{int(neutralized[0][1:]) - 1}/directionality",
                "warning",
                "factor is 'neutralized' but the instance is not a counterfactual; "
                "expected base_instance_id or instance_type 'counterfactual'",
            )
        )
    if instance.ground_truth.answer.strip().lower() not in ("yes", "no"):
        issues.append(
            Issue(
                "/ground_truth/answer",
                "warning",
                f"expected 'yes' or 'no' (probes score yes/no answers), got {instance.ground_truth.answer!r}",
            )
        )
    estimates = [f.in_case_weight_estimate for f in instance.factors]
    present = [e for e in estimates if e is not None]
    if present and len(present) != len(estimates):
        missing = [label_of(i) for i, e in enumerate(estimates) if e is None]
        issues.append(
            Issue(
                "/factors",
                "warning",
                f"in_case_weight_estimate missing for {', '.join(missing)}; expected all or none",
            )
        )
    elif present:
        total = sum(present)
        if not (math.isclose(total, 1.0, abs_tol=0.02) or math.isclose(total, 100.0, abs_tol=2.0)):
            issues.append(
                Issue(
                    "/factors",
                    "warning",
                    f"in_case_weight_estimate values sum to {total:g}; expected about 1 (fractions) or 100 (percents)",
                )
            )
    return issues


def _direction_issues(instance: Instance) -> list[Issue]:
    """Every factor's direction must map to yes / no / neither (see :func:`favours`)."""
    issues: list[Issue] = []
    vocabulary = instance.directionality_vocabulary or {}
    for word in vocabulary:
        if word.strip().lower() == NEUTRALIZED and vocabulary[word] != "neither":
            issues.append(
                Issue(
                    _pointer(("directionality_vocabulary", word)),
                    "error",
                    "'neutralized' marks the counterfactual's neutralized factor; expected it "
                    "to map to 'neither' (or to be left out)",
                )
            )
    for i, factor in enumerate(instance.factors):
        if favours(factor.directionality, vocabulary) is None:
            issues.append(
                Issue(
                    f"/factors/{i}/directionality",
                    "error",
                    f"directionality {factor.directionality!r} maps to no answer of the "
                    f"yes/no question; {_VOCABULARY_HINT}",
                )
            )
    return issues


def perturbation_issues(pset: PerturbationSet, base: Instance | None) -> list[Issue]:
    """Checks of a C2 set against its base instance (None: base unknown, only self-checks)."""
    issues: list[Issue] = []
    seen: dict[str, int] = {}
    for i, p in enumerate(pset.perturbations):
        if p.perturbed_factor_id in seen:
            issues.append(
                Issue(
                    f"/perturbations/{i}/perturbed_factor_id",
                    "error",
                    f"second rewrite of factor {p.perturbed_factor_id!r} (first at /perturbations/{seen[p.perturbed_factor_id]}); expected one per factor",
                )
            )
        seen.setdefault(p.perturbed_factor_id, i)
    if base is None:
        return issues
    ids = [f.factor_id for f in base.factors]
    for i, p in enumerate(pset.perturbations):
        if p.perturbed_factor_id not in ids:
            issues.append(
                Issue(
                    f"/perturbations/{i}/perturbed_factor_id",
                    "error",
                    f"unknown factor {p.perturbed_factor_id!r}; expected a factor_id of {base.instance_id} ({', '.join(ids)})",
                )
            )
    missing = [fid for fid in ids if fid not in seen]
    if missing:
        issues.append(
            Issue(
                "/perturbations",
                "warning",
                f"no neutral rewrite for {', '.join(missing)}; expected one per factor of {base.instance_id}",
            )
        )
    return issues


def compliance_issues(cset: ComplianceSet, base: Instance | None) -> list[Issue]:
    """Checks of a C3 set against its base instance (None: base unknown)."""
    issues: list[Issue] = []
    if base is None:
        return issues
    ids = [f.factor_id for f in base.factors]
    for i, req in enumerate(cset.compliance_requirements):
        fid = req.base_factor_id
        if req.maps_to_base_factor and fid not in ids:
            issues.append(
                Issue(
                    f"/compliance_requirements/{i}/maps_to_base_factor",
                    "error",
                    f"unknown factor {req.maps_to_base_factor!r}; expected it to start with a factor_id of {base.instance_id} ({', '.join(ids)})",
                )
            )
    return issues


# ---------------------------------------------------------------------------
# Reading files.


def read_json(path: Path) -> Any:
    """Parse a JSON file; any failure is an :class:`InstanceError` naming the file.

    Example: ``read_json(Path("bad.json"))`` raises
    ``InstanceError("bad.json: invalid JSON at line 5 column 1: ...")``.
    """
    data, problem = read_json_file(path)
    if problem is not None:
        raise InstanceError(f"{path}: {problem}")
    return data


def detect_kind(path: Path, data: object) -> FileKind:
    """Which kind of file this is: by shape first, then by folder or file name.

    >>> detect_kind(Path("x.json"), {"perturbations": []})
    'perturbations'
    >>> detect_kind(Path("compliance/x-c3.json"), None)
    'compliance'
    """
    if isinstance(data, dict):
        if "perturbations" in data:
            return "perturbations"
        if "compliance_requirements" in data:
            return "compliance"
        if "factors" in data:
            return "instance"
    if path.parent.name == "perturbations" or path.name.endswith("-c2.json"):
        return "perturbations"
    if path.parent.name == "compliance" or path.name.endswith("-c3.json"):
        return "compliance"
    return "instance"


def _raise(path: Path, issues: Iterable[Issue]) -> None:
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        lines = [f"{path}:{i.pointer}: {i.message}" for i in errors]
        raise InstanceError("\n".join(lines))


M = TypeVar("M", bound=BaseModel)


def _parse(path: Path, model: type[M], data: object | None = None) -> M:
    if data is None:
        data = read_json(path)
    if not isinstance(data, dict):
        raise InstanceError(
            f"{path}: expected a JSON object at the top level, got {json_type(data)}"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        _raise(path, parse_issues(exc, model))
        raise  # unreachable: parse_issues always yields errors for a ValidationError


def load_instance(path: Path | str) -> Instance:
    """Read and check one instance file; raise :class:`InstanceError` on any error.

    Warnings (e.g. fewer than 5 factors) do not stop loading; ``facetlab
    validate`` lists them.

    Example:
        >>> inst = load_instance("instances/example-domain-0001.json")  # doctest: +SKIP
        >>> inst.labels[:2], inst.ground_truth.answer  # doctest: +SKIP
        (['F1', 'F2'], 'no')
    """
    path = Path(path)
    instance = _parse(path, Instance)
    _raise(path, instance_issues(instance))
    return instance


def load_perturbation_set(path: Path | str) -> PerturbationSet:
    """Read one C2 perturbation file (``instances/perturbations/<id>-c2.json``)."""
    path = Path(path)
    pset = _parse(path, PerturbationSet)
    _raise(path, perturbation_issues(pset, None))
    return pset


def load_compliance_set(path: Path | str) -> ComplianceSet:
    """Read one C3 compliance file (``instances/compliance/<id>-c3.json``)."""
    return _parse(Path(path), ComplianceSet)


def _facet_instances_dir() -> Path:
    from facetlab.datasets import data_dir  # late import: datasets is heavier and optional here

    return data_dir() / "instances"


def _instance_files(directory: Path) -> list[Path]:
    files = []
    for path in sorted(directory.glob("*.json")):
        data, problem = read_json_file(path)
        # An unreadable file is kept: load_instance reports it precisely.
        if problem is not None or detect_kind(path, data) == "instance":
            files.append(path)
    return files


def _resolve(item: Path | str) -> list[Path]:
    path = Path(item)
    if path.is_dir():
        return _instance_files(path)
    if path.is_file():
        return [path]
    if isinstance(item, str) and "/" not in item and not item.endswith(".json"):
        candidate = _facet_instances_dir() / f"{item}.json"
        if candidate.is_file():
            return [candidate]
        raise InstanceError(
            f"instance {item!r}: expected a file, a folder or an instance id; "
            f"no {candidate.name} in {candidate.parent}"
        )
    raise InstanceError(f"{item}: no such file or folder (expected instance JSON files)")


def load_instances(
    source: Path | str | Iterable[Path | str] | None = None,
) -> dict[str, Instance]:
    """Load instances keyed by ``instance_id``, in file-name order.

    ``source`` is a folder (its top-level instance files; C2/C3 files are
    skipped), one file, an instance id resolved in the FACET data, or an
    iterable of those. None means every FACET v3 instance (fetched and
    verified on first use, see :mod:`facetlab.datasets`).

    Example:
        >>> load_instances(["facet-neg-cf-001", "facet-neg-0002"])  # doctest: +SKIP
    """
    items: list[Path | str]
    if source is None:
        items = [_facet_instances_dir()]
    elif isinstance(source, (str, Path)):
        items = [source]
    else:
        items = list(source)
    instances: dict[str, Instance] = {}
    origin: dict[str, Path] = {}
    for item in items:
        for path in _resolve(item):
            inst = load_instance(path)
            if inst.instance_id in instances and origin[inst.instance_id] != path:
                raise InstanceError(
                    f"{path}:/instance_id: duplicate instance_id {inst.instance_id!r} "
                    f"(also in {origin[inst.instance_id]}); expected unique ids"
                )
            instances[inst.instance_id] = inst
            origin[inst.instance_id] = path
    return instances


def find_perturbation_set(
    instance_id: str, instances_dir: Path | str | None = None
) -> PerturbationSet | None:
    """The C2 set whose base is ``instance_id``, or None if there is none.

    Looks in ``<instances_dir>/perturbations/`` (default: the FACET data),
    first at ``<instance_id>-c2.json``, then at every file's ``base_instance_id``.
    """
    folder = (Path(instances_dir) if instances_dir else _facet_instances_dir()) / "perturbations"
    direct = folder / f"{instance_id}-c2.json"
    if direct.is_file():
        pset = load_perturbation_set(direct)
        if pset.base_instance_id == instance_id:
            return pset
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if path == direct:
            continue
        pset = load_perturbation_set(path)
        if pset.base_instance_id == instance_id:
            return pset
    return None
