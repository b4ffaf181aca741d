"""Everything specific to the FACET paper, built on the generic :mod:`facetlab.analysis`.

* :mod:`~facetlab.paper.cells` — the frames behind the paper's tables and figures
  (the eight models' order, the CF-Cabral / CF-Barker / CF-Biakanja cases);
* :mod:`~facetlab.paper.stats_table` — the rows of ``stats.csv``;
* :mod:`~facetlab.paper.figures` — the five paper figures and their styling;
* :mod:`~facetlab.paper.claims`, :mod:`~facetlab.paper.registry`,
  :mod:`~facetlab.paper.audit` — every number of the paper and its audit;
* :mod:`~facetlab.paper.sensitivity` — the paper's conclusions across settings;
* :mod:`~facetlab.paper.reproduce` — ``facetlab reproduce``.

The generic layer never imports this package.
"""
