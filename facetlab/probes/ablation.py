"""C2 per-factor ablation: factor K's text replaced by its neutral rewrite.

A perturbation set (``instances/perturbations/<id>-c2.json``) holds one
``neutral_rewrite`` per factor. Three prompt forms use it:

- ``form="weighted"`` (default; the C2 runs in ``results/weighted-probe/c2``):
  the weighted-rank prompt of the anchor with factor K rewritten.
- ``form="pilot"``: the pilot C0 prompt with factor K rewritten
  (``conditions.<inst>-c2-fK.prompt`` in the pilot files).
- ``form="reconstruction"``: the same, asking whether the description omits a
  factor (``reconstruction_check_prompt``).
"""

import re
from typing import Any

from facetlab.errors import ConfigError, InstanceError
from facetlab.probes.base import ParseResult, Probe
from facetlab.probes.outcome import outcome_prompt, parse_outcome_reply
from facetlab.probes.parsing import strip_markdown, unreadable
from facetlab.probes.templates import DEFAULT_TEMPLATE, factor_texts, field_of
from facetlab.probes.weighted_rank import (
    REPLY_FORMAT,
    parse_weighted_reply,
    reply_schema,
    weighted_rank_prompt,
)

FORMS = ("weighted", "pilot", "reconstruction")

RECONSTRUCTION_QUESTION = (
    "Reading only the case description above, does it omit any factor you believe a court "
    "would typically weigh in this analysis? If yes, name the omitted factor on the first "
    "line. If no, reply with exactly 'no omission' on the first line. Then add one sentence "
    "of explanation."
)

_FACTOR_ARG = re.compile(r"^[fF](\d+)$")


def _iid(obj: Any) -> str:
    return str(field_of(obj, "instance_id") or field_of(obj, "base_instance_id") or "<instance>")


def factor_id(factor: str | None) -> str:
    """Normalise ``"F3"``/``"f3"`` to the stored lowercase id ``"f3"``.

    >>> factor_id("F3")
    'f3'
    """
    m = _FACTOR_ARG.match(factor or "")
    if m is None:
        raise ConfigError(f"C2 needs --factor fK (e.g. f3 or F3), got {factor!r}")
    return f"f{int(m.group(1))}"


def perturbation_list(perturbations: Any) -> list[Any]:
    """The ``perturbations`` entries of a perturbation set (model or dict)."""
    items = field_of(perturbations, "perturbations")
    return list(items) if items else []


def perturbed_factors(instance: Any, perturbations: Any) -> tuple[str, ...]:
    """Factor ids of ``instance`` that ``perturbations`` rewrites, in factor order."""
    ids = {str(field_of(p, "perturbed_factor_id")) for p in perturbation_list(perturbations)}
    factors = field_of(instance, "factors") or []
    return tuple(str(field_of(f, "factor_id")) for f in factors if field_of(f, "factor_id") in ids)


def perturbed_texts(instance: Any, factor: str | None, perturbations: Any) -> list[str]:
    """The anchor's factor texts with factor ``factor`` replaced by its neutral rewrite."""
    if perturbations is None:
        raise ConfigError(f"C2 on {_iid(instance)} needs its perturbation set (perturbations=...)")
    fid = factor_id(factor)
    rewrite = None
    for p in perturbation_list(perturbations):
        if str(field_of(p, "perturbed_factor_id")).lower() == fid:
            rewrite = field_of(p, "neutral_rewrite")
    if not isinstance(rewrite, str) or not rewrite:
        raise InstanceError(
            f"perturbation set of {_iid(perturbations)}: no neutral_rewrite for factor {fid}"
        )
    factors = field_of(instance, "factors") or []
    texts = factor_texts(instance)
    for position, f in enumerate(factors):
        if str(field_of(f, "factor_id")).lower() == fid:
            texts[position] = rewrite
            return texts
    raise InstanceError(f"{_iid(instance)}: has no factor with factor_id {fid!r}")


def c2_prompt(
    instance: Any,
    factor: str | None,
    perturbations: Any,
    template: str = DEFAULT_TEMPLATE,
    *,
    form: str = "weighted",
) -> str:
    """The C2 prompt for ablating ``factor`` of ``instance`` in one of :data:`FORMS`."""
    texts = perturbed_texts(instance, factor, perturbations)
    if form == "weighted":
        return weighted_rank_prompt(instance, template, texts=texts)
    if form == "pilot":
        return outcome_prompt(instance, template, texts=texts)
    if form == "reconstruction":
        return outcome_prompt(
            instance, template, texts=texts, question=RECONSTRUCTION_QUESTION, instruction=None
        )
    raise ConfigError(f"unknown C2 form {form!r}; expected one of {', '.join(FORMS)}")


def parse_reconstruction_reply(text: str) -> ParseResult:
    """Reconstruction check: ``answer="no"`` for "no omission", ``"yes"`` when a factor is named.

    >>> parse_reconstruction_reply("**No omission.**\\nAll five ...").answer
    'no'
    """
    if (unread := unreadable(text)) is not None:
        return unread
    first = strip_markdown(text.strip().split("\n", 1)[0]).strip().lower()
    if first.startswith("no omission"):
        return ParseResult(status="ok", answer="no")
    return ParseResult(status="ok", answer="yes", problems=("omission named: " + first[:120],))


def _build(
    instance: Any,
    *,
    template: str = DEFAULT_TEMPLATE,
    factor: str | None = None,
    perturbations: Any = None,
    form: str = "weighted",
    **extra: Any,
) -> str:
    return c2_prompt(instance, factor, perturbations, template, form=form)


def _applies(instance: Any, *, perturbations_available: bool = False, **_: bool) -> bool:
    return perturbations_available


def _factors(instance: Any, perturbations: Any) -> tuple[str, ...]:
    return perturbed_factors(instance, perturbations) if perturbations is not None else ()


def parse_pilot_c2_reply(text: str, *, parser: str = "strict") -> ParseResult:
    """Pilot C2 variant replies follow the C0 format."""
    return parse_outcome_reply(text, parser=parser)


C2 = Probe(
    name="c2",
    title="C2 per-factor ablation (neutral rewrite of one factor, weighted-rank)",
    reply_format=REPLY_FORMAT,
    per_factor=True,
    _applies=_applies,
    _build=_build,
    _parse=parse_weighted_reply,
    _factors=_factors,
    _schema=reply_schema,
)
