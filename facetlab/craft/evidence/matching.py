"""Matched placebos: for each cited unit, uncited units of the same kind and length.

The matching rule (documented in ``docs/craft.md``):

* **same kind** — a text span is matched by a text span (in any free-text field), a
  whole text field by another whole text field, a numeric field by a numeric field, a
  categorical field by a categorical field;
* **same size** — a span of ``k`` words by a window of ``k`` consecutive words; among
  those, the eligible units whose character length is *closest* to the cited unit's
  (exactly equal whenever the input has one);
* **uncited** — no overlap with any cited unit, and not the same text as a cited unit;
* **drawn at random** — uniformly among all units of that closest-length class, with
  the caller's seeded ``random.Random`` (never a fixed first five);
* the caller perturbs the cited unit and its placebo with the **same strategy**.

Perturbing the cited unit and its placebo is then exchangeable under the null
hypothesis that the cited unit is like any other unit of its kind and size. Position in
the text is not matched (a documented limitation).

>>> import random
>>> from facetlab.craft.types import EvidenceRef, Span
>>> body = "We see data loss after the urgent migration of old disks."
>>> cited = EvidenceRef("body", "text", span=Span.find(body, "data loss"))
>>> [r.span.text for r in placebo_pool({"body": body}, cited, [cited])][:3]
['after the', 'old disks', 'the urgent']
>>> match_placebo({"body": body}, cited, [cited], random.Random(1)).span.text in ("after the", "old disks")
True
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from facetlab.craft.evidence.resolver import is_free_text, kind_of
from facetlab.craft.path import get_path, iter_leaves
from facetlab.craft.types import AgentInput, EvidenceRef, Span

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")


def _tokens(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _whole_field(input: AgentInput, ref: EvidenceRef) -> bool:
    if ref.span is None:
        return True
    value = get_path(input, ref.path)
    return isinstance(value, str) and ref.span.start == 0 and ref.span.end == len(value)


def _clashes(path: str, span: Span | None, cited: Sequence[EvidenceRef]) -> bool:
    for c in cited:
        if c.path == path:
            if c.span is None or span is None:
                return True
            if c.span.start < span.end and span.start < c.span.end:
                return True
        elif path.startswith(c.path + ".") or c.path.startswith(path + "."):
            return True
    return False


def unit_length(input: AgentInput, ref: EvidenceRef) -> int:
    """Characters of a cited or placebo unit (its span, else the whole field)."""
    if ref.span is not None:
        return len(ref.span.text)
    return len(str(get_path(input, ref.path)))


def placebo_pool(
    input: AgentInput, cited: EvidenceRef, all_cited: Sequence[EvidenceRef]
) -> list[EvidenceRef]:
    """Every eligible placebo unit for ``cited``, closest character length first.

    Eligible: same kind and size (see the module docstring), uncited. Empty when the
    input has no such unit (the comparison is then untestable for this input).
    """
    cited_texts = {c.span.text.lower() for c in all_cited if c.span is not None}
    leaves = list(iter_leaves(input))
    out: list[EvidenceRef] = []
    if cited.kind == "text" and not _whole_field(input, cited):
        assert cited.span is not None
        width = max(1, len(_tokens(cited.span.text)))
        for path, value in leaves:
            if not is_free_text(value):
                continue
            toks = _tokens(value)
            for i in range(len(toks) - width + 1):
                start, end = toks[i][0], toks[i + width - 1][1]
                span = Span(start, end, value[start:end])
                if span.text.lower() in cited_texts or _clashes(path, span, all_cited):
                    continue
                out.append(EvidenceRef(path, "text", "inferred", span))
    else:
        for path, value in leaves:
            if value is None or (isinstance(value, str) and not value):
                continue
            kind = "text" if is_free_text(value) else kind_of(value)
            if kind != cited.kind or _clashes(path, None, all_cited):
                continue
            out.append(EvidenceRef(path, kind, "inferred"))
    target = unit_length(input, cited)
    return sorted(out, key=lambda r: abs(unit_length(input, r) - target))


def match_placebo(
    input: AgentInput,
    cited: EvidenceRef,
    all_cited: Sequence[EvidenceRef],
    rng: random.Random,
    *,
    pool: Sequence[EvidenceRef] | None = None,
) -> EvidenceRef | None:
    """One placebo unit drawn uniformly from the closest-length eligible class (or None).

    ``pool`` is :func:`placebo_pool` of the same arguments when the caller already has it
    (it is built here otherwise).
    """
    if pool is None:
        pool = placebo_pool(input, cited, all_cited)
    if not pool:
        return None
    target = unit_length(input, cited)
    best = abs(unit_length(input, pool[0]) - target)
    closest = [r for r in pool if abs(unit_length(input, r) - target) == best]
    return rng.choice(closest)
