"""facetlab: measure whether an LLM's stated reasons are the reasons it used."""

__version__ = "0.1.0"
