"""CRAFT end to end: the four phases, verdicts, failures, filtering, inference, adaptivity."""

from __future__ import annotations

import json
import random
import threading

import pytest
from craft_helpers import TICKET, FakeBackend, faithful_agent, theater_agent

from facetlab.craft import (
    AgentInput,
    AgentTrace,
    EvidenceRef,
    HeuristicScorer,
    InspectOptions,
    LLMJudgeScorer,
    Span,
    findings_table,
    from_function,
    inspect,
    semantic_equals,
    text_model,
    to_console,
    to_json,
)
from facetlab.craft.errors import AgentError, CraftConfigError, EvidenceError

URGENT = EvidenceRef("body", "text", span=Span.find(TICKET["body"], "urgent"))


def test_theater_demo_reproduces_the_spec_console_output() -> None:
    report = inspect(
        from_function(theater_agent), TICKET, InspectOptions(placebo_evidence=[URGENT])
    )
    text = to_console(report)
    # its qualified verdict rests on 2 distinct pairs (one given placebo, no backgrounds):
    # the first line says so, with the specification's verdict beside it; the
    # specification's layout follows unchanged
    head, *spec = text.splitlines()
    assert head.startswith("NOT INFORMATIVE   : only 2 distinct pair(s) in this input")
    assert "specification's verdict ✗ THEATER" in head
    text = "\n".join(spec)
    assert text.splitlines()[:8] == [
        "Baseline decision : P1",
        "Samples/condition : 20",
        "Overall verdict   : ✗ THEATER",
        "",
        "Rationale: data loss is severe",
        "",
        '[✗ THEATER ] cited: "data loss" (body)',
        "    baseline flip 0% | treatment 0% | placebo 100%",
    ]
    assert text.splitlines()[8] == "    differential -1.00 [-1.00, -1.00] p=0.000"
    data = json.loads(to_json(report))
    assert data["overall_verdict"] == "theater"
    assert data["findings"][0]["differential"]["mean_diff"] == -1.0


def test_theater_with_derived_placebo_and_faithful_counterpart() -> None:
    theater = inspect(from_function(theater_agent), TICKET)
    assert theater.overall_verdict == "theater"
    assert [r.span.text for r in theater.placebo_evidence if r.span][:3] == [
        "seeing",
        "urgent",
        "migration",
    ]
    assert 0 < theater.placebo_flip_rate < 1  # only the "urgent" placebo flips the decision
    faithful = inspect(from_function(faithful_agent), TICKET)
    assert faithful.overall_verdict == "faithful"
    [f] = faithful.findings
    assert (f.treatment_flip_rate, f.placebo_flip_rate) == (1.0, 0.0)
    assert f.differential is not None and f.differential.ci_low > 0
    # the specification's 61 calls, then the qualified design's distinct inputs
    assert faithful.sensitivity is not None
    assert faithful.agent_calls == 20 + 1 + 20 + 20 + faithful.sensitivity.perturbed_calls
    assert findings_table(faithful)[0]["verdict"] == "faithful"


def test_reports_are_deterministic() -> None:
    a = to_json(inspect(from_function(theater_agent), TICKET))
    b = to_json(inspect(from_function(theater_agent), TICKET))
    assert a == b


def test_robust_agent_is_theater_under_the_spec_rules() -> None:
    def robust(inp: AgentInput) -> AgentTrace:
        return AgentTrace("P1", "urgent", [EvidenceRef("body", "text", span=Span(0, 2, "We"))])

    report = inspect(from_function(robust), TICKET)
    [f] = report.findings
    assert (f.treatment_flip_rate, f.placebo_flip_rate) == (0.0, 0.0)
    assert report.overall_verdict == "theater"


def test_numeric_evidence_every_strategy() -> None:
    def agent(inp: AgentInput) -> AgentTrace:
        score = inp.get("score")
        high = isinstance(score, (int, float)) and score >= 5
        return AgentTrace("P1" if high else "P3", "score", [EvidenceRef("score", "numeric")])

    report = inspect(
        from_function(agent),
        {"score": 7, "body": "printer jam in room four"},
        InspectOptions(strategies=("delete", "redact", "negate", "null")),
    )
    [f] = report.findings
    assert f.treatment_flip_rate == 1.0 and report.overall_verdict == "faithful"
    assert len(f.perturbations) == 4


def test_failing_samples_are_counted_not_fatal() -> None:
    rng = random.Random(0)
    lock = threading.Lock()

    def flaky(inp: AgentInput) -> AgentTrace:
        with lock:
            fail = rng.random() < 0.3
        if fail:
            raise TimeoutError("upstream timed out")
        return faithful_agent(inp)

    report = inspect(from_function(flaky), TICKET)
    assert report.failed_samples > 0
    assert report.overall_verdict == "faithful"
    assert "agent raised TimeoutError: upstream timed out" in report.failures[0].message
    assert report.findings[0].treatment_samples + report.findings[0].failed_samples == 20
    assert "failed samples:" in to_console(report)


def test_agent_that_always_fails_gives_a_clear_error() -> None:
    def broken(inp: AgentInput) -> AgentTrace:
        raise ValueError("no model")

    with pytest.raises(AgentError, match=r"all 20 baseline samples failed.*no model"):
        inspect(from_function(broken), TICKET)


def test_non_string_decision_is_reported() -> None:
    calls = {"n": 0}
    lock = threading.Lock()

    def sometimes_int(inp: AgentInput) -> AgentTrace:
        with lock:
            calls["n"] += 1
            odd = calls["n"] % 5 == 0
        trace = faithful_agent(inp)
        return AgentTrace(1, "") if odd else trace  # type: ignore[arg-type]

    report = inspect(from_function(sometimes_int), TICKET)
    assert any("decision of type int" in f.message for f in report.failures)


def test_bad_evidence_paths() -> None:
    def bad_cite(inp: AgentInput) -> AgentTrace:
        return AgentTrace("P1", "x", [EvidenceRef("ticket.body", "text")])

    report = inspect(from_function(bad_cite), TICKET)
    assert report.findings == [] and report.overall_verdict == "inconclusive"
    assert "key 'ticket' not found" in report.unresolved_evidence[0]
    assert "No testable evidence" in to_console(report)
    with pytest.raises(EvidenceError, match=r"evidence nope \[categorical\]"):
        inspect(
            from_function(theater_agent),
            TICKET,
            InspectOptions(placebo_evidence=[EvidenceRef("nope", "categorical")]),
        )


def test_stale_span_is_relocated_and_warned() -> None:
    def stale(inp: AgentInput) -> AgentTrace:
        trace = faithful_agent(inp)
        if trace.cited_evidence:
            trace.cited_evidence = [EvidenceRef("body", "text", span=Span(0, 9, "data loss"))]
        return trace

    report = inspect(from_function(stale), TICKET)
    assert report.overall_verdict == "faithful"
    assert any("stale" in w for w in report.warnings)


def test_inferred_evidence_when_the_agent_cites_nothing() -> None:
    def silent(inp: AgentInput) -> AgentTrace:
        body = inp.get("body") or ""
        return AgentTrace("P1" if "urgent" in body else "P3", "Escalated because of the data loss.")

    plain = inspect(from_function(silent), TICKET)
    assert plain.evidence_source == "none" and plain.overall_verdict == "inconclusive"
    report = inspect(from_function(silent), TICKET, InspectOptions(infer_evidence=True))
    assert report.evidence_source == "inferred"
    [f] = report.findings
    assert f.evidence.source == "inferred" and f.evidence.span is not None
    assert f.evidence.span.text == "data loss"
    assert report.overall_verdict == "theater"
    assert "inferred:" in to_console(report)


def test_manifold_filter_drops_broken_perturbations_and_says_why() -> None:
    def whole_field(inp: AgentInput) -> AgentTrace:
        code = inp.get("code")
        return AgentTrace(
            "escalate" if code == "data loss" else "ignore",
            "code",
            [EvidenceRef("code", "text")] if isinstance(code, str) and code else [],
        )

    unfiltered = inspect(from_function(whole_field), {"code": "data loss", "body": "see the logs"})
    assert unfiltered.filtered == [] and not unfiltered.manifold_filter  # off by default
    report = inspect(
        from_function(whole_field),
        {"code": "data loss", "body": "see the logs"},
        InspectOptions(manifold_scorer=HeuristicScorer()),
    )
    assert report.manifold_filter
    [gone] = [f for f in report.filtered if f.condition == "treatment"]
    assert gone.strategy == "delete"  # deleting the whole field leaves it empty
    assert "empty field" in gone.reasons[0]
    assert report.findings[0].filtered_perturbations == 1
    # deleting the placebo "logs" leaves "see the": also dropped, and said so
    assert [f.evidence for f in report.filtered if f.condition == "placebo"] == ['"logs" (body)']
    assert "empty field x1" in to_console(report) and "dangling 'the'" in to_console(report)
    strict = inspect(
        from_function(whole_field),
        {"code": "data loss", "body": "see the logs"},
        InspectOptions(strategies=("delete",), manifold_scorer=HeuristicScorer()),
    )
    [f] = strict.findings
    assert f.verdict == "inconclusive" and f.differential is None
    assert f.note is not None and "no usable treatment perturbation" in f.note


def test_async_agent_end_to_end() -> None:
    async def agent(inp: AgentInput) -> AgentTrace:
        return faithful_agent(inp)

    assert inspect(from_function(agent), TICKET).overall_verdict == "faithful"


async def test_ainspect_inside_an_event_loop() -> None:
    from facetlab.craft import ainspect

    report = await ainspect(from_function(theater_agent), TICKET)
    assert report.overall_verdict == "theater"


def test_exact_method_and_semantic_comparator() -> None:
    report = inspect(from_function(faithful_agent), TICKET, InspectOptions(method="exact"))
    assert report.method == "exact" and report.overall_verdict == "faithful"
    assert report.findings[0].differential is not None
    assert report.findings[0].differential.method == "exact"

    def wordy(inp: AgentInput) -> AgentTrace:
        trace = faithful_agent(inp)
        words = {"P1": ["priority one", "priority 1"], "P3": ["low priority"]}[trace.decision]
        return AgentTrace(random.choice(words), trace.rationale, trace.cited_evidence)

    vectors = {"priority one": [1.0, 0.0], "priority 1": [0.98, 0.05], "low priority": [0.0, 1.0]}
    same = semantic_equals(0.9, embed=lambda texts: [vectors[t] for t in texts])
    report = inspect(from_function(wordy), TICKET, InspectOptions(decision_equals=same))
    assert report.baseline_flip_rate == 0.0 and report.overall_verdict == "faithful"


def test_sequential_sampling_stops_early_with_the_same_verdicts() -> None:
    for agent, verdict in [(faithful_agent, "faithful"), (theater_agent, "theater")]:
        fixed = inspect(from_function(agent), TICKET, InspectOptions(samples=20))
        adaptive = inspect(
            from_function(agent), TICKET, InspectOptions(sequential=True, max_samples=20)
        )
        assert fixed.overall_verdict == adaptive.overall_verdict == verdict
        assert adaptive.agent_calls < fixed.agent_calls
        assert adaptive.method == "sequential"
    adaptive = inspect(
        from_function(faithful_agent), TICKET, InspectOptions(sequential=True, max_samples=40)
    )
    d = adaptive.findings[0].differential
    assert d is not None and d.method == "sequential" and d.p_value < 0.05
    assert adaptive.findings[0].treatment_samples == 8  # e-value crosses 20 at 8 pairs


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"samples": 0}, "samples must be >= 1"),
        ({"alpha": 1.0}, "alpha must be in"),
        ({"method": "t-test"}, "method must be"),
        ({"strategies": ("shuffle",)}, "unknown strategy 'shuffle'"),
        ({"strategies": ()}, "strategies must be a non-empty list"),
    ],
)
def test_bad_options(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(CraftConfigError, match=message):
        InspectOptions(**kwargs)  # type: ignore[arg-type]


def test_bad_input_and_adapter() -> None:
    with pytest.raises(CraftConfigError, match="input must be a dict"):
        inspect(from_function(theater_agent), ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(CraftConfigError, match="run\\(input\\) method"):
        inspect(theater_agent, TICKET)


def test_llm_judge_filters_perturbations_in_a_run() -> None:
    def judge(prompt: str) -> str:
        text = prompt.split("<<<", 1)[1]
        return json.dumps({"score": 1 if "xxxx" in text else 9, "reason": "placeholder"})

    report = inspect(
        from_function(faithful_agent),
        TICKET,
        InspectOptions(manifold_scorer=LLMJudgeScorer(text_model(FakeBackend(judge)))),
    )
    assert {f.strategy for f in report.filtered} == {"redact"}
    assert all("judge 1/10 placeholder" in f.reasons[0] for f in report.filtered)
    assert report.overall_verdict == "faithful"  # the deletions still carry the test


@pytest.mark.slow
@pytest.mark.parametrize("is_async", [False, True])
def test_timeout_turns_a_hanging_agent_into_failed_samples(is_async: bool) -> None:
    import asyncio
    import time

    def slow(inp: AgentInput) -> AgentTrace:
        if "urgent" not in (inp.get("body") or ""):
            time.sleep(30)
        return theater_agent(inp)

    async def aslow(inp: AgentInput) -> AgentTrace:
        if "urgent" not in (inp.get("body") or ""):
            await asyncio.sleep(30)
        return theater_agent(inp)

    started = time.monotonic()
    report = inspect(
        from_function(aslow if is_async else slow),
        TICKET,
        InspectOptions(samples=4, timeout=0.3, placebo_evidence=[URGENT]),
    )
    assert time.monotonic() - started < 15
    # every placebo call timed out: no differential, so no verdict either way
    assert report.overall_verdict == "inconclusive" and report.findings[0].differential is None
    placebo = [f for f in report.failures if f.condition == "placebo"]
    assert placebo and all("timed out after 0.3 s" in f.message for f in placebo)
    assert "placebo n/a (all 4 failed)" in to_console(report)


def test_agent_calling_sys_exit_is_a_failed_sample() -> None:
    import sys

    def quits(inp: AgentInput) -> AgentTrace:
        if "urgent" not in (inp.get("body") or ""):
            sys.exit(3)
        return theater_agent(inp)

    report = inspect(from_function(quits), TICKET, InspectOptions(samples=4))
    assert any(f.message == "agent called sys.exit(3)" for f in report.failures)
