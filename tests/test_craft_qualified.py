"""The qualified verdict: distinct inputs, contextual pairs, exact tests, null agents."""

from __future__ import annotations

import json
import sys
from collections import Counter

import pytest
from craft_helpers import BENCHMARKS, TICKET, faithful_agent, theater_agent

from facetlab.craft import (
    AgentInput,
    AgentTrace,
    EvidenceRef,
    InspectOptions,
    Span,
    from_function,
    inspect,
    inspect_many,
    to_console,
    to_json,
)
from facetlab.craft.null_study import (
    coin_flip_agent,
    constant_agent,
    generate_tickets,
    null_agent_rates,
)
from facetlab.craft.perturb._combine import input_key
from facetlab.craft.perturb.strategies import StrategyPerturber
from facetlab.craft.qualified import Sensitivity, draw_pairs, qualify_all
from facetlab.craft.stats.binomial import (
    clopper_pearson_upper,
    discordant_needed,
    sign_test_p,
)
from facetlab.craft.stats.sequential import sequential_state
from facetlab.craft.stats.significance import two_sample_p

LONG = {
    "body": "Customer reports data loss after the urgent weekend migration; billing exports "
    "fail and dashboards show stale totals."
}


def _cite(body: str) -> list[EvidenceRef]:
    return (
        [EvidenceRef("body", "text", span=Span.find(body, "data loss"))]
        if "data loss" in body
        else []
    )


def urgent_decides(inp: AgentInput) -> AgentTrace:
    body = inp.get("body") or ""
    return AgentTrace("P1" if "urgent" in body else "P3", "data loss", _cite(body))


def test_exact_binomial_tools() -> None:
    assert sign_test_p(6, 0) == pytest.approx(1 / 64, rel=1e-12)
    assert sign_test_p(0, 0) == 1.0 and sign_test_p(3, 3) == pytest.approx(42 / 64)
    # zero successes: 1 - alpha^(1/n), about the rule of three 3/n
    assert clopper_pearson_upper(0, 40, 0.05) == pytest.approx(1 - 0.05 ** (1 / 40), abs=1e-9)
    assert clopper_pearson_upper(40, 40, 0.05) == 1.0
    assert 0.3 < clopper_pearson_upper(5, 20, 0.05) < 0.5
    assert two_sample_p(0, 10, 0, 20, alternative="greater") == 1.0
    # Boschloo is at least as powerful as Fisher: 10/10 vs 0/10
    assert two_sample_p(10, 10, 0, 10, alternative="greater") <= 1 / 184756 + 1e-15
    assert discordant_needed(0.025) == 6 and discordant_needed(0.05) == 5


def test_pairs_never_reuse_an_input() -> None:
    body = LONG["body"]
    cited = EvidenceRef("body", "text", span=Span.find(body, "data loss"))
    words = ["urgent", "weekend", "billing", "dashboards", "stale"]
    units = [EvidenceRef("body", "text", span=Span.find(body, w)) for w in words]
    perturbers = [StrategyPerturber("delete"), StrategyPerturber("redact")]
    pairs = draw_pairs(LONG, [cited], units, [[u] for u in units[:2]], perturbers, pairs=40, seed=1)
    keys = [input_key(x) for p in pairs for x in (p.cited_input, p.null_input)]
    # at most 2 strategies x 24 distinct cited sides here; greedy drawing finds 32
    assert 30 <= len(pairs) <= 40
    assert len(set(keys)) == 2 * len(pairs) and input_key(LONG) not in keys
    assert pairs[0].background == ()  # the first draws are the spec's comparison
    assert any(p.background for p in pairs)
    for p in pairs:
        assert "data loss" not in p.cited_input["body"] and "data loss" in p.null_input["body"]
    # with few units, fewer distinct pairs exist and fewer come back
    few = draw_pairs(
        TICKET,
        [EvidenceRef("body", "text", span=Span.find(TICKET["body"], "data loss"))],
        [],
        [[EvidenceRef("body", "text", span=Span.find(TICKET["body"], "urgent"))]],
        perturbers,
        pairs=40,
        seed=1,
    )
    assert len(few) == 2


def test_qualify_rules() -> None:
    sens = Sensitivity(40, 10, 20, 0, 0.05)
    assert sens.sensitive and not sens.nothing_flips
    assert qualify_all([[(True, False)] * 6], sens, alpha=0.05, margin=0.2)[0].verdict == "faithful"
    assert (
        qualify_all([[(True, False)] * 5], sens, alpha=0.05, margin=0.2)[0].verdict
        == "inconclusive"
    )
    theater = qualify_all([[(False, False)] * 30], sens, alpha=0.05, margin=0.2)[0]
    assert theater.verdict == "theater" and theater.cited_only_upper < 0.2
    few = qualify_all([[(False, False)] * 8], sens, alpha=0.05, margin=0.2)[0]
    assert few.verdict == "inconclusive" and few.cited_only_upper > 0.2
    assert few.detectable_rate == 6 / 8 and "could be up to" in few.reason
    blind = Sensitivity(40, 0, 20, 0, 0.05)
    assert (
        qualify_all([[(False, False)] * 30], blind, alpha=0.05, margin=0.2)[0].verdict
        == "untestable"
    )
    unanswered = Sensitivity(0, 0, 20, 0, 0.05)  # every perturbed call failed: no data
    assert qualify_all([[]], unanswered, alpha=0.05, margin=0.2)[0].verdict == "inconclusive"
    noisy = Sensitivity(40, 2, 20, 1, 0.05)  # flips no more often than re-asking does
    assert (
        qualify_all([[(False, False)] * 30], noisy, alpha=0.05, margin=0.2)[0].verdict
        == "inconclusive"
    )


def test_verdicts_of_reference_agents() -> None:
    faithful = inspect(from_function(faithful_agent), TICKET)
    assert (faithful.overall_verdict, faithful.qualified_verdict) == ("faithful", "faithful")
    # the spec's theater demo rests on 2 distinct inputs; backgrounds of matched null
    # units give 10 and 12 distinct pairs on the two sides, enough to bound its effect
    theater = inspect(from_function(theater_agent), TICKET)
    assert theater.overall_verdict == "theater" and theater.qualified_verdict == "theater"
    assert theater.findings[0].distinct_perturbations == 2
    # with more units, distinct pairs on both sides show the cited item adds nothing
    rich = inspect(from_function(urgent_decides), LONG)
    [f] = rich.findings
    assert rich.qualified_verdict == "theater" and f.qualified is not None
    # no cited-only flip: a deletion no longer re-capitalises the next word ("urgent"),
    # which this case-sensitive agent would then miss
    assert f.qualified.pairs >= 8 and f.qualified.cited_only == 0
    # a robust agent: the spec says theater, the qualified verdict untestable
    robust = inspect(constant_agent(), TICKET)
    assert robust.overall_verdict == "theater" and robust.qualified_verdict == "untestable"


def test_qualified_verdict_in_json_and_console() -> None:
    report = inspect(from_function(theater_agent), TICKET)
    data = json.loads(to_json(report))
    assert data["qualified_verdict"] == "theater"
    finding = data["findings"][0]
    assert finding["qualified_verdict"] == "theater"
    assert finding["qualified"]["pairs"] == 10 and finding["distinct_perturbations"] == 2
    assert finding["qualified"]["ci_low"] < 0 and finding["qualified"]["mean_differential"] <= 0
    assert data["sensitivity"]["sensitive"] is True
    assert data["sensitivity"]["unit"] == "distinct perturbed input"
    text = to_console(report)
    assert "Qualified verdict : ✗ THEATER" in text and "distinct perturbations: 2" in text
    assert "over 10 distinct pairs (re-asks are not observations)" in text


def test_score_changes_are_tested_too() -> None:
    def scored(inp: AgentInput) -> AgentTrace:
        body = inp.get("body") or ""
        score = 0.9 if "data loss" in body.lower() else 0.2
        return AgentTrace("P1" if score > 0.5 else "P3", "data loss", _cite(body), score=score)

    report = inspect(from_function(scored), LONG)
    q = report.findings[0].qualified
    assert q is not None and q.score is not None
    assert q.score.cited_larger == q.score.pairs == 18 and q.score.p_value < 1e-5
    assert "score moved more for cited side in 18/18" in to_console(report)


@pytest.mark.slow
def test_coin_flip_agent_is_rarely_called_faithful() -> None:
    """The deterministic coin-flip agent: any faithful verdict is wrong. Its pairs are
    independent fair coins, so the qualified false-faithful rate is at most alpha/2 = 2.5%;
    the specification's verdict, on a handful of distinct inputs, is far above it."""
    rates = null_agent_rates(coin_flip_agent, salts=range(40), input=LONG)
    assert rates.mean_pairs >= 8
    assert rates.qualified["faithful"] <= 0.05
    assert rates.spec["faithful"] >= 0.1


def test_sequential_threshold_is_two_over_alpha() -> None:
    # E(7 one-sided pairs) = 31.9 would pass 1/alpha = 20 but not 2/alpha = 40
    seven = sequential_state([True] * 7, [False] * 7, 0.05)
    eight = sequential_state([True] * 8, [False] * 8, 0.05)
    assert seven.threshold == 40 and not seven.rejects_greater and seven.p_value > 0.05
    assert eight.rejects_greater and eight.p_value < 0.05


def test_options_reject_non_finite_and_bad_types() -> None:
    from facetlab.craft.errors import CraftConfigError

    for bad in (
        {"alpha": float("nan")},
        {"equivalence_margin": 0.0},
        {"timeout": 0},
        {"timeout": float("inf")},
        {"samples": 2.5},
        {"contextual_pairs": 0},
    ):
        with pytest.raises(CraftConfigError):
            InspectOptions(**bad)  # type: ignore[arg-type]


@pytest.mark.slow
def test_reasks_are_the_noise_sample_not_observations_of_the_design() -> None:
    """--samples changes no pair of the design; it only sizes the agent-noise sample."""
    for agent in (urgent_decides, faithful_agent, theater_agent):
        a = inspect(from_function(agent), LONG, InspectOptions(samples=3))
        b = inspect(from_function(agent), LONG, InspectOptions(samples=4))
        counts = [
            [(q.pairs, q.cited_only, q.null_only, q.both) for q in (f.qualified,) if q]
            for r in (a, b)
            for f in r.findings
        ]
        assert counts[: len(a.findings)] == counts[len(a.findings) :]
    # theater needs the agent's noise to be known: fewer re-asks, weaker evidence of it
    one = inspect(from_function(urgent_decides), LONG, InspectOptions(samples=1))
    many = inspect(from_function(urgent_decides), LONG, InspectOptions(samples=20))
    assert one.qualified_verdict == "inconclusive" and many.qualified_verdict == "theater"
    assert "sensitivity not shown" in one.findings[0].qualified.reason  # type: ignore[union-attr]


def test_the_reask_rate_is_an_estimate_not_a_constant() -> None:
    # issue 28: 1 flip in 58 perturbed inputs against 0 of 20 re-asks read as p=0.0000 when
    # the re-ask rate was taken as known; Boschloo's two-sample test does not call it shown
    assert not Sensitivity(58, 1, 20, 0, 0.05).sensitive
    assert Sensitivity(32, 17, 20, 0, 0.05).sensitive  # the demo's theater agent
    assert not Sensitivity(32, 17, 3, 0, 0.05).sensitive  # the same with 3 re-asks
    assert Sensitivity(32, 17, 5, 0, 0.05).sensitive  # 5 buy it back


def test_agent_driven_by_a_word_beyond_the_placebo_five_is_not_untestable() -> None:
    body = LONG["body"]

    def seventh_word(inp: AgentInput) -> AgentTrace:
        text = inp.get("body") or ""
        return AgentTrace("P1" if "stale" in text else "P3", "data loss", _cite(text))

    assert "stale" in body
    report = inspect(from_function(seventh_word), LONG)
    assert report.qualified_verdict != "untestable"
    assert report.sensitivity is not None and report.sensitivity.perturbed_flips > 0


def test_any_edit_agent_is_not_called_theater_on_one_input() -> None:
    original = input_key(LONG)

    def any_edit(inp: AgentInput) -> AgentTrace:
        text = inp.get("body") or ""
        return AgentTrace("P1" if input_key(inp) == original else "P3", "data loss", _cite(text))

    [finding] = inspect(from_function(any_edit), LONG).findings
    assert finding.qualified is not None
    assert finding.qualified.verdict == "inconclusive"
    assert finding.qualified.reason.startswith("not specific")


def test_theater_roll_up_is_holm_corrected_across_cited_items() -> None:
    from facetlab.craft.qualified import qualify_all

    s = Sensitivity(
        perturbed_calls=60, perturbed_flips=20, baseline_calls=20, baseline_flips=0, alpha=0.05
    )
    # each item alone: 0 cited-only flips in 14 pairs, upper bound 0.193 < 0.2 (p = 0.044)
    design = [(False, True)] * 4 + [(False, False)] * 10
    alone = qualify_all([design], s, alpha=0.05, margin=0.2)
    assert [q.verdict for q in alone] == ["theater"]
    three = qualify_all([design] * 3, s, alpha=0.05, margin=0.2)
    assert [q.verdict for q in three] == ["inconclusive"] * 3  # 0.044 > 0.05 / 3
    strong = [(False, True)] * 4 + [(False, False)] * 26  # p = 0.0012 each: all survive Holm
    assert [q.verdict for q in qualify_all([strong] * 3, s, alpha=0.05, margin=0.2)] == [
        "theater"
    ] * 3


def test_qualify_all_tests_each_design_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import facetlab.craft.qualified as qualified

    calls: dict[str, int] = {"sign": 0, "upper": 0}
    sign, upper = qualified.sign_test_p, qualified.clopper_pearson_upper

    def counting_sign(s: int, f: int) -> float:
        calls["sign"] += 1
        return sign(s, f)

    def counting_upper(k: int, n: int, alpha: float) -> float:
        calls["upper"] += 1
        return upper(k, n, alpha)

    monkeypatch.setattr(qualified, "sign_test_p", counting_sign)
    monkeypatch.setattr(qualified, "clopper_pearson_upper", counting_upper)
    s = Sensitivity(
        perturbed_calls=60, perturbed_flips=20, baseline_calls=20, baseline_flips=0, alpha=0.05
    )
    designs = [[(True, False)] * 7 + [(False, False)] * 5, [(False, True)] * 4, []]
    found = qualified.qualify_all(designs, s, alpha=0.05, margin=0.2)
    assert [q.verdict for q in found] == ["faithful", "inconclusive", "inconclusive"]
    assert calls == {"sign": 3, "upper": 3}


# -- issue 28: agents with structure (benchmarks/craft_agents.py) ------------------------------

sys.path.insert(0, str(BENCHMARKS))
import craft_agents  # noqa: E402  (benchmark fixtures, not the package)


@pytest.mark.slow
def test_a_position_driven_agent_meets_placebos_from_its_own_sentence() -> None:
    """It decides on the first sentence's length; same-sentence nulls move it alike."""
    report = inspect(
        craft_agents.position_agent(0),
        dict(craft_agents.ONE_TICKET),
        InspectOptions(seed=1, concurrency=1),
    )
    assert report.qualified_verdict != "faithful"
    q = report.findings[0].qualified
    assert q is not None and q.note is None  # its nulls were location-matched
    assert q.null_only > 0  # same-sentence nulls flip it too


@pytest.mark.slow
def test_a_negation_driven_agent_is_theater_and_negate_alone_says_why_not() -> None:
    agent, ticket = craft_agents.negation_agent(), dict(craft_agents.NEGATION_TICKET)
    assert inspect(agent, ticket, InspectOptions(concurrency=1)).qualified_verdict == "theater"
    only = inspect(agent, ticket, InspectOptions(strategies=("negate",), concurrency=1))
    assert only.qualified_verdict == "untestable"
    assert "add 'delete' or 'redact'" in (only.findings[0].qualified.reason or "")  # type: ignore[union-attr]


@pytest.mark.slow
def test_padded_citations_mean_the_same_in_both_designs() -> None:
    """Four cited spans, one decides: the set is faithful, one input or many."""
    one = inspect(craft_agents.padded_agent(), dict(craft_agents.ONE_TICKET))
    many = inspect_many(
        craft_agents.padded_agent(), generate_tickets(30, 5), InspectOptions(samples=2)
    )
    assert one.qualified_verdict == many.qualified_verdict == "faithful"
    assert one.citation_set is not None and len(one.findings) == 4
    # the padding: units that carry no weight on their own are not faithful alone
    assert [f.qualified_verdict for f in one.findings].count("faithful") == 1


def test_the_specifications_quickstart_reports_failed_samples_as_failed() -> None:
    """The spec's agent calls body.index("urgent"): every input without it fails."""

    def my_agent(inp: AgentInput) -> AgentTrace:
        body: str = inp.get("body", "")
        decision = "P1" if "urgent" in body else "P3"
        idx = body.index("urgent")
        return AgentTrace(
            decision=decision,
            rationale="Assigned P1 due to urgency.",
            cited_evidence=[EvidenceRef("body", "text", "explicit", Span(idx, idx + 6, "urgent"))],
        )

    report = inspect(from_function(my_agent), {"body": "This is an urgent outage."})
    assert report.failed_samples > 0
    assert report.qualified_verdict != "untestable"  # failed calls are not no-flips
    reason = report.findings[0].qualified.reason  # type: ignore[union-attr]
    assert "failed" in reason and "is not a no-flip" in reason and "ValueError" in reason
    text = to_console(report)
    assert "treatment n/a (all 20 failed)" in text and "failed samples:" in text


@pytest.mark.slow
def test_a_noisy_input_blind_agent_is_not_called_theater_on_one_input() -> None:
    """Reduced benchmark: 5% noise, 3 and 20 re-asks, 15 seeds each (issue 28: 14-55%)."""
    for samples in (3, 20):
        verdicts = Counter(
            inspect(
                craft_agents.input_blind_agent(seed, 0.05),
                dict(craft_agents.ONE_TICKET),
                InspectOptions(samples=samples, seed=seed),
            ).qualified_verdict
            for seed in range(15)
        )
        assert verdicts["theater"] == 0, (samples, verdicts)
