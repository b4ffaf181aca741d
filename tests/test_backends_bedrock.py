"""Bedrock Converse backend, exercised with botocore's Stubber (moto has no Converse)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.config
import botocore.exceptions
import pytest
from botocore.stub import Stubber

from facetlab.backends import ModelRequest, SamplingParams, get_backend
from facetlab.backends.bedrock import BedrockBackend, map_bedrock_error
from facetlab.errors import ConfigError, PermanentBackendError, TransientBackendError

MODEL = "us.meta.llama4-scout-17b-instruct-v1:0"
FAKE_ACCESS_KEY = "AKIAFAKEFAKEFAKE1234"


@pytest.fixture
def stubbed() -> Iterator[tuple[BedrockBackend, Stubber]]:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id=FAKE_ACCESS_KEY,
        aws_secret_access_key="fake-secret",
    )
    with Stubber(client) as stubber:
        yield BedrockBackend(MODEL, client=client), stubber
        stubber.assert_no_pending_responses()


def converse_response(text: str, stop: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": stop,
        "usage": {"inputTokens": 120, "outputTokens": 9, "totalTokens": 129},
        "metrics": {"latencyMs": 321},
        "ResponseMetadata": {"RequestId": "rid-123", "HTTPStatusCode": 200},
    }


async def test_success_and_exact_request(stubbed: tuple[BedrockBackend, Stubber]) -> None:
    backend, stubber = stubbed
    params = SamplingParams(temperature=0.0, max_tokens=50, system="Answer briefly.", top_p=0.5)
    expected = {
        "modelId": MODEL,
        "messages": [{"role": "user", "content": [{"text": "Weigh the factors."}]}],
        "inferenceConfig": {"maxTokens": 50, "temperature": 0.0, "topP": 0.5},
        "system": [{"text": "Answer briefly."}],
    }
    request = ModelRequest("Weigh the factors.", params)
    assert backend.request_body(request) == expected
    stubber.add_response("converse", converse_response("F1: 70, F2: 30\nno"), expected)
    response = await backend.agenerate(request)
    assert response.text == "F1: 70, F2: 30\nno"
    assert response.model_id == MODEL
    assert (response.usage.input_tokens, response.usage.output_tokens) == (120, 9)
    assert response.stop_reason == "end_turn" and not response.refusal
    assert response.provider_request_id == "rid-123"


async def test_seed_is_not_sent(stubbed: tuple[BedrockBackend, Stubber]) -> None:
    backend, stubber = stubbed
    request = ModelRequest("x", SamplingParams(seed=3))
    body = backend.request_body(request)
    assert "seed" not in str(body)
    assert backend.effective_params(request.params).seed is None
    stubber.add_response("converse", converse_response("ok"), body)
    assert (await backend.agenerate(request)).text == "ok"


async def test_guardrail_is_refusal(stubbed: tuple[BedrockBackend, Stubber]) -> None:
    backend, stubber = stubbed
    stubber.add_response("converse", converse_response("blocked", "guardrail_intervened"))
    response = await backend.agenerate(ModelRequest("x"))
    assert response.refusal and response.stop_reason == "guardrail_intervened"


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ThrottlingException", 429),
        ("ServiceUnavailableException", 503),
        ("InternalServerException", 500),
        ("ModelNotReadyException", 429),
        ("ModelTimeoutException", 408),
    ],
)
async def test_transient_codes(
    code: str, status: int, stubbed: tuple[BedrockBackend, Stubber]
) -> None:
    backend, stubber = stubbed
    stubber.add_client_error(
        "converse",
        service_error_code=code,
        service_message="Too many requests, please wait before trying again.",
        http_status_code=status,
        response_meta={"HTTPHeaders": {"retry-after": "4"}},
    )
    with pytest.raises(TransientBackendError) as info:
        await backend.agenerate(ModelRequest("x"))
    assert info.value.status == status and info.value.provider == "bedrock"
    assert info.value.retry_after == 4.0
    assert code in str(info.value)


@pytest.mark.parametrize(
    ("code", "status", "message"),
    [
        ("ValidationException", 400, "The provided model identifier is invalid."),
        (
            "AccessDeniedException",
            403,
            "You don't have access to the model with the specified model ID.",
        ),
        ("ResourceNotFoundException", 404, "Model not found."),
    ],
)
async def test_permanent_codes(
    code: str, status: int, message: str, stubbed: tuple[BedrockBackend, Stubber]
) -> None:
    backend, stubber = stubbed
    stubber.add_client_error(
        "converse", service_error_code=code, service_message=message, http_status_code=status
    )
    with pytest.raises(PermanentBackendError) as info:
        await backend.agenerate(ModelRequest("x"))
    assert info.value.status == status and message in str(info.value)


@pytest.mark.parametrize(
    "exc",
    [
        botocore.exceptions.ReadTimeoutError(endpoint_url="https://bedrock"),
        botocore.exceptions.ConnectTimeoutError(endpoint_url="https://bedrock"),
        botocore.exceptions.EndpointConnectionError(endpoint_url="https://bedrock"),
        botocore.exceptions.ConnectionClosedError(endpoint_url="https://bedrock"),
    ],
)
def test_connection_errors_are_transient(exc: Exception) -> None:
    assert isinstance(map_bedrock_error(exc), TransientBackendError)


def test_garbage_body_is_transient() -> None:
    from botocore.parsers import ResponseParserError

    err = map_bedrock_error(ResponseParserError("Unable to parse response (not JSON)"))
    assert isinstance(err, TransientBackendError) and "unparseable" in str(err)


async def test_network_faults_through_a_real_client() -> None:
    # A real client against a closed local port: a connection error, mapped as transient.
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id=FAKE_ACCESS_KEY,
        aws_secret_access_key="fake-secret",
        config=botocore.config.Config(retries={"total_max_attempts": 1}, connect_timeout=2),
    )
    backend = BedrockBackend(MODEL, client=client)
    with pytest.raises(TransientBackendError, match="connection"):
        await backend.agenerate(ModelRequest("x"))


def test_construction_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(ConfigError, match="AWS_REGION"):
        get_backend(f"bedrock/{MODEL}")
    backend = get_backend("bedrock/deepseek.v3.2?region=us-west-2")
    assert isinstance(backend, BedrockBackend)
    assert backend.region == "us-west-2"
    assert backend.client.meta.region_name == "us-west-2"
    assert backend.client.meta.config.retries["total_max_attempts"] == 1  # type: ignore[attr-defined]
    assert FAKE_ACCESS_KEY not in repr(backend)
    with pytest.raises(ConfigError, match="profile 'nope' not found"):
        get_backend("bedrock/deepseek.v3.2", region="us-west-2", profile="nope")
    # issue 18: AWS_REGION alone is enough (boto3 itself reads only AWS_DEFAULT_REGION)
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    assert get_backend(f"bedrock/{MODEL}").region == "eu-central-1"  # type: ignore[attr-defined]
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-2")
    assert get_backend(f"bedrock/{MODEL}").region == "eu-central-1"  # type: ignore[attr-defined]


def test_missing_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(ConfigError, match="AWS_PROFILE"):
        get_backend("bedrock/deepseek.v3.2", region="us-west-2")


def test_error_messages_redact_access_key() -> None:
    payload: Any = {
        "Error": {
            "Code": "UnrecognizedClientException",
            "Message": f"The security token for {FAKE_ACCESS_KEY} is invalid.",
        },
        "ResponseMetadata": {"HTTPStatusCode": 403},
    }
    err = botocore.exceptions.ClientError(payload, "Converse")
    mapped = map_bedrock_error(err, secrets=(FAKE_ACCESS_KEY,))
    assert isinstance(mapped, PermanentBackendError)
    assert FAKE_ACCESS_KEY not in str(mapped)


def _counting_client() -> tuple[Any, list[dict[str, Any]]]:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id=FAKE_ACCESS_KEY,
        aws_secret_access_key="fake-secret",
    )
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse",
        lambda params, **_: sent.append(dict(params)),
    )
    return client, sent


@pytest.mark.parametrize("thinking", ["adaptive", "off", 2048])
def test_thinking_for_a_model_that_does_not_take_it_is_refused_before_any_request(
    thinking: str | int, tmp_path: Path
) -> None:
    from reliability_helpers import instances_folder

    from facetlab.client import ModelClient
    from facetlab.runner import run

    client, sent = _counting_client()
    backend = BedrockBackend("deepseek.v3.2", client=client)
    params = SamplingParams(thinking=thinking, max_tokens=4096)
    with Stubber(client) as stubber:  # no answer queued: a request would fail loudly
        with pytest.raises(ConfigError) as caught:
            run(instances_folder(tmp_path / "i", 2), "p1", "bedrock/deepseek.v3.2",
                out=tmp_path / "o", sampling=params, backends={"bedrock/deepseek.v3.2": backend},
                progress="none", console=io.StringIO())  # fmt: skip
        with pytest.raises(ConfigError, match=r"bedrock model deepseek\.v3\.2 does not take it"):
            asyncio.run(ModelClient(backend).call(ModelRequest("x", params)))
        stubber.assert_no_pending_responses()
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        f"bedrock/deepseek.v3.2: --thinking {thinking}: bedrock model deepseek.v3.2 does not "
        "take it; on bedrock only Claude models (anthropic.claude-*, us.anthropic.claude-*, "
        "...) take thinking (off, adaptive or a budget)"
    )
    assert sent == [] and not (tmp_path / "o" / "records").exists()


def test_the_command_line_refuses_it_by_the_model_string_alone(tmp_path: Path) -> None:
    from reliability_helpers import cli, instances_folder

    instances = str(instances_folder(tmp_path / "i", 2))
    refused = cli("run", "-i", instances, "-p", "p1", "-m", "bedrock/deepseek.v3.2?region=us-west-2",
                  "--thinking", "adaptive", "--dry-run")  # fmt: skip
    assert refused.exit_code == 2
    assert "bedrock model deepseek.v3.2 does not take it" in refused.output
    claude = cli("run", "-i", instances, "-p", "p1", "-m",
                 "bedrock/us.anthropic.claude-sonnet-4-6?region=us-west-2",
                 "--thinking", "2048", "--max-tokens", "4096", "--dry-run")  # fmt: skip
    assert claude.exit_code == 0, claude.output


async def test_a_claude_model_on_bedrock_still_sends_thinking() -> None:
    client, sent = _counting_client()
    backend = BedrockBackend("us.anthropic.claude-sonnet-4-6", client=client)
    request = ModelRequest("x", SamplingParams(thinking="adaptive", max_tokens=4096))
    with Stubber(client) as stubber:
        stubber.add_response("converse", converse_response("F1"))
        from facetlab.client import ModelClient

        answer = await ModelClient(backend).call(request)
    assert answer.response.text == "F1"
    assert [b["additionalModelRequestFields"] for b in sent] == [{"thinking": {"type": "adaptive"}}]
