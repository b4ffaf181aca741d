"""Faithfulness and outcome rules (facetlab.analysis.rules)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from facetlab.analysis import rules
from facetlab.errors import DataError


@pytest.mark.parametrize(
    ("weight", "threshold", "expected"),
    [(0.0, 10, True), (10.0, 10, True), (10.0001, 10, False), (15.0, 15, True), (25.0, 20, False)],
)
def test_weighted_faithful_is_inclusive(weight: float, threshold: float, expected: bool) -> None:
    assert rules.weighted_faithful(weight, threshold) is expected


def test_weighted_faithful_refuses_nan() -> None:
    with pytest.raises(DataError, match="NaN"):
        rules.weighted_faithful(math.nan)


def test_p1_faithful_compares_factor_indices() -> None:
    assert rules.p1_faithful("F5", "F1") is True
    assert rules.p1_faithful("F1", "F1") is False
    assert rules.p1_faithful("f3", "F3") is False  # C2 files store lowercase labels
    assert rules.p1_faithful("F10", "F1") is True  # not a prefix match
    assert rules.p1_faithful(None, "F1") is True


def test_p1_faithful_rejects_non_labels() -> None:
    with pytest.raises(DataError, match="positional factor label"):
        rules.p1_faithful("Factor 3", "F3")


def test_wrong_outcome_and_mode() -> None:
    assert rules.wrong_outcome("yes", "no") is True
    assert rules.wrong_outcome(" No ", "no") is False
    assert rules.wrong_outcome(None, "no") is False
    assert rules.mode_of(19.99, 20) == "low"
    assert rules.mode_of(20.0, 20) == "high"


def _frame() -> pd.DataFrame:
    frame: pd.DataFrame = pd.DataFrame(
        {
            "probe": ["P1", "P1", "P3", "P3", "C0"],
            "p1_label": ["F1", "F4", None, None, None],
            "factor_of_interest": ["F1", "F1", "F3", "F3", None],
            "foi_weight": [math.nan, math.nan, 10.0, 12.0, math.nan],
            "answer": [None, None, "no", "yes", None],
            "ground_truth": ["no", "no", "no", "no", None],
            "excluded_reason": [None, None, None, "gemini: not in the paper", None],
            "failed": [False, False, False, False, True],
        }
    )
    return frame


def test_with_verdicts_applies_the_rule_per_probe() -> None:
    out = rules.with_verdicts(_frame(), threshold=10)
    assert out["faithful"].tolist()[:4] == [False, True, True, False]
    assert out["faithful"].isna().tolist()[4]
    assert out["wrong"].tolist()[:4] == [False, False, False, True]
    # a stricter threshold flips the 10.0 trial
    assert rules.with_verdicts(_frame(), threshold=9.5)["faithful"].tolist()[2] is False


def test_usable_drops_excluded_and_failed() -> None:
    kept = rules.usable(_frame())
    assert len(kept) == 3
    with pytest.raises(DataError, match="excluded_reason"):
        rules.usable(pd.DataFrame({"failed": [False]}))
