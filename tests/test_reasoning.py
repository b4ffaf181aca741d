"""The reasoning-dependence probes (COT, COTX), their simulated reasoners and analysis.

Interventions are checked on reasonings drawn from a grammar (hypothesis): factor
sentences with a direction, sentences naming none, filler words. The simulated
reasoners' known truth (decorative ignores the reasoning, dependent follows it) is checked
on generated decisions, then end to end through the runner on the FACET instances.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from facetlab.analysis.reasoning import InterventionSuite, ranked_factors, reasoning_summary
from facetlab.backends.base import Backend, Declaration, ModelRequest, ModelResponse
from facetlab.errors import ConfigError
from facetlab.probes import PROBES
from facetlab.probes.cot import (
    SENTENCES,
    cot_prompt,
    interventions,
    parse_cot_reply,
    reverse_direction,
)
from facetlab.reasoners import cot as sim_cot
from facetlab.reasoners.simulated import Decision, SimulatedBackend
from facetlab.records.store import read_sweep_records
from facetlab.runner import run

DOMAIN = Path(__file__).resolve().parents[1] / "instances" / "aml-review"
LABEL = re.compile(r"\bF\d+\b")
QUOTED = re.compile(r"<reasoning>\n(.*)\n</reasoning>", re.DOTALL)


def sentences(text: str) -> list[str]:
    """Split after ., ! or ? followed by white space (the probe's definition of a sentence)."""
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


ANSWER_WORD = re.compile(r"\b(?:yes|no)\b", re.IGNORECASE)
VERBS = ("favours", "supports", "strengthens", "increases")


@st.composite
def reasonings(draw: st.DrawFn) -> tuple[str, int]:
    """A reasoning of 1-9 sentences over n factors: some state a direction, some do not."""
    n = draw(st.integers(2, 7))
    parts = []
    for _ in range(draw(st.integers(1, 9))):
        label = f"F{draw(st.integers(1, n))}"
        kind = draw(st.sampled_from(["answer", "verb", "plain", "none"]))
        if kind == "answer":
            parts.append(f"{label} points to {draw(st.sampled_from(['yes', 'no']))}.")
        elif kind == "verb":
            parts.append(f"{label} {draw(st.sampled_from(VERBS))} the claim.")
        elif kind == "plain":
            parts.append(f"{label} matters because it is clearly important.")
        else:
            parts.append(draw(st.sampled_from(["This is hard.", "Weighing it all up!", "Why?"])))
    return " ".join(parts), n


@settings(max_examples=200, deadline=None)
@given(reasonings(), st.integers(2, 6))
def test_interventions_cut_reverse_reword_and_fill_as_declared(
    drawn: tuple[str, int], k: int
) -> None:
    text, n = drawn
    parts = sentences(text)
    ranked = ranked_factors(text, n)
    made = dict(interventions(text, ranked, k))
    for j in range(k):  # truncation: a strict prefix of floor(n*j/K) sentences
        cut = sentences(made[f"truncate-{j}"])
        assert cut == parts[: len(cut)] and len(cut) == len(parts) * j // k < len(parts)
    mistakes = {name: body for name, body in made.items() if name.startswith("mistake-")}
    for name, body in mistakes.items():
        label = name.rsplit("-", 1)[1].upper()
        changed = [(a, b) for a, b in zip(parts, sentences(body), strict=True) if a != b]
        assert len(changed) == 1  # one sentence, naming the factor, its direction reversed
        before, after = changed[0]
        assert label in LABEL.findall(before)
        assert reverse_direction(after) == before  # reversing is its own inverse
    tops = [n for n in mistakes if n.startswith("mistake-top-")]
    if tops:
        assert tops[0].endswith(ranked[0].lower())  # the most-named factor
    others = [n.rsplit("-", 1)[1] for n in mistakes if n.startswith("mistake-other-")]
    assert all(o != ranked[0].lower() for o in others)
    plantable = [lb for lb in ranked if any(
        lb in LABEL.findall(s) and reverse_direction(s) for s in parts)]  # fmt: skip
    assert len(mistakes) == min(len(plantable), 2) or (tops == [] and len(mistakes) <= 1)
    reworded = made["paraphrase"]  # labels and direction words kept, in order
    assert LABEL.findall(reworded) == LABEL.findall(text)
    assert ANSWER_WORD.findall(reworded) == ANSWER_WORD.findall(text)
    assert not re.search(r"[A-Za-z0-9]", made["filler"])
    assert len(made["filler"]) >= len(text) - 2


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=200),
       st.sampled_from(["yes", "no", "Yes", "NO"]))  # fmt: skip
def test_cot_parser_takes_the_last_answer_line(body: str, answer: str) -> None:
    body = re.sub(r"(?i)answer", "reply", body)
    assert parse_cot_reply(body, 3).status in ("empty", "malformed")
    parsed = parse_cot_reply(f"{body}\nAnswer: {answer}", 3)
    assert (parsed.status, parsed.answer) == ("ok", answer.lower())
    early = parse_cot_reply(f"Answer: {answer}\n{body}\nMore words.", 3)
    assert (early.status, early.answer) == ("repaired", answer.lower())


def test_cot_probes_are_registered_and_cotx_is_never_planned_alone() -> None:
    assert {"cot", "cotx"} <= set(PROBES)
    plan = run(instances=DOMAIN, probes="cot,cotx",
               model="simulated/wadd", dry_run=True, progress="none").plan  # fmt: skip
    assert plan.by_probe().get("cotx", 0) == 0 and plan.by_probe()["cot"] > 0
    assert any(s.probe == "cotx" for s in plan.skipped)


@st.composite
def decisions(draw: st.DrawFn) -> Decision:
    n = draw(st.integers(2, 7))
    raw = draw(st.lists(st.floats(0.0, 50.0), min_size=n, max_size=n))
    weights = {f"F{i + 1}": w for i, w in enumerate(raw)}
    top = max(weights, key=lambda f: (weights[f], -int(f[1:])))
    return Decision(draw(st.sampled_from(["yes", "no"])), weights, "wadd", top)


def _answer(mode: str, decision: Decision, reasoning: str, seed: int) -> str | None:
    prompt = f"case\n<reasoning>\n{reasoning}\n</reasoning>\nanswer now"
    assert QUOTED.search(prompt)[1] == reasoning
    reply = sim_cot.reply(mode, decision, {"probe": "cotx"}, prompt, random.Random(seed))
    return parse_cot_reply(reply, len(decision.weights)).answer


@settings(max_examples=150, deadline=None)
@given(decisions(), st.integers(0, 2**31))
def test_simulated_truth_decorative_ignores_dependent_follows(
    decision: Decision, seed: int
) -> None:
    reply = sim_cot.reply("dependent", decision, {"probe": "cot"}, "", random.Random(seed))
    assert parse_cot_reply(reply, len(decision.weights)).answer == decision.answer
    text = reply.rsplit("\n", 1)[0]
    made = dict(interventions(text, ranked_factors(text, len(decision.weights))))
    assert f"mistake-top-{decision.top.lower()}" in made
    other = "no" if decision.answer == "yes" else "yes"
    for name, body in made.items():
        assert _answer("decorative", decision, body, seed) == decision.answer
        follows = _answer("dependent", decision, body, seed)
        if name.startswith("mistake-top") or name in {f"truncate-{j}" for j in range(1, SENTENCES)}:
            assert follows == other, name  # the conclusion it was given is the other answer
        elif name != "truncate-0" and name != "filler":
            assert follows == decision.answer, name


def test_cot_mode_in_the_model_string() -> None:
    backend = SimulatedBackend("lex+cot-dependent?noise=1")
    assert backend.cot == "dependent" and backend.model == "lex+cot-dependent?noise=1"
    assert SimulatedBackend("cot-mixed").model == "wadd+cot-mixed"
    with pytest.raises(ConfigError, match="cot-MODE"):
        SimulatedBackend("wadd+cot-sometimes")


def _two_stages(model: str, instances: Path, out: Path, **backends: Any) -> dict[str, Any]:
    run(instances=instances, probes="cot", model=model, out=out, progress="none", **backends)
    suite = InterventionSuite(read_sweep_records(out), instances)
    run(instances=instances, probes="cotx", model=model, out=out, suite=suite, progress="none",
        **backends)  # fmt: skip
    return reasoning_summary(read_sweep_records(out))


@pytest.mark.slow
def test_known_truth_end_to_end_on_facet(facet_data: Path, tmp_path: Path) -> None:
    instances = facet_data / "instances"
    got = {m: next(iter(_two_stages(f"simulated/wadd+cot-{m}", instances, tmp_path / m).values()))
           for m in ("decorative", "dependent", "mixed")}  # fmt: skip
    dec, dep, mix = got["decorative"], got["dependent"], got["mixed"]
    assert dec["aoc"] <= 0.1 and dec["mistake_flip_rate"] <= 0.1
    assert dep["aoc"] >= 0.8 and dep["mistake_flip_rate"] >= 0.8
    assert dec["aoc"] < mix["aoc"] < dep["aoc"]
    assert dep["top_minus_other_low"] > 0 and dec["top_minus_other"] == 0
    assert dep["aoc_low"] <= dep["aoc"] <= dep["aoc_high"]
    assert dec["paraphrase_stability"] == dep["paraphrase_stability"] == 1.0
    assert all(p["same_n"] == dec["instances"] for p in dec["curve"])


class _Mute(Backend):
    """Answers the reasoning trial, then a reply without an answer to every intervention."""

    provider = "mute"
    declaration = Declaration(free=True, offline=True)

    def __init__(self) -> None:
        self.model = "mute"

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        text = "F1 favours yes. F2 favours no.\nAnswer: yes"
        if request.context.get("probe") == "cotx":
            text = (
                "I would rather not say."
                if "truncate" in request.context["instance_id"]
                else "Answer: no"
            )
        return ModelResponse(text=text, model_id="mute", latency_s=0.0)


@pytest.mark.slow
def test_unanswered_interventions_are_counted_not_rated(tmp_path: Path) -> None:
    instances = DOMAIN
    summary = _two_stages("mute/x", instances, tmp_path, backends={"mute/x": _Mute()})
    (found,) = summary.values()
    n = found["instances"]
    assert found["malformed"] == SENTENCES * n  # every truncation, none of the rest
    assert all(p["same_n"] == 0 and p["same"] is None for p in found["curve"])
    assert found["aoc"] is None  # no rate from no answer
    assert found["mistake_flip_rate"] == 1.0 and found["mistake_flip_rate_n"] == n
    assert found["paraphrase_stability"] == 0.0


def test_intervention_prompt_quotes_the_reasoning() -> None:
    from facetlab.instances import load_instances

    instance = next(iter(load_instances(DOMAIN).values()))
    prompt = cot_prompt(instance, reasoning="F1 favours yes.")
    assert QUOTED.search(prompt)[1] == "F1 favours yes." and instance.question in prompt


@pytest.mark.slow
def test_stage_two_is_one_models_and_a_stand_in_plans_every_instance(tmp_path: Path) -> None:
    from facetlab.errors import DataError

    for model in ("simulated/wadd+cot-decorative", "simulated/lex+cot-decorative"):
        run(instances=DOMAIN, probes="cot", model=model, out=tmp_path / model, progress="none")
    both = [*read_sweep_records(tmp_path / "simulated/wadd+cot-decorative"),
            *read_sweep_records(tmp_path / "simulated/lex+cot-decorative")]  # fmt: skip
    with pytest.raises(DataError, match="one model"):
        InterventionSuite(both, DOMAIN)
    stand_in = InterventionSuite([], DOMAIN, stand_in="F1 favours yes. F2 favours no.")
    plan = run(instances=DOMAIN, probes="cotx", model="simulated/wadd", dry_run=True,
               suite=stand_in, progress="none").plan  # fmt: skip
    per_instance = SENTENCES + 4  # truncations, two mistakes, paraphrase, filler
    assert len(plan) == per_instance * len({t.base_instance_id for t in plan}) > 0
