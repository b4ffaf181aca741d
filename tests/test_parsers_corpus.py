"""Every reply parser on a corpus of small-model reply shapes (issue 27, item 4;
tests/fixtures/replies/small_model.json says where the shapes come from): the strict
parser takes what a careful reader takes, or says malformed; it never names another
answer. The FACET v3 rules (the paper's) never raise on any of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from facetlab.probes import parse_reply

CORPUS = json.loads(
    (Path(__file__).parent / "fixtures" / "replies" / "small_model.json").read_text()
)


@pytest.mark.parametrize("case", CORPUS["p1"], ids=lambda c: c["reply"][:40])
def test_p1(case: dict[str, Any]) -> None:
    parsed = parse_reply("p1", case["reply"], case["n"])
    assert (parsed.status, parsed.label) == (case["status"], case["label"]), parsed.problems
    if parsed.status == "malformed":
        assert parsed.problems  # with a reason


@pytest.mark.parametrize("probe", ["p2", "p3", "c2"])
@pytest.mark.parametrize("case", CORPUS["weighted"], ids=lambda c: c["reply"][:40])
def test_weighted(case: dict[str, Any], probe: str) -> None:
    parsed = parse_reply(probe, case["reply"], case["n"])
    assert parsed.status == case["status"], parsed.problems
    assert parsed.answer == case["answer"]
    expected = case["weights"]
    assert parsed.weights == ({k: float(v) for k, v in expected.items()} if expected else None)


@pytest.mark.parametrize("probe", ["p1", "p2", "c2"])
def test_the_v3_rules_read_every_shape_without_raising(probe: str) -> None:
    for case in CORPUS["p1"] + CORPUS["weighted"]:
        parsed = parse_reply(probe, case["reply"], case["n"], parser="facet-v3")
        assert parsed.status in ("ok", "repaired", "malformed", "empty")


def test_the_issue_27_reply_is_never_f1() -> None:
    reply = "F1: The most important single factor in this case is F2, because of the label."
    assert parse_reply("p1", reply, 5).label == "F2"  # strict, the default
