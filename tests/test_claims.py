"""The paper-claims audit: registry shape, recipes, and the committed ``paper/claims.csv``."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from facetlab.paper.audit import run_audit, write_claims_csv
from facetlab.paper.claims import (
    AUDIT_COLUMNS,
    KINDS,
    Claim,
    ClaimInputs,
    evaluate,
    format_report,
    format_value,
    summarize_audit,
)
from facetlab.paper.registry import CLAIMS, claims_by_id
from facetlab.paper.registry import selectors as reg
from facetlab.paper.reproduce import compare_claims
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
def audit(trials: pd.DataFrame, facet_data: Path, reproduced: Path | None) -> pd.DataFrame:
    if reproduced is not None:  # scripts/test.sh's one run wrote it (and diffed it)
        return pd.read_csv(COMMITTED, dtype=str, keep_default_na=False)
    return run_audit(trials, data_dir=facet_data)


@pytest.mark.slow
def test_committed_findings_are_what_the_data_gives(
    trials: pd.DataFrame, facet_data: Path, tmp_path: Path
) -> None:
    """``paper/findings.csv`` is the audit's own rendering, not text kept by hand."""
    run_audit(trials, data_dir=facet_data, out_csv=tmp_path / "claims.csv")
    fresh = (tmp_path / "findings.csv").read_text(encoding="utf-8")
    assert fresh == (COMMITTED.parent / "findings.csv").read_text(encoding="utf-8")


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
    assert reg._cell(
        reg.table2(x), "Table 2", "Qwen", "case", "CF-Biakanja", "mean_weight"
    ) == pytest.approx(13.0)
    assert reg._cell(reg.table2(x), "Table 2", "GPT", "case", "CF-Cabral", "wrong") == 3


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


# --------------------------------------------------------------------------- kinds, empty input


def test_every_claim_has_a_kind() -> None:
    kinds = {c.id: c.kind for c in CLAIMS}
    assert set(kinds.values()) == set(KINDS)
    assert kinds["notation.threshold"] == kinds["res44.split"] == "setting"
    assert kinds["app.doi"] == kinds["abs.labs"] == kinds["t1.lab.GPT"] == "metadata"
    assert kinds["data.t0_identical_foi"] == kinds["data.t0_identical_vectors"] == "convention"
    assert kinds["method.opus_effort_identical"] == "data"
    with pytest.raises(ValueError, match="kind"):
        Claim("x", "Abstract", "w", 1, lambda _: 1, kind="opinion")  # type: ignore[arg-type]


def test_no_claim_of_the_data_passes_on_empty_input(trials: pd.DataFrame, tmp_path: Path) -> None:
    """Emptied trials and an empty instance folder: nothing is compared, so nothing may PASS."""
    (tmp_path / "instances" / "perturbations").mkdir(parents=True)
    audit = run_audit(trials.iloc[0:0], data_dir=tmp_path)
    passed = audit[(audit["status"] == "PASS") & audit["kind"].isin(["data", "convention"])]
    assert passed.empty, passed[["id", "computed_value"]].to_string()


@pytest.mark.slow
@pytest.mark.parametrize("probe", ["P1", "P2", "P3", "C2", "C3"])
def test_a_missing_probe_never_passes_its_claims(
    trials: pd.DataFrame, facet_data: Path, audit: pd.DataFrame, probe: str
) -> None:
    """Without one probe's trials, a claim whose value changes must not still PASS."""
    full = audit.set_index("id")
    emptied = run_audit(trials[trials["probe"] != probe], data_dir=facet_data).set_index("id")
    bound = full["paper_value"].str.match(r"^[<>]=")  # "350+ outputs" may still hold
    still = emptied[(emptied["status"] == "PASS") & (full["status"] == "PASS") & ~bound]
    changed = still[still["computed_value"] != full.loc[still.index, "computed_value"]]
    assert changed.empty, changed[["computed_value"]].to_string()
    if probe == "C3":
        assert emptied.loc["method.opus_effort_identical", "status"] == "ERROR"


# --------------------------------------------------------------------------- the fixed recipes


@pytest.fixture(scope="module")
def by_id(audit: pd.DataFrame) -> pd.DataFrame:
    return audit.set_index("id")


def test_opus_effort_high_names_the_differing_replies(by_id: pd.DataFrame) -> None:
    row = by_id.loc["method.opus_effort_identical"]
    assert (row["status"], row["computed_value"]) == ("MISMATCH", "false")
    assert "facet-neg-0002 C3 R4 no→yes, R5 no→yes" in row["explanation"]
    assert "facet-neg-0003 C3 R4 no→yes, R6 no→yes" in row["explanation"]
    assert "0004" not in row["explanation"].split("):")[1]  # 0004 agrees: not named


def test_cue_phrases_are_counted_literally(by_id: pd.DataFrame) -> None:
    row = by_id.loc["lim.c2_cue_laden"]
    assert (row["status"], row["computed_value"]) == ("MISMATCH", "8")
    assert "8 of the 18 rewrites" in row["explanation"]
    assert "“not developed as a load-bearing element” 0" in row["explanation"]


def test_bedrock_median_reports_both_readings(by_id: pd.DataFrame) -> None:
    assert by_id.loc["notation.bedrock_median", "computed_value"] == "0"
    assert by_id.loc["notation.bedrock_median", "status"] == "PASS"
    assert by_id.loc["notation.bedrock_median_with_adv2", "computed_value"] == "5"
    assert by_id.loc["notation.bedrock_median_with_adv2", "status"] == "MISMATCH"
    text = by_id.loc["notation.bedrock_median_with_adv2", "explanation"]
    assert "median cell mean is 0" in text and "it is 5" in text


def test_caption_claims_check_the_published_table_and_figure(by_id: pd.DataFrame) -> None:
    wilson = by_id.loc["t2.caption_wilson_n5"]
    assert (wilson["status"], wilson["paper_value"], wilson["computed_value"]) == (
        "MISMATCH",
        "1",
        "10",
    )
    assert "GPT-5.4 CF-Cabral 3/16 [7%, 43%]" in wilson["explanation"]
    labels = by_id.loc["fig2.n_annotated"]
    assert (labels["status"], labels["paper_value"], labels["computed_value"]) == (
        "MISMATCH",
        "0",
        "20",
    )


def test_claims_that_could_not_fail_now_can(trials: pd.DataFrame, facet_data: Path) -> None:
    """interp.one_model_one_case counts two-group cells in the data (no longer 1 by construction)."""
    claim = claims_by_id()["interp.one_model_one_case"]
    frame = trials.copy()
    opus_barker = (frame["canonical_model"] == "Claude Opus 4.6") & (
        frame["instance_id"] == "facet-neg-cf-002-adv"
    )
    frame.loc[opus_barker & (frame["probe"] == "P3"), "foi_weight"] = [50.0, 50.0, 0, 0, 0, 0]
    assert evaluate(claim, ClaimInputs(frame, facet_data)).computed_value == 2


# --------------------------------------------------------------------------- explanations


_IDENTIFIER = re.compile(
    r"facet-neg-[\w-]+|cf-\d{3}(?:-adv\d*)?|\b0\d{3}\b|\b[FPCR]\d+\b|\b[fF]\d+\b|"
    r"GPT-5\.4|\b4\.6\b|v3\.2|Large 3|Llama 4|Qwen3|80B-A3B|[\w./-]+\.json|§\s?[\d.]+|"
    r"Table \d|Figure \d|Appendix [A-Z]|95%|z = 1\.96|n = \d+ models|T = 0|1/N"
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _numbers(text: str) -> set[float]:
    return {round(float(n), 4) for n in _NUMBER.findall(_IDENTIFIER.sub(" ", text))}


def _allowed(values: list[str]) -> set[float]:
    """Every number in ``values`` and its roundings (an explanation may print 6.59 for 6.5916)."""
    out: set[float] = set()
    for n in _numbers(" ".join(values)):
        out |= {n, round(n), round(n, 1), round(n, 2), round(100 * n, 1), round(100 * n)}
    return out


def test_every_number_in_every_explanation_is_computed_or_an_input(
    audit: pd.DataFrame, trials: pd.DataFrame, facet_data: Path
) -> None:
    """Numbers of an explanation come from the claim (paper value, computed value, wording),
    its evidence function, the settings, or the computed tables; none is typed from memory."""
    inputs = ClaimInputs(trials, facet_data)
    computed = [str(v) for v in audit["computed_value"]] + ["10", "20"]  # + the settings
    for stem in ("table2_p3", "fig5_asymmetry", "fig4_c2", "fig2_p3", "fig3_bimodality"):
        computed += pd.read_csv(ROOT / "paper" / "tables" / f"{stem}.csv").stack().map(str).tolist()
    universe = _allowed(computed)
    checked = 0
    for claim in CLAIMS:
        if not claim.explanation or claim.recipe is None:
            continue
        row = audit.loc[audit["id"] == claim.id].iloc[0]
        own = [claim.wording, str(row["paper_value"]), str(row["computed_value"])]
        if claim.evidence is not None:
            # strict: the template holds no numbers of its own, the evidence fills them in
            template = re.sub(r"\{[^}]*\}", " ", claim.explanation)
            assert _numbers(template) <= _allowed(own), (claim.id, _numbers(template))
            own += [str(v) for v in claim.evidence(inputs).values()]
            assert _numbers(row["explanation"]) <= _allowed(own), claim.id
        else:
            extra = _numbers(row["explanation"]) - _allowed(own) - universe
            assert not extra, (claim.id, sorted(extra))
        checked += 1
    assert checked >= 20


def test_explanations_render_from_evidence() -> None:
    c = Claim(
        "d",
        "Abstract",
        "w",
        1,
        lambda x: len(x.trials),
        expected_status="MISMATCH",
        explanation="{n} trials, mean {m:.1f}",
        evidence=lambda x: {"n": len(x.trials), "m": 2 / 3},
    )
    result = evaluate(c, _inputs(3))
    assert result.as_row()["explanation"] == "3 trials, mean 0.7"


# --------------------------------------------------------------------------- mutation


def _swap_c2_models(data: Path, a: str, b: str) -> int:
    """Swap two models' labels in the C2 result files of a data copy (as the audit did)."""
    swapped = 0
    for path in sorted((data / "results" / "weighted-probe" / "c2").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("model") in (a, b):
            record["model"] = b if record["model"] == a else a
            path.write_text(json.dumps(record, indent=2), encoding="utf-8")
            swapped += 1
    return swapped


@pytest.mark.slow
def test_swapping_two_models_labels_changes_the_evidence_and_the_findings(
    facet_data: Path, tmp_path: Path
) -> None:
    from facetlab.paper.report import read_claims

    copy = tmp_path / "data"
    shutil.copytree(facet_data, copy)
    assert _swap_c2_models(copy, "deepseek.v3.2", "mistral.mistral-large-3-675b-instruct") > 0
    pinned = run_audit(
        load_trials(facet_data), data_dir=facet_data, out_csv=tmp_path / "a" / "claims.csv"
    )
    mutated = run_audit(load_trials(copy), data_dir=copy, out_csv=tmp_path / "b" / "claims.csv")
    before = pinned.set_index("id")["explanation"]
    after = mutated.set_index("id")["explanation"]
    # the C2 flip is DeepSeek's in the pinned data, Mistral's in the copy: the text follows
    for claim_id in ("res41.c2_correct", "res41.c2_no_flip", "fig2img.only_wrong"):
        assert "DeepSeek v3.2" in before[claim_id] and "Mistral Large 3" not in before[claim_id]
        assert "Mistral Large 3" in after[claim_id] and "DeepSeek v3.2" not in after[claim_id]
    flip = {
        name: next(f for f in read_claims(tmp_path / name / "findings.csv") if f["id"] == "c2-flip")
        for name in ("a", "b")
    }
    assert "DeepSeek v3.2" in flip["a"]["summary"]
    assert "Mistral Large 3" in flip["b"]["summary"] and "DeepSeek" not in flip["b"]["summary"]
    # the values that moved are the ones the swap touches, and the check names them
    changes = compare_claims(
        pinned.astype(str).to_dict("records"), mutated.astype(str).to_dict("records")
    )
    assert {c.id for c in changes} >= {"res45.deepseek_mean", "res45.mistral_mean"}


def test_a_finding_appears_only_while_its_claims_disagree(facet_data: Path) -> None:
    from facetlab.paper.findings import FINDINGS, render_findings

    inputs = ClaimInputs(pd.DataFrame(), facet_data)
    statuses = {c: "PASS" for f in FINDINGS for c in f.claims}
    assert render_findings(inputs, statuses, CLAIMS) == []
    # evidence that cannot be computed (no trials) is said, never replaced by typed text
    statuses["res41.c2_no_flip"] = "MISMATCH"
    (row,) = render_findings(inputs, statuses, CLAIMS)
    assert row["id"] == "c2-flip" and "could not be computed" in row["title"]
