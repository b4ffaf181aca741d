"""Analysis of FACET trials: faithfulness rules, cell summaries, statistics, tables.

>>> from facetlab.analysis import weighted_faithful, wilson
>>> weighted_faithful(10.0), round(wilson(7, 22).high, 2)
(True, 0.53)
"""

from facetlab.analysis.cells import (
    CellSummary,
    anchor_cases,
    bimodality_summary,
    case_factor_counts,
    data_counts,
    fig1_p1_p2,
    fig2_p3,
    fig3_bimodality,
    fig4_c2,
    fig5_asymmetry,
    outcome_correctness,
    paper_trials,
    primary_instances,
    summarize,
    table1_overview,
    table2_p3,
)
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
from facetlab.analysis.stats import (
    FisherResult,
    McNemarResult,
    WilsonInterval,
    bimodality_fisher,
    fisher_exact,
    group_fisher,
    mcnemar_exact,
    stats_table,
    wilson,
)
from facetlab.analysis.tables import write_table

__all__ = [
    "DEFAULT_DISSOCIATION",
    "DEFAULT_SPLIT_POINT",
    "DEFAULT_THRESHOLD",
    "CellSummary",
    "FisherResult",
    "McNemarResult",
    "WilsonInterval",
    "anchor_cases",
    "bimodality_fisher",
    "bimodality_summary",
    "case_factor_counts",
    "data_counts",
    "fig1_p1_p2",
    "fig2_p3",
    "fig3_bimodality",
    "fig4_c2",
    "fig5_asymmetry",
    "fisher_exact",
    "group_fisher",
    "mcnemar_exact",
    "mode_of",
    "outcome_correctness",
    "p1_faithful",
    "paper_trials",
    "primary_instances",
    "stats_table",
    "summarize",
    "table1_overview",
    "table2_p3",
    "usable",
    "weighted_faithful",
    "wilson",
    "with_verdicts",
    "write_table",
    "wrong_outcome",
]
