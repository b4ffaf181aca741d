"""Claims of the paper's Table 2, in the order the paper states them."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from facetlab.analysis import stats
from facetlab.errors import DataError
from facetlab.paper.claims import ClaimInputs, Value
from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    CABRAL_ADV,
    CABRAL_ADV2,
    Section,
    _cell,
    _full,
    _probe,
    _wrong_count,
    bimodality,
    claim,
    p3_cell,
    table2,
)

SECTION = Section()

T2 = "Table 2"
_TABLE2: dict[str, dict[str, tuple[int, float, int]]] = {
    # case → short → (n, mean weight on the neutralized factor, wrong outcomes)
    "CF-Cabral": {
        "Sonnet": (6, 11.7, 0),
        "Opus": (6, 10.0, 0),
        "GPT": (16, 18.1, 3),
        "DeepSeek": (2, 15.0, 0),
        "Mistral": (2, 10.0, 0),
        "Maverick": (2, 10.0, 0),
        "Scout": (2, 10.0, 0),
        "Qwen": (2, 10.0, 0),
    },
    "CF-Barker": {
        "Sonnet": (6, 4.2, 0),
        "Opus": (6, 11.7, 0),
        "GPT": (6, 31.2, 0),
        "DeepSeek": (4, 0.0, 0),
        "Mistral": (1, 0.0, 0),
        "Maverick": (1, 0.0, 0),
        "Scout": (1, 0.0, 0),
        "Qwen": (1, 0.0, 0),
    },
    "CF-Biakanja": {
        "Sonnet": (6, 6.7, 0),
        "Opus": (6, 10.0, 0),
        "GPT": (6, 1.7, 0),
        "DeepSeek": (2, 0.0, 0),
        "Mistral": (2, 10.0, 0),
        "Maverick": (2, 10.0, 0),
        "Scout": (2, 10.0, 0),
        "Qwen": (5, 13.0, 0),
    },
}


def _t2_recipe(short: str, case: str, column: str) -> Callable[[ClaimInputs], Value]:
    """Recipe reading one cell of H3's Table 2 frame (counts as int, means as float)."""

    def recipe(x: ClaimInputs) -> Value:
        value = float(_cell(table2(x), "Table 2", short, "case", case, column))
        return int(value) if column in ("n", "wrong") else value

    return recipe


for _case, _row in _TABLE2.items():
    for _short, (_n, _w, _wrong) in _row.items():
        _where = f"{T2}, {_case} column, {_full(_short)} row"
        SECTION.add(
            claim(
                f"t2.{_case}.{_short}.n",
                _where,
                f"n = {_n}",
                _n,
                _t2_recipe(_short, _case, "n"),
            ),
            claim(
                f"t2.{_case}.{_short}.mean",
                _where,
                f"w̄ = {_w:.1f}",
                _w,
                _t2_recipe(_short, _case, "mean_weight"),
                tol=0.05,
            ),
            claim(
                f"t2.{_case}.{_short}.wrong",
                _where,
                f"wrong {_wrong}/{_n}",
                _wrong,
                _t2_recipe(_short, _case, "wrong"),
            ),
        )

SECTION.add(
    claim(
        "t2.gpt_cabral_wilson_low",
        f"{T2}, CF-Cabral column, GPT-5.4 row",
        "3/16 [6%, 43%]",
        6,
        lambda x: (
            100
            * stats.wilson(
                _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)), len(p3_cell(x, "GPT", CABRAL_ADV))
            ).low
        ),
        tol=0.5,
        status="MISMATCH",
        **evidence.GPT_CABRAL_WILSON.kw(),
    ),
    claim(
        "t2.gpt_cabral_wilson_high",
        f"{T2}, CF-Cabral column, GPT-5.4 row",
        "3/16 [6%, 43%]",
        43,
        lambda x: (
            100
            * stats.wilson(
                _wrong_count(p3_cell(x, "GPT", CABRAL_ADV)), len(p3_cell(x, "GPT", CABRAL_ADV))
            ).high
        ),
        tol=0.5,
    ),
)
TABLE2_PRINTED_INTERVALS = 1
"""Wilson intervals the published Table 2 prints (read off the paper: GPT-5.4 on CF-Cabral only)."""


def _t2_cells_n5(x: ClaimInputs) -> pd.DataFrame:
    """The Table 2 cells with n ≥ 5, which the caption says carry a Wilson 95% interval."""
    t = table2(x)
    if t.empty:
        raise DataError("Table 2 has no cells")
    return t[t["n"] >= 5]


def _t2_wilson_evidence(x: ClaimInputs) -> dict[str, Value]:
    cells = _t2_cells_n5(x)
    listed = "; ".join(
        f"{model} {case} {wrong}/{n} [{100 * low:.0f}%, {100 * high:.0f}%]"
        for model, case, wrong, n, low, high in zip(
            cells["model"],
            cells["case"],
            cells["wrong"].astype(int),
            cells["n"].astype(int),
            cells["wilson_low"].astype(float),
            cells["wilson_high"].astype(float),
            strict=True,
        )
    )
    return {"n_cells": len(cells), "printed": TABLE2_PRINTED_INTERVALS, "cells": listed}


SECTION.add(
    claim(
        "t2.caption_wilson_n5",
        f"{T2} caption",
        "with Wilson 95% CI for cells where n ≥ 5 (intervals printed in the table)",
        TABLE2_PRINTED_INTERVALS,
        lambda x: len(_t2_cells_n5(x)),
        status="MISMATCH",
        why=(
            "{n_cells} Table 2 cells have n ≥ 5, but the table prints {printed} interval. The "
            "intervals the caption promises: {cells}."
        ),
        evidence=_t2_wilson_evidence,
    ),
    claim(
        "t2.caption_adv2_only_gpt",
        f"{T2} caption",
        "a second adversarial wording (cf-001-adv2) was run for the GPT-5.4 cf-001 cell only",
        1,
        lambda x: int(
            _probe(x, "P3").query(f"instance_id == {CABRAL_ADV2!r}")["canonical_model"].nunique()
        ),
        status="MISMATCH",
        **evidence.ADV2_ALL_MODELS.kw(),
    ),
    claim(
        "t2.caption_adv2_n",
        f"{T2} caption",
        "adding 6 trials",
        6,
        lambda x: len(p3_cell(x, "GPT", CABRAL_ADV2)),
    ),
    claim(
        "t2.caption_adv2_wrong",
        f"{T2} caption",
        "producing 4/6 wrong outcomes",
        4,
        lambda x: _wrong_count(p3_cell(x, "GPT", CABRAL_ADV2)),
    ),
    claim(
        "t2.caption_combined_n",
        f"{T2} caption",
        "The combined GPT-5.4 cf-001 family (n = 22)",
        22,
        lambda x: len(bimodality(x)),
    ),
)
