"""Model strings, the registry, and the Anthropic/OpenAI-family backends against a local fake."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fakes import FakeLLMServer, Fault

from facetlab.backends import (
    Backend,
    ModelRequest,
    ModelResponse,
    SamplingParams,
    available_providers,
    generate,
    get_backend,
    parse_model_string,
    register_backend,
)
from facetlab.backends._common import (
    is_transient_status,
    parse_retry_after,
    provider_message,
    redact,
)
from facetlab.backends.anthropic import AnthropicBackend
from facetlab.backends.anthropic import response_from_message as anthropic_response
from facetlab.backends.gemini import GEMINI_BASE_URL, GeminiBackend
from facetlab.backends.ollama import OllamaBackend, ollama_base_url
from facetlab.backends.openai import OpenAIBackend, response_from_completion
from facetlab.errors import (
    BackendError,
    ConfigError,
    PermanentBackendError,
    TransientBackendError,
)

FAKE_KEY = "sk-ant-test-FAKEKEY-0123456789abcdef"
FAKE_OPENAI_KEY = "sk-proj-FAKEKEY-9876543210zyxwvu"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(hang_s=3.0) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _clean_script(server: FakeLLMServer) -> None:
    server.configure(latency_s=0.0, rps_limit=None, retry_after=1.0, fault_rates={})
    server.model_id = None


def anthropic_backend(server: FakeLLMServer, **kw: Any) -> AnthropicBackend:
    return AnthropicBackend(
        "claude-sonnet-4-6", api_key=FAKE_KEY, base_url=server.anthropic_base_url, **kw
    )


def openai_backend(server: FakeLLMServer, **kw: Any) -> OpenAIBackend:
    return OpenAIBackend("gpt-5.4", api_key=FAKE_OPENAI_KEY, base_url=server.openai_base_url, **kw)


BACKENDS: dict[str, Callable[..., AnthropicBackend | OpenAIBackend]] = {
    "anthropic": anthropic_backend,
    "openai": openai_backend,
}


# ---------------------------------------------------------------------------------------
# model strings and registry


def test_parse_model_string_forms() -> None:
    spec = parse_model_string("anthropic/claude-sonnet-4-6")
    assert (spec.provider, spec.model, dict(spec.options)) == ("anthropic", "claude-sonnet-4-6", {})
    spec = parse_model_string("bedrock/us.meta.llama4-scout-17b-instruct-v1:0?region=us-west-2")
    assert spec.model == "us.meta.llama4-scout-17b-instruct-v1:0"
    assert dict(spec.options) == {"region": "us-west-2"}
    # a vLLM model id keeps its slash
    assert parse_model_string("openai/Qwen/Qwen3-8B").model == "Qwen/Qwen3-8B"
    assert str(parse_model_string("simulated/wadd?noise=5")) == "simulated/wadd?noise=5"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty model string"),
        ("claude-sonnet-4-6", "Did you mean 'anthropic/claude-sonnet-4-6'"),
        ("azure/gpt-4o", "unknown provider 'azure'"),
        ("openai/", "empty model id"),
        ("openai/x?a=1&a=2", "given twice"),
        ("openai/x?novalue", "malformed options"),
        ("openai/x?api_key=sk-test-0123456789", "credentials may not go into a model string"),
    ],
)
def test_parse_model_string_errors(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_string(text)
    assert needle in str(info.value)
    if "provider" in needle or "Did you" in needle:
        assert "anthropic, openai, bedrock" in str(info.value)


def test_registry_register_and_override() -> None:
    class Echo(Backend):
        provider = "echo"

        def __init__(self, model: str, **options: object) -> None:
            self.model = model
            self.options = options

        async def agenerate(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse(text=request.prompt[::-1], model_id=self.model)

        async def aclose(self) -> None:
            return None

    register_backend("echo", Echo)
    assert "echo" in available_providers()
    backend = get_backend("echo/m1?x=1", y=2)
    assert isinstance(backend, Backend)
    assert backend.options == {"x": "1", "y": 2}  # type: ignore[attr-defined]
    assert generate(backend, ModelRequest("abc")).text == "cba"
    with pytest.raises(ConfigError, match="invalid provider prefix"):
        register_backend("Bad/Prefix", Echo)


def test_simulated_provider_resolves_lazily() -> None:
    backend = get_backend("simulated/wadd")
    assert backend.provider == "simulated"


def test_unknown_option_is_config_error(server: FakeLLMServer) -> None:
    with pytest.raises(ConfigError, match=r"openai: .*unknown options \['bogus'\]"):
        get_backend("openai/x?bogus=1", base_url=server.openai_base_url)


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("anthropic/claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
        ("openai/gpt-5.4", "OPENAI_API_KEY"),
        ("gemini/gemini-2.5-pro", "GEMINI_API_KEY"),
    ],
)
def test_missing_key_names_env_var(model: str, env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match=env):
        get_backend(model)


def test_keys_from_environment(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    backend = get_backend("anthropic/claude-sonnet-4-6", base_url=server.anthropic_base_url)
    generate(backend, ModelRequest("hi"))
    headers = server.requests[-1].headers
    # this SDK generation sends the key as a bearer token; older ones as x-api-key
    assert FAKE_KEY in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    backend = get_backend("openai/gpt-5.4", base_url=server.openai_base_url)
    generate(backend, ModelRequest("hi"))
    assert server.requests[-1].headers["authorization"] == f"Bearer {FAKE_OPENAI_KEY}"


def test_openai_base_url_needs_no_key(
    monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = get_backend("openai/local-model", base_url=server.openai_base_url)
    assert generate(backend, ModelRequest("hello")).model_id == "local-model"


def test_ollama_and_gemini_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert ollama_base_url() == "http://localhost:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:9999")
    assert ollama_base_url() == "http://0.0.0.0:9999/v1"
    assert ollama_base_url("gpu-box") == "http://gpu-box:11434/v1"
    assert ollama_base_url("https://ollama.example/") == "https://ollama.example/v1"
    backend = get_backend("ollama/llama3.1")
    assert isinstance(backend, OllamaBackend)
    assert str(backend.client.base_url).rstrip("/") == "http://0.0.0.0:9999/v1"
    body = backend.request_body(ModelRequest("x", SamplingParams(max_tokens=7)))
    assert body["max_tokens"] == 7 and "max_completion_tokens" not in body
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaFAKEFAKEFAKEFAKE123")
    gemini = get_backend("gemini/gemini-2.5-pro")
    assert isinstance(gemini, GeminiBackend)
    assert str(gemini.client.base_url) == GEMINI_BASE_URL
    assert "AIzaFAKE" not in repr(gemini) and "AIzaFAKE" not in str(gemini)


# ---------------------------------------------------------------------------------------
# request bodies and sampling parameters

PARAMS = SamplingParams(temperature=0.0, max_tokens=64, system="Be brief.", seed=7, top_p=0.9)


def test_anthropic_request_body_drops_unsupported(server: FakeLLMServer) -> None:
    backend = anthropic_backend(server)
    body = backend.request_body(ModelRequest("Q?", PARAMS))
    assert body == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Q?"}],
        "system": "Be brief.",
    }
    assert backend.declaration.unsent(PARAMS) == ["seed", "temperature", "top_p"]
    effective = backend.effective_params(PARAMS)
    assert (effective.seed, effective.temperature, effective.top_p) == (None, None, None)
    assert (effective.max_tokens, effective.system) == (64, "Be brief.")
    # what the body says is what went over the wire
    generate(backend, ModelRequest("Q?", PARAMS))
    assert server.requests[-1].body == body


def test_openai_request_body(server: FakeLLMServer) -> None:
    backend = openai_backend(server)
    body = backend.request_body(ModelRequest("Q?", PARAMS))
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Q?"},
    ]
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (
        0.0,
        0.9,
        7,
        64,
    )
    generate(backend, ModelRequest("Q?", PARAMS))
    assert server.requests[-1].body == body
    # api.openai.com gets max_completion_tokens (current models reject max_tokens)
    official = OpenAIBackend("gpt-5.4", api_key=FAKE_OPENAI_KEY)
    official_body = official.request_body(ModelRequest("Q?", PARAMS))
    assert official_body["max_completion_tokens"] == 64 and "max_tokens" not in official_body
    assert "temperature" not in official.request_body(ModelRequest("Q?"))


# ---------------------------------------------------------------------------------------
# success parsing


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_success_parsing(api: str, server: FakeLLMServer) -> None:
    backend = BACKENDS[api](server)
    server.model_id = "reported-model-2026"
    response = await backend.agenerate(ModelRequest("one two three four"))
    sent = server.requests[-1]
    assert response.text.startswith("F1: 60, F2: 40\nno")
    assert response.model_id == "reported-model-2026"
    assert response.usage.input_tokens == 4
    assert response.usage.output_tokens == len(response.text.split())
    assert response.stop_reason == ("end_turn" if api == "anthropic" else "stop")
    assert response.refusal is False
    assert response.provider_request_id == f"req_{sent.index}"
    assert response.latency_s is not None and response.latency_s >= 0
    await backend.aclose()


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_refusal_and_max_tokens(api: str, server: FakeLLMServer) -> None:
    backend = BACKENDS[api](server)
    server.push(Fault.REFUSAL, Fault.MAX_TOKENS)
    refused = await backend.agenerate(ModelRequest("do a bad thing"))
    assert refused.refusal is True
    assert refused.text == "I can't help with that."
    truncated = await backend.agenerate(ModelRequest("long answer please"))
    assert truncated.refusal is False
    assert truncated.stop_reason == ("max_tokens" if api == "anthropic" else "length")


def test_response_helpers_accept_dicts() -> None:
    message = {
        "id": "msg_1",
        "model": "claude-opus-4-6",
        "content": [
            {"type": "thinking", "thinking": "hidden"},
            {"type": "text", "text": "F1: 10"},
            {"type": "text", "text": "\nno"},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 11, "output_tokens": 3},
    }
    parsed = anthropic_response(message)
    assert (parsed.text, parsed.model_id, parsed.usage.input_tokens) == (
        "F1: 10\nno",
        "claude-opus-4-6",
        11,
    )
    completion = {
        "id": "chatcmpl-1",
        "model": "gpt-5.4",
        "choices": [{"message": {"content": None, "refusal": "No."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    parsed = response_from_completion(completion)
    assert parsed.refusal and parsed.text == "No." and parsed.usage.output_tokens == 1
    empty = response_from_completion({"model": "m", "choices": []})
    assert (empty.text, empty.stop_reason) == ("", "no_choices")
    filtered = response_from_completion(
        {"model": "m", "choices": [{"message": {"content": ""}, "finish_reason": "content_filter"}]}
    )
    assert filtered.refusal is True


# ---------------------------------------------------------------------------------------
# error mapping


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_429_with_retry_after(api: str, server: FakeLLMServer) -> None:
    backend = BACKENDS[api](server)
    server.configure(retry_after=2.5)
    server.push(Fault.RATE_LIMIT)
    with pytest.raises(TransientBackendError) as info:
        await backend.agenerate(ModelRequest("x"))
    err = info.value
    assert err.status == 429 and err.transient and err.provider == api
    assert err.retry_after == pytest.approx(2.5)  # from retry-after-ms (2500)
    assert "Rate limit exceeded" in str(err)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("fault", [Fault.SERVER_ERROR, Fault.OVERLOADED])
async def test_5xx_is_transient(api: str, fault: Fault, server: FakeLLMServer) -> None:
    backend = BACKENDS[api](server)
    server.push(fault)
    with pytest.raises(TransientBackendError) as info:
        await backend.agenerate(ModelRequest("x"))
    assert info.value.status in (500, 529)
    assert info.value.retry_after is None


@pytest.mark.slow
@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("fault", "status", "needle"),
    [
        (Fault.BAD_REQUEST, 400, "max_tokens: must be at least 1"),
        (Fault.UNAUTHORIZED, 401, "Incorrect API key provided"),
        (Fault.NOT_FOUND, 404, "does not exist"),
    ],
)
async def test_4xx_is_permanent_with_provider_message(
    api: str, fault: Fault, status: int, needle: str, server: FakeLLMServer
) -> None:
    backend = BACKENDS[api](server)
    server.push(fault)
    with pytest.raises(PermanentBackendError) as info:
        await backend.agenerate(ModelRequest("x"))
    assert info.value.status == status and not info.value.transient
    assert needle in str(info.value)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("fault", "needle"),
    [
        (Fault.DROP, "connection failed or dropped"),
        (Fault.TRUNCATED, "connection failed or dropped"),
        (Fault.GARBAGE, "unparseable response body"),
    ],
)
async def test_connection_faults_are_transient(
    api: str, fault: Fault, needle: str, server: FakeLLMServer
) -> None:
    backend = BACKENDS[api](server)
    server.push(fault)
    with pytest.raises(TransientBackendError, match=needle):
        await backend.agenerate(ModelRequest("x"))
    # the backend is still usable afterwards
    assert (await backend.agenerate(ModelRequest("again"))).text


@pytest.mark.slow
@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_timeout_is_transient(api: str, server: FakeLLMServer) -> None:
    backend = BACKENDS[api](server, timeout=0.5)
    server.push(Fault.HANG)
    with pytest.raises(TransientBackendError, match="timed out"):
        await backend.agenerate(ModelRequest("x"))


async def test_refused_connection_is_transient() -> None:
    backend = OpenAIBackend("m", api_key="k", base_url="http://127.0.0.1:9/v1", timeout=2)
    with pytest.raises(TransientBackendError, match="connection failed"):
        await backend.agenerate(ModelRequest("x"))


async def test_backends_do_not_retry(server: FakeLLMServer) -> None:
    for make in BACKENDS.values():
        backend = make(server)
        before = len(server.requests)
        server.push(Fault.SERVER_ERROR)
        with pytest.raises(BackendError):
            await backend.agenerate(ModelRequest("x"))
        assert len(server.requests) == before + 1


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_sync_generate_repeatedly(api: str, server: FakeLLMServer) -> None:
    # each generate() runs in a fresh event loop; the pooled client must follow it
    backend = BACKENDS[api](server)
    texts = [generate(backend, ModelRequest(f"call {i}")).text for i in range(3)]
    assert len(set(texts)) == 3


@pytest.mark.slow  # real-clock waits (timeouts, pacing, retry-after)
async def test_concurrent_requests_share_one_client(server: FakeLLMServer) -> None:
    backend = openai_backend(server)
    server.configure(latency_s=0.2)
    started = asyncio.get_running_loop().time()
    responses = await asyncio.gather(*(backend.agenerate(ModelRequest(f"p{i}")) for i in range(10)))
    elapsed = asyncio.get_running_loop().time() - started
    assert len({r.provider_request_id for r in responses}) == 10
    assert elapsed < 1.5  # concurrent, not 10 x 0.2 s in a row


# ---------------------------------------------------------------------------------------
# secrets


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_secrets_never_leak(api: str, server: FakeLLMServer) -> None:
    key = FAKE_KEY if api == "anthropic" else FAKE_OPENAI_KEY
    backend = BACKENDS[api](server)
    assert key not in repr(backend) and key not in str(backend)
    server.push(Fault.UNAUTHORIZED)  # the fake echoes the presented key in its message
    with pytest.raises(PermanentBackendError) as info:
        await backend.agenerate(ModelRequest("x"))
    assert server.requests[-1].outcome == "unauthorized"
    rendered = f"{info.value!s} {info.value!r} {info.value.args}"
    assert key not in rendered
    assert "***" in rendered
    assert info.value.__suppress_context__  # the SDK exception (with headers) is not chained
    response = await backend.agenerate(ModelRequest("fine"))
    assert key not in repr(response)


def test_repr_hides_credentials_in_base_url() -> None:
    backend = get_backend("openai/m", base_url="http://user:hunter2@127.0.0.1:9/v1?k=s3cret")
    assert "hunter2" not in repr(backend) and "s3cret" not in repr(backend)
    assert "127.0.0.1:9/v1" in repr(backend)


def test_missing_key_error_does_not_show_other_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    with pytest.raises(ConfigError) as info:
        get_backend("openai/gpt-5.4")
    assert FAKE_KEY not in str(info.value)


def test_provider_message_shapes() -> None:
    fallback = "fallback"
    assert provider_message({"error": {"message": "bad", "type": "invalid"}}, fallback) == (
        "bad (invalid)"
    )
    gemini = [
        {"error": {"code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT"}}
    ]
    assert provider_message(gemini, fallback) == "API key not valid (INVALID_ARGUMENT)"
    assert provider_message({"error": "plain"}, fallback) == "plain"
    assert provider_message("<html>502</html>", fallback) == "<html>502</html>"
    assert provider_message(None, fallback) == fallback
    assert is_transient_status(529) and is_transient_status(408) and is_transient_status(499)
    assert not is_transient_status(400) and not is_transient_status(422)


def test_redact_and_retry_after_helpers() -> None:
    assert redact("key sk-abcdefghijkl and mine", ["mine"]) == "key *** and ***"
    assert redact("AIzaSyD-1234567890abcdef", []) == "***"
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    stamp = "Wed, 21 Oct 2026 07:28:00 GMT"
    import email.utils

    now = email.utils.parsedate_to_datetime(stamp).timestamp() - 12
    assert parse_retry_after({"retry-after": stamp}, now=now) == pytest.approx(12.0)
