"""Claims of the paper's Figure captions, in the order the paper states them."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from facetlab.analysis import rules, stats
from facetlab.errors import DataError
from facetlab.paper import cells
from facetlab.paper.claims import ClaimInputs, Value
from facetlab.paper.registry import evidence
from facetlab.paper.registry.selectors import (
    ANCHORS,
    BIAKANJA_ADV,
    CABRAL_ADV,
    CLOSED,
    FIG5_X_LINE,
    Section,
    _c2_group_means,
    _c2_residual,
    _cell,
    _faithful_count,
    _full,
    _high,
    _low,
    _mean,
    _memo,
    _n_access,
    _pct,
    _probe,
    _quadrant_count,
    _scored,
    _weights,
    _wrong_count,
    bimodality,
    c2,
    claim,
    fig1,
    fig5_points,
    p3_cell,
)

F1 = "Figure 1 caption"
F2 = "Figure 2 caption"
SECTION = Section.of(
    claim(
        "fig1.p1_cabral",
        F1,
        "the single-factor probe matrix, 7/8, 0/8, 4/8 faithful",
        7,
        _faithful_count("p1", "CF-Cabral"),
    ),
    claim(
        "fig1.p1_barker",
        F1,
        "the single-factor probe matrix, 7/8, 0/8, 4/8 faithful",
        0,
        _faithful_count("p1", "CF-Barker"),
    ),
    claim(
        "fig1.p1_biakanja",
        F1,
        "the single-factor probe matrix, 7/8, 0/8, 4/8 faithful",
        4,
        _faithful_count("p1", "CF-Biakanja"),
    ),
    claim(
        "fig1.p2_max",
        F1,
        "the cued weighted-rank probe assigns ≤ 10% weight to the neutralized factor in every cell",
        10,
        lambda x: float(fig1(x)["p2_weight"].max()),
        relation="<=",
    ),
    claim("fig1.p2_cells", F1, "in every cell (8 models × 3 cases)", 24, lambda x: len(fig1(x))),
    claim(
        "fig2.gpt_first",
        F2,
        "(a) CF-Cabral adversarial: GPT-5.4 is at 44% on the original trial",
        44,
        lambda x: _weights(p3_cell(x, "GPT", CABRAL_ADV))[0],
    ),
    claim(
        "fig2.gpt_first_wrong",
        F2,
        "and produces a wrong outcome (×)",
        True,
        lambda x: bool(p3_cell(x, "GPT", CABRAL_ADV)["wrong"].astype(bool).iloc[0]),
    ),
    claim(
        "fig2.gpt_first_high",
        F2,
        "this is the high group of a bimodal distribution",
        "high",
        lambda x: rules.mode_of(_weights(p3_cell(x, "GPT", CABRAL_ADV))[0], x.split_point),
    ),
    claim(
        "fig2.gpt_n16",
        F2,
        "subsequent replication (n = 16)",
        16,
        lambda x: len(p3_cell(x, "GPT", CABRAL_ADV)),
    ),
)
FIG2_PRINTED_N_LABELS = 0
"""Replication-n labels drawn in the published Figure 2 (read off reference/fig2: none)."""


def _fig2(x: ClaimInputs) -> pd.DataFrame:
    """H3's Figure 2 frame (first trial per cell, as published)."""
    return _memo(x, "fig2_first", lambda: cells.fig2_p3(x.trials, "first", x.threshold))


def _fig2_replicated(x: ClaimInputs) -> pd.DataFrame:
    """The Figure 2 cells (model × adversarial case) with more than one trial."""
    f = _fig2(x)
    if f.empty:
        raise DataError("Figure 2 has no cells")
    return f[f["n"] > 1]


def _fig2_n_evidence(x: ClaimInputs) -> dict[str, Value]:
    rep = _fig2_replicated(x)
    per_case = ", ".join(
        f"{case} {n}" for case, n in rep.groupby("case", sort=False).size().items()
    )
    return {"n_cells": len(rep), "per_case": per_case, "printed": FIG2_PRINTED_N_LABELS}


F3 = "Figure 3 caption"
F4 = "Figure 4 caption"
F5 = "Figure 5 caption"
SECTION.add(
    claim(
        "fig2.n_annotated",
        "Figure 2 (published image, n labels)",
        "Each cell is annotated with replication n where greater than 1 (§4.3)",
        FIG2_PRINTED_N_LABELS,
        lambda x: len(_fig2_replicated(x)),
        status="MISMATCH",
        why=(
            "{n_cells} Figure 2 cells have n > 1 ({per_case}); the published figure draws "
            "{printed} n labels. facetlab's Figure 2 labels each of them."
        ),
        evidence=_fig2_n_evidence,
    ),
    claim(
        "fig2.open_count",
        F2,
        "Open-weight Bedrock models (left of dashed line)",
        5,
        _n_access("open"),
        kind="metadata",
    ),
    claim(
        "fig2.biakanja_min",
        F2,
        "(c) CF-Biakanja adversarial: narrow spread 0–15%",
        0,
        lambda x: min(_weights(_probe(x, "P3").query(f"instance_id == {BIAKANJA_ADV!r}"))),
    ),
    claim(
        "fig2.biakanja_max",
        F2,
        "(c) CF-Biakanja adversarial: narrow spread 0–15%",
        15,
        lambda x: max(_weights(_probe(x, "P3").query(f"instance_id == {BIAKANJA_ADV!r}"))),
    ),
    claim(
        "fig3.n22",
        F3,
        "combined across two adversarial wordings (n = 22)",
        22,
        lambda x: len(bimodality(x)),
    ),
    claim(
        "fig3.wordings",
        F3,
        "combined across two adversarial wordings",
        2,
        lambda x: int(bimodality(x)["instance_id"].nunique()),
    ),
    claim(
        "fig3.neut_f1",
        F3,
        "weight assigned to the neutralized factor F1 (foreseeability)",
        "F1",
        lambda x: str(bimodality(x)["factor_of_interest"].iloc[0]).upper(),
    ),
    claim("fig3.wrong", F3, "Wrong-outcome rate: 7/22", 7, lambda x: _wrong_count(bimodality(x))),
    claim(
        "fig3.wrong_pct",
        F3,
        "7/22 = 32%",
        32,
        lambda x: _pct(_wrong_count(bimodality(x)), len(bimodality(x))),
        tol=0.5,
    ),
    claim(
        "fig3.wilson_low",
        F3,
        "(Wilson 95% CI [16%, 53%])",
        16,
        lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).low,
        tol=0.5,
    ),
    claim(
        "fig3.wilson_high",
        F3,
        "(Wilson 95% CI [16%, 53%])",
        53,
        lambda x: 100 * stats.wilson(_wrong_count(bimodality(x)), len(bimodality(x))).high,
        tol=0.5,
    ),
    claim(
        "fig3.low_correct",
        F3,
        "All 15 trials with wF1 < 20 produce the correct outcome",
        15,
        lambda x: len(_low(x)) - _wrong_count(_low(x)),
    ),
    claim(
        "fig3.high_wrong",
        F3,
        "All 7 trials with wF1 ≥ 20 produce the wrong outcome",
        7,
        lambda x: _wrong_count(_high(x)),
    ),
    claim(
        "fig4.sonnet_barker_mean",
        F4,
        "The Sonnet-Barker outlier (w̄ = 4.0",
        4.0,
        lambda x: _mean(_weights(c2(x, "Sonnet", ANCHORS["Barker"]))),
        tol=0.05,
    ),
    claim(
        "fig4.sonnet_barker_f3",
        F4,
        "driven by wF3 = 20 on the perturbation of factor F3",
        20,
        lambda x: _c2_residual(x, "Sonnet", ANCHORS["Barker"], "F3"),
    ),
    claim(
        "fig4.cells",
        F4,
        "Each cell shows the mean residual weight ... (8 models × 3 anchors)",
        24,
        lambda x: int(c2(x).groupby(["canonical_model", "instance_id"]).ngroups),
    ),
    claim(
        "fig4.closed_near_zero",
        F4,
        "Bottom-row models (closed-source frontier) cluster near 0",
        True,
        lambda x: max(_c2_group_means(x, CLOSED)) <= 2,
    ),
    claim(
        "fig5.n8",
        F5,
        "At n = 8 models the visual pattern is descriptive",
        8,
        lambda x: len(fig5_points(x)),
    ),
    claim(
        "fig5.open_lower_right",
        F5,
        "Open-weight Bedrock models (green) cluster in the lower-right",
        5,
        lambda x: int(
            (
                lambda p: (
                    (~p["closed"]) & (p["c2"] >= FIG5_X_LINE) & (p["p3"] <= x.threshold)
                ).sum()
            )(fig5_points(x))
        ),
    ),
    claim(
        "fig5.closed_upper_left",
        F5,
        "Closed-source frontier models (red) cluster in the upper-left",
        3,
        lambda x: int(
            (lambda p: (p["closed"] & (p["c2"] < FIG5_X_LINE) & (p["p3"] > x.threshold)).sum())(
                fig5_points(x)
            )
        ),
        status="MISMATCH",
        **evidence.CLOSED_UPPER_LEFT.kw(),
    ),
    claim(
        "fig5img.none_faithful_both",
        "Figure 5 (published image, note)",
        "No model is faithful on both axes",
        0,
        _quadrant_count(lower_x=True, lower_y=True),
        status="MISMATCH",
        **evidence.NONE_FAITHFUL_BOTH.kw(),
    ),
)

# --------------------------------------------------------------------------- published images
# Numbers printed inside the published figures (reference/fig*.png), read off the images.
_FIG1_IMG: dict[str, tuple[tuple[str, str, str], tuple[float, float, float]]] = {
    # short → ((P1 label Cabral, Barker, Biakanja), (P2 weight Cabral, Barker, Biakanja))
    "Sonnet": (("F5", "F3", "F1"), (0, 0, 0)),
    "Opus": (("F6", "F3", "F1"), (5, 0, 5)),
    "GPT": (("F6", "F3", "F1"), (0, 0, 0)),
    "DeepSeek": (("F6", "F3", "F2"), (0, 0, 0)),
    "Mistral": (("F5", "F3", "F4"), (10, 0, 5)),
    "Maverick": (("F1", "F3", "F3"), (10, 0, 0)),
    "Scout": (("F5", "F3", "F6"), (10, 0, 5)),
    "Qwen": (("F3", "F3", "F1"), (0, 0, 0)),
}
_CASES = ("CF-Cabral", "CF-Barker", "CF-Biakanja")


def _fig1_cell(short: str, case: str, column: str) -> Callable[[ClaimInputs], Value]:
    def recipe(x: ClaimInputs) -> Value:
        value = _cell(fig1(x), "Figure 1 frame", short, "case", case, column)
        return str(value) if column == "p1_label" else float(value)

    return recipe


for _short, (_labels, _p2) in _FIG1_IMG.items():
    for _case, _label, _w in zip(_CASES, _labels, _p2, strict=True):
        SECTION.add(
            claim(
                f"fig1img.p1.{_case}.{_short}",
                "Figure 1 (published image, panel a)",
                f"{_full(_short)} on {_case}: {_label}",
                _label,
                _fig1_cell(_short, _case, "p1_label"),
            ),
            claim(
                f"fig1img.p2.{_case}.{_short}",
                "Figure 1 (published image, panel b)",
                f"{_full(_short)} on {_case}: {_w:g}%",
                float(_w),
                _fig1_cell(_short, _case, "p2_weight"),
            ),
        )

_FIG2_IMG: dict[str, tuple[float, float, float]] = {
    # short → first-trial weight on (CF-Cabral, CF-Barker, CF-Biakanja) adversarial
    "DeepSeek": (10, 0, 0),
    "Mistral": (10, 0, 10),
    "Qwen": (10, 0, 15),
    "Maverick": (10, 0, 10),
    "Scout": (10, 0, 10),
    "Sonnet": (12, 10, 0),
    "Opus": (10, 25, 10),
    "GPT": (44, 30, 0),
}


def _fig2_first(short: str, case: str) -> Callable[[ClaimInputs], float]:
    def recipe(x: ClaimInputs) -> float:
        return float(_cell(_fig2(x), "Figure 2 frame", short, "case", case, "weight"))

    return recipe


for _short, _ws in _FIG2_IMG.items():
    for _case, _w in zip(_CASES, _ws, strict=True):
        SECTION.add(
            claim(
                f"fig2img.{_case}.{_short}",
                "Figure 2 (published image, first trial per cell)",
                f"{_full(_short)} on {_case} adversarial: {_w:g}%",
                float(_w),
                _fig2_first(_short, _case),
            ),
        )
SECTION.add(
    claim(
        "fig2img.uniform_biakanja",
        "Figure 2 (published image, panel c)",
        "uniform (1/6) reference line",
        "1/6",
        lambda x: (
            "1/"
            + str(int(_probe(x, "P3").query(f"instance_id == {BIAKANJA_ADV!r}")["n_factors"].max()))
        ),
    ),
    claim(
        "fig2img.only_wrong",
        "Figure 2 (published image, note)",
        "GPT-5.4 on CF-Cabral ... the only wrong-outcome response in the FACET v3 corpus",
        1,
        lambda x: _wrong_count(_scored(x)[_scored(x)["probe"].isin(["P2", "P3", "C2"])]),
        status="MISMATCH",
        **evidence.ONLY_WRONG.kw(),
    ),
)

_FIG3_BINS: dict[tuple[int, int], int] = {
    (5, 10): 6,
    (10, 15): 8,
    (15, 20): 1,
    (20, 25): 0,
    (25, 30): 1,
    (30, 35): 0,
    (35, 40): 1,
    (40, 45): 2,
    (45, 50): 0,
    (50, 55): 2,
    (55, 60): 1,
}


def _fig3_bin(lo: int, hi: int) -> Callable[[ClaimInputs], int]:
    """Trials in the histogram bin [lo, hi); the last bin (55-60) includes 60."""
    last = max(h for _, h in _FIG3_BINS)
    return lambda x: sum(
        1 for w in _weights(bimodality(x)) if lo <= w < hi or (hi == last and w == hi)
    )


for (_lo, _hi), _count in _FIG3_BINS.items():
    SECTION.add(
        claim(
            f"fig3img.bin.{_lo}-{_hi}",
            "Figure 3 (published image, histogram)",
            f"{_count} trial(s) in the {_lo}–{_hi}% bin",
            _count,
            _fig3_bin(_lo, _hi),
        ),
    )

_FIG4_IMG: dict[str, tuple[tuple[float, str], tuple[float, str], tuple[float, str]]] = {
    # short → (mean, residuals) per anchor: Barker (0002), Cabral (0003), Biakanja (0004)
    "DeepSeek": ((10.0, "20/0/20/0/10"), (5.7, "15/0/20/5/0/0/0"), (0.8, "0/0/0/0/5/0")),
    "Mistral": ((12.0, "10/20/20/0/10"), (4.3, "10/0/15/0/0/0/5"), (0.0, "0/0/0/0/0/0")),
    "Qwen": ((6.0, "10/0/0/10/10"), (4.0, "10/0/10/0/0/5/3"), (1.7, "0/0/0/0/5/5")),
    "Maverick": ((6.0, "0/0/15/0/15"), (2.1, "0/0/15/0/0/0/0"), (1.7, "0/0/0/0/5/5")),
    "Scout": ((9.0, "10/0/10/15/10"), (2.9, "10/0/5/0/0/0/5"), (2.5, "0/5/0/5/5/0")),
    "Sonnet": ((4.0, "0/0/20/0/0"), (1.4, "5/0/5/0/0/0/0"), (0.0, "0/0/0/0/0/0")),
    "Opus": ((2.0, "0/0/0/0/10"), (0.7, "0/0/5/0/0/0/0"), (0.0, "0/0/0/0/0/0")),
    "GPT": ((0.0, "0/0/0/0/0"), (0.0, "0/0/0/0/0/0/0"), (0.0, "0/0/0/0/0/0")),
}


def _fig4_cell(short: str, anchor: str, column: str) -> Callable[[ClaimInputs], Value]:
    def recipe(x: ClaimInputs) -> Value:
        f = _memo(x, "fig4", lambda: cells.fig4_c2(x.trials))
        value = _cell(f, "Figure 4 frame", short, "anchor", anchor, column)
        return str(value) if column == "residuals" else float(value)

    return recipe


for _short, _cells in _FIG4_IMG.items():
    for _anchor_name, (_mean_v, _res) in zip(("Barker", "Cabral", "Biakanja"), _cells, strict=True):
        _anchor = ANCHORS[_anchor_name]
        SECTION.add(
            claim(
                f"fig4img.mean.{_anchor_name}.{_short}",
                "Figure 4 (published image)",
                f"{_full(_short)} on {_anchor_name}: {_mean_v:.1f}",
                _mean_v,
                _fig4_cell(_short, _anchor, "mean_residual"),
                tol=0.05,
            ),
            claim(
                f"fig4img.residuals.{_anchor_name}.{_short}",
                "Figure 4 (published image)",
                f"{_full(_short)} on {_anchor_name}: ({_res})",
                _res,
                _fig4_cell(_short, _anchor, "residuals"),
            ),
        )
