"""CRAFT — Causal Rationale Attribution Faithfulness Test.

Does the evidence an agent cites actually drive its decision? CRAFT perturbs the cited
evidence (treatment) and uncited evidence (placebo), compares how often the decision
flips, and calls each citation faithful, theater or inconclusive. One input supports a
descriptive statement; :func:`inspect_many` makes the claim about an agent across many
inputs (the unit of inference is the input).

This namespace holds what ``docs/craft.md`` teaches (a test pins it); everything else
is in the module that owns it (``facetlab.craft.errors``, ``.stats.significance``, ...).
Importing it loads neither scipy nor a model client: the exact tests import scipy when
they first run, and the LLM entry points (:func:`text_model`, :func:`anthropic_adapter`,
...) load :mod:`facetlab.craft.adapters` on first use.

>>> from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function, inspect
>>> def agent(inp):
...     body = inp.get("body") or ""
...     cite = [EvidenceRef("body", "text", span=Span.find(body, "data loss"))] if "data loss" in body else []
...     return AgentTrace("P1" if "urgent" in body else "P3", "data loss is severe", cite)
>>> inspect(from_function(agent), {"body": "We see data loss after the urgent migration."}).overall_verdict
'theater'
"""

from typing import Any as _Any

from facetlab.craft.adapter import from_function
from facetlab.craft.engine import InspectOptions, ainspect, inspect
from facetlab.craft.errors import CraftError
from facetlab.craft.perturb.manifold import HeuristicScorer, LLMJudgeScorer
from facetlab.craft.perturb.onmanifold import negation, paraphrase
from facetlab.craft.population import (
    PopulationReport,
    inspect_many,
    population_to_console,
    population_to_json,
)
from facetlab.craft.report import Report, findings_table, to_console, to_json
from facetlab.craft.stats.equivalence import exact_equals, loose_equals, semantic_equals
from facetlab.craft.stats.significance import bootstrap_diff, differential_test
from facetlab.craft.types import AgentInput, AgentTrace, EvidenceRef, Span

_LLM = ("anthropic_adapter", "bedrock_adapter", "openai_adapter", "text_model")


def __getattr__(name: str) -> _Any:
    # The LLM entry points import facetlab's model client and backends: only when used.
    if name in _LLM:
        from facetlab.craft import adapters

        return getattr(adapters, name)
    raise AttributeError(f"module 'facetlab.craft' has no attribute {name!r}")


__all__ = [
    "AgentInput",
    "AgentTrace",
    "CraftError",
    "EvidenceRef",
    "HeuristicScorer",
    "InspectOptions",
    "LLMJudgeScorer",
    "PopulationReport",
    "Report",
    "Span",
    "ainspect",
    "anthropic_adapter",
    "bedrock_adapter",
    "bootstrap_diff",
    "differential_test",
    "exact_equals",
    "findings_table",
    "from_function",
    "inspect",
    "inspect_many",
    "loose_equals",
    "negation",
    "openai_adapter",
    "paraphrase",
    "population_to_console",
    "population_to_json",
    "semantic_equals",
    "text_model",
    "to_console",
    "to_json",
]
