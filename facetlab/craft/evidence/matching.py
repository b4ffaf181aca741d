"""Matched placebos: uncited units exchangeable with a cited unit under the null.

The null each verdict rejects is "the cited unit is like any uncited unit of its kind and
size at its place". A placebo is therefore matched on (documented in ``docs/craft.md``):

* **kind and size** — a span of ``k`` words by a window of ``k`` consecutive words of the
  same field (every word counts: "not", "a" and "5" too); a whole field or a scalar by
  another field of the same kind;
* **one sentence** — a window never crosses a sentence boundary and holds no punctuation
  at its edges, so perturbing it changes no sentence structure;
* **place, on both sides** — the units nearest the cited span *before* it and *after*
  it, same sentence first, then the same boundary class (sentence-initial, -final or
  inside), then character distance, then length. :data:`PER_SIDE` per side.

Both sides are tested and both must reject (an intersection–union test): an agent that
reacts to *where* an edit happens (a context window of the first K characters, a
sentence, a suffix) reacts to the placebos on one side as to the cited unit, whatever the
window's edge, so it is never called faithful for that.

>>> from facetlab.craft.types import EvidenceRef, Span
>>> inp = {"body": "We see data loss after the upgrade. Please check old disks."}
>>> cited = EvidenceRef("body", "text", span=Span.find(inp["body"], "data loss"))
>>> {side: [u.span.text for u in units] for side, units in matched_placebos(inp, cited, [cited]).items()}
{'before': ['We see'], 'after': ['after the', 'the upgrade', 'check old']}
>>> matched_on(inp, cited, matched_placebos(inp, cited, [cited])["after"][0])
'after, same sentence, 1 chars away, equal length'
"""

import bisect
import re
from collections.abc import Sequence
from functools import lru_cache

from facetlab.craft.evidence.resolver import TOKEN, is_free_text, kind_of
from facetlab.craft.path import get_path, iter_leaves
from facetlab.craft.perturb._combine import units_clash
from facetlab.craft.types import AgentInput, EvidenceRef, Span

PER_SIDE = 3
"""Matched placebos per side of a cited span (or per cited field: twice as many)."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")


@lru_cache(maxsize=256)
def _starts(text: str) -> list[int]:
    return [m.end() for m in _SENTENCE.finditer(text)]


def _sentence(text: str, at: int) -> int:
    return bisect.bisect_right(_starts(text), at)


def _boundary_class(text: str, span: Span) -> tuple[bool, bool]:
    """(sentence-initial, sentence-final) of a span: nothing alphanumeric between it and
    its sentence's start, or its end."""
    starts = _starts(text)
    i = _sentence(text, span.start)
    begin = starts[i - 1] if i else 0
    end = starts[i] if i < len(starts) else len(text)
    return (
        not any(ch.isalnum() for ch in text[begin : span.start]),
        not any(ch.isalnum() for ch in text[span.end : end]),
    )


def _whole_field(input: AgentInput, ref: EvidenceRef) -> bool:
    value = get_path(input, ref.path)
    return ref.span is None or (
        isinstance(value, str) and ref.span.start == 0 and ref.span.end == len(value)
    )


def _rank(text: str, cited: Span, unit: Span) -> tuple[int, int, int, int]:
    distance = cited.start - unit.end if unit.end <= cited.start else unit.start - cited.end
    shape = _boundary_class(text, cited)
    mismatch = sum(a != b for a, b in zip(shape, _boundary_class(text, unit), strict=True))
    other = int(_sentence(text, cited.start) != _sentence(text, unit.start))
    return (other, mismatch, distance, abs(len(unit.text) - len(cited.text)))


def matched_placebos(
    input: AgentInput, cited: EvidenceRef, all_cited: Sequence[EvidenceRef]
) -> dict[str, list[EvidenceRef]]:
    """The matched placebos of ``cited`` by side (``before``/``after`` of a span, ``field``
    for a whole field or scalar), best match first; a side with no eligible unit is left
    out (that side of the null is then not tested)."""
    cited_texts = {c.span.text.lower() for c in all_cited if c.span is not None}
    if _whole_field(input, cited) or cited.span is None:
        own = get_path(input, cited.path)
        fields = [
            EvidenceRef(path, cited.kind, "inferred")
            for path, value in iter_leaves(input)
            if value not in (None, "")
            and path != cited.path
            and ("text" if is_free_text(value) else kind_of(value)) == cited.kind
        ]
        fields = [u for u in fields if not any(units_clash(u, c) for c in all_cited)]
        fields.sort(key=lambda u: abs(len(str(get_path(input, u.path))) - len(str(own))))
        return {"field": fields[: 2 * PER_SIDE]} if fields else {}
    text, span = get_path(input, cited.path), cited.span
    width = max(1, len(TOKEN.findall(span.text)))
    toks = [m.span() for m in TOKEN.finditer(text)]
    sides: dict[str, list[EvidenceRef]] = {"before": [], "after": []}
    for i in range(len(toks) - width + 1):
        start, end = toks[i][0], toks[i + width - 1][1]
        unit = EvidenceRef(cited.path, "text", "inferred", Span(start, end, text[start:end]))
        if (
            _sentence(text, start) != _sentence(text, end - 1)
            or text[start:end].lower() in cited_texts
            or any(units_clash(unit, c) for c in all_cited)
        ):
            continue
        if end <= span.start:
            sides["before"].append(unit)
        elif start >= span.end:
            sides["after"].append(unit)
    return {
        side: sorted(units, key=lambda u: _rank(text, span, u.span))[:PER_SIDE]  # type: ignore[arg-type]
        for side, units in sides.items()
        if units
    }


def matched_on(input: AgentInput, cited: EvidenceRef, unit: EvidenceRef) -> str:
    """What ``unit`` matches ``cited`` on, in words."""
    if cited.span is None or unit.span is None or _whole_field(input, cited):
        return "another field of the same kind"
    other, mismatch, distance, gap = _rank(get_path(input, cited.path), cited.span, unit.span)
    side = "before" if unit.span.end <= cited.span.start else "after"
    place = "another sentence" if other else "same sentence"
    shape = f", boundary class differs in {mismatch}" if mismatch else ""
    length = "equal length" if gap == 0 else f"length differs by {gap}"
    return f"{side}, {place}{shape}, {distance} chars away, {length}"
