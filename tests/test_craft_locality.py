"""Every CRAFT edit changes only its unit (issue 37), on random texts and nested inputs.

For every built-in strategy, on a random unit of a random multi-sentence text inside a
random nested input:

* no byte outside the unit changes, except one space a deletion leaves doubled;
* the unit's neighbours keep their case, and no punctuation mark or sentence boundary
  outside the unit appears or disappears;
* the redaction mask keeps the unit's length and carries no feature of its own (lower
  case ``x`` only, no all-caps word);
* every other field is byte-identical;
* matched placebo units never cross a sentence boundary, and perturbing "the rest of the
  input" leaves the cited unit byte-identical.

The example count is ``CRAFT_LOCALITY_EXAMPLES`` (200 by default, so CI stays fast; the
issue's 10,000-example run is ``CRAFT_LOCALITY_EXAMPLES=10000 pytest tests/test_craft_locality.py``).
"""

from __future__ import annotations

import os
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from facetlab.craft.evidence.matching import matched_placebos
from facetlab.craft.evidence.resolver import TOKEN, uncited_units
from facetlab.craft.path import get_path
from facetlab.craft.perturb._combine import perturb_all
from facetlab.craft.perturb.strategies import (
    STRATEGIES,
    StrategyPerturber,
    apply_strategy,
    negate_phrase,
)
from facetlab.craft.types import EvidenceRef, Span

EXAMPLES = int(os.environ.get("CRAFT_LOCALITY_EXAMPLES", "200"))
LOCAL = settings(max_examples=EXAMPLES, deadline=None)

WORDS = st.sampled_from(
    [
        "data",
        "loss",
        "URGENT",
        "Frozen",
        "carts",
        "not",
        "the",
        "a",
        "42",
        "v2.1",
        "don't",
        "e-mail",
        "ASAP",
        "Billing",
        "is",
        "down",
        "x",
        "I",
        "ok",
    ]
)
MARK = st.sampled_from([".", "!", "?"])


@st.composite
def texts(draw: Any) -> str:
    sentences = []
    for _ in range(draw(st.integers(1, 4))):
        words = draw(st.lists(WORDS, min_size=1, max_size=9))
        inner = [
            w + (draw(st.sampled_from(["", "", ",", ";"])) if i < len(words) - 1 else "")
            for i, w in enumerate(words)
        ]
        sentence = " ".join(inner) + draw(MARK)
        sentences.append(sentence[:1].upper() + sentence[1:] if draw(st.booleans()) else sentence)
    return draw(st.sampled_from([" ", "  ", "\n"])).join(sentences)


@st.composite
def cases(draw: Any) -> tuple[dict[str, Any], EvidenceRef]:
    """A nested input and a random span of consecutive words of its text field."""
    text = draw(texts())
    tokens = [m.span() for m in TOKEN.finditer(text)]
    i = draw(st.integers(0, len(tokens) - 1))
    j = draw(st.integers(i, min(len(tokens) - 1, i + 2)))
    start, end = tokens[i][0], tokens[j][1]
    inp = {
        "ticket": {"subject": "Checkout incident", "body": text, "meta": {"seats": 12}},
        "tags": ["a", "b"],
        "tier": "gold",
    }
    return inp, EvidenceRef("ticket.body", "text", span=Span(start, end, text[start:end]))


def _outside(text: str, unit: Span) -> tuple[str, str]:
    return text[: unit.start], text[unit.end :]


def _punctuation(text: str) -> list[str]:
    return re.findall(r"[^\w\s]", text)


@LOCAL
@given(cases(), st.sampled_from(STRATEGIES))
def test_every_strategy_changes_only_its_unit(
    case: tuple[dict[str, Any], EvidenceRef], strategy: str
) -> None:
    inp, ref = case
    assert ref.span is not None
    text = inp["ticket"]["body"]
    out = apply_strategy(inp, ref, strategy).input
    new = out["ticket"]["body"]
    left, right = _outside(text, ref.span)
    # other fields untouched, byte for byte
    assert {k: v for k, v in out.items() if k != "ticket"} == {
        k: v for k, v in inp.items() if k != "ticket"
    }
    assert out["ticket"]["subject"] == inp["ticket"]["subject"]
    assert out["ticket"]["meta"] == inp["ticket"]["meta"]
    removes = strategy == "delete" or (strategy == "negate" and not negate_phrase(ref.span.text))
    if removes:  # a deletion, or a negation that drops its word ("not" -> "")
        # the left part may lose trailing spaces, the right part leading spaces: nothing else
        assert new.startswith(left.rstrip(" ")) and new.endswith(right.lstrip(" "))
        kept = len(new) - len(left.rstrip(" ")) - len(right.lstrip(" "))
        assert 0 <= kept <= len(left) - len(left.rstrip(" ")) + len(right) - len(right.lstrip(" "))
        assert new[len(left.rstrip(" ")) : len(new) - len(right.lstrip(" "))].strip(" ") == ""
    else:
        assert new.startswith(left) and new.endswith(right)
    middle = "" if removes else new[len(left) : len(new) - len(right)]
    if strategy == "redact":
        assert len(new) == len(text)  # length-preserving
        assert set(re.sub(r"[^\w]", "", middle)) <= {"x"}
        assert not any(w.isupper() for w in middle.split())  # the mask is no all-caps word
    # punctuation and sentence boundaries outside the unit are the same marks
    assert _punctuation(new) == _punctuation(left) + _punctuation(middle) + _punctuation(right)


@LOCAL
@given(cases(), st.sampled_from(STRATEGIES))
def test_placebos_stay_in_a_sentence_and_the_rest_keeps_the_cited_unit(
    case: tuple[dict[str, Any], EvidenceRef], strategy: str
) -> None:
    inp, ref = case
    assert ref.span is not None
    text = get_path(inp, ref.path)
    for units in matched_placebos(inp, ref, [ref]).values():
        for u in units:
            assert u.span is not None
            assert not re.search(r"[.!?]\s", u.span.text)  # never across a sentence end
            assert not (u.span.start < ref.span.end and ref.span.start < u.span.end)
            assert text[u.span.start : u.span.end] == u.span.text
    rest = uncited_units(inp, [ref])
    out = perturb_all(inp, rest, StrategyPerturber(strategy))
    assert ref.span.text in get_path(out, ref.path)  # the cited unit is byte-identical
