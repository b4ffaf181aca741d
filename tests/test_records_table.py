"""load_trials on the FACET v3 mirror: counts, flags and reading rules of CONVENTIONS.md."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from facetlab.paper.models import PAPER_MODEL_ORDER
from facetlab.probes import parsing
from facetlab.records import COLUMNS, load_trials
from facetlab.records.facet_v3 import read_weighted_file

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def trials(facet_data: Path) -> pd.DataFrame:
    return load_trials(facet_data)


def test_columns_are_the_contract(trials: pd.DataFrame) -> None:
    assert tuple(trials.columns) == COLUMNS


def test_file_counts(trials: pd.DataFrame) -> None:
    files = trials.groupby("source").source_file.nunique()
    assert files["pilot"] == 101
    assert files["weighted"] == 162
    assert files["c2"] == 144
    assert (trials.source == "weighted").sum() == 162
    assert trials.attrs["unreadable"] == []


def test_c2_is_eight_models_by_eighteen(trials: pd.DataFrame) -> None:
    c2 = trials[trials.probe == "C2"]
    assert len(c2) == 144
    assert c2.excluded_reason.isna().all()
    per_model = c2.groupby("canonical_model").size()
    assert set(per_model.index) == set(PAPER_MODEL_ORDER)
    assert (per_model == 18).all()
    # instance_id is the anchor; the raw id is kept.
    assert set(c2.instance_id) == {"facet-neg-0002", "facet-neg-0003", "facet-neg-0004"}
    assert c2.raw_instance_id.str.startswith("_c2_facet-neg-").all()
    assert (c2.variant == "c2").all()


def test_every_row_has_a_model_or_a_reason(trials: pd.DataFrame) -> None:
    valid = trials.excluded_reason.isna()
    assert trials.loc[valid, "canonical_model"].notna().all()
    assert trials.loc[~valid, "excluded_reason"].map(lambda r: isinstance(r, str) and r).all()
    reasons = set(trials.excluded_reason.dropna())
    assert {
        "gemini: not in the paper",
        "opus effort-high configuration: not in the paper",
        "failed run with a wrong model id",
    } <= reasons
    gemini = trials[trials.model_id == "gemini-default"]
    assert gemini.source_file.nunique() == 5
    assert (gemini.excluded_reason == "gemini: not in the paper").all()
    high = trials[trials.source_file.str.contains("opus-effort-high")]
    assert high.source_file.nunique() == 3
    assert (high.excluded_reason == "opus effort-high configuration: not in the paper").all()


def test_six_failed_p2_runs_are_kept_and_flagged(trials: pd.DataFrame) -> None:
    failed = trials[trials.failed]
    assert len(failed) == 6
    assert set(failed.probe) == {"P2"}
    assert (failed.parse_status == "empty").all()
    assert failed.weights.isna().all() and failed.foi_weight.isna().all()
    assert failed.excluded_reason.notna().all()
    wrong = failed[failed.model_id == "us.deepseek.v3-2:0"]
    assert len(wrong) == 1
    assert wrong.excluded_reason.iloc[0] == "failed run with a wrong model id"
    assert wrong.canonical_model.iloc[0] is None
    # Each failed canonical run is superseded by a later valid rerun in the same cell.
    for _, row in failed[failed.canonical_model.notna()].iterrows():
        cell = trials[
            (trials.probe == "P2")
            & (trials.instance_id == row.instance_id)
            & (trials.canonical_model == row.canonical_model)
        ]
        assert row.trial == 0
        assert (~cell.failed & (cell.trial > 0)).any()


def test_probe_assignment_by_instance_id_field(trials: pd.DataFrame) -> None:
    weighted = trials[trials.source == "weighted"]
    counts = weighted.groupby("probe").size().to_dict()
    assert counts == {"P2": 30, "P3": 108, "anchor": 24}
    assert set(weighted[weighted.probe == "P2"].instance_id) == {
        "facet-neg-cf-001",
        "facet-neg-cf-002",
        "facet-neg-cf-003",
    }
    p3 = weighted[weighted.probe == "P3"]
    assert p3.instance_id.str.contains("-adv").all()
    assert (p3.variant == "adversarial").all()
    # cf-001 glob would also match the adversarial files; the field does not.
    p2_cf1 = weighted[(weighted.probe == "P2") & (weighted.instance_id == "facet-neg-cf-001")]
    assert len(p2_cf1) == 12


def test_pilot_rows(trials: pd.DataFrame) -> None:
    pilot = trials[trials.source == "pilot"]
    counts = pilot.groupby("probe").size().to_dict()
    assert counts["C0"] == counts["P1"] == counts["C3"] == 101
    assert counts["pilot-C2"] == 631
    # the case column is what each instance file names (its source_case), not a paper label
    cf = pilot[(pilot.probe == "P1") & pilot.instance_id.str.contains("-cf-")]
    assert cf.case.str.contains("SYNTHETIC COUNTERFACTUAL").all()
    assert (
        pilot.loc[pilot.instance_id == "facet-neg-0002", "case"].str.startswith("Barker v.").all()
    )
    assert cf.source_file.nunique() == 27
    assert cf.excluded_reason.isna().all()
    # P1 label: first line, '*' removed, first F<i>.
    row = pilot[
        (pilot.probe == "P1")
        & (pilot.source_file == "results/facet-neg-0002-real-20260411-163036.json")
    ].iloc[0]
    assert row.p1_label == "F3"
    assert row.canonical_model == "Claude Sonnet 4.6"
    assert row.timestamp == pd.Timestamp("2026-04-11T16:25:13")
    # The counterfactual's neutralized factor is the factor of interest.
    assert set(cf.groupby("instance_id").factor_of_interest.first().items()) == {
        ("facet-neg-cf-001", "F1"),
        ("facet-neg-cf-002", "F3"),
        ("facet-neg-cf-003", "F1"),
    }
    c0 = pilot[pilot.probe == "C0"]
    assert c0.answer.isin(["yes", "no"]).all()
    pc2 = pilot[pilot.probe == "pilot-C2"]
    assert pc2.factor_of_interest.str.fullmatch(r"F\d+").all()
    assert (pc2.raw_instance_id.str.contains("-c2-f")).all()


def test_pilot_unparseable_label_is_flagged_not_dropped(trials: pd.DataFrame) -> None:
    bad = trials[trials.parse_status == "malformed"]
    assert len(bad) == 1
    assert bad.probe.iloc[0] == "pilot-C2"
    assert bad.p1_label.iloc[0] is None
    assert bad.answer.iloc[0] == "no"  # the outcome was still read


def test_weights_match_a_reparse_and_foi_weight(trials: pd.DataFrame, facet_data: Path) -> None:
    rows = trials[trials.source.isin(["weighted", "c2"]) & ~trials.failed]
    for _, row in rows.iterrows():
        data = json.loads((facet_data / row.source_file).read_text())
        reparsed = parsing.parse_weights_v3(data["raw_response"], data["n_factors"])
        assert {k: v for k, v in row.weights.items() if k in reparsed} == reparsed
        assert "stored parsed_weights differ" not in " ".join(row.parse_problems)
        if row.probe == "C2":
            key = data["c2_perturbed_factor"].upper()
            assert row.factor_of_interest == key
            assert row.foi_weight == data["parsed_weights"].get(key, 0.0)
        elif row.probe in ("P2", "P3"):
            assert row.foi_weight == data["parsed_weights"].get(data["neutralized_factor"], 0.0)
        else:
            assert math.isnan(row.foi_weight)
    assert rows.answer.isin(["yes", "no"]).all()


def test_sums_not_100_are_kept(trials: pd.DataFrame) -> None:
    off = trials[trials.weight_sum.notna() & (trials.weight_sum != 100)]
    assert len(off) == 6
    assert (off.parse_status == "ok").all()
    assert off.parse_problems.map(lambda p: any("not 100" in x for x in p)).all()


def test_answers_with_prose_after_and_markdown(trials: pd.DataFrame) -> None:
    rescued = trials[
        trials.source_file.str.endswith("0002-c2-f2-bedrock-deepseek.v3.2-rescued.json")
    ]
    assert rescued.answer.tolist() == ["yes"]
    assert rescued.timestamp.iloc[0] == pd.Timestamp("2026-04-13 13:33:22")
    sonnet = trials[
        trials.source_file.str.endswith("cf-002-adv-claude-sonnet-20260413-130839.json")
    ]
    assert sonnet.answer.tolist() == ["no"]


def test_p3_wrong_outcomes_match_the_paper(trials: pd.DataFrame) -> None:
    gpt = trials[(trials.probe == "P3") & (trials.canonical_model == "GPT-5.4")]
    wrong = gpt.groupby("instance_id").correct.agg(lambda s: int((~s).sum()))
    n = gpt.groupby("instance_id").size()
    assert (wrong["facet-neg-cf-001-adv"], n["facet-neg-cf-001-adv"]) == (3, 16)
    assert (wrong["facet-neg-cf-001-adv2"], n["facet-neg-cf-001-adv2"]) == (4, 6)
    barker = gpt[gpt.instance_id == "facet-neg-cf-002-adv"].foi_weight
    assert round(barker.mean(), 1) == 31.2


@pytest.mark.slow
def test_trial_index_within_cells(trials: pd.DataFrame) -> None:
    keys = ["probe", "instance_id", "factor_of_interest", "canonical_model", "model_id"]
    # Failed runs share a cell with their reruns; left-out configurations have their own.
    paper = trials[~trials.excluded_reason.fillna("").str.contains("not in the paper")]
    for _, cell in paper.groupby(keys, dropna=False):
        assert sorted(cell.trial) == list(range(len(cell)))
        ordered = cell.sort_values(["timestamp", "source_file"])
        assert ordered.trial.tolist() == list(range(len(cell)))
    gpt_adv = trials[(trials.probe == "P3") & (trials.canonical_model == "GPT-5.4")]
    assert gpt_adv[gpt_adv.instance_id == "facet-neg-cf-001-adv"].trial.max() == 15


def test_dtypes(trials: pd.DataFrame) -> None:
    assert str(trials.timestamp.dtype).startswith("datetime64")
    assert trials.timestamp.notna().all()
    assert trials.foi_weight.dtype == "float64"
    assert trials.failed.dtype == bool
    assert trials.trial.dtype == "int64"
    assert trials.canonical_model.map(lambda v: v is None or isinstance(v, str)).all()


def test_sources_filter(facet_data: Path) -> None:
    only_c2 = load_trials(facet_data, sources=["c2"])
    assert set(only_c2.source) == {"c2"} and len(only_c2) == 144
    with pytest.raises(Exception, match="unknown source"):
        load_trials(facet_data, sources=["nope"])


def _weighted_row(tmp_path: Path, raw: str, weights: dict[str, float]) -> dict[str, object]:
    path = tmp_path / "reply.json"
    path.write_text(
        json.dumps(
            {
                "instance_id": "demo-0001",
                "model": "sonnet",
                "n_factors": 2,
                "raw_response": raw,
                "parsed_weights": weights,
            }
        )
    )
    (row,) = read_weighted_file(path, "reply.json", {})
    return row


def test_weighted_reader_notes_and_statuses(tmp_path: Path) -> None:
    marked = _weighted_row(tmp_path, "F1: 40, F2: 60\n\n**No**: no.", {"F1": 40.0, "F2": 60.0})
    assert marked["answer"] == "no"
    assert marked["parse_problems"] == ()  # markdown around the answer is allowed (CONVENTIONS)
    late = _weighted_row(tmp_path, "F1: 0, F2: 100\nyes\n\nProse.", {"F1": 0.0, "F2": 100.0})
    assert late["answer"] == "yes" and late["parse_status"] == "ok"
    assert late["parse_problems"] == ("answer is not on the last line",)
    stale = _weighted_row(tmp_path, "F1: 30, F2: 70\nno", {"F1": 50.0, "F2": 50.0})
    assert stale["weights"] == {"F1": 50.0, "F2": 50.0}  # the stored vector is what FACET used
    assert "stored parsed_weights differ from a re-parse of raw_response" in stale["parse_problems"]
    no_answer = _weighted_row(tmp_path, "F1: 30, F2: 70", {"F1": 30.0, "F2": 70.0})
    assert no_answer["parse_status"] == "malformed" and no_answer["answer"] is None
    failed = _weighted_row(tmp_path, "", {})
    assert failed["parse_status"] == "empty" and failed["failed"] is True
    assert failed["excluded_reason"] == "failed run: empty response and no weights"


def test_reading_rules_agree_with_the_probe_parsers(trials: pd.DataFrame) -> None:
    """The table applies the probes' FACET v3 parsers (one place per rule) to every file."""
    for row in trials[trials.source.isin(["weighted", "c2"]) & ~trials.failed].itertuples():
        assert (
            parsing.parse_weights_v3(row.raw_response, row.n_factors).items() <= row.weights.items()
        )
        assert parsing.find_yes_no(row.raw_response)[0] == row.answer
    for row in trials[trials.probe.isin(["P1", "pilot-C2"])].itertuples():
        text = row.raw_response if row.probe == "P1" else row.direct_probe_response
        assert parsing.parse_label_v3(text or "") == row.p1_label
    for row in trials[trials.probe.isin(["C0", "pilot-C2"])].itertuples():
        assert parsing.parse_first_line_answer(row.raw_response) == row.answer


def test_answers_off_the_last_line_are_noted(trials: pd.DataFrame) -> None:
    noted = trials[trials.parse_problems.map(lambda p: "answer is not on the last line" in p)]
    assert len(noted) == 4  # three sonnet cf-002-adv replies + the rescued DeepSeek C2 file
    assert set(noted.answer) <= {"yes", "no"}
