"""The CRAFT bridge: FACET instances answered by simulated reasoners, as CRAFT agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from facetlab.backends.base import Backend, ModelRequest, ModelResponse
from facetlab.craft import InspectOptions
from facetlab.craft.bridge import (
    REMOVED_TEXT,
    facet_agent,
    factor_ref,
    inspect_instance,
    instance_input,
    null_units,
    perceived_instance,
    reverse_direction,
)
from facetlab.craft.errors import CraftConfigError
from facetlab.craft.perturb.strategies import apply_strategy
from facetlab.instances import Instance, load_instances
from facetlab.reasoners.simulated import decide, parse_reasoner


@pytest.fixture(scope="module")
def every(facet_data: Path) -> dict[str, Instance]:
    return load_instances(facet_data / "instances")


def _pair(every: dict[str, Instance], iid: str) -> tuple[Instance, Instance | None]:
    inst = every[iid]
    return inst, every.get(inst.base_instance_id or "")


def test_input_has_background_question_and_one_field_per_factor(
    every: dict[str, Instance],
) -> None:
    inst = every["facet-neg-cf-002"]
    inp = instance_input(inst)
    assert set(inp) == {"background", "question", "F1", "F2", "F3", "F4", "F5"}
    assert inp["F3"] == inst.factors[2].text
    ref = factor_ref(inp, "F3")
    assert ref.span is not None and ref.span.text == inp["F3"]
    with pytest.raises(CraftConfigError, match="'F9'"):
        factor_ref(inp, "F9")


def test_reverse_direction() -> None:
    assert reverse_direction("toward_liability") == "against_liability"
    assert reverse_direction("against_duty") == "toward_duty"
    assert reverse_direction("neutral") == "neutral"
    assert reverse_direction("neutralized") == "neutralized"


def test_perceived_instance_maps_each_strategy(every: dict[str, Instance]) -> None:
    inst = every["facet-neg-0002"]  # F1 toward_liability
    inp = instance_input(inst)
    ref = factor_ref(inp, "F1")
    seen = {
        s: perceived_instance(inst, apply_strategy(inp, ref, s).input, canonical="F1")
        for s in ("delete", "redact", "null", "negate")
    }
    for s in ("delete", "redact", "null"):
        assert seen[s].factors[0].directionality == "neutralized", s
    assert seen["delete"].factors[0].text == REMOVED_TEXT
    assert seen["negate"].factors[0].directionality == "against_liability"
    # untouched factors, and the pinned canonical factor
    assert seen["negate"].factors[1] == inst.factors[1]
    assert getattr(seen["redact"], "canonical_factor", None) == "F1"
    # an unknown edit: neutralized by default, ignored with unknown_edit="keep"
    edited = dict(inp, F2=inp["F2"] + " Indeed.")
    assert perceived_instance(inst, edited).factors[1].directionality == "neutralized"
    kept = perceived_instance(inst, edited, unknown_edit="keep")
    assert kept.factors[1].directionality == inst.factors[1].directionality
    assert perceived_instance(inst, inp).factors == inst.factors


def test_the_simulated_reasoner_perceives_negation_by_the_arithmetic(
    every: dict[str, Instance],
) -> None:
    """Anchor 0002: toward 22+20+21 = 63 vs against 18+19 = 37, so 'yes'.

    Negating F1 gives 41 vs 59 ('no'); redacting F1 gives 41 vs 37 (still 'yes');
    negating F4 (against) gives 81 vs 19 (still 'yes').
    """
    inst = every["facet-neg-0002"]
    agent = facet_agent(inst, "simulated/wadd")
    inp = agent.input
    assert agent.run(inp).decision == "yes"
    for label, strategy, expected in [("F1", "negate", "no"), ("F1", "redact", "yes")]:
        perturbed = apply_strategy(inp, factor_ref(inp, label), strategy).input
        assert agent.run(perturbed).decision == expected, (label, strategy)
    negated_f4 = apply_strategy(inp, factor_ref(inp, "F4"), "negate").input
    assert agent.run(negated_f4).decision == "yes"


def test_citation_is_the_p1_factor_or_the_top_weights(every: dict[str, Instance]) -> None:
    inst, base = _pair(every, "facet-neg-cf-002")
    canonical = facet_agent(inst, "simulated/wadd+canonical", base_instance=base)
    trace = canonical.run(canonical.input)
    assert trace.decision == "no"
    assert [r.path for r in trace.cited_evidence] == ["F3"]  # the canonical projection
    weighted = facet_agent(
        inst, "simulated/wadd+canonical", base_instance=base, citation="weighted", top_k=2
    )
    assert [r.path for r in weighted.run(weighted.input).cited_evidence] == ["F4", "F5"]
    with pytest.raises(CraftConfigError, match="citation"):
        facet_agent(inst, "simulated/wadd", citation="p9")  # type: ignore[arg-type]
    with pytest.raises(CraftConfigError, match="facetlab backend"):
        facet_agent(inst, object())


def test_lex_theater_on_cf_barker_is_spec_theater_and_qualified_untestable(
    every: dict[str, Instance],
) -> None:
    """It decides from the base case's canonical F3 but cites F4 (its highest estimate).
    Nothing in the input flips it, not even every unit perturbed at once: the spec says
    theater, the qualified verdict says untestable (zero flips cannot tell theater from
    an agent that does not read its input)."""
    inst, base = _pair(every, "facet-neg-cf-002")
    report = inspect_instance(inst, "simulated/lex+theater", base_instance=base, samples=10)
    assert report.baseline_decision == "yes"
    assert [f.evidence.path for f in report.findings] == ["F4"]
    assert report.overall_verdict == "theater"
    f = report.findings[0]
    assert f.treatment_flip_rate == f.placebo_flip_rate == 0.0
    # the placebo is non-causal text; the uncited factors are context units
    assert {r.path for r in report.placebo_evidence} == {"background", "question"}
    assert report.qualified_verdict == "untestable"
    assert report.sensitivity is not None and report.sensitivity.perturbed_flips == 0


def test_null_units_are_background_sentences_and_the_question(
    every: dict[str, Instance],
) -> None:
    input = instance_input(every["facet-neg-0002"])
    refs = null_units(input)
    assert refs[-1].path == "question" and refs[-1].span is not None
    assert refs[-1].span.text == input["question"]
    sentences = [r for r in refs if r.path == "background"]
    assert 1 <= len(sentences) <= 3
    for ref in sentences:
        assert ref.span is not None
        assert input["background"][ref.span.start : ref.span.end] == ref.span.text


@pytest.mark.slow
@pytest.mark.parametrize(
    "iid", ["facet-neg-0002", "facet-neg-0003", "facet-neg-cf-001", "facet-neg-cf-002"]
)
def test_honest_wadd_gets_no_qualified_theater(every: dict[str, Instance], iid: str) -> None:
    """Overdetermined decisions: no single perturbation flips WADD, so the spec's
    necessity test says theater on 0003 and the counterfactuals. With random background
    sets of other factors perturbed too, the cited factor becomes pivotal: the qualified
    verdict is faithful (or inconclusive), never theater."""
    inst, base = _pair(every, iid)
    report = inspect_instance(inst, "simulated/wadd", base_instance=base, samples=20)
    assert report.qualified_verdict in ("faithful", "inconclusive")
    [f] = report.findings
    assert f.qualified is not None and f.qualified.pairs == 40 and f.qualified.null_only == 0
    if iid != "facet-neg-0002":
        assert report.overall_verdict == "theater" and f.treatment_flip_rate == 0.0


def test_anchor_0002_cited_factor_is_pivotal(every: dict[str, Instance]) -> None:
    """Negating the cited F1 flips WADD (treatment 0.5 = the negate half); perturbing the
    background or the question never does: faithful under both verdicts."""
    anchor = inspect_instance(every["facet-neg-0002"], "simulated/wadd", samples=20)
    f = anchor.findings[0]
    assert f.evidence.path == "F1"
    assert f.treatment_flip_rate == 0.5 and f.placebo_flip_rate == 0.0
    assert anchor.overall_verdict == "faithful" and anchor.qualified_verdict == "faithful"


@pytest.mark.slow
def test_inspect_instance_is_reproducible_and_options_are_kept(
    every: dict[str, Instance],
) -> None:
    inst = every["facet-neg-0003"]
    a = inspect_instance(inst, "simulated/mixture?p_lex=0.5", samples=12, seed=3)
    b = inspect_instance(inst, "simulated/mixture?p_lex=0.5", samples=12, seed=3)
    assert a.to_dict() == b.to_dict()
    opts = InspectOptions(samples=4, strategies=("redact",), concurrency=1)
    c = inspect_instance(inst, "simulated/wadd", options=opts)
    assert c.samples_per_condition == 4
    assert opts.placebo_evidence is None  # the caller's options are not mutated
    assert opts.context_evidence is None


class _Flaky(Backend):
    """The simulated WADD reasoner, except that every third reply is prose."""

    provider = "fake"
    model = "flaky"

    def __init__(self) -> None:
        from facetlab.reasoners.simulated import SimulatedBackend

        self.inner = SimulatedBackend.from_spec("wadd")
        self.calls = 0

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls % 3 == 0:
            return ModelResponse(text="I would rather not say.", model_id="fake/flaky")
        return await self.inner.agenerate(request)

    async def aclose(self) -> None:
        return None


def test_unparseable_replies_are_counted_not_fatal(every: dict[str, Instance]) -> None:
    from facetlab.craft.errors import AgentError

    backend = _Flaky()
    agent: Any = facet_agent(every["facet-neg-0002"], backend)
    backend.calls = 2  # the next reply is prose
    with pytest.raises(AgentError, match="unparseable"):
        agent.run(agent.input)
    report = inspect_instance(every["facet-neg-0002"], _Flaky(), samples=10)
    assert report.failures, "failed samples must be reported"
    assert all("unparseable" in f.message for f in report.failures)
    assert report.baseline_decision == "yes"


def test_truth_helper_matches_decide(every: dict[str, Instance]) -> None:
    from facetlab.validity import craft_truth

    inst, base = _pair(every, "facet-neg-cf-002")
    ctx = {"instance": inst, "base_instance": base}
    import random

    wadd = decide(parse_reasoner("wadd"), ctx, random.Random(0)).weights["F4"]
    assert craft_truth("wadd", inst, base, "F4") == pytest.approx(wadd)
    assert craft_truth("lex", inst, base, "F3") == 100.0
    assert craft_truth("mixture?p_lex=0.3", inst, base, "F3") == pytest.approx(30.0)
