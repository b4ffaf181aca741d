"""Per-provider limits: concurrent requests, requests per minute, tokens per minute.

One :class:`ProviderLimiter` guards all calls to one provider. ``async with
limiter.slot(tokens)`` waits for a free concurrency slot, then for the request
and token limits, then for any pause a ``retry-after`` imposed.

A configured request rate is enforced the way providers enforce theirs: a
per-minute limit is quantised to windows of ``rate_window_s`` (one second by
default), so at most ``rpm / 60`` requests start in any one-second window, each
window kept a little longer than the provider's (``WINDOW_SLACK_S``) because a
request reaches the server a few milliseconds after it leaves. A sweep may
therefore start with a full window's burst instead of trickling in. With
``rate_window_s=None`` requests are spaced evenly instead. Tokens, and a rate
learned from 429s, are always spaced evenly.

``limiter.admission()`` bounds the trials being prepared (cache look-up, the
cross-process claim) to a few more than the calls allowed in flight, so a large
sweep neither holds a claim per trial nor delays its first call behind the
preparation of every other trial.

Concurrency is sized from the provider's rate and the latency observed so far
(Little's law: in flight = rate x latency, plus headroom), unless a fixed
``concurrency`` is given: a fast provider is not capped by a fixed 8 calls in
flight. Without any known rate it grows while every slot is busy, up to
``max_concurrency``.

>>> import asyncio
>>> lim = ProviderLimiter(Limits(concurrency=2, requests_per_minute=6000))
>>> async def once() -> None:
...     async with lim.slot(10):
...         pass
>>> asyncio.run(once())
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from facetlab.client.retry import is_rate_limit
from facetlab.errors import ConfigError
from facetlab.numbers import check_number

START_CONCURRENCY = 8
"""Calls in flight before any latency is observed (auto concurrency)."""

WINDOW_SLACK_S = 0.010
"""How much longer than the provider's window a rate window is kept (send-to-arrival jitter)."""


@dataclass(frozen=True)
class Limits:
    """What one provider allows. ``None`` means unlimited (or, for concurrency, automatic)."""

    concurrency: int | None = None
    """Fixed calls in flight; None sizes it from the rate and the observed latency."""
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    adaptive: bool = True
    """Without ``requests_per_minute``, learn a request rate from the provider's 429s."""
    max_concurrency: int = 256
    """The ceiling of automatic concurrency."""
    rate_window_s: float | None = 1.0
    """The provider's rate window: ``requests_per_minute`` allows ``rpm / 60 * rate_window_s``
    requests in any window this long (OpenAI, for one, enforces per-minute limits per
    second). ``None`` spaces requests evenly (no bursts at all)."""

    def __post_init__(self) -> None:
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {self.max_concurrency}")
        for name, flag in (("requests_per_minute", "--rpm"), ("tokens_per_minute", "--tpm")):
            check_number(f"{name} ({flag})", getattr(self, name), minimum=0.0, inclusive=False)
        check_number(
            "rate_window_s (--rpm-window)", self.rate_window_s, minimum=0.0, inclusive=False
        )


class _Pacer:
    """Even spacing at ``per_minute`` units per minute (a token bucket of capacity one unit)."""

    def __init__(self, per_minute: float) -> None:
        self.interval = 60.0 / per_minute
        self.next_free = 0.0
        self.lock = asyncio.Lock()

    async def take(self, units: float = 1.0) -> None:
        # Serial, and spaced by the time each unit actually goes out: a loop that was
        # busy (a slow disk write) may catch up by at most half an interval, so a late
        # request is not followed by a burst that trips the provider's window.
        async with self.lock:
            wait = self.next_free - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            now = time.monotonic()
            sent = max(now - self.interval / 2, self.next_free) if self.next_free else now
            self.next_free = sent + units * self.interval


class _Window:
    """At most ``count`` requests start in any window of ``seconds`` (a provider's quantised rpm).

    The provider counts arrivals, not departures. A place is dated when the request
    has been written: after the event-loop steps in which the SDK builds and writes
    it (a burst's requests are all built before the first is sent), unless it first
    waits for a new connection. It is held ``slack_s`` longer than the provider's
    window for the rest of the jitter between leaving and arriving.
    """

    def __init__(self, count: int, seconds: float, slack_s: float = WINDOW_SLACK_S) -> None:
        self.count = count
        self.seconds = seconds
        self.span = seconds + slack_s
        self.sent: deque[list[float]] = deque()  # one mutable date per place, oldest first
        self.lock = asyncio.Lock()

    async def take(self, units: float = 1.0) -> list[float]:
        """Wait for a place in the window; returns it (see :meth:`give_back`)."""
        async with self.lock:
            while True:
                now = time.monotonic()
                while self.sent and now - self.sent[0][0] >= self.span:
                    self.sent.popleft()
                if len(self.sent) < self.count:
                    place = [now]
                    self.sent.append(place)
                    loop = asyncio.get_running_loop()
                    # two hops: the call may run as its own task (asyncio.wait_for on
                    # Python 3.11), whose first step is queued after this one's end
                    loop.call_soon(loop.call_soon, _redate, place)
                    return place
                await asyncio.sleep(self.sent[0][0] + self.span - now)

    def give_back(self, place: list[float]) -> None:
        """Free the place of a request the provider refused (429)."""
        with contextlib.suppress(ValueError):
            self.sent.remove(place)


def _request_limit(per_minute: float, window_s: float | None) -> _Pacer | _Window:
    """Windows of ``window_s`` for ``per_minute`` requests, or even spacing when that fits better.

    A window shorter than one request's interval holds one request. When a window
    cannot hold a whole number of requests without losing more than 5% of the rate
    (90 rpm is 1.5 per second), requests are spaced evenly instead, as they are
    with ``window_s=None``.
    """
    if window_s is None:
        return _Pacer(per_minute)
    seconds = max(window_s, 60.0 / per_minute)
    exact = per_minute / 60.0 * seconds
    count = math.floor(exact + 1e-9)
    if count < 0.95 * exact:
        return _Pacer(per_minute)
    return _Window(count, seconds)


def _redate(place: list[float]) -> None:
    place[0] = max(place[0], time.monotonic())


class _Slots:
    """A fair semaphore whose size can change while it is in use (release and resize never wait).

    A place is handed over: releasing one gives it to the longest waiter, counted as
    used before that waiter runs, so exactly as many waiters wake as there are free
    places, each wakes once, and a newcomer never takes a place a waiter was woken for.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.used = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self.used < self.size and not self._waiters:
            self.used += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # the place is ours (counted in used) once this returns
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a place, then cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.used -= 1
        self._wake()

    def resize(self, size: int) -> None:
        self.size = size
        self._wake()

    def _wake(self) -> None:
        while self.used < self.size and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.used += 1  # handed over: counted before the waiter runs
                waiter.set_result(None)


class ProviderLimiter:
    """Concurrency, request-rate and token-rate limits for one provider, plus retry-after pauses."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._auto = limits.concurrency is None
        self._requests: _Pacer | _Window | None = None
        if limits.requests_per_minute:
            self._requests = _request_limit(limits.requests_per_minute, limits.rate_window_s)
        # auto concurrency starts with room for a whole rate window at once
        window = self._requests.count if isinstance(self._requests, _Window) else 0
        start = max(START_CONCURRENCY, window)
        self._slots = _Slots(limits.concurrency or min(start, limits.max_concurrency))
        self._admitted = _Slots(self._admission_size())
        self._tokens = _Pacer(limits.tokens_per_minute) if limits.tokens_per_minute else None
        self._paused_until = 0.0
        self.in_flight = 0
        self.latency_s: float | None = None
        """Moving average of the answered calls' latency (s)."""
        # Adaptive pacing (no configured request rate), AIMD style: a 429 cuts the rate to
        # 90% of what was sent in the last second (at most one cut per half second: a burst
        # of 429s from one overshoot is one signal); every quiet 2 s the rate grows by 5%.
        self._learn = limits.adaptive and not limits.requests_per_minute
        self._sent: deque[float] = deque()
        self._first = 0.0
        self._last_change = 0.0
        self.learned_rpm: float | None = None

    @property
    def concurrency(self) -> int:
        """Calls allowed in flight now."""
        return self._slots.size

    def _admission_size(self) -> int:
        # room for every call in flight plus as many ready to go when a slot frees
        return 2 * self._slots.size + 4

    def _rate_per_s(self) -> float | None:
        rpm = self.limits.requests_per_minute or self.learned_rpm
        return rpm / 60.0 if rpm else None

    def _target_concurrency(self, saturated: bool) -> int:
        rate = self._rate_per_s()
        if rate is not None and self.latency_s is not None:
            # Little's law, with headroom for latency spikes; a rate window may start
            # its whole count at once
            wanted = math.ceil(rate * self.latency_s * 1.5) + 2
            if isinstance(self._requests, _Window):
                wanted = max(wanted, self._requests.count)
        elif saturated:
            wanted = self._slots.size + 1  # nothing known: grow while every slot is busy
        else:
            wanted = self._slots.size
        return max(1, min(self.limits.max_concurrency, max(wanted, START_CONCURRENCY)))

    def _sent_per_second(self, now: float) -> float:
        while self._sent and now - self._sent[0] > 1.0:
            self._sent.popleft()
        window = min(1.0, max(0.1, now - self._first)) if self._first else 1.0
        return len(self._sent) / window

    def accepted(self, started: float) -> None:
        """A call that started at ``started`` (monotonic) was answered."""
        now = time.monotonic()
        latency = now - started
        self.latency_s = latency if self.latency_s is None else 0.8 * self.latency_s + 0.2 * latency
        if self._learn and self.learned_rpm is not None and now - self._last_change > 2.0:
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
        if isinstance(self._requests, _Pacer):
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
        await self._slots.acquire()
        try:
            await self._wait_pause()
            if self._tokens is not None and tokens > 0:
                await self._tokens.take(float(tokens))
            await self._wait_pause()
            requests = self._requests  # last: a window place is dated as the call leaves
            place = None
            if isinstance(requests, _Window):
                place = await requests.take()
            elif requests is not None:
                await requests.take()
            self.in_flight += 1
            saturated = self._slots.used >= self._slots.size
            started = time.monotonic()
            if self._learn:
                self._first = self._first or started
                self._sent.append(started)
            try:
                yield started
            except BaseException as exc:
                # A refused request frees its place: the provider's retry-after (a pause
                # of every call, see pause()) says when to send again, whether or not it
                # counted the refusal.
                if isinstance(requests, _Window) and place is not None and is_rate_limit(exc):
                    requests.give_back(place)
                raise
            finally:
                self.in_flight -= 1
                if self._auto:
                    target = self._target_concurrency(saturated)
                    if target != self._slots.size:
                        self._slots.resize(target)
                        self._admitted.resize(self._admission_size())
        finally:
            self._slots.release()

    @asynccontextmanager
    async def admission(self) -> AsyncIterator[None]:
        """Hold one of the places for trials being prepared for this provider (see the module)."""
        await self._admitted.acquire()
        try:
            yield
        finally:
            self._admitted.release()
