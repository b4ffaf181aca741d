"""Figures hold any model string (issue 40, item 7): a 70-character model string (what a
llama-cpp-python server once needed: ``openai/...?structured_format=json_object``) once
squashed the C2 heatmap to a strip ("axes sizes collapsed to zero") and let the P1 vs P2
legend take two thirds of the width. Names are wrapped; checked on the axes' extents in
the saved figure, next to a short name, with matplotlib's warnings as errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from facetlab.figures import save_figure
from facetlab.report import plots

LONG = "openai/qwen2.5-coder-0.5b-instruct-q4_k_m?structured_format=json_object&x=1"[:70]
MODELS = [LONG, "simulated/wadd"]
assert len(LONG) == 70


def _p1_p2() -> pd.DataFrame:
    rows = [
        (m, f"case-{i}-cf", s, w) for m in MODELS for i, s, w in ((1, 0.9, 2.0), (2, 0.1, 40.0))
    ]
    return pd.DataFrame(
        rows, columns=["model", "instance_id", "p1_names_neutralized", "p2_mean_weight"]
    )


def _p3() -> pd.DataFrame:
    return pd.DataFrame(
        {"model": MODELS, "instance_id": ["case-1-cf-adv"] * 2, "mean_weight": [35.0, 0.0],
         "n": [5, 5], "n_above_threshold": [4, 0], "wilson_low": [0.38, 0.0],
         "wilson_high": [0.96, 0.43]}
    )  # fmt: skip


def _c2() -> pd.DataFrame:
    # one base and three factors: the narrowest heatmap, the one the long name squashed
    rows = [(m, "case-1", f"F{k}", 10.0 * k, 3) for m in MODELS for k in range(1, 4)]
    return pd.DataFrame(rows, columns=["model", "base_instance_id", "factor", "mean_residual", "n"])


def _outcomes() -> pd.DataFrame:
    return pd.DataFrame(
        {"model": MODELS * 2, "probe": ["P2", "P2", "P3", "P3"], "n": [6] * 4,
         "accuracy": [0.5, 1.0, 0.0, 1.0]}
    )  # fmt: skip


def _trials() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(m, p, "case-1-cf", float(w)) for m in MODELS for p in ("P2", "P3", "C2")
            for w in rng.uniform(0, 60, 8)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["canonical_model", "probe", "instance_id", "foi_weight"])
    return frame.assign(excluded_reason=None, failed=False)


FIGURES: dict[str, Callable[[], Figure]] = {
    "outcomes": lambda: plots.outcome_accuracy(_outcomes()),
    "p1_p2": lambda: plots.p1_vs_p2(_p1_p2()),
    "p3": lambda: plots.p3_intervals(_p3()),
    "c2": lambda: plots.c2_heatmap(_c2()),
    "asymmetry": lambda: plots.asymmetry(_p3(), _c2()),
    "distributions": lambda: plots.weight_distributions(_trials()),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_a_70_character_model_string_keeps_every_plot_readable(name: str, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter(
            "error", UserWarning
        )  # "constrained_layout not applied: axes sizes collapsed"
        fig = FIGURES[name]()
        save_figure(fig, name, tmp_path, formats=("png",))
    assert (tmp_path / f"{name}.png").stat().st_size > 0
    main = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    for ax in main:  # as laid out in the saved figure, in figure fractions
        box = ax.get_position()
        assert box.width >= 0.3 and box.height >= 0.15, (name, box)
    widest = max(ax.get_position().width for ax in main)
    if name in ("p1_p2", "c2", "asymmetry"):  # one plot: it keeps most of the width
        assert widest >= 0.45, (name, widest)
    for legend in [*fig.legends, *(ax.get_legend() for ax in main)]:
        if legend is not None:
            width = legend.get_window_extent().width / fig.bbox.width
            assert width <= 0.3, (name, width)  # a legend never eats the plot
    for ax in main:
        for label in ax.get_yticklabels():
            lines = label.get_text().split("\n")
            # a name's line, or two names' ("model · instance (n=5)"), never the whole string
            assert max(len(line) for line in lines) <= 2 * plots.LABEL_WIDTH + 12, (name, lines)
