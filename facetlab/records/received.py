"""A record proves what it holds: the digest of the whole record, checked on loading.

:meth:`TrialRecord.from_trial` sets a new record's ``received_sha256``: the sha256 of the
record as written, every field but the digest itself (:func:`received_digest`; one rule,
:func:`facetlab.jsonio.received_sha256`, for files, shard lines, parts and cache entries:
an edited ``ground_truth``, ``factor_of_interest``, ``model`` or ``thinking`` is caught
like an edited reply). :func:`check_received` recomputes it and, where
that is cheap and comparable (the record's parser is this version's), parses the raw
reply again: a record whose parsed values were edited (``parsed.weights.F1`` 16 → 99
while the reply says 16) is named, and the table excludes it (counted, never used).
Records written before the digest load without it; re-parsing still checks them.
"""

import json
from typing import Any

from facetlab.jsonio import digest_problem
from facetlab.probes import PROBES, WEIGHTED_PROBES
from facetlab.probes.base import EMPTY_REPLY, ParseResult, is_blank
from facetlab.records.schema import TrialRecord, received_digest

__all__ = ["EDITED", "check_received", "received_digest"]

REPARSED = frozenset({"p1", "c0", "h1", *WEIGHTED_PROBES})
"""The probes whose parse is its answer, label and weights (C3's is its requirements)."""

EDITED = "record does not match its reply: "
"""How the ``excluded_reason`` of a record that fails :func:`check_received` starts."""


def _differences(record: TrialRecord, result: ParseResult) -> list[str]:
    stored = record.parsed
    found = [
        f"parsed.{name} is {mine!r}, the reply gives {theirs!r}"
        for name, mine, theirs in (
            ("answer", stored.answer, result.answer),
            ("label", stored.label, result.label),
        )
        if mine != theirs
    ]
    mine_w, theirs_w = stored.weights or {}, result.weights or {}
    found += (
        f"parsed.weights.{key} is {mine_w.get(key)}, the reply says {theirs_w.get(key)}"
        for key in sorted(set(mine_w) | set(theirs_w))
        if mine_w.get(key) != theirs_w.get(key)
    )
    return found


def check_received(record: TrialRecord, data: dict[str, Any] | None = None) -> str | None:
    """What is wrong with ``record`` against its own reply (None when nothing is).

    A reply of a weighted probe, P1, C0 or H1 that this version parsed (``inputs.parser_sha256``
    is the current parser's) must parse to the stored values again (under either parser
    setting); the digest must match when the record has one (the older rule's digest of
    the reply and parse still proves a record written before the whole was covered).
    ``data``: the record's JSON object as read (a file's), digested as is (no dump).
    """
    differences = _reparse_differences(record)
    if differences:
        return "; ".join(differences[:3])
    if record.received_sha256 is None:
        return None
    return digest_problem(data if data is not None else json.loads(record.model_dump_json()))


def _reparse_differences(record: TrialRecord) -> list[str]:
    """How the stored parse differs from this version's parse of the reply (both parser
    settings: the record does not say which); [] when either matches or it cannot tell."""
    from facetlab.records.inputs import parser_sha256

    text, n = record.raw_response or "", record.n_factors
    if record.probe not in REPARSED or record.status != "ok" or record.inputs is None:
        return []
    if record.inputs.parser_sha256 != parser_sha256():
        return []  # another parser version's parse may differ legitimately
    found: list[str] = []
    for setting in ("strict", "facet-v3"):
        parsed = PROBES[record.probe].parse(text, n, parser=setting)
        differences = _differences(record, EMPTY_REPLY if is_blank(text) else parsed)
        if not differences:
            return []
        found = differences if not found or len(differences) < len(found) else found
    return found
