"""Every number the FACET paper states, with the recipe that re-derives it from the data.

One module per section of the paper, each holding its claims in the paper's order
(``SECTION.entries``); :data:`CLAIMS` joins them in the order of the paper: abstract,
introduction, notation, background, method, Table 1, results (4.1–4.7), Table 2,
figure captions, interpretation, limitations, future work, appendices, and last
the claims about the data itself (trial counts, determinism of T = 0 reruns,
outcome correctness under every probe).

Recipes read the ``load_trials`` frame through :mod:`~facetlab.paper.registry.selectors`
(which reuse :mod:`facetlab.analysis.rules` and :mod:`facetlab.analysis.stats`) and, for
claims about instance files, the data directory. A ``MISMATCH`` entry carries
its evidence in ``explanation``; it records what the data says, not a bug.

>>> len(CLAIMS) >= 150
True
"""

from facetlab.paper.claims import Claim
from facetlab.paper.registry import (
    abstract,
    appendices,
    background,
    captions,
    data,
    introduction,
    method,
    notation,
    s4_1_outcomes,
    s4_2_progression,
    s4_3_p3,
    s4_4_bimodality,
    s4_5_c2,
    s4_6_asymmetry,
    s4_7_statistics,
    s5_interpretation,
    s6_limitations,
    s7_future_work,
    table1,
    table2,
)
from facetlab.paper.registry.selectors import MODEL_SHORT, clear_cache

__all__ = ["CLAIMS", "MODEL_SHORT", "SECTIONS", "claims_by_id", "clear_cache"]

SECTIONS = (
    abstract,
    introduction,
    notation,
    background,
    method,
    table1,
    s4_1_outcomes,
    s4_2_progression,
    s4_3_p3,
    s4_4_bimodality,
    table2,
    s4_5_c2,
    s4_6_asymmetry,
    s4_7_statistics,
    captions,
    s5_interpretation,
    s6_limitations,
    s7_future_work,
    appendices,
    data,
)
"""The section modules, in the order of the paper."""

CLAIMS: tuple[Claim, ...] = tuple(c for section in SECTIONS for c in section.SECTION.entries)
"""The registry, in paper order."""


def claims_by_id() -> dict[str, Claim]:
    """The registry as a dict keyed by claim id."""
    return {c.id: c for c in CLAIMS}
