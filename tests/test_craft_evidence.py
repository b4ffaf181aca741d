"""CRAFT evidence: explicit resolution, stale spans, placebo derivation, inference."""

from __future__ import annotations

import pytest

from facetlab.craft import EvidenceRef, Span
from facetlab.craft.errors import EvidenceError
from facetlab.craft.evidence.resolver import (
    derive_placebo,
    resolve_evidence,
    resolve_explicit,
    resolve_inferred,
)

INPUT = {
    "ticket": {"body": "We are seeing data loss after the urgent migration.", "score": 7},
    "tier": "enterprise",
    "vip": True,
}


def test_valid_evidence_resolves_unchanged() -> None:
    body = INPUT["ticket"]["body"]  # type: ignore[index]
    ref = EvidenceRef("ticket.body", "text", span=Span.find(body, "data loss"))
    assert resolve_evidence(INPUT, ref) == (ref, None)
    whole, _ = resolve_evidence(INPUT, EvidenceRef("ticket.body", "text"))
    assert whole.span == Span(0, len(body), body)


def test_stale_span_is_relocated_with_a_warning() -> None:
    stale = EvidenceRef("ticket.body", "text", span=Span(0, 9, "data loss"))
    fixed, warning = resolve_evidence(INPUT, stale)
    assert fixed.span == Span(14, 23, "data loss")
    assert warning and "stale" in warning and '"data loss" (ticket.body)' in warning


def test_span_text_gone_is_an_error_naming_the_evidence() -> None:
    gone = EvidenceRef("ticket.body", "text", span=Span(3, 10, "outage"))
    with pytest.raises(EvidenceError, match=r'evidence "outage" \(ticket.body\).*stale'):
        resolve_evidence(INPUT, gone)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (EvidenceRef("ticket.nope", "numeric"), "key 'nope' not found in ticket"),
        (EvidenceRef("tier", "numeric"), "needs a number"),
        (EvidenceRef("ticket.score", "text"), "needs a string"),
        (EvidenceRef("ticket", "categorical"), "needs a scalar"),
    ],
)
def test_bad_evidence_messages(ref: EvidenceRef, message: str) -> None:
    with pytest.raises(EvidenceError, match=message):
        resolve_evidence(INPUT, ref)
    result = resolve_explicit(INPUT, [ref])
    assert result.refs == [] and message in result.errors[0]


def test_resolve_explicit_deduplicates_and_collects() -> None:
    ok = EvidenceRef("ticket.score", "numeric")
    result = resolve_explicit(INPUT, [ok, ok, EvidenceRef("x", "numeric")])
    assert result.refs == [ok] and len(result.errors) == 1


def test_derive_placebo_puts_content_words_first_and_skips_none() -> None:
    body = INPUT["ticket"]["body"]  # type: ignore[index]
    cited = [EvidenceRef("ticket.body", "text", span=Span.find(body, "data loss"))]
    refs = derive_placebo(INPUT, cited, max_candidates=100)
    words = [r.span.text for r in refs if r.span]
    # content words first; stopwords and short words after them, never left out
    assert words[:3] == ["seeing", "urgent", "migration"]
    assert {"We", "are", "after", "the"} <= set(words[3:])
    assert "data" not in words and "loss" not in words  # the cited words are not placebos
    assert all(r.source == "inferred" for r in refs)
    # after the words come uncited scalar fields
    assert [r.path for r in refs if r.span is None] == ["ticket.score", "tier", "vip"]
    assert {r.kind for r in refs if r.span is None} == {"numeric", "categorical"}
    assert len(derive_placebo(INPUT, cited, max_candidates=2)) == 2


def test_derive_placebo_prefers_the_cited_kind_for_scalar_evidence() -> None:
    refs = derive_placebo(INPUT, [EvidenceRef("ticket.score", "numeric")], max_candidates=3)
    assert refs[0].path != "ticket.score"
    assert refs[0].span is None  # a scalar field first, not a word


def test_resolve_inferred_from_rationale() -> None:
    refs = resolve_inferred(
        INPUT,
        'P1: the customer reported "data loss"; score 7 and the enterprise tier matter.',
        exclude=["P1"],
    )
    by_path = {(r.path, r.span.text if r.span else None): r for r in refs}
    assert ("ticket.body", "data loss") in by_path
    assert by_path[("ticket.body", "data loss")].confidence == 0.95  # quoted, exact
    assert ("ticket.score", None) in by_path and ("tier", None) in by_path
    assert all(r.source == "inferred" and r.confidence for r in refs)


def test_resolve_inferred_fuzzy_and_field_names() -> None:
    refs = resolve_inferred(INPUT, "Because of the dataloss reported, and the VIP flag.")
    texts = {r.span.text for r in refs if r.span}
    assert "data loss" in texts
    assert any(r.path == "vip" and r.kind == "categorical" for r in refs)
    assert resolve_inferred(INPUT, "No reason at all.") == []
