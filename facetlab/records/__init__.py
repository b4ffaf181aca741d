"""Trial records: facetlab's own format and readers for the FACET v3 raw files.

>>> from facetlab.records import load_trials                        # doctest: +SKIP
>>> df = load_trials()                                              # doctest: +SKIP

The table (:mod:`facetlab.records.table`, pandas, the FACET readers) is
imported on first use of one of its names: ``facetlab.probes`` imports
:mod:`facetlab.records.schema`, and the FACET readers import the probes'
parsers, so loading the table here eagerly would make that a cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from facetlab.records.own import read_record, read_records, write_record
from facetlab.records.schema import (
    RECORD_FORMAT,
    Parsed,
    TrialRecord,
    Usage,
    prompt_sha256,
)

if TYPE_CHECKING:
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

_TABLE_NAMES = frozenset({"COLUMNS", "SOURCES", "RecordWarning", "load_trials"})


def __getattr__(name: str) -> Any:
    if name not in _TABLE_NAMES:
        raise AttributeError(f"module 'facetlab.records' has no attribute {name!r}")
    value = getattr(importlib.import_module("facetlab.records.table"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | _TABLE_NAMES)
