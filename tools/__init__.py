"""Repository tooling: used to develop facetlab, never imported by the package."""
