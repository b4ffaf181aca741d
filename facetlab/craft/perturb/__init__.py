"""Perturbations of evidence and the manifold filter that keeps them plausible."""

from facetlab.craft.perturb.manifold import (
    ConstantScorer,
    HeuristicScorer,
    LLMJudgeScorer,
    ManifoldScore,
    ManifoldScorer,
    manifold_score,
)
from facetlab.craft.perturb.onmanifold import OnManifoldPerturber, negation, paraphrase
from facetlab.craft.perturb.strategies import (
    STRATEGIES,
    Perturbation,
    Perturber,
    StrategyPerturber,
    apply_strategy,
    negate_phrase,
)

__all__ = [
    "STRATEGIES",
    "ConstantScorer",
    "HeuristicScorer",
    "LLMJudgeScorer",
    "ManifoldScore",
    "ManifoldScorer",
    "OnManifoldPerturber",
    "Perturbation",
    "Perturber",
    "StrategyPerturber",
    "apply_strategy",
    "manifold_score",
    "negate_phrase",
    "negation",
    "paraphrase",
]
