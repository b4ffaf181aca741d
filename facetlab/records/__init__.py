"""Trial records: facetlab's own format and readers for the FACET v3 raw files.

>>> from facetlab.records import load_trials                        # doctest: +SKIP
>>> df = load_trials()                                              # doctest: +SKIP
"""

from __future__ import annotations

from facetlab.probes.base import Parsed
from facetlab.records.own import read_record, read_records, write_record
from facetlab.records.schema import RECORD_FORMAT, TrialRecord, Usage, prompt_sha256
from facetlab.records.table import COLUMNS, SOURCES, RecordWarning, load_trials

__all__ = [
    "COLUMNS",
    "RECORD_FORMAT",
    "SOURCES",
    "Parsed",
    "RecordWarning",
    "TrialRecord",
    "Usage",
    "load_trials",
    "prompt_sha256",
    "read_record",
    "read_records",
    "write_record",
]
