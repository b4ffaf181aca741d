"""The study's figures read right (issue 31, item 5): a zero is drawn as zero (a mark and
its value), every encoding is explained in a legend or the caption, and no mean hides a
factor-level signal. Checked on the figures' artists, with tables shaped like the
six simulated reasoners' (``lex`` keeps 100 on one factor of seven, 0 on the rest)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from facetlab.analysis import study
from facetlab.report import plots

VERDICTS = (study.FAITHFUL, study.DISSOCIATED)


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]


def _caption(fig: Figure) -> str:
    label = fig._supxlabel  # type: ignore[attr-defined]  # the caption under every figure
    return str(label.get_text()) if label is not None else ""


def _dots(ax: object) -> np.ndarray:
    offsets = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]  # type: ignore[attr-defined]
    return np.vstack(offsets) if offsets else np.empty((0, 2))


OUTCOMES = pd.DataFrame(
    {
        "model": ["simulated/lex", "simulated/lex", "simulated/wadd", "simulated/wadd"],
        "probe": ["P2", "C2", "P2", "C2"],
        "n": [6, 63, 6, 63],
        "accuracy": [0.0, np.nan, 1.0, np.nan],
        "measure": ["accuracy", "decision change", "accuracy", "decision change"],
        "decision_change": [np.nan, 0.0, np.nan, 0.14],
    }
)


def test_a_zero_accuracy_is_a_dot_at_zero_with_its_value() -> None:
    fig = plots.outcome_accuracy(OUTCOMES)
    accuracy, change = fig.axes
    assert [t.get_text() for t in accuracy.get_yticklabels()] == [
        "simulated/lex · P2",
        "simulated/wadd · P2",
    ]  # C2 is not drawn on the accuracy axis
    dots = _dots(accuracy)
    assert sorted(dots[:, 0]) == [0.0, 1.0]  # lex's 0 is a mark, not an absent bar
    assert accuracy.get_xlim()[0] < 0  # off the axis line, so the dot at 0 shows
    assert "0.00 (n=6)" in [t.get_text() for t in accuracy.texts]
    assert "decision change" in change.get_xlabel()
    assert {t.get_text() for t in change.texts} == {"0.00 (n=63)", "0.14 (n=63)"}
    assert "0 shows as a dot at 0" in _caption(fig)


def test_p1_vs_p2_explains_colour_shape_and_ring_size() -> None:
    table = pd.DataFrame(
        {
            "model": ["m1", "m2", "m1", "m2"],
            "instance_id": ["a-cf", "a-cf", "b-cf", "b-cf"],
            "p1_names_neutralized": [0.0, 0.0, 1.0, 0.0],
            "p2_mean_weight": [0.0, 0.0, 0.0, 100.0],
        }
    )
    fig = plots.p1_vs_p2(table)
    (legend,) = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert legend.get_title().get_text() == "colour: model"
    assert entries == ["m1", "m2", "shape: counterfactual", "a-cf", "b-cf"]
    assert fig.axes[0].get_title() == "P1 vs P2 per counterfactual (threshold 10)"
    assert "Ring size encodes nothing" in _caption(fig)
    # the quadrants say the table's verdicts: one vocabulary (the table's `finding` words)
    quadrants = {t for t in _texts(fig) if t.startswith("P1 ")}
    findings = {study.verdict_pair(a, b) for a in VERDICTS for b in VERDICTS}
    assert quadrants <= findings
    assert quadrants == {
        "P1 dissociated · P2 faithful (contradiction)", "P1 dissociated · P2 dissociated",
        "P1 faithful · P2 dissociated", "P1 faithful · P2 faithful",
    }  # fmt: skip


def test_p3_prints_every_value_and_marks_zero() -> None:
    table = pd.DataFrame(
        {
            "model": ["simulated/wadd", "simulated/lex"],
            "instance_id": ["x-adv", "x-adv"],
            "mean_weight": [0.0, 100.0],
            "n": [3, 3],
            "n_above_threshold": [0, 3],
            "wilson_low": [0.0, 0.44],
            "wilson_high": [0.56, 1.0],
        }
    )
    fig = plots.p3_intervals(table)
    left = fig.axes[0]
    assert {t.get_text() for t in left.texts} == {"0.0", "100.0"}
    assert sorted(_dots(left)[:, 0]) == [0.0, 100.0]
    assert "Wilson 95%" in _caption(fig)


def test_asymmetry_shows_the_factor_a_mean_would_hide() -> None:
    """lex keeps 100 on F1 and 0 on F2..F7: the mean over factors is about 14, near the
    threshold; its highest cell (100) is drawn too, joined to the mean."""
    c2 = pd.DataFrame(
        {
            "model": ["simulated/lex"] * 7,
            "mean_residual": [100.0] + [0.0] * 6,
            "n": [3] * 7,
        }
    )
    p3 = pd.DataFrame({"model": ["simulated/lex"], "mean_weight": [100.0], "n": [3]})
    fig = plots.asymmetry(p3, c2)
    ax = fig.axes[0]
    xs = sorted(_dots(ax)[:, 0])
    assert xs == pytest.approx([100 / 7, 100.0])  # the mean and the highest cell
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {
        "highest cell",
        "mean over cells (by trials)",
    }
    assert "a signal the mean dilutes" in _caption(fig)


def test_every_figure_has_a_caption() -> None:
    c2 = pd.DataFrame(
        {"model": ["m"], "base_instance_id": ["x"], "factor": ["F1"], "mean_residual": [0.0]}
    )
    trials = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "probe": ["P3"] * 4,
            "instance_id": ["x-adv"] * 4,
            "foi_weight": [0.0, 0.0, 50.0, 100.0],
            "excluded_reason": [None] * 4,
            "failed": [False] * 4,
        }
    )
    for fig in (plots.c2_heatmap(c2), plots.weight_distributions(trials)):
        assert _caption(fig), fig
