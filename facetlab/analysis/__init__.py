"""Analysis of trials of any domain and any model: rules, selection, statistics, tables.

This layer knows nothing of the FACET paper (its models, cases and claims live in
:mod:`facetlab.paper`, built on this one).

>>> from facetlab.analysis import weighted_faithful, wilson
>>> weighted_faithful(10.0), round(wilson(7, 22).high, 2)
(True, 0.53)
"""

from facetlab.analysis.labels import instance_labels, neutralized_factors, resolve_instances
from facetlab.analysis.rules import (
    DEFAULT_DISSOCIATION,
    DEFAULT_SPLIT_POINT,
    DEFAULT_THRESHOLD,
    mode_of,
    p1_faithful,
    usable,
    weighted_faithful,
    with_verdicts,
    wrong_outcome,
)
from facetlab.analysis.select import model_order, select_trials
from facetlab.analysis.stats import (
    FisherResult,
    McNemarResult,
    WilsonInterval,
    bimodality_fisher,
    fisher_exact,
    group_fisher,
    mcnemar_exact,
    wilson,
)
from facetlab.analysis.study import c2, outcomes, p1_p2, p3
from facetlab.analysis.summary import CellSummary, summarize
from facetlab.analysis.tables import write_table

__all__ = [
    "DEFAULT_DISSOCIATION",
    "DEFAULT_SPLIT_POINT",
    "DEFAULT_THRESHOLD",
    "CellSummary",
    "FisherResult",
    "McNemarResult",
    "WilsonInterval",
    "bimodality_fisher",
    "c2",
    "fisher_exact",
    "group_fisher",
    "instance_labels",
    "mcnemar_exact",
    "mode_of",
    "model_order",
    "neutralized_factors",
    "outcomes",
    "p1_faithful",
    "p1_p2",
    "p3",
    "resolve_instances",
    "select_trials",
    "summarize",
    "usable",
    "weighted_faithful",
    "wilson",
    "with_verdicts",
    "write_table",
    "wrong_outcome",
]
