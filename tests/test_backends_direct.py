"""``http_transport="aiohttp"`` posts over facetlab's own session (``backends._direct``):
on the wire and in every outcome it is the SDK's request, only cheaper.

For both SDK backends, the same request through the SDK (httpx) and the direct path
must reach the server as the same JSON body with the same auth, version and content
headers, give the same response, and fail with the same error for each fault.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakes import FakeLLMServer, Fault

from facetlab.backends import Backend, ModelRequest, ModelResponse, SamplingParams, get_backend
from facetlab.errors import BackendError

# what the SDK sends that must also arrive from the direct path (the OpenAI backend
# builds its headers without importing the SDK and names itself as the user agent; the
# Anthropic backend sends the SDK client's own, its telemetry headers included)
SAME_HEADERS = ("authorization", "x-api-key", "anthropic-version", "openai-organization",
                "content-type", "accept")  # fmt: skip
FAULTS = [Fault.RATE_LIMIT, Fault.BAD_REQUEST, Fault.UNAUTHORIZED, Fault.SERVER_ERROR,
          Fault.GARBAGE, Fault.MISSING_FIELDS, Fault.DROP, Fault.REFUSAL, Fault.ECHO_KEY]  # fmt: skip


def backend(api: str, pool: str, server: FakeLLMServer) -> Backend:
    if api == "openai":
        return get_backend("openai/fake-model", base_url=server.openai_base_url,
                           api_key="sk-test-key-0123456789abcdef", organization="org-1",
                           http_transport=pool)  # fmt: skip
    return get_backend("anthropic/claude-sonnet-4-6", base_url=server.url,
                       api_key="sk-ant-test-0123456789abcdef", http_transport=pool)  # fmt: skip


def ask(b: Backend) -> ModelResponse | BackendError:
    request = ModelRequest(
        "Weigh F1 and F2.",
        SamplingParams(max_tokens=64, temperature=0.0, system="Be brief."),
        output_schema={"type": "object", "properties": {"a": {"type": "string"}}},
        extra_body={"top_k": 5} if b.provider == "anthropic" else {"min_p": 0.1},
    )

    async def once() -> ModelResponse | BackendError:
        try:
            return await b.agenerate(request)
        except BackendError as exc:
            return exc
        finally:
            await b.aclose()

    return asyncio.run(once())


def outcome(result: ModelResponse | BackendError) -> tuple[Any, ...]:
    if isinstance(result, BackendError):
        return (type(result).__name__, result.status, result.retry_after, str(result))
    return (result.text, result.model_id, result.usage, result.stop_reason, result.refusal,
            result.provider_request_id, result.thinking)  # fmt: skip


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_the_direct_path_sends_what_the_sdk_sends(api: str) -> None:
    seen = {}
    for pool in ("httpx", "aiohttp"):
        with FakeLLMServer() as server:
            b = backend(api, pool, server)
            assert b.sends_directly is (pool == "aiohttp")  # type: ignore[attr-defined]
            result = ask(b)
            (request,) = server.requests
            direct_request = request
        seen[pool] = (request.path, request.body, {h: request.headers.get(h) for h in SAME_HEADERS},
                      outcome(result))  # fmt: skip
    assert seen["aiohttp"] == seen["httpx"]
    _, body, headers, _ = seen["aiohttp"]
    agent = direct_request.headers["user-agent"]
    assert agent.startswith("facetlab/" if api == "openai" else "AsyncAnthropic/")
    assert headers["content-type"] == "application/json"
    assert (headers["authorization"] or headers["x-api-key"] or "").endswith("0123456789abcdef")
    assert body["system" if api == "anthropic" else "messages"]  # the exact body, extras in
    assert body["top_k" if api == "anthropic" else "min_p"] in (5, 0.1)


@pytest.mark.parametrize("fault", FAULTS, ids=[f.value for f in FAULTS])
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_each_fault_ends_as_it_does_through_the_sdk(api: str, fault: Fault) -> None:
    ended = {}
    for pool in ("httpx", "aiohttp"):
        with FakeLLMServer(script=[fault], retry_after=1.5) as server:
            ended[pool] = outcome(ask(backend(api, pool, server)))
    direct, sdk = ended["aiohttp"], ended["httpx"]
    if fault is Fault.DROP:  # the same kind and status; the transport names its own error
        assert direct[:3] == sdk[:3] == ("TransientBackendError", None, None)
        assert "connection failed or dropped" in direct[3] and "connection" in sdk[3]
    else:
        assert direct == sdk
    assert "0123456789abcdef" not in str(direct)  # the 401 echoes the key: redacted


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_server_that_never_answers_is_a_timeout_on_both_paths(api: str) -> None:
    ended = {}
    for pool in ("httpx", "aiohttp"):
        with FakeLLMServer(script=[Fault.HANG], hang_s=5.0) as server:
            url = server.openai_base_url if api == "openai" else server.url
            model = "openai/m" if api == "openai" else "anthropic/claude-sonnet-4-6"
            b = get_backend(model, base_url=url, api_key="k", timeout=0.5, http_transport=pool)
            ended[pool] = outcome(ask(b))
    assert ended["aiohttp"] == ended["httpx"]
    assert ended["aiohttp"][:3] == ("TransientBackendError", None, None)
    assert ended["aiohttp"][3] == f"{api}: request timed out"
