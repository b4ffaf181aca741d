"""``ModelClient``: the one way facetlab calls a model.

A backend sends one request and says what a failure was; the client does
everything around it: waits for the provider's limits (concurrency, requests and
tokens per window, a ``retry-after`` pause), reserves the call's worst-case cost
against the budget, calls with a timeout, retries what the provider calls
retryable (never sooner than its ``retry-after``, never for longer than the cap),
settles the cost and, given a key, answers from and stores into the response cache.
The sweep runner, CRAFT's LLM adapters, the FACET-CRAFT bridge and ``facetlab
draft`` all call models through it; nothing else calls a backend's ``agenerate``
(``tests/test_client_only_caller.py``).

>>> from facetlab.backends import get_backend
>>> client = ModelClient(get_backend("simulated/wadd"))           # doctest: +SKIP
>>> answer = await client.generate(ModelRequest("..."))           # doctest: +SKIP
>>> answer.response.text, answer.attempts, answer.cost_usd        # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from dataclasses import dataclass

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from facetlab.backends._common import stored_reply
from facetlab.backends.base import (
    DEFAULT_TIMEOUT_S,
    Backend,
    ModelRequest,
    ModelResponse,
    Usage,
    declaration_of,
)
from facetlab.client.cache import ResponseCache
from facetlab.client.limits import Limits, ProviderLimiter
from facetlab.client.meter import NO_RESERVATION, CostMeter, Reservation
from facetlab.client.pricing import BATCH_DISCOUNT, estimate_tokens, is_count, price_for
from facetlab.client.retry import (
    RetryPolicy,
    describe,
)
from facetlab.errors import BackendError, BudgetExceededError, ConfigError

logger = logging.getLogger("facetlab.client")

RESERVE_POLL_S = 0.005
"""How often a call whose worst case does not fit yet looks again (calls in flight settle)."""


class CallFailed(BackendError):
    """A call that failed for good: the provider's last error, how often it was tried, and why.

    ``message`` is the full line a record keeps; ``cause`` a short category the console
    counts failures by (``HTTP 400``, ``retry-after above the 120s cap``, ``timeout``...).
    """

    def __init__(self, message: str, *, cause: str, attempts: int, error: BaseException) -> None:
        super().__init__(
            message,
            provider=getattr(error, "provider", ""),
            status=getattr(error, "status", None),
            transient=False,
        )
        self.cause = cause
        self.attempts = attempts
        self.error = error


class Stopped(Exception):
    """The caller asked to stop (budget, interrupt, full disk): no call was made."""


class CallHooks:
    """What a caller wants to hear about a call (the runner's live progress); no-ops here."""

    def stopped(self) -> bool:
        """Checked right before a request leaves: True refuses it with :class:`Stopped`."""
        return False

    def call_started(self) -> None: ...

    def call_ended(self) -> None: ...

    def retry_waiting(self, error: BaseException) -> None:
        """A failed attempt will be retried after a backoff."""

    def retry_started(self) -> None:
        """The attempt after a backoff starts."""

    def cancelled(self) -> None:
        """A call in flight was cancelled (it may have been billed)."""


_NO_HOOKS = CallHooks()


@dataclass(frozen=True)
class Answer:
    """A model's answer and what it took: attempts and cost (0 when it came from the cache)."""

    response: ModelResponse
    attempts: int
    cost_usd: float | None
    cached: bool = False


def checked_usage(response: ModelResponse) -> tuple[ModelResponse, str | None]:
    """``response`` with only usable token counts (others None), and what was wrong.

    Input and output tokens must be reported as counts from 0 to a billion
    (:func:`~facetlab.client.pricing.is_count`); anything else (missing, null, negative,
    not a number, 10^400) cannot be priced.
    """
    usage = response.usage
    names = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens")
    bad = {
        name: getattr(usage, name)
        for name in names
        if getattr(usage, name) is not None and not is_count(getattr(usage, name))
    }
    missing = [n for n in names[:2] if getattr(usage, n) is None]
    if not bad and not missing:
        return response, None
    clean = Usage(**{n: None if n in bad else getattr(usage, n) for n in names})
    said = [f"{n} missing" for n in missing] + [
        f"{n}: an integer out of range" if type(v) is int else f"{n}={v!r:.40}"
        for n, v in bad.items()
    ]
    problem = "token usage not reported as counts (" + ", ".join(said) + ")"
    return dataclasses.replace(response, usage=clean), problem


def price_key(backend: Backend) -> str:
    """The price-table key of a backend: ``provider/model``."""
    return f"{backend.provider}/{backend.model}"


class ModelClient:
    """Limits, retries, budget, cost and cache around one backend.

    ``limiter`` and ``meter`` may be shared: the runner gives every model of one
    provider the same limiter and every client of a run the same meter.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        limiter: ProviderLimiter | None = None,
        limits: Limits | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        meter: CostMeter | None = None,
        cache: ResponseCache | None = None,
        price_model: str | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.backend = backend
        self.limiter = limiter or ProviderLimiter(limits or Limits())
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        self.meter = meter or CostMeter()
        self.cache = cache
        self.price_model = price_model or price_key(backend)
        self.endpoint = backend.base_url
        """The server asked (a loopback one is free unless FACETLAB_PRICES names the model)."""
        self.declaration = declaration_of(backend)
        self.unusable_usage = 0  # replies whose usage was not counts (charged the worst case)
        self.refused_replies = 0  # 200 replies refused (charged the worst case, retried once)
        self._rng = rng or random.Random()
        self.price = price_for(self.price_model, endpoint=self.endpoint)  # read once
        if self.meter.budget_usd is not None and self.price is None:
            raise ConfigError(
                f"--budget-usd needs a price for {self.price_model!r}, and the price table has "
                "none; add it with FACETLAB_PRICES=<file.json>"
            )

    @property
    def name(self) -> str:
        """``provider/model`` of the backend."""
        return f"{self.backend.provider}/{self.backend.model}"

    def worst_cost(self, request: ModelRequest) -> float | None:
        """The most ``request`` can cost: its estimated prompt and a reply at ``max_tokens``."""
        tokens = estimate_tokens(request.prompt + (request.params.system or ""))
        return self.price.cost(tokens, request.params.max_tokens) if self.price else None

    async def generate(
        self,
        request: ModelRequest,
        *,
        key: str | None = None,
        tokens: int = 0,
        hooks: CallHooks | None = None,
    ) -> Answer:
        """Answer ``request``: from the cache under ``key`` if there, else by calling the model.

        A 200 reply that cannot be accepted (not JSON, not a reply) was billed all the same:
        it is charged the call's worst case against the budget and asked again once, no more.

        Raises :class:`CallFailed` when every attempt failed, :class:`Stopped` when
        ``hooks`` said stop, :class:`~facetlab.errors.BudgetExceededError` when the
        call's worst case does not fit the budget (nothing was sent in the last two).
        """
        if key is None or self.cache is None:
            return await self.call(request, tokens=tokens, hooks=hooks)
        if (hit := self.cache.get(key)) is not None:
            return Answer(hit, 0, 0.0, cached=True)
        async with self.cache.claim(key):
            if (hit := self.cache.get(key)) is not None:  # another process paid meanwhile
                return Answer(hit, 0, 0.0, cached=True)
            answer = await self.call(request, tokens=tokens, hooks=hooks)
            self.cache.put(key, answer.response)
            return answer

    async def call(
        self, request: ModelRequest, *, tokens: int = 0, hooks: CallHooks | None = None
    ) -> Answer:
        """Call the model (with retries), no cache; see :meth:`generate`."""
        hooks = hooks or _NO_HOOKS
        refusal = self.declaration.refusal(request.params, self.name.split("/", 1)[0])
        wants_schema = request.output_schema is not None
        if refusal is None and wants_schema and not self.declaration.structured_output:
            refusal = f"structured output: {self.name} takes no JSON schema for its reply"
        if refusal is not None:  # before any request: the provider has no field for it
            raise ConfigError(refusal)
        policy = self.retry
        limiter = self.limiter
        waiting = [False]  # between a failed attempt and the next one

        decide = self.backend.should_retry  # one RetryDecision per failure
        refused = [0]  # paid replies refused so far: such a reply is asked again at most once

        def retryable(error: BaseException) -> bool:
            refused[0] += getattr(error, "status", None) == 200
            return refused[0] <= 1 and decide(error).retry and not self._too_long(error)

        def before_sleep(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome is not None else None
            if error is not None and (said := decide(error)).kind == "rate_limit":
                limiter.pause(said.retry_after or 0.0)  # every call waits it out
            waiting[0] = True
            hooks.retry_waiting(error or RuntimeError("retry"))

        attempts = 1
        try:
            try:  # most calls succeed at once: no retry machinery for them (CPU a call)
                response, cost = await self._attempt(request, tokens, hooks)
                return Answer(response, 1, cost)
            except (Stopped, BudgetExceededError):
                raise
            except Exception as error:
                first = error
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(policy.max_attempts),
                wait=policy.tenacity_wait(decide, self._rng),
                retry=retry_if_exception(retryable),
                before_sleep=before_sleep,
                reraise=True,
            ):
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    if attempts == 1:  # the first call's failure, as tenacity's first attempt
                        raise first
                    if waiting[0]:
                        waiting[0] = False
                        hooks.retry_started()
                    response, cost = await self._attempt(request, tokens, hooks)
        except (Stopped, BudgetExceededError):
            raise
        except Exception as error:  # not CancelledError (a BaseException): that propagates
            raise self._failed(error, attempts) from None
        finally:
            if waiting[0]:
                hooks.retry_started()
        return Answer(response, attempts, cost)

    async def _attempt(
        self, request: ModelRequest, tokens: int, hooks: CallHooks
    ) -> tuple[ModelResponse, float | None]:
        """One call within the limits and the budget: the response and its cost."""
        # once per server: how many requests it runs at once (where it says)
        await self.limiter.learn_capacity(self.backend.server_slots)
        async with self.limiter.slot(tokens, self.backend.should_retry):
            reservation = await self._reserve(request, hooks)
            hooks.call_started()
            paid = False
            try:
                call = self.backend.agenerate(request)
                timeout = self.timeout_s
                response = await (asyncio.wait_for(call, timeout) if timeout else call)
                paid = True
            except asyncio.CancelledError:
                hooks.cancelled()
                raise
            except BackendError as error:
                if error.status == 200:  # a reply came, so it was billed: refused, still charged
                    paid = True
                    self.charge_refused(request, reservation, error)
                raise
            finally:
                hooks.call_ended()
                self.limiter.observe(self.backend.rate_signal)
                if not paid:
                    self.meter.release(reservation)
        return self.charge(response, request, reservation=reservation)

    def charge(
        self,
        response: ModelResponse,
        request: ModelRequest,
        *,
        reservation: Reservation = NO_RESERVATION,
        batch: bool = False,
    ) -> tuple[ModelResponse, float | None]:
        """Price a paid response and settle it on the meter; the response (its usage
        checked) and its cost.

        By its usage at the provider's (``batch``: batch) rate; a priced reply whose usage
        cannot be priced is charged the call's worst case, so a budget holds whatever the
        provider reports. A batch result, which came through no call, has no reservation.
        """
        response, problem = checked_usage(stored_reply(response))  # as stored: any bytes
        cost = self.cost_of(response, batch=batch)
        worst = self.worst_cost(request) if problem is not None and cost is None else None
        if worst is not None:
            cost = worst * BATCH_DISCOUNT if batch else worst
            self.unusable_usage += 1
            if self.unusable_usage == 1:
                logger.warning(
                    "%s: %s; charged the call's worst case ($%.6f) instead",
                    self.name,
                    problem,
                    cost,
                )
        self.settle(reservation, cost)
        return response, cost

    def charge_refused(
        self, request: ModelRequest, reservation: Reservation, error: BackendError
    ) -> None:
        """Charge a 200 reply facetlab could not accept (no usage to read): the call's worst
        case, against the budget like any paid call (None without a price: unpriced)."""
        cost = self.worst_cost(request)
        self.refused_replies += 1
        if self.refused_replies == 1:
            logger.warning(
                "%s: %s; the reply was paid for: charged the call's worst case", self.name, error
            )
        self.settle(reservation, cost)

    async def _reserve(self, request: ModelRequest, hooks: CallHooks) -> Reservation:
        """Reserve the call's worst case; while calls in flight hold reservations that may
        settle lower, wait for them rather than give up (the budget is then used up)."""
        worst = self.worst_cost(request)
        while True:
            if hooks.stopped():
                raise Stopped
            try:
                return self.meter.reserve(worst)
            except BudgetExceededError:
                if self.meter.open_reservations == 0:  # nothing in flight: it will never fit
                    raise
            await asyncio.sleep(RESERVE_POLL_S)

    def cost_of(self, response: ModelResponse, *, batch: bool = False) -> float | None:
        """What ``response`` cost by the price table (None: no price or no usage)."""
        usage = response.usage
        if self.price is None:
            return None
        return self.price.cost(
            usage.input_tokens, usage.output_tokens, batch=batch, cached=usage.cached_input_tokens
        )

    def settle(self, reservation: Reservation, cost: float | None) -> None:
        """Charge a paid call (its reservation when the cost is unknown)."""
        self.meter.settle(reservation, cost)

    def _too_long(self, error: BaseException) -> bool:
        retry_after = self.backend.should_retry(error).retry_after
        return retry_after is not None and retry_after > self.retry.max_retry_after_s

    def _failed(self, error: BaseException, attempts: int) -> CallFailed:
        message = describe(error)
        status = getattr(error, "status", None)
        kind = (
            f"timeout (--timeout {self.timeout_s:g}s)"
            if isinstance(error, (asyncio.TimeoutError, TimeoutError))
            else f"HTTP {status}"
            if status
            else type(error).__name__
        )
        decision = self.backend.should_retry(error)
        if not decision.retry:
            return CallFailed(
                message, cause=f"{kind}, not retryable", attempts=attempts, error=error
            )
        if self._too_long(error):
            cap = self.retry.max_retry_after_s
            # a provider asking for an hour must not hold the sweep for an hour
            return CallFailed(
                f"{message} (the provider asked to wait {decision.retry_after:g}s "
                f"(retry-after), more than the cap of {cap:g}s: not retried; raise the cap "
                "with --max-retry-after or re-run later with --retry-errors)",
                cause=f"{kind} with a retry-after above the {cap:g}s cap (--max-retry-after)",
                attempts=attempts,
                error=error,
            )
        return CallFailed(
            f"{message} (gave up after {attempts} attempts)",
            cause=f"{kind}, still failing after {attempts} attempts",
            attempts=attempts,
            error=error,
        )

    async def aclose(self) -> None:
        """Release the backend's connections."""
        await self.backend.aclose()
