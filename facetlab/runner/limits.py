"""Per-provider limits: concurrent requests, requests per minute, tokens per minute.

One :class:`ProviderLimiter` guards all calls to one provider. ``async with
limiter.slot(tokens)`` waits for a free concurrency slot, then for the request
and token buckets, then for any pause a ``retry-after`` imposed; requests are
spaced evenly (no bursts) so a provider's own per-second window is not tripped.

>>> import asyncio
>>> lim = ProviderLimiter(Limits(concurrency=2, requests_per_minute=6000))
>>> async def once() -> None:
...     async with lim.slot(10):
...         pass
>>> asyncio.run(once())
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from facetlab.errors import ConfigError


@dataclass(frozen=True)
class Limits:
    """What one provider allows. ``None`` means unlimited."""

    concurrency: int = 8
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    adaptive: bool = True
    """Without ``requests_per_minute``, learn a request rate from the provider's 429s."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {self.concurrency}")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigError(f"{name} must be > 0, got {value}")


class _Pacer:
    """Even spacing at ``rate`` units per second (a token bucket of capacity one unit)."""

    def __init__(self, per_minute: float) -> None:
        self.interval = 60.0 / per_minute
        self.next_free = 0.0
        self.lock = asyncio.Lock()

    async def take(self, units: float = 1.0) -> None:
        async with self.lock:
            now = time.monotonic()
            start = max(now, self.next_free)
            self.next_free = start + units * self.interval
        if start > now:
            await asyncio.sleep(start - now)


class ProviderLimiter:
    """Concurrency, request-rate and token-rate limits for one provider, plus retry-after pauses."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._sem = asyncio.Semaphore(limits.concurrency)
        self._requests = _Pacer(limits.requests_per_minute) if limits.requests_per_minute else None
        self._tokens = _Pacer(limits.tokens_per_minute) if limits.tokens_per_minute else None
        self._paused_until = 0.0
        self.in_flight = 0
        # Adaptive pacing (no configured request rate), AIMD style: a 429 cuts the rate to
        # 90% of what was sent in the last second (at most one cut per half second: a burst
        # of 429s from one overshoot is one signal); every quiet 2 s the rate grows by 5%.
        self._learn = limits.adaptive and not limits.requests_per_minute
        self._sent: deque[float] = deque()
        self._first = 0.0
        self._last_change = 0.0
        self.learned_rpm: float | None = None

    def _sent_per_second(self, now: float) -> float:
        while self._sent and now - self._sent[0] > 1.0:
            self._sent.popleft()
        window = min(1.0, max(0.1, now - self._first)) if self._first else 1.0
        return len(self._sent) / window

    def accepted(self, started: float) -> None:
        """A call that started at ``started`` (monotonic) was answered."""
        if not self._learn or self.learned_rpm is None:
            return
        now = time.monotonic()
        if now - self._last_change > 2.0:
            self._set_rate(self.learned_rpm * 1.05, now)

    def rate_limited(self) -> None:
        """The provider answered 429: slow the request rate down (multiplicatively)."""
        if not self._learn:
            return
        now = time.monotonic()
        if self.learned_rpm is not None and now - self._last_change < 0.5:
            return
        sent = self._sent_per_second(now) * 60
        current = sent if self.learned_rpm is None else min(self.learned_rpm, sent)
        self._set_rate(max(60.0, 0.9 * current), now)

    def _set_rate(self, rpm: float, now: float) -> None:
        self.learned_rpm = rpm
        self._last_change = now
        pacer = _Pacer(rpm)
        if self._requests is not None:
            pacer.next_free = self._requests.next_free
        self._requests = pacer

    def pause(self, seconds: float) -> None:
        """Hold every new request for ``seconds`` (the provider said retry-after)."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    @property
    def paused(self) -> bool:
        return time.monotonic() < self._paused_until

    async def _wait_pause(self) -> None:
        while (left := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(left)

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[float]:
        """Hold one request's worth of every limit for the duration of the call.

        Yields the call's start time (``time.monotonic()``), for :meth:`accepted`.
        """
        async with self._sem:
            await self._wait_pause()
            if self._requests is not None:
                await self._requests.take()
            if self._tokens is not None and tokens > 0:
                await self._tokens.take(float(tokens))
            await self._wait_pause()
            self.in_flight += 1
            started = time.monotonic()
            if self._learn:
                self._first = self._first or started
                self._sent.append(started)
            try:
                yield started
            finally:
                self.in_flight -= 1
