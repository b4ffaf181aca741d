"""The distributions figure: one point per trial when small, each cell's histogram when large."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import FillBetweenPolyCollection, PathCollection

from facetlab.figures import literal_text, save_figure
from facetlab.report import plots

MODELS = ["a$x^{$b", "claude-<b>&", "gpt-4o", "llama"]


def _trials(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` usable trials of four models, P1/P2/P3/C2, ten instances; weights bimodal
    (around 12 and 85) except gpt-4o's (around 40); P1 rows carry no weight."""
    rng = np.random.default_rng(seed)
    model = np.array(MODELS)[rng.integers(0, len(MODELS), n)]
    probe = np.array(["P2", "P3", "C2", "P1"])[rng.integers(0, 4, n)]
    low = rng.random(n) < 0.5
    weight = np.where(low, rng.normal(12, 3, n), rng.normal(85, 3, n))
    weight = np.where(model == "gpt-4o", rng.normal(40, 5, n), weight).clip(0, 100).round()
    return pd.DataFrame(
        {
            "model": model,
            "probe": probe,
            "instance_id": [f"i{k}" for k in rng.integers(0, 10, n)],
            "foi_weight": np.where(probe == "P1", np.nan, weight),
            "failed": False,
            "excluded_reason": None,
        }
    )


def _cells(trials: pd.DataFrame) -> set[tuple[str, str]]:
    drawn = trials[trials["probe"] != "P1"]
    return set(zip(drawn["model"], drawn["probe"], strict=True))


def _tick_labels(fig: object) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_yticklabels()]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_large_frame_draws_every_cell_as_a_histogram_in_a_small_svg(tmp_path: Path) -> None:
    trials = _trials(200_000)
    fig = plots.weight_distributions(trials)
    ax = fig.axes[0]
    # every model (its name drawn literally) and every probe is there
    assert _tick_labels(fig) == [literal_text(m) for m in sorted(pd.unique(trials["model"]))]
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["P2", "P3", "C2"]
    # one shaded histogram per (model, probe) cell, and no point per trial
    bands = [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]
    assert len(bands) == len(_cells(trials)) == 12
    assert not [c for c in ax.collections if isinstance(c, PathCollection)]
    (svg,) = save_figure(fig, "distributions", tmp_path, ["svg"])
    assert svg.stat().st_size < 400_000  # the point version wrote ~26 MB for this frame


def test_a_bimodal_cell_shows_both_modes_in_its_histogram() -> None:
    n = 3_000
    trials = pd.DataFrame(
        {
            "model": "m",
            "probe": "P2",
            "instance_id": ["i1", "i2"] * (n // 2),
            "foi_weight": [10.0, 90.0, 11.0] * (n // 3),
            "failed": False,
            "excluded_reason": None,
        }
    )
    fig = plots.weight_distributions(trials, max_points=n - 1)  # one below: histograms
    (band,) = [c for c in fig.axes[0].collections if isinstance(c, FillBetweenPolyCollection)]
    outline = band.get_paths()[0]  # centred on y = 0 (the only cell)
    full = 0.46 * 0.8  # a bin at the cell's peak spans its share of the row

    def covers(weight: float, y: float) -> bool:
        return bool(outline.contains_point((weight, y)))

    # a third of the trials at each of 10, 11 and 90: three bars at the peak, nothing between
    for weight in (10, 11, 90):
        assert covers(weight, 0.99 * full) and covers(weight, -0.99 * full)
        assert not covers(weight, 1.01 * full)
    assert not any(covers(w, 0.01) for w in range(12, 89))
    assert not covers(9, 0.01)


def test_a_small_frame_keeps_one_point_per_trial() -> None:
    trials = _trials(600)
    fig = plots.weight_distributions(trials)
    ax = fig.axes[0]
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    drawn = trials[trials["probe"] != "P1"]
    drawn = drawn[drawn.groupby(["model", "probe", "instance_id"])["probe"].transform("size") > 1]
    assert sum(len(c.get_offsets()) for c in points) == len(drawn)  # one per trial (n > 1)
    assert not [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]
    assert set(_tick_labels(fig)) == {literal_text(m) for m in MODELS}
    assert ax.get_title() == "Distributions where a cell has n > 1"
