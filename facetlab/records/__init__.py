"""Trial records: facetlab's own format and readers for the FACET v3 raw files."""

from facetlab.records.schema import (
    RECORD_FORMAT,
    Parsed,
    TrialRecord,
    Usage,
    prompt_sha256,
)

__all__ = ["RECORD_FORMAT", "Parsed", "TrialRecord", "Usage", "prompt_sha256"]
