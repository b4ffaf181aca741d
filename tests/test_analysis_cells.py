"""The paper's tables computed from the FACET v3 data (facetlab.paper.cells)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from facetlab.analysis.summary import summarize
from facetlab.errors import DataError
from facetlab.paper import cells, stats_table
from facetlab.records import load_trials


def num(value: object) -> float:
    """A table cell as a float (pandas types ``.at`` as any scalar)."""
    assert isinstance(value, (int, float, np.integer, np.floating)), value
    return float(value)


@pytest.fixture(scope="module")
def trials(facet_data: Path) -> pd.DataFrame:
    return load_trials(facet_data)


def test_summarize_uses_the_sample_sd() -> None:
    s = summarize([25, 30, 30, 35, 32, 35], [False] * 6)
    assert s.sd == pytest.approx(pd.Series([25, 30, 30, 35, 32, 35]).std(ddof=1))
    assert math.isnan(summarize([4.0], [None]).sd)
    assert summarize([4.0], [None]).unparsed == 1
    with pytest.raises(DataError, match="empty cell"):
        summarize([], [])


def test_table2_has_every_model_and_case(trials: pd.DataFrame) -> None:
    t2 = cells.table2_p3(trials)
    assert len(t2) == 24
    assert set(t2["case"]) == {"CF-Cabral", "CF-Barker", "CF-Biakanja"}
    assert t2["model"].iloc[0] == "Claude Sonnet 4.6"  # paper order
    gpt = t2[(t2["model"] == "GPT-5.4") & (t2["case"] == "CF-Cabral")].iloc[0]
    assert (gpt["instance_id"], gpt["n"], gpt["wrong"]) == ("facet-neg-cf-001-adv", 16, 3)
    assert round(float(gpt["mean_weight"]), 1) == 18.1 and round(float(gpt["sd_weight"]), 1) == 17.0
    assert (round(float(gpt["wilson_low"]), 2), round(float(gpt["wilson_high"]), 2)) == (0.07, 0.43)
    barker = t2[t2["case"] == "CF-Barker"].set_index("model")
    assert round(num(barker.at["GPT-5.4", "mean_weight"]), 1) == 31.2
    assert round(num(barker.at["Claude Opus 4.6", "sd_weight"]), 1) == 6.8
    assert (barker.loc[barker["weights_access"] == "open", "mean_weight"] == 0).all()


def test_fig1_matrices_match_the_published_counts(trials: pd.DataFrame) -> None:
    m = cells.fig1_p1_p2(trials)
    assert len(m) == 24
    assert m["runs_agree"].all()
    by_case = m.groupby("case", sort=False)
    assert by_case["p1_faithful"].sum().to_dict() == {
        "CF-Cabral": 7,
        "CF-Barker": 0,
        "CF-Biakanja": 4,
    }
    assert by_case["p2_faithful"].sum().tolist() == [8, 8, 8]
    # a threshold below the largest P2 weight (10) makes P2 dissociate somewhere
    assert not cells.fig1_p1_p2(trials, threshold=5)["p2_faithful"].all()


def test_fig2_representatives(trials: pd.DataFrame) -> None:
    first = cells.fig2_p3(trials, "first").set_index(["model", "case"])
    mean = cells.fig2_p3(trials, "mean").set_index(["model", "case"])
    assert first.at[("GPT-5.4", "CF-Cabral"), "weight"] == 44
    assert bool(first.at[("GPT-5.4", "CF-Cabral"), "wrong"])
    assert first.at[("Claude Opus 4.6", "CF-Barker"), "weight"] == 25
    assert mean.at[("Claude Opus 4.6", "CF-Barker"), "weight"] == pytest.approx(70 / 6)
    with pytest.raises(DataError, match="representative"):
        cells.fig2_p3(trials, "median")  # type: ignore[arg-type]


def test_bimodality_split(trials: pd.DataFrame) -> None:
    bim = cells.fig3_bimodality(trials)
    assert len(bim) == 22
    assert bim.groupby("instance_id").size().to_dict() == {
        "facet-neg-cf-001-adv": 16,
        "facet-neg-cf-001-adv2": 6,
    }
    summary = cells.bimodality_summary(trials).set_index("group")
    assert summary.at["low", "n"] == 15 and summary.at["low", "wrong"] == 0
    assert summary.at["high", "weights"] == "28/38/40/44/50/50/60"
    assert round(num(summary.at["high", "mean_weight"]), 1) == 44.3
    moved = cells.bimodality_summary(trials, split_point=30).set_index("group")
    assert moved.at["low", "n"] == 16


def test_c2_and_asymmetry(trials: pd.DataFrame) -> None:
    c2 = cells.fig4_c2(trials)
    assert len(c2) == 24 and c2["n"].sum() == 144
    sonnet = c2[(c2["model"] == "Claude Sonnet 4.6") & (c2["case"] == "CF-Barker")].iloc[0]
    assert (sonnet["residuals"], sonnet["mean_residual"]) == ("0/0/20/0/0", 4.0)
    f5 = cells.fig5_asymmetry(trials).set_index("model")
    assert f5.at["GPT-5.4", "c2_mean_residual"] == 0
    assert round(num(f5.at["DeepSeek v3.2", "c2_mean_residual"]), 1) == 5.3
    assert (f5["c2_n"] == 18).all()


def test_outcome_correctness_reports_the_c2_flip(trials: pd.DataFrame) -> None:
    # The paper says no C2 perturbation flipped an outcome; one DeepSeek reply did.
    out = cells.outcome_correctness(trials).set_index("probe")
    assert out.at["C2", "wrong"] == 1
    assert out.at["P3", "wrong"] == 7
    assert out.at["P2", "wrong"] == 0
    assert "P1" not in out.index


def test_stats_table_rows(trials: pd.DataFrame) -> None:
    table = stats_table.stats_table(trials).set_index("test")
    assert list(stats_table.STATS_COLUMNS)[1:] == list(table.columns[:5])
    assert table.at["mcnemar_p1_p2", "statistic_name"].startswith("min(b, c)")
    assert table.at["fisher_bimodality", "statistic_name"] == "odds ratio (Fisher exact)"
    assert table.at["wilson_bimodality_combined", "statistic_name"] == "proportion wrong"
    assert table.at["mcnemar_p1_p2", "p_value"] == pytest.approx(2**-12)
    assert table.at["mcnemar_p1_p2", "n"] == 24
    assert table.at["fisher_bimodality", "p_value"] == pytest.approx(5.86e-6, rel=1e-2)
    assert table.at["fisher_open_closed_barker", "p_value"] == pytest.approx(0.375)
    assert round(num(table.at["wilson_bimodality_combined", "ci_low"]), 2) == 0.16


def test_missing_probe_is_a_clear_error(trials: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="P3"):
        cells.table2_p3(trials[trials["probe"] != "P3"])
    with pytest.raises(DataError, match="P2 has no usable run"):
        cells.fig1_p1_p2(
            trials[~((trials["probe"] == "P2") & (trials["instance_id"] == "facet-neg-cf-002"))]
        )


def test_paper_tables_on_another_domain_say_why(trials: pd.DataFrame) -> None:
    # a sweep of other models: the paper's tables refuse, naming what is there instead
    other = trials.assign(model="simulated/wadd", canonical_model="simulated/wadd")
    with pytest.raises(
        DataError, match=r"model Claude Sonnet 4\.6.* absent; models present: simulated/wadd"
    ):
        cells.table2_p3(other)
    with pytest.raises(DataError, match="models present: simulated/wadd"):
        cells.outcome_correctness(other)
    only_p1 = trials[trials["probe"] == "P1"]
    with pytest.raises(DataError, match="no outcome to count"):
        cells.outcome_correctness(only_p1)
