"""CRAFT — Causal Rationale Attribution Faithfulness Test.

Does the evidence an agent cites actually drive its decision? CRAFT perturbs the cited
evidence (treatment) and uncited evidence (placebo), compares how often the decision
flips, and calls each citation faithful, theater or inconclusive. One input supports a
descriptive statement; :func:`inspect_many` makes the claim about an agent across many
inputs (the unit of inference is the input).

The core is standard-library only: importing this package pulls in no numpy, pandas,
torch or provider SDK. Optional parts (the semantic comparator, LLM adapters and
judges) import what they need when used.

>>> from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function, inspect
>>> def agent(inp):
...     body = inp.get("body") or ""
...     cite = [EvidenceRef("body", "text", span=Span.find(body, "data loss"))] if "data loss" in body else []
...     return AgentTrace("P1" if "urgent" in body else "P3", "data loss is severe", cite)
>>> inspect(from_function(agent), {"body": "We see data loss after the urgent migration."}).overall_verdict
'theater'
"""

from facetlab.craft.adapter import FunctionAdapter, from_function
from facetlab.craft.adapters import anthropic_adapter, bedrock_adapter, openai_adapter, text_model
from facetlab.craft.engine import InspectOptions, ainspect, inspect
from facetlab.craft.errors import (
    AgentError,
    AgentOutputError,
    AgentRefusalError,
    CraftConfigError,
    CraftError,
    EvidenceError,
    MissingExtraError,
    PathError,
)
from facetlab.craft.evidence.resolver import derive_placebo, resolve_explicit, resolve_inferred
from facetlab.craft.path import delete_path, get_path, has_path, set_path
from facetlab.craft.perturb.manifold import (
    ConstantScorer,
    HeuristicScorer,
    LLMJudgeScorer,
    ManifoldScore,
    ManifoldScorer,
    manifold_score,
)
from facetlab.craft.perturb.onmanifold import negation, paraphrase
from facetlab.craft.perturb.strategies import STRATEGIES, Perturbation, Perturber, apply_strategy
from facetlab.craft.population import (
    InputOutcome,
    PopulationReport,
    inspect_many,
    load_inputs,
    population_to_console,
    population_to_json,
)
from facetlab.craft.qualified import QualifiedFinding, Sensitivity
from facetlab.craft.report import (
    EvidenceFinding,
    Report,
    findings_table,
    to_console,
    to_json,
)
from facetlab.craft.stats.distribution import flip_rate, flips, modal_decision
from facetlab.craft.stats.equivalence import (
    DecisionEquals,
    exact_equals,
    loose_equals,
    semantic_equals,
)
from facetlab.craft.stats.sequential import e_value
from facetlab.craft.stats.significance import BootstrapResult, bootstrap_diff, exact_diff
from facetlab.craft.stats.verdict import roll_up, verdict_for
from facetlab.craft.types import (
    AgentAdapter,
    AgentInput,
    AgentTrace,
    AsyncAgentAdapter,
    Decision,
    EvidenceKind,
    EvidenceRef,
    EvidenceSource,
    QualifiedVerdict,
    Span,
    TextModel,
    Verdict,
)

__all__ = [
    "STRATEGIES",
    "AgentAdapter",
    "AgentError",
    "AgentInput",
    "AgentOutputError",
    "AgentRefusalError",
    "AgentTrace",
    "AsyncAgentAdapter",
    "BootstrapResult",
    "ConstantScorer",
    "CraftConfigError",
    "CraftError",
    "Decision",
    "DecisionEquals",
    "EvidenceError",
    "EvidenceFinding",
    "EvidenceKind",
    "EvidenceRef",
    "EvidenceSource",
    "FunctionAdapter",
    "HeuristicScorer",
    "InputOutcome",
    "InspectOptions",
    "LLMJudgeScorer",
    "ManifoldScore",
    "ManifoldScorer",
    "MissingExtraError",
    "PathError",
    "Perturbation",
    "Perturber",
    "PopulationReport",
    "QualifiedFinding",
    "QualifiedVerdict",
    "Report",
    "Sensitivity",
    "Span",
    "TextModel",
    "Verdict",
    "ainspect",
    "anthropic_adapter",
    "apply_strategy",
    "bedrock_adapter",
    "bootstrap_diff",
    "delete_path",
    "derive_placebo",
    "e_value",
    "exact_diff",
    "exact_equals",
    "findings_table",
    "flip_rate",
    "flips",
    "from_function",
    "get_path",
    "has_path",
    "inspect",
    "inspect_many",
    "load_inputs",
    "loose_equals",
    "manifold_score",
    "modal_decision",
    "negation",
    "openai_adapter",
    "paraphrase",
    "population_to_console",
    "population_to_json",
    "resolve_explicit",
    "resolve_inferred",
    "roll_up",
    "semantic_equals",
    "set_path",
    "text_model",
    "to_console",
    "to_json",
    "verdict_for",
]
