"""Trial records: facetlab's own format and readers for the FACET v3 raw files.

>>> from facetlab.records import load_trials                        # doctest: +SKIP
>>> df = load_trials()                                              # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from facetlab.probes.base import Parsed
from facetlab.records.own import read_record, read_records, write_record
from facetlab.records.schema import RECORD_FORMAT, TrialRecord, Usage, prompt_sha256
from facetlab.records.store import read_sweep_records

if TYPE_CHECKING:
    from facetlab.records.table import COLUMNS, SOURCES, RecordWarning, load_trials

_TABLE = {"COLUMNS", "SOURCES", "RecordWarning", "load_trials"}

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
    "read_sweep_records",
    "write_record",
]


def __getattr__(name: str) -> Any:
    # The trials table needs pandas (~0.3 s to import); a sweep that only writes records
    # (`facetlab run`) never loads it.
    if name in _TABLE:
        from facetlab.records import table

        return getattr(table, name)
    raise AttributeError(f"module 'facetlab.records' has no attribute {name!r}")
