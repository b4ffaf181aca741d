"""Inspect's entry point for facetlab (``[project.entry-points.inspect_ai]``).

Importing this module registers ``facetlab/facet_p1``, ``facet_p2``, ``facet_p3`` and
``facet_c2`` plus the scorers, so ``inspect eval facetlab/facet_p3`` finds them.
"""

# ruff: noqa: F401
from facetlab.interop.craft_scorer import craft_scorer
from facetlab.interop.scoring import facet_single_factor, facet_weighted
from facetlab.interop.tasks import facet_c2, facet_p1, facet_p2, facet_p3
