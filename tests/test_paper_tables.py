"""The committed tables under paper/tables/ are what the code computes from the data today.

CI fails here when regenerating a table would change a committed CSV (run
``facetlab reproduce`` and commit the result when the change is intended).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from facetlab.analysis.tables import to_csv
from facetlab.paper import cells, stats_table
from facetlab.records import load_trials

TABLES = Path(__file__).resolve().parents[1] / "paper" / "tables"

REQUIRED_COLUMNS = {
    "table2_p3": [
        "model",
        "case",
        "instance_id",
        "neutralized_factor",
        "n",
        "mean_weight",
        "sd_weight",
        "wrong",
        "wilson_low",
        "wilson_high",
    ],
    "fig1_p1_p2": ["model", "case", "p1_label", "p1_faithful", "p2_weight", "p2_faithful"],
    "fig3_bimodality": ["instance_id", "trial", "weight", "answer", "wrong"],
    "fig4_c2": ["model", "anchor", "n", "mean_residual"],
    "fig5_asymmetry": ["model", "c2_mean_residual", "p3_barker_mean"],
    "stats": ["test", "statistic", "statistic_name", "p_value", "n", "detail"],
}

DISPLAY_NAMES = {
    "Claude Sonnet 4.6",
    "Claude Opus 4.6",
    "GPT-5.4",
    "DeepSeek v3.2",
    "Mistral Large 3",
    "Llama 4 Maverick",
    "Llama 4 Scout",
    "Qwen3 Next 80B-A3B",
}


def paper_tables(trials: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Every table the notebooks write to ``paper/tables/`` at the paper's settings, by
    file stem: the notebooks' own calls."""
    return {
        "table1_overview": cells.table1_overview(trials),
        "data_counts": cells.data_counts(trials),
        "outcome_correctness": cells.outcome_correctness(trials),
        "stats": stats_table.stats_table(trials, threshold=10.0, split_point=20.0),
        "fig1_p1_p2": cells.fig1_p1_p2(trials, threshold=10.0),
        "table2_p3": cells.table2_p3(trials, threshold=10.0),
        "prompt_caveats": cells.prompt_caveats(trials, None),
        "fig2_p3": cells.fig2_p3(trials, representative="first", threshold=10.0),
        "fig3_bimodality": cells.fig3_bimodality(trials, split_point=20.0),
        "fig3_modes": cells.bimodality_summary(trials, split_point=20.0),
        "fig4_c2": cells.fig4_c2(trials),
        "fig5_asymmetry": cells.fig5_asymmetry(trials),
    }


@pytest.fixture(scope="module")
def regenerated(facet_data: Path, reproduced: Path | None) -> dict[str, pd.DataFrame]:
    if reproduced is not None:
        pytest.skip("scripts/test.sh regenerated the paper once and diffed the committed CSVs")
    return paper_tables(load_trials(facet_data))


def test_regenerated_tables_equal_the_committed_csvs(regenerated: dict[str, pd.DataFrame]) -> None:
    stale = []
    for name, frame in regenerated.items():
        path = TABLES / f"{name}.csv"
        assert path.is_file(), f"{path} is missing: run `facetlab reproduce`"
        if path.read_text(encoding="utf-8") != to_csv(frame):
            stale.append(name)
    assert not stale, f"committed tables differ from the code's output: {stale}"


@pytest.mark.parametrize(("name", "columns"), sorted(REQUIRED_COLUMNS.items()))
def test_committed_csvs_have_the_contract_columns(name: str, columns: list[str]) -> None:
    frame = pd.read_csv(TABLES / f"{name}.csv")
    assert list(frame.columns[: len(columns)]) == columns
    if "model" in frame.columns:
        assert set(frame["model"]) <= DISPLAY_NAMES


def test_committed_table2_covers_all_models_and_cases() -> None:
    t2 = pd.read_csv(TABLES / "table2_p3.csv")
    assert len(t2) == 24
    assert set(t2["model"]) == DISPLAY_NAMES
    assert set(t2["case"]) == {"CF-Cabral", "CF-Barker", "CF-Biakanja"}
    assert not t2.duplicated(["model", "case"]).any()


def test_each_table_has_markdown_and_booktabs() -> None:
    names = [p.stem for p in TABLES.glob("*.csv") if p.stem != "probe_validity"]
    assert len(names) >= 11
    for name in names:
        assert (TABLES / f"{name}.md").read_text(encoding="utf-8").count("\n") >= 2
        tex = (TABLES / f"{name}.tex").read_text(encoding="utf-8")
        assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
