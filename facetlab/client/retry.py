"""Which failures to retry and how long to wait.

Transient failures (429, 408, 5xx, timeouts, dropped connections, bodies that are
not a provider response) are retried by ``tenacity`` with exponential backoff and
jitter (a random wait between half and all of the backoff, so concurrent trials
spread out), never sooner than the provider's ``retry-after`` (up to
``max_retry_after_s``); anything else (other 4xx, bad model ids, auth) fails the
trial at once with the provider's message. Which failure is transient is the
provider's decision: :meth:`facetlab.backends.Backend.should_retry` returns one
:class:`~facetlab.backends.RetryDecision` (retry or not, a rate limit or a transient
failure, the provider's ``retry-after``), the one place the client reads it.

>>> policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0, jitter=False)
>>> [policy.delay(n) for n in (1, 2, 3, 4, 5)]
[1.0, 2.0, 4.0, 8.0, 8.0]
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from tenacity import RetryCallState

from facetlab.backends._common import redact
from facetlab.backends.base import MAX_RETRY_AFTER_S, RetryDecision
from facetlab.errors import ConfigError
from facetlab.numbers import check_number


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter."""

    max_attempts: int = 6
    """Calls per trial, the first one included."""
    base_delay_s: float = 0.5
    max_delay_s: float = 60.0
    jitter: bool = True
    max_retry_after_s: float = MAX_RETRY_AFTER_S
    """The longest ``retry-after`` honoured; a provider asking for more fails the trial at once."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be >= 1, got {self.max_attempts}")
        check_number("base_delay_s", self.base_delay_s, minimum=0.0)
        check_number("max_delay_s", self.max_delay_s, minimum=0.0)
        check_number("max_retry_after_s (--max-retry-after)", self.max_retry_after_s, minimum=0.0)

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait after failed call number ``attempt`` (1-based)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        wait = (rng or random).uniform(ceiling / 2, ceiling) if self.jitter else ceiling
        if retry_after is not None:
            wait = max(wait, retry_after)
        return wait

    def tenacity_wait(
        self, decide: Callable[[BaseException], RetryDecision], rng: random.Random | None = None
    ) -> Callable[[RetryCallState], float]:
        """This policy as a ``tenacity`` wait: :meth:`delay` after the failed attempt, never
        sooner than the retry-after of ``decide`` (the backend's ``should_retry``)."""

        def wait(state: RetryCallState) -> float:
            outcome = state.outcome
            error = outcome.exception() if outcome is not None else None
            retry_after = decide(error).retry_after if error is not None else None
            return self.delay(state.attempt_number, retry_after, rng)

        return wait


def describe(exc: BaseException) -> str:
    """A one-line error for the record: class, status and the provider's message.

    Key-shaped text is redacted here too: a custom backend's exception may not be.
    """
    status = getattr(exc, "status", None)
    head = type(exc).__name__ + (f" (HTTP {status})" if status else "")
    message = str(exc).strip() or repr(exc)
    return redact(f"{head}: {message}", ())
