"""The paper's figures (facetlab.paper.figures): built from the analysis frames, saved stably."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from facetlab.errors import ConfigError, DataError
from facetlab.figures import save_figure
from facetlab.paper import cells, figures
from facetlab.records import load_trials


@pytest.fixture(scope="module")
def trials(facet_data: Path) -> pd.DataFrame:
    return load_trials(facet_data)


def _texts(fig: Figure) -> list[str]:
    found = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        found += [t.get_text() for t in ax.texts]
        found += [t.get_text() for t in ax.get_yticklabels()]
        found += [t.get_text() for t in ax.get_xticklabels()]
    return found


def test_fig1_shows_labels_weights_and_counts(trials: pd.DataFrame) -> None:
    fig = figures.fig1_probe_comparison(cells.fig1_p1_p2(trials))
    texts = _texts(fig)
    assert len(fig.axes) == 2
    assert "faithful: 0/8" in texts and "faithful: 7/8" in texts and "faithful: 4/8" in texts
    assert texts.count("faithful: 8/8") == 3
    assert "Claude Sonnet 4.6" in texts and "Qwen3 Next" in texts
    # a stricter threshold changes what the figure says
    strict = _texts(figures.fig1_probe_comparison(cells.fig1_p1_p2(trials, threshold=5), 5))
    assert "faithful: 8/8" in strict and "faithful: 5/8" in strict


@pytest.mark.parametrize("representative", ["first", "last", "mean"])
def test_fig2_has_three_panels_and_n(trials: pd.DataFrame, representative: str) -> None:
    bars = cells.fig2_p3(trials, representative)  # type: ignore[arg-type]
    fig = figures.fig2_adversarial(
        bars, cells.case_factor_counts(trials), representative=representative
    )
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 3
    assert [ax.get_xticklabels()[0].get_text() for ax in panels] == ["DeepSeek\nv3.2"] * 3
    texts = _texts(fig)
    assert "n=16" in texts
    # every replicated cell (0% bars included) carries its n, in every panel; n = 1 none
    for ax, case in zip(panels, ["CF-Cabral", "CF-Barker", "CF-Biakanja"], strict=True):
        shown = sorted(t.get_text() for t in ax.texts if t.get_text().startswith("n="))
        expected_n = sorted(f"n={n}" for n in bars.loc[bars["case"] == case, "n"] if n > 1)
        assert shown == expected_n, case
        # the uniform 1/N line is labelled in every panel
        assert any(t.get_text().startswith("uniform") for t in ax.texts), case
    # a legend explains the bar colours
    legend = [t.get_text() for ax in panels if ax.get_legend() for t in ax.get_legend().texts]
    assert any("faithful" in t for t in legend) and any("wrong outcome" in t for t in legend)
    heights = sorted(
        round(p.get_height(), 3) for p in panels[0].patches if isinstance(p, Rectangle)
    )
    expected = "44%\n✗" if representative == "first" else None
    if expected:
        assert expected in texts
    if representative == "mean":
        assert round(18.125, 3) in heights


@pytest.mark.slow
def test_fig2_rejects_unknown_or_inconsistent_representative(trials: pd.DataFrame) -> None:
    with pytest.raises(ConfigError, match="representative"):
        figures.fig2_adversarial(cells.fig2_p3(trials), representative="median")
    with pytest.raises(ConfigError, match="computed for representative"):
        figures.fig2_adversarial(cells.fig2_p3(trials, "mean"), representative="first")
    # without the argument the frame says what the bars are
    fig = figures.fig2_adversarial(cells.fig2_p3(trials, "last"))
    assert "(last trial)" in fig.axes[0].get_ylabel()


def test_fig3_counts_and_caption(trials: pd.DataFrame) -> None:
    fig = figures.fig3_bimodality(cells.fig3_bimodality(trials))
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches if isinstance(p, Rectangle)]
    assert sum(heights) == 22
    texts = _texts(fig)
    assert any("7/22 = 32%" in t and "[16%, 53%]" in t for t in texts)
    assert any("n=15" in t for t in texts) and any("n=7" in t for t in texts)


@pytest.mark.slow
def test_fig4_and_fig5(trials: pd.DataFrame) -> None:
    fig4 = figures.fig4_c2_faithfulness(cells.fig4_c2(trials))
    texts = _texts(fig4)
    assert "Barker (5 factors)" in texts and "(0/0/20/0/0)" in texts
    assert fig4.axes[0].get_yticklabels()[0].get_text() == "DeepSeek v3.2"
    fig5 = figures.fig5_asymmetry(cells.fig5_asymmetry(trials))
    ax = fig5.axes[0]
    assert sum(np.asarray(c.get_offsets()).shape[0] for c in ax.collections) == 8
    assert "GPT-5.4  (C2 n=18, P3 n=6)" in _texts(fig5)
    # a point that rests on one P3 trial says so
    assert "Maverick  (C2 n=18, P3 n=1)" in _texts(fig5)


@pytest.mark.slow
def test_fig1_legend_sits_below_both_panels_labels(trials: pd.DataFrame) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = figures.fig1_probe_comparison(cells.fig1_p1_p2(trials))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    labels = [t for ax in fig.axes for t in ax.texts if t.get_text().startswith("faithful:")]
    assert len(labels) == 6
    for text in labels:  # every "faithful: k/n" line of both panels is above the legend
        assert text.get_window_extent(renderer).y0 > box.y1


def test_empty_input_is_a_clear_error() -> None:
    with pytest.raises(DataError, match="lacks column"):
        figures.fig5_asymmetry(pd.DataFrame({"model": []}))


@pytest.mark.slow
def test_save_figure_formats_and_stable_svg(trials: pd.DataFrame, tmp_path: Path) -> None:
    fig = figures.fig5_asymmetry(cells.fig5_asymmetry(trials))
    paths = save_figure(fig, "f5", tmp_path, formats=("png", "svg"), dpi=60)
    assert [p.name for p in paths] == ["f5.png", "f5.svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    first = paths[1].read_bytes()
    # a freshly built figure saves to the same bytes: no dates, ids or hashes vary
    again = figures.fig5_asymmetry(cells.fig5_asymmetry(trials))
    save_figure(again, "f5", tmp_path, formats=("png", "svg"), dpi=60)
    assert paths[1].read_bytes() == first
    with pytest.raises(ConfigError, match="unsupported"):
        save_figure(fig, "f5", tmp_path, formats=("bmp",))
