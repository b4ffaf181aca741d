"""The retry decision as one value (issue 41, item 6): ``Backend.should_retry`` returns a
``RetryDecision`` (retry, kind, retry-after), and the model client acts on it alone."""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from facetlab.backends import Backend, ModelRequest, ModelResponse, RetryDecision, SamplingParams
from facetlab.backends.base import is_transient_status, retry_decision
from facetlab.client import CallFailed, ModelClient, RetryPolicy
from facetlab.errors import BackendError, PermanentBackendError, TransientBackendError

WAITS = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 10_000),
    st.text(max_size=3),  # a header the provider's SDK left as text: no wait
)


@settings(max_examples=300, deadline=None)
@given(
    status=st.one_of(st.none(), st.integers(100, 599)),
    transient=st.booleans(),
    wait=WAITS,
)
def test_the_default_decision_of_a_provider_error(
    status: int | None, transient: bool, wait: object
) -> None:
    kind = TransientBackendError if transient else PermanentBackendError
    exc = kind("provider said no", status=status, provider="openai")
    exc.retry_after = wait  # type: ignore[assignment]
    decision = retry_decision(exc)
    retry = transient or (status is not None and is_transient_status(status))
    assert decision.retry is retry
    assert decision.kind == ("rate_limit" if status == 429 else "transient" if retry else None)
    valid = isinstance(wait, (int, float)) and not math.isnan(wait) and wait >= 0
    assert decision.retry_after == (float(wait) if valid else None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("exc", "retry"),
    [(TimeoutError(), True), (ConnectionResetError(), True), (ValueError("bug"), False)],
)
def test_the_default_decision_of_other_failures(exc: BaseException, retry: bool) -> None:
    assert retry_decision(exc) == RetryDecision(retry, "transient" if retry else None, None)


class _Decides(Backend):
    """Fails with ``errors`` in turn, then answers; decides by ``decision`` alone."""

    provider, model = "toy", "toy-model"

    def __init__(self, errors: list[BaseException], decision: RetryDecision) -> None:
        self.errors, self.decision, self.calls = errors, decision, 0

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return ModelResponse(text="F1: 60, F2: 40", model_id=self.model)

    def should_retry(self, exc: BaseException) -> RetryDecision:
        return self.decision


def _call(backend: Backend) -> object:
    async def once() -> object:
        client = ModelClient(backend, retry=RetryPolicy(base_delay_s=0.01, jitter=False))
        try:
            return await client.call(ModelRequest("Weigh F1 and F2.", SamplingParams()))
        finally:
            await client.aclose()

    return asyncio.run(once())


def test_the_client_retries_what_the_backend_decides_and_waits_its_retry_after() -> None:
    # a ValueError the default would fail at once: this backend calls it a rate limit
    backend = _Decides(
        [ValueError("busy"), ValueError("busy")], RetryDecision(True, "rate_limit", 0.05)
    )
    answer = _call(backend)
    assert backend.calls == 3 and getattr(answer, "attempts", None) == 3


def test_the_client_gives_up_at_once_when_the_backend_says_so() -> None:
    backend = _Decides([TransientBackendError("overloaded", status=503)], RetryDecision(False))
    with pytest.raises(CallFailed) as failed:
        _call(backend)
    assert backend.calls == 1 and "not retryable" in failed.value.cause


def test_a_retry_after_above_the_cap_is_not_waited_for() -> None:
    backend = _Decides(
        [BackendError("slow down", status=429)], RetryDecision(True, "rate_limit", 1e9)
    )
    with pytest.raises(CallFailed) as failed:
        _call(backend)
    assert backend.calls == 1 and "retry-after above" in failed.value.cause
