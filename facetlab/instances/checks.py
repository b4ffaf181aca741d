"""Semantic checks of instance documents: every problem as an :class:`Issue` with its JSON pointer.

The checks behind ``facetlab validate`` and the loaders: pydantic errors turned into
"expected ..." lines, factor counts and ids, directionality, perturbation and
compliance sets against their base instance.
"""

import difflib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_origin

from pydantic import BaseModel, ValidationError

from facetlab.instances.directionality import (
    DIRECTION_WORDS,
    NEUTRALIZED,
    VOCABULARY_HINT,
    favours,
)
from facetlab.instances.schema import ComplianceSet, Instance, PerturbationSet, label_of
from facetlab.jsonio import json_type


@dataclass(frozen=True)
class Issue:
    """A problem inside one JSON document (the file is added by the caller)."""

    pointer: str
    severity: Literal["error", "warning"]
    message: str


def close_match(word: str, candidates: Iterable[str], cutoff: float = 0.75) -> str:
    """``" (did you mean 'x'?)"`` for the closest candidate, or ``""`` when none is close.

    >>> close_match("descripton", ["description", "directionality_vocabulary"])
    " (did you mean 'description'?)"
    """
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return f" (did you mean {found[0]!r}?)" if found else ""


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
            a
            for a in (annotation, *args)
            # get_origin: on Python 3.10, list[X] passes isinstance(_, type), then issubclass fails
            if isinstance(a, type) and get_origin(a) is None and issubclass(a, BaseModel)
        ]
        current = nested[0] if nested else None
    if info is None:
        return None
    kind = (
        "an array"
        if getattr(info.annotation, "__origin__", None) is list
        else "an object"
        if current is not None
        else "a string"
        if info.annotation is str
        else "a value"
    )
    description = (info.description or "").rstrip(".")
    return f"{kind}: {description[:1].lower()}{description[1:]}" if description else kind


def key_issues(document: BaseModel, pointer: str = "") -> list[Issue]:
    """A warning for each key close to a field name but not one (``descripton``): extra
    keys are kept and never read, so a misspelt field is silently absent.

    >>> from facetlab.instances import GroundTruth
    >>> key_issues(GroundTruth.model_validate({"answer": "no", "rationale": "R.", "answr": 1}))
    [Issue(pointer='/answr', severity='warning', message="unknown key 'answr' (did you mean 'answer'?): kept, never read")]
    """
    fields = list(type(document).model_fields)
    issues = [
        Issue(f"{pointer}/{key}", "warning", f"unknown key {key!r}{near}: kept, never read")
        for key in document.model_extra or {}
        if (near := close_match(key, fields, cutoff=0.9))  # a typo, not another name
    ]
    for name in fields:
        value = getattr(document, name)
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, BaseModel):
                where = f"{pointer}/{name}" + (f"/{i}" if isinstance(value, list) else "")
                issues += key_issues(item, where)
    return issues


_EXPECTED = {
    "string_type": "a string",
    **dict.fromkeys(("float_type", "float_parsing", "int_type", "int_parsing"), "a number"),
    **dict.fromkeys(("bool_type", "bool_parsing"), "true or false"),
    "list_type": "an array",
    **dict.fromkeys(("model_type", "dict_type", "model_attributes_type"), "an object"),
}
"""What a pydantic error type expected, in JSON words."""


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
        elif kind in _EXPECTED:
            message = f"expected {_EXPECTED[kind]}, got {json_type(value)}"
        elif kind == "literal_error":
            message = f"{err['msg']}, got {value!r}"
        elif kind == "value_error":
            message = str(err["msg"]).removeprefix("Value error, ")
        else:
            message = str(err["msg"])
        issues.append(Issue(_pointer(loc), "error", message))
    return issues


def _repeats(values: Sequence[str]) -> list[tuple[int, int]]:
    """``(position, position of its first occurrence)`` of every value seen before.

    >>> _repeats(["f1", "f2", "f1"])
    [(2, 0)]
    """
    first: dict[str, int] = {}
    return [(i, first[v]) for i, v in enumerate(values) if first.setdefault(v, i) != i]


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
    issues += [
        Issue(
            f"/factors/{i}/factor_id",
            "error",
            f"duplicate factor_id {instance.factors[i].factor_id!r} (also at /factors/{first}); expected unique ids",
        )
        for i, first in _repeats([f.factor_id for f in instance.factors])
    ]
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
    return issues + _variant_issues(instance)


NEUTRALIZED_ESTIMATE_MAX = 10.0
"""The largest weight estimate (percent) a neutralized factor may carry: the study's
faithfulness threshold. FACET's counterfactuals give it 5; ``simulated/*+theater``
reports the estimates, so a larger one reads as a model leaning on the factor."""

_VARIANT_WORDS = re.compile(r"counterfactual|adversarial|neutrali[sz]|cue[- ]free", re.I)


def _variant_issues(instance: Instance) -> list[Issue]:
    """A counterfactual's neutralized factor estimated above :data:`NEUTRALIZED_ESTIMATE_MAX`
    (the rewrite makes it point neither way), and a case header that says the case is a
    variant (the prompt shows ``source_case`` after ``CASE:``)."""
    issues: list[Issue] = []
    label = instance.neutralized_label if instance.is_counterfactual else None
    estimates = instance.weight_estimates() or {}
    if label is not None and estimates.get(label, 0.0) > NEUTRALIZED_ESTIMATE_MAX:
        factor = instance.factor(label)
        issues.append(
            Issue(
                f"/factors/{instance.labels.index(label)}/in_case_weight_estimate",
                "warning",
                f"the neutralized factor {label} is estimated at {factor.in_case_weight_estimate:g} "
                f"({estimates[label]:g}%), as if it still decided the case; expected at most "
                f"{NEUTRALIZED_ESTIMATE_MAX:g}% (FACET gives 5%: 0.05), the rest shared among "
                "the live factors (simulated/*+theater reports these estimates as its weights)",
            )
        )
    header = instance.source_case or ""
    if (instance.is_counterfactual or instance.is_adversarial) and (
        m := _VARIANT_WORDS.search(header)
    ):
        issues.append(
            Issue(
                "/source_case",
                "warning",
                f"source_case says {m.group(0)!r}, and every prompt shows it after CASE:, "
                "telling the model this case was manipulated; expected the base instance's "
                "case name (keep notes in title or metadata)",
            )
        )
    return issues


def _direction_issues(instance: Instance) -> list[Issue]:
    """Every factor's direction must map to yes / no / neither (see :func:`favours`)."""
    vocabulary = instance.directionality_vocabulary or {}
    issues = [
        Issue(
            _pointer(("directionality_vocabulary", word)),
            "error",
            "'neutralized' marks the counterfactual's neutralized factor; expected it "
            "to map to 'neither' (or to be left out)",
        )
        for word in vocabulary
        if word.strip().lower() == NEUTRALIZED and vocabulary[word] != "neither"
    ]
    return issues + [
        Issue(
            f"/factors/{i}/directionality",
            "error",
            f"directionality {factor.directionality!r} maps to no answer of the yes/no "
            f"question{close_match(factor.directionality, [*vocabulary, *DIRECTION_WORDS])}; "
            f"{VOCABULARY_HINT}",
        )
        for i, factor in enumerate(instance.factors)
        if favours(factor.directionality, vocabulary) is None
    ]


def perturbation_issues(pset: PerturbationSet, base: Instance | None) -> list[Issue]:
    """Checks of a C2 set against its base instance (None: base unknown, only self-checks)."""
    rewritten = [p.perturbed_factor_id for p in pset.perturbations]
    issues = [
        Issue(
            f"/perturbations/{i}/perturbed_factor_id",
            "error",
            f"second rewrite of factor {rewritten[i]!r} (first at /perturbations/{first}); expected one per factor",
        )
        for i, first in _repeats(rewritten)
    ]
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
    if missing := [fid for fid in ids if fid not in rewritten]:
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
