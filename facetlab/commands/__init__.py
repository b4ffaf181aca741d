"""Sub-commands of the ``facetlab`` CLI, one module per group."""
