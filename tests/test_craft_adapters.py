"""LLM adapters: strict JSON, citation resolution, refusals and malformed replies."""

from __future__ import annotations

import dataclasses
import json

import pytest
from craft_helpers import TICKET, FakeBackend, faithful_llm, theater_llm
from fakes import FakeLLMServer, FakeRequest, Fault

from facetlab.backends.base import ModelRequest, ModelResponse, Usage
from facetlab.client import ModelClient, RetryPolicy
from facetlab.craft import (
    InspectOptions,
    anthropic_adapter,
    bedrock_adapter,
    inspect,
    openai_adapter,
    to_console,
)
from facetlab.craft.adapters.llm import LLMAgentAdapter, build_prompt, parse_reply
from facetlab.craft.errors import AgentOutputError, AgentRefusalError
from facetlab.errors import TransientBackendError

INPUT = {"ticket": {"body": "We are seeing data loss after the urgent migration.", "score": 7}}


def test_prompt_asks_for_strict_json_with_allowed_decisions() -> None:
    prompt = build_prompt(INPUT, task="Triage this ticket.", decisions=["P1", "P3"])
    assert prompt.startswith("Triage this ticket.")
    assert 'exactly one of: "P1", "P3"' in prompt
    assert '"cited_evidence"' in prompt and '"ticket": {' in prompt


def test_parse_reply_resolves_quotes_to_spans() -> None:
    reply = json.dumps(
        {
            "decision": "p1",
            "rationale": "data loss",
            "cited_evidence": [
                {"path": "ticket.body", "quote": "Data Loss"},
                {"path": "ticket.score"},
                {"path": "ticket.title", "quote": "urgent"},
                {"path": "ticket.body", "quote": "corruption"},
                {"nopath": 1},
            ],
        }
    )
    trace = parse_reply(f"```json\n{reply}\n```", INPUT, decisions=["P1", "P3"])
    assert trace.decision == "P1"
    body_ref, score_ref, moved_ref = trace.cited_evidence
    assert body_ref.span is not None and body_ref.span.text == "data loss"
    assert (body_ref.span.start, body_ref.source) == (14, "explicit")
    assert score_ref.kind == "numeric"
    assert moved_ref.path == "ticket.body" and moved_ref.span and moved_ref.span.text == "urgent"
    assert len(trace.warnings) == 3
    assert any("'corruption' does not occur" in w for w in trace.warnings)


@pytest.mark.parametrize(
    ("reply", "error", "message"),
    [
        ("P1 because data loss", AgentOutputError, "not valid JSON"),
        ("I'm sorry, I can't help with that.", AgentRefusalError, "refused"),
        ('["P1"]', AgentOutputError, "expected an object"),
        ('{"decision": 1}', AgentOutputError, "'decision' must be a non-empty string"),
        ('{"decision": "P2"}', AgentOutputError, "not one of"),
        ('{"decision": "P1", "cited_evidence": "body"}', AgentOutputError, "must be a list"),
    ],
)
def test_parse_reply_errors(reply: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_reply(reply, INPUT, decisions=["P1", "P3"])


def test_llm_theater_agent_through_inspect() -> None:
    adapter = anthropic_adapter(backend=FakeBackend(theater_llm), decisions=["P1", "P3"])
    assert isinstance(adapter, LLMAgentAdapter) and adapter.name == "fake/fake-1"
    report = inspect(adapter, TICKET, InspectOptions(samples=8))
    assert report.overall_verdict == "theater"
    assert report.findings[0].evidence.span is not None
    faithful = openai_adapter(backend=FakeBackend(faithful_llm))
    assert inspect(faithful, TICKET, InspectOptions(samples=8)).overall_verdict == "faithful"


def test_refusals_malformed_json_and_backend_errors_are_counted() -> None:
    state = {"n": 0}

    def responder(prompt: str) -> str:
        state["n"] += 1
        if state["n"] % 7 == 0:
            return "not json at all"
        return faithful_llm(prompt)

    report = inspect(
        bedrock_adapter(backend=FakeBackend(responder)), TICKET, InspectOptions(samples=10)
    )
    assert report.failed_samples >= 3
    assert all("not valid JSON" in f.message for f in report.failures)
    assert report.overall_verdict == "faithful"
    assert "failed samples:" in to_console(report)

    refusing = FakeBackend(lambda prompt: "I cannot help", refusal=True)
    with pytest.raises(Exception, match=r"all 3 baseline samples failed.*refused"):
        inspect(anthropic_adapter(backend=refusing), TICKET, InspectOptions(samples=3))

    class Down(FakeBackend):
        async def agenerate(self, request):  # type: ignore[no-untyped-def]
            raise TransientBackendError("503 overloaded", provider="fake", status=503)

    # a provider that stays down is retried by the model client, then the sample fails
    down = Down(faithful_llm)
    client = ModelClient(down, retry=RetryPolicy(max_attempts=3, base_delay_s=0.001))
    with pytest.raises(Exception, match=r"backend error: .*503 overloaded \(gave up after 3"):
        inspect(LLMAgentAdapter(down, client=client), TICKET, InspectOptions(samples=2))


@pytest.mark.slow
def test_through_real_sdk_backends_against_a_local_fake_server() -> None:
    def responder(request: FakeRequest) -> str:
        return theater_llm(request.prompt)

    with FakeLLMServer(responder=responder) as server:
        claude = anthropic_adapter(
            "claude-test", base_url=server.anthropic_base_url, api_key="test-key"
        )
        report = inspect(claude, TICKET, InspectOptions(samples=6, concurrency=4))
        assert report.overall_verdict == "theater" and report.failed_samples == 0
        gpt = openai_adapter("gpt-test", base_url=server.openai_base_url, api_key="test-key")
        report = inspect(gpt, TICKET, InspectOptions(samples=4, sequential=True))
        assert report.overall_verdict == "theater"
        assert {r.api for r in server.requests} == {"anthropic", "openai"}
        server.push(Fault.REFUSAL, Fault.GARBAGE)
        report = inspect(claude, TICKET, InspectOptions(samples=6, concurrency=1))
        # the refusal is an answer (a failed sample); the garbage body is retried by the client
        assert report.failed_samples == 1
        messages = " | ".join(f.message for f in report.failures)
        assert "refused" in messages


def test_a_numeric_confidence_becomes_the_score() -> None:
    reply = '{"decision": "P1", "rationale": "r", "cited_evidence": [], "confidence": 0.8}'
    assert parse_reply(reply, TICKET).score == 0.8
    odd = parse_reply(reply.replace("0.8", '"high"'), TICKET)
    assert odd.score is None and "'confidence' 'high' is not a number" in odd.warnings[0]


@pytest.mark.slow
def test_no_sample_is_lost_to_rate_limits() -> None:
    # issue 18: a provider answering 429 (retry-after 1 s) to every other request
    with FakeLLMServer(
        responder=lambda r: theater_llm(r.prompt), alternate=Fault.RATE_LIMIT, retry_after=1.0
    ) as server:
        claude = anthropic_adapter(
            "claude-test", base_url=server.anthropic_base_url, api_key="test-key"
        )
        report = inspect(claude, TICKET, InspectOptions(samples=3, concurrency=2))
        statuses = [r.status for r in server.requests]
    assert report.failed_samples == 0 and report.overall_verdict == "theater"
    assert statuses.count(429) >= len(statuses) // 2 - 1  # every other request was refused


class PricedBackend(FakeBackend):
    """The fake agent billed as Claude Sonnet 4.6, reporting 300 input / 1000 output tokens."""

    provider = "anthropic"
    model = "claude-sonnet-4-6"

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        response = await super().agenerate(request)
        return dataclasses.replace(response, usage=Usage(300, 1000))


def test_a_budget_stops_calls_before_it_is_passed() -> None:
    backend = PricedBackend(faithful_llm)
    adapter = anthropic_adapter(backend=backend)
    adapter.use_limits(budget_usd=0.05)
    report = inspect(adapter, TICKET, InspectOptions(samples=4))
    worst = adapter.client.worst_cost(ModelRequest(adapter.prompt(TICKET)))
    assert worst is not None and 0.01 < worst < 0.02
    # each call reserves its worst case first: the spend never passes the budget, and
    # calls stop only when the next one's worst case would not fit
    assert adapter.spend_usd <= 0.05 < adapter.spend_usd + 2 * worst
    assert 2 <= len(backend.requests) <= 3
    assert any("budget reached" in f.message for f in report.failures)
