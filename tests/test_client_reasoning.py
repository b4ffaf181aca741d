"""Reasoning settings (issue 18, item 4): on the wire in each provider's own field, or
refused before any request; reasoning tokens and thinking text recorded and priced; a
reply emptied by reasoning is not ``ok``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from fakes import FakeLLMServer, Fault
from fakes.server import THINKS_TOKENS, THOUGHT
from reliability_helpers import cli, instances_folder

from facetlab.backends.base import SamplingParams
from facetlab.backends.bedrock import BedrockBackend
from facetlab.errors import ConfigError
from facetlab.runner import run


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))]


def sweep(tmp: Path, model: str, sampling: SamplingParams, **kw: Any) -> Any:
    kw.setdefault("console", io.StringIO())
    return run(instances_folder(tmp / "i", 2), "p1", model, out=tmp / "o",
               sampling=sampling, progress="none", **kw)  # fmt: skip


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "test-key")


@pytest.mark.parametrize(
    ("model", "api", "field", "value"),
    [
        ("anthropic/claude-test", "anthropic", "output_config", {"effort": "high"}),
        ("openai/fake-model", "openai", "reasoning_effort", "high"),
        ("gemini/gemini-2.5-pro", "openai", "reasoning_effort", "high"),
        ("ollama/llama3.1", "openai", "reasoning_effort", "high"),
    ],
)
@pytest.mark.usefixtures("keys")
def test_effort_high_reaches_the_wire_in_the_providers_field(
    model: str, api: str, field: str, value: Any, tmp_path: Path
) -> None:
    with FakeLLMServer() as server:
        url = server.anthropic_base_url if api == "anthropic" else server.openai_base_url
        result = sweep(tmp_path, model, SamplingParams(effort="high"), base_url=url)
        bodies = [r.body for r in server.requests]
    assert result.stats.ok == 2 and len(bodies) == 2
    assert all(b[field] == value for b in bodies)
    assert all(r["params"]["effort"] == "high" for r in records(tmp_path / "o"))


@pytest.mark.parametrize(
    ("model", "api", "sampling", "message"),
    [
        ("openai/fake-model", "openai", SamplingParams(thinking=2048, max_tokens=4096),
         "--thinking 2048: openai does not take it"),
        ("gemini/gemini-2.5-pro", "openai", SamplingParams(effort="max"),
         "--effort max: gemini does not take it (it takes: low, medium, high)"),
        ("ollama/llama3.1", "openai", SamplingParams(thinking="adaptive"),
         "--thinking adaptive: ollama does not take it"),
        ("anthropic/claude-test", "anthropic", SamplingParams(thinking=512),
         "at least 1024 tokens and below --max-tokens"),
    ],
)  # fmt: skip
@pytest.mark.usefixtures("keys")
def test_unsupported_settings_are_refused_with_zero_requests(
    model: str, api: str, sampling: SamplingParams, message: str, tmp_path: Path
) -> None:
    with FakeLLMServer() as server:
        url = server.anthropic_base_url if api == "anthropic" else server.openai_base_url
        with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
            sweep(tmp_path, model, sampling, base_url=url)
        assert server.requests == []
    assert not (tmp_path / "o" / "records").exists()


def _bedrock(tmp_path: Path, sampling: SamplingParams, replies: int) -> list[dict[str, Any]]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1",
                          aws_access_key_id="AKIAFAKE", aws_secret_access_key="x")  # fmt: skip
    bodies: list[dict[str, Any]] = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse",
        lambda params, **_: bodies.append(dict(params)),
    )
    reply = {
        "output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": THOUGHT, "signature": "s"}}},
            {"text": "F1"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 100, "outputTokens": 90, "totalTokens": 190},
        "metrics": {"latencyMs": 12},
    }  # fmt: skip
    model = "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0"
    backend = BedrockBackend(model.partition("/")[2], client=client)
    with Stubber(client) as stubber:
        for _ in range(replies):
            stubber.add_response("converse", reply)
        sweep(tmp_path, model, sampling, backends={model: backend})
    return bodies


def test_bedrock_thinking_on_the_wire_and_effort_refused(tmp_path: Path) -> None:
    bodies = _bedrock(tmp_path, SamplingParams(thinking=2048, max_tokens=4096), 2)
    assert [b["additionalModelRequestFields"] for b in bodies] == [
        {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    ] * 2
    assert all(r["thinking"] == THOUGHT for r in records(tmp_path / "o"))
    with pytest.raises(ConfigError, match="--effort high: bedrock does not take it"):
        _bedrock(tmp_path / "again", SamplingParams(effort="high"), 0)


@pytest.mark.usefixtures("keys")
def test_thinking_settings_on_the_wire(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        sweep(
            tmp_path / "a",
            "anthropic/claude-test",
            SamplingParams(thinking=2048, max_tokens=4096),
            base_url=server.anthropic_base_url,
        )
        sweep(tmp_path / "g", "gemini/gemini-2.5-pro", SamplingParams(thinking="off"),
              base_url=server.openai_base_url)  # fmt: skip
        bodies = [r.body for r in server.requests]
    assert [b["thinking"] for b in bodies[:2]] == [{"type": "enabled", "budget_tokens": 2048}] * 2
    google = {"google": {"thinking_config": {"thinking_budget": 0}}}
    assert [b["extra_body"] for b in bodies[2:]] == [google] * 2


@pytest.mark.usefixtures("keys")
def test_reasoning_tokens_and_thinking_are_recorded_and_priced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "prices.json"  # a loopback server is free unless a price file names it
    prices.write_text(json.dumps({"claude-test": {"input": 3.0, "output": 15.0}}))
    monkeypatch.setenv("FACETLAB_PRICES", str(prices))
    with FakeLLMServer(script=[Fault.THINKS, Fault.THINKS]) as server:
        result = sweep(tmp_path, "anthropic/claude-test", SamplingParams(effort="high"),
                       base_url=server.anthropic_base_url)  # fmt: skip
    assert result.stats.ok == 2
    for rec in records(tmp_path / "o"):
        usage = rec["usage"]
        assert rec["thinking"] == THOUGHT and usage["reasoning_tokens"] == THINKS_TOKENS
        assert usage["output_tokens"] > THINKS_TOKENS  # reasoning counts (and is billed) as output
        expected = (usage["input_tokens"] * 3.0 + usage["output_tokens"] * 15.0) / 1e6
        assert rec["cost_usd"] == pytest.approx(expected)


@pytest.mark.usefixtures("keys")
def test_replies_emptied_by_reasoning_are_not_ok(tmp_path: Path) -> None:
    console = io.StringIO()
    with FakeLLMServer(script=[Fault.REASONING_ONLY] * 2) as server:
        result = sweep(tmp_path, "openai/fake-model", SamplingParams(effort="high", max_tokens=64),
                       base_url=server.openai_base_url, console=console)  # fmt: skip
        assert len(server.requests) == 2  # paid once each, not retried
    st = result.stats
    assert st.ok == 0 and st.failed == 2 and st.emptied_by_reasoning == 2
    text = console.getvalue()
    assert "2 repl(y/ies) emptied by reasoning" in text
    assert "failed: 2 x reply emptied by reasoning" in text
    for rec in records(tmp_path / "o"):
        assert rec["status"] == "failed" and "went to reasoning" in rec["error"]
        assert rec["raw_response"] == "" and rec["usage"]["reasoning_tokens"] == 64
        assert rec["thinking"] == THOUGHT


def test_the_papers_effort_high_condition_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeLLMServer() as server:
        res = cli("run", "-i", str(instances_folder(tmp_path / "i", 2)), "--probes", "p1",
                  "--model", "anthropic/claude-opus-4-6", "--effort", "high",
                  "--base-url", server.anthropic_base_url, "--out", str(tmp_path / "o"),
                  "--quiet")  # fmt: skip
        assert res.exit_code == 0, res.output
        assert all(r.body["output_config"] == {"effort": "high"} for r in server.requests)
    res = cli("run", "-i", str(tmp_path / "i"), "--model", "simulated/wadd", "--effort", "extreme",
              "--dry-run")  # fmt: skip
    assert res.exit_code == 2 and "--effort is 'extreme'" in res.output
