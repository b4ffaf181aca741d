"""The cost meter under concurrency: worst cases reserved first, settled with usage (issue 23)."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from test_runner_batch import FakeOpenAIBatches
from test_runner_helpers import ScriptedBackend, StubSuite, make_instances

from facetlab.backends.base import ModelRequest, ModelResponse, SamplingParams, Usage
from facetlab.backends.openai import OpenAIBackend
from facetlab.client import CostMeter, ModelClient
from facetlab.client.model import checked_usage
from facetlab.errors import BudgetExceededError
from facetlab.runner import RunOptions, run

MODEL = "openai/gpt-5.4"  # $2.50 / $15 per 1M tokens


class Reporting(ScriptedBackend):
    """Answers after a delay and reports ``usage`` as given (possibly nonsense)."""

    def __init__(self, usage: Any, **kw: Any) -> None:
        super().__init__(latency_s=0.02, **kw)
        self.reported = usage

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        response = await super().agenerate(request)
        return ModelResponse(response.text, self.model, usage=self.reported)


def sweep(tmp: Path, backend: ScriptedBackend, budget: float, **kw: Any) -> Any:
    return run(make_instances(8), "p1,p2,p3,c2", MODEL, out=tmp, backends={MODEL: backend},
               suite=StubSuite(), concurrency=32, progress="none", console=io.StringIO(),
               sampling=SamplingParams(max_tokens=2000),
               options=RunOptions(budget_usd=budget), **kw)  # fmt: skip


def test_spend_never_passes_the_budget_at_concurrency_32(tmp_path: Path) -> None:
    # honest usage well under the worst case (2000 output tokens = $0.03 a call)
    backend = Reporting(Usage(200, 1500))
    result = sweep(tmp_path, backend, budget=0.25)
    st = result.stats
    assert backend.max_in_flight > 1 and st.stopped_by_budget
    assert 0.25 - 0.031 < st.spend_usd <= 0.25  # stopped only when the next worst case did not fit
    assert st.ok == len(backend.calls) and st.not_started > 0


@pytest.mark.parametrize(
    "usage",
    [Usage(None, None), Usage(-5, 10), Usage("many", 10), Usage(200, None)],  # type: ignore[arg-type]
)
def test_unusable_usage_is_charged_its_worst_case(
    usage: Usage, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    backend = Reporting(usage)
    with caplog.at_level(logging.WARNING, logger="facetlab.client"):
        result = sweep(tmp_path, backend, budget=0.2)
    st = result.stats
    assert st.spend_usd <= 0.2 and st.ok == len(backend.calls) > 0
    assert "token usage not reported as counts" in caplog.text  # warned (once per client)
    assert caplog.text.count("token usage not reported") == 1
    # each call was charged at least its worst case's output: 2000 tokens at $15 per 1M
    assert st.spend_usd >= st.ok * 0.03


def test_checked_usage_keeps_counts_and_drops_the_rest() -> None:
    response = ModelResponse("x", "m", usage=Usage(10, True, -1, 3))  # type: ignore[arg-type]
    clean, problem = checked_usage(response)
    assert clean.usage == Usage(10, None, None, 3)
    assert problem is not None and "output_tokens=True" in problem


def test_reservations_are_released_when_a_call_fails() -> None:
    meter = CostMeter(budget_usd=1.0)
    client = ModelClient(ScriptedBackend(), meter=meter, price_model=MODEL)
    worst = client.worst_cost(ModelRequest("hi", SamplingParams(max_tokens=10_000)))
    assert worst is not None and 0.15 < worst < 0.16
    held = [meter.reserve(worst) for _ in range(6)]
    assert meter.reserved_usd == pytest.approx(6 * worst)
    for reservation in held:
        meter.release(reservation)
    assert meter.reserved_usd == 0 and meter.spent_usd == 0


class NonsenseUsageBatches(FakeOpenAIBatches):
    """OpenAI Batch whose results report usage that is not a count."""

    def handler(self, request: Any) -> Any:
        response = super().handler(request)
        if not str(request.url.path).endswith("/content"):
            return response
        lines = [json.loads(line) for line in response.content.decode().splitlines()]
        for line in lines:
            line["response"]["body"]["usage"] = {"prompt_tokens": "lots", "completion_tokens": -3}
        body = "\n".join(json.dumps(line) for line in lines) + "\n"
        return httpx2.Response(200, content=body.encode())


def test_a_batch_result_without_usable_usage_is_charged_its_worst_case(tmp_path: Path) -> None:
    fake = NonsenseUsageBatches()
    client = openai.AsyncOpenAI(
        api_key="k", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handler)),
    )  # fmt: skip
    result = run(make_instances(), "p2,p3", MODEL, out=tmp_path,
                 backends={MODEL: OpenAIBackend("gpt-5.4", client=client)}, suite=StubSuite(),
                 options=RunOptions(batch=True, batch_poll_s=0.01), progress="none",
                 sampling=SamplingParams(max_tokens=2000), console=io.StringIO())  # fmt: skip
    assert result.stats.ok == 2
    # worst case at the batch rate: 2000 output tokens at $15 per 1M, halved, plus the prompt
    assert result.stats.spend_usd >= 2 * 2000 * 15e-6 * 0.5
    for path in (tmp_path / "records").glob("*.json"):
        record = json.loads(path.read_text())
        assert record["usage"]["input_tokens"] is None and record["cost_usd"] > 0.015


def test_generate_with_a_key_answers_from_the_cache(tmp_path: Path) -> None:
    import asyncio

    from facetlab.client import ResponseCache

    backend = ScriptedBackend()
    client = ModelClient(backend, cache=ResponseCache(tmp_path), price_model=MODEL)

    async def twice() -> list[Any]:
        request = ModelRequest("same question")
        return [await client.generate(request, key="k" * 64) for _ in range(2)]

    first, second = asyncio.run(twice())
    assert len(backend.calls) == 1 and not first.cached and second.cached
    assert second.response.text == first.response.text and second.cost_usd == 0.0
    assert first.cost_usd == pytest.approx((1000 * 2.5 + 100 * 15) / 1e6)


def test_settled_reservations_leave_nothing_in_flight() -> None:
    # three reservations settled at a slightly different cost leave float residue in a
    # running sum (6.9e-18): it must never read as a call still in flight, or the next
    # call that does not fit waits for ever instead of being refused
    meter = CostMeter(budget_usd=0.05)
    held = [meter.reserve(0.01587) for _ in range(3)]
    for reservation in held:
        meter.settle(reservation, 0.0159)
    assert meter.open_reservations == 0 and meter.reserved_usd == 0.0
    with pytest.raises(BudgetExceededError):
        meter.reserve(0.01587)
