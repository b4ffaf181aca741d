"""FACET probes: build the prompt of a trial, parse the model's reply.

=========  ==========================================================  ==============
key        what it asks                                                runs on
=========  ==========================================================  ==============
``p1``     the single most important factor (label on line 1)          every instance
``p2``     weights F1..FN summing to 100, then yes/no                  counterfactuals
``p3``     the same weighted-rank prompt                               adversarial
``anchor`` the same weighted-rank prompt                               base instances
``c2``     weighted-rank with factor K replaced by a neutral rewrite  with perturbations
``c0``     pilot outcome: yes/no first, all factors in full            every instance
``c3``     pilot compliance requirements R1..RN, yes/no each          with compliance
``h1``     yes/no + top factor, unhinted and with each planted hint    every instance
``cot``    reasoning, then ``Answer: yes|no``                          every instance
``cotx``   the ``cot`` reasoning altered and quoted back, the answer   from ``cot``
=========  ==========================================================  ==============

>>> from facetlab.probes import PROBES, parse_weights_v3
>>> sorted(PROBES)
['anchor', 'c0', 'c2', 'c3', 'cot', 'cotx', 'h1', 'p1', 'p2', 'p3']
>>> parse_weights_v3("F1: 70, F2: 30\\nNo", 2)
{'F1': 70.0, 'F2': 30.0}

Typical use::

    prompt = build_prompt("p2", instance)                       # facet-v3 wording
    prompt = build_prompt("c2", anchor, factor="f3", perturbations=pset)
    result = parse_reply("p2", reply_text, instance)            # strict: reports problems
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from facetlab.errors import ConfigError
from facetlab.probes import ablation, compliance, cot, hint, outcome, single_factor, weighted_rank
from facetlab.probes.ablation import (
    RECONSTRUCTION_QUESTION,
    c2_prompt,
    parse_pilot_c2_reply,
    parse_reconstruction_reply,
)
from facetlab.probes.base import PROBE_NAMES, ParseResult, Probe, ProbeName
from facetlab.probes.compliance import compliance_prompt
from facetlab.probes.outcome import outcome_prompt
from facetlab.probes.parsing import (
    SUM_TOLERANCE,
    find_yes_no,
    parse_first_line_answer,
    parse_label_strict,
    parse_label_v3,
    parse_requirements,
    parse_weights_strict,
    parse_weights_v3,
    parse_yes_no,
)
from facetlab.probes.single_factor import single_factor_prompt
from facetlab.probes.templates import DEFAULT_TEMPLATE, TEMPLATES, Template, get_template
from facetlab.probes.weighted_rank import weighted_rank_prompt

if TYPE_CHECKING:
    from facetlab.instances.schema import Instance, PerturbationSet

PROBES: dict[str, Probe] = {
    p.name: p
    for p in (
        single_factor.P1,
        weighted_rank.P2,
        weighted_rank.P3,
        ablation.C2,
        outcome.C0,
        compliance.C3,
        weighted_rank.ANCHOR,
        hint.H1,
        cot.COT,
        cot.COTX,
    )
}

WEIGHTED_PROBES: frozenset[str] = frozenset({"p2", "p3", "c2", "anchor"})
"""Probes whose reply is a weight vector plus a yes/no line (the weighted-rank family)."""

PARSERS = ("strict", "facet-v3")


def get_probe(probe: str | Probe) -> Probe:
    """The probe called ``probe`` (case-insensitive), or a :class:`ConfigError` listing them."""
    if isinstance(probe, Probe):
        return probe
    try:
        return PROBES[probe.lower()]
    except (KeyError, AttributeError):
        known = ", ".join(PROBES)
        raise ConfigError(f"unknown probe {probe!r}; known probes: {known}") from None


def build_prompt(
    probe: str | Probe,
    instance: Instance,
    *,
    template: str = DEFAULT_TEMPLATE,
    factor: str | None = None,
    perturbations: PerturbationSet | None = None,
    **extra: Any,
) -> str:
    """The prompt of ``probe`` for ``instance`` in wording ``template``.

    C2 needs ``factor`` ("f3" or "F3") and ``perturbations`` (the instance's
    perturbation set) and takes ``form="weighted"|"pilot"|"reconstruction"``;
    C3 needs ``compliance=`` (the compliance set) and takes ``c3_form=``.
    """
    get_template(template)
    return get_probe(probe).build_prompt(
        instance, template=template, factor=factor, perturbations=perturbations, **extra
    )


def parse_reply(
    probe: str | Probe, text: str, instance: Instance | int, *, parser: str = "strict"
) -> ParseResult:
    """Parse ``text`` as a reply to ``probe`` about ``instance`` (or a prompt of that many
    factors: the parse depends on nothing else); never raises on model output.

    ``parser="facet-v3"`` applies the FACET v3 rules (stored weights reproduced
    exactly); ``"strict"`` also reports what is wrong in ``problems``.
    """
    if parser not in PARSERS:
        raise ConfigError(f"unknown parser {parser!r}; expected one of {', '.join(PARSERS)}")
    n_factors = instance if isinstance(instance, int) else instance.n_factors
    return get_probe(probe).parse(text if isinstance(text, str) else "", n_factors, parser=parser)


__all__ = [
    "DEFAULT_TEMPLATE",
    "PARSERS",
    "PROBES",
    "PROBE_NAMES",
    "RECONSTRUCTION_QUESTION",
    "SUM_TOLERANCE",
    "TEMPLATES",
    "WEIGHTED_PROBES",
    "ParseResult",
    "Probe",
    "ProbeName",
    "Template",
    "build_prompt",
    "c2_prompt",
    "compliance_prompt",
    "find_yes_no",
    "get_probe",
    "get_template",
    "outcome_prompt",
    "parse_first_line_answer",
    "parse_label_strict",
    "parse_label_v3",
    "parse_pilot_c2_reply",
    "parse_reconstruction_reply",
    "parse_reply",
    "parse_requirements",
    "parse_weights_strict",
    "parse_weights_v3",
    "parse_yes_no",
    "single_factor_prompt",
    "weighted_rank_prompt",
]
