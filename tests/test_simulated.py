"""Simulated reasoners: known strategies answered through the real probes and parsers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from facetlab.backends import get_backend
from facetlab.backends.base import ModelRequest
from facetlab.errors import ConfigError, PermanentBackendError
from facetlab.instances import Instance, find_perturbation_set, load_instances
from facetlab.probes import build_prompt, parse_reply
from facetlab.probes.base import ParseResult
from facetlab.reasoners.simulated import (
    Reasoner,
    SimulatedBackend,
    canonical_label,
    parse_reasoner,
)


@pytest.fixture(scope="module")
def insts(facet_data: Path) -> dict[str, Instance]:
    return load_instances(facet_data / "instances")


def ask(
    spec: str,
    probe: str,
    inst: Instance,
    base: Instance | None = None,
    *,
    perturbed: str | None = None,
    seed: int = 1,
) -> ParseResult:
    backend = get_backend(f"simulated/{spec}")
    ctx: dict[str, Any] = {
        "probe": probe,
        "instance": inst,
        "base_instance": base,
        "perturbed_factor": perturbed,
        "seed": seed,
    }
    prompt = f"{probe}:{inst.instance_id}:{perturbed}"
    resp = asyncio.run(backend.agenerate(ModelRequest(prompt=prompt, context=ctx)))
    return parse_reply(probe, resp.text, inst)


def c2_variant(insts: dict[str, Instance], facet_data: Path, anchor: str, label: str) -> Instance:
    pset = find_perturbation_set(anchor, facet_data / "instances")
    assert pset is not None
    return pset.variants(insts[anchor])[label]


def test_model_strings_parse_and_reject_clearly() -> None:
    assert parse_reasoner("wadd") == Reasoner()
    assert parse_reasoner("lex+theater") == Reasoner(rule="lex", style="theater")
    r = parse_reasoner("mixture?p_lex=0.25&noise=5")
    assert (r.rule, r.p_lex, r.noise) == ("mixture", 0.25, 5.0)
    assert get_backend("simulated/cue").model == "cue"
    with pytest.raises(ConfigError, match="decision rule"):
        parse_reasoner("magic")
    with pytest.raises(ConfigError, match="reporting style"):
        parse_reasoner("wadd+liar")
    with pytest.raises(ConfigError, match="p_lex"):
        parse_reasoner("mixture?p_lex=2")
    with pytest.raises(ConfigError, match="unknown simulated option"):
        parse_reasoner("wadd?temperature=1")


def test_needs_the_instance_in_context() -> None:
    backend = SimulatedBackend.from_spec("wadd")
    with pytest.raises(PermanentBackendError, match="context"):
        asyncio.run(backend.agenerate(ModelRequest(prompt="hi")))


def test_canonical_factor_of_barker_is_f3(insts: dict[str, Instance]) -> None:
    assert canonical_label(insts["facet-neg-cf-002"], insts["facet-neg-0002"]) == "F3"
    assert canonical_label(insts["facet-neg-cf-001"], insts["facet-neg-0003"]) == "F1"


def test_wadd_canonical_reproduces_the_papers_contradiction(insts: dict[str, Instance]) -> None:
    cf, base = insts["facet-neg-cf-002"], insts["facet-neg-0002"]
    p1 = ask("wadd+canonical", "p1", cf, base)
    p2 = ask("wadd+canonical", "p2", cf, base)
    assert p1.label == "F3"  # P1 names the neutralized factor: looks dissociated
    assert p2.status == "ok" and p2.weights is not None
    assert p2.weights["F3"] == 0  # P2 gives it nothing: faithful
    assert p2.answer == "no"


@pytest.mark.parametrize("case", ["facet-neg-cf-001", "facet-neg-cf-002", "facet-neg-cf-003"])
def test_honest_wadd_is_faithful_under_p1_p2_p3(insts: dict[str, Instance], case: str) -> None:
    cf = insts[case]
    base = insts[cf.base_instance_id or ""]
    neutral = cf.neutralized_label
    assert neutral is not None
    assert ask("wadd", "p1", cf, base).label != neutral
    p2 = ask("wadd", "p2", cf, base)
    assert p2.weights is not None and p2.weights[neutral] <= 10
    assert p2.answer == cf.ground_truth.answer
    for adv in (
        i for i in insts.values() if i.is_adversarial and i.base_instance_id == cf.base_instance_id
    ):
        p3 = ask("wadd", "p3", adv, base)
        assert p3.weights is not None and p3.weights[neutral] <= 10


def test_cue_reasoner_passes_p2_but_is_exposed_by_p3(insts: dict[str, Instance]) -> None:
    base = insts["facet-neg-0002"]
    p2 = ask("cue", "p2", insts["facet-neg-cf-002"], base)
    p3 = ask("cue", "p3", insts["facet-neg-cf-002-adv"], base)
    assert p2.weights is not None and p2.weights["F3"] <= 10
    assert p3.weights is not None and p3.weights["F3"] > 10


def test_lex_theater_keeps_weight_on_perturbed_factors_under_c2(
    insts: dict[str, Instance], facet_data: Path
) -> None:
    anchor = insts["facet-neg-0002"]
    residuals = {}
    for label in anchor.labels:
        variant = c2_variant(insts, facet_data, "facet-neg-0002", label)
        theater = ask("lex+theater", "c2", variant, anchor, perturbed=label)
        honest = ask("wadd", "c2", variant, anchor, perturbed=label)
        assert theater.weights is not None and honest.weights is not None
        residuals[label] = theater.weights[label]
        assert honest.weights[label] == 0
    assert min(residuals.values()) > 10


def test_mixture_gives_two_modes_and_is_seeded(insts: dict[str, Instance]) -> None:
    cf, base = insts["facet-neg-cf-001-adv"], insts["facet-neg-0003"]
    weights = [ask("mixture?p_lex=0.5", "p3", cf, base, seed=s).weights for s in range(40)]
    f1 = [w["F1"] for w in weights if w is not None]
    assert set(f1) == {0.0, 100.0}
    again = [ask("mixture?p_lex=0.5", "p3", cf, base, seed=s).weights for s in range(40)]
    assert weights == again


def test_format_noise_is_caught_by_the_strict_parser(insts: dict[str, Instance]) -> None:
    cf, base = insts["facet-neg-cf-002"], insts["facet-neg-0002"]
    statuses = {ask("wadd?format_noise=1", "p2", cf, base, seed=s).status for s in range(30)}
    assert statuses - {"ok"}, "format faults must show up as a parse status"
    noisy = [ask("wadd?noise=5", "p2", cf, base, seed=s).weights for s in range(5)]
    assert len({tuple(sorted(w.items())) for w in noisy if w}) > 1


def test_prompts_from_real_probes_are_answered(insts: dict[str, Instance]) -> None:
    cf, base = insts["facet-neg-cf-003"], insts["facet-neg-0004"]
    prompt = build_prompt("p2", cf)
    backend = get_backend("simulated/wadd")
    ctx = {"probe": "p2", "instance": cf, "base_instance": base, "seed": 3}
    resp = asyncio.run(backend.agenerate(ModelRequest(prompt=prompt, context=ctx)))
    assert resp.model_id == "simulated/wadd"
    assert resp.usage.input_tokens and resp.usage.input_tokens > 100
    parsed = parse_reply("p2", resp.text, cf)
    assert parsed.status == "ok" and parsed.weight_sum == 100


def test_missing_estimates_default_to_equal_weights() -> None:
    inst = Instance.model_validate(
        {
            "instance_id": "x-1",
            "doctrine": "d",
            "case_background": "b",
            "question": "q?",
            "ground_truth": {"answer": "yes", "rationale": "r"},
            "factors": [
                {"factor_id": f"f{i}", "text": f"t{i}", "directionality": "toward_yes"}
                for i in range(1, 6)
            ],
        }
    )
    parsed = ask("wadd", "p2", inst)
    assert parsed.weights == {f"F{i}": 20.0 for i in range(1, 6)}
    assert parsed.answer == "yes"


def test_top_level_api_lists_every_lazy_export() -> None:
    import facetlab

    assert set(facetlab.__all__) - {"__version__"} == set(facetlab._EXPORTS)
    assert facetlab.get_backend is get_backend
