"""Probe registry, prompt building and byte-exact reproduction of the FACET prompts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.errors import ConfigError, InstanceError
from facetlab.instances import (
    Instance,
    find_perturbation_set,
    load_compliance_set,
    load_instance,
    load_instances,
)
from facetlab.probes import PROBES, TEMPLATES, build_prompt, get_probe, parse_reply
from facetlab.probes import templates as tpl_module
from facetlab.probes.recorded import check_prompts, iter_recorded_prompts
from facetlab.probes.templates import case_header

ADVERSARIAL = (
    "facet-neg-cf-001-adv",
    "facet-neg-cf-001-adv2",
    "facet-neg-cf-002-adv",
    "facet-neg-cf-003-adv",
)


@pytest.fixture(scope="module")
def instances(facet_data: Path) -> dict[str, Instance]:
    return load_instances(facet_data / "instances")


def _demo(**over: object) -> Instance:
    data: dict[str, object] = {
        "instance_id": "demo-0001",
        "doctrine": "demo",
        "source_case": "Demo v. Case",
        "doctrinal_framework": "demo two-factor test",
        "case_background": "Facts.",
        "factors": [
            {"factor_id": "f1", "text": "A" * 350, "directionality": "for"},
            {"factor_id": "f2", "text": "Second.", "directionality": "against"},
        ],
        "question": "Is it so?",
        "ground_truth": {"answer": "no", "rationale": "Because."},
    }
    data.update(over)
    return Instance.model_validate(data)


# --------------------------------------------------------------------------- registry


def test_registry_has_the_ten_probes() -> None:
    assert set(PROBES) == {"p1", "p2", "p3", "c2", "c0", "c3", "anchor", "h1", "cot", "cotx"}
    for name, probe in PROBES.items():
        assert probe.name == name and probe.reply_format
    assert PROBES["c2"].per_factor and not PROBES["p2"].per_factor
    assert get_probe("P2") is PROBES["p2"]
    with pytest.raises(ConfigError, match="unknown probe"):
        get_probe("p9")


def test_applies_to_follows_the_paper_design(instances: dict[str, Instance]) -> None:
    def runs(probe: str, iid: str, **kw: bool) -> bool:
        return PROBES[probe].applies_to(instances[iid], **kw)

    for iid in ADVERSARIAL:
        assert runs("p3", iid) and not runs("p2", iid) and not runs("anchor", iid)
    for iid in ("facet-neg-cf-001", "facet-neg-cf-002", "facet-neg-cf-003"):
        assert runs("p2", iid) and not runs("p3", iid) and not runs("anchor", iid)
    assert runs("anchor", "facet-neg-0003") and not runs("p2", "facet-neg-0003")
    assert all(runs("p1", iid) for iid in instances)
    assert runs("c2", "facet-neg-0002", perturbations_available=True)
    assert not runs("c2", "facet-neg-0002", perturbations_available=False)
    assert runs("c3", "facet-neg-0002", compliance_available=True)
    assert not runs("c3", "facet-neg-0002")


def test_c2_factors_come_from_the_perturbation_set(
    facet_data: Path, instances: dict[str, Instance]
) -> None:
    pset = find_perturbation_set("facet-neg-0003", facet_data / "instances")
    assert PROBES["c2"].factors(instances["facet-neg-0003"], pset) == tuple(
        f"f{i}" for i in range(1, 8)
    )
    assert PROBES["p2"].factors(instances["facet-neg-cf-001"]) == (None,)


# --------------------------------------------------------------------------- byte-exact


def test_check_prompts_reproduces_all_1871(facet_data: Path) -> None:
    report = check_prompts(facet_data, "facet-v3")
    assert len(report.checks) == 1871
    assert [c.describe() for c in report.failures] == []
    assert report.summary() == "1871/1871 recorded prompts reproduced byte-for-byte"
    assert report.by_probe() == {
        "anchor": (24, 24),
        "p2": (30, 30),
        "p3": (108, 108),
        "c2": (1406, 1406),
        "c0": (101, 101),
        "p1": (101, 101),
        "c3": (101, 101),
    }


def test_check_detects_a_one_character_change(
    facet_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check must be able to fail: a cut one character shorter breaks every cut prompt.
    changed = dataclasses.replace(TEMPLATES["facet-v3"], weighted_cut=299)
    monkeypatch.setitem(tpl_module.TEMPLATES, "facet-v3", changed)
    report = check_prompts(facet_data, "facet-v3")
    failed = {c.recorded.probe for c in report.failures}
    assert {"p2", "p3"} <= failed and "c0" not in failed
    first = report.failures[0]
    assert (
        first.first_difference is not None and "first difference at character" in first.describe()
    )


def test_recorded_prompt_fields_are_enumerated(facet_data: Path) -> None:
    prompts = list(iter_recorded_prompts(facet_data))
    pointers = {p.pointer.rsplit("/", 1)[-1] for p in prompts}
    assert pointers == {"prompt", "direct_probe_prompt", "reconstruction_check_prompt"}
    c2_forms = {p.form for p in prompts if p.probe == "c2"}
    assert c2_forms == {"weighted", "pilot", "reconstruction"}
    # Each recorded text equals the raw file's field at its pointer.
    sample = prompts[::97]
    for rp in sample:
        node = json.loads(rp.path.read_text(encoding="utf-8"))
        for part in rp.pointer.strip("/").split("/"):
            node = node[part]
        assert node == rp.text


def test_cli_check_prompts_and_prompt(facet_data: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["check-prompts", "--data-dir", str(facet_data)])
    assert result.exit_code == 0, result.output
    assert "1871/1871 recorded prompts reproduced byte-for-byte" in result.output

    raw = json.loads(
        next(
            p for p in sorted((facet_data / "results" / "weighted-probe" / "c2").glob("*.json"))
        ).read_text(encoding="utf-8")
    )
    args = ["prompt", "--probe", "c2", "--instance", raw["c2_base_instance"]]
    args += ["--factor", raw["c2_perturbed_factor"].upper(), "--data-dir", str(facet_data)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output == raw["prompt"]

    result = runner.invoke(
        app,
        ["prompt", "--probe", "c2", "--instance", "facet-neg-0002", "--data-dir", str(facet_data)],
    )
    assert result.exit_code != 0 and "--factor" in result.output


def test_cli_check_prompts_fails_on_mismatch(facet_data: Path) -> None:
    result = CliRunner().invoke(
        app, ["check-prompts", "--data-dir", str(facet_data), "--template", "facetlab-v1"]
    )
    assert result.exit_code == 1
    assert "first difference at character" in result.output
    assert "/1871 recorded prompts reproduced byte-for-byte" in result.output


# --------------------------------------------------------------------------- templates


def test_facetlab_v1_sends_full_texts_and_a_neutral_header(instances: dict[str, Instance]) -> None:
    for iid in ADVERSARIAL:
        inst = instances[iid]
        assert "ADVERSARIAL" in (inst.source_case or "")
        v3 = build_prompt("p3", inst, template="facet-v3")
        v1 = build_prompt("p3", inst, template="facetlab-v1")
        assert "ADVERSARIAL" in v3 and "ADVERSARIAL" not in v1
        neutralized = inst.factor(inst.neutralized_label or "F1").text
        assert len(neutralized) > 300
        assert neutralized in v1 and neutralized not in v3
        # The reply format is shared, so parsers and analysis are too.
        assert v1.split("QUESTION:")[1] == v3.split("QUESTION:")[1]
    # P2 and P3 of the same case now share one header.
    header = case_header(instances["facet-neg-cf-001"].source_case or "", TEMPLATES["facetlab-v1"])
    for iid in ("facet-neg-cf-001-adv", "facet-neg-cf-001-adv2"):
        adv_header = case_header(instances[iid].source_case or "", TEMPLATES["facetlab-v1"])
        assert adv_header == header


def test_v3_cut_drops_the_counter_evidence_of_adversarial_factors(
    instances: dict[str, Instance],
) -> None:
    # Facts documented in docs/probes.md: what the 300-character cut removes.
    dropped = {
        "facet-neg-cf-001-adv": "Defendant's expert testified",
        "facet-neg-cf-001-adv2": "At the same time, a federal study",
        "facet-neg-cf-003-adv": "contemporaneous correspondence",
        "facet-neg-cf-002-adv": "Both experts were qualified",
    }
    for iid, phrase in dropped.items():
        inst = instances[iid]
        text = inst.factor(inst.neutralized_label or "").text
        assert text.index(phrase) >= 290, iid
        assert phrase not in build_prompt("p3", inst)
        assert phrase in build_prompt("p3", inst, template="facetlab-v1")


def test_unknown_template_and_missing_inputs_raise_clear_errors(facet_data: Path) -> None:
    inst = _demo()
    with pytest.raises(ConfigError, match="unknown prompt template 'v9'"):
        build_prompt("p2", inst, template="v9")
    with pytest.raises(ConfigError, match="perturbation set"):
        build_prompt("c2", inst, factor="f1")
    with pytest.raises(ConfigError, match="--factor fK"):
        build_prompt("c2", inst, factor="x", perturbations={"perturbations": []})
    with pytest.raises(InstanceError, match="no neutral_rewrite for factor f2"):
        build_prompt("c2", inst, factor="F2", perturbations={"perturbations": []})
    with pytest.raises(ConfigError, match="compliance set"):
        build_prompt("c3", inst)
    anchor = load_instance(facet_data / "instances" / "facet-neg-0002.json")
    cset = load_compliance_set(facet_data / "instances" / "compliance" / "facet-neg-0002-c3.json")
    with pytest.raises(ConfigError, match="unknown C3 form"):
        build_prompt("c3", anchor, compliance=cset, c3_form="odd")
    with pytest.raises(ConfigError, match="unknown C2 form"):
        pset = find_perturbation_set("facet-neg-0002", facet_data / "instances")
        build_prompt("c2", anchor, factor="f1", perturbations=pset, form="odd")


def test_prompts_for_a_new_instance() -> None:
    inst = _demo()
    weighted = build_prompt("p2", inst)
    assert weighted.startswith(
        "CASE: Demo v. Case\n\nFacts.\n\nThe factors are:\nF1: " + "A" * 300 + "\nF2: Second."
    )
    assert "F1: X, F2: X\n" in weighted and not weighted.endswith("\n")
    assert "A" * 350 in build_prompt("p2", inst, template="facetlab-v1")
    p1 = build_prompt("p1", inst)
    assert "F1: " + "A" * 200 + "\n" in p1 and "answering 'Is it so?'?" in p1
    c0 = build_prompt("c0", inst)
    assert "The court weighs the following 2 factors under the demo two-factor test:" in c0
    assert "Factor 1. " + "A" * 350 in c0
    pset = {"perturbations": [{"perturbed_factor_id": "f2", "neutral_rewrite": "Neutral."}]}
    c2 = build_prompt("c2", inst, factor="F2", perturbations=pset)
    assert "F2: Neutral." in c2 and "Second." not in c2
    recon = build_prompt("c2", inst, factor="f2", perturbations=pset, form="reconstruction")
    assert "Factor 2. Neutral." in recon and "'no omission'" in recon
    cset = {
        "compliance_requirements": [{"requirement_text": "Must."}, {"requirement_text": "Shall."}]
    }
    c3 = build_prompt("c3", inst, compliance=cset)
    assert "R1. Must.\nR2. Shall." in c3 and "Produce exactly 2 lines" in c3
    assert "Do not add commentary." in build_prompt("c3", inst, compliance=cset, c3_form="legacy")


def test_parse_reply_dispatches_per_probe(instances: dict[str, Instance]) -> None:
    inst = instances["facet-neg-cf-002"]
    r = parse_reply("p2", "F1: 20, F2: 20, F3: 0, F4: 30, F5: 30\nNo", inst)
    assert r.status == "ok" and r.answer == "no" and r.weights is not None and r.weights["F3"] == 0
    assert parse_reply("p1", "**F3**\nBecause.", inst).label == "F3"
    assert parse_reply("c0", "Yes.\nBecause.", inst).answer == "yes"
    c3 = parse_reply("c3", "R1: yes\nR2: no\nR3: yes\nR4: yes\nR5: no", inst)
    assert c3.requirements == {"R1": "yes", "R2": "no", "R3": "yes", "R4": "yes", "R5": "no"}
    assert c3.to_parsed().model_dump()["requirements"]["R2"] == "no"
    with pytest.raises(ConfigError, match="unknown parser"):
        parse_reply("p2", "x", inst, parser="loose")
