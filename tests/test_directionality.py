"""Which answer a factor favours is explicit: one mapping behind validate and the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from facetlab.backends.base import ModelRequest, generate
from facetlab.checking import cue_phrases_in, validate
from facetlab.cli import app
from facetlab.errors import InstanceError, PermanentBackendError
from facetlab.instances import DIRECTION_WORDS, Instance, favours, load_instance
from facetlab.reasoners.simulated import SimulatedBackend


def claim(directions: list[str], vocabulary: dict[str, str] | None = None) -> dict[str, Any]:
    """An insurance-claim instance whose factors point as ``directions`` say."""
    weights = [0.3, 0.25, 0.2, 0.15, 0.1]
    doc: dict[str, Any] = {
        "instance_id": "claim-0001",
        "doctrine": "insurance_claims",
        "case_background": "A household claims for water damage after a pipe burst.",
        "factors": [
            {
                "factor_id": f"f{i + 1}",
                "text": f"Consideration {i + 1} of the claim.",
                "directionality": d,
                "in_case_weight_estimate": w,
            }
            for i, (d, w) in enumerate(zip(directions, weights, strict=False))
        ],
        "question": "Should the insurer pay the claim?",
        "ground_truth": {"answer": "no", "rationale": "The denial factors outweigh the rest."},
    }
    if vocabulary is not None:
        doc["directionality_vocabulary"] = vocabulary
    return doc


DENIAL = ["toward_denial", "toward_denial", "toward_payment", "toward_denial", "neutral"]
# complete pairs: CRAFT's negation swaps toward_X and against_X, so both must map
VOCAB = {
    "toward_denial": "no",
    "against_denial": "yes",
    "toward_payment": "yes",
    "against_payment": "no",
}


def write(tmp_path: Path, doc: dict[str, Any], name: str = "claim-0001.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def test_validate_rejects_unmapped_direction_with_file_pointer_and_expectation(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, claim(DENIAL))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    # F1, F2, F4 say toward_denial, F3 toward_payment: none is a known word; one line a cause
    assert lines[0].startswith("error in 3 places: directionality 'toward_denial' maps to no")
    assert lines[0].endswith(
        f"({path}:/factors/0/directionality, {path}:/factors/1/directionality, "
        f"{path}:/factors/3/directionality)"
    )
    assert lines[1].startswith(f"{path}:/factors/2/directionality: error: ")
    assert "directionality_vocabulary" in lines[0] and "toward_yes" in lines[0]
    assert lines[2] == "1 file checked: 4 errors, 0 warnings"
    with pytest.raises(InstanceError, match="/factors/0/directionality"):
        load_instance(path)


def test_declared_vocabulary_validates_and_drives_the_simulator(tmp_path: Path) -> None:
    path = write(tmp_path, claim(DENIAL, VOCAB))
    assert validate([path]).errors == 0
    inst = load_instance(path)
    assert [inst.favours(label) for label in inst.labels] == ["no", "no", "yes", "no", "neither"]
    # the bug this replaces: a prefix match read toward_denial as "yes" and answered "yes"
    reply = generate(
        SimulatedBackend.from_spec("wadd"),
        ModelRequest("prompt", context={"probe": "anchor", "instance": inst}),
    )
    assert reply.text.strip().splitlines()[-1] == inst.ground_truth.answer == "no"


def test_simulator_refuses_to_guess_an_unknown_word() -> None:
    inst = Instance.model_validate(claim(DENIAL))
    with pytest.raises(PermanentBackendError, match="'toward_denial', which maps to no answer"):
        generate(
            SimulatedBackend.from_spec("wadd"),
            ModelRequest("prompt", context={"probe": "anchor", "instance": inst}),
        )


def test_neutralized_cannot_be_redeclared(tmp_path: Path) -> None:
    doc = claim(DENIAL, {**VOCAB, "neutralized": "yes"})
    problems = validate([write(tmp_path, doc)]).problems
    assert [(p.pointer, p.severity) for p in problems] == [
        ("/directionality_vocabulary/neutralized", "error")
    ]


def test_bad_vocabulary_value_is_a_schema_error(tmp_path: Path) -> None:
    doc = claim(DENIAL, {"toward_denial": "deny", "toward_payment": "yes"})
    problems = validate([write(tmp_path, doc)]).problems
    assert problems[0].pointer == "/directionality_vocabulary/toward_denial"
    assert problems[0].severity == "error"


def test_mapping_is_exact_not_by_prefix() -> None:
    assert favours("toward_liability") == "yes" and favours("AGAINST_DUTY ") == "no"
    assert favours("toward_denial") is None and favours("for") is None
    assert favours("neutralized", {"neutralized": "yes"}) == "neither"
    assert set(DIRECTION_WORDS.values()) == {"yes", "no", "neither"}


# --------------------------------------------------------------------------- authoring lint


def adversarial(text: str) -> dict[str, Any]:
    doc = claim(["toward_yes", "toward_no", "neutralized", "toward_no", "toward_no"])
    doc.update(instance_id="claim-0001-cf-adv", base_instance_id="claim-0000")
    doc["factors"][2]["text"] = text
    return doc


def test_cue_phrases_warn_in_adversarial_text_only(tmp_path: Path) -> None:
    cued = "The age of the pipe is treated as an unresolved and not decisive point."
    adv = validate([write(tmp_path, adversarial(cued))], use_facet_data=False)
    cue = [p for p in adv.problems if "cue phrase" in p.message]
    assert [(p.pointer, p.severity) for p in cue] == [("/factors/2/text", "warning")]
    assert "'treated as', 'unresolved', 'decisive'" in cue[0].message
    # the same text in a (non-adversarial) counterfactual is how FACET marks neutrality
    cf = adversarial(cued) | {"instance_id": "claim-0001-cf"}
    folder = tmp_path / "cf"
    folder.mkdir()
    report = validate([write(folder, cf, "claim-0001-cf.json")], use_facet_data=False)
    assert not [p for p in report.problems if "cue phrase" in p.message]


def test_cue_phrases_warn_in_c2_rewrites(tmp_path: Path) -> None:
    base = write(tmp_path, claim(DENIAL, VOCAB))
    (tmp_path / "perturbations").mkdir()
    c2 = {
        "base_instance_id": "claim-0001",
        "perturbations": [
            {
                "variant_id": f"claim-0001-c2-f{i}",
                "perturbed_factor_id": f"f{i}",
                "neutral_rewrite": "This is not load-bearing." if i == 2 else f"Plain fact {i}.",
            }
            for i in range(1, 6)
        ],
    }
    pfile = write(tmp_path / "perturbations", c2, "claim-0001-c2.json")
    report = validate([base, pfile], use_facet_data=False)
    assert [(p.file, p.pointer, p.severity) for p in report.problems] == [
        (str(pfile), "/perturbations/1/neutral_rewrite", "warning")
    ]


def test_text_the_template_cuts_is_a_warning(tmp_path: Path) -> None:
    doc = claim(DENIAL, VOCAB)
    doc["factors"][1]["text"] = "x" * 190 + " and the ending that P1 never shows."
    problems = validate([write(tmp_path, doc)]).problems
    assert [(p.pointer, p.severity) for p in problems] == [("/factors/1/text", "warning")]
    assert "cuts factor text at 200 characters in P1" in problems[0].message
    assert "P1 never shows." in problems[0].message


def test_cue_phrase_matching_is_by_whole_words() -> None:
    assert cue_phrases_in("A diffuse pain; the INDECISIVE reviewer.") == ["diffuse"]


# --------------------------------------------------------------------------- issue 20 item 2


def test_unpaired_direction_words_warn_and_fail_strict(tmp_path: Path) -> None:
    """toward_denial / toward_payment are no pair: CRAFT's negation cannot reverse them."""
    path = write(tmp_path, claim(DENIAL, {"toward_denial": "no", "toward_payment": "yes"}))
    report = validate([path], use_facet_data=False)
    assert report.errors == 0
    warned = {p.pointer: p.message for p in report.problems}
    assert (
        "its reversal 'against_denial' maps to no answer; expected it declared as 'yes'"
        in (warned["/directionality_vocabulary/toward_denial"])
    )
    strict = CliRunner().invoke(app, ["validate", "--strict", str(path)])
    assert strict.exit_code == 1


def test_a_word_without_a_reversible_prefix_warns(tmp_path: Path) -> None:
    doc = claim(["deny", "deny", "pay", "deny", "neutral"], {"deny": "no", "pay": "yes"})
    problems = validate([write(tmp_path, doc)], use_facet_data=False).problems
    assert [p.pointer for p in problems] == [
        "/directionality_vocabulary/deny",
        "/directionality_vocabulary/pay",
    ]
    assert "has no toward_/against_" in problems[0].message


def test_domain_json_declares_the_vocabulary_once(tmp_path: Path) -> None:
    from facetlab.instances import load_instances

    (tmp_path / "domain.json").write_text(json.dumps({"directionality_vocabulary": VOCAB}))
    write(tmp_path, claim(DENIAL))  # no vocabulary of its own
    second = claim(DENIAL) | {"instance_id": "claim-0002"}
    second["directionality_vocabulary"] = {"toward_yes_anyway": "yes"}  # adds to the domain's
    write(tmp_path, second, "claim-0002.json")
    report = validate([tmp_path], use_facet_data=False)
    assert report.errors == 0, report.problems
    assert len(report.files) == 3  # domain.json is checked, never read as an instance
    loaded = load_instances(tmp_path)
    assert sorted(loaded) == ["claim-0001", "claim-0002"]
    assert (
        loaded["claim-0001"].favours("F1") == "no" and loaded["claim-0001"].favours("F3") == "yes"
    )
    assert loaded["claim-0002"].directionality_vocabulary == {**VOCAB, "toward_yes_anyway": "yes"}
    # the runner reads the folder the same way
    out = tmp_path.parent / "sweep"
    result = CliRunner().invoke(
        app, ["run", "-m", "simulated/wadd", "--instances", str(tmp_path), "--out", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output


def test_domain_json_is_checked(tmp_path: Path) -> None:
    (tmp_path / "domain.json").write_text(
        json.dumps({"directionality_vocabulary": {"toward_denial": "deny"}, "colour": "blue"})
    )
    report = validate([tmp_path], use_facet_data=False)
    # the unknown key first, with every value problem (not only the first)
    assert [(p.pointer, p.severity) for p in report.problems] == [
        ("/colour", "error"),
        ("/directionality_vocabulary/toward_denial", "error"),
    ]
    assert "got 'deny'" in report.problems[1].message
    (tmp_path / "domain.json").write_text(json.dumps({"directionality_vocabulary": {"pay": "yes"}}))
    (problem,) = validate([tmp_path], use_facet_data=False).problems
    assert problem.severity == "warning" and "has no toward_/against_" in problem.message


def test_a_domain_without_what_a_key_cell_needs_warns(tmp_path: Path) -> None:
    cf = claim(["neutralized", *DENIAL[1:]], VOCAB) | {
        "instance_id": "claim-0001-cf",
        "base_instance_id": "claim-0001",
        "instance_type": "counterfactual",
    }
    cf["factors"][0]["in_case_weight_estimate"] = 0.05  # neutralized: little weight
    cf["factors"][1]["in_case_weight_estimate"] = 0.5
    write(tmp_path, claim(DENIAL, VOCAB))
    write(tmp_path, cf, "claim-0001-cf.json")
    (problem,) = validate([tmp_path], use_facet_data=False).problems
    assert problem.file == str(tmp_path.resolve()) and problem.severity == "warning"
    assert "no adversarial rewrite (the P3 cell of cue)" in problem.message
    assert "no C2 perturbation file (the C2 cell of lex+theater)" in problem.message
