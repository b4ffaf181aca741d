"""Inference across inputs: matched placebos, the population verdict, power, stability."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from craft_helpers import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))
from craft_agents import (
    any_edit_agent,
    faithful_triage_agent,
    hash_coin_agent,
    input_blind_agent,
    length_parity_agent,
    position_agent,
    theater_triage_agent,
)

from facetlab.craft import AgentTrace, EvidenceRef, InspectOptions, Span, from_function
from facetlab.craft.errors import CraftConfigError
from facetlab.craft.evidence.matching import PER_SIDE, matched_placebos
from facetlab.craft.null_study import constant_agent, generate_tickets
from facetlab.craft.population import (
    InputOutcome,
    inspect_many,
    load_inputs,
    mean_differential_ci,
    population_to_console,
    population_to_json,
    population_verdict,
)
from facetlab.craft.power import (
    detectable_differential,
    sign_test_power,
    smallest_significant_differential,
)
from facetlab.craft.stats.binomial import (
    binom_sf,
    clopper_pearson_lower,
    clopper_pearson_upper,
    holm,
    sign_test_p,
)

TICKETS = generate_tickets(30, seed=7)
FAST = InspectOptions(samples=2, seed=3, concurrency=1)


# -- exact tests for any number of pairs ---------------------------------------------------


@pytest.mark.parametrize("n", [1_023, 1_024, 1_100, 5_000, 200_000])
def test_sign_test_is_finite_for_any_number_of_pairs(n: int) -> None:
    all_one_way = sign_test_p(n, 0)
    balanced = sign_test_p(n // 2, n - n // 2)
    assert all_one_way == pytest.approx(0.0, abs=1e-300)
    assert 0.4 < balanced <= 0.6


def test_log_space_tails_match_integer_arithmetic() -> None:
    import math

    for n in (7, 40, 300):
        for k in range(0, n + 1, max(1, n // 9)):
            exact = sum(math.comb(n, j) for j in range(k, n + 1)) / (1 << n)
            assert binom_sf(k, n, 0.5) == pytest.approx(exact, rel=1e-9, abs=1e-300)
    assert clopper_pearson_upper(10, 5000, 0.05) < 0.004
    assert clopper_pearson_lower(4990, 5000, 0.05) > 0.996


def test_holm_controls_the_family() -> None:
    assert holm([0.001, 0.02, 0.04], 0.05) == [True, True, True]
    assert holm([0.02, 0.02, 0.02], 0.05) == [False, False, False]
    assert holm([], 0.05) == []


# -- matched placebos ----------------------------------------------------------------------


def test_matched_placebos_same_size_each_side_nearest_first_never_across_a_sentence() -> None:
    for ticket in TICKETS:
        refs = _cited(ticket)
        cited = refs[0]
        assert cited.span is not None
        sides = matched_placebos(ticket, cited, refs)
        assert sides and set(sides) <= {"before", "after"}
        body = ticket["body"]
        width = len(cited.span.text.split())
        for side, units in sides.items():
            spans = [u.span for u in units if u.span is not None]
            assert len(spans) == len(units) <= PER_SIDE
            for s in spans:
                assert len(s.text.split()) == width
                assert not any(ch in s.text for ch in ".!?")  # never crosses a sentence end
                assert s.end <= cited.span.start if side == "before" else s.start >= cited.span.end
            assert body[spans[0].start : spans[0].end] == spans[0].text


def test_numeric_cited_unit_is_matched_by_a_numeric_field() -> None:
    inp = {"severity": 4, "age_days": 12, "tier": "gold", "body": "Some text here please"}
    cited = EvidenceRef("severity", "numeric")
    assert [r.path for r in matched_placebos(inp, cited, [cited])["field"]] == ["age_days"]


def test_inspect_many_matches_each_cited_unit_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import facetlab.craft.population as population

    built: list[int] = []
    real = population.matched_placebos

    def counting(*args: object, **kwargs: object) -> dict[str, list[EvidenceRef]]:
        built.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(population, "matched_placebos", counting)
    report = inspect_many(faithful_triage_agent(1, 0.9), TICKETS[:6], FAST)
    cited = [o for o in report.outcomes if o.cited is not None]
    assert cited and len(built) == len(cited)


def _cited(ticket: dict[str, str]) -> list[EvidenceRef]:
    from facetlab.craft.null_study import cite_symptom

    return cite_symptom(ticket)


# -- the population verdict ----------------------------------------------------------------


def test_faithful_agent_found_across_inputs() -> None:
    report = inspect_many(faithful_triage_agent(1, 0.9), TICKETS, FAST)
    assert report.qualified_verdict == "faithful"
    assert report.usable == 30 and report.ci_low is not None and report.ci_low > 0
    assert "more often than perturbing matched uncited units on every side" in report.reading


def test_theater_agent_called_theater_with_a_true_sentence() -> None:
    report = inspect_many(theater_triage_agent(), TICKETS, FAST)
    assert report.qualified_verdict == "theater"
    assert report.cited_flip_rate == 0.0 and (report.rest_flip_rate or 0) > 0.2


def test_any_edit_agent_is_not_specific_not_theater() -> None:
    report = inspect_many(any_edit_agent(TICKETS), TICKETS, FAST)
    assert report.qualified_verdict == "inconclusive"
    assert report.reading.startswith("not specific")
    assert report.cited_flip_rate == 1.0 and report.placebo_flip_rate == 1.0


def test_constant_agent_is_untestable() -> None:
    report = inspect_many(constant_agent(), TICKETS, FAST)
    assert report.qualified_verdict == "untestable"


def test_untestable_when_no_input_cites_anything() -> None:
    agent = from_function(lambda inp: AgentTrace("P1"))
    report = inspect_many(agent, TICKETS[:5], FAST)
    assert report.qualified_verdict == "untestable" and "cited nothing" in report.reading


def test_reasks_add_no_evidence_for_a_deterministic_agent() -> None:
    for make in (
        lambda: hash_coin_agent(5),
        lambda: theater_triage_agent(),
        lambda: faithful_triage_agent(2, 0.5),
    ):
        a = inspect_many(
            make(), TICKETS, InspectOptions(samples=3, seed=9, concurrency=1)
        ).to_dict()
        b = inspect_many(
            make(), TICKETS, InspectOptions(samples=4, seed=9, concurrency=1)
        ).to_dict()
        for key in ("reasks", "agent_calls", "decisions"):
            a.pop(key), b.pop(key)
        for row in a["outcomes"] + b["outcomes"]:
            row.pop("reasks")
        assert a == b


def test_seed_fixes_every_random_choice() -> None:
    def run(seed: int) -> list[tuple[object, ...]]:
        r = inspect_many(hash_coin_agent(1), TICKETS, InspectOptions(samples=1, seed=seed))
        return [
            (o.cited, o.placebos, o.strategy, o.cited_flip, o.placebo_flips) for o in r.outcomes
        ]

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_inputs_from_jsonl_and_folder(tmp_path: Path) -> None:
    jsonl = tmp_path / "tickets.jsonl"
    jsonl.write_text("\n".join(json.dumps(t) for t in TICKETS[:4]) + "\n", encoding="utf-8")
    folder = tmp_path / "many"
    folder.mkdir()
    for i, t in enumerate(TICKETS[:3]):
        (folder / f"{i:02d}.json").write_text(json.dumps(t), encoding="utf-8")
    assert load_inputs(jsonl) == TICKETS[:4]
    assert load_inputs(folder) == TICKETS[:3]
    report = inspect_many(faithful_triage_agent(1, 0.9), str(jsonl), FAST)
    assert report.inputs == 4 and any("cannot reach" in w for w in report.warnings)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"body": "x y"}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(CraftConfigError, match=r"bad.jsonl:2: each input must be a JSON object"):
        load_inputs(bad)
    with pytest.raises(CraftConfigError, match="not found"):
        load_inputs(tmp_path / "missing.jsonl")


def test_report_renders_and_json_has_top_level_verdict() -> None:
    report = inspect_many(theater_triage_agent(), TICKETS, FAST)
    data = json.loads(population_to_json(report))
    assert data["qualified_verdict"] == "theater" and data["unit_of_inference"] == "input"
    assert len(data["outcomes"]) == 30
    text = population_to_console(report)
    assert "Qualified verdict : ✗ THEATER" in text and "re-asks are not observations" in text


def test_verdict_rules_on_hand_made_outcomes() -> None:
    def o(c: bool, p: bool, r: bool | None = None, j: bool | None = None) -> InputOutcome:
        sides = {"before": p, "after": False}
        return InputOutcome(
            0, "P1", 1, 0, "c", {"before": "p", "after": "q"}, "delete", c, sides, r, j
        )

    assert population_verdict([o(True, False)] * 6, alpha=0.05, margin=0.2)[0] == "faithful"
    assert population_verdict([o(True, False)] * 5, alpha=0.05, margin=0.2)[0] == "inconclusive"
    assert population_verdict([o(False, False, True)] * 14, alpha=0.05, margin=0.2)[0] == "theater"
    assert (
        population_verdict([o(False, False, True)] * 13, alpha=0.05, margin=0.2)[0]
        == "inconclusive"
    )
    assert (
        population_verdict([o(False, False, False)] * 40, alpha=0.05, margin=0.2)[0] == "untestable"
    )
    # a placebo before the cited unit flips with it: the side that shares its place blocks faithful
    assert population_verdict([o(True, True)] * 40, alpha=0.05, margin=0.2)[0] == "inconclusive"
    # only the joint perturbation flips: sufficient, not necessary (never theater)
    verdict, reading, _ = population_verdict(
        [o(False, False, False, True)] * 40, alpha=0.05, margin=0.2
    )
    assert verdict == "inconclusive" and reading.startswith("sufficient, not necessary")


@pytest.mark.slow
def test_mean_differential_ci_covers() -> None:
    rng = random.Random(0)
    misses = 0
    for _ in range(300):
        draws = [rng.random() for _ in range(30)]
        plus = sum(d < 0.3 for d in draws)
        minus = sum(d > 0.9 for d in draws)
        lo, hi = mean_differential_ci(plus, minus, 30, 0.95)
        misses += not lo <= 0.2 <= hi
    assert misses / 300 <= 0.05


def test_power_functions() -> None:
    assert sign_test_power(30, cited_rate=0.5) >= 0.8
    assert sign_test_power(10, cited_rate=0.2) < 0.05
    assert smallest_significant_differential(5) is None
    assert smallest_significant_differential(60) == 0.1
    d30, d100 = detectable_differential(30), detectable_differential(100)
    assert d30 is not None and d100 is not None and d100 < d30


@pytest.mark.slow
def test_null_agents_rarely_get_a_verdict_reduced_benchmark() -> None:
    """A reduced ``benchmarks/craft_population.py``: 5 null agents, 30 inputs, 40 seeds."""
    makers = {
        "coin": lambda s, t: hash_coin_agent(s),
        "parity": lambda s, t: length_parity_agent(s),
        "blind": lambda s, t: input_blind_agent(s),
        "edit": lambda s, t: any_edit_agent(t),
        "first sentence": lambda s, t: position_agent(s),  # issue 28: was faithful 99.5%
    }
    for name, make in makers.items():
        counts: Counter[str] = Counter()
        for seed in range(40):
            tickets = generate_tickets(30, seed=1000 + seed)
            options = InspectOptions(samples=2, seed=seed, concurrency=1)
            counts[inspect_many(make(seed, tickets), tickets, options).qualified_verdict] += 1
        assert counts["faithful"] <= 3 and counts["theater"] <= 3, (name, counts)


@pytest.mark.slow
def test_exact_tests_agree_with_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for k, n in [(0, 14), (3, 10), (9, 9), (40, 1500)]:
        ci = stats.binomtest(k, n).proportion_ci(0.90)  # two-sided 90% = one-sided 95% each
        assert clopper_pearson_upper(k, n, 0.05) == pytest.approx(ci.high, abs=1e-9)
        assert clopper_pearson_lower(k, n, 0.05) == pytest.approx(ci.low, abs=1e-9)
    for greater, less in [(6, 0), (20, 11), (1100, 1000)]:
        expected = stats.binomtest(greater, greater + less, alternative="greater").pvalue
        assert sign_test_p(greater, less) == pytest.approx(expected, rel=1e-9)


def test_input_blind_random_agent_reads_as_noisy() -> None:
    options = InspectOptions(samples=3, seed=3, concurrency=1)
    report = inspect_many(input_blind_agent(3), generate_tickets(30, 3), options)
    assert report.qualified_verdict == "inconclusive"
    assert report.reading.startswith("noisy") and (report.reask_flip_rate or 0) > 0


@pytest.mark.parametrize(
    "option",
    [
        {"placebo_evidence": [EvidenceRef("body", "text", span=Span(0, 6, "Ticket"))]},
        {"context_evidence": []},
        {"sequential": True},
    ],
)
def test_one_input_options_are_refused_across_inputs(option: dict[str, object]) -> None:
    with pytest.raises(CraftConfigError, match="one input"):
        inspect_many(faithful_triage_agent(1, 0.9), TICKETS[:3], InspectOptions(**option))  # type: ignore[arg-type]
