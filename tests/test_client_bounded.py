"""Hostile replies are bounded (issue 29, items 4 and 5), on every backend:

- a gzip bomb and a 50 MB reply are refused with one line, after one call, without
  holding the body (the one cap, ``backends._common.MAX_REPLY_BYTES``);
- a broken chunked encoding is a connection dropped mid-reply (retried), never "HTTP 400";
- usage of 10^400 tokens neither crashes nor stalls a call or a run: it is charged the
  call's worst case;
- a ``FACETLAB_PRICES`` key written ``provider/model`` prices that model, and a key that
  prices another spelling of a local (free) model is said.
"""

from __future__ import annotations

import asyncio
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from fakes import FakeLLMServer, Fault
from test_runner_helpers import StubSuite, make_instances

from facetlab.backends import Backend, ModelRequest, SamplingParams, get_backend
from facetlab.backends._common import MAX_REPLY_BYTES
from facetlab.client import CallFailed, CostMeter, ModelClient, RetryPolicy
from facetlab.client.pricing import price_for

ONE_TRY = RetryPolicy(max_attempts=1)
TWO_TRIES = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.01)
SDK_BACKENDS = [(api, pool) for api in ("openai", "anthropic") for pool in ("httpx", "aiohttp")]


def sdk_backend(api: str, pool: str, server: FakeLLMServer) -> Backend:
    if api == "openai":
        url = server.openai_base_url
        return get_backend("openai/fake-model", base_url=url, http_transport=pool)
    url = server.anthropic_base_url
    return get_backend(
        "anthropic/claude-sonnet-4-6", base_url=url, api_key="k", http_transport=pool
    )


def ask(backend: Backend, retry: RetryPolicy = ONE_TRY, meter: CostMeter | None = None) -> object:
    async def once() -> object:
        client = ModelClient(backend, retry=retry, meter=meter)
        try:
            return await client.generate(
                ModelRequest("Weigh F1 and F2.", SamplingParams(max_tokens=64))
            )
        finally:
            await client.aclose()

    return asyncio.run(once())


@pytest.mark.slow  # tracemalloc traces the decoding (0.1 s without it)
@pytest.mark.parametrize(("api", "pool"), SDK_BACKENDS)
def test_a_gzip_bomb_is_refused_in_one_line_within_bounded_memory(api: str, pool: str) -> None:
    with FakeLLMServer(script=[Fault.GZIP_BOMB]) as server:
        backend = sdk_backend(api, pool, server)
        tracemalloc.start()
        try:
            with pytest.raises(CallFailed) as failed:
                ask(backend, TWO_TRIES)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        calls = len(server.requests)
    line = str(failed.value)
    assert f"{api}: reply larger than 16 MiB (gzip compressed): refused, not read" in line
    assert "\n" not in line and "not retryable" in failed.value.cause
    assert calls == 1 and failed.value.attempts == 1  # the same bomb again would not help
    assert peak < 2 * MAX_REPLY_BYTES  # it decodes to 64 MiB: never held whole


@pytest.mark.slow  # the fake builds and sends 50 MB each
@pytest.mark.parametrize(("api", "pool"), SDK_BACKENDS)
def test_a_50_mb_reply_is_refused(api: str, pool: str) -> None:
    refused = pytest.raises(CallFailed, match=r"reply larger than 16 MiB \(not compressed\)")
    with FakeLLMServer(script=[Fault.HUGE]) as server, refused:
        ask(sdk_backend(api, pool, server))


@pytest.mark.parametrize(("api", "pool"), SDK_BACKENDS)
def test_a_broken_chunked_body_is_a_dropped_connection_not_http_400(api: str, pool: str) -> None:
    server = FakeLLMServer(script=[Fault.BAD_CHUNK, Fault.BAD_CHUNK])
    with server, pytest.raises(CallFailed) as failed:
        ask(sdk_backend(api, pool, server), TWO_TRIES)
    assert "400" not in failed.value.cause and failed.value.status is None
    assert failed.value.attempts == 2  # retried: a broken body is transient
    assert "connection failed or dropped" in str(failed.value)


def bedrock(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> Backend:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    return get_backend("bedrock/deepseek.v3.2", endpoint_url=server.url)


@pytest.mark.slow  # the fake builds and sends 50 MB
def test_bedrock_refuses_a_50_mb_reply_and_a_gzip_bomb_stays_small(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    huge = b'{"output": {"message": {"content": [{"text": "' + b"x" * 50 * 10**6 + b'"}]}}}'
    bomb = gzip_bomb()
    replies = iter([huge, bomb])

    def converse(request: object) -> tuple[int, dict[str, str], bytes]:
        body = next(replies)
        encoding = {"content-encoding": "gzip"} if body is bomb else {}
        return 200, {"content-type": "application/json", **encoding}, body

    route = {("POST", "/model/deepseek.v3.2/converse"): converse}
    with FakeLLMServer(extra_routes=route) as server:
        backend = bedrock(server, monkeypatch)
        with pytest.raises(CallFailed, match="bedrock: reply larger than 16 MiB"):
            ask(backend)
        tracemalloc.start()
        try:
            with pytest.raises(CallFailed, match="unparseable response body"):
                ask(backend)  # botocore does not decode gzip: the bomb stays 290 KiB
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < MAX_REPLY_BYTES


def gzip_bomb() -> bytes:
    from fakes.server import _gzip_bomb

    return _gzip_bomb()


def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prices: dict[str, object]) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(prices))
    monkeypatch.setenv("FACETLAB_PRICES", str(path))


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_usage_of_10_to_the_400_is_charged_the_worst_case(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    priced(tmp_path, monkeypatch, {"openai/fake-model": {"input": 1, "output": 2},
                                   "claude-sonnet-4-6": {"input": 1, "output": 2}})  # fmt: skip
    meter = CostMeter(budget_usd=10.0)
    with FakeLLMServer(script=[Fault.HUGE_USAGE]) as server:
        backend = sdk_backend(api, "httpx", server)
        answer = ask(backend, meter=meter)
    worst = ModelClient(backend).worst_cost(
        ModelRequest("Weigh F1 and F2.", SamplingParams(max_tokens=64))
    )
    assert answer.response.text.startswith("F1: 60")  # type: ignore[attr-defined]
    assert answer.response.usage.input_tokens is None  # type: ignore[attr-defined]
    assert worst is not None and answer.cost_usd == pytest.approx(worst)  # type: ignore[attr-defined]
    assert meter.spent_usd == pytest.approx(worst) and meter.open_reservations == 0


@pytest.mark.slow  # a sweep
def test_a_sweep_whose_every_reply_reports_10_to_the_400_tokens_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from facetlab.runner import RunOptions, run

    priced(tmp_path, monkeypatch, {"openai/fake-model": {"input": 1, "output": 2}})
    with FakeLLMServer(fault_rates={Fault.HUGE_USAGE: 1.0}) as server:
        result = run(
            make_instances(), "p1,p2,p3,c2", "openai/fake-model", out=tmp_path / "sweep",
            base_url=server.openai_base_url, suite=StubSuite(), repeats=2, progress="none",
            console=io.StringIO(), options=RunOptions(budget_usd=100.0, timeout_s=30),
        )  # fmt: skip
    stats = result.stats
    assert stats.ok == stats.total == 24 and stats.failed == 0
    records = [json.loads(p.read_text()) for p in (tmp_path / "sweep" / "records").glob("*.json")]
    assert all(r["usage"]["input_tokens"] is None for r in records)
    spent = sum(r["cost_usd"] for r in records)
    assert spent > 0 and stats.spend_usd == pytest.approx(spent)


def test_a_prices_key_written_provider_slash_model_prices_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    priced(tmp_path, monkeypatch, {"openai/mock": {"input": 1, "output": 2}})
    local = "http://127.0.0.1:9/v1"
    price = price_for("openai/mock", endpoint=local)  # loopback, yet priced: it is named
    assert price is not None and price.input_per_mtok == 1.0
    assert price_for("anthropic/mock") is None  # the provider is part of such a key
    # a key that prices another spelling: the local model is free, and that is said
    priced(tmp_path, monkeypatch, {"openai/mokc": {"input": 1, "output": 2}})
    with pytest.warns(UserWarning, match="FACETLAB_PRICES prices openai/mokc, not openai/mock"):
        free = price_for("openai/mock?base_url=" + local)
    assert free is not None and free.input_per_mtok == 0.0
