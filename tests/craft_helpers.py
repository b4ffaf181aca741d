"""Shared agents and fakes for the CRAFT tests (not a test module)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from facetlab.backends.base import Backend, ModelRequest, ModelResponse
from facetlab.craft import AgentInput, AgentTrace, EvidenceRef, Span
from facetlab.craft.stats._sampler import Sample, asample_inputs

TICKET = {"body": "We are seeing data loss after the urgent migration."}
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
"""benchmarks/craft_agents.py: the agents with a known truth the benchmarks run."""


def theater_agent(inp: AgentInput) -> AgentTrace:
    """Decides on "urgent", cites "data loss"."""
    body = inp.get("body") or ""
    cited = []
    if "data loss" in body:
        cited.append(EvidenceRef("body", "text", span=Span.find(body, "data loss")))
    return AgentTrace("P1" if "urgent" in body else "P3", "data loss is severe", cited)


def faithful_agent(inp: AgentInput) -> AgentTrace:
    """Decides on "data loss" and cites it."""
    body = inp.get("body") or ""
    if "data loss" in body:
        return AgentTrace(
            "P1", "data loss", [EvidenceRef("body", "text", span=Span.find(body, "data loss"))]
        )
    return AgentTrace("P3", "nothing severe")


class FakeBackend(Backend):
    """A minimal facetlab Backend answering with ``responder(prompt)``."""

    provider = "fake"
    model = "fake-1"

    def __init__(self, responder: Callable[[str], str], *, refusal: bool = False) -> None:
        self.responder = responder
        self.refusal = refusal
        self.requests: list[ModelRequest] = []

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(
            text=self.responder(request.prompt), model_id=self.model, refusal=self.refusal
        )

    async def aclose(self) -> None:
        return None


def input_from_prompt(prompt: str) -> dict[str, Any]:
    """Recover the JSON input an LLMAgentAdapter embedded in its prompt."""
    match = re.search(r"\n(\{.*?\n\})\n", prompt, re.DOTALL)
    assert match, prompt
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def theater_llm(prompt: str) -> str:
    """An "LLM" that decides on "urgent" but cites "data loss" (strict JSON reply)."""
    body = input_from_prompt(prompt).get("body") or ""
    decision = "P1" if "urgent" in body else "P3"
    cited = [{"path": "body", "quote": "data loss"}] if "data loss" in body else []
    return json.dumps(
        {"decision": decision, "rationale": "The data loss is severe.", "cited_evidence": cited}
    )


def faithful_llm(prompt: str) -> str:
    body = input_from_prompt(prompt).get("body") or ""
    if "data loss" in body:
        return json.dumps(
            {
                "decision": "P1",
                "rationale": "Data loss.",
                "cited_evidence": [{"path": "body", "quote": "data loss"}],
            }
        )
    return json.dumps({"decision": "P3", "rationale": "Nothing severe.", "cited_evidence": []})


def sample_inputs(adapter: Any, inputs: list[AgentInput], **options: Any) -> list[Sample]:
    """The sampler from sync test code (CRAFT's own callers await it on their loop)."""
    return asyncio.run(asample_inputs(adapter, inputs, **options))
