"""llama-cpp-python's server (``python -m llama_cpp.server``), as measured by
``scripts/local-model-smoke.sh`` (0.3.36): it takes structured output only as
``response_format={"type": "json_object", "schema": ...}`` and answers OpenAI's
``json_schema`` shape with an HTTP 500 carrying pydantic's validation message; under its
JSON grammar SmolLM2 put raw newlines inside JSON strings (12 of 143 CRAFT replies). The
fake below answers in exactly those shapes (bodies copied from the real server's replies)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fakes import FakeLLMServer, FakeRequest

from facetlab.backends import ModelRequest, SamplingParams, get_backend
from facetlab.client import CallFailed, ModelClient
from facetlab.craft import InspectOptions, inspect, openai_adapter
from facetlab.craft.adapters.llm import parse_reply, reply_schema
from facetlab.errors import ConfigError

TICKET = {"body": "An urgent outage: nothing loads.", "queue": "support"}
PATH = "/v1/chat/completions"

VALIDATION_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/venv/lib/python3.11/"
    'site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n'
    "    POST /v1/chat/completions"
)


def llama_cpp_route(request: FakeRequest) -> tuple[int, dict[str, str], bytes]:
    """One chat completion as llama-cpp-python's server answers it."""
    body: dict[str, Any] = request.body
    fmt = body.get("response_format")
    headers = {"content-type": "application/json"}
    if fmt is not None and fmt.get("type") not in ("text", "json_object"):
        error = {"message": VALIDATION_500, "type": "internal_server_error", "param": None,
                 "code": None}  # fmt: skip
        return 500, headers, json.dumps({"error": error}).encode()
    urgent = "urgent" in request.prompt
    # as SmolLM2 answered under the server's JSON grammar: a raw newline inside a string
    decision = "P1" if urgent else "P3"
    text = (
        f'{{"decision": "{decision}", "rationale": "It says urgent,\nso it is urgent.", '
        '"cited_evidence": [{"path": "body", "quote": "urgent"}]}'
    )
    completion = {
        "id": "chatcmpl-1146e904-5c28-4c2f-ab97-66a5ce99a853",
        "object": "chat.completion",
        "created": 1796141056,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"content": text, "role": "assistant"},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 38, "completion_tokens": 10, "total_tokens": 48},
    }
    return 200, headers, json.dumps(completion).encode()


def llama_cpp_server() -> FakeLLMServer:
    return FakeLLMServer(extra_routes={("POST", PATH): llama_cpp_route})


def structured_request() -> ModelRequest:
    return ModelRequest(
        "Decide P1 or P3: " + TICKET["body"],
        SamplingParams(max_tokens=64),
        output_schema=reply_schema(["P1", "P3"]),
    )


def test_json_object_sends_the_schema_in_the_shape_llama_cpp_python_takes() -> None:
    with llama_cpp_server() as server:
        backend = get_backend(
            "openai/smollm2?structured_format=json_object", base_url=server.openai_base_url
        )
        answer = asyncio.run(ModelClient(backend).generate(structured_request()))
        (sent,) = [r.body for r in server.requests]
    assert sent["response_format"] == {"type": "json_object", "schema": reply_schema(["P1", "P3"])}
    assert json.loads(answer.response.text, strict=False)["decision"] == "P1"
    assert answer.response.usage.input_tokens == 38 and answer.response.stop_reason == "stop"


def test_without_an_option_the_form_is_learnt_once_and_kept() -> None:
    """No ``structured_format``: the first call is refused as json_schema, answered as
    json_object; the next calls go as json_object at once (one refused request in all)."""
    with llama_cpp_server() as server:
        backend = get_backend("openai/smollm2", base_url=server.openai_base_url)

        async def three() -> list[Any]:
            client = ModelClient(backend)
            try:
                return list(await asyncio.gather(*(client.generate(structured_request())
                                                   for _ in range(3))))  # fmt: skip
            finally:
                await client.aclose()

        answers = asyncio.run(three())
        sent = [(r.status, r.body["response_format"]["type"]) for r in server.requests]
    assert sent[0] == (500, "json_schema") and sent[1:] == [(200, "json_object")] * 3
    assert len(answers) == 3 and backend.structured_format == "json_object"


def test_a_500_that_rejects_the_request_body_is_not_retried() -> None:
    with llama_cpp_server() as server:
        backend = get_backend(
            "openai/smollm2?structured_format=json_schema", base_url=server.openai_base_url
        )
        with pytest.raises(CallFailed, match="Input should be 'text' or 'json_object'") as failed:
            asyncio.run(ModelClient(backend).generate(structured_request()))
        assert len(server.requests) == 1  # the same body would fail 6 times over ~15 s
    assert failed.value.attempts == 1 and "not retryable" in failed.value.cause


def test_an_ordinary_500_is_still_retried() -> None:
    backend = get_backend("openai/smollm2", base_url="http://127.0.0.1:9/v1")
    from facetlab.errors import TransientBackendError

    plain = TransientBackendError("openai HTTP 500: internal error", status=500)
    assert backend.should_retry(plain).retry is True  # the status decides: retried
    body = TransientBackendError(f"openai HTTP 500: {VALIDATION_500}", status=500)
    assert backend.should_retry(body).retry is False


def test_an_unknown_structured_format_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"structured_format='json'.*'json_schema' or"):
        get_backend("openai/smollm2?structured_format=json", base_url="http://127.0.0.1:9/v1")


@pytest.mark.slow  # a CRAFT inspection through the SDK
def test_a_craft_agent_on_llama_cpp_python_answers_every_sample() -> None:
    with llama_cpp_server() as server:
        agent = openai_adapter("smollm2", base_url=server.openai_base_url, decisions=["P1", "P3"],
                               structured=True, structured_format="json_object")  # fmt: skip
        report = inspect(agent, TICKET, InspectOptions(samples=3, contextual_pairs=2))
        formats = {r.body["response_format"]["type"] for r in server.requests}
    assert report.failed_samples == 0 and agent.failure_causes == {}
    assert report.baseline_decision == "P1"
    assert formats == {"json_object"}


def test_a_raw_newline_inside_a_json_string_is_parsed() -> None:
    reply = '{"decision": "P1", "rationale": "line one\nline two", "cited_evidence": []}'
    trace = parse_reply(reply, TICKET, decisions=["P1", "P3"])
    assert trace.decision == "P1" and trace.rationale == "line one\nline two"


def test_an_error_that_is_not_about_the_form_is_the_calls_own() -> None:
    """A 400 that does not name the structured-output field (a bad model name, a token
    limit) fails the call as it is: nothing is learnt, no second form is tried."""

    def refuse(request: FakeRequest) -> tuple[int, dict[str, str], bytes]:
        error = {"message": "model 'smollm3' not found", "type": "invalid_request_error"}
        return 400, {"content-type": "application/json"}, json.dumps({"error": error}).encode()

    with FakeLLMServer(extra_routes={("POST", PATH): refuse}) as server:
        backend = get_backend("openai/smollm3", base_url=server.openai_base_url)
        with pytest.raises(CallFailed, match="not found"):
            asyncio.run(ModelClient(backend).generate(structured_request()))
        forms = [r.body["response_format"]["type"] for r in server.requests]
    assert forms == ["json_schema"] and backend.structured_format == "auto"
