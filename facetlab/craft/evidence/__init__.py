"""Evidence resolution: explicit checks, placebo derivation, inference from rationales."""

from facetlab.craft.evidence.resolver import (
    ResolvedEvidence,
    derive_placebo,
    is_free_text,
    kind_of,
    resolve_evidence,
    resolve_explicit,
    resolve_inferred,
)

__all__ = [
    "ResolvedEvidence",
    "derive_placebo",
    "is_free_text",
    "kind_of",
    "resolve_evidence",
    "resolve_explicit",
    "resolve_inferred",
]
