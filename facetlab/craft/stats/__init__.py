"""CRAFT statistics: decision comparators, flip summaries, sampling and differential tests."""

from facetlab.craft.stats.distribution import flip_rate, flips, modal_decision
from facetlab.craft.stats.equivalence import (
    DecisionEquals,
    EmbedFunction,
    SemanticEquals,
    exact_equals,
    loose_equals,
    semantic_equals,
)
from facetlab.craft.stats.sampler import Sample, asample_inputs, sample_inputs
from facetlab.craft.stats.sequential import SequentialState, e_value, sequential_state
from facetlab.craft.stats.significance import (
    BootstrapResult,
    bootstrap_diff,
    differential_test,
    exact_diff,
)

__all__ = [
    "BootstrapResult",
    "DecisionEquals",
    "EmbedFunction",
    "Sample",
    "SemanticEquals",
    "SequentialState",
    "asample_inputs",
    "bootstrap_diff",
    "differential_test",
    "e_value",
    "exact_diff",
    "exact_equals",
    "flip_rate",
    "flips",
    "loose_equals",
    "modal_decision",
    "sample_inputs",
    "semantic_equals",
    "sequential_state",
]
