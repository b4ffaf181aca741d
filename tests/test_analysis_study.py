"""The generic study tables (facetlab.analysis.study) on any domain: a fresh sweep of the
example domain, the committed simulated sweeps, and the FACET v3 raw data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from facetlab.analysis import labels, select, study
from facetlab.errors import DataError
from facetlab.paper import cells
from facetlab.paper.models import with_paper_cases
from facetlab.records import load_trials
from facetlab.runner import run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "instances"
SIMULATED = ROOT / "results" / "simulated"
MODELS = ["simulated/wadd+canonical", "simulated/cue"]


def _sweep(instances: Path, out: Path) -> pd.DataFrame:
    """``facetlab run --model M... --instances DIR --probes p1,p2,p3,c2 --out OUT``, loaded."""
    for model in MODELS:
        run(
            instances,
            ["p1", "p2", "p3", "c2"],
            model,
            out=out / model.replace("/", "_"),
            progress="none",
        )
    return load_trials(records=sorted(out.iterdir()), sources=["facetlab"])


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """A fresh sweep of the example domain by two simulated reasoners."""
    return _sweep(EXAMPLE, tmp_path_factory.mktemp("example"))


def test_p1_p2_on_the_example_domain(example: pd.DataFrame) -> None:
    table = study.p1_p2(example, EXAMPLE)
    assert list(table.columns[:4]) == [
        "model",
        "instance_id",
        "instance_label",
        "neutralized_factor",
    ]
    row = table.set_index(["model", "instance_id"]).loc[
        ("simulated/wadd+canonical", "example-domain-0001-cf")
    ]
    # the neutralized factor comes from the instance file (F1 is 'neutralized' there)
    assert row["neutralized_factor"] == "F1"
    assert row["instance_label"].startswith("Overnight observation")
    # the paper's contradiction on a new domain: P1 names it, P2 gives it no weight
    assert row["p1_names_neutralized"] > 0.5 and row["verdict_p1"] == "dissociated"
    assert row["p2_mean_weight"] <= 10 and row["verdict_p2"] == "faithful"
    assert row["finding"] == "P1 dissociated · P2 faithful (contradiction)"  # the figure's words
    # no P2 on the adversarial rewrite: said, not hidden
    adv = table[table["instance_id"] == "example-domain-0001-cf-adv"]
    assert set(adv["verdict_p2"]) == {study.NO_TRIALS} and set(adv["n_p2"]) == {0}


def test_p3_threshold_and_model_order(example: pd.DataFrame) -> None:
    table = study.p3(example, EXAMPLE, models=["simulated/cue", "simulated/wadd+canonical"])
    assert list(table["model"]) == ["simulated/cue", "simulated/wadd+canonical"]
    cue = table.iloc[0]
    assert cue["mean_weight"] > 10 and cue["verdict"] == "dissociated"
    assert cue["n_above_threshold"] == cue["n"]
    assert 0 <= cue["wilson_low"] <= cue["n_above_threshold"] / cue["n"] <= cue["wilson_high"]
    # a threshold above the weight turns the verdict
    lenient = study.p3(example, EXAMPLE, threshold=cue["mean_weight"])
    assert lenient.set_index("model").at["simulated/cue", "verdict"] == "faithful"
    # default order: sorted
    assert list(study.p3(example)["model"]) == sorted(MODELS)


def test_c2_and_outcomes_on_the_example_domain(example: pd.DataFrame) -> None:
    c2 = study.c2(example, EXAMPLE)
    base = json.loads((EXAMPLE / "example-domain-0001.json").read_text())
    n_factors = len(base["factors"])
    assert len(c2) == len(MODELS) * n_factors
    assert list(c2["factor"][:n_factors]) == [f"F{i}" for i in range(1, n_factors + 1)]
    assert set(c2["base_instance_id"]) == {"example-domain-0001"}
    out = study.outcomes(example)
    assert "P1" not in set(out["probe"])  # P1 names a factor, no yes/no answer
    assert (out["correct"] + out["wrong"] + out["unparsed"] == out["n"]).all()
    scored = out[out["measure"] == "accuracy"]
    assert (scored["accuracy"] == scored["correct"] / scored["n"]).all()
    # the example's C2 file states no expected answers: C2 is a decision change, not accuracy
    c2_rows = out[out["probe"] == "C2"]
    assert set(c2_rows["measure"]) == {"decision change"} and c2_rows["accuracy"].isna().all()
    assert (c2_rows["decision_change"] == c2_rows["wrong"] / c2_rows["n"]).all()


def test_minimal_instances_without_titles(tmp_path: Path) -> None:
    # a domain with no titles: labels are the ids, the neutralized factor still found
    folder = tmp_path / "plain"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("README.md"))
    for path in folder.glob("*.json"):
        data = json.loads(path.read_text())
        data.pop("title", None)
        path.write_text(json.dumps(data))
    trials = _sweep(folder, tmp_path / "records")
    assert labels.instance_labels(folder)["example-domain-0001-cf"] == "example-domain-0001-cf"
    table = study.p1_p2(trials, folder)
    assert set(table["instance_label"]) == set(table["instance_id"])
    assert set(table["neutralized_factor"]) == {"F1"}


def test_empty_results_say_why(example: pd.DataFrame) -> None:
    with pytest.raises(
        DataError, match=r"0 of \d+ trials left: model nope absent; models present: "
    ):
        study.p3(example, models=["nope"])
    no_p3 = example[example["probe"] != "P3"]
    with pytest.raises(DataError, match="probe P3 absent; probes present: C2, P1, P2"):
        study.p3(no_p3)
    failed = example.assign(failed=True)
    with pytest.raises(DataError, match=r"0 of \d+ trials usable"):
        study.outcomes(failed)
    with pytest.raises(DataError, match="have a ground truth"):
        study.outcomes(example.assign(ground_truth=None))
    with pytest.raises(DataError, match="the trials table is empty"):
        select.select_trials(example.iloc[0:0])


def test_committed_simulated_sweeps(facet_data: Path) -> None:
    folders = sorted(p for p in SIMULATED.iterdir() if (p / "records").is_dir())
    trials = load_trials(records=folders, sources=["facetlab"])
    instances = facet_data / "instances"
    p1p2 = study.p1_p2(trials, instances).set_index(["model", "instance_id"])
    # wadd+canonical reads the base case's factor: P1 names F3 on CF-Barker, P2 gives it 0
    barker = p1p2.loc[("simulated/wadd+canonical", "facet-neg-cf-002")]
    assert barker["p1_named"] == "F3" and barker["p2_mean_weight"] == 0
    p3 = study.p3(trials, instances).set_index(["model", "instance_id"])
    assert p3.at[("simulated/cue", "facet-neg-cf-002-adv"), "verdict"] == "dissociated"
    assert p3.at[("simulated/wadd", "facet-neg-cf-002-adv"), "verdict"] == "faithful"
    assert len(study.c2(trials, instances)) > 0 and len(study.outcomes(trials)) > 0


@pytest.mark.slow
def test_facet_data_agrees_with_the_paper_tables(facet_data: Path) -> None:
    trials = load_trials(facet_data)
    instances = facet_data / "instances"
    generic = study.p3(trials, instances).set_index(["model", "instance_id"])
    table2 = cells.table2_p3(trials)
    assert len(table2) == 24
    for row in table2.itertuples():
        cell = generic.loc[(row.model, row.instance_id)]
        assert cell["n"] == row.n
        assert cell["mean_weight"] == pytest.approx(row.mean_weight)
        assert cell["neutralized_factor"] == row.neutralized_factor
    p1p2 = study.p1_p2(trials, instances).set_index(["model", "instance_id"])
    assert p1p2.index.get_level_values(0).nunique() == 8
    p1 = with_paper_cases(trials[trials["probe"] == "P1"])  # the paper's case labels
    cf_of_case = dict(zip(p1["case"], p1["instance_id"], strict=True))
    fig1 = cells.fig1_p1_p2(trials)
    for row in fig1[fig1["runs_agree"]].itertuples():
        cell = p1p2.loc[(row.model, cf_of_case[row.case])]
        assert cell["neutralized_factor"] == row.neutralized_factor
        assert cell["p1_named"] == row.p1_label and cell["p2_mean_weight"] == row.p2_weight
        assert (cell["verdict_p1"] == "faithful") == row.p1_faithful
        assert (cell["verdict_p2"] == "faithful") == row.p2_faithful
