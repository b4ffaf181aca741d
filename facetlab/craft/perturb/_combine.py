"""Perturb several evidence units of one input at once (for the contextual design).

Units in the same text field are applied from the last span to the first, so the
offsets of the spans still to come stay valid. Overlapping spans, or a perturber that
rewrites a whole field another unit lives in, raise :class:`EvidenceError`: that
combination is simply not drawn.

>>> from facetlab.craft.perturb.strategies import StrategyPerturber
>>> from facetlab.craft.types import EvidenceRef, Span
>>> body = "urgent data loss after the migration"
>>> refs = [EvidenceRef("body", "text", span=Span.find(body, w)) for w in ("urgent", "migration")]
>>> perturb_all({"body": body}, refs, StrategyPerturber("redact"))["body"]
'xxxxxx data loss after the xxxxxxxxx'
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any

from facetlab.craft.errors import EvidenceError
from facetlab.craft.perturb.strategies import Perturber
from facetlab.craft.types import AgentInput, EvidenceRef


def _order(ref: EvidenceRef) -> tuple[tuple[tuple[int, int, str], ...], int]:
    """Last first: later spans of a field, and higher list indices (a deleted item shifts
    the ones after it)."""
    steps = tuple((0, -int(s), "") if s.isdigit() else (1, 0, s) for s in ref.path.split("."))
    return (steps, -(ref.span.start if ref.span is not None else 0))


def units_clash(a: EvidenceRef, b: EvidenceRef) -> bool:
    """Whether two units touch the same text (overlapping spans, or a field and its part)."""
    if a.path != b.path:
        # "ticket" and "ticket.body" address nested parts of the same value
        return a.path.startswith(b.path + ".") or b.path.startswith(a.path + ".")
    if a.span is None or b.span is None:
        return True
    return a.span.start < b.span.end and b.span.start < a.span.end


def perturb_all(
    input: AgentInput,
    refs: Sequence[EvidenceRef],
    perturber: Perturber,
    *,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> AgentInput:
    """``input`` with every unit in ``refs`` perturbed by ``perturber`` (a new dict)."""
    if any(units_clash(a, b) for i, a in enumerate(refs) for b in refs[i + 1 :]):
        raise EvidenceError("units overlap; they cannot be perturbed together")
    current = input
    for ref in sorted(refs, key=_order):
        made = perturber.perturb(current, ref, categories=categories)
        if not made:
            raise EvidenceError(f"{perturber.name} made no perturbation of {ref.describe()}")
        current = made[0].input
    return current


def input_key(input: AgentInput) -> str:
    """A canonical text of ``input``: equal keys mean identical inputs (used to deduplicate)."""
    return json.dumps(input, sort_keys=True, ensure_ascii=True, default=repr)
