"""The local fake LLM server behaves as documented (the runner's fault tests rely on it)."""

from __future__ import annotations

import asyncio
import http.client
import json
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from fakes import FakeLLMServer, FakeRequest, Fault

from facetlab.backends import ModelRequest
from facetlab.backends.openai import OpenAIBackend
from facetlab.errors import TransientBackendError


def _post(url: str, body: Mapping[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


CHAT: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}


def test_script_then_success_and_log() -> None:
    with FakeLLMServer(script=[Fault.SERVER_ERROR, Fault.RATE_LIMIT], retry_after=0.25) as server:
        status, _, _ = _post(f"{server.openai_base_url}/chat/completions", CHAT)
        assert status == 500
        status, headers, _ = _post(f"{server.openai_base_url}/chat/completions", CHAT)
        assert status == 429
        lowered = {k.lower(): v for k, v in headers.items()}
        assert lowered["retry-after"] == "0.25" and lowered["retry-after-ms"] == "250"
        status, _, body = _post(f"{server.url}/v1/messages", {**CHAT, "max_tokens": 5})
        assert status == 200 and json.loads(body)["type"] == "message"
        assert [r.outcome for r in server.requests] == ["server_error", "rate_limit", "ok"]
        assert [r.api for r in server.requests] == ["openai", "openai", "anthropic"]
        assert server.paid_calls() == Counter({"hello there": 1})


@pytest.mark.slow
def test_rps_limit_rejects_excess_with_retry_after() -> None:
    with FakeLLMServer(rps_limit=5) as server:
        statuses = [_post(f"{server.openai_base_url}/chat/completions", CHAT)[0] for _ in range(8)]
        assert statuses.count(200) == 5 and statuses.count(429) == 3
        rejected = [r for r in server.requests if r.outcome == "rate_limited"]
        assert len(rejected) == 3
        time.sleep(1.05)  # the window slides: capacity is back
        assert _post(f"{server.openai_base_url}/chat/completions", CHAT)[0] == 200


def test_fault_rates_are_seeded() -> None:
    def run() -> list[str]:
        rates = {Fault.SERVER_ERROR: 0.3, Fault.GARBAGE: 0.2}
        with FakeLLMServer(fault_rates=rates, seed=42) as server:
            for _ in range(30):
                _post(f"{server.openai_base_url}/chat/completions", CHAT)
            return [r.outcome for r in server.requests]

    first, second = run(), run()
    assert first == second
    assert {"ok", "server_error", "garbage"} <= set(first)


def test_extra_routes_and_custom_responder() -> None:
    def batches(request: FakeRequest) -> tuple[int, dict[str, str], bytes]:
        return 200, {"content-type": "application/json"}, b'{"id": "batch_1"}'

    def responder(request: FakeRequest) -> str:
        return request.prompt.upper()

    with FakeLLMServer(
        extra_routes={("POST", "/v1/batches"): batches}, responder=responder
    ) as server:
        assert json.loads(_post(f"{server.url}/v1/batches", {})[2]) == {"id": "batch_1"}
        _, _, body = _post(f"{server.openai_base_url}/chat/completions", CHAT)
        assert json.loads(body)["choices"][0]["message"]["content"] == "HELLO THERE"
        assert _post(f"{server.url}/v1/unknown", {})[0] == 404


@pytest.mark.slow
async def test_latency_and_concurrency_under_limit() -> None:
    # 30 concurrent calls with 0.2 s latency and a 20 rps cap: some are rejected with a
    # retry-after, none is answered twice, and the accepted ones run concurrently.
    with FakeLLMServer(latency_s=0.2, rps_limit=20) as server:
        backend = OpenAIBackend("m", api_key="k", base_url=server.openai_base_url)
        started = time.perf_counter()
        results = await asyncio.gather(
            *(backend.agenerate(ModelRequest(f"prompt {i}")) for i in range(30)),
            return_exceptions=True,
        )
        elapsed = time.perf_counter() - started
        await backend.aclose()
        ok = [r for r in results if not isinstance(r, BaseException)]
        limited = [r for r in results if isinstance(r, TransientBackendError)]
        assert len(ok) == 20 and len(limited) == 10
        assert all(e.status == 429 and e.retry_after is not None for e in limited)
        assert all(0 < e.retry_after <= 1.0 for e in limited if e.retry_after is not None)
        assert elapsed < 2.0
        assert max(server.paid_calls().values()) == 1


@pytest.mark.parametrize("fault", [Fault.DROP, Fault.TRUNCATED])
def test_dropped_connections_do_not_kill_the_server(fault: Fault) -> None:
    with FakeLLMServer(script=[fault]) as server:
        with pytest.raises((urllib.error.URLError, OSError, http.client.HTTPException)):
            _post(f"{server.openai_base_url}/chat/completions", CHAT)
        assert _post(f"{server.openai_base_url}/chat/completions", CHAT)[0] == 200
