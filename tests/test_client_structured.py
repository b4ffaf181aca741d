"""Structured output for CRAFT's LLM agents (issue 18, item 5): the reply's JSON schema in
the provider's own field; a backend without one is refused before any request."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes import FakeLLMServer, FakeRequest

from facetlab.backends import ModelRequest, get_backend
from facetlab.client import ModelClient
from facetlab.craft import InspectOptions, anthropic_adapter, inspect, openai_adapter
from facetlab.craft.adapters.llm import LLMAgentAdapter, reply_schema
from facetlab.craft.errors import CraftConfigError
from facetlab.errors import ConfigError

TICKET = {"body": "An urgent outage: nothing loads.", "queue": "support"}


def answer(request: FakeRequest) -> str:
    urgent = "urgent" in request.prompt
    return json.dumps({"decision": "P1" if urgent else "P3", "rationale": "urgent",
                       "cited_evidence": [{"path": "body", "quote": "urgent"}]})  # fmt: skip


@pytest.mark.slow  # two CRAFT inspections through the SDKs
def test_the_schema_reaches_the_wire_in_each_providers_field() -> None:
    schema = reply_schema(["P1", "P3"])
    with FakeLLMServer(responder=answer) as server:
        gpt = openai_adapter("small-model", base_url=server.openai_base_url, api_key="k",
                             decisions=["P1", "P3"], structured=True)  # fmt: skip
        claude = anthropic_adapter("claude-test", base_url=server.anthropic_base_url,
                                   api_key="k", decisions=["P1", "P3"], structured=True)  # fmt: skip
        for agent in (gpt, claude):
            report = inspect(agent, TICKET, InspectOptions(samples=3))
            assert report.failed_samples == 0
        bodies = {r.api: r.body for r in server.requests}
    assert bodies["openai"]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}  # fmt: skip
    assert bodies["anthropic"]["output_config"] == {
        "format": {"type": "json_schema", "schema": schema}}  # fmt: skip


def test_a_backend_without_structured_output_is_refused_before_any_request() -> None:
    backend = get_backend("simulated/wadd")
    with pytest.raises(CraftConfigError, match="simulated takes no JSON schema"):
        LLMAgentAdapter(backend, structured=True)
    client = ModelClient(backend)
    with pytest.raises(ConfigError, match="structured output: simulated/wadd takes no JSON"):
        asyncio.run(client.generate(ModelRequest("x", output_schema={"type": "object"})))
