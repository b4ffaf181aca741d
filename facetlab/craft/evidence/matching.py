"""Matched placebos: for each cited unit, uncited units of the same kind, size, place and length.

The matching rule (documented in ``docs/craft.md``):

* **same kind** — a text span is matched by a text span, a whole text field by another
  whole text field, a numeric field by a numeric field, a categorical field by a
  categorical field;
* **same size** — a span of ``k`` words by a window of ``k`` consecutive words (every
  word counts: "not", "a" and "5" too);
* **same place first** — a span's placebo comes from the same sentence of the same
  field; failing that the same paragraph; failing that the nearest position (what the
  placebo was matched on is reported, and only the first two are *location-matched*).
  Whole fields and scalars have no position;
* **closest length** — within that place, the units whose character length is closest
  to the cited unit's (equal whenever there is one);
* **uncited** — no overlap with any cited unit, and not the same text as a cited unit;
* **drawn at random** — uniformly within the best class, with the caller's seeded
  ``random.Random``; the caller perturbs both with the **same strategy**.

Perturbing the cited unit and its placebo is then exchangeable under the null
hypothesis that the cited unit is like any other unit of its kind, size and place: an
agent that reacts to *where* an edit happens (the first sentence, say) reacts to both.

>>> import random
>>> from facetlab.craft.types import EvidenceRef, Span
>>> inp = {"body": "We see data loss after the upgrade. Please check old disks."}
>>> cited = EvidenceRef("body", "text", span=Span.find(inp["body"], "data loss"))
>>> [r.span.text for r in placebo_pool(inp, cited, [cited])][:3]
['after the', 'the upgrade', 'We see']
>>> u = match_placebo(inp, cited, [cited], random.Random(1))
>>> u.span.text, matched_on(inp, cited, u)
('after the', 'same sentence, equal length')
"""

from __future__ import annotations

import bisect
import random
import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import takewhile

from facetlab.craft.evidence.resolver import TOKEN, is_free_text, kind_of
from facetlab.craft.path import get_path, iter_leaves
from facetlab.craft.perturb._combine import units_clash
from facetlab.craft.types import AgentInput, EvidenceRef, Span

PLACES: tuple[str, ...] = ("same sentence", "same paragraph", "nearest position", "whole field")
"""What a placebo's place was matched on, best first; the first two are location-matched."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")
_PARAGRAPH = re.compile(r"\n\s*\n")
SINGLE_INPUT_NULLS = 5
"""Null units per cited unit in the one-input design (whole match classes, best first)."""


def unit_length(input: AgentInput, ref: EvidenceRef) -> int:
    """Characters of a cited or placebo unit (its span, else the whole field)."""
    if ref.span is not None:
        return len(ref.span.text)
    return len(str(get_path(input, ref.path)))


def _whole_field(input: AgentInput, ref: EvidenceRef) -> bool:
    value = get_path(input, ref.path)
    return ref.span is None or (
        isinstance(value, str) and ref.span.start == 0 and ref.span.end == len(value)
    )


@lru_cache(maxsize=256)
def _ends(text: str, boundary: re.Pattern[str]) -> list[int]:
    return [m.end() for m in boundary.finditer(text)]


def _part(text: str, at: int, boundary: re.Pattern[str]) -> int:
    return bisect.bisect_right(_ends(text, boundary), at)


def match_key(input: AgentInput, cited: EvidenceRef, unit: EvidenceRef) -> tuple[int, int, int]:
    """``(place, length gap, distance)``: smaller is a better placebo for ``cited``.

    ``place`` indexes :data:`PLACES`; the distance (characters, another field counting
    as far) only ranks units of the third place, "nearest position".
    """
    gap = abs(unit_length(input, unit) - unit_length(input, cited))
    if _whole_field(input, cited) or cited.span is None or unit.span is None:
        return (3, gap, 0)
    text, at = get_path(input, cited.path), cited.span.start
    if unit.path == cited.path:
        for place, boundary in enumerate((_SENTENCE, _PARAGRAPH)):
            if _part(text, at, boundary) == _part(text, unit.span.start, boundary):
                return (place, gap, 0)
    far = 0 if unit.path == cited.path else 10**9
    return (2, gap, far + abs(unit.span.start - at))


def matched_on(input: AgentInput, cited: EvidenceRef, unit: EvidenceRef) -> str:
    """What ``unit`` matches ``cited`` on, in words (``"same sentence, equal length"``)."""
    place, gap, _ = match_key(input, cited, unit)
    length = "equal length" if gap == 0 else f"length differs by {gap}"
    return f"{PLACES[place]}, {length}"


def location_matched(description: str) -> bool:
    """Whether a :func:`matched_on` description is matched on place (or needs no place)."""
    return not description.startswith(PLACES[2])


def placebo_pool(
    input: AgentInput, cited: EvidenceRef, all_cited: Sequence[EvidenceRef]
) -> list[EvidenceRef]:
    """Every eligible placebo unit for ``cited``, best match first (:func:`match_key`).

    Eligible: same kind and size (see the module docstring), uncited. Empty when the
    input has no such unit (the comparison is then untestable for this input).
    """
    cited_texts = {c.span.text.lower() for c in all_cited if c.span is not None}
    out: list[EvidenceRef] = []
    whole = _whole_field(input, cited)
    width = 0 if whole or cited.span is None else max(1, len(TOKEN.findall(cited.span.text)))
    for path, value in iter_leaves(input):
        if value is None or value == "":
            continue
        if width:
            toks = [m.span() for m in TOKEN.finditer(value)] if is_free_text(value) else []
            for i in range(len(toks) - width + 1):
                start, end = toks[i][0], toks[i + width - 1][1]
                ref = EvidenceRef(path, "text", "inferred", Span(start, end, value[start:end]))
                if ref.span is not None and ref.span.text.lower() not in cited_texts:
                    out.append(ref)
        elif ("text" if is_free_text(value) else kind_of(value)) == cited.kind:
            out.append(EvidenceRef(path, cited.kind, "inferred"))
    out = [u for u in out if not any(units_clash(u, c) for c in all_cited)]
    return sorted(out, key=lambda u: match_key(input, cited, u))


def match_placebo(
    input: AgentInput,
    cited: EvidenceRef,
    all_cited: Sequence[EvidenceRef],
    rng: random.Random,
    *,
    pool: Sequence[EvidenceRef] | None = None,
) -> EvidenceRef | None:
    """One placebo unit drawn uniformly from the best-matched class (or None).

    ``pool`` is :func:`placebo_pool` of the same arguments when the caller already has it
    (it is built here otherwise).
    """
    if pool is None:
        pool = placebo_pool(input, cited, all_cited)
    if not pool:
        return None
    best = match_key(input, cited, pool[0])
    return rng.choice(list(takewhile(lambda u: match_key(input, cited, u) == best, pool)))


def matched_nulls(
    input: AgentInput, cited: EvidenceRef, all_cited: Sequence[EvidenceRef], seed: int
) -> list[EvidenceRef]:
    """Null units for ``cited`` in the one-input design: whole match classes, best first,
    until there are :data:`SINGLE_INPUT_NULLS`; seeded-random order within a class."""
    rng = random.Random(f"craft-matched:{seed}:{cited.describe()}")
    classes: dict[tuple[int, int, int], list[EvidenceRef]] = {}
    for u in placebo_pool(input, cited, all_cited):
        classes.setdefault(match_key(input, cited, u), []).append(u)
    out: list[EvidenceRef] = []
    for key in sorted(classes):
        if len(out) >= SINGLE_INPUT_NULLS:
            break
        rng.shuffle(classes[key])
        out.extend(classes[key])
    return out
