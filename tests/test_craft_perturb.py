"""CRAFT perturbations: every strategy on every evidence kind, manifold scorers, LLM rewrites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from craft_helpers import FakeBackend

from facetlab.craft import (
    EvidenceRef,
    HeuristicScorer,
    LLMJudgeScorer,
    Span,
    negation,
    paraphrase,
    text_model,
)
from facetlab.craft.perturb.onmanifold import paraphrase_phrase
from facetlab.craft.perturb.strategies import apply_strategy, negate_phrase

PLAUSIBILITY = Path(__file__).parent / "fixtures" / "craft" / "plausibility.jsonl"

INPUT = {
    "ticket": {"body": "We are seeing data loss after the urgent migration.", "score": 7},
    "tier": "gold",
    "vip": True,
}
BODY = INPUT["ticket"]["body"]  # type: ignore[index]
TEXT = EvidenceRef("ticket.body", "text", span=Span.find(BODY, "data loss"))
NUM = EvidenceRef("ticket.score", "numeric")
CAT = EvidenceRef("tier", "categorical")
FLAG = EvidenceRef("vip", "categorical")


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("delete", "We are seeing after the urgent migration."),
        ("redact", "We are seeing xxxx xxxx after the urgent migration."),
        ("negate", "We are seeing no data loss after the urgent migration."),
        ("null", "We are seeing n/a after the urgent migration."),
    ],
)
def test_text_strategies(strategy: str, expected: str) -> None:
    p = apply_strategy(INPUT, TEXT, strategy)
    assert p.input["ticket"]["body"] == expected
    assert INPUT["ticket"]["body"] == BODY  # type: ignore[index]  # never mutated
    assert p.strategy == strategy and p.evidence == TEXT


@pytest.mark.parametrize(
    ("ref", "strategy", "expected"),
    [
        (NUM, "redact", "x"),
        (NUM, "negate", -7),
        (NUM, "null", None),
        (CAT, "redact", "xxxx"),
        (CAT, "negate", "not gold"),
        (CAT, "null", None),
        (FLAG, "negate", False),
        (FLAG, "null", None),
    ],
)
def test_scalar_strategies(ref: EvidenceRef, strategy: str, expected: object) -> None:
    p = apply_strategy(INPUT, ref, strategy)
    node = p.input["ticket"] if ref.path.startswith("ticket.") else p.input
    assert node[ref.path.split(".")[-1]] == expected


@pytest.mark.parametrize("ref", [NUM, CAT, FLAG])
def test_delete_removes_scalar_fields(ref: EvidenceRef) -> None:
    p = apply_strategy(INPUT, ref, "delete")
    node = p.input["ticket"] if ref.path.startswith("ticket.") else p.input
    assert ref.path.split(".")[-1] not in node


def test_negate_uses_known_categories_and_zero() -> None:
    p = apply_strategy(INPUT, CAT, "negate", categories={"tier": ["gold", "silver", "bronze"]})
    assert p.input["tier"] == "silver"
    zero = apply_strategy({"n": 0}, EvidenceRef("n", "numeric"), "negate")
    assert zero.input["n"] == 1


def test_delete_repairs_spacing_at_the_edges() -> None:
    first = EvidenceRef("b", "text", span=Span(0, 6, "Urgent"))
    # the next word keeps its own case: a deletion changes no byte of another unit
    assert apply_strategy({"b": "Urgent outage now."}, first, "delete").input["b"] == "outage now."
    last = EvidenceRef("b", "text", span=Span(11, 14, "now"))
    assert apply_strategy({"b": "Outage now now."}, last, "delete").input["b"] == "Outage now."


def test_negate_phrase_templates() -> None:
    assert negate_phrase("urgent") == "routine"
    assert negate_phrase("Urgent") == "Routine"
    assert negate_phrase("no response") == "response"
    assert negate_phrase("is down") == "is not down"
    assert negate_phrase("Data loss") == "No data loss"
    assert negate_phrase("API outage") == "No API outage"


def test_unknown_strategy_and_stale_span_fail_clearly() -> None:
    with pytest.raises(Exception, match="unknown strategy 'shuffle'"):
        apply_strategy(INPUT, TEXT, "shuffle")
    stale = EvidenceRef("ticket.body", "text", span=Span(0, 9, "data loss"))
    with pytest.raises(Exception, match="reads 'We are se'"):
        apply_strategy(INPUT, stale, "delete")


def test_heuristic_scorer_rejects_broken_text() -> None:
    s = HeuristicScorer()
    ref = EvidenceRef("b", "text", span=Span(3, 9, "urgent"))
    # a deletion seam the heuristic cannot check is never scored 1.0, but passes
    assert s.score({"b": "An urgent outage."}, {"b": "An outage."}, ref).score == 0.9
    assert s.score({"b": "An urgent outage."}, {"b": "An [REDACTED] outage."}, ref).score == 1.0
    empty = s.score({"b": "urgent"}, {"b": ""}, EvidenceRef("b", "text"))
    assert empty.score == 0.0 and "empty field" in empty.reasons[0]
    doubled = HeuristicScorer().score({"b": "An urgent outage."}, {"b": "An  outage."}, ref)
    assert doubled.score < 1.0 and "doubled space" in doubled.reasons[0]
    punct = HeuristicScorer().score({"b": "Outage, urgent."}, {"b": "Outage, ."}, ref)
    assert any("punctuation" in r for r in punct.reasons)
    dangling = HeuristicScorer().score({"b": "Fix the outage."}, {"b": "Fix the ."}, ref)
    assert any("dangling" in r for r in dangling.reasons) and dangling.score < 0.5
    cut_ref = EvidenceRef("b", "text", span=Span(3, 6, "urg"))
    cut = HeuristicScorer().score({"b": "An urgent outage."}, {"b": "An ent outage."}, cut_ref)
    assert any("cut word" in r for r in cut.reasons)
    # a nulled or removed scalar is a deliberate edit, not broken text
    assert s.score({"n": 1, "b": "x y"}, {"b": "x y"}, EvidenceRef("n", "numeric")).score == 1.0


def test_llm_judge_scorer_and_its_fallback() -> None:
    judge = FakeBackend(lambda prompt: json.dumps({"score": 3, "reason": "garbled"}))
    scorer = LLMJudgeScorer(text_model(judge))
    result = scorer.score({"b": "An urgent outage."}, {"b": "An outage."}, TEXT)
    assert result.score == pytest.approx(0.3) and "garbled" in result.reasons[0]
    scorer.score({"b": "An urgent outage."}, {"b": "An outage."}, TEXT)
    assert len(judge.requests) == 1  # cached per text
    broken = LLMJudgeScorer(text_model(FakeBackend(lambda prompt: "I think it is fine")))
    fallback = broken.score({"b": "An urgent outage."}, {"b": "An  outage."}, TEXT)
    assert "judge failed" in fallback.reasons[0] and "heuristic used" in fallback.reasons[0]
    assert fallback.score < 1.0


def test_on_manifold_templates_offline() -> None:
    neg = negation().perturb(INPUT, TEXT)[0]
    assert neg.input["ticket"]["body"] == "We are seeing no data loss after the urgent migration."
    assert neg.note == "template"
    para = paraphrase().perturb(INPUT, TEXT)[0]
    assert para.input["ticket"]["body"] == "We are seeing lost data after the urgent migration."
    assert paraphrase().perturb(INPUT, NUM) == []  # nothing meaning-preserving for a number
    assert negation().perturb(INPUT, NUM)[0].input["ticket"]["score"] == -7


def test_on_manifold_through_an_llm_backend() -> None:
    rewrite = "We are seeing our data intact after the urgent migration."
    backend = FakeBackend(lambda prompt: json.dumps({"text": rewrite}))
    p = negation(text_model(backend)).perturb(INPUT, TEXT)[0]
    assert p.input["ticket"]["body"] == rewrite and p.note == "llm"
    assert "opposite" in backend.requests[0].prompt and "data loss" in backend.requests[0].prompt
    # a paraphrase that keeps the exact phrase is rejected, and the template is used instead
    lazy = FakeBackend(lambda prompt: json.dumps({"text": BODY.replace("We", "They")}))
    p2 = paraphrase(text_model(lazy)).perturb(INPUT, TEXT)[0]
    assert p2.note is not None and "still contains the original phrase" in p2.note
    assert "lost data" in p2.input["ticket"]["body"]
    garbage = FakeBackend(lambda prompt: "sure!")
    p3 = negation(text_model(garbage)).perturb(INPUT, TEXT)[0]
    assert p3.note is not None and "LLM rewrite failed" in p3.note


def test_heuristic_scorer_on_a_labelled_set_of_broken_and_fluent_edits() -> None:
    """30 edits of our own (tests/fixtures/craft/plausibility.jsonl), labelled by hand."""
    rows = [json.loads(line) for line in PLAUSIBILITY.read_text(encoding="utf-8").splitlines()]
    scorer, ref = HeuristicScorer(), EvidenceRef("b", "text")
    scores = {
        (r["perturbed"], r["label"]): scorer.score(
            {"b": r["original"]}, {"b": r["perturbed"]}, ref
        ).score
        for r in rows
    }
    broken = [s for (_, label), s in scores.items() if label == "broken"]
    fluent = [s for (_, label), s in scores.items() if label == "fluent"]
    assert len(broken) == len(fluent) == 15
    assert max(broken) < 1.0  # no broken text passes as perfect ("Fix the now." was 1.0)
    assert scores[("Fix the now.", "broken")] < 0.5
    # at the default threshold 0.5: every fluent edit kept, 10 of 15 broken ones dropped
    # (docs/craft.md lists the five it cannot see, e.g. "We see after the upgrade.")
    assert min(fluent) >= 0.5
    assert sum(s < 0.5 for s in broken) == 10


def test_offline_paraphrase_never_reverses_meaning() -> None:
    # reordering turned "not working" into "working of not"; word by word it stays put
    assert paraphrase_phrase("not working") is None
    assert paraphrase_phrase("disk failure") is None
    assert paraphrase_phrase("Urgent outage") == "Pressing service interruption"
    inp = {"b": "The app is not working."}
    ref = EvidenceRef("b", "text", span=Span.find(inp["b"], "not working"))
    assert paraphrase().perturb(inp, ref) == []  # no paraphrase rather than a wrong one
