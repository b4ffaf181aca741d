"""The paper-claims audit: registry shape, recipes, and the committed ``paper/claims.csv``."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from facetlab.paper.audit import run_audit, write_claims_csv
from facetlab.paper.claims import (
    AUDIT_COLUMNS,
    Claim,
    ClaimInputs,
    evaluate,
    format_report,
    format_value,
    summarize_audit,
)
from facetlab.paper.registry import CLAIMS
from facetlab.paper.registry import selectors as reg
from facetlab.records import load_trials

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "paper" / "claims.csv"


# --------------------------------------------------------------------------- registry shape


def test_registry_has_many_unique_claims() -> None:
    ids = [c.id for c in CLAIMS]
    assert len(ids) >= 150
    assert len(set(ids)) == len(ids)


def test_every_non_pass_claim_carries_evidence() -> None:
    for c in CLAIMS:
        if c.expected_status != "PASS":
            assert c.explanation.strip(), c.id
        assert c.wording.strip() and c.location.strip(), c.id


def test_not_derivable_claims_are_few() -> None:
    not_derivable = [c.id for c in CLAIMS if c.expected_status == "NOT_DERIVABLE"]
    assert len(not_derivable) <= 10, not_derivable


def test_claim_rejects_mismatch_without_explanation() -> None:
    with pytest.raises(ValueError, match="needs an explanation"):
        Claim("x", "Abstract", "w", 1, lambda _: 1, expected_status="MISMATCH")
    with pytest.raises(ValueError, match="NOT_DERIVABLE exactly when recipe is None"):
        Claim("x", "Abstract", "w", 1, None)


# --------------------------------------------------------------------------- evaluation rules


def _inputs(n: int = 3) -> ClaimInputs:
    return ClaimInputs(pd.DataFrame({"a": range(n)}))


@pytest.mark.parametrize(
    ("paper", "computed", "tol", "relation", "status"),
    [
        (10.3, 10.3333, 0.05, "==", "PASS"),
        (10.3, 10.36, 0.05, "==", "MISMATCH"),
        (7, 7, 0.0, "==", "PASS"),
        (7, 8, 0.0, "==", "MISMATCH"),
        (350, 407, 0.0, ">=", "PASS"),
        (350, 300, 0.0, ">=", "MISMATCH"),
        (10, 10.0, 0.0, "<=", "PASS"),
        (10, 10.5, 0.0, "<=", "MISMATCH"),
        (True, True, 0.0, "==", "PASS"),
        (True, 1, 0.0, "==", "MISMATCH"),
        ("F1", "F1", 0.0, "==", "PASS"),
        ("F1", "F3", 0.0, "==", "MISMATCH"),
        (2.4e-4, 2.44141e-4, 0.05e-4, "==", "PASS"),
        (6, 6.59, 0.5, "==", "MISMATCH"),
    ],
)
def test_evaluate_compares_within_tolerance(
    paper: object, computed: object, tol: float, relation: str, status: str
) -> None:
    c = Claim("t", "loc", "w", paper, lambda _: computed, tolerance=tol, relation=relation)  # type: ignore[arg-type]
    assert evaluate(c, _inputs()).status == status


def test_evaluate_reports_recipe_errors_without_crashing() -> None:
    def broken(_: ClaimInputs) -> int:
        raise KeyError("no_such_column")

    result = evaluate(Claim("t", "loc", "w", 1, broken), _inputs())
    assert result.status == "ERROR"
    assert "no_such_column" in result.as_row()["explanation"]


def test_format_value_is_stable() -> None:
    assert format_value(10.333333333) == "10.3333"
    assert format_value(44.0) == "44"
    assert format_value(0.000244140625) == "0.000244141"
    assert format_value(False) == "false"
    assert format_value(10, "<=") == "<=10"


# --------------------------------------------------------------------------- the real audit


@pytest.fixture(scope="module")
def trials(facet_data: Path) -> pd.DataFrame:
    return load_trials(facet_data)


@pytest.fixture(scope="module")
def audit(trials: pd.DataFrame, facet_data: Path) -> pd.DataFrame:
    return run_audit(trials, data_dir=facet_data)


def test_every_claim_has_its_expected_status(audit: pd.DataFrame) -> None:
    bad = audit[audit["status"] != audit["expected_status"]]
    assert bad.empty, format_report(bad)
    assert "ERROR" not in set(audit["status"])


def test_audit_matches_committed_claims_csv(audit: pd.DataFrame, tmp_path: Path) -> None:
    """Any change of a computed value or status fails here: regenerate the CSV on purpose."""
    written = write_claims_csv(audit, tmp_path / "claims.csv")
    assert COMMITTED.is_file(), "paper/claims.csv is missing: run the claims audit notebook"
    fresh = written.read_text(encoding="utf-8")
    committed = COMMITTED.read_text(encoding="utf-8")
    if fresh != committed:
        old = pd.read_csv(io.StringIO(committed), dtype=str, keep_default_na=False)
        new = pd.read_csv(io.StringIO(fresh), dtype=str, keep_default_na=False)
        merged = old.merge(
            new, on="id", how="outer", suffixes=("_committed", "_now"), indicator=True
        )
        changed = merged[
            (merged["_merge"] != "both")
            | (merged["computed_value_committed"] != merged["computed_value_now"])
            | (merged["status_committed"] != merged["status_now"])
        ]
        pytest.fail(
            "claims audit differs from paper/claims.csv:\n"
            + changed[
                ["id", "computed_value_committed", "computed_value_now", "status_now"]
            ].to_string()
        )


def test_audit_columns_and_counts(audit: pd.DataFrame) -> None:
    assert tuple(audit.columns) == AUDIT_COLUMNS
    summary = summarize_audit(audit)
    assert summary.counts["PASS"] >= 300
    assert summary.counts["MISMATCH"] >= 10
    assert summary.unexpected == ()


# --------------------------------------------------------------------------- recipes, directly


def test_table2_cells_via_recipes(trials: pd.DataFrame, facet_data: Path) -> None:
    x = ClaimInputs(trials, facet_data)
    gpt_cabral = reg.p3_cell(x, "GPT", reg.CABRAL_ADV)
    assert len(gpt_cabral) == 16
    assert round(sum(gpt_cabral["foi_weight"]) / 16, 1) == 18.1
    assert reg._t2_value(x, "Qwen", "CF-Biakanja", "mean_weight") == pytest.approx(13.0)
    assert reg._t2_value(x, "GPT", "CF-Cabral", "wrong") == 3


def test_bimodality_recipe(trials: pd.DataFrame, facet_data: Path) -> None:
    x = ClaimInputs(trials, facet_data)
    weights = sorted(float(w) for w in reg._high(x)["foi_weight"])
    assert weights == [28, 38, 40, 44, 50, 50, 60]
    assert len(reg._low(x)) == 15
    # a different split point moves trials between the groups
    y = ClaimInputs(trials, facet_data, split_point=30)
    assert len(reg._high(y)) == 6


def test_mcnemar_and_pairs(trials: pd.DataFrame, facet_data: Path) -> None:
    x = ClaimInputs(trials, facet_data)
    pairs = reg.paired_p1_p2(x)
    assert len(pairs) == 24
    assert int((~pairs["p1"] & pairs["p2"]).sum()) == 13


def test_c2_outlier_recipe(trials: pd.DataFrame, facet_data: Path) -> None:
    x = ClaimInputs(trials, facet_data)
    assert reg._c2_residual(x, "Sonnet", reg.ANCHORS["Barker"], "F3") == 20
    assert reg._c2_residual(x, "Opus", reg.ANCHORS["Cabral"], "F3") == 5


def test_audit_detects_a_changed_trial(trials: pd.DataFrame, facet_data: Path) -> None:
    """Flip one GPT-5.4 high-mode answer to 'no': the bimodality claims must stop passing."""
    changed = trials.copy()
    gpt = (
        (changed["probe"] == "P3")
        & (changed["canonical_model"] == "GPT-5.4")
        & (changed["foi_weight"] == 60)
    )
    assert gpt.sum() == 1
    changed.loc[gpt, "answer"] = "no"
    changed.loc[gpt, "correct"] = True
    ids = {"res44.high_wrong", "res44.combined_wrong", "t2.CF-Cabral.GPT.wrong"}
    registry = [c for c in CLAIMS if c.id in ids]
    out = run_audit(changed, data_dir=facet_data, registry=registry)
    assert set(out["status"]) == {"MISMATCH"}


def test_threshold_parameter_changes_threshold_dependent_claims(
    trials: pd.DataFrame, facet_data: Path
) -> None:
    registry = [c for c in CLAIMS if c.id in {"res42.p2_cabral", "notation.threshold"}]
    out = run_audit(trials, data_dir=facet_data, threshold=5, registry=registry)
    assert set(out["status"]) == {"MISMATCH"}


def test_audit_sees_in_place_changes(trials: pd.DataFrame, facet_data: Path) -> None:
    """Derived frames are cached per frame; a new audit must not reuse stale ones."""
    frame = trials.copy()
    registry = [c for c in CLAIMS if c.id == "data.p3_trials"]
    assert run_audit(frame, data_dir=facet_data, registry=registry)["status"].item() == "PASS"
    frame.loc[frame["probe"] == "P3", "failed"] = True  # same object, changed in place
    row = run_audit(frame, data_dir=facet_data, registry=registry).iloc[0]
    assert row["status"] == "ERROR"  # nothing left to count: an error, never a stale PASS
    assert "no usable P3 trials" in row["explanation"]
