"""``craft --budget-usd --rpm``: the CRAFT command's LLM calls go through the model client."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from facetlab.craft.cli import main

CONFIG = '''
import dataclasses, json
from facetlab.backends.base import Backend, ModelResponse, Usage
from facetlab.craft import anthropic_adapter

class Priced(Backend):
    """Answers like an LLM that decides on "urgent", billed as Claude Sonnet 4.6."""
    provider, model = "anthropic", "claude-sonnet-4-6"
    calls = 0
    async def agenerate(self, request):
        Priced.calls += 1
        urgent = "urgent" in request.prompt
        text = json.dumps({"decision": "P1" if urgent else "P3", "rationale": "urgent",
                           "cited_evidence": [{"path": "body", "quote": "urgent"}]})
        return ModelResponse(text, self.model, usage=Usage(300, 1000))
    async def aclose(self):
        pass

adapter = anthropic_adapter(backend=Priced(), decisions=["P1", "P3"])
input = {"body": "An urgent outage: nothing loads.", "queue": "support"}
'''


def test_budget_stops_sending_before_it_is_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "cfg.py"
    config.write_text(CONFIG)
    code = main([str(config), "--budget-usd", "0.05", "--rpm", "6000", "--samples", "4"])
    err = capsys.readouterr().err
    assert code in (0, 3), err
    spent = float(err.split("spent $", 1)[1].split(" ", 1)[0])
    assert 0 < spent <= 0.05
    assert "call(s) not sent: budget reached" in err
    assert re.search(r"craft: failed agent calls by cause: \d+ x not sent: budget reached", err)


def test_limits_refused_for_an_adapter_that_calls_no_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "plain.py"
    config.write_text(
        "from facetlab.craft import AgentTrace, from_function\n"
        "adapter = from_function(lambda i: AgentTrace('x', 'y', []))\n"
        "input = {'body': 'text here'}\n"
    )
    assert main([str(config), "--rpm", "60"]) == 2
    assert "apply to facetlab's LLM adapters" in capsys.readouterr().err


def test_the_bridge_agent_takes_limits_too(facet_data: Path) -> None:
    from facetlab.craft.bridge import facet_agent
    from facetlab.instances import load_instances

    instance = load_instances(facet_data / "instances")["facet-neg-0002"]
    agent = facet_agent(instance, "simulated/wadd")
    agent.use_limits(budget_usd=0.5, requests_per_minute=600)
    assert agent.client is not None and agent.client.meter.budget_usd == 0.5
    assert agent.client.limiter.limits.requests_per_minute == 600
    assert agent.run(agent.input).decision in ("yes", "no") and agent.spend_usd == 0.0
