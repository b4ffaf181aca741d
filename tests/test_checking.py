"""facetlab validate / facetlab schema: one precise line per problem, non-zero exit on errors."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from facetlab.checking import Problem, json_schema, validate, validate_paths
from facetlab.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = FIXTURES / "broken_instances"
ROOT = Path(__file__).resolve().parents[1]

# file (relative to BROKEN) -> (pointer, severity, fragment of the message)
EXPECTED = {
    "invalid-json.json": ("", "error", "invalid JSON at line 5 column 1"),
    "not-an-object.json": ("", "error", "expected a JSON object (an instance file), got an array"),
    "missing-question.json": (
        "/question",
        "error",
        "missing required field 'question' (expected a string",
    ),
    "wrong-type-text.json": ("/factors/1/text", "error", "expected a string, got a number"),
    "factors-not-array.json": ("/factors", "error", "expected an array, got a string"),
    "one-factor.json": ("/factors", "error", "expected at least 2 factors, found 1"),
    "three-factors.json": ("/factors", "warning", "expected at least 5 factors"),
    "duplicate-factor-id.json": ("/factors/3/factor_id", "error", "duplicate factor_id 'f3'"),
    "empty-text.json": ("/factors/2/text", "error", "expected non-empty text"),
    "counterfactual-no-neutralized.json": (
        "/factors",
        "error",
        "exactly one factor with directionality 'neutralized', found 0",
    ),
    "counterfactual-two-neutralized.json": ("/factors", "error", "found 2 (F1, F3)"),
    "answer-not-yes-no.json": ("/ground_truth/answer", "warning", "expected 'yes' or 'no'"),
    "partial-weights.json": ("/factors", "warning", "in_case_weight_estimate missing for F5"),
    "zz-duplicate-instance-id.json": (
        "/instance_id",
        "error",
        "duplicate instance_id 'broken-three-factors'",
    ),
    "perturbations/unknown-factor-c2.json": (
        "/perturbations/3/perturbed_factor_id",
        "error",
        "unknown factor 'f9'",
    ),
    "perturbations/unknown-base-c2.json": (
        "/base_instance_id",
        "error",
        "unknown base instance 'no-such-instance'",
    ),
    "compliance/unknown-factor-c3.json": (
        "/compliance_requirements/2/maps_to_base_factor",
        "error",
        "unknown factor 'f7",
    ),
}


def test_every_broken_fixture_gives_exactly_its_one_problem() -> None:
    report = validate([BROKEN], use_facet_data=False)
    files = {Path(f).relative_to(BROKEN).as_posix() for f in report.files}
    assert files == set(EXPECTED)
    by_file: dict[str, list[Problem]] = {}
    for problem in report.problems:
        by_file.setdefault(Path(problem.file).relative_to(BROKEN).as_posix(), []).append(problem)
    for name, (pointer, severity, fragment) in EXPECTED.items():
        found = by_file.get(name, [])
        assert len(found) == 1, (name, found)
        assert (found[0].pointer, found[0].severity) == (pointer, severity), (name, found[0])
        assert fragment in found[0].message, (name, found[0].message)
    # + one folder warning: a bag of broken files is no domain the validity study can use
    assert report.errors == 14 and report.warnings == 4 and not report.ok
    assert any(p.file == str(BROKEN) and "key cells" in p.message for p in report.problems)


def test_cli_prints_one_line_per_problem_and_exits_non_zero() -> None:
    result = CliRunner().invoke(app, ["validate", str(BROKEN), "--no-facet-data"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1] == "17 files checked: 14 errors, 4 warnings"
    assert len(lines) == 19  # 17 problems of files, 1 of the folder, the summary
    assert f"{BROKEN / 'empty-text.json'}:/factors/2/text: error: expected non-empty text" in lines


def test_facet_data_validates_without_errors(facet_data: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(facet_data / "instances")])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("41 files checked: 0 errors, ")
    # FACET's only warnings are authoring lint: texts the facet-v3 template cuts, cue
    # phrases in its C2 rewrites (the paper's own wording; never in its -adv texts), and
    # the variants' case header "SYNTHETIC COUNTERFACTUAL VARIANT" every prompt shows
    warnings = lines[:-1]
    assert warnings and all(": warning: " in w or w.startswith("warning in ") for w in warnings)
    lint = ("cuts factor text", "cue phrase", "source_case says 'COUNTERFACTUAL'")
    assert all(any(x in w for x in lint) for w in warnings)
    cue = [w for w in warnings if "cue phrase" in w]
    assert cue and all("/perturbations/" in w for w in cue)
    header = [w for w in warnings if "source_case" in w]
    assert header == [w for w in header if w.startswith("warning in 7 places: ")]


def test_project_instances_and_fixture_validate_clean() -> None:
    paths = [ROOT / "instances", FIXTURES / "minimal_instance.json"]
    assert validate_paths(paths) == []


def test_warnings_alone_exit_zero_unless_strict() -> None:
    path = str(BROKEN / "three-factors.json")
    assert CliRunner().invoke(app, ["validate", path]).exit_code == 0
    assert CliRunner().invoke(app, ["validate", "--strict", path]).exit_code == 1


def test_perturbation_base_resolved_in_facet_data(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lone C2 file names a FACET instance; it is found in the local data (no download).
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    monkeypatch.setenv("FACETLAB_DATA_DIR", str(tmp_path / "empty-cache"))
    lone = tmp_path / "facet-neg-0002-c2.json"
    data = json.loads((facet_data / "instances/perturbations/facet-neg-0002-c2.json").read_text())
    data["perturbations"][1]["perturbed_factor_id"] = "f8"
    lone.write_text(json.dumps(data))
    # text lint (cut texts, cue phrases) left aside
    problems = [p for p in validate_paths([lone]) if "/neutral_rewrite" not in p.pointer]
    assert [(p.pointer, p.severity) for p in problems] == [
        ("/perturbations/1/perturbed_factor_id", "error"),
        ("/perturbations", "warning"),  # f2 now has no rewrite
    ]
    assert "unknown factor 'f8'" in problems[0].message
    assert not (tmp_path / "empty-cache").exists()  # validation never fetches
    # Without the FACET data the base is unknown.
    assert "unknown base instance" in validate([lone], use_facet_data=False).problems[0].message


def test_kind_detected_by_location(tmp_path: Path) -> None:
    folder = tmp_path / "perturbations"
    folder.mkdir()
    (folder / "x-c2.json").write_text(json.dumps({"base_instance_id": "x"}))
    problems = validate_paths([tmp_path])
    assert [p.pointer for p in problems] == ["/perturbations"]
    assert "missing required field 'perturbations' (expected an array" in problems[0].message


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    problems = validate_paths([tmp_path / "nope.json"])
    assert len(problems) == 1 and "no such file or folder" in problems[0].message


def test_copy_of_facet_file_with_one_change(facet_data: Path, tmp_path: Path) -> None:
    target = tmp_path / "facet-neg-cf-002.json"
    shutil.copyfile(facet_data / "instances/facet-neg-cf-002.json", target)
    data = json.loads(target.read_text())
    data["factors"][0]["directionality"] = "neutralized"
    target.write_text(json.dumps(data, indent=2))
    problems = [p for p in validate_paths([target]) if p.severity == "error"]
    assert [str(p) for p in problems] == [
        f"{target}:/factors: error: a counterfactual needs exactly one factor with "
        "directionality 'neutralized', found 2 (F1, F3)"
    ]


@pytest.mark.parametrize("kind", ["instance", "perturbations", "compliance"])
def test_schema_command_writes_json_schema(kind: str, tmp_path: Path) -> None:
    out = tmp_path / f"{kind}.schema.json"
    result = CliRunner().invoke(app, ["schema", "--kind", kind, "--out", str(out)])
    assert result.exit_code == 0, result.output
    schema = json.loads(out.read_text())
    assert schema == json_schema(kind)  # type: ignore[arg-type]
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["additionalProperties"] is True  # unknown fields are allowed


def test_schema_to_stdout_and_bad_kind() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["required"] == [
        "instance_id",
        "doctrine",
        "case_background",
        "factors",
        "question",
        "ground_truth",
    ]
    assert schema["properties"]["factors"]["minItems"] == 2
    assert CliRunner().invoke(app, ["schema", "--kind", "nope"]).exit_code != 0


def test_schema_agrees_with_validator_on_fixtures() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema("instance"))
    assert not list(
        validator.iter_errors(json.loads((FIXTURES / "minimal_instance.json").read_text()))
    )
    for name in (
        "missing-question.json",
        "wrong-type-text.json",
        "empty-text.json",
        "one-factor.json",
    ):
        assert list(validator.iter_errors(json.loads((BROKEN / name).read_text()))), name


MODERATION = FIXTURES / "moderation-appeals"


def _edited_domain(tmp_path: Path) -> Path:
    folder = tmp_path / "moderation-appeals"
    shutil.copytree(MODERATION, folder)
    return folder


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_one_domain_json_mistake_is_one_cause_not_fifty_errors(tmp_path: Path) -> None:
    folder = _edited_domain(tmp_path)
    vocabulary = {"toward_restoring": "yes", "against_restoring": "No"}
    misspelt = {"descripton": "x", "directionality_vocabulary": vocabulary}
    (folder / "domain.json").write_text(json.dumps(misspelt))
    result = CliRunner().invoke(app, ["validate", str(folder)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    # the harmless misspelt key first, with its fix; then the value, then its consequence
    assert lines[0].endswith(
        "domain.json:/descripton: error: unknown key 'descripton' (did you mean "
        "'description'?); expected directionality_vocabulary, description"
    )
    assert "/directionality_vocabulary/against_restoring: error:" in lines[1]
    assert "got 'No'" in lines[1]
    assert lines[2].startswith("error in 7 places: its folder's domain.json has errors")
    assert lines[3] == "12 files checked: 9 errors, 0 warnings" and len(lines) == 4


def test_did_you_mean_for_a_direction_word_and_a_key(tmp_path: Path) -> None:
    folder = _edited_domain(tmp_path)

    def misspell(data: dict[str, Any]) -> None:
        data["factors"][2]["directionality"] = "against_restorng"
        factor = data["factors"][3]
        factor["in_case_weight_estmate"] = factor.pop("in_case_weight_estimate")

    _edit(folder / "mod-0002.json", misspell)
    problems = {p.pointer: p for p in validate([folder], use_facet_data=False).problems}
    direction = problems["/factors/2/directionality"]
    assert direction.severity == "error"
    assert "'against_restorng' maps to no answer of the yes/no question (did you mean " in (
        direction.message
    )
    assert "'against_restoring'?)" in direction.message
    key = problems["/factors/3/in_case_weight_estmate"]
    assert key.severity == "warning"
    assert key.message == (
        "unknown key 'in_case_weight_estmate' (did you mean 'in_case_weight_estimate'?): "
        "kept, never read"
    )


def test_a_neutralized_factor_keeping_its_base_estimate_is_named(tmp_path: Path) -> None:
    folder = _edited_domain(tmp_path)

    def keep_base_estimate(data: dict[str, Any]) -> None:  # as the old scaffold wrote it
        data["factors"][0]["in_case_weight_estimate"] = 0.25
        data["factors"][1]["in_case_weight_estimate"] = 0.20

    _edit(folder / "mod-0001-cf.json", keep_base_estimate)
    (problem,) = validate([folder / "mod-0001-cf.json"], use_facet_data=False).problems
    assert problem.pointer == "/factors/0/in_case_weight_estimate"
    assert problem.severity == "warning"
    assert "neutralized factor F1 is estimated at 0.25 (25%)" in problem.message
    assert "expected at most 10%" in problem.message and "theater" in problem.message


def test_a_variant_whose_case_header_says_so_is_named(tmp_path: Path) -> None:
    folder = _edited_domain(tmp_path)
    _edit(folder / "mod-0003-cf-adv.json", lambda d: d.update(source_case="Spam (counterfactual)"))
    (problem,) = validate([folder / "mod-0003-cf-adv.json"], use_facet_data=False).problems
    assert problem.pointer == "/source_case"
    assert "source_case says 'counterfactual'" in problem.message
    assert "every prompt shows it after CASE:" in problem.message
