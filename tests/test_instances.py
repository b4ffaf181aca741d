"""facetlab.instances: the models accept every FACET v3 file and new-domain instances."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from facetlab.datasets import obtain
from facetlab.errors import InstanceError
from facetlab.instances import (
    ComplianceSet,
    Instance,
    PerturbationSet,
    find_perturbation_set,
    instance_issues,
    load_compliance_set,
    load_instance,
    load_instances,
    load_perturbation_set,
)

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[1]
ADVERSARIAL = {
    "facet-neg-cf-001-adv",
    "facet-neg-cf-001-adv2",
    "facet-neg-cf-002-adv",
    "facet-neg-cf-003-adv",
}
# CONVENTIONS.md: the neutralized factor of each counterfactual.
NEUTRALIZED = {
    "facet-neg-cf-001": "F1",
    "facet-neg-cf-001-adv": "F1",
    "facet-neg-cf-001-adv2": "F1",
    "facet-neg-cf-002": "F3",
    "facet-neg-cf-002-adv": "F3",
    "facet-neg-cf-003": "F1",
    "facet-neg-cf-003-adv": "F1",
}


@pytest.fixture(scope="module")
def facet(facet_data: Path) -> dict[str, Instance]:
    return load_instances(facet_data / "instances")


def test_all_17_facet_instances_load(facet: dict[str, Instance]) -> None:
    assert len(facet) == 17
    assert {i for i, inst in facet.items() if inst.is_counterfactual} == set(NEUTRALIZED)
    assert {i for i, inst in facet.items() if inst.is_adversarial} == ADVERSARIAL
    for instance_id, inst in facet.items():
        assert inst.neutralized_label == NEUTRALIZED.get(instance_id), instance_id
        assert inst.labels == [f"F{i}" for i in range(1, inst.n_factors + 1)]
        assert [i for i in instance_issues(inst) if i.severity == "error"] == []


def test_anchor_sizes_and_ground_truth(facet: dict[str, Instance]) -> None:
    assert [facet[f"facet-neg-000{k}"].n_factors for k in (2, 3, 4)] == [5, 7, 6]
    assert all(facet[cf].ground_truth.answer == "no" for cf in NEUTRALIZED)


def test_round_trip_keeps_every_field(facet_data: Path) -> None:
    for path in sorted((facet_data / "instances").glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        assert load_instance(path).model_dump(mode="json", exclude_unset=True) == raw, path.name


def test_extras_are_reachable(facet: dict[str, Instance]) -> None:
    inst = facet["facet-neg-0003"]
    assert inst.model_extra is not None and inst.model_extra["court"]
    assert inst.factors[0].model_extra is not None and "factor_type" in inst.factors[0].model_extra


def test_weight_estimates_are_percents(facet: dict[str, Instance]) -> None:
    weights = facet["facet-neg-0002"].weight_estimates()
    assert weights == {"F1": 22.0, "F2": 20.0, "F3": 21.0, "F4": 18.0, "F5": 19.0}
    for inst in facet.values():
        estimates = inst.weight_estimates()
        assert estimates is not None and sum(estimates.values()) == pytest.approx(100.0)
    cf2 = facet["facet-neg-cf-002"].weight_estimates()
    assert cf2 is not None and cf2["F3"] == pytest.approx(5.0)


def test_factor_lookup_and_rewrite(facet: dict[str, Instance]) -> None:
    inst = facet["facet-neg-cf-002"]
    assert inst.factor("F3") is inst.factors[2]
    assert inst.factor("f3") is inst.factors[2]
    assert inst.label_for_factor_id("f3") == "F3"
    changed = inst.with_factor_text("F3", "A neutral restatement.")
    assert changed.factors[2].text == "A neutral restatement."
    assert inst.factors[2].text != "A neutral restatement."  # the original is untouched
    assert [f.text for i, f in enumerate(changed.factors) if i != 2] == [
        f.text for i, f in enumerate(inst.factors) if i != 2
    ]
    assert changed.factors[2].model_extra == inst.factors[2].model_extra
    for bad in ("F0", "F6", "X1", "3"):
        with pytest.raises(InstanceError, match=re.escape("expected 'F<i>' with i in 1..5")):
            inst.factor(bad)
    with pytest.raises(InstanceError, match="no factor with factor_id 'f9'"):
        inst.label_for_factor_id("f9")
    with pytest.raises(ValueError, match="non-empty"):
        inst.with_factor_text("F1", "  ")


def test_all_c2_and_c3_files_load(facet_data: Path, facet: dict[str, Instance]) -> None:
    c2 = sorted((facet_data / "instances" / "perturbations").glob("*.json"))
    c3 = sorted((facet_data / "instances" / "compliance").glob("*.json"))
    assert (len(c2), len(c3)) == (12, 12)
    for path in c2:
        pset = load_perturbation_set(path)
        base = facet[pset.base_instance_id]
        variants = pset.variants(base)
        assert list(variants) == base.labels  # one neutral rewrite per factor, in order
        for label, variant in variants.items():
            rewrite = pset.for_factor_id(base.factor(label).factor_id).neutral_rewrite
            assert variant.factor(label).text == rewrite
    for path in c3:
        cset = load_compliance_set(path)
        base = facet[cset.base_instance_id]
        ids = {f.factor_id for f in base.factors}
        assert all(r.base_factor_id in ids for r in cset.compliance_requirements), path.name


def test_find_perturbation_set(facet_data: Path, tmp_path: Path) -> None:
    found = find_perturbation_set("facet-neg-0003", facet_data / "instances")
    assert isinstance(found, PerturbationSet) and len(found.perturbations) == 7
    assert find_perturbation_set("facet-neg-cf-001-adv", facet_data / "instances") is None
    assert find_perturbation_set("anything", tmp_path) is None  # no perturbations/ folder
    # Found by base_instance_id when the file name does not follow the convention.
    (tmp_path / "perturbations").mkdir()
    data = json.loads((facet_data / "instances/perturbations/facet-neg-0002-c2.json").read_text())
    (tmp_path / "perturbations" / "barker-rewrites.json").write_text(json.dumps(data))
    again = find_perturbation_set("facet-neg-0002", tmp_path)
    assert again is not None and again.base_instance_id == "facet-neg-0002"


def test_minimal_new_domain_instance() -> None:
    inst = load_instance(FIXTURES / "minimal_instance.json")
    assert inst.n_factors == 5 and inst.labels[-1] == "F5"
    assert inst.weight_estimates() is None
    assert inst.neutralized_label is None
    assert not inst.is_counterfactual and not inst.is_adversarial
    assert inst.title is None and inst.source_case is None
    assert instance_issues(inst) == []


def test_example_domain_instance_is_valid() -> None:
    inst = load_instance(ROOT / "instances" / "example-domain-0001.json")
    assert 5 <= inst.n_factors <= 6
    assert instance_issues(inst) == []
    weights = inst.weight_estimates()
    assert weights is not None and sum(weights.values()) == pytest.approx(100.0)


def _minimal() -> dict[str, object]:
    return json.loads((FIXTURES / "minimal_instance.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_adversarial_and_counterfactual_markers() -> None:
    data = _minimal()
    data["instance_type"] = "adversarial"
    assert Instance.model_validate(data).is_adversarial
    data = _minimal()
    data["metadata"] = {"adversarial_variant_of": "minimal-0000"}
    assert Instance.model_validate(data).is_adversarial
    data = _minimal()
    data["base_instance_id"] = "minimal-0000"
    inst = Instance.model_validate(data)
    assert inst.is_counterfactual and not inst.is_adversarial
    assert any("exactly one factor" in i.message for i in instance_issues(inst))


def test_percent_weights_are_kept_as_percents() -> None:
    data = _minimal()
    for factor, weight in zip(data["factors"], [30, 25, 20, 15, 10], strict=True):  # type: ignore[call-overload]
        factor["in_case_weight_estimate"] = weight
    assert Instance.model_validate(data).weight_estimates() == {
        "F1": 30.0,
        "F2": 25.0,
        "F3": 20.0,
        "F4": 15.0,
        "F5": 10.0,
    }


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("invalid-json.json", "invalid-json.json: invalid JSON at line 5 column 1"),
        (
            "missing-question.json",
            "missing-question.json:/question: missing required field 'question'",
        ),
        (
            "wrong-type-text.json",
            "wrong-type-text.json:/factors/1/text: expected a string, got a number",
        ),
        ("one-factor.json", "one-factor.json:/factors: expected at least 2 factors, found 1"),
        (
            "duplicate-factor-id.json",
            "duplicate-factor-id.json:/factors/3/factor_id: duplicate factor_id 'f3'",
        ),
        ("empty-text.json", "empty-text.json:/factors/2/text: expected non-empty text"),
        (
            "counterfactual-two-neutralized.json",
            "exactly one factor with directionality 'neutralized', found 2",
        ),
        ("not-an-object.json", "expected a JSON object at the top level, got an array"),
    ],
)
def test_load_instance_errors_name_file_pointer_and_expectation(name: str, fragment: str) -> None:
    with pytest.raises(InstanceError) as info:
        load_instance(FIXTURES / "broken_instances" / name)
    assert fragment in str(info.value)


def test_warnings_do_not_stop_loading() -> None:
    inst = load_instance(FIXTURES / "broken_instances" / "three-factors.json")
    assert inst.n_factors == 3


def test_load_instances_sources(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ids are resolved in the FACET data dir; the read-only mirror can serve as one in place.
    monkeypatch.setenv("FACETLAB_DATA_DIR", str(facet_data))
    monkeypatch.setattr(obtain, "_VERIFIED", set())
    by_id = load_instances(["facet-neg-cf-001", "facet-neg-0002"])
    assert list(by_id) == ["facet-neg-cf-001", "facet-neg-0002"]
    assert set(load_instances()) == set(load_instances(facet_data / "instances"))
    one = load_instances(str(FIXTURES / "minimal_instance.json"))
    assert list(one) == ["minimal-0001"]
    with pytest.raises(InstanceError, match=re.escape("no facet-neg-9999.json")):
        load_instances(["facet-neg-9999"])
    with pytest.raises(InstanceError, match="no such file or folder"):
        load_instances(tmp_path / "missing" / "x.json")
    # C2/C3 files in a folder are skipped, duplicate ids are an error.
    folder = tmp_path / "mine"
    (folder / "perturbations").mkdir(parents=True)
    (folder / "a.json").write_text((FIXTURES / "minimal_instance.json").read_text())
    (folder / "a-c2.json").write_text(
        (facet_data / "instances/perturbations/facet-neg-0002-c2.json").read_text()
    )
    assert list(load_instances(folder)) == ["minimal-0001"]
    (folder / "b.json").write_text((FIXTURES / "minimal_instance.json").read_text())
    with pytest.raises(InstanceError, match="duplicate instance_id 'minimal-0001'"):
        load_instances(folder)


def test_compliance_set_model(facet_data: Path) -> None:
    cset = load_compliance_set(facet_data / "instances/compliance/facet-neg-0002-c3.json")
    assert isinstance(cset, ComplianceSet)
    assert [r.base_factor_id for r in cset.compliance_requirements] == [
        "f1",
        "f2",
        "f3",
        "f4",
        "f5",
    ]
    assert cset.ground_truth.answer  # C3 answers are free text, not yes/no
