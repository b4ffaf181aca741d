"""Claims of the paper's 7 Future work, in the order the paper states them."""

from facetlab.analysis import stats
from facetlab.paper.registry.selectors import (
    Section,
    _n_base_instances,
    _wrong_count,
    bimodality,
    claim,
)

FW = "§7 Future work"
SECTION = Section.of(
    claim("fw.base", FW, "The pilot is 13 base instances", 13, _n_base_instances),
    claim(
        "fw.full_spec",
        FW,
        "The full FACET specification calls for 80–120 matched pairs",
        "80-120",
        None,
        status="NOT_DERIVABLE",
        why="A planning figure of the FACET specification, not a property of the released data.",
    ),
    claim(
        "fw.n22",
        FW,
        "The headline bimodality finding is on n = 22",
        22,
        lambda x: len(bimodality(x)),
    ),
    claim(
        "fw.wilson_low",
        FW,
        "with Wilson 95% CI [16%, 53%]",
        16,
        lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
        tol=0.5,
    ),
    claim(
        "fw.wilson_high",
        FW,
        "with Wilson 95% CI [16%, 53%]",
        53,
        lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
        tol=0.5,
    ),
)
