"""A record states what the request carried (issue 18, item 3), checked on the wire.

Each backend runs a P1 sweep with temperature, top_p, seed and a system prompt
against a loopback fake (or botocore's Stubber for Bedrock; the SDK fakes of
``test_runner_batch`` for both batch paths); the test reads each request body back
into sampling parameters and compares them with the record of the same prompt.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import boto3
import httpx2
import openai
import pytest
from botocore.stub import Stubber
from fakes import FakeLLMServer
from reliability_helpers import instances_folder
from test_runner_batch import FakeAnthropicBatches, FakeOpenAIBatches
from test_runner_helpers import StubSuite, make_instances

from facetlab.backends import (
    Backend,
    Declaration,
    ModelRequest,
    ModelResponse,
    Usage,
    register_backend,
)
from facetlab.backends.anthropic import AnthropicBackend
from facetlab.backends.base import SamplingParams
from facetlab.backends.bedrock import BedrockBackend
from facetlab.backends.openai import OpenAIBackend
from facetlab.runner import RunOptions, run

ASKED = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=300, system="Be brief.")


def chat_params(body: dict[str, Any]) -> dict[str, Any]:
    """Sampling parameters in a Chat Completions body."""
    first = body["messages"][0]
    return {
        "temperature": body.get("temperature"),
        "max_tokens": body.get("max_tokens", body.get("max_completion_tokens")),
        "system": first["content"] if first["role"] == "system" else None,
        "seed": body.get("seed"),
        "top_p": body.get("top_p"),
    }


def chat_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def messages_params(body: dict[str, Any]) -> dict[str, Any]:
    """Sampling parameters in an Anthropic Messages body."""
    return {
        "temperature": body.get("temperature"),
        "max_tokens": body["max_tokens"],
        "system": body.get("system"),
        "seed": body.get("seed"),
        "top_p": body.get("top_p"),
    }


def converse_params(body: dict[str, Any]) -> dict[str, Any]:
    """Sampling parameters in Bedrock Converse keyword arguments."""
    config = body["inferenceConfig"]
    return {
        "temperature": config.get("temperature"),
        "max_tokens": config["maxTokens"],
        "system": body["system"][0]["text"] if "system" in body else None,
        "seed": body.get("seed"),
        "top_p": config.get("topP"),
    }


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))]


def assert_records_state_the_wire(
    out: Path,
    bodies: list[dict[str, Any]],
    params_of: Callable[[dict[str, Any]], dict[str, Any]],
    prompt_of: Callable[[dict[str, Any]], str],
) -> list[dict[str, Any]]:
    sent = {prompt_of(b): params_of(b) for b in bodies}
    recs = records(out)
    assert recs and len(sent) == len(recs)
    for rec in recs:
        assert rec["status"] == "ok", rec["error"]
        assert rec["params"] == sent[rec["prompt"]]
    return recs


def sweep(tmp: Path, model: str, **kw: Any) -> Any:
    kw.setdefault("sampling", ASKED)
    return run(instances_folder(tmp / "i", 2), "p1", model, out=tmp / "o", seed=7,
               progress="none", console=io.StringIO(), **kw)  # fmt: skip


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("openai/fake-model", None),
        ("ollama/llama3.1", None),
        ("gemini/gemini-2.5-pro", "GEMINI_API_KEY"),
    ],
)
def test_chat_completions_backends(
    model: str, env: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if env:
        monkeypatch.setenv(env, "test-key")
    with FakeLLMServer() as server:
        sweep(tmp_path, model, base_url=server.openai_base_url)
        bodies = [r.body for r in server.requests]
    recs = assert_records_state_the_wire(tmp_path / "o", bodies, chat_params, chat_prompt)
    # everything is sent: the per-trial seed too, and nothing is kept apart
    assert all(r["params"]["temperature"] == 0.7 and r["params"]["seed"] for r in recs)
    assert all(r["params"]["seed"] == r["trial_seed"] for r in recs)
    assert all(r.get("requested_params") is None for r in recs)


def test_openai_api_sends_max_completion_tokens(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)
        model = "openai/gpt-5.4"
        sweep(tmp_path, model, backends={model: OpenAIBackend("gpt-5.4", client=client)})
        bodies = [r.body for r in server.requests]
    assert all("max_completion_tokens" in b for b in bodies)
    assert_records_state_the_wire(tmp_path / "o", bodies, chat_params, chat_prompt)


def test_anthropic_records_only_what_it_sends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeLLMServer() as server:
        result = sweep(tmp_path, "anthropic/claude-test", base_url=server.anthropic_base_url)
        bodies = [r.body for r in server.requests]
    recs = assert_records_state_the_wire(
        tmp_path / "o", bodies, messages_params, lambda b: str(b["messages"][-1]["content"])
    )
    assert result.stats.ok == 2
    for rec in recs:
        assert rec["params"]["temperature"] is None and rec["params"]["top_p"] is None
        assert rec["requested_params"]["temperature"] == 0.7
        assert rec["requested_params"]["top_p"] == 0.9


def test_anthropic_sweeps_differing_only_in_unsent_params_share_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 18 acceptance: --temperature 0.7, then 0.2, one cache: the second pays nothing
    from reliability_helpers import cli

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    folder = instances_folder(tmp_path / "i", 2)
    with FakeLLMServer() as server:
        for temperature, out in (("0.7", "a"), ("0.2", "b")):
            res = cli("run", "-i", str(folder), "--probes", "p1", "--model",
                      "anthropic/claude-test", "--base-url", server.anthropic_base_url,
                      "--temperature", temperature, "--cache-dir", str(tmp_path / "cache"),
                      "--out", str(tmp_path / out), "--quiet")  # fmt: skip
            assert res.exit_code == 0, res.output
            assert "temperature not sent" in res.output
        assert len(server.requests) == 2  # the first sweep's two calls, none from the second
    assert all(r["cached"] for r in records(tmp_path / "b"))


def test_bedrock_records_what_converse_received(tmp_path: Path) -> None:
    client = boto3.client("bedrock-runtime", region_name="us-east-1",
                          aws_access_key_id="AKIAFAKE", aws_secret_access_key="x")  # fmt: skip
    bodies: list[dict[str, Any]] = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse",
        lambda params, **_: bodies.append(dict(params)),
    )
    reply = {
        "output": {"message": {"role": "assistant", "content": [{"text": "F1: 60, F2: 40\nno"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 100, "outputTokens": 9, "totalTokens": 109},
        "metrics": {"latencyMs": 12},
    }
    model = "bedrock/deepseek.v3.2"
    with Stubber(client) as stubber:
        for _ in range(2):
            stubber.add_response("converse", reply)
        sweep(tmp_path, model, backends={model: BedrockBackend("deepseek.v3.2", client=client)})
    recs = assert_records_state_the_wire(
        tmp_path / "o", bodies, converse_params, lambda b: b["messages"][0]["content"][0]["text"]
    )
    assert all(r["params"]["seed"] is None and r["requested_params"]["seed"] == 7 for r in recs)
    assert all(r["params"]["temperature"] == 0.7 for r in recs)


BATCH = RunOptions(batch=True, batch_poll_s=0.01)


def test_anthropic_batch_records_what_the_batch_carried(tmp_path: Path) -> None:
    fake = FakeAnthropicBatches(polls=0, fail_ids=0)
    client = anthropic.AsyncAnthropic(
        api_key="k", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handler)),
    )  # fmt: skip
    model = "anthropic/claude-sonnet-4-6"
    run(make_instances(), "p2,p3", model, out=tmp_path, options=BATCH, sampling=ASKED, seed=7,
        backends={model: AnthropicBackend("claude-sonnet-4-6", client=client)},
        suite=StubSuite(), progress="none", console=io.StringIO())  # fmt: skip
    bodies = [req["params"] for b in fake.batches.values() for req in b["requests"]]
    recs = assert_records_state_the_wire(
        tmp_path, bodies, messages_params, lambda b: str(b["messages"][-1]["content"])
    )
    assert all(r["backend"] == "anthropic-batch" for r in recs)


def test_openai_batch_records_what_the_batch_carried(tmp_path: Path) -> None:
    fake = FakeOpenAIBatches()
    client = openai.AsyncOpenAI(
        api_key="k", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handler)),
    )  # fmt: skip
    model = "openai/gpt-5.4"
    run(make_instances(), "p2,p3", model, out=tmp_path, options=BATCH, sampling=ASKED, seed=7,
        backends={model: OpenAIBackend("gpt-5.4", client=client)},
        suite=StubSuite(), progress="none", console=io.StringIO())  # fmt: skip
    bodies = [line["body"] for lines in fake.files.values() for line in lines]
    recs = assert_records_state_the_wire(tmp_path, bodies, chat_params, chat_prompt)
    assert all(r["backend"] == "openai-batch" for r in recs)


# -- a backend declares what it is: a toy provider in one class and one registration ---------


class ToyBackend(Backend):
    """Echoes a fixed P1 answer; sends only max_tokens, costs nothing."""

    provider = "toy"
    declaration = Declaration(sends=frozenset({"max_tokens"}), free=True)

    def __init__(self, model: str, *, base_url: str | None = None) -> None:
        self.model = model
        self.requests: list[ModelRequest] = []

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse("F1", self.model, usage=Usage(10, 2))

    async def aclose(self) -> None:
        return None


def test_a_toy_backend_runs_a_sweep(tmp_path: Path) -> None:
    register_backend("toy", ToyBackend)
    result = sweep(tmp_path, "toy/echo", options=RunOptions(budget_usd=0.01))
    assert result.stats.ok == 2 and result.stats.spend_usd == 0
    for rec in records(tmp_path / "o"):
        assert rec["provider"] == "toy" and rec["cost_usd"] == 0.0
        assert rec["params"] == {"temperature": None, "max_tokens": 300, "system": None,
                                 "seed": None, "top_p": None}  # fmt: skip
        assert rec["requested_params"]["system"] == "Be brief."


@pytest.mark.slow  # five dry runs
def test_the_server_a_backend_declares_is_in_the_trial_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = instances_folder(tmp_path / "i", 1)

    def key(model: str) -> str:
        plan = run(folder, "p1", model, dry_run=True, console=io.StringIO()).plan
        return str(plan.trials[0].key)

    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    default = key("ollama/llama3.1")
    monkeypatch.setenv("OLLAMA_HOST", "gpu-a:11434")
    first = key("ollama/llama3.1")
    monkeypatch.setenv("OLLAMA_HOST", "gpu-b:11434")
    assert len({default, first, key("ollama/llama3.1")}) == 3  # two servers never share answers
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    in_env = key("bedrock/deepseek.v3.2")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    assert key("bedrock/deepseek.v3.2") != in_env
    # a region in the model string is the identity; the environment's is then not read
    named = key("bedrock/deepseek.v3.2?region=us-west-2")
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    assert key("bedrock/deepseek.v3.2?region=us-west-2") == named
