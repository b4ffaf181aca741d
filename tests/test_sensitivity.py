"""Sensitivity of the headline conclusions to the threshold and the split point."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from git_helpers import committed_text
from matplotlib.figure import Figure

from facetlab.errors import ConfigError
from facetlab.paper import sensitivity as sens
from facetlab.records import load_trials

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


@pytest.fixture(scope="module")
def trials(facet_data: Path) -> pd.DataFrame:
    return load_trials(facet_data)


@pytest.fixture(scope="module")
def table(trials: pd.DataFrame) -> pd.DataFrame:
    return sens.sensitivity_table(trials)


def test_table_shape_and_columns(table: pd.DataFrame) -> None:
    assert tuple(table.columns) == sens.SENSITIVITY_COLUMNS
    counts = table.groupby("conclusion").size().to_dict()
    assert counts == {"p1_p2_contradiction": 16, "open_closed_asymmetry": 16, "bimodality": 16}
    assert table["is_paper_setting"].sum() == 3


def test_all_headlines_hold_at_the_papers_settings(table: pd.DataFrame) -> None:
    paper = table[table["is_paper_setting"]]
    assert paper["holds"].all()
    p1p2 = paper[paper["conclusion"] == "p1_p2_contradiction"].iloc[0]
    assert p1p2["p_value"] == pytest.approx(2 * 0.5**13)
    bim = paper[paper["conclusion"] == "bimodality"].iloc[0]
    assert bim["p_value"] == pytest.approx(5.86e-6, rel=1e-2)


def test_threshold_below_ten_breaks_one_directionality(trials: pd.DataFrame) -> None:
    row = sens.p1_p2_at(trials, 5.0)
    # three P2 cells (weights 10) turn unfaithful at 5: two of them become P2-only dissociations
    assert "P2 faithful 21/24" in str(row["detail"])
    assert "not entirely one-directional" in str(row["detail"])


def test_the_paper_setting_cell_shows_the_papers_own_fisher_test(trials: pd.DataFrame) -> None:
    # §4.7: closed/open x CF-Barker mean >= 20, p = 0.375 (stats.csv fisher_open_closed_barker)
    paper = sens.asymmetry_at(trials, 10.0)
    assert paper["is_paper_setting"] is True
    assert paper["p_value"] == pytest.approx(0.375)
    assert "Fisher on mean > 10: p = 0.11" in str(paper["detail"])
    assert "the paper's §4.7 test" in str(paper["detail"])
    # elsewhere the cell tests the swept cut itself
    assert sens.asymmetry_at(trials, 9.0)["p_value"] == pytest.approx(0.107, abs=1e-3)


def test_asymmetry_fails_at_threshold_20(trials: pd.DataFrame) -> None:
    assert sens.asymmetry_at(trials, 10.0)["holds"] is True
    at20 = sens.asymmetry_at(trials, 20.0)
    assert at20["holds"] is False  # no C2 residual exceeds 20 in either group
    assert "closed 0%, open 0%" in str(at20["detail"])


def test_bimodality_separation_depends_on_split(trials: pd.DataFrame) -> None:
    assert "perfect separation" in str(sens.bimodality_at(trials, 20.0)["detail"])
    late = sens.bimodality_at(trials, 30.0)
    assert "imperfect separation" in str(late["detail"])  # the 28 (wrong) falls into the low mode


def test_summary(table: pd.DataFrame) -> None:
    s = sens.summary(table).set_index("conclusion")
    assert s.loc["open_closed_asymmetry", "fails_for"] == "20"
    assert s.loc["bimodality", "fails_for"] == "none"
    assert bool(s.loc["p1_p2_contradiction", "at_paper_setting"])


def test_bad_ranges_are_refused(trials: pd.DataFrame) -> None:
    with pytest.raises(ConfigError, match="at least one value"):
        sens.sensitivity_table(trials, thresholds=[])
    with pytest.raises(ConfigError, match=r"\[0, 100\]"):
        sens.sensitivity_table(trials, split_points=[150])


def test_sweep_tag_keeps_non_default_sweeps_away_from_committed_outputs() -> None:
    assert sens.sweep_tag(sens.DEFAULT_THRESHOLDS, sens.DEFAULT_SPLITS) is None
    assert sens.sweep_tag(range(5, 21), range(15, 31), alpha=0.01) == "sweep-t5-20-s15-30-a0.01"
    assert sens.sweep_tag(range(5, 16), range(15, 31)) == "sweep-t5-15-s15-30-a0.05"
    with pytest.raises(ConfigError, match="thresholds"):
        sens.sweep_tag([], range(15, 31))


def test_figure(table: pd.DataFrame) -> None:
    fig = sens.sensitivity_figure(table)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    # colour follows the test at alpha: "holds" with p >= 0.05 is amber, never green
    faces = {
        (round(p.get_x()), round(p.get_y())): p.get_facecolor()[:3] for p in fig.axes[0].patches
    }
    asym = table[(table["conclusion"] == "open_closed_asymmetry") & table["holds"]]
    assert (asym["p_value"] >= 0.05).all() and len(asym) > 0
    amber = tuple(round(c, 3) for c in (0xF1 / 255, 0xC4 / 255, 0x0F / 255))
    row = list(dict.fromkeys(table.loc[table["parameter"] == "threshold", "conclusion"]))
    y = row.index("open_closed_asymmetry")
    assert tuple(round(c, 3) for c in faces[(0, y)]) == amber
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "<.001" in texts and all(len(t) <= 5 for t in texts)  # readable, not 1e-04 sideways


def test_sweep_reuses_one_matrix_without_changing_results(trials: pd.DataFrame) -> None:
    from facetlab.paper import cells

    matrix = cells.fig1_p1_p2(trials)
    for t in (5.0, 15.0):
        assert sens.p1_p2_at(trials, t) == sens.p1_p2_at(trials, t, matrix=matrix)


# --------------------------------------------------------------------------- notebooks


def _code_outputs(path: Path) -> list[object]:
    nb = json.loads(committed_text(path))
    return [
        (c.get("outputs"), c.get("execution_count"))
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]


@pytest.mark.parametrize("name", ["claims_audit.ipynb", "sensitivity.ipynb"])
def test_committed_notebooks_are_built_and_clean(name: str, tmp_path: Path) -> None:
    path = NOTEBOOKS / name
    assert all(out == ([], None) for out in _code_outputs(path)), f"{name} has outputs"
    nb = json.loads(committed_text(path))
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1


@pytest.mark.slow
def test_sensitivity_notebook_runs_alone(facet_data: Path, tmp_path: Path) -> None:
    papermill = pytest.importorskip("papermill")
    papermill.execute_notebook(
        str(NOTEBOOKS / "sensitivity.ipynb"),
        str(tmp_path / "out.ipynb"),
        parameters={
            "data_dir": str(facet_data),
            "figures_dir": str(tmp_path / "figures"),
            "tables_dir": str(tmp_path / "tables"),
            "threshold": 12,
        },
        progress_bar=False,
        cwd=str(tmp_path),
    )
    assert (tmp_path / "figures" / "sensitivity.png").stat().st_size > 0
    assert (tmp_path / "figures" / "sensitivity.svg").is_file()
    written = pd.read_csv(tmp_path / "tables" / "sensitivity.csv")
    assert len(written) == 48


@pytest.mark.slow
def test_claims_audit_notebook_runs_alone(facet_data: Path, tmp_path: Path) -> None:
    papermill = pytest.importorskip("papermill")
    papermill.execute_notebook(
        str(NOTEBOOKS / "claims_audit.ipynb"),
        str(tmp_path / "out.ipynb"),
        parameters={"data_dir": str(facet_data), "threshold": 12},
        progress_bar=False,
        cwd=str(tmp_path),  # the "checkout" is tmp_path: no pyproject.toml above it
    )
    # away from the paper's settings the audit goes to the variant folder, never paper/
    variant = tmp_path / "_build" / "variants" / "t12-s20-first" / "claims.csv"
    audit = pd.read_csv(variant, dtype=str, keep_default_na=False)
    assert len(audit) >= 150
    assert audit.loc[audit["id"] == "notation.threshold", "computed_value"].item() == "12"
    assert not (tmp_path / "paper" / "claims.csv").exists()
