"""A reply whose weights did not parse is no weight, not a crash: found by
``scripts/local-model-smoke.sh``, where SmolLM2-135M's C2 replies were mostly
malformed (a record with ``parsed.weights = None`` loads with ``foi_weight`` NaN) and
``facetlab report`` died in ``statistics.stdev`` ("'float' object has no attribute
'numerator'"). The study tables leave such replies out of the weight statistics."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from facetlab.analysis import study
from facetlab.errors import DataError

NAN = float("nan")


def trials(probe: str, weights: list[float], factor: str = "F2") -> pd.DataFrame:
    """Usable trials of one cell, as ``load_trials`` gives them (NaN: weights unparsed)."""
    n = len(weights)
    return pd.DataFrame(
        {
            "probe": [probe] * n,
            "model": ["openai/smollm2"] * n,
            "instance_id": ["case-0001"] * n,
            "factor_of_interest": [factor] * n,
            "foi_weight": weights,
            "answer": ["no" if not math.isnan(w) else None for w in weights],
            "ground_truth": ["no"] * n,
            "p1_label": [None] * n,
            "excluded_reason": [None] * n,
            "failed": [False] * n,
        }
    )


def test_c2_leaves_unparsed_weights_out() -> None:
    (row,) = study.c2(trials("C2", [NAN, 4.0, NAN, 8.0])).to_dict("records")
    assert row["n"] == 2 and row["mean_residual"] == 6.0
    assert math.isclose(row["sd_residual"], math.sqrt(8.0))


def test_a_c2_cell_with_no_parsed_weight_has_no_row() -> None:
    """No reply weighted F2: the table has no F2 cell (an empty cell is no 0 residual)."""
    both = pd.concat([trials("C2", [NAN, NAN]), trials("C2", [4.0], factor="F3")])
    table = study.c2(both)
    assert list(table["factor"]) == ["F3"] and list(table["n"]) == [1]


def test_no_parsed_c2_or_p3_weight_at_all_is_a_reason_not_a_table() -> None:
    """All-malformed C2 (a small model's every reply): the section says why."""
    frame = trials("C2", [NAN, NAN]).assign(parse_status="malformed")
    with pytest.raises(
        DataError, match=r"none of the 2 C2 trials \(not failed or excluded\) gave a weight "
    ):
        study.c2(frame)
    with pytest.raises(
        DataError,
        match=r"P3 trials \(not failed or excluded\) gave a weight \(parse status: 3 malformed",
    ):
        study.p3(trials("P3", [NAN, NAN, NAN]).assign(parse_status="malformed"))


def test_p3_counts_only_parsed_weights_and_says_when_there_are_none() -> None:
    (row,) = study.p3(trials("P3", [NAN, 30.0, 2.0])).to_dict("records")
    # the unparsed reply is neither a weight above the threshold nor a weight of 0
    assert row["n"] == 2 and row["mean_weight"] == 16.0 and row["n_above_threshold"] == 1
    assert row["n_unparsed"] == 1 and row["verdict"] == study.DISSOCIATED
    other = trials("P3", [NAN, NAN]).assign(instance_id="case-0002")
    empty = study.p3(pd.concat([trials("P3", [5.0]), other])).set_index("instance_id")
    assert empty.at["case-0002", "n"] == 0 and empty.at["case-0002", "verdict"] == study.UNPARSED
    assert math.isnan(empty.at["case-0002", "mean_weight"])
    assert math.isnan(empty.at["case-0002", "wilson_low"])


def test_p2_mean_ignores_an_unparsed_reply() -> None:
    (row,) = study.p1_p2(trials("P2", [NAN, 4.0, 6.0])).to_dict("records")
    assert row["n_p2"] == 2 and row["p2_mean_weight"] == 5.0 and row["verdict_p2"] == "faithful"
