"""facetlab in the Inspect ecosystem (the optional extra ``facetlab[inspect]``).

- :mod:`~facetlab.interop.variants` — a probe's trial variants, as ``facetlab run`` plans them
  (no inspect_ai import);
- :mod:`~facetlab.interop.tasks` — ``facetlab/facet_p1|p2|p3|c2`` Inspect tasks;
- :mod:`~facetlab.interop.scoring` — the FACET scorers and metrics (facetlab's parsers and rules);
- :mod:`~facetlab.interop.craft_scorer` — a CRAFT scorer for decision-with-citations tasks;
- :mod:`~facetlab.interop.logfile` — the size and member limits a log is held to before it is read;
- :mod:`~facetlab.interop.logs` — Inspect logs of those tasks as facetlab records
  (``facetlab import-inspect``);
- :mod:`~facetlab.interop.export` — facetlab records as Inspect logs (``facetlab export-inspect``).

Only this package imports inspect_ai; ``import facetlab`` works without the extra.
See ``docs/inspect.md``.
"""

INSTALL_HINT = "pip install 'facetlab[inspect]' on Python 3.11 or later"
"""What to run when inspect_ai is missing."""
