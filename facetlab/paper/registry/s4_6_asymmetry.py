"""Claims of the paper's 4.6 Asymmetry, in the order the paper states them."""

from __future__ import annotations

from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    BARKER_ADV,
    CLOSED,
    OPEN,
    Section,
    _c2_group_means,
    _n_access,
    _n_models,
    _p3_case_mean,
    _quadrant_count,
    _weights,
    claim,
    p3_cell,
)

R6 = "§4.6 Asymmetric profile"
SECTION = Section.of(
    claim("res46.n8", R6, "three confounds we cannot disentangle at n = 8 models", 8, _n_models),
    claim(
        "res46.closed_c2_min",
        R6,
        "(mean 0.0%–1.7% across the three closed-source configurations)",
        0.0,
        lambda x: min(_c2_group_means(x, CLOSED)),
        tol=0.05,
    ),
    claim(
        "res46.closed_c2_max",
        R6,
        "(mean 0.0%–1.7% across the three closed-source configurations)",
        1.7,
        lambda x: max(_c2_group_means(x, CLOSED)),
        tol=0.05,
    ),
    claim(
        "res46.closed_count",
        R6,
        "across the three closed-source configurations",
        3,
        _n_access("closed"),
        kind="metadata",
    ),
    claim(
        "res46.closed_barker_nonzero",
        R6,
        "retain non-zero weight on the neutralized factor under P3 on CF-Barker",
        3,
        lambda x: sum(1 for s in CLOSED if _p3_case_mean(x, s, "CF-Barker") > 0),
    ),
    claim(
        "res46.open_barker_zero",
        R6,
        "show the inverse: wneut = 0 on CF-Barker under P3",
        0,
        lambda x: max(w for s in OPEN for w in _weights(p3_cell(x, s, BARKER_ADV))),
    ),
    claim(
        "res46.open_c2_min",
        R6,
        "(mean 3.1%–5.3% across the five Bedrock configurations)",
        3.1,
        lambda x: min(_c2_group_means(x, OPEN)),
        tol=0.05,
    ),
    claim(
        "res46.open_c2_max",
        R6,
        "(mean 3.1%–5.3% across the five Bedrock configurations)",
        5.3,
        lambda x: max(_c2_group_means(x, OPEN)),
        tol=0.05,
    ),
    claim(
        "res46.open_count",
        R6,
        "across the five Bedrock configurations",
        5,
        _n_access("open"),
        kind="metadata",
    ),
    claim(
        "res46.lower_left_empty",
        R6,
        "No model occupies the lower-left (faithful on both axes)",
        0,
        _quadrant_count(lower_x=True, lower_y=True),
        status="MISMATCH",
        **evidence.LOWER_LEFT.kw(),
    ),
    claim(
        "res46.upper_right_empty",
        R6,
        "no model occupies the upper-right (unfaithful on both axes)",
        0,
        _quadrant_count(lower_x=False, lower_y=False),
    ),
)
